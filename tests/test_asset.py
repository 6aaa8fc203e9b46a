"""-s asset: feature maps, Algorithm 1 against its NumPy twin, accuracy, model files."""
import dataclasses
import math

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import bundled
from naive import dense
import naive_asset as naive
from svmtrain.mercer import feature_maps as fm
from svmtrain.models.fourier import FourierModel
from svmtrain.mercer._feature_map_kernels import fast_cos
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main
from svmtrain.data.dataset import Chunk, take_rows
from svmtrain.errors import ParameterError
from svmtrain.io.model_io import load_model, save_model
from svmtrain.io.reader import read_libsvm
from svmtrain.mercer.functions import Kernel
from svmtrain.params import TrainParams
from svmtrain.solvers.asset import _asset_kernels as K
from svmtrain.solvers.asset import asset
from svmtrain.training.train import train


@pytest.fixture(scope="module")
def a9a():
    return read_libsvm(bundled("a9a.xz")), read_libsvm(bundled("a9a.t.xz"))


def chunk_from_dense(X, labels):
    rows, cols = np.nonzero(X)
    indptr = np.zeros(X.shape[0] + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=X.shape[0]), out=indptr[1:])
    return Chunk(labels=np.asarray(labels, np.float64), indptr=indptr, indices=cols.astype(np.int32),
                 values=X[rows, cols].astype(np.float64), qid=np.zeros(X.shape[0], np.int64))


def accuracy(model, chunk):
    return float(np.mean(model.predict(chunk) == chunk.labels))


# ---------------------------------------------------------------- feature maps

def test_fast_cos_matches_libm():
    x = np.concatenate([np.linspace(-3000.0, 3000.0, 200001), np.random.default_rng(0).normal(0, 50, 10000)])
    from numba import njit

    @njit
    def many(x, out):
        for i in range(x.shape[0]):
            out[i] = fast_cos(x[i])
        return out
    assert np.abs(many(x, np.empty_like(x)) - np.cos(x)).max() < 5e-9


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fourier_rows_match_numpy(heart, dtype):
    d = heart.n_features
    fmap = fm.FourierMap.draw(d - 2, 300, 0.5, np.random.default_rng(3))   # columns d-2, d-1 unknown to the map
    rows = np.array([4, 0, 269, 17, 17, 100])
    got = fmap.transform(heart, rows=rows, dtype=dtype)
    assert got.dtype == dtype and got.shape == (6, 300)
    want = naive.fourier_features(dense(heart, d - 2)[rows], fmap.omega, fmap.phases)
    np.testing.assert_allclose(got, want, atol=1e-7 if dtype == np.float32 else 1e-12)


def test_fourier_draw_has_the_rbf_spectrum():
    fmap = fm.FourierMap.draw(50, 4000, 0.3, np.random.default_rng(0))
    assert abs(fmap.omega.var() - 2 * 0.3) < 0.02          # N(0, 2 gamma)
    assert fmap.phases.min() >= 0 and fmap.phases.max() < 2 * np.pi
    assert abs(fmap.phases.mean() - np.pi) < 0.1


def test_nystrom_map_matches_numpy_and_reproduces_landmark_kernel(heart):
    d = heart.n_features
    L = take_rows(heart, np.arange(0, 270, 5))
    fmap = fm.NystromMap(L, Kernel(2, 0.7), 1e-8)
    got = fmap.transform(heart)
    Xd, Ld = dense(heart, d), dense(L, d)
    want = naive.nystrom_features(Xd, Ld, 0.7, 1e-8)
    # eigenvectors are defined up to sign: compare the Gram matrices V V^T
    np.testing.assert_allclose(got @ got.T, want @ want.T, atol=1e-9)
    VL = fmap.transform(L)
    np.testing.assert_allclose(VL @ VL.T, naive.rbf(Ld, Ld, 0.7), atol=1e-9)  # exact on S (eq. 6)
    # a linear model on V is the kernel expansion alpha_S = Q D^-1/2 gamma over the landmarks
    g = np.random.default_rng(1).normal(size=fmap.dim)
    np.testing.assert_allclose(naive.rbf(Xd, Ld, 0.7) @ fmap.expansion(g), got @ g, atol=1e-9)


@pytest.mark.parametrize("code", [0, 1, 2, 3])
def test_landmark_kernel_rows_match_numpy(heart, code):
    """The streamed Nystrom map's kernel rows (sparse landmarks, scattered
    rows) against dense NumPy, on drawn rows with a feature the landmarks
    lack; transform_rows then equals transform."""
    d = heart.n_features
    S = take_rows(heart, np.arange(0, 270, 9))
    L = chunk_from_dense(dense(S, d)[:, :d - 1], S.labels)   # landmarks without the last feature...
    kern = Kernel(code, 0.3, 2, 0.5)
    fmap = fm.NystromMap(L, kern, 1e-8)
    rows = np.array([5, 0, 269, 17, 17], np.int64)
    Kx = np.empty((len(rows), L.n_rows))
    from svmtrain.mercer._feature_map_kernels import landmark_kernel_rows
    landmark_kernel_rows(heart.indptr, heart.indices, heart.values, rows, *fmap.by_feature(),
                         fmap.landmark_sq, *kern.params(), Kx)
    Xd = dense(heart, d)[rows]                            # ...which the rows have (it counts in |x|^2)
    want = naive.kernel(Xd, np.c_[dense(L, d - 1), np.zeros(L.n_rows)], code, 0.3, 2, 0.5)
    np.testing.assert_allclose(Kx, want, rtol=1e-12, atol=1e-12)
    got = fmap.transform_rows(heart, rows, np.empty((len(rows), fmap.dim)))
    np.testing.assert_allclose(got, fmap.transform(heart, rows=rows), rtol=1e-10, atol=1e-10)


def test_nystrom_drops_small_eigenvalues(heart):
    L = take_rows(heart, np.r_[np.arange(40), np.arange(10)])       # 10 duplicated landmarks
    fmap = fm.NystromMap(L, Kernel(2, 0.2), 1e-8)
    assert fmap.n_dropped >= 10 and fmap.dim == 50 - fmap.n_dropped
    assert fmap.eigenvalues.min() >= 1e-8
    coarse = fm.NystromMap(L, Kernel(2, 0.2), 1e-1)
    assert coarse.dim < fmap.dim


def _kernel_errors(X, maps, gamma, n_features):
    Xd = dense(X, n_features)
    exact = naive.rbf(Xd, Xd, gamma)
    out = []
    for m in maps:
        V = m.transform(X)
        out.append(np.sqrt(np.mean((V @ V.T - exact) ** 2)))
    return np.array(out)


def test_fourier_kernel_error_falls_as_one_over_sqrt_D(a9a):
    X = take_rows(a9a[0], np.arange(0, 32561, 163))        # 200 rows
    errs = {D: np.mean([_kernel_errors(X, [fm.FourierMap.draw(123, D, 0.05, np.random.default_rng(s))],
                                       0.05, 123)[0] for s in range(4)]) for D in (256, 4096)}
    ratio = errs[256] / errs[4096]
    assert 3.2 < ratio < 5.0, (errs, ratio)                 # sqrt(4096/256) = 4


def test_nystrom_kernel_error_falls_as_s_grows(a9a):
    X = take_rows(a9a[0], np.arange(0, 32561, 163))
    kernel = Kernel(2, 0.05)
    pool = a9a[0]
    errs = []
    for s in (16, 64, 256):
        e = [_kernel_errors(X, [fm.NystromMap.draw(pool, s, kernel, 1e-8, np.random.default_rng(seed))],
                            0.05, 123)[0] for seed in range(3)]
        errs.append(np.mean(e))
    assert errs[0] > errs[1] > errs[2], errs
    assert errs[2] < 0.5 * errs[0], errs


# ---------------------------------------------------------------- Algorithm 1 against its twin

@pytest.mark.parametrize("k,Bc,strong,avg", [
    (1, 0.0, False, True), (3, 0.0, False, True), (1, 1.5, False, False), (2, 1.0, False, True),
    (1, 0.0, True, False), (4, 2.0, True, False)])
def test_asset_steps_match_naive(k, Bc, strong, avg):
    rng = np.random.default_rng(7 + k)
    n, d = 60, 9
    F = rng.normal(size=(n, d))
    y = np.where(rng.random(n) < 0.45, 1.0, -1.0)
    cost = np.where(y > 0, 1.0, 2.5)
    lam, step0, b_box = 0.05, 3.0, 1.7
    steps = 150
    draws = rng.integers(0, n, size=steps * k)
    avg_start = 60 if avg else steps + 2
    v, T, st = np.zeros(d + 1), np.zeros(d + 1), K.new_state()
    viol = np.empty(k, np.int64)
    # two calls, to cover the step numbering across blocks
    half = (steps // 2) * k
    K.asset_steps(F, draws[:half], y, cost, k, 0, lam, Bc, not strong, b_box, step0, strong, avg_start, v, st, T, viol)
    K.asset_steps(F, draws[half:], y, cost, k, steps // 2, lam, Bc, not strong, b_box, step0, strong, avg_start,
                  v, st, T, viol)
    g, b = asset.current({"state": st, "v": v, "T": T}, avg)
    g_ref, b_ref = naive.asset(F, y, cost, lam, draws, k, Bc=Bc, has_b=not strong, b_box=b_box, step0=step0,
                               strong=strong, avg_start=avg_start if avg else None)
    np.testing.assert_allclose(g, g_ref, rtol=1e-9, atol=1e-10)
    assert b == pytest.approx(b_ref, rel=1e-9, abs=1e-10)
    if strong:
        assert b == 0.0
    # the last iterate stays feasible
    assert np.linalg.norm(v * st[K.SCALE]) <= 1 / math.sqrt(lam) * (1 + 1e-12)
    assert abs(st[K.BIAS]) <= b_box


def test_projection_is_active_with_huge_steps():
    rng = np.random.default_rng(0)
    F = rng.normal(size=(40, 5))
    y = np.where(rng.random(40) < 0.5, 1.0, -1.0)
    lam, b_box = 0.01, 0.3
    v, T, st = np.zeros(6), np.zeros(6), K.new_state()
    K.asset_steps(F, rng.integers(0, 40, 200), y, np.ones(40), 1, 0, lam, 0.0, True, b_box, 1e4, False, 10**9,
                  v, st, T, np.empty(1, np.int64))
    assert np.linalg.norm(v * st[K.SCALE]) == pytest.approx(1 / math.sqrt(lam), rel=1e-9)
    assert abs(st[K.BIAS]) == pytest.approx(b_box)


def test_feature_margins_and_objective_match_numpy():
    rng = np.random.default_rng(2)
    F = rng.normal(size=(50, 7)).astype(np.float32)
    y = np.where(rng.random(50) < 0.5, 1.0, -1.0)
    cost = np.ones(50)
    w = rng.normal(size=8)

    class Cached:
        cached, n = True, 50
        margins = asset.Features.margins
    feats = Cached()
    feats.F = F
    got = asset.objective(feats, y, cost, w, 0.7, -0.2, 0.1)
    assert got == pytest.approx(naive.objective(F.astype(np.float64), y, cost, w, -0.2, 0.1, Bc=0.7), rel=1e-10)


def test_DG_estimate_is_the_papers_formula(heart):
    fmap = fm.FourierMap.draw(13, 64, 0.5, np.random.default_rng(0))
    feats = asset.Features(fmap, heart)
    cost = np.full(heart.n_rows, 2.0)
    DG, R = asset.estimate_DG(feats, cost, True, 0.5, np.random.default_rng(0))   # M >= n: every row
    V = fmap.transform(heart).astype(np.float32).astype(np.float64)
    assert DG == pytest.approx(math.sqrt(np.mean(4.0 * ((V * V).sum(1) + 0.25 + 1.0))), rel=1e-6)
    assert R == pytest.approx(math.sqrt(((V * V).sum(1) + 0.25).max()), rel=1e-6)


# ---------------------------------------------------------------- training

def params(**kw):
    base = dict(solver="asset", kernel_type=2)
    base.update(kw)
    return TrainParams(**base)


def test_fourier_a9a_accuracy(a9a):
    X, Xt = a9a
    model = train(X, params(approx="fourier", dim=2048, gamma=0.01, C=100.0))
    assert isinstance(model, FourierModel)
    acc = accuracy(model, Xt)
    assert acc >= 0.843, acc
    r = model.fit_results[0]
    assert math.isfinite(r.objective) and r.objective < 1.0 and r.info["averaged"]


def test_nystrom_a9a_accuracy_through_the_map(a9a):
    """The acceptance level for s = 512, checked on the map itself (no KernelModel needed)."""
    X, Xt = a9a
    p = asset.with_defaults(params(approx="nystrom", dim=512, gamma=0.01, C=100.0), asset.DEFAULTS)
    rng = np.random.default_rng(p.seed)
    fmap, _ = fm.build_map(X, p, 123, rng)
    feats = asset.Features(fmap, X)
    y = np.where(X.labels == 1, 1.0, -1.0)
    r = asset.fit_asset(feats, [(y, (1.0, 1.0))], p, p.resolved_lambda(X.n_rows), rng)[0]
    scores = fmap.transform(Xt) @ r.w + r.b
    assert np.mean(np.where(scores > 0, 1.0, -1.0) == Xt.labels) >= 0.845


def test_nystrom_a9a_accuracy_through_the_model(a9a):
    X, Xt = a9a
    model = train(X, params(approx="nystrom", dim=512, gamma=0.01, C=100.0))
    assert model.SV.n_rows == 512
    assert accuracy(model, Xt) >= 0.845


def test_streamed_features_give_the_same_model(heart, monkeypatch):
    p = params(approx="fourier", dim=64, gamma=0.3, C=10.0, epochs=3)
    cached = train(heart, p)
    monkeypatch.setattr(asset, "cache_budget", lambda: 0)
    monkeypatch.setattr(asset, "STREAM_STEPS", 50)
    streamed = train(heart, p)
    assert streamed.fit_results[0].info["cached"] is False and cached.fit_results[0].info["cached"] is True
    np.testing.assert_array_equal(streamed.W, cached.W)
    assert streamed.fit_results[0].objective == cached.fit_results[0].objective


def test_seed_decides_everything(heart):
    p = params(approx="fourier", dim=32, gamma=0.3, epochs=2)
    a, b = train(heart, p), train(heart, p)
    c = train(heart, dataclasses.replace(p, seed=2))
    np.testing.assert_array_equal(a.W, b.W)
    np.testing.assert_array_equal(a.omega, b.omega)
    assert not np.array_equal(a.omega, c.omega)


def test_more_epochs_lower_the_objective(heart):
    objs = [train(heart, params(approx="fourier", dim=128, gamma=0.2, C=10.0, epochs=e)).fit_results[0].objective
            for e in (1, 40)]
    assert objs[1] < 0.8 * objs[0], objs


def test_eps_stops_when_an_epoch_gains_little(heart):
    p = params(approx="fourier", dim=64, gamma=0.2, C=10.0, epochs=50)
    full = train(heart, p).fit_results[0]
    early = train(heart, dataclasses.replace(p, eps=0.5)).fit_results[0]
    assert full.info["epochs"] == 50 and early.converged
    assert 2 <= early.info["epochs"] < 50
    assert early.n_iter == early.info["epochs"] * heart.n_rows


def blobs(n_per_class, labels, seed=0, d=4):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=3.0, size=(len(labels), d))
    X = np.vstack([c + rng.normal(size=(n_per_class, d)) for c in centres])
    y = np.repeat(np.asarray(labels, np.float64), n_per_class)
    perm = rng.permutation(len(y))
    return chunk_from_dense(X[perm], y[perm])


def test_one_vs_rest_builds_the_map_once(monkeypatch):
    data = blobs(80, [3, 1, 7])
    calls = []
    real = asset.build_map
    monkeypatch.setattr(asset, "build_map", lambda *a: calls.append(1) or real(*a))
    model = train(data, params(approx="fourier", dim=200, gamma=0.1, C=10.0))
    assert len(calls) == 1
    assert model.n_models == 3 and len(model.fit_results) == 3
    assert sorted(model.labels) == [1.0, 3.0, 7.0]
    assert accuracy(model, data) > 0.95


def test_strongly_convex_and_inner_solvers_run(heart):
    for kw in (dict(strongly_convex=True), dict(strongly_convex=True, bias=1.0), dict(inner="pegasos"),
               dict(inner="dcd", bias=1.0), dict(batch_size=4), dict(bias=1.0)):
        model = train(heart, params(approx="fourier", dim=128, gamma=0.1, C=1.0, **kw))
        assert accuracy(model, heart) > 0.8, kw
        if kw.get("strongly_convex"):
            assert model.fit_results[0].b == 0.0 and not model.fit_results[0].info["averaged"]


def test_class_weights_move_the_boundary(heart):
    base = train(heart, params(approx="fourier", dim=64, gamma=0.1, C=1.0))
    heavy = train(heart, params(approx="fourier", dim=64, gamma=0.1, C=1.0, class_weights={1.0: 20.0}))
    assert np.sum(heavy.predict(heart) == 1.0) > np.sum(base.predict(heart) == 1.0)


@pytest.mark.parametrize("kw,flag", [
    (dict(strongly_convex=True, unreg_bias=True), "-R"),
    (dict(strongly_convex=True, inner="dcd"), "--inner"),
    (dict(approx="fourier", kernel_type=1), "-t 2"),
    (dict(loss="squared-hinge"), "--loss"),
])
def test_bad_combinations_name_the_flag(heart, kw, flag):
    with pytest.raises(ParameterError, match=flag):
        train(heart, params(**{"approx": "fourier", "dim": 16, **kw}))


# ---------------------------------------------------------------- model files and the CLI

def test_fourier_model_file_round_trip(heart, tmp_path):
    model = train(blobs(40, [2, 5, 9]), params(approx="fourier", dim=50, gamma=0.2))
    save_model(model, tmp_path / "m")
    back = load_model(tmp_path / "m")
    assert isinstance(back, FourierModel)
    data = blobs(10, [2, 5, 9], seed=3)
    np.testing.assert_array_equal(back.decision_function(data), model.decision_function(data))
    np.testing.assert_array_equal(back.labels, model.labels)


def test_fourier_model_rejects_inconsistent_sections(tmp_path):
    model = train(blobs(30, [1, -1]), params(approx="fourier", dim=20, gamma=0.2))
    save_model(model, tmp_path / "m")
    text = (tmp_path / "m").read_text().replace("n_random_features 20", "n_random_features 21")
    (tmp_path / "bad").write_text(text)
    from svmtrain.errors import ModelFormatError
    with pytest.raises(ModelFormatError, match="Omega"):
        load_model(tmp_path / "bad")


def test_nystrom_model_is_a_kernel_expansion_over_the_landmarks(tmp_path):
    data = blobs(60, [2, 5, 9])
    model = train(data, params(dim=40, gamma=0.3, C=10.0, kernel_type=1, degree=2, coef0=1.0))
    assert model.SV.n_rows == 40 and model.coef.shape == (40, 3) and model.kernel.code == 1
    assert accuracy(model, data) > 0.95
    save_model(model, tmp_path / "m")
    back = load_model(tmp_path / "m")
    np.testing.assert_allclose(back.decision_function(data), model.decision_function(data), rtol=1e-12, atol=1e-12)
    # the expansion equals the linear model on the mapped rows that was trained
    p = asset.with_defaults(params(dim=40, gamma=0.3, C=10.0, kernel_type=1, degree=2, coef0=1.0), asset.DEFAULTS)
    fmap, _ = fm.build_map(data, p, data.n_features, np.random.default_rng(p.seed))
    W = np.stack([r.w for r in model.fit_results], axis=1)
    np.testing.assert_allclose(model.decision_function(data), fmap.transform(data) @ W + model.b, atol=1e-8)


def test_cli_fourier_train_and_predict(tmp_path):
    r = CliRunner().invoke(train_main, ["-s", "asset", "--approx", "fourier", "-D", "256", "-g", "0.1", "-q",
                                        str(bundled("heart_scale.xz")), str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(predict_main, [str(bundled("heart_scale.xz")), str(tmp_path / "m"), str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    correct, total = map(int, r.output.split("(")[1].split(")")[0].split("/"))
    assert total == 270 and correct / total > 0.8


def test_decision_function_is_independent_of_row_blocks(heart, monkeypatch):
    model = train(heart, params(approx="fourier", dim=64, gamma=0.2))
    full = model.decision_function(heart)
    monkeypatch.setattr(fm, "BLOCK_BYTES", 8 * 64 * 7)
    np.testing.assert_allclose(model.decision_function(heart), full, rtol=0, atol=1e-12)


def test_nystrom_libsvm_export_predicts_the_same_labels(tmp_path):
    from libsvm import svmutil
    data = str(bundled("heart_scale.xz"))
    common = ["-s", "asset", "-D", "60", "-g", "0.2", "-c", "5", "-q", data]
    r = CliRunner().invoke(train_main, common + [str(tmp_path / "m.libsvm"), "--model-format", "libsvm"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(train_main, common + [str(tmp_path / "m.svmtrain")])
    assert r.exit_code == 0, r.output
    ours = {}
    for name in ("m.libsvm", "m.svmtrain"):
        r = CliRunner().invoke(predict_main, ["-d", data, str(tmp_path / name), str(tmp_path / (name + ".out"))])
        assert r.exit_code == 0, r.output
        rows = [line.split() for line in (tmp_path / (name + ".out")).read_text().splitlines()]
        ours[name] = (np.array([float(x[0]) for x in rows]), np.array([float(x[1]) for x in rows]))
    X = read_libsvm(data)
    xs = [dict(zip((X.indices[X.indptr[i]:X.indptr[i + 1]] + 1).tolist(), X.values[X.indptr[i]:X.indptr[i + 1]].tolist()))
          for i in range(X.n_rows)]
    lib = svmutil.svm_load_model(str(tmp_path / "m.libsvm"))
    labels, _, _ = svmutil.svm_predict(X.labels.tolist(), xs, lib, "-q")
    labels = np.array(labels)
    near_zero = np.abs(ours["m.svmtrain"][1]) < 1e-9
    assert np.all((labels == ours["m.libsvm"][0]) | near_zero)
    assert np.all((labels == ours["m.svmtrain"][0]) | near_zero)
