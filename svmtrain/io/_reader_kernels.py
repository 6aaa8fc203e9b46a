"""Numba kernels of the LIBSVM/SVMlight reader (numpy and numba only).

:func:`parse_range` tokenizes and parses one line-aligned byte range of a
block in a single pass, without a Python loop per line or per token. The
orchestration (opening, blocks, threads, messages) is in ``reader.py``; the
plain-Python twin used as the reference in the tests is
``tests/naive_reader.py``.

Grammar of one physical line (whitespace = space, TAB, CR, VT, FF; the same
set as ``bytes.split()``)::

    line    := ws* [ label [ws+ "qid:" digits] (ws+ feature)* ] ws* ["#" anything]
    feature := [-]digits ":" number          (index 1 .. 2^31-1)
    number  := [+-] (digits ["." digits*] | "." digits) [("e"|"E") [+-] digits]

A ``#`` ends a token and starts a comment to the end of the line. Tokens
must be followed by whitespace, ``#`` or the end of the line.

Numbers are converted with Clinger's fast path (at most 18 significant
digits held exactly in an int64 mantissa ``m`` below 2^53 and a decimal
exponent whose power of ten is exact), which gives the correctly rounded
double that C's ``strtod`` gives. Any other number ("slow" token) is copied
into a side buffer (``slow_text``, tokens separated by a space) with its
output slot (``slow_slot``: a position in ``values``, or ``-(row+1)`` for a
label); the caller converts those with Python's ``float`` (also correctly
rounded) and stores them.
"""
import numpy as np
from numba import njit

# Error codes (the caller turns them into messages).
OK = 0
E_LABEL = 1           # label is not a number (or the line has no label)
E_LABEL_NONFINITE = 2  # label is nan/inf
E_INDEX_NONPOS = 3    # feature index 0 or negative
E_INDEX_BIG = 4       # feature index > 2^31-1
E_FEATURE = 5         # token is not index:value (garbage, missing ':')
E_NO_VALUE = 6        # "idx:" with nothing after the colon
E_VALUE = 7           # value is not a number (or is followed by junk)
E_VALUE_NONFINITE = 8  # value is nan/inf
E_DUPLICATE = 9       # index occurs twice in a row (aux = the 1-based index)
E_QID = 10            # qid:VALUE is not an integer
E_QID_POSITION = 11   # qid: not right after the label

# Status of _parse_number
_NUM_OK = 0
_NUM_SLOW = 1
_NUM_BAD = 2
_NUM_NONFINITE = 3

MAX_INDEX = 2147483647
_TWO53 = 9007199254740992

POW10 = np.array([10.0 ** k for k in range(23)], dtype=np.float64)
_POW10_INT = np.array([10 ** k for k in range(16)], dtype=np.int64)


@njit(cache=True, nogil=True)
def _is_ws(c):
    # space, \t, \r, \v, \f (not \n: lines end there)
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@njit(cache=True, nogil=True)
def _is_end(c):
    # what may follow a token: whitespace, '\n' or '#'
    return c == 32 or c == 10 or c == 9 or c == 13 or c == 35 or c == 11 or c == 12


@njit(cache=True, nogil=True)
def _lower(c):
    return c | 32


@njit(cache=True, nogil=True)
def _parse_number(buf, i):
    """Parse a decimal number starting at ``buf[i]``.

    Returns (value, end, status). ``end`` is the first byte not taken. The
    caller checks what follows. Never reads past a '\\n'.
    """
    c = np.int64(buf[i])
    neg = False
    if c == 45:
        neg = True
        i += 1
        c = np.int64(buf[i])
    elif c == 43:
        i += 1
        c = np.int64(buf[i])
    m = np.int64(0)
    nd = 0            # significant digits held in m
    ndig = 0          # all mantissa digits seen
    exp10 = np.int64(0)
    inexact = False
    d = c - 48
    while d >= 0 and d <= 9:
        if nd < 18:
            m = m * 10 + d
            if m != 0:
                nd += 1
        else:
            exp10 += 1
            if d != 0:
                inexact = True
        ndig += 1
        i += 1
        d = np.int64(buf[i]) - 48
    if d == 46 - 48:  # '.'
        i += 1
        d = np.int64(buf[i]) - 48
        while d >= 0 and d <= 9:
            if nd < 18:
                m = m * 10 + d
                exp10 -= 1
                if m != 0:
                    nd += 1
            elif d != 0:
                inexact = True
            ndig += 1
            i += 1
            d = np.int64(buf[i]) - 48
    if ndig == 0:
        c = np.int64(buf[i])
        if ((_lower(c) == 105 and _lower(buf[i + 1]) == 110 and _lower(buf[i + 2]) == 102)
                or (_lower(c) == 110 and _lower(buf[i + 1]) == 97 and _lower(buf[i + 2]) == 110)):
            return 0.0, i, _NUM_NONFINITE   # inf, infinity, nan, nan(...)
        return 0.0, i, _NUM_BAD
    c = d + 48
    if c == 101 or c == 69:  # e / E
        i += 1
        c = np.int64(buf[i])
        eneg = False
        if c == 45:
            eneg = True
            i += 1
            c = np.int64(buf[i])
        elif c == 43:
            i += 1
            c = np.int64(buf[i])
        d = c - 48
        if not (d >= 0 and d <= 9):
            return 0.0, i, _NUM_BAD
        e = np.int64(0)
        while d >= 0 and d <= 9:
            if e < 100000000:
                e = e * 10 + d
            i += 1
            d = np.int64(buf[i]) - 48
        if eneg:
            exp10 -= e
        else:
            exp10 += e
    if m == 0:
        return (-0.0 if neg else 0.0), i, _NUM_OK
    if inexact or m >= _TWO53:
        return 0.0, i, _NUM_SLOW
    if exp10 >= 0:
        if exp10 <= 22:
            v = np.float64(m) * POW10[exp10]
        elif exp10 <= 22 + 15:
            # m * 10^(exp10-22) may still be an exact integer below 2^53
            p = _POW10_INT[exp10 - 22]
            if m > (_TWO53 - 1) // p:
                return 0.0, i, _NUM_SLOW
            v = np.float64(m * p) * POW10[22]
        else:
            return 0.0, i, _NUM_SLOW
    else:
        if exp10 >= -22:
            v = np.float64(m) / POW10[-exp10]
        else:
            return 0.0, i, _NUM_SLOW
    return (-v if neg else v), i, _NUM_OK


@njit(cache=True, nogil=True)
def _push_slow(buf, tok, end, slot, slow_slot, slow_text, n_slow, n_text):
    """Append one slow token; grows the side buffers when needed."""
    if n_slow == slow_slot.shape[0]:
        ns = np.empty(2 * slow_slot.shape[0], np.int64)
        ns[:n_slow] = slow_slot[:n_slow]
        slow_slot = ns
    need = n_text + (end - tok) + 1
    if need > slow_text.shape[0]:
        nt = np.empty(max(2 * slow_text.shape[0], need), np.uint8)
        nt[:n_text] = slow_text[:n_text]
        slow_text = nt
    slow_slot[n_slow] = slot
    for k in range(tok, end):
        slow_text[n_text] = buf[k]
        n_text += 1
    slow_text[n_text] = 32
    n_text += 1
    return slow_slot, slow_text, n_slow + 1, n_text


@njit(cache=True, nogil=True)
def _sort_row(indices, values, lo, hi):
    """Sort indices[lo:hi] (values follow). Returns the permutation used:
    new position p holds what was at lo + perm[p - lo]."""
    n = hi - lo
    perm = np.argsort(indices[lo:hi], kind="mergesort")
    ti = indices[lo:hi].copy()
    tv = values[lo:hi].copy()
    for p in range(n):
        indices[lo + p] = ti[perm[p]]
        values[lo + p] = tv[perm[p]]
    return perm


@njit(cache=True, nogil=True)
def count_bytes(buf, start, end):
    """(number of '\\n', number of ':') in buf[start:end]."""
    nl = 0
    nc = 0
    for i in range(start, end):
        c = buf[i]
        nl += c == 10
        nc += c == 58
    return nl, nc


@njit(cache=True, nogil=True)
def parse_range(buf, start, end):
    """Parse the complete lines in ``buf[start:end]`` (``buf[end-1]`` must be
    ``'\\n'``).

    Returns a tuple::

        (labels, indptr, indices, values, qid, rowline,
         n_rows, nnz, n_lines,
         slow_slot, slow_text, n_slow, n_text,
         err, err_pos, err_aux)

    The arrays are allocated here with capacities bounded by the number of
    '\\n' (rows) and ':' (nonzeros) in the range; only the first ``n_rows``
    / ``nnz`` entries are meaningful. ``rowline[r]`` is the 0-based line of
    row r counted from ``start``; ``n_lines`` the number of lines parsed.
    Indices are 0-based and sorted within each row. On an error, parsing
    stops: ``err`` is the code, ``err_pos`` the byte offset of the offending
    token (or of the line for a duplicate in an unsorted row) and
    ``err_aux`` a number for the message; everything before that line is
    valid output.
    """
    nl, nc = count_bytes(buf, start, end)
    labels = np.empty(nl, np.float64)
    qid = np.zeros(nl, np.int64)
    rowline = np.empty(nl, np.int64)
    indptr = np.empty(nl + 1, np.int64)
    indices = np.empty(nc, np.int32)
    values = np.empty(nc, np.float64)
    slow_slot = np.empty(64, np.int64)
    slow_text = np.empty(1024, np.uint8)
    n_slow = 0
    n_text = 0
    indptr[0] = 0
    row = 0
    z = 0
    line = 0
    err = OK
    err_pos = np.int64(-1)
    err_aux = np.int64(0)
    i = start
    while i < end:
        line_start = i
        c = buf[i]
        while _is_ws(c):
            i += 1
            c = buf[i]
        if c == 10:
            line += 1
            i += 1
            continue
        if c == 35:
            while buf[i] != 10:
                i += 1
            line += 1
            i += 1
            continue
        # ---- label
        tok = i
        lab, i, st = _parse_number(buf, i)
        if st == _NUM_BAD or not _is_end(buf[i]):
            err = E_LABEL
            err_pos = tok
            break
        if st == _NUM_NONFINITE:
            err = E_LABEL_NONFINITE
            err_pos = tok
            break
        if st == _NUM_SLOW:
            slow_slot, slow_text, n_slow, n_text = _push_slow(
                buf, tok, i, -(row + 1), slow_slot, slow_text, n_slow, n_text)
        row_z = z
        row_slow = n_slow
        last = np.int64(-1)
        ordered = True
        first_tok = True
        q = np.int64(0)
        # ---- features
        while True:
            c = buf[i]
            while _is_ws(c):
                i += 1
                c = buf[i]
            if c == 10:
                break
            if c == 35:
                while buf[i] != 10:
                    i += 1
                break
            tok = i
            if c == 113:  # 'q'
                if buf[i + 1] == 105 and buf[i + 2] == 100 and buf[i + 3] == 58:
                    if not first_tok:
                        err = E_QID_POSITION
                        err_pos = tok
                        break
                    i += 4
                    d = np.int64(buf[i]) - 48
                    if not (d >= 0 and d <= 9):
                        err = E_QID
                        err_pos = tok
                        break
                    while d >= 0 and d <= 9:
                        if q < 100000000000000000:
                            q = q * 10 + d
                        else:
                            err = E_QID
                            break
                        i += 1
                        d = np.int64(buf[i]) - 48
                    if err != OK or not _is_end(buf[i]):
                        err = E_QID
                        err_pos = tok
                        break
                    first_tok = False
                    continue
                err = E_FEATURE
                err_pos = tok
                break
            first_tok = False
            negidx = False
            if c == 45:
                negidx = True
                i += 1
            d = np.int64(buf[i]) - 48
            if not (d >= 0 and d <= 9):
                err = E_FEATURE
                err_pos = tok
                break
            idx = np.int64(0)
            while d >= 0 and d <= 9:
                if idx <= MAX_INDEX:
                    idx = idx * 10 + d
                i += 1
                d = np.int64(buf[i]) - 48
            if d != 58 - 48:  # ':'
                err = E_FEATURE
                err_pos = tok
                break
            if negidx or idx == 0:
                err = E_INDEX_NONPOS
                err_pos = tok
                break
            if idx > MAX_INDEX:
                err = E_INDEX_BIG
                err_pos = tok
                break
            i += 1
            if _is_end(buf[i]):
                err = E_NO_VALUE
                err_pos = tok
                break
            vtok = i
            v, i, st = _parse_number(buf, i)
            if st == _NUM_BAD or not _is_end(buf[i]):
                err = E_VALUE
                err_pos = tok
                break
            if st == _NUM_NONFINITE:
                err = E_VALUE_NONFINITE
                err_pos = tok
                break
            if st == _NUM_SLOW:
                slow_slot, slow_text, n_slow, n_text = _push_slow(
                    buf, vtok, i, z, slow_slot, slow_text, n_slow, n_text)
            idx -= 1
            if idx <= last:
                if idx == last:
                    err = E_DUPLICATE
                    err_pos = tok
                    err_aux = idx + 1
                    break
                ordered = False
            last = idx
            indices[z] = idx
            values[z] = v
            z += 1
        if err != OK:
            break
        if not ordered:
            perm = _sort_row(indices, values, row_z, z)
            for p in range(row_z + 1, z):
                if indices[p] == indices[p - 1]:
                    err = E_DUPLICATE
                    err_pos = line_start
                    err_aux = indices[p] + 1
                    break
            if err != OK:
                break
            if n_slow > row_slow:
                inv = np.empty(z - row_z, np.int64)
                for p in range(z - row_z):
                    inv[perm[p]] = p
                for s in range(row_slow, n_slow):
                    slow_slot[s] = row_z + inv[slow_slot[s] - row_z]
        labels[row] = lab
        qid[row] = q
        rowline[row] = line
        row += 1
        indptr[row] = z
        line += 1
        i += 1  # the '\n'
    if err != OK:
        # drop the partial row and the slow tokens recorded for it
        z = indptr[row]
        k = n_slow
        while k > 0 and (slow_slot[k - 1] >= z or slow_slot[k - 1] == -(row + 1)):
            k -= 1
        if k < n_slow:
            # recompute the text length of the kept tokens
            t = 0
            seen = 0
            while seen < k:
                if slow_text[t] == 32:
                    seen += 1
                t += 1
            n_text = t
            n_slow = k
    return (labels, indptr, indices, values, qid, rowline,
            row, z, line,
            slow_slot, slow_text, n_slow, n_text,
            err, err_pos, err_aux)


@njit(cache=True, nogil=True)
def parse_number_at(buf, i):
    """Test hook: (value, end, status) of the number at ``buf[i]``."""
    return _parse_number(buf, i)
