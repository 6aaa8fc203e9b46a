"""``-s dcd``: dual coordinate descent (Hsieh et al. 2008), as LIBLINEAR's -s 3 / -s 1.

Solves the C-form primal

    min_w  1/2 |w|^2 + sum_i C_i loss(y_i w.x_i)

with loss = hinge (``--loss hinge``, LIBLINEAR -s 3) or squared hinge
(``--loss squared-hinge``, LIBLINEAR -s 1), C = ``params.resolved_C(n)``
(lambda = 1 / (n C)), C_i = C * class_cost[0] for y_i = +1 and
C * class_cost[1] for y_i = -1. The -B bias is the constant feature of the
w-extension convention of ``base.py`` (regularised, as LIBLINEAR's -B).

The optimisation itself is one numba kernel (``_dcd_kernels.dcd_run``); this
module validates, allocates, runs it, and reports.
"""
import math

import numpy as np

from ...errors import ParameterError
from . import _dcd_kernels as K
from .._common import row_sqnorms, rows_loss_sum, sq_norm, start_w
from .. import require_base
from ..base import FitResult, csr_arrays, finish_w, kernel_bias, stopping, warn_max_iter
from ..snapshots import linear_snapshot

DEFAULT_EPS = 0.1
DEFAULT_MAX_ITER = 1000


def check_params(params, class_cost):
    """(eps, max_iter) after checking what dcd supports; raises ParameterError."""
    if params.unreg_bias:
        raise ParameterError("-R (unregularized bias) is not supported by -s dcd; use -B")
    for c in class_cost:
        if not (c > 0 and math.isfinite(c)):
            raise ParameterError(f"class weights must be > 0 (got {c})")
    return stopping(params, DEFAULT_EPS, DEFAULT_MAX_ITER)


def dual_box(params, class_cost, n):
    """(C, C_pos, C_neg, U_pos, U_neg, D_pos, D_neg) of the dual for n rows:
    the upper bounds U and diagonal terms D of each class (see _dcd_kernels)."""
    C = params.resolved_C(n)
    Cp, Cn = C * float(class_cost[0]), C * float(class_cost[1])
    if params.loss == "hinge":
        return C, Cp, Cn, Cp, Cn, 0.0, 0.0
    return C, Cp, Cn, math.inf, math.inf, 0.5 / Cp, 0.5 / Cn


WARM_START = True      # fit takes warm_start
PARALLEL_CLASSES = True   # one-vs-rest classes may train in threads (svmtrain.training.class_threads)


def newton_path_eps(params):
    """-C with the squared hinge: the path solves each fold and C by tron's
    primal Newton method (LIBLINEAR's -s 2 solver) at this tolerance, a
    tenth of dcd's -e (LIBLINEAR's own conversion where its dual solver
    hands a problem to the primal one); None for the hinge, which has no
    Newton method (dcd walks it, warm-started). See
    :mod:`svmtrain.selection.param_search`."""
    if params.loss != "squared-hinge":
        return None
    return 0.1 * (DEFAULT_EPS if params.eps is None else float(params.eps))


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None,
        warm_start=None):
    """Train one binary problem (y in {+1, -1}); see the module docstring.

    FitResult: ``w`` (length n_features, or n_features + 1 with -B),
    ``n_iter`` (outer iterations), ``objective`` (the lambda-form primal
    lambda/2 |w|^2 + (1/n) sum_i cost_i loss_i), ``converged`` and ``info``
    with ``dual_objective`` (the C-form dual value, to be maximised:
    sum alpha - 1/2 alpha^T Qbar alpha; LIBLINEAR prints its negative),
    ``primal_C_form`` (what LIBLINEAR calls the primal objective), ``n_sv``
    and ``n_iter``.

    ``warm_start``: a dict owned by the caller, for a path of C values on
    the same rows (``-C``): when it holds ``"alpha"``, the dual solution at
    ``"C"``, the descent starts from alpha * (C_now / C_then), clipped into
    the new box, with w = sum alpha_i y_i x_i (scaling with C keeps the
    bound and free variables where they were: on a9a from C = 2^-6 to 2^6
    the squared hinge takes 7-39 outer iterations per C where the unscaled
    start takes up to the 1,000 cap); on return it holds this run's alpha
    and C. The optimum reached is the cold start's, to ``-e``.
    """
    require_base("dcd", params)
    eps, max_iter = check_params(params, class_cost)
    n_features, csr, y, n = checked_rows(X, y, n_features)
    if n and not np.all((y == 1.0) | (y == -1.0)):
        raise ParameterError("dcd needs labels y in {+1, -1}")

    box = dual_box(params, class_cost, n)
    C, _, _, U_pos, U_neg, D_pos, D_neg = box
    B = kernel_bias(params)
    row_cost = kernel_row_cost(X)

    w = np.zeros(n_features + 1, np.float64)
    state = _start_state(csr, B, y, box, row_cost, warm_start, w)
    alpha = state[:, 0]
    index, istate, rstate = kernel_state(n, params.seed)
    fstate = np.array([np.inf, -np.inf], np.float64)

    steps = max_iter if progress is None and monitor is None else 1
    status = K.RUNNING if n else K.CONVERGED
    visits = 0
    while status == K.RUNNING:
        visits += int(istate[K.ACTIVE])     # rows the next outer iteration visits (monitor's count)
        status = K.dcd_run(*csr, B, U_pos, U_neg, D_pos, D_neg, state, row_cost,
                           eps, max_iter, steps, w, index, istate, fstate, rstate)
        if progress is not None:
            progress(int(istate[K.ITER]), max_iter, _violation(fstate))
        if monitor is not None:
            monitor(lambda: linear_snapshot(X, y, w, 0.0, params.bias, params.resolved_lambda(n), int(istate[K.ITER]),
                                            visits, cost=row_costs(y, class_cost, row_cost), loss=params.loss,
                                            dual=_dual(w, y, alpha, D_pos, D_neg, row_cost)[0] / (n * C)))
    n_iter = int(istate[K.ITER])
    converged = status == K.CONVERGED
    if warm_start is not None:
        warm_start["alpha"], warm_start["C"] = alpha.copy(), C
    warn_max_iter(log, converged, max_iter)
    return _result(csr, B, w, y, alpha, box, class_cost, row_cost, params, n_iter, converged)


def checked_rows(X, y, n_features):
    """(int n_features, X's CSR arrays, y as contiguous float64, n); ParameterError unless len(y) == n."""
    n_features = int(n_features)
    csr = csr_arrays(X, n_features)
    y = np.ascontiguousarray(y, np.float64)
    n = X.n_rows
    if y.shape != (n,):
        raise ParameterError(f"y has shape {y.shape}, expected ({n},)")
    return n_features, csr, y, n


def kernel_state(n, seed):
    """(index, istate, rstate) as the descent kernels start: rows 0..n-1, [n, 0], one draw of the seed."""
    index = np.arange(n, dtype=np.int64)
    istate = np.array([n, 0], np.int64)
    rng = np.random.default_rng(seed)
    rstate = np.array([rng.integers(0, 2**64 - 1, dtype=np.uint64, endpoint=True)], np.uint64)
    return index, istate, rstate


def _start_state(csr, B, y, box, row_cost, warm_start, w):
    """The kernel's per-row state: alpha = 0, or the warm start scaled to C and clipped, w set to match."""
    indptr, indices, values = csr
    C, _, _, U_pos, U_neg, D_pos, D_neg = box
    QD = row_sqnorms(indptr, values, B)
    QD += np.where(y > 0, D_pos, D_neg) / (row_cost if len(row_cost) else 1.0)
    state = K.new_state(y, QD)
    alpha = state[:, 0]
    del QD
    if warm_start is not None and "alpha" in warm_start:
        upper = np.where(y > 0, U_pos, U_neg) * (row_cost if len(row_cost) else 1.0)
        alpha[:] = np.minimum(warm_start["alpha"] * (C / warm_start["C"]), upper)
        start_w(indptr, indices, values, B, y, state, w)
    return state


def _result(csr, B, w, y, alpha, box, class_cost, row_cost, params, n_iter, converged):
    """The FitResult of a finished descent: the lambda-form objective, C-form dual and primal in ``info``."""
    indptr, indices, values = csr
    C, _, _, _, _, D_pos, D_neg = box
    n = len(y)
    ww = sq_norm(w)
    dual, n_sv = _dual(w, y, alpha, D_pos, D_neg, row_cost)
    cost = C * row_costs(y, class_cost, row_cost)
    primal_C = 0.5 * ww + rows_loss_sum(indptr, indices, values, w, B, 0.0, y, params.loss, weights=cost)
    objective = primal_C / (max(n, 1) * C)
    info = {"dual_objective": dual, "primal_C_form": primal_C, "n_sv": int(n_sv),
            "n_iter": n_iter, "C": C}
    return FitResult(w=finish_w(w, params), b=0.0, n_iter=n_iter, objective=objective,
                     converged=converged, info=info)


def _violation(fstate):
    """The bar's status: LIBLINEAR's stopping quantity PGmax - PGmin of the last pass."""
    v = float(fstate[K.PGMAX_OLD] - fstate[K.PGMIN_OLD])
    return f"PG range {v:.2e}" if np.isfinite(v) else None


def _dual(w, y, alpha, D_pos, D_neg, row_cost):
    """(C-form dual value sum alpha - 1/2 alpha^T Qbar alpha, number of support vectors)."""
    sq, sa, n_sv = K.dual_terms(y, alpha, D_pos, D_neg, row_cost)
    return sa - 0.5 * (sq_norm(w) + sq), n_sv


def kernel_row_cost(X):
    """The ``row_cost`` of ``dcd_run``: X's row weights (sample weights, all
    > 0: training drops the rows of weight 0), or an empty array for none."""
    weights = getattr(X, "weights", None)
    return np.empty(0, np.float64) if weights is None else np.ascontiguousarray(weights, np.float64)


def row_costs(y, class_cost, row_cost):
    """The multiplier of C for each row's loss: its class's weight (-w) times its row weight."""
    cost = np.where(y > 0, float(class_cost[0]), float(class_cost[1]))
    return cost * row_cost if len(row_cost) else cost
