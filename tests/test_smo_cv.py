"""svm-train -s smo -v K: the folds solved over one kernel matrix of all the
rows (smo_path.cross_val_predict, reached through the solver's
CROSS_VALIDATION hook in training/train.py) predict what the cold
fold-by-fold runs predict, on the same folds."""
import dataclasses

import numpy as np
import pytest

from conftest import scaled_svmguide1, three_classes
from svmtrain.data.dataset import take_rows
from svmtrain.errors import ParameterError
from svmtrain.params import TrainParams
from svmtrain.run import cross_validation_line
from svmtrain.solvers.kernel import smo_path
from svmtrain.training import train as T

SMO = TrainParams(solver="smo", kernel_type=2)


@pytest.fixture(scope="module")
def guide():
    return scaled_svmguide1(2)


def cold_predict(data, params, folds):
    """The out-of-fold labels of models trained fold by fold (train() and
    model.predict, the path -v took before the hook), on cross_val_predict's folds."""
    fold_of = T.fold_assignment(data, params, folds)
    pred = np.empty(data.n_rows)
    for k in range(folds):
        tr, te = np.flatnonzero(fold_of != k), np.flatnonzero(fold_of == k)
        model = T.train(take_rows(data, tr), params, n_features=data.n_features)
        pred[te] = model.predict(take_rows(data, te))
    return pred


def _hook_used(monkeypatch):
    """Record the calls of the smo hook (and what it returned)."""
    calls = []
    real = smo_path.cross_val_predict

    def spy(*args):
        out = real(*args)
        calls.append(out is not None)
        return out
    monkeypatch.setattr(smo_path, "cross_val_predict", spy)
    return calls


@pytest.mark.parametrize("C, gamma", [(1.0, 0.05), (32.0, 0.5), (2.0 ** 9, 2.0), (0.03125, 0.25)])
def test_heart_rates_equal_the_cold_runs(heart, monkeypatch, C, gamma):
    calls = _hook_used(monkeypatch)
    params = dataclasses.replace(SMO, C=C, gamma=gamma)
    fast = T.cross_val_predict(heart, params, 5)
    assert calls == [True]
    assert np.array_equal(fast, cold_predict(heart, params, 5))


@pytest.mark.parametrize("C, gamma", [(32.0, 0.5), (0.03125, 8.0), (2.0 ** 11, 8.0), (2.0, 2.0 ** -7)])
def test_svmguide1_rates_equal_the_cold_runs(guide, monkeypatch, C, gamma):
    """Half of svmguide1, 5 folds, grid.py's kind of points (large C: Newton
    steps end the solves; predictions may differ only within -e of 0)."""
    calls = _hook_used(monkeypatch)
    params = dataclasses.replace(SMO, C=C, gamma=gamma)
    fast = T.cross_val_predict(guide, params, 5)
    cold = cold_predict(guide, params, 5)
    assert calls == [True]
    assert np.count_nonzero(fast == guide.labels) == np.count_nonzero(cold == guide.labels)
    assert np.count_nonzero(fast != cold) <= 2


def test_three_classes_and_weights_equal_the_cold_runs(heart, monkeypatch):
    calls = _hook_used(monkeypatch)
    data = three_classes(heart)
    for params in (dataclasses.replace(SMO, C=4.0, gamma=0.125),
                   dataclasses.replace(SMO, C=2.0, gamma=0.5, class_weights={2.0: 3.0, -1.0: 0.5}),
                   dataclasses.replace(SMO, C=1.0, kernel_type=1, gamma=0.1, degree=2, coef0=1.0)):
        assert np.array_equal(T.cross_val_predict(data, params, 4), cold_predict(data, params, 4))
    assert calls == [True, True, True]


def test_the_printed_line_and_seeds(heart):
    """LIBSVM's line; another --seed deals other folds (the same ones as the cold runs')."""
    params = dataclasses.replace(SMO, C=1.0, gamma=0.1)
    line = cross_validation_line(heart, params, 5)
    cold = cold_predict(heart, params, 5)
    assert line == "Cross Validation Accuracy = %g%%" % (100.0 * np.mean(cold == heart.labels))
    other = dataclasses.replace(params, seed=7)
    assert np.array_equal(T.cross_val_predict(heart, other, 5), cold_predict(heart, other, 5))


def test_the_hook_declines_what_it_does_not_solve(heart, monkeypatch):
    """A matrix larger than -m, regression, row weights: fold by fold, as before."""
    calls = _hook_used(monkeypatch)
    small = dataclasses.replace(SMO, C=1.0, gamma=0.1, cache_mb=0.1)      # 270^2 floats: 0.28 MB
    assert np.array_equal(T.cross_val_predict(heart, small, 3), cold_predict(heart, small, 3))
    assert calls == [False]
    reg = dataclasses.replace(SMO, task="r", loss="epsilon-insensitive")
    T.cross_val_predict(heart, reg, 3)
    weighted = dataclasses.replace(heart, weights=np.ones(heart.n_rows))
    T.cross_val_predict(weighted, SMO, 3)
    assert calls == [False]          # (neither reached the hook)


def test_refusals_are_the_cold_runs(heart):
    """-w naming a label absent from the training rows, -B: the same errors as fold by fold."""
    with pytest.raises(ParameterError, match="-w names label"):
        T.cross_val_predict(heart, dataclasses.replace(SMO, class_weights={3.0: 2.0}), 3)
    with pytest.raises(ParameterError, match="-B is not supported by -s smo"):
        T.cross_val_predict(heart, dataclasses.replace(SMO, bias=1.0), 3)


def test_matrix_scores_is_numpys(heart):
    """The -v scorer's kernel against its NumPy statement, and against the
    float64 decision values a model computes (FoldScores) to float32's digits."""
    from svmtrain.solvers.kernel import smo
    from svmtrain.solvers.kernel._smo_path_kernels import matrix_scores
    params = dataclasses.replace(SMO, gamma=0.2)
    cache = smo_path.rows_kernel(heart, params, heart.n_features, budget_mb=1)
    train, test = np.arange(0, 270, 3), np.setdiff1d(np.arange(270), np.arange(0, 270, 3))
    sv = train[::2]
    coef = np.linspace(-2.0, 3.0, len(sv))
    out = np.full(len(test), 0.25)
    matrix_scores(cache.M, cache.slot_of, test, sv, coef, out)
    K = cache.M[cache.slot_of][np.ix_(test, sv)].astype(np.float64)
    assert np.allclose(out, 0.25 + K @ coef, rtol=1e-12, atol=1e-12)
    rows = np.arange(0, len(train), 2)
    full = np.zeros(len(train))
    full[rows] = coef
    got = smo_path.MatrixScores(cache, train, test).scores(np.arange(len(train)), full, 0.25)
    kernel = smo.kernel_of(params, heart.n_features)
    X, T_ = take_rows(heart, train), take_rows(heart, test)
    want = smo_path.FoldScores(kernel, T_, X, cache.sq[train], 0).scores(np.arange(len(train)), full, 0.25)
    assert np.allclose(got, out) and np.allclose(got, want, rtol=0, atol=1e-6 * np.abs(coef).sum())


def test_folds_side_by_side_are_the_same(heart):
    """--threads 2: two folds at once (views of one matrix) predict as one after the other."""
    params = dataclasses.replace(SMO, C=8.0, gamma=0.25)
    assert smo_path.fold_workers(params, 5) == 1
    two = dataclasses.replace(params, threads=2)
    if smo_path.fold_workers(two, 5) < 2:
        pytest.skip("one core")
    assert np.array_equal(T.cross_val_predict(heart, two, 5), T.cross_val_predict(heart, params, 5))
