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
