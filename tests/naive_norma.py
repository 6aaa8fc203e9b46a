"""A plain NumPy twin of NORMA's steps (svmtrain/solvers/kernel/_norma_kernels.py).

An explicit list of (row, alpha) terms: every step evaluates f over all
terms with the full kernel matrix, multiplies every alpha by
1 - eta lambda, appends a violator's term and pops the oldest beyond the
budget. No scale factor, no ring buffer.
"""
import numpy as np


def norma(Kfull, y, order, lam, t0, budget=None, bias=True):
    """(terms [(row, alpha)] oldest first, b, violators in order) after one step per entry of ``order``.

    ``Kfull[i, j]`` = K(x_i, x_j); step t (1-based) uses eta = 1/(lambda (t + t0));
    ``budget`` None keeps every term.
    """
    terms = []
    b = 0.0
    violators = []
    for s, i in enumerate(order):
        eta = 1.0 / (lam * (s + 1 + t0))
        f = sum(alpha * Kfull[row, i] for row, alpha in terms)
        terms = [(row, (1.0 - eta * lam) * alpha) for row, alpha in terms]
        if y[i] * (f + b) < 1.0:
            terms.append((int(i), eta * y[i]))
            violators.append(int(i))
            if bias:
                b += eta * y[i]
            if budget is not None and len(terms) > budget:
                terms.pop(0)
    return terms, b, violators


def objective(Kfull, y, terms, b, lam):
    """lambda/2 |f|^2 + mean hinge of f = sum alpha K(x_row, .) + b."""
    rows = np.array([r for r, _ in terms], np.int64)
    alphas = np.array([a for _, a in terms])
    f = alphas @ Kfull[rows] if len(rows) else np.zeros(len(y))
    norm2 = alphas @ Kfull[np.ix_(rows, rows)] @ alphas if len(rows) else 0.0
    return 0.5 * lam * norm2 + np.maximum(0.0, 1.0 - y * (f + b)).mean()
