"""Numba kernels of :mod:`svmtrain.solvers.kernel.smo_path`."""
from numba import njit


@njit(cache=True, nogil=True)
def matrix_scores(M, slot_of, test_rows, sv_rows, coef, out):
    """out[t] += sum_k coef[k] K(x_{test_rows[t]}, x_{sv_rows[k]}) for every
    t, K read from a filled kernel cache over all the rows (row r of the
    kernel matrix in M[slot_of[r]], float32; the matrix is symmetric), the
    sum in float64 in the order of ``sv_rows``."""
    for t in range(test_rows.shape[0]):
        row = M[slot_of[test_rows[t]]]
        s = 0.0
        for k in range(sv_rows.shape[0]):
            s += coef[k] * row[sv_rows[k]]
        out[t] += s
