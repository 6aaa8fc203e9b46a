"""Plain-NumPy twins of the L1 solvers' kernels (svmtrain.solvers.l1._l1_kernels), for tests only.

Dense matrices, no shrinking, Python loops over the features: slow, and
independent of the kernels' code. ``naive_glibc_rand`` is glibc's TYPE_3
generator written from its recurrence (r_i = r_{i-31} + r_{i-3}, the
output r_i >> 1 from i = 344 on). ``naive_cdn`` and ``naive_glmnet`` run
the two methods of the papers (CDN: Yuan et al. 2010; newGLMNET: Yuan, Ho
and Lin 2012) to a tolerance; ``proximal_optimum`` finds the optimum of
the same problems by accelerated proximal gradient (FISTA), a third
method, to check both.
"""
import numpy as np


def naive_glibc_rand(seed, count):
    """The first ``count`` outputs of glibc's rand() after srand(seed)."""
    seed &= 0xFFFFFFFF
    seed = seed or 1
    r = [seed if seed < 2**31 else seed - 2**32]
    for i in range(1, 31):
        r.append((16807 * r[i - 1]) % 2147483647)
    for i in range(31, 34):
        r.append(r[i - 31])
    out = []
    i = 34
    while len(out) < count:
        r.append((r[i - 31] + r[i - 3]) & 0xFFFFFFFF)
        if i >= 344:
            out.append(r[i] >> 1)
        i += 1
    return out


def dense(indptr, indices, values, n_features):
    """The dense matrix of CSR arrays."""
    A = np.zeros((len(indptr) - 1, n_features))
    for i in range(len(indptr) - 1):
        A[i, indices[indptr[i]:indptr[i + 1]]] = values[indptr[i]:indptr[i + 1]]
    return A


def with_constant(A, const, value):
    return np.hstack([A, np.full((A.shape[0], 1), value)]) if const else A


def objective(A, y, cost, w, loss, free_last=False):
    """sum |w_j| (the last one not, when free) + sum_i C_i loss(y_i w.x_i)."""
    z = y * (A @ w)
    L = np.maximum(0.0, 1.0 - z) ** 2 if loss == "squared-hinge" else np.logaddexp(0.0, -z)
    reg = np.abs(w[:-1]).sum() if free_last else np.abs(w).sum()
    return float(reg + cost @ L)


def loss_gradient(A, y, cost, w, loss):
    z = y * (A @ w)
    if loss == "squared-hinge":
        return A.T @ (-2.0 * cost * y * np.maximum(0.0, 1.0 - z))
    return A.T @ (-cost * y / (1.0 + np.exp(z)))


def violations(A, y, cost, w, loss, free_last=False):
    """The violation of the optimality conditions per coordinate."""
    G = loss_gradient(A, y, cost, w, loss)
    v = np.where(w > 0, np.abs(G + 1), np.where(w < 0, np.abs(G - 1), np.maximum(np.abs(G) - 1, 0)))
    if free_last:
        v[-1] = abs(G[-1])
    return v


def _soft(wj, G, H):
    """argmin_d G d + H/2 d^2 + |wj + d|."""
    if G + 1 < H * wj:
        return -(G + 1) / H
    if G - 1 > H * wj:
        return -(G - 1) / H
    return -wj


def naive_cdn(A, y, cost, eps, max_iter=10000, seed=0, free_last=False):
    """CDN on the squared hinge: for each feature in a random order, the
    Newton step of the one-variable problem and a backtracking line search
    with sufficient decrease 0.01; stops when sum of violations <= eps x
    the first pass's. Returns w."""
    n, m = A.shape
    w = np.zeros(m)
    b = np.ones(n)                  # 1 - y_i w.x_i
    YA = y[:, None] * A
    rng = np.random.default_rng(seed)
    first = None
    for _ in range(max_iter):
        total = violations(A, y, cost, w, "squared-hinge", free_last).sum()
        first = total if first is None else first
        if total <= eps * first:
            break
        for j in rng.permutation(m):
            x = YA[:, j]
            active = b > 0
            G = -2.0 * np.sum(cost[active] * x[active] * b[active])
            H = max(2.0 * np.sum(cost[active] * x[active] ** 2), 1e-12)
            free = free_last and j == m - 1
            d = -G / H if free else _soft(w[j], G, H)
            if abs(d) < 1e-12:
                continue
            loss0 = cost @ np.maximum(b, 0.0) ** 2
            delta = G * d + (0.0 if free else abs(w[j] + d) - abs(w[j]))
            for _ls in range(30):
                reg = 0.0 if free else abs(w[j] + d) - abs(w[j])
                if reg + cost @ np.maximum(b - d * x, 0.0) ** 2 - loss0 <= 0.01 * delta:
                    w[j] += d
                    b -= d * x
                    break
                d *= 0.5
                delta *= 0.5
    return w


def naive_glmnet(A, y, cost, eps, max_newton=100, inner=50, seed=0, free_last=False):
    """newGLMNET on the logistic loss: the quadratic model at w (gradient,
    diagonal D_i = C_i tau_i (1 - tau_i)), solved by ``inner`` passes of
    coordinate descent, then the step 2^-k with sufficient decrease 0.01;
    stops when the sum of violations <= eps x the first. Returns w."""
    n, m = A.shape
    w = np.zeros(m)
    rng = np.random.default_rng(seed)
    first = None
    for _ in range(max_newton):
        total = violations(A, y, cost, w, "log", free_last).sum()
        first = total if first is None else first
        if total <= eps * first:
            break
        z = y * (A @ w)
        tau = 1.0 / (1.0 + np.exp(z))
        D = cost * tau * (1.0 - tau)
        grad = A.T @ (-cost * y * tau)
        Hd = (A * A).T @ D + 1e-12
        wpd = w.copy()
        xTd = np.zeros(n)
        for _p in range(inner):
            for j in rng.permutation(m):
                G = grad[j] + A[:, j] @ (D * xTd) + 1e-12 * (wpd[j] - w[j])
                zj = -G / Hd[j] if free_last and j == m - 1 else _soft(wpd[j], G, Hd[j])
                wpd[j] += zj
                xTd += zj * A[:, j]
        f0 = objective(A, y, cost, w, "log", free_last)
        dvec = wpd - w
        reg = (lambda v: np.abs(v[:-1]).sum()) if free_last else (lambda v: np.abs(v).sum())
        delta = grad @ dvec + reg(wpd) - reg(w)
        step = 1.0
        for _ls in range(30):
            trial = w + step * dvec
            if objective(A, y, cost, trial, "log", free_last) - f0 <= 0.01 * step * delta:
                w = trial
                break
            step *= 0.5
    return w


def proximal_optimum(A, y, cost, loss, iters=20000, free_last=False):
    """(w, f) of the L1 problem by FISTA with the step 1 / L, L the loss
    gradient's Lipschitz constant (2 |A^T C A| for the squared hinge, 1/4 of
    it for the logistic loss)."""
    n, m = A.shape
    L = np.linalg.norm((A * cost[:, None]).T @ A, 2) * (2.0 if loss == "squared-hinge" else 0.25)
    w = np.zeros(m)
    v = w.copy()
    t = 1.0
    for _ in range(iters):
        g = loss_gradient(A, y, cost, v, loss)
        u = v - g / L
        w_new = np.sign(u) * np.maximum(np.abs(u) - 1.0 / L, 0.0)
        if free_last:
            w_new[-1] = u[-1]
        t_new = (1.0 + np.sqrt(1.0 + 4.0 * t * t)) / 2.0
        v = w_new + (t - 1.0) / t_new * (w_new - w)
        w, t = w_new, t_new
    return w, objective(A, y, cost, w, loss, free_last)
