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

# Passes over fewer stored values than this take well under a millisecond:
# the kernels that have a serial twin (margins, linear scoring) run it
# serially, and a run on small data then compiles no parallel kernel at all
# (numba's first parallel kernel in a process costs about half a second
# more to compile than a serial one).
PARALLEL_MIN_NNZ = 1 << 16
