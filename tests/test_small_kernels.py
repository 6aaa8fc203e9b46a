"""The small hand-written numba kernels that replace numba's np.argsort and
np.linalg (cheaper to compile), and the serial twins of parallel kernels,
each against a plain NumPy twin."""
import numpy as np
import pytest

from conftest import bundled
from svmtrain._numba._linalg_kernels import lu_solve
from svmtrain._numba._sort_kernels import argsort_range
from svmtrain.io.reader import read_libsvm
from svmtrain.models.linear import LinearModel, _decision_values_parallel, _decision_values_serial
from svmtrain.solvers._common import margins_parallel, margins_serial


# ------------------------------------------------------------------ argsort
@pytest.mark.parametrize("n", [0, 1, 2, 5, 16, 17, 100, 1000, 5000])
@pytest.mark.parametrize("kind", ["random", "sorted", "reversed", "few-values"])
def test_argsort_range_sorts_like_numpy(n, kind):
    rng = np.random.default_rng(n)
    if kind == "random":
        keys = rng.standard_normal(n + 7)
    elif kind == "sorted":
        keys = np.sort(rng.standard_normal(n + 7))
    elif kind == "reversed":
        keys = np.sort(rng.standard_normal(n + 7))[::-1].copy()
    else:
        keys = rng.integers(0, 4, n + 7).astype(np.float64)
    lo, hi = 3, 3 + n
    perm = np.full(n + 2, -1, np.int64)
    argsort_range(keys, lo, hi, perm)
    p = perm[:n]
    assert sorted(p.tolist()) == list(range(n))            # a permutation
    np.testing.assert_array_equal(keys[lo:hi][p], np.sort(keys[lo:hi]))
    if kind != "few-values":                                # distinct keys: the same permutation
        np.testing.assert_array_equal(p, np.argsort(keys[lo:hi], kind="stable"))
    assert (perm[n:] == -1).all()                           # nothing written past hi - lo


def test_argsort_range_int32_keys_are_deterministic():
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 50, 300).astype(np.int32)
    a = np.empty(300, np.int64)
    b = np.empty(300, np.int64)
    argsort_range(keys, 0, 300, a)
    argsort_range(keys.copy(), 0, 300, b)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(keys[a], np.sort(keys))


# ---------------------------------------------------------------- LU solve
@pytest.mark.parametrize("n", [1, 2, 3, 8, 30])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lu_solve_matches_numpy_on_well_conditioned_systems(n, seed):
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((n, n)) + n * np.eye(n)
    r = rng.standard_normal(n)
    M0, r0 = M.copy(), r.copy()
    full, x = lu_solve(M, r, 0.0)
    assert full
    np.testing.assert_allclose(x, np.linalg.solve(M, r), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(M, M0)                    # inputs untouched
    np.testing.assert_array_equal(r, r0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lu_solve_on_symmetric_kkt_systems(seed):
    # the QP's face systems: [H 1; 1' 0] with H a Gram matrix of nearly parallel cuts
    rng = np.random.default_rng(seed)
    k, d = 6, 20
    A = rng.standard_normal(d) + 1e-3 * rng.standard_normal((k, d))
    H = A @ A.T
    M = np.zeros((k + 1, k + 1))
    M[:k, :k] = H
    M[:k, k] = M[k, :k] = 1.0
    r = np.append(rng.standard_normal(k), 1.0)
    full, x = lu_solve(M, r, 0.0)
    assert full
    ref = np.linalg.solve(M, r)
    cond = np.linalg.cond(M)
    assert np.linalg.norm(x - ref) <= 1e-14 * cond * np.linalg.norm(ref) + 1e-12
    assert np.linalg.norm(M @ x - r) <= 1e-10 * np.linalg.norm(r) * max(1.0, np.abs(M).max())


@pytest.mark.parametrize("seed", [0, 1])
def test_lu_solve_near_singular_agrees_with_numpy_up_to_conditioning(seed):
    rng = np.random.default_rng(seed)
    n = 10
    U, _ = np.linalg.qr(rng.standard_normal((n, n)))
    V, _ = np.linalg.qr(rng.standard_normal((n, n)))
    s = np.logspace(0, -9, n)
    M = U @ np.diag(s) @ V.T
    x_true = rng.standard_normal(n)
    r = M @ x_true
    full, x = lu_solve(M, r, 0.0)
    assert full
    ref = np.linalg.solve(M, r)
    # both are backward stable: small residuals, forward errors of order cond * eps
    assert np.linalg.norm(M @ x - r) <= 1e-12 * np.linalg.norm(r)
    cond = s[0] / s[-1]
    assert np.linalg.norm(x - ref) <= 1e3 * cond * np.finfo(float).eps * np.linalg.norm(ref)


def test_lu_solve_rank_deficient_gives_a_basic_solution_of_a_consistent_system():
    rng = np.random.default_rng(3)
    B = rng.standard_normal((7, 4))
    M = B @ B.T                                             # 7x7 of rank 4
    r = M @ rng.standard_normal(7)                          # consistent
    full, x = lu_solve(M, r, 1e-13)
    assert not full
    assert np.isfinite(x).all()
    assert (x == 0.0).sum() == 3                            # the dropped unknowns
    np.testing.assert_allclose(M @ x, r, rtol=1e-9, atol=1e-9)
    # an exactly singular matrix with rcond = 0: flagged, never an exception
    S = np.zeros((3, 3))
    S[0, 0] = 2.0
    full, x = lu_solve(S, np.array([4.0, 0.0, 0.0]), 0.0)
    assert not full
    np.testing.assert_array_equal(x, [2.0, 0.0, 0.0])


def test_lu_solve_nan_does_not_raise():
    M = np.array([[np.nan, 1.0], [1.0, 2.0]])
    full, x = lu_solve(M, np.ones(2), 0.0)
    assert x.shape == (2,)


# ------------------------------------------------ serial twins of parallel kernels
def test_margins_serial_equals_parallel():
    X = read_libsvm(bundled("heart_scale.xz"))
    w = np.random.default_rng(0).standard_normal(X.n_features + 1)
    a = margins_serial(X.indptr, X.indices, X.values, w, 1.0, 0.25, np.empty(X.n_rows))
    b = margins_parallel(X.indptr, X.indices, X.values, w, 1.0, 0.25, np.empty(X.n_rows))
    np.testing.assert_array_equal(a, b)
    D = np.zeros((X.n_rows, X.n_features))
    for i in range(X.n_rows):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        D[i, X.indices[lo:hi]] = X.values[lo:hi]
    np.testing.assert_allclose(a, D @ w[:-1] + w[-1] + 0.25, rtol=1e-12, atol=1e-12)


def test_margins_numpy_and_loss_terms_match_the_kernels():
    """The NumPy objective of small data (margins_numpy, loss_terms_sum) against
    the kernels: empty first, middle and last rows, a CSR view whose indptr
    does not start at 0, a constant feature, weights, every loss."""
    from svmtrain.solvers._common import loss_terms_sum, margins_numpy, score_loss_sum
    rng = np.random.default_rng(3)
    counts = np.array([0, 3, 5, 0, 1, 7, 0, 2, 0])
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64) + 4      # a view: starts at 4
    nnz = int(counts.sum())
    indices = np.concatenate([np.sort(rng.choice(10, c, replace=False)) for c in counts]).astype(np.int32)
    indices = np.concatenate([np.zeros(4, np.int32), indices])
    values = np.concatenate([np.full(4, 99.0), rng.standard_normal(nnz)])
    w = rng.standard_normal(11)
    want = margins_serial(indptr, indices, values, w, 0.5, -0.3, np.empty(len(counts)))
    got = margins_numpy(indptr, indices, values, w, 0.5, -0.3)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    assert got[0] == got[3] == got[-1] == 0.5 * w[-1] - 0.3        # empty rows: the constant terms
    assert len(margins_numpy(np.zeros(1, np.int64), indices, values, w, 1.0, 0.0)) == 0
    y = np.where(rng.random(len(counts)) < 0.5, 1.0, -1.0)
    weights = rng.random(len(counts)) + 0.5
    for loss in ("hinge", "squared-hinge", "log", "epsilon-insensitive", "squared-epsilon-insensitive"):
        for wt in (None, weights):
            assert loss_terms_sum(y, want, loss, 0.1, wt) == pytest.approx(score_loss_sum(y, want, loss, 0.1, wt),
                                                                          rel=1e-13)
    m = np.maximum(1.0 - y * want, 0.0)
    assert loss_terms_sum(y, want, "hinge") == pytest.approx(m.sum(), rel=1e-15)


def test_primal_objective_small_and_large_paths_agree(monkeypatch):
    """primal_objective's NumPy path (below NUMPY_MAX_NNZ stored values) and its kernel path."""
    from svmtrain._numba import options as _numba_options
    from svmtrain.solvers._common import primal_objective
    X = read_libsvm(bundled("heart_scale.xz"))
    y = np.where(X.labels > 0, 1.0, -1.0)
    w = np.random.default_rng(4).standard_normal(X.n_features + 1) * 0.1
    for loss in ("hinge", "squared-hinge", "log"):
        small = primal_objective(X, y, w, 1.0, 0.2, 0.01, loss)
        monkeypatch.setattr(_numba_options, "NUMPY_MAX_NNZ", 0)
        large = primal_objective(X, y, w, 1.0, 0.2, 0.01, loss)
        monkeypatch.undo()
        assert small == pytest.approx(large, rel=1e-13)


@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_decision_values_serial_equals_parallel_and_numpy(bias):
    X = read_libsvm(bundled("heart_scale.xz"))
    d = X.n_features - 2                                    # features beyond the model are ignored
    rows = d + 1 if bias >= 0 else d
    W = np.random.default_rng(1).standard_normal((rows, 3))
    b = np.array([0.1, -0.2, 0.3])
    args = (X.indptr, X.indices, X.values, W, d, max(bias, 0.0), bias >= 0, b)
    a = _decision_values_serial(*args, np.empty((X.n_rows, 3)))
    p = _decision_values_parallel(*args, np.empty((X.n_rows, 3)))
    np.testing.assert_array_equal(a, p)
    D = np.zeros((X.n_rows, d))
    for i in range(X.n_rows):
        for q in range(X.indptr[i], X.indptr[i + 1]):
            if X.indices[q] < d:
                D[i, X.indices[q]] = X.values[q]
    ref = D @ W[:d] + b + (W[d] if bias >= 0 else 0.0)
    np.testing.assert_allclose(a, ref, rtol=1e-12, atol=1e-12)
    model = LinearModel(labels=np.array([1.0, 2.0, 3.0]), W=W, n_features=d, bias=bias, b=b, solver="dcd")
    np.testing.assert_array_equal(model.decision_function(X), a)


def test_dense_and_map_kernels_serial_equal_parallel(monkeypatch):
    """Each kernel with a serial twin gives the same numbers with the
    parallel twin (forced by thresholds of 0)."""
    from svmtrain._numba import options as opts
    from svmtrain.mercer import functions as kernels
    from svmtrain.mercer._feature_map_kernels import fourier_rows, landmark_kernel_rows
    from svmtrain.solvers.asset import _asset_kernels as KA
    rng = np.random.default_rng(5)
    X = read_libsvm(bundled("heart_scale.xz"))
    n, d = X.n_rows, X.n_features
    F = rng.standard_normal((n, 40)).astype(np.float32)
    w = rng.standard_normal(41)
    rows = np.arange(n, dtype=np.int64)[::-1].copy()
    omega = rng.standard_normal((d, 24))
    phases = rng.uniform(0, 2 * np.pi, 24)
    L = rng.standard_normal((d, 9))               # landmarks stored by feature (all features dense)
    F_ptr = np.arange(0, d * 9 + 1, 9, dtype=np.int64)
    F_landmark = np.tile(np.arange(9, dtype=np.int64), d)
    F_values = L.ravel().copy()
    L_sq = (L * L).sum(0)
    sq = kernels.sq_norms(X.indptr, X.values)
    dense = rng.standard_normal((d, 7))

    def run():
        out = {}
        out["margins"] = KA.feature_margins(F, w, 0.5, 0.1, np.empty(n))
        out["sqnorms"] = KA.row_sqnorms(F)
        out["fourier32"] = fourier_rows(X.indptr, X.indices, X.values, rows, omega, phases, 0.3,
                                        np.empty((n, 24), np.float32))
        out["fourier64"] = fourier_rows(X.indptr, X.indices, X.values, rows, omega, phases, 0.3, np.empty((n, 24)))
        out["landmarks"] = landmark_kernel_rows(X.indptr, X.indices, X.values, rows, F_ptr, F_landmark, F_values,
                                                L_sq, kernels.RBF, 0.2, 3, 0.0, np.empty((n, 9)))
        out["block"] = kernels._block(X.indptr, X.indices, X.values, sq, dense, (dense * dense).sum(0), d,
                                      kernels.RBF, 0.2, 3, 0.0, np.empty((n, 7)))
        return out

    serial = run()
    monkeypatch.setattr(opts, "PARALLEL_MIN_WORK", 0)
    monkeypatch.setattr(opts, "PARALLEL_MIN_NNZ", 0)
    parallel = run()
    for key in serial:
        np.testing.assert_array_equal(serial[key], parallel[key], err_msg=key)
    # and against NumPy
    np.testing.assert_allclose(serial["margins"], F.astype(np.float64) @ w[:40] + 0.5 * w[40] + 0.1, rtol=1e-5)
    np.testing.assert_allclose(serial["sqnorms"], (F.astype(np.float64) ** 2).sum(1), rtol=1e-5)
    D = np.zeros((n, d))
    for i in range(n):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        D[i, X.indices[lo:hi]] = X.values[lo:hi]
    np.testing.assert_allclose(serial["fourier64"], 0.3 * np.cos(D[rows] @ omega + phases), atol=1e-8)
    d2 = sq[rows][:, None] + L_sq[None, :] - 2 * D[rows] @ L
    np.testing.assert_allclose(serial["landmarks"], np.exp(-0.2 * np.maximum(d2, 0)), rtol=1e-10, atol=1e-12)


def test_ocas_serial_twins_equal_the_parallel_kernels_on_one_block():
    """by_blocks runs a kernel's serial twin when nb == 1: the same numbers
    as the parallel kernel with nb == 1 (and the dispatcher picks them)."""
    from svmtrain.solvers.ocas import _ocas_kernels as K
    rng = np.random.default_rng(7)
    n, d = 300, 12
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    cw = rng.uniform(0.5, 2.0, n)
    out_b = rng.standard_normal(n)
    out_d = rng.standard_normal(n)
    prev = (rng.random(n) < 0.3).astype(np.int8)
    A = rng.standard_normal((5, d))
    alpha = np.array([0.2, 0.0, 0.5, 0.1, 0.0])
    X = read_libsvm(bundled("heart_scale.xz"))
    Xy = np.where(X.labels > 0, 1.0, -1.0)
    Xcw = np.ones(X.n_rows)
    Xviol = (rng.random(X.n_rows) < 0.4).astype(np.int8)
    Xprev = np.zeros(X.n_rows, np.int8)
    dd = X.n_features + 1

    def calls(f):
        """Each kernel's results (f picks the kernel variant); inputs copied."""
        r = {}
        ob, viol = out_b.copy(), np.zeros(n, np.int8)
        r["update"] = (f(K.update_outputs)(y, cw, ob, out_d, 0.3, 0.1, viol, prev, 1), ob, viol)
        r["loss"] = f(K.loss_at)(y, cw, out_b, out_d, 0.7, 1)
        r["scatter"] = f(K.scatter_cut)(X.indptr, X.indices, X.values, 1.0, Xy, Xcw, Xviol, Xprev, False, 1,
                                        np.empty((1, 1)), np.zeros(dd))
        AA, out = A.copy(), np.zeros(5)
        r["rows_dot"] = (f(K.rows_dot)(AA, 5, A[4].copy(), 1, out), out)
        w = A[0].copy()
        r["axpy"] = (f(K.axpy_sqnorm)(w, 0.5, A[1], 1), w)
        wc, wd = np.empty(d), np.empty(d)
        r["combine"] = (f(K.combine_cuts)(A, alpha, 5, A[3], wc, wd, 1), wc, wd)
        kb, wb = np.empty(n), np.empty(n)
        r["breakpoints"] = (f(K.breakpoints)(y, cw, out_b, out_d, -5.0, 1, kb, wb), kb, wb)
        kbits = kb.view(np.int64)
        r["hist"] = f(K._prefix_hist)(kbits, wb, 0, 64, 52, 2048, 1)
        key = int(kbits[np.isfinite(kb)][0] >> 40)
        r["gather"] = f(K.gather_prefix)(kb, wb, key, 40, 1)
        r["counts"] = f(K._prefix_counts)(kbits, key, 40, 1)
        return r

    def flat(v):
        return [np.asarray(x) for x in (v if isinstance(v, tuple) else (v,))]

    par = calls(lambda k: k.parallel)
    ser = calls(lambda k: k.serial)
    auto = calls(lambda k: k)
    for key in par:
        for a, b, c in zip(flat(par[key]), flat(ser[key]), flat(auto[key])):
            np.testing.assert_array_equal(a, b, err_msg=key)
            np.testing.assert_array_equal(a, c, err_msg=key)
    t_ser = K.line_search(y, cw, out_b, out_d, 2.0, -5.0, 1, np.empty(n), np.empty(n))
    t_par = K.line_search(y, cw, out_b, out_d, 2.0, -5.0, 2, np.empty(n), np.empty(n))
    # the same minimiser up to the order of the blocks' partial sums
    assert t_ser[1] == t_par[1]
    assert t_ser[0] == pytest.approx(t_par[0], rel=1e-12)


def test_by_blocks_runs_the_serial_twin_below_its_work_threshold(monkeypatch):
    """With a work estimate, by_blocks takes the serial twin on nb > 1 blocks
    when the call's work is below PARALLEL_MIN_PASS (no parallel code is even
    compiled) and the parallel kernel from it on; both give the same sums."""
    from numba import njit, prange
    from svmtrain._numba import options as opts

    @njit(parallel=opts.PRANGE)
    def block_sums(x, nb):
        part = np.zeros(nb)
        for blk in prange(nb):
            lo, hi = blk * x.shape[0] // nb, (blk + 1) * x.shape[0] // nb
            for i in range(lo, hi):
                part[blk] += x[i]
        return part

    run = opts.by_blocks(block_sums, 1, lambda args: 3 * args[0].shape[0])
    x = np.random.default_rng(1).standard_normal(1001)
    monkeypatch.setattr(opts, "PARALLEL_MIN_PASS", 3 * 1001 + 1)
    below = run(x, 2)
    assert run.serial.signatures and not run.parallel.signatures
    monkeypatch.setattr(opts, "PARALLEL_MIN_PASS", 3 * 1001)
    above = run(x, 2)
    assert run.parallel.signatures
    np.testing.assert_array_equal(below, above)
    np.testing.assert_allclose(below, [x[:500].sum(), x[500:].sum()], rtol=1e-12)


def _text_like(rows, features, seed, classes=2):
    """Rows of power-law word counts (the shape of issue 33's text), labels
    from a sparse linear rule with noise (``classes`` of them: -1/+1, or
    1..classes by quantiles of the rule's score; classes=0: the score plus 7
    as a regression target): a Chunk."""
    import scipy.sparse as sp
    from svmtrain.data.arrays import as_chunk
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, features + 1) ** 1.1
    lengths = rng.integers(5, 60, rows)
    cols = rng.choice(features, size=int(lengths.sum()), p=p / p.sum())
    M = sp.csr_matrix((np.ones(cols.shape[0]), (np.repeat(np.arange(rows), lengths), cols)), shape=(rows, features))
    M.sum_duplicates()
    w = rng.standard_normal(features) * (rng.random(features) < 0.2)
    score = M @ w + 0.3 * rng.standard_normal(rows)
    if classes == 0:                    # regression: targets far from 0, as real ones often are
        return as_chunk(M, 7.0 + score)
    if classes == 2:
        return as_chunk(M, np.where(score > 0, 1.0, -1.0))
    return as_chunk(M, 1.0 + np.searchsorted(np.quantile(score, np.arange(1, classes) / classes), score))


@pytest.mark.skipif(__import__("numba").config.NUMBA_NUM_THREADS < 2, reason="one thread: one block")
@pytest.mark.parametrize("shape,classes", [((3000, 400), 2), ((1500, 8000), 2), ((3000, 400), 4),
                                           ((3000, 400), 0)])
def test_ocas_on_two_blocks_is_the_same_below_and_above_the_work_threshold(shape, classes, monkeypatch):
    """An OCAS run on two blocks whose small passes take the serial twins
    (PARALLEL_MIN_PASS) trains the model every pass in parallel trains,
    number for number: sparse and dense cuts (3,000 x 400), the rows form
    turning dense (1,500 x 8,000), the line search, Crammer-Singer (4
    classes), regression (its two breakpoints a row)."""
    from svmtrain._numba import options as opts
    from svmtrain.params import TrainParams
    from svmtrain.solvers.ocas import ocas
    from svmtrain.training.train import train
    X = _text_like(*shape, seed=3, classes=classes)
    monkeypatch.setattr(ocas, "MIN_NNZ_PER_THREAD", 1)
    kw = {"multiclass": "cs"} if classes > 2 else {"task": "r"} if classes == 0 else {}

    def model_numbers():
        m = train(X, TrainParams(solver="ocas", threads=2, C=1.0, **kw))
        return m.fit_results[0].n_iter, [np.asarray(s, np.float64) for _, s in m.file_sections()
                                         if isinstance(s, np.ndarray)]

    monkeypatch.setattr(opts, "PARALLEL_MIN_PASS", 1 << 62)
    iters, serial = model_numbers()
    monkeypatch.setattr(opts, "PARALLEL_MIN_PASS", 0)
    iters_par, parallel = model_numbers()
    assert iters == iters_par > 5
    assert len(serial) == len(parallel) > 0
    for a, b in zip(serial, parallel):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kw", [{"solver": "sbp"}, {"solver": "pegasos", "kernel_type": 2, "epochs": 3},
                                {"solver": "asset", "dim": 64, "epochs": 2},
                                {"solver": "asset", "approx": "fourier", "dim": 64, "epochs": 2}])
def test_training_is_the_same_with_serial_and_parallel_twins(kw, monkeypatch):
    """Small data takes the serial twins; forcing the parallel ones (size
    thresholds 0) gives the same model, number for number."""
    from svmtrain._numba import options as opts
    from svmtrain.params import TrainParams
    from svmtrain.training.train import train
    X = read_libsvm(bundled("heart_scale.xz"))

    def model_numbers():
        m = train(X, TrainParams(**kw))
        return [np.asarray(s, np.float64) for _, s in m.file_sections() if isinstance(s, np.ndarray)]

    serial = model_numbers()
    monkeypatch.setattr(opts, "PARALLEL_MIN_WORK", 0)
    monkeypatch.setattr(opts, "PARALLEL_MIN_NNZ", 0)
    parallel = model_numbers()
    assert len(serial) == len(parallel) > 0
    for a, b in zip(serial, parallel):
        np.testing.assert_array_equal(a, b)


def test_reader_switches_to_the_sorting_parser_mid_range():
    """Rows before the first out-of-order row go through the non-sorting twin
    (parse_lines_presorted), the rest through parse_lines; the result is the
    plain-Python reference's, slow numbers and errors included."""
    import sys
    sys.path.insert(0, str(bundled("").parent.parent / "tests"))
    from naive_reader import NaiveError, naive_parse
    from svmtrain.errors import InputFormatError
    from svmtrain.io.reader import parse_bytes
    text = (b"1 1:0.5 4:1.00000000000000000001\n"
            b"-1 2:1 3:2\n"
            b"1 7:1 2:0.30000000000000004441 5:3\n"          # the first row out of order
            b"2 1:1e-320 9:9\n"
            b"-1 8:8 3:3 1:123456789012345678901\n")
    c = parse_bytes(text)
    labels, indptr, indices, values, qid = naive_parse(text)
    np.testing.assert_array_equal(c.labels, labels)
    np.testing.assert_array_equal(c.indptr, indptr)
    np.testing.assert_array_equal(c.indices, indices)
    np.testing.assert_array_equal(c.values, values)
    bad = text + b"1 6:1 2:2 6:3\n"                           # duplicate found by the sort
    with pytest.raises(NaiveError):
        naive_parse(bad)
    with pytest.raises(InputFormatError, match=r":6: duplicate feature index 6"):
        parse_bytes(bad)
