"""``-s ocas --task p``: preference ranking (pairwise hinge) by OCAS.

Minimises, with P the pairs (i, j) of one query with y_i > y_j,

    F(w) = 1/2 |w|^2 + c sum_{(i,j) in P} max(0, 1 - w.(x_i - x_j))

where the pair cost c is svm_rank's: c = C / Q for Q training queries
(``--rank-c svm_rank``, the default), so that ``-c C`` here is svm_rank's
``-c C``; with ``--rank-c svmlight`` c = C, SVMlight's ``-z p -c C``
(SVMlight's C_light = C_rank / Q). The pairs are never materialised: the
loss and a subgradient cost one O(n log n) pass (``QueryGroups.pair_pass``,
Joachims 2006): the cut at a point is ``a = c sum_k coef_k x_k``,
``b = c (#violated pairs)``, with coef_k = (#violated pairs where k is the
preferred row) - (#violated pairs where k is the worse row). The constant
feature of -B cancels in every pair difference, so its weight stays 0.

The OCAS master loop is ``ocas.solve``; :class:`RankingData`, a
:class:`svmtrain.solvers.ocas.ocas_scores.ScoreData` over the pair pass, is its
data side (with the line search of ``--ocas-method ocas``, the default;
``--ocas-method cp`` is the plain cutting-plane method).
``FitResult.objective`` is F / (Q C).
"""
import math
import time

import numba
import numpy as np

from ...data.chunk_source import is_streamed
from ...errors import ParameterError
from ...data.queries import QueryGroups
from ..base import FitResult, finish_w, kernel_bias
from .ocas import _threads_for, check_params, solve
from .ocas_scores import ScoreData

SVMLIGHT = "svmlight"


def pair_cost(params, n_queries):
    """The cost c of one pair: C / Q (svm_rank's convention) or C (--rank-c svmlight)."""
    C = params.resolved_C(n_queries)
    return C if getattr(params, "rank_c", None) == SVMLIGHT else C / max(n_queries, 1)


class RankingData(ScoreData):
    """OCAS's data side for ranking: the pair pass of ``groups`` (coef_k =
    (#violated pairs where k is the preferred row) - (#violated pairs where
    k is the worse row); bconst = the number of violated pairs); with
    ``count_errors``, the misordered pairs scaled to Q rows for ocas's
    --verbose lines. The constant feature cancels in every pair: its weight
    stays 0."""

    def __init__(self, X, groups, cost, B, dim, nb, count_errors=False):
        super().__init__(X, self._pair_pass, cost, B, dim, nb)
        self.groups, self.count_errors = groups, count_errors
        self.cut_bias = 0.0

    def _pair_pass(self, scores):
        coef, nv, loss, _, _ = self.groups.pair_pass(scores)
        return coef, nv, loss, float(nv)

    def errors(self, scores):
        if not (self.count_errors and self.groups.n_pairs):
            return 0
        return self.groups.misordered(scores).sum() * self.groups.n_queries / self.groups.n_pairs


def check_call(X, y, n_features, class_cost, monitor):
    """ParameterError for what no ranking solver takes (-w, --trace,
    --stream); ValueError unless y has a label per row and every feature
    index is below ``n_features``. Returns y as float64."""
    if tuple(class_cost) != (1.0, 1.0):
        raise ParameterError("-w (class weights) applies to classification, not ranking")
    if monitor is not None:
        raise ParameterError("--trace does not trace ranking yet")
    if is_streamed(X):
        raise ParameterError("--task p trains in memory; it cannot be combined with --stream")
    y = np.ascontiguousarray(y, np.float64)
    if len(y) != X.n_rows:
        raise ValueError("y and X have different numbers of rows")
    if X.nnz and int(X.indices.max()) >= n_features:
        raise ValueError("feature index beyond n_features")
    return y


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None):
    """Train a linear ranking function on relevance labels ``y`` and the
    queries ``X.qid`` (a Chunk in memory); see the module doc."""
    y = check_call(X, y, n_features, class_cost, monitor)
    check_params(params, class_cost)
    t0 = time.perf_counter()
    groups = QueryGroups.build(X.qid, y)
    Q = groups.n_queries
    dim = n_features + 1
    cost = pair_cost(params, Q)
    if not (cost > 0 and math.isfinite(cost)):
        raise ParameterError(f"the pair cost C/Q must be > 0 and finite (got {cost})")
    nb = _threads_for(params.threads, X.nnz)
    old_threads = numba.get_num_threads()
    numba.set_num_threads(nb)
    try:
        data = RankingData(X, groups, cost, kernel_bias(params), dim, nb, count_errors=log is not None)
        if Q == 0:
            w = np.zeros(dim)
            return FitResult(w=finish_w(w, params), n_iter=0, objective=0.0, converged=True,
                             info={"Q_P": 0.0, "Q_D": 0.0, "exit": "EmptyData", "n_pairs": 0})
        result = solve(data, Q, dim, params, progress, log, nb, t0)
    finally:
        numba.set_num_threads(old_threads)
    result.info.update(n_queries=Q, n_pairs=groups.n_pairs, pair_cost=cost, n_passes=data.n_passes)
    return result
