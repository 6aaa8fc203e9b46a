"""One-class SVM (--task o): dcd's kernel against a NumPy twin and LIBLINEAR -s 21,
the nu-property, asset's kernel one-class, model files both ways, both commands."""
import lzma

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import bundled
from naive_oneclass import naive_oneclass
from reference import reset_c_rand
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main
from svmtrain.dataset import Chunk
from svmtrain.errors import ParameterError
from svmtrain.io.model_io import load_model, save_model
from svmtrain.params import TrainParams
from svmtrain.training import train


def synthetic(n=300, d=8, seed=0, density=0.7):
    """Sparse rows around a mean away from the origin; labels +1/-1 at random (unused)."""
    rng = np.random.default_rng(seed)
    dense = (rng.normal(size=(n, d)) + rng.uniform(0.5, 2.0, size=d)) * (rng.random((n, d)) < density)
    rows, cols = np.nonzero(dense)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))]).astype(np.int64)
    labels = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    return Chunk(labels=labels, indptr=indptr, indices=cols.astype(np.int32), values=dense[rows, cols],
                 qid=np.zeros(n, np.int64)), dense


def heart_scale(tmp_path):
    from svmtrain.io.reader import read_libsvm
    path = tmp_path / "heart_scale"
    path.write_bytes(lzma.decompress(bundled("heart_scale.xz").read_bytes()))
    return path, read_libsvm(path)


def dense_of(chunk, d):
    out = np.zeros((chunk.n_rows, d))
    for i in range(chunk.n_rows):
        lo, hi = chunk.indptr[i], chunk.indptr[i + 1]
        out[i, chunk.indices[lo:hi]] = chunk.values[lo:hi]
    return out


def rows_of(A):
    return [{j + 1: float(v) for j, v in enumerate(r) if v} for r in A]


def write_text(path, chunk):
    lines = []
    for i in range(chunk.n_rows):
        lo, hi = chunk.indptr[i], chunk.indptr[i + 1]
        feats = " ".join(f"{j + 1}:{float(v)!r}" for j, v in zip(chunk.indices[lo:hi], chunk.values[lo:hi]))
        lines.append(f"{chunk.labels[i]:g} {feats}")
    path.write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------- the solver
@pytest.mark.parametrize("nu", [0.05, 0.2, 0.5, 0.9])
def test_dcd_oneclass_matches_the_numpy_twin(nu):
    chunk, A = synthetic(n=120, d=6, seed=1)
    model = train(chunk, TrainParams(task="o", nu=nu, eps=1e-10, max_iter=100000))
    r = model.fit_results[0]
    alpha = r.info["alpha"]
    # feasibility of the dual solution
    assert alpha.min() >= 0.0 and alpha.max() <= 1.0
    assert alpha.sum() == pytest.approx(nu * chunk.n_rows, rel=1e-12)
    assert np.allclose(A.T @ alpha, model.W[:, 0], rtol=1e-10, atol=1e-10)
    a_twin, w_twin, rho_twin = naive_oneclass(A, nu)
    f_twin = 0.5 * float(w_twin @ w_twin)
    assert r.objective == pytest.approx(f_twin, rel=1e-6)
    assert r.objective == pytest.approx(0.5 * float(model.W[:, 0] @ model.W[:, 0]), rel=1e-12)
    assert np.allclose(model.W[:, 0], w_twin, rtol=1e-4, atol=1e-4 * np.abs(w_twin).max())
    assert -model.b[0] == pytest.approx(rho_twin, rel=1e-4)
    # the duality certificate: primal 1/2|w|^2 - nu l rho + sum xi = -dual at the optimum, never below
    assert r.info["primal_objective"] >= -r.objective * (1 + 1e-12)
    assert r.info["primal_objective"] == pytest.approx(-r.objective, rel=1e-7)
    assert r.converged and model.task == "o" and list(model.labels) == [1.0, -1.0]


@pytest.mark.parametrize("nu", [0.1, 0.3, 0.7])
def test_nu_property(nu):
    """At most nu l rows strictly outside (w.x < rho), at least nu l support vectors."""
    chunk, A = synthetic(n=400, seed=2)
    model = train(chunk, TrainParams(task="o", nu=nu, eps=1e-8, max_iter=100000))
    r = model.fit_results[0]
    scores = model.decision_function(chunk)[:, 0]
    n = chunk.n_rows
    assert np.count_nonzero(scores < -1e-9 * abs(model.b[0])) <= nu * n
    assert r.info["n_sv"] >= nu * n
    # and the prediction's -1 fraction is close to nu
    assert abs(np.mean(model.predict(chunk) == -1.0) - nu) <= 0.02
    assert set(np.unique(model.predict(chunk))) <= {1.0, -1.0}


def test_labels_are_ignored():
    chunk, _ = synthetic(n=100)
    a = train(chunk, TrainParams(task="o", nu=0.3))
    chunk.labels[:] = np.arange(chunk.n_rows) % 5        # five classes, or any numbers: the same model
    b = train(chunk, TrainParams(task="o", nu=0.3))
    assert np.array_equal(a.W, b.W) and np.array_equal(a.b, b.b)


def test_progress_calls_give_the_same_model():
    chunk, _ = synthetic(n=200, seed=4)
    from svmtrain.solvers import dcd
    calls = []
    p = TrainParams(task="o", nu=0.2, eps=1e-6)
    one = dcd.fit(chunk, np.ones(chunk.n_rows), chunk.n_features, p)
    steps = dcd.fit(chunk, np.ones(chunk.n_rows), chunk.n_features, p, progress=lambda *a: calls.append(a))
    assert len(calls) >= steps.n_iter and calls[-1][0] == steps.n_iter
    assert np.array_equal(one.w, steps.w) and one.b == steps.b


@pytest.mark.parametrize("data", ["heart_scale", "synthetic"])
@pytest.mark.parametrize("nu", [0.05, 0.2, 0.5])
def test_same_iterates_as_liblinear_s21(tmp_path, data, nu):
    """LIBLINEAR 2.4x's -s 21: the same working sets and arithmetic, so the same
    iterations, w and rho; issue 18's figure is the objective (within 1e-4)."""
    util = pytest.importorskip("liblinear.liblinearutil")
    if data == "heart_scale":
        _, chunk = heart_scale(tmp_path)
    else:
        chunk, _ = synthetic(n=500, d=10, seed=3)
    A = dense_of(chunk, chunk.n_features)
    for eps in (0.01, 1e-6):
        reset_c_rand()
        m = util.train(chunk.labels.tolist(), rows_of(A), f"-s 21 -n {nu} -e {eps} -q")
        w_ll = np.array([m.w[j] for j in range(chunk.n_features)])
        model = train(chunk, TrainParams(task="o", nu=nu, eps=eps))
        theirs = 0.5 * float(w_ll @ w_ll)
        assert model.fit_results[0].objective == pytest.approx(theirs, rel=1e-4)
        assert np.allclose(model.W[:, 0], w_ll, rtol=1e-12, atol=1e-12)
        assert -model.b[0] == pytest.approx(m.rho, rel=1e-12)
        pred, _, _ = util.predict(chunk.labels.tolist(), rows_of(A), m, "-q")
        assert np.array_equal(model.predict(chunk), np.array(pred))


def test_refusals():
    chunk, _ = synthetic(n=50)
    for params, match in ((TrainParams(solver="ocas", task="o"), "does not train one-class"),
                          (TrainParams(task="o", bias=1.0), "-B does not apply"),
                          (TrainParams(task="o", C=2.0), "-c does not apply"),
                          (TrainParams(task="o", nu=1.5), r"--nu must be in \(0, 1\]"),
                          (TrainParams(task="o", class_weights={1.0: 2.0}), "applies to classification"),
                          (TrainParams(task="o", epsilon=0.2), "applies to regression")):
        with pytest.raises(ParameterError, match=match):
            train(chunk, params)
    m = train(chunk, TrainParams(task="o", nu=1.0))       # nu = 1: every alpha at 1, rho the largest w.x
    assert np.all(m.fit_results[0].info["alpha"] == 1.0)
    assert np.max(m.decision_function(chunk)) == pytest.approx(0.0, abs=1e-9 * abs(m.b[0]))


# ---------------------------------------------------------------- model files
def test_svmtrain_and_liblinear_files_both_ways(tmp_path):
    util = pytest.importorskip("liblinear.liblinearutil")
    from svmtrain.io.liblinear_format import read_liblinear_model, write_liblinear_model
    chunk, A = synthetic(n=300, seed=5)
    test, B = synthetic(n=200, seed=6)
    model = train(chunk, TrainParams(task="o", nu=0.25))
    save_model(model, tmp_path / "m")
    back = load_model(tmp_path / "m")
    assert back.task == "o" and list(back.labels) == [1.0, -1.0]
    assert np.array_equal(back.decision_function(test), model.decision_function(test))
    # ours -> LIBLINEAR: the same labels and decision values
    write_liblinear_model(model, tmp_path / "ours.ll")
    assert (tmp_path / "ours.ll").read_text().splitlines()[:5] == [
        "solver_type ONECLASS_SVM", "nr_class 2", "nr_feature 8", "bias -1", f"rho {-float(model.b[0])!r}"]
    m = util.load_model(str(tmp_path / "ours.ll"))
    pred, _, dec = util.predict(test.labels.tolist(), rows_of(B), m, "-q")
    assert np.array_equal(np.array(pred), model.predict(test))
    assert np.allclose(np.array(dec)[:, 0], model.decision_function(test)[:, 0], rtol=1e-12, atol=1e-9)
    # LIBLINEAR -> ours (load_model sniffs the format)
    reset_c_rand()
    theirs = util.train(chunk.labels.tolist(), rows_of(A), "-s 21 -n 0.1 -q")
    util.save_model(str(tmp_path / "theirs.ll"), theirs)
    pred, _, _ = util.predict(test.labels.tolist(), rows_of(B), theirs, "-q")
    ll = load_model(tmp_path / "theirs.ll")
    assert ll.task == "o" and np.array_equal(ll.predict(test), np.array(pred))
    write_liblinear_model(read_liblinear_model(tmp_path / "theirs.ll"), tmp_path / "again.ll")
    ours, orig = ((tmp_path / f).read_text().split() for f in ("again.ll", "theirs.ll"))
    assert ours[:9] == orig[:9]         # the header keys and values (repr or %.17g: the same numbers)
    assert [float(t) for t in ours[9:] if t != "w"] == [float(t) for t in orig[9:] if t != "w"]
