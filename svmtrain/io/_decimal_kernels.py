"""Correctly rounded decimal-to-double conversion beyond Clinger's fast path.

The reader converts a number ``m x 10^q`` (``m`` the exact decimal mantissa,
at most 18 significant digits, ``q`` the decimal exponent) with Clinger's
fast path when both are exact doubles; :func:`eisel_lemire` converts the
others (16-18 significant digits, as Python's ``repr`` and ``%.17g`` write
them, or large exponents) without leaving numba: the Eisel-Lemire algorithm
(D. Lemire, "Number parsing at a gigabyte per second", Software: Practice
and Experience 51(8), 2021), in the form the fast_float library uses since
N. Mushtak and D. Lemire, "Fast number parsing without fallback" (2023)
proved its 128-bit product always sufficient. It multiplies the normalised
mantissa by a 128-bit truncation of 5^q, keeps 54 bits and rounds to
nearest, ties to even: the double C's ``strtod`` and Python's ``float``
give. Subnormal and overflowing results are left to the caller's slow path
(it returns ``ok = False`` there), as are exponents outside [-342, 308].
"""
import numpy as np
from numba import njit

from .._numba._bit_kernels import double_of, leading_zeros, mul_full

SMALLEST_Q = -342
LARGEST_Q = 308


def _five_powers():
    """(high, low) 64-bit halves of the 128-bit truncations of 5^q, q from
    SMALLEST_Q to LARGEST_Q: the most significant bit at position 127; for
    q < 0 the reciprocal 2^b / 5^-q rounded up (fast_float's table)."""
    high, low = [], []
    for q in range(SMALLEST_Q, LARGEST_Q + 1):
        if q >= 0:
            p = 5 ** q
            while p < (1 << 127):
                p <<= 1
            while p >= (1 << 128):
                p >>= 1
        else:
            five = 5 ** -q
            z = five.bit_length()
            b = 2 * z + 128 if q < -27 else z + 127
            p = (1 << b) // five + 1
            while p >= (1 << 128):
                p >>= 1
        high.append(p >> 64)
        low.append(p & ((1 << 64) - 1))
    return np.array(high, np.uint64), np.array(low, np.uint64)


FIVE_HIGH, FIVE_LOW = _five_powers()


_ONE = np.uint64(1)
_LOW9 = np.uint64(0x1FF)
_HIDDEN = np.uint64(1 << 52)
_TWO_HIDDEN = np.uint64(2 << 52)


@njit(cache=True, nogil=True)
def eisel_lemire(m, q):
    """(True, the double nearest m x 10^q, ties to even) for an exact decimal
    mantissa 0 < m < 2^64 and exponent q; (False, 0.0) when the result is
    subnormal, overflows or q is outside [SMALLEST_Q, LARGEST_Q] (the
    caller converts those another way)."""
    if q < SMALLEST_Q or q > LARGEST_Q:
        return False, 0.0
    w = np.uint64(m)
    lz = leading_zeros(w)
    w = w << lz
    t = q - SMALLEST_Q
    hi, lo = mul_full(w, FIVE_HIGH[t])
    if (hi & _LOW9) == _LOW9:           # the low bits may carry: add the next 64 bits of 5^q
        hi2, _ = mul_full(w, FIVE_LOW[t])
        lo = lo + hi2
        if hi2 > lo:
            hi = hi + _ONE
    upper = hi >> np.uint64(63)
    shift = upper + np.uint64(9)
    mantissa = hi >> shift
    power2 = ((217706 * q) >> 16) + 63 + np.int64(upper) - np.int64(lz) + 1023
    if power2 <= 0:
        return False, 0.0
    # halfway between two doubles (only possible for -4 <= q <= 23): to even
    if lo <= _ONE and q >= -4 and q <= 23 and (mantissa & np.uint64(3)) == _ONE:
        if (mantissa << shift) == hi:
            mantissa = mantissa & ~_ONE
    mantissa = mantissa + (mantissa & _ONE)
    mantissa = mantissa >> _ONE
    if mantissa >= _TWO_HIDDEN:
        mantissa = _HIDDEN
        power2 += 1
    mantissa = mantissa & ~_HIDDEN
    if power2 >= 0x7FF:
        return False, 0.0
    return True, double_of(np.int64(mantissa | (np.uint64(power2) << np.uint64(52))))     # (sign bit 0)
