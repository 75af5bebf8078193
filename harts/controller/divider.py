"""Division by a run's constant as a multiply and a shift, for the kernels' numbers that count through nodes (event
ids, inputs): the node of such a number, computed where a table of nodes would be read, and on a large network
missed in the cache."""

MAX_DIVIDEND = 2**31  # the numbers divided are below this


def node_divider(per_node: int) -> tuple[int, int]:
    """(m, s) such that (e * m) >> s == e // per_node for every 0 <= e < MAX_DIVIDEND, with e * m < 2^63:
    m = ceil(2^s / per_node) for s = 31 + ceil(log2 per_node) (Granlund and Montgomery, "Division by invariant
    integers using multiplication", 1994)."""
    shift = 31 + (int(per_node) - 1).bit_length()
    return -(-(1 << shift) // int(per_node)), shift
