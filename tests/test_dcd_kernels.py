"""The DCD kernel's random visiting order and per-row state, against plain Python twins."""
import itertools

import numpy as np
import pytest

from svmtrain.solvers.dcd import _dcd_kernels as K

MASK64 = (1 << 64) - 1


def splitmix64(state):
    """Python twin of K._next_u64: (next state, output)."""
    z = (state + 0x9E3779B97F4A7C15) & MASK64
    out = z
    out = ((out ^ (out >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    out = ((out ^ (out >> 27)) * 0x94D049BB133111EB) & MASK64
    return z, out ^ (out >> 31)


def below_twin(bound, state):
    """Python twin of K._below (Lemire's multiply-shift with rejection): (state, value)."""
    floor = (1 << 32) % bound
    while True:
        state, u = splitmix64(state)
        m = (u >> 32) * bound
        if (m & 0xFFFFFFFF) >= floor:
            return state, m >> 32


@pytest.mark.parametrize("bound", [1, 2, 3, 7, 1000, 2**31 + 1, 3 * 2**30, 2**32])
def test_below_matches_python_twin(bound):
    rng = np.array([2024], np.uint64)
    state = 2024
    for _ in range(300):
        state, want = below_twin(bound, state)
        got = K._below(bound, rng)
        assert got == want and 0 <= got < bound
        assert int(rng[0]) == state


def test_below_rejects_the_biased_low_values():
    """bound 3 * 2**30: 2**32 mod bound = 2**30 low products are rejected;
    without the rejection the lowest third would be hit 4/3 as often."""
    bound = 3 * 2**30
    rng = np.array([5], np.uint64)
    thirds = np.bincount([K._below(bound, rng) // 2**30 for _ in range(30000)], minlength=3)
    assert thirds.shape == (3,)
    assert np.all(np.abs(thirds - 10000) < 5 * np.sqrt(10000 * 2 / 3))


def test_shuffle_every_order_equally_likely():
    rng = np.array([11], np.uint64)
    orders = {p: 0 for p in itertools.permutations(range(4))}
    trials = 24000
    for _ in range(trials):
        index = np.arange(4, dtype=np.int64)
        K._shuffle(index, 4, rng)
        orders[tuple(index.tolist())] += 1
    expect = trials / 24
    sd = np.sqrt(expect * (1 - 1 / 24))
    assert all(abs(c - expect) < 5 * sd for c in orders.values()), orders


def test_shuffle_touches_only_the_prefix():
    index = np.arange(10, dtype=np.int64)
    K._shuffle(index, 6, np.array([3], np.uint64))
    assert sorted(index[:6].tolist()) == list(range(6))
    assert index[6:].tolist() == [6, 7, 8, 9]


def test_new_state_keeps_the_label_in_the_sign_even_for_zero_diagonals():
    y = np.array([1.0, -1.0, -1.0, 1.0])
    QD = np.array([2.5, 0.0, 3.0, 0.0])
    state = K.new_state(y, QD)
    assert state.shape == (4, 2) and not state[:, 0].any()
    np.testing.assert_array_equal(np.abs(state[:, 1]), QD)
    np.testing.assert_array_equal(np.copysign(1.0, state[:, 1]), y)
    out = np.full((6, 2), 7.0)
    K.new_state(y, QD, out=out[1:5])
    np.testing.assert_array_equal(out[1:5], state)
    assert (out[0] == 7.0).all() and (out[5] == 7.0).all()
