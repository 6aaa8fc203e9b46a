"""Exact C ``printf("%.<P>g")`` of doubles into a byte buffer, in numba.

:func:`write_g` writes what glibc's ``printf`` writes for ``%.Pg``
(``%g`` is P = 6) for 1 <= P <= 17: the exact binary value rounded to P
significant digits, ties to even, then ``%g``'s choice of fixed or
exponential style, trailing zeros and a trailing point removed, the
exponent with a sign and at least two digits; ``0`` and ``-0`` for zeros.

It is exact by integer arithmetic: a double is ``M * 2^E`` (``M < 2^53``),
and the P digits are ``round(M * 2^E * 10^(P-1-k))`` for the decimal
exponent ``k``, computed with a 128-bit product (two uint64 halves) and a
shift, or a 64-bit division, with the remainder compared with one half.
That covers every double whose digits need no more than 128 bits of
intermediate, for P = 6 about 1e-22 <= |x| < 1.8e19 and for P = 17 about
1e-11 <= |x| < 1.8e19. Outside that range, and for inf and nan,
:func:`write_g` returns -1 and the caller formats the value otherwise
(``svmtrain.preprocess.scaling`` uses Python's ``'%.17g' % x``, which is also exact).
The tests compare it with C's ``snprintf`` and with Python's ``%``.
"""
import math

import numpy as np
from numba import njit

_U = np.uint64
_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
POW5 = np.array([5 ** i for i in range(28)], dtype=np.uint64)
POW10 = np.array([10 ** i for i in range(20)], dtype=np.uint64)
_TWO53 = 9007199254740992.0


@njit(cache=True)
def _mul128(a, b):
    """(hi, lo) of the 128-bit product of two uint64."""
    a0 = a & _M32
    a1 = a >> _S32
    b0 = b & _M32
    b1 = b >> _S32
    p0 = a0 * b0
    p1 = a0 * b1
    p2 = a1 * b0
    p3 = a1 * b1
    mid = (p0 >> _S32) + (p1 & _M32) + (p2 & _M32)
    lo = (p0 & _M32) | (mid << _S32)
    hi = p3 + (p1 >> _S32) + (p2 >> _S32) + (mid >> _S32)
    return hi, lo


@njit(cache=True)
def _cmp_half(r, d):
    """-1, 0, 1 as the remainder r is below, at, above d/2 (r < d)."""
    other = d - r
    if r < other:
        return -1
    if r == other:
        return 0
    return 1


@njit(cache=True)
def _digits(M, E, p):
    """(ok, q, c): q = floor(M * 2^E * 10^p), c = -1/0/1 as the discarded
    fraction is below/at/above one half (-2 when it is exactly zero)."""
    if p >= 0:
        if p > 27:
            return False, _ZERO, 0
        hi, lo = _mul128(M, POW5[p])
        a = E + p
        if a >= 0:
            if hi != _ZERO or a > 63:
                return False, _ZERO, 0
            if a > 0 and (lo >> _U(64 - a)) != _ZERO:
                return False, _ZERO, 0
            return True, lo << _U(a), -2
        s = -a
        if s >= 128:
            return False, _ZERO, 0
        if s < 64:
            if (hi >> _U(s)) != _ZERO:
                return False, _ZERO, 0
            q = lo >> _U(s)
            if s > 0:
                q |= hi << _U(64 - s)
            r = lo & ((_ONE << _U(s)) - _ONE)
            if r == _ZERO:
                return True, q, -2
            half = _ONE << _U(s - 1)
            c = -1 if r < half else (0 if r == half else 1)
            return True, q, c
        # 64 <= s < 128
        t = s - 64
        q = hi >> _U(t)
        rhi = hi & ((_ONE << _U(t)) - _ONE) if t > 0 else _ZERO
        if rhi == _ZERO and lo == _ZERO:
            return True, q, -2
        if t == 0:
            hhi = _ZERO
            hlo = _ONE << _U(63)
        else:
            hhi = _ONE << _U(t - 1)
            hlo = _ZERO
        if rhi < hhi or (rhi == hhi and lo < hlo):
            c = -1
        elif rhi == hhi and lo == hlo:
            c = 0
        else:
            c = 1
        return True, q, c
    q10 = -p
    if q10 > 19:
        return False, _ZERO, 0
    if E >= 0:
        if E > 11:
            return False, _ZERO, 0
        n = M << _U(E)
        d = POW10[q10]
    else:
        s = -E
        if q10 > 27 or q10 + s >= 64:
            return False, _ZERO, 0
        if POW5[q10] >= (_ONE << _U(64 - q10 - s)):
            return False, _ZERO, 0
        n = M
        d = POW5[q10] << _U(q10 + s)
    q = n // d
    r = n - q * d
    if r == _ZERO:
        return True, q, -2
    return True, q, _cmp_half(r, d)


@njit(cache=True)
def write_uint(buf, pos, v):
    """Decimal digits of the non-negative integer v at buf[pos:]; new pos."""
    if v == 0:
        buf[pos] = 48
        return pos + 1
    n = 0
    t = v
    while t > 0:
        t //= 10
        n += 1
    end = pos + n
    i = end - 1
    while v > 0:
        buf[i] = 48 + v % 10
        v //= 10
        i -= 1
    return end


@njit(cache=True)
def write_g(buf, pos, x, P, tmp):
    """Write ``%.Pg`` of x at buf[pos:] (room for 24 bytes needed); return
    the new position, or -1 when x is outside the exact fast path (buf
    untouched past pos then). ``tmp``: scratch uint8[>= 20]."""
    if x == 0.0:
        if math.copysign(1.0, x) < 0.0:
            buf[pos] = 45
            pos += 1
        buf[pos] = 48
        return pos + 1
    if not math.isfinite(x):
        return -1
    ax = abs(x)
    m, e = math.frexp(ax)
    M = _U(m * _TWO53)
    E = e - 53
    k = int(math.floor(math.log10(ax)))
    lo_bound = POW10[P - 1]
    hi_bound = POW10[P]
    found = False
    q = _ZERO
    c = 0
    for _ in range(4):
        ok, q, c = _digits(M, E, P - 1 - k)
        if not ok:
            return -1
        if q >= hi_bound:
            k += 1
        elif q < lo_bound:
            k -= 1
        else:
            found = True
            break
    if not found:
        return -1
    if c == 1 or (c == 0 and (q & _ONE) == _ONE):
        q += _ONE
        if q == hi_bound:
            q = lo_bound
            k += 1
    # the P digits
    for i in range(P - 1, -1, -1):
        tmp[i] = 48 + np.int64(q % _U(10))
        q //= _U(10)
    last = P - 1                      # last significant digit (trailing zeros dropped)
    while last > 0 and tmp[last] == 48:
        last -= 1
    if x < 0.0:
        buf[pos] = 45
        pos += 1
    if -4 <= k < P:
        if k >= 0:
            for i in range(k + 1):
                buf[pos] = tmp[i]
                pos += 1
            if last > k:
                buf[pos] = 46
                pos += 1
                for i in range(k + 1, last + 1):
                    buf[pos] = tmp[i]
                    pos += 1
        else:
            buf[pos] = 48
            buf[pos + 1] = 46
            pos += 2
            for i in range(-k - 1):
                buf[pos] = 48
                pos += 1
            for i in range(last + 1):
                buf[pos] = tmp[i]
                pos += 1
        return pos
    buf[pos] = tmp[0]
    pos += 1
    if last > 0:
        buf[pos] = 46
        pos += 1
        for i in range(1, last + 1):
            buf[pos] = tmp[i]
            pos += 1
    buf[pos] = 101
    if k < 0:
        buf[pos + 1] = 45
        k = -k
    else:
        buf[pos + 1] = 43
    pos += 2
    if k < 10:
        buf[pos] = 48
        pos += 1
    return write_uint(buf, pos, k)


@njit(cache=True)
def format_array(x, P):
    """``%.Pg`` of each element (the tests' entry point): (bytes as uint8,
    end offset of each element; -1 where the fast path does not apply)."""
    n = len(x)
    buf = np.empty(n * 25 + 1, np.uint8)
    ends = np.empty(n, np.int64)
    tmp = np.empty(20, np.uint8)
    pos = 0
    for i in range(n):
        p = write_g(buf, pos, x[i], P, tmp)
        if p < 0:
            ends[i] = -1
        else:
            pos = p
            ends[i] = pos
    return buf[:pos], ends


@njit(cache=True)
def format_block(a, P):
    """The rows of the 2-D float64 array ``a`` as text: ``%.Pg`` values
    separated by single spaces, a newline after each row. Returns (bytes as
    uint8, byte positions where a value the fast path leaves out belongs,
    and those values' flat indices): the caller inserts them there
    (:func:`svmtrain.io.model_io.dense_text`)."""
    rows, cols = a.shape
    buf = np.empty(rows * (cols * 25 + 1), np.uint8)
    miss_at = np.empty(rows * cols, np.int64)
    miss_of = np.empty(rows * cols, np.int64)
    tmp = np.empty(20, np.uint8)
    pos = 0
    nm = 0
    for r in range(rows):
        for c in range(cols):
            if c:
                buf[pos] = 32
                pos += 1
            p = write_g(buf, pos, a[r, c], P, tmp)
            if p < 0:
                miss_at[nm] = pos
                miss_of[nm] = r * cols + c
                nm += 1
            else:
                pos = p
        buf[pos] = 10
        pos += 1
    return buf[:pos], miss_at[:nm], miss_of[:nm]
