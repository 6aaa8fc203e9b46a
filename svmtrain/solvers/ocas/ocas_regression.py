"""``-s ocas --task r``: support vector regression by OCAS.

Minimises LIBLINEAR's SVR primal (its ``-s 13`` / ``-s 12`` problems)

    F(w) = 1/2 |w|^2 + C sum_i loss(w.x_i - y_i)

with the epsilon-insensitive loss max(0, |r| - p) (``--loss
epsilon-insensitive``) or its square, by the OCAS master loop
(``ocas.solve``) over :class:`svmtrain.solvers.ocas.ocas_scores.ScoreData`: one
pass over the scores gives the loss and a subgradient (``_svr_kernels.
svr_score_pass``), a cut is the loss's tangent there (exact pieces for the
L1 loss: the cutting-plane model of the epsilon-insensitive loss; for the
squared loss tangents, as for any convex loss). ``-B`` adds LIBLINEAR's
regularised bias feature. ``FitResult.objective`` is F / (n C), the lambda
form, and ``info["primal_C_form"]`` is F, LIBLINEAR's primal value.
"""
import numpy as np

from ...errors import ParameterError
from ..dcd import _dcd_regression_kernels as KS
from . import _ocas_kernels as K
from .ocas import _check
from .ocas_scores import fit_scores

SQUARED = "squared-epsilon-insensitive"


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None):
    """Train on real targets ``y`` (a Chunk in memory); see the module doc."""
    if tuple(class_cost) != (1.0, 1.0):
        raise ParameterError("-w (class weights) applies to classification, not regression")
    if monitor is not None:
        raise ParameterError("--trace does not trace regression yet")
    _check(X, y, n_features, params, class_cost)
    y = np.ascontiguousarray(y, np.float64)
    p = float(params.epsilon)
    squared = params.loss == SQUARED
    coef = np.zeros(X.n_rows)

    def loss_pass(scores):
        nv, loss, bconst = KS.svr_score_pass(scores, y, p, squared, coef)
        return coef, nv, loss, bconst

    C = params.resolved_C(X.n_rows)
    exact_search = None
    if not squared:
        # the L1 loss is piecewise linear along a line: regula falsi on its
        # step-like derivative crawls (and stalled on targets far from 0
        # without a bias), so its line search is exact (K.svr_line_search)
        kb, wb = np.empty(2 * X.n_rows), np.empty(2 * X.n_rows)

        def exact_search(out_b, out_d, qa, qb, nb):
            return K.svr_line_search(y, out_b, out_d, p, C, qa, qb, nb, kb, wb)[0]
    return fit_scores(X, loss_pass, C, n_features, params, progress, log, exact_search=exact_search)
