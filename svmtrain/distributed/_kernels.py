"""numba kernels run by Dask workers (the per-example work of distributed Pegasos).

A partition's row i has the target y_i = labels[i] for regression
(``regression`` true), else y_i = +1 when labels[i] == pos and -1 otherwise.
"""
from numba import njit

from ..solvers._common import row_axpy, row_dot
from ..solvers.sgd._pegasos_kernels import loss_slope, loss_value


@njit(cache=True, nogil=True)
def _target(labels, i, pos, regression):
    if regression:
        return labels[i]
    return 1.0 if labels[i] == pos else -1.0


@njit(cache=True, nogil=True)
def batch_slopes(indptr, indices, values, labels, pos, regression, rows, w, B, b, loss, p, g):
    """Pegasos' step sum on this partition's share of a mini-batch.

    For every entry i of ``rows`` (local row numbers; a row drawn twice
    counts twice), with g_i = -d loss / d s at s = w.x_i + b (``loss_slope``:
    for the hinge y_i when y_i s < 1, else 0; the constant feature B
    included in x_i): add g_i x_i to ``g`` (length len(w)). Returns (rows
    with g_i != 0, the sum of their g_i).
    """
    nv = 0
    gsum = 0.0
    for r in range(rows.shape[0]):
        i = rows[r]
        gi = loss_slope(loss, row_dot(indptr, indices, values, i, w, B) + b,
                        _target(labels, i, pos, regression), p)
        if gi != 0.0:
            row_axpy(indptr, indices, values, i, gi, g, B)
            nv += 1
            gsum += gi
    return nv, gsum


@njit(cache=True, nogil=True)
def loss_sum(indptr, indices, values, labels, pos, regression, w, B, b, loss, p):
    """sum_i loss(w.x_i + b; y_i) over the partition."""
    s = 0.0
    for i in range(indptr.shape[0] - 1):
        s += loss_value(loss, row_dot(indptr, indices, values, i, w, B) + b, _target(labels, i, pos, regression), p)
    return s
