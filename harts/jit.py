"""How kernel code is compiled.

The kernel never allocates, so it is compiled without numba's reference-counting runtime (``_nrt=False``):
with it, every call and every alias of an array argument costs atomic increments and decrements.

The state travels as named tuples of arrays, which a call passes by value (hundreds of bytes), so the
hot path is inlined into the clock loop at numba's IR level (``kernel_part``; measured about 2.4x faster
than calls). Inlining copies a function into every call site, and numba's compile time grows with the
copies, so the large parts each have one call site, and rare paths (the clock's overflow heap, NP
program plumbing, the hop log's writers) stay plain calls (``kernel_call``). Inlined, the hop log's
writers, which run only when a tool asks for hop records, slowed the run without them by about 2%.

And how it is loaded: every module of harts that compiles code takes numba's ``njit`` from here, so that
``load_cached_code_as_is`` has changed numba's loading before any cached function loads.
"""

from llvmlite import ir
from numba import njit, types
from numba.core import caching, cgutils
from numba.extending import intrinsic


def load_cached_code_as_is():
    """Load harts' own functions from numba's disk cache without setting the compiler up first.

    numba refreshes its compiler's registries (importing every module of typing and lowering rules) before it
    loads any cached function, though loading harts' code needs only the code generator: 0.13-0.3 s of a process
    that compiles nothing, about a quarter of a 1,000-cycle `harts run` (bench/SPEED.md, Start-up). numba sets
    them up anyway wherever they are used: its compiler refreshes both contexts when it starts, and a lowering
    rule not found refreshes the context and looks again. Other code's cached functions load numba's way: the
    refresh also starts numba's memory manager, without which a function that allocates crashes, and harts'
    code never allocates (``_nrt=False``). tests/test_start.py checks that a process loading this way gives the
    same results as one loading numba's way, and that a user's allocating function still runs beside harts.
    With a numba whose cache lacks the two methods used here, nothing is changed."""
    cache = caching.Cache
    if not (hasattr(cache, "_load_overload") and hasattr(cache, "_guard_against_spurious_io_errors")):
        return
    numbas_way = cache.load_overload

    def load_overload(self, sig, target_context):
        if not getattr(getattr(self, "_py_func", None), "__module__", "").startswith("harts."):
            return numbas_way(self, sig, target_context)
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)
    cache.load_overload = load_overload


load_cached_code_as_is()

kernel_part = njit(cache=True, forceinline=True, _nrt=False)
kernel_call = njit(cache=True, _nrt=False)
kernel_entry = njit(cache=True, _nrt=False)


@intrinsic
def prefetch(typingctx, table, row, column):
    """Ask the processor to bring in the cache line of table[row, column] (table[row] for one dimension),
    without waiting for it: the next event's rows, so that its misses overlap the work before it."""
    def codegen(context, builder, signature, args):
        table_type, row_type, column_type = signature.args
        array = context.make_array(table_type)(context, builder, args[0])
        index = [context.cast(builder, args[1], row_type, types.intp)]
        if table_type.ndim == 2:
            index.append(context.cast(builder, args[2], column_type, types.intp))
        address = cgutils.get_item_pointer2(context, builder, array.data, cgutils.unpack_tuple(builder, array.shape),
                                            cgutils.unpack_tuple(builder, array.strides), table_type.layout, index)
        byte_pointer = ir.IntType(8).as_pointer()
        word = ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer, word, word, word]), "llvm.prefetch.p0")
        # a read, kept in all cache levels, of data
        builder.call(function, [builder.bitcast(address, byte_pointer), word(0), word(3), word(1)])
        return context.get_dummy_value()
    return types.void(table, row, column), codegen
