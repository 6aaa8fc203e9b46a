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
