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
from svmtrain.data.dataset import Chunk
from svmtrain.errors import ParameterError
from svmtrain.io.model_io import load_model, save_model
from svmtrain.params import TrainParams
from svmtrain.training.train import train


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
    from svmtrain.solvers import get_solver
    dcd = get_solver("dcd", task="o")
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
    from liblinear import liblinearutil as util
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
    from liblinear import liblinearutil as util
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


@pytest.mark.parametrize("options", ["-s 2 -t 2 -g 0.5 -n 0.1", "-s 2 -t 2 -g 0.05 -n 0.5", "-s 2 -t 0 -n 0.2",
                                     "-s 2 -t 1 -d 2 -g 0.1 -r 1 -n 0.3"])
def test_libsvm_one_class_files_both_ways(tmp_path, options):
    """one_class files: our predictions and decision values are LIBSVM's from the same file, and
    LIBSVM reads what we write back."""
    from libsvm import svmutil as util
    from svmtrain.io.libsvm_format import write_libsvm_model
    path, chunk = heart_scale(tmp_path)
    y, x = util.svm_read_problem(str(path))
    reset_c_rand()
    util.svm_save_model(str(tmp_path / "theirs"), util.svm_train(y, x, options + " -q"))
    m = util.svm_load_model(str(tmp_path / "theirs"))       # (LIBSVM writes SV values with %.8g)
    pred, _, dec = util.svm_predict(y, x, m, "-q")
    model = load_model(tmp_path / "theirs")
    assert model.task == "o" and list(model.labels) == [1.0, -1.0]
    assert np.allclose(model.decision_function(chunk)[:, 0], np.array(dec)[:, 0], rtol=1e-9, atol=1e-9)
    assert np.array_equal(model.predict(chunk), np.array(pred))
    write_libsvm_model(model, tmp_path / "ours")
    assert (tmp_path / "ours").read_text().startswith("svm_type one_class\n")
    again, _, dec2 = util.svm_predict(y, x, util.svm_load_model(str(tmp_path / "ours")), "-q")
    assert np.array_equal(np.array(again), np.array(pred))
    assert np.allclose(np.array(dec2)[:, 0], np.array(dec)[:, 0], rtol=1e-12, atol=1e-12)
    save_model(model, tmp_path / "svmtrain")
    back = load_model(tmp_path / "svmtrain")
    assert back.task == "o" and np.array_equal(back.predict(chunk), model.predict(chunk))


# ---------------------------------------------------------------- kernel one-class through asset
def libsvm_one_class(util, A, options, B=None):
    """LIBSVM's (labels, decision values) on B (default A) of -s 2 OPTIONS trained on A."""
    reset_c_rand()
    m = util.svm_train([1.0] * len(A), rows_of(A), options + " -q")
    B = A if B is None else B
    pred, _, dec = util.svm_predict([1.0] * len(B), rows_of(B), m, "-q")
    return np.array(pred), np.array(dec)[:, 0]


def test_asset_nystrom_with_every_row_is_libsvm_one_class(tmp_path):
    """With at least as many landmarks as rows the Nystrom map is the kernel itself (up to the
    dropped eigenvalues), so asset --inner dcd solves LIBSVM's -s 2 problem: the decision values
    agree to the solvers' tolerance. (Labels of rows on the boundary, |decision| ~ 0, follow rounding:
    at -g 0.5 over half of heart_scale's rows are there, and LIBSVM at -e 1e-3 and 1e-7 agrees with
    itself on 74 % of the labels only; README, "One-class".)"""
    from libsvm import svmutil as util
    path, chunk = heart_scale(tmp_path)
    A = dense_of(chunk, chunk.n_features)
    for g, nu in ((0.5, 0.1), (0.05, 0.5)):
        pred, dec = libsvm_one_class(util, A, f"-s 2 -t 2 -g {g} -n {nu} -e 1e-7")
        model = train(chunk, TrainParams(solver="asset", task="o", inner="dcd", kernel_type=2, gamma=g, nu=nu,
                                         eps=1e-7, max_iter=100000))
        assert model.task == "o" and model.n_sv == chunk.n_rows
        assert np.allclose(model.decision_function(chunk)[:, 0], dec, atol=1e-5)
        off = np.abs(dec) > 1e-4
        assert np.array_equal(model.predict(chunk)[off], pred[off])


def blobs(n, seed):
    """Two Gaussian blobs in the plane (a one-class problem a linear model cannot describe)."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(n // 2, 2)) * 0.5 + [2, 0], rng.normal(size=(n - n // 2, 2)) * 0.5 - [2, 0]])
    return Chunk(labels=np.ones(n), indptr=np.arange(0, 2 * n + 1, 2, dtype=np.int64),
                 indices=np.tile(np.arange(2, dtype=np.int32), n), values=X.ravel().copy(),
                 qid=np.zeros(n, np.int64)), X


@pytest.mark.parametrize("approx", ["nystrom", "fourier"])
def test_asset_kernel_one_class_agrees_with_libsvm_beyond_the_landmarks(tmp_path, approx):
    """n = 2000 rows, 256 landmarks / random features: at least 97 % of the training rows and of a
    grid of test points get LIBSVM's label; the fraction outside stays near nu."""
    from libsvm import svmutil as util
    chunk, A = blobs(2000, 0)
    test, B = blobs(1000, 1)
    B = B * 1.6                                     # test points inside, around and away from the blobs
    test.values[:] = B.ravel()
    pred_train, _ = libsvm_one_class(util, A, "-s 2 -t 2 -g 0.5 -n 0.1")
    pred_test, _ = libsvm_one_class(util, A, "-s 2 -t 2 -g 0.5 -n 0.1", B)
    model = train(chunk, TrainParams(solver="asset", task="o", inner="dcd", approx=approx, kernel_type=2,
                                     gamma=0.5, nu=0.1, dim=256, eps=0.001))
    assert np.mean(model.predict(chunk) == pred_train) >= 0.97
    assert np.mean(model.predict(test) == pred_test) >= 0.97
    assert abs(np.mean(model.predict(chunk) == -1.0) - 0.1) <= 0.03
    save_model(model, tmp_path / "m")
    back = load_model(tmp_path / "m")
    assert back.task == "o" and np.array_equal(back.predict(test), model.predict(test))
    if approx == "nystrom":                         # a kernel expansion: LIBSVM reads it as one_class
        from svmtrain.io.libsvm_format import write_libsvm_model
        write_libsvm_model(model, tmp_path / "m.libsvm")
        m = util.svm_load_model(str(tmp_path / "m.libsvm"))
        theirs, _, dec = util.svm_predict([1.0] * len(B), rows_of(B), m, "-q")
        assert np.allclose(np.array(dec)[:, 0], model.decision_function(test)[:, 0], rtol=1e-10, atol=1e-10)
        assert np.array_equal(np.array(theirs), model.predict(test))


# ---------------------------------------------------------------- both commands
def test_both_commands(tmp_path):
    path, chunk = heart_scale(tmp_path)
    model = tmp_path / "m"
    r = CliRunner().invoke(train_main, ["--task", "o", "--nu", "0.2", str(path), str(model)])
    assert r.exit_code == 0, r.output
    assert "one-class, nu = 0.2: #iter = " in r.output and "rho = " in r.output
    r = CliRunner().invoke(predict_main, [str(path), str(model), str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    pred = np.loadtxt(tmp_path / "out")
    assert set(np.unique(pred)) == {1.0, -1.0}
    # LIBSVM's line for one-class: the labels +1 / -1 against the file's labels
    correct = int(np.count_nonzero(pred == chunk.labels))
    assert r.output == "Accuracy = %g%% (%d/%d)\n" % (100.0 * correct / chunk.n_rows, correct, chunk.n_rows)
    assert np.array_equal(pred, load_model(model).predict(chunk))
    # LIBLINEAR's spelling trains the same model, byte for byte
    r = CliRunner().invoke(train_main, ["-q", "-s", "21", "-n", "0.2", str(path), str(tmp_path / "ll")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "ll").read_bytes() == model.read_bytes()
    r = CliRunner().invoke(train_main, ["-v", "5", "--task", "o", "--nu", "0.2", str(path)])
    assert r.exit_code == 0 and r.output.startswith("Cross Validation Accuracy = "), r.output


def test_svm_predict_reads_liblinear_and_libsvm_one_class_files(tmp_path):
    path, chunk = heart_scale(tmp_path)
    for fmt, extra in (("liblinear", []), ("libsvm", ["-s", "asset", "--inner", "dcd", "-g", "0.05"])):
        model = tmp_path / fmt
        r = CliRunner().invoke(train_main, ["-q", "--task", "o", "--nu", "0.3", "--model-format", fmt] + extra
                               + [str(path), str(model)])
        assert r.exit_code == 0, r.output
        r = CliRunner().invoke(predict_main, ["-q", str(path), str(model), str(tmp_path / "out")])
        assert r.exit_code == 0, r.output
        assert np.array_equal(np.loadtxt(tmp_path / "out"), load_model(model).predict(chunk))
        assert abs(np.mean(np.loadtxt(tmp_path / "out") == -1.0) - 0.3) <= 0.03


# ---------------------------------------------------------------- the small kernels against NumPy
def test_small_kernels_against_numpy():
    from svmtrain.solvers.dcd import _dcd_oneclass_kernels as K
    chunk, A = synthetic(n=60, d=7, seed=8, density=0.5)
    ip, ix, v = chunk.indptr, chunk.indices, chunk.values
    for i, j in ((0, 1), (5, 5), (10, 59), (33, 2)):
        assert K.rows_dot(ip, ix, v, i, j) == pytest.approx(A[i] @ A[j], rel=1e-14, abs=1e-14)
    alpha = K.start_alpha(chunk.n_rows, 0.37)
    assert alpha.sum() == pytest.approx(0.37 * 60) and np.count_nonzero(alpha == 1.0) == 22
    w = K.add_rows(ip, ix, v, alpha, np.zeros(8))
    assert np.allclose(w[:7], A.T @ alpha, rtol=1e-13, atol=1e-13) and w[7] == 0.0
    # rho: the free alphas' mean gradient, else the middle of the bounds (one side empty: the other's end)
    g = A @ w[:7]
    alpha[3] = 0.25
    free = (alpha > 0) & (alpha < 1)
    assert K.oneclass_rho(ip, ix, v, alpha, w)[0] == pytest.approx(g[free].mean(), rel=1e-13)
    bound = np.where(np.arange(60) < 30, 1.0, 0.0)
    rho, nsv = K.oneclass_rho(ip, ix, v, bound, w)
    assert rho == pytest.approx(0.5 * (g[:30].max() + g[30:].min()), rel=1e-13) and nsv == 30
    assert K.oneclass_rho(ip, ix, v, np.ones(60), w)[0] == pytest.approx(g.max(), rel=1e-13)


@pytest.mark.parametrize("order", [1, -1])
def test_heap_keeps_the_largest_with_ties_by_row(order):
    """The working-set selection: the cap largest (key, order * row) pairs, largest first."""
    from svmtrain.solvers.dcd import _dcd_oneclass_kernels as K
    rng = np.random.default_rng(9)
    keys = rng.integers(0, 6, size=200).astype(np.float64)      # many ties
    for cap in (1, 7, 50, 200):
        hk, hr, out = np.empty(200), np.empty(200, np.int64), np.empty(200, np.int64)
        size = 0
        for r, k in enumerate(keys):
            size = K._offer(hk, hr, size, cap, k, r, order)
        K._drain(hk, hr, size, out, order)
        expected = sorted(range(200), key=lambda r: (keys[r], order * r), reverse=True)[:cap]
        assert out[:size].tolist() == expected
