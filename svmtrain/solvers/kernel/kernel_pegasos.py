"""-s pegasos -t 1|2|3: Pegasos with a Mercer kernel (Shalev-Shwartz et al. 2007, section 4).

Solves  min_w lambda/2 |w|^2 + 1/n sum_i hinge(y_i (<w, Phi(x_i)> + b))  with
lambda = params.resolved_lambda(n): the same steps as the linear solver
(eta_t = 1/(lambda t), mini-batches of -k draws, projection onto
|w| <= 1/sqrt(lambda), -R for an unregularised bias, --average for the mean
of the iterates of the last half of the run), with w kept as coefficients
over the training rows and every response kept up to date, one kernel row
per violator (``_kernel_pegasos_kernels.py``). This is the baseline of the
SBP paper's Figure 2. Kernel rows come from the shared LRU cache (-m MB).
Every draw comes from ``np.random.default_rng(params.seed)``.
"""
import math

import numpy as np

from ...errors import ParameterError
from ...mercer.cache import KernelCache
from ...models.kernel import expansion_model
from ...mercer.functions import Kernel
from . import _kernel_pegasos_kernels as K
from ..base import FitResult, for_problem, segment_steps, split_progress
from .sbp import threads

DEFAULTS = {"kernel_type": 2, "epochs": 10, "average": True, "threads": 1}
AVERAGE_FROM = 0.5   # average the iterates of the last half of the run


def train_model(data, order, problems, n_features, params, progress=None, log=None, monitor=None):
    """One kernel Pegasos run per binary problem over a shared kernel cache; returns a KernelModel."""
    if params.task != "c" or params.loss != "hinge":
        raise ParameterError(f"-s pegasos with a kernel (-t {params.kernel_type}) trains hinge-loss classification; "
                             "-s asset --inner dcd trains the other tasks and losses with a kernel")
    for _, cost in problems:
        if tuple(cost) != (1.0, 1.0):
            raise ParameterError("-w (class weights) is not supported by -s pegasos; -s asset trains a kernel model with -w")
    if params.bias >= 0:
        raise ParameterError("-B is not supported with a kernel (-t 1|2|3); use -R for a bias")
    with threads(params):
        kernel = Kernel(params.kernel_type, params.gamma, params.degree, params.coef0).resolved(n_features)
        k = int(params.batch_size)
        cache = KernelCache(data, kernel, params.cache_mb, max_batch=k, n_features=n_features)
        rng = np.random.default_rng(params.seed)
        results, coefs = [], []
        for c, (y, _) in enumerate(problems):
            if log is not None and len(problems) > 1:
                log(f"class {order[c]:g} vs rest")
            report = None
            if progress is not None:
                report = split_progress(progress, c, len(problems))
            mon = for_problem(monitor, c)
            res = _fit(np.ascontiguousarray(y, np.float64), cache, params, rng, report, log, mon)
            results.append(res)
            coefs.append(res.w)
        model = expansion_model(data, order, coefs, results, kernel, n_features, "pegasos")
        if log is not None:
            log(f"kernel rows: {cache.misses} computed, {cache.hits} from the cache ({cache.slots} slots)")
        return model


def _fit(y, cache, params, rng, progress, log, monitor=None):
    n = len(y)
    lam = params.resolved_lambda(n)
    k = int(params.batch_size)
    epochs = int(params.epochs)
    steps_per_epoch = max(1, math.ceil(n / k))
    total = steps_per_epoch * epochs
    avg_start = int(total * AVERAGE_FROM) + 1 if params.average else total + 2
    v, r, acc_v = np.zeros(n), np.zeros(n), np.zeros(n)
    beta, rbeta, acc_beta = np.zeros(n), np.zeros(n), np.zeros(n)
    state = np.zeros(K.STATE_SIZE)
    state[K.S_SCALE] = 1.0
    args = cache.args()
    t = 0
    rows = 0
    prev_obj = math.inf
    converged = params.eps is None
    every = segment_steps(monitor, steps_per_epoch)
    for epoch in range(epochs):
        draws = rng.integers(0, n, size=(steps_per_epoch, k))
        for lo in range(0, steps_per_epoch, every):
            part = draws[lo:lo + every]
            rows += K.kpegasos_steps(part, t, lam, bool(params.unreg_bias), avg_start, K.FOLD_BELOW, y, v, beta, r,
                                     rbeta, acc_v, acc_beta, state, *args)
            t += len(part)
            if monitor is not None:
                monitor(lambda: _snapshot(_current(v, beta, r, rbeta, acc_v, acc_beta, state,
                                                   params.average and state[K.S_NAVG] > 0),
                                          y, cache, lam, t / steps_per_epoch, t, rows))
        # re-derive |w|^2 exactly once per epoch (the loop tracks it incrementally)
        state[K.S_NORM2] = K.norm2_from_responses(beta, v, state[K.S_SCALE])
        if progress is not None:
            progress(epoch + 1, epochs)
        if params.eps is not None or log is not None:
            obj = _objective(*_current(v, beta, r, rbeta, acc_v, acc_beta, state, False), y, lam)
            if log is not None:
                log(f"epoch {epoch + 1}: objective {obj:.6g}, kernel rows {rows}")
            if params.eps is not None:
                if prev_obj - obj <= params.eps * abs(obj):
                    converged = True
                    break
                prev_obj = obj
    c, coef, b = _current(v, beta, r, rbeta, acc_v, acc_beta, state, params.average and state[K.S_NAVG] > 0)
    obj = _objective(c, coef, b, y, lam)
    return FitResult(w=coef, b=b, n_iter=t, objective=obj, converged=converged,
                     info={"epochs": epoch + 1, "steps": t, "lambda": lam, "kernel_rows": rows,
                           "n_sv": int(np.count_nonzero(coef))})


def _current(v, beta, r, rbeta, acc_v, acc_beta, state, averaged):
    """(responses <w, Phi(x_i)>, coefficients of w, b): the average of the late iterates, or the last one."""
    if averaged:
        m = state[K.S_NAVG]
        om = state[K.S_OMEGA]
        return (acc_v + om * v - r) / m, (acc_beta + om * beta - rbeta) / m, float(state[K.S_BSUM] / m)
    s = state[K.S_SCALE]
    return s * v, s * beta, float(state[K.S_BIAS])


def _snapshot(current, y, cache, lam, epochs, steps, rows):
    """The trace's Snapshot of the model (responses, coefficients, b) = ``current``."""
    from ..snapshots import kernel_snapshot
    c, coef, b = current
    return kernel_snapshot(cache.X, cache.kernel, coef, b, y, c + b, max(float(coef @ c), 0.0), lam, epochs, steps,
                           rows * len(y))


def _objective(c, coef, b, y, lam):
    """lambda/2 |w|^2 + mean hinge, from the responses (|w|^2 = sum_j coef_j <w, Phi_j>)."""
    norm2 = max(float(coef @ c), 0.0)
    return 0.5 * lam * norm2 + float(np.maximum(0.0, 1.0 - y * (c + b)).mean())
