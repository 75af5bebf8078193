"""The comparison of a `branch` condition, shared by the cut-through and the flit-level kernels (and, uncompiled,
by the assembler: isa.compared)."""

from ..jit import kernel_part
from .isa import compared

compare = kernel_part(compared)
