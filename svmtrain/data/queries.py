"""Queries of a ranking problem (``--task p``) and its measures.

A ranking training or test set is rows with a relevance label and a
``qid:``; only pairs of rows of the same query count. Rows of a query need
not be contiguous in the file: :class:`QueryGroups` groups them by qid with
a stable sort (``order``), and never moves the data itself.

The measures (svm-predict and -v on a ranking model):

* pair accuracy: the fraction of the pairs (i, j) of one query with
  y_i > y_j that the scores order correctly, s_i > s_j (a tie s_i == s_j
  counts as wrong);
* NDCG@10: per query, DCG@10 / ideal DCG@10 with gain 2^y - 1 and discount
  1 / log2(rank + 1) (rank 1 = highest score; equal scores in file order),
  averaged over the queries whose ideal DCG is > 0 (queries with no
  positive gain are skipped).
"""
from dataclasses import dataclass, field

import numpy as np

from .._numba import options as _opts
from . import _query_kernels as K

NDCG_AT = 10


@dataclass
class QueryGroups:
    """The query structure of n rows (see the module doc and _ranking_kernels).

    ``order``: row indices grouped by qid (stable: file order within a
    query); ``qptr``: query q is ``order[qptr[q]:qptr[q+1]]``; ``lev``: each
    row's relevance level within its query (dense, 0 = lowest label);
    ``lptr``: the level-scratch offsets; ``q_pairs``: the pairs
    (y_i > y_j) of each query; ``qids``: each query's qid.
    """
    order: np.ndarray
    qptr: np.ndarray
    lev: np.ndarray
    lptr: np.ndarray
    q_pairs: np.ndarray
    qids: np.ndarray
    _scratch: dict = field(default=None, repr=False)

    @property
    def n_queries(self):
        return len(self.qptr) - 1

    @property
    def n_rows(self):
        return len(self.order)

    @property
    def n_pairs(self):
        return int(self.q_pairs.sum())

    @classmethod
    def build(cls, qid, labels):
        """Group rows by ``qid`` (int64[n]) with relevance ``labels`` (float64[n])."""
        qid = np.asarray(qid, np.int64)
        labels = np.asarray(labels, np.float64)
        n = len(qid)
        order = np.argsort(qid, kind="stable")
        sq = qid[order]
        starts = np.flatnonzero(np.r_[True, sq[1:] != sq[:-1]]) if n else np.zeros(0, np.int64)
        qptr = np.r_[starts, n].astype(np.int64)
        sizes = np.diff(qptr)
        group = np.empty(n, np.int64)
        group[order] = np.repeat(np.arange(len(sizes)), sizes)
        by_label = np.lexsort((labels, group))          # by query, then label
        g2, l2 = group[by_label], labels[by_label]
        new = np.r_[True, (g2[1:] != g2[:-1]) | (l2[1:] != l2[:-1])] if n else np.zeros(0, bool)
        ids = np.cumsum(new) - 1                         # dense level id over all queries
        first = ids[qptr[:-1]] if n else np.zeros(0, np.int64)
        lev = np.empty(n, np.int64)
        lev[by_label] = ids - np.repeat(first, sizes)
        n_levels = (ids[qptr[1:] - 1] - first + 1) if n else np.zeros(0, np.int64)
        lptr = np.r_[0, np.cumsum(n_levels + 1)].astype(np.int64)
        # pairs: each run of equal labels pairs with the rows of lower label before it
        run = np.flatnonzero(new)
        run_len = np.diff(np.r_[run, n])
        below = run - qptr[g2[run]] if n else run
        q_pairs = np.bincount(g2[run], weights=run_len * below, minlength=len(sizes)).astype(np.int64)
        return cls(order=order.astype(np.int64), qptr=qptr, lev=lev, lptr=lptr, q_pairs=q_pairs,
                   qids=sq[qptr[:-1]] if n else np.zeros(0, np.int64))

    def pair_pass(self, scores, margin=1.0, strict=True):
        """The pairs violated at ``margin`` by ``scores`` (see _ranking_kernels):
        (coef, violated, loss, per-query violated, per-query loss), where
        coef[i] = #violated pairs with i the preferred row - #violated pairs
        with i the worse row, and loss = sum over violated pairs of
        (margin - s_i + s_j). ``coef`` is scratch owned by this object, valid
        until the next call. O(n log n) per call; no pair is materialised."""
        n, Q = self.n_rows, self.n_queries
        if self._scratch is None or "coef" not in self._scratch:
            self._scratch = dict(self._scratch or {}, coef=np.zeros(n), keys=np.empty(n), perm=np.empty(n, np.int64),
                                 fu=np.zeros(self.lptr[-1], np.int64), fv=np.zeros(self.lptr[-1], np.int64),
                                 low=np.zeros(self.lptr[-1], np.int64),
                                 q_viol=np.zeros(Q, np.int64), q_loss=np.zeros(Q))
        sc = self._scratch
        run = K.pair_pass_parallel if n >= _opts.PARALLEL_MIN_NNZ // 4 and Q > 1 else K.pair_pass_serial
        run(np.ascontiguousarray(scores, np.float64), self.lev, self.order, self.qptr, self.lptr,
            float(margin), bool(strict), sc["coef"], sc["keys"], sc["perm"], sc["fu"], sc["fv"],
            sc["low"], sc["q_viol"], sc["q_loss"])
        return sc["coef"], int(sc["q_viol"].sum()), float(sc["q_loss"].sum()), sc["q_viol"], sc["q_loss"]

    def pair_sums(self, scores, values, margin=1.0):
        """Per row k, over the pairs violated at ``margin`` by ``scores``
        (s_j + margin > s_i for the pair (i, j), y_i > y_j): (cp, sp, cm, sm)
        = the count and the sum of ``values`` of k's lower partners j, the
        count and the sum of ``values`` of its higher partners i. Float
        arrays owned by this object, valid until the next call; O(n log n),
        no pair is materialised."""
        n, Q = self.n_rows, self.n_queries
        if self._scratch is None or "cp" not in self._scratch:
            L = self.lptr[-1]
            self._scratch = dict(self._scratch or {}, sums_keys=np.empty(n), sums_perm=np.empty(n, np.int64),
                                 sums_fu=np.zeros(L, np.int64), sums_fv=np.zeros(L, np.int64),
                                 sums_low=np.zeros(L, np.int64), tu=np.zeros(L), tv=np.zeros(L), lowt=np.zeros(L),
                                 cp=np.zeros(n), sp=np.zeros(n), cm=np.zeros(n), sm=np.zeros(n))
        sc = self._scratch
        run = K.pair_sums_parallel if n >= _opts.PARALLEL_MIN_NNZ // 4 and Q > 1 else K.pair_sums_serial
        run(np.ascontiguousarray(scores, np.float64), np.ascontiguousarray(values, np.float64), self.lev,
            self.order, self.qptr, self.lptr, float(margin), sc["sums_keys"], sc["sums_perm"], sc["sums_fu"],
            sc["sums_fv"], sc["sums_low"], sc["tu"], sc["tv"], sc["lowt"], sc["cp"], sc["sp"], sc["cm"], sc["sm"])
        return sc["cp"], sc["sp"], sc["cm"], sc["sm"]

    def misordered(self, scores):
        """int64[Q]: the pairs (y_i > y_j) of each query with s_i <= s_j."""
        return self.pair_pass(scores, margin=0.0, strict=False)[3].copy()


@dataclass
class RankingSummary:
    """svm-predict's and -v's measures of a ranking model (see the module doc)."""
    correct: int = 0
    pairs: int = 0
    ndcg: float = 0.0
    ndcg_queries: int = 0
    queries: int = 0
    total: int = 0

    @property
    def pair_accuracy(self):
        return self.correct / self.pairs if self.pairs else 0.0

    def line(self, prefix=""):
        """E.g. 'Pairwise accuracy = 81.3% (1234/1518)' and 'NDCG@10 = 0.7213 (52 queries)'."""
        return (f"{prefix}Pairwise accuracy = {100.0 * self.pair_accuracy:g}% ({self.correct}/{self.pairs})\n"
                f"{prefix}NDCG@{NDCG_AT} = {self.ndcg:.6g} ({self.ndcg_queries} of {self.queries} queries)")


def ndcg_per_query(groups, scores, labels, at=NDCG_AT):
    """(NDCG@at of each query, mask of the queries with ideal DCG > 0)."""
    n, Q = groups.n_rows, groups.n_queries
    if n == 0:
        return np.zeros(0), np.zeros(0, bool)
    group = np.empty(n, np.int64)
    group[groups.order] = np.repeat(np.arange(Q), np.diff(groups.qptr))
    gain = np.exp2(np.asarray(labels, np.float64)) - 1.0
    rows = np.arange(n)

    def dcg(key):
        o = np.lexsort((rows, -key, group))         # by query, key descending, then file order
        rank = np.arange(n) - groups.qptr[group[o]]
        top = rank < at
        return np.bincount(group[o][top], weights=gain[o][top] / np.log2(rank[top] + 2.0), minlength=Q)

    ideal = dcg(np.asarray(labels, np.float64))
    got = dcg(np.asarray(scores, np.float64))
    ok = ideal > 0
    return np.where(ok, got / np.where(ok, ideal, 1.0), 0.0), ok


def ranking_summary(scores, labels, qid):
    """The RankingSummary of ``scores`` against relevance ``labels`` with queries ``qid``."""
    labels = np.asarray(labels, np.float64)
    groups = QueryGroups.build(qid, labels)
    wrong = groups.misordered(scores)
    nd, ok = ndcg_per_query(groups, scores, labels)
    return RankingSummary(correct=int(groups.n_pairs - wrong.sum()), pairs=groups.n_pairs,
                          ndcg=float(nd[ok].mean()) if ok.any() else 0.0, ndcg_queries=int(ok.sum()),
                          queries=groups.n_queries, total=len(labels))
