"""Numba kernels of the LIBSVM/SVMlight reader (numpy and numba only).

:func:`parse_lines` tokenizes and parses one line-aligned byte range of a
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

``inf``, ``infinity`` and ``nan`` (any case, signed) are recognised only to
be rejected with a specific error.

Numbers are converted with Clinger's fast path: at most 18 significant
mantissa digits give an exact int64 ``m``; when ``m < 2^53`` and the
decimal exponent ``e`` has an exactly representable power of ten (``|e| <=
22``, or ``m * 10^(e-22)`` still an exact integer below 2^53), ``m * 10^e``
or ``m / 10^-e`` is one correctly rounded IEEE operation on exact
operands, i.e. the same double as C's ``strtod``. The other numbers of at
most 18 significant digits (Python's 17-digit ``repr``, large exponents)
go through the Eisel-Lemire algorithm (:mod:`._decimal_kernels`), also
correctly rounded. Any other number (more digits, a subnormal or
overflowing result: "slow" token) is copied into a side buffer (``slow_text``, tokens separated
by a space) with its output slot (``slow_slot``: a position in ``values``,
or ``-(row+1)`` for a label); the caller converts those with Python's
``float`` (also correctly rounded) and stores them.

Memory: :func:`parse_lines` fills arrays it is given and never reallocates
(so there is no reference counting in its loop): when a row does not fit,
it rolls that row back and returns, and the caller (``reader.parse_range``,
which allocates with NumPy so large arrays get transparent huge pages)
grows the arrays and resumes at the same line.
"""
import numpy as np
from numba import njit

from .._numba.options import twin
from .._numba._sort_kernels import argsort_range
from ._decimal_kernels import eisel_lemire

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

E_INTERNAL = 12       # the range does not end with a newline (caller bug)

# Status of the number parser in parse_lines
_NUM_OK = 0
_NUM_SLOW = 1
_NUM_BAD = 2
_NUM_NONFINITE = 3

MAX_INDEX = 2147483647
_TWO53 = 9007199254740992

POW10 = np.array([10.0 ** k for k in range(23)], dtype=np.float64)
_POW10_INT = np.array([10 ** k for k in range(16)], dtype=np.int64)

# Byte classes: _WS = blank inside a line, _END = may follow a token.
_WS = 1
_END = 2
CLS = np.zeros(256, np.uint8)
for _c in b" \t\r\x0b\x0c":
    CLS[_c] = _WS | _END
CLS[10] = _END
CLS[35] = _END
del _c


@njit(cache=True, nogil=True)
def _b(buf, i):
    # unsigned index: no negative-index wraparound code on the hot path
    return np.int64(buf[np.uint64(i)])


@njit(cache=True, nogil=True)
def _lower(c):
    return c | 32


@njit(cache=True, nogil=True)
def _sort_row(indices, values, lo, hi):
    """Sort indices[lo:hi] (values follow). Returns the permutation used:
    new position lo + p holds what was at lo + perm[p]."""
    n = hi - lo
    perm = np.empty(n, np.int64)
    argsort_range(indices, lo, hi, perm)
    ti = np.empty(n, np.int32)
    tv = np.empty(n, np.float64)
    for p in range(n):
        ti[p] = indices[lo + p]
        tv[p] = values[lo + p]
    for p in range(n):
        indices[lo + p] = ti[perm[p]]
        values[lo + p] = tv[perm[p]]
    return perm


# Status of parse_lines besides the error codes.
DONE = 0
NEED_ROWS = -1
NEED_NNZ = -2
NEED_SLOW = -3
NEED_SORT = -4   # (parse_lines_presorted only) a row is out of order: go on with parse_lines

# parse_lines sorts a row whose indices are out of order; its twin
# parse_lines_presorted (the same code with _SORTS False, see the end of the
# module) stops there with NEED_SORT instead and so compiles no sort: files
# whose rows are sorted, the common case, never compile the sorting code.
_SORTS = True


@njit(cache=True, nogil=True, error_model="numpy")
def parse_lines(buf, i, end, line, row, z, n_slow, n_text,
                labels, qid, rowline, indptr, indices, values, slow_slot, slow_text, base=1):
    """Parse the complete lines of ``buf[i:end]`` into the given arrays.

    ``buf[i]`` starts a line and ``buf[end-1]`` must be ``'\\n'`` (else
    nothing is done and the status is E_INTERNAL). ``line, row, z, n_slow,
    n_text`` are the counts so far (lines parsed, rows, nonzeros, slow
    tokens, bytes of slow text): the arrays are filled from those positions,
    so a call can resume where the previous one stopped.

    Outputs: ``labels/qid/rowline[row]`` and ``indptr[row + 1]`` per row
    (``indptr[0]`` is the caller's), ``indices/values[z]`` per nonzero
    (0-based indices: file index - ``base``, sorted within each row; ``base``
    is 1, or 0 for files whose index 0 is a feature, LIBSVM's precomputed
    kernels' ``0:ID``; an index below it is E_INDEX_NONPOS); ``rowline[r]`` is the 0-based
    line of row r counted from the first call's start. ``slow_text`` gets
    the numbers that need an exact conversion, each followed by a space,
    and ``slow_slot`` where each goes (a position in ``values``, or
    ``-(row + 1)`` for a label).

    Returns (status, i, line, row, z, n_slow, n_text, err_pos, err_aux).
    status DONE: all parsed. NEED_ROWS / NEED_NNZ / NEED_SLOW: the row at
    ``i`` did not fit (it was rolled back): grow those arrays and call again
    from ``i``. NEED_SORT (parse_lines_presorted only): the row at ``i`` is
    out of order (rolled back): call parse_lines from ``i``. A positive status is an error code: ``err_pos`` is the byte
    offset of the offending token (of the line, for a duplicate found after
    sorting a row), ``err_aux`` a number for the message; the rows before
    the bad line are complete and valid, the bad row is rolled back.
    """
    if end > i and (i < 0 or end > buf.shape[0] or buf[end - 1] != 10):
        return E_INTERNAL, i, line, row, z, n_slow, n_text, np.int64(-1), np.int64(0)
    rcap = labels.shape[0]
    zcap = indices.shape[0]
    scap = slow_slot.shape[0]
    tcap = slow_text.shape[0]
    err = DONE
    err_pos = np.int64(-1)
    err_aux = np.int64(0)
    while i < end:
        # ---------------------------------------------------- one line
        line_start = i
        c = _b(buf, i)
        while CLS[c] & _WS:
            i += 1
            c = _b(buf, i)
        if c == 10:                      # blank line
            line += 1
            i += 1
            continue
        if c == 35:                      # comment line
            while _b(buf, i) != 10:
                i += 1
            line += 1
            i += 1
            continue
        if row >= rcap:
            err = NEED_ROWS
            i = line_start
            break
        row_z = z
        row_slow = n_slow
        row_text = n_text
        last = np.int64(-1)
        ordered = True
        first_tok = True
        q = np.int64(0)
        lab = 0.0
        idx = np.int64(0)
        is_label = True
        tok = i
        # The token loop: first the label, then "qid:N" and "index:value"
        # tokens. The label and the values go through the one number parser
        # below (written out here, not called: a call that takes the buffer
        # costs reference counting on every number).
        while True:
            if not is_label:
                c = _b(buf, i)
                while CLS[c] & _WS:
                    i += 1
                    c = _b(buf, i)
                if c == 10:
                    break
                if c == 35:
                    while _b(buf, i) != 10:
                        i += 1
                    break
                tok = i
                d = c - 48
                if not (d >= 0 and d <= 9):
                    if (c == 113 and _b(buf, i + 1) == 105 and _b(buf, i + 2) == 100
                            and _b(buf, i + 3) == 58):
                        # ---- qid:N
                        if not first_tok:
                            err = E_QID_POSITION
                            err_pos = tok
                            break
                        i += 4
                        d = _b(buf, i) - 48
                        if not (d >= 0 and d <= 9):
                            err = E_QID
                            err_pos = tok
                            break
                        while d >= 0 and d <= 9:
                            if q >= 100000000000000000:
                                err = E_QID
                                err_pos = tok
                                break
                            q = q * 10 + d
                            i += 1
                            d = _b(buf, i) - 48
                        if err != DONE:
                            break
                        if (CLS[_b(buf, i)] & _END) == 0:
                            err = E_QID
                            err_pos = tok
                            break
                        first_tok = False
                        continue
                    if c == 45:
                        # "-N:..." is reported as a non-positive index
                        j = i + 1
                        d = _b(buf, j) - 48
                        if d >= 0 and d <= 9:
                            while d >= 0 and d <= 9:
                                j += 1
                                d = _b(buf, j) - 48
                            if d == 58 - 48:
                                err = E_INDEX_NONPOS
                                err_pos = tok
                                break
                    err = E_FEATURE
                    err_pos = tok
                    break
                # ---- index
                first_tok = False
                idx = np.int64(0)
                while d >= 0 and d <= 9:
                    if idx <= MAX_INDEX:
                        idx = idx * 10 + d
                    i += 1
                    d = _b(buf, i) - 48
                if d != 58 - 48:  # ':'
                    err = E_FEATURE
                    err_pos = tok
                    break
                if idx < base:
                    err = E_INDEX_NONPOS
                    err_pos = tok
                    break
                if idx > MAX_INDEX:
                    err = E_INDEX_BIG
                    err_pos = tok
                    break
                i += 1
                if CLS[_b(buf, i)] & _END:
                    err = E_NO_VALUE
                    err_pos = tok
                    break
            # ---- the number at buf[i] -> v, st; i moves past it
            ntok = i
            v = 0.0
            st = _NUM_OK
            while True:     # runs once; "break" leaves with v and st set
                c = _b(buf, i)
                neg = c == 45
                if c == 45 or c == 43:
                    i += 1
                    c = _b(buf, i)
                m = np.int64(0)
                nd = 0            # mantissa digits (leading zeros included)
                sig = 0           # significant digits (from the first nonzero one)
                d = c - 48
                while d >= 0 and d <= 9:
                    m = m * 10 + d
                    nd += 1
                    sig += m != 0
                    i += 1
                    d = _b(buf, i) - 48
                exp10 = np.int64(0)
                if d == 46 - 48:  # '.'
                    i += 1
                    d = _b(buf, i) - 48
                    while d >= 0 and d <= 9:
                        m = m * 10 + d
                        nd += 1
                        sig += m != 0
                        exp10 -= 1
                        i += 1
                        d = _b(buf, i) - 48
                if nd == 0:
                    # "inf", "infinity" or "nan" (any case) as a whole token
                    c = _lower(_b(buf, i))
                    j = i
                    if c == 105 and _lower(_b(buf, i + 1)) == 110 and _lower(_b(buf, i + 2)) == 102:
                        j = i + 3
                        if (_lower(_b(buf, j)) == 105 and _lower(_b(buf, j + 1)) == 110
                                and _lower(_b(buf, j + 2)) == 105 and _lower(_b(buf, j + 3)) == 116
                                and _lower(_b(buf, j + 4)) == 121):
                            j += 5
                    elif c == 110 and _lower(_b(buf, i + 1)) == 97 and _lower(_b(buf, i + 2)) == 110:
                        j = i + 3
                    if j > i and (CLS[_b(buf, j)] & _END):
                        i = j
                        st = _NUM_NONFINITE
                    else:
                        st = _NUM_BAD
                    break
                if d == 101 - 48 or d == 69 - 48:  # e / E
                    i += 1
                    c = _b(buf, i)
                    eneg = c == 45
                    if c == 45 or c == 43:
                        i += 1
                        c = _b(buf, i)
                    d = c - 48
                    if not (d >= 0 and d <= 9):
                        st = _NUM_BAD
                        break
                    e = np.int64(0)
                    while d >= 0 and d <= 9:
                        if e < 100000000:
                            e = e * 10 + d
                        i += 1
                        d = _b(buf, i) - 48
                    if eneg:
                        exp10 -= e
                    else:
                        exp10 += e
                if sig > 18:                  # m may have overflowed
                    st = _NUM_SLOW
                elif m == 0:
                    v = 0.0                   # -0.0 below when negative
                elif m < _TWO53 and exp10 >= 0 and exp10 <= 22:
                    v = np.float64(m) * POW10[exp10]
                elif m < _TWO53 and exp10 > 22 and exp10 <= 22 + 15 and \
                        m <= (_TWO53 - 1) // _POW10_INT[exp10 - 22]:
                    # m * 10^(exp10-22) is still an exact integer below 2^53
                    v = np.float64(m * _POW10_INT[exp10 - 22]) * POW10[22]
                elif m < _TWO53 and exp10 < 0 and exp10 >= -22:
                    v = np.float64(m) / POW10[-exp10]
                else:
                    ok, v = eisel_lemire(m, exp10)
                    if not ok:                # subnormal or overflowing: Python's float
                        st = _NUM_SLOW
                if neg:
                    v = -v
                break
            if st == _NUM_NONFINITE:
                err = E_LABEL_NONFINITE if is_label else E_VALUE_NONFINITE
                err_pos = tok
                break
            if st == _NUM_BAD or (CLS[_b(buf, i)] & _END) == 0:
                err = E_LABEL if is_label else E_VALUE
                err_pos = tok
                break
            if not is_label and z >= zcap:
                err = NEED_NNZ
                break
            if st == _NUM_SLOW:
                if n_slow >= scap or n_text + (i - ntok) + 1 > tcap:
                    err = NEED_SLOW
                    break
                slow_slot[n_slow] = -(row + 1) if is_label else z
                n_slow += 1
                for k in range(ntok, i):
                    slow_text[n_text] = buf[k]
                    n_text += 1
                slow_text[n_text] = 32
                n_text += 1
            if is_label:
                lab = v
                is_label = False
                continue
            # ---- store the feature
            idx -= base
            if idx <= last:
                if idx == last:
                    err = E_DUPLICATE
                    err_pos = tok
                    err_aux = idx + base
                    break
                ordered = False
            last = idx
            indices[np.uint64(z)] = idx
            values[np.uint64(z)] = v
            z += 1
        # ---------------------------------------------------- end of the row
        if err == DONE and not ordered and not _SORTS:
            err = NEED_SORT
        elif err == DONE and not ordered:
            perm = _sort_row(indices, values, row_z, z)
            for p in range(row_z + 1, z):
                if indices[p] == indices[p - 1]:
                    err = E_DUPLICATE
                    err_pos = line_start
                    err_aux = indices[p] + base
                    break
            if err == DONE and n_slow > row_slow:
                inv = np.empty(z - row_z, np.int64)
                for p in range(z - row_z):
                    inv[perm[p]] = p
                for k in range(row_slow, n_slow):
                    if slow_slot[k] >= 0:   # not the label
                        slow_slot[k] = row_z + inv[slow_slot[k] - row_z]
        if err != DONE:
            # roll the partial row back
            z = row_z
            n_slow = row_slow
            n_text = row_text
            if err < 0:
                i = line_start
            break
        labels[np.uint64(row)] = lab
        qid[np.uint64(row)] = q
        rowline[np.uint64(row)] = line
        row += 1
        indptr[np.uint64(row)] = z
        line += 1
        i += 1  # the '\n'
    return err, i, line, row, z, n_slow, n_text, err_pos, err_aux


@njit(cache=True, nogil=True)
def _no_sort(indices, values, lo, hi):
    return np.empty(0, np.int64)


# parse_lines without the sorting of out-of-order rows (NEED_SORT instead)
parse_lines_presorted = twin(parse_lines, "_presorted", {"_SORTS": False, "_sort_row": _no_sort})
