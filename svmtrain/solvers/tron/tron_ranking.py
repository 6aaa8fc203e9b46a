"""``-s tron --task p``: L2-loss RankSVM by a trust-region Newton method.

Minimises, with P the pairs (i, j) of one query with y_i > y_j,

    F(w) = 1/2 |w|^2 + c sum_{(i,j) in P} max(0, 1 - w.(x_i - x_j))^2

(``--loss pairwise-squared-hinge``; c the pair cost of
:func:`svmtrain.solvers.ocas.ocas_ranking.pair_cost`, svm_rank's C / Q by
default) by TRON (:mod:`svmtrain.solvers.tron.tron`), as C.-P. Lee and C.-J. Lin,
"Large-scale linear RankSVM" (Neural Computation 26, 2014) do: the
function, gradient and Hessian-vector products need, per row, the count
and the sum of the scores (or of X v) of its partners in the active pairs
(1 - s_i + s_j > 0), which one sorted sweep per query gives in
O(n log n) (``QueryGroups.pair_sums``, Fenwick trees over the relevance
levels); no pair is materialised. With s = X w and, per row k, P_k / M_k
the sums of the active margins 1 - s_i + s_j over the pairs where k is the
preferred / the worse row:

    F = 1/2 |w|^2 + c (sum_k P_k + sum_k s_k (M_k - P_k)),
    grad F = w + X^T (2 c (M - P)),
    H v = v + X^T (2 c ((cp + cm) * z - sp(z) - sm(z))),   z = X v.

The constant feature of -B cancels in every pair difference: its weight
stays 0. ``FitResult.objective`` is F / (Q C); ``-e`` (default 0.01)
stops when |grad F| <= eps |grad F(0)|, as LIBLINEAR's primal solvers.
"""
import time

import numba
import numpy as np

from ...errors import ParameterError
from ...data.queries import QueryGroups
from ..ocas import _ocas_kernels as KO
from . import tron
from .._common import margins
from ..base import FitResult, finish_w
from ..ocas.ocas import _threads_for
from ..ocas.ocas_ranking import check_call, pair_cost

DEFAULT_EPS = 0.01
DEFAULT_MAX_ITER = 1000


class PairwiseSquaredHinge:
    """F, its gradient and Hessian-vector products on the rows of X (a
    Chunk) grouped by ``groups``, with pair cost c (see the module doc)."""

    def __init__(self, X, groups, c, d, nb):
        n = X.n_rows
        self.X, self.groups, self.c, self.d, self.nb = X, groups, c, d, nb
        self.s = np.zeros(n)
        self.active = np.zeros(n)             # cp + cm at the last fun's w
        self.ones = np.ones(n)
        self.flag = np.zeros(n, np.int8)
        self.buf = np.empty((nb, d + 1)) if nb > 1 else np.empty((1, 1))
        self.n_passes = 0

    def _scores(self, w):
        return margins(self.X.indptr, self.X.indices, self.X.values, w, 0.0, 0.0, np.empty(self.X.n_rows))

    def _xt(self, coef):
        """X^T coef (d + 1 entries, the constant feature's 0)."""
        out = np.zeros(self.d + 1)
        np.not_equal(coef, 0.0, out=self.flag.view(bool))
        KO.scatter_cut(self.X.indptr, self.X.indices, self.X.values, 0.0, coef, self.ones, self.flag, self.flag,
                       False, self.nb, self.buf, out)
        return out

    def fun(self, w):
        self.s = s = self._scores(w)
        cp, sp, cm, sm = self.groups.pair_sums(s, s)
        self.n_passes += 1
        P = cp * (1.0 - s) + sp
        M = cm * (1.0 + s) - sm
        self.active = cp + cm
        self.coef = 2.0 * self.c * (M - P)
        return 0.5 * float(w @ w) + self.c * (float(P.sum()) + float(s @ (M - P)))

    def grad(self, w):
        return w + self._xt(self.coef)

    def hess_vec(self, v):
        z = self._scores(v)
        _, sp, _, sm = self.groups.pair_sums(self.s, z)
        self.n_passes += 1
        return v + self._xt(2.0 * self.c * (self.active * z - sp - sm))


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None):
    """Train a linear ranking function on relevance labels ``y`` and the
    queries ``X.qid`` (a Chunk in memory); see the module doc."""
    y = check_call(X, y, n_features, class_cost, monitor)
    eps = DEFAULT_EPS if params.eps is None else float(params.eps)
    max_iter = DEFAULT_MAX_ITER if params.max_iter is None else int(params.max_iter)
    if not eps > 0:
        raise ParameterError(f"-e must be > 0 (got {eps})")
    t0 = time.perf_counter()
    groups = QueryGroups.build(X.qid, y)
    Q = groups.n_queries
    c = pair_cost(params, Q)
    w = np.zeros(int(n_features) + 1)
    nb = _threads_for(params.threads, X.nnz)
    old_threads = numba.get_num_threads()
    numba.set_num_threads(nb)
    try:
        problem = PairwiseSquaredHinge(X, groups, c, int(n_features), nb)
        f, it, cg_steps, converged = tron.minimize(problem, w, eps, max_iter, progress)
    finally:
        numba.set_num_threads(old_threads)
    if log is not None and not converged:
        log(f"WARNING: reaching max number of iterations ({max_iter}) or no further progress")
    C = params.resolved_C(Q)
    info = {"primal_C_form": f, "n_queries": Q, "n_pairs": groups.n_pairs, "pair_cost": c,
            "cg_steps": cg_steps, "n_passes": problem.n_passes, "time": time.perf_counter() - t0}
    return FitResult(w=finish_w(w, params), n_iter=it, objective=f / (max(Q, 1) * C), converged=converged,
                     info=info)
