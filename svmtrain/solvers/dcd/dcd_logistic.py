"""``-s dcd --loss log``: L2-regularised logistic regression by dual coordinate descent.

Solves the C-form primal

    min_w  1/2 |w|^2 + sum_i C_i log(1 + exp(-y_i w.x_i))

(LIBLINEAR's -s 7, whose -s 0 reaches the same optimum by a primal Newton
method), C_i = C times the class weight of y_i (-w), -B LIBLINEAR's
regularised constant feature. The optimisation is one numba kernel
(``_lr_kernels.lr_run``, Yu, Huang and Lin 2011); this module prepares its
arrays, runs it and reports.
"""
import math

import numpy as np

from ...errors import ParameterError
from . import _dcd_logistic_kernels as K
from .._common import margins, row_sqnorms, sq_norm, start_w
from ..base import FitResult, csr_arrays, drive, finish_w, kernel_bias, warn_max_iter
from .dcd import DEFAULT_EPS, check_params

INNER_EPS_START = 1e-2


WARM_START = True      # fit takes warm_start (see svmtrain.solvers.dcd.dcd.fit)
PARALLEL_CLASSES = True   # one-vs-rest classes may train in threads (svmtrain.training.class_threads)


def newton_path_eps(params):
    """-C: the path solves each fold and C by tron's primal Newton method
    (LIBLINEAR's -s 0 solver) at a tenth of dcd's -e (as
    :func:`svmtrain.solvers.dcd.dcd.newton_path_eps`)."""
    return 0.1 * (DEFAULT_EPS if params.eps is None else float(params.eps))


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None,
        warm_start=None):
    """Train one binary problem (y in {+1, -1}); see the module docstring.
    ``warm_start`` as :func:`svmtrain.solvers.dcd.dcd.fit`'s (the dual alpha,
    kept strictly inside (0, C_i) as the logistic dual needs).

    FitResult: ``w`` (n_features, + 1 with -B), ``objective`` (the
    lambda-form primal, lambda/2 |w|^2 + (1/n) sum_i cost_i log-loss_i),
    ``n_iter``, ``converged``, and ``info`` with ``primal_C_form``,
    ``dual_objective`` (to be minimised; -primal at the optimum) and
    ``n_sv`` (every row: the dual variables of logistic regression are never 0).
    """
    if monitor is not None:
        raise ParameterError("--trace does not trace --loss log yet")
    eps, max_iter = check_params(params, class_cost)
    indptr, indices, values = csr_arrays(X, int(n_features))
    y = np.ascontiguousarray(y, np.float64)
    n = X.n_rows
    if y.shape != (n,) or (n and not np.all((y == 1.0) | (y == -1.0))):
        raise ParameterError("dcd needs labels y in {+1, -1}")
    C = params.resolved_C(n)
    upper = np.where(y > 0, C * float(class_cost[0]), C * float(class_cost[1]))
    B = kernel_bias(params)

    alpha = np.empty((n, 2), np.float64)
    alpha[:, 0] = np.minimum(0.001 * upper, 1e-8)       # LIBLINEAR's start: every alpha_i just inside (0, C_i)
    if warm_start is not None and "alpha" in warm_start:
        alpha[:, 0] = np.clip(warm_start["alpha"] * (C / warm_start["C"]), alpha[:, 0], upper - alpha[:, 0])
    alpha[:, 1] = upper - alpha[:, 0]
    w = np.zeros(n_features + 1, np.float64)
    start_w(indptr, indices, values, B, y, alpha, w)
    xsq = row_sqnorms(indptr, values, B)
    index = np.arange(n, dtype=np.int64)
    istate = np.zeros(1, np.int64)
    fstate = np.array([INNER_EPS_START, math.inf], np.float64)
    rng = np.random.default_rng(params.seed)
    rstate = np.array([rng.integers(0, 2**64 - 1, dtype=np.uint64, endpoint=True)], np.uint64)

    converged = drive(lambda steps: K.lr_run(indptr, indices, values, B, y, alpha, upper, xsq, eps, min(1e-8, eps),
                                             max_iter, steps, w, index, istate, fstate, rstate),
                      n, max_iter, progress,
                      lambda: (int(istate[K.ITER]), f"max gradient {fstate[K.GMAX]:.2e} (stop at {eps:g})"))
    n_iter = int(istate[K.ITER])
    warn_max_iter(log, converged, max_iter)
    if warm_start is not None:
        warm_start["alpha"], warm_start["C"] = alpha[:, 0].copy(), C

    scores = margins(indptr, indices, values, w, B, 0.0, np.empty(n, np.float64))
    ww = sq_norm(w)
    primal_C = 0.5 * ww + K.log_loss_sum(y, scores, upper)
    dual = 0.5 * ww + K.lr_dual_terms(alpha) - float(np.sum(upper * np.log(upper)))
    info = {"primal_C_form": primal_C, "dual_objective": dual, "n_sv": int(n), "n_iter": n_iter, "C": C}
    return FitResult(w=finish_w(w, params), b=0.0, n_iter=n_iter, objective=primal_C / (max(n, 1) * C),
                     converged=converged, info=info)

