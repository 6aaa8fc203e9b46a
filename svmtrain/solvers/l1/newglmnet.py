"""``-s cdn --loss log``: L1-regularised logistic regression by newGLMNET, LIBLINEAR's -s 6.

Minimises the C-form primal

    min_w  |w|_1 + sum_i C_i log(1 + exp(-y_i w.x_i))

(C_i = C times the class weight of y_i, -w, times the row's sample
weight; -B LIBLINEAR's constant feature, L1-regularised as there, or left
unregularised with -R) by newGLMNET (Yuan, Ho and Lin, JMLR 2012;
``_l1_kernels.glmnet_run``): Newton iterations whose L1-regularised
quadratic models are solved by coordinate descent on the columns of the
data (transposed once), each followed by a line search.

The stop is LIBLINEAR's: the sum over the features of the violation of the
optimality conditions at most eps' times that at the start, eps' = eps
max(min(#pos, #neg), 1) / l with ``-e`` eps (default 0.01); ``--max-iter``
caps the Newton iterations (default 100, LIBLINEAR's), each inner solve
stops after 1000 passes. A warm start (``-C``) begins at the previous C's
w, the stop then relative to the violations at w = 0 at the new C.

Many weights are exactly 0: ``info["nnz"]`` counts the nonzero ones.
"""
import numpy as np

from ...errors import ParameterError
from ..base import drive, warn_max_iter
from . import _l1_kernels as K
from ._problem import fit_result, new_rng, problem, violation_sum
from ._problem import path_start_c as _path_start_c

DEFAULT_MAX_ITER = 100      # LIBLINEAR's Newton iterations for -s 6
DEFAULTS = {"penalty": "l1"}
WARM_START = True           # fit takes warm_start
PARALLEL_CLASSES = True     # one-vs-rest classes may train in threads (svmtrain.training.class_threads)


def path_start_c(data, params):
    """-C: the first C of the path (see :func:`._problem.path_start_c`)."""
    return _path_start_c(data, params, 0.5)


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None,
        warm_start=None):
    """Train one binary problem (y in {+1, -1}); see the module docstring.

    FitResult as :func:`svmtrain.solvers.l1.cdn.fit`'s (``n_iter``: Newton
    iterations; ``info`` also ``cd_passes``, the inner passes summed).
    """
    if monitor is not None:
        raise ParameterError("--trace does not trace -s cdn")
    prob = problem(X, y, n_features, params, class_cost, DEFAULT_MAX_ITER, "cdn")
    colptr, rowind, colval, cost, free, w_size = (prob.colptr, prob.rowind, prob.colval, prob.cost, prob.free,
                                                  prob.w_size)
    y, n = prob.y, X.n_rows
    negative = (y < 0).astype(np.uint8)
    xjneg_sum = K.column_products(colptr, rowind, colval, np.where(y < 0, cost, 0.0))

    w = np.zeros(w_size, np.float64)
    fstate = np.zeros(K.FSTATE, np.float64)
    fstate[K.GMAX_OLD] = np.inf
    fstate[K.GNORM1_INIT] = -1.0            # the first Newton iteration's (at w = 0)
    fstate[K.INNER_EPS] = 1.0
    wx = np.zeros(n, np.float64)
    if warm_start is not None and "w" in warm_start:
        w[:] = warm_start["w"]
        fstate[K.GNORM1_INIT] = violation_sum(K.column_products(colptr, rowind, colval, -0.5 * y * cost),
                                              np.zeros(w_size), free)
    K.columns_times_w(colptr, rowind, colval, w, wx)    # w.x_i (nothing to add from w = 0)
    fstate[K.W_NORM] = float(np.sum(np.abs(w[:-1] if free else w)))
    exp_wx = np.exp(wx)
    tau, D = np.empty(n), np.empty(n)
    K.logistic_terms(exp_wx, cost, tau, D)
    wpd = w.copy()
    index = np.arange(w_size, dtype=np.int64)
    istate = np.zeros(K.ISTATE, np.int64)
    rng = new_rng(params.seed)
    tol, max_iter = prob.tol, prob.max_iter
    work = (np.empty(n), np.empty(n), np.empty(w_size), np.empty(w_size))

    converged = drive(lambda steps: K.glmnet_run(colptr, rowind, colval, negative, cost, w, wpd, exp_wx, work[0],
                                                 tau, D, work[1], work[2], work[3], xjneg_sum, free, tol, max_iter,
                                                 steps, index, istate, fstate, rng),
                      n, max_iter, progress,
                      lambda: (int(istate[K.ITER]), f"violation {fstate[K.GNORM1]:.2e} "
                                                    f"(stop at {tol * max(fstate[K.GNORM1_INIT], 0):.2e})"))
    n_iter = int(istate[K.ITER])
    warn_max_iter(log, converged, max_iter)
    if log is not None and istate[K.INNER_CAP]:
        log("WARNING: reaching max number of inner iterations")
    if warm_start is not None:
        warm_start["w"] = w.copy()
    return fit_result(prob, w, lambda margin: np.logaddexp(0.0, -margin), n_iter, converged, log,
                      f"#CD passes = {int(istate[K.INNER])}", {"cd_passes": int(istate[K.INNER])})
