"""Shared numba options.

``PRANGE`` is ``parallel=`` for the kernels that parallelise explicit
``prange`` loops: only those loops become parallel regions. With plain
``parallel=True`` numba also turns every array expression, allocation
fill (``np.zeros``), slice assignment and array reduction of the function
into a parallel region of its own, each compiled as a separate threaded
function: that costs 30-40 % more compilation, and those statements work
on small per-block arrays in these kernels (the heavy loops are the
prange loops themselves).
"""
from numba.core.cpu import ParallelOptions

PRANGE = ParallelOptions({"comprehension": False, "reduction": False, "inplace_binop": False,
                          "setitem": False, "numpy": False, "stencil": False, "fusion": False,
                          "prange": True})

# Kernels with a serial twin (margins, linear scoring, the kernel matrix,
# the feature maps and asset's dense passes) run serially below these
# sizes, where a pass takes well under a millisecond; a run on small data
# then compiles no parallel kernel at all (numba's first parallel kernel in
# a process costs about half a second more to compile than a serial one,
# each further one a few tenths). Both twins give the same numbers. The
# dispatchers read these at call time (svmtrain.cli.precompile sets them to 0
# to compile the parallel twins on its tiny problems).
PARALLEL_MIN_NNZ = 1 << 16      # stored values of a CSR pass
PARALLEL_MIN_WORK = 1 << 21     # multiply-adds (or output entries) of a dense pass

# Block kernels (:func:`by_blocks`) given a ``work`` estimate run their serial
# twin over the same blocks below this much work: a pass over an n- or
# d-vector of the OCAS loop counts its length times the pass's cost in units
# of the cheapest pass (about 1.5 ns an element here), so the threshold is
# about 0.2 ms of work on one thread. Called back to back, two threads already
# won from 75-120 us (the breakpoint pass, cost 3, from 16-32k rows; the
# outputs' update, cost 2, from 32k; a histogram or w_b's update, cost 1, from
# 65-130k); inside a run, where the other thread has slept longer, its
# wake-up (OMP_WAIT_POLICY=PASSIVE) cost 50-150 us a region on this
# project's VM, hence the higher bar.
PARALLEL_MIN_PASS = 1 << 17

# A few passes made once or twice a run (the objective's losses, take_rows'
# gather) are NumPy expressions on data of fewer stored values than this: a
# run on small data then compiles and loads no kernel for them. Unlike the
# two above it never changes at run time (serial_kernels, precompile), so a
# data set always takes the same path.
NUMPY_MAX_NNZ = 1 << 16


def twin(kernel, suffix, replace=None, parallel=None):
    """The same source as the numba ``kernel``, compiled as a separate
    function ``<name><suffix>`` (its own cache entry) whose global names
    listed in ``replace`` ({name: value}) are bound to other values (other
    numba functions, or constants numba then folds); ``parallel`` (when not
    None) replaces the kernel's option. Compiling the twin compiles only
    what its own code reaches."""
    import types

    from numba import njit
    f = getattr(kernel, "py_func", None)
    if f is None:           # NUMBA_DISABLE_JIT: plain Python functions, no twins
        return kernel
    env = f.__globals__ if not replace else dict(f.__globals__, **replace)
    g = types.FunctionType(f.__code__, env, f.__name__ + suffix, f.__defaults__, f.__closure__)
    g.__qualname__ = f.__qualname__ + suffix
    g.__module__ = f.__module__
    g.__doc__ = f.__doc__
    opts = {k: v for k, v in kernel.targetoptions.items() if k not in ("parallel", "nopython")}
    if parallel is None and "parallel" in kernel.targetoptions:
        opts["parallel"] = kernel.targetoptions["parallel"]
    elif parallel:
        opts["parallel"] = parallel
    return njit(cache=True, **opts)(g)


def serial_twin(kernel, replace=None):
    """The same source as the parallel numba ``kernel``, compiled without
    ``parallel`` (its prange loops run as plain loops) and cached under its
    own name (``<name>_serial``, so the two never share a cache entry).

    For kernels whose prange loop runs over ``nb`` caller-chosen blocks the
    twin computes exactly what the kernel computes with the same ``nb``:
    callers use it when ``nb == 1``, where a parallel region has nothing
    to share out, and a run on one block then compiles no parallel code.
    The twin calls the same numba functions as the kernel, except those
    named in ``replace`` ({global name: function}, e.g. their own serial
    twins): a twin must call no parallel kernel.
    """
    return twin(kernel, "_serial", replace, parallel=False)


def by_blocks(kernel, nb_arg, work=None, replace=None):
    """A Python function calling ``kernel`` (a parallel numba kernel over
    ``nb`` blocks, ``nb`` its positional argument number ``nb_arg``) when
    ``nb > 1`` and its :func:`serial_twin` when ``nb == 1``: the same
    results, and single-block runs (small data, ``--threads 1``) compile no
    parallel code. With ``work`` (the call's arguments -> its work, see
    PARALLEL_MIN_PASS) a call of less work than PARALLEL_MIN_PASS runs the
    serial twin over the same ``nb`` blocks: the same numbers as the parallel
    kernel, no thread woken. ``replace``: the twin's rebound globals (see
    :func:`serial_twin`). ``.parallel`` and ``.serial`` are the two kernels."""
    serial = serial_twin(kernel, replace)

    if work is None:
        def run(*args):
            return (kernel if args[nb_arg] > 1 else serial)(*args)
    else:
        def run(*args):
            return (kernel if args[nb_arg] > 1 and work(args) >= PARALLEL_MIN_PASS else serial)(*args)

    f = getattr(kernel, "py_func", kernel)
    run.__name__ = f.__name__
    run.__qualname__ = f.__qualname__
    run.__module__ = f.__module__
    run.__doc__ = (f.__doc__ or "") + ("\n\n    (Runs serially when nb == 1, or when the call's work is small:"
                                       " see _numba.options.by_blocks.)")
    run.parallel = kernel
    run.serial = serial
    return run


def by_size(kernel, serial, use_parallel):
    """A Python function calling the parallel numba ``kernel`` when
    ``use_parallel(args)`` is true and ``serial`` (its serial twin, the
    same results) otherwise; ``.parallel`` and ``.serial`` are the two."""
    def run(*args):
        return (kernel if use_parallel(args) else serial)(*args)

    f = getattr(kernel, "py_func", kernel)
    run.__name__ = f.__name__
    run.__qualname__ = f.__qualname__
    run.__module__ = f.__module__
    run.__doc__ = f.__doc__
    run.parallel = kernel
    run.serial = serial
    return run


def arg_index(kernel, name):
    """The position of argument ``name`` of a numba kernel."""
    import inspect
    return list(inspect.signature(getattr(kernel, "py_func", kernel)).parameters).index(name)


def serial_only():
    """From now on, every size-dispatched kernel of this process (as in
    :class:`serial_kernels`) runs its serial twin, for good: for a process
    forked to run on one thread (``svm-grid``'s workers; their by_blocks
    kernels get nb = 1 from ``--threads 1``). So such a process enters no
    parallel region, which matters beyond speed: numba's GNU OpenMP layer
    kills a process at its first parallel region when its parent started the
    layer (as the start-up server's spare does, loading the parallel kernels
    before its run; "fork() called from a process already using GNU
    OpenMP"). The same numbers either way."""
    global PARALLEL_MIN_NNZ, PARALLEL_MIN_WORK, _saved_thresholds
    # (no _SERIAL_LOCK: a forked child has one thread, and a lock that another
    # thread of the parent held at the fork would never be released here)
    PARALLEL_MIN_NNZ = PARALLEL_MIN_WORK = 1 << 62
    if _serial_depth:           # (a context open in the parent: it must not restore them)
        _saved_thresholds = PARALLEL_MIN_NNZ, PARALLEL_MIN_WORK


_SERIAL_LOCK = __import__("threading").Lock()
_serial_depth = 0
_saved_thresholds = None


class serial_kernels:
    """A context in which every size-dispatched kernel (``margins``,
    :func:`by_size` dispatchers, kernels reading PARALLEL_MIN_NNZ or
    PARALLEL_MIN_WORK) runs its serial twin, whatever the size: for work
    that is already spread over threads by its caller (one-vs-rest classes
    in parallel, ``svmtrain.training.class_threads``), where a parallel region would
    be launched from several threads at once. Contexts may overlap (from
    several threads): the thresholds come back when the last one ends."""

    def __enter__(self):
        global PARALLEL_MIN_NNZ, PARALLEL_MIN_WORK, _serial_depth, _saved_thresholds
        with _SERIAL_LOCK:
            if _serial_depth == 0:
                _saved_thresholds = PARALLEL_MIN_NNZ, PARALLEL_MIN_WORK
                PARALLEL_MIN_NNZ = PARALLEL_MIN_WORK = 1 << 62
            _serial_depth += 1
        return self

    def __exit__(self, *exc):
        global PARALLEL_MIN_NNZ, PARALLEL_MIN_WORK, _serial_depth
        with _SERIAL_LOCK:
            _serial_depth -= 1
            if _serial_depth == 0:
                PARALLEL_MIN_NNZ, PARALLEL_MIN_WORK = _saved_thresholds
        return False
