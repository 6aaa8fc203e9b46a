"""Sample weights (row weights from the Python API) and Pegasos' class weights:
weights against repeated rows, against scikit-learn's LinearSVC (LIBLINEAR's
instance-weight variant), against dcd's optimum, and what is refused."""
import lzma

import numpy as np
import pytest

import svmtrain
from conftest import bundled
from svmtrain.data.arrays import as_chunk
from svmtrain.errors import ParameterError
from svmtrain.io.reader import read_libsvm
from svmtrain.params import TrainParams


@pytest.fixture(scope="module")
def heart():
    """heart_scale as a dense array (270 x 13), labels +1/-1, and integer weights 0..3."""
    data = read_libsvm(bundled("heart_scale.xz"))
    X = np.zeros((data.n_rows, 13))
    rows = np.repeat(np.arange(data.n_rows), np.diff(data.indptr))
    X[rows, data.indices] = data.values
    weights = np.random.default_rng(0).integers(0, 4, size=data.n_rows).astype(np.float64)
    return X, data.labels, weights


def column(model):
    """The weight vector (with the -B weight) scoring label +1."""
    return model.W[:, 0] * (1.0 if model.labels[0] == 1 else -1.0)


TIGHT = dict(solver="dcd", C=1.0, bias=1.0, eps=1e-9, max_iter=100000)


@pytest.mark.parametrize("loss", ["hinge", "squared-hinge"])
def test_dcd_weights_equal_repeated_rows(heart, loss):
    X, y, s = heart
    weighted = svmtrain.train(X, y, sample_weight=s, loss=loss, **TIGHT)
    rows = np.repeat(np.arange(len(y)), s.astype(np.int64))
    repeated = svmtrain.train(X[rows], y[rows], loss=loss, **TIGHT)
    np.testing.assert_allclose(column(weighted), column(repeated), atol=1e-6)
    a, b = weighted.fit_results[0].info, repeated.fit_results[0].info
    assert a["primal_C_form"] == pytest.approx(b["primal_C_form"], rel=1e-7)
    assert a["dual_objective"] == pytest.approx(a["primal_C_form"], rel=1e-6)      # the duality gap closes


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_dcd_weights_match_liblinear_instance_weights(heart, loss):
    from sklearn.svm import LinearSVC
    X, y, s = heart
    ours = svmtrain.train(X, y, sample_weight=s, loss=loss.replace("_", "-"), **TIGHT)
    theirs = LinearSVC(loss=loss, C=1.0, tol=1e-9, max_iter=100000, intercept_scaling=1.0).fit(X, y, sample_weight=s)
    np.testing.assert_allclose(column(ours), np.r_[theirs.coef_[0], theirs.intercept_[0]], atol=1e-5)


def test_pegasos_weights_reach_dcds_optimum(heart):
    X, y, s = heart
    optimum = svmtrain.train(X, y, sample_weight=s, **TIGHT).fit_results[0].objective
    pegasos = svmtrain.train(X, y, sample_weight=s, solver="pegasos", C=1.0, bias=1.0, epochs=100)
    assert optimum <= pegasos.fit_results[0].objective <= 1.02 * optimum


def test_pegasos_class_weights_reach_dcds_optimum(heart):
    X, y, _ = heart
    chunk = as_chunk(X, y)
    weights = {1.0: 1.0, -1.0: 3.0}
    optimum = svmtrain.train(chunk, params=TrainParams(class_weights=weights, **TIGHT)).fit_results[0].objective
    pegasos = svmtrain.train(chunk, params=TrainParams(solver="pegasos", C=1.0, bias=1.0, epochs=100,
                                                       class_weights=weights))
    assert optimum <= pegasos.fit_results[0].objective <= 1.02 * optimum
    unweighted = svmtrain.train(chunk, params=TrainParams(solver="pegasos", C=1.0, bias=1.0, epochs=100))
    assert np.mean(pegasos.predict(chunk) == -1) > np.mean(unweighted.predict(chunk) == -1)


@pytest.mark.parametrize("solver", ["ocas", "sbp"])
def test_equal_weights_scale_c_for_every_solver(heart, solver):
    X, y, _ = heart
    weighted = svmtrain.train(X, y, sample_weight=np.full(len(y), 2.5), solver=solver, C=0.4)
    plain = svmtrain.train(X, y, solver=solver, C=1.0)
    np.testing.assert_array_equal(weighted.decision_function(as_chunk(X)), plain.decision_function(as_chunk(X)))


def test_zero_weights_drop_rows_for_every_solver(heart):
    X, y, s = heart
    keep = s > 0
    weighted = svmtrain.train(X, y, sample_weight=keep.astype(np.float64), solver="ocas")
    dropped = svmtrain.train(X[keep], y[keep], solver="ocas")
    np.testing.assert_array_equal(weighted.W, dropped.W)


@pytest.mark.parametrize("options, match", [
    (dict(solver="ocas"), "not supported by -s ocas .*solvers that take them: dcd, pegasos"),
    (dict(solver="dcd", loss="log"), "not supported by -s dcd for classification with --loss log"),
    (dict(solver="sbp"), "not supported by -s sbp"),
    (dict(solver="pegasos", kernel_type=2), "kernel models"),
])
def test_unequal_weights_are_refused_where_not_supported(heart, options, match):
    X, y, s = heart
    with pytest.raises(ParameterError, match=match):
        svmtrain.train(X, y, sample_weight=s, **options)


def test_dcd_regression_refuses_weights_naming_pegasos(heart):
    X, y, s = heart
    with pytest.raises(ParameterError, match="solvers that take them: pegasos"):
        svmtrain.train(X, y, sample_weight=s, task="r")


@pytest.mark.parametrize("weights, match", [([-1.0, 1.0, 1.0], ">= 0"), ([1.0, 1.0], "another length"),
                                            ([0.0, 0.0, 0.0], "zero for every row"), ([np.nan, 1, 1], "finite")])
def test_bad_weights_are_value_errors(weights, match):
    with pytest.raises(ValueError, match=match):
        as_chunk(np.eye(3), np.array([1.0, -1.0, 1.0]), sample_weight=weights)


def test_weights_survive_row_selection():
    chunk = as_chunk(np.eye(3), np.array([1.0, -1.0, 1.0]), sample_weight=[1.0, 2.0, 3.0])
    from svmtrain.data.dataset import take_rows
    assert take_rows(chunk, np.array([2, 0])).weights.tolist() == [3.0, 1.0]


def test_the_command_line_takes_pegasos_class_weights(tmp_path):
    from click.testing import CliRunner
    from svmtrain.cli.train import main
    src = tmp_path / "heart"
    src.write_bytes(lzma.open(bundled("heart_scale.xz")).read())
    res = CliRunner().invoke(main, ["-s", "pegasos", "-w-1", "3", "-q", str(src), str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    assert "class_weights -1.0 3.0" in (tmp_path / "m").read_text()
