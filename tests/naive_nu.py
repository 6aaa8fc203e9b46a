"""Plain NumPy twins of svmtrain.solvers.kernel._smo_nu_kernels (LIBSVM's
Solver_NU): the working-set selection, the shrinking test, rho and r, and a
whole solver loop (no shrinking) over a full kernel matrix."""
import numpy as np

TAU = 1e-12


def _last_best(mask, values, pick):
    """(the last position of mask with values' max (pick=max) / min, that value), (-1, +-inf) when none."""
    idx = np.flatnonzero(mask)
    if len(idx) == 0:
        return -1, (-np.inf if pick is max else np.inf)
    best = values[idx].max() if pick is max else values[idx].min()
    return int(idx[values[idx] == best][-1]), float(best)


def select(y, C, alpha, G, QD, act, m, K, index):
    """(ip, gp, in, gn, j, gp2, gn2) of Solver_NU::select_working_set over
    the variables act[:m]; K[r, s] is the kernel of data rows r and s."""
    t = np.asarray(act[:m])
    pos = y[t] > 0
    up = np.where(pos, alpha[t] < C[t], alpha[t] > 0)
    low = np.where(pos, alpha[t] > 0, alpha[t] < C[t])
    v = -y[t] * G[t]
    qp, gp = _last_best(up & pos, v, max)
    qn, gn = _last_best(up & ~pos, v, max)
    ip = int(t[qp]) if qp >= 0 else -1
    i_n = int(t[qn]) if qn >= 0 else -1
    yG = y[t] * G[t]
    gp2 = float(yG[low & pos].max()) if (low & pos).any() else -np.inf
    gn2 = float(yG[low & ~pos].max()) if (low & ~pos).any() else -np.inf
    diff = np.where(pos, gp, gn) + yG
    Kip = K[index[ip]][index[t]] if ip >= 0 else np.zeros(m)
    Kin = K[index[i_n]][index[t]] if i_n >= 0 else np.zeros(m)
    QDi = np.where(pos, QD[ip] if ip >= 0 else 0.0, QD[i_n] if i_n >= 0 else 0.0)
    quad = QDi + QD[t] - 2.0 * np.where(pos, Kip, Kin)
    with np.errstate(invalid="ignore", divide="ignore"):
        obj = -(diff * diff) / np.where(quad > 0, quad, TAU)
    qj, _ = _last_best(low & (diff > 0), obj, min)
    return ip, gp, i_n, gn, (int(t[qj]) if qj >= 0 else -1), gp2, gn2


def shrink_maxima(y, C, alpha, G, act, m):
    """LIBSVM's Gmax1..Gmax4 of Solver_NU::do_shrinking over act[:m]."""
    t = np.asarray(act[:m])
    pos = y[t] > 0

    def mx(mask, vals):
        return float(vals[mask].max()) if mask.any() else -np.inf
    below, above = alpha[t] < C[t], alpha[t] > 0
    return (mx(below & pos, -G[t]), mx(above & pos, G[t]), mx(above & ~pos, G[t]), mx(below & ~pos, -G[t]))


def be_shrunk(y, C, alpha, G, g1, g2, g3, g4):
    """bool[n]: Solver_NU::be_shrunk of every variable."""
    pos = y > 0
    at_upper = alpha >= C
    at_lower = alpha <= 0
    return np.where(at_upper, -G > np.where(pos, g1, g4), np.where(at_lower, G > np.where(pos, g2, g3), False))


def nu_rho(y, C, alpha, G):
    """(rho, r) of Solver_NU::calculate_rho."""
    rs = []
    for s in (1.0, -1.0):
        side = y == s
        free = side & (alpha > 0) & (alpha < C)
        if free.any():
            rs.append(float(G[free].mean()))
        else:
            ub = G[side & (alpha <= 0)].min() if (side & (alpha <= 0)).any() else np.inf
            lb = G[side & (alpha >= C)].max() if (side & (alpha >= C)).any() else -np.inf
            rs.append(0.5 * (ub + lb))
    return 0.5 * (rs[0] - rs[1]), 0.5 * (rs[0] + rs[1])


def solve(K, y, C, p, alpha, index, eps):
    """Solver_NU without shrinking over the full kernel matrix K of the data
    rows (index[t] the row of variable t), from the feasible ``alpha``:
    (alpha, G, steps)."""
    n = len(y)
    alpha = np.array(alpha, np.float64)
    Q = y[:, None] * y[None, :] * K[np.ix_(index, index)]
    G = Q @ alpha + p
    QD = np.diag(K)[index]
    act = np.arange(n)
    steps = 0
    while True:
        ip, gp, i_n, gn, j, gp2, gn2 = select(y, C, alpha, G, QD, act, n, K, index)
        if j < 0 or max(gp + gp2, gn + gn2) < eps:
            break
        i = ip if y[j] > 0 else i_n
        a_i, a_j = alpha[i], alpha[j]
        q = QD[i] + QD[j] - 2.0 * Q[i, j]
        q = q if q > 0 else TAU
        delta = (G[i] - G[j]) / q
        s = a_i + a_j
        ni, nj = a_i - delta, a_j + delta
        if s > C[i]:
            if ni > C[i]:
                ni, nj = C[i], s - C[i]
        elif nj < 0:
            nj, ni = 0.0, s
        if s > C[j]:
            if nj > C[j]:
                nj, ni = C[j], s - C[j]
        elif ni < 0:
            ni, nj = 0.0, s
        alpha[i], alpha[j] = ni, nj
        G += Q[i] * (ni - a_i) + Q[j] * (nj - a_j)
        steps += 1
    return alpha, G, steps
