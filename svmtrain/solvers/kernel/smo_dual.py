"""The dual of an SMO run, shared by the pair steps (:mod:`.smo`) and the
batched decomposition (:mod:`.smo_batched`): its arrays, its kernel
diagonal and its step limit."""
import numpy as np

from ...mercer.cache import KernelCache
from ...mercer.functions import POLYNOMIAL, RBF, SIGMOID


def diagonal(kernel, sq):
    """K(x_i, x_i) of every row from its squared norm ``sq``."""
    if kernel.code == RBF:
        return np.ones_like(sq)
    if kernel.code == POLYNOMIAL:
        return (kernel.gamma * sq + kernel.coef0) ** kernel.degree
    if kernel.code == SIGMOID:
        return np.tanh(kernel.gamma * sq + kernel.coef0)
    return sq.copy()


def dual_arrays(X, y, C, p, kernel, params, alpha, index, n_features, max_batch):
    """(y, C, p, index, alpha, cache, QD, G) of a dual over the rows of X:
    the first five as contiguous float64 / int64 arrays (``index`` default
    0..n-1, ``alpha`` default 0, a copy), a KernelCache of ``params.cache_mb``
    fetching up to ``max_batch`` rows at once, the diagonal QD of each
    variable, and G = p (the gradient at alpha = 0; ``initial_gradient``
    completes it for another alpha)."""
    y = np.ascontiguousarray(y, np.float64)
    C = np.ascontiguousarray(C, np.float64)
    p = np.ascontiguousarray(p, np.float64)
    n = y.shape[0]
    index = np.arange(n, dtype=np.int64) if index is None else np.ascontiguousarray(index, np.int64)
    alpha = np.zeros(n) if alpha is None else np.array(alpha, np.float64)
    cache = KernelCache(X, kernel, params.cache_mb, max_batch=max_batch, n_features=n_features)
    return y, C, p, index, alpha, cache, diagonal(kernel, cache.sq)[index], p.copy()


def step_cap(params, n):
    """The step limit of a run over n variables: --max-iter, else LIBSVM's max(10^7, 100 n)."""
    return int(params.max_iter) if params.max_iter else max(10_000_000, 100 * n)
