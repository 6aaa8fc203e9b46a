"""``-s cdn`` (``--loss squared-hinge``): the L1-regularised squared-hinge SVM, LIBLINEAR's -s 5.

Minimises the C-form primal

    min_w  |w|_1 + sum_i C_i max(0, 1 - y_i w.x_i)^2

(C_i = C times the class weight of y_i, -w, times the row's sample
weight; -B LIBLINEAR's constant feature, L1-regularised as there, or left
unregularised with -R) by CDN, coordinate descent with Newton steps (Yuan,
Chang, Hsieh and Lin, JMLR 2010; ``_l1_kernels.cdn_run``) on the columns
of the data, transposed once.

The stop is LIBLINEAR's: the sum over the features of the violation of the
optimality conditions at most eps' times that of the first pass, with
eps' = eps max(min(#pos, #neg), 1) / l and ``-e`` eps (default 0.01);
``--max-iter`` caps the passes (default 1000). A warm start (``-C``)
begins at the previous C's w, the stop then relative to the violations at
w = 0 at the new C.

Many weights are exactly 0: ``info["nnz"]`` counts the nonzero ones.
"""
import numpy as np

from ...errors import ParameterError
from .. import require_base
from ..base import drive, warn_max_iter
from . import _l1_kernels as K
from ._problem import fit_result, new_rng, problem, violation_sum
from ._problem import path_start_c as _path_start_c

DEFAULT_MAX_ITER = 1000     # LIBLINEAR's for -s 5
DEFAULTS = {"penalty": "l1"}
WARM_START = True           # fit takes warm_start
PARALLEL_CLASSES = True     # one-vs-rest classes may train in threads (svmtrain.training.class_threads)


def path_start_c(data, params):
    """-C: the first C of the path (see :func:`._problem.path_start_c`)."""
    return _path_start_c(data, params, 2.0)


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None,
        warm_start=None):
    """Train one binary problem (y in {+1, -1}); see the module docstring.

    FitResult: ``w`` (n_features, + 1 with -B), ``b`` (-R without -B),
    ``objective`` (the lambda form: the C form divided by n C, so
    lambda |w|_1 + the mean weighted loss), ``n_iter`` (passes over the
    active features), ``converged``, ``info`` with ``primal_C_form``,
    ``nnz`` (nonzero feature weights), ``C``. ``warm_start``: a dict owned by
    the caller (``-C``): when it holds ``"w"`` (the kernels' w) the run
    starts there; on return it holds this run's.
    """
    require_base("cdn", params)
    if monitor is not None:
        raise ParameterError("--trace does not trace -s cdn")
    prob = problem(X, y, n_features, params, class_cost, DEFAULT_MAX_ITER, "cdn")
    colptr, rowind, cost, free, w_size = prob.colptr, prob.rowind, prob.cost, prob.free, prob.w_size
    yx = K.signed_values(rowind, prob.colval, prob.y)
    xj_sq = K.column_sq_products(colptr, rowind, prob.colval, cost)

    w = np.zeros(w_size, np.float64)
    b = np.ones(X.n_rows, np.float64)
    fstate = np.zeros(K.FSTATE, np.float64)
    fstate[K.GMAX_OLD] = np.inf
    fstate[K.GNORM1_INIT] = -1.0            # the first pass's
    if warm_start is not None and "w" in warm_start:
        w[:] = warm_start["w"]
        fstate[K.GNORM1_INIT] = violation_sum(-2.0 * K.column_products(colptr, rowind, yx, cost),
                                              np.zeros(w_size), free)
    K.columns_times_w(colptr, rowind, yx, -w, b)        # b = 1 - y_i w.x_i (nothing to add from w = 0)
    index = np.arange(w_size, dtype=np.int64)
    istate = np.zeros(K.ISTATE, np.int64)
    istate[K.ACTIVE] = w_size
    rng = new_rng(params.seed)
    tol, max_iter = prob.tol, prob.max_iter

    converged = drive(lambda steps: K.cdn_run(colptr, rowind, yx, cost, w, b, xj_sq, free, tol, max_iter, steps,
                                              index, istate, fstate, rng),
                      X.n_rows, max_iter, progress,
                      lambda: (int(istate[K.ITER]), f"violation {fstate[K.GNORM1]:.2e} "
                                                    f"(stop at {tol * max(fstate[K.GNORM1_INIT], 0):.2e})"))
    n_iter = int(istate[K.ITER])
    warn_max_iter(log, converged, max_iter)
    if warm_start is not None:
        warm_start["w"] = w.copy()
    return fit_result(prob, w, lambda margin: np.maximum(0.0, 1.0 - margin) ** 2, n_iter, converged, log,
                      f"line searches recomputed {int(istate[K.LS_FAIL])}")
