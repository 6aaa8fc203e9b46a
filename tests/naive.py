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


def pegasos(X, y, lam, draws, k, B=0.0, unreg_bias=False, avg_start=None):
    """Fig. 1 of the Pegasos paper on a dense matrix, w stored explicitly.

    ``draws`` holds k row indices per step; returns (w_ext, b) where w_ext
    has the constant-feature weight last, averaged from step avg_start on.
    """
    Xe = np.hstack([X, np.full((X.shape[0], 1), B)])
    w = np.zeros(Xe.shape[1])
    b = 0.0
    w_sum, b_sum, n_sum = np.zeros_like(w), 0.0, 0
    for s in range(len(draws) // k):
        t = s + 1
        eta = 1.0 / (lam * t)
        batch = draws[s * k:(s + 1) * k]
        viol = batch[y[batch] * (Xe[batch] @ w + b) < 1]
        grad = (y[viol, None] * Xe[viol]).sum(axis=0) / k
        w = (1 - eta * lam) * w + eta * grad
        if unreg_bias:
            b += eta * y[viol].sum() / k
        norm = np.linalg.norm(w)
        if norm > 1 / np.sqrt(lam):
            w *= (1 / np.sqrt(lam)) / norm
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
