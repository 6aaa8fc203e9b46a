"""--grid -s smo: the warm-started C path of each gamma and fold
(svmtrain/solvers/kernel/smo_path.py), its shared kernel, and its tasks
(local workers, Dask) in svmtrain/selection/grid_search.py."""
import dataclasses

import numpy as np
import pytest

from conftest import scaled_svmguide1, three_classes
from svmtrain.data.dataset import take_rows
from svmtrain.mercer.cache import KernelCache
from svmtrain.params import TrainParams
from svmtrain.selection.grid_search import grid_points, search_grid, warm_path
from svmtrain.solvers.kernel import _smo_kernels as K
from svmtrain.solvers.kernel import smo
from svmtrain.solvers.kernel.smo_dual import DualPoint
from svmtrain.solvers.kernel.smo_path import FoldScores, fold_correct, rows_kernel
from svmtrain.training.train import fold_assignment, label_order, train

SMO = TrainParams(solver="smo", kernel_type=2)


@pytest.fixture(scope="module")
def guide():
    return scaled_svmguide1(4)


def _warm_and_cold(data, params, log2g, log2cs, folds=3, shared=False):
    """[(warm counts, cold counts)] per fold: the C path's right predictions
    at each C (``shared``: on the kernel matrix of all rows, else the
    fold's own), and those of cold models trained at that C on the same rows."""
    params = dataclasses.replace(params, gamma=2.0 ** log2g)
    fold_of = fold_assignment(data, params, folds)
    every = rows_kernel(data, params, data.n_features) if shared else None
    assert (every is not None) == shared
    out = []
    for k in range(folds):
        tr, te = np.flatnonzero(fold_of != k), np.flatnonzero(fold_of == k)
        warm = fold_correct(data, tr, te, params, [2.0 ** c for c in log2cs], data.n_features,
                            label_order(data.labels[tr]), every)
        test = take_rows(data, te)
        cold = [int(np.count_nonzero(train(take_rows(data, tr), dataclasses.replace(params, C=2.0 ** c),
                                           n_features=data.n_features).predict(test) == test.labels))
                for c in log2cs]
        out.append((list(warm), cold))
    return out


@pytest.mark.parametrize("log2g, shared", [(-5.0, False), (-1.0, True), (1.0, False), (1.0, True)])
def test_warm_started_points_equal_cold_ones(heart, log2g, shared):
    """Each C of the path (visited out of order here) predicts what a cold run at that C predicts."""
    for warm, cold in _warm_and_cold(heart, SMO, log2g, [3.0, -3.0, 1.0, 7.0, -1.0, 5.0], shared=shared):
        assert warm == cold


def test_warm_started_points_equal_cold_ones_one_vs_one_and_weights(heart):
    """Three classes (three pairs, each warm-started on its own) and a class weight (-w 2 3)."""
    params = dataclasses.replace(SMO, class_weights={2.0: 3.0})
    for warm, cold in _warm_and_cold(three_classes(heart), params, -3.0, [-1.0, 2.0, 5.0], shared=True):
        assert warm == cold


def test_warm_started_points_equal_cold_ones_svmguide1(guide):
    """svmguide1's rows at gamma 2 up to C = 2^13, where the path saves most steps."""
    for warm, cold in _warm_and_cold(guide, SMO, 1.0, [-3.0, 3.0, 9.0, 13.0], folds=2, shared=True):
        assert warm == cold


def test_rescaled_point_keeps_the_exact_gradient(heart):
    """DualPoint.rescaled: r alpha, G = p + r (G - p) and r G_bar are what the
    solver computes from scratch (initial_gradient) at the scaled alpha."""
    X = take_rows(heart, np.arange(150))
    y = np.where(X.labels > 0, 1.0, -1.0)
    params = dataclasses.replace(SMO, gamma=0.25, eps=0.001)
    kernel = smo.kernel_of(params, X.n_features)
    point = DualPoint()
    lin = np.full(len(y), -1.0)
    smo.solve(X, y, np.full(len(y), 2.0), lin, kernel, params, point=point)
    start = point.rescaled(np.full(len(y), 2.0), np.full(len(y), 8.0), lin)
    assert np.array_equal(start.alpha, 4.0 * point.alpha) and np.all(start.alpha <= 8.0)
    cache = KernelCache(X, kernel, 10)
    G, G_bar = lin.copy(), np.zeros(len(y))
    K.initial_gradient_serial(y, np.full(len(y), 8.0), lin, np.arange(len(y)), start.alpha, G, G_bar, *cache.args())
    assert np.allclose(start.G, G, rtol=1e-9, atol=1e-9) and np.allclose(start.G_bar, G_bar, rtol=1e-9, atol=1e-9)


def test_filled_cache_holds_the_rows_fetched_one_by_one(heart):
    kernel = smo.kernel_of(dataclasses.replace(SMO, gamma=0.3), heart.n_features)
    full = KernelCache(heart, kernel, 64, max_batch=64)
    full.fill()
    assert full.full and full.misses == heart.n_rows
    one = KernelCache(heart, kernel, 64, max_batch=1)
    for j in range(0, heart.n_rows, 7):
        assert np.array_equal(full.M[full.slot_of[j]], one.rows([j])[0])


def test_test_scores_block_and_columns_agree(heart):
    """FoldScores with the whole test block and without (support vectors' columns at each call)."""
    X, T = take_rows(heart, np.arange(200)), take_rows(heart, np.arange(200, 270))
    kernel = smo.kernel_of(dataclasses.replace(SMO, gamma=0.1), heart.n_features)
    sq = KernelCache(X, kernel, 1).sq
    block, columns = FoldScores(kernel, T, X, sq, 64), FoldScores(kernel, T, X, sq, 0)
    assert block.block is not None and columns.block is None
    for rows in (np.arange(0, 200, 2), np.arange(200)):        # few and many support vectors
        coef = np.where(np.arange(len(rows)) % 3 == 0, 0.0, np.linspace(-1.0, 1.0, len(rows)))
        assert np.allclose(block.scores(rows, coef, 0.5), columns.scores(rows, coef, 0.5), rtol=1e-12, atol=1e-12)


def test_smo_takes_the_path_other_kernel_solvers_do_not(heart):
    assert warm_path(SMO, heart)
    assert not warm_path(TrainParams(solver="asset", kernel_type=2), heart)
    assert not warm_path(SMO, dataclasses.replace(heart, weights=np.ones(heart.n_rows)))


def _rows(result):
    return [(p.log2c, p.log2g, p.rate) for p in result.points]


def test_jobs_do_not_change_the_smo_grid(heart):
    c, g = [-1.0, 1.0, 3.0], [-3.0, -1.0]
    one = search_grid(heart, SMO, c, g, folds=3, jobs=1)
    two = search_grid(heart, SMO, c, g, folds=3, jobs=2)
    assert _rows(one) == _rows(two)
    assert [(p.log2c, p.log2g) for p in one.points] == grid_points(c, g)


def test_a_null_axis_searches_the_other(heart):
    """-log2c null: gamma alone at the given C; -log2g null: C alone at the given gamma."""
    only_g = search_grid(heart, dataclasses.replace(SMO, C=2.0), None, [-3.0, -1.0], folds=3, jobs=1)
    only_c = search_grid(heart, dataclasses.replace(SMO, gamma=0.125), [-1.0, 1.0], None, folds=3, jobs=1)
    both = {(p.log2c, p.log2g): p.rate for p in search_grid(heart, SMO, [-1.0, 1.0], [-3.0, -1.0], folds=3,
                                                             jobs=1).points}
    assert [p.rate for p in only_g.points] == [both[(1.0, -1.0)], both[(1.0, -3.0)]]
    assert [p.rate for p in only_c.points] == [both[(1.0, -3.0)], both[(-1.0, -3.0)]]


def test_dask_grid_equals_local(heart):
    distributed = pytest.importorskip("distributed")
    c, g = [-1.0, 1.0], [-3.0, -1.0]
    local = search_grid(heart, SMO, c, g, folds=3, jobs=1)
    cold_local = search_grid(heart, TrainParams(solver="asset", kernel_type=2, dim=16), c, g[:1], folds=3, jobs=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as lc, \
            distributed.Client(lc, set_as_default=False) as client:
        on_dask = search_grid(heart, SMO, c, g, folds=3, client=client)
        cold_dask = search_grid(heart, TrainParams(solver="asset", kernel_type=2, dim=16), c, g[:1], folds=3,
                                client=client)
    assert _rows(on_dask) == _rows(local)
    assert _rows(cold_dask) == _rows(cold_local)


def _binary(data, rows):
    X = take_rows(data, rows)
    return X, np.where(X.labels > 0, 1.0, -1.0)


@pytest.mark.parametrize("log2c", [-1.0, 3.0, 7.0])
def test_a_filled_cache_runs_libsvms_steps(heart, log2c):
    """With every row resident the pair steps run compact throughout and keep
    their rows across epochs: the same steps, the same alphas to the bit."""
    X, y = _binary(heart, np.arange(heart.n_rows))
    params = dataclasses.replace(SMO, gamma=0.5, eps=0.001)
    kernel = smo.kernel_of(params, X.n_features)
    C, lin = np.full(len(y), 2.0 ** log2c), np.full(len(y), -1.0)
    cold = smo.solve(X, y, C, lin, kernel, params)
    cache = KernelCache(X, kernel, 64, max_batch=64)
    cache.fill()
    whole = smo.solve(X, y, C, lin, kernel, params, cache=cache)
    assert whole[2].n_iter == cold[2].n_iter and np.array_equal(whole[0], cold[0]) and whole[1] == cold[1]


def numpy_newton_face(y, C, alpha, G, G_bar, Kf, active, max_rounds):
    """newton_face in NumPy: the Newton step of the free active variables on
    their face, the longest step inside the box, the blocking variable out, again."""
    alpha, G, G_bar = alpha.copy(), G.copy(), G_bar.copy()
    face = [t for t in active if K.FACE_TOL * C[t] < alpha[t] < (1 - K.FACE_TOL) * C[t]]
    for _ in range(max_rounds):
        if not face:
            break
        F = np.array(face)
        A = np.block([[Kf[np.ix_(F, F)], np.ones((len(F), 1))], [np.ones((1, len(F))), np.zeros((1, 1))]])
        u = np.linalg.solve(A, np.r_[-y[F] * G[F], 0.0])[:-1]
        d = y[F] * u
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(d > 0, (C[F] - alpha[F]) / d, np.where(d < 0, -alpha[F] / d, np.inf))
        block = int(np.argmin(room)) if room.min() < 1.0 else -1
        new = alpha[F] + min(1.0, room.min()) * d
        if block >= 0:
            new[block] = C[F[block]] if d[block] > 0 else 0.0
        G[active] += y[active] * (Kf[np.ix_(active, F)] @ (y[F] * (new - alpha[F])))
        alpha[F] = new
        if block < 0:
            break
        if alpha[F[block]] >= C[F[block]]:
            G_bar += y * Kf[:, F[block]] * C[F[block]] * y[F[block]]
        face.remove(F[block])
    return alpha, G, G_bar



def test_newton_face_is_numpys_and_lowers_the_dual(heart):
    """From a point the pair steps left part way (max_iter), the kernel's
    Newton rounds equal the NumPy statement, keep alpha feasible and
    lower the dual."""
    X, y = _binary(heart, np.arange(200))
    params = dataclasses.replace(SMO, gamma=0.25, eps=0.001, max_iter=300)
    kernel = smo.kernel_of(params, X.n_features)
    cache = KernelCache(X, kernel, 64, max_batch=64)
    cache.fill()
    C, lin = np.full(len(y), 16.0), np.full(len(y), -1.0)
    point = DualPoint()
    smo.solve(X, y, C, lin, kernel, params, cache=cache, point=point)
    alpha, G, G_bar = point.alpha.copy(), np.zeros(len(y)), np.zeros(len(y))
    K.initial_gradient_serial(y, C, lin, np.arange(len(y)), alpha, G, G_bar, *cache.args())
    Kf = cache.M[cache.slot_of].astype(np.float64)
    active = np.arange(len(y))
    want = numpy_newton_face(y, C, alpha, G, G_bar, Kf, active, 5)
    k = 200
    scratch = (np.zeros((k, k)), np.zeros(k, np.int64), np.zeros(k), np.zeros(k), np.zeros(k))
    rounds = K.newton_face(y, C, alpha, G, G_bar, np.arange(len(y)), active, len(y), cache.M, cache.slot_of,
                           k, 5, 10 ** 9, *scratch)
    assert rounds >= 1
    for got, exp in zip((alpha, G, G_bar), want):
        assert np.allclose(got, exp, rtol=1e-8, atol=1e-8 * np.abs(exp).max())
    assert abs(y @ alpha) < 1e-9 * C[0] and np.all((alpha >= 0) & (alpha <= C))
    before = 0.5 * point.alpha @ (Kf * np.outer(y, y)) @ point.alpha - point.alpha.sum()
    after = 0.5 * alpha @ (Kf * np.outer(y, y)) @ alpha - alpha.sum()
    assert after < before


def test_newton_face_respects_its_limits(heart):
    """No free variable, max_free 0, or a budget below one round: nothing moves."""
    X, y = _binary(heart, np.arange(60))
    kernel = smo.kernel_of(dataclasses.replace(SMO, gamma=0.25), X.n_features)
    cache = KernelCache(X, kernel, 8, max_batch=64)
    cache.fill()
    C = np.full(len(y), 1.0)
    alpha = np.where(np.arange(len(y)) % 2 == 0, 0.5, 0.0)       # 30 free variables
    scratch = (np.zeros((60, 60)), np.zeros(60, np.int64), np.zeros(60), np.zeros(60), np.zeros(60))
    G, G_bar = np.ones(len(y)), np.zeros(len(y))
    act = np.arange(len(y))
    for max_free, budget in ((0, 10 ** 9), (60, 1), (5, 10 ** 9)):
        a = alpha.copy()
        assert K.newton_face(y, C, a, G, G_bar, act, act, len(y), cache.M, cache.slot_of, max_free, 5, budget,
                             *scratch) == 0
        assert np.array_equal(a, alpha)
