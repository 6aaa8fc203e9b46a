"""Pegasos: primal estimated sub-gradient solver (Shalev-Shwartz et al. 2007).

Solves  min_w lambda/2 |w|^2 + 1/n sum_i loss(w.x_i + b; y_i)  with
lambda = params.resolved_lambda(n): the hinge loss of the paper, the
logistic loss (``--loss log``) or, for regression (``--task r``), the
epsilon-insensitive loss or its square (see _pegasos_kernels). ``-B`` adds a regularised constant
feature (the paper's first bias approach), ``-R`` an unregularised bias
moved by its own sub-gradient (the second approach). Every draw comes from
``np.random.default_rng(params.seed)``: the same seed gives the same w,
bit for bit.
"""
import math

import numpy as np

from ...errors import ParameterError
from .._common import loss_terms_sum, primal_objective
from ._pegasos_kernels import A, BIAS, B_SUM, HINGE, LOSS_CODES, N_AVG, pegasos_steps, _flush_average
from ..base import FitResult, finish_w, kernel_bias, segment_steps, with_defaults
from ..snapshots import linear_snapshot

DEFAULTS = {"epochs": 30, "average": True}
PARALLEL_CLASSES = True   # one-vs-rest classes may train in threads (svmtrain.training.class_threads)
AVERAGE_FROM = 0.5   # average the iterates of the last half of the run


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None):
    """Train one binary Pegasos model; see the module docstring.

    Row weights s_i, the product of ``X.weights`` (sample weights) and the
    class weights ``class_cost`` (-w), make the objective
    lambda/2 |w|^2 + 1/n sum_i s_i loss_i: rows are drawn with probability
    s_i / S (S = sum s_i) and the steps use lambda n / S, the same
    minimiser (see :func:`weighted_lambda`). The Dask and streamed runs take
    neither (:func:`check_params`).

    Guarantees: the returned w satisfies |w|^2 <= the radius2 of
    :func:`loss_setup` (1/lambda for the hinge); the result depends only on
    (X, y, params), never on global random state.
    """
    n = X.n_rows
    lam = params.resolved_lambda(n)
    weights = row_weights(X, y, class_cost)
    params = with_defaults(params, DEFAULTS)
    k, epochs, steps_per_epoch, avg_start = schedule(n, params)
    average = params.average

    y = np.ascontiguousarray(y, np.float64)
    run = Run(n_features, params, weighted_lambda(lam, n, weights), y, avg_start, params.seed, weights)
    cdf = None if weights is None else np.cumsum(weights)
    prev_obj = math.inf
    converged = params.eps is None

    def objective(w, b):
        return primal_objective(X, y, w, run.B, b, lam, params.loss, run.p, weights)

    every = segment_steps(monitor, steps_per_epoch)
    for epoch in range(epochs):
        draws = run.draws(n, steps_per_epoch, cdf)
        for lo in range(0, steps_per_epoch, every):
            run.steps(X, y, draws[lo * k:(lo + every) * k])
            if monitor is not None:
                monitor(lambda: linear_snapshot(X, y, *run.current(), params.bias, lam, run.t / steps_per_epoch,
                                                run.t))
        stop, prev_obj = end_epoch(epoch, progress, params, log, prev_obj, objective, run.current)
        if stop:
            converged = True
            break
    return run_result(run.v, run.state, run.acc, run.corr, average and run.averaged, objective, params, run.t,
                      epoch, converged, log, {"lambda": lam})


class Run:
    """A Pegasos run that can go on: the kernel's arrays, the steps made so
    far (``t``; step t moves by 1/(lambda t)) and the random stream of the
    draws. :func:`fit` runs one to its end; the scikit-learn estimators'
    ``partial_fit`` keeps one per binary problem between calls, so that E
    calls on the same rows make the iterates of ``fit`` with ``-T E`` and
    no averaging, bit for bit. The iterates from step ``avg_start`` on are
    averaged (none when it lies beyond the run).

    ``lam``: the lambda of the steps (:func:`weighted_lambda`); ``y`` and
    ``weights`` the labels or targets and row weights that set the
    projection radius (:func:`loss_setup`).
    """

    def __init__(self, n_features, params, lam, y, avg_start, seed, weights=None):
        self.k = int(params.batch_size)
        self.lam = lam
        self.B = kernel_bias(params)
        self.unreg_bias = bool(params.unreg_bias)
        self.loss, self.p, self.radius2 = loss_setup(params, y, lam, weights)
        self.avg_start = int(avg_start)
        self.v, self.acc, self.corr, self.state, self.viol, self.slope = new_state(
            n_features + 1, bool(params.average), self.k)
        self.t = 0
        self.rng = np.random.default_rng(seed)

    def draws(self, n, steps, cdf=None):
        """Row indices of ``steps`` steps over n rows, drawn i.i.d.: uniform,
        or row i with probability (cdf[i] - cdf[i-1]) / cdf[-1] (``cdf``
        the cumulative row weights)."""
        size = steps * self.k
        if cdf is None:
            return self.rng.integers(0, n, size=size)
        return np.minimum(np.searchsorted(cdf, self.rng.random(size) * cdf[-1], side="right"), n - 1)

    def steps(self, X, y, draws):
        """The steps of ``draws`` (len(draws) // k of them) on the rows of X."""
        self.t += pegasos_steps(X.indptr, X.indices, X.values, y, draws, self.k, self.t, self.lam, self.B,
                                self.unreg_bias, self.avg_start, self.v, self.state, self.acc, self.corr, self.viol,
                                self.slope, self.loss, self.p, self.radius2)

    @property
    def averaged(self):
        """True once the run averages its iterates."""
        return self.t >= self.avg_start

    def current(self):
        """(w, b) so far: the average of the averaged iterates, or the last one."""
        return _current(self.v, self.state, self.acc, self.corr, self.averaged)


def row_weights(X, y, class_cost):
    """Each row's weight: its sample weight (``X.weights``) times its class's
    (-w: class_cost[0] for y > 0, class_cost[1] else); None when it has neither."""
    weights = getattr(X, "weights", None)
    if tuple(class_cost) != (1.0, 1.0):
        cost = np.where(np.asarray(y) > 0, float(class_cost[0]), float(class_cost[1]))
        weights = cost if weights is None else weights * cost
    return weights


def weighted_lambda(lam, n, weights):
    """The lambda of steps on rows drawn with probability s_i / S (S = sum
    of the n row weights): lambda/2 |w|^2 + 1/n sum_i s_i loss_i is S/n times
    (lambda n/S)/2 |w|^2 + sum_i (s_i/S) loss_i, the same minimiser. lambda
    itself without weights."""
    return lam if weights is None else lam * n / float(np.sum(weights))


def new_state(d1, average, k):
    """(v, acc, corr, state, viol, slope): the arrays ``pegasos_steps``
    works in, as at the start of a run on d1 weights with mini-batches of k."""
    acc = np.zeros(d1) if average else np.zeros(1)
    corr = np.zeros(d1) if average else np.zeros(1)
    return (np.zeros(d1), acc, corr, np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0]), np.empty(k, np.int64),
            np.empty(k, np.float64))


def loss_setup(params, y, lam, weights=None):
    """(loss code, tube p, radius2) of ``pegasos_steps`` for ``params.loss``
    on labels or targets y: radius2 = 1/lambda for the hinge (the paper's
    ball), else 2 f(0) / lambda with f(0) the mean loss at w = 0, b = 0
    (weighted by ``weights`` when given; lambda/2 |w*|^2 <= f(w*) <= f(0)
    bounds the optimum)."""
    code = LOSS_CODES[params.loss]
    p = float(params.epsilon) if params.task == "r" else 0.0
    if code == HINGE:
        return code, p, 1.0 / lam
    total = len(y) if weights is None else float(np.sum(weights))
    f0 = loss_terms_sum(y, np.zeros(len(y)), params.loss, p, weights) / max(total, 1e-300)
    return code, p, max(2.0 * f0, 1e-300) / lam


def end_epoch(epoch, progress, params, log, prev_obj, objective, current):
    """After epoch ``epoch`` (from 0): report progress and, with -e, check
    the objective of ``current()``'s (w, b). Returns (stop, the objective
    to compare the next epoch's with)."""
    if params.eps is None:
        if progress is not None:
            progress(epoch + 1, params.epochs)
        return False, prev_obj
    stop, obj = epoch_check(objective(*current()), prev_obj, epoch, params.eps, log)
    if progress is not None:
        progress(epoch + 1, params.epochs, f"objective {obj:.6g}")
    return stop, obj


def run_result(v, state, acc, corr, averaged, objective, params, t, epoch, converged, log, info):
    """The FitResult of a run that made ``t`` steps and ended after epoch
    ``epoch`` (from 0): the averaged or last iterate, its ``objective(w, b)``;
    logs the warning of a -e not reached. ``info`` is completed."""
    if not converged and log is not None:
        log(f"WARNING: -e {params.eps:g} not reached in {params.epochs} epochs (raise -T)")
    w, b = _current(v, state, acc, corr, averaged)
    info.update({"epochs": epoch + 1, "steps": t, "averaged": params.average})
    return FitResult(w=finish_w(w, params), b=b, n_iter=t, objective=objective(w, b),
                     converged=converged, info=info)


def schedule(n, params):
    """(k, epochs, steps per epoch, first averaged step) of a run on n rows
    (``params`` with DEFAULTS applied). Each epoch draws steps_per_epoch * k
    rows i.i.d.; step t (from 1) averages its iterate when t >= the first
    averaged step."""
    k = int(params.batch_size)
    steps_per_epoch = max(1, math.ceil(n / k))
    total_steps = steps_per_epoch * params.epochs
    avg_start = int(total_steps * AVERAGE_FROM) + 1 if params.average else total_steps + 2
    return k, params.epochs, steps_per_epoch, avg_start


def epoch_check(obj, prev_obj, epoch, eps, log):
    """-e: (stop, obj) after an epoch that ended at objective ``obj``; stop
    when it improved on ``prev_obj`` by at most eps relative."""
    if log is not None:
        log(f"epoch {epoch + 1}: objective {obj:.6g}")
    return prev_obj - obj <= eps * abs(obj), obj


def check_params(params, class_cost):
    """Raise ParameterError for what the streamed and Dask Pegasos cannot do (class weights)."""
    if tuple(class_cost) != (1.0, 1.0):
        raise ParameterError("-w (class weights) is not supported by -s pegasos with --stream or --engine dask; "
                             "use it in memory, or -s dcd")


def _current(v, state, acc, corr, averaged):
    """(w, b) of the run so far: the average of the late iterates, or the last one."""
    if averaged and state[N_AVG] > 0:
        total = acc.copy()
        st = state.copy()
        c = corr.copy()
        _flush_average(v, st, total, c)
        return total / state[N_AVG], state[B_SUM] / state[N_AVG]
    return v * state[A], float(state[BIAS])
