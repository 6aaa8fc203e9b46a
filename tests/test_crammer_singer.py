"""Crammer-Singer multi-class dcd (-s dcd --multiclass cs, LIBLINEAR's -s 4):
the sub-problem against a bisection twin, the kernel against a plain NumPy
sequential dual method, the optimum against LIBLINEAR -s 4, MCSVM_CS files."""
import shutil
import subprocess

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import needs

import svmtrain
from svmtrain.cli.train import main as train_main
from svmtrain.errors import ParameterError
from svmtrain.io.liblinear_format import read_liblinear_model
from svmtrain.io.reader import read_libsvm
from svmtrain.solvers.dcd import _dcd_cs_kernels as K

LIBLINEAR = shutil.which("liblinear-train")


def sub_problem_twin(A, yi, C, B):
    """The sub-problem's solution by bisection on beta: a_m = min(bound_m, (beta - B_m) / A), sum a = 0."""
    bound = np.where(np.arange(len(B)) == yi, C, 0.0)

    def alphas(beta):
        return np.minimum(bound, (beta - B) / A)
    lo, hi = B.min() - A * C - 1.0, B.max() + A * C + 1.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if alphas(mid).sum() < 0 else (lo, mid)
    return alphas(0.5 * (lo + hi))


@pytest.mark.parametrize("seed", range(20))
def test_sub_problem_matches_bisection(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 9))
    A, C, yi = rng.uniform(0.1, 5), rng.uniform(0.01, 3), int(rng.integers(0, k))
    B = rng.normal(size=k) * rng.choice([0.1, 1, 10])
    got = np.empty(k)
    K.solve_sub_problem(A, yi, C, k, B, got, np.empty(k))
    np.testing.assert_allclose(got, sub_problem_twin(A, yi, C, B), atol=1e-9)
    assert abs(got.sum()) < 1e-9 and got[yi] <= C + 1e-12 and np.all(np.delete(got, yi) <= 1e-12)


def multiclass_data(n=600, d=30, k=4, seed=0):
    """Rows near k random centres (dense, d features), labels 1..k, as a LIBSVM file text."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(k, d))
    y = rng.integers(0, k, size=n)
    X = centres[y] + 1.5 * rng.normal(size=(n, d))
    return X, y + 1


def libsvm_text(X, y):
    return "".join(f"{int(label)} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(row)) + "\n"
                   for row, label in zip(X, y))


def numpy_sequential_dual(X, y, C, sweeps):
    """A plain NumPy twin: rows in order, every class active, no shrinking;
    returns (W (d, k), alpha (n, k))."""
    n, d = X.shape
    k = int(y.max()) + 1
    W = np.zeros((d, k))
    alpha = np.zeros((n, k))
    for _ in range(sweeps):
        for i in range(n):
            A = X[i] @ X[i]
            G = X[i] @ W + (np.arange(k) != y[i])
            new = sub_problem_twin(A, y[i], C, G - A * alpha[i])
            W += np.outer(X[i], new - alpha[i])
            alpha[i] = new
    return W, alpha


def dual_value(W, alpha, y):
    return float(alpha[np.arange(len(y)), y].sum() - 0.5 * (W * W).sum())


def test_kernel_optimum_lies_inside_the_numpy_twins_bounds():
    """Weak duality sandwiches the optimum between the twin's dual and primal
    values (200 sweeps); ours must land inside, with its own gap closed."""
    X, labels = multiclass_data(n=80, d=8, k=3)
    y = labels - 1
    W_twin, alpha_twin = numpy_sequential_dual(X, y, 1.0, 200)
    S = X @ W_twin
    margins = 1.0 + S - S[np.arange(len(y)), y][:, None]
    margins[np.arange(len(y)), y] = 0.0
    twin_primal = 0.5 * float((W_twin ** 2).sum()) + float(np.maximum(margins.max(axis=1), 0.0).sum())
    twin_dual = dual_value(W_twin, alpha_twin, y)
    assert twin_primal - twin_dual < 0.01 * twin_primal                 # the twin itself is close
    model = svmtrain.train(X, labels.astype(np.float64), solver="dcd", multiclass="cs", eps=1e-6)
    info = model.fit_results[0].info
    assert twin_dual <= info["dual_objective"] <= info["primal_C_form"] <= twin_primal
    assert info["primal_C_form"] - info["dual_objective"] < 1e-6 * info["primal_C_form"]


def word_counts(rows=1000, features=2000, k=5, seed=1):
    """Word counts of k overlapping topics with log-normal lengths of a heavy
    tail (sigma 1.8): a few long rows of |x|^2 in the tens of thousands, the
    shape of real text counts that holds LIBLINEAR's schedule for hundreds
    of passes (619 at eps 0.1). CSR (sorted indices), classes 0..k-1."""
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    base = 1.0 / (np.arange(1, features + 1) + 5.0) ** 1.1
    y = rng.integers(0, k, rows)
    lengths = np.maximum(1, np.rint(rng.lognormal(np.log(40) - 1.8 ** 2 / 2, 1.8, rows))).astype(np.int64)
    topics = []
    for _ in range(k):
        boost = np.ones(features)
        boost[rng.choice(features, features // 20, replace=False)] = 1.5
        topics.append(base * boost / (base * boost).sum())
    counts = np.array([rng.multinomial(lengths[i], topics[y[i]]) for i in range(rows)], np.float64)
    return sp.csr_matrix(counts), y


def run_cs(M, y, k, eps, revisits):
    """cs_run from zero on CSR M (C = 1, no bias); (passes, converged, dual, primal), C form."""
    n, d = M.shape
    indptr, indices, values = M.indptr.astype(np.int64), M.indices.astype(np.int32), M.data.astype(np.float64)
    y = y.astype(np.int64)
    alpha, w = np.zeros(n * k), np.zeros((d + 1) * k)
    QD = np.asarray(M.multiply(M).sum(axis=1)).ravel()
    passes, converged = K.cs_run(indptr, indices, values, 0.0, y, np.ones(n), QD, k, alpha, w,
                                 np.tile(np.arange(k, dtype=np.int64), n), y.copy(), np.full(n, k, np.int64),
                                 np.arange(n, dtype=np.int64), eps, 100000, np.array([7], np.uint64), revisits)
    ww = float(w @ w)
    dual = float(alpha[np.arange(n) * k + y].sum()) - 0.5 * ww
    primal = 0.5 * ww + K.cs_losses(indptr, indices, values, 0.0, y, np.ones(n), k, w)
    return passes, converged, dual, primal


def test_revisits_cut_the_passes_on_counts_to_the_same_optimum():
    """On heavy-tailed counts, a long run (hundreds of passes: revisits start
    at pass REVISIT_AFTER), the revisits need far fewer passes than
    LIBLINEAR's schedule (revisits=0) at the default eps, and both schedules
    reach the same optimum (their tight runs' duals agree to 1e-9)."""
    M, y = word_counts()
    assert np.asarray(M.multiply(M).sum(axis=1)).max() > 1e4
    plain = run_cs(M, y, 5, 0.1, 0)
    ours = run_cs(M, y, 5, 0.1, K.REVISITS)
    assert plain[1] and ours[1]
    assert ours[0] < 0.6 * plain[0]
    assert ours[2] == pytest.approx(plain[2], rel=1e-4)
    assert max(plain[2], ours[2]) <= min(plain[3], ours[3])        # weak duality across the two
    tight = [run_cs(M, y, 5, 1e-4, r) for r in (0, K.REVISITS)]
    assert all(t[1] and t[3] - t[2] < 1e-5 * t[3] for t in tight)
    assert tight[1][2] == pytest.approx(tight[0][2], rel=1e-9)


@pytest.mark.parametrize("n_active", [1, 3, 4, 5, 8, 11])
def test_four_lane_scores_add_in_the_rows_order(n_active):
    """_add_scores (four classes at a time in registers) gives each G[m] the
    plain loop's sum to the bit: G[m] + w[f_1 k + c] x_1 + ... in the row's order."""
    rng = np.random.default_rng(n_active)
    k, d = 11, 50
    indices = np.sort(rng.choice(d, 30, replace=False)).astype(np.int32)
    values = rng.normal(size=30) * 10.0 ** rng.integers(-3, 4, 30)
    indptr = np.array([0, 30], np.int64)
    w = rng.normal(size=(d + 1) * k)
    order = rng.permutation(k).astype(np.int64)
    G = rng.normal(size=k)
    want = G.copy()
    for m in range(n_active):
        for f, v in zip(indices, values):
            want[m] += w[f * k + order[m]] * v
        want[m] += w[d * k + order[m]] * 0.5
    K._add_scores(indptr, indices, values, 0, 0.5, w, np.uint64(k), np.uint64(d), order, np.uint64(0),
                  np.uint64(n_active), G)
    np.testing.assert_array_equal(G[:n_active], want[:n_active])


@needs("liblinear-train", package="liblinear-tools")
@pytest.mark.parametrize("opts, params", [
    (["-e", "0.0001"], {}),
    (["-e", "0.0001", "-B", "1", "-c", "0.3"], {"bias": 1.0, "C": 0.3}),
    (["-e", "0.0001", "-w2", "3"], {"class_weights": {2.0: 3.0}}),
])
def test_objective_and_predictions_match_liblinear_s4(tmp_path, opts, params):
    """LIBLINEAR prints the dual's negative ("Objective value", 6 decimals)."""
    X, y = multiclass_data(n=800, d=40, k=5, seed=3)
    train = tmp_path / "train"
    train.write_text(libsvm_text(X, y))
    out = subprocess.run([LIBLINEAR, "-s", "4", *opts, str(train), str(tmp_path / "ll.model")], check=True,
                         capture_output=True, text=True).stdout
    theirs = -float(out.split("Objective value = ")[1].split()[0])
    ours = svmtrain.train(str(train), solver="dcd", multiclass="cs", eps=1e-4, **params)
    assert ours.fit_results[0].info["dual_objective"] == pytest.approx(theirs, rel=1e-6, abs=2e-6)
    data = read_libsvm(train)
    assert np.mean(ours.predict(data) == read_liblinear_model(tmp_path / "ll.model").predict(data)) >= 0.995


@needs("liblinear-train", "liblinear-predict", package="liblinear-tools")
def test_mcsvm_cs_files_go_to_liblinear_predict(tmp_path):
    X, y = multiclass_data(n=300, d=10, k=3, seed=5)
    train = tmp_path / "train"
    train.write_text(libsvm_text(X, y))
    for extra in ([], ["-B", "1"]):
        model = tmp_path / "m"
        res = CliRunner().invoke(train_main, ["-s", "4", *extra, "--model-format", "liblinear", "-q", str(train),
                                              str(model)])
        assert res.exit_code == 0, res.output
        assert model.read_text().startswith("solver_type MCSVM_CS\nnr_class 3\n")
        subprocess.run(["liblinear-predict", str(train), str(model), str(tmp_path / "out")], check=True,
                       capture_output=True)
        theirs = np.loadtxt(tmp_path / "out")
        ours = svmtrain.predict(str(train), svmtrain.load_model(model))
        np.testing.assert_array_equal(ours, theirs)


def test_two_classes_keep_one_column_and_write_w_and_minus_w(tmp_path):
    X, y = multiclass_data(n=200, d=6, k=2, seed=1)
    model = svmtrain.train(X, y.astype(np.float64), solver="dcd", multiclass="cs")
    assert model.W.shape == (6, 1)
    from svmtrain.io.liblinear_format import write_liblinear_model
    write_liblinear_model(model, tmp_path / "m")
    text = (tmp_path / "m").read_text()
    assert "solver_type MCSVM_CS\nnr_class 2\n" in text
    rows = np.array([[float(v) for v in line.split()] for line in text.split("w\n")[1].splitlines()])
    np.testing.assert_array_equal(rows[:, 1], -rows[:, 0])
    back = read_liblinear_model(tmp_path / "m")
    np.testing.assert_array_equal(back.predict(svmtrain.data.arrays.as_chunk(X)), model.predict(svmtrain.data.arrays.as_chunk(X)))


@pytest.mark.parametrize("options, match", [
    (dict(solver="pegasos", multiclass="cs"), "trained by -s dcd, -s ocas, not -s pegasos"),
    (dict(solver="dcd", multiclass="cs", loss="squared-hinge"), "hinge loss"),
    (dict(solver="dcd", multiclass="cs", task="r"), "hinge loss"),
])
def test_what_crammer_singer_refuses(options, match):
    X, y = multiclass_data(n=30, d=3, k=3)
    with pytest.raises(ParameterError, match=match):
        svmtrain.train(X, y.astype(np.float64), **options)


def test_stream_refuses_crammer_singer(tmp_path):
    X, y = multiclass_data(n=30, d=3, k=3)
    train = tmp_path / "train"
    train.write_text(libsvm_text(X, y))
    res = CliRunner().invoke(train_main, ["-s", "4", "--stream", str(train), str(tmp_path / "m")])
    assert res.exit_code == 2 and "in memory only" in res.output


def test_short_runs_keep_liblinears_schedule_to_the_bit():
    """A run that converges before pass REVISIT_AFTER never revisits: its
    alphas and weights are the plain schedule's, bit for bit."""
    import scipy.sparse as sp
    X, labels = multiclass_data(n=300, d=40, k=3, seed=5)       # 15 passes
    M, y = sp.csr_matrix(X), labels - 1
    plain, ours = run_cs(M, y, 3, 0.1, 0), run_cs(M, y, 3, 0.1, K.REVISITS)
    assert plain[1] and plain[0] < K.REVISIT_AFTER
    assert ours == plain
