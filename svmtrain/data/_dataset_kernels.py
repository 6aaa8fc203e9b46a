"""numba kernels over the Chunk CSR contract."""
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
