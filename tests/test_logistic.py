"""Logistic regression (--loss log): dcd's dual solver against a NumPy twin and LIBLINEAR; -b 1."""
import lzma
import shutil
import subprocess

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import bundled
from reference import reset_c_rand
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main
from svmtrain.data.dataset import Chunk
from svmtrain.io.liblinear_format import write_liblinear_model
from svmtrain.io.model_io import load_model
from svmtrain.io.reader import read_libsvm
from svmtrain.params import TrainParams
from svmtrain.training.train import train


def blobs(n=120, d=5, seed=0, classes=(1.0, -1.0)):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=1.5, size=(len(classes), d))
    labels = np.array([classes[i % len(classes)] for i in range(n)])
    X = centres[[classes.index(c) for c in labels]] + rng.normal(size=(n, d))
    indptr = np.arange(0, n * d + 1, d, dtype=np.int64)
    return Chunk(labels=labels, indptr=indptr, indices=np.tile(np.arange(d, dtype=np.int32), n),
                 values=X.ravel().copy(), qid=np.zeros(n, np.int64)), X


def twin_lr(X, y, C):
    """The primal optimum computed independently: L-BFGS on the smooth primal with its exact gradient."""
    from scipy.optimize import minimize

    def f(w):
        z = y * (X @ w)
        return 0.5 * w @ w + C * float(np.logaddexp(0.0, -z).sum()), w - C * X.T @ (y / (1.0 + np.exp(z)))
    return minimize(f, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B",
                    options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000}).x


def primal(X, y, w, C):
    return 0.5 * w @ w + C * float(np.logaddexp(0.0, -y * (X @ w)).sum())


@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_dcd_logistic_matches_the_numpy_twin(C):
    chunk, X = blobs()
    y = np.where(chunk.labels == 1.0, 1.0, -1.0)
    model = train(chunk, TrainParams(loss="log", C=C, eps=1e-10, max_iter=100000))
    w = model.W[:, 0]
    w_twin = twin_lr(X, y, C)
    assert primal(X, y, w, C) == pytest.approx(primal(X, y, w_twin, C), rel=1e-9)
    assert np.allclose(w, w_twin, atol=1e-6 * max(1.0, np.abs(w_twin).max()))
    info = model.fit_results[0].info
    assert info["primal_C_form"] == pytest.approx(primal(X, y, w, C), rel=1e-12)
    # strong duality: the (minimised) dual is -primal at the optimum, never above it
    assert -info["dual_objective"] <= info["primal_C_form"] * (1 + 1e-12)
    assert -info["dual_objective"] == pytest.approx(info["primal_C_form"], rel=1e-10)


@pytest.mark.parametrize("s", [0, 7])
def test_a9a_objective_matches_liblinear(s):
    """Issue 17's figure: a9a, --loss log -c 1, objective within 1e-4 of LIBLINEAR -s 7 -e 1e-6 (here 1e-9)."""
    from liblinear import liblinearutil as util
    data = read_libsvm(bundled("a9a.xz"))
    y = np.where(data.labels == 1.0, 1.0, -1.0)
    import scipy.sparse as sp
    A = sp.csr_matrix((data.values, data.indices, data.indptr), shape=(data.n_rows, data.n_features))
    reset_c_rand()
    m = util.train(data.labels.tolist(), A, f"-s {s} -c 1 -e 1e-6 -q")
    w_ll = np.array([m.w[j] for j in range(data.n_features)]) * (1.0 if m.label[0] == 1 else -1.0)
    model = train(data, TrainParams(loss="log", C=1.0, eps=1e-6, max_iter=10000))

    def f(w):
        return 0.5 * w @ w + float(np.logaddexp(0.0, -y * (A @ w)).sum())
    assert f(model.W[:, 0]) == pytest.approx(f(w_ll), rel=1e-9)


def test_probabilities_equal_liblinears_for_its_model_files(tmp_path):
    from liblinear import liblinearutil as util
    for classes, s in (((1.0, -1.0), 0), ((1.0, 2.0, 3.0), 7)):
        chunk, X = blobs(n=150, classes=classes, seed=3)
        rows = [{j + 1: v for j, v in enumerate(r)} for r in X]
        reset_c_rand()
        m = util.train(chunk.labels.tolist(), rows, f"-s {s} -c 1 -q")
        util.save_model(str(tmp_path / "m"), m)
        _, _, probs = util.predict(chunk.labels.tolist(), rows, util.load_model(str(tmp_path / "m")), "-b 1 -q")
        model = load_model(tmp_path / "m")
        assert model.logistic
        ours = model.probabilities(model.decision_function(chunk))
        assert np.allclose(ours, np.array(probs), rtol=0, atol=1e-12)
        assert np.allclose(ours.sum(axis=1), 1.0)


def test_svm_predict_b1_prints_what_liblinear_predict_prints(tmp_path):
    """Byte for byte against the binary when installed; otherwise the format, from liblinear-official's numbers."""
    text = tmp_path / "heart"
    text.write_bytes(lzma.decompress(bundled("heart_scale.xz").read_bytes()))
    from liblinear import liblinearutil as util
    y, x = util.svm_read_problem(str(text))
    reset_c_rand()
    util.save_model(str(tmp_path / "lr.model"), util.train(y, x, "-s 0 -c 1 -q"))
    r = CliRunner().invoke(predict_main, ["-b", "1", str(text), str(tmp_path / "lr.model"), str(tmp_path / "ours")])
    assert r.exit_code == 0, r.output
    lines = (tmp_path / "ours").read_text().splitlines()
    assert lines[0] == "labels 1 -1" and len(lines) == 271
    _, _, probs = util.predict(y, x, util.load_model(str(tmp_path / "lr.model")), "-b 1 -q")
    got = np.array([[float(t) for t in line.split()[1:]] for line in lines[1:]])
    assert np.allclose(got, np.array(probs), atol=5e-6)        # %g keeps six digits
    if shutil.which("liblinear-predict"):
        subprocess.run(["liblinear-predict", "-b", "1", str(text), str(tmp_path / "lr.model"), str(tmp_path / "theirs")],
                       check=True, stdout=subprocess.DEVNULL)
        assert (tmp_path / "ours").read_bytes() == (tmp_path / "theirs").read_bytes()


def test_b1_on_a_model_without_probabilities_is_refused(tmp_path):
    r = CliRunner().invoke(train_main, ["-q", str(bundled("heart_scale.xz")), str(tmp_path / "m")])
    assert r.exit_code == 0
    r = CliRunner().invoke(predict_main, ["-b", "1", str(bundled("heart_scale.xz")), str(tmp_path / "m"),
                                          str(tmp_path / "out")])
    assert r.exit_code == 2 and "no probability information" in r.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("line", ["-s 0", "-s 7 -c 2", "--loss log -B 1"])
def test_logistic_lines_train_lr_and_liblinear_reads_the_model(tmp_path, line):
    from liblinear import liblinearutil as util
    text = tmp_path / "heart"
    text.write_bytes(lzma.decompress(bundled("heart_scale.xz").read_bytes()))
    r = CliRunner().invoke(train_main, ["-q"] + line.split() + [str(text), str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    model = load_model(tmp_path / "m")
    assert dict(model.header)["loss"] == "log" and model.logistic
    write_liblinear_model(model, tmp_path / "m.ll")
    assert (tmp_path / "m.ll").read_text().startswith("solver_type L2R_LR_DUAL\n")
    y, x = util.svm_read_problem(str(text))
    _, _, probs = util.predict(y, x, util.load_model(str(tmp_path / "m.ll")), "-b 1 -q")
    data = read_libsvm(text)
    assert np.allclose(model.probabilities(model.decision_function(data)), np.array(probs), atol=1e-12)


def test_log_loss_on_a9a_test_set_close_to_liblinear():
    """Issue 17: the held-out log-loss of our LR model is within 0.01 of LIBLINEAR LR's."""
    from liblinear import liblinearutil as util
    train_data, test_data = read_libsvm(bundled("a9a.xz")), read_libsvm(bundled("a9a.t.xz"))
    model = train(train_data, TrainParams(loss="log", C=1.0))
    p = model.probabilities(model.decision_function(test_data))
    truth = (test_data.labels == model.labels[0])
    ours = -float(np.mean(np.log(np.where(truth, p[:, 0], p[:, 1]))))
    import scipy.sparse as sp
    A = sp.csr_matrix((train_data.values, train_data.indices, train_data.indptr),
                      shape=(train_data.n_rows, train_data.n_features))
    reset_c_rand()
    m = util.train(train_data.labels.tolist(), A, "-s 0 -c 1 -q")
    T = sp.csr_matrix((test_data.values, test_data.indices, test_data.indptr),
                      shape=(test_data.n_rows, train_data.n_features))
    _, _, probs = util.predict(test_data.labels.tolist(), T, m, "-b 1 -q")
    probs = np.array(probs)
    first = np.array(m.label[:2]) == 1.0
    p1 = probs[:, 0] if first[0] else probs[:, 1]
    theirs = -float(np.mean(np.log(np.where(test_data.labels == 1.0, p1, 1.0 - p1))))
    assert abs(ours - theirs) < 0.01 and ours < 0.35


# ---------------------------------------------------------------- -s ocas --loss log
def test_log_score_pass_against_numpy():
    from svmtrain.solvers.dcd._dcd_logistic_kernels import log_score_pass
    rng = np.random.default_rng(2)
    s, y = 30.0 * rng.normal(size=300), np.where(rng.random(300) < 0.5, 1.0, -1.0)   # large margins too
    weights = np.where(y > 0, 2.0, 0.5)
    coef = np.empty(300)
    wrong, loss, bconst = log_score_pass(s, y, weights, coef)
    twin_loss = weights * np.logaddexp(0.0, -y * s)
    twin_coef = weights * y * np.exp(-np.logaddexp(0.0, y * s))
    np.testing.assert_allclose(coef, twin_coef, rtol=1e-13, atol=1e-300)
    assert wrong == np.count_nonzero(y * s <= 0) and loss == pytest.approx(twin_loss.sum(), rel=1e-13)
    assert bconst == pytest.approx(float(np.sum(twin_loss + twin_coef * s)), rel=1e-12)
    s2 = rng.normal(size=300)                    # the tangent cut is below the loss everywhere
    assert float(np.sum(weights * np.logaddexp(0.0, -y * s2))) >= bconst - coef @ s2 - 1e-9


@pytest.mark.parametrize("method", ["ocas", "cp"])
@pytest.mark.parametrize("C", [0.1, 10.0])
def test_ocas_logistic_reaches_the_twin_optimum(method, C):
    chunk, X = blobs()
    y = np.where(chunk.labels == 1.0, 1.0, -1.0)
    model = train(chunk, TrainParams(solver="ocas", loss="log", C=C, eps=1e-8, ocas_method=method))
    r = model.fit_results[0]
    best = primal(X, y, twin_lr(X, y, C), C)
    ours = primal(X, y, model.W[:, 0], C)
    assert r.converged and ours == pytest.approx(r.info["Q_P"], rel=1e-9)
    assert r.info["Q_D"] <= best * (1 + 1e-9) and ours <= best * (1 + 1e-7)


def test_ocas_logistic_on_a9a_and_its_probabilities(tmp_path):
    """a9a at C = 1: the objective of dcd's (= LIBLINEAR -s 7's) within 1e-6; -b 1 works on the model."""
    data = read_libsvm(bundled("a9a.xz"))
    ocas = train(data, TrainParams(solver="ocas", loss="log", C=1.0, eps=1e-7))
    dcd = train(data, TrainParams(loss="log", C=1.0, eps=1e-6, max_iter=10000))
    f_ocas, f_dcd = (m.fit_results[0].info["primal_C_form"] for m in (ocas, dcd))
    assert f_ocas == pytest.approx(f_dcd, rel=1e-6)
    model_file = tmp_path / "m"
    r = CliRunner().invoke(train_main, ["-q", "-s", "ocas", "--loss", "log", str(bundled("a9a.xz")),
                                        str(model_file)])
    assert r.exit_code == 0, r.output
    out = tmp_path / "p"
    r = CliRunner().invoke(predict_main, ["-b", "1", str(bundled("a9a.t.xz")), str(model_file), str(out)])
    assert r.exit_code == 0, r.output
    assert float(r.output.split("Accuracy = ")[1].split("%")[0]) > 84.5        # dcd's LR: 84.99 %
    lines = out.read_text().splitlines()
    assert lines[0] in ("labels 1 -1", "labels -1 1") and len(lines) == 16282
    probs = np.array([[float(v) for v in ln.split()[1:]] for ln in lines[1:100]])
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)


def test_ocas_logistic_streamed_is_the_in_memory_run(tmp_path):
    """--stream -s ocas --loss log over several blocks of a9a: the in-memory run's iterations and optimum."""
    from svmtrain.training.streamed import train_streamed
    text = tmp_path / "a9a"
    text.write_bytes(lzma.decompress(bundled("a9a.xz").read_bytes()))
    params = TrainParams(solver="ocas", loss="log", C=1.0, eps=1e-5)
    streamed = train_streamed(str(text), params, memory_limit_mb=64, chunk_rows=5000)
    assert dict(streamed.header)["stream_blocks"] >= 6
    in_memory = train(read_libsvm(str(text)), params)
    rs, rm = streamed.fit_results[0], in_memory.fit_results[0]
    assert rs.n_iter == rm.n_iter and rs.info["Q_P"] == pytest.approx(rm.info["Q_P"], rel=1e-9)
    r = CliRunner().invoke(train_main, ["-q", "-s", "dcd", "--loss", "log", "--stream", str(text), str(tmp_path / "m")])
    assert r.exit_code == 2 and "-s ocas, -s pegasos or -s sgd --loss log trains it" in r.output
