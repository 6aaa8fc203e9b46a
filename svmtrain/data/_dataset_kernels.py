"""numba kernels over the Chunk CSR contract."""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def gather_rows(src_indptr, src_indices, src_values, rows, indptr, indices, values):
    """Copy the nonzeros of src rows ``rows`` into the CSR (indptr, indices, values)."""
    for r in range(rows.shape[0]):
        i = rows[r]
        q = indptr[r]
        for p in range(src_indptr[i], src_indptr[i + 1]):
            indices[q] = src_indices[p]
            values[q] = src_values[p]
            q += 1


@njit(cache=True, nogil=True)
def first_above(values, limit):
    """Index of the first |values[p]| > limit, or -1 (no temporary arrays)."""
    for p in range(values.shape[0]):
        if abs(values[p]) > limit:
            return p
    return -1


@njit(cache=True, nogil=True)
def narrow_exact(values, out):
    """out[p] = values[p] as float32 for p in order while that is exact (the
    float32 converts back to the same float64); returns how many were
    copied: len(values) when every value is a float32 (no NaN)."""
    for p in range(values.shape[0]):
        v = values[p]
        f = np.float32(v)
        if np.float64(f) != v:
            return p
        out[p] = f
    return values.shape[0]


MAX_MAGNITUDE = 1e150   # a larger feature value overflows squared norms: no solver trains on it


def first_too_large(values, limit=MAX_MAGNITUDE):
    """Index of the first |values[p]| > limit, or -1: :func:`first_above`,
    run only when NumPy's max and min (two passes, no temporaries) show
    that there is one, so that ordinary data compile no kernel for it."""
    if not (values.size and (values.max() > limit or values.min() < -limit)):
        return -1
    return first_above(values, limit)
