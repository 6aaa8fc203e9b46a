"""-s dcd: dual coordinate descent against LIBLINEAR (-s 3 / -s 1) and a NumPy twin."""
import numpy as np
import pytest
from liblinear import liblinearutil
import scipy.sparse as sp

from conftest import bundled
from naive_dcd import naive_dcd, primal_C
from svmtrain.data.dataset import Chunk
from svmtrain.errors import ParameterError
from svmtrain.io.reader import read_libsvm
from svmtrain.params import TrainParams
from svmtrain.solvers.dcd import dcd

TIGHT = dict(eps=1e-5, max_iter=100000)   # ours: duality gap far below 1e-4 relative on these sets


def to_csr(X, d):
    """scipy CSR of a Chunk with exactly d columns (features >= d dropped)."""
    A = sp.csr_matrix((X.values, X.indices, X.indptr), shape=(X.n_rows, max(d, X.n_features)))
    return A[:, :d].tocsr()


def chunk_of(A, labels):
    A = sp.csr_matrix(A)
    A.sort_indices()
    return Chunk(np.asarray(labels, np.float64), A.indptr.astype(np.int64),
                 A.indices.astype(np.int32), A.data.astype(np.float64),
                 np.zeros(A.shape[0], np.int64))


@pytest.fixture(scope="module")
def a9a():
    X = read_libsvm(bundled("a9a.xz"))
    T = read_libsvm(bundled("a9a.t.xz"))
    d = X.n_features                       # 123; a9a.t only reaches 122
    return X, to_csr(X, d), T, to_csr(T, d), d


@pytest.fixture(scope="module")
def mushrooms():
    X = read_libsvm(bundled("mushrooms.xz"))
    return X, to_csr(X, X.n_features), X.n_features


def liblinear_fit(labels, A, opts):
    """Train LIBLINEAR; return (w incl. bias weight if -B, y in +-1 scoring label[0], model)."""
    m = liblinearutil.train(labels, A, opts + " -q")
    size = m.get_nr_feature() + (1 if m.bias >= 0 else 0)
    w = np.ctypeslib.as_array(m.w, shape=(size,)).copy()
    y = np.where(labels == m.get_labels()[0], 1.0, -1.0)
    return w, y, m


def c_form(A, y, w, C, cost, loss, B=-1.0):
    """LIBLINEAR's primal objective 1/2|w|^2 + C sum cost_i loss_i for sparse A."""
    s = A @ w[:A.shape[1]]
    if B >= 0:
        s = s + B * w[-1]
    m = np.maximum(0.0, 1.0 - y * s)
    if loss != "hinge":
        m = m * m
    return 0.5 * float(w @ w) + C * float(np.sum(np.where(y > 0, cost[0], cost[1]) * m))


def accuracy(X, A_test, labels_test, w, label_pos, label_neg, B=-1.0):
    s = A_test @ w[:A_test.shape[1]] + (B * w[-1] if B >= 0 else 0.0)
    pred = np.where(s > 0, label_pos, label_neg)
    return 100.0 * np.mean(pred == labels_test)


def check_against_liblinear(X, A, d, C, loss, opts, cost=(1.0, 1.0), B=-1.0, liblinear_converges=True):
    s = 3 if loss == "hinge" else 1
    w_ll, y, m = liblinear_fit(X.labels, A, f"-s {s} -c {C} -e 1e-6 {opts}")
    p = TrainParams(solver="dcd", C=C, loss=loss, bias=B, **TIGHT)
    r = dcd.fit(X, y, d, p, class_cost=cost)
    assert r.converged
    ours, ref = r.info["primal_C_form"], c_form(A, y, w_ll, C, cost, loss, B)
    assert ours == pytest.approx(c_form(A, y, r.w, C, cost, loss, B), rel=1e-12)
    # lambda form = C form / (n C)
    assert r.objective == pytest.approx(ours / (X.n_rows * C), rel=1e-12)
    # weak duality, and our own certificate of optimality
    assert r.info["dual_objective"] <= ref * (1 + 1e-12)
    assert ours - r.info["dual_objective"] <= 1e-5 * ours
    if liblinear_converges:
        assert ours == pytest.approx(ref, rel=1e-4)
    else:
        # LIBLINEAR stops at its own iteration cap above the optimum: ours must not be worse
        assert ours <= ref * (1 + 1e-4)
    return r, w_ll, m


@pytest.mark.parametrize("C,loss,ll_converges", [
    (1.0, "hinge", False),        # liblinear-official -s 3 -e 1e-6 hits its 300-iteration cap here
    (1.0, "squared-hinge", True),
    (0.01, "hinge", True),
    (0.01, "squared-hinge", True),
])
def test_a9a_matches_liblinear(a9a, C, loss, ll_converges):
    X, A, T, At, d = a9a
    r, w_ll, m = check_against_liblinear(X, A, d, C, loss, "", liblinear_converges=ll_converges)
    lp, ln = m.get_labels()
    acc_ours = accuracy(X, At, T.labels, r.w, lp, ln)
    acc_ll = accuracy(X, At, T.labels, w_ll, lp, ln)
    assert acc_ours > 80.0
    assert abs(acc_ours - acc_ll) <= 0.1


def test_mushrooms_labels_1_2(mushrooms):
    X, A, d = mushrooms
    for loss in ("hinge", "squared-hinge"):
        r, w_ll, m = check_against_liblinear(X, A, d, 0.1, loss, "")
        assert sorted(m.get_labels()) == [1, 2]
        lp, ln = m.get_labels()
        assert accuracy(X, A, X.labels, r.w, lp, ln) == accuracy(X, A, X.labels, w_ll, lp, ln)


def test_bias_B1_matches_liblinear(a9a):
    X, A, T, At, d = a9a
    r, w_ll, m = check_against_liblinear(X, A, d, 0.1, "hinge", "-B 1", B=1.0)
    assert r.w.shape == (d + 1,) and w_ll.shape == (d + 1,)
    assert r.w[-1] != 0.0
    assert r.w[-1] == pytest.approx(w_ll[-1], abs=0.05)
    lp, ln = m.get_labels()
    assert abs(accuracy(X, At, T.labels, r.w, lp, ln, 1.0) - accuracy(X, At, T.labels, w_ll, lp, ln, 1.0)) <= 0.1


def test_class_weights_match_liblinear(a9a):
    X, A, T, At, d = a9a
    # LIBLINEAR's binary label order for -1/+1 data is (+1, -1): cost_pos belongs to label +1
    r, w_ll, m = check_against_liblinear(X, A, d, 0.1, "squared-hinge", "-w1 2 -w-1 0.5",
                                         cost=(2.0, 0.5))
    assert m.get_labels()[0] == 1
    r0 = dcd.fit(X, np.where(X.labels == 1, 1.0, -1.0), d,
                 TrainParams(solver="dcd", C=0.1, loss="squared-hinge", **TIGHT))
    # the weights really changed the problem: more positives predicted
    assert np.sum(A @ r.w > 0) > np.sum(A @ r0.w > 0)


def test_same_seed_bit_identical_and_progress(a9a):
    X, A, T, At, d = a9a
    y = np.where(X.labels == 1, 1.0, -1.0)
    p = TrainParams(solver="dcd", C=1.0, seed=7)
    calls = []
    r1 = dcd.fit(X, y, d, p)
    r2 = dcd.fit(X, y, d, p, progress=lambda done, total, status=None: calls.append((done, total)))
    assert np.array_equal(r1.w, r2.w) and r1.n_iter == r2.n_iter
    assert calls == [(k, 1000) for k in range(1, r1.n_iter + 1)]
    r3 = dcd.fit(X, y, d, TrainParams(solver="dcd", C=1.0, seed=8))
    assert not np.array_equal(r1.w, r3.w)


def test_max_iter_cap_warns(a9a):
    X, A, T, At, d = a9a
    y = np.where(X.labels == 1, 1.0, -1.0)
    lines = []
    r = dcd.fit(X, y, d, TrainParams(solver="dcd", C=1.0, eps=1e-9, max_iter=3), log=lines.append)
    assert not r.converged and r.n_iter == 3 and r.info["n_iter"] == 3
    assert any(s.startswith("WARNING: reaching max number of iterations") for s in lines)
    ok = []
    r = dcd.fit(X, y, d, TrainParams(solver="dcd", C=1.0), log=ok.append)
    assert r.converged and not any("WARNING" in s for s in ok)


def test_unreg_bias_rejected(a9a):
    X, A, T, At, d = a9a
    y = np.where(X.labels == 1, 1.0, -1.0)
    with pytest.raises(ParameterError, match="-R"):
        dcd.fit(X, y, d, TrainParams(solver="dcd", unreg_bias=True, bias=1.0))


@pytest.mark.parametrize("loss,B,cost", [
    ("hinge", -1.0, (1.0, 1.0)),
    ("squared-hinge", -1.0, (1.0, 1.0)),
    ("hinge", 1.0, (3.0, 0.5)),
    ("squared-hinge", 2.0, (0.5, 2.0)),
])
def test_kernel_matches_numpy_twin(loss, B, cost):
    rng = np.random.default_rng(3)
    n, d = 60, 7
    Xd = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.6)
    Xd[5] = 0.0                                          # an empty row
    y = np.where(Xd @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0.2, 1.0, -1.0)
    C = 0.7
    w_np, alpha_np, _ = naive_dcd(Xd, y, C * cost[0], C * cost[1], loss, B, eps=1e-10)
    X = chunk_of(Xd, y)
    r = dcd.fit(X, y, d, TrainParams(solver="dcd", C=C, loss=loss, bias=B, eps=1e-10, max_iter=10**6),
                class_cost=cost)
    assert r.converged
    np.testing.assert_allclose(r.w, w_np, rtol=1e-6, atol=1e-7)
    ref = primal_C(Xd, y, w_np, C * cost[0], C * cost[1], loss, B)
    assert r.info["primal_C_form"] == pytest.approx(ref, rel=1e-9)
    assert r.info["dual_objective"] == pytest.approx(ref, rel=1e-7)
    assert r.info["n_sv"] == int(np.sum(alpha_np > 0))


def test_edge_cases():
    # no rows
    X = chunk_of(sp.csr_matrix((0, 3)), [])
    r = dcd.fit(X, np.empty(0), 3, TrainParams(solver="dcd"))
    assert r.converged and r.w.shape == (3,) and not r.w.any()
    # one class only, empty rows, -B 0 (a constant feature of 0 leaves w[-1] at 0)
    Xd = np.array([[1.0, 0.0], [0.0, 0.0], [2.0, 1.0]])
    r = dcd.fit(chunk_of(Xd, [1, 1, 1]), np.ones(3), 2, TrainParams(solver="dcd", bias=0.0))
    assert r.converged and r.w.shape == (3,) and r.w[-1] == 0.0
    with pytest.raises(ParameterError):
        dcd.fit(chunk_of(Xd, [1, 1, 1]), np.array([1.0, 0.0, 1.0]), 2, TrainParams(solver="dcd"))
    with pytest.raises(ParameterError):
        dcd.fit(chunk_of(Xd, [1, 1, 1]), np.ones(3), 1, TrainParams(solver="dcd"))
