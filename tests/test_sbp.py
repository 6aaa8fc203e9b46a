"""The Stochastic Batch Perceptron (-s sbp), its kernel cache and its pilot, against NumPy twins and LIBSVM."""
import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

import naive_sbp as naive
from conftest import bundled, shared, heart_scale as heart
from svmtrain.mercer import functions as kernels
from svmtrain.data.dataset import Chunk, take_rows
from svmtrain.io.model_io import load_model, save_model
from svmtrain.io.reader import read_libsvm
from svmtrain.mercer.cache import KernelCache, exp_neg
from svmtrain.models.kernel import KernelModel
from svmtrain.params import TrainParams
from svmtrain.solvers.kernel import _sbp_kernels as K
from svmtrain.solvers.kernel import sbp
from svmtrain.training.train import train


def random_chunk(rng, n, d, density=0.5, scale=1.0):
    """A random sparse Chunk and its dense twin."""
    mask = rng.random((n, d)) < density
    vals = np.where(mask, scale * rng.normal(size=(n, d)), 0.0)
    indptr = np.concatenate([[0], np.cumsum(mask.sum(1))]).astype(np.int64)
    rows, cols = np.nonzero(mask)
    chunk = Chunk(labels=np.where(rng.random(n) < 0.4, 1.0, -1.0), indptr=indptr,
                  indices=cols.astype(np.int32), values=vals[rows, cols], qid=np.zeros(n, np.int64))
    return chunk, vals


# ------------------------------------------------------------ kernel cache
def test_exp_neg_matches_numpy():
    x = -np.concatenate([np.linspace(0, 0.5, 1001), np.geomspace(1e-12, 700, 3001)])
    for s in (0, 3, 11):
        ok = -x <= 0.5 * 2 ** s
        got = np.array([exp_neg(v, s) for v in x[ok]])
        np.testing.assert_allclose(got, np.exp(x[ok]), rtol=2e-15 * 2 ** s, atol=0)


@pytest.mark.parametrize("code", [0, 1, 2, 3])
def test_cache_rows_match_numpy(code, monkeypatch):
    import svmtrain.mercer.cache as kc
    monkeypatch.setattr(kc, "ROW_BLOCK", 7)        # several row blocks, a ragged last one
    rng = np.random.default_rng(code)
    X, dense = random_chunk(rng, 50, 9, scale=3.0)
    kern = kernels.Kernel(code, gamma=0.7, degree=3, coef0=0.4)
    cache = KernelCache(X, kern, cache_mb=1e-9, max_batch=6)   # the minimum: one batch
    assert cache.slots == 6
    js = np.array([3, 49, 0, 3, 17, 22])
    got = cache.rows(js)
    want = naive.kernel_dense(code, dense[js], dense, 0.7, 3, 0.4)
    np.testing.assert_allclose(got, want, rtol=2e-7, atol=2e-7 * np.abs(want).max())
    assert got.dtype == np.float32


def test_cache_large_rbf_arguments_use_squarings():
    rng = np.random.default_rng(5)
    X, dense = random_chunk(rng, 40, 6, density=1.0, scale=2.0)
    kern = kernels.Kernel(2, gamma=0.2)
    cache = KernelCache(X, kern, 1.0, max_batch=4)
    assert cache.squarings >= 4
    got = cache.rows(np.array([0, 1, 2, 39]))
    want = naive.kernel_dense(2, dense[[0, 1, 2, 39]], dense, 0.2, 3, 0.0)
    assert want.min() > 1e-30
    np.testing.assert_allclose(got, want, rtol=2e-7, atol=0)


def test_cache_is_lru_and_bounded():
    rng = np.random.default_rng(1)
    X, dense = random_chunk(rng, 30, 5)
    n = X.n_rows
    kern = kernels.Kernel(2, gamma=0.3)
    slots = 7
    cache = KernelCache(X, kern, cache_mb=slots * 4 * n / 2**20, max_batch=4)
    assert cache.slots == slots
    batches = [rng.integers(0, 12, size=rng.integers(1, 5)) for _ in range(200)]
    for js in batches:
        rows = cache.rows(js)
        np.testing.assert_allclose(rows, naive.kernel_dense(2, dense[js], dense, 0.3, 3, 0.0), rtol=2e-7, atol=1e-7)
    kept, hits, misses = naive.lru_twin(slots, batches)
    assert set(np.flatnonzero(cache.slot_of >= 0)) == kept
    assert (cache.hits, cache.misses) == (hits, misses)
    assert misses < sum(len(b) for b in batches)
    assert cache.M.nbytes <= slots * 4 * n


# ------------------------------------------------------------ water levels
values = st.lists(st.one_of(st.floats(-5, 5, allow_nan=False), st.sampled_from([0.0, 1.0, -1.0])),
                  min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(vals=values, volume=st.floats(0, 50), seed=st.integers(0, 2**32),
       hint=st.one_of(st.just(np.nan), st.floats(-6, 6)))
def test_water_level_matches_sorting(vals, volume, seed, hint):
    c = np.array(vals)
    idx = np.arange(len(c), dtype=np.int64)
    rs = np.array([seed | 1], np.uint64)
    k, level = K.water_level(c, idx, volume, rs, hint)
    k2, level2 = naive.water_level(c, volume)
    assert level == pytest.approx(level2, rel=1e-9, abs=1e-9)
    # the same count, except where the water just reaches the next values (a tie):
    # then counting them under water or not are both right, e.g. [0, 1e-5, 1e-5], volume 1e-5
    lo, hi = sorted((k, k2))
    assert np.sort(c)[lo:hi] == pytest.approx(np.full(hi - lo, level2), rel=1e-9, abs=1e-9)
    # idx[:k] are k smallest values, and the water fills exactly the volume
    assert sorted(idx.tolist()) == list(range(len(c)))
    assert np.sort(c[idx[:k]]).tolist() == np.sort(c)[:k].tolist()
    assert np.maximum(0.0, level - c).sum() == pytest.approx(volume, rel=1e-9, abs=1e-9)
    assert level == pytest.approx(naive.lp_margin(c, np.ones(len(c)), volume, bias=False), rel=1e-7, abs=1e-7)


@settings(max_examples=200, deadline=None)
@given(pos=values, neg=values, volume=st.floats(0, 50), seed=st.integers(0, 2**32), hint=st.integers(0, 45))
@example(pos=[-2.6109655516147178e-79] * 3, neg=[-2.6109655516147178e-79] * 3, volume=0.0, seed=0, hint=0)  # ties: k 2 or 3
def test_two_basin_water_level_matches_sorting_and_lp(pos, neg, volume, seed, hint):
    c = np.array(pos + neg)
    y = np.array([1.0] * len(pos) + [-1.0] * len(neg))
    ip = np.arange(len(pos), dtype=np.int64)
    ineg = np.arange(len(pos), len(c), dtype=np.int64)
    rs = np.array([seed | 1], np.uint64)
    k, level_sum = K.water_level_bias(c, ip, ineg, volume, rs, hint)
    k2, level_sum2 = naive.water_level_bias(np.array(pos), np.array(neg), volume)
    if k != k2:     # ties at the level (equal pairs): counting them under water or not are both right
        lo, hi = sorted((k, k2))
        sp, sn = np.sort(pos), np.sort(neg)
        assert lo >= 1 and np.all(sp[lo - 1:hi] == sp[lo - 1]) and np.all(sn[lo - 1:hi] == sn[lo - 1]), (k, k2)
    assert level_sum == pytest.approx(level_sum2, rel=1e-9, abs=1e-9)
    assert np.sort(c[ip[:k]]).tolist() == np.sort(pos)[:k].tolist()
    assert np.sort(c[ineg[:k]]).tolist() == np.sort(neg)[:k].tolist()
    b, gam = K.bias_from_level(c, ip, ineg, k, level_sum)
    b2, gam2 = naive.bias_from_level(np.array(pos), np.array(neg), k, level_sum2)
    assert (b, gam) == (pytest.approx(b2, rel=1e-9, abs=1e-9), pytest.approx(gam2, rel=1e-9, abs=1e-9))
    # optimal for the LP of eq. 3.9, and (b, gam) is a solution of it
    assert gam == pytest.approx(naive.lp_margin(c, y, volume, bias=True), rel=1e-7, abs=1e-7)
    assert np.maximum(0.0, gam - (c + y * b)).sum() == pytest.approx(volume, rel=1e-7, abs=1e-7)


# ------------------------------------------------------------ the steps
def test_apply_rows_matches_numpy():
    rng = np.random.default_rng(2)
    n, n_train = 9000, 8000
    M = rng.random((5, n)).astype(np.float32)
    slots = np.array([4, 0, 2, 2])
    coef = rng.normal(size=4)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    v, r, a = rng.normal(size=n), rng.normal(size=n), rng.random(n_train)
    v2, r2 = v.copy(), r.copy()
    got = K.apply_rows(M, slots, coef, y, v, r, a, n_train, 0.7, np.empty(n))
    want = naive.apply_rows(M[slots].astype(np.float64), coef, y, v2, r2, a, n_train, 0.7)
    np.testing.assert_allclose(v, v2, rtol=1e-12)
    np.testing.assert_allclose(r, r2, rtol=1e-12)
    assert got == pytest.approx(want, rel=1e-10)


@pytest.mark.parametrize("bias, fold", [(True, K.FOLD_BELOW), (False, K.FOLD_BELOW), (True, 0.99)])
def test_sbp_steps_match_replay(bias, fold):
    """The numba loop against an explicit replay of the same draws (and the draws are under water)."""
    rng = np.random.default_rng(3)
    X, dense = random_chunk(rng, 70, 6, density=0.8)
    n_train = 60                              # 10 held-out rows ride along
    y = X.labels.copy()
    kern = kernels.Kernel(2, gamma=0.4)
    B = 3
    L = 2 * B if bias else B
    cache = KernelCache(X, kern, cache_mb=8 * 4 * 70 / 2**20, max_batch=L)   # 8 slots: evictions
    v, r, acc_c = np.zeros(70), np.zeros(70), np.zeros(70)
    a, ra, acc_a = np.zeros(n_train), np.zeros(n_train), np.zeros(n_train)
    state = np.zeros(K.STATE_SIZE)
    state[K.S_SCALE] = 1.0
    ia = np.arange(n_train, dtype=np.int64)
    ip = np.flatnonzero(y[:n_train] > 0).astype(np.int64)
    ineg = np.flatnonzero(y[:n_train] < 0).astype(np.int64)
    steps = 400
    trace = np.empty((steps, L), np.int64)
    volume = 0.05 * n_train
    ran = K.sbp_steps(steps, 10**9, bias, B, volume, 1.0, 1.0, 1.0, fold, y, v, r, acc_c, a, ra, acc_a, state,
                      ia, ip, ineg, rng.random((steps, L)), np.array([99], np.uint64), trace, *cache.args())
    assert ran == steps and state[K.S_ROWS] == steps * L
    Kfull = naive.kernel_dense(2, dense, dense, 0.4, 3, 0.0)
    alpha, c, a_avg, c_avg = naive.sbp_replay(Kfull, y, n_train, volume, bias, B, trace, 1.0, 1.0)
    s = state[K.S_SCALE]
    np.testing.assert_allclose(s * a, alpha, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(s * v, c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(K.averaged(a, ra, acc_a, state[K.S_OMEGA], state[K.S_WEIGHT], np.empty(n_train)),
                               a_avg, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(K.averaged(v, r, acc_c, state[K.S_OMEGA], state[K.S_WEIGHT], np.empty(70)),
                               c_avg, rtol=1e-5, atol=1e-6)
    if fold > 0.5:
        assert np.any(acc_c != 0)           # the flush path ran
    assert np.sqrt(alpha @ c[:n_train]) <= 1 + 1e-9          # projected onto the unit ball
    assert (trace < n_train).all()                            # held-out rows are never drawn


def test_row_budget_stops_the_loop():
    rng = np.random.default_rng(4)
    X, _ = random_chunk(rng, 40, 5)
    y = X.labels.copy()
    cache = KernelCache(X, kernels.Kernel(2, 0.5), 1.0, max_batch=2)
    state = np.zeros(K.STATE_SIZE)
    state[K.S_SCALE] = 1.0
    z = [np.zeros(40) for _ in range(6)]
    ran = K.sbp_steps(100, 21, True, 1, 2.0, 1.0, 1.0, 1.0, K.FOLD_BELOW, y, *z, state, np.arange(40),
                      np.flatnonzero(y > 0), np.flatnonzero(y < 0),
                      rng.random((100, 2)), np.array([5], np.uint64), np.empty((0, 2), np.int64), *cache.args())
    assert ran == 11 and state[K.S_ROWS] == 22


# ------------------------------------------------------------ the pilot
@pytest.mark.parametrize("bias", [True, False])
def test_pilot_smo_matches_twin(bias):
    rng = np.random.default_rng(6)
    X, dense = random_chunk(rng, 80, 5, density=0.9)
    y = X.labels.copy()
    Km = naive.kernel_dense(2, dense, dense, 0.5, 3, 0.0)
    alpha, grad = np.empty(80), np.empty(80)
    it, rho = K.pilot_smo(Km, y, 3.0, bias, 1e-9, 10**6, alpha, grad)
    a2, rho2 = naive.dual_solve(Km, y, 3.0, bias)
    assert naive.dual_objective(Km, y, alpha) == pytest.approx(naive.dual_objective(Km, y, a2), rel=1e-8)
    np.testing.assert_allclose(grad, (y[:, None] * y[None, :] * Km) @ alpha - 1.0, atol=1e-8)
    assert rho == pytest.approx(rho2, abs=1e-6)
    if bias:
        assert abs(alpha @ y) < 1e-9
    assert alpha.min() >= 0 and alpha.max() <= 3.0


def test_pilot_nu_is_the_exact_nu_on_small_sets():
    """With n <= PILOT_ROWS the pilot is the full regularised problem: nu = hinge / |w| of LIBSVM's solution."""
    from libsvm import svmutil
    from reference import csr
    X = heart()
    y = X.labels.copy()
    gamma, C = 1 / 13, 2.0
    m = svmutil.svm_train(y.tolist(), csr(X, 13), f"-c {C} -g {gamma} -e 1e-8 -q")
    sv = np.array(m.get_sv_indices()) - 1
    coef = np.array(m.get_sv_coef())[:, 0] * (1 if m.get_labels()[0] == 1 else -1)
    rho = m.rho[0] * (1 if m.get_labels()[0] == 1 else -1)
    dense = np.zeros((X.n_rows, 13))
    for i in range(X.n_rows):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        dense[i, X.indices[lo:hi]] = X.values[lo:hi]
    Kf = naive.kernel_dense(2, dense, dense[sv], gamma, 3, 0.0)
    norm = np.sqrt(coef @ Kf[sv] @ coef)
    nu_star = np.maximum(0, 1 - y * (Kf @ coef - rho)).mean() / norm
    nu = sbp.pilot_nu(X, y, kernels.Kernel(2, gamma), TrainParams(C=C), True, np.random.default_rng(0))
    assert nu == pytest.approx(nu_star, rel=2e-3)


# ------------------------------------------------------------ accuracy
def cv_accuracies(X, C, gamma, folds=5):
    """(LIBSVM's, SBP's) 5-fold cross-validated accuracy on the same fixed folds."""
    from libsvm import svmutil
    from reference import csr
    d = X.n_features
    A = csr(X, d)
    fold = np.random.default_rng(0).permutation(X.n_rows) % folds
    right_l = right_s = 0
    for f in range(folds):
        tr, te = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
        m = svmutil.svm_train(X.labels[tr].tolist(), A[tr], f"-c {C} -g {gamma} -q")
        p, _, _ = svmutil.svm_predict(X.labels[te].tolist(), A[te], m, "-q")
        right_l += int(np.sum(np.array(p) == X.labels[te]))
        model = train(take_rows(X, tr), TrainParams(solver="sbp", C=C, gamma=gamma), n_features=d)
        right_s += int(np.sum(model.predict(take_rows(X, te)) == X.labels[te]))
    return 100.0 * right_l / X.n_rows, 100.0 * right_s / X.n_rows


@pytest.mark.parametrize("C, gamma", [(1.0, 1 / 13), (10.0, 1 / 13), (1.0, 0.5)])
def test_heart_cv_accuracy_within_one_point_of_libsvm(C, gamma):
    lib, ours = cv_accuracies(heart(), C, gamma)
    assert abs(ours - lib) <= 1.0, (lib, ours)


@pytest.mark.parametrize("C, gamma", [(1.0, 1 / 8), (10.0, 1 / 8), (100.0, 0.01)])
def test_diabetes_cv_accuracy_within_one_point_of_libsvm(C, gamma):
    lib, ours = cv_accuracies(read_libsvm(shared("diabetes_scale.xz")), C, gamma)
    assert abs(ours - lib) <= 1.0, (lib, ours)


# ------------------------------------------------------------ the solver
def test_same_seed_same_model_and_seed_matters():
    X = heart()
    p = TrainParams(solver="sbp", C=1.0)
    m1, m2 = train(X, p), train(X, p)
    np.testing.assert_array_equal(m1.coef, m2.coef)
    np.testing.assert_array_equal(m1.b, m2.b)
    m3 = train(X, TrainParams(solver="sbp", C=1.0, seed=2))
    assert not np.array_equal(m1.b, m3.b)


def test_cache_size_does_not_change_the_model():
    X = heart()
    m1 = train(X, TrainParams(solver="sbp", C=1.0, cache_mb=1e-4))
    m2 = train(X, TrainParams(solver="sbp", C=1.0))
    np.testing.assert_allclose(m1.coef, m2.coef, rtol=1e-12)


def test_model_margin_is_one_and_nu_is_recorded():
    """After the final rescaling (Lemma 2.1) the water level of the model's margins y f(x) is 1.

    The margins are (c + y b) / gamma, so the slack volume n nu becomes n nu / gamma.
    """
    X = heart()
    model = train(X, TrainParams(solver="sbp", C=1.0, nu=0.05, epochs=30))
    assert model.nu_used == [0.05]
    y = np.where(X.labels == model.labels[0], 1.0, -1.0)
    margins = y * model.decision_function(X)[:, 0]
    gamma = model.fit_results[0].info["margin"]
    k, level = naive.water_level(margins, 0.05 * X.n_rows / gamma)
    assert level == pytest.approx(1.0, rel=1e-6)


def test_epochs_and_eps_stop_the_run():
    X = heart()
    short = train(X, TrainParams(solver="sbp", C=1.0, epochs=2)).fit_results[0]
    assert short.info["rows"] == pytest.approx(2 * X.n_rows, abs=2)
    long = train(X, TrainParams(solver="sbp", C=1.0, epochs=300, eps=1e-12)).fit_results[0]
    assert long.info["rows"] > short.info["rows"]


def test_holdout_stops_and_keeps_rows_out():
    X = heart()
    model = train(X, TrainParams(solver="sbp", C=1.0, holdout=0.25, epochs=500))
    r = model.fit_results[0]
    assert r.info["rows"] < 500 * 0.75 * X.n_rows
    assert model.n_sv <= X.n_rows - round(0.25 * X.n_rows)
    assert (model.predict(X) == X.labels).mean() > 0.8


def test_multiclass_one_vs_rest_and_single_class():
    rng = np.random.default_rng(8)
    centers = np.array([[0, 0], [3, 0], [0, 3]])
    lab = np.repeat([5.0, 7.0, 9.0], 40)
    pts = centers[np.repeat([0, 1, 2], 40)] + rng.normal(scale=0.7, size=(120, 2))
    X = Chunk(labels=lab, indptr=np.arange(0, 241, 2, dtype=np.int64),
              indices=np.tile(np.array([0, 1], np.int32), 120), values=pts.ravel(), qid=np.zeros(120, np.int64))
    model = train(X, TrainParams(solver="sbp", C=10.0, gamma=0.5))
    assert model.n_models == 3 and len(model.nu_used) == 3
    assert (model.predict(X) == lab).mean() > 0.9
    one = take_rows(X, np.arange(40))
    m1 = train(one, TrainParams(solver="sbp"))
    assert (m1.predict(X) == 5.0).all()


def test_class_weights_and_constant_feature_are_refused():
    from svmtrain.errors import ParameterError
    with pytest.raises(ParameterError, match="-w"):
        train(heart(), TrainParams(solver="sbp", class_weights={1.0: 2.0}))
    with pytest.raises(ParameterError, match="-B"):
        train(heart(), TrainParams(solver="sbp", bias=1.0))


def test_without_bias_the_single_basin_is_used():
    X = heart()
    model = train(X, TrainParams(solver="sbp", C=1.0, unreg_bias=False))    # --no-bias
    assert model.b[0] == 0.0
    assert (model.predict(X) == X.labels).mean() > 0.8


def test_kernel_model_file_round_trip(tmp_path):
    X = heart()
    model = train(X, TrainParams(solver="sbp", C=1.0, kernel_type=1, gamma=0.1, coef0=1.0, degree=2))
    path = tmp_path / "m.model"
    save_model(model, path)
    back = load_model(path)
    assert isinstance(back, KernelModel)
    assert back.kernel == model.kernel and back.nu_used == model.nu_used
    np.testing.assert_array_equal(back.coef, model.coef)
    np.testing.assert_array_equal(back.decision_function(X), model.decision_function(X))
    assert "nu_used" in path.read_text()


def test_decision_function_in_blocks_matches_one_block(monkeypatch):
    import svmtrain.models.kernel as km
    X = heart()
    model = train(X, TrainParams(solver="sbp", C=1.0))
    whole = model.decision_function(X)
    monkeypatch.setattr(km, "SCORE_BYTES", 8 * model.n_sv * 7)
    np.testing.assert_allclose(model.decision_function(X), whole, rtol=1e-12, atol=1e-12)


def test_cli_trains_and_predicts(tmp_path):
    from click.testing import CliRunner
    from svmtrain.cli.predict import main as predict_main
    from svmtrain.cli.train import main as train_main
    import lzma
    data = tmp_path / "heart"
    data.write_bytes(lzma.open(bundled("heart_scale.xz")).read())
    model = tmp_path / "heart.model"
    res = CliRunner().invoke(train_main, ["-s", "sbp", "-c", "1", str(data), str(model)])
    assert res.exit_code == 0, res.output
    assert "nu = " not in res.output and "rows/n" not in res.output    # detail only with --verbose
    res = CliRunner().invoke(train_main, ["-s", "sbp", "-c", "1", "--verbose", str(data), str(model)])
    assert res.exit_code == 0, res.output
    assert "nu = " in res.output and "rows/n" in res.output
    out = tmp_path / "out"
    res = CliRunner().invoke(predict_main, [str(data), str(model), str(out)])
    assert res.exit_code == 0, res.output
    assert "Accuracy" in res.output
    # --no-bias reaches the solver: the model's bias is exactly 0
    res = CliRunner().invoke(train_main, ["-q", "-s", "sbp", "--no-bias", str(data), str(model)])
    assert res.exit_code == 0, res.output
    assert "\nb 0.0\n" in model.read_text()
