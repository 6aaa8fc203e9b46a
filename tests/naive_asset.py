"""Plain NumPy twins of the ASSET numba kernels (slow, obviously correct)."""
import numpy as np


def fourier_features(X, omega, phases):
    """sqrt(2/D) cos(X omega + phases) on a dense matrix X (n x n_features)."""
    D = omega.shape[1]
    return np.sqrt(2.0 / D) * np.cos(X @ omega + phases)


def rbf(A, B, gamma):
    d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2 * A @ B.T
    return np.exp(-gamma * np.maximum(d2, 0.0))


def nystrom_features(X, L, gamma, threshold):
    """Eqs. 6-7: V = K(X, L) Q_d D_d^{-1/2}, eigenvalues below threshold dropped."""
    evals, Q = np.linalg.eigh(rbf(L, L, gamma))
    keep = evals >= threshold
    return rbf(X, L, gamma) @ (Q[:, keep] / np.sqrt(evals[keep]))


def asset(F, y, cost, lam, draws, k, Bc=0.0, has_b=True, b_box=np.inf, step0=1.0, strong=False,
          avg_start=None):
    """Algorithm 1 of the ASSET paper, literally, on dense feature rows F.

    gamma is stored explicitly with the constant-feature weight last; the
    average is the paper's recursion (step 9). Returns (gamma, b) of the
    average when avg_start is given and reached, else of the last iterate.
    """
    Fe = np.hstack([F, np.full((F.shape[0], 1), Bc)])
    g = np.zeros(Fe.shape[1])
    b = 0.0
    g_avg, b_avg, eta_avg = np.zeros_like(g), 0.0, 0.0
    for s in range(len(draws) // k):
        j = s + 1
        eta = 1.0 / (lam * j) if strong else step0 / np.sqrt(j)
        batch = draws[s * k:(s + 1) * k]
        viol = batch[y[batch] * (Fe[batch] @ g + b) < 1.0]
        d = -(cost[viol] * y[viol])                       # Table 1: d_j = -y (times the loss weight)
        G_g = lam * g + (d[:, None] * Fe[viol]).sum(axis=0) / k
        G_b = d.sum() / k
        g = g - eta * G_g
        if has_b:
            b = b - eta * G_b
        # projection onto {|gamma| <= 1/sqrt(lambda)} x {|b| <= b_box}
        norm = np.linalg.norm(g)
        if norm > 1.0 / np.sqrt(lam):
            g *= (1.0 / np.sqrt(lam)) / norm
        b = float(np.clip(b, -b_box, b_box))
        if avg_start is not None and j >= avg_start:
            g_avg = eta_avg / (eta_avg + eta) * g_avg + eta / (eta_avg + eta) * g
            b_avg = eta_avg / (eta_avg + eta) * b_avg + eta / (eta_avg + eta) * b
            eta_avg += eta
    if avg_start is not None and eta_avg > 0:
        return g_avg, b_avg
    return g, b


def objective(F, y, cost, g, b, lam, Bc=0.0):
    """lambda/2 |gamma_ext|^2 + mean cost_i hinge(y_i (F_i.gamma + Bc gamma_B + b))."""
    scores = F @ g[:F.shape[1]] + Bc * g[F.shape[1]] + b
    return 0.5 * lam * g @ g + np.mean(cost * np.maximum(0.0, 1.0 - y * scores))


def kernel(A, B, code, gamma, degree, coef0):
    """LIBSVM's kernels (-t 0..3) between the rows of dense A and B."""
    dot = A @ B.T
    if code == 2:
        return rbf(A, B, gamma)
    if code == 1:
        return (gamma * dot + coef0) ** degree
    if code == 3:
        return np.tanh(gamma * dot + coef0)
    return dot
