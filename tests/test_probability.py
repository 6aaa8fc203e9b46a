"""Probabilities: Platt's sigmoid fit, pairwise coupling, and -b 1 on LIBSVM's models."""
import lzma
import shutil
import subprocess

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import bundled
from reference import reset_c_rand
from svmtrain.cli.predict import main as predict_main
from svmtrain.io.model_io import load_model
from svmtrain.io.reader import read_libsvm
from svmtrain.models.probability import pairwise_coupling, platt_fit, sigmoid


def twin_coupling(r):
    """One row at a time, LIBSVM's multiclass_probability written out with scalars (the twin)."""
    k = r.shape[0]
    Q = np.zeros((k, k))
    for t in range(k):
        for j in range(k):
            if j != t:
                Q[t, t] += r[j, t] * r[j, t]
                Q[t, j] = -r[j, t] * r[t, j]
    p = np.full(k, 1.0 / k)
    for _ in range(max(100, k)):
        Qp = Q @ p
        pQp = p @ Qp
        if np.max(np.abs(Qp - pQp)) < 0.005 / k:
            break
        for t in range(k):
            diff = (-Qp[t] + pQp) / Q[t, t]
            p[t] += diff
            pQp = (pQp + diff * (diff * Q[t, t] + 2 * Qp[t])) / (1 + diff) / (1 + diff)
            for j in range(k):
                Qp[j] = (Qp[j] + diff * Q[t, j]) / (1 + diff)
                p[j] /= (1 + diff)
    return p


@pytest.mark.parametrize("k", [3, 4, 7])
def test_pairwise_coupling_matches_the_scalar_twin(k):
    rng = np.random.default_rng(k)
    n = 40
    r = np.zeros((n, k, k))
    upper = rng.uniform(1e-7, 1 - 1e-7, size=(n, k, k))
    for i in range(k):
        for j in range(i + 1, k):
            r[:, i, j] = upper[:, i, j]
            r[:, j, i] = 1 - upper[:, i, j]
    p = pairwise_coupling(r)
    for row in range(n):
        assert np.allclose(p[row], twin_coupling(r[row]), rtol=0, atol=1e-12)
    assert np.allclose(p.sum(axis=1), 1.0, atol=1e-9) and np.all(p > 0)


def test_platt_fit_minimises_the_regularised_likelihood():
    from scipy.optimize import minimize
    rng = np.random.default_rng(0)
    f = np.concatenate([rng.normal(1.0, 1.0, 300), rng.normal(-1.0, 1.2, 500)])
    positive = np.concatenate([np.ones(300, bool), np.zeros(500, bool)])
    A, B = platt_fit(f, positive)
    t = np.where(positive, 301 / 302, 1 / 502)

    def nll(ab):
        p = sigmoid(f, ab[0], ab[1])
        return -float(np.sum(t * np.log(p) + (1 - t) * np.log(1 - p)))
    best = minimize(nll, [0.0, 0.0], method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-12}).x
    assert nll([A, B]) <= nll(best) + 1e-8
    assert A < 0 and np.allclose([A, B], best, atol=1e-4)
    assert np.all(np.isfinite(sigmoid(np.array([-1e6, 1e6]), A, B)))


def test_b1_on_libsvm_models_prints_libsvms_probabilities(tmp_path):
    from libsvm import svmutil as util
    rng = np.random.default_rng(5)
    rows, labels = [], []
    for i in range(300):
        c = i % 4
        rows.append({1: rng.normal(c * 0.6, 1.0), 2: rng.normal((c % 2) * 0.8, 1.0), 3: rng.normal(0, 1.0)})
        labels.append(float(c + 1))
    text = tmp_path / "four"
    text.write_text("\n".join(f"{int(y)} " + " ".join(f"{j}:{v!r}" for j, v in r.items())
                              for y, r in zip(labels, rows)) + "\n")
    for options, data in (("-b 1 -t 2 -g 0.5 -c 2", text), ("-b 1 -c 1", None)):
        if data is None:
            data = tmp_path / "heart"
            data.write_bytes(lzma.decompress(bundled("heart_scale.xz").read_bytes()))
        y, x = util.svm_read_problem(str(data))
        reset_c_rand()
        util.svm_save_model(str(tmp_path / "m"), util.svm_train(y, x, options + " -q"))
        m = util.svm_load_model(str(tmp_path / "m"))
        plabels, _, probs = util.svm_predict(y, x, m, "-b 1 -q")
        r = CliRunner().invoke(predict_main, ["-b", "1", str(data), str(tmp_path / "m"), str(tmp_path / "out")])
        assert r.exit_code == 0, r.output
        lines = (tmp_path / "out").read_text().splitlines()
        assert lines[0] == "labels " + " ".join(str(lab) for lab in m.get_labels())
        got = np.array([[float(t) for t in line.split()] for line in lines[1:]])
        assert np.array_equal(got[:, 0], np.array(plabels))
        assert np.allclose(got[:, 1:], np.array(probs), atol=5e-6)          # %g: six digits
        model = load_model(tmp_path / "m")
        exact = model.probabilities(model.decision_function(read_libsvm(data)))
        assert np.allclose(exact, np.array(probs), atol=1e-9)
        if shutil.which("/usr/bin/svm-predict"):       # LIBSVM installed: byte for byte
            subprocess.run(["/usr/bin/svm-predict", "-b", "1", str(data), str(tmp_path / "m"), str(tmp_path / "lib")],
                           check=True, stdout=subprocess.DEVNULL)
            assert (tmp_path / "out").read_bytes() == (tmp_path / "lib").read_bytes()


def test_platt_models_log_loss_close_to_logistic_regression():
    """Issue 17: svmtrain's own -b 1 models: log-loss on a9a.t within 0.01 of LIBLINEAR LR's."""
    from liblinear import liblinearutil as util
    import scipy.sparse as sp
    from svmtrain.params import TrainParams
    from svmtrain.training.train import train
    tr, te = read_libsvm(bundled("a9a.xz")), read_libsvm(bundled("a9a.t.xz"))
    A = sp.csr_matrix((tr.values, tr.indices, tr.indptr), shape=(tr.n_rows, tr.n_features))
    T = sp.csr_matrix((te.values, te.indices, te.indptr), shape=(te.n_rows, tr.n_features))
    reset_c_rand()
    _, _, probs = util.predict(te.labels.tolist(), T, util.train(tr.labels.tolist(), A, "-s 0 -c 1 -q"), "-b 1 -q")
    m = util.train(tr.labels.tolist(), A, "-s 0 -c 1 -q")
    p1 = np.array(probs)[:, list(m.label[:2]).index(1)]
    theirs = -float(np.mean(np.log(np.where(te.labels == 1.0, p1, 1.0 - p1))))
    for kw in ({"solver": "dcd"}, {"solver": "ocas"}):
        model = train(tr, TrainParams(C=1.0, probability=True, **kw))
        p = model.probabilities(model.decision_function(te))
        ours = -float(np.mean(np.log(np.where(te.labels == model.labels[0], p[:, 0], p[:, 1]))))
        assert abs(ours - theirs) < 0.01, (kw, ours, theirs)


def test_platt_sigmoids_round_trip_and_libsvm_reads_them(tmp_path):
    from svmtrain.io.libsvm_format import write_libsvm_model
    from svmtrain.io.model_io import save_model
    from svmtrain.params import TrainParams
    from svmtrain.training.train import train
    data = read_libsvm(bundled("heart_scale.xz"))
    models = {}
    for kw in ({"solver": "dcd"}, {"solver": "sbp", "gamma": 0.5}, {"solver": "asset", "approx": "fourier"}):
        model = models[kw["solver"]] = train(data, TrainParams(probability=True, **kw))
        assert model.prob_A is not None and model.prob_A[0] < 0      # larger scores, more likely labels[0]
        save_model(model, tmp_path / "m")
        back = load_model(tmp_path / "m")
        assert np.array_equal(back.prob_A, model.prob_A) and np.array_equal(back.prob_B, model.prob_B)
        scores = model.decision_function(data)
        assert np.array_equal(back.probabilities(scores), model.probabilities(scores))
    from libsvm import svmutil as util
    model = models["sbp"]       # the -s sbp -g 0.5 -b 1 model above
    write_libsvm_model(model, tmp_path / "m.libsvm")
    text = tmp_path / "heart"
    text.write_bytes(lzma.decompress(bundled("heart_scale.xz").read_bytes()))
    y, x = util.svm_read_problem(str(text))
    _, _, probs = util.svm_predict(y, x, util.svm_load_model(str(tmp_path / "m.libsvm")), "-b 1 -q")
    ours = load_model(tmp_path / "m.libsvm").probabilities(model.decision_function(data))
    assert np.allclose(ours, np.array(probs), atol=1e-7)


def test_b1_refusals():
    from svmtrain.errors import ParameterError
    from svmtrain.params import TrainParams, check_params
    with pytest.raises(ParameterError, match="applies to classification and regression, not ranking"):
        check_params(TrainParams(task="p", solver="ocas", probability=True))
    with pytest.raises(ParameterError, match="applies to classification and regression, not one-class"):
        check_params(TrainParams(task="o", solver="smo", probability=True))
    check_params(TrainParams(task="r", probability=True))


def test_laplace_sigma_is_libsvms_formula():
    """LIBSVM's svm_svr_probability written out with scalars (the twin): the
    mean absolute residual, again without the residuals beyond 5 std."""
    from svmtrain.models.probability import laplace_sigma
    r = np.r_[np.random.default_rng(3).laplace(0.0, 0.7, 400), 40.0, -55.0]     # two outliers
    mae = sum(abs(v) for v in r) / len(r)
    std = (2 * mae * mae) ** 0.5
    kept = [abs(v) for v in r if abs(v) <= 5 * std]
    assert laplace_sigma(r) == pytest.approx(sum(kept) / len(kept), rel=1e-12)
    assert len(kept) == 400 and laplace_sigma(r) == pytest.approx(0.7, rel=0.1)


def _regression_file(tmp_path, sigma=0.5):
    """heart_scale's rows with targets 10 + 3 x1 - 2 x2 + Laplace noise of scale ``sigma``."""
    data = read_libsvm(bundled("heart_scale.xz"))
    X = np.zeros((data.n_rows, data.n_features))
    for i in range(data.n_rows):
        lo, hi = data.indptr[i], data.indptr[i + 1]
        X[i, data.indices[lo:hi]] = data.values[lo:hi]
    y = 10 + 3 * X[:, 0] - 2 * X[:, 1] + np.random.default_rng(8).laplace(0.0, sigma, data.n_rows)
    path = tmp_path / "reg"
    path.write_text("".join(f"{t:.17g} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row) if v) + "\n"
                            for t, row in zip(y.tolist(), X.tolist())))
    return path


def test_svr_b1_sigma_is_libsvms_and_round_trips(tmp_path):
    """svm-train --task r -b 1 (-s smo): the Laplace sigma within 10 % of
    LIBSVM's -s 3 -b 1 on the same file (each draws its own folds), in the
    model file both ways; svm-predict -b 1 prints LIBSVM's line, the
    predictions unchanged."""
    from libsvm import svmutil as util
    from svmtrain.cli.train import main as train_main
    data = _regression_file(tmp_path)
    y, x = util.svm_read_problem(str(data))
    reset_c_rand()
    theirs = util.svm_train(y, x, "-s 3 -c 4 -b 1 -q").get_svr_probability()
    for fmt in ("svmtrain", "libsvm"):
        model_path = tmp_path / f"m.{fmt}"
        r = CliRunner().invoke(train_main, ["-q", "--task", "r", "-s", "smo", "-c", "4", "-b", "1",
                                            "--model-format", fmt, str(data), str(model_path)])
        assert r.exit_code == 0, r.output
        sigma = load_model(model_path).laplace_sigma
        assert sigma == pytest.approx(theirs, rel=0.1)
        assert 0.4 < sigma < 0.9                      # the noise's 0.5 plus the model's own error
        if fmt == "libsvm":                            # LIBSVM reads our probA as its sigma
            assert util.svm_load_model(str(model_path)).get_svr_probability() == pytest.approx(sigma, rel=1e-12)
        r = CliRunner().invoke(predict_main, ["-b", "1", str(data), str(model_path), str(tmp_path / "out")])
        assert r.exit_code == 0, r.output
        assert r.output.startswith("Prob. model for test data: target value = predicted value + z,\n"
                                   f"z: Laplace distribution e^(-|z|/sigma)/(2sigma),sigma={sigma:g}\n"
                                   "Mean squared error = ")
        plain = CliRunner().invoke(predict_main, [str(data), str(model_path), str(tmp_path / "plain")])
        assert plain.exit_code == 0 and (tmp_path / "out").read_bytes() == (tmp_path / "plain").read_bytes()


def test_svr_b1_needs_a_model_with_sigma(tmp_path):
    from svmtrain.cli.train import main as train_main
    data = _regression_file(tmp_path)
    r = CliRunner().invoke(train_main, ["-q", "--task", "r", str(data), str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(predict_main, ["-b", "1", str(data), str(tmp_path / "m"), str(tmp_path / "out")])
    assert r.exit_code == 2 and "no noise model (train it with -b 1" in r.output
    assert not (tmp_path / "out").exists()


def _libsvm_probabilities(path, options):
    """probA, probB (classification) or sigma (regression) of libsvm-official's -b 1 run, rand() at seed 1."""
    from libsvm import svmutil as util
    y, x = util.svm_read_problem(str(path))
    reset_c_rand()
    m = util.svm_train(y, x, options + " -b 1 -q")
    if "-s 3" in options:
        return np.array([m.get_svr_probability()]), None
    k = m.get_nr_class()
    pairs = k * (k - 1) // 2
    return np.array([m.probA[p] for p in range(pairs)]), np.array([m.probB[p] for p in range(pairs)])


@pytest.mark.parametrize("case,options,rel", [
    ("heart", "-c 10 -g 0.5", 1e-9),
    ("heart3", "-c 4 -g 0.3", 1e-3),            # three pairs, each fold's solve to -e
    ("heart", "-s 1 -n 0.4 -g 0.5", 1e-6),      # nu-SVC
    ("heart", "-s 3 -c 4 -g 0.5", 1e-9),        # epsilon-SVR's Laplace sigma
])
def test_libsvm_b1_lines_fit_libsvms_probabilities(tmp_path, case, options, rel):
    """A LIBSVM -b 1 line trains its sigmoids (or sigma) on LIBSVM's folds
    (--folds libsvm): per pair, glibc's rand() shuffle, five folds, the
    class-grouped sub-problems of svm_binary_svc_probability; probA and
    probB are LIBSVM's to the solver's tolerance. svmtrain's own line keeps
    its seeded folds (a different, equally valid fit)."""
    pytest.importorskip("libsvm")
    from svmtrain.cli.train import main as train_main
    data = tmp_path / "data"
    with lzma.open(bundled("heart_scale.xz"), "rt") as f:
        lines = f.read().splitlines()
    if case == "heart3":                         # every third +1 row relabelled 2
        lines = [("2" + line[2:] if i % 3 == 2 and line.startswith("+1") else line) for i, line in enumerate(lines)]
    data.write_text("\n".join(lines) + "\n")
    want_a, want_b = _libsvm_probabilities(data, options)
    model_path = tmp_path / "m"
    r = CliRunner().invoke(train_main, ["-q", "-b", "1", *options.split(), str(data), str(model_path)])
    assert r.exit_code == 0, r.output
    model = load_model(model_path)
    if want_b is None:
        assert model.laplace_sigma == pytest.approx(want_a[0], rel=rel)
        return
    np.testing.assert_allclose(model.prob_A, want_a, rtol=rel)
    np.testing.assert_allclose(model.prob_B, want_b, rtol=rel, atol=1e-9)
    if options.startswith("-c"):                # C-SVC: svmtrain's own line (-s smo) on its seeded folds
        own = CliRunner().invoke(train_main, ["-q", "-b", "1", "-s", "smo", *options.split(), str(data),
                                              str(tmp_path / "own")])
        assert own.exit_code == 0, own.output
        assert not np.allclose(load_model(tmp_path / "own").prob_A, want_a, rtol=1e-3)
