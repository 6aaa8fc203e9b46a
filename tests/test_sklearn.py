"""svmtrain.sklearn: scikit-learn's estimator checks, arrays in svmtrain.train,
and models that go between Python and svm-predict."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

import scipy.sparse as sp
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import svmtrain
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main
from svmtrain.sklearn import (SVMClassifier, SVMOneClass, SVMRanker, SVMRegressor,
                              expected_failed_checks, load)


ESTIMATORS = [SVMClassifier(), SVMClassifier(solver="ocas"), SVMClassifier(solver="pegasos"),
              SVMClassifier(solver="sbp", kernel="rbf", options={"epochs": 5}),
              SVMRegressor(), SVMRegressor(solver="pegasos"), SVMOneClass()]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_scikit_learn_estimator_checks(estimator, check):
    if check.func.__name__ == "check_array_api_input" and not os.environ.get("SCIPY_ARRAY_API"):
        run_with_scipy_array_api(estimator, check)
    else:
        check(estimator)


_ARRAY_API_RUNS = {}


def run_with_scipy_array_api(estimator, check):
    """scikit-learn's array API check needs SciPy's array API mode, which
    SciPy reads when it is imported: run the check in a fresh interpreter
    with SCIPY_ARRAY_API=1, not by turning the mode on for the whole suite
    (whose users do not have it). One interpreter checks every estimator of
    ESTIMATORS (a start imports scikit-learn, SciPy and numba: seconds), each
    test then reads its estimator's outcome."""
    assert check.args[0] == type(estimator).__name__
    key = repr(check.keywords)
    if key not in _ARRAY_API_RUNS:
        code = ("import json, traceback\n"
                "from sklearn.utils.estimator_checks import check_array_api_input\n"
                "from svmtrain.sklearn import SVMClassifier, SVMOneClass, SVMRegressor\n"
                "outcome = {}\n"
                f"for estimator in [{', '.join(repr(e) for e in ESTIMATORS)}]:\n"
                "    try:\n"
                f"        check_array_api_input(type(estimator).__name__, estimator, **{check.keywords!r})\n"
                "        outcome[repr(estimator)] = None\n"
                "    except Exception:\n"
                "        outcome[repr(estimator)] = traceback.format_exc()\n"
                "print(json.dumps(outcome))\n")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={**os.environ, "SCIPY_ARRAY_API": "1"})
        assert r.returncode == 0, r.stderr
        _ARRAY_API_RUNS[key] = json.loads(r.stdout.strip().splitlines()[-1])
    outcome = _ARRAY_API_RUNS[key]
    assert repr(estimator) in outcome, sorted(outcome)
    assert outcome[repr(estimator)] is None, outcome[repr(estimator)]


def test_train_takes_a_scipy_matrix_and_a_numpy_array(a9a_arrays):
    """svmtrain.train(X, y) on scikit-learn's CSR (no copy of its data) and on
    the dense array: the model of the file, weight for weight."""
    X, y, T, t, paths = a9a_arrays
    from_file = svmtrain.train(str(paths[0]), C=1.0)
    from_csr = svmtrain.train(X, y, C=1.0)
    from_dense = svmtrain.train(X[:2000].toarray(), y[:2000], C=1.0)
    np.testing.assert_array_equal(from_csr.W, from_file.W)
    assert from_dense.W.shape == from_file.W.shape
    np.testing.assert_array_equal(svmtrain.predict(T, from_csr), svmtrain.predict(str(paths[1]), from_file))
    with pytest.raises(TypeError, match="needs its labels"):
        svmtrain.train(X)


def test_python_model_read_by_svm_predict(a9a_arrays, tmp_path):
    """Fitted in Python, saved, read by svm-predict: the same labels (a9a.t);
    accuracy as LIBLINEAR's hinge SVM (> 84.5 %). And back: an svm-train model
    loaded as an estimator predicts what svm-predict prints."""
    X, y, T, t, paths = a9a_arrays
    est = SVMClassifier(C=1.0).fit(X, y)
    assert est.score(T, t) > 0.845
    model = tmp_path / "py.model"
    est.save(model)
    out = tmp_path / "out"
    r = CliRunner().invoke(predict_main, [str(paths[1]), str(model), str(out)])
    assert r.exit_code == 0, r.output
    np.testing.assert_array_equal(np.loadtxt(out), est.predict(T))
    cli_model = tmp_path / "cli.model"
    r = CliRunner().invoke(train_main, ["-q", "-s", "ocas", str(paths[0]), str(cli_model)])
    assert r.exit_code == 0, r.output
    CliRunner().invoke(predict_main, [str(paths[1]), str(cli_model), str(out)])
    np.testing.assert_array_equal(load(cli_model).predict(T), np.loadtxt(out))


def test_linear_attributes_and_probabilities(a9a_arrays):
    """coef_/intercept_ reproduce decision_function; -b 1 probabilities sum
    to 1 and agree with the predictions; string labels work."""
    X, y, T, t, _ = a9a_arrays
    names = np.where(y > 0, "rich", "other")
    est = SVMClassifier(C=1.0, probability=True).fit(X[:5000], names[:5000])
    assert list(est.classes_) == ["other", "rich"]
    dec = est.decision_function(T)
    np.testing.assert_allclose(dec, T @ est.coef_[0] + est.intercept_[0], rtol=1e-10, atol=1e-10)
    assert np.all(est.predict(T) == np.where(dec > 0, "rich", "other"))
    p = est.predict_proba(T)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert np.mean(est.classes_[p.argmax(axis=1)] == est.predict(T)) > 0.99
    assert not hasattr(SVMClassifier(), "predict_proba")
    assert hasattr(SVMClassifier(loss="log"), "predict_proba")


def test_grid_search_and_pipeline(a9a_arrays):
    """GridSearchCV over C in a Pipeline with a scaler: the best held-out accuracy
    is LIBLINEAR-like (> 84.5 % on a9a.t)."""
    X, y, T, t, _ = a9a_arrays
    search = GridSearchCV(make_pipeline(MaxAbsScaler(), SVMClassifier()),
                          {"svmclassifier__C": [0.03, 0.3, 3.0]}, cv=3)
    search.fit(X[:10000], y[:10000])
    assert search.best_params_["svmclassifier__C"] in (0.03, 0.3, 3.0)
    assert search.score(T, t) > 0.845


def test_ranker_and_regressor():
    """SVMRanker on queries of a hidden linear score, both ranking solvers;
    SVMRegressor recovers a linear target."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 8))
    w = rng.normal(size=8)
    qid = np.repeat(np.arange(30), 20)
    rel = np.digitize(X @ w + 0.3 * rng.normal(size=600), [-1.0, 0.0, 1.0]).astype(float)
    for solver in ("ocas", "tron"):
        ranker = SVMRanker(solver=solver, C=10.0).fit(X, rel, qid)
        assert ranker.score(X, rel, qid) > 0.85
    y = X @ w + 2.0
    reg = SVMRegressor(C=10.0, epsilon=0.01, tol=1e-4).fit(sp.csr_matrix(X), y)
    assert reg.score(X, y) > 0.99


def _heart_dense():
    from svmtrain.io.reader import read_libsvm
    from conftest import bundled
    data = read_libsvm(bundled("heart_scale.xz"))
    X = sp.csr_matrix((data.values, data.indices, data.indptr), shape=(data.n_rows, 13)).toarray()
    return X, data.labels


def test_precomputed_kernel_is_libsvms_and_scikit_learns():
    """kernel="precomputed" (solver="smo", LIBSVM's -t 4): the kernel matrix
    of the training rows at fit, test rows x training rows at predict, as
    scikit-learn's SVC takes it: the same predictions as SVC, the decision
    values of the linear kernel on the rows themselves, and scikit-learn's
    cross-validation slices it as a pairwise input (the same scores as SVC)."""
    from sklearn.model_selection import cross_val_score
    from sklearn.svm import SVC
    X, y = _heart_dense()
    K = X @ X.T
    tr, te = np.arange(200), np.arange(200, 270)
    ours = SVMClassifier(solver="smo", kernel="precomputed").fit(K[np.ix_(tr, tr)], y[tr])
    theirs = SVC(kernel="precomputed").fit(K[np.ix_(tr, tr)], y[tr])
    assert np.array_equal(ours.predict(K[np.ix_(te, tr)]), theirs.predict(K[np.ix_(te, tr)]))
    linear = SVMClassifier(solver="smo", kernel="linear").fit(X[tr], y[tr])
    np.testing.assert_allclose(ours.decision_function(K[np.ix_(te, tr)]), linear.decision_function(X[te]),
                               atol=1e-9)
    assert np.array_equal(cross_val_score(SVMClassifier(solver="smo", kernel="precomputed"), K, y, cv=3),
                          cross_val_score(SVC(kernel="precomputed"), K, y, cv=3))
    with pytest.raises(ValueError, match="square kernel matrix"):
        SVMClassifier(solver="smo", kernel="precomputed").fit(K[:, :100], y)
    with pytest.raises(ValueError, match="smo"):
        SVMClassifier(solver="dcd", kernel="precomputed").fit(K, y)


def test_precomputed_kernel_keeps_zero_entries_and_regresses():
    """Kernel values of 0 (orthogonal sparse rows) stay columns of the -t 4
    rows; regression and the one-class SVM take the precomputed kernel too."""
    rng = np.random.default_rng(3)
    X = (rng.random((80, 40)) < 0.06).astype(float)
    y = np.where(X[:, :20].sum(axis=1) >= X[:, 20:].sum(axis=1), 1.0, -1.0)
    K = X @ X.T
    assert np.count_nonzero(K == 0) > 1000
    pre = SVMClassifier(solver="smo", kernel="precomputed").fit(K, y)
    lin = SVMClassifier(solver="smo", kernel="linear").fit(X, y)
    np.testing.assert_allclose(pre.decision_function(K), lin.decision_function(X), atol=1e-9)
    z = X @ rng.normal(size=40)
    pre_r = SVMRegressor(solver="smo", kernel="precomputed", epsilon=0.1).fit(K, z)
    lin_r = SVMRegressor(solver="smo", kernel="linear", epsilon=0.1).fit(X, z)
    np.testing.assert_allclose(pre_r.predict(K), lin_r.predict(X), atol=1e-9)
    pre_o = SVMOneClass(solver="smo", kernel="precomputed", nu=0.3).fit(K)
    lin_o = SVMOneClass(solver="smo", kernel="linear", nu=0.3).fit(X)
    np.testing.assert_allclose(pre_o.score_samples(K), lin_o.score_samples(X), atol=1e-9)


def test_linear_kernel_on_a_kernel_solver_is_the_linear_kernel():
    """kernel="linear" with solver="smo" (whose own default is LIBSVM's RBF)
    trains -t 0: scikit-learn's SVC(kernel="linear") to the solvers' tolerance."""
    from sklearn.svm import SVC
    X, y = _heart_dense()
    ours = SVMClassifier(solver="smo", kernel="linear").fit(X, y)
    assert ours.model_.kernel.code == 0
    np.testing.assert_allclose(ours.decision_function(X), SVC(kernel="linear").fit(X, y).decision_function(X),
                               atol=5e-3)
