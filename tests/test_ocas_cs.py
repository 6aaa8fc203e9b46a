"""Crammer-Singer multi-class OCAS (-s ocas --multiclass cs, msvmocas's
problem): each kernel against a plain NumPy twin, the line search against
a brute-force minimum, the objective against dcd's Crammer-Singer optimum
(and LIBLINEAR -s 4's), files and refusals."""
import shutil
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

from conftest import needs

import svmtrain
from svmtrain.data.arrays import as_chunk
from svmtrain.cli.train import main as train_main
from svmtrain.errors import ParameterError
from svmtrain.io.liblinear_format import read_liblinear_model
from svmtrain.solvers.ocas import _ocas_cs_kernels as K
from svmtrain.solvers.ocas import _ocas_kernels as KO
from svmtrain.solvers.ocas import ocas_cs as OC
from svmtrain.solvers.base import csr_arrays

from test_crammer_singer import libsvm_text, multiclass_data

LIBLINEAR = shutil.which("liblinear-train")


@pytest.fixture(autouse=True)
def _parallel_kernels_on_small_arrays(monkeypatch):
    """Kernel tests here call the kernels with nb > 1 on small arrays: keep
    them on the parallel kernels (see by_blocks and PARALLEL_MIN_PASS)."""
    from svmtrain._numba import options as opts
    monkeypatch.setattr(opts, "PARALLEL_MIN_PASS", 0)


# ---------------------------------------------------------------------------
# NumPy twins
# ---------------------------------------------------------------------------
def dense_rows(indptr, indices, values, d, B):
    M = sp.csr_matrix((values, indices, indptr), shape=(len(indptr) - 1, d)).toarray()
    return np.hstack([M, np.full((M.shape[0], 1), B)])


def losses(S, yi, cw):
    """C_i max_m ([m != y_i] + S_im - S_iy_i) per row."""
    E = 1.0 - np.eye(S.shape[1])[yi]
    return cw * np.max(E + S - S[np.arange(len(yi)), yi][:, None], axis=1)


def cut_of(S, yi, cw):
    """(yhat with -1 for no violation, G) of the cut at scores S."""
    E = 1.0 - np.eye(S.shape[1])[yi]
    Z = E + S - S[np.arange(len(yi)), yi][:, None]
    Z[np.arange(len(yi)), yi] = 0.0
    yhat = np.argmax(Z, axis=1)
    viol = Z[np.arange(len(yi)), yhat] > 0
    G = np.zeros_like(S)
    rows = np.flatnonzero(viol)
    G[rows, yi[rows]] = cw[rows]
    G[rows, yhat[rows]] -= cw[rows]
    return np.where(viol, yhat, -1), G


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(4)
    n, d, M = 150, 25, 5
    X = sp.random(n, d, density=0.3, random_state=np.random.RandomState(4), format="csr")
    X.data = rng.normal(size=X.nnz)
    X.sort_indices()
    yi = rng.integers(0, M, size=n)
    cw = rng.uniform(0.5, 2.0, size=n)
    B = 0.7
    Xt = dense_rows(X.indptr, X.indices, X.data, d, B)
    return X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data, B, yi, cw, M, Xt, rng


@pytest.mark.parametrize("nb", [1, 3])
@pytest.mark.parametrize("B", [0.0, 0.7])
def test_products_and_weights(problem, nb, B):
    """X~ X~' G in one pass over the columns, and X~' G, against dense products."""
    indptr, indices, values, _, yi, cw, M, _, rng = problem
    n = len(yi)
    d = 25
    Xt = dense_rows(indptr, indices, values, d, B)
    Xc = sp.csr_matrix((values, indices, indptr), shape=(n, d)).tocsc()
    colptr, rows = Xc.indptr.astype(np.int64), Xc.indices.astype(np.int32)
    G = rng.normal(size=(n, M)) * (rng.random((n, M)) < 0.3)
    S = np.full((n, M), np.nan)
    K.products(colptr, rows, Xc.data, B, G, S, np.empty((nb, n, M)), np.empty(n, np.int8), nb)
    np.testing.assert_allclose(S, Xt @ (Xt.T @ G), rtol=1e-11, atol=1e-11)
    W = np.full((d + 1, M), np.nan)
    K.weights(colptr, rows, Xc.data, B, G, W, nb)
    np.testing.assert_allclose(W, Xt.T @ G, rtol=1e-12, atol=1e-12)


def products_every_term(colptr, rows, values, B, G):
    """X~ X~' G as products_kernel with nb = 1 sums it, but adding every term
    (zeros included): the plain loop its skipping of zero terms must match."""
    n, M = G.shape
    S = np.zeros((n, M))
    for j in range(len(colptr) - 1):
        w = np.zeros(M)
        for p in range(colptr[j], colptr[j + 1]):
            w += values[p] * G[rows[p]]
        for p in range(colptr[j], colptr[j + 1]):
            S[rows[p]] += values[p] * w
    if B != 0.0:
        w = np.zeros(M)
        for i in range(n):
            w += B * G[i]
        S += B * w
    return S


@pytest.mark.parametrize("B", [0.0, 0.7])
def test_products_skip_only_zero_terms(problem, B):
    """A cut's G (two nonzeros in a violating row, none elsewhere, whole
    columns of the data without a violator), a dense G and a zero G: the
    products that skip zero rows and features are bitwise the sums of every
    term with one block, and agree with them to rounding with more."""
    indptr, indices, values, _, yi, cw, M, _, rng = problem
    n, d = len(yi), 25
    Xc = sp.csr_matrix((values, indices, indptr), shape=(n, d)).tocsc()
    colptr, rows = Xc.indptr.astype(np.int64), Xc.indices.astype(np.int32)
    yhat, G_cut = cut_of(rng.normal(size=(n, M)) * 2, yi, cw)
    G_cut[np.diff(Xc[:, :2].tocsr().indptr) > 0] = 0.0      # no violator among the rows with features 0-1
    assert 0 < np.count_nonzero(G_cut.any(axis=1)) < np.count_nonzero(yhat >= 0) < n
    for G in (G_cut, rng.normal(size=(n, M)), np.zeros((n, M))):
        want = products_every_term(colptr, rows, Xc.data, B, G)
        S1 = np.full((n, M), np.nan)
        K.products(colptr, rows, Xc.data, B, G, S1, np.empty((1, 1, 1)), np.empty(n, np.int8), 1)
        np.testing.assert_array_equal(S1, want)
        for nb in (2, 3):
            S = np.full((n, M), np.nan)
            K.products(colptr, rows, Xc.data, B, G, S, np.empty((nb, n, M)), np.empty(n, np.int8), nb)
            np.testing.assert_allclose(S, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("nb", [1, 2, 7])
@pytest.mark.parametrize("B", [0.0, 0.7])
def test_two_pass_products_over_row_blocks(problem, nb, B):
    """scatter_rows (W' += (X~_blk' G_blk)') and row_scores (S_blk = X~_blk W)
    over row blocks against dense products; and, blocks in order, exactly
    the numbers of products and weights with nb = 1 (whatever nb: 7 > M
    leaves threads without classes)."""
    indptr, indices, values, _, yi, cw, M, _, rng = problem
    n, d = len(yi), 25
    Xt = dense_rows(indptr, indices, values, d, B)
    G = rng.normal(size=(n, M)) * (rng.random((n, M)) < 0.3)
    bounds = [0, 17, 18, 60, 111, n]
    Wt = np.zeros((M, d + 1))
    S = np.full((n, M), np.nan)
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        ip = indptr[lo:hi + 1] - indptr[lo]
        K.scatter_rows(ip, indices[indptr[lo]:indptr[hi]], values[indptr[lo]:indptr[hi]], B, G[lo:hi], Wt, nb)
    np.testing.assert_allclose(Wt, (Xt.T @ G).T, rtol=1e-12, atol=1e-12)
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        ip = indptr[lo:hi + 1] - indptr[lo]
        K.row_scores(ip, indices[indptr[lo]:indptr[hi]], values[indptr[lo]:indptr[hi]], B, Wt, S[lo:hi], nb)
    np.testing.assert_allclose(S, Xt @ Wt.T, rtol=1e-12, atol=1e-12)
    Xc = sp.csr_matrix((values, indices, indptr), shape=(n, d)).tocsc()
    colptr, rows = Xc.indptr.astype(np.int64), Xc.indices.astype(np.int32)
    S1, W1 = np.empty((n, M)), np.empty((d + 1, M))
    K.products(colptr, rows, Xc.data, B, G, S1, np.empty((1, 1, 1)), np.empty(n, np.int8), 1)
    K.weights(colptr, rows, Xc.data, B, G, W1, 1)
    np.testing.assert_array_equal(S, S1)
    np.testing.assert_array_equal(Wt.T, W1)


@pytest.mark.parametrize("nb", [1, 2])
@pytest.mark.parametrize("t,mu", [(0.0, 0.0), (0.4, 0.1), (1.0, 0.1)])
def test_move(problem, nb, t, mu):
    _, _, _, _, yi, cw, M, _, rng = problem
    n = len(yi)
    S_b, S_d = rng.normal(size=(n, M)), rng.normal(size=(n, M))
    S_b[:5] = 0.0
    S_d[:5] = 0.0                                  # ties: every class at the same score
    want_b = S_b + t * S_d
    s = mu * (1.0 - t)
    yhat, G = np.empty(n), np.full((n, M), np.nan)
    loss, nerr, nv, bsum = K.move(yi, cw, S_b, S_d, t, s, yhat, G, nb)
    np.testing.assert_allclose(S_b, want_b, rtol=1e-15)
    assert loss == pytest.approx(losses(want_b, yi, cw).sum(), rel=1e-12)
    pred_wrong = [np.any(np.delete(want_b[i], yi[i]) >= want_b[i, yi[i]]) for i in range(n)]
    assert nerr == sum(pred_wrong)
    yhat_want, G_want = cut_of(want_b + s * S_d, yi, cw)
    np.testing.assert_array_equal(yhat, yhat_want)
    np.testing.assert_array_equal(G, G_want)
    assert nv == np.sum(yhat_want >= 0) and bsum == pytest.approx(cw[yhat_want >= 0].sum(), rel=1e-12)
    assert K.loss_at(yi, cw, want_b, S_d, 0.3, nb) == pytest.approx(losses(want_b + 0.3 * S_d, yi, cw).sum(),
                                                                   rel=1e-12)


@pytest.mark.parametrize("nb", [1, 3])
def test_combine_directions_and_gram(problem, nb):
    indptr, indices, values, B, yi, cw, M, Xt, rng = problem
    n = len(yi)
    cuts = [cut_of(rng.normal(size=(n, M)), yi, cw) for _ in range(4)]
    lists = OC.ViolatorLists(4)                              # as the form stores them
    for j, c in enumerate(cuts):
        lists.put(j, c[0].astype(float), j + 1)
    v = (lists.start, lists.length, lists.rows, lists.cls)
    alpha = np.array([0.3, 0.0, 0.5, 0.2])
    G_c = np.full((n, M), np.nan)
    K.combine_lists(*v, alpha, 3, yi, cw, G_c, nb)              # the first 3 cuts only
    G_c_want = sum(a * c[1] for a, c in zip(alpha[:3], cuts[:3]))
    np.testing.assert_allclose(G_c, G_c_want, rtol=1e-14, atol=1e-14)
    G_b = rng.normal(size=(n, M))
    W_c, W_b = Xt.T @ G_c, Xt.T @ G_b
    S_b, S_d = Xt @ W_b, Xt @ W_c
    G_d = np.full((n, M), np.nan)
    got = K.directions(G_c, G_b, S_b, G_d, S_d, nb)
    W_d = W_c - W_b
    np.testing.assert_allclose(got, [np.sum(W_c * W_c), np.sum(W_d * W_d), np.sum(W_b * W_d)], rtol=1e-10)
    np.testing.assert_allclose(S_d, Xt @ W_d, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(G_d, G_c - G_b, rtol=1e-14)
    A_new = Xt.T @ cuts[3][1]
    out = np.full(4, np.nan)
    K.gram_lists(*v, 4, yi, cw, Xt @ A_new, out, nb, K.gram_span(M))
    np.testing.assert_allclose(out, [np.sum((Xt.T @ c[1]) * A_new) for c in cuts], rtol=1e-10)


@pytest.mark.parametrize("nb", [1, 2, 3])
def test_violator_lists_fill_compact_and_replace(problem, nb):
    """The cuts' violator lists in a pool that fills, compacts and has a slot
    replaced: each slot's rows and classes are its cut's, and combine_lists
    and gram_lists over them equal the NumPy sums over the cuts' G."""
    _, _, _, _, yi, cw, M, _, rng = problem
    n, k = len(yi), 9
    cuts = [cut_of(rng.normal(size=(n, M)) * s, yi, cw) for s in np.linspace(0.5, 3, k)]
    cuts[4] = (np.full(n, -1), np.zeros((n, M)))           # a cut with no violator
    lists = OC.ViolatorLists(12)
    lists.rows, lists.cls = np.empty(40, np.int32), np.empty(40, np.int32)   # a small pool: compactions
    for j in range(k):
        lists.put(j, cuts[j][0].astype(float), j + 1)
    cuts[2] = cut_of(rng.normal(size=(n, M)), yi, cw)      # slot 2 takes a new cut
    lists.put(2, cuts[2][0].astype(float), k)
    for j, (yhat, _) in enumerate(cuts):
        seg = slice(lists.start[j], lists.start[j] + lists.length[j])
        np.testing.assert_array_equal(lists.rows[seg], np.flatnonzero(yhat >= 0))
        np.testing.assert_array_equal(lists.cls[seg], yhat[yhat >= 0])
    assert lists.end <= sum(lists.length[:k]) + len(np.flatnonzero(cuts[2][0] >= 0))
    alpha = np.array([0.3, 0.0, 0.5, 0.2, 0.1, 0.0, 0.05, 0.4, 0.25])
    v = (lists.start, lists.length, lists.rows, lists.cls)
    G_c = np.full((n, M), np.nan)
    K.combine_lists(*v, alpha, k, yi, cw, G_c, nb)
    np.testing.assert_allclose(G_c, sum(a * c[1] for a, c in zip(alpha, cuts)), rtol=1e-14, atol=1e-14)
    S_new = rng.normal(size=(n, M))
    h = np.full(k, np.nan)
    K.gram_lists(*v, k, yi, cw, S_new, h, nb, K.gram_span(M))
    np.testing.assert_allclose(h, [np.sum(c[1] * S_new) for c in cuts], rtol=1e-12, atol=1e-12)
    for span in (1, 3, 7):                                  # spans of a few rows: the same bits
        h_span = np.full(k, np.nan)
        K.gram_lists(*v, k, yi, cw, S_new, h_span, nb, span)
        np.testing.assert_array_equal(h_span, h)
    if nb > 1:                                              # the blocks change nothing
        G_1 = np.empty((n, M))
        K.combine_lists(*v, alpha, k, yi, cw, G_1, 1)
        np.testing.assert_array_equal(G_c, G_1)
    # the class-index rows (--stream's cut buffer) give the same bits
    Yhat = np.array([c[0] for c in cuts], np.int16)
    G_rows, h_rows = np.full((n, M), np.nan), np.full(k, np.nan)
    K.combine(Yhat, alpha, k, yi, cw, G_rows, nb)
    K.gram(Yhat, k, yi, cw, S_new, h_rows, nb)
    np.testing.assert_array_equal(G_rows, G_c)
    np.testing.assert_array_equal(h_rows, h)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("nb", [1, 2])
def test_line_search_is_the_exact_minimum(seed, nb):
    """The envelope breakpoints and the selection give the minimiser of
    phi(t) = 1/2 |W_b + t W_d|^2 + loss(S_b + t S_d) (a fine grid never does better)."""
    rng = np.random.default_rng(seed)
    n, M = 80, int(rng.integers(2, 7))
    yi = rng.integers(0, M, size=n)
    cw = rng.uniform(0.5, 2.0, size=n)
    S_b, S_d = rng.normal(size=(n, M)), rng.normal(size=(n, M)) * rng.choice([0.1, 1.0, 5.0])
    S_d[:4] = S_d[4]                               # repeated rows: tied breakpoints
    S_b[:4] = S_b[4]
    yi[:4] = yi[4]
    qa, qb = rng.uniform(1, 50), -rng.uniform(5, 80)
    kb, wb = np.empty(n * (M - 1)), np.empty(n * (M - 1))
    G, m = K.breakpoints(yi, cw, S_b, S_d, qb, nb, kb, wb)
    t = KO.minimise_over_breakpoints(kb, wb, G, m, qa, nb)

    def phi(s):
        return 0.5 * qa * s * s + qb * s + losses(S_b + s * S_d, yi, cw).sum()
    grid = np.linspace(0.0, 3.0 * t + 3.0, 6001)
    assert phi(t) <= min(phi(s) for s in grid) + 1e-9 * max(1.0, abs(phi(t)))
    assert np.all(kb[np.isfinite(kb)] > 0) and np.sum(np.isfinite(kb)) == m


# ---------------------------------------------------------------------------
# the solver
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("params", [{}, {"bias": 1.0, "C": 0.3}, {"class_weights": {2.0: 3.0}},
                                    {"ocas_method": "cp"}])
def test_objective_brackets_the_dcd_optimum(params):
    """Q_D <= F* <= Q_P with Q_P within eps of F*, F* from dcd's
    Crammer-Singer method at a tight tolerance (its primal and dual)."""
    X, y = multiclass_data(n=500, d=5, k=4, seed=2)       # overlapping classes
    ref = svmtrain.train(X, y.astype(np.float64), solver="dcd", multiclass="cs", eps=1e-6, **params)
    P, D = ref.fit_results[0].info["primal_C_form"], ref.fit_results[0].info["dual_objective"]
    assert P - D < 1e-6 * P
    m = svmtrain.train(X, y.astype(np.float64), solver="ocas", multiclass="cs", eps=1e-4, **params)
    r = m.fit_results[0]
    assert r.converged and r.info["exit"] == "TolRel"
    assert r.info["Q_D"] <= P * (1 + 1e-9) and r.info["Q_P"] >= D * (1 - 1e-9)
    assert r.info["Q_P"] <= P * (1 + 1.1e-4)
    # Q_P is the primal of the model returned
    data = as_chunk(X)
    from svmtrain.solvers.dcd import _dcd_cs_kernels as KC
    C = params.get("C", 1.0)
    w = np.asarray(m.W, np.float64)
    if "bias" not in params:
        w = np.vstack([w, np.zeros((1, w.shape[1]))])
    indptr, indices, values = csr_arrays(data, X.shape[1])
    order = m.labels
    yi = np.array([list(order).index(float(label)) for label in y], np.int64)
    cw = C * np.array([params.get("class_weights", {}).get(float(c), 1.0) for c in order])[yi]
    B = params.get("bias", 0.0)
    F = 0.5 * float(np.sum(w * w)) + KC.cs_losses(indptr, indices, values, B, yi, cw, len(order), w.reshape(-1))
    assert F == pytest.approx(r.info["Q_P"], rel=1e-9)
    # the classes overlap: points on the boundary follow the last 1e-4 of the objective
    # (against dcd at eps 1e-6, 1e-8 and 1e-10 the agreement is 0.984-0.998)
    assert np.mean(m.predict(data) == ref.predict(data)) >= 0.98


@needs("liblinear-train", package="liblinear-tools")
def test_objective_within_1e4_of_liblinear_s4(tmp_path):
    X, y = multiclass_data(n=800, d=40, k=5, seed=3)
    train = tmp_path / "train"
    train.write_text(libsvm_text(X, y))
    out = subprocess.run([LIBLINEAR, "-s", "4", "-e", "0.0001", str(train), str(tmp_path / "ll.model")],
                         check=True, capture_output=True, text=True).stdout
    dual_liblinear = -float(out.split("Objective value = ")[1].split()[0])
    res = CliRunner().invoke(train_main, ["-s", "ocas", "--multiclass", "cs", "-e", "0.0001", "-q", str(train),
                                          str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    ours = svmtrain.train(str(train), solver="ocas", multiclass="cs", eps=1e-4).fit_results[0].info
    assert ours["Q_D"] <= dual_liblinear * (1 + 2e-6) + 2e-6 or ours["Q_P"] >= dual_liblinear
    assert ours["Q_P"] == pytest.approx(dual_liblinear, rel=2e-4)
    data = svmtrain.io.reader.read_libsvm(train)
    agree = np.mean(svmtrain.predict(str(train), svmtrain.load_model(tmp_path / "m"))
                    == read_liblinear_model(tmp_path / "ll.model").predict(data))
    assert agree >= 0.99


def test_two_classes_keep_w_and_minus_w():
    X, y = multiclass_data(n=200, d=6, k=2, seed=1)
    m = svmtrain.train(X, y.astype(np.float64), solver="ocas", multiclass="cs", eps=1e-4)
    assert m.W.shape == (6, 1)
    ref = svmtrain.train(X, y.astype(np.float64), solver="dcd", multiclass="cs", eps=1e-6)
    assert np.mean(m.predict(as_chunk(X)) == ref.predict(as_chunk(X))) >= 0.99


def test_a_small_buffer_drops_cuts_and_still_reaches_the_optimum():
    """With room for 20 cuts the run replaces inactive cuts (their slots'
    violator lists too) 31 times and still stops within eps of dcd's optimum."""
    X, y = multiclass_data(n=500, d=5, k=4, seed=2)
    ref = svmtrain.train(X, y.astype(np.float64), solver="dcd", multiclass="cs", eps=1e-6)
    P = ref.fit_results[0].info["primal_C_form"]
    r = svmtrain.train(X, y.astype(np.float64), solver="ocas", multiclass="cs", eps=1e-4,
                       cut_buffer=20).fit_results[0]
    assert r.converged and r.info["exit"] == "TolRel" and r.info["cuts_dropped"] > 10
    assert P * (1 - 1e-9) <= r.info["Q_P"] <= P * (1 + 1.1e-4)


def test_tol_abs_also_stops_the_reduced_qp():
    """With a relative tolerance that never stops (-e 1e-300) and an absolute
    one that does, the run ends by TolAbs within it of dcd's optimum, and its
    reduced QPs stop at half of it (msvmocas's rule would run each to
    max_steps: about 44,000 pair steps an iteration on a problem like this)."""
    X, y = multiclass_data(n=500, d=5, k=4, seed=2)
    ref = svmtrain.train(X, y.astype(np.float64), solver="dcd", multiclass="cs", eps=1e-6)
    P = ref.fit_results[0].info["primal_C_form"]
    r = svmtrain.train(X, y.astype(np.float64), solver="ocas", multiclass="cs", eps=1e-300,
                       tol_abs=0.05).fit_results[0]
    assert r.converged and r.info["exit"] == "TolAbs"
    assert P - 1e-6 <= r.info["Q_P"] <= P + 0.05
    assert r.info["qp_steps"] <= 1000 * r.n_iter


def test_full_buffer_of_active_cuts_stops():
    """Class-index cuts cannot be merged: with room for 2 cuts it stops as svmocas does."""
    X, y = multiclass_data(n=300, d=10, k=3, seed=6)
    r = svmtrain.train(X, y.astype(np.float64), solver="ocas", multiclass="cs", eps=1e-6,
                       cut_buffer=2).fit_results[0]
    assert r.info["exit"] == "CutBuffer"        # a gap near 1 after 2 cuts: far from the 1e-6 tolerance
    assert not r.converged and r.info["n_cuts"] == 2 and r.info["gap_rel"] > 1e-6


def test_refusals(tmp_path):
    X, y = multiclass_data(n=30, d=3, k=3)
    with pytest.raises(ParameterError, match="starting point"):
        from svmtrain.solvers.ocas import ocas_cs
        ocas_cs.CrammerSinger(np.zeros(2, np.int64), np.zeros(0, np.int32), np.zeros(0), 0.0, np.zeros(1, np.int64),
                              np.ones(1), 3, 4, 2, 1).start_at(np.zeros(4))
    train = tmp_path / "train"
    train.write_text(libsvm_text(X, y))
    res = CliRunner().invoke(train_main, ["-s", "dcd", "--multiclass", "cs", "--stream", str(train),
                                          str(tmp_path / "m")])
    assert res.exit_code == 2 and "in memory only; -s ocas --multiclass cs streams" in res.output


# ---------------------------------------------------------------------------
# streamed (--stream): the same run over row blocks
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def four_classes(tmp_path_factory):
    """(training file, its Chunk, test Chunk): 4 overlapping classes, 400 + 200 rows."""
    from svmtrain.io.reader import read_libsvm
    X, y = multiclass_data(n=600, d=12, k=4, seed=5)
    path = tmp_path_factory.mktemp("cs") / "train"
    path.write_text(libsvm_text(X[:400], y[:400]))
    return path, read_libsvm(path), as_chunk(X[400:], y[400:].astype(np.float64))


@pytest.mark.parametrize("params", [{}, {"bias": 1.0, "C": 0.3}, {"class_weights": {2.0: 3.0, 4.0: 0.5}, "bias": 1.0},
                                    {"ocas_method": "cp", "max_iter": 60}])
def test_streamed_run_is_the_in_memory_run(four_classes, params):
    """Over 11 blocks of 37 rows: the same iterations, objective and model,
    bit for bit (one thread on this small set, and the blocks in order give
    the in-memory sums), so the same predictions."""
    from svmtrain.training.streamed import train_streamed
    from svmtrain.params import TrainParams
    from svmtrain.training.train import train
    path, data, test = four_classes
    p = TrainParams(solver="ocas", multiclass="cs", eps=1e-4, **params)
    mem = train(data, p)
    st = train_streamed(path, p, memory_limit_mb=64, chunk_rows=37)
    assert dict(st.header)["stream_blocks"] == 11
    r0, r1 = mem.fit_results[0], st.fit_results[0]
    assert r1.n_iter == r0.n_iter and r1.info["exit"] == r0.info["exit"]
    assert r1.objective == r0.objective and r0.info["threads"] == r1.info["threads"] == 1
    assert [h[2:] for h in r1.info["history"]] == [h[2:] for h in r0.info["history"]]
    np.testing.assert_array_equal(st.W, mem.W)
    np.testing.assert_array_equal(st.predict(test), mem.predict(test))
    np.testing.assert_array_equal(st.predict(data), mem.predict(data))


def test_cli_streams_within_a_memory_limit(tmp_path, four_classes):
    """svm-train --memory-limit 1 (the plan shrinks the cut buffer, and says
    so): the model file predicts as the in-memory one; two classes too."""
    path, data, test = four_classes
    args = ["-s", "ocas", "--multiclass", "cs", "-e", "0.001", "-B", "1", "-w2", "2"]
    res = CliRunner().invoke(train_main, args + ["--memory-limit", "1", str(path), str(tmp_path / "s")])
    assert res.exit_code == 0, res.output
    assert "cuts of 400 class indices" in res.output
    res = CliRunner().invoke(train_main, args + ["-q", str(path), str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    s, m = svmtrain.load_model(tmp_path / "s"), svmtrain.load_model(tmp_path / "m")
    assert dict(s.header)["stream"] and dict(s.header)["n_iter"] == dict(m.header)["n_iter"]
    np.testing.assert_array_equal(s.predict(test), m.predict(test))
    X, y = multiclass_data(n=200, d=6, k=2, seed=1)
    two = tmp_path / "two"
    two.write_text(libsvm_text(X, y))
    for name, extra in (("s2", ["--memory-limit", "1"]), ("m2", [])):
        res = CliRunner().invoke(train_main, ["-q", "-s", "ocas", "--multiclass", "cs", *extra, str(two),
                                              str(tmp_path / name)])
        assert res.exit_code == 0, res.output
    s, m = svmtrain.load_model(tmp_path / "s2"), svmtrain.load_model(tmp_path / "m2")
    assert s.W.shape == (6, 1)
    np.testing.assert_allclose(s.W, m.W, rtol=1e-9, atol=1e-12)
