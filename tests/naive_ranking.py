"""Brute-force NumPy twins of the ranking kernels: every pair enumerated."""
import numpy as np


def pairs(qid, labels):
    """(i, j) index arrays of all pairs of one query with labels[i] > labels[j]."""
    qid, labels = np.asarray(qid), np.asarray(labels)
    same = qid[:, None] == qid[None, :]
    better = labels[:, None] > labels[None, :]
    return np.nonzero(same & better)


def pair_pass(scores, qid, labels, margin=1.0, strict=True):
    """(coef, violated, loss) of the pairwise hinge at ``margin``, pair by pair."""
    s = np.asarray(scores, np.float64)
    i, j = pairs(qid, labels)
    viol = (s[j] + margin > s[i]) if strict else (s[j] + margin >= s[i])
    i, j = i[viol], j[viol]
    coef = np.zeros(len(s))
    np.add.at(coef, i, 1.0)
    np.add.at(coef, j, -1.0)
    return coef, len(i), float(np.sum(margin - s[i] + s[j]))


def ndcg(scores, labels, qid, at=10):
    """Mean NDCG@at over the queries with a positive ideal DCG, query by query."""
    vals = []
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        g = 2.0 ** labels[rows] - 1.0
        disc = 1.0 / np.log2(np.arange(2, len(rows) + 2))
        by_s = np.lexsort((np.arange(len(rows)), -scores[rows]))
        ideal = np.sort(g)[::-1][:at] @ disc[:at]
        if ideal > 0:
            vals.append((g[by_s][:at] @ disc[:at][:len(by_s[:at])]) / ideal)
    return float(np.mean(vals)) if vals else 0.0


def pair_sums(scores, values, qid, labels, margin=1.0):
    """(cp, sp, cm, sm) of QueryGroups.pair_sums, pair by pair: per row, the
    count and the sum of ``values`` of its lower / higher partners over the
    pairs with s_j + margin > s_i."""
    s, t = np.asarray(scores, np.float64), np.asarray(values, np.float64)
    i, j = pairs(qid, labels)
    act = s[j] + margin > s[i]
    i, j = i[act], j[act]
    n = len(s)
    cp, sp, cm, sm = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    np.add.at(cp, i, 1.0)
    np.add.at(sp, i, t[j])
    np.add.at(cm, j, 1.0)
    np.add.at(sm, j, t[i])
    return cp, sp, cm, sm


def squared_pair_objective(A, qid, labels, w, cost):
    """1/2 |w|^2 + cost * sum over pairs of max(0, 1 - w.(x_i - x_j))^2, pair by pair (A dense)."""
    i, j = pairs(qid, labels)
    return 0.5 * w @ w + cost * float((np.maximum(0.0, 1.0 - (A[i] - A[j]) @ w) ** 2).sum())
