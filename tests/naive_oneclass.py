"""Plain-NumPy twin of the one-class kernel, for tests only: slow, no shrinking.

The same dual,  min 1/2 alpha^T Q alpha,  0 <= alpha_i <= 1,  sum alpha = nu l,
Q = X X^T dense, solved by the textbook SMO of LIBSVM's first working-set
rule: each step takes the most violating pair (the smallest gradient among
alpha < 1, the largest among alpha > 0) and solves it exactly. It stops
when the violation max - min of -G falls below ``tol``.
"""
import numpy as np


def naive_oneclass(X, nu, tol=1e-12, max_steps=1000000):
    """Return (alpha, w, rho): the dual solution, w = X^T alpha, and rho as the
    mean gradient of the free alphas (else the midpoint of the bounds)."""
    X = np.asarray(X, np.float64)
    n = X.shape[0]
    Q = X @ X.T
    alpha = np.zeros(n)
    full = int(nu * n)
    alpha[:full] = 1.0
    if full < n:
        alpha[full] = nu * n - full
    G = Q @ alpha
    for _ in range(max_steps):
        up = np.flatnonzero(alpha < 1.0)       # may increase
        low = np.flatnonzero(alpha > 0.0)      # may decrease
        i = up[np.argmin(G[up])]
        j = low[np.argmax(G[low])]
        if G[j] - G[i] < tol:
            break
        curv = max(Q[i, i] + Q[j, j] - 2.0 * Q[i, j], 1e-12)
        s = alpha[i] + alpha[j]
        ai = min(max(alpha[i] + (G[j] - G[i]) / curv, max(0.0, s - 1.0)), min(1.0, s))
        di, dj = ai - alpha[i], (s - ai) - alpha[j]
        alpha[i], alpha[j] = ai, s - ai
        G += di * Q[:, i] + dj * Q[:, j]
    w = X.T @ alpha
    g = X @ w
    free = (alpha > 0.0) & (alpha < 1.0)
    if free.any():
        rho = float(g[free].mean())
    else:
        rho = 0.5 * (float(g[alpha == 1.0].max()) + float(g[alpha == 0.0].min()))
    return alpha, w, rho
