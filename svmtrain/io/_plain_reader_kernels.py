"""The reader's fast path: a small numba kernel for the lines most files
are made of, which compiles in a third of the time of the full parser.

:func:`parse_plain_lines` parses the *plain* lines of the grammar in
``_reader_kernels`` (blank and comment lines, a label, ``index:value``
features in increasing index order, trailing comments), where every
number is one the full parser converts on its exact fast path (at most 18
mantissa digits, below 2^53, decimal exponent within +-22). At the first
line that is anything else (``qid:``, an index out of order, a number
needing an exact conversion, ``inf``/``nan``, any error) it stops at the
start of that line with :data:`NEED_FULL`, and the caller parses the rest
of the range with ``_reader_kernels.parse_lines_presorted``. So the full
parser decides every line the fast path does not accept, and what the fast
path accepts it stores exactly as the full parser would (the same doubles:
the same correctly rounded operations on the same exact operands): a
reader using both gives the same arrays, errors and messages as the full
parser alone (tested against ``tests/naive_reader.py``). A run on plain
files compiles only this kernel; the full parser compiles the first time a
line needs it.
"""
import numpy as np
from numba import njit

from ._reader_kernels import _END, _TWO53, _WS, CLS, DONE, MAX_INDEX, NEED_NNZ, NEED_ROWS, POW10

NEED_FULL = -5          # the line at ``i`` is not plain: parse the rest with the full parser


@njit(cache=True, nogil=True, error_model="numpy")
def parse_plain_lines(buf, i, end, line, row, z, labels, qid, rowline, indptr, indices, values, base=1):
    """Parse the plain lines of ``buf[i:end]`` (``buf[end-1]`` must be
    ``'\\n'``) into the arrays, from the counts ``line, row, z`` on, as
    ``_reader_kernels.parse_lines`` does (qid 0 for every row; ``base``,
    the smallest index, as there).

    Returns (status, i, line, row, z). DONE: the whole range was plain.
    NEED_ROWS / NEED_NNZ: the row at ``i`` did not fit (rolled back): grow
    those arrays and call again from ``i``. NEED_FULL: the line at ``i`` is
    not plain (nothing of it stored): go on with the full parser from ``i``.
    """
    if end > i and (i < 0 or end > buf.shape[0] or buf[end - 1] != 10):
        return NEED_FULL, i, line, row, z
    rcap = labels.shape[0]
    zcap = indices.shape[0]
    status = DONE
    while i < end:
        line_start = i
        c = buf[np.uint64(i)]
        while CLS[c] & _WS:
            i += 1
            c = buf[np.uint64(i)]
        if c == 35:                         # a comment line
            while buf[np.uint64(i)] != 10:
                i += 1
            c = 10
        if c == 10:                         # a blank line
            line += 1
            i += 1
            continue
        if row >= rcap:
            status = NEED_ROWS
            break
        row_z = z
        last = np.int64(base - 1)
        idx = np.int64(0)
        lab = 0.0
        is_label = True
        while True:
            if not is_label:
                # ---- whitespace, then the end of the line or "index:"
                c = buf[np.uint64(i)]
                while CLS[c] & _WS:
                    i += 1
                    c = buf[np.uint64(i)]
                if c == 35:
                    while buf[np.uint64(i)] != 10:
                        i += 1
                    c = 10
                if c == 10:
                    break
                idx = np.int64(0)
                nd = 0
                d = np.int64(c) - 48
                while d >= 0 and d <= 9 and nd < 10:
                    idx = idx * 10 + d
                    nd += 1
                    i += 1
                    d = np.int64(buf[np.uint64(i)]) - 48
                if d != 58 - 48 or idx <= last or idx > MAX_INDEX:
                    status = NEED_FULL      # qid:, no ':', index below base, too big or out of order
                    break
                i += 1
            # ---- a number: [+-] digits [. digits] [(e|E) [+-] digits], exact
            c = np.int64(buf[np.uint64(i)])
            neg = c == 45
            if c == 45 or c == 43:
                i += 1
                c = np.int64(buf[np.uint64(i)])
            m = np.int64(0)
            nd = 0
            exp10 = np.int64(0)
            d = c - 48
            while d >= 0 and d <= 9:
                m = m * 10 + d
                nd += 1
                i += 1
                d = np.int64(buf[np.uint64(i)]) - 48
            if d == 46 - 48:                # '.'
                i += 1
                d = np.int64(buf[np.uint64(i)]) - 48
                while d >= 0 and d <= 9:
                    m = m * 10 + d
                    nd += 1
                    exp10 -= 1
                    i += 1
                    d = np.int64(buf[np.uint64(i)]) - 48
            if d == 101 - 48 or d == 69 - 48:   # e / E
                i += 1
                c = np.int64(buf[np.uint64(i)])
                eneg = c == 45
                if c == 45 or c == 43:
                    i += 1
                    c = np.int64(buf[np.uint64(i)])
                d = c - 48
                e = np.int64(0)
                ne = 0
                while d >= 0 and d <= 9 and ne < 4:
                    e = e * 10 + d
                    ne += 1
                    i += 1
                    d = np.int64(buf[np.uint64(i)]) - 48
                if ne == 0:
                    nd = 0                  # "1e": not a number
                exp10 = exp10 - e if eneg else exp10 + e
            if (nd == 0 or nd > 18 or m >= _TWO53 or exp10 > 22 or exp10 < -22
                    or (CLS[d + 48] & _END) == 0):
                status = NEED_FULL          # not a number, not exact here, or followed by junk
                break
            v = np.float64(m) * POW10[exp10] if exp10 >= 0 else np.float64(m) / POW10[-exp10]
            if neg:
                v = -v
            if is_label:
                lab = v
                is_label = False
                continue
            if z >= zcap:
                status = NEED_NNZ
                break
            last = idx
            indices[np.uint64(z)] = idx - base
            values[np.uint64(z)] = v
            z += 1
        if status != DONE:
            z = row_z                       # roll the partial row back
            i = line_start
            break
        labels[np.uint64(row)] = lab
        qid[np.uint64(row)] = 0
        rowline[np.uint64(row)] = line
        row += 1
        indptr[np.uint64(row)] = z
        line += 1
        i += 1                              # the '\n'
    return status, i, line, row, z
