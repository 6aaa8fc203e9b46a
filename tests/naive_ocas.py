"""Plain NumPy twins of the kernels in ``svmtrain.solvers.ocas._ocas_kernels``.

Each twin computes the same quantity the obvious way (dense arrays, full
sorts, brute force) so the tests can compare the two. Nothing here is
fast; keep the problems small.
"""
import itertools

import numpy as np


def dense(indptr, indices, values, n_features, B):
    """The CSR rows as a dense (n, n_features + 1) array, last column B."""
    n = len(indptr) - 1
    X = np.zeros((n, n_features + 1))
    for i in range(n):
        sl = slice(indptr[i], indptr[i + 1])
        X[i, indices[sl]] += values[sl]
    X[:, -1] = B
    return X


def primal(Xd, y, cw, w):
    """F(w) = 1/2 |w|^2 + sum_i c_i max(0, 1 - y_i w.x_i) (C-form)."""
    return 0.5 * w @ w + np.sum(cw * np.maximum(0.0, 1.0 - y * (Xd @ w)))


def update_outputs(y, cw, out_b, out_d, t, mu, prev):
    """Twin of update_outputs: returns (out_b_new, viol, loss, nerr, nv, bsum, nch)."""
    ob = out_b + t * out_d
    m = y * ob
    loss = np.sum(cw * np.maximum(0.0, 1.0 - m))
    nerr = int(np.sum(m <= 0))
    out_c = out_b + out_d                   # outputs of w_c = w_b + d
    z = y * ((1 - mu) * ob + mu * out_c)    # the cut point (1-mu) w_b_new + mu w_c
    viol = (z < 1).astype(np.int8)
    return ob, viol, loss, nerr, int(viol.sum()), float(np.sum(cw[viol == 1])), int(np.sum(viol != prev))


def loss_at(y, cw, out_b, out_d, t):
    return float(np.sum(cw * np.maximum(0.0, 1.0 - y * (out_b + t * out_d))))


def scatter_cut(Xd, y, cw, viol, prev, delta, init):
    """Twin of scatter_cut: init + sum_i coef_i x_i."""
    coef = cw * y * (viol.astype(float) - (prev.astype(float) if delta else 0.0))
    return init + coef @ Xd


def gram_row(A, k, slot, a):
    """(A with row slot = a, the dots of its first k rows with a)."""
    A = A.copy()
    A[slot] = a
    return A, A[:k] @ a


def axpy_sqnorm(w, t, v):
    w = w + t * v
    return w, float(w @ w)


def combine_cuts(A, alpha, k, w_b):
    """(w_c, w_d, |w_c|^2, |w_d|^2, w_b.w_d) with w_d = w_c - w_b."""
    w_c = alpha[:k] @ A[:k]
    w_d = w_c - w_b
    return w_c, w_d, float(w_c @ w_c), float(w_d @ w_d), float(w_b @ w_d)


def qp_value(H, b, alpha):
    return 0.5 * alpha @ H @ alpha - b @ alpha


def qp_bruteforce(H, b, Cb):
    """min 1/2 a'Ha - b'a, a >= 0, sum a <= Cb, by enumerating supports.

    For each support S and each state of the sum constraint it solves the
    KKT system of the face and keeps the feasible point with the lowest
    objective (exact for small k; singular faces use least squares)."""
    k = len(b)
    best, best_a = 0.0, np.zeros(k)      # alpha = 0 is feasible
    for r in range(1, k + 1):
        for S in itertools.combinations(range(k), r):
            S = list(S)
            HS, bS = H[np.ix_(S, S)], b[S]
            cands = [np.linalg.lstsq(HS, bS, rcond=None)[0]]
            M = np.zeros((r + 1, r + 1))
            M[:r, :r] = HS
            M[:r, r] = M[r, :r] = 1.0
            cands.append(np.linalg.lstsq(M, np.r_[bS, Cb], rcond=None)[0][:r])
            for z in cands:
                if np.all(z >= -1e-12) and z.sum() <= Cb * (1 + 1e-12):
                    a = np.zeros(k)
                    a[S] = np.maximum(z, 0.0)
                    if a.sum() > Cb:
                        a *= Cb / a.sum()
                    f = qp_value(H, b, a)
                    if f < best:
                        best, best_a = f, a
    return best, best_a


def qp_scipy(H, b, Cb):
    """The same QP by scipy.optimize (SLSQP) for a second opinion."""
    from scipy.optimize import minimize

    k = len(b)
    res = minimize(lambda a: qp_value(H, b, a), np.full(k, Cb / (2 * k)),
                   jac=lambda a: H @ a - b, method="SLSQP",
                   bounds=[(0, None)] * k,
                   constraints=[{"type": "ineq", "fun": lambda a: Cb - a.sum(),
                                 "jac": lambda a: -np.ones(k)}],
                   options={"ftol": 1e-14, "maxiter": 1000})
    return res.fun, res.x


def line_phi(y, cw, out_b, out_d, w_b, w_d, t):
    """phi(t) = F(w_b + t w_d) from the outputs of w_b and w_d (t may be an array)."""
    t = np.atleast_1d(np.asarray(t, float))
    reg = 0.5 * np.array([(w_b + s * w_d) @ (w_b + s * w_d) for s in t])
    o = out_b[None, :] + t[:, None] * out_d[None, :]
    return reg + np.sum(cw[None, :] * np.maximum(0.0, 1.0 - y[None, :] * o), axis=1)


def line_search(y, cw, out_b, out_d, qa, qb):
    """Twin of line_search: sort every breakpoint and walk them.

    phi'(t) = qa t + qb - sum_{i active at t} c_i r_i with p_i = 1 - y_i out_b_i,
    r_i = y_i out_d_i; example i is active where p_i - t r_i > 0."""
    p = 1.0 - y * out_b
    r = y * out_d
    act = ((r > 0) & (p > 0)) | ((r < 0) & (p >= 0))
    G = qb - np.sum(cw[act] * r[act])
    bp = ((r > 0) & (p > 0)) | ((r < 0) & (p < 0))
    if G >= 0:
        return 0.0
    t = p[bp] / r[bp]
    w = cw[bp] * np.abs(r[bp])
    order = np.argsort(t, kind="stable")
    lo = 0.0
    for q in order:
        if qa * t[q] + G >= 0:
            return max(-G / qa, lo)
        G += w[q]
        lo = t[q]
    return max(-G / qa, lo)


def line_case(rng, n, ties=False):
    """A random line-search problem (y, cw, out_b, out_d, w_b, w_d); with
    ``ties`` many identical breakpoints, zero slopes and points on the margin."""
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    cw = np.where(y > 0, 1.3, 0.8)
    out_b = rng.normal(size=n) + 0.3 * y
    out_d = rng.normal(size=n) * 0.5
    if ties:                            # many identical breakpoints, r = 0, p = 0
        h = n // 2
        out_d[:h] = (1.0 - y[:h] * out_b[:h]) * y[:h] / 0.75
        out_d[h:h + 20] = 0.0
        out_b[-10:] = y[-10:]
    w_b = rng.normal(size=6)
    w_d = rng.normal(size=6) * 2
    return y, cw, out_b, out_d, w_b, w_d


def combine_rows(Xt, G, alpha, k, g_b, s0, w0):
    """Twin of combine_rows in the dense weight space (Xt: the rows with the
    constant feature): (g_d, out_d, |w_c|^2, |w_d|^2, w_b.w_d), where
    w_c = Xt' (alpha G) and w_b = s0 w0 + Xt' g_b."""
    g_c = alpha[:k] @ G[:k]
    w_c = Xt.T @ g_c
    w_b = s0 * w0 + Xt.T @ g_b
    w_d = w_c - w_b
    return g_c - g_b, Xt @ w_d, float(w_c @ w_c), float(w_d @ w_d), float(w_b @ w_d)


def qp_pair_steps(H, b, alpha, k, Cb, tol_abs, tol_rel, max_steps):
    """qp_simplex without face solves and Newton polishes (libocas's rule),
    written out in Python, operation for operation: returns (f, gap, steps)
    and updates alpha in place."""
    g = [-b[j] for j in range(k)]
    asum = 0.0
    for col in range(k):
        if alpha[col] != 0.0:
            asum += alpha[col]
            for j in range(k):
                g[j] += H[j, col] * alpha[col]
    steps = 0
    while True:
        ag = ab = gi = 0.0
        i = k
        for j in range(k):
            ag += alpha[j] * g[j]
            ab += alpha[j] * b[j]
            if g[j] < gi:
                gi, i = g[j], j
        f = 0.5 * (ag + ab) - ab
        gap = ag - Cb * gi
        if gap <= tol_abs or gap <= tol_rel * abs(f) or steps >= max_steps:
            return f, gap, steps
        slack = Cb - asum

        def entry(p, q):          # H with the slack coordinate k (zero row and column)
            return H[p, q] if p < k and q < k else 0.0

        best, jb = -1.0, -1
        for j in range(k + 1):
            if (alpha[j] <= 0.0) if j < k else (slack <= 0.0):
                continue
            diff = (g[j] if j < k else 0.0) - gi
            if diff <= 0.0 or j == i:
                continue
            eta = _eta(entry(i, i), entry(j, j), entry(i, j))
            if diff * diff / eta > best:
                best, jb = diff * diff / eta, j
        if jb < 0:
            return f, gap, steps
        j = jb
        avail = alpha[j] if j < k else slack
        d = min(((g[j] if j < k else 0.0) - gi) / _eta(entry(i, i), entry(j, j), entry(i, j)), avail)
        if i < k:
            alpha[i] += d
            for q in range(k):
                g[q] += d * H[q, i]
        else:
            asum -= d
        if j < k:
            alpha[j] = 0.0 if d == avail else alpha[j] - d
            for q in range(k):
                g[q] -= d * H[q, j]
        else:
            asum += d
        steps += 1


def _eta(Hii, Hjj, Hij):
    eta = Hii + Hjj - 2.0 * Hij
    if eta < 1e-12 * (Hii + Hjj) or eta <= 0.0:
        eta = max(1e-12 * (Hii + Hjj), 1e-300)
    return eta
