"""Pegasos: primal estimated sub-gradient solver (Shalev-Shwartz et al. 2007).

Solves  min_w lambda/2 |w|^2 + 1/n sum_i hinge(y_i (w.x_i + b))  with
lambda = params.resolved_lambda(n). ``-B`` adds a regularised constant
feature (the paper's first bias approach), ``-R`` an unregularised bias
moved by its own sub-gradient (the second approach). Every draw comes from
``np.random.default_rng(params.seed)``: the same seed gives the same w,
bit for bit.
"""
import math

import numpy as np

from ..errors import ParameterError
from ._common import primal_objective, row_sqnorms
from ._pegasos_kernels import A, BIAS, B_SUM, N_AVG, pegasos_steps, _flush_average
from .base import FitResult, finish_w, kernel_bias, segment_steps, with_defaults
from ..trace import linear_snapshot

DEFAULTS = {"epochs": 30, "average": True}
AVERAGE_FROM = 0.5   # average the iterates of the last half of the run


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None):
    """Train one binary Pegasos model; see the module docstring.

    Guarantees: the returned w satisfies |w| <= 1/sqrt(lambda); the result
    depends only on (X, y, params), never on global random state.
    """
    if tuple(class_cost) != (1.0, 1.0):
        raise ParameterError("-w (class weights) is not supported by -s pegasos; use -s dcd")
    if params.loss != "hinge":
        raise ParameterError("-s pegasos supports only --loss hinge")
    n = X.n_rows
    lam = params.resolved_lambda(n)
    B = kernel_bias(params)
    k = int(params.batch_size)
    params = with_defaults(params, DEFAULTS)
    epochs = params.epochs
    average = params.average
    steps_per_epoch = max(1, math.ceil(n / k))
    total_steps = steps_per_epoch * epochs
    avg_start = int(total_steps * AVERAGE_FROM) + 1 if average else total_steps + 2

    rng = np.random.default_rng(params.seed)
    y = np.ascontiguousarray(y, np.float64)
    sqnorm = row_sqnorms(X.indptr, X.values, B)
    d1 = n_features + 1
    v = np.zeros(d1)
    acc = np.zeros(d1) if average else np.zeros(1)
    corr = np.zeros(d1) if average else np.zeros(1)
    state = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    viol = np.empty(k, np.int64)

    t = 0
    prev_obj = math.inf
    converged = params.eps is None
    every = segment_steps(monitor, steps_per_epoch)
    for epoch in range(epochs):
        draws = rng.integers(0, n, size=steps_per_epoch * k)
        for lo in range(0, steps_per_epoch, every):
            t += pegasos_steps(X.indptr, X.indices, X.values, y, sqnorm, draws[lo * k:(lo + every) * k], k, t,
                               lam, B, bool(params.unreg_bias), avg_start, v, state, acc, corr, viol)
            if monitor is not None:
                monitor(lambda: linear_snapshot(X, y, *_current(v, state, acc, corr, average and t >= avg_start),
                                                params.bias, lam, t / steps_per_epoch, t))
        if progress is not None:
            progress(epoch + 1, epochs)
        if params.eps is not None:
            w, b = _current(v, state, acc, corr, average and t >= avg_start)
            obj = primal_objective(X, y, w, B, b, lam)
            if log is not None:
                log(f"epoch {epoch + 1}: objective {obj:.6g}")
            if prev_obj - obj <= params.eps * abs(obj):
                converged = True
                break
            prev_obj = obj
    if not converged and log is not None:
        log(f"WARNING: -e {params.eps:g} not reached in {epochs} epochs (raise -T)")
    w, b = _current(v, state, acc, corr, average and t >= avg_start)
    obj = primal_objective(X, y, w, B, b, lam)
    return FitResult(w=finish_w(w, params), b=b, n_iter=t, objective=obj,
                     converged=converged,
                     info={"epochs": epoch + 1, "steps": t, "lambda": lam, "averaged": average})


def _current(v, state, acc, corr, averaged):
    """(w, b) of the run so far: the average of the late iterates, or the last one."""
    if averaged and state[N_AVG] > 0:
        total = acc.copy()
        st = state.copy()
        c = corr.copy()
        _flush_average(v, st, total, c)
        return total / state[N_AVG], state[B_SUM] / state[N_AVG]
    return v * state[A], float(state[BIAS])
