"""Plain-NumPy twin of the dcd kernel, for tests only: slow, no shrinking.

Dual coordinate descent of Hsieh et al. (2008), Algorithm 3, on a dense
matrix: every outer iteration visits all rows in a random order and stops
when the projected gradient's range max PG - min PG is <= eps.
"""
import numpy as np


def naive_dcd(X, y, C_pos, C_neg, loss="hinge", B=-1.0, eps=1e-8, max_iter=100000, seed=0):
    """Return (w, alpha, n_iter); w has a last entry for the bias feature when B >= 0."""
    X = np.asarray(X, np.float64)
    if B >= 0:
        X = np.hstack([X, np.full((X.shape[0], 1), float(B))])
    y = np.asarray(y, np.float64)
    n = X.shape[0]
    C = np.where(y > 0, C_pos, C_neg)
    if loss == "hinge":
        U, D = C, np.zeros(n)
    else:
        U, D = np.full(n, np.inf), 0.5 / C
    Qii = np.einsum("ij,ij->i", X, X) + D
    alpha = np.zeros(n)
    w = np.zeros(X.shape[1])
    rng = np.random.default_rng(seed)
    for it in range(1, max_iter + 1):
        pg_max, pg_min = -np.inf, np.inf
        for i in rng.permutation(n):
            G = y[i] * (X[i] @ w) - 1.0 + D[i] * alpha[i]
            if alpha[i] == 0.0:
                PG = min(G, 0.0)
            elif alpha[i] == U[i]:
                PG = max(G, 0.0)
            else:
                PG = G
            pg_max, pg_min = max(pg_max, PG), min(pg_min, PG)
            if PG != 0.0:
                old = alpha[i]
                step = -G / Qii[i] if Qii[i] > 0 else np.copysign(np.inf, -G)   # empty row, hinge
                alpha[i] = min(max(old + step, 0.0), U[i])
                w += (alpha[i] - old) * y[i] * X[i]
        if pg_max - pg_min <= eps:
            break
    return w, alpha, it


def primal_C(X, y, w, C_pos, C_neg, loss="hinge", B=-1.0):
    """1/2 |w|^2 + sum_i C_i loss_i for a dense X (w includes the bias weight when B >= 0)."""
    X = np.asarray(X, np.float64)
    if B >= 0:
        X = np.hstack([X, np.full((X.shape[0], 1), float(B))])
    m = np.maximum(0.0, 1.0 - y * (X @ w))
    if loss != "hinge":
        m = m * m
    return 0.5 * float(w @ w) + float(np.sum(np.where(y > 0, C_pos, C_neg) * m))
