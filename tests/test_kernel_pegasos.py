"""Pegasos with a kernel (-s pegasos -t 1|2|3) against an explicit NumPy twin and LIBSVM."""
import numpy as np
import pytest

import naive_sbp as naive
from conftest import heart_scale as heart
from svmtrain.mercer import functions as kernels
from svmtrain.errors import ParameterError
from svmtrain.mercer.cache import KernelCache
from svmtrain.models.kernel import KernelModel
from svmtrain.params import TrainParams
from svmtrain.solvers.kernel import _kernel_pegasos_kernels as K
from svmtrain.training.train import train
from test_sbp import random_chunk


@pytest.mark.parametrize("k, unreg_bias, averaged, fold", [(1, False, False, K.FOLD_BELOW), (3, True, True, 0.9),
                                                          (4, False, True, K.FOLD_BELOW)])
def test_steps_match_twin(k, unreg_bias, averaged, fold):
    rng = np.random.default_rng(k)
    X, dense = random_chunk(rng, 50, 5, density=0.8)
    y = X.labels.copy()
    lam = 0.05
    steps = 300
    avg_start = 151 if averaged else steps + 2
    cache = KernelCache(X, kernels.Kernel(2, gamma=0.6), cache_mb=10 * 4 * 50 / 2**20, max_batch=k)
    draws = rng.integers(0, 50, size=(steps, k))
    v, r, beta, rbeta, acc_v, acc_b = (np.zeros(50) for _ in range(6))
    state = np.zeros(K.STATE_SIZE)
    state[K.S_SCALE] = 1.0
    # in two calls, as the solver makes one per epoch (fold = 0.9: the scale is folded in almost every step)
    for lo, hi in ((0, 120), (120, steps)):
        K.kpegasos_steps(draws[lo:hi], lo, lam, unreg_bias, avg_start, fold, y, v, beta, r, rbeta, acc_v, acc_b,
                         state, *cache.args())
    Kfull = naive.kernel_dense(2, dense, dense, 0.6, 3, 0.0)
    want_beta, want_b = naive.kernel_pegasos(Kfull, y, draws, lam, unreg_bias, avg_start if averaged else None)
    if averaged:
        m, om = state[K.S_NAVG], state[K.S_OMEGA]
        got_beta, got_b = (acc_b + om * beta - rbeta) / m, state[K.S_BSUM] / m
        np.testing.assert_allclose((acc_v + om * v - r) / m, Kfull @ want_beta, rtol=1e-5, atol=1e-6)
    else:
        got_beta, got_b = state[K.S_SCALE] * beta, state[K.S_BIAS]
        np.testing.assert_allclose(state[K.S_SCALE] * v, Kfull @ want_beta, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_beta, want_beta, rtol=1e-5, atol=1e-7)
    assert got_b == pytest.approx(want_b, rel=1e-6, abs=1e-9)
    assert state[K.S_NORM2] == pytest.approx(K.norm2_from_responses(beta, v, state[K.S_SCALE]), rel=1e-5)
    assert state[K.S_NORM2] <= 1 / lam * (1 + 1e-9)


def test_heart_objective_near_libsvm_optimum():
    """Averaged kernel Pegasos gets within 3 % of the optimum of the regularised problem (no bias)."""
    X = heart()
    n = X.n_rows
    lam = 1.0 / n
    model = train(X, TrainParams(solver="pegasos", kernel_type=2, lam=lam, epochs=60))
    assert isinstance(model, KernelModel)
    # the optimum without a bias, from the twin's dual solver at tight tolerance
    dense = np.zeros((n, 13))
    for i in range(n):
        dense[i, X.indices[X.indptr[i]:X.indptr[i + 1]]] = X.values[X.indptr[i]:X.indptr[i + 1]]
    Kf = naive.kernel_dense(2, dense, dense, 1 / 13, 3, 0.0)
    y = np.where(X.labels == model.labels[0], 1.0, -1.0)
    alpha, _ = naive.dual_solve(Kf, y, 1.0 / (lam * n), bias=False, tol=1e-8)
    ya = y * alpha
    opt = 0.5 * lam * ya @ Kf @ ya + np.maximum(0, 1 - y * (Kf @ ya)).mean()
    got = model.fit_results[0].objective
    assert opt <= got <= 1.03 * opt
    scores = model.decision_function(X)[:, 0]
    assert (np.sign(scores) == y).mean() > 0.8


def test_with_bias_accuracy_like_libsvm():
    from libsvm import svmutil
    from reference import csr
    X = heart()
    m = svmutil.svm_train(X.labels.tolist(), csr(X, 13), "-c 1 -q")
    p, _, _ = svmutil.svm_predict(X.labels.tolist(), csr(X, 13), m, "-q")
    lib = (np.array(p) == X.labels).mean()
    model = train(X, TrainParams(solver="pegasos", kernel_type=2, C=1.0, unreg_bias=True, epochs=50))
    ours = (model.predict(X) == X.labels).mean()
    assert abs(ours - lib) <= 0.02


def test_deterministic_and_refusals():
    X = heart()
    p = TrainParams(solver="pegasos", kernel_type=1, gamma=0.2, coef0=1.0, degree=2, epochs=3)
    a, b = train(X, p), train(X, p)
    np.testing.assert_array_equal(a.coef, b.coef)
    assert a.kernel.code == kernels.POLYNOMIAL
    with pytest.raises(ParameterError, match="-B"):
        train(X, TrainParams(solver="pegasos", kernel_type=2, bias=1.0))
    with pytest.raises(ParameterError, match="-w"):
        train(X, TrainParams(solver="pegasos", kernel_type=2, class_weights={1.0: 2.0}))


def test_eps_stops_early():
    X = heart()
    r = train(X, TrainParams(solver="pegasos", kernel_type=2, epochs=200, eps=0.05)).fit_results[0]
    assert r.converged and r.info["epochs"] < 200
