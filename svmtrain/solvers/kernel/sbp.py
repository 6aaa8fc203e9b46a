"""-s sbp: the kernelized Stochastic Batch Perceptron (Cotter, Shalev-Shwartz, Srebro, ICML 2012).

SBP solves the slack-constrained SVM (paper eq. 2.3): maximise the margin
gamma by which every example is classified, |w| <= 1, after a total slack
of n nu. Each step finds the water level of the responses c_i = y_i <w, x_i>
(expected O(n) selection, no sort), draws points uniformly among those
under water, adds them to w with step 1/sqrt(t max_i K_ii), updates every
response with one kernel row per drawn point (eq. 3.4) and projects onto
|w| <= 1 (|w|^2 = sum alpha_i c_i). The model is the running average of
the iterates, rescaled by the water level of its responses so that its
margin is 1 (Lemma 2.1). The numba kernels are in ``_sbp_kernels.py``;
kernel rows come from an LRU :class:`svmtrain.mercer.cache.KernelCache` of
``-m`` MB shared by all the one-vs-rest problems.

Choices beyond the paper, each for speed or accuracy on real data:

* bias: SBP learns an unregularised bias by default (the two-basin water
  filling of section 3.6, one positive and one negative point per draw):
  without it the near-constant part of an RBF kernel must be cancelled by
  the expansion itself and convergence is an order of magnitude slower
  (a9a: 81 % test accuracy after half an epoch without, 85 % after a tenth
  of an epoch with). See :func:`uses_bias`.
* mini-batches: a step draws B points per basin (:func:`batch_size`: 1 on
  small sets, up to ``BATCH`` = 16 from n = 32768 on) and moves by the mean
  of their gradients, an unbiased estimate of the same supergradient; the
  kernel rows of a batch are computed together (cheaper per row) and the
  O(n) water level is shared by more rows.
* averaging: iterate t has weight t (``AVG_POWER``), so early, poor
  iterates fade from the average.
* nu: ``--nu`` sets it; otherwise it is derived from C (or lambda) as in
  the paper's section 5, nu = (mean hinge loss of w*) / |w*| for the
  regularised problem, from a pilot (:func:`pilot_nu`): the exact solution
  (SMO) of the regularised problem with the same C on all rows when
  n <= ``PILOT_ROWS``, else on a random subsample of PILOT_ROWS rows and on
  its first half, extrapolated to n along the learning curve nu(m) ~
  m**slope. On a9a (C = 100, gamma = 0.01) this gives 0.8e-3 to 1.3e-3
  (the full solution's nu is 1.1e-3); the test accuracy of SBP moves by
  less than 0.2 points for nu within a factor 2 either way.

Stopping (all counts in kernel rows used by the steps, whether computed or
read from the cache, so -m never changes the result): ``-T`` epochs caps
the run at T n rows (without -T: max(10 n, 4 ``min_rows(n)``)). At checks
25 % of the rows apart, the run stops once ``min_rows(n)`` rows are done
(8192, or 5e7 kernel values on small sets) and fewer than ``-e`` (default
0.01) times n training predictions of the averaged model changed since
the previous check. With ``--holdout F`` a random fraction F of the rows
is set aside instead, and the run stops when their error has not improved
for ``PATIENCE`` checks (the best average is kept).
"""
import contextlib
import math

import numba
import numpy as np

from ...data.dataset import take_rows
from ...errors import ParameterError
from ...mercer.cache import KernelCache
from ...models.kernel import KernelModel
from ...mercer.functions import Kernel, kernel_matrix, sq_norms
from . import _sbp_kernels as K
from ..base import FitResult, for_problem, split_progress

DEFAULTS = {"kernel_type": 2, "eps": 0.01, "threads": 1}
BATCH = 16              # most points per basin and step (see batch_size)
AVG_POWER = 1.0         # iterate t has weight t**AVG_POWER in the average
PILOT_ROWS = 2000       # subsample of the nu pilot
PILOT_EPS = 1e-3        # the pilot SMO's tolerance (LIBSVM's default)
AUTO_EPOCHS = 10        # without -T: at most max(AUTO_EPOCHS n, 4 min_rows(n)) kernel rows
MIN_ROWS = 8192         # no early stop before max(MIN_ROWS, MIN_EVALS / n) kernel rows:
MIN_EVALS = 5 * 10**7    # steps are cheap on small sets, and SGD needs many of them
FIRST_CHECK_ROWS = 1024  # checks (stopping tests, log lines) at 1024 rows, then 25 % further each time
CHECK_GROWTH = 1.25
PATIENCE = 3            # holdout checks without improvement before stopping


def uses_bias(params):
    """Whether SBP learns the unregularised bias (the two-basin water filling):
    yes unless ``--no-bias`` (``unreg_bias=False``)."""
    return params.unreg_bias is not False


def train_model(data, order, problems, n_features, params, progress=None, log=None, monitor=None):
    """One SBP run per binary problem over a shared kernel cache; returns a KernelModel."""
    with threads(params):
        return _train_model(data, order, problems, n_features, params, progress, log, monitor)


@contextlib.contextmanager
def threads(params):
    """numba threads = --threads (all cores when not given) for the duration of the block."""
    old = numba.get_num_threads()
    want = params.threads or numba.config.NUMBA_NUM_THREADS
    numba.set_num_threads(max(1, min(int(want), numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(old)


def _train_model(data, order, problems, n_features, params, progress, log, monitor=None):
    _check(problems, params)
    kernel = Kernel(params.kernel_type, params.gamma, params.degree, params.coef0).resolved(n_features)
    bias = uses_bias(params)
    rng = np.random.default_rng(params.seed)
    X, rows, n = _holdout_split(data, params, rng)
    L = 2 * batch_size(n) if bias else batch_size(n)
    cache = KernelCache(X, kernel, params.cache_mb, max_batch=L, n_features=n_features)
    max_kii = _max_diagonal(kernel, cache.sq[:n])

    results, alphas, nus = [], [], []
    for c, (y_full, _) in enumerate(problems):
        y = np.ascontiguousarray(y_full[rows], np.float64)
        if log is not None and len(problems) > 1:
            log(f"class {order[c]:g} vs rest")
        report = None
        if progress is not None:
            report = split_progress(progress, c, len(problems))
        if np.all(y[:n] > 0) or np.all(y[:n] < 0):
            # one class only: a constant decision
            sign = 1.0 if y[0] > 0 else -1.0
            results.append(FitResult(w=np.zeros(n), b=sign, n_iter=0, objective=0.0, converged=True,
                                     info={"n_sv": 0, "nu": float("nan")}))
            alphas.append(np.zeros(n))
            nus.append(float("nan"))
            continue
        nu = params.nu if params.nu is not None else pilot_nu(X, y[:n], kernel, params, bias, rng, log)
        mon = for_problem(monitor, c)
        res, alpha = _fit(X, y, n, kernel, cache, nu, bias, max_kii, params, rng, report, log, mon)
        results.append(res)
        alphas.append(alpha)
        nus.append(nu)
    # the model: support vectors are the training rows with a nonzero coefficient in any problem
    A = np.stack(alphas, axis=1)
    used = np.flatnonzero(np.any(A != 0.0, axis=1))
    SV = take_rows(X, used)
    model = KernelModel(labels=order, SV=SV, coef=A[used], b=np.array([r.b for r in results]),
                        kernel=kernel, n_features=n_features, solver="sbp", nu_used=nus)
    model.fit_results = results
    if log is not None:
        log(f"kernel rows: {cache.misses} computed, {cache.hits} from the cache ({cache.slots} slots)")
    return model


def _check(problems, params):
    """Raises ParameterError for what -s sbp does not do (-w, -B)."""
    for _, cost in problems:
        if tuple(cost) != (1.0, 1.0):
            raise ParameterError("-w (class weights) is not supported by -s sbp; -s asset trains a kernel model with -w")
    if params.bias >= 0:
        raise ParameterError("-B is not supported by -s sbp: it learns an unregularised bias "
                             "(--no-bias turns it off)")


def _holdout_split(data, params, rng):
    """(X, rows, n): ``data``'s rows reordered, the n training rows first, then the --holdout rows."""
    n_all = data.n_rows
    if params.holdout is not None:
        n_hold = int(round(params.holdout * n_all))
        if n_hold < 1 or n_hold >= n_all:
            raise ParameterError(f"--holdout {params.holdout}: leaves no held-out or no training rows "
                                 f"of {n_all}")
        perm = rng.permutation(n_all)
        rows = np.concatenate([np.sort(perm[n_hold:]), np.sort(perm[:n_hold])])
        X = take_rows(data, rows)
    else:
        n_hold = 0
        rows = np.arange(n_all)
        X = data
    return X, rows, n_all - n_hold


def _max_diagonal(kernel, sq):
    """max_i |K(x_i, x_i)| (the scale of the step size), from the squared norms."""
    if len(sq) == 0:
        return 1.0
    code, gamma, degree, coef0 = kernel.params()
    if code == 0:
        diag = sq
    elif code == 1:
        diag = (gamma * sq + coef0) ** degree
    elif code == 3:
        diag = np.tanh(gamma * sq + coef0)
    else:
        diag = np.ones(1)
    return max(float(np.abs(diag).max()), 1e-12)


def batch_size(n):
    """Points per basin and step: 1 for small sets (steps are cheap, more of them help most),
    up to BATCH when n >= BATCH * 2048 (a batch of rows costs less per row, and the O(n)
    water level is shared by more rows)."""
    return int(min(BATCH, max(1, n // 2048)))


def min_rows(n):
    """No early stop before this many kernel rows: MIN_ROWS, or MIN_EVALS / n kernel values on small sets."""
    return int(max(MIN_ROWS, MIN_EVALS // max(n, 1)))


def row_budget(params, n):
    """Kernel rows a run may use: -T epochs, or max(AUTO_EPOCHS n, 4 min_rows(n)) when not given."""
    if params.epochs is not None:
        return int(math.ceil(params.epochs * n))
    return int(max(AUTO_EPOCHS * n, 4 * min_rows(n)))


def _fit(X, y, n, kernel, cache, nu, bias, max_kii, params, rng, progress, log, monitor=None):
    """One binary SBP run; returns (FitResult, coefficients over the n training rows, y folded in)."""
    n_all = X.n_rows
    B = batch_size(n)
    L = 2 * B if bias else B
    volume = n * nu
    it = _zero_iterate(n_all, n)
    v, r, acc_c, a, ra, acc_a, state = it
    idx = _basins(y[:n])
    rs = np.array([rng.integers(1, 2**63 - 1)], dtype=np.uint64)
    budget = row_budget(params, n)
    eps = params.eps if params.eps is not None else DEFAULTS["eps"]
    cache_args = cache.args()
    no_trace = np.empty((0, L), np.int64)
    holdout = _Patience() if n_all > n else None
    c_avg = np.empty(n_all)
    prev_sign = None
    stopped = False
    while state[K.S_ROWS] < budget and not stopped:
        # checks at geometrically growing row counts
        target = min(budget, max(FIRST_CHECK_ROWS, int(state[K.S_ROWS] * CHECK_GROWTH), state[K.S_ROWS] + L))
        while state[K.S_ROWS] < target:
            steps = max(1, int((target - state[K.S_ROWS]) // L) + 1)
            uniforms = rng.random((steps, L))
            K.sbp_steps(steps, target, bias, B, volume, 1.0, max_kii, AVG_POWER, K.FOLD_BELOW, y, v, r, acc_c,
                        a, ra, acc_a, state, *idx, uniforms, rs, no_trace, *cache_args)
        if progress is not None:
            progress(min(int(state[K.S_ROWS]), budget), budget)
        K.averaged(v, r, acc_c, state[K.S_OMEGA], state[K.S_WEIGHT], c_avg)
        b, gam, k = _level(c_avg[:n], *idx, volume, bias, rs)
        sign = c_avg[:n] + y[:n] * b > 0
        flips = int(np.count_nonzero(sign != prev_sign)) if prev_sign is not None else n
        prev_sign = sign
        settled = state[K.S_ROWS] >= min(min_rows(n), budget)
        msg = (f"rows/n {state[K.S_ROWS] / n:.3f} steps {int(state[K.S_STEP])} averaged margin {gam:.6g} "
               f"submerged {k} training errors {n - int(sign.sum())} changed {flips}")
        if holdout is not None:
            err = int(np.count_nonzero(c_avg[n:] + y[n:] * b <= 0))
            msg += f" held-out errors {err}/{n_all - n}"
            worn = holdout.worn_out(err, it)
            stopped = settled and worn
        else:
            stopped = settled and flips < eps * n
        if log is not None:
            log(msg)
        if monitor is not None:
            monitor(lambda: _snapshot(X, y[:n], kernel, state, a, ra, acc_a, c_avg[:n], b, gam, params, n_all))
    if holdout is not None and holdout.best is not None:
        it = holdout.best
    return _final(it, c_avg, y[:n], idx, volume, bias, rs, stopped, params, log, nu, B)


def _zero_iterate(n_all, n):
    """(v, r, acc_c, a, ra, acc_a, state) of sbp_steps at w = 0, scale 1."""
    v, r, acc_c = np.zeros(n_all), np.zeros(n_all), np.zeros(n_all)
    a, ra, acc_a = np.zeros(n), np.zeros(n), np.zeros(n)
    state = np.zeros(K.STATE_SIZE)
    state[K.S_SCALE] = 1.0
    return v, r, acc_c, a, ra, acc_a, state


def _basins(y):
    """(all, positive, negative) row indices (int64) of the training labels ``y``."""
    idx_all = np.arange(len(y), dtype=np.int64)
    idx_pos = np.flatnonzero(y > 0).astype(np.int64)
    idx_neg = np.flatnonzero(y < 0).astype(np.int64)
    return idx_all, idx_pos, idx_neg


class _Patience:
    """The --holdout rule's memory: fewest held-out errors, a copy of that iterate, the checks since."""

    def __init__(self):
        self.best_err, self.best, self.since_best = math.inf, None, 0

    def worn_out(self, err, it):
        """Whether PATIENCE checks passed without beating the best; keeps a copy of ``it`` when it is beaten."""
        if err < self.best_err:
            self.best_err, self.since_best = err, 0
            self.best = [x.copy() for x in it]
        else:
            self.since_best += 1
        return self.since_best >= PATIENCE


def _final(it, c_avg, y, idx, volume, bias, rs, stopped, params, log, nu, B):
    """(FitResult, coefficients): the averaged iterate rescaled to margin 1 (not when <= 0: logged)."""
    v, r, acc_c, a, ra, acc_a, state = it
    n = len(y)
    K.averaged(v, r, acc_c, state[K.S_OMEGA], state[K.S_WEIGHT], c_avg)
    alpha = np.empty(n)
    K.averaged(a, ra, acc_a, state[K.S_OMEGA], state[K.S_WEIGHT], alpha)
    b, gam, k = _level(c_avg[:n], *idx, volume, bias, rs)
    converged = stopped
    scale = 1.0 / gam if gam > 0 else 1.0
    if not gam > 0:
        converged = False
        if log is not None:
            log(f"WARNING: the averaged margin is {gam:.3g} <= 0; the model is not rescaled")
    coef, margins, b, norm2 = _scaled(alpha, c_avg[:n], y, b, scale)
    hinge = np.maximum(0.0, 1.0 - margins)
    objective = 0.5 * params.resolved_lambda(n) * norm2 + float(hinge.mean())
    info = {"nu": nu, "n_sv": int(np.count_nonzero(alpha)), "margin": gam, "rows": int(state[K.S_ROWS]),
            "steps": int(state[K.S_STEP]), "submerged": k, "batch": B}
    return FitResult(w=coef, b=float(b), n_iter=int(state[K.S_STEP]), objective=objective,
                     converged=converged, info=info), coef


def _scaled(alpha, c, y, b, scale):
    """(coefficients, margins y_i f(x_i), b, |w|^2) of the averaged iterate rescaled by ``scale``."""
    return alpha * y * scale, (c + y * b) * scale, b * scale, max(float(alpha @ c), 0.0) * scale * scale


def _snapshot(X, y, kernel, state, a, ra, acc_a, c, b, gam, params, n_all):
    """The trace's Snapshot of the model a stop at this check would give (the rescaled average)."""
    from ..snapshots import kernel_snapshot
    n = len(y)
    alpha = np.empty(n)
    K.averaged(a, ra, acc_a, state[K.S_OMEGA], state[K.S_WEIGHT], alpha)
    coef, margins, b, norm2 = _scaled(alpha, c, y, b, 1.0 / gam if gam > 0 else 1.0)
    return kernel_snapshot(X, kernel, coef, b, y, y * margins, norm2, params.resolved_lambda(n),
                           state[K.S_ROWS] / n, int(state[K.S_STEP]), int(state[K.S_ROWS]) * n_all)


def _level(c, idx_all, idx_pos, idx_neg, volume, bias, rs):
    """(b, gamma, k) of the water level of responses c (the bias is 0 without one)."""
    if bias:
        ip, ineg = idx_pos.copy(), idx_neg.copy()
        k, level_sum = K.water_level_bias(c, ip, ineg, volume, rs)
        b, gam = K.bias_from_level(c, ip, ineg, k, level_sum)
        return b, gam, k
    ia = idx_all.copy()
    k, level = K.water_level(c, ia, volume, rs)
    return 0.0, level, k


def pilot_nu(X, y, kernel, params, bias, rng, log=None):
    """nu = mean hinge / |w| of the regularised solution with the same C (paper section 5), from a pilot.

    n <= PILOT_ROWS: the exact solution on all rows. Otherwise the pilot
    solves the problem with the same C on a random subsample of m =
    PILOT_ROWS rows and on its first half, and extrapolates the learning
    curve nu(m) ~ m**slope to n, with slope clamped to [-1, 0]: with C
    fixed, nu falls as the data grow (more loss to balance the same
    margin), but the total slack n nu does not shrink.
    """
    n = len(y)
    C = params.resolved_C(n)
    m = min(n, PILOT_ROWS)
    perm = rng.permutation(n)
    if bias:
        # both classes in each half: move a row of the class a half lacks to its front
        for half in (m // 2, m):
            part = y[perm[:half]]
            if half >= 2 and (np.all(part > 0) or np.all(part < 0)):
                other = np.flatnonzero(y[perm] != part[0])[0]
                perm[[0, other]] = perm[[other, 0]]
    nu_m, info = _pilot_on(X, y, perm[:m], kernel, C, bias)
    nu = nu_m
    detail = f"C = {C:.6g} on {m} rows: nu {nu_m:.6g}, {info}"
    if m < n and m >= 4:
        nu_half, _ = _pilot_on(X, y, perm[:m // 2], kernel, C, bias)
        slope = 0.0
        if nu_m > 0 and nu_half > 0:
            slope = min(0.0, max(-1.0, math.log(nu_m / nu_half) / math.log(m / (m // 2))))
        nu = nu_m * (n / m) ** slope
        detail += f"; on {m // 2} rows: nu {nu_half:.6g}; extrapolated to {n} rows with slope {slope:.3f}"
    nu = max(nu, 1e-12)
    if log is not None:
        log(f"nu = {nu:.6g} (pilot: {detail})")
    return nu


def _pilot_on(X, y, rows, kernel, C, bias):
    """(hinge / |w|, a description) of the exact regularised solution on ``rows``."""
    rows = np.sort(rows)
    ys = np.ascontiguousarray(y[rows], np.float64)
    S = take_rows(X, rows)
    sq = sq_norms(S.indptr, S.values)
    Kmm = kernel_matrix(kernel, S, sq, S, sq)
    m = len(rows)
    alpha = np.empty(m)
    grad = np.empty(m)
    two_classes = bias and np.any(ys > 0) and np.any(ys < 0)
    n_iter, rho = K.pilot_smo(Kmm, ys, C, two_classes, PILOT_EPS, max(100000, 100 * m), alpha, grad)
    s = Kmm @ (alpha * ys)
    norm = math.sqrt(max(float((alpha * ys) @ s), 0.0))
    hinge = float(np.maximum(0.0, 1.0 - ys * (s - rho)).mean())
    nu = hinge / norm if norm > 0 else 1.0
    return nu, f"{n_iter} SMO iterations, |w| = {norm:.6g}, mean hinge {hinge:.6g}"
