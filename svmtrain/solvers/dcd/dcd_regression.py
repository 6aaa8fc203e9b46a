"""``-s dcd --task r``: linear support vector regression by dual coordinate descent.

Solves the C-form primal

    min_w  1/2 |w|^2 + C sum_i loss(y_i - w.x_i)

with the epsilon-insensitive loss max(0, |r| - p) (``--loss
epsilon-insensitive``, LIBLINEAR -s 13) or its square (``--loss
squared-epsilon-insensitive``, LIBLINEAR -s 12 and, by its primal solver,
-s 11), p = ``params.epsilon`` (-p, 0.1 by default), C =
``params.resolved_C(n)``. -B adds LIBLINEAR's regularised constant
feature. The optimisation is one numba kernel (``_svr_kernels.svr_run``,
Ho and Lin 2012); this module prepares its arrays, runs it and reports.

A path of C values (``svm-train -C --task r``) warm-starts each C from the
previous C's dual point, beta scaled by the ratio of the C values and
clipped to the new box (as ``dcd.fit`` scales alpha). The kernel's stopping
rule is relative to its first outer iteration, which at a warm start is
already small: a warm-started solve is at least as tight as a cold one.
"""
import math

import numpy as np

from ...errors import ParameterError
from . import _dcd_regression_kernels as K
from .._common import margins, row_sqnorms, sq_norm, start_w
from ..base import FitResult, drive, finish_w, kernel_bias, warn_max_iter
from .dcd import check_params, checked_rows, kernel_state

SQUARED = "squared-epsilon-insensitive"
WARM_START = True      # fit takes warm_start


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None, warm_start=None):
    """Train on real targets ``y``; see the module docstring.

    ``warm_start``: a dict owned by the caller, for a path of C values on
    the same rows: when it holds a previous solution (``beta``, ``C``) the
    solve starts from it scaled to this C; on return it holds this one.

    FitResult: ``w`` (n_features, + 1 with -B), ``objective`` (the
    lambda-form primal, lambda/2 |w|^2 + (1/n) sum_i loss_i), ``n_iter``,
    ``converged``, and ``info`` with ``primal_C_form``, ``dual_objective``
    (LIBLINEAR's "Objective value": 1/2 |w|^2 + sum_i (p |beta_i| - y_i
    beta_i + lambda/2 beta_i^2), to be minimised), ``n_sv`` (nonzero beta).
    """
    if tuple(class_cost) != (1.0, 1.0):
        raise ParameterError("-w (class weights) applies to classification, not regression")
    if monitor is not None:
        raise ParameterError("--trace does not trace regression yet")
    eps, max_iter = check_params(params, class_cost)
    n_features, (indptr, indices, values), y, n = checked_rows(X, y, n_features)
    C = params.resolved_C(n)
    p = float(params.epsilon)
    squared = params.loss == SQUARED
    lam, upper = (0.5 / C, math.inf) if squared else (0.0, C)
    B = kernel_bias(params)

    w = np.zeros(n_features + 1, np.float64)
    beta = np.zeros(n, np.float64)
    if warm_start is not None and "beta" in warm_start:
        beta[:] = np.clip(warm_start["beta"] * (C / warm_start["C"]), -upper, upper)
        start_w(indptr, indices, values, B, np.ones(n), beta.reshape(n, 1), w)
    QD = row_sqnorms(indptr, values, B) + lam
    index, istate, rstate = kernel_state(n, params.seed)
    fstate = np.array([math.inf, 0.0, 0.0], np.float64)

    def report():
        init = fstate[K.GNORM1_INIT]
        ratio = fstate[K.GNORM1_LAST] / init if init > 0 else 0.0
        return int(istate[K.ITER]), f"violation {ratio:.2e} of the first (stop at {eps:g})"
    converged = drive(lambda steps: K.svr_run(indptr, indices, values, B, y, beta, QD, upper, lam, p, eps,
                                              max_iter, steps, w, index, istate, fstate, rstate),
                      n, max_iter, progress, report)
    n_iter = int(istate[K.ITER])
    warn_max_iter(log, converged, max_iter)
    if warm_start is not None:
        warm_start["beta"], warm_start["C"] = beta.copy(), C

    return _result((indptr, indices, values), B, w, y, beta, C, p, lam, squared, params, n_iter, converged)


def _result(csr, B, w, y, beta, C, p, lam, squared, params, n_iter, converged):
    """The FitResult of a finished solve: the lambda-form objective, C-form primal and dual in ``info``."""
    n = len(y)
    scores = margins(*csr, w, B, 0.0, np.empty(n, np.float64))
    ww = sq_norm(w)
    primal_C = 0.5 * ww + C * K.svr_loss_sum(y, scores, p, squared)
    dual_terms, n_sv = K.svr_dual_terms(y, beta, p, lam)
    info = {"primal_C_form": primal_C, "dual_objective": 0.5 * ww + dual_terms, "n_sv": int(n_sv),
            "n_iter": n_iter, "C": C}
    return FitResult(w=finish_w(w, params), b=0.0, n_iter=n_iter, objective=primal_C / (max(n, 1) * C),
                     converged=converged, info=info)
