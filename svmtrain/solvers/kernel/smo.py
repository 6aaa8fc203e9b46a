"""``-s smo``: C-SVC, epsilon-SVR (``--task r``) and the one-class SVM
(``--task o``) by sequential minimal optimisation, LIBSVM's exact solver
(R.-E. Fan, P.-H. Chen, C.-J. Lin, "Working set selection using second
order information for training SVM", JMLR 2005), set up as LIBSVM's
solve_c_svc, solve_epsilon_svr and solve_one_class.

One binary dual per pair of classes (one-vs-one, in LIBSVM's order: the
first class of a pair is y = +1), each solved by
:func:`svmtrain.solvers.kernel._smo_kernels.run` to LIBSVM's stopping rule
(``-e``, default 0.001) over an LRU cache of kernel rows (``-m`` MB,
float32 rows as LIBSVM's). The bound of row i is C times the class weight
of its label (``-w``). The model is LIBSVM's: support vectors (the rows
with alpha > 0 in some pair), coefficients y_i alpha_i per pair and b =
-rho; with two classes one column (positive scores predict the first
label), with more LIBSVM's one-vs-one vote. Regression: 2n variables
(alpha, alpha*), the model's coefficients alpha - alpha* (``-p`` is the
tube's epsilon). One-class: bound 1, sum alpha = nu n (``--nu``), started
as LIBSVM starts it. Default kernel: RBF with gamma 1 / number of
features, as LIBSVM. With ``--nu`` (classification, regression): nu-SVC
and nu-SVR by LIBSVM's Solver_NU (:mod:`svmtrain.solvers.kernel.smo_nu`).

LIBSVM's shrinking (``--shrinking``, on by default; LIBSVM's ``-h 0|1``)
drops from the working-set search and the gradient updates the bounded
rows that cannot enter a violating pair, and rebuilds their gradients
before the final check: the same solution within ``-e``, in fewer
operations (on the problems tested, the same steps as LIBSVM's).

``--working-set Q`` (Q >= 8; the default, 1536, from BATCHED_MIN_VARS
variables) solves the same dual by the batched decomposition of ThunderSVM
and oneDAL instead (:mod:`svmtrain.solvers.kernel.smo_batched`); 2 keeps the pair
steps above.
"""
import contextlib
import time

import numpy as np

from ..._numba import options as opts
from ...data.dataset import take_rows
from ...errors import ParameterError
from ...mercer.functions import PRECOMPUTED, RBF, Kernel
from ...models.kernel import KernelModel
from ...tasks import DEFAULT_EPSILON, DEFAULT_NU, ONE_CLASS, REGRESSION
from . import _smo_kernels as K
from ..base import FitResult, warn_max_iter
from .sbp import threads
from .smo_dual import dual_arrays, step_cap

DEFAULTS = {"eps": 0.001}
# --grid runs its C path at each gamma and fold, warm-started along C (smo_path.fold_correct)
GRID_PATH = True
# -v solves its folds over one kernel matrix of all the rows when it fits in -m (its hook: the
# out-of-fold labels, or None to train fold by fold)
CROSS_VALIDATION = "svmtrain.solvers.kernel.smo_path:cross_val_predict"
# -b 1 on LIBSVM's folds (--folds libsvm): LIBSVM's per-pair Platt procedure
PROBABILITY = "svmtrain.solvers.kernel.smo_probability:libsvm_platt"
STEPS_PER_CALL = 20000      # SMO steps between progress reports
# --working-set's default: LIBSVM's pair steps (2) below BATCHED_MIN_VARS
# variables, the batched decomposition of BATCHED_Q variables per round from
# there on (faster from about 3,000 rows of a9a: 5,000 rows 1.19 s -> 0.34 s,
# 10,000 rows 2.66 s -> 0.91 s, all 32,561 rows 40 s -> 11 s at C 100),
# unless the -m cache holds fewer than BATCHED_MIN_Q rows (a working set's
# rows must all be resident)
BATCHED_MIN_VARS = 5000
# the compact rows' memory (MB) when every kernel row is resident (a --grid
# task's filled cache): rows as wide as the variables, one slot per position
WHOLE_COMPACT_MB = 128
# --grid's Newton steps on the free variables (solve's ``newton``): after
# every NEWTON_EVERY pair steps at most NEWTON_ROUNDS rounds, when the
# factorisation of the k free variables' kernel block (k^3 / 6
# multiply-adds) stays within NEWTON_BUDGET (k up to about 490; with more
# free variables the pair steps alone go on). On one fold of svmguide1 at
# gamma 2, C = 2^15 (about 100 free) the 850,000 pair steps from the warm
# start become about 7,000 (this setting was the best of 5,000 / 2,000 /
# 1,500 / 1,000 / 700 steps and 10-100 rounds).
NEWTON_EVERY = 1000
NEWTON_ROUNDS = 60
NEWTON_BUDGET = 20_000_000
NEWTON_MAX_FREE = 500
BATCHED_Q = 1536
BATCHED_MIN_Q = 256


def working_set_of(params, n_vars):
    """The working-set size of a run over ``n_vars`` variables: --working-set,
    or its default (module constants above); 2 is LIBSVM's pair method."""
    q = getattr(params, "working_set", None)
    if q is not None:
        return int(q)
    if n_vars >= BATCHED_MIN_VARS:
        return BATCHED_Q
    return 2


def kernel_of(params, n_features):
    """The resolved kernel of ``params`` (RBF when -t is not given, as LIBSVM)."""
    code = RBF if params.kernel_type is None else params.kernel_type
    return Kernel(code, params.gamma, params.degree, params.coef0).resolved(n_features)


def solve(X, y, C, p, kernel, params, alpha=None, index=None, progress=None, n_features=None, cache=None,
          point=None, newton=False):
    """LIBSVM's Solver on the dual over variables t (module doc of
    ``_smo_kernels``): signs ``y``, bounds ``C``, linear term ``p``, the
    data row index[t] of each (default: t), from ``alpha`` (default 0; a
    feasible start). Returns (alpha, rho, FitResult) with LIBSVM's rho and
    ``obj``, at a maximal violation below ``-e`` unless --max-iter stopped it.
    ``cache``: a KernelCache over the rows of X with this kernel, kept by
    the caller across runs (default: one of ``-m`` MB for this run); when
    the caller filled it (every row resident) the pair steps run compact
    throughout (the same steps). ``point``: a
    :class:`svmtrain.solvers.kernel.smo_dual.DualPoint` to start from
    instead of ``alpha`` (its G, G_bar are used when known); it receives the
    solution (alpha, G, G_bar; G unknown unless the run converged).
    ``newton`` (with a filled ``cache``): every NEWTON_EVERY pair steps a
    Newton step on the free variables (``_smo_kernels.newton_face``)
    shortens the end; the stopping rule is the same, the steps are then
    not LIBSVM's."""
    if point is not None and point.alpha is not None:
        alpha = point.alpha
    q = _working_set(X, y, params, cache, n_features)
    if q > 2:
        from . import smo_batched
        out = smo_batched.solve(X, y, C, p, kernel, params, q, alpha=alpha, index=index, progress=progress,
                                n_features=n_features, cache=cache, point=point)
        if out is not None:
            return out
    return _pair_steps(X, y, C, p, kernel, params, alpha, index, progress, n_features, cache, point, newton)


def _working_set(X, y, params, cache, n_features):
    """The working-set size of a run: --working-set, else 2 with a filled
    cache (the pair steps, compact and with Newton steps, beat the batched
    rounds there: a9a's first 10,000 rows, gamma 2^-5, C = 2^11: 8.3 s
    against 13.1 s), else its default, unless the cache holds fewer than
    BATCHED_MIN_Q rows."""
    given = getattr(params, "working_set", None)
    if given is None and cache is not None and cache.filled:
        return 2
    q = working_set_of(params, len(y))
    if q > 2 and given is None:
        from . import smo_batched
        d = X.n_features if n_features is None else n_features
        if smo_batched.plan(len(y), X.n_rows, d, q, params.cache_mb,
                            None if cache is None else cache.slots)[0] < BATCHED_MIN_Q:
            return 2
    return q


def _pair_steps(X, y, C, p, kernel, params, alpha, index, progress, n_features, cache, point, newton):
    """:func:`solve` by LIBSVM's pair steps (the loop of ``_smo_kernels.run``)."""
    t0 = time.perf_counter()
    shared = cache is not None
    y, C, p, index, alpha, cache, QD, G = dual_arrays(X, y, C, p, kernel, params, alpha, index, n_features, 2,
                                                      cache)
    n = y.shape[0]
    G_bar = np.zeros(n)
    active = np.arange(n, dtype=np.int64)
    stats = np.zeros(K.N_STATS, np.int64)
    stats[K.ACTIVE] = n
    stats[K.COUNTER] = min(n, 1000)
    stats[K.WHOLE] = int(shared and cache.filled)
    whole = bool(stats[K.WHOLE])
    newton = newton and whole
    max_iter = step_cap(params, n)
    parallel = X.nnz >= opts.PARALLEL_MIN_NNZ
    step = K.run if parallel else K.run_serial
    args = cache.args()
    work = _compact_work(n, cache, shared, (WHOLE_COMPACT_MB if whole else 64) if params.shrinking else 0, whole)
    face = _face_work(cache, n if newton else 0)
    # (whole and unwatched: one call, its compact steps interrupted only for the Newton steps)
    chunk = NEWTON_EVERY if newton else max_iter if whole and progress is None else STEPS_PER_CALL
    # (threads() also starts numba's threading layer, which the parallel row
    # kernel needs when it is reached from inside the compiled loop; the
    # serial loop needs none, and starting it costs a run 0.05-0.2 s)
    with threads(params) if parallel else contextlib.nullcontext():
        _start_gradient(y, C, p, index, alpha, G, G_bar, point, parallel, args)
        while stats[K.OPTIMAL] == 0 and stats[K.STEPS] < max_iter:
            K.newton_face(y, C, alpha, G, G_bar, index, active, stats[K.ACTIVE], cache.M, cache.slot_of,
                          NEWTON_MAX_FREE if newton and stats[K.STEPS] > 0 else 0, NEWTON_ROUNDS, NEWTON_BUDGET,
                          *face)
            step(y, C, p, index, alpha, G, G_bar, QD, active, float(params.eps), bool(params.shrinking),
                 min(chunk, max_iter - stats[K.STEPS]), stats, work, *args)
            if progress is not None:
                progress(int(min(stats[K.STEPS], max_iter)), max_iter, f"{int(stats[K.STEPS])} steps")
    if point is not None:
        point.alpha, point.G_bar = alpha, G_bar
        point.G = G if stats[K.OPTIMAL] else None
    return _pair_result(y, C, p, alpha, G, cache, stats, t0)


def _start_gradient(y, C, p, index, alpha, G, G_bar, point, parallel, args):
    """G and G_bar at the start: the point's when it knows both, else computed (alpha != 0)."""
    if point is not None and point.G is not None and point.G_bar is not None:
        G[:] = point.G
        G_bar[:] = point.G_bar
    elif np.any(alpha != 0.0):
        start = K.initial_gradient if parallel else K.initial_gradient_serial
        start(y, C, p, index, alpha, G, G_bar, *args)


def _pair_result(y, C, p, alpha, G, cache, stats, t0):
    """(alpha, rho, FitResult) of the pair steps, LIBSVM's rho and ``obj``."""
    rho = K.rho_of(y, C, alpha, G) if len(y) else 0.0
    obj = K.dual_value(alpha, G, p)
    info = {"obj": obj, "rho": rho, "n_sv": int(np.count_nonzero(alpha)),
            "n_bsv": int(np.count_nonzero(alpha >= C)), "kernel_rows": cache.misses, "cache_hits": cache.hits,
            "compact_epochs": int(stats[K.EPOCH]), "time": time.perf_counter() - t0}
    return alpha, rho, FitResult(w=np.zeros(0), b=-rho, n_iter=int(stats[K.STEPS]), objective=obj,
                                 converged=bool(stats[K.OPTIMAL]), info=info)


def _face_work(cache, n):
    """The scratch of ``_smo_kernels.newton_face`` for at most min(n,
    NEWTON_MAX_FREE) free variables (kept beside the cache), or tiny
    arrays when it is off (n = 0)."""
    k = max(1, min(n, NEWTON_MAX_FREE))
    work = cache.scratch.get(("smo.face", k)) if n else None
    if work is None:
        work = (np.zeros((k, k)), np.zeros(k, np.int64), np.zeros(k), np.zeros(k), np.zeros(k))
        if n:
            cache.scratch[("smo.face", k)] = work
    return work


def _compact_work(n, cache, shared, max_mb, whole):
    """The compact loop's buffers (``_smo_kernels.compact_work``) for n
    variables: new, or when the cache is shared the ones kept beside it
    for runs of n variables, their slot owners reset (nothing else of them
    is read before it is written)."""
    if not shared:
        return K.compact_work(n, cache.D.shape[0], max_mb, whole)
    key = ("smo.compact_work", n, max_mb, whole)
    work = cache.scratch.get(key)
    if work is None:
        work = cache.scratch[key] = K.compact_work(n, cache.D.shape[0], max_mb, whole)
    work[3].fill(-1)
    return work


def solve_binary(X, y, C, kernel, params, progress=None, n_features=None):
    """C-SVC: one binary dual over the rows of X (a Chunk) with labels ``y``
    (+-1) and bounds ``C`` (per row), p = -1. Returns (alpha, rho, FitResult)."""
    return solve(X, y, C, np.full(len(y), -1.0), kernel, params, progress=progress, n_features=n_features)


def solve_regression(X, z, C, epsilon, kernel, params, progress=None, n_features=None):
    """epsilon-SVR as LIBSVM's solve_epsilon_svr: 2n variables (alpha, then
    alpha*), y = +1 / -1, p = epsilon - z / epsilon + z, bound C. Returns
    (coefficients alpha - alpha* per row, rho, FitResult; its info counts
    LIBSVM's nSV and nBSV on the coefficients)."""
    n = X.n_rows
    z = np.asarray(z, np.float64)
    y = np.concatenate([np.ones(n), -np.ones(n)])
    p = np.concatenate([epsilon - z, epsilon + z])
    index = np.concatenate([np.arange(n), np.arange(n)]).astype(np.int64)
    alpha2, rho, res = solve(X, y, np.full(2 * n, C), p, kernel, params, index=index, progress=progress,
                             n_features=n_features)
    coef = alpha2[:n] - alpha2[n:]
    res.info["n_sv"] = int(np.count_nonzero(coef))
    res.info["n_bsv"] = int(np.count_nonzero(np.abs(coef) >= C))
    return coef, rho, res


def one_class_start(n, nu):
    """LIBSVM's feasible start of the one-class dual: the first floor(nu n)
    alphas 1, the next nu n - floor(nu n), the rest 0 (sum nu n)."""
    alpha = np.zeros(n)
    whole = int(nu * n)
    alpha[:whole] = 1.0
    if whole < n:
        alpha[whole] = nu * n - whole
    return alpha


def solve_one_class(X, nu, kernel, params, progress=None, n_features=None):
    """The one-class SVM as LIBSVM's solve_one_class: y = +1, p = 0, bound 1,
    sum alpha = nu n. Returns (alpha, rho, FitResult)."""
    n = X.n_rows
    return solve(X, np.ones(n), np.ones(n), np.zeros(n), kernel, params, alpha=one_class_start(n, nu),
                 progress=progress, n_features=n_features)


def train_model(data, order, problems, n_features, params, progress=None, log=None, monitor=None):
    """The KernelModel of ``params.task``: classification one-vs-one over
    the labels ``order`` (see the module doc), epsilon-SVR of the targets,
    or the one-class SVM (LIBSVM's -s 0, 3, 2); with --nu, nu-SVC or nu-SVR
    (LIBSVM's -s 1, 4: :mod:`svmtrain.solvers.kernel.smo_nu`)."""
    if monitor is not None:
        raise ParameterError("--trace does not trace -s smo")
    if params.bias >= 0:
        raise ParameterError("-B is not supported by -s smo: it learns LIBSVM's unregularised bias")
    if params.unreg_bias is False:
        raise ParameterError("--no-bias is not supported by -s smo (LIBSVM's C-SVC has a bias); "
                             "-s sbp --no-bias trains a kernel model without one")
    kernel = kernel_of(params, n_features)
    if params.nu is not None and params.task != ONE_CLASS:      # nu-SVC, nu-SVR (LIBSVM's -s 1, -s 4)
        from .smo_nu import train_model as nu_model
        return nu_model(data, order, problems, n_features, params, kernel, progress, log)
    with threads(params):
        if params.task == REGRESSION:
            epsilon = DEFAULT_EPSILON if params.epsilon is None else float(params.epsilon)
            coef, rho, res = solve_regression(data, data.labels, params.resolved_C(data.n_rows), epsilon, kernel,
                                              params, progress, n_features)
            return _single_model(data, order, coef, rho, res, kernel, n_features, params, log)
        if params.task == ONE_CLASS:
            nu = DEFAULT_NU if params.nu is None else float(params.nu)
            alpha, rho, res = solve_one_class(data, nu, kernel, params, progress, n_features)
            return _single_model(data, order, alpha, rho, res, kernel, n_features, params, log)
        return _one_vs_one(data, order, kernel, n_features, params, progress, log)


def _log_result(log, res):
    """LIBSVM's lines after an optimisation."""
    warn_max_iter(log, res.converged, res.n_iter)
    if log is not None:
        log(f"optimization finished, #iter = {res.n_iter}\nobj = {res.info['obj']:.6f}, "
            f"rho = {res.info['rho']:.6f}\nnSV = {res.info['n_sv']}, nBSV = {res.info['n_bsv']}")


def _single_model(data, order, coef, rho, res, kernel, n_features, params, log):
    """The one-column model of a regression or one-class run (support vectors: coef != 0)."""
    _log_result(log, res)
    used = np.flatnonzero(coef)
    model = KernelModel(labels=order, SV=support_vectors(data, used, kernel), coef=coef[used], b=[-rho], kernel=kernel,
                        n_features=n_features, solver="smo", task=params.task)
    model.fit_results = [res]
    return model


def support_vectors(data, used, kernel):
    """The model's support vectors: rows ``used`` of ``data``; with a
    precomputed kernel (-t 4) their IDs only (``0:ID``, as LIBSVM's model files)."""
    sv = take_rows(data, used)
    if kernel.code == PRECOMPUTED:
        from ...mercer.precomputed import id_rows
        return id_rows(sv)
    return sv


def ovo_pairs(labels, order, params):
    """LIBSVM's one-vs-one problems over rows with ``labels``, classes in
    ``order``: [(a, c, rows, y, weight)] per pair a < c, in LIBSVM's order,
    with the pair's rows, their signs (+1 for order[a]) and each row's
    class weight (``-w``; a row's bound is C times it)."""
    k = len(order)
    weight = {c: params.class_weights.get(float(c), 1.0) for c in order}
    out = []
    for a in range(k):
        for c in range(a + 1, k):
            rows = np.flatnonzero((labels == order[a]) | (labels == order[c]))
            y = np.where(labels[rows] == order[a], 1.0, -1.0)
            out.append((a, c, rows, y, np.where(y > 0, weight[order[a]], weight[order[c]])))
    return out


def _one_vs_one(data, order, kernel, n_features, params, progress, log):
    """C-SVC: one binary problem per pair of labels, in LIBSVM's order."""
    C = params.resolved_C(data.n_rows)
    pairs = ovo_pairs(data.labels, order, params)
    coef = np.zeros((data.n_rows, max(len(pairs), 1)))
    b = np.zeros(max(len(pairs), 1))
    results = []
    for p, (a, c, rows, y, weight) in enumerate(pairs):
        sub = take_rows(data, rows)
        bound = C * weight
        if log is not None and len(pairs) > 1:
            log(f"class {order[a]:g} vs {order[c]:g}")
        alpha, rho, res = solve_binary(sub, y, bound, kernel, params, pair_progress(progress, p, len(pairs)),
                                       n_features)
        _log_result(log, res)
        coef[rows, p] = y * alpha
        b[p] = -rho
        results.append(res)
    return ovo_model(data, order, coef, b, results, kernel, n_features)


def pair_progress(progress, p, n_pairs):
    """The progress callback of pair ``p`` of ``n_pairs`` (its steps as a share of the whole), or None."""
    if progress is None:
        return None
    return lambda done, total, status=None: progress(p * total + done, n_pairs * total, status)


def ovo_model(data, order, coef, b, results, kernel, n_features):
    """The KernelModel of one-vs-one problems: the rows of ``data`` with a
    nonzero coefficient in some pair (``coef``: rows x pairs) as support
    vectors, intercepts ``b``, each pair's FitResult kept."""
    used = np.flatnonzero(np.any(coef != 0.0, axis=1))
    model = KernelModel(labels=order, SV=support_vectors(data, used, kernel), coef=coef[used], b=b, kernel=kernel,
                        n_features=n_features, solver="smo", decision="ovo" if len(order) > 2 else "ovr")
    model.fit_results = results
    return model
