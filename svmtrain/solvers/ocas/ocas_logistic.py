"""``-s ocas --loss log``: L2-regularised logistic regression by OCAS.

Minimises LIBLINEAR's logistic-regression primal (its ``-s 0`` / ``-s 7``
problem)

    F(w) = 1/2 |w|^2 + sum_i C_i log(1 + exp(-y_i w.x_i))

(C_i = C times the class weight of ``-w``) by the OCAS master loop
(``ocas.solve``) over :class:`svmtrain.solvers.ocas.ocas_scores.ScoreData`: a
cut is the tangent of the log loss at the cut point (the cutting-plane
model of a smooth convex loss: Teo et al.'s BMRM handles any convex loss
this way, and OCAS's line search needs only the loss's derivative along a
line, one pass per evaluation). ``-B`` adds LIBLINEAR's regularised bias
feature. ``FitResult.objective`` is F / (n C), the lambda form;
``info["primal_C_form"]`` is F.
"""
import numpy as np

from ...errors import ParameterError
from ..dcd import _dcd_logistic_kernels as KL
from .ocas import _check
from .ocas_scores import fit_scores


WARM_START = True      # fit takes warm_start (see ocas.solve)
PARALLEL_CLASSES = True   # one-vs-rest classes may train in threads (svmtrain.training.class_threads)


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None,
        warm_start=None):
    """Train one binary problem (y in {+1, -1}, a Chunk in memory); see the module doc."""
    if monitor is not None:
        raise ParameterError("--trace does not trace --loss log yet")
    _check(X, y, n_features, params, class_cost)
    y = np.ascontiguousarray(y, np.float64)
    if X.n_rows and not np.all((y == 1.0) | (y == -1.0)):
        raise ParameterError("ocas needs labels y in {+1, -1}")
    weights = np.where(y > 0, float(class_cost[0]), float(class_cost[1]))
    coef = np.zeros(X.n_rows)

    def loss_pass(scores):
        wrong, loss, bconst = KL.log_score_pass(scores, y, weights, coef)
        return coef, wrong, loss, bconst

    return fit_scores(X, loss_pass, params.resolved_C(X.n_rows), n_features, params, progress, log, warm_start)
