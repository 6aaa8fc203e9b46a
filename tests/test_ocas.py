"""Tests of ``-s ocas`` (svmtrain/solvers/ocas/ocas.py and _ocas_kernels.py).

Reference optimum: LIBLINEAR (liblinear-official) -s 3 (L2-regularised
hinge loss, dual CD) with -e 1e-6, its C-form primal objective computed
here from its w. -s 3 stops on a projected-gradient criterion, so its
objective is an upper bound on F* that can sit ~1e-4 above it; the tests
that need a tight bound on F* from below also use the dual value Q_D of a
high-accuracy OCAS run (a valid lower bound whatever the run did).
"""
import sys
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
import pytest
from liblinear import liblinearutil
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from svmtrain.data.dataset import Chunk
from svmtrain.errors import ParameterError
from svmtrain.io.reader import read_libsvm
from svmtrain.params import TrainParams
from svmtrain.solvers.ocas import _ocas_kernels as K
from svmtrain.solvers.ocas import ocas

import naive_ocas as N
from conftest import ROOT, bundled
from reference import reset_c_rand


@pytest.fixture(autouse=True)
def _parallel_kernels_on_small_arrays(monkeypatch):
    """This file's kernel tests call the kernels with nb > 1 on small arrays,
    which by_blocks would hand to the serial twins (PARALLEL_MIN_PASS): keep
    them on the parallel kernels, as they were written for (the serial
    twins' numbers are held to the parallel ones in test_small_kernels)."""
    from svmtrain._numba import options as opts
    monkeypatch.setattr(opts, "PARALLEL_MIN_PASS", 0)


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------
def _chunk_from_csr(M, labels):
    M = sp.csr_matrix(M)
    M.sort_indices()
    return Chunk(labels=np.asarray(labels, np.float64), indptr=M.indptr.astype(np.int64),
                 indices=M.indices.astype(np.int32), values=M.data.astype(np.float64),
                 qid=np.zeros(M.shape[0], np.int64))


def _csr(X, d):
    return sp.csr_matrix((X.values, X.indices, X.indptr), shape=(X.n_rows, d))


class Problem:
    def __init__(self, X, y, d):
        self.X, self.y, self.d = X, y, d
        self.M = _csr(X, d)
        self._ref = {}

    def primal(self, w, C=1.0, B=-1.0, cost=(1.0, 1.0)):
        """C-form primal F of an extended w (length d+1) or a plain w (length d)."""
        w = np.asarray(w, float)
        out = self.M @ w[:self.d]
        if len(w) > self.d:
            out = out + w[self.d] * max(B, 0.0)
        cw = np.where(self.y > 0, C * cost[0], C * cost[1])
        return 0.5 * w @ w + float(np.sum(cw * np.maximum(0.0, 1.0 - self.y * out)))

    def liblinear(self, C=1.0, B=-1.0, cost=(1.0, 1.0)):
        """(F_lib, w_ext) of LIBLINEAR -s 3 -e 1e-6 on this problem."""
        key = (C, B, cost)
        if key not in self._ref:
            opts = f"-s 3 -c {C} -e 1e-6 -q"
            if B >= 0:
                opts += f" -B {B}"
            if cost != (1.0, 1.0):
                opts += f" -w1 {cost[0]} -w-1 {cost[1]}"
            reset_c_rand()       # a reference independent of earlier tests
            m = liblinearutil.train(self.y, self.M, opts)
            w, b = m.get_decfun(m.get_labels().index(1))
            w_ext = np.r_[np.asarray(w, float), b / B if B > 0 else 0.0]
            self._ref[key] = (self.primal(w_ext, C, B, cost), w_ext)
        return self._ref[key]


@pytest.fixture(scope="module")
def a9a():
    X = read_libsvm(bundled("a9a.xz"))
    return Problem(X, np.where(X.labels > 0, 1.0, -1.0), 123)


@pytest.fixture(scope="module")
def a9a_test():
    return read_libsvm(bundled("a9a.t.xz"))


@pytest.fixture(scope="module")
def mushrooms():
    X = read_libsvm(bundled("mushrooms.xz"))
    return Problem(X, np.where(X.labels == 1, 1.0, -1.0), X.n_features)


@pytest.fixture(scope="module")
def synthetic():
    rng = np.random.default_rng(7)
    n, d = 2000, 500
    M = sp.random(n, d, density=0.02, random_state=np.random.RandomState(7), format="csr")
    M.data = rng.normal(size=M.nnz)
    w_true = rng.normal(size=d)
    y = np.where(M @ w_true + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return Problem(_chunk_from_csr(M, y), y, d)


def _fit(P, class_cost=(1.0, 1.0), **kw):
    kw.setdefault("C", 1.0)
    kw.setdefault("threads", 1)     # the test machine's cores are shared
    return ocas.fit(P.X, P.y, P.d, TrainParams(solver="ocas", **kw), class_cost=class_cost)


def _within_tolrel(F, F_upper, tol=0.01):
    """What svmocas's stopping rule guarantees: (F - F*) <= tol F, with F* <= F_upper."""
    return F * (1 - tol) <= F_upper * (1 + 1e-12)


def _check_history(res, F_upper, F_lower, slack=1e-9):
    """Q_D <= F* <= Q_P at every iteration, with F_lower <= F* <= F_upper."""
    for it, _, Q_P, Q_D in res.info["history"]:
        assert Q_D <= F_upper * (1 + slack), (it, Q_D, F_upper)
        assert Q_P >= F_lower * (1 - slack), (it, Q_P, F_lower)
    Q_P = [h[2] for h in res.info["history"]]
    assert all(b <= a * (1 + 1e-12) for a, b in zip(Q_P, Q_P[1:]))  # OCAS: monotone


# ---------------------------------------------------------------------------
# the solver on real and synthetic data
# ---------------------------------------------------------------------------
def test_a9a_objective_bounds_and_accuracy(a9a, a9a_test):
    F_lib, w_lib = a9a.liblinear()
    lines, prog = [], []
    res = ocas.fit(a9a.X, a9a.y, a9a.d, TrainParams(solver="ocas", C=1.0, threads=1),
                   progress=lambda d, t, status=None: prog.append((d, t)), log=lines.append)
    assert res.converged and res.info["exit"] == "TolRel"
    assert res.info["gap_rel"] <= 0.01
    F = a9a.primal(res.w)
    assert F == pytest.approx(res.info["Q_P"], rel=1e-10)
    assert _within_tolrel(F, F_lib)
    # lambda-form objective = F / (n C)
    assert res.objective == pytest.approx(F / a9a.X.n_rows, rel=1e-10)
    hi = _fit(a9a, eps=1e-5)
    assert hi.info["Q_D"] <= F_lib * (1 + 1e-9)
    assert F_lib - hi.info["Q_D"] <= 1e-3 * F_lib    # the two references agree
    _check_history(res, F_lib, hi.info["Q_D"])
    _check_history(hi, F_lib, hi.info["Q_D"])
    # the iteration log and progress
    assert len(lines) == res.n_iter + 1 and lines[0].startswith("   0:")
    assert "Q_P=" in lines[-1] and "nza=" in lines[-1] and "err=" in lines[-1]
    assert prog[-1] == (res.n_iter, ocas.DEFAULT_MAX_ITER)
    # test accuracy within 0.1 point of LIBLINEAR's
    T = _csr(a9a_test, 123)
    yt = np.where(a9a_test.labels > 0, 1.0, -1.0)
    acc = np.mean(np.where(T @ res.w > 0, 1.0, -1.0) == yt)
    acc_lib = np.mean(np.where(T @ w_lib[:123] > 0, 1.0, -1.0) == yt)
    assert abs(acc - acc_lib) <= 0.001


def test_mushrooms(mushrooms):
    F_lib, _ = mushrooms.liblinear()
    res = _fit(mushrooms)
    assert res.converged
    assert _within_tolrel(mushrooms.primal(res.w), F_lib)
    hi = _fit(mushrooms, eps=1e-5)
    _check_history(res, F_lib, hi.info["Q_D"])
    assert hi.info["Q_D"] <= F_lib * (1 + 1e-9)


def test_synthetic_with_bias(synthetic):
    # the two tighter runs (~280 cuts at 1e-4, ~420 at 1e-5: most of their time is in the
    # reduced QP's kernel, which releases the GIL; 1e-5 took 35 s each) are independent:
    # one thread each. Their Q_P and Q_D bracket F* within 1e-4, enough for the bounds below.
    with ThreadPoolExecutor(2) as pool:
        his = dict(zip((-1.0, 1.0), pool.map(lambda B: _fit(synthetic, bias=B, eps=1e-4), (-1.0, 1.0))))
    for B in (-1.0, 1.0):
        F_lib, _ = synthetic.liblinear(B=B)
        res = _fit(synthetic, bias=B)
        assert len(res.w) == synthetic.d + (1 if B >= 0 else 0)
        F = synthetic.primal(res.w, B=B)
        hi = his[B]
        # F* <= min(F_lib, hi's Q_P): LIBLINEAR -s 3 with a bias may stop at its iteration
        # cap, and its random order depends on earlier calls in the process
        F_upper = min(F_lib, hi.info["Q_P"])
        assert _within_tolrel(F, F_upper)
        _check_history(res, F_upper, hi.info["Q_D"])
        assert hi.info["Q_D"] <= F_lib * (1 + 1e-9) and F_lib <= hi.info["Q_P"] * (1 + 1e-2)


def test_class_cost_and_C(synthetic):
    cost = (2.0, 0.5)
    F_lib, _ = synthetic.liblinear(C=0.3, cost=cost)
    res = ocas.fit(synthetic.X, synthetic.y, synthetic.d,
                   TrainParams(solver="ocas", C=0.3, eps=1e-4, threads=1), class_cost=cost)
    F = synthetic.primal(res.w, C=0.3, cost=cost)
    assert F == pytest.approx(res.info["Q_P"], rel=1e-10)
    assert F <= F_lib * (1 + 1e-4) and res.info["Q_D"] <= F_lib * (1 + 1e-9)
    # lam gives the same problem as C = 1 / (n lam)
    lam = 1.0 / (synthetic.X.n_rows * 0.3)
    r2 = ocas.fit(synthetic.X, synthetic.y, synthetic.d,
                  TrainParams(solver="ocas", lam=lam, eps=1e-4, threads=1), class_cost=cost)
    assert r2.info["Q_P"] == pytest.approx(res.info["Q_P"], rel=1e-9)


def test_cp_method_converges(synthetic, mushrooms):
    for P in (synthetic, mushrooms):
        F_lib, _ = P.liblinear()
        res = _fit(P, ocas_method="cp", eps=0.02)
        assert res.converged and res.info["gap_rel"] <= 0.02
        assert _within_tolrel(P.primal(res.w), F_lib, 0.02)
        for _, _, Q_P, Q_D in res.info["history"]:
            assert Q_D <= F_lib * (1 + 1e-9)


def test_tiny_cut_buffer(a9a, synthetic):
    F_lib, _ = a9a.liblinear()
    res = _fit(a9a, cut_buffer=5)
    assert res.converged and res.info["n_cuts"] <= 5
    assert res.info["cuts_merged"] + res.info["cuts_dropped"] > 0
    assert _within_tolrel(a9a.primal(res.w), F_lib)
    # dropping / merging cuts keeps Q_D a lower bound and non-decreasing
    Q_D = [h[3] for h in res.info["history"]]
    assert all(b >= a for a, b in zip(Q_D, Q_D[1:]))
    assert max(Q_D) <= F_lib * (1 + 1e-9)
    # the smallest buffer: the aggregate of all earlier cuts plus the new one
    F_lib, _ = synthetic.liblinear()
    r2 = _fit(synthetic, cut_buffer=2)
    assert r2.converged and r2.info["n_cuts"] == 2 and r2.info["cuts_merged"] > 0
    assert _within_tolrel(synthetic.primal(r2.w), F_lib)
    assert max(h[3] for h in r2.info["history"]) <= F_lib * (1 + 1e-9)


def test_threads_deterministic(a9a):
    """Reductions are per block, one block per thread, summed in block
    order: the result depends on the thread count only through rounding,
    and not at all on the schedule. (Rounding differences do grow slowly
    along the OCAS path, so compare at the default tolerance.)"""
    assert ocas._threads_for(2, a9a.X.nnz) == min(2, numba.config.NUMBA_NUM_THREADS)
    assert ocas._threads_for(8, 3 * ocas.MIN_NNZ_PER_THREAD) == min(3, numba.config.NUMBA_NUM_THREADS)
    assert ocas._threads_for(None, 10) == 1
    old = numba.get_num_threads()
    r1 = _fit(a9a, threads=1)
    assert numba.get_num_threads() == old and r1.info["threads"] == 1
    r2 = _fit(a9a, threads=2)
    assert numba.get_num_threads() == old
    assert r1.n_iter == r2.n_iter
    assert r2.objective == pytest.approx(r1.objective, rel=1e-12)
    r3 = _fit(a9a, threads=2)
    assert r3.objective == r2.objective and np.array_equal(r3.w, r2.w)


def _shifted(a):
    """A copy of a starting one element past an allocation's start (so
    differently aligned than a fresh array)."""
    buf = np.empty(len(a) + 1, a.dtype)
    buf[1:] = a
    return buf[1:]


def test_independent_of_memory_layout(synthetic):
    """The same run on differently aligned copies of the data, with the
    allocator's state perturbed (so the solver's own arrays land at other
    alignments too), gives bit-identical results: no kernel reassociates
    sums, which would make them depend on alignment."""
    P = synthetic
    params = TrainParams(solver="ocas", C=0.3, eps=1e-4, threads=1)
    runs = []
    for pad in range(6):
        # hold on to blocks of the sizes the solver allocates, so that its
        # arrays come from other places of the heap than in the last run
        junk = [np.empty(P.d + 1) for _ in range(pad)] + [np.empty(s) for s in range(1, 2 * pad)]
        X = P.X
        if pad % 2:
            X = Chunk(labels=_shifted(X.labels), indptr=_shifted(X.indptr),
                      indices=_shifted(X.indices), values=_shifted(X.values), qid=X.qid)
        runs.append(ocas.fit(X, P.y, P.d, params, class_cost=(2.0, 0.5)))
        del junk
    for r in runs[1:]:
        assert r.n_iter == runs[0].n_iter and np.array_equal(r.w, runs[0].w)
        assert [h[2:] for h in r.info["history"]] == [h[2:] for h in runs[0].info["history"]]


def test_stopping_rules(synthetic):
    r = _fit(synthetic, eps=1e-9, max_iter=3)
    assert r.n_iter == 3 and not r.converged and r.info["exit"] == "MaxIter"
    assert len(r.info["history"]) == 4
    r = _fit(synthetic, eps=1e-12, max_time=1e-9)
    assert r.n_iter == 1 and not r.converged and r.info["exit"] == "MaxTime"


def test_parameter_errors(synthetic):
    with pytest.raises(ParameterError, match="-R"):
        _fit(synthetic, unreg_bias=True)
    with pytest.raises(ParameterError):
        _fit(synthetic, cut_buffer=1)


def test_empty_and_one_class():
    X = _chunk_from_csr(sp.csr_matrix((0, 3)), [])
    r = ocas.fit(X, np.zeros(0), 3, TrainParams(solver="ocas"))
    assert r.converged and np.all(r.w == 0) and len(r.w) == 3
    M = sp.csr_matrix(np.array([[1.0, 0.0], [0.5, 2.0], [0.0, 1.0]]))
    y = np.ones(3)
    r = ocas.fit(_chunk_from_csr(M, y), y, 2, TrainParams(solver="ocas", eps=1e-8))
    assert r.converged and np.all(M @ r.w > 0)


# ---------------------------------------------------------------------------
# kernels against their NumPy twins
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(3)
    n, d = 257, 40
    M = sp.random(n, d, density=0.2, random_state=np.random.RandomState(3), format="csr")
    M.data = rng.normal(size=M.nnz)
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    X = _chunk_from_csr(M, y)
    cw = np.where(y > 0, 1.5, 0.7)
    return X, y, d, cw, rng


@pytest.mark.parametrize("nb", [1, 3])
@pytest.mark.parametrize("t,mu", [(0.3, 0.1), (1.0, 1.0), (0.0, 0.0), (2.5, 0.1)])
def test_update_outputs_and_loss_at(small, nb, t, mu):
    X, y, d, cw, rng = small
    out_b = rng.normal(size=len(y))
    out_d = rng.normal(size=len(y))
    out_b[:10] = y[:10]          # exactly on the margin
    prev = (rng.random(len(y)) < 0.5).astype(np.int8)
    viol = np.zeros(len(y), np.int8)
    ob = out_b.copy()
    got = K.update_outputs(y, cw, ob, out_d, t, mu, viol, prev, nb)
    want = N.update_outputs(y, cw, out_b, out_d, t, mu, prev)
    np.testing.assert_allclose(ob, want[0], rtol=1e-15)
    np.testing.assert_array_equal(viol[10:], want[1][10:])   # 0..9 sit on the margin
    assert got[0] == pytest.approx(want[2], rel=1e-13)
    assert got[1] == want[3]
    # rows 0..9 sit exactly on the margin, where the two ways of rounding
    # the cut point's outputs may disagree; the summaries follow viol
    assert got[2] == int(viol.sum()) and got[4] == int(np.sum(viol != prev))
    assert got[3] == pytest.approx(float(np.sum(cw[viol == 1])), rel=1e-13)
    assert K.loss_at(y, cw, out_b, out_d, 0.7, nb) == pytest.approx(
        N.loss_at(y, cw, out_b, out_d, 0.7), rel=1e-13)


@pytest.mark.parametrize("nb", [1, 2, 5])
@pytest.mark.parametrize("B", [0.0, 1.5])
@pytest.mark.parametrize("shape", ["tall", "wide"])
def test_scatter_cut(small, wide, nb, B, shape):
    """Both ways of splitting the work (row blocks into buffers; feature
    ranges, for wide data) against the dense sum."""
    X, y, d, cw, rng = small
    if shape == "wide":
        X, y, d = wide.X, wide.y, wide.d
        cw = np.where(y > 0, 1.5, 0.7)
    Xd = N.dense(X.indptr, X.indices, X.values, d, B)
    viol = (rng.random(len(y)) < 0.5).astype(np.int8)
    prev = (rng.random(len(y)) < 0.5).astype(np.int8)
    buf = np.empty((nb, d + 1))
    out = np.zeros(d + 1)
    K.scatter_cut(X.indptr, X.indices, X.values, B, y, cw, viol, prev, False, nb, buf, out)
    full = N.scatter_cut(Xd, y, cw, viol, prev, False, np.zeros(d + 1))
    np.testing.assert_allclose(out, full, rtol=1e-12, atol=1e-12)
    init = rng.normal(size=d + 1)
    out = init.copy()
    K.scatter_cut(X.indptr, X.indices, X.values, B, y, cw, viol, prev, True, nb, buf, out)
    np.testing.assert_allclose(out, N.scatter_cut(Xd, y, cw, viol, prev, True, init),
                               rtol=1e-12, atol=1e-12)
    # the delta from prev's cut reproduces the full cut at viol
    prev_cut = N.scatter_cut(Xd, y, cw, prev, prev, False, np.zeros(d + 1))
    out = prev_cut.copy()
    K.scatter_cut(X.indptr, X.indices, X.values, B, y, cw, viol, prev, True, nb, buf, out)
    np.testing.assert_allclose(out, full, rtol=1e-12, atol=1e-12)
    # the serial twin on the same nb blocks (one pass where the kernel splits
    # the features, buffers where it splits the rows): the same bits, few
    # rows and many
    for share in (0.01, 0.5):
        flags = (rng.random(len(y)) < share).astype(np.int8)
        for delta in (False, True):
            par, ser = init.copy(), init.copy()
            K.scatter_cut.parallel(X.indptr, X.indices, X.values, B, y, cw, flags, prev, delta, nb,
                                   np.empty((nb, d + 1)), par)
            K.scatter_cut.serial(X.indptr, X.indices, X.values, B, y, cw, flags, prev, delta, nb,
                                 np.empty((nb, d + 1)), ser)
            np.testing.assert_array_equal(par, ser)


@pytest.mark.parametrize("nb", [1, 4])
def test_gram_row_and_combine(small, nb):
    rng = small[4]
    A = rng.normal(size=(9, 31))
    a = rng.normal(size=31)
    h = np.zeros(9)
    A_want, h_want = N.gram_row(A, 6, 4, a)
    aa = K.gram_row(A, 6, 4, a, nb, h)
    np.testing.assert_array_equal(A, A_want)
    np.testing.assert_allclose(h[:6], h_want, rtol=1e-13)
    assert aa == h[4] and aa == pytest.approx(a @ a, rel=1e-13)
    w = rng.normal(size=31)
    w_want, nrm_want = N.axpy_sqnorm(w, 0.37, a)
    assert K.axpy_sqnorm(w, 0.37, a, nb) == pytest.approx(nrm_want, rel=1e-13)
    np.testing.assert_allclose(w, w_want, rtol=1e-15)
    alpha = np.r_[0.2, 0.0, 0.5, 0.1, 0.0, 0.05, 9.0, 9.0, 9.0]   # only the first 6 count
    w_b = rng.normal(size=31)
    w_c = np.full(31, np.nan)
    w_d = np.full(31, np.nan)
    dots = K.combine_cuts(A, alpha, 6, w_b, w_c, w_d, nb)
    w_want, d_want, *dots_want = N.combine_cuts(A, alpha, 6, w_b)
    np.testing.assert_allclose(w_c, w_want, rtol=1e-13)
    np.testing.assert_allclose(w_d, d_want, rtol=1e-13)
    np.testing.assert_allclose(dots, dots_want, rtol=1e-13)


@pytest.mark.parametrize("nb", [1, 3])
def test_sparse_cuts_against_numpy(small, nb):
    """Issue 33: a buffer of dense and sparse cuts (sparsify's index/value pool): the Gram row
    from the sparse side and w_c = sum alpha_j a_j against plain NumPy."""
    rng = small[4]
    k, d = 7, 50
    cuts = rng.normal(size=(k, d)) * (rng.random((k, d)) < np.r_[[0.9], np.full(k - 1, 0.1)][:, None])
    A = np.full((k, d), np.nan)
    sp_start, sp_len = np.zeros(k, np.int64), np.full(k, -1, np.int64)
    pidx, pval, at = np.empty(k * d, np.int32), np.empty(k * d), 0
    for j in range(k):
        if j % 3 == 0:
            A[j] = cuts[j]
        else:
            sp_start[j] = at
            sp_len[j] = K.sparsify(cuts[j], pidx, pval, at)
            np.testing.assert_array_equal(pidx[at:at + sp_len[j]], np.flatnonzero(cuts[j]))
            at += sp_len[j]
    a = cuts[4]
    h = np.full(k, np.nan)
    K.gram_row_mixed(A, sp_start, sp_len, pidx, pval, k, a, nb, h)
    np.testing.assert_allclose(h, cuts @ a, rtol=1e-13)
    alpha = np.r_[0.2, 0.0, 0.5, 0.1, 0.0, 0.05, 0.15]
    w_b = rng.normal(size=d)
    w_c, w_d = np.full(d, np.nan), np.full(d, np.nan)
    dots = K.combine_mixed(A, sp_start, sp_len, pidx, pval, alpha, k, w_b, w_c, w_d, nb)
    np.testing.assert_allclose(w_c, alpha @ cuts, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(w_d, w_c - w_b, rtol=1e-13)
    np.testing.assert_allclose(dots, [w_c @ w_c, w_d @ w_d, w_b @ w_d], rtol=1e-12)
    # the blocks change nothing: every feature sums its terms in cut order (bitwise the same w_c)
    for other in (1, 2, 5):
        w_c2, w_d2 = np.full(d, np.nan), np.full(d, np.nan)
        K.combine_mixed(A, sp_start, sp_len, pidx, pval, alpha, k, w_b, w_c2, w_d2, other)
        np.testing.assert_array_equal(w_c2, w_c)


@pytest.mark.parametrize("lo,hi", [(0, 0), (0, 7), (3, 19), (0, 64), (5, 1000)])
def test_dot_sums_eight_lanes_in_a_fixed_order(lo, hi):
    """The kernels' dot product: eight interleaved partial sums combined
    pairwise, then the tail; the same bits as that order written in Python."""
    rng = np.random.default_rng(hi)
    x, y = rng.normal(size=1000) * 1e3, rng.normal(size=1000)
    lanes = [0.0] * 8
    n8 = lo + ((hi - lo) // 8) * 8
    for q in range(lo, n8):
        lanes[(q - lo) % 8] += float(x[q] * y[q])
    tail = 0.0
    for q in range(n8, hi):
        tail += float(x[q] * y[q])
    want = (((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))) + tail
    assert K._dot(x, y, lo, hi) == want
    np.testing.assert_allclose(K._dot(x, y, lo, hi), x[lo:hi] @ y[lo:hi], rtol=1e-9, atol=1e-9)


def test_gram_row_blocks_split_the_work_not_the_count():
    """The Gram row's blocks are runs of consecutive cuts of about equal work
    (a run's first cuts touch far more features than its late ones): every cut
    in exactly one block, and the row bitwise the same for any block count."""
    sp_len = np.array([-1, 9000, 4000, 900, 800, 850, 700, 760, 720, 690], np.int64)
    d = 20000
    k = len(sp_len)
    work = np.where(sp_len >= 0, sp_len, d // K.DENSE_SPEEDUP + 1)
    for nb in (1, 2, 3, 4, 16):
        b = K._work_bounds(sp_len, k, d, nb)
        assert b[0] == 0 and b[-1] == k and np.all(np.diff(b) >= 0)
        per = np.add.reduceat(np.r_[work, 0], b[:-1])[:nb] * (np.diff(b) > 0)
        # no block holds more than its share plus one cut's work
        assert per.max() <= work.sum() / nb + work.max()
    assert list(K._work_bounds(sp_len, k, d, 2)) == [0, 2, k]     # by count it would be [0, 5, k]
    assert list(K._work_bounds(sp_len, 0, d, 3)) == [0, 0, 0, 0]
    rng = np.random.default_rng(3)
    cuts = np.zeros((k, d))
    for j, ln in enumerate(sp_len):
        cuts[j, rng.choice(d, d if ln < 0 else ln, replace=False)] = rng.normal(size=d if ln < 0 else ln)
    A = np.where(sp_len[:, None] < 0, cuts, np.nan)
    sp_start, pidx, pval, at = np.zeros(k, np.int64), np.empty(cuts.size, np.int32), np.empty(cuts.size), 0
    for j in range(k):
        if sp_len[j] >= 0:
            sp_start[j] = at
            at += K.sparsify(cuts[j], pidx, pval, at)
    a = rng.normal(size=d)
    rows = []
    for nb in (1, 2, 3, 7):
        h = np.full(k, np.nan)
        K.gram_row_mixed(A, sp_start, sp_len, pidx, pval, k, a, nb, h)
        rows.append(h)
    np.testing.assert_allclose(rows[0], cuts @ a, rtol=1e-12)
    for h in rows[1:]:
        np.testing.assert_array_equal(h, rows[0])


def test_dense_form_keeps_sparse_cuts_sparse(wide):
    """On wide sparse data the dense form stores the late cuts (few violators) sparse (the
    run is the row form's: test_row_form_follows_the_dense_form), each as its dense twin."""
    data = ocas.LocalData(wide.X, wide.y, np.ones(wide.X.n_rows), -1.0, wide.d + 1, 1)
    form = ocas.DenseForm(data, wide.d + 1, 100, 1)
    res = ocas.solve(data, wide.X.n_rows, wide.d + 1, TrainParams(solver="ocas", threads=1), form=form)
    c = form.cuts
    assert res.converged and (c.sp_len[:c.k] >= 0).sum() >= 1
    for j in range(c.k):     # every stored cut is what its dense twin would be
        assert np.count_nonzero(c.dense(j)) == (c.sp_len[j] if c.sp_len[j] >= 0 else np.count_nonzero(c.dense(j)))


@pytest.mark.parametrize("nb", [1, 3])
@pytest.mark.parametrize("warm", [False, True])
def test_combine_and_shift_rows(small, nb, warm):
    """The row form's products (sums over the examples) equal the dense ones."""
    X, y, d, _, rng = small
    B = 1.5
    Xt = N.dense(X.indptr, X.indices, X.values, d, B)
    n = X.n_rows
    G = rng.normal(size=(7, n))
    U = G @ Xt @ Xt.T                      # U[j] = Xt (Xt' G[j])
    alpha = np.r_[0.2, 0.0, 0.5, 0.1, 0.0, 9.0, 9.0]   # only the first 5 count
    g_b = rng.normal(size=n)
    w0 = rng.normal(size=d + 1) if warm else np.zeros(d + 1)
    s0 = 0.3 if warm else 0.0
    out0 = Xt @ w0 if warm else np.zeros(0)
    out_b = s0 * (Xt @ w0) + Xt @ (Xt.T @ g_b)
    g_d, out_d = np.full(n, np.nan), np.full(n, np.nan)
    got = K.combine_rows(G, U, alpha, 5, g_b, out_b, out0, s0, float(w0 @ w0), g_d, out_d, nb)
    gd_want, od_want, *dots_want = N.combine_rows(Xt, G, alpha, 5, g_b, s0, w0)
    np.testing.assert_allclose(g_d, gd_want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out_d, od_want, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(got, dots_want, rtol=1e-10)
    # move w_b by t w_d: outputs and s0 first (as ocas does), then shift_rows
    t = 0.4
    out_b += t * out_d
    s1 = s0 * (1.0 - t)
    sq = K.shift_rows(g_b, t, g_d, out_b, out0, s1, float(w0 @ w0), nb)
    w_b = s1 * w0 + Xt.T @ g_b
    assert sq == pytest.approx(float(w_b @ w_b), rel=1e-10)


@pytest.fixture(scope="module")
def wide():
    """More features than twice the rows: ocas keeps its cuts as rows."""
    rng = np.random.default_rng(11)
    n, d = 300, 4000
    M = sp.random(n, d, density=0.01, random_state=np.random.RandomState(11), format="csr")
    M.data = rng.normal(size=M.nnz)
    y = np.where(M @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return Problem(_chunk_from_csr(M, y), y, d)


@pytest.mark.parametrize("kw", [{}, {"ocas_method": "cp"}, {"bias": 1.0, "eps": 1e-4},
                                {"cut_buffer": 4}, {"threads": 2}])
def test_row_form_follows_the_dense_form(wide, synthetic, kw):
    """Cuts as rows over the examples give the run of dense cuts: the same
    iterations, bounds and w (up to rounding), on wide data (where fit
    picks rows) and on tall data (where it picks dense cuts)."""
    assert ocas.rows_pay(wide.X, wide.d) and not ocas.rows_pay(synthetic.X, synthetic.d)
    for P in (wide, synthetic):
        params = TrainParams(solver="ocas", **{"threads": 1, **kw})
        cost = (1.0, 1.5)
        dense = ocas.fit(P.X, P.y, P.d, params, class_cost=cost, cut_form="dense")
        rows = ocas.fit(P.X, P.y, P.d, params, class_cost=cost, cut_form="rows")
        assert rows.converged and dense.converged
        if rows.n_iter == dense.n_iter:
            assert rows.info["Q_P"] == pytest.approx(dense.info["Q_P"], rel=1e-9)
            assert rows.info["Q_D"] == pytest.approx(dense.info["Q_D"], rel=1e-9)
            np.testing.assert_allclose(rows.w, dense.w, rtol=1e-6, atol=1e-8)
        else:   # long runs may part in the last bits, a few iterations from the end
            assert abs(rows.n_iter - dense.n_iter) <= max(3, 0.05 * dense.n_iter) and dense.n_iter > 100
            eps = kw.get("eps", 0.01)
            assert rows.info["Q_P"] == pytest.approx(dense.info["Q_P"], rel=eps)
        B = params.bias
        assert P.primal(rows.w, B=B, cost=cost) == pytest.approx(rows.info["Q_P"], rel=1e-9)
        if kw.get("cut_buffer"):
            assert rows.info["cuts_merged"] + rows.info["cuts_dropped"] > 0


def test_row_form_warm_start_and_trace(wide):
    """A warm start (the -C path) and the trace's per-iteration w_b in the row form."""
    params = TrainParams(solver="ocas", threads=1, eps=1e-5)
    w0 = np.full(wide.d + 1, 0.01)
    seen = []
    runs = {}
    for form in ("dense", "rows"):
        ws = {"w": w0.copy()}
        runs[form] = ocas.fit(wide.X, wide.y, wide.d, params, warm_start=ws, cut_form=form,
                              monitor=lambda snap: seen.append(snap()))
        np.testing.assert_array_equal(ws["w"][:wide.d], runs[form].w[:wide.d])
    assert runs["rows"].n_iter == runs["dense"].n_iter
    np.testing.assert_allclose(runs["rows"].w, runs["dense"].w, rtol=1e-7, atol=1e-9)
    half = len(seen) // 2
    assert len(seen) == 2 * runs["rows"].n_iter
    for a, b in zip(seen[:half], seen[half:]):
        assert b.norm2 == pytest.approx(a.norm2, rel=1e-9)
        np.testing.assert_allclose(b.scores, a.scores, rtol=1e-8, atol=1e-10)
    with pytest.raises(ValueError, match="cut_form"):
        ocas.fit(wide.X, wide.y, wide.d, params, cut_form="sparse")


@pytest.fixture(scope="module")
def text():
    """Text-like rows (gen_synthetic.bag_of_words: power-law word
    frequencies, overlapping topics, tf-idf) with more features than twice
    the rows: the late cuts touch few features."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import gen_synthetic
    M, topic = gen_synthetic.bag_of_words(rows=2000, features=10000, mean_length=15.0, topics=6, seed=3,
                                          tfidf=True)
    y = np.where(topic < 3, 1.0, -1.0)
    return Problem(_chunk_from_csr(M.tocsr(), y), y, M.shape[1])


def test_switch_pays_counts_the_work_of_both_forms():
    """Rows: (k + 2 active) n; dense: the cuts' features (the active ones
    twice), the data pass, four d-vectors; SWITCH_MARGIN between them."""
    nnz, active = np.array([50, 3000, 20]), np.array([True, False, True])
    # rows (3 + 4) n; dense 50 + 2000 + 20 + 70 + 1000 + 4 * 2000 = 11140 (a cut counts at most d = 2000)
    assert ocas.switch_pays(nnz, active, n=2400, dim=2000, nnz=1000) == (ocas.SWITCH_MARGIN * 11140 < 7 * 2400)
    assert not ocas.switch_pays(nnz, active, n=100, dim=2000, nnz=1000)
    assert ocas.switch_pays(nnz, active, n=10**6, dim=2000, nnz=1000)


@pytest.mark.parametrize("kw", [{}, {"eps": 1e-3, "bias": 1.0}, {"cut_buffer": 30}])
def test_row_form_turns_dense_on_text_and_follows_both_forms(text, kw):
    """On text the row form hands its cuts to a dense form part way (fit's
    default), and the run is the one of either form alone: the same
    iterations and bounds up to rounding, Q_P the primal of its w."""
    params = TrainParams(solver="ocas", **{"threads": 1, "C": 10.0, **kw})
    runs = {form: ocas.fit(text.X, text.y, text.d, params, cut_form=form) for form in (None, "rows", "dense")}
    auto = runs[None]
    assert ocas.rows_pay(text.X, text.d)
    assert auto.info["cut_form"] == "dense" and 1 < auto.info["switched_at"] < auto.n_iter
    assert runs["rows"].info["cut_form"] == "rows" and runs["rows"].info["switched_at"] is None
    for form in ("rows", "dense"):
        other = runs[form]
        assert other.converged and auto.converged
        assert abs(auto.n_iter - other.n_iter) <= max(3, 0.05 * other.n_iter)   # rounding parts long runs
        assert auto.info["Q_P"] == pytest.approx(other.info["Q_P"], rel=kw.get("eps", 0.01))
    # the iterates: the same bounds as either form's through the switch and a few iterations after it
    # (later, rounding may part long runs)
    for form in ("rows", "dense"):
        for a, b in list(zip(auto.info["history"], runs[form].info["history"]))[:auto.info["switched_at"] + 5]:
            assert a[2] == pytest.approx(b[2], rel=1e-7) and a[3] == pytest.approx(b[3], rel=1e-7, abs=1e-12)
    B = params.bias
    assert text.primal(auto.w, C=10.0, B=B) == pytest.approx(auto.info["Q_P"], rel=1e-9)


def _random_qp(rng, k, d, dup=False, scale=1.0):
    A = rng.normal(size=(k, d)) * scale
    if dup:                     # a duplicate cut and, when there is room, a zero one
        A[1] = A[0]
        A[k - 1] = 0.0 if k > 2 else A[k - 1]
    b = rng.random(k) * scale * 3
    return A @ A.T, b


@pytest.mark.parametrize("case", range(12))
def test_qp_against_bruteforce(case):
    rng = np.random.default_rng(100 + case)
    k = 2 + case % 5
    d = 3 if case % 3 == 0 else 10        # k > d: a singular Gram matrix
    H, b = _random_qp(rng, k, d, dup=(case % 4 == 1), scale=10.0 ** (case % 3 - 1))
    Cb = [1.0, 0.05, 3.0][case % 3]
    f_bf, a_bf = N.qp_bruteforce(H, b, Cb)
    alpha = np.zeros(k + 2)               # buffer longer than k: the rest is ignored
    Hb = np.zeros((k + 2, k + 2))
    Hb[:k, :k] = H
    bb = np.r_[b, 0.0, 0.0]
    scale = max(abs(f_bf), 1e-3)
    f, gap, _, hit = K.qp_simplex(Hb, bb, alpha, k, Cb, 1e-12 * scale, 0.0, 100000, 100)
    assert hit and gap <= 1e-10 * scale
    assert np.all(alpha >= 0) and alpha.sum() <= Cb * (1 + 1e-12)
    assert f == pytest.approx(N.qp_value(H, b, alpha[:k]), rel=1e-9, abs=1e-12 * scale)
    assert f <= f_bf + 1e-9 * scale
    assert f >= f_bf - 1e-9 * scale
    f_sp, _ = N.qp_scipy(H, b, Cb)
    assert f <= f_sp + 1e-7 * scale
    # warm start from a perturbed feasible point lands on the same value
    alpha2 = np.maximum(alpha + rng.random(k + 2) * 0.01 * Cb, 0.0)
    alpha2[k:] = 0.0
    alpha2 *= min(1.0, Cb / alpha2.sum())
    f2 = K.qp_simplex(Hb, bb, alpha2, k, Cb, 1e-12 * scale, 0.0, 100000, 100)[0]
    assert f2 == pytest.approx(f, rel=1e-9, abs=1e-10 * scale)


@pytest.mark.parametrize("case", range(8))
def test_qp_libocas_rule_is_pair_steps_to_the_relative_gap(case):
    """polish=False, no faces (the reduced QP of --multiclass cs): the same
    alpha, bit for bit, as pair steps written out in Python, stopped once
    the gap (an upper bound on the distance to the optimum) is within
    tol_rel of |f|; then again from that warm start with a tighter tol_rel."""
    rng = np.random.default_rng(300 + case)
    k = 3 + case
    H, b = _random_qp(rng, k, 2 + case % 4, dup=case % 3 == 1, scale=10.0 ** (case % 3 - 1))
    f_bf, _ = N.qp_bruteforce(H, b, 1.0)
    alpha, twin = np.zeros(k), np.zeros(k)
    for tol_rel in (0.05, 0.005):
        f, gap, steps, hit = K.qp_simplex(H, b, alpha, k, 1.0, 0.0, tol_rel, 1000000, 0, False)
        f_n, gap_n, steps_n = N.qp_pair_steps(H, b, twin, k, 1.0, 0.0, tol_rel, 1000000)
        assert np.array_equal(alpha, twin) and (f, gap, steps) == (f_n, gap_n, steps_n)
        assert hit and gap <= tol_rel * abs(f)
        assert f_bf - 1e-9 * abs(f_bf) <= f <= f_bf + gap + 1e-12
        assert np.all(alpha >= 0) and alpha.sum() <= 1.0 + 1e-12


@pytest.mark.parametrize("case", range(4))
def test_qp_smo_only_path(case):
    """The two-coordinate part alone (no face solves), and the face solver alone."""
    rng = np.random.default_rng(50 + case)
    H, b = _random_qp(rng, 6, 4 + case, dup=case == 3)
    f_bf, _ = N.qp_bruteforce(H, b, 1.0)
    alpha = np.zeros(6)
    f, gap, steps, hit = K.qp_simplex(H, b, alpha, 6, 1.0, 1e-11, 0.0, 1000000, 0)
    assert hit and steps > 0 and f == pytest.approx(f_bf, abs=1e-9)
    assert f == pytest.approx(N.qp_value(H, b, alpha), abs=1e-12)
    alpha = np.zeros(6)
    faces = K.qp_active_set(H, b, alpha, 6, 1.0, 1e-12, 100)
    if faces > 0:    # it may give up (negative) on degenerate faces; SMO then finishes
        assert N.qp_value(H, b, alpha) == pytest.approx(f_bf, abs=1e-9)
    assert np.all(alpha >= 0) and alpha.sum() <= 1.0 + 1e-12


@pytest.mark.parametrize("case", range(10))
def test_qp_faces_against_bruteforce(case):
    """The factorised active-set method alone (issue 33): the brute-force optimum (the NumPy
    twin) from cold and warm starts, also on rank-deficient Gram matrices (k cuts in d < k
    dimensions, duplicate and zero cuts), where it moves along null directions and never gives up."""
    rng = np.random.default_rng(300 + case)
    k = 3 + case % 6
    d = [2, 3, 12][case % 3]
    H, b = _random_qp(rng, k, d, dup=case % 4 == 1, scale=10.0 ** (case % 3 - 1))
    Cb = [1.0, 0.05, 3.0][case % 3]
    f_bf, _ = N.qp_bruteforce(H, b, Cb)
    scale = max(abs(f_bf), 1e-3)
    for start in range(3):
        alpha = np.zeros(k) if start == 0 else rng.random(k) * (rng.random(k) < 0.6)
        alpha *= min(1.0, Cb / max(alpha.sum(), 1e-300)) * (0.5 if start == 2 else 1.0)
        faces = K.qp_faces(H, b, alpha, k, Cb, 1e-13 * scale, 1000)
        assert faces > 0 and np.all(alpha >= 0) and alpha.sum() <= Cb * (1 + 1e-12)
        assert N.qp_value(H, b, alpha) == pytest.approx(f_bf, abs=1e-9 * scale)


def test_qp_faces_on_many_dependent_cuts():
    """60 cuts in 5 dimensions (regression on a few features: at most 6 cuts can be
    independent, so nearly every entering cut meets a singular face): the factorised method
    reaches SLSQP's value and the gap without giving up."""
    rng = np.random.default_rng(5)
    H, b = _random_qp(rng, 60, 5)
    alpha = np.zeros(60)
    assert K.qp_faces(H, b, alpha, 60, 1.0, 1e-12, 1000) > 0
    g = H @ alpha - b
    assert alpha @ g - min(0.0, g.min()) <= 1e-9
    assert N.qp_value(H, b, alpha) <= N.qp_scipy(H, b, 1.0)[0] + 1e-9


def test_chol_delete_against_numpy():
    rng = np.random.default_rng(2)
    A = rng.normal(size=(7, 9))
    R = A @ A.T
    for c in (0, 3, 6):
        L = np.zeros((8, 8))
        L[:7, :7] = np.linalg.cholesky(R)
        K.chol_delete(L, 7, c)
        keep = [i for i in range(7) if i != c]
        np.testing.assert_allclose(L[:6, :6], np.linalg.cholesky(R[np.ix_(keep, keep)]), rtol=1e-10, atol=1e-12)
        assert not L[6].any() and not L[:, 6].any()


_line_case = N.line_case


@pytest.mark.parametrize("n,ties,nb", [(50, False, 1), (3000, False, 3), (3000, True, 2),
                                       (200000, False, 2), (200000, True, 1)])
def test_line_search(n, ties, nb):
    rng = np.random.default_rng(n + ties)
    y, cw, out_b, out_d, w_b, w_d = _line_case(rng, n, ties)
    for scale in (1e-3, 1.0, 1e3):        # regulariser weak to strong
        wb_s, wd_s = w_b * np.sqrt(scale), w_d * np.sqrt(scale)
        qa, qb = wd_s @ wd_s, wb_s @ wd_s
        kb, wb = np.empty(n), np.empty(n)
        t, m = K.line_search(y, cw, out_b, out_d, qa, qb, nb, kb, wb)
        t_n = N.line_search(y, cw, out_b, out_d, qa, qb)
        assert t == pytest.approx(t_n, rel=1e-12, abs=1e-15)
        phi = lambda s: N.line_phi(y, cw, out_b, out_d, wb_s, wd_s, s)
        # local optimality, and no point of a fine grid is better
        p0 = phi(t)[0]
        for dt in (1e-7, 1e-4):
            assert p0 <= phi(t + dt * max(t, 1.0))[0] + 1e-9 * abs(p0)
            if t > 0:
                assert p0 <= phi(max(t - dt * max(t, 1.0), 0.0))[0] + 1e-9 * abs(p0)
        if n <= 3000:
            grid = np.linspace(0.0, 3.0 * max(t, 1.0), 2001)
            assert p0 <= phi(grid).min() + 1e-9 * abs(p0)


def test_line_search_edges():
    y = np.array([1.0, -1.0, 1.0])
    cw = np.ones(3)
    ob = np.array([2.0, -2.0, 3.0])
    kb, wb = np.empty(3), np.empty(3)
    # no loss anywhere near: the quadratic's minimum -qb/qa
    t, m = K.line_search(y, cw, ob, ob * 0.01, 2.0, -1.0, 1, kb, wb)
    assert m == 0 and t == pytest.approx(0.5)
    # phi'(0+) >= 0: t = 0
    assert K.line_search(y, cw, ob, np.zeros(3), 1.0, 0.0, 1, kb, wb)[0] == 0.0
    # phi' < 0 past the last breakpoint
    ob = np.array([0.5, -2.0, 3.0])
    od = np.array([1.0, 0.0, 0.0])     # one breakpoint, at 0.5, where phi' goes -2 -> -1
    t, m = K.line_search(y, cw, ob, od, 1e-6, -1.0, 1, kb, wb)
    assert m == 1 and t == pytest.approx(N.line_search(y, cw, ob, od, 1e-6, -1.0), rel=1e-12)
    assert t > 1e5


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 80), seed=st.integers(0, 2 ** 32 - 1), nb=st.sampled_from([1, 2, 3]),
       grid=st.sampled_from([0.0, 0.5, 0.25]))
def test_line_search_property(n, seed, nb, grid):
    """Random small cases, optionally on a coarse grid (ties, zero slopes,
    examples exactly on the margin): same t as the sorted walk, and no
    better point on a fine grid."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    cw = rng.choice([0.5, 1.0, 2.0], size=n)
    out_b = rng.normal(size=n) * 2
    out_d = rng.normal(size=n)
    if grid:
        out_b = np.round(out_b / grid) * grid
        out_d = np.round(out_d / grid) * grid
    w_b, w_d = rng.normal(size=3), rng.normal(size=3) + 0.1
    qa, qb = w_d @ w_d, w_b @ w_d
    kb, wb = np.empty(n), np.empty(n)
    t, _ = K.line_search(y, cw, out_b, out_d, qa, qb, nb, kb, wb)
    assert t == pytest.approx(N.line_search(y, cw, out_b, out_d, qa, qb), rel=1e-12, abs=1e-15)
    phi = lambda s: N.line_phi(y, cw, out_b, out_d, w_b, w_d, s)
    p0 = phi(t)[0]
    assert p0 <= phi(np.linspace(0.0, 2.0 * t + 2.0, 801)).min() + 1e-10 * max(1.0, abs(p0))


def test_cut_buffer_growth(synthetic, monkeypatch):
    """Room for cuts is reserved in steps; growing it changes nothing."""
    r1 = _fit(synthetic, eps=1e-3)
    monkeypatch.setattr(ocas, "CUT_RESERVE_BYTES", 3 * 8 * (synthetic.d + 1))
    r2 = _fit(synthetic, eps=1e-3)
    assert r1.info["n_cuts"] > 12            # grew 3 -> 6 -> 12 -> ...
    assert r2.n_iter == r1.n_iter and np.array_equal(r2.w, r1.w)
    r3 = _fit(synthetic, eps=1e-3, cut_buffer=10)   # growth up to a full buffer, then drops/merges
    assert r3.converged and r3.info["n_cuts"] == 10
