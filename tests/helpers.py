"""Shared helpers for the tests: configs built in code, the closed-form zero-load timing of harts.yaml, and what
the tests of EXPERIMENTS.md's quoted figures read."""

import csv
import os
from fractions import Fraction
from pathlib import Path

from harts.experiments.splice import section
from harts.machine.config import hex_config


def config(size=5, **overrides):
    """The defaults on the hexagonal mesh E-size, with keys replaced as in Config.with_values."""
    return hex_config(size, **overrides)


def closed_form(cfg):
    """S, r, d of harts.yaml derived by hand from the parameters and the microprogram (see MODEL.md).

    Source: the NP hands the packet over (np_send), the BMU makes it ready (bmu_setup), the bus
    interface runs wait_header and branch before its forward (2 cycles) and the bus carries the first byte
    to the transmitter (bus_delay). Each node cut through: wire (link_delay), the header arriving
    (header/bpc), wait_header, two branches and forward (3 cycles after the header), bus (bus_delay).
    Destination: the last byte reaches the BMU over the bus (bus_delay) and the NP (deliver_cycles).
    """
    bpc = cfg.bytes_per_cycle
    header_cycles = Fraction(cfg["timing.header_bytes"], bpc)
    bus = cfg["timing.bus_delay_cycles"]
    wire = cfg["timing.link_delay_cycles"]
    S = cfg["timing.np_send_cycles"] + cfg["timing.bmu_setup_cycles"] + 2 + bus + wire + bus + \
        cfg["timing.deliver_cycles"]
    d = wire + header_cycles + 3 + bus
    return Fraction(S), Fraction(1, bpc), d


def nothing_cut_off(png) -> bool:
    """Whether a picture's outermost pixels are all white: no text or line ran off its edges."""
    import matplotlib.image
    import numpy as np
    rgb = matplotlib.image.imread(png)[..., :3]
    frame = np.concatenate([rgb[:2].reshape(-1, 3), rgb[-2:].reshape(-1, 3), rgb[:, :2].reshape(-1, 3),
                            rgb[:, -2:].reshape(-1, 3)])
    return bool((frame > 0.98).all())


def unwritable_directory(tmp_path):
    """A directory this process may not write in: one without write permission, or for root (whom
    permissions do not stop) the kernel's sysfs, which nobody may create files in."""
    if os.geteuid() == 0:
        return Path("/sys/kernel")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    return locked


REPO = Path(__file__).resolve().parent.parent
COMMITTED = REPO / "bench" / "results" / "reproduce"


def experiments_section(title: str, flat: bool = True, prose_only: bool = False) -> str:
    """EXPERIMENTS.md's section under the heading `## title...`, up to the next `## ` heading (splice.section).
    `flat`: its line breaks and runs of spaces made single spaces, as prose wraps anywhere. `prose_only`: its
    generated blocks (harts.experiments.splice) left out."""
    text = section((REPO / "EXPERIMENTS.md").read_text(), title)
    if prose_only:
        while "<!-- generated from " in text:
            begin = text.index("<!-- generated from ")
            text = text[:begin] + text[text.index("<!-- end -->", begin):]
    return " ".join(text.split()) if flat else text


def committed_rows(path: str) -> list[dict]:
    """The rows of a committed result CSV, by its path under bench/results/reproduce/."""
    with (COMMITTED / path).open(newline="") as handle:
        return list(csv.DictReader(handle))


def quoted(text: str, *fragments: str) -> None:
    """Assert that each fragment appears in the text as it is: the sentence quotes it."""
    for fragment in fragments:
        assert fragment in text, fragment
