"""``-s ocas --loss roc-area``: a linear classifier that maximises the area
under the ROC curve (T. Joachims, "A support vector method for
multivariate performance measures", ICML 2005; SVMperf's ``-l 10``).

Over the P positive and N negative rows of a binary problem it minimises

    F(w) = 1/2 |w|^2 + C n / (P N) sum_{i positive, j negative} max(0, 1 - w.(x_i - x_j)),

the hinge of every positive-negative pair (1 - ROC area, made convex), its
mean over the P N pairs weighed as the hinge's sum over the n rows is (so
``-c`` keeps its scale: SVMperf's ``-c C_perf`` is ``-c 100 C_perf / n``
here, its loss being 100 times the fraction of swapped pairs). This is the
ranking problem of one query with relevance 1 for the positive rows and 0
for the others, so the solver is ranking's (:mod:`.ocas_ranking`): OCAS's
cutting planes, each cut the paper's O(n log n) pass over sorted scores
(the pairs are never formed; :func:`roc_pass`). The bias cancels in every pair: the model's
is 0 and its scores rank, as SVMperf's ROC-area models do; their sign is
the classification at threshold 0. ``FitResult.objective`` is F / (n C).
"""
import math
import time

import numba
import numpy as np

from ...errors import ParameterError
from ...data.queries import QueryGroups
from ..base import FitResult, finish_w, kernel_bias
from .ocas import _threads_for, check_params, solve
from .ocas_ranking import RankingData


class RocData(RankingData):
    """Ranking's data side (:class:`.ocas_ranking.RankingData`) for the one
    query of two levels: its pair pass by two sorts and two binary searches
    (:func:`roc_pass`) instead of the general pass's Fenwick trees."""

    def __init__(self, X, positive, cost, B, dim, nb, count_errors=False):
        groups = QueryGroups.build(np.zeros(X.n_rows, np.int64), positive.astype(np.float64))
        super().__init__(X, groups, cost, B, dim, nb, count_errors)
        self.positive = positive
        self.coef = np.zeros(X.n_rows)

    def _pair_pass(self, scores):
        nv, loss = roc_pass(scores, self.positive, self.coef)
        return self.coef, nv, loss, float(nv)


def roc_pass(scores, positive, coef):
    """The pairs (i positive, j negative) violated at margin 1, s_j + 1 > s_i,
    counted without forming them: coef[i] = the violated pairs of positive
    row i, coef[j] = minus those of negative row j (written into ``coef``).
    Returns (violated pairs, their hinge sum of 1 - s_i + s_j). O(n log n):
    each side sorted once, each row's count one binary search in the other."""
    s_pos, s_neg = scores[positive], scores[~positive]
    shifted = np.sort(s_neg) + 1.0
    above = len(shifted) - np.searchsorted(shifted, s_pos, side="right")     # #j: s_j + 1 > s_i
    below = np.searchsorted(np.sort(s_pos), s_neg + 1.0, side="left")       # #i: s_i < s_j + 1
    coef[positive] = above
    coef[~positive] = -below
    violated = int(above.sum())
    return violated, float(above @ (1.0 - s_pos) + below @ s_neg)


def pair_cost(params, n, n_pairs):
    """The cost of one pair: C n / (P N) (the module doc), C from ``params`` for n rows."""
    return params.resolved_C(n) * n / max(n_pairs, 1)


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None):
    """Train one binary problem (y in {+1, -1}) for the ROC area; see the module doc."""
    if tuple(class_cost) != (1.0, 1.0):
        raise ParameterError("-w (class weights) does not change a ROC-area model: every positive-negative "
                             "pair weighs the same")
    if monitor is not None:
        raise ParameterError("--trace does not trace --loss roc-area")
    check_params(params, class_cost)
    y = np.ascontiguousarray(y, np.float64)
    t0 = time.perf_counter()
    n = X.n_rows
    positive = y > 0
    n_pairs = int(positive.sum()) * (n - int(positive.sum()))
    cost = pair_cost(params, n, n_pairs)
    if not (cost > 0 and math.isfinite(cost)):
        raise ParameterError(f"the pair cost C n / (P N) must be > 0 and finite (got {cost})")
    dim = n_features + 1
    if n_pairs == 0:                 # one class only: every w ranks it perfectly
        return FitResult(w=finish_w(np.zeros(dim), params), n_iter=0, objective=0.0, converged=True,
                         info={"Q_P": 0.0, "Q_D": 0.0, "exit": "NoPairs", "n_pairs": 0})
    nb = _threads_for(params.threads, X.nnz)
    old_threads = numba.get_num_threads()
    numba.set_num_threads(nb)
    try:
        data = RocData(X, positive, cost, kernel_bias(params), dim, nb, count_errors=log is not None)
        result = solve(data, n, dim, params, progress, log, nb, t0)
    finally:
        numba.set_num_threads(old_threads)
    result.info.update(n_pairs=n_pairs, pair_cost=cost, n_passes=data.n_passes)
    return result
