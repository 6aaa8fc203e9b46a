"""-s norma (Kivinen, Smola, Williamson 2004): the numba steps against a plain NumPy twin,
the truncation, accuracy and objective on heart_scale, determinism, the command line."""
import lzma

import numpy as np
import pytest
from click.testing import CliRunner

import naive_norma as twin
from naive import dense as dense_rows
from conftest import bundled, heart_scale as heart
from naive_sbp import dual_solve, kernel_dense
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main
from svmtrain.data.dataset import Chunk
from svmtrain.errors import ParameterError
from svmtrain.io.model_io import load_model
from svmtrain.mercer.functions import Kernel
from svmtrain.models.kernel import KernelModel
from svmtrain.params import TrainParams
from svmtrain.solvers.kernel import _norma_kernels as K
from svmtrain.solvers.kernel import norma
from svmtrain.training.trace import Trace
from svmtrain.training.train import train
from test_sbp import random_chunk


def run_numba(X, y, kernel, order, lam, t0, budget, bias, dense, fold=K.FOLD_BELOW, calls=(0.4,)):
    """The solver's steps over ``order`` (split into several calls), the ring afterwards."""
    rows = norma.Rows(X, kernel, 5)
    ring = norma.Ring(budget, rows.d, 1 << 30 if dense else 0)
    assert ring.dense == dense
    cuts = [0] + [int(c * len(order)) for c in calls] + [len(order)]
    for lo, hi in zip(cuts, cuts[1:]):
        norma.run_steps(rows, y, order[lo:hi], lo, lam, t0, bias, ring, fold_below=fold)
    return rows, ring


KERNELS = [Kernel(2, gamma=0.6), Kernel(0), Kernel(1, gamma=0.3, degree=2, coef0=1.0),
           Kernel(3, gamma=0.2, coef0=-0.5)]


@pytest.mark.parametrize("kernel", KERNELS, ids=["rbf", "linear", "poly", "sigmoid"])
@pytest.mark.parametrize("dense, bias, fold", [(True, True, K.FOLD_BELOW), (False, True, 0.99),
                                               (True, False, 0.99), (False, False, K.FOLD_BELOW)])
def test_steps_match_numpy_twin(kernel, dense, bias, fold):
    """Same draws, same terms (rows in order, alphas) and bias as the explicit twin, to 1e-9;
    fold = 0.99 folds the scale into the coefficients at almost every step."""
    rng = np.random.default_rng(7)
    X, D = random_chunk(rng, 60, 5, density=0.7)
    y = X.labels.copy()
    lam, t0, budget = 0.05, 3.0, 15
    order = rng.integers(0, 60, size=300)
    rows, ring = run_numba(X, y, kernel, order, lam, t0, budget, bias, dense, fold, calls=(0.25, 0.6))
    k = kernel.resolved(5)
    Kfull = kernel_dense(k.code, D, D, k.gamma, k.degree, k.coef0)
    terms, b, violators = twin.norma(Kfull, y, order, lam, t0, budget, bias)
    got_rows, got_alphas = ring.terms()
    assert len(violators) > 3 * budget            # the ring wrapped several times
    np.testing.assert_array_equal(got_rows, [r for r, _ in terms])
    np.testing.assert_allclose(got_alphas, [a for _, a in terms], rtol=1e-9, atol=1e-9)
    assert ring.bias == pytest.approx(b, rel=1e-9, abs=1e-9)
    assert (ring.bias == 0.0) == (not bias)
    assert ring.counters[K.C_VIOL] == len(violators)
    assert norma.objective(ring, rows, y, lam) == pytest.approx(twin.objective(Kfull, y, terms, b, lam), rel=1e-9)


def test_budget_at_least_steps_is_the_untruncated_expansion():
    rng = np.random.default_rng(3)
    X, D = random_chunk(rng, 60, 5, density=0.7)
    y = X.labels.copy()
    order = rng.integers(0, 60, size=200)
    _, ring = run_numba(X, y, Kernel(2, gamma=0.6), order, 0.02, 10.0, 200, True, True)
    Kfull = kernel_dense(2, D, D, 0.6, 3, 0.0)
    terms, b, violators = twin.norma(Kfull, y, order, 0.02, 10.0, budget=None)
    rows, alphas = ring.terms()
    assert ring.count == len(violators) == len(terms) > 30
    np.testing.assert_array_equal(rows, violators)
    np.testing.assert_allclose(alphas, [a for _, a in terms], rtol=1e-9, atol=1e-12)
    assert ring.bias == pytest.approx(b, rel=1e-9)


@pytest.mark.parametrize("dense", [True, False])
def test_small_budget_keeps_exactly_the_latest_violators(dense):
    """Step by step: the violators are read off the counters; the ring holds the last ``budget`` of them."""
    rng = np.random.default_rng(5)
    X, _ = random_chunk(rng, 60, 5, density=0.7)
    y = X.labels.copy()
    budget = 7
    rows = norma.Rows(X, Kernel(2, gamma=0.6), 5)
    ring = norma.Ring(budget, rows.d, 1 << 30 if dense else 0)
    seen = []
    for t, i in enumerate(rng.integers(0, 60, size=250)):
        before = int(ring.counters[K.C_VIOL])
        norma.run_steps(rows, y, [i], t, 0.05, 20.0, True, ring)
        if ring.counters[K.C_VIOL] > before:
            seen.append(int(i))
        assert ring.count == min(len(seen), budget)
    kept, alphas = ring.terms()
    assert len(seen) > 3 * budget and ring.count == budget
    np.testing.assert_array_equal(kept, seen[-budget:])
    assert np.all(alphas * y[kept] > 0)          # each term is eta y of its violator, shrunk
    if dense:                                    # the dense copy holds exactly the kept rows
        np.testing.assert_array_equal(ring.D, dense_rows(X, 5)[ring.rows].T)


def test_heart_accuracy_and_objective_near_the_optimum():
    """C = 1, RBF 1/13 (LIBSVM's defaults): 1350 steps under the budget of 2000, so
    no truncation; the objective within 12 % of the optimum (with bias), training
    accuracy within 2 points of LIBSVM's 86.67 %."""
    X = heart()
    model = train(X, TrainParams(solver="norma"))
    assert isinstance(model, KernelModel) and model.solver == "norma"
    assert model.kernel.code == 2 and model.kernel.gamma == pytest.approx(1 / 13)
    r = model.fit_results[0]
    assert r.info["epochs"] == 5 and r.n_iter == 5 * 270 and r.info["terms"] == r.info["violators"]
    y = np.where(X.labels == model.labels[0], 1.0, -1.0)
    Kf = kernel_dense(2, dense_rows(X, 13), dense_rows(X, 13), 1 / 13, 3, 0.0)
    alpha, rho = dual_solve(Kf, y, 1.0, bias=True, tol=1e-8)
    lam = 1.0 / 270
    ya = y * alpha
    opt = 0.5 * lam * ya @ Kf @ ya + np.maximum(0, 1 - y * (Kf @ ya - rho)).mean()
    assert opt <= r.objective <= 1.12 * opt
    assert (model.predict(X) == X.labels).mean() >= 0.8467


def test_model_objective_matches_model_file_and_trace_falls():
    """The trace's last row, the model header and a plain NumPy evaluation of the
    model agree; the monitor changes nothing; the first epoch's objective is the highest."""
    X = heart()
    p = TrainParams(solver="norma", gamma=0.1, epochs=6, budget=300)
    trace = Trace(X.labels)
    model = train(X, p, monitor=trace)
    plain = train(X, p)
    np.testing.assert_array_equal(model.coef, plain.coef)
    primal = [row["primal"] for row in trace.rows]
    assert len(primal) == 6 and primal[0] == max(primal)
    assert model.fit_results[0].info["terms"] == 300 and model.n_sv <= 300
    D = dense_rows(X, 13)
    SV = dense_rows(model.SV, 13)
    y = np.where(X.labels == model.labels[0], 1.0, -1.0)
    a = model.coef[:, 0]
    f = kernel_dense(2, D, SV, 0.1, 3, 0.0) @ a + model.b[0]
    obj = 0.5 * model.fit_results[0].info["lambda"] * a @ kernel_dense(2, SV, SV, 0.1, 3, 0.0) @ a
    obj += np.maximum(0.0, 1.0 - y * f).mean()
    assert primal[-1] == pytest.approx(obj, rel=1e-9)
    assert model.fit_results[0].objective == primal[-1]


def test_seed_determinism():
    X = heart()
    a, b = (train(X, TrainParams(solver="norma", budget=100, seed=4)) for _ in range(2))
    c = train(X, TrainParams(solver="norma", budget=100, seed=5))
    np.testing.assert_array_equal(a.coef, b.coef)
    np.testing.assert_array_equal(a.SV.indices, b.SV.indices)
    assert a.b[0] == b.b[0]
    assert a.coef.shape != c.coef.shape or not np.array_equal(a.coef, c.coef)


def test_one_vs_rest_and_no_bias():
    """Three well separated classes: one column per class over the union of kept rows."""
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=4.0, size=(3, 4))
    cls = np.repeat([0, 1, 2], 40)
    vals = centres[cls] + rng.normal(size=(120, 4))
    X = Chunk(labels=np.array([2.0, 3.0, 7.0])[cls], indptr=np.arange(0, 481, 4, dtype=np.int64),
              indices=np.tile(np.arange(4, dtype=np.int32), 120), values=vals.ravel(), qid=np.zeros(120, np.int64))
    model = train(X, TrainParams(solver="norma", gamma=0.1, budget=30, unreg_bias=False))
    assert model.n_models == 3 and list(model.labels) == [2.0, 3.0, 7.0]
    assert np.all(model.b == 0.0)
    assert 30 <= model.n_sv <= 90 and np.all(np.any(model.coef != 0, axis=1))
    assert (model.predict(X) == X.labels).mean() > 0.95


def test_command_line_and_budget(tmp_path):
    data = tmp_path / "heart_scale"
    data.write_bytes(lzma.decompress(bundled("heart_scale.xz").read_bytes()))
    r = CliRunner().invoke(train_main, ["-q", "-s", "norma", "--budget", "50", "-g", "0.1", str(data),
                                        str(tmp_path / "model")])
    assert r.exit_code == 0, r.output
    model = load_model(tmp_path / "model")
    assert model.n_sv <= 50 and dict(model.header)["budget"] == "50"
    r = CliRunner().invoke(predict_main, [str(data), str(tmp_path / "model"), str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    correct, total = map(int, r.stdout.split("(")[1].rstrip(")\n").split("/"))
    assert total == 270 and correct / total > 0.7
    r = CliRunner().invoke(train_main, ["-q", "-s", "norma", "--budget", "0", str(data), str(tmp_path / "m0")])
    assert r.exit_code == 2 and "--budget" in r.stderr


def test_refusals():
    X = heart()
    with pytest.raises(ParameterError, match="-B"):
        train(X, TrainParams(solver="norma", bias=1.0))
    with pytest.raises(ParameterError, match="-w"):
        train(X, TrainParams(solver="norma", class_weights={1.0: 2.0}))
    with pytest.raises(ParameterError):
        train(X, TrainParams(solver="norma", loss="squared-hinge"))
    with pytest.raises(ParameterError, match="norma"):
        train(X, TrainParams(solver="pegasos", budget=10))


def test_eps_stops_early_and_log_lines():
    X = heart()
    lines = []
    r = train(X, TrainParams(solver="norma", epochs=50, eps=0.5), log=lines.append).fit_results[0]
    assert r.converged and 2 <= r.info["epochs"] < 50 and r.n_iter == 270 * r.info["epochs"]
    assert len(lines) == r.info["epochs"] and lines[0].startswith("epoch 1: ")
    full = train(X, TrainParams(solver="norma", epochs=3)).fit_results[0]
    assert full.converged and full.info["epochs"] == 3
