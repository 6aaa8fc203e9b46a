"""Regression (--task r): dcd's SVR against a NumPy twin and LIBLINEAR, model files, both commands."""
import lzma
import re

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import shared
from reference import reset_c_rand
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main
from svmtrain.data.dataset import Chunk
from svmtrain.io.liblinear_format import read_liblinear_model, write_liblinear_model
from svmtrain.io.model_io import load_model, save_model
from svmtrain.params import TrainParams
from svmtrain.prediction import regression_summary
from svmtrain.training.train import train

LOSSES = ["epsilon-insensitive", "squared-epsilon-insensitive"]


def synthetic(n=400, d=12, seed=0, density=0.6):
    """Sparse rows, real targets y = x.w* + noise (the shared concrete_scale is optional)."""
    rng = np.random.default_rng(seed)
    dense = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    y = dense @ rng.normal(size=d) + 0.3 * rng.normal(size=n) + 2.0
    rows, cols = np.nonzero(dense)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))]).astype(np.int64)
    chunk = Chunk(labels=y, indptr=indptr, indices=cols.astype(np.int32), values=dense[rows, cols],
                  qid=np.zeros(n, np.int64))
    return chunk, dense


def write_text(path, chunk):
    lines = []
    for i in range(chunk.n_rows):
        lo, hi = chunk.indptr[i], chunk.indptr[i + 1]
        feats = " ".join(f"{j + 1}:{float(v)!r}" for j, v in zip(chunk.indices[lo:hi], chunk.values[lo:hi]))
        lines.append(f"{float(chunk.labels[i])!r} {feats}")
    path.write_text("\n".join(lines) + "\n")


def twin_svr(A, y, C, p, squared, B=-1.0, sweeps=40000, tol=1e-14):
    """Plain NumPy dual coordinate descent for SVR in row order, no shrinking (the twin)."""
    if B >= 0:
        A = np.hstack([A, np.full((A.shape[0], 1), B)])
    lam, upper = (0.5 / C, np.inf) if squared else (0.0, C)
    beta = np.zeros(len(y))
    w = np.zeros(A.shape[1])
    QD = (A * A).sum(axis=1) + lam
    for _ in range(sweeps):
        moved = 0.0
        for i in range(len(y)):
            G = A[i] @ w - y[i] + lam * beta[i]
            Gp, Gn, b = G + p, G - p, beta[i]
            if QD[i] == 0.0:        # an all-zero row: the linear term puts beta at a bound
                d = (upper if Gp < 0 else (-upper if Gn > 0 else 0.0)) - b
            else:
                d = -Gp / QD[i] if Gp < QD[i] * b else (-Gn / QD[i] if Gn > QD[i] * b else -b)
            nb = min(max(b + d, -upper), upper)
            w += (nb - b) * A[i]
            moved = max(moved, abs(nb - b))
            beta[i] = nb
        if moved < tol:
            break
    return w


def primal(A, y, w, C, p, squared, B=-1.0):
    scores = A @ w[:A.shape[1]] + (B * w[-1] if B >= 0 else 0.0)
    loss = np.maximum(0.0, np.abs(y - scores) - p)
    return 0.5 * w @ w + C * float(np.sum(loss * loss if squared else loss))


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("C, p, B", [(1.0, 0.1, -1.0), (10.0, 0.5, 1.0)])
def test_dcd_regression_matches_the_numpy_twin(loss, C, p, B):
    chunk, A = synthetic(n=60, d=5)
    squared = loss == LOSSES[1]
    model = train(chunk, TrainParams(task="r", loss=loss, C=C, epsilon=p, eps=1e-10, bias=B, max_iter=1000000))
    w = model.W[:, 0]
    w_twin = twin_svr(A, chunk.labels, C, p, squared, B)
    assert primal(A, chunk.labels, w, C, p, squared, B) == pytest.approx(
        primal(A, chunk.labels, w_twin, C, p, squared, B), rel=1e-8)
    assert np.allclose(w, w_twin, atol=1e-5 * max(1.0, np.abs(w_twin).max()))
    info = model.fit_results[0].info
    assert info["primal_C_form"] == pytest.approx(primal(A, chunk.labels, w, C, p, squared, B), rel=1e-12)
    # the optimality certificate: the (minimised) dual is -primal at the optimum, and never above it
    assert -info["dual_objective"] <= info["primal_C_form"] * (1 + 1e-12)
    assert -info["dual_objective"] == pytest.approx(info["primal_C_form"], rel=1e-8)


@pytest.mark.parametrize("s, loss", [(11, LOSSES[1]), (12, LOSSES[1]), (13, LOSSES[0])])
def test_dcd_regression_reaches_liblinear_optimum(s, loss):
    from liblinear import liblinearutil as util
    chunk, A = synthetic(n=600, d=20, seed=3)
    reset_c_rand()
    m = util.train(chunk.labels.tolist(), [{j + 1: v for j, v in enumerate(row) if v} for row in A],
                   f"-s {s} -c 2 -p 0.2 -e 1e-8 -q")
    w_ll = np.array([m.w[j] for j in range(A.shape[1])])
    model = train(chunk, TrainParams(task="r", loss=loss, C=2.0, epsilon=0.2, eps=1e-8, max_iter=100000))
    squared = loss == LOSSES[1]
    ours, theirs = (primal(A, chunk.labels, w, 2.0, 0.2, squared) for w in (model.W[:, 0], w_ll))
    assert ours <= theirs * (1 + 1e-9)
    # LIBLINEAR's SVR stops at 1000 outer iterations; the L1 loss converges slowly there
    assert ours == pytest.approx(theirs, rel=1e-9 if squared else 1e-3)
    info = model.fit_results[0].info
    assert -info["dual_objective"] == pytest.approx(info["primal_C_form"], rel=1e-6)


def test_concrete_scale_against_liblinear(tmp_path):
    """The shared regression set: -s 12/13 objectives within 1e-4 of LIBLINEAR's at a tight tolerance."""
    from liblinear import liblinearutil as util
    text = tmp_path / "concrete"
    text.write_bytes(lzma.decompress(shared("concrete_scale.xz").read_bytes()))
    y, x = util.svm_read_problem(str(text))
    from svmtrain.io.reader import read_libsvm
    data = read_libsvm(text)
    A = np.zeros((data.n_rows, data.n_features))
    for i in range(data.n_rows):
        A[i, data.indices[data.indptr[i]:data.indptr[i + 1]]] = data.values[data.indptr[i]:data.indptr[i + 1]]
    for s, loss in ((12, LOSSES[1]), (13, LOSSES[0])):
        reset_c_rand()
        m = util.train(y, x, f"-s {s} -c 1 -p 0.1 -e 1e-6 -q")
        w_ll = np.array([m.w[j] for j in range(data.n_features)])
        model = train(data, TrainParams(task="r", loss=loss, C=1.0, eps=1e-6, max_iter=100000))
        squared = loss == LOSSES[1]
        ours, theirs = (primal(A, data.labels, w, 1.0, 0.1, squared) for w in (model.W[:, 0], w_ll))
        assert ours == pytest.approx(theirs, rel=1e-4)


def test_regression_model_round_trips_through_both_formats(tmp_path):
    chunk, _ = synthetic()
    model = train(chunk, TrainParams(task="r", C=1.0, bias=1.0, eps=1e-6))
    save_model(model, tmp_path / "m")
    back = load_model(tmp_path / "m")
    assert back.task == "r" and len(back.labels) == 0
    assert np.array_equal(back.predict(chunk), model.predict(chunk))
    write_liblinear_model(model, tmp_path / "m.ll")
    text = (tmp_path / "m.ll").read_text().splitlines()
    assert text[:4] == ["solver_type L2R_L1LOSS_SVR_DUAL", "nr_class 2", "nr_feature 12", "bias 1"]
    ll = read_liblinear_model(tmp_path / "m.ll")
    assert ll.task == "r" and np.array_equal(ll.predict(chunk), model.predict(chunk))


def test_liblinear_reads_our_regression_model_and_we_read_its(tmp_path):
    from liblinear import liblinearutil as util
    chunk, A = synthetic(seed=5)
    model = train(chunk, TrainParams(task="r", loss=LOSSES[1], C=1.0, eps=1e-6))
    write_liblinear_model(model, tmp_path / "ours.ll")
    rows = [{j + 1: v for j, v in enumerate(row) if v} for row in A]
    theirs = util.load_model(str(tmp_path / "ours.ll"))
    pred, _, _ = util.predict(chunk.labels.tolist(), rows, theirs, "-q")
    assert np.allclose(pred, model.predict(chunk), rtol=1e-12, atol=1e-12)
    reset_c_rand()
    m = util.train(chunk.labels.tolist(), rows, "-s 12 -c 1 -q")
    util.save_model(str(tmp_path / "theirs.ll"), m)
    pred, _, _ = util.predict(chunk.labels.tolist(), rows, m, "-q")
    assert np.allclose(load_model(tmp_path / "theirs.ll").predict(chunk), pred, rtol=1e-12, atol=1e-12)


def test_both_commands_print_libsvm_regression_lines(tmp_path):
    chunk, _ = synthetic()
    write_text(tmp_path / "train", chunk)
    r = CliRunner().invoke(train_main, ["-s", "13", "-c", "1", "-e", "0.001", "-B", "1", str(tmp_path / "train"),
                                        str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    assert "regression" in r.output and "#iter = " in r.output
    r = CliRunner().invoke(predict_main, [str(tmp_path / "train"), str(tmp_path / "m"), str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    pred = np.loadtxt(tmp_path / "out")
    summary = regression_summary(pred, chunk.labels)
    assert r.output == (f"Mean squared error = {summary.mse:g} (regression)\n"
                        f"Squared correlation coefficient = {summary.scc:g} (regression)\n")
    assert summary.mse == pytest.approx(np.mean((pred - chunk.labels) ** 2))
    assert summary.scc == pytest.approx(np.corrcoef(pred, chunk.labels)[0, 1] ** 2)
    assert summary.scc > 0.9
    r = CliRunner().invoke(train_main, ["-v", "4", "--task", "r", str(tmp_path / "train")])
    lines = r.output.strip().splitlines()
    assert r.exit_code == 0 and lines[0].startswith("Cross Validation Mean squared error = ")
    assert lines[1].startswith("Cross Validation Squared correlation coefficient = ")


@pytest.mark.parametrize("line", ["-s 11", "-s 12 -p 0.2", "-s 13 -B 1", "--task r -p 0.2",
                                  "-z r -b 0 -c 1 -w 0.2"])
def test_foreign_regression_lines_train_dcd_svr(tmp_path, line):
    chunk, _ = synthetic()
    write_text(tmp_path / "train", chunk)
    r = CliRunner().invoke(train_main, ["-q"] + line.split() + [str(tmp_path / "train"), str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    header = dict(row.split(" ", 1) for row in (tmp_path / "m").read_text().splitlines()[:60] if " " in row)
    assert header["solver"] == "dcd" and header["task"] == "r"
    assert header["epsilon"] == ("0.2" if "0.2" in line else "0.1")


@pytest.mark.parametrize("line, kernel", [("-s 3 -t 2 -g 0.2 -c 2 -p 0.2", "rbf"), ("-z r -c 1 -w 0.2", "linear"),
                                          ("-s 3 -g 0.5 -c 1", "rbf")])
def test_biased_svr_lines_train_smo(tmp_path, line, kernel):
    """LIBSVM's epsilon-SVR (-s 3, default kernel RBF) and SVMlight's biased
    regression (-z r, its default -b 1, linear kernel) train -s smo --task r."""
    chunk, _ = synthetic(n=200)
    write_text(tmp_path / "train", chunk)
    r = CliRunner().invoke(train_main, ["-q"] + line.split() + [str(tmp_path / "train"), str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    header = dict(row.split(" ", 1) for row in (tmp_path / "m").read_text().splitlines()[:60] if " " in row)
    assert header["solver"] == "smo" and header["task"] == "r" and header["kernel_type"] == kernel
    assert header["epsilon"] == ("0.2" if "0.2" in line else "0.1")


def test_regression_refusals():
    from svmtrain.errors import ParameterError
    chunk, _ = synthetic(n=50)
    with pytest.raises(ParameterError, match="does not train regression"):
        train(chunk, TrainParams(solver="sbp", task="r"))
    with pytest.raises(ParameterError, match="applies to classification"):
        train(chunk, TrainParams(task="r", class_weights={1.0: 2.0}))


@pytest.mark.parametrize("options", ["-s 3 -t 2 -g 0.2 -c 2 -p 0.1", "-s 4 -t 1 -d 2 -g 0.1 -r 1 -n 0.4",
                                     "-s 3 -t 0 -c 1"])
def test_libsvm_regression_models_both_ways(tmp_path, options):
    """epsilon_svr / nu_svr files: our predictions are LIBSVM's, and LIBSVM reads what we write."""
    from libsvm import svmutil as util
    from svmtrain.io.libsvm_format import write_libsvm_model
    chunk, A = synthetic(n=150, d=6, seed=7)
    rows = [{j + 1: v for j, v in enumerate(row) if v} for row in A]
    reset_c_rand()
    m = util.svm_train(chunk.labels.tolist(), rows, options + " -q")
    util.svm_save_model(str(tmp_path / "theirs"), m)     # (LIBSVM writes SV values with %.8g)
    theirs, _, _ = util.svm_predict(chunk.labels.tolist(), rows, util.svm_load_model(str(tmp_path / "theirs")), "-q")
    model = load_model(tmp_path / "theirs")
    assert model.task == "r"
    assert np.allclose(model.predict(chunk), theirs, rtol=1e-10, atol=1e-10)
    write_libsvm_model(model, tmp_path / "ours")
    again, _, _ = util.svm_predict(chunk.labels.tolist(), rows, util.svm_load_model(str(tmp_path / "ours")), "-q")
    assert np.allclose(again, theirs, rtol=1e-12, atol=1e-12)
    save_model(model, tmp_path / "svmtrain")
    assert np.array_equal(load_model(tmp_path / "svmtrain").predict(chunk), model.predict(chunk))


def nonlinear(n, seed):
    """Dense rows in [-1, 1]^4, y = sin(3 x1) + x2^2 - x3 x4 + noise (a kernel model's problem)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 4))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 - X[:, 2] * X[:, 3] + 0.05 * rng.normal(size=n)
    indptr = np.arange(0, 4 * n + 1, 4, dtype=np.int64)
    return Chunk(labels=y, indptr=indptr, indices=np.tile(np.arange(4, dtype=np.int32), n),
                 values=X.ravel().copy(), qid=np.zeros(n, np.int64)), X


def libsvm_test_mse(options, train_chunk, A, test_chunk, B):
    from libsvm import svmutil as util
    reset_c_rand()
    m = util.svm_train(train_chunk.labels.tolist(), [{j + 1: v for j, v in enumerate(r)} for r in A], options + " -q")
    pred, _, _ = util.svm_predict(test_chunk.labels.tolist(), [{j + 1: v for j, v in enumerate(r)} for r in B], m, "-q")
    return float(np.mean((np.array(pred) - test_chunk.labels) ** 2))


@pytest.mark.parametrize("approx", ["nystrom", "fourier"])
def test_asset_kernel_regression_within_ten_percent_of_libsvm(tmp_path, approx):
    train_chunk, A = nonlinear(800, 1)
    test_chunk, B = nonlinear(400, 2)
    model = train(train_chunk, TrainParams(solver="asset", task="r", inner="dcd", approx=approx, kernel_type=2,
                                           gamma=1.0, C=10.0, dim=300, eps=0.01))
    ours = float(np.mean((model.predict(test_chunk) - test_chunk.labels) ** 2))
    theirs = libsvm_test_mse("-s 3 -t 2 -g 1 -c 10 -p 0.1", train_chunk, A, test_chunk, B)
    assert ours <= 1.1 * theirs, (ours, theirs)
    save_model(model, tmp_path / "m")
    back = load_model(tmp_path / "m")
    assert back.task == "r" and np.allclose(back.predict(test_chunk), model.predict(test_chunk), rtol=1e-12)


def test_asset_regression_on_concrete_scale(tmp_path):
    """Issue 18's figure: asset RBF test MSE within 10 % of LIBSVM -s 3 -t 2 (same C, gamma, epsilon)."""
    from svmtrain.data.dataset import take_rows
    from svmtrain.io.reader import read_libsvm
    text = tmp_path / "concrete"
    text.write_bytes(lzma.decompress(shared("concrete_scale.xz").read_bytes()))
    data = read_libsvm(text)
    order = np.random.default_rng(0).permutation(data.n_rows)
    tr, te = take_rows(data, np.sort(order[:824])), take_rows(data, np.sort(order[824:]))

    def dense(c):
        out = np.zeros((c.n_rows, data.n_features))
        for i in range(c.n_rows):
            out[i, c.indices[c.indptr[i]:c.indptr[i + 1]]] = c.values[c.indptr[i]:c.indptr[i + 1]]
        return out
    model = train(tr, TrainParams(solver="asset", task="r", inner="dcd", kernel_type=2, gamma=0.5, C=10.0,
                                  dim=512, eps=0.01), n_features=data.n_features)
    ours = float(np.mean((model.predict(te) - te.labels) ** 2))
    theirs = libsvm_test_mse("-s 3 -t 2 -g 0.5 -c 10 -p 0.1", tr, dense(tr), te, dense(te))
    assert ours <= 1.1 * theirs, (ours, theirs)


def test_liblinear_model_predicts_bit_for_bit(tmp_path):
    """Scores are summed in LIBLINEAR's order (features, then the bias feature): identical doubles."""
    from liblinear import liblinearutil as util
    chunk, A = synthetic(n=300, d=15, seed=11)
    rows = [{j + 1: v for j, v in enumerate(row) if v} for row in A]
    reset_c_rand()
    m = util.train(chunk.labels.tolist(), rows, "-s 12 -c 1 -B 1 -q")
    util.save_model(str(tmp_path / "m"), m)
    theirs, _, _ = util.predict(chunk.labels.tolist(), rows, util.load_model(str(tmp_path / "m")), "-q")
    assert np.array_equal(load_model(tmp_path / "m").predict(chunk), np.array(theirs))


def test_gen_synthetic_regression_mode(tmp_path):
    """scripts/gen_synthetic.py --task r: targets as '%.6f' text, learnable by dcd's SVR."""
    import sys
    from conftest import ROOT
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import gen_synthetic as G
    finally:
        sys.path.pop(0)
    y = np.random.default_rng(0).normal(scale=100.0, size=5000).clip(-999, 999)
    M = G._fixed6(y, 12)
    text = [bytes(row[row != G.PAD]).decode() for row in M]
    assert text == [("%.6f" % v).replace("-0.000000", "0.000000") for v in y]
    path = tmp_path / "reg.svm"
    G.generate(path, rows=3000, features=400, nnz_per_row=30, seed=2, task="r", noise=0.01, skew=1.0)
    from svmtrain.io.reader import read_libsvm
    data = read_libsvm(path)
    model = train(data, TrainParams(task="r", C=10.0, epsilon=0.0, eps=1e-3))
    assert regression_summary(model.predict(data), data.labels).scc > 0.9


@pytest.mark.parametrize("loss", LOSSES)
def test_streamed_regression_reaches_the_in_memory_optimum(tmp_path, loss):
    """--stream: block minimization of the SVR dual, 4+ blocks, same optimum as in memory."""
    from svmtrain.training.streamed import train_streamed
    chunk, A = synthetic(n=2000, d=30, seed=4)
    write_text(tmp_path / "train", chunk)
    params = TrainParams(task="r", loss=loss, C=1.0, epsilon=0.1, eps=1e-6, bias=1.0, max_iter=100000)
    streamed = train_streamed(str(tmp_path / "train"), params, memory_limit_mb=64, chunk_rows=400)
    assert streamed.task == "r" and dict(streamed.header)["stream_blocks"] >= 4
    in_memory = train(chunk, params)
    squared = loss == LOSSES[1]
    f_s, f_m = (primal(A, chunk.labels, m.W[:, 0], 1.0, 0.1, squared, 1.0) for m in (streamed, in_memory))
    assert f_s == pytest.approx(f_m, rel=1e-5)
    info = streamed.fit_results[0].info
    assert info["primal_C_form"] == pytest.approx(f_s, rel=1e-10)
    assert -info["dual_objective"] == pytest.approx(info["primal_C_form"], rel=1e-4)


def test_kernel_status_codes_agree_with_drive():
    from svmtrain.solvers import base
    from svmtrain.solvers.dcd import _dcd_kernels
    from svmtrain.solvers.dcd import _dcd_logistic_kernels as _lr_kernels
    from svmtrain.solvers.dcd import _dcd_oneclass_kernels as _oneclass_kernels
    from svmtrain.solvers.dcd import _dcd_regression_kernels as _svr_kernels
    for K in (_dcd_kernels, _svr_kernels, _lr_kernels, _oneclass_kernels):
        assert (K.RUNNING, K.CONVERGED, K.MAX_ITER) == (base.RUNNING, base.CONVERGED, base.MAX_ITER)


# ---------------------------------------------------------------- -s ocas --task r
def test_svr_score_pass_against_numpy():
    from svmtrain.solvers.dcd._dcd_regression_kernels import svr_score_pass
    rng = np.random.default_rng(5)
    s, y = rng.normal(size=200), rng.normal(size=200)
    for squared in (False, True):
        coef = np.empty(200)
        nv, loss, bconst = svr_score_pass(s, y, 0.3, squared, coef)
        r = s - y
        e = np.maximum(np.abs(r) - 0.3, 0.0)
        twin_loss = e * e if squared else e
        twin_coef = -np.sign(r) * (2.0 * e if squared else (e > 0))
        np.testing.assert_allclose(coef, twin_coef, rtol=0, atol=1e-15)
        assert nv == np.count_nonzero(e > 0) and loss == pytest.approx(twin_loss.sum(), rel=1e-13)
        assert bconst == pytest.approx(float(np.sum(twin_loss + twin_coef * s)), rel=1e-12)
        # the tangent cut: loss(s') >= bconst - coef.s' at any s'
        s2 = rng.normal(size=200)
        e2 = np.maximum(np.abs(s2 - y) - 0.3, 0.0)
        assert (e2 * e2 if squared else e2).sum() >= bconst - coef @ s2 - 1e-9


@pytest.fixture(scope="module")
def dcd_optimum():
    """best(loss, B): the primal of dcd's run at eps 1e-12 on the problem below, computed once
    for both -s ocas methods (up to 10^6 iterations: seconds for the squared loss with a bias)."""
    chunk, A = synthetic(n=300, d=10, seed=7)
    known = {}

    def best(loss, B):
        if (loss, B) not in known:
            dcd = train(chunk, TrainParams(task="r", loss=loss, C=3.0, epsilon=0.2, eps=1e-12, bias=B,
                                           max_iter=10 ** 6))
            known[loss, B] = primal(A, chunk.labels, dcd.W[:, 0], 3.0, 0.2, loss == LOSSES[1], B)
        return known[loss, B]
    return best


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("method", ["ocas", "cp"])
@pytest.mark.parametrize("B", [-1.0, 1.0])
def test_ocas_regression_reaches_the_dcd_optimum(loss, method, B, dcd_optimum):
    """-s ocas --task r against dcd's optimum (dcd is checked against the NumPy twin and
    LIBLINEAR above; the problem is LIBLINEAR's -s 13 / 12)."""
    chunk, A = synthetic(n=300, d=10, seed=7)
    squared = loss == LOSSES[1]
    C, p = 3.0, 0.2
    model = train(chunk, TrainParams(solver="ocas", task="r", loss=loss, C=C, epsilon=p, eps=1e-7, bias=B,
                                     ocas_method=method))
    r = model.fit_results[0]
    ours = primal(A, chunk.labels, model.W[:, 0], C, p, squared, B)
    best = dcd_optimum(loss, B)
    assert r.converged and ours == pytest.approx(r.info["Q_P"], rel=1e-9)   # Q_P is the primal
    assert r.info["Q_D"] <= best * (1 + 1e-9)                              # a lower bound
    assert ours <= best * (1 + 2e-7)
    assert r.objective == pytest.approx(ours / (chunk.n_rows * C), rel=1e-12)


def test_ocas_regression_on_concrete_scale_and_both_commands(tmp_path):
    """Issue 18: ocas's SVR objective against dcd's (= LIBLINEAR's to 3e-8) on concrete_scale;
    the LIBLINEAR model file it writes predicts the same values."""
    text = tmp_path / "concrete"
    text.write_bytes(lzma.decompress(shared("concrete_scale.xz").read_bytes()))
    objectives = {}
    for solver, eps in (("dcd", "1e-8"), ("ocas", "1e-6")):
        r = CliRunner().invoke(train_main, ["-s", solver, "--task", "r", "-c", "1", "-e", eps, "--model-format",
                                            "liblinear", str(text), str(tmp_path / f"{solver}.model")])
        assert r.exit_code == 0, r.output
        objectives[solver] = float(re.search(r"C form ([0-9.e+-]+)\)", r.output).group(1))
    assert objectives["ocas"] == pytest.approx(objectives["dcd"], rel=2e-6)
    outs = []
    for solver in ("dcd", "ocas"):
        out = tmp_path / f"{solver}.out"
        r = CliRunner().invoke(predict_main, [str(text), str(tmp_path / f"{solver}.model"), str(out)])
        assert r.exit_code == 0 and "Mean squared error" in r.output
        outs.append(np.loadtxt(out))
    assert np.max(np.abs(outs[0] - outs[1])) < 0.05


def test_ocas_regression_refusals(tmp_path):
    text = tmp_path / "r.txt"
    write_text(text, synthetic(n=30)[0])
    for extra, says in ((["-w", "1", "2"], "applies to classification"),):
        r = CliRunner().invoke(train_main, ["-s", "ocas", "--task", "r"] + extra + [str(text), str(tmp_path / "m")])
        assert r.exit_code == 2 and says in r.output, r.output


@pytest.mark.parametrize("loss", LOSSES)
def test_ocas_streamed_regression_is_the_in_memory_run(tmp_path, loss):
    """--stream -s ocas --task r over 5 blocks: the same iterations and optimum as in memory."""
    from svmtrain.training.streamed import train_streamed
    chunk, _ = synthetic(n=2000, d=30, seed=4)
    write_text(tmp_path / "train", chunk)
    params = TrainParams(solver="ocas", task="r", loss=loss, C=1.0, epsilon=0.1, eps=1e-6, bias=1.0)
    streamed = train_streamed(str(tmp_path / "train"), params, memory_limit_mb=64, chunk_rows=400)
    assert streamed.task == "r" and dict(streamed.header)["stream_blocks"] >= 4
    in_memory = train(read_libsvm_text(tmp_path / "train"), params)
    rs, rm = streamed.fit_results[0], in_memory.fit_results[0]
    assert rs.n_iter == rm.n_iter
    assert rs.info["Q_P"] == pytest.approx(rm.info["Q_P"], rel=1e-9)
    np.testing.assert_allclose(streamed.W, in_memory.W, rtol=1e-7, atol=1e-9)


def read_libsvm_text(path):
    from svmtrain.io.reader import read_libsvm
    return read_libsvm(str(path))


def test_pegasos_streamed_regression_near_the_optimum(tmp_path):
    """--stream -s pegasos --task r (SGD on the epsilon-insensitive loss over a shuffle buffer): the
    objective within 2 % of dcd's optimum."""
    from svmtrain.training.streamed import train_streamed
    chunk, A = synthetic(n=3000, d=20, seed=9)
    write_text(tmp_path / "train", chunk)
    kw = dict(task="r", loss=LOSSES[0], lam=1e-3, epsilon=0.1)
    streamed = train_streamed(str(tmp_path / "train"), TrainParams(solver="pegasos", epochs=40, **kw),
                              memory_limit_mb=64, chunk_rows=500)
    assert streamed.task == "r" and dict(streamed.header)["stream_blocks"] >= 4
    exact = train(chunk, TrainParams(eps=1e-8, max_iter=100000, **kw))
    f_s, f_e = streamed.fit_results[0].objective, exact.fit_results[0].objective
    assert f_e <= f_s * (1 + 1e-12) and f_s <= 1.02 * f_e, (f_s, f_e)
