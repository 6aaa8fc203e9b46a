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

The OCAS master loop is ``ocas.solve``; :class:`RankingData` is its data
side. The line search of ``--ocas-method ocas`` (the default) minimises
F(w_b + t d) by a safeguarded root search on its derivative, each
evaluation one pass at the scores ``X w_b + t X d`` (at most
``LS_EVALS`` passes per iteration); it is inexact, which only costs
iterations: Q_P is always F at the point reached and Q_D a lower bound, so
the stopping rule (Q_P - Q_D <= eps |Q_P|) certifies the optimum as for
classification. ``--ocas-method cp`` is the plain cutting-plane method.
``FitResult.objective`` is F / (Q C).
"""
import math
import time

import numba
import numpy as np

from ..data.chunk_source import is_streamed
from ..errors import ParameterError
from ..ranking import QueryGroups
from . import _ocas_kernels as K
from ._common import margins
from .base import FitResult, finish_w, kernel_bias
from .ocas import _threads_for, check_params, solve

LS_EVALS = 8          # derivative evaluations (data passes) per line search, at most
SVMLIGHT = "svmlight"


def pair_cost(params, n_queries):
    """The cost c of one pair: C / Q (svm_rank's convention) or C (--rank-c svmlight)."""
    C = params.resolved_C(n_queries)
    return C if getattr(params, "rank_c", None) == SVMLIGHT else C / max(n_queries, 1)


class RankingData:
    """The data side of an OCAS ranking run (the four methods of ``ocas.solve``).

    Keeps ``out_b = X w_b``, ``out_d = X d``, the pair coefficients at w_b
    (the derivative at t = 0 of the next line search) and at the last cut
    point.
    """

    def __init__(self, X, groups, cost, B, dim, nb, count_errors=False):
        n = X.n_rows
        self.X, self.groups, self.cost, self.B, self.nb = X, groups, cost, B, nb
        self.count_errors = count_errors
        self.out_b = np.zeros(n)
        self.out_d = np.zeros(n)
        self.coef_b = np.zeros(n)
        self.coef_cut = np.zeros(n)
        self.cw = np.full(n, cost)
        self.flag = np.zeros(n, np.int8)
        self.zero = np.zeros(n, np.int8)
        self.buf = np.empty((nb, dim)) if nb > 1 else np.empty((1, 1))
        self.a = np.zeros(dim)
        self.n_passes = 0

    def _pass(self, scores):
        self.n_passes += 1
        return self.groups.pair_pass(scores)

    def _outputs(self, w_d):
        X = self.X
        margins(X.indptr, X.indices, X.values, w_d, self.B, 0.0, self.out_d)

    def _slope(self, t):
        """dF(w_b + t d)/dt minus its regulariser part: -c sum_k coef_k(t) out_d[k]."""
        coef = self._pass(self.out_b + t * self.out_d)[0]
        return -self.cost * float(coef @ self.out_d)

    def line_search(self, w_b, w_d, qa, qb):
        """A minimiser t >= 0 of F(w_b + t w_d) (qa = |w_d|^2 > 0, qb = w_b.w_d),
        found by regula falsi on the nondecreasing derivative g(t) (see the
        module doc); keeps the outputs of w_d."""
        self._outputs(w_d)
        lo = 0.0
        g_lo = qb - self.cost * float(self.coef_b @ self.out_d)
        if g_lo >= 0.0:
            return 0.0
        hi = -g_lo / qa                    # g(hi) >= 0: the derivative only grows
        g_hi = qa * hi + qb + self._slope(hi)
        side = 0
        for _ in range(LS_EVALS - 1):
            if g_hi <= 0.0 or hi - lo <= 1e-12 * hi:
                return hi if g_hi <= 0.0 else lo
            if abs(g_hi - g_lo - qa * (hi - lo)) <= 1e-12 * (abs(g_hi) + abs(g_lo)):
                return lo - g_lo / qa      # g is linear on [lo, hi]: the exact root
            t = lo - g_lo * (hi - lo) / (g_hi - g_lo)
            g_t = qa * t + qb + self._slope(t)
            if g_t < 0.0:
                lo, g_lo = t, g_t
                if side == -1:
                    g_hi *= 0.5            # Illinois: keep the stale end from stalling
                side = -1
            else:
                hi, g_hi = t, g_t
                if side == 1:
                    g_lo *= 0.5
                side = 1
        return lo - g_lo * (hi - lo) / (g_hi - g_lo) if g_hi > g_lo else lo

    def loss_at_end(self, w_b, w_d):
        """The loss at w_b + w_d (= w_c); keeps the outputs of w_d."""
        self._outputs(w_d)
        return self.cost * self._pass(self.out_b + self.out_d)[2]

    def move(self, t, mu):
        """w_b += t d and the pairs violated at the next cut point
        w_b + mu (1 - t) d. Returns (loss at the new w_b, misordered pairs
        scaled to Q rows for ocas's log line -- counted only with a log --,
        violated pairs at the cut point, c times their number)."""
        if t != 0.0:
            self.out_b += t * self.out_d
        coef, nv, loss, _, _ = self._pass(self.out_b)
        self.coef_b[:] = coef
        nerr = 0
        if self.count_errors and self.groups.n_pairs:
            wrong = self.groups.misordered(self.out_b).sum()
            nerr = wrong * self.groups.n_queries / self.groups.n_pairs
        s = mu * (1.0 - t)
        if s != 0.0:
            coef, nv, _, _, _ = self._pass(self.out_b + s * self.out_d)
            self.coef_cut[:] = coef
        else:
            self.coef_cut[:] = self.coef_b
        return self.cost * loss, nerr, nv, self.cost * nv

    def cut(self):
        """The cut vector c sum_k coef_k x_k at the last cut point (owned by this object)."""
        X = self.X
        np.not_equal(self.coef_cut, 0.0, out=self.flag.view(bool))
        self.a[:] = 0.0
        K.scatter_cut(X.indptr, X.indices, X.values, 0.0, self.coef_cut, self.cw, self.flag, self.zero,
                      False, self.nb, self.buf, self.a)
        return self.a


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None):
    """Train a linear ranking function on relevance labels ``y`` and the
    queries ``X.qid`` (a Chunk in memory); see the module doc."""
    if tuple(class_cost) != (1.0, 1.0):
        raise ParameterError("-w (class weights) applies to classification, not ranking")
    if monitor is not None:
        raise ParameterError("--trace does not trace ranking yet")
    if is_streamed(X):
        raise ParameterError("--task p trains in memory; it cannot be combined with --stream")
    check_params(params, class_cost)
    t0 = time.perf_counter()
    y = np.ascontiguousarray(y, np.float64)
    if len(y) != X.n_rows:
        raise ValueError("y and X have different numbers of rows")
    if X.nnz and int(X.indices.max()) >= n_features:
        raise ValueError("feature index beyond n_features")
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
