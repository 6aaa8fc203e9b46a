"""LIBSVM's kernels over the CSR contract, evaluated in parallel by numba.

    -t 0 linear       K(u, v) = u.v
    -t 1 polynomial   K(u, v) = (gamma u.v + coef0)^degree
    -t 2 rbf          K(u, v) = exp(-gamma |u - v|^2)
    -t 3 sigmoid      K(u, v) = tanh(gamma u.v + coef0)
    -t 4 precomputed  K(u, v) = the value of u at column ID(v): the data are
                      kernel values (LIBSVM's format, see :mod:`.precomputed`)

``-g`` (gamma) defaults to 1 / number of features, ``-d`` (degree) to 3 and
``-r`` (coef0) to 0, as in LIBSVM. Squared norms of rows are computed once
and passed in, so an RBF value costs one sparse dot product.
"""
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from .._numba import options as _opts
from .._numba.options import PRANGE

LINEAR, POLYNOMIAL, RBF, SIGMOID, PRECOMPUTED = 0, 1, 2, 3, 4
ROWS_PER_TASK = 64      # rows per parallel task of the kernel matrix
NAMES = {LINEAR: "linear", POLYNOMIAL: "polynomial", RBF: "rbf", SIGMOID: "sigmoid", PRECOMPUTED: "precomputed"}
CODES = {v: k for k, v in NAMES.items()}
# dense scratch for the rows of a block is kept under this many bytes
BLOCK_BYTES = 32 << 20


@dataclass(frozen=True)
class Kernel:
    """A kernel function with LIBSVM's parameters; ``code`` is the -t number."""
    code: int = RBF
    gamma: float = None
    degree: int = 3
    coef0: float = 0.0

    @property
    def name(self):
        return NAMES[self.code]

    def resolved(self, n_features):
        """This kernel with LIBSVM's defaults for what is None: gamma 1 / n_features
        (0 for a precomputed kernel, which has none), degree 3, coef0 0."""
        default_gamma = 0.0 if self.code == PRECOMPUTED else 1.0 / max(n_features, 1)
        return Kernel(self.code, default_gamma if self.gamma is None else self.gamma,
                      3 if self.degree is None else self.degree, 0.0 if self.coef0 is None else self.coef0)

    def params(self):
        """(code, gamma, degree, coef0) as the numba kernels take them."""
        return self.code, float(self.gamma), float(self.degree), float(self.coef0)


@njit(cache=True, nogil=True)
def sq_norms(indptr, values):
    """|x_i|^2 of every CSR row."""
    n = indptr.shape[0] - 1
    out = np.empty(n)
    for i in range(n):
        s = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            s += values[p] * values[p]
        out[i] = s
    return out


@njit(cache=True, nogil=True)
def kernel_from_dot(dot, sq_u, sq_v, code, gamma, degree, coef0):
    """K(u, v) from u.v and the squared norms."""
    if code == RBF:
        d2 = sq_u + sq_v - 2.0 * dot
        return np.exp(-gamma * (d2 if d2 > 0.0 else 0.0))
    if code == POLYNOMIAL:
        return (gamma * dot + coef0) ** degree
    if code == SIGMOID:
        return np.tanh(gamma * dot + coef0)
    return dot


@njit(cache=True, nogil=True)
def densify_rows(indptr, indices, values, rows, m, n_features, dense):
    """dense[j, c] = value of feature j in row rows[c] for c < m (features >= n_features
    dropped); the columns from m on are left as they are. (Callers pass whole C arrays
    and a count, so that one compiled specialisation serves them all.)"""
    for j in range(dense.shape[0]):
        for c in range(m):
            dense[j, c] = 0.0
    for c in range(m):
        i = rows[c]
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            if j < n_features:
                dense[j, c] = values[p]


@njit(cache=True, nogil=True)
def _block_rows(indptr, indices, values, sq, dense, sq_cols, n_features, code, gamma, degree, coef0, out,
                lo, hi):
    """out[i, c] = K(x_i, column c of dense) for the CSR rows lo <= i < hi."""
    m = dense.shape[1]
    for i in range(lo, hi):
        for c in range(m):
            out[i, c] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            if j < n_features:
                v = values[p]
                for c in range(m):
                    out[i, c] += v * dense[j, c]
        for c in range(m):
            out[i, c] = kernel_from_dot(out[i, c], sq[i], sq_cols[c], code, gamma, degree, coef0)


@njit(cache=True, nogil=True, parallel=PRANGE)
def _block_parallel(indptr, indices, values, sq, dense, sq_cols, n_features, code, gamma, degree, coef0, out):
    """_block_rows over every row, in parallel over blocks of ROWS_PER_TASK rows."""
    n = indptr.shape[0] - 1
    for t in prange((n + ROWS_PER_TASK - 1) // ROWS_PER_TASK):
        _block_rows(indptr, indices, values, sq, dense, sq_cols, n_features, code, gamma, degree, coef0, out,
                    t * ROWS_PER_TASK, min(n, (t + 1) * ROWS_PER_TASK))
    return out


def _block(indptr, indices, values, sq, dense, sq_cols, n_features, code, gamma, degree, coef0, out):
    """out[i, c] = K(x_i, column c of dense) for every CSR row i; in parallel
    from PARALLEL_MIN_WORK multiply-adds on (the same numbers either way)."""
    n = indptr.shape[0] - 1
    if (indptr[n] - indptr[0] + n) * dense.shape[1] >= _opts.PARALLEL_MIN_WORK:
        return _block_parallel(indptr, indices, values, sq, dense, sq_cols, n_features,
                               code, gamma, degree, coef0, out)
    _block_rows(indptr, indices, values, sq, dense, sq_cols, n_features, code, gamma, degree, coef0, out, 0, n)
    return out


def kernel_matrix(kernel, X, X_sq, Y, Y_sq, rows=None, out=None):
    """K[i, c] = K(X_i, Y_{rows[c]}) as float64[X.n_rows, len(rows)].

    ``X`` and ``Y`` are Chunks with squared row norms ``X_sq``/``Y_sq``
    (see :func:`sq_norms`); ``rows`` defaults to every row of Y. Work is
    split into blocks of Y-rows whose dense form fits in BLOCK_BYTES.
    A precomputed kernel (-t 4) reads X's columns at Y's IDs instead
    (:func:`svmtrain.mercer.precomputed.kernel_block`).
    """
    if kernel.code == PRECOMPUTED:
        from .precomputed import kernel_block
        return kernel_block(X, Y, rows, out)
    rows = np.arange(Y.n_rows, dtype=np.int64) if rows is None else np.asarray(rows, np.int64)
    if out is None:
        out = np.empty((X.n_rows, len(rows)))
    d = max(X.n_features, Y.n_features, 1)
    step = max(1, BLOCK_BYTES // (8 * d))
    code, gamma, degree, coef0 = kernel.params()
    for lo in range(0, len(rows), step):
        block = rows[lo:lo + step]
        dense = np.empty((d, len(block)))
        densify_rows(Y.indptr, Y.indices, Y.values, block, len(block), d, dense)
        _block(X.indptr, X.indices, X.values, X_sq, dense, Y_sq[block], d,
               code, gamma, degree, coef0, out[:, lo:lo + len(block)])
    return out
