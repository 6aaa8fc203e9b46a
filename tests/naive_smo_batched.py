"""Plain-NumPy twins of ``svmtrain.solvers.kernel._smo_batched_kernels`` (the
batched working-set decomposition of ``-s smo --working-set Q``), for tests
only: the same definitions written with whole-array NumPy operations."""
import numpy as np

TAU = 1e-12


def up_low(y, C, alpha):
    """(I_up, I_low) as boolean masks (LIBSVM's sets)."""
    return np.where(y > 0, alpha < C, alpha > 0), np.where(y > 0, alpha > 0, alpha < C)


def violation(y, C, alpha, G):
    up, low = up_low(y, C, alpha)
    g1 = (-y * G)[up].max() if up.any() else -np.inf
    g2 = (y * G)[low].max() if low.any() else -np.inf
    return g1 + g2


def select_working_set(y, C, alpha, G, kept, q):
    """The working set: ``kept`` first, then alternately the next I_up
    variable by increasing y G and the next I_low variable by decreasing
    y G (not already in the set), then any others. Assumes distinct y G."""
    up, low = up_low(y, C, alpha)
    order = np.argsort(y * G, kind="stable")
    ws = list(kept)
    taken = set(ws)
    left = [t for t in order if up[t]]
    right = [t for t in order[::-1] if low[t]]
    li = ri = 0
    while len(ws) < q and (li < len(left) or ri < len(right)):
        while li < len(left) and left[li] in taken:
            li += 1
        if li < len(left):
            ws.append(left[li])
            taken.add(left[li])
        if len(ws) == q:
            break
        while ri < len(right) and right[ri] in taken:
            ri += 1
        if ri < len(right):
            ws.append(right[ri])
            taken.add(right[ri])
    for t in range(len(y)):
        if len(ws) == q:
            break
        if t not in taken:
            ws.append(t)
            taken.add(t)
    return np.array(ws, np.int64), violation(y, C, alpha, G)


def gather_block(ws, index, slots, M):
    return M[slots][:, index[ws]]


def _pair(y_i, y_j, C_i, C_j, a_i, a_j, G_i, G_j, QD_i, QD_j, Q_ij):
    """LIBSVM's two-variable step with its clipping."""
    if y_i != y_j:
        quad = QD_i + QD_j + 2.0 * Q_ij
        quad = quad if quad > 0 else TAU
        delta = (-G_i - G_j) / quad
        diff = a_i - a_j
        n_i, n_j = a_i + delta, a_j + delta
        if diff > 0:
            if n_j < 0:
                n_j, n_i = 0.0, diff
        elif n_i < 0:
            n_i, n_j = 0.0, -diff
        if diff > C_i - C_j:
            if n_i > C_i:
                n_i, n_j = C_i, C_i - diff
        elif n_j > C_j:
            n_j, n_i = C_j, C_j + diff
    else:
        quad = QD_i + QD_j - 2.0 * Q_ij
        quad = quad if quad > 0 else TAU
        delta = (G_i - G_j) / quad
        total = a_i + a_j
        n_i, n_j = a_i - delta, a_j + delta
        if total > C_i:
            if n_i > C_i:
                n_i, n_j = C_i, total - C_i
        elif n_j < 0:
            n_j, n_i = 0.0, total
        if total > C_j:
            if n_j > C_j:
                n_j, n_i = C_j, total - C_j
        elif n_i < 0:
            n_i, n_j = 0.0, total
    return n_i, n_j


def inner_smo(y, C, alpha, G, QD, Kb, eps, frac, max_steps):
    """LIBSVM's pair steps on the block: i the last maximiser of -y G over
    I_up, j the last minimiser of -(b^2)/a over I_low with positive gap b;
    stop below max(eps, frac * the first violation). Returns (new alpha,
    dalpha * y, steps, first violation)."""
    a = alpha.astype(np.float64).copy()
    G = G.astype(np.float64).copy()
    K = Kb.astype(np.float64)
    steps = 0
    first = -np.inf
    local_eps = eps
    while True:
        up, low = up_low(y, C, a)
        v = -y * G
        i = int(np.flatnonzero(up & (v == v[up].max()))[-1]) if up.any() else -1
        j = -1
        g_max2 = -np.inf
        if i >= 0:
            g_max = v[i]
            g_max2 = (y * G)[low].max() if low.any() else -np.inf
            diff = g_max + y * G
            quad = QD[i] + QD - 2.0 * K[i]
            quad = np.where(quad > 0, quad, TAU)
            obj = np.where(low & (diff > 0), -(diff ** 2) / quad, np.inf)
            if np.isfinite(obj).any():
                j = int(np.flatnonzero(obj == obj.min())[-1])
        gap = (v[i] if i >= 0 else -np.inf) + g_max2
        if steps == 0:
            first = gap
            local_eps = max(eps, frac * gap)
        if i < 0 or j < 0 or gap < local_eps or steps >= max_steps:
            break
        n_i, n_j = _pair(y[i], y[j], C[i], C[j], a[i], a[j], G[i], G[j], QD[i], QD[j], y[i] * y[j] * K[i, j])
        d_i, d_j = (n_i - a[i]) * y[i], (n_j - a[j]) * y[j]
        a[i], a[j] = n_i, n_j
        G += y * (K[i] * d_i + K[j] * d_j)
        steps += 1
    return a, (a - alpha) * y, steps, first


def update_gradient(G, y, index, M, slots, coef):
    """G + y * sum_b coef_b K(x_row(b), x_index[t])."""
    return G + y * (coef @ M[slots].astype(np.float64))[index]
