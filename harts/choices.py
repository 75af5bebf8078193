"""The names the command line offers as choices, in a module that imports nothing, so that parsing arguments
(`harts --help`, a subcommand's --help, an argument error) loads neither numpy nor numba. The modules that
define what each name does check at import that they define exactly these (`require_names`), so the two
cannot drift apart unnoticed."""

from __future__ import annotations

# harts broadcast --algorithm, harts trace --broadcast: paper 000's eight, then papers 002-004's
BROADCASTS = ("sbcast", "2bcast", "3bcast", "4bcast", "5bcast", "6bcast", "sfbcast", "hamiltonian",
              "pcp", "rd", "edn", "npd", "mh", "tiling", "dc", "htree")
# harts ata --algorithm
ATA_ALGORITHMS = ("ihc", "ks", "vsq", "vrs", "frs")


def require_names(defined, offered: tuple[str, ...], what: str) -> None:
    """Raise unless `defined` (a table's keys, in order) are exactly the names `offered` on the command line."""
    if tuple(defined) != offered:
        raise ImportError(f"{what} defines {tuple(defined)}, but harts.choices offers {offered}: keep them equal")
