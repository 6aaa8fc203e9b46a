"""-s smo --working-set Q (the batched decomposition of ThunderSVM / oneDAL):
its kernels against the NumPy twins of naive_smo_batched, and its solution
against the pair steps (LIBSVM's method) and libsvm-official: the same dual
objective, support vectors and predictions."""
import numpy as np
import pytest
from numba import njit
from click.testing import CliRunner

import svmtrain
from svmtrain.data.arrays import as_chunk
from svmtrain.cli.train import main as train_main
from svmtrain.errors import ParameterError
from svmtrain.io.reader import read_libsvm
from svmtrain.mercer.cache import KernelCache, fetch
from svmtrain.mercer.functions import RBF, Kernel
from svmtrain.params import TrainParams
from svmtrain.solvers.kernel import _smo_batched_kernels as KB
from svmtrain.solvers.kernel import smo
from svmtrain.solvers.kernel import smo_batched
from svmtrain.solvers.kernel import smo_path
from svmtrain._numba import options as opts

import naive_smo_batched as naive
from conftest import bundled


def _problem(seed, n=200, d=5):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, d))
    y = np.where(A[:, 0] * A[:, 1] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return A, y


def _state(seed, n):
    """A feasible-looking state with distinct y G: alphas at 0, C and in between."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    C = np.where(y > 0, 2.0, 1.0)
    alpha = np.select([rng.random(n) < 0.3, rng.random(n) < 0.5], [0.0, C], rng.random(n) * C)
    G = rng.normal(size=n)
    return y, C, alpha, G


@pytest.mark.parametrize("seed", range(3))
def test_select_working_set_against_numpy(seed):
    n, q = 300, 40
    y, C, alpha, G = _state(seed, n)
    flag = np.zeros(n, np.bool_)
    ws = np.zeros(q, np.int64)
    kept = np.random.default_rng(seed).permutation(n)[:q // 2]
    for start in (0, q // 2):
        ws[:start] = kept[:start]
        gap = KB.select_working_set(y, C, alpha, G, flag, ws, start, np.empty(n))
        want, want_gap = naive.select_working_set(y, C, alpha, G, kept[:start], q)
        np.testing.assert_array_equal(ws, want)
        assert gap == pytest.approx(want_gap, rel=1e-15)
        assert gap == KB.violation(y, C, alpha, G)
        assert not flag.any() and len(set(ws.tolist())) == q


@njit
def _full_sort_sides(y, C, alpha, key):
    """The previous selection's order: numba's argsort of the whole key, each side's members in it."""
    order = np.argsort(key)
    up = [t for t in order if (alpha[t] < C[t] if y[t] > 0 else alpha[t] > 0)]
    low = [t for t in order[::-1] if (alpha[t] > 0 if y[t] > 0 else alpha[t] < C[t])]
    return np.array(up, np.int64), np.array(low, np.int64)


@pytest.mark.parametrize("levels", [None, 3, 40])
def test_select_sides_equal_the_full_sort(levels):
    """_sides (a partition and a sort of the first q of each side) gives the
    full argsort's order: with distinct keys directly, with tied keys (a
    few levels: the start of a run, duplicated rows) by falling back to it."""
    rng = np.random.default_rng(7)
    for n, q in ((2000, 64), (2000, 1500), (300, 8)):
        y, C, alpha, G = _state(int(rng.integers(1000)), n)
        key = y * (G if levels is None else rng.integers(0, levels, n).astype(float))
        left, right = KB._sides(y, C, alpha, key, q)
        up, low = _full_sort_sides(y, C, alpha, key)
        np.testing.assert_array_equal(left[:q], up[:q])
        np.testing.assert_array_equal(right[:q], low[:q])


def test_select_fills_the_set_when_the_sides_run_out():
    y = np.ones(10)
    C = np.ones(10)
    alpha = np.zeros(10)            # I_low is empty, I_up is all: 6 picked from I_up
    flag = np.zeros(10, np.bool_)
    ws = np.zeros(8, np.int64)
    KB.select_working_set(y, C, alpha, np.linspace(-1.0, 0.0, 10), flag, ws, 0, np.empty(10))
    assert sorted(ws.tolist()) == list(range(8))


def _cached_rows(seed, n=120, d=6, m=20):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.7)
    X = as_chunk(A, np.ones(n))
    cache = KernelCache(X, Kernel(RBF, 0.3), 1, max_batch=m, n_features=d)
    js = rng.permutation(n)[:m].astype(np.int64)
    slots = np.empty(m, np.int64)
    fetch(js, *cache.args(), slots)
    return rng, X, cache, js, slots


def test_gather_block_against_numpy():
    rng, X, cache, js, slots = _cached_rows(0)
    index = np.concatenate([np.arange(X.n_rows), np.arange(X.n_rows)]).astype(np.int64)   # SVR's 2n variables
    ws = rng.permutation(2 * X.n_rows)[:20].astype(np.int64)
    for f in (KB.gather_block, KB.gather_block_serial):
        Kws = np.empty((20, 20), np.float32)
        f(ws, index, slots, cache.M, Kws, 0, False)
        np.testing.assert_array_equal(Kws, naive.gather_block(ws, index, slots, cache.M))
        # the next round keeps the last 8 members (first in, first out): their block is moved
        ws2 = np.concatenate([ws[12:], ws[:12]])
        slots2 = np.concatenate([slots[12:], slots[:12]])
        Kws[:8, :8] = -1.0
        Kws[12:, 12:] = naive.gather_block(ws[12:], index, slots[12:], cache.M)
        f(ws2, index, slots2, cache.M, Kws, 8, False)
        np.testing.assert_array_equal(Kws, naive.gather_block(ws2, index, slots2, cache.M))


@pytest.mark.parametrize("code", [RBF, 1, 0, 3])
def test_cached_rows_are_bitwise_symmetric(code):
    """gather_block's symmetric copy relies on K(x_a, x_b) == K(x_b, x_a) to
    the last bit in the cached rows, batched or one at a time."""
    rng = np.random.default_rng(5)
    A = rng.normal(size=(90, 7)) * (rng.random((90, 7)) < 0.6)
    X = as_chunk(A, np.ones(90))
    kernel = Kernel(code, 0.4, 3, 0.5).resolved(7)
    batched = KernelCache(X, kernel, 1, max_batch=90, n_features=7)
    whole = batched.rows(np.arange(90))
    np.testing.assert_array_equal(whole, whole.T)
    single = KernelCache(X, kernel, 1, max_batch=1, n_features=7)
    np.testing.assert_array_equal(np.vstack([single.rows([j]) for j in range(90)]), whole)


def test_gather_block_symmetric_copy():
    """With the members' own rows, the symmetric copy gives the gathered block."""
    rng = np.random.default_rng(2)
    A = rng.normal(size=(120, 6)) * (rng.random((120, 6)) < 0.7)
    X = as_chunk(A, np.ones(120))
    cache = KernelCache(X, Kernel(RBF, 0.3), 1, max_batch=120, n_features=6)
    index = np.concatenate([np.arange(120), np.arange(120)]).astype(np.int64)
    ws = rng.permutation(240)[:70].astype(np.int64)
    slots = np.empty(70, np.int64)
    fetch(index[ws], *cache.args(), slots)
    ws2 = np.concatenate([ws[35:], rng.permutation(np.setdiff1d(np.arange(240), ws))[:35]]).astype(np.int64)
    slots2 = np.empty(70, np.int64)
    fetch(index[ws2], *cache.args(), slots2)
    for f in (KB.gather_block, KB.gather_block_serial):
        Kws = np.empty((70, 70), np.float32)
        f(ws, index, slots, cache.M, Kws, 0, True)
        np.testing.assert_array_equal(Kws, naive.gather_block(ws, index, slots, cache.M))
        f(ws2, index, slots2, cache.M, Kws, 35, True)      # half kept, as the rounds: a tile and a ragged one
        np.testing.assert_array_equal(Kws, naive.gather_block(ws2, index, slots2, cache.M))


@pytest.mark.parametrize("code", [RBF, 1, 0, 3])
def test_compute_block_equals_the_gathered_block(code):
    """compute_block's Kws (the new members' rows computed from the data, in
    chunks of D's width, 16 here for 70 members; the kept members' part
    moved and mirrored) holds the bits gathered from the cached rows, for
    every kernel, SVR's 2n variables, with and without kept members."""
    rng = np.random.default_rng(11)
    A = rng.normal(size=(120, 6)) * (rng.random((120, 6)) < 0.7)
    X = as_chunk(A, np.ones(120))
    cache = KernelCache(X, Kernel(code, 0.3, 3, 0.5).resolved(6), 1, max_batch=16, n_features=6)
    index = np.concatenate([np.arange(120), np.arange(120)]).astype(np.int64)
    ws = rng.permutation(240)[:70].astype(np.int64)
    ws2 = np.concatenate([ws[35:], rng.permutation(np.setdiff1d(np.arange(240), ws))[:35]]).astype(np.int64)
    scratch = (np.empty(70, np.int64), np.empty(70), np.empty(70, np.int64))
    for f in (KB.compute_block, KB.compute_block_serial):
        Kws = np.full((70, 70), np.nan, np.float32)
        for members, kept in ((ws, 0), (ws2, 35)):
            f(members, index, Kws, kept, *cache.args()[:9], cache.D, *scratch)
            slots = np.empty(70, np.int64)
            for lo in range(0, 70, 16):
                fetch(index[members[lo:lo + 16]], *cache.args(), slots[lo:lo + 16])
            np.testing.assert_array_equal(Kws.view(np.int32),
                                          naive.gather_block(members, index, slots, cache.M).view(np.int32))


@pytest.mark.parametrize("parallel", [False, True])
def test_computed_and_gathered_blocks_give_the_same_solve(parallel, monkeypatch):
    """A batched solve whose rounds compute the block (as on long data of
    short rows, ``computes_block``) takes the same steps to the same alpha,
    bit for bit, as one whose rounds gather it: with the serial kernels
    (this small set) and with the parallel ones."""
    if parallel:
        monkeypatch.setattr(opts, "PARALLEL_MIN_NNZ", 1)
    A, y = _problem(4, n=900, d=4)
    X = as_chunk(A, y)
    params = TrainParams(solver="smo", cache_mb=1, eps=1e-3)
    kernel = Kernel(RBF, 2.0).resolved(4)
    solved = {}
    for computed in (False, True):
        monkeypatch.setattr(smo_batched, "computes_block", lambda X, cache, c=computed: c)
        alpha, rho, res = smo_batched.solve(X, y, np.full(900, 10.0), np.full(900, -1.0), kernel, params, 64)
        solved[computed] = (alpha, rho, res.n_iter)
        assert res.info["rounds"] > 3
    np.testing.assert_array_equal(solved[True][0], solved[False][0])
    assert solved[True][1:] == solved[False][1:]


def test_computed_blocks_under_cross_validation_threads(monkeypatch):
    """-v's fold threads share one filled kernel cache (its dense scratch
    D included): a round that computes its block writes its own scratch,
    never the cache's, and two threads give one thread's predictions."""
    monkeypatch.setattr(smo_batched, "computes_block", lambda X, cache: True)
    monkeypatch.setattr(opts, "PARALLEL_MIN_NNZ", 1)
    A, y = _problem(8, n=1200, d=4)
    data = as_chunk(A, y)
    cache = KernelCache(data, Kernel(RBF, 2.0).resolved(4), 10, max_batch=16, n_features=4)
    blk = smo_batched._Block(data, 1200, 64, 16, cache, True, np.arange(1200))
    assert blk.block_args[9] is not cache.D and blk.block_args[9].shape == cache.D.shape
    fold = np.random.default_rng(0).permutation(1200) % 4
    splits = [(np.flatnonzero(fold != k), np.flatnonzero(fold == k), np.array([1.0, -1.0])) for k in range(4)]
    preds = []
    for threads in (1, 2):
        params = TrainParams(solver="smo", cache_mb=10, working_set=64, threads=threads, gamma=2.0, C=10.0)
        preds.append(smo_path.cross_val_predict(data, params, splits, 4))
    np.testing.assert_array_equal(preds[0], preds[1])


@pytest.mark.parametrize("task", ["c", "r"])
def test_demoting_unused_rows_keeps_the_solve(task, monkeypatch):
    """Rows of members leaving the working set at alpha 0 (no variable of
    their data row nonzero: SVR's twin checked) are evicted first: other
    rows computed (fewer here; how many fewer on the benchmark sets is in
    docs/solvers.md), the same alpha to the bit."""
    A, y = _problem(6, n=2500, d=4)
    X = as_chunk(A, y)
    params = TrainParams(solver="smo", cache_mb=300 * 4 * 2500 / 2**20, eps=1e-3)   # 300 rows
    kernel = Kernel(RBF, 2.0).resolved(4)
    if task == "r":
        z = A[:, 0] + 0.1 * A[:, 1]
        yy = np.concatenate([np.ones(2500), -np.ones(2500)])
        args = (X, yy, np.full(5000, 1.0), np.concatenate([0.1 - z, 0.1 + z]), kernel, params, 128)
        kw = {"index": np.concatenate([np.arange(2500), np.arange(2500)])}
    else:
        args = (X, y, np.full(2500, 10.0), np.full(2500, -1.0), kernel, params, 128)
        kw = {}
    solved = {}
    for demoting in (False, True):
        if not demoting:
            monkeypatch.setattr(smo_batched._Block, "demote_unused", lambda self, *a: None)
        else:
            monkeypatch.undo()
        alpha, rho, res = smo_batched.solve(*args, **kw)
        solved[demoting] = (alpha, rho, res.info["kernel_rows"])
    np.testing.assert_array_equal(solved[True][0], solved[False][0])
    assert solved[True][1] == solved[False][1]
    assert solved[True][2] != solved[False][2]          # (the demotion did act)


def test_a_demoted_row_is_evicted_first():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(40, 3))
    cache = KernelCache(as_chunk(A, np.ones(40)), Kernel(RBF, 0.5), 4 * 4 * 40 / 2**20, max_batch=4)
    assert cache.slots == 4
    slots = np.empty(4, np.int64)
    fetch(np.arange(4, dtype=np.int64), *cache.args(), slots)     # rows 0-3, all used at the same clock
    fetch(np.array([3, 1, 0], np.int64), *cache.args(), slots[:3])  # row 2 now the least recently used
    cache.demote([0])
    fetch(np.array([9], np.int64), *cache.args(), slots[:1])
    assert cache.slot_of[0] < 0 and (cache.slot_of[[1, 2, 3, 9]] >= 0).all()
    cache.demote([5, 1])                                             # (a row not cached is ignored)
    fetch(np.array([7], np.int64), *cache.args(), slots[:1])
    assert cache.slot_of[1] < 0 and (cache.slot_of[[2, 3, 9, 7]] >= 0).all()
    np.testing.assert_array_equal(cache.M[cache.slot_of[7]], cache.rows([7])[0])


def test_computes_block_where_rows_are_short_and_many():
    """The rule: long data of short rows (a9a's shape: 32,561 rows of 14
    values) computes; short data or long rows gather; a precomputed kernel
    never computes."""
    class Shape:
        def __init__(self, n_rows, nnz):
            self.n_rows, self.nnz = n_rows, nnz

    class Cache:
        def __init__(self, code):
            self.kernel = Kernel(code, 1.0)

    assert smo_batched.computes_block(Shape(32_561, 14 * 32_561), Cache(RBF))
    assert not smo_batched.computes_block(Shape(8_124, 21 * 8_124), Cache(RBF))          # mushrooms
    assert not smo_batched.computes_block(Shape(20_000, 13 * 20_000), Cache(RBF))
    assert not smo_batched.computes_block(Shape(50_000, 80 * 50_000), Cache(RBF))        # text
    assert not smo_batched.computes_block(Shape(50_000, 13 * 50_000), Cache(4))          # precomputed


@pytest.mark.parametrize("svr", [False, True])
def test_update_gradient_against_numpy(svr):
    rng, X, cache, js, slots = _cached_rows(1)
    n = X.n_rows
    index = (np.concatenate([np.arange(n), np.arange(n)]) if svr else np.arange(n)).astype(np.int64)
    nv = len(index)
    y = np.where(rng.random(nv) < 0.5, 1.0, -1.0)
    G = rng.normal(size=nv)
    coef = rng.normal(size=20)
    want = naive.update_gradient(G, y, index, cache.M, slots[:17], coef[:17])
    for f in (KB.update_gradient, KB.update_gradient_serial):
        out = G.copy()
        f(out, y, index, cache.M, slots, coef, 17, n)
        np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    # a shuffled index (not t mod n): the gathering branch
    perm = rng.permutation(nv).astype(np.int64) % n
    out = G.copy()
    KB.update_gradient(out, y, perm, cache.M, slots, coef, 17, n)
    np.testing.assert_allclose(out, naive.update_gradient(G, y, perm, cache.M, slots[:17], coef[:17]),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed, frac, cap", [(0, 0.1, 10000), (1, 0.0, 10000), (2, 0.1, 7)])
def test_inner_smo_against_numpy(seed, frac, cap):
    """The inner pair steps on a block: the same steps and alphas as the
    NumPy twin (started from a mid-run state: alpha != 0, G not -1)."""
    q = 30
    A, y = _problem(seed, n=q)
    C = np.where(y > 0, 2.0, 1.0)
    Kb = np.exp(-0.3 * ((A[:, None, :] - A[None, :, :]) ** 2).sum(-1)).astype(np.float32)
    rng = np.random.default_rng(seed)
    alpha = np.zeros(q)
    alpha[:q // 2] = 0.5                      # (feasible or not does not matter to the steps)
    G = y * (Kb.astype(np.float64) @ (y * alpha)) - 1.0 + 0.01 * rng.normal(size=q)
    QD = np.ones(q)
    ws = np.arange(q, dtype=np.int64)
    want_a, want_d, want_steps, want_first = naive.inner_smo(y, C, alpha, G, QD, Kb, 1e-3, frac, cap)
    a = alpha.copy()
    dcoef = np.zeros(q)
    steps, first = KB.inner_smo(y, C, a, G.copy(), QD, ws, Kb, 1e-3, frac, cap, np.zeros((6, q)),
                                np.arange(q, dtype=np.int64), dcoef)
    assert steps == want_steps and steps > 0
    assert first == pytest.approx(want_first, rel=1e-12)
    np.testing.assert_allclose(a, want_a, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(dcoef, want_d, rtol=1e-9, atol=1e-12)


def _solutions(X, y, C, kernel, eps, q):
    pair = smo.solve_binary(X, y, C, kernel, TrainParams(solver="smo", eps=eps, working_set=2))
    batched = smo.solve_binary(X, y, C, kernel, TrainParams(solver="smo", eps=eps, working_set=q))
    return pair, batched


def _same_solution(pair, batched, rel=1e-6):
    (a2, rho2, r2), (aq, rhoq, rq) = pair, batched
    assert r2.converged and rq.converged
    assert "rounds" in rq.info and "rounds" not in r2.info
    assert rq.info["rounds"] > 2                        # several rounds, each with real inner work
    assert rq.n_iter >= rq.info["rounds"]
    assert rq.info["obj"] == pytest.approx(r2.info["obj"], rel=rel)
    sv2, svq = a2 > 0, aq > 0
    assert np.count_nonzero(sv2 != svq) <= max(1, 0.01 * np.count_nonzero(sv2))
    return rho2, rhoq


def test_heart_scale_batched_equals_pair_steps():
    X = read_libsvm(bundled("heart_scale.xz"))
    y = np.where(X.labels > 0, 1.0, -1.0)
    kernel = Kernel(RBF, 0.5)
    for C in (1.0, 10.0):
        pair, batched = _solutions(X, y, np.full(X.n_rows, C), kernel, 1e-5, 32)
        rho2, rhoq = _same_solution(pair, batched)
        assert rhoq == pytest.approx(rho2, abs=1e-4)


def test_generated_set_batched_equals_pair_steps_and_predictions():
    """1,500 rows of 50 dense features (the parallel kernels), class weights:
    the same objective, support vectors and predictions as the pair steps."""
    rng = np.random.default_rng(5)
    A = rng.normal(size=(1500, 50))
    y = np.where(A[:, 0] * A[:, 1] + A[:, 2] + 0.3 * rng.normal(size=1500) > 0, 1.0, -1.0)
    data = as_chunk(A, y)
    kw = dict(solver="smo", C=5.0, gamma=0.02, eps=1e-5, class_weights={1.0: 2.0})
    pair = svmtrain.train(data, working_set=2, **kw)
    batched = svmtrain.train(data, working_set=256, **kw)
    r2, rq = pair.fit_results[0], batched.fit_results[0]
    assert rq.info["rounds"] > 2 and rq.info["working_set"] == 256
    assert rq.info["obj"] == pytest.approx(r2.info["obj"], rel=1e-6)
    assert abs(batched.n_sv - pair.n_sv) <= max(1, 0.01 * pair.n_sv)
    assert np.mean(batched.predict(data) == pair.predict(data)) >= 0.995
    T = rng.normal(size=(500, 50))
    assert np.mean(batched.predict(as_chunk(T, np.ones(500))) == pair.predict(as_chunk(T, np.ones(500)))) >= 0.995


def test_heart_scale_batched_against_libsvm():
    from libsvm import svmutil
    from reference import csr
    X = read_libsvm(bundled("heart_scale.xz"))
    m = svmutil.svm_train(X.labels.tolist(), csr(X, 13), "-c 10 -g 0.5 -e 1e-5 -q")
    ours = svmtrain.train(X, solver="smo", C=10.0, gamma=0.5, eps=1e-5, working_set=64)
    assert abs(ours.n_sv - m.get_nr_sv()) <= max(1, 0.01 * m.get_nr_sv())
    assert -ours.b[0] == pytest.approx(m.rho[0], abs=1e-4)
    p, _, _ = svmutil.svm_predict(X.labels.tolist(), csr(X, 13), m, "-q")
    assert np.mean(np.array(p) == ours.predict(X)) >= 0.995


def test_regression_and_one_class_batched_equal_pair_steps():
    X = read_libsvm(bundled("heart_scale.xz"))
    for kw in (dict(task="r", C=1.0, gamma=0.5, epsilon=0.1), dict(task="o", nu=0.3, gamma=0.2)):
        pair = svmtrain.train(X, solver="smo", eps=1e-5, working_set=2, **kw)
        batched = svmtrain.train(X, solver="smo", eps=1e-5, working_set=64, **kw)
        r2, rq = pair.fit_results[0], batched.fit_results[0]
        assert rq.converged and rq.info["rounds"] > 2
        assert rq.info["obj"] == pytest.approx(r2.info["obj"], rel=1e-6), kw
        assert abs(batched.n_sv - pair.n_sv) <= max(1, 0.01 * pair.n_sv), kw
        np.testing.assert_allclose(batched.decision_function(X), pair.decision_function(X), atol=1e-3)


def test_small_cache_falls_back_to_pair_steps():
    """A cache below MIN_Q rows cannot hold a working set: the pair steps run."""
    A, y = _problem(0)
    X = as_chunk(A, y)
    C = np.ones(len(y))
    kernel = Kernel(RBF, 0.5)
    tiny = 4 * len(y) * 3 / (1 << 20)            # three rows
    assert smo_batched.plan(len(y), len(y), 5, 64, tiny) == (0, 0)
    pair = smo.solve_binary(X, y, C, kernel, TrainParams(solver="smo", eps=1e-3, working_set=2, cache_mb=tiny))
    fallback = smo.solve_binary(X, y, C, kernel, TrainParams(solver="smo", eps=1e-3, working_set=64, cache_mb=tiny))
    assert "rounds" not in fallback[2].info and fallback[2].n_iter == pair[2].n_iter


def test_plan_clips_to_variables_and_cache():
    assert smo_batched.plan(100, 100, 5, 1024, 200.0)[0] == 100
    assert smo_batched.plan(101, 101, 5, 1024, 200.0)[0] == 100
    q, batch = smo_batched.plan(32561, 32561, 123, 2048, 200.0)
    assert q == (200 << 20) // (4 * 32561) // 2 * 2 and batch == smo_batched.ROWS_PER_FETCH


def test_default_working_set():
    p = TrainParams(solver="smo")
    assert smo.working_set_of(p, 270) == 2
    assert smo.working_set_of(TrainParams(solver="smo", working_set=512), 270) == 512
    if smo.BATCHED_MIN_VARS is not None:
        assert smo.working_set_of(p, smo.BATCHED_MIN_VARS) == smo.BATCHED_Q


def test_option_spelling_and_refusals(tmp_path):
    import lzma
    train = tmp_path / "heart"
    train.write_bytes(lzma.open(bundled("heart_scale.xz")).read())
    res = CliRunner().invoke(train_main, ["-s", "smo", "-c", "10", "-g", "0.5", "--working-set", "64",
                                          str(train), str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    assert "obj = -190.86" in res.output
    with pytest.raises(ParameterError, match="--working-set"):
        svmtrain.train(read_libsvm(bundled("heart_scale.xz")), solver="dcd", working_set=64)
    with pytest.raises(ParameterError, match="--working-set"):
        svmtrain.train(read_libsvm(bundled("heart_scale.xz")), solver="smo", working_set=1)
