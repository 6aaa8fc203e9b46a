"""nu-SVC and nu-SVR (``-s smo --nu``, LIBSVM's -s 1 and -s 4): the
Solver_NU kernels against their NumPy twins (tests/naive_nu.py), the
solution against the KKT conditions of the nu dual and against a
general-purpose QP solver (scipy), against LIBSVM (libsvm-official in
process; /usr/bin/svm-train and svm-predict where installed), LIBSVM's
command lines, the parameter checks and the model files both ways."""
import lzma
import subprocess

import numpy as np
import pytest
from click.testing import CliRunner

import svmtrain
from svmtrain.cli.foreign import translate_train
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main
from svmtrain.data.arrays import as_chunk
from svmtrain.errors import ParameterError
from svmtrain.io.model_io import load_model, save_model
from svmtrain.io.reader import read_libsvm
from svmtrain.mercer.functions import RBF, Kernel
from svmtrain.params import TrainParams
from svmtrain.solvers.kernel import _smo_nu_kernels as NK
from svmtrain.solvers.kernel import smo_nu

import naive_nu
from conftest import bundled, needs
from test_crammer_singer import libsvm_text, multiclass_data

LIBSVM_TRAIN, LIBSVM_PREDICT = "/usr/bin/svm-train", "/usr/bin/svm-predict"
peer = needs(LIBSVM_TRAIN, LIBSVM_PREDICT, package="libsvm-tools")


def rbf(A, B, gamma):
    d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2 * A @ B.T
    return np.exp(-gamma * np.maximum(d2, 0.0))


def toy(seed, n=60, d=5):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, d))
    y = np.where(A[:, 0] + 0.8 * rng.normal(size=n) > 0, 1.0, -1.0)
    return A, y


def random_state(rng, n, nbound=0.3):
    """A dual state with alphas at 0, at C and free, and a gradient."""
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    C = rng.uniform(0.5, 2.0, n)
    kind = rng.integers(0, 3, n)
    alpha = np.where(kind == 0, 0.0, np.where(kind == 1, C, C * rng.uniform(0.1, 0.9, n)))
    G = np.round(rng.normal(size=n), 1)         # ties, to test the last-index rule
    return y, C, alpha, G


# --- the kernels against their NumPy twins --------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_selection_shrinking_and_rho_match_the_numpy_twin(seed):
    rng = np.random.default_rng(seed)
    n, rows = 40, 25
    y, C, alpha, G = random_state(rng, n)
    index = rng.integers(0, rows, n).astype(np.int64)
    A = rng.normal(size=(rows, 3))
    K = rbf(A, A, 0.4)
    QD = np.diag(K)[index]
    act = rng.permutation(n).astype(np.int64)
    m = n - seed
    ip, gp, i_n, gn = NK.select_i(y, C, alpha, G, act, m)
    Kip = K[index[ip]] if ip >= 0 else K[0]
    Kin = K[index[i_n]] if i_n >= 0 else K[0]
    j, gp2, gn2 = NK.select_j(y, C, alpha, G, QD, act, m, ip, gp, Kip, i_n, gn, Kin, index)
    assert (ip, gp, i_n, gn, j, gp2, gn2) == naive_nu.select(y, C, alpha, G, QD, act, m, K, index)
    g = NK.shrink_maxima(y, C, alpha, G, act, m)
    assert g == naive_nu.shrink_maxima(y, C, alpha, G, act, m)
    drop = naive_nu.be_shrunk(y, C, alpha, G, *g)
    kept = act.copy()
    m2 = NK.shrink(y, C, alpha, G, kept, m, *g)
    assert sorted(kept[:m2]) == sorted(t for t in act[:m] if not drop[t])
    assert sorted(kept) == list(range(n))
    assert NK.nu_rho(y, C, alpha, G) == pytest.approx(naive_nu.nu_rho(y, C, alpha, G), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_solver_loop_follows_the_numpy_twin(seed):
    """nu-SVC without shrinking: the same working sets and updates as the
    twin over the kernel rounded to float32 (as the cache keeps it), so the
    same steps and alphas; with shrinking the same optimum."""
    A, y = toy(seed)
    gamma, nu, n = 0.3, 0.4, len(y)
    K32 = rbf(A, A, gamma).astype(np.float32).astype(np.float64)
    start = smo_nu.nu_svc_start(y, nu)
    alpha_t, G_t, steps_t = naive_nu.solve(K32, y, np.ones(n), np.zeros(n), start, np.arange(n), 1e-3)
    X = as_chunk(A, y)
    for h in (0, 1):
        params = TrainParams(solver="smo", gamma=gamma, eps=1e-3, shrinking=h, nu=nu)
        alpha, rho, r, res = smo_nu.solve_nu(X, y, np.ones(n), np.zeros(n), start, Kernel(RBF, gamma), params)
        assert res.converged
        if h == 0:
            assert res.n_iter == steps_t
            np.testing.assert_allclose(alpha, alpha_t, rtol=1e-9, atol=1e-12)
            assert (rho, r) == pytest.approx(naive_nu.nu_rho(y, np.ones(n), alpha_t, G_t), rel=1e-9)
        assert alpha[y > 0].sum() == pytest.approx(nu * n / 2) and alpha[y < 0].sum() == pytest.approx(nu * n / 2)
        assert res.info["obj"] == pytest.approx(0.5 * alpha_t @ (y * (K32 @ (y * alpha_t))), rel=1e-5)


def test_starts_are_libsvms():
    """solve_nu_svc's and solve_nu_svr's loops, in closed form."""
    y = np.array([1, -1, 1, 1, -1, 1, -1, -1, 1.0])
    nu = 0.5                                            # nu l / 2 = 2.25 per sign
    np.testing.assert_array_equal(smo_nu.nu_svc_start(y, nu), [1, 1, 1, 0.25, 1, 0, 0.25, 0, 0])
    np.testing.assert_allclose(smo_nu.nu_svr_start(5, 0.5, 2.0), [2.0, 0.5, 0, 0, 0])   # C nu l / 2 = 2.5


# --- the solution: KKT conditions and a general QP solver ------------------------

def nu_kkt_gap(Q, p, y, C, alpha):
    """max over the two signs of the maximal violation of the nu dual's KKT conditions."""
    G = Q @ alpha + p
    gaps = []
    for s in (1.0, -1.0):
        side = y == s
        up = side & np.where(y > 0, alpha < C, alpha > 0)
        low = side & np.where(y > 0, alpha > 0, alpha < C)
        gaps.append((-y * G)[up].max() - (-y * G)[low].min())
    return max(gaps)


def test_nu_svc_meets_the_kkt_conditions_of_its_dual():
    X = read_libsvm(bundled("heart_scale.xz"))
    D = np.zeros((X.n_rows, 13))
    for r in range(X.n_rows):
        D[r, X.indices[X.indptr[r]:X.indptr[r + 1]]] = X.values[X.indptr[r]:X.indptr[r + 1]]
    y = np.where(X.labels > 0, 1.0, -1.0)
    gamma, nu, n = 0.1, 0.35, X.n_rows
    coef, rho, res = smo_nu.solve_nu_svc(X, y, nu, Kernel(RBF, gamma), TrainParams(solver="smo", nu=nu, eps=1e-3),
                                          None, 13)
    r = 1.0 / res.info["C"]
    alpha = y * coef * r                                # back to the dual's variables
    assert np.all(alpha >= 0) and np.all(alpha <= 1.0 + 1e-15)
    assert alpha[y > 0].sum() == pytest.approx(nu * n / 2) and alpha[y < 0].sum() == pytest.approx(nu * n / 2)
    Q = y[:, None] * y[None, :] * rbf(D, D, gamma)
    assert nu_kkt_gap(Q, np.zeros(n), y, np.ones(n), alpha) < 1e-3 + 1e-4     # -e, and float32 kernel rows
    assert res.info["obj"] * r * r == pytest.approx(0.5 * alpha @ Q @ alpha, rel=1e-5)
    # nu bounds the fraction of margin errors from above and of support vectors from below
    assert res.info["n_bsv"] / n <= nu <= res.info["n_sv"] / n


def test_nu_svr_matches_a_general_qp_solver():
    """The nu-SVR dual of a small problem by scipy's SLSQP: the same objective."""
    from scipy.optimize import minimize
    rng = np.random.default_rng(3)
    n, gamma, nu, C = 18, 0.5, 0.4, 2.0
    A = rng.normal(size=(n, 2))
    z = np.sin(A[:, 0]) + 0.1 * rng.normal(size=n)
    K = rbf(A, A, gamma)
    coef, rho, res = smo_nu.solve_nu_svr(as_chunk(A, z), z, nu, C, Kernel(RBF, gamma),
                                         TrainParams(solver="smo", task="r", nu=nu, eps=1e-6), None, 2)
    ours = 0.5 * coef @ K @ coef - z @ coef

    def f(v):
        c = v[:n] - v[n:]
        return 0.5 * c @ K @ c - z @ c
    cons = [{"type": "eq", "fun": lambda v: v[:n].sum() - v[n:].sum()},
            {"type": "eq", "fun": lambda v: v.sum() - C * nu * n}]
    best = minimize(f, np.full(2 * n, C * nu / 2), method="SLSQP", bounds=[(0, C)] * (2 * n), constraints=cons,
                    options={"ftol": 1e-12, "maxiter": 500})
    assert best.success
    assert ours == pytest.approx(best.fun, rel=1e-5, abs=1e-6)
    assert ours <= best.fun + 1e-7
    assert res.info["obj"] == pytest.approx(ours, rel=1e-5)


# --- against LIBSVM -------------------------------------------------------------

def libsvm_model(labels, rows, options):
    from libsvm import svmutil
    return svmutil.svm_train(list(labels), rows, options + " -q")


def libsvm_predict(m, data, tmp_path):
    """LIBSVM's model ``m`` predicting ``data``, through its model file and
    our reader (libsvm-official's svm_predict crashes on nu_svc models of
    three or more classes)."""
    from libsvm import svmutil
    from svmtrain.io.libsvm_format import read_libsvm_model
    svmutil.svm_save_model(str(tmp_path / "libsvm.model"), m)
    return read_libsvm_model(tmp_path / "libsvm.model").predict(data)


@pytest.mark.parametrize("nu, gamma, h", [(0.5, 1 / 13, 1), (0.2, 0.5, 0), (0.8, 0.05, 1)])
def test_nu_svc_matches_libsvm(nu, gamma, h, tmp_path):
    from reference import csr
    X = read_libsvm(bundled("heart_scale.xz"))
    m = libsvm_model(X.labels, csr(X, 13), f"-s 1 -n {nu} -g {gamma} -h {h}")
    ours = svmtrain.train(X, solver="smo", nu=nu, gamma=gamma, shrinking=h)
    assert ours.n_sv == m.get_nr_sv()
    assert -ours.b[0] == pytest.approx(m.rho[0], rel=1e-5, abs=1e-6)
    assert np.mean(libsvm_predict(m, X, tmp_path) == ours.predict(X)) >= 0.995


def test_nu_svc_one_vs_one_matches_libsvm(tmp_path):
    A, labels = multiclass_data(n=300, d=4, k=4, seed=8)
    data = as_chunk(A, labels.astype(np.float64))
    m = libsvm_model(labels.astype(float), A.tolist(), "-s 1 -n 0.3 -g 0.25")
    ours = svmtrain.train(data, solver="smo", nu=0.3, gamma=0.25)
    assert ours.decision == "ovo" and ours.coef.shape[1] == 6
    assert abs(ours.n_sv - m.get_nr_sv()) <= max(1, 0.01 * m.get_nr_sv())
    np.testing.assert_allclose(-ours.b, m.rho[:6], rtol=1e-4, atol=1e-5)
    assert np.mean(libsvm_predict(m, data, tmp_path) == ours.predict(data)) >= 0.99


@pytest.mark.parametrize("options, kw", [("-n 0.5", {}), ("-n 0.2 -c 10 -g 0.5", dict(C=10.0, gamma=0.5))])
def test_nu_svr_matches_libsvm(options, kw, tmp_path):
    from reference import csr
    path = tmp_path / "concrete"
    path.write_bytes(lzma.decompress(_concrete().read_bytes()))
    X = read_libsvm(path)
    m = libsvm_model(X.labels, csr(X, 8), "-s 4 " + options)
    nu = float(options.split()[1])
    ours = svmtrain.train(X, solver="smo", task="r", nu=nu, **kw)
    mse_theirs = np.mean((libsvm_predict(m, X, tmp_path) - X.labels) ** 2)
    mse_ours = np.mean((ours.predict(X) - X.labels) ** 2)
    assert mse_ours == pytest.approx(mse_theirs, rel=1e-4)
    assert abs(ours.n_sv - m.get_nr_sv()) <= max(1, 0.01 * m.get_nr_sv())


def _concrete():
    from conftest import shared
    return shared("concrete_scale.xz")


# --- parameters, command lines, model files -----------------------------------

def test_refusals_and_feasibility():
    X = read_libsvm(bundled("heart_scale.xz"))
    for kw, words in ((dict(C=2.0), "-c does not apply to nu-SVC"), (dict(lam=0.1), "-l does not apply"),
                      (dict(class_weights={1.0: 2.0}), "-w does not apply"), (dict(nu=1.5), "(0, 1]"),
                      (dict(working_set=16), "pair steps")):
        with pytest.raises(ParameterError, match=words.replace("(", r"\(").replace("]", r"\]")):
            svmtrain.train(X, **{"solver": "smo", "nu": 0.5, **kw})
    # 120 of one class, 150 of the other: nu (n1 + n2) / 2 <= min(n1, n2) means nu <= 240 / 270
    counts = sorted(np.unique(X.labels, return_counts=True)[1])
    limit = 2 * counts[0] / sum(counts)
    with pytest.raises(ParameterError, match="infeasible"):
        svmtrain.train(X, solver="smo", nu=limit + 0.01)
    assert svmtrain.train(X, solver="smo", nu=limit - 0.01).n_sv > 0
    # nu-SVR takes -c (its bound), and nu up to 1
    assert svmtrain.train(X, solver="smo", task="r", nu=1.0, C=0.5).n_sv > 0


@pytest.mark.parametrize("line, want, absent", [
    ("-s 1 -n 0.3 -t 2 f m", ["-s", "smo", "--task", "c", "--nu", "0.3"], ["-c", "-n"]),
    ("-s 1 -t 2 -c 10 f m", ["-s", "smo", "--task", "c", "--nu", "0.5"], ["-c"]),         # LIBSVM's default nu
    ("-s 4 -n 0.4 -c 10 -g 0.5 f m", ["-s", "smo", "--task", "r", "--nu", "0.4", "-c", "10"], ["-n"]),
    ("-s 4 -h 0 f m", ["-s", "smo", "--task", "r", "--nu", "0.5"], []),                     # LIBSVM by -h alone
    ("--grid -s 1 f", ["-s", "smo", "--task", "c", "--nu", "0.5"], []),                       # --grid: LIBSVM's
    ("-s 1 -n 0.5 -B 1 f m", ["-s", "dcd"], ["--nu"]),                                       # LIBLINEAR's -s 1
])
def test_libsvm_lines_translate(line, want, absent):
    out = translate_train(line.split(), train_main)
    pairs = list(zip(out, out[1:]))
    for a, b in zip(want[::2], want[1::2]):
        assert (a, b) in pairs, (line, out)
    for flag in absent:
        assert flag not in out, (line, out)


@pytest.mark.parametrize("line", ["-s 1 -n 0.5 f m", "-s 4 -n 0.5 -c 10 f m"])
def test_lines_that_could_be_liblinears_are_refused(line):
    with pytest.raises(ParameterError, match="LIBLINEAR's -s"):
        translate_train(line.split(), train_main)


def test_grid_needs_log2c_null(tmp_path, monkeypatch):
    """Refused before anything is written (grid.py's .out file goes to the working directory)."""
    src = tmp_path / "h"
    src.write_bytes(lzma.decompress(bundled("heart_scale.xz").read_bytes()))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    r = CliRunner().invoke(train_main, ["--grid", "-v", "3", "-s", "smo", "--nu", "0.5", str(src), str(tmp_path / "m")])
    assert r.exit_code == 2 and "-log2c null" in r.output
    assert list(work.iterdir()) == [] and not (tmp_path / "m").exists()


def test_model_files_round_trip(tmp_path):
    X = read_libsvm(bundled("heart_scale.xz"))
    model = svmtrain.train(X, solver="smo", nu=0.4, gamma=0.2)
    save_model(model, tmp_path / "a.model")
    back = load_model(tmp_path / "a.model")
    assert dict(back.header)["nu"] == "0.4" and dict(back.header)["solver"] == "smo"
    np.testing.assert_array_equal(back.decision_function(X), model.decision_function(X))
    from svmtrain.io.libsvm_format import read_libsvm_model, write_libsvm_model
    for m, name in ((model, "b.model"), (back, "c.model")):
        write_libsvm_model(m, tmp_path / name)
        assert (tmp_path / name).read_text().startswith("svm_type nu_svc\n")
    again = read_libsvm_model(tmp_path / "b.model")
    np.testing.assert_allclose(again.decision_function(X), model.decision_function(X), rtol=1e-12, atol=1e-12)
    write_libsvm_model(again, tmp_path / "d.model")             # a LIBSVM nu_svc model stays nu_svc
    assert (tmp_path / "d.model").read_text() == (tmp_path / "b.model").read_text()
    reg = svmtrain.train(X, solver="smo", task="r", nu=0.4)
    write_libsvm_model(reg, tmp_path / "r.model")
    assert (tmp_path / "r.model").read_text().startswith("svm_type nu_svr\n")
    np.testing.assert_allclose(read_libsvm_model(tmp_path / "r.model").predict(X), reg.predict(X), rtol=1e-12)
    plain = svmtrain.train(X, solver="smo")                     # C-SVC stays c_svc
    write_libsvm_model(plain, tmp_path / "p.model")
    assert (tmp_path / "p.model").read_text().startswith("svm_type c_svc\n")


@peer
@pytest.mark.parametrize("libsvm_line, data", [
    ("-s 1 -n 0.5 -g 0.5", "heart"), ("-s 1 -n 0.3 -g 1", "multi"), ("-s 4 -n 0.5 -t 2", "concrete"),
    ("-s 4 -n 0.3 -c 10 -g 0.5", "concrete")])
def test_libsvm_command_lines_against_svm_train(libsvm_line, data, tmp_path):
    """LIBSVM's line through our svm-train and through LIBSVM's: the same
    predictions, support vectors and LIBSVM's printed lines; our model in
    LIBSVM's format predicted by LIBSVM's svm-predict, LIBSVM's by ours."""
    src = tmp_path / "train"
    if data == "heart":
        src.write_bytes(lzma.decompress(bundled("heart_scale.xz").read_bytes()))
    elif data == "concrete":
        src.write_bytes(lzma.decompress(_concrete().read_bytes()))
    else:
        A, labels = multiclass_data(n=300, d=4, k=3, seed=2)
        src.write_text(libsvm_text(A, labels))
    theirs = subprocess.run([LIBSVM_TRAIN, *libsvm_line.split(), str(src), str(tmp_path / "theirs")],
                            capture_output=True, text=True, check=True).stdout
    r = CliRunner().invoke(train_main, [*libsvm_line.split(), "--verbose", str(src), str(tmp_path / "ours")])
    assert r.exit_code == 0, r.output
    first = "C = " if "-s 1" in libsvm_line else "epsilon = "        # LIBSVM's 1/r, -r of each problem

    def values(text):
        return [float(line.split()[-1]) for line in text.splitlines() if line.startswith(first)]
    assert len(values(r.output)) == len(values(theirs)) >= 1
    np.testing.assert_allclose(values(r.output), values(theirs), rtol=1e-4)
    out = {}
    for who, model in (("ours", "ours"), ("cross", "theirs")):       # our svm-predict on either model
        target = tmp_path / f"{who}.out"
        assert CliRunner().invoke(predict_main, [str(src), str(tmp_path / model), str(target)]).exit_code == 0
        out[who] = np.loadtxt(target)
    subprocess.run([LIBSVM_PREDICT, str(src), str(tmp_path / "theirs"), str(tmp_path / "peer.out")],
                   capture_output=True, check=True)
    out["peer"] = np.loadtxt(tmp_path / "peer.out")
    np.testing.assert_allclose(out["cross"], out["peer"], rtol=1e-9)      # our reader of LIBSVM's nu model
    if data == "concrete":
        mse = {k: np.mean((v - np.loadtxt(src, usecols=0)) ** 2) for k, v in out.items()}
        assert mse["ours"] == pytest.approx(mse["peer"], rel=1e-4)
    else:
        assert np.mean(out["ours"] == out["peer"]) >= 0.99
    if data != "multi":         # LIBSVM's format holds two-class or regression models of ours
        r = CliRunner().invoke(train_main, [*libsvm_line.split(), "-q", "--model-format", "libsvm", str(src),
                                            str(tmp_path / "ours.libsvm")])
        assert r.exit_code == 0, r.output
        subprocess.run([LIBSVM_PREDICT, str(src), str(tmp_path / "ours.libsvm"), str(tmp_path / "x.out")],
                       capture_output=True, check=True)
        np.testing.assert_allclose(np.loadtxt(tmp_path / "x.out"), out["ours"], rtol=1e-9)
        sv = [int(line.split()[1]) for line in open(tmp_path / "theirs") if line.startswith("total_sv")]
        ours_sv = [int(line.split()[1]) for line in open(tmp_path / "ours.libsvm") if line.startswith("total_sv")]
        assert abs(ours_sv[0] - sv[0]) <= max(1, 0.01 * sv[0])


def test_cross_validation_and_the_estimators(tmp_path):
    """-v trains each fold as nu-SVC / nu-SVR (the printed rate and MSE);
    the estimators take --nu through ``options`` (nu-SVC with C=None)."""
    from svmtrain.sklearn import SVMClassifier, SVMRegressor
    src = tmp_path / "h"
    src.write_bytes(lzma.decompress(bundled("heart_scale.xz").read_bytes()))
    r = CliRunner().invoke(train_main, ["-s", "1", "-n", "0.5", "-t", "2", "-v", "5", str(src)])
    assert r.exit_code == 0 and 75.0 < float(r.output.split("=")[-1].strip().rstrip("%")) < 90.0, r.output
    r = CliRunner().invoke(train_main, ["-s", "4", "-n", "0.5", "-t", "2", "-v", "5", str(src)])
    assert r.exit_code == 0 and "Mean squared error" in r.output, r.output
    rng = np.random.default_rng(0)
    A = rng.normal(size=(120, 3))
    clf = SVMClassifier(solver="smo", kernel="rbf", C=None, options={"nu": 0.3}).fit(A, (A[:, 0] > 0).astype(int))
    assert clf.score(A, (A[:, 0] > 0).astype(int)) > 0.9 and clf.model_.n_sv >= 0.3 * 120
    z = A[:, 0] + 0.1 * rng.normal(size=120)
    reg = SVMRegressor(solver="smo", kernel="rbf", C=2.0, options={"nu": 0.3}).fit(A, z)
    assert reg.score(A, z) > 0.8 and reg.model_.n_sv >= 0.3 * 120


@pytest.mark.parametrize("task", ["c", "r"])
def test_shrinking_reaches_the_same_optimum(task):
    """LIBSVM's Solver_NU shrinking (every 1000 steps; the gradients rebuilt
    at 10 eps and before the last check) against none: the same objective,
    each sign's violation below eps on every variable."""
    rng = np.random.default_rng(5)
    n, gamma, nu = 1500, 0.5, 0.3
    A = rng.normal(size=(n, 6))
    z = A[:, 0] * A[:, 1] + 0.3 * rng.normal(size=n)
    kernel = Kernel(RBF, gamma)
    runs = {}
    for h in (0, 1):
        params = TrainParams(solver="smo", task=task, nu=nu, gamma=gamma, eps=1e-3, shrinking=h)
        if task == "c":
            y = np.where(z > 0, 1.0, -1.0)
            C, p, index, start = np.ones(n), np.zeros(n), None, smo_nu.nu_svc_start(y, nu)
        else:
            y = np.concatenate([np.ones(n), -np.ones(n)])
            C, p, index = np.full(2 * n, 10.0), np.concatenate([-z, z]), np.r_[np.arange(n), np.arange(n)]
            start = np.tile(smo_nu.nu_svr_start(n, nu, 10.0), 2)
        runs[h] = smo_nu.solve_nu(as_chunk(A, z), y, C, p, start, kernel, params, index=index)
    K = rbf(A, A, gamma)
    idx = np.arange(len(y)) % n
    Q = y[:, None] * y[None, :] * K[np.ix_(idx, idx)]
    for alpha, rho, r, res in runs.values():
        assert res.converged and res.n_iter > 3000          # long enough to shrink
        assert nu_kkt_gap(Q, p, y, C, alpha) < 1e-3 + 1e-4
    assert runs[1][3].info["obj"] == pytest.approx(runs[0][3].info["obj"], rel=1e-6)
    assert runs[1][2] == pytest.approx(runs[0][2], rel=1e-3, abs=1e-3)
