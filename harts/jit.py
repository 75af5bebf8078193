"""How kernel code is compiled.

The kernel never allocates, so it is compiled without numba's reference-counting runtime (``_nrt=False``):
with it, every call and every alias of an array argument costs atomic increments and decrements.

The state travels as named tuples of arrays, which a call passes by value (hundreds of bytes), so the
hot path is inlined into the clock loop at numba's IR level (``kernel_part``; measured about 2.4x faster
than calls). Inlining copies a function into every call site, and numba's compile time grows with the
copies, so the large parts each have one call site, and rare paths (the clock's overflow heap, NP
program plumbing, the hop log's writers) stay plain calls (``kernel_call``). Inlined, the hop log's
writers, which run only when a tool asks for hop records, slowed the run without them by about 2%.

And how it is loaded, indexed and called: every module of harts that compiles code takes numba's ``njit`` from
here, so that ``load_cached_code_as_is`` has changed numba's loading, ``index_without_wraparound`` its indexing,
``_type_arrays_without_numpy_ma`` its typing of arguments and ``_remember_function_addresses`` its passing of
functions before any of harts' functions loads, compiles or runs. harts' kernel parts make their numba dispatchers
(and so their disk caches) only when used (``_CompiledWhenUsed``), and its other functions their disk caches
(``cached_when_asked``): a run that finds its kernel in the disk cache uses none of the parts, and only the caches of
its kernel and of the functions passed to it.
"""

import functools

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir
from numba import njit, types
from numba.core import caching, cgutils, errors
from numba.core import codegen as numba_codegen
from numba.core.dispatcher import Dispatcher
from numba.core.typing.typeof import typeof_impl
from numba.extending import intrinsic
from numba.np import numpy_support


def load_cached_code_as_is():
    """Load harts' own functions from numba's disk cache without setting the compiler up first, and without
    parsing their bitcode.

    numba refreshes its compiler's registries (importing every module of typing and lowering rules) before it
    loads any cached function, though loading harts' code needs only the code generator: 0.13-0.3 s of a process
    that compiles nothing, about a quarter of a 1,000-cycle `harts run` (bench/SPEED.md, Start-up). numba sets
    them up anyway wherever they are used: its compiler refreshes both contexts when it starts, and a lowering
    rule not found refreshes the context and looks again. Other code's cached functions load numba's way: the
    refresh also starts numba's memory manager, without which a function that allocates crashes, and harts'
    code never allocates (``_nrt=False``). tests/test_start.py checks that a process loading this way gives the
    same results as one loading numba's way, and that a user's allocating function still runs beside harts.
    With a numba whose cache lacks the methods used here, nothing is changed."""
    cache = caching.Cache
    if not (hasattr(cache, "_load_overload") and hasattr(cache, "_guard_against_spurious_io_errors")):
        return
    numbas_way = cache.load_overload
    bitcode_parsed_when_linked = (
        all(hasattr(numba_codegen.JITCodeLibrary, part) for part in (
            "_unserialize", "enable_object_caching", "_set_compiled_object", "_finalize_final_module",
            "_get_module_for_linking"))
        and all(hasattr(numba_codegen.JitEngine, part) for part in ("_load_defined_symbols", "get_function_address")))

    def load_overload(self, sig, target_context):
        if not getattr(getattr(self, "_py_func", None), "__module__", "").startswith("harts."):
            return numbas_way(self, sig, target_context)
        generator = target_context.codegen()
        if bitcode_parsed_when_linked and isinstance(generator, numba_codegen.JITCPUCodegen):
            generator.unserialize_library = functools.partial(_library_parsed_when_linked, generator)
        try:
            with self._guard_against_spurious_io_errors():
                return self._load_overload(sig, target_context)
        finally:
            generator.__dict__.pop("unserialize_library", None)
    cache.load_overload = load_overload


def _library_parsed_when_linked(generator, serialized):
    """A library of harts' cached machine code, ready to run, whose LLVM bitcode is parsed only if another
    library links it in.

    numba's cache keeps a function's object code and its bitcode, and numba parses the bitcode when it loads
    the function (0.04 s for the four functions of a 1,000-cycle run, bench/SPEED.md, Start-up) only to list the
    symbols it defines and to have it ready for linking. Running the function needs neither: the object code is
    loaded as it is, and a symbol's address is looked up in the loaded code. A library cached as bitcode alone
    loads numba's way."""
    name, kind, data = serialized
    if kind != "object":
        return type(generator).unserialize_library(generator, serialized)  # numba's own, under the instance's
    object_code, bitcode = data
    library = generator.create_library(name)
    library.enable_object_caching()
    library._set_compiled_object(object_code)
    library._finalize_final_module()
    engine = generator._engine

    def module_for_linking():
        if library._shared_module is None:
            library._shared_module = llvm.parse_bitcode(bitcode)
            engine._load_defined_symbols(library._shared_module)
        return library._shared_module

    library._get_module_for_linking = module_for_linking
    library.get_pointer_to_function = engine.get_function_address
    return library


load_cached_code_as_is()

# numba's symbols for the functions of the packages compiled without wraparound (index_without_wraparound)
_UNWRAPPED_SYMBOLS = []


def index_without_wraparound(package: str) -> None:
    """Compile the functions of `package` (a dotted module name and the modules under it) so that they index
    arrays as C does: a negative index is not counted from the end.

    Python's wraparound costs a comparison and a select for every index numba cannot prove non-negative, which
    is nearly every row index of the kernels' tables. harts never indexes with a negative number on purpose: -1
    means "none" and is tested before it is used as an index; a run of the test suite with numba's bounds checks
    (``NUMBA_BOUNDSCHECK=1``, under which an unwrapped negative index is an IndexError) checks it (bench/SPEED.md,
    Indexing without wraparound). harts' modules are compiled this way, and so are the speed-of-light models in
    bench/limits, so that they stay the tightest loops this design allows. Functions are chosen by the symbol
    numba gives them: user code, NP procedures written outside harts included, keeps Python's meaning
    (tests/test_kernel.py)."""
    symbol = "_ZN" + "".join(f"{len(part)}{part}" for part in package.split("."))
    if symbol not in _UNWRAPPED_SYMBOLS:
        _UNWRAPPED_SYMBOLS.append(symbol)


def _skip_wraparound_where_asked():
    """Route numba's one function that wraps integer indices (numba.np.arrayobj.fix_integer_index) through
    `_unwrapped_where_asked`. That module is part of numba's compiler, which a run that only loads cached code
    never imports (load_cached_code_as_is), so it is routed when it is there already or once numba sets its
    compiler up (BaseContext.refresh, which imports it), before anything is compiled. With a numba that has
    neither, nothing changes."""
    import sys

    from numba.core import base

    if "numba.np.arrayobj" in sys.modules:
        _unwrapped_where_asked(sys.modules["numba.np.arrayobj"])
    refresh = getattr(base.BaseContext, "refresh", None)
    if refresh is None:
        return

    def refresh_then_route(self):
        refresh(self)
        _unwrapped_where_asked(sys.modules.get("numba.np.arrayobj"))

    base.BaseContext.refresh = refresh_then_route


def _unwrapped_where_asked(arrayobj):
    pythons_way = getattr(arrayobj, "fix_integer_index", None)
    if pythons_way is None or getattr(pythons_way, "routed_by_harts", False):
        return

    def fix_integer_index(context, builder, index_type, index, size):
        if index_type.signed and builder.function.name.startswith(tuple(_UNWRAPPED_SYMBOLS)):
            return context.cast(builder, index, index_type, types.intp)
        return pythons_way(context, builder, index_type, index, size)

    fix_integer_index.routed_by_harts = True
    arrayobj.fix_integer_index = fix_integer_index


_skip_wraparound_where_asked()
index_without_wraparound("harts")


class _DiskCacheWhenAsked:
    """Stands in for a dispatcher's disk cache until numba first asks it for anything (to load or to save code).

    numba makes the cache of a ``cache=True`` function when it is decorated, and that checks that the cache's
    folder is writable by creating a file there. For the kernel entries, the networks' offsets functions and the NP
    procedures' helpers (the kernel parts make theirs with their dispatchers, _CompiledWhenUsed), making the caches
    only when asked took 6 ms off importing both kernels' modules."""

    __slots__ = ("_dispatcher",)

    def __init__(self, dispatcher):
        self._dispatcher = dispatcher

    def __getattr__(self, name):
        self._dispatcher.enable_caching()
        return getattr(self._dispatcher._cache, name)


def cached_when_asked(**options):
    """``njit(cache=True, **options)``, its disk cache made when first used (_DiskCacheWhenAsked); plain
    ``njit(cache=True)`` with a numba whose dispatchers keep their cache elsewhere."""
    if not hasattr(Dispatcher, "enable_caching"):
        return njit(cache=True, **options)
    compile_on_call = njit(**options)

    def decorate(function):
        dispatcher = compile_on_call(function)
        dispatcher._cache = _DiskCacheWhenAsked(dispatcher)
        return dispatcher
    return decorate


class _CompiledWhenUsed:
    """A kernel part (or call) until numba types a call to it, or Python calls it or asks it anything; from then on,
    the dispatcher numba would have made when it was decorated.

    numba makes a dispatcher when a function is decorated, 0.2-0.4 ms each (two calls of inspect.signature, its own
    bookkeeping, and a disk cache, whose making writes a file to check that the cache's folder is writable), for the
    hundred parts a run imports, and a run that finds its kernel in the disk cache calls none of them. numba types a
    global by its ``_numba_type_``, so a kernel compiled from these is compiled from their dispatchers."""

    def __init__(self, function, decorate):
        functools.update_wrapper(self, function)
        self._decorate = decorate
        self._dispatcher = None

    def _made(self):
        if self._dispatcher is None:
            self._dispatcher = self._decorate(self.__wrapped__)
        return self._dispatcher

    @property
    def _numba_type_(self):
        return self._made()._numba_type_

    def __call__(self, *args, **kwargs):
        return self._made()(*args, **kwargs)

    def __getattr__(self, name):
        if name in ("_decorate", "_dispatcher", "__wrapped__"):  # not set yet (a copy in the making): no dispatcher
            raise AttributeError(name)
        return getattr(self._made(), name)


kernel_part = functools.partial(_CompiledWhenUsed, decorate=njit(cache=True, forceinline=True, _nrt=False))
kernel_call = functools.partial(_CompiledWhenUsed, decorate=njit(cache=True, _nrt=False))
kernel_entry = cached_when_asked(_nrt=False)


def _type_arrays_without_numpy_ma():
    """numba types an array argument by a rule that first asks whether it is a masked array, and asking imports
    numpy.ma: 12-17 ms of a short run's start, for nothing else in it. The rule runs in Python for each array
    type a process passes first, and for every array in a named tuple on every call (harts' kernels take their
    state so). An array whose type is exactly ndarray is not masked, so it is typed here by the rest of numba's
    rule; anything else, and a dtype numba refuses, by numba's own. The types are numba's for every array
    (tests/test_start.py), so other code in the process is typed as before."""
    if not (hasattr(numpy_support, "from_dtype") and hasattr(numpy_support, "map_layout")):
        return
    numbas_rule = typeof_impl.dispatch(np.ndarray)

    def typeof_array(array, context):
        if type(array) is np.ndarray:
            try:
                return types.Array(numpy_support.from_dtype(array.dtype), array.ndim, numpy_support.map_layout(array),
                                   readonly=not array.flags.writeable)
            except errors.NumbaNotImplementedError:
                pass
        return numbas_rule(array, context)
    typeof_impl.register(np.ndarray)(typeof_array)


_type_arrays_without_numpy_ma()


def _remember_function_addresses():
    """numba passes a dispatcher as a first-class function argument (a network's offsets function and the NP
    procedure, to every call of a kernel and of Topology.route_offsets) by looking up two addresses of its compiled
    code, by name, in its JIT engine, on every call: 56-64 µs of the 91 µs such a call took, measured. A dispatcher
    that can no longer compile (harts compiles these for their one signature, then disables compiling, and never
    recompiles them) keeps its code, so its addresses are looked up once and kept in it. Other objects, and
    dispatchers that can still compile, are looked up numba's way. With a numba that lacks these functions, nothing
    is changed."""
    from numba.experimental import function_type
    for name in ("_get_wrapper_address", "_get_jit_address"):
        numbas_way = getattr(function_type, name, None)
        if numbas_way is None:
            continue

        def remembered(function, signature, numbas_way=numbas_way, name=name):
            if not isinstance(function, Dispatcher) or getattr(function, "_can_compile", True):
                return numbas_way(function, signature)
            known = function.__dict__.setdefault("_harts_function_addresses", {})
            key = (name, signature)
            if key not in known:
                known[key] = numbas_way(function, signature)
            return known[key]
        setattr(function_type, name, remembered)


_remember_function_addresses()


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
