"""Pegasos: optimality against LIBLINEAR/LIBSVM optima, twin test, reproducibility."""
import numpy as np
import pytest
from click.testing import CliRunner

from conftest import bundled
from naive import dense, pegasos as naive_pegasos
from reference import csr, hinge_objective, liblinear_optimum, libsvm_linear_optimum
from svmtrain.cli.train import main as train_main
from svmtrain.io.model_io import load_model
from svmtrain.io.reader import read_libsvm
from svmtrain.params import TrainParams
from svmtrain.solvers.sgd import pegasos
from svmtrain.solvers.sgd._pegasos_kernels import pegasos_steps
from svmtrain.training.train import train


@pytest.fixture(scope="module")
def a9a():
    X = read_libsvm(bundled("a9a.xz"))
    return X, np.where(X.labels > 0, 1.0, -1.0)


@pytest.fixture(scope="module")
def a9a_test():
    return read_libsvm(bundled("a9a.t.xz"))


@pytest.fixture(scope="module")
def a9a_optimum(a9a):
    X, y = a9a
    return liblinear_optimum(X, y, 1e-4, 123)[1]


def test_cli_default_epochs_reach_one_percent_of_optimum(a9a, a9a_test, a9a_optimum, tmp_path):
    model_path = tmp_path / "model"
    r = CliRunner().invoke(train_main, ["-s", "pegasos", "-l", "1e-4", str(bundled("a9a.xz")), str(model_path)])
    assert r.exit_code == 0, r.output
    X, y = a9a
    model = load_model(model_path)
    assert model.labels.tolist() == [1.0, -1.0]
    f = hinge_objective(csr(X, 123), y, model.W[:, 0], 1e-4)
    assert 0.34 < a9a_optimum < 0.36          # sanity of the reference itself
    assert f <= 1.01 * a9a_optimum
    acc = np.mean(model.predict(a9a_test) == a9a_test.labels)
    assert acc >= 0.847


@pytest.mark.parametrize("seed", [2, 3])
def test_other_seeds_meet_the_bar(a9a, a9a_test, a9a_optimum, seed):
    X, _ = a9a
    model = train(X, TrainParams(solver="pegasos", lam=1e-4, seed=seed))
    assert model.fit_results[0].objective <= 1.01 * a9a_optimum
    assert np.mean(model.predict(a9a_test) == a9a_test.labels) >= 0.847


def test_same_seed_gives_byte_identical_model_file(tmp_path):
    paths = [tmp_path / "m1", tmp_path / "m2", tmp_path / "m3"]
    for p, seed in zip(paths, ["7", "7", "8"]):
        r = CliRunner().invoke(train_main, ["-q", "-l", "1e-3", "--seed", seed, str(bundled("heart_scale.xz")), str(p)])
        assert r.exit_code == 0, r.output
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert paths[0].read_bytes() != paths[2].read_bytes()


@pytest.mark.parametrize("k,B,unreg,average", [(1, 0.0, False, False), (4, 0.0, False, True),
                                                (3, 1.0, False, True), (2, 0.0, True, True)])
def test_kernel_matches_numpy_twin(k, B, unreg, average):
    X = read_libsvm(bundled("heart_scale.xz"))
    y = np.where(X.labels > 0, 1.0, -1.0)
    d, lam = X.n_features, 0.05
    draws = np.random.default_rng(0).integers(0, X.n_rows, size=300 * k)
    avg_start = 150 if average else 10**9
    v, acc, corr = np.zeros(d + 1), np.zeros(d + 1), np.zeros(d + 1)
    state = np.array([1.0, 0, 0, 0, 0, 0])
    pegasos_steps(X.indptr, X.indices, X.values, y, draws, k, 0,
                  lam, B, unreg, avg_start, v, state, acc, corr, np.empty(k, np.int64), np.empty(k), 0, 0.0, 1.0 / lam)
    w, b = pegasos._current(v, state, acc, corr, average)
    w_ref, b_ref = naive_pegasos(dense(X, d), y, lam, draws, k, B=B, unreg_bias=unreg,
                                 avg_start=avg_start if average else None)
    np.testing.assert_allclose(w, w_ref, rtol=1e-9, atol=1e-10)
    assert b == pytest.approx(b_ref, rel=1e-9, abs=1e-10)


def test_iterate_stays_in_the_ball():
    X = read_libsvm(bundled("heart_scale.xz"))
    y = np.where(X.labels > 0, 1.0, -1.0)
    for lam in (1.0, 0.1):
        r = pegasos.fit(X, y, X.n_features, TrainParams(lam=lam, epochs=3, average=False))
        assert np.linalg.norm(r.w) <= 1 / np.sqrt(lam) * (1 + 1e-12)


def test_unregularized_bias_reaches_libsvm_optimum():
    X = read_libsvm(bundled("heart_scale.xz"))
    y = np.where(X.labels > 0, 1.0, -1.0)
    _, _, f_star = libsvm_linear_optimum(X, y, 1e-2, X.n_features)
    r = pegasos.fit(X, y, X.n_features, TrainParams(lam=1e-2, unreg_bias=True))
    assert r.b != 0.0
    assert r.objective <= 1.02 * f_star


def test_regularized_bias_feature_reaches_liblinear_optimum():
    X = read_libsvm(bundled("heart_scale.xz"))
    y = np.where(X.labels > 0, 1.0, -1.0)
    _, f_star = liblinear_optimum(X, y, 1e-2, X.n_features, B=1.0)
    r = pegasos.fit(X, y, X.n_features, TrainParams(lam=1e-2, bias=1.0))
    assert len(r.w) == X.n_features + 1 and r.w[-1] != 0.0
    assert r.objective <= 1.01 * f_star


def test_minibatch_reaches_optimum(a9a, a9a_optimum):
    X, y = a9a
    r = pegasos.fit(X, y, 123, TrainParams(lam=1e-4, batch_size=8, epochs=60))
    assert r.objective <= 1.01 * a9a_optimum


def test_eps_stops_early(a9a):
    X, y = a9a
    r = pegasos.fit(X, y, 123, TrainParams(lam=1e-4, epochs=200, eps=1e-2))
    assert r.converged and r.info["epochs"] < 200


# ---------------------------------------------------------------- other losses
@pytest.mark.parametrize("loss, task", [("log", "c"), ("epsilon-insensitive", "r"),
                                        ("squared-epsilon-insensitive", "r")])
@pytest.mark.parametrize("k, average", [(1, False), (4, True)])
def test_other_losses_match_the_numpy_twin(loss, task, k, average):
    from svmtrain.solvers.sgd._pegasos_kernels import LOSS_CODES
    X = read_libsvm(bundled("heart_scale.xz"))
    d, lam = X.n_features, 0.05
    y = np.where(X.labels > 0, 1.0, -1.0) if task == "c" else X.values[X.indptr[:-1]] * 3.0 + 0.5
    p = 0.2 if task == "r" else 0.0
    params = TrainParams(solver="pegasos", task=task, loss=loss, lam=lam, **({"epsilon": p} if task == "r" else {}))
    code, p_used, radius2 = pegasos.loss_setup(params, y, lam)
    assert code == LOSS_CODES[loss] and p_used == p
    draws = np.random.default_rng(1).integers(0, X.n_rows, size=300 * k)
    avg_start = 150 if average else 10**9
    v, acc, corr = np.zeros(d + 1), np.zeros(d + 1), np.zeros(d + 1)
    state = np.array([1.0, 0, 0, 0, 0, 0])
    pegasos_steps(X.indptr, X.indices, X.values, y, draws, k, 0,
                  lam, 1.0, True, avg_start, v, state, acc, corr, np.empty(k, np.int64), np.empty(k), code, p, radius2)
    w, b = pegasos._current(v, state, acc, corr, average)
    w_ref, b_ref = naive_pegasos(dense(X, d), y, lam, draws, k, B=1.0, unreg_bias=True,
                                 avg_start=avg_start if average else None, loss=loss, p=p, radius2=radius2)
    np.testing.assert_allclose(w, w_ref, rtol=1e-9, atol=1e-10)
    assert b == pytest.approx(b_ref, rel=1e-9, abs=1e-10)


def test_log_loss_on_a9a_near_dcds_optimum():
    """pegasos --loss log at lambda 1e-4: objective within 1 % of dcd's logistic optimum, accuracy within
    0.5 points on a9a.t."""
    X, T = read_libsvm(bundled("a9a.xz")), read_libsvm(bundled("a9a.t.xz"))
    lam = 1e-4
    sgd = train(X, TrainParams(solver="pegasos", loss="log", lam=lam, epochs=10))
    exact = train(X, TrainParams(loss="log", lam=lam, eps=1e-6, max_iter=10000))
    f_sgd, f_exact = sgd.fit_results[0].objective, exact.fit_results[0].objective
    assert f_exact <= f_sgd <= 1.01 * f_exact
    acc = [float(np.mean(m.predict(T) == T.labels)) for m in (sgd, exact)]
    assert abs(acc[0] - acc[1]) <= 0.005
    assert sgd.has_probabilities


def test_regression_on_concrete_near_dcds_optimum():
    import lzma
    import tempfile
    from conftest import shared
    text = tempfile.NamedTemporaryFile(suffix=".txt", delete=False).name
    with open(text, "wb") as f:
        f.write(lzma.decompress(shared("concrete_scale.xz").read_bytes()))
    X = read_libsvm(text)
    for loss in ("epsilon-insensitive", "squared-epsilon-insensitive"):
        kw = dict(task="r", loss=loss, lam=1e-3, epsilon=0.1, bias=1.0)
        sgd = train(X, TrainParams(solver="pegasos", epochs=100, **kw))
        exact = train(X, TrainParams(eps=1e-8, max_iter=100000, **kw))
        f_sgd, f_exact = sgd.fit_results[0].objective, exact.fit_results[0].objective
        assert f_exact <= f_sgd * (1 + 1e-12) and f_sgd <= 1.02 * f_exact, (loss, f_sgd, f_exact)
        assert sgd.task == "r"


def test_kernel_pegasos_refuses_the_other_losses():
    """Its declaration's kernelized_tasks: hinge classification only; the refusal names who can."""
    from svmtrain.errors import ParameterError
    X = read_libsvm(bundled("heart_scale.xz"))
    with pytest.raises(ParameterError, match=r"with --loss log; no kernel solver does; -s pegasos without -t"):
        train(X, TrainParams(solver="pegasos", kernel_type=2, loss="log"))
    with pytest.raises(ParameterError, match=r"regression \(--task r\); kernel solvers that do: -s smo, -s asset$"):
        train(X, TrainParams(solver="pegasos", kernel_type=2, task="r"))
