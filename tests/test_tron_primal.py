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
from svmtrain.params import TrainParams
from svmtrain.solvers.tron import _newton_kernels as K
from svmtrain.solvers.tron.tron_primal import Problem, relative_tolerance
from svmtrain.training.train import train


NO_GRAM = (np.empty((0, 0)), np.empty(0), np.empty(0, np.uint8), np.empty(0), np.zeros(1, np.int64), 0.0, np.empty(0))


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
                                                False, tol, -1.0, 1000, *NO_GRAM)
    assert g0 == gnorm0
    w_ref, status_ref, it_ref, cg_ref, f_ref, gnorm_ref = naive.newton(X, y, cost, code, w0, tol, gnorm0, 1000)
    assert (status, it, cg) == (status_ref, it_ref, cg_ref) and status == K.CONVERGED and it >= 2
    np.testing.assert_allclose(w, w_ref, rtol=1e-9, atol=1e-12)
    assert f == pytest.approx(f_ref, rel=1e-11) and gnorm <= tol * gnorm0
    np.testing.assert_allclose(z, X @ w, rtol=1e-9, atol=1e-12)          # X w on return


@pytest.mark.parametrize("B, warm", [(0.0, False), (1.0, False), (2.0, True)])
def test_gram_form_takes_the_steps_of_the_passes(heart, B, warm):
    """The squared hinge's Gram form (-C's Problems): gram() is X^T S X and
    X^T S y of the dense twin (the constant feature B last); newton_run
    with it, kept from one C to the next along a path (rows leave the
    active set as C grows, a few come back), takes the same steps as the
    passes (iterations, CG steps, status) to the same w and X w up to
    rounding, and its G is then the active rows' sum (after a rebuild
    when more rows than there are have moved)."""
    y = binary(heart)
    d = heart.n_features
    scale = np.where(y > 0, 1.5, 1.0)
    X = naive.dense(heart.indptr, heart.indices, heart.values, d, B)
    G, r = K.gram(heart.indptr, heart.indices, heart.values, B, y, scale, d + 1)
    np.testing.assert_allclose(G, X.T @ (scale[:, None] * X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r, X.T @ (scale * y), rtol=1e-12, atol=1e-12)
    in_G, flips = np.ones(heart.n_rows, np.uint8), np.zeros(1, np.int64)
    tol = relative_tolerance(1e-4, y)
    w0 = np.linspace(-0.3, 0.3, d + 1) if warm else np.zeros(d + 1)
    w_a, z_a, w_b, z_b = w0.copy(), np.empty(heart.n_rows), w0.copy(), np.empty(heart.n_rows)
    for C in 2.0 ** np.arange(-8, 6):
        a = K.newton_run(heart.indptr, heart.indices, heart.values, B, y, C * scale, K.LOSS_SQUARED_HINGE, w_a,
                         z_a, C > 2.0 ** -8, tol, -1.0, 1000, *NO_GRAM)
        b = K.newton_run(heart.indptr, heart.indices, heart.values, B, y, C * scale, K.LOSS_SQUARED_HINGE, w_b,
                         z_b, C > 2.0 ** -8, tol, -1.0, 1000, G, r, in_G, scale, flips, C, np.empty(0))
        assert a[:3] == b[:3] and a[0] == K.CONVERGED
        np.testing.assert_allclose(w_b, w_a, rtol=1e-8, atol=1e-11)
        assert b[3] == pytest.approx(a[3], rel=1e-10) and b[4] <= tol * b[5]
        np.testing.assert_allclose(z_b, X @ w_b, rtol=1e-9, atol=1e-11)
        assert np.array_equal(in_G.astype(bool), y * z_b < 1.0)      # the active rows at the solution
        S = scale * in_G
        np.testing.assert_allclose(G, X.T @ (S[:, None] * X), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(r, X.T @ (S * y), rtol=1e-10, atol=1e-10)
    assert 0.2 < 1.0 - in_G.mean() < 0.8         # many rows left the active set on the way


@pytest.mark.parametrize("loss", ["squared-hinge", "log"])
def test_path_carry_gives_the_numbers_of_a_pass(heart, loss, monkeypatch):
    """Along a path of doubling C (Problem(path=True), the Gram form left
    out), each solve starts from the sums the previous one kept, scaled by
    2: the same numbers a pass gives, so every solve returns the same w, f
    and |grad f|, bit for bit, as one that recomputes them; the warm
    starts that already meet the stop take no pass at all."""
    import svmtrain.solvers.tron.tron_primal as TP
    monkeypatch.setattr(TP, "gram_pays", lambda *a: False)
    y = binary(heart)
    params = TrainParams(solver="tron", loss=loss, eps=0.01, C=1.0)
    kept, plain = (Problem(heart, y, heart.n_features, params, (1.5, 1.0), path=p) for p in (True, False))
    assert kept.carry.shape == (2 * (heart.n_features + 1) + 2,) and kept.G.shape == (0, 0)
    w_a, w_b = np.zeros(heart.n_features + 1), np.zeros(heart.n_features + 1)
    z_a, z_b = np.full(heart.n_rows, np.nan), np.full(heart.n_rows, np.nan)
    no_step = 0
    for C in 2.0 ** np.arange(-12, 8):
        a, b = kept.solve(C, w_a, z_a), plain.solve(C, w_b, z_b)
        assert a == b and np.array_equal(w_a, w_b) and np.array_equal(z_a, z_b)
        assert kept.carry[0] == C
        no_step += a[1] == 0
    assert no_step >= 3


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
