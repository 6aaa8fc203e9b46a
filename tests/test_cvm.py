"""-s cvm, the Core Vector Machine: its ball against the exact minimum enclosing ball of a
brute-force twin (tests/naive_cvm.py), its kernels against NumPy, and the command line."""
import math

import numpy as np
import pytest
from click.testing import CliRunner

import naive_cvm as naive
from naive import dense as dense_rows
from conftest import bundled, heart_scale as heart
from naive_sbp import kernel_dense
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main
from svmtrain.data.dataset import Chunk
from svmtrain.errors import ParameterError
from svmtrain.mercer import functions as kernels
from svmtrain.mercer.cache import partial_row_serial, squarings_for
from svmtrain.models.kernel import KernelModel
from svmtrain.params import TrainParams
from svmtrain.solvers.kernel import _cvm_kernels as K
from svmtrain.solvers.kernel import cvm
from svmtrain.training.trace import Trace
from svmtrain.training.train import train
from test_sbp import random_chunk


def problem(seed, n=40, d=3):
    """A random problem: (Chunk with labels y, its dense rows, y); y depends on the first feature."""
    rng = np.random.default_rng(seed)
    X, dense = random_chunk(rng, n, d, density=0.9)
    y = np.where(dense[:, 0] + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    X.labels = y.copy()
    return X, dense, y


def exact_kt(dense, y, gamma, C):
    """The K~ matrix of all rows (RBF)."""
    return naive.transformed_kernel(kernel_dense(2, dense, dense, gamma, 3, 0.0), y, C)


def full_alpha(ball, n):
    alpha = np.zeros(n)
    alpha[ball.core] = ball.alpha
    return alpha


# ------------------------------------------------------------------ kernels
@pytest.mark.parametrize("code", [0, 1, 2, 3])
def test_kernel_row_matches_kernel_matrix(code):
    rng = np.random.default_rng(code)
    X, _ = random_chunk(rng, 30, 7, density=0.5, scale=2.0)
    kernel = kernels.Kernel(code, gamma=0.3, degree=3, coef0=0.5)
    sq = kernels.sq_norms(X.indptr, X.values)
    want = kernels.kernel_matrix(kernel, X, sq, X, sq)
    js = rng.integers(0, 30, 50)
    dense = np.zeros(7)
    out = np.empty(len(js))
    for i in (0, 11, 29):
        partial_row_serial(i, js, len(js), out, dense, X.indptr, X.indices, X.values, sq, *kernel.params(),
                           squarings_for(kernel, sq.max()))
        np.testing.assert_allclose(out, want[i, js], rtol=1e-12, atol=1e-13)
        assert not dense.any()


@pytest.mark.parametrize("twin", ["serial", "parallel"])
def test_centre_scores_match_numpy(twin):
    """u_b = sum_s w_s (k(x_cand_b, x_sv_s) + 1) for a sample (scores_few) and for every row (all_scores)."""
    rng = np.random.default_rng(5)
    X, dense = random_chunk(rng, 200, 9, density=0.4, scale=1.5)
    kernel = kernels.Kernel(2, gamma=0.2)
    sq = kernels.sq_norms(X.indptr, X.values)
    sv = rng.choice(200, 70, replace=False).astype(np.int64)
    w = rng.normal(size=70)
    want = (kernel_dense(2, dense, dense[sv], 0.2, 3, 0.0) + 1.0) @ w
    kp = (*kernel.params(), squarings_for(kernel, sq.max()))
    few = K.scores_few if twin == "parallel" else K.scores_few_serial
    cand = rng.integers(0, 200, 59).astype(np.int64)
    out = np.empty(59)
    few(X.indptr, X.indices, X.values, sq, cand, 59, sv, w, 70, *kp, np.zeros((9, 59)), out)
    np.testing.assert_allclose(out, want[cand], rtol=1e-11, atol=1e-11)
    every = K.all_scores.parallel if twin == "parallel" else K.all_scores.serial
    out = np.empty(200)
    every(X.indptr, X.indices, X.values, sq, sv, w, 70, *kp, 9, out)
    np.testing.assert_allclose(out, want, rtol=1e-11, atol=1e-11)


# ------------------------------------------------------- the core-set QP
def test_core_set_qp_matches_twin():
    """The SMO on the simplex ends at the twin's exact MEB weights, cold or warm-started with one new
    point at alpha = 0 (as each CVM iteration starts)."""
    _, dense, y = problem(3, n=30)
    Kt = exact_kt(dense, y, 0.5, 10.0)
    want, _ = naive.meb(Kt)
    G = Kt @ want
    assert G[want > 0].max() - G.min() < 1e-10          # the twin is exact (KKT)
    alpha = np.full(30, 1.0 / 30)
    G = Kt @ alpha
    steps = K.smo(Kt, Kt[0, 0], alpha, G, 30, 1e-13, 10**6)
    assert steps > 0 and abs(alpha.sum() - 1.0) < 1e-12 and alpha.min() >= 0.0
    np.testing.assert_allclose(alpha, want, atol=1e-6)
    np.testing.assert_allclose(G, Kt @ alpha, atol=1e-12)
    # warm start: the MEB of the first 29 points, then point 29 enters with alpha 0
    sub, _ = naive.meb(Kt[:29, :29].copy())
    alpha = np.append(sub, 0.0)
    G = Kt @ alpha
    K.smo(Kt, Kt[0, 0], alpha, G, 30, 1e-13, 10**6)
    np.testing.assert_allclose(alpha, want, atol=1e-6)


# ---------------------------------------------- the ball against the exact MEB
@pytest.mark.parametrize("seed, C, gamma, eps", [(0, 1.0, 0.5, 1e-6), (1, 10.0, 2.0, 1e-3), (2, 100.0, 0.1, 1e-2),
                                                 (3, 0.1, 1.0, 1e-8)])
def test_radius_against_brute_force_twin(seed, C, gamma, eps):
    """Exact farthest point: R_cvm <= R_exact (a dual value), every row within (1 + eps) R_cvm of
    the CVM's centre, hence R_exact <= (1 + eps) R_cvm."""
    X, dense, y = problem(seed)
    Kt = exact_kt(dense, y, gamma, C)
    _, r2_exact = naive.meb(Kt)
    ball = cvm.core_ball(X, y, kernels.Kernel(2, gamma), C, eps, np.random.default_rng(seed), sample_size=None)
    assert ball.converged and len(ball.core) == len(set(ball.core.tolist()))
    alpha = full_alpha(ball, len(y))
    assert abs(alpha.sum() - 1.0) < 1e-12 and alpha.min() >= 0.0
    assert ball.rho == pytest.approx(alpha @ Kt @ alpha, rel=1e-10, abs=1e-14)
    R, R_exact = math.sqrt(ball.r2), math.sqrt(r2_exact)
    assert R <= R_exact * (1 + 1e-9)
    assert naive.distances2(Kt, alpha).max() <= ((1 + eps) * R) ** 2 * (1 + 1e-12)
    assert R >= R_exact / (1 + eps)
    if eps <= 1e-6:         # an accurate ball: the core set holds the support of the exact MEB
        np.testing.assert_allclose(alpha, naive.meb(Kt)[0], atol=1e-3)


@pytest.mark.parametrize("rounds", [1, 7])
def test_sampled_radius_against_twin(rounds):
    """The probabilistic speedup (59 sampled rows per round): still a lower bound on R_exact, and
    with 7 rounds on 60 rows (a violator escapes 413 draws with probability < 1e-3) the ball encloses."""
    X, dense, y = problem(7, n=60)
    C, gamma, eps = 10.0, 1.0, 1e-6
    Kt = exact_kt(dense, y, gamma, C)
    _, r2_exact = naive.meb(Kt)
    ball = cvm.core_ball(X, y, kernels.Kernel(2, gamma), C, eps, np.random.default_rng(0), rounds=rounds)
    R, R_exact = math.sqrt(ball.r2), math.sqrt(r2_exact)
    assert ball.converged and R <= R_exact * (1 + 1e-9)
    assert R >= R_exact * (1 - 1e-2)
    if rounds == 7:
        assert naive.distances2(Kt, full_alpha(ball, 60)).max() <= ((1 + eps) * R) ** 2 * (1 + 1e-12)


def test_classifier_is_the_papers_scaled_to_margin_one(monkeypatch):
    """Through train (exact farthest point, tiny eps): decision values are the twin's
    f(x) = sum alpha_i y_i k(x_i, x) + sum alpha_i y_i over rho = alpha' K~ alpha, and the
    reported objective equals the dual 1 / (n C rho) at the optimum."""
    monkeypatch.setattr(cvm, "SAMPLE_SIZE", None)
    X, dense, y = problem(11, n=50)
    C, gamma = 5.0, 0.7
    model = train(X, TrainParams(solver="cvm", C=C, gamma=gamma, eps=1e-10))
    assert isinstance(model, KernelModel) and list(model.labels) == [1.0, -1.0]
    Kt = exact_kt(dense, y, gamma, C)
    alpha, _ = naive.meb(Kt)
    rho = alpha @ Kt @ alpha
    T, tdense, _ = problem(12, n=20)
    want = naive.decision(kernel_dense(2, dense, tdense, gamma, 3, 0.0), y, alpha) / rho
    np.testing.assert_allclose(model.decision_function(T)[:, 0], want, rtol=1e-4, atol=1e-4)
    r = model.fit_results[0]
    assert r.info["rho"] == pytest.approx(rho, rel=1e-6)
    assert r.objective == pytest.approx(r.info["dual"], rel=1e-6)
    assert r.objective == pytest.approx(1.0 / (50 * C * rho), rel=1e-6)


# ------------------------------------------------------------- training
def test_heart_near_the_exact_optimum_and_deterministic():
    """Default run (sampled farthest point, eps 1e-6) on heart_scale: objective within 0.5 % of the
    twin's exact optimum, training accuracy of an SVM; the same model for the same seed, with or
    without a trace (whose primal never falls below its dual)."""
    X = heart()
    n, C, gamma = X.n_rows, 10.0, 0.1
    params = TrainParams(solver="cvm", C=C, gamma=gamma)
    model = train(X, params)
    y = np.where(X.labels == model.labels[0], 1.0, -1.0)
    dense = dense_rows(X, 13)
    alpha, _ = naive.meb(exact_kt(dense, y, gamma, C))
    optimum = 1.0 / (n * C * (alpha @ exact_kt(dense, y, gamma, C) @ alpha))
    r = model.fit_results[0]
    assert r.converged and optimum <= r.objective <= 1.005 * optimum
    assert r.info["dual"] <= optimum * (1 + 1e-9)
    assert (model.predict(X) == X.labels).mean() > 0.93
    trace = Trace(X.labels, steps=16)
    again = train(X, params, monitor=trace)
    np.testing.assert_array_equal(again.coef, model.coef)
    np.testing.assert_array_equal(again.SV.indices, model.SV.indices)
    assert len(trace.rows) >= 5 and trace.rows[-1]["primal"] < trace.rows[0]["primal"]
    assert all(row["primal"] >= row["dual"] * (1 - 1e-9) for row in trace.rows)
    other = train(X, TrainParams(solver="cvm", C=C, gamma=gamma, seed=2))
    assert other.n_sv != model.n_sv or not np.array_equal(other.coef, model.coef)


def test_core_set_cap_stops_with_a_warning():
    lines = []
    model = train(heart(), TrainParams(solver="cvm", C=10.0, gamma=0.1, max_iter=20), log=lines.append)
    r = model.fit_results[0]
    assert not r.converged and r.info["core"] == 20 and model.n_sv <= 20
    assert any(line.startswith("WARNING") and "--max-iter" in line for line in lines)


def test_one_vs_rest_three_classes():
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=3.0, size=(3, 4))
    dense = np.vstack([c + rng.normal(size=(40, 4)) for c in centres])
    labels = np.repeat([2.0, 5.0, 7.0], 40)
    X = Chunk(labels=labels, indptr=np.arange(0, 4 * 120 + 1, 4, dtype=np.int64),
              indices=np.tile(np.arange(4, dtype=np.int32), 120), values=dense.ravel(), qid=np.zeros(120, np.int64))
    model = train(X, TrainParams(solver="cvm", C=10.0, gamma=0.2))
    assert model.n_models == 3 and (model.predict(X) == labels).mean() > 0.95


@pytest.mark.parametrize("kw, needle", [
    ({"bias": 1.0}, "-B"),
    ({"unreg_bias": True}, "--no-bias"),
    ({"unreg_bias": False}, "--no-bias"),
    ({"class_weights": {1.0: 2.0}}, "-w"),
    ({"kernel_type": 0}, "-s smo"),
    ({"kernel_type": 1, "coef0": 1.0}, "-s smo"),
    ({"kernel_type": 3}, "-s smo"),
])
def test_refusals(kw, needle):
    with pytest.raises(ParameterError, match=needle):
        train(heart(), TrainParams(solver="cvm", **kw))


def test_linear_kernel_on_normalised_rows():
    """k(x, x) constant (unit rows) is all the CVM needs: -t 0 then trains."""
    X = heart()
    norms = np.sqrt(np.add.reduceat(X.values ** 2, X.indptr[:-1]))
    X.values = X.values / np.repeat(norms, np.diff(X.indptr))
    model = train(X, TrainParams(solver="cvm", kernel_type=0, C=10.0))
    assert (model.predict(X) == X.labels).mean() > 0.8


# ------------------------------------------------------------ command line
def run(cmd, args):
    return CliRunner().invoke(cmd, [str(a) for a in args])


def test_command_line(tmp_path):
    data = bundled("heart_scale.xz")
    r = run(train_main, ["-s", "cvm", "-g", "0.1", "-c", "10", data, tmp_path / "model"])
    assert r.exit_code == 0, r.output
    r = run(predict_main, [data, tmp_path / "model", tmp_path / "out"])
    assert r.exit_code == 0, r.output
    correct, total = map(int, r.stdout.split("(")[1].rstrip(")\n").split("/"))
    assert total == 270 and correct / total > 0.93
    r = run(train_main, ["-s", "cvm", "-B", "1", data, tmp_path / "m2"])
    assert r.exit_code == 2 and "-B" in r.stderr
    assert not (tmp_path / "m2").exists()
