"""The vectorised selections of -s smo's contiguous blocks
(``block_select_i`` / ``block_select_j`` in svmtrain/solvers/kernel/_smo_kernels.py):
the same choices as LIBSVM's loops (``_select_i`` / ``_select_j``) and as a
plain-NumPy statement of the rule, ties and signed zeros included."""
import numpy as np
import pytest

from svmtrain.solvers.kernel import _smo_kernels as K


def numpy_select_i(y, C, a, G):
    """(the last index of the largest -y G over I_up, that value), or (-1, -inf)."""
    up = ((y > 0) & (a < C)) | ((y < 0) & (a > 0))
    if not up.any():
        return -1, -np.inf
    v = np.where(up, -y * G, -np.inf)
    i = int(np.flatnonzero(up & (v == v[up].max()))[-1])
    return i, -y[i] * G[i]


def numpy_select_j(y, C, a, G, QD, i, g_max, K_i):
    """(the last index of the smallest -(g_max + y G)^2 / quad over I_low
    with g_max + y G > 0, or -1; the largest y G over I_low, or -inf)."""
    low = ((y > 0) & (a > 0)) | ((y < 0) & (a < C))
    g2 = (y * G)[low].max() if low.any() else -np.inf
    diff = g_max + y * G
    quad = QD[i] + QD - 2.0 * K_i.astype(np.float64)
    quad = np.where(quad > 0, quad, K.TAU)
    ok = low & (diff > 0)
    if not ok.any():
        return -1, g2
    obj = np.where(ok, -(diff * diff) / quad, np.inf)
    return int(np.flatnonzero(ok & (obj == obj[ok].min()))[-1]), g2


def _problem(rng, m, coarse):
    y = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    C = np.full(m, 2.0)
    a = rng.choice([0.0, 0.5, 1.0, 2.0], m)
    G = rng.choice([0.0, -0.0, 1.0, -1.0, 0.5, -0.25, 3.0], m) if coarse else rng.standard_normal(m)
    QD = rng.choice([1.0, 0.5], m)
    K_i = rng.choice([1.0, 0.25, 0.5, 0.75], m).astype(np.float32)
    return y, C, a, G, QD, K_i


@pytest.mark.parametrize("coarse", [True, False])
def test_block_selections_are_libsvms_and_numpys(coarse):
    """Coarse values make ties and signed zeros common: the last index wins, as in LIBSVM."""
    rng = np.random.default_rng(7)
    for _ in range(300):
        m = int(rng.integers(1, 80))
        y, C, a, G, QD, K_i = _problem(rng, m, coarse)
        keys = np.empty(m, np.int64)
        ident = np.arange(m)
        got_i = K.block_select_i(y, C, a, G, m, keys)
        assert got_i == K._select_i(y, C, a, G, ident, m) == numpy_select_i(y, C, a, G)
        i, g_max = got_i
        if i < 0:
            continue
        got_j = K.block_select_j(y, C, a, G, QD, m, i, g_max, K_i, keys)
        assert got_j == K._select_j(y, C, a, G, QD, ident, m, i, g_max, K_i, ident)
        assert got_j == numpy_select_j(y, C, a, G, QD, i, g_max, K_i)


def test_order_key_orders_as_the_floats():
    x = np.array([-np.inf, -1e300, -2.0, -1.0, -1e-300, -0.0, 0.0, 1e-300, 1.0, 2.0, 1e300, np.inf])
    keys = [K.order_key(v) for v in x]
    assert keys == sorted(keys) and keys[5] == keys[6]
    assert [K.key_value(k) for k in keys[:5] + keys[6:]] == list(x[:5]) + list(x[6:])


def test_pair_then_select_i_is_the_step_then_the_selection():
    """The fused step: the same alphas and gradients as pair_on_block, and
    the next i of block_select_i on them, to the bit."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        m = int(rng.integers(2, 60))
        y, C, a, G, QD, K_i = _problem(rng, m, coarse=False)
        K_j = rng.random(m).astype(np.float32)
        qi, qj = (int(v) for v in rng.choice(m, 2, replace=False))
        a1, G1, a2, G2 = a.copy(), G.copy(), a.copy(), G.copy()
        want = K.pair_on_block(y, C, a1, G1, QD, K_i, K_j, qi, qj, m)
        want_next = K.block_select_i(y, C, a1, G1, m, np.empty(m, np.int64))
        got = K.pair_then_select_i(y, C, a2, G2, QD, K_i, K_j, qi, qj, m, np.empty(m, np.int64))
        assert got == want + want_next
        assert np.array_equal(a1, a2) and np.array_equal(G1, G2)


def test_cholesky_and_dropping_a_variable_are_numpys():
    """The Newton step's factor (_cholesky, with jitter) and its update when a
    variable leaves the face (_cholesky_drop) against numpy.linalg.cholesky."""
    rng = np.random.default_rng(5)
    for k in (1, 2, 7, 30):
        B = rng.standard_normal((k, k + 3))
        A = B @ B.T
        L = A.copy()
        assert K._cholesky(L, k, 0.5)
        want = np.linalg.cholesky(A + 0.5 * np.eye(k))
        assert np.allclose(np.tril(L), want, rtol=1e-10, atol=1e-12)
        for j in sorted({0, k // 2, k - 1}, reverse=True):
            if k < 2:
                break
            keep = np.delete(np.arange(k), j)
            full = np.tril(L[:k, :k]) @ np.tril(L[:k, :k]).T
            K._cholesky_drop(L, k, j)
            k -= 1
            assert np.allclose(np.tril(L[:k, :k]), np.linalg.cholesky(full[np.ix_(keep, keep)]), rtol=1e-9,
                               atol=1e-10)
    singular = np.ones((3, 3))
    assert not K._cholesky(singular.copy(), 3, 0.0) and K._cholesky(singular.copy(), 3, 1e-6)
