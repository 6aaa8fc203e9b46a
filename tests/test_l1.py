"""-s cdn: LIBLINEAR's L1-regularised models, -s 5 (CDN, squared hinge) and -s 6 (newGLMNET, logistic).

The kernels against plain-NumPy twins (tests/naive_l1.py), the solutions
against a third method (FISTA) and against the official LIBLINEAR package
at the same C and tolerance (the primal L1 objective computed here, in
NumPy), model files both ways, the LIBLINEAR lines, -B, -R, -w, -v, sample
weights, the warm start of -C and the refusals.
"""
import ctypes
import dataclasses
import lzma
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import svmtrain
from conftest import bundled, needs
from naive_l1 import (dense, naive_cdn, naive_glibc_rand, naive_glmnet, objective, proximal_optimum,
                      violations, with_constant)
from reference import reset_c_rand
from svmtrain.cli.foreign import translate_train
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main
from svmtrain.data.dataset import Chunk
from svmtrain.errors import ParameterError
from svmtrain.params import TrainParams, check_params
from svmtrain.solvers import REGISTRY, check_penalty
from svmtrain.solvers.l1 import _l1_kernels as K
from svmtrain.solvers.l1 import cdn, newglmnet
from svmtrain.training.train import train

liblinearutil = pytest.importorskip("liblinear.liblinearutil")
LOSS = {5: "squared-hinge", 6: "log"}


def chunk_of(A, labels, weights=None):
    A = sp.csr_matrix(A)
    A.sort_indices()
    return Chunk(np.asarray(labels, np.float64), A.indptr.astype(np.int64), A.indices.astype(np.int32),
                 A.data.astype(np.float64), np.zeros(A.shape[0], np.int64), weights=weights)


def sparse_set(seed=0, n=300, d=40, density=0.25, classes=2):
    """A sparse problem whose labels a few features decide (plus noise): (Chunk, dense A, labels)."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    A[:, d - 1] = 0.0
    A[0, d - 1] = 0.5              # the last feature present (LIBLINEAR's n is the largest index given)
    W = np.zeros((d, classes))
    W[rng.choice(d, 6, replace=False)] = rng.normal(scale=2.0, size=(6, classes))
    scores = A @ W + rng.normal(scale=0.5, size=(n, classes))
    labels = (np.where(scores[:, 0] > 0, 1.0, -1.0) if classes == 2 else
              np.array([3.0, -2.0, 7.0, 5.0])[np.argmax(scores, axis=1)])
    return chunk_of(A, labels), A, labels


@pytest.fixture(scope="module")
def problem():
    return sparse_set()


def fit(module, X, y, **params):
    return module.fit(X, y, X.n_features, TrainParams(solver="cdn", **params))


# ------------------------------------------------------------------ kernels against their NumPy twins

@pytest.mark.parametrize("const", [False, True])
def test_csr_to_csc_is_the_transpose(problem, const):
    X, A, _ = problem
    colptr, rowind, colval = K.csr_to_csc(X.indptr, X.indices, X.values, X.n_features, const, 0.5)
    want = sp.csc_matrix(with_constant(dense(X.indptr, X.indices, X.values, X.n_features), const, 0.5))
    assert colptr.dtype == np.int64 and rowind.dtype == np.int32
    got = sp.csc_matrix((colval, rowind, colptr), shape=want.shape)
    assert np.array_equal(got.toarray(), want.toarray())
    assert all(np.all(np.diff(rowind[colptr[j]:colptr[j + 1]]) > 0) for j in range(want.shape[1]))


def test_column_kernels_match_numpy(problem):
    X, A, y = problem
    colptr, rowind, colval = K.csr_to_csc(X.indptr, X.indices, X.values, X.n_features, True, 2.0)
    Ab = with_constant(A, True, 2.0)
    row = np.random.default_rng(1).random(X.n_rows)
    w = np.where(np.arange(Ab.shape[1]) % 3 == 0, 0.0, np.linspace(-1, 1, Ab.shape[1]))
    yx = K.signed_values(rowind, colval, y)
    assert np.array_equal(sp.csc_matrix((yx, rowind, colptr), shape=Ab.shape).toarray(), y[:, None] * Ab)
    np.testing.assert_allclose(K.column_products(colptr, rowind, colval, row), Ab.T @ row, rtol=1e-13)
    np.testing.assert_allclose(K.column_sq_products(colptr, rowind, colval, row), (Ab * Ab).T @ row, rtol=1e-13)
    out = np.ones(X.n_rows)
    np.testing.assert_allclose(K.columns_times_w(colptr, rowind, colval, w, out), 1.0 + Ab @ w, rtol=1e-12)
    e = np.exp(np.linspace(-3, 3, X.n_rows))
    tau, D = np.empty(X.n_rows), np.empty(X.n_rows)
    K.logistic_terms(e, row, tau, D)
    np.testing.assert_allclose(tau, row / (1 + e), rtol=1e-14)
    np.testing.assert_allclose(D, row * e / (1 + e) ** 2, rtol=1e-14)


@pytest.mark.parametrize("seed", [1, 0, 7, 123456, 2**31 + 5])
def test_c_rand_is_glibcs_rand(seed):
    state = K.rand_state(seed)
    got = [int(K.c_rand(state)) for _ in range(2000)]
    assert got == naive_glibc_rand(seed, 2000)
    try:
        libc = ctypes.CDLL(None)
        libc.srand(ctypes.c_uint(seed))
        assert got[:100] == [libc.rand() for _ in range(100)]
    except (OSError, AttributeError):
        pass
    finally:
        reset_c_rand()


def test_shuffle_is_liblinears():
    index = np.arange(50, dtype=np.int64)
    K.shuffle(index, 40, K.rand_state(3))
    want = list(range(50))
    r = naive_glibc_rand(3, 40)
    for s in range(40):
        j = s + r[s] % (40 - s)
        want[s], want[j] = want[j], want[s]
    assert index.tolist() == want


@pytest.mark.parametrize("loss", ["squared-hinge", "log"])
@pytest.mark.parametrize("bias, free", [(-1.0, False), (1.0, False), (1.0, True), (-1.0, True)])
def test_kernels_reach_the_optimum_of_the_twins_and_of_fista(problem, loss, bias, free):
    X, A, y = problem
    C = 0.5
    r = fit(cdn if loss == "squared-hinge" else newglmnet, X, y, loss=loss, C=C, eps=1e-9, bias=bias,
            unreg_bias=free)
    assert r.converged
    Ab = with_constant(A, bias >= 0 or free, bias if bias >= 0 else 1.0)
    w = np.append(r.w, r.b) if bias < 0 and free else r.w
    cost = np.full(len(y), C)
    f = objective(Ab, y, cost, w, loss, free)
    assert f == pytest.approx(r.info["primal_C_form"], rel=1e-12)
    assert violations(Ab, y, cost, w, loss, free).sum() < 1e-5
    twin = (naive_cdn(Ab, y, cost, 1e-7, max_iter=500, free_last=free) if loss == "squared-hinge"
            else naive_glmnet(Ab, y, cost, 1e-7, free_last=free))
    _, f_fista = proximal_optimum(Ab, y, cost, loss, iters=4000, free_last=free)
    assert f == pytest.approx(objective(Ab, y, cost, twin, loss, free), rel=1e-8)
    assert f <= f_fista * (1 + 1e-9)
    assert np.array_equal(w != 0, twin != 0)


# ------------------------------------------------------------------ against LIBLINEAR, the same steps

@pytest.mark.parametrize("opts", ["-s 5", "-s 6", "-s 5 -c 0.3 -B 1 -w1 2", "-s 6 -c 4 -B 1 -w-1 3",
                                  "-s 6 -c 2 -B 1 -R", "-s 5 -B 1 -R", "-s 6 -e 0.001", "-s 5 -c 0.05 -e 0.1"])
def test_the_same_solution_as_liblinear(problem, opts):
    """LIBLINEAR's random orders (glibc's rand from srand(1), --seed 1) make the
    same steps: the objective (in NumPy) and the weights agree to rounding."""
    X, A, y = problem
    reset_c_rand()
    m = liblinearutil.train(y.tolist(), sp.csr_matrix(A), opts + " -q")
    w_ll, b_ll = m.get_decfun()
    w_ll = np.array(w_ll + ([b_ll] if m.bias >= 0 else [])) * (1 if m.get_labels()[0] == 1 else -1)
    args = dict(zip(opts.split()[::2], opts.split()[1::2] + [None]))
    s = int(args["-s"])
    weights = {float(k[2:]): float(v) for k, v in args.items() if k.startswith("-w")}
    params = TrainParams(solver="cdn", loss=LOSS[s], C=float(args.get("-c", 1)), bias=float(args.get("-B", -1)),
                         eps=float(args["-e"]) if "-e" in args else None, class_weights=weights,
                         unreg_bias="-R" in opts)
    model = train(X, params)
    w = model.W[:, 0]
    assert model.labels[0] == 1.0
    np.testing.assert_allclose(w, w_ll, rtol=0, atol=1e-10)
    assert np.count_nonzero(w[:X.n_features]) == np.count_nonzero(w_ll[:X.n_features])
    B = params.bias
    Ab = with_constant(A, B >= 0, B)
    cost = np.where(y > 0, params.C * weights.get(1.0, 1.0), params.C * weights.get(-1.0, 1.0))
    f, f_ll = (objective(Ab, y, cost, v, LOSS[s], params.unreg_bias) for v in (w, w_ll))
    assert f <= f_ll * (1 + 1e-10)
    assert model.fit_results[0].info["primal_C_form"] == pytest.approx(f, rel=1e-12)


def test_one_vs_rest_classes_reach_liblinears_objective():
    """More than two classes: each class's problem draws its own order from the seed (LIBLINEAR's
    continue one stream), so each reaches LIBLINEAR's objective within the tolerance."""
    X, A, labels = sparse_set(seed=3, classes=3)
    reset_c_rand()
    m = liblinearutil.train(labels.tolist(), sp.csr_matrix(A), "-s 6 -e 0.0001 -q")
    model = train(X, TrainParams(solver="cdn", loss="log", eps=1e-4))
    assert list(model.labels) == m.get_labels()
    for k, label in enumerate(model.labels):
        w_ll = np.array([m.get_decfun_coef(j, k) for j in range(1, X.n_features + 1)])
        yk = np.where(labels == label, 1.0, -1.0)
        cost = np.ones(len(yk))
        f, f_ll = (objective(A, yk, cost, v, "log") for v in (model.W[:, k], w_ll))
        assert f == pytest.approx(f_ll, rel=1e-5)


# ------------------------------------------------------------------ the options

def test_sample_weights_are_repeated_rows(problem):
    X, A, y = problem
    s = np.random.default_rng(2).integers(1, 4, size=len(y)).astype(np.float64)
    rows = np.repeat(np.arange(len(y)), s.astype(int))
    for loss in ("squared-hinge", "log"):
        weighted = svmtrain.train(sp.csr_matrix(A), y, sample_weight=s, solver="cdn", loss=loss, eps=1e-8)
        repeated = svmtrain.train(sp.csr_matrix(A[rows]), y[rows], solver="cdn", loss=loss, eps=1e-8)
        fw, fr = weighted.fit_results[0].info["primal_C_form"], repeated.fit_results[0].info["primal_C_form"]
        assert fw == pytest.approx(fr, rel=1e-8)


@pytest.mark.parametrize("module, loss", [(cdn, "squared-hinge"), (newglmnet, "log")])
def test_warm_start_reaches_the_cold_solution(problem, module, loss):
    X, A, y = problem
    warm = {}
    module.fit(X, y, X.n_features, TrainParams(solver="cdn", loss=loss, C=0.25, eps=1e-6), warm_start=warm)
    again = module.fit(X, y, X.n_features, TrainParams(solver="cdn", loss=loss, C=0.5, eps=1e-6),
                       warm_start=warm)
    cold = fit(module, X, y, loss=loss, C=0.5, eps=1e-6)
    assert again.info["primal_C_form"] == pytest.approx(cold.info["primal_C_form"], rel=1e-7)
    assert again.n_iter <= cold.n_iter


@pytest.mark.parametrize("module, loss", [(cdn, "squared-hinge"), (newglmnet, "log")])
def test_path_start_c_is_where_the_weights_leave_zero(problem, module, loss):
    X, A, y = problem
    params = TrainParams(solver="cdn", loss=loss, bias=1.0)
    C0 = module.path_start_c(X, params)
    assert C0 == 2.0 ** np.floor(np.log2(C0))
    zero = train(X, dataclasses.replace(params, C=C0))
    assert not np.any(zero.W)
    assert np.any(train(X, dataclasses.replace(params, C=4 * C0)).W)


@pytest.mark.parametrize("loss", ["squared-hinge", "log"])
def test_c_path_starts_where_the_weights_leave_zero(problem, loss):
    """-C -s cdn walks from the solver's own start (LIBLINEAR's L1 start),
    not the L2 one, below which every L1 model is 0 and the path would stop
    after five unchanged points."""
    from svmtrain.selection.param_search import search_c, start_c
    X, _, _ = problem
    params = TrainParams(solver="cdn", loss=loss)
    module = cdn if loss == "squared-hinge" else newglmnet
    assert start_c(X, params) == module.path_start_c(X, params)
    path = search_c(X, params, folds=3)
    assert path.points[0].C == module.path_start_c(X, params) and len(path.points) > 5
    assert path.best.accuracy > path.points[0].accuracy


def test_penalty_is_the_registrys_axis():
    assert REGISTRY["cdn"].penalties == ("l1",)
    assert all(d.penalties == ("l2",) for name, d in REGISTRY.items() if name != "cdn")
    check_penalty("cdn", "l1")
    with pytest.raises(ParameterError, match="solvers that do: -s cdn"):
        check_params(TrainParams(solver="dcd", penalty="l1"))
    with pytest.raises(ParameterError, match="-s cdn does not train --penalty l2"):
        check_params(TrainParams(solver="cdn", penalty="l2"))
    assert TrainParams(solver="cdn").loss == "squared-hinge"
    assert "penalty" not in dict(TrainParams().header())
    assert dict(TrainParams(penalty="l2").header())["penalty"] == "l2"


# ------------------------------------------------------------------ the command line and model files

def run(cmd, args):
    return CliRunner().invoke(cmd, [str(a) for a in args])


@pytest.fixture(scope="module")
def heart(tmp_path_factory):
    p = tmp_path_factory.mktemp("l1") / "heart"
    p.write_bytes(lzma.decompress(bundled("heart_scale.xz").read_bytes()))
    return p


@pytest.mark.parametrize("line, want", [
    ("-s 5", ["-s", "cdn", "--task", "c", "--loss", "squared-hinge"]),
    ("-s 6 -B 1", ["-s", "cdn", "--task", "c", "--loss", "log", "-B", "1"]),
    ("--penalty l1 --loss log", ["-s", "cdn", "--penalty", "l1", "--loss", "log"]),
    ("--penalty l2", ["--penalty", "l2"]),
])
def test_lines_that_train_cdn(line, want):
    assert translate_train(line.split() + ["TRAIN"], train_main) == want + ["TRAIN"]


@pytest.mark.parametrize("line, says", [
    ("-s dcd --penalty l1", "-s dcd does not train --penalty l1 (L1-regularised, |w|_1: sparse weights); it takes "
                            "--penalty l2; solvers that do: -s cdn"),
    ("-s cdn --penalty l2", "-s cdn does not train --penalty l2"),
    ("-s cdn --loss hinge", "it takes --loss squared-hinge, log there"),
    ("-s 6 --multiclass cs", "is trained by -s dcd, -s ocas, not -s cdn"),
    ("-s cdn -t 2", "trains linear models only"),
    ("-s cdn --task r", "-s cdn does not train regression"),
    ("-s 5 --stream", "-s cdn trains in memory only"),
    ("-s 6 --loss squared-hinge", "contradicts --loss squared-hinge"),
    ("-t 2 --penalty l1", "-s smo does not train --penalty l1"),
])
def test_refusals(heart, tmp_path, line, says):
    r = run(train_main, line.split() + [heart, tmp_path / "m"])
    assert r.exit_code == 2, r.output
    assert says in r.output and len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "m").exists()


def test_model_header_and_cross_validation(heart, tmp_path):
    model = tmp_path / "m"
    assert run(train_main, ["-q", "--penalty", "l1", "--loss", "log", heart, model]).exit_code == 0
    header = dict(line.split(" ", 1) for line in model.read_text().splitlines()[:40] if " " in line)
    assert (header["solver"], header["loss"], header["penalty"]) == ("cdn", "log", "l1")
    assert run(train_main, ["-q", "-s", "dcd", heart, model]).exit_code == 0
    assert "penalty" not in model.read_text()
    r = run(train_main, ["-s", "5", "-v", "3", heart])
    assert r.exit_code == 0 and "Cross Validation Accuracy = " in r.output


@pytest.mark.parametrize("s", [5, 6])
def test_liblinear_model_files_both_ways(heart, tmp_path, s):
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    assert run(train_main, ["-q", "-s", s, "-B", "1", "--model-format", "liblinear", heart, ours]).exit_code == 0
    text = ours.read_text()
    assert text.startswith(f"solver_type {'L1R_L2LOSS_SVC' if s == 5 else 'L1R_LR'}\n")
    y, x = liblinearutil.svm_read_problem(str(heart))
    reset_c_rand()
    m = liblinearutil.train(y, x, f"-s {s} -B 1 -q")
    liblinearutil.save_model(str(theirs), m)
    loaded = liblinearutil.load_model(str(ours))
    opt = "-b 1 -q" if s == 6 else "-q"
    for path, model in ((ours, loaded), (theirs, m)):
        want, _, want_p = liblinearutil.predict(y, x, model, opt)
        out = tmp_path / "out"
        r = run(predict_main, (["-b", "1"] if s == 6 else []) + ["-q", heart, path, out])
        assert r.exit_code == 0, r.output
        rows = out.read_text().splitlines()
        got = [float(line.split()[0]) for line in rows[1 if s == 6 else 0:]]
        assert got == want
        if s == 6:
            np.testing.assert_allclose([[float(v) for v in line.split()[1:]] for line in rows[1:]], want_p,
                                       atol=1e-6)
    assert np.allclose([loaded.w[j] for j in range(14)], [m.w[j] for j in range(14)], atol=1e-12)


@needs("liblinear-predict", package="liblinear-tools")
def test_liblinear_predict_reads_ours(heart, tmp_path):
    ours, out = tmp_path / "ours", tmp_path / "out"
    assert run(train_main, ["-q", "-s", "6", "--model-format", "liblinear", heart, ours]).exit_code == 0
    r = subprocess.run(["liblinear-predict", "-b", "1", str(heart), str(ours), str(out)], capture_output=True,
                       text=True, check=True)
    assert "Accuracy" in r.stdout and out.read_text().startswith("labels 1 -1\n")


@pytest.mark.parametrize("module, loss", [(cdn, "squared-hinge"), (newglmnet, "log")])
def test_a_progress_bar_sees_the_same_iterates(problem, module, loss):
    X, A, y = problem
    calls = []
    shown = module.fit(X, y, X.n_features, TrainParams(solver="cdn", loss=loss, bias=1.0),
                       progress=lambda done, total, status=None: calls.append(done))
    plain_run = fit(module, X, y, loss=loss, bias=1.0)
    assert np.array_equal(shown.w, plain_run.w) and calls[-1] == plain_run.n_iter
