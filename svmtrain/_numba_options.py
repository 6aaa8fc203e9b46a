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
# dispatchers read these at call time (svmtrain.precompile sets them to 0
# to compile the parallel twins on its tiny problems).
PARALLEL_MIN_NNZ = 1 << 16      # stored values of a CSR pass
PARALLEL_MIN_WORK = 1 << 18     # multiply-adds (or output entries) of a dense pass
