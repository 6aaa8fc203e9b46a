"""Small numba kernels shared by the linear solvers.

All take the CSR contract of ``svmtrain.data.dataset.Chunk`` (indptr int64,
indices int32, values float64) and a weight vector ``w`` of length
``n_features + 1`` whose last entry multiplies the constant feature ``B``
(``B = 0.0`` when the model has no ``-B`` bias).
"""
import numpy as np
from numba import njit, prange

from .._numba import options as _opts
from .._numba.options import PRANGE

LOSS_HINGE = 0
LOSS_SQUARED_HINGE = 1
LOSS_CODES = {"hinge": LOSS_HINGE, "squared-hinge": LOSS_SQUARED_HINGE}

# The per-nonzero loops below index with unsigned integers (positions and
# feature numbers are never negative): numba then omits its negative-index
# wraparound, a third of the instructions of these loops, and the CPU keeps
# more of the loads of w in flight (dcd 25-30 % faster on the
# 1,000,000-row benchmark file, same results).
_U = np.uint64


@njit(cache=True, nogil=True)
def row_dot(indptr, indices, values, i, w, B):
    """x_i . w, the constant feature included."""
    s = B * w[w.shape[0] - 1]
    for p in range(_U(indptr[i]), _U(indptr[i + 1])):
        s += values[p] * w[_U(indices[p])]
    return s


@njit(cache=True, nogil=True)
def row_axpy(indptr, indices, values, i, a, w, B):
    """w += a * x_i, the constant feature included."""
    w[w.shape[0] - 1] += a * B
    for p in range(_U(indptr[i]), _U(indptr[i + 1])):
        w[_U(indices[p])] += a * values[p]


@njit(cache=True, nogil=True)
def start_w(indptr, indices, values, B, y, alpha, w):
    """w += sum_i y_i alpha[i, 0] x_i: the primal w of a dual point whose
    first column is alpha (dcd's state, the logistic dual's pairs)."""
    for i in range(y.shape[0]):
        row_axpy(indptr, indices, values, i, y[i] * alpha[i, 0], w, B)


@njit(cache=True, nogil=True)
def row_sqnorms(indptr, values, B):
    """|x_i|^2 for every row, the constant feature included."""
    n = indptr.shape[0] - 1
    out = np.empty(n, np.float64)
    for i in range(n):
        s = B * B
        for p in range(indptr[i], indptr[i + 1]):
            s += values[p] * values[p]
        out[i] = s
    return out


@njit(cache=True, nogil=True, parallel=PRANGE)
def margins_parallel(indptr, indices, values, w, B, b, out):
    """out[i] = x_i . w + b for every row (in parallel over rows)."""
    n = indptr.shape[0] - 1
    for i in prange(n):
        out[i] = row_dot(indptr, indices, values, i, w, B) + b
    return out


@njit(cache=True, nogil=True)
def margins_serial(indptr, indices, values, w, B, b, out):
    """out[i] = x_i . w + b for every row (the same numbers as margins_parallel)."""
    n = indptr.shape[0] - 1
    for i in range(n):
        out[i] = row_dot(indptr, indices, values, i, w, B) + b
    return out


def margins(indptr, indices, values, w, B, b, out):
    """out[i] = x_i . w + b for every row; returns out. In parallel over
    rows when there are at least PARALLEL_MIN_NNZ stored values (each row's
    sum is the same either way)."""
    if indptr[-1] - indptr[0] >= _opts.PARALLEL_MIN_NNZ:
        return margins_parallel(indptr, indices, values, w, B, b, out)
    return margins_serial(indptr, indices, values, w, B, b, out)


@njit(cache=True, nogil=True)
def loss_sum(y, scores, loss, weights):
    """sum_i weights[i] * loss(y_i * scores_i) for hinge or squared hinge."""
    s = 0.0
    for i in range(y.shape[0]):
        m = 1.0 - y[i] * scores[i]
        if m > 0.0:
            if loss == LOSS_SQUARED_HINGE:
                s += weights[i] * m * m
            else:
                s += weights[i] * m
    return s


def sq_norm(w):
    """|w|^2 as NumPy's pairwise sum of the squares: the same bits whatever
    BLAS's thread count (``w @ w`` is BLAS's dot, which splits a long sum
    among its threads, so the last bit of an objective written into a model
    could change with OPENBLAS_NUM_THREADS)."""
    return float(np.square(w).sum())


def primal_objective(X, y, w_ext, B, b, lam, loss="hinge", epsilon=0.0, weights=None):
    """lambda/2 |w|^2 + mean loss(w.x_i + b; y_i), with w_ext as in base.py:
    the hinge or squared hinge of y_i s_i, the logistic loss, or the
    epsilon-insensitive loss of s_i - y_i (tube ``epsilon``) or its square;
    with row ``weights``, (1/n) sum_i weights_i loss_i.

    The regulariser covers w_ext including the constant-feature weight
    (as LIBLINEAR's -B does) but never the unregularised bias b.

    The loss sum is :func:`rows_loss_sum`'s (NumPy expressions on small data).
    """
    loss_total = rows_loss_sum(X.indptr, X.indices, X.values, w_ext, B, b, y, loss, epsilon, weights)
    return 0.5 * lam * sq_norm(w_ext) + loss_total / max(X.n_rows, 1)


def rows_loss_sum(indptr, indices, values, w, B, b, y, loss, epsilon=0.0, weights=None):
    """sum_i weights_i loss(x_i . w + b; y_i) over the CSR rows (weights None:
    all 1), for the losses of :func:`score_loss_sum`. Below NUMPY_MAX_NNZ
    stored values by NumPy expressions (:func:`margins_numpy`,
    :func:`loss_terms_sum`: a run on small data compiles and loads no kernel
    for it; the same terms summed in another order, so the last bits may
    differ), else by the kernels."""
    if indptr[-1] - indptr[0] < _opts.NUMPY_MAX_NNZ:
        return loss_terms_sum(y, margins_numpy(indptr, indices, values, w, B, b), loss, epsilon, weights)
    scores = margins(indptr, indices, values, w, B, b, np.empty(indptr.shape[0] - 1, np.float64))
    return score_loss_sum(y, scores, loss, epsilon, weights)


def margins_numpy(indptr, indices, values, w, B, b):
    """x_i . w + b for every row as NumPy expressions (the constant feature
    included): the numbers of :func:`margins` up to the order of the sums."""
    n = indptr.shape[0] - 1
    if n <= 0:
        return np.zeros(0)
    lo, hi = indptr[0], indptr[-1]
    products = np.append(values[lo:hi] * w[indices[lo:hi]], 0.0)   # (the 0: a last row may be empty)
    sums = np.add.reduceat(products, indptr[:-1] - lo)
    sums[indptr[1:] == indptr[:-1]] = 0.0           # reduceat gives an empty row its next entry
    return sums + (B * w[w.shape[0] - 1] + b)


def score_loss_sum(y, scores, loss, epsilon=0.0, weights=None):
    """sum_i weights_i loss(scores_i; y_i) (weights None: all 1) for every
    loss of svmtrain.tasks but the pairwise and one-class ones."""
    if loss in LOSS_CODES:
        return loss_sum(y, scores, LOSS_CODES[loss], np.ones(len(y), np.float64) if weights is None else weights)
    return loss_terms_sum(y, scores, loss, epsilon, weights)


def loss_terms_sum(y, scores, loss, epsilon=0.0, weights=None):
    """:func:`score_loss_sum` by NumPy expressions for every loss (the hinges
    too: no kernel to compile; the sum in NumPy's order)."""
    if loss in LOSS_CODES:
        m = np.maximum(1.0 - y * scores, 0.0)
        terms = m * m if loss == "squared-hinge" else m
    elif loss == "log":
        terms = np.logaddexp(0.0, -y * scores)
    else:
        e = np.maximum(np.abs(scores - y) - epsilon, 0.0)
        terms = e * e if loss == "squared-epsilon-insensitive" else e
    return float(terms.sum() if weights is None else terms @ weights)
