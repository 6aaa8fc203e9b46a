"""``-s dcd --task o``: the linear one-class SVM, as LIBLINEAR 2.4x's -s 21.

Solves (Schoelkopf et al. 2001, scaled as LIBSVM and LIBLINEAR)

    min_{w, rho, xi}  1/2 |w|^2 - nu l rho + sum_i xi_i,   w.x_i >= rho - xi_i,  xi_i >= 0,

over l rows, through its dual  min 1/2 alpha^T Q alpha,  0 <= alpha_i <= 1,
sum alpha = nu l  (``_oneclass_kernels.oneclass_run``: LIBLINEAR's
two-variable working sets and shrinking), nu = ``params.nu`` (--nu, 0.5
by default as there). The decision value is w.x - rho: rows with a
positive value are predicted +1 (inside), the others -1. By the
nu-property, at most a fraction nu of the training rows lie strictly
outside (xi_i > 0) and at least a fraction nu are support vectors
(alpha_i > 0). Labels are not used. There is no -B (rho is the offset;
LIBLINEAR refuses -B for -s 21 too), and C plays no part.
"""
import math

import numpy as np

from ...errors import ParameterError
from . import _dcd_oneclass_kernels as K
from .._common import margins, row_sqnorms, sq_norm
from ..base import FitResult, csr_arrays, drive, stopping, warn_max_iter

DEFAULT_EPS = 0.01          # LIBLINEAR's default for -s 21
DEFAULT_MAX_ITER = 1000
DEFAULT_NU = 0.5


def check_params(params):
    """(nu, eps, max_iter) of a one-class run; raises ParameterError."""
    if params.bias >= 0:
        raise ParameterError("-B does not apply to the one-class SVM: its offset is rho (LIBLINEAR refuses "
                             "-B with -s 21 too)")
    if params.unreg_bias:
        raise ParameterError("-R does not apply to the one-class SVM: its offset is rho")
    nu = DEFAULT_NU if params.nu is None else float(params.nu)
    if not (0.0 < nu <= 1.0):
        raise ParameterError(f"--nu must be in (0, 1] for the one-class SVM (got {nu})")
    return (nu,) + stopping(params, DEFAULT_EPS, DEFAULT_MAX_ITER)


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None):
    """Train the one-class SVM on the rows of ``X`` (``y`` is ignored); see the module docstring.

    FitResult: ``w`` (n_features), ``b = -rho`` (decision w.x + b),
    ``objective`` (1/2 |w|^2 = 1/2 alpha^T Q alpha, LIBLINEAR's "Objective
    value"), ``n_iter`` (outer iterations), ``converged``, and ``info``
    with ``rho``, ``nu``, ``n_sv`` (alpha_i > 0), ``n_free``, ``alpha``
    (the dual solution), ``primal_objective`` (1/2 |w|^2 - nu l rho + sum_i
    max(0, rho - w.x_i), equal to -objective at the optimum and never below
    it) and ``violation`` (the last outer iteration's m).
    """
    if tuple(class_cost) != (1.0, 1.0):
        raise ParameterError("-w (class weights) applies to classification, not the one-class SVM")
    if monitor is not None:
        raise ParameterError("--trace does not trace the one-class SVM yet")
    nu, eps, max_iter = check_params(params)
    n_features = int(n_features)
    indptr, indices, values = csr_arrays(X, n_features)
    n = X.n_rows

    alpha = K.start_alpha(n, nu)
    w = K.add_rows(indptr, indices, values, alpha, np.zeros(n_features + 1, np.float64))
    QD = row_sqnorms(indptr, values, 0.0)
    G = np.empty(n, np.float64)
    heap_keys = np.empty(n, np.float64)
    heap_rows = np.empty(n, np.int64)
    up = np.empty(n, np.int64)
    down = np.empty(n, np.int64)
    index = np.arange(n, dtype=np.int64)
    istate = np.array([n, 0], np.int64)
    fstate = np.array([math.inf], np.float64)

    converged = drive(lambda steps: K.oneclass_run(indptr, indices, values, alpha, QD, G, eps, max_iter, steps, w,
                                                   index, istate, fstate, heap_keys, heap_rows, up, down),
                      n, max_iter, progress,
                      lambda: (int(istate[K.ITER]), f"violation {fstate[K.VIOLATION]:.2e} (stop at {eps:g})"))
    n_iter = int(istate[K.ITER])
    warn_max_iter(log, converged, max_iter)

    rho, n_sv = K.oneclass_rho(indptr, indices, values, alpha, w) if n else (0.0, 0)
    scores = margins(indptr, indices, values, w, 0.0, 0.0, np.empty(n, np.float64))
    ww = sq_norm(w)
    primal = 0.5 * ww - nu * n * rho + float(np.maximum(0.0, rho - scores).sum())
    info = {"rho": float(rho), "nu": nu, "n_sv": int(n_sv),
            "n_free": int(np.count_nonzero((alpha > 0.0) & (alpha < 1.0))),
            "alpha": alpha, "primal_objective": primal, "dual_objective": 0.5 * ww,
            "violation": float(fstate[K.VIOLATION]), "n_iter": n_iter}
    return FitResult(w=w[:-1].copy(), b=-float(rho), n_iter=n_iter, objective=0.5 * ww,
                     converged=converged, info=info)
