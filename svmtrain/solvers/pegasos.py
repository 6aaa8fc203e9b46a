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

from ..errors import ParameterError
from ._common import primal_objective, row_sqnorms, score_loss_sum
from ._pegasos_kernels import A, BIAS, B_SUM, HINGE, LOSS_CODES, N_AVG, pegasos_steps, _flush_average
from .base import FitResult, finish_w, kernel_bias, segment_steps, with_defaults
from ..trace import linear_snapshot

DEFAULTS = {"epochs": 30, "average": True}
AVERAGE_FROM = 0.5   # average the iterates of the last half of the run


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None):
    """Train one binary Pegasos model; see the module docstring.

    Guarantees: the returned w satisfies |w|^2 <= the radius2 of
    :func:`loss_setup` (1/lambda for the hinge); the result depends only on
    (X, y, params), never on global random state.
    """
    check_params(params, class_cost)
    n = X.n_rows
    lam = params.resolved_lambda(n)
    B = kernel_bias(params)
    params = with_defaults(params, DEFAULTS)
    k, epochs, steps_per_epoch, avg_start = schedule(n, params)
    average = params.average

    rng = np.random.default_rng(params.seed)
    y = np.ascontiguousarray(y, np.float64)
    sqnorm = row_sqnorms(X.indptr, X.values, B)
    v, acc, corr, state, viol, slope = new_state(n_features + 1, average, k)
    loss, p, radius2 = loss_setup(params, y, lam)

    t = 0
    prev_obj = math.inf
    converged = params.eps is None

    def objective(w, b):
        return primal_objective(X, y, w, B, b, lam, params.loss, p)

    every = segment_steps(monitor, steps_per_epoch)
    for epoch in range(epochs):
        draws = rng.integers(0, n, size=steps_per_epoch * k)
        for lo in range(0, steps_per_epoch, every):
            t += pegasos_steps(X.indptr, X.indices, X.values, y, sqnorm, draws[lo * k:(lo + every) * k], k, t,
                               lam, B, bool(params.unreg_bias), avg_start, v, state, acc, corr, viol, slope,
                               loss, p, radius2)
            if monitor is not None:
                monitor(lambda: linear_snapshot(X, y, *_current(v, state, acc, corr, average and t >= avg_start),
                                                params.bias, lam, t / steps_per_epoch, t))
        stop, prev_obj = end_epoch(epoch, progress, params, log, prev_obj, objective,
                                   lambda: _current(v, state, acc, corr, average and t >= avg_start))
        if stop:
            converged = True
            break
    return run_result(v, state, acc, corr, average and t >= avg_start, objective, params, t, epoch,
                      converged, log, {"lambda": lam})


def new_state(d1, average, k):
    """(v, acc, corr, state, viol, slope): the arrays ``pegasos_steps``
    works in, as at the start of a run on d1 weights with mini-batches of k."""
    acc = np.zeros(d1) if average else np.zeros(1)
    corr = np.zeros(d1) if average else np.zeros(1)
    return (np.zeros(d1), acc, corr, np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0]), np.empty(k, np.int64),
            np.empty(k, np.float64))


def loss_setup(params, y, lam):
    """(loss code, tube p, radius2) of ``pegasos_steps`` for ``params.loss``
    on labels or targets y: radius2 = 1/lambda for the hinge (the paper's
    ball), else 2 f(0) / lambda with f(0) the mean loss at w = 0, b = 0
    (lambda/2 |w*|^2 <= f(w*) <= f(0) bounds the optimum)."""
    code = LOSS_CODES[params.loss]
    p = float(params.epsilon) if params.task == "r" else 0.0
    if code == HINGE:
        return code, p, 1.0 / lam
    f0 = score_loss_sum(y, np.zeros(len(y)), params.loss, p) / max(len(y), 1)
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
    """Raise ParameterError for what -s pegasos cannot do (shared with the Dask engine)."""
    if tuple(class_cost) != (1.0, 1.0):
        raise ParameterError("-w (class weights) is not supported by -s pegasos; use -s dcd")


def _current(v, state, acc, corr, averaged):
    """(w, b) of the run so far: the average of the late iterates, or the last one."""
    if averaged and state[N_AVG] > 0:
        total = acc.copy()
        st = state.copy()
        c = corr.copy()
        _flush_average(v, st, total, c)
        return total / state[N_AVG], state[B_SUM] / state[N_AVG]
    return v * state[A], float(state[BIAS])
