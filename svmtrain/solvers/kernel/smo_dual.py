"""The dual of an SMO run, shared by the pair steps (:mod:`.smo`) and the
batched decomposition (:mod:`.smo_batched`): its arrays, its kernel
diagonal, its step limit, and a dual point to resume from
(:class:`DualPoint`, the warm start of ``--grid`` along C)."""
from dataclasses import dataclass

import numpy as np

from ...mercer.cache import KernelCache
from ...mercer.functions import POLYNOMIAL, RBF, SIGMOID


def diagonal(kernel, sq):
    """K(x_i, x_i) of every row from its squared norm ``sq`` (a precomputed
    kernel's cache keeps its diagonal there: the linear kernel's rule)."""
    if kernel.code == RBF:
        return np.ones_like(sq)
    if kernel.code == POLYNOMIAL:
        return (kernel.gamma * sq + kernel.coef0) ** kernel.degree
    if kernel.code == SIGMOID:
        return np.tanh(kernel.gamma * sq + kernel.coef0)
    return sq.copy()


def dual_arrays(X, y, C, p, kernel, params, alpha, index, n_features, max_batch, cache=None):
    """(y, C, p, index, alpha, cache, QD, G) of a dual over the rows of X:
    the first five as contiguous float64 / int64 arrays (``index`` default
    0..n-1, ``alpha`` default 0, a copy), a KernelCache of ``params.cache_mb``
    fetching up to ``max_batch`` rows at once (or ``cache``, one the caller
    keeps over the rows of X with ``kernel``: its rows are reused), the
    diagonal QD of each variable, and G = p (the gradient at alpha = 0;
    ``initial_gradient`` completes it for another alpha)."""
    y = np.ascontiguousarray(y, np.float64)
    C = np.ascontiguousarray(C, np.float64)
    p = np.ascontiguousarray(p, np.float64)
    n = y.shape[0]
    index = np.arange(n, dtype=np.int64) if index is None else np.ascontiguousarray(index, np.int64)
    alpha = np.zeros(n) if alpha is None else np.array(alpha, np.float64)
    if cache is None:
        cache = KernelCache(X, kernel, params.cache_mb, max_batch=max_batch, n_features=n_features)
    elif cache.X is not X or cache.max_batch < max_batch:
        raise ValueError("the kernel cache must be over X and fetch max_batch rows at once")
    return y, C, p, index, alpha, cache, diagonal(kernel, cache.sq)[index], p.copy()


def step_cap(params, n):
    """The step limit of a run over n variables: --max-iter, else LIBSVM's max(10^7, 100 n)."""
    return int(params.max_iter) if params.max_iter else max(10_000_000, 100 * n)


@dataclass
class DualPoint:
    """A point of the dual to start an SMO run from and to receive its
    solution (:func:`svmtrain.solvers.kernel.smo.solve`'s ``point``):
    ``alpha`` (feasible), G = Q alpha + p and G_bar = the part of Q alpha
    due to the alphas at their upper bound, each None when unknown (the
    solver then computes them from alpha, one kernel row per nonzero alpha)."""
    alpha: np.ndarray = None
    G: np.ndarray = None
    G_bar: np.ndarray = None

    def rescaled(self, C_old, C_new, p):
        """The start at bounds ``C_new`` from this solution at bounds ``C_old``
        (per variable), linear term ``p``: alpha scaled by C_new / C_old and
        clipped to [0, C_new], the alphas at their old bound put at their new
        one exactly. When every bound has the same ratio r > 0 (``--grid``'s
        case) nothing is clipped, sum y alpha is r times what it was (0), and
        G and G_bar follow exactly: Q (r alpha) + p = p + r (G - p), the
        bounded alphas stay bounded; no kernel row is needed. Otherwise
        they are left unknown (the solver computes them)."""
        if self.alpha is None:
            return DualPoint()
        ratio = C_new / C_old
        at_bound = self.alpha >= C_old
        alpha = np.minimum(self.alpha * ratio, C_new)
        alpha[at_bound] = C_new[at_bound]
        r = float(ratio[0]) if len(ratio) else 1.0
        if self.G is None or np.any(ratio != r) or np.any(alpha[~at_bound] >= C_new[~at_bound]):
            return DualPoint(alpha)
        G = p + r * (self.G - p)
        return DualPoint(alpha, G, None if self.G_bar is None else r * self.G_bar)
