"""-s tron --task c: the primal Newton method (LIBLINEAR's -s 2 / -s 0 solver), against its NumPy twin and dcd."""
import dataclasses

import numpy as np
import pytest
from click.testing import CliRunner

import naive_newton as naive
from conftest import bundled
from svmtrain.cli.train import main as train_main
from svmtrain.data.dataset import Chunk, take_rows
from svmtrain.io.model_io import load_model
from svmtrain.io.reader import read_libsvm
from svmtrain.params import TrainParams
from svmtrain.solvers.tron import _newton_kernels as K
from svmtrain.solvers.tron.tron_primal import Problem, relative_tolerance
from svmtrain.training.train import train


@pytest.fixture(scope="module")
def heart():
    return read_libsvm(bundled("heart_scale.xz"))


def heart_dense(chunk, B=0.0):
    return naive.dense(chunk.indptr, chunk.indices, chunk.values, chunk.n_features, B)


def binary(chunk):
    return np.where(chunk.labels == chunk.labels[0], 1.0, -1.0)


@pytest.mark.parametrize("loss", ["squared-hinge", "log"])
@pytest.mark.parametrize("B, C, warm", [(0.0, 0.5, False), (1.0, 8.0, False), (2.0, 64.0, True)])
def test_kernel_matches_its_numpy_twin(heart, loss, B, C, warm):
    """newton_run and naive_newton.newton take the same steps: the same
    iterations, CG steps and status, w and f equal to rounding; with class
    costs and a warm start."""
    y = binary(heart)
    d = heart.n_features
    cost = C * np.where(y > 0, 1.5, 1.0)
    code = K.LOSS_CODES[loss]
    w0 = np.linspace(-0.3, 0.3, d + 1) if warm else np.zeros(d + 1)
    gnorm0 = K.grad_norm_at_zero(heart.indptr, heart.indices, heart.values, B, y, cost, code, d + 1)
    X = naive.dense(heart.indptr, heart.indices, heart.values, d, B)
    assert gnorm0 == pytest.approx(naive.grad_norm_at_zero(X, y, cost, code), rel=1e-12)
    tol = relative_tolerance(1e-4, y)
    w = w0.copy()
    z = np.empty(heart.n_rows)
    status, it, cg, f, gnorm, g0 = K.newton_run(heart.indptr, heart.indices, heart.values, B, y, cost, code, w, z,
                                                False, tol, -1.0, 1000)
    assert g0 == gnorm0
    w_ref, status_ref, it_ref, cg_ref, f_ref, gnorm_ref = naive.newton(X, y, cost, code, w0, tol, gnorm0, 1000)
    assert (status, it, cg) == (status_ref, it_ref, cg_ref) and status == K.CONVERGED and it >= 2
    np.testing.assert_allclose(w, w_ref, rtol=1e-9, atol=1e-12)
    assert f == pytest.approx(f_ref, rel=1e-11) and gnorm <= tol * gnorm0
    np.testing.assert_allclose(z, X @ w, rtol=1e-9, atol=1e-12)          # X w on return


@pytest.mark.parametrize("loss", ["squared-hinge", "log"])
@pytest.mark.parametrize("C, bias", [(2.0 ** -6, -1.0), (1.0, 1.0), (64.0, -1.0)])
def test_optimum_is_dcds(heart, loss, C, bias):
    """tron minimises the primal whose dual dcd solves: the same objective, to the tolerances."""
    ours = train(heart, TrainParams(solver="tron", loss=loss, C=C, bias=bias, eps=1e-8))
    theirs = train(heart, TrainParams(solver="dcd", loss=loss, C=C, bias=bias, eps=1e-7, max_iter=100000))
    f, f_dcd = ours.fit_results[0].info["primal_C_form"], theirs.fit_results[0].info["primal_C_form"]
    assert f <= f_dcd * (1 + 1e-9) and f == pytest.approx(f_dcd, rel=1e-6)
    np.testing.assert_allclose(ours.W, theirs.W, atol=2e-3 * np.abs(theirs.W).max())


def test_stop_is_liblinears_and_a_warm_start_that_meets_it_takes_no_step(heart):
    """|grad f| <= eps max(min(#pos, #neg), 1) / l |grad f(0)|; from a w that
    already meets it (the previous C's solution on a flat stretch of the
    path) no step is taken and w is returned untouched."""
    y = binary(heart)
    pos = int(np.sum(y > 0))
    assert relative_tolerance(0.01, y) == 0.01 * min(pos, len(y) - pos) / len(y)
    params = TrainParams(solver="tron", loss="squared-hinge", C=4.0)
    problem = Problem(heart, y, heart.n_features, params)
    w = np.zeros(heart.n_features + 1)
    status, it, _, _, gnorm, gnorm0 = problem.solve(4.0, w)
    assert status == K.CONVERGED and it > 0 and gnorm <= problem.tol * gnorm0
    w_at_4 = w.copy()
    out = problem.solve(4.0 * (1 + 1e-9), w)
    assert out[1] == 0 and np.array_equal(w, w_at_4)
    # a path keeps X w with w: the next C resumes without recomputing it, to the same point
    tight = Problem(heart, y, heart.n_features, dataclasses.replace(params, eps=1e-9))
    w2, z = np.zeros_like(w), np.full(heart.n_rows, np.nan)
    for C in (1.0, 2.0, 4.0, 8.0):
        tight.solve(C, w2, z)
        assert np.allclose(z, heart_dense(heart) @ w2, rtol=1e-10, atol=1e-12)
    w3 = np.zeros_like(w)
    tight.solve(8.0, w3)
    np.testing.assert_allclose(w2, w3, rtol=1e-6, atol=1e-6)


def test_warm_start_and_fit_report(heart):
    warm = []
    cold = train(heart, TrainParams(solver="tron", loss="log", C=2.0, eps=1e-6))
    for C in (0.5, 1.0, 2.0):
        hot = train(heart, TrainParams(solver="tron", loss="log", C=C, eps=1e-6), warm_start=warm)
    assert "w" in warm[0] and hot.fit_results[0].n_iter < cold.fit_results[0].n_iter
    assert hot.fit_results[0].info["primal_C_form"] == pytest.approx(cold.fit_results[0].info["primal_C_form"],
                                                                     rel=1e-9)
    info = cold.fit_results[0].info
    assert cold.fit_results[0].converged and info["grad_norm"] <= 1e-6 * info["grad_norm0"]
    assert cold.fit_results[0].objective == pytest.approx(info["primal_C_form"] / (heart.n_rows * 2.0))


def test_sample_weights_are_row_costs(heart):
    """A row of weight 2 counts as the row twice (C_i = C s_i)."""
    rows = np.arange(heart.n_rows)
    twice = take_rows(heart, np.concatenate([rows, rows[:40]]))
    weighted = dataclasses.replace(heart, weights=np.where(rows < 40, 2.0, 1.0))
    params = TrainParams(solver="tron", loss="squared-hinge", C=0.7, eps=1e-8)
    a, b = train(weighted, params), train(twice, params)
    assert a.fit_results[0].info["primal_C_form"] == pytest.approx(b.fit_results[0].info["primal_C_form"], rel=1e-9)


def test_command_line_multiclass_and_refusals(tmp_path):
    iris_like = Chunk(labels=np.repeat([1.0, 2.0, 3.0], 20),
                      indptr=np.arange(0, 121, 2, dtype=np.int64),
                      indices=np.tile(np.array([0, 1], np.int32), 60),
                      values=np.concatenate([[np.cos(a), np.sin(a)] for a in
                                             np.repeat([0.0, 2.1, 4.2], 20) + np.linspace(-0.3, 0.3, 60)]),
                      qid=np.zeros(60, np.int64))
    model = train(iris_like, TrainParams(solver="tron", loss="log", C=10.0))
    assert model.W.shape == (2, 3) and np.mean(model.predict(iris_like) == iris_like.labels) == 1.0
    data = str(bundled("heart_scale.xz"))
    r = CliRunner().invoke(train_main, ["-s", "tron", "-q", data, str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    header = dict(load_model(tmp_path / "m").header)
    assert header["solver"] == "tron" and header["loss"] == "squared-hinge"     # tron's first classification loss
    r = CliRunner().invoke(train_main, ["-s", "tron", "--loss", "hinge", data])
    assert r.exit_code == 2 and "-s dcd" in r.output
    r = CliRunner().invoke(train_main, ["-s", "tron", "-R", data])
    assert r.exit_code == 2 and "-R" in r.output
