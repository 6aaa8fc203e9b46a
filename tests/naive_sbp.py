"""Plain-NumPy twins of the kernel solvers' numba kernels (slow, obviously correct).

Twins of svmtrain/solvers/kernel/_sbp_kernels.py, _kernel_pegasos_kernels.py and
svmtrain/mercer/cache.py: water levels by sorting (and by linear
programming, independently of the sorting argument), kernel rows from a
dense matrix, an SBP and a kernel-Pegasos replay that keep w's
coefficients and responses explicitly, and a simple dual solver.
"""
import numpy as np


# ------------------------------------------------------------- kernels
def kernel_dense(code, A, B, gamma, degree, coef0):
    """K[i, j] = K(A_i, B_j) for dense row matrices (LIBSVM's four kernels)."""
    dot = A @ B.T
    if code == 2:
        d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2 * dot
        return np.exp(-gamma * np.maximum(d2, 0))
    if code == 1:
        return (gamma * dot + coef0) ** degree
    if code == 3:
        return np.tanh(gamma * dot + coef0)
    return dot


def lru_twin(slots, batches):
    """(set of cached rows, hits, misses) after fetching each batch in turn.

    Least recently used first (by batch; within a batch the lower slot);
    the batch's rows that are cached are marked used before any missing
    row is placed, so rows of the current batch are never evicted; a row
    already cached, or computed earlier in the same batch, counts as a hit.
    """
    slot_row = [-1] * slots
    stamp = [0] * slots
    where = {}
    hits = misses = 0
    for clock, js in enumerate(batches, start=1):
        js = [int(x) for x in js]
        cached = [j in where for j in js]
        for j, c in zip(js, cached):
            if c:
                hits += 1
                stamp[where[j]] = clock
        for j, c in zip(js, cached):
            if c:
                continue
            if j in where:
                hits += 1
                continue
            free = [s for s in range(slots) if slot_row[s] < 0]
            if free:
                s = free[0]
            else:
                s = min((st, s) for s, st in enumerate(stamp) if st < clock)[1]
                del where[slot_row[s]]
            slot_row[s] = j
            stamp[s] = clock
            where[j] = s
            misses += 1
    return set(where), hits, misses


# --------------------------------------------------------- water levels
def water_level(vals, volume):
    """(k, level): sort, then the largest k with k d_k - sum_{j<=k} d_j <= volume."""
    d = np.sort(np.asarray(vals, np.float64))
    if len(d) == 0:
        return 0, 0.0
    S = np.cumsum(d)
    k_all = np.arange(1, len(d) + 1)
    need = k_all * d - S
    k = int(np.max(k_all[need <= volume]))
    return k, (volume + S[k - 1]) / k


def water_level_bias(vals_pos, vals_neg, volume):
    """(k, L+ + L-): the single-basin rule on the paired sorted values d_k = c+_(k) + c-_(k)."""
    m = min(len(vals_pos), len(vals_neg))
    if m == 0:
        return 0, 0.0
    d = np.sort(vals_pos)[:m] + np.sort(vals_neg)[:m]
    return water_level(d, volume)


def bias_from_level(vals_pos, vals_neg, k, level_sum):
    """(b, gamma): L+ in the middle of its bracket, b = (L- - L+)/2, gamma = (L+ + L-)/2."""
    p, q = np.sort(vals_pos), np.sort(vals_neg)
    nxt_p = p[k] if k < len(p) else np.inf
    nxt_n = q[k] if k < len(q) else np.inf
    lo = max(p[k - 1], level_sum - nxt_n)
    hi = min(nxt_p, level_sum - q[k - 1])
    lp = 0.5 * (lo + hi)
    return 0.5 * ((level_sum - lp) - lp), 0.5 * level_sum


def lp_margin(c, y, volume, bias):
    """max gamma s.t. c_i + y_i b + xi_i >= gamma, xi >= 0, sum xi <= volume, by linear programming."""
    from scipy.optimize import linprog
    n = len(c)
    # variables: gamma, b, xi_1..xi_n ; maximise gamma
    cost = np.zeros(n + 2)
    cost[0] = -1.0
    A = np.zeros((n + 1, n + 2))
    A[:n, 0] = 1.0
    A[:n, 1] = -np.asarray(y) if bias else 0.0
    A[np.arange(n), 2 + np.arange(n)] = -1.0
    rhs = np.concatenate([np.asarray(c, np.float64), [volume]])
    A[n, 2:] = 1.0
    bounds = [(None, None), (None, None) if bias else (0, 0)] + [(0, None)] * n
    res = linprog(cost, A_ub=A, b_ub=rhs, bounds=bounds, method="highs")
    return -res.fun


# ------------------------------------------------------------ SBP steps
def apply_rows(rows, coef, y, v, r, a, n_train, omega):
    """The twin of _sbp_kernels.apply_rows on dense float rows[b, i]."""
    u = (coef[:, None] * rows).sum(0) * y
    v += u
    r += omega * u
    return float(a @ v[:n_train])


def sbp_replay(Kfull, y, n_train, volume, bias, B, trace, max_kii, avg_power, eta0=1.0):
    """Replay SBP on the drawn rows ``trace`` with w kept as explicit coefficients.

    Kfull: dense kernel over all rows (training rows first). Checks that
    every drawn row is under water (per basin with a bias) when drawn.
    Returns (alpha, responses c, averaged alpha, averaged c).
    """
    n_all = len(y)
    alpha = np.zeros(n_train)
    c = np.zeros(n_all)
    sum_a = np.zeros(n_train)
    sum_c = np.zeros(n_all)
    total_w = 0.0
    L = 2 * B if bias else B
    Q = (y[:, None] * y[None, :]) * Kfull          # c = Q[:, :n_train] @ alpha
    for t, js in enumerate(trace, start=1):
        ct = c[:n_train]
        if bias:
            pos = np.flatnonzero(y[:n_train] > 0)
            neg = np.flatnonzero(y[:n_train] < 0)
            k, _ = water_level_bias(ct[pos], ct[neg], volume)
            kth_p = np.sort(ct[pos])[k - 1]
            kth_n = np.sort(ct[neg])[k - 1]
            assert all(y[j] > 0 and ct[j] <= kth_p * (1 + 1e-9) + 1e-12 for j in js[:B]), "not under water"
            assert all(y[j] < 0 and ct[j] <= kth_n * (1 + 1e-9) + 1e-12 for j in js[B:]), "not under water"
        else:
            k, _ = water_level(ct, volume)
            kth = np.sort(ct)[k - 1]
            assert all(ct[j] <= kth * (1 + 1e-9) + 1e-12 for j in js), "not under water"
        eta = eta0 / np.sqrt(t * max_kii)
        for j in js:
            alpha[j] += eta / L
        c = Q[:, :n_train] @ alpha
        norm = np.sqrt(max(alpha @ c[:n_train], 0.0))
        if norm > 1.0:
            alpha /= norm
            c /= norm
        w = float(t) ** avg_power
        sum_a += w * alpha
        sum_c += w * c
        total_w += w
    return alpha, c, sum_a / total_w, sum_c / total_w


# ------------------------------------------------------------ the pilot
def dual_solve(K, y, C, bias, tol=1e-10, max_iter=200000):
    """min 1/2 a'Qa - sum a, 0 <= a <= C (and y'a = 0 with a bias), by plain first-order SMO / coordinate descent.

    Returns (alpha, rho) with decision sum_j a_j y_j K(x_j, x) - rho.
    """
    m = len(y)
    Q = (y[:, None] * y[None, :]) * K
    a = np.zeros(m)
    g = -np.ones(m)
    for _ in range(max_iter):
        if bias:
            up = ((y > 0) & (a < C)) | ((y < 0) & (a > 0))
            low = ((y > 0) & (a > 0)) | ((y < 0) & (a < C))
            score = -y * g
            i = np.flatnonzero(up)[np.argmax(score[up])]
            j = np.flatnonzero(low)[np.argmin(score[low])]
            if score[i] - score[j] < tol:
                break
            # move along y_i e_i - y_j e_j (keeps y'a = 0), exact line search, clipped to the box
            d = np.zeros(m)
            d[i] = y[i]
            d[j] = -y[j]
            curv = d @ Q @ d
            step = -(g @ d) / max(curv, 1e-12)
            lo, hi = -np.inf, np.inf
            for t in (i, j):
                if d[t] > 0:
                    hi = min(hi, (C - a[t]) / d[t])
                    lo = max(lo, -a[t] / d[t])
                else:
                    hi = min(hi, -a[t] / d[t])
                    lo = max(lo, (C - a[t]) / d[t])
            step = min(max(step, 0.0), hi)
            a += step * d
            g += step * (Q @ d)
        else:
            pg = g.copy()
            pg[(a <= 0) & (g > 0)] = 0
            pg[(a >= C) & (g < 0)] = 0
            i = int(np.argmax(np.abs(pg)))
            if abs(pg[i]) < tol:
                break
            new = min(max(a[i] - g[i] / Q[i, i], 0.0), C)
            g += (new - a[i]) * Q[:, i]
            a[i] = new
    if not bias:
        return a, 0.0
    free = (a > 1e-9 * C) & (a < C * (1 - 1e-9))
    yg = y * g
    if free.any():
        return a, float(yg[free].mean())
    up = ((y > 0) & (a < C)) | ((y < 0) & (a > 0))
    low = ((y > 0) & (a > 0)) | ((y < 0) & (a < C))
    return a, 0.5 * (float(np.max(-(-yg)[up])) + float(np.min(-(-yg)[low])))


def dual_objective(K, y, alpha):
    ya = y * alpha
    return 0.5 * ya @ K @ ya - alpha.sum()


# ------------------------------------------------------- kernel Pegasos
def kernel_pegasos(Kfull, y, draws, lam, unreg_bias=False, avg_start=None):
    """Pegasos with a kernel, w = sum_j beta_j Phi(x_j) explicit; returns (beta, b) averaged from avg_start."""
    n = len(y)
    beta = np.zeros(n)
    b = 0.0
    sb, sbias, cnt = np.zeros(n), 0.0, 0
    for t, batch in enumerate(draws, start=1):
        eta = 1.0 / (lam * t)
        k = len(batch)
        margins = y[batch] * (Kfull[batch] @ beta + b)
        viol = batch[margins < 1]
        beta = (1 - 1.0 / t) * beta
        for j in viol:
            beta[j] += eta * y[j] / k
        if unreg_bias:
            b += eta * y[viol].sum() / k
        norm2 = beta @ Kfull @ beta
        if norm2 > 1.0 / lam:
            beta *= np.sqrt(1.0 / lam / norm2)
        if avg_start is not None and t >= avg_start:
            sb += beta
            sbias += b
            cnt += 1
    if avg_start is not None and cnt:
        return sb / cnt, sbias / cnt
    return beta, b
