"""Numba kernels of svm-scale (orchestration in ``svmtrain.preprocess.scaling``).

* :func:`accumulate` -- per-feature min/max/count of one chunk's nonzeros and
  the min/max of its labels, with C's ``max``/``min`` macros' semantics.
* :func:`restore_merge` -- LIBSVM's sequential reading of a range file's
  feature lines over the data's min/max (out-of-order and repeated lines
  included).
* :func:`scale_zero` -- each feature's scaled value of 0.
* :func:`write_rows` -- scale rows and write them as LIBSVM text.
* :func:`write_range_lines` -- the ``INDEX MIN MAX`` lines of a range file.

Numbers that :func:`svmtrain._numba._gformat_kernels.write_g` cannot format
exactly are looked up in a table of preformatted values (``keys``: the
float64 bit patterns, sorted; ``off``/``blob``: their text); a value not in
the table stops the kernel, which returns it so the caller can format it
(Python's ``%``) and call again from the row (or line) where it stopped.
"""
import math

import numpy as np
from numba import njit

from .._numba._gformat_kernels import write_g, write_uint

MISS = 1


@njit(cache=True)
def accumulate(indptr, indices, values, labels, row0, vmin, vmax, count, last_row, tail_run,
               negz_row, posz_row, ymm):
    """Fold one chunk (global rows row0...) into the per-feature state.

    vmin/vmax: min/max over explicit values, folded as C's
    ``x = (x < v) ? x : v`` (so the sign of a zero result is that of the
    last zero seen); count: rows where the feature is present; last_row and
    tail_run: the last row with the feature and the length of the run of
    consecutive rows ending there; negz_row/posz_row: the last row with an
    explicit -0 / +0. ymm = [y_min, y_max] folded the same way."""
    n = len(labels)
    for i in range(n):
        r = row0 + i
        t = labels[i]
        if not (ymm[0] < t):
            ymm[0] = t
        if not (ymm[1] > t):
            ymm[1] = t
        for z in range(indptr[i], indptr[i + 1]):
            j = indices[z]
            v = values[z]
            if not (vmin[j] < v):
                vmin[j] = v
            if not (vmax[j] > v):
                vmax[j] = v
            if v == 0.0:
                if math.copysign(1.0, v) < 0.0:
                    negz_row[j] = r
                else:
                    posz_row[j] = r
            if last_row[j] == r - 1:
                tail_run[j] += 1
            else:
                tail_run[j] = 1
            last_row[j] = r
            count[j] += 1


@njit(cache=True)
def finish_minmax(n_rows, vmin, vmax, count, last_row, tail_run, negz_row, posz_row, fmin, fmax):
    """LIBSVM's feature_min/feature_max: the folds with a +0 for every row
    that lacks the feature, in row order (the sign of a zero result is the
    sign of the last zero in row order)."""
    for j in range(len(vmin)):
        lo = vmin[j]
        hi = vmax[j]
        if n_rows > 0 and count[j] < n_rows:
            if last_row[j] == n_rows - 1:
                absent = n_rows - 1 - tail_run[j]
            else:
                absent = n_rows - 1
            neg_last = negz_row[j] > absent and negz_row[j] > posz_row[j]
            zero = -0.0 if neg_last else 0.0
            if not (lo < 0.0):
                lo = zero
            if not (hi > 0.0):
                hi = zero
        fmin[j] = lo
        fmax[j] = hi


@njit(cache=True)
def restore_merge(fmin, fmax, idx, rmin, rmax, warned):
    """LIBSVM's pass 2.5 (``-r``): for each range-file line in file order,
    every feature between the previous line's index + 1 and this index that
    still has min != max is warned about and set to 0/0 (dropped); then the
    line's min/max are stored. After the last line the same for the rest.
    fmin/fmax (0-based, the data's, length max_index) are updated in place;
    warned[j] = 1 for the warned features."""
    n = len(fmin)
    nxt = 0
    for k in range(len(idx)):
        j = idx[k] - 1
        for i in range(nxt, min(j, n)):
            if fmin[i] != fmax[i]:
                warned[i] = 1
                fmin[i] = 0.0
                fmax[i] = 0.0
        fmin[j] = rmin[k]
        fmax[j] = rmax[k]
        nxt = j + 1
    for i in range(nxt, n):
        if fmin[i] != fmax[i]:
            warned[i] = 1
            fmin[i] = 0.0
            fmax[i] = 0.0


@njit(cache=True)
def _scale(v, mn, mx, lower, upper):
    if v == mn:
        return lower
    if v == mx:
        return upper
    return lower + (upper - lower) * (v - mn) / (mx - mn)


@njit(cache=True)
def scale_zero(fmin, fmax, lower, upper):
    """The 0-based features whose scaled 0 is written in every row that
    lacks them (min != max and the scaled 0 is nonzero), and those values."""
    n = len(fmin)
    keep = np.zeros(n, np.bool_)
    vals = np.zeros(n, np.float64)
    for j in range(n):
        if fmin[j] != fmax[j]:
            s = _scale(0.0, fmin[j], fmax[j], lower, upper)
            if s != 0.0:
                keep[j] = True
                vals[j] = s
    feats = np.nonzero(keep)[0]
    return feats, vals[feats]


@njit(cache=True)
def _bits(x):
    a = np.empty(1, np.float64)
    a[0] = x
    return a.view(np.int64)[0]


@njit(cache=True)
def _put(buf, pos, x, P, keys, off, blob, tmp):
    """write_g, else the table; -1 when x is in neither."""
    p = write_g(buf, pos, x, P, tmp)
    if p >= 0:
        return p
    if len(keys) == 0:
        return -1
    b = _bits(x)
    k = np.searchsorted(keys, b)
    if k < len(keys) and keys[k] == b:
        for i in range(off[k], off[k + 1]):
            buf[pos] = blob[i]
            pos += 1
        return pos
    return -1


@njit(cache=True)
def write_rows(labels, qid, indptr, indices, values, r0, r1, fmin, fmax, lower, upper,
               y_scaling, y_lower, y_upper, y_min, y_max,
               dense_feat, dense_off, dense_blob,
               k6, o6, b6, k17, o17, b17, buf, pos):
    """Write rows r0..r1-1 as svm-scale does: the label (``%.17g``, scaled
    when y_scaling), then for each feature 1..max_index in order the scaled
    value (``%g``) when it is nonzero, features with min == max left out;
    "INDEX:VALUE " items, a space after the label, a newline per row; a
    nonzero qid is kept as "qid:N " after the label (LIBSVM's svm-scale
    would drop every feature of such a line).
    ``dense_*``: the text "INDEX:VALUE " of each feature whose scaled 0 is
    nonzero (written where a row lacks the feature).

    Returns (status, row, pos, new_nonzeros, miss, miss_P): status 0 when
    all rows are written (pos: end); MISS when a value could not be
    formatted: ``row`` is the row it is in, pos the start of that row's
    text, ``miss`` the value and miss_P its precision (6 or 17)."""
    tmp = np.empty(24, np.uint8)
    n = len(fmin)
    nd = len(dense_feat)
    new_nnz = 0
    for r in range(r0, r1):
        start = pos
        row_nnz = 0
        t = labels[r]
        if y_scaling:
            t = _scale(t, y_min, y_max, y_lower, y_upper)
        p = _put(buf, pos, t, 17, k17, o17, b17, tmp)
        if p < 0:
            return MISS, r, start, new_nnz, t, 17
        pos = p
        buf[pos] = 32
        pos += 1
        if qid[r] != 0:
            for ch in (113, 105, 100, 58):          # "qid:"
                buf[pos] = ch
                pos += 1
            qr = qid[r]
            if qr < 0:
                buf[pos] = 45
                pos += 1
                qr = -qr
            pos = write_uint(buf, pos, qr)
            buf[pos] = 32
            pos += 1
        d = 0
        for z in range(indptr[r], indptr[r + 1]):
            j = indices[z]
            while d < nd and dense_feat[d] < j:
                for i in range(dense_off[d], dense_off[d + 1]):
                    buf[pos] = dense_blob[i]
                    pos += 1
                d += 1
                row_nnz += 1
            if d < nd and dense_feat[d] == j:
                d += 1
            if j >= n or fmin[j] == fmax[j]:
                continue
            s = _scale(values[z], fmin[j], fmax[j], lower, upper)
            if s != 0.0:
                pos = write_uint(buf, pos, j + 1)
                buf[pos] = 58
                p = _put(buf, pos + 1, s, 6, k6, o6, b6, tmp)
                if p < 0:
                    return MISS, r, start, new_nnz, s, 6
                pos = p
                buf[pos] = 32
                pos += 1
                row_nnz += 1
        while d < nd:
            for i in range(dense_off[d], dense_off[d + 1]):
                buf[pos] = dense_blob[i]
                pos += 1
            d += 1
            row_nnz += 1
        buf[pos] = 10
        pos += 1
        new_nnz += row_nnz
    return 0, r1, pos, new_nnz, 0.0, 0


@njit(cache=True)
def write_items(feats, vals, k, pos, k6, o6, b6, buf, ends):
    """"INDEX:VALUE " (``%g``) for the 0-based features feats[k:], from
    buf[pos]; ends[k + 1] = end of item k. (status, k, pos, miss): MISS
    with k the item whose value could not be formatted (resume there)."""
    tmp = np.empty(24, np.uint8)
    while k < len(feats):
        q = write_uint(buf, pos, feats[k] + 1)
        buf[q] = 58
        q = _put(buf, q + 1, vals[k], 6, k6, o6, b6, tmp)
        if q < 0:
            return MISS, k, pos, vals[k]
        buf[q] = 32
        pos = q + 1
        ends[k + 1] = pos
        k += 1
    return 0, k, pos, 0.0


@njit(cache=True)
def write_range_lines(index, mins, maxs, k, pos, k17, o17, b17, buf):
    """"INDEX MIN MAX\\n" (``%.17g``) for the lines k... of the aligned
    arrays (1-based indices), from buf[pos]. (status, k, pos, miss): MISS
    with k the line whose value could not be formatted (resume there)."""
    tmp = np.empty(24, np.uint8)
    while k < len(index):
        q = write_uint(buf, pos, index[k])
        buf[q] = 32
        q = _put(buf, q + 1, mins[k], 17, k17, o17, b17, tmp)
        if q < 0:
            return MISS, k, pos, mins[k]
        buf[q] = 32
        q = _put(buf, q + 1, maxs[k], 17, k17, o17, b17, tmp)
        if q < 0:
            return MISS, k, pos, maxs[k]
        buf[q] = 10
        pos = q + 1
        k += 1
    return 0, k, pos, 0.0
