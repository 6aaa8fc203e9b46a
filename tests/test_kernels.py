"""Kernel evaluation against a NumPy twin on dense copies."""
import numpy as np
import pytest

from conftest import bundled
from naive import dense
from svmtrain.mercer import functions as kernels
from svmtrain.io.reader import read_libsvm


def naive_kernel(code, A, B, gamma, degree, coef0):
    dot = A @ B.T
    if code == kernels.RBF:
        d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2 * dot
        return np.exp(-gamma * np.maximum(d2, 0))
    if code == kernels.POLYNOMIAL:
        return (gamma * dot + coef0) ** degree
    if code == kernels.SIGMOID:
        return np.tanh(gamma * dot + coef0)
    return dot


@pytest.mark.parametrize("code", [0, 1, 2, 3])
def test_kernel_matrix_matches_numpy(code, monkeypatch):
    X = read_libsvm(bundled("heart_scale.xz"))
    d = X.n_features
    monkeypatch.setattr(kernels, "BLOCK_BYTES", 8 * d * 7)  # force several blocks
    k = kernels.Kernel(code, gamma=0.3, degree=3, coef0=0.5)
    rows = np.array([5, 0, 269, 17, 17, 100, 3, 9, 11, 250])
    sq = kernels.sq_norms(X.indptr, X.values)
    K = kernels.kernel_matrix(k, X, sq, X, sq, rows=rows)
    D = dense(X, d)
    np.testing.assert_allclose(K, naive_kernel(code, D, D[rows], 0.3, 3, 0.5), rtol=1e-12, atol=1e-12)


def test_default_gamma_is_one_over_features():
    assert kernels.Kernel(kernels.RBF).resolved(8).gamma == 0.125
    assert kernels.Kernel(kernels.RBF, gamma=2.0).resolved(8).gamma == 2.0
