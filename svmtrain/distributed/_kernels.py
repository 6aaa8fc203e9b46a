"""numba kernels run by Dask workers (the per-example work of distributed Pegasos)."""
from numba import njit

from ..solvers._common import row_axpy, row_dot


@njit(cache=True, nogil=True)
def batch_violators(indptr, indices, values, labels, pos, rows, w, B, b, g):
    """Pegasos' A_t^+ on this partition's share of a mini-batch.

    For every entry i of ``rows`` (local row numbers; a row drawn twice
    counts twice), with y_i = +1 when labels[i] == pos else -1: when
    y_i (w.x_i + b) < 1 (the constant feature B included in x_i), add
    y_i x_i to ``g`` (length len(w)). Returns (violators, sum of their y_i).
    """
    nv = 0
    ysum = 0.0
    for r in range(rows.shape[0]):
        i = rows[r]
        y = 1.0 if labels[i] == pos else -1.0
        if y * (row_dot(indptr, indices, values, i, w, B) + b) < 1.0:
            row_axpy(indptr, indices, values, i, y, g, B)
            nv += 1
            ysum += y
    return nv, ysum


@njit(cache=True, nogil=True)
def hinge_sum(indptr, indices, values, labels, pos, w, B, b):
    """sum_i max(0, 1 - y_i (w.x_i + b)) over the partition (y_i as above)."""
    s = 0.0
    for i in range(indptr.shape[0] - 1):
        y = 1.0 if labels[i] == pos else -1.0
        m = 1.0 - y * (row_dot(indptr, indices, values, i, w, B) + b)
        if m > 0.0:
            s += m
    return s
