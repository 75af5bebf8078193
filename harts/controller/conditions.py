"""What a `branch` condition reads and compares, shared by the cut-through and the flit-level kernels (and, for the
comparison, uncompiled, by the assembler: isa.compared)."""

from ..jit import kernel_part
from .isa import compared

compare = kernel_part(compared)


@kernel_part
def current_segment_code(header, p, word, segments):
    """The code of source-routed packet p's current segment, -1 when none is left (or the header has no segments,
    word < 0). header[p, word] is the segment index; segment k is (port, hops, code) at words word+1+3k.., and is
    used up when its hops reach 0; `segments` is how many the header holds."""
    if word < 0:
        return -1
    k = header[p, word]
    if k >= segments or header[p, word + 2 + 3 * k] == 0:
        return -1
    return header[p, word + 3 + 3 * k]
