"""The reader's Eisel-Lemire conversion (svmtrain.io._decimal_kernels):
every double it returns is Python's float() of the same decimal (correctly
rounded, ties to even), and it declines only subnormal, overflowing and
out-of-table results; the reader then stores the same values whatever the
number of digits."""
from decimal import Decimal

import numpy as np
import pytest

from svmtrain.io._decimal_kernels import FIVE_HIGH, LARGEST_Q, SMALLEST_Q, eisel_lemire
from svmtrain.io.reader import parse_bytes


def _check(m, q):
    ok, v = eisel_lemire(m, q)
    want = float(f"{m}e{q}")
    if ok:
        assert v == want and np.signbit(v) == np.signbit(want), (m, q)
    else:
        assert want == 0.0 or abs(want) < 2.2250738585072014e-308 or want == float("inf"), (m, q)
    return ok


@pytest.mark.parametrize("seed", range(3))
def test_random_mantissas_and_exponents_match_float(seed):
    rng = np.random.default_rng(seed)
    converted = 0
    for _ in range(20000):
        digits = int(rng.integers(1, 19))
        converted += _check(int(rng.integers(1, 10 ** digits)), int(rng.integers(-345, 312)))
    assert converted > 18000          # declined: only the subnormal / overflow / outside-table ends


def test_halfway_decimals_round_to_even():
    """Decimals exactly between two adjacent doubles (and one unit either
    side in the last digit) convert as float() does."""
    rng = np.random.default_rng(9)
    tried = 0
    for x in rng.uniform(1.0, 2.0, 3000) * 2.0 ** rng.integers(-20, 60, 3000):
        half = (Decimal(float(x)) + Decimal(float(np.nextafter(x, np.inf)))) / 2
        sign, digits, exp = half.normalize().as_tuple()
        if len(digits) > 18:
            continue
        m = int("".join(map(str, digits)))
        for mm in (m - 1, m, m + 1):
            _check(mm, exp)
        tried += 1
    assert tried > 200
    for m, q in ((9007199254740993, 0), (9007199254740995, 0), (4503599627370497, 1), (1, 0), (5, -1)):
        _check(m, q)


def test_table_ends_and_edges():
    assert len(FIVE_HIGH) == LARGEST_Q - SMALLEST_Q + 1
    assert all(int(h) >> 63 == 1 for h in FIVE_HIGH)          # normalised
    for m, q in ((17976931348623157, 292), (17976931348623159, 292), (22250738585072014, -324),
                 (22250738585072011, -324), (1, SMALLEST_Q - 1), (1, LARGEST_Q + 1), (999999999999999999, 308),
                 (1, -307), (1, -308), (123456789012345678, -17)):
        _check(m, q)


def test_the_reader_stores_long_numbers_as_float_does():
    """Values and labels of 15 to 21 significant digits, exponents and
    leading zeros, through the whole reader: the same doubles as float()."""
    rng = np.random.default_rng(4)
    tokens = []
    for _ in range(3000):
        digits = int(rng.integers(15, 22))
        mant = str(int(rng.integers(10 ** 14, 10 ** 15))) + "".join(rng.choice(list("0123456789"), digits - 15))
        point = int(rng.integers(0, len(mant) + 1))
        text = mant[:point] + "." + mant[point:] if point < len(mant) else mant
        form = int(rng.integers(0, 3))
        if form == 1:
            text = f"{text}e{int(rng.integers(-300, 290))}"
        elif form == 2:
            text = "0.000" + mant
        tokens.append(("-" if rng.random() < 0.3 else "") + text)
    lines = [f"{tokens[r]} " + " ".join(f"{j + 1}:{tokens[(r * 7 + j) % len(tokens)]}" for j in range(5))
             for r in range(len(tokens))]
    data = parse_bytes(("\n".join(lines) + "\n").encode())
    want_labels = [float(t) for t in tokens]
    want_values = [float(tokens[(r * 7 + j) % len(tokens)]) for r in range(len(tokens)) for j in range(5)]
    assert data.labels.tolist() == want_labels
    assert data.values.tolist() == want_values
