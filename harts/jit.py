"""How kernel code is compiled.

The kernel never allocates, so it is compiled without numba's reference-counting runtime (``_nrt=False``):
with it, every call and every alias of an array argument costs atomic increments and decrements.

The state travels as named tuples of arrays, which a call passes by value (hundreds of bytes), so the
hot path is inlined into the clock loop at numba's IR level (``kernel_part``; measured about 2.4x faster
than calls). Inlining copies a function into every call site, and numba's compile time grows with the
copies, so the large parts each have one call site, and rare paths (the clock's overflow heap, NP
program plumbing, the hop log's writers) stay plain calls (``kernel_call``). Inlined, the hop log's
writers, which run only when a tool asks for hop records, slowed the run without them by about 2%.
"""

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

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
