"""Plain NumPy twins of svmtrain's numba kernels (slow, obviously correct)."""
import numpy as np


def dense(chunk, n_features):
    """The Chunk as a dense float64 matrix with n_features columns."""
    X = np.zeros((chunk.n_rows, n_features))
    for i in range(chunk.n_rows):
        lo, hi = chunk.indptr[i], chunk.indptr[i + 1]
        keep = chunk.indices[lo:hi] < n_features
        X[i, chunk.indices[lo:hi][keep]] = chunk.values[lo:hi][keep]
    return X


def loss_slope(loss, s, y, p=0.0):
    """-d loss / d s, elementwise: the hinge, logistic, epsilon-insensitive
    and squared epsilon-insensitive losses (a NumPy twin of the kernel's)."""
    if loss == "hinge":
        return np.where(y * s < 1, y, 0.0)
    if loss == "log":
        return y / (1.0 + np.exp(y * s))
    r = s - y
    e = np.maximum(np.abs(r) - p, 0.0)
    g = 2.0 * e if loss == "squared-epsilon-insensitive" else (e > 0).astype(float)
    return -np.sign(r) * g


def pegasos(X, y, lam, draws, k, B=0.0, unreg_bias=False, avg_start=None, loss="hinge", p=0.0, radius2=None):
    """Fig. 1 of the Pegasos paper on a dense matrix, w stored explicitly,
    with ``loss``'s slope in place of the hinge's (its other losses).

    ``draws`` holds k row indices per step; returns (w_ext, b) where w_ext
    has the constant-feature weight last, averaged from step avg_start on.
    """
    radius = np.sqrt(1.0 / lam if radius2 is None else radius2)
    Xe = np.hstack([X, np.full((X.shape[0], 1), B)])
    w = np.zeros(Xe.shape[1])
    b = 0.0
    w_sum, b_sum, n_sum = np.zeros_like(w), 0.0, 0
    for s in range(len(draws) // k):
        t = s + 1
        eta = 1.0 / (lam * t)
        batch = draws[s * k:(s + 1) * k]
        g = loss_slope(loss, Xe[batch] @ w + b, y[batch], p)
        grad = (g[:, None] * Xe[batch]).sum(axis=0) / k
        w = (1 - eta * lam) * w + eta * grad
        if unreg_bias:
            b += eta * g.sum() / k
        norm = np.linalg.norm(w)
        if norm > radius:
            w *= radius / norm
        if avg_start is not None and t >= avg_start:
            w_sum += w
            b_sum += b
            n_sum += 1
    if avg_start is not None and n_sum:
        return w_sum / n_sum, b_sum / n_sum
    return w, b


def decision_values(X_dense, W, bias, b):
    """Scores of a LinearModel on dense rows (features beyond W ignored by the caller)."""
    d = X_dense.shape[1]
    scores = X_dense @ W[:d] + b
    if bias >= 0:
        scores += bias * W[d]
    return scores
