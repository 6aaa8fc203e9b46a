"""Plain-NumPy twin of svmtrain/solvers/tron/_newton_kernels.py (the primal
Newton method of -s tron --task c): the same steps on a dense matrix whose
last column is the constant feature B."""
import numpy as np

ETA, MAX_LINESEARCH, ALPHA_PCG, EPS_CG = 0.01, 20, 0.01, 0.5
CONVERGED, MAX_ITER, LINE_SEARCH_FAILED, NO_PROGRESS = 0, 1, 2, 3


def dense(indptr, indices, values, d, B):
    """The rows as a dense (n, d + 1) array, the last column B."""
    n = len(indptr) - 1
    X = np.zeros((n, d + 1))
    for i in range(n):
        X[i, indices[indptr[i]:indptr[i + 1]]] = values[indptr[i]:indptr[i + 1]]
    X[:, d] = B
    return X


def losses(loss, m):
    """Each row's loss at margins m (0: squared hinge, 1: logistic)."""
    if loss == 0:
        return np.maximum(1.0 - m, 0.0) ** 2
    return np.maximum(-m, 0.0) + np.log1p(np.exp(-np.abs(m)))


def terms(loss, y, cost, z):
    """(u, D) of the module doc at z = X w."""
    m = y * z
    if loss == 0:
        act = m < 1.0
        return np.where(act, 2.0 * cost * (z - y), 0.0), np.where(act, 2.0 * cost, 0.0)
    sigma = 1.0 / (1.0 + np.exp(-m))
    return cost * y * (sigma - 1.0), cost * sigma * (1.0 - sigma)


def grad_norm_at_zero(X, y, cost, loss):
    k = 0.5 if loss == 1 else 2.0
    return float(np.linalg.norm(X.T @ (-k * cost * y)))


def pcg(X, D, g, M, active):
    """Preconditioned CG with the quadratic-model stop; (s, X s summed over
    the CG steps on the active rows (0 elsewhere), CG steps)."""
    nv = len(g)
    s = np.zeros(nv)
    xs = np.zeros(len(D))
    r = -g.copy()
    zv = r / M
    d = zv.copy()
    zTr = zv @ r
    cgtol = min(EPS_CG, np.sqrt(np.sqrt(zTr)))
    Q = 0.0
    steps = 0
    while steps < max(nv, 5):
        steps += 1
        xd = np.where(active, X @ d, 0.0)
        Hd = d + X.T @ (D * xd)
        dHd = d @ Hd
        if dHd <= 1e-16:
            break
        alpha = zTr / dHd
        s += alpha * d
        r -= alpha * Hd
        xs += alpha * xd
        newQ = -0.5 * (s @ r - s @ g)
        Qdiff = newQ - Q
        if not (newQ <= 0 and Qdiff <= 0) or steps * Qdiff >= cgtol * newQ:
            break
        Q = newQ
        zv = r / M
        znew = zv @ r
        d = zv + (znew / zTr) * d
        zTr = znew
    return s, xs, steps


def newton(X, y, cost, loss, w, eps, gnorm0, max_iter):
    """The twin of newton_run: (w, status, iterations, CG steps, f, |grad f|)."""
    w = np.array(w, np.float64)
    z = X @ w
    wTw = w @ w
    f = cost @ losses(loss, y * z) + 0.5 * wTw
    u, D = terms(loss, y, cost, z)
    g = w + X.T @ u
    if np.linalg.norm(g) <= eps * gnorm0:
        return w, CONVERGED, 0, 0, f, np.linalg.norm(g)
    it = cg = 0
    status = MAX_ITER
    while it < max_iter:
        M = (1.0 - ALPHA_PCG) + ALPHA_PCG * (1.0 + (X * X).T @ D)
        active = (u != 0) | (D != 0) if loss == 0 else np.ones(len(y), bool)
        s, xs, steps = pcg(X, D, g, M, active)
        cg += steps
        xs = np.where(active, xs, X @ s)
        sTs, wTs, gTs = s @ s, s @ w, s @ g
        f_old, a = f, 1.0
        for _ in range(MAX_LINESEARCH):
            f = cost @ losses(loss, y * (z + a * xs)) + 0.5 * (a * a * sTs + wTw) + a * wTs
            if f - f_old <= ETA * a * gTs:
                break
            a *= 0.5
        else:
            return w, LINE_SEARCH_FAILED, it + 1, cg, f_old, np.linalg.norm(g)
        it += 1
        z = z + a * xs
        w = w + a * s
        wTw += a * a * sTs + 2.0 * a * wTs
        u, D = terms(loss, y, cost, z)
        g = w + X.T @ u
        if np.linalg.norm(g) <= eps * gnorm0:
            return w, CONVERGED, it, cg, f, np.linalg.norm(g)
        if abs(f_old - f) <= 1e-12 * abs(f):
            return w, NO_PROGRESS, it, cg, f, np.linalg.norm(g)
    return w, status, it, cg, f, np.linalg.norm(g)
