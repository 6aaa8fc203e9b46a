"""``-s smo``: C-SVC by sequential minimal optimisation, LIBSVM's exact
solver (R.-E. Fan, P.-H. Chen, C.-J. Lin, "Working set selection using
second order information for training SVM", JMLR 2005).

One binary dual per pair of classes (one-vs-one, in LIBSVM's order: the
first class of a pair is y = +1), each solved by
:func:`svmtrain.solvers._smo_kernels.run` to LIBSVM's stopping rule
(``-e``, default 0.001) over an LRU cache of kernel rows (``-m`` MB,
float32 rows as LIBSVM's). The bound of row i is C times the class weight
of its label (``-w``). The model is LIBSVM's: support vectors (the rows
with alpha > 0 in some pair), coefficients y_i alpha_i per pair and b =
-rho; with two classes one column (positive scores predict the first
label), with more LIBSVM's one-vs-one vote. Default kernel: RBF with
gamma 1 / number of features, as LIBSVM.

LIBSVM's shrinking (``--shrinking``, on by default; LIBSVM's ``-h 0|1``)
drops from the working-set search and the gradient updates the bounded
rows that cannot enter a violating pair, and rebuilds their gradients
before the final check: the same solution within ``-e``, in fewer
operations (on the problems tested, the same steps as LIBSVM's).
"""
import time

import numpy as np

from .. import _numba_options as opts
from ..data.dataset import take_rows
from ..errors import ParameterError
from ..kernels.cache import KernelCache
from ..kernels.functions import POLYNOMIAL, RBF, SIGMOID, Kernel
from ..kernels.model import KernelModel
from . import _smo_kernels as K
from .base import FitResult, warn_max_iter
from .sbp import threads

DEFAULTS = {"eps": 0.001}
STEPS_PER_CALL = 20000      # SMO steps between progress reports


def kernel_of(params, n_features):
    """The resolved kernel of ``params`` (RBF when -t is not given, as LIBSVM)."""
    code = RBF if params.kernel_type is None else params.kernel_type
    return Kernel(code, params.gamma, params.degree, params.coef0).resolved(n_features)


def diagonal(kernel, sq):
    """K(x_i, x_i) of every row from its squared norm ``sq``."""
    if kernel.code == RBF:
        return np.ones_like(sq)
    if kernel.code == POLYNOMIAL:
        return (kernel.gamma * sq + kernel.coef0) ** kernel.degree
    if kernel.code == SIGMOID:
        return np.tanh(kernel.gamma * sq + kernel.coef0)
    return sq.copy()


def solve_binary(X, y, C, kernel, params, progress=None, n_features=None):
    """Solve one binary dual over the rows of X (a Chunk) with labels ``y``
    (+-1) and bounds ``C`` (per row). Returns (alpha, rho, FitResult)."""
    t0 = time.perf_counter()
    n = X.n_rows
    y = np.ascontiguousarray(y, np.float64)
    C = np.ascontiguousarray(C, np.float64)
    cache = KernelCache(X, kernel, params.cache_mb, max_batch=2, n_features=n_features)
    QD = diagonal(kernel, cache.sq)
    alpha = np.zeros(n)
    G = np.full(n, -1.0)
    G_bar = np.zeros(n)
    active = np.arange(n, dtype=np.int64)
    stats = np.zeros(5, np.int64)
    stats[K.ACTIVE] = n
    stats[K.COUNTER] = min(n, 1000)
    eps = float(params.eps)
    max_iter = int(params.max_iter) if params.max_iter else max(10_000_000, 100 * n)
    step = K.run if X.nnz >= opts.PARALLEL_MIN_NNZ else K.run_serial
    args = cache.args()
    # (threads() also starts numba's threading layer, which the parallel row
    # kernel needs when it is reached from inside the compiled loop)
    with threads(params):
        while stats[K.OPTIMAL] == 0 and stats[K.STEPS] < max_iter:
            step(y, C, alpha, G, G_bar, QD, active, eps, bool(params.shrinking),
                 min(STEPS_PER_CALL, max_iter - stats[K.STEPS]), stats, *args)
            if progress is not None:
                progress(int(min(stats[K.STEPS], max_iter)), max_iter, f"{int(stats[K.STEPS])} steps")
    rho = K.rho_of(y, C, alpha, G) if n else 0.0
    obj = K.dual_value(alpha, G)
    info = {"obj": obj, "rho": rho, "n_sv": int(np.count_nonzero(alpha)),
            "n_bsv": int(np.count_nonzero(alpha >= C)), "kernel_rows": cache.misses, "cache_hits": cache.hits,
            "time": time.perf_counter() - t0}
    return alpha, rho, FitResult(w=np.zeros(0), b=-rho, n_iter=int(stats[K.STEPS]), objective=obj,
                                 converged=bool(stats[K.OPTIMAL]), info=info)


def train_model(data, order, problems, n_features, params, progress=None, log=None, monitor=None):
    """The one-vs-one KernelModel of ``data`` for the labels ``order`` (see the module doc)."""
    if monitor is not None:
        raise ParameterError("--trace does not trace -s smo")
    if params.bias >= 0:
        raise ParameterError("-B is not supported by -s smo: it learns LIBSVM's unregularised bias")
    kernel = kernel_of(params, n_features)
    k = len(order)
    C = params.resolved_C(data.n_rows)
    weight = {c: params.class_weights.get(float(c), 1.0) for c in order}
    pairs = [(a, b) for a in range(k) for b in range(a + 1, k)] if k > 1 else []
    coef = np.zeros((data.n_rows, max(len(pairs), 1)))
    b = np.zeros(max(len(pairs), 1))
    results = []
    with threads(params):
        for p, (a, c) in enumerate(pairs):
            rows = np.flatnonzero((data.labels == order[a]) | (data.labels == order[c]))
            sub = take_rows(data, rows)
            y = np.where(sub.labels == order[a], 1.0, -1.0)
            bound = np.where(y > 0, C * weight[order[a]], C * weight[order[c]])
            if log is not None and len(pairs) > 1:
                log(f"class {order[a]:g} vs {order[c]:g}")
            report = None if progress is None else (
                lambda done, total, status=None, p=p: progress(p * total + done, len(pairs) * total, status))
            alpha, rho, res = solve_binary(sub, y, bound, kernel, params, report, n_features)
            warn_max_iter(log, res.converged, res.n_iter)
            if log is not None:
                log(f"optimization finished, #iter = {res.n_iter}\nobj = {res.info['obj']:.6f}, rho = {rho:.6f}\n"
                    f"nSV = {res.info['n_sv']}, nBSV = {res.info['n_bsv']}")
            coef[rows, p] = y * alpha
            b[p] = -rho
            results.append(res)
    used = np.flatnonzero(np.any(coef != 0.0, axis=1))
    model = KernelModel(labels=order, SV=take_rows(data, used), coef=coef[used], b=b, kernel=kernel,
                        n_features=n_features, solver="smo", decision="ovo" if k > 2 else "ovr")
    model.fit_results = results
    return model
