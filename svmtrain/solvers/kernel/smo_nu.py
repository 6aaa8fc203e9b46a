"""``-s smo --nu NU``: nu-SVC (classification) and nu-SVR (``--task r``),
LIBSVM's ``-s 1`` and ``-s 4`` (B. Schölkopf, A. Smola, R. Williamson,
P. Bartlett, "New support vector algorithms", Neural Computation 2000),
solved as LIBSVM's solve_nu_svc and solve_nu_svr by its Solver_NU
(:mod:`svmtrain.solvers.kernel._smo_nu_kernels`), to LIBSVM's stopping rule
(``-e``) with its shrinking (``--shrinking``) over the ``-m`` row cache.

nu-SVC: per pair of classes (one-vs-one, LIBSVM's order; the pair's rows
those of its first class, y = +1, then its second's) the dual min 1/2
alpha'Q alpha, 0 <= alpha <= 1, y'alpha = 0, e'alpha = nu l (l the pair's
rows), from LIBSVM's start (in row order, alphas 1 within each sign until
each sign's sum is nu l / 2); then r = LIBSVM's (r1 + r2) / 2 and the model
is LIBSVM's: coefficients y alpha / r, rho / r, its ``C = 1/r`` printed.
There is no C: ``-c`` and ``-w`` are refused (LIBSVM's -s 1 ignores them).
nu must be feasible for every pair, nu (n1 + n2) / 2 <= min(n1, n2), as
LIBSVM's svm_check_parameter demands.

nu-SVR: 2l variables (alpha, alpha*), y = +1 / -1, p = -z / +z, bound C
(``-c``), sum (alpha + alpha*) = C nu l from LIBSVM's start (alpha_i =
alpha*_i, C each until their sum is C nu l / 2); the tube width is found
(LIBSVM prints it, ``epsilon = -r``; ``-p`` is not used); coefficients
alpha - alpha*, rho as LIBSVM's.
"""
import time

import numpy as np

from ..._numba import options as opts
from ...data.dataset import take_rows
from ...errors import ParameterError
from ...models.kernel import KernelModel
from ...tasks import REGRESSION
from . import _smo_kernels as K
from . import _smo_nu_kernels as NK
from ..base import FitResult, warn_max_iter
from .sbp import threads
from .smo_dual import dual_arrays, step_cap
from .smo import ovo_model, pair_progress, support_vectors     # (-t 4: the support vectors' IDs only)

STEPS_PER_CALL = 20000      # steps between progress reports


def nu_svc_start(y, nu):
    """LIBSVM's start of nu-SVC over signs ``y``: within each sign, in row
    order, alpha 1 until the sign's alphas sum to nu n / 2 (the last one
    the rest), then 0."""
    alpha = np.zeros(len(y))
    half = nu * len(y) / 2.0
    for sign in (1.0, -1.0):
        rows = np.flatnonzero(y == sign)
        alpha[rows] = np.clip(half - np.arange(len(rows)), 0.0, 1.0)
    return alpha


def nu_svr_start(n, nu, C):
    """LIBSVM's start of nu-SVR (one half of its 2n variables; alpha* is
    the same): in row order, C until the half sums to C nu n / 2 (the last
    one the rest), then 0."""
    return np.clip(C * nu * n / 2.0 - C * np.arange(n), 0.0, C)


def check_feasible(labels, order, nu):
    """ParameterError unless nu-SVC with ``nu`` is feasible for every pair
    of classes: nu (n1 + n2) / 2 <= min(n1, n2), LIBSVM's svm_check_parameter
    ("specified nu is infeasible")."""
    counts = [int(np.count_nonzero(labels == c)) for c in order]
    for a in range(len(order)):
        for c in range(a + 1, len(order)):
            n1, n2 = counts[a], counts[c]
            if nu * (n1 + n2) / 2.0 > min(n1, n2):
                raise ParameterError(
                    f"--nu {nu:g} is infeasible for classes {order[a]:g} ({n1} rows) and {order[c]:g} ({n2} rows): "
                    f"nu-SVC needs nu <= 2 min(n1, n2) / (n1 + n2) = {2.0 * min(n1, n2) / (n1 + n2):.6g} "
                    "(LIBSVM: specified nu is infeasible)")


def solve_nu(X, y, C, p, alpha, kernel, params, index=None, progress=None, n_features=None):
    """LIBSVM's Solver_NU on the dual over variables t (module doc of
    ``_smo_nu_kernels``): signs ``y``, bounds ``C``, linear term ``p``, data
    row index[t] of each (default t), from the feasible ``alpha``. Returns
    (alpha, rho, r, FitResult) with LIBSVM's rho and r (calculate_rho) and
    ``obj``, at a maximal violation below ``-e`` unless --max-iter stopped
    it (then, as LIBSVM, from gradients rebuilt over every variable)."""
    t0 = time.perf_counter()
    y, C, p, index, alpha, cache, QD, G = dual_arrays(X, y, C, p, kernel, params, alpha, index, n_features, 2)
    n = y.shape[0]
    G_bar = np.zeros(n)
    act = np.arange(n, dtype=np.int64)
    stats = np.zeros(K.N_STATS, np.int64)
    stats[K.ACTIVE] = n
    stats[K.COUNTER] = min(n, 1000) + 1         # LIBSVM's first shrink: after min(n, 1000) steps
    max_iter = step_cap(params, n)
    parallel = X.nnz >= opts.PARALLEL_MIN_NNZ
    step = NK.run if parallel else NK.run_serial
    args = cache.args()
    with threads(params):
        if n and np.any(alpha != 0.0):
            start = K.initial_gradient if parallel else K.initial_gradient_serial
            start(y, C, p, index, alpha, G, G_bar, *args)
        while n and stats[K.OPTIMAL] == 0 and stats[K.STEPS] < max_iter:
            step(y, C, p, index, alpha, G, G_bar, QD, act, float(params.eps), bool(params.shrinking),
                 min(STEPS_PER_CALL, max_iter - stats[K.STEPS]), stats, *args)
            if progress is not None:
                progress(int(min(stats[K.STEPS], max_iter)), max_iter, f"{int(stats[K.STEPS])} steps")
        if stats[K.OPTIMAL] == 0 and stats[K.ACTIVE] < n:
            rebuild = K._reconstruct if parallel else K._reconstruct_serial
            rebuild(y, p, index, alpha, G, G_bar, C, act, int(stats[K.ACTIVE]), np.empty(1, np.int64),
                    np.empty(1, np.int64), *args)
    rho, r = NK.nu_rho(y, C, alpha, G) if n else (0.0, 0.0)
    obj = K.dual_value(alpha, G, p)
    info = {"obj": obj, "rho": rho, "r": r, "kernel_rows": cache.misses, "cache_hits": cache.hits,
            "time": time.perf_counter() - t0}
    return alpha, rho, r, FitResult(w=np.zeros(0), b=-rho, n_iter=int(stats[K.STEPS]), objective=obj,
                                    converged=bool(stats[K.OPTIMAL]), info=info)


def solve_nu_svc(X, y, nu, kernel, params, progress=None, n_features=None):
    """nu-SVC on the rows of X (signs ``y``) as LIBSVM's solve_nu_svc (module
    doc). Returns (coefficients y alpha / r, rho / r, FitResult; its info
    LIBSVM's obj / r^2, rho / r, C = 1 / r, nSV, nBSV (alpha at 1))."""
    n = len(y)
    alpha, rho, r, res = solve_nu(X, y, np.ones(n), np.zeros(n), nu_svc_start(y, nu), kernel, params,
                                  progress=progress, n_features=n_features)
    if not r > 0.0:
        raise ParameterError(f"nu-SVC: the solution's margin r is {r:g}, not > 0 (--nu {nu:g} leaves no margin "
                             "between these classes); try a smaller --nu")
    res.info.update(obj=res.info["obj"] / (r * r), rho=rho / r, C=1.0 / r, n_sv=int(np.count_nonzero(alpha)),
                    n_bsv=int(np.count_nonzero(alpha >= 1.0)))
    res.objective = res.info["obj"]
    res.b = -rho / r
    return np.asarray(y, np.float64) * alpha / r, rho / r, res


def solve_nu_svr(X, z, nu, C, kernel, params, progress=None, n_features=None):
    """nu-SVR as LIBSVM's solve_nu_svr (module doc): 2n variables (alpha,
    then alpha*). Returns (coefficients alpha - alpha* per row, rho,
    FitResult; its info LIBSVM's obj, rho, epsilon = -r, nSV, nBSV (|coef| at C))."""
    n = X.n_rows
    z = np.asarray(z, np.float64)
    half = nu_svr_start(n, nu, C)
    y = np.concatenate([np.ones(n), -np.ones(n)])
    index = np.concatenate([np.arange(n), np.arange(n)]).astype(np.int64)
    alpha2, rho, r, res = solve_nu(X, y, np.full(2 * n, C), np.concatenate([-z, z]), np.concatenate([half, half]),
                                   kernel, params, index=index, progress=progress, n_features=n_features)
    coef = alpha2[:n] - alpha2[n:]
    res.info.update(epsilon=-r, n_sv=int(np.count_nonzero(coef)), n_bsv=int(np.count_nonzero(np.abs(coef) >= C)))
    return coef, rho, res


def log_result(log, res, first):
    """LIBSVM's lines after an optimisation, ``first`` (its "C = ..." or
    "epsilon = ..." line) after "optimization finished"."""
    warn_max_iter(log, res.converged, res.n_iter)
    if log is not None:
        log(f"optimization finished, #iter = {res.n_iter}\n{first}\nobj = {res.info['obj']:.6f}, "
            f"rho = {res.info['rho']:.6f}\nnSV = {res.info['n_sv']}, nBSV = {res.info['n_bsv']}")


def train_model(data, order, problems, n_features, params, kernel, progress=None, log=None):
    """The KernelModel of nu-SVC (one-vs-one over the labels ``order``) or,
    with ``--task r``, of nu-SVR (see the module doc); ``kernel`` resolved.
    Called by :func:`svmtrain.solvers.kernel.smo.train_model` when --nu is given."""
    if params.working_set not in (None, 2):
        raise ParameterError("--working-set: the nu-SVMs (--nu) take LIBSVM's pair steps only (--working-set 2)")
    nu = float(params.nu)
    with threads(params):
        if params.task == REGRESSION:
            C = params.resolved_C(data.n_rows)
            coef, rho, res = solve_nu_svr(data, data.labels, nu, C, kernel, params, progress, n_features)
            log_result(log, res, f"epsilon = {res.info['epsilon']:f}")
            used = np.flatnonzero(coef)
            model = KernelModel(labels=order, SV=support_vectors(data, used, kernel), coef=coef[used], b=[-rho],
                                kernel=kernel, n_features=n_features, solver="smo", task=REGRESSION)
            model.fit_results = [res]
            return model
        return _one_vs_one(data, order, nu, kernel, n_features, params, progress, log)


def _one_vs_one(data, order, nu, kernel, n_features, params, progress, log):
    """nu-SVC: one problem per pair of labels, in LIBSVM's order and with
    LIBSVM's row order within it (the first label's rows, then the second's)."""
    check_feasible(data.labels, order, nu)
    k = len(order)
    pairs = [(a, c) for a in range(k) for c in range(a + 1, k)]
    coef = np.zeros((data.n_rows, max(len(pairs), 1)))
    b = np.zeros(max(len(pairs), 1))
    results = []
    for q, (a, c) in enumerate(pairs):
        first, second = np.flatnonzero(data.labels == order[a]), np.flatnonzero(data.labels == order[c])
        rows = np.concatenate([first, second])
        y = np.concatenate([np.ones(len(first)), -np.ones(len(second))])
        if log is not None and len(pairs) > 1:
            log(f"class {order[a]:g} vs {order[c]:g}")
        pair_coef, rho, res = solve_nu_svc(take_rows(data, rows), y, nu, kernel, params,
                                           pair_progress(progress, q, len(pairs)), n_features)
        log_result(log, res, f"C = {res.info['C']:f}")
        coef[rows, q] = pair_coef
        b[q] = -rho
        results.append(res)
    return ovo_model(data, order, coef, b, results, kernel, n_features)
