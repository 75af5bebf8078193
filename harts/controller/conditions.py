"""The comparison of a `branch` condition, shared by the cut-through and the flit-level kernels."""

from ..jit import kernel_part
from . import isa


@kernel_part
def compare(x, compare, value):
    """``x OP value`` for the isa.CMP_* code OP."""
    if compare == isa.CMP_EQ:
        return x == value
    if compare == isa.CMP_NE:
        return x != value
    if compare == isa.CMP_LT:
        return x < value
    if compare == isa.CMP_LE:
        return x <= value
    if compare == isa.CMP_GT:
        return x > value
    if compare == isa.CMP_GE:
        return x >= value
    return x & value != 0  # CMP_BITS
