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
