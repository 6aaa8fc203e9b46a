"""-s smo (LIBSVM's C-SVC solver): the step loop against a plain NumPy SMO
twin (same working sets, same alphas), the solution against libsvm-official
(same dual objective, support vectors, rho and predictions), one-vs-one
multi-class, class weights and model files."""
import lzma
import subprocess

import numpy as np
import pytest
from libsvm import svmutil
from click.testing import CliRunner

import svmtrain
from svmtrain.data.arrays import as_chunk
from svmtrain.cli.train import main as train_main
from svmtrain.errors import ParameterError
from svmtrain.io.reader import read_libsvm
from svmtrain.mercer.functions import RBF, Kernel
from svmtrain.params import TrainParams
from svmtrain.solvers.kernel import smo

from conftest import bundled, needs
from reference import csr
from test_crammer_singer import multiclass_data

TAU = 1e-12
LIBSVM_PREDICT = "/usr/bin/svm-predict"      # LIBSVM's, same name as ours


def dense_of(X, d):
    return csr(X, d).toarray()


def rbf(A, B, gamma):
    d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2 * A @ B.T
    return np.exp(-gamma * np.maximum(d2, 0.0))


def numpy_smo(K, y, C, eps):
    """A plain SMO with Fan et al.'s working-set selection and LIBSVM's
    clipping, over a full kernel matrix K; returns (alpha, G, steps)."""
    n = len(y)
    alpha, G = np.zeros(n), -np.ones(n)
    steps = 0
    while True:
        up = np.where(y > 0, alpha < C, alpha > 0)
        low = np.where(y > 0, alpha > 0, alpha < C)
        v = -y * G
        if not up.any():
            break
        i = int(np.flatnonzero(up & (v == v[up].max()))[-1])   # the last index among equals, as the loop's >=
        g_max = v[i]
        g_max2 = (y * G)[low].max() if low.any() else -np.inf
        diff = g_max + y * G
        quad = np.maximum(np.where(K[i, i] + np.diag(K) - 2 * K[i] > 0, K[i, i] + np.diag(K) - 2 * K[i], TAU), 0)
        obj = np.where(low & (diff > 0), -(diff ** 2) / quad, np.inf)
        if g_max + g_max2 < eps or not np.isfinite(obj).any():
            break
        j = int(np.flatnonzero(obj == obj.min())[-1])
        a_i, a_j = alpha[i], alpha[j]
        Qij = y[i] * y[j] * K[i, j]
        if y[i] != y[j]:
            q = max(K[i, i] + K[j, j] + 2 * Qij, TAU) if K[i, i] + K[j, j] + 2 * Qij > 0 else TAU
            delta = (-G[i] - G[j]) / q
            d = a_i - a_j
            ni, nj = a_i + delta, a_j + delta
            if d > 0:
                if nj < 0:
                    nj, ni = 0.0, d
            elif ni < 0:
                ni, nj = 0.0, -d
            if d > C[i] - C[j]:
                if ni > C[i]:
                    ni, nj = C[i], C[i] - d
            elif nj > C[j]:
                nj, ni = C[j], C[j] + d
        else:
            q = K[i, i] + K[j, j] - 2 * Qij
            q = q if q > 0 else TAU
            delta = (G[i] - G[j]) / q
            s = a_i + a_j
            ni, nj = a_i - delta, a_j + delta
            if s > C[i]:
                if ni > C[i]:
                    ni, nj = C[i], s - C[i]
            elif nj < 0:
                nj, ni = 0.0, s
            if s > C[j]:
                if nj > C[j]:
                    nj, ni = C[j], s - C[j]
            elif ni < 0:
                ni, nj = 0.0, s
        alpha[i], alpha[j] = ni, nj
        G += y * (K[i] * (ni - a_i) * y[i] + K[j] * (nj - a_j) * y[j])
        steps += 1
    return alpha, G, steps


@pytest.mark.parametrize("seed", range(4))
def test_step_loop_follows_the_numpy_twin(seed):
    """Same working sets and updates: the same alphas (the twin reads the
    kernel rounded to float32, as the cache keeps it; no shrinking, which
    the twin does not do)."""
    rng = np.random.default_rng(seed)
    n, d = 60, 5
    A = rng.normal(size=(n, d))
    y = np.where(A[:, 0] + 0.8 * rng.normal(size=n) > 0, 1.0, -1.0)
    C = np.where(y > 0, 2.0, 1.0)
    gamma = 0.3
    K32 = rbf(A, A, gamma).astype(np.float32).astype(np.float64)
    alpha_t, G_t, steps_t = numpy_smo(K32, y, C, 1e-3)
    X = as_chunk(A, y)
    params = TrainParams(solver="smo", gamma=gamma, eps=1e-3, shrinking=0, working_set=2)
    alpha, rho, res = smo.solve_binary(X, y, C, Kernel(RBF, gamma), params)
    assert res.converged and res.n_iter == steps_t
    np.testing.assert_allclose(alpha, alpha_t, rtol=1e-6, atol=1e-9)
    assert np.all(alpha >= 0) and np.all(alpha <= C) and abs(alpha @ y) < 1e-9


@pytest.mark.parametrize("seed", range(2))
def test_shrinking_reaches_the_same_optimum(seed):
    """LIBSVM's shrinking (on by default; checked every 1000 steps) drops
    and later rebuilds gradients: the same dual objective and the optimality
    gap below eps on every row, as without it."""
    rng = np.random.default_rng(seed)
    n, d = 1500, 6
    A = rng.normal(size=(n, d))
    y = np.where(A[:, 0] * A[:, 1] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    C = np.full(n, 10.0)
    gamma = 0.5
    X = as_chunk(A, y)
    kernel = Kernel(RBF, gamma)
    runs = {h: smo.solve_binary(X, y, C, kernel, TrainParams(solver="smo", gamma=gamma, eps=1e-3, shrinking=h,
                                                              working_set=2))
            for h in (0, 1)}
    K = rbf(A, A, gamma)
    for alpha, rho, res in runs.values():
        assert res.converged and res.n_iter > 3000          # long enough to shrink
        G = y * (K @ (y * alpha)) - 1.0
        up = np.where(y > 0, alpha < C, alpha > 0)
        low = np.where(y > 0, alpha > 0, alpha < C)
        assert (-y * G)[up].max() + (y * G)[low].max() < 1e-3 + 1e-5
        assert res.info["obj"] == pytest.approx(0.5 * alpha @ (G - 1.0), rel=1e-5)
    assert runs[1][2].info["obj"] == pytest.approx(runs[0][2].info["obj"], rel=1e-5)
    # shrunk to at most half the rows, the steps ran on contiguous copies: still LIBSVM's steps
    assert runs[1][2].info["compact_epochs"] > 0 and runs[0][2].info["compact_epochs"] == 0
    assert runs[1][2].n_iter == runs[0][2].n_iter


@pytest.mark.parametrize("kernel", [Kernel(RBF, 0.3), Kernel(1, 0.2, 2, 1.0), Kernel(0)])
def test_partial_row_against_numpy(kernel):
    """K(x_r, x_t) for a list of rows t, both twins, against a dense NumPy kernel."""
    from svmtrain.mercer.cache import KernelCache
    from svmtrain.solvers.kernel import _smo_kernels as K
    rng = np.random.default_rng(3)
    A = rng.normal(size=(300, 7)) * (rng.random((300, 7)) < 0.6)
    X = as_chunk(A, np.ones(300))
    kern = kernel.resolved(7)
    cache = KernelCache(X, kern, 1, n_features=7)
    code, gamma, degree, coef0, squarings = cache.kparams
    rows = rng.permutation(300)[:120].astype(np.int64)
    dots = A @ A[17]
    sq = (A * A).sum(1)
    if kern.code == RBF:
        want = np.exp(-kern.gamma * (sq + sq[17] - 2 * dots))
    elif kern.code == 1:
        want = (kern.gamma * dots + kern.coef0) ** kern.degree
    else:
        want = dots
    for f in (K.partial_row, K.partial_row_serial):
        out = np.zeros(150, np.float32)
        dense = np.zeros(7)
        f(17, rows, 120, out, dense, X.indptr, X.indices, X.values, cache.sq, code, gamma, degree, coef0,
          squarings)
        np.testing.assert_allclose(out[:120], want[rows], rtol=1e-6, atol=1e-6)
        assert not out[120:].any() and not dense.any()


def libsvm_reference(X, d, options):
    """(dual objective, rho, SV row indices, coef y alpha) of libsvm-official on X."""
    A = csr(X, d)
    m = svmutil.svm_train(X.labels.tolist(), A, options + " -q")
    sv = np.array(m.get_sv_indices()) - 1
    coef = np.array(m.get_sv_coef())
    return m, sv, coef


def dual_of(K, coef):
    """1/2 c'Kc - sum |c| for coefficients c = y alpha."""
    return 0.5 * coef @ K @ coef - np.abs(coef).sum()


@pytest.mark.parametrize("C, gamma", [(1.0, 1 / 13), (10.0, 0.5), (100.0, 0.01)])
def test_heart_scale_matches_libsvm(C, gamma):
    X = read_libsvm(bundled("heart_scale.xz"))
    d = 13
    m, sv, coef = libsvm_reference(X, d, f"-c {C} -g {gamma} -h 0")
    ours = svmtrain.train(X, solver="smo", C=C, gamma=gamma)
    D = dense_of(X, d)
    Kf = rbf(D, D, gamma)
    theirs_c = np.zeros(X.n_rows)
    theirs_c[sv] = coef[:, 0]
    sign = 1.0 if m.get_labels()[0] == ours.labels[0] else -1.0
    ours_c = np.zeros(X.n_rows)
    ours_rows = [int(np.flatnonzero((D == dense_of(ours.SV, d)[s]).all(1))[0]) for s in range(ours.n_sv)]
    ours_c[ours_rows] = ours.coef[:, 0]
    f_theirs, f_ours = dual_of(Kf, sign * theirs_c), dual_of(Kf, ours_c)
    assert f_ours == pytest.approx(f_theirs, rel=1e-4)
    assert abs(ours.n_sv - len(sv)) <= max(1, 0.01 * len(sv))
    assert -ours.b[0] == pytest.approx(sign * m.rho[0], rel=1e-3, abs=1e-3)
    p, _, _ = svmutil.svm_predict(X.labels.tolist(), csr(X, d), m, "-q")
    assert np.mean(np.array(p) == ours.predict(X)) >= 0.995
    assert ours.fit_results[0].info["obj"] == pytest.approx(f_ours, rel=1e-5)    # G sums float32 kernel rows


def test_linear_and_polynomial_kernels_and_weights():
    X = read_libsvm(bundled("heart_scale.xz"))
    d = 13
    for opts, kw in (("-t 0 -c 0.5", dict(kernel_type=0, C=0.5)),
                     ("-t 1 -d 2 -g 0.1 -r 1 -c 1", dict(kernel_type=1, degree=2, gamma=0.1, coef0=1.0, C=1.0)),
                     ("-c 2 -g 0.1 -w1 3", dict(C=2.0, gamma=0.1, class_weights={1.0: 3.0}))):
        m, sv, coef = libsvm_reference(X, d, opts + " -h 0")
        ours = svmtrain.train(X, solver="smo", **kw)
        assert abs(ours.n_sv - len(sv)) <= max(1, 0.01 * len(sv)), opts
        p, _, _ = svmutil.svm_predict(X.labels.tolist(), csr(X, d), m, "-q")
        assert np.mean(np.array(p) == ours.predict(X)) >= 0.99, opts


def test_one_vs_one_matches_libsvm():
    X, y = multiclass_data(n=300, d=4, k=4, seed=8)
    data = as_chunk(X, y.astype(np.float64))
    m = svmutil.svm_train(y.astype(float).tolist(), X.tolist(), "-c 1 -g 0.25 -h 0 -q")
    ours = svmtrain.train(data, solver="smo", C=1.0, gamma=0.25)
    assert ours.decision == "ovo" and ours.coef.shape[1] == 6
    assert abs(ours.n_sv - m.get_nr_sv()) <= max(1, 0.01 * m.get_nr_sv())
    p, _, _ = svmutil.svm_predict(y.astype(float).tolist(), X.tolist(), m, "-q")
    assert np.mean(np.array(p) == ours.predict(data)) >= 0.99


def test_refusals():
    X, y = multiclass_data(n=30, d=3, k=2)
    with pytest.raises(ParameterError, match="-B"):
        svmtrain.train(X, y.astype(np.float64), solver="smo", bias=1.0)


@needs(LIBSVM_PREDICT, package="libsvm-tools")
def test_libsvm_model_file_goes_to_libsvm_predict(tmp_path):
    train = tmp_path / "heart"
    X = read_libsvm(bundled("heart_scale.xz"))
    train.write_bytes(lzma.open(bundled("heart_scale.xz")).read())
    res = CliRunner().invoke(train_main, ["-s", "smo", "-c", "4", "-g", "0.2", "--model-format", "libsvm", "-q",
                                          str(train), str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    subprocess.run([LIBSVM_PREDICT, str(train), str(tmp_path / "m"), str(tmp_path / "out")], check=True,
                   capture_output=True)
    theirs = np.loadtxt(tmp_path / "out")
    ours = svmtrain.predict(str(train), svmtrain.load_model(tmp_path / "m"))
    np.testing.assert_array_equal(ours, theirs)
    assert X.n_rows == len(theirs)


@needs("/usr/bin/svm-train", package="libsvm-tools")
@pytest.mark.parametrize("h", ["0", "1"])
def test_command_line_prints_libsvms_iterations_and_objective(tmp_path, h):
    """`svm-train -s smo ... -h H` against LIBSVM's `svm-train ... -h H` on
    heart_scale: the same number of SMO steps and the same obj and rho (the
    working sets are LIBSVM's, shrinking included)."""
    import re
    train = tmp_path / "heart"
    train.write_bytes(lzma.open(bundled("heart_scale.xz")).read())
    flags = ["-c", "10", "-g", "0.5", "-h", h]
    theirs = subprocess.run(["/usr/bin/svm-train", *flags, str(train), str(tmp_path / "theirs")],
                            check=True, capture_output=True, text=True).stdout
    res = CliRunner().invoke(train_main, ["-s", "smo", *flags, str(train), str(tmp_path / "ours")])
    assert res.exit_code == 0, res.output

    def numbers(text):
        steps = re.search(r"#iter = (\d+)", text).group(1)
        obj, rho = re.search(r"obj = (-?[\d.]+), rho = (-?[\d.]+)", text).groups()
        return int(steps), float(obj), float(rho)
    ours_steps, ours_obj, ours_rho = numbers(res.output)
    their_steps, their_obj, their_rho = numbers(theirs)
    assert ours_steps == their_steps
    assert ours_obj == pytest.approx(their_obj, rel=1e-6)
    assert ours_rho == pytest.approx(their_rho, abs=2e-6)


def test_solve_binary_alone_in_a_fresh_process_on_parallel_sized_data():
    """The parallel row kernel is reached from inside the compiled loop:
    solve_binary must start numba's threading layer itself (without it,
    a process that had run no parallel kernel crashed)."""
    import sys
    code = (
        "import numpy as np\n"
        "from svmtrain.data.arrays import as_chunk\n"
        "from svmtrain.mercer.functions import RBF, Kernel\n"
        "from svmtrain.params import TrainParams\n"
        "from svmtrain.solvers.kernel import smo\n"
        "from svmtrain._numba import options as o\n"
        "rng = np.random.default_rng(0)\n"
        "A = rng.normal(size=(3000, 30)); y = np.where(A[:, 0] > 0, 1.0, -1.0)\n"
        "X = as_chunk(A, y); assert X.nnz >= o.PARALLEL_MIN_NNZ\n"
        "a, rho, res = smo.solve_binary(X, y, np.ones(3000), Kernel(RBF, 0.05).resolved(30),\n"
        "                               TrainParams(solver='smo', eps=1e-3))\n"
        "print(res.converged)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "True"


def test_regression_and_one_class_match_libsvm():
    """epsilon-SVR (LIBSVM -s 3) and the one-class SVM (-s 2), with and
    without shrinking: LIBSVM's support vectors, rho and decision values (to
    1e-6 with the RBF kernel, where the float32 kernel rows take LIBSVM's
    steps; within the stopping tolerance -e 0.001 with the polynomial one,
    whose larger values round differently)."""
    X = read_libsvm(bundled("heart_scale.xz"))
    A = csr(X, 13)
    for options, kw in (("-s 3 -c 1 -g 0.5 -p 0.1", dict(task="r", C=1.0, gamma=0.5, epsilon=0.1)),
                        ("-s 3 -c 10 -t 1 -d 2 -g 0.1 -r 1 -p 0.5", dict(task="r", C=10.0, kernel_type=1, degree=2,
                                                                      gamma=0.1, coef0=1.0, epsilon=0.5)),
                        ("-s 2 -n 0.3 -g 0.2", dict(task="o", nu=0.3, gamma=0.2)),
                        ("-s 2 -n 0.05 -g 1", dict(task="o", nu=0.05, gamma=1.0))):
        for h in (0, 1):
            m = svmutil.svm_train(X.labels.tolist(), A, options + f" -h {h} -q")
            ours = svmtrain.train(X, solver="smo", shrinking=h, **kw)
            res = ours.fit_results[0]
            assert res.converged
            assert ours.n_sv == m.get_nr_sv(), options
            tol = 1e-3 if "-t 1" in options else 1e-6
            assert -ours.b[0] == pytest.approx(m.rho[0], abs=tol), options
            _, _, dec = svmutil.svm_predict(X.labels.tolist(), A, m, "-q")
            np.testing.assert_allclose(ours.decision_function(X)[:, 0], np.array(dec)[:, 0], atol=5 * tol)
            if kw["task"] == "o":
                p, _, _ = svmutil.svm_predict(X.labels.tolist(), A, m, "-q")
                assert np.array_equal(ours.predict(X), np.array(p))


def test_one_class_start_is_libsvms():
    np.testing.assert_array_equal(smo.one_class_start(5, 0.5), [1.0, 1.0, 0.5, 0.0, 0.0])
    assert smo.one_class_start(7, 0.3).sum() == pytest.approx(2.1)
    np.testing.assert_array_equal(smo.one_class_start(4, 1.0), [1.0, 1.0, 1.0, 1.0])


@needs("/usr/bin/svm-train", package="libsvm-tools")
@pytest.mark.parametrize("flags", ["-s 3 -c 1 -g 0.5 -p 0.2", "-s 2 -n 0.2 -g 0.3", "-s 3 -t 0 -c 0.5 -h 0"])
def test_libsvm_regression_and_one_class_lines(tmp_path, flags):
    """LIBSVM's -s 3 and -s 2 lines train -s smo --task r|o: the printed
    steps (to one), obj and rho of LIBSVM's svm-train, and a model file
    LIBSVM's svm-predict reads to the same predictions."""
    import re
    train = tmp_path / "heart"
    train.write_bytes(lzma.open(bundled("heart_scale.xz")).read())
    theirs = subprocess.run(["/usr/bin/svm-train", *flags.split(), str(train), str(tmp_path / "theirs")],
                            check=True, capture_output=True, text=True).stdout
    res = CliRunner().invoke(train_main, [*flags.split(), "--verbose", "--model-format", "libsvm",
                                          str(train), str(tmp_path / "ours")])
    assert res.exit_code == 0, res.output

    def numbers(text):
        steps = re.search(r"#iter = (\d+)", text).group(1)
        obj, rho = re.search(r"obj = (-?[\d.]+), rho = (-?[\d.]+)", text).groups()
        return int(steps), float(obj), float(rho)
    ours_n, theirs_n = numbers(res.output), numbers(theirs)
    assert abs(ours_n[0] - theirs_n[0]) <= max(1, 0.01 * theirs_n[0])    # kernel values round apart: a step
    assert ours_n[1] == pytest.approx(theirs_n[1], rel=1e-6)
    assert ours_n[2] == pytest.approx(theirs_n[2], abs=2e-6)
    for name in ("ours", "theirs"):
        subprocess.run([LIBSVM_PREDICT, str(train), str(tmp_path / name), str(tmp_path / f"{name}.out")],
                       check=True, capture_output=True)
    np.testing.assert_allclose(np.loadtxt(tmp_path / "ours.out"), np.loadtxt(tmp_path / "theirs.out"),
                               rtol=1e-5, atol=1e-6)
