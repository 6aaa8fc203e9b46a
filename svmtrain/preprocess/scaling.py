"""Feature scaling as LIBSVM's ``svm-scale`` does it, streamed over chunks.

Public API
----------
:func:`compute_stats`  one pass over chunks: per-feature min/max as LIBSVM
                       computes them (an absent feature counts as a 0), the
                       labels' min/max, row and nonzero counts.
:class:`Ranges`        a range file (``-s`` writes one, ``-r`` reads one):
                       lower/upper, the listed features' min/max, optional
                       y section; reads and writes LIBSVM's text format
                       byte for byte, so it can also be stored elsewhere
                       (e.g. in a model) as that text.
:class:`Scaler`        the dense per-feature min/max that pass 2 applies,
                       built from data statistics or from data statistics
                       plus a :class:`Ranges` (LIBSVM's ``-r`` semantics).
:meth:`Scaler.write`   scale chunks and write LIBSVM text, byte-identical
                       to LIBSVM 3.24's svm-scale: labels ``%.17g``
                       (scaled when y-scaling), features ``INDEX:%g``,
                       features with min == max left out, values that scale
                       to 0 left out, a space after every item.

The hot loops are numba kernels (``svmtrain.preprocess._scaling_kernels``) and the
number formatting is exact (``svmtrain._numba._gformat_kernels``); the few values
outside the formatter's exact fast path are formatted with Python's ``%``
(:func:`format_c`) once each and looked up by the kernels afterwards.
"""
import re
from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from . import _scaling_kernels as K
from ..errors import InputFormatError

DBL_MAX = float(np.finfo(np.float64).max)
MAX_INDEX = 2147483647
_BUF_BYTES = 16 << 20          # output written in pieces of about this size


def format_c(x, P):
    """C's ``printf("%.Pg", x)`` (glibc) for any double, in Python."""
    if x != x:
        return "-nan" if np.signbit(x) else "nan"
    return "%.*g" % (P, x)


class _Table:
    """Preformatted values for the kernels: sorted float64 bit patterns,
    offsets, text. Grows by :meth:`add` (one value per kernel miss)."""

    def __init__(self, P):
        self.P = P
        self._text = {}
        self.keys = np.empty(0, np.int64)
        self.off = np.zeros(1, np.int64)
        self.blob = np.empty(0, np.uint8)

    def add(self, x):
        key = int(np.array([x], np.float64).view(np.int64)[0])
        self._text[key] = format_c(float(x), self.P).encode("ascii")
        keys = sorted(self._text)
        texts = [self._text[k] for k in keys]
        self.keys = np.array(keys, np.int64)
        self.off = np.zeros(len(keys) + 1, np.int64)
        self.off[1:] = np.cumsum([len(t) for t in texts])
        self.blob = np.frombuffer(b"".join(texts), np.uint8).copy()

    def args(self):
        return self.keys, self.off, self.blob


# ------------------------------------------------------------------ pass 1

@dataclass
class DataStats:
    """What pass 1 learns. ``feature_min``/``feature_max`` are 0-based, of
    length ``max_index`` (the largest feature index in the data), exactly
    LIBSVM's feature_min/feature_max (including the sign of zeros);
    ``y_min``/``y_max`` LIBSVM's y_min/y_max (DBL_MAX/-DBL_MAX with no rows)."""
    n_rows: int
    nnz: int
    feature_min: np.ndarray
    feature_max: np.ndarray
    y_min: float
    y_max: float

    @property
    def max_index(self):
        return len(self.feature_min)

    def dense(self, n):
        """(min, max) extended to n features: features beyond the data's
        are 0/0 when there are rows (every row lacks them), else
        DBL_MAX/-DBL_MAX as LIBSVM initialises them."""
        k = self.max_index
        fill = 0.0 if self.n_rows else DBL_MAX
        fmin = np.full(max(n, k), fill)
        fmax = np.full(max(n, k), -fill if fill else 0.0)
        fmin[:k] = self.feature_min
        fmax[:k] = self.feature_max
        return fmin, fmax


class _State:
    def __init__(self):
        self.n = 0
        self.vmin = np.empty(0)
        self.vmax = np.empty(0)
        self.count = np.empty(0, np.int64)
        self.last_row = np.empty(0, np.int64)
        self.tail_run = np.empty(0, np.int64)
        self.negz = np.empty(0, np.int64)
        self.posz = np.empty(0, np.int64)

    def grow(self, n):
        if n <= self.n:
            return
        add = n - self.n
        cat = np.concatenate
        self.vmin = cat([self.vmin, np.full(add, DBL_MAX)])
        self.vmax = cat([self.vmax, np.full(add, -DBL_MAX)])
        self.count = cat([self.count, np.zeros(add, np.int64)])
        self.last_row = cat([self.last_row, np.full(add, -2, np.int64)])
        self.tail_run = cat([self.tail_run, np.zeros(add, np.int64)])
        self.negz = cat([self.negz, np.full(add, -1, np.int64)])
        self.posz = cat([self.posz, np.full(add, -1, np.int64)])
        self.n = n


def compute_stats(chunks):
    """Pass 1 over an iterable of Chunks (consumed once, one chunk held at a
    time): a :class:`DataStats`. Memory: a few arrays of max_index."""
    st = _State()
    ymm = np.array([DBL_MAX, -DBL_MAX])
    rows = nnz = 0
    for c in chunks:
        st.grow(c.n_features)
        K.accumulate(c.indptr, c.indices, c.values, c.labels, rows, st.vmin, st.vmax, st.count,
                     st.last_row, st.tail_run, st.negz, st.posz, ymm)
        rows += c.n_rows
        nnz += c.nnz
    fmin = np.empty(st.n)
    fmax = np.empty(st.n)
    K.finish_minmax(rows, st.vmin, st.vmax, st.count, st.last_row, st.tail_run, st.negz, st.posz,
                    fmin, fmax)
    return DataStats(rows, nnz, fmin, fmax, float(ymm[0]), float(ymm[1]))


# ------------------------------------------------------------ range files

_NUM = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_TWO = re.compile(rf"[ \t]*({_NUM})[ \t]+({_NUM})[ \t\r]*")
_FEATURES = re.compile(rf"(?:[ \t]*\d{{1,10}}[ \t]+{_NUM}[ \t]+{_NUM}[ \t\r]*(?:\n|\Z))*")
_BLANK = re.compile(r"[ \t\r\n]*\Z")


@dataclass
class Ranges:
    """A svm-scale range file. ``index`` (int64, 1-based), ``feature_min``,
    ``feature_max``: the feature lines in file order; ``y``: None or
    (y_lower, y_upper, y_min, y_max).

    :meth:`to_bytes` gives LIBSVM's layout exactly (``y`` section first
    when present, then ``x``, ``LOWER UPPER``, ``INDEX MIN MAX`` lines, all
    numbers ``%.17g``); :meth:`parse` reads that layout (extra blanks and
    CRLF tolerated) and raises InputFormatError naming the line otherwise.
    Feature lines out of order or repeated are kept as they are: applying
    them (:meth:`Scaler.restore`) follows LIBSVM's sequential semantics."""
    lower: float
    upper: float
    index: np.ndarray
    feature_min: np.ndarray
    feature_max: np.ndarray
    y: Optional[Tuple[float, float, float, float]] = None

    @classmethod
    def from_stats(cls, stats, lower, upper, y_limits=None):
        """What ``svm-scale -s`` saves: the features with min != max."""
        keep = np.flatnonzero(stats.feature_min != stats.feature_max)
        y = None
        if y_limits is not None:
            y = (float(y_limits[0]), float(y_limits[1]), stats.y_min, stats.y_max)
        return cls(float(lower), float(upper), (keep + 1).astype(np.int64),
                   stats.feature_min[keep].copy(), stats.feature_max[keep].copy(), y)

    def to_bytes(self):
        head = []
        if self.y is not None:
            yl, yu, ymin, ymax = self.y
            head += ["y", f"{format_c(yl, 17)} {format_c(yu, 17)}", f"{format_c(ymin, 17)} {format_c(ymax, 17)}"]
        head += ["x", f"{format_c(self.lower, 17)} {format_c(self.upper, 17)}", ""]
        n = len(self.index)
        buf = np.empty(n * 60 + 1, np.uint8)
        table = _Table(17)
        k = pos = 0
        while True:
            status, k, pos, miss = K.write_range_lines(self.index, self.feature_min, self.feature_max,
                                                       k, pos, *table.args(), buf)
            if status != K.MISS:
                break
            table.add(miss)
        return "\n".join(head).encode("ascii") + buf[:pos].tobytes()

    @classmethod
    def read(cls, path):
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise InputFormatError(path, None, f"cannot open: {e.strerror or e}") from None
        return cls.parse(data, str(path))

    @classmethod
    def parse(cls, data, name="<range file>"):
        try:
            text = data.decode("ascii")
        except UnicodeDecodeError:
            raise InputFormatError(name, None, "not a svm-scale range file (not ASCII text)") from None
        lines = text.split("\n", 6)
        at = 0                      # line (0-based) being read

        def fail(line, problem):
            raise InputFormatError(name, line + 1, problem)

        def word(expect):
            nonlocal at
            got = lines[at].strip() if at < len(lines) else ""
            if got != expect:
                fail(at, f"expected '{expect}', got {got[:40]!r}" if got else f"expected '{expect}', got an empty line or the end of the file")
            at += 1

        def two(what):
            nonlocal at
            m = _TWO.fullmatch(lines[at]) if at < len(lines) else None
            if m is None:
                fail(at, f"expected {what} (two numbers)")
            a, b = float(m.group(1)), float(m.group(2))
            if not (np.isfinite(a) and np.isfinite(b)):
                fail(at, f"{what} out of range")
            at += 1
            return a, b

        first = text[:1]
        if first not in ("x", "y"):
            fail(0, "not a svm-scale range file (the first line must be 'x' or 'y')")
        y = None
        if first == "y":
            word("y")
            yl, yu = two("y_lower y_upper")
            ymin, ymax = two("y_min y_max")
            y = (yl, yu, ymin, ymax)
        word("x")
        lower, upper = two("lower upper")
        # the feature lines: everything after line `at`
        parts = text.split("\n", at)
        body = parts[at] if len(parts) > at else ""
        m = _FEATURES.match(body)
        rest = body[m.end():]
        if not _BLANK.match(rest):
            line = at + body.count("\n", 0, m.end())
            fail(line, f"expected 'INDEX MIN MAX', got {rest.split(chr(10), 1)[0].strip()[:40]!r}")
        tokens = body[:m.end()].split()
        index = np.array(tokens[0::3], dtype=np.int64)
        fmin = np.array(tokens[1::3], dtype=np.float64)
        fmax = np.array(tokens[2::3], dtype=np.float64)
        bad = (index < 1) | (index > MAX_INDEX) | ~np.isfinite(fmin) | ~np.isfinite(fmax)
        if bad.any():
            k = int(np.argmax(bad))
            what = "index out of range" if not (1 <= index[k] <= MAX_INDEX) else "value out of range"
            fail(at + k, f"{what}: {index[k]} {tokens[3 * k + 1]} {tokens[3 * k + 2]}")
        return cls(lower, upper, index, fmin, fmax, y)

    def in_order(self):
        """True when the feature lines are strictly increasing (as written
        by svm-scale)."""
        return bool(np.all(np.diff(self.index) > 0))


# ------------------------------------------------------------------ pass 2

@dataclass
class Scaler:
    """What pass 2 applies: lower/upper, dense 0-based ``feature_min`` and
    ``feature_max`` over features 1..max_index, ``y`` None or (y_lower,
    y_upper, y_min, y_max)."""
    lower: float
    upper: float
    feature_min: np.ndarray
    feature_max: np.ndarray
    y: Optional[Tuple[float, float, float, float]] = None

    @classmethod
    def from_stats(cls, stats, lower, upper, y_limits=None):
        y = None
        if y_limits is not None:
            y = (float(y_limits[0]), float(y_limits[1]), stats.y_min, stats.y_max)
        return cls(float(lower), float(upper), stats.feature_min, stats.feature_max, y)

    @classmethod
    def restore(cls, stats, ranges, y_limits=None):
        """LIBSVM's ``-r``: (Scaler, warned) where warned holds the 1-based
        indices of features of the data that vary but have no line in the
        range file: they are scaled to 0, i.e. dropped, as LIBSVM does.
        max_index is the larger of the data's and the range file's; lower,
        upper and the y section come from the file (``y_limits`` with the
        data's y_min/y_max only when the file has no y section)."""
        n = max(stats.max_index, int(ranges.index.max()) if len(ranges.index) else 0)
        fmin, fmax = stats.dense(n)
        warned = np.zeros(n, np.uint8)
        K.restore_merge(fmin, fmax, ranges.index, ranges.feature_min, ranges.feature_max, warned)
        if ranges.y is not None:
            y = ranges.y
        elif y_limits is not None:
            y = (float(y_limits[0]), float(y_limits[1]), stats.y_min, stats.y_max)
        else:
            y = None
        dropped = (warned == 1) & (fmin == fmax)     # warned, and not set again by a later line
        return cls(ranges.lower, ranges.upper, fmin, fmax, y), np.flatnonzero(dropped) + 1

    def scale_chunk(self, chunk):
        """The rows of ``chunk`` scaled as svm-scale scales them, as a new Chunk:
        features with min == max (and beyond the scaler's features) dropped,
        values that scale to 0 dropped, and every feature whose scaled 0 is
        nonzero written into the rows that lack it (svm-scale's densification;
        ParameterError beyond MAX_SCALED_VALUES values, naming --scale-range 0 1).
        Rows stay in order, indices sorted within each row."""
        from ..data.dataset import Chunk
        from ..errors import ParameterError
        n, d = chunk.n_rows, len(self.feature_min)
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(chunk.indptr))
        idx = chunk.indices.astype(np.int64)
        inside = idx < d
        rows, idx, v = rows[inside], idx[inside], chunk.values[inside]
        mn, mx = self.feature_min[idx], self.feature_max[idx]
        varying = mn != mx
        rows, idx, v = rows[varying], idx[varying], _scale_values(v[varying], mn[varying], mx[varying], self.lower,
                                                                    self.upper)
        nonzero = v != 0.0
        rows, idx, v = rows[nonzero], idx[nonzero], v[nonzero]
        dense_feat, dense_val = K.scale_zero(self.feature_min, self.feature_max, self.lower, self.upper)
        if len(dense_feat):
            if n * len(dense_feat) > MAX_SCALED_VALUES:
                raise ParameterError(f"scaling to [{self.lower:g}, {self.upper:g}] makes the 0 of {len(dense_feat)} "
                                     f"features nonzero in all {n} rows (too many values to hold): use "
                                     "--scale-range 0 1 on sparse nonnegative data")
            present = np.zeros((n, len(dense_feat)), bool)
            where = np.searchsorted(dense_feat, chunk.indices)          # every stored value, before dropping
            hit = (where < len(dense_feat)) & (dense_feat[np.minimum(where, len(dense_feat) - 1)] == chunk.indices)
            all_rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(chunk.indptr))
            present[all_rows[hit], where[hit]] = True
            add_r, add_k = np.nonzero(~present)
            rows = np.concatenate([rows, add_r])
            idx = np.concatenate([idx, dense_feat[add_k].astype(np.int64)])
            v = np.concatenate([v, dense_val[add_k]])
        order = np.lexsort((idx, rows))
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
        return Chunk(labels=chunk.labels, indptr=indptr, indices=idx[order].astype(np.int32), values=v[order],
                     qid=chunk.qid)

    def _dense_items(self):
        feats, vals = K.scale_zero(self.feature_min, self.feature_max, self.lower, self.upper)
        buf = np.empty(len(feats) * 26 + 1, np.uint8)
        ends = np.zeros(len(feats) + 1, np.int64)
        table = _Table(6)
        k = pos = 0
        while True:
            status, k, pos, miss = K.write_items(feats, vals, k, pos, *table.args(), buf, ends)
            if status != K.MISS:
                break
            table.add(miss)
        return feats.astype(np.int64), ends, buf[:pos].copy()

    def write(self, chunks, out):
        """Scale the chunks and write them to the binary file ``out``, in
        pieces of about 16 MB (memory: one chunk, one piece, the text of the
        features whose scaled 0 is nonzero). Returns the number of
        ``INDEX:VALUE`` items written (LIBSVM's new #nonzeros)."""
        dense_feat, dense_off, dense_blob = self._dense_items()
        dense_len = len(dense_blob)
        t6, t17 = _Table(6), _Table(17)
        ys, (yl, yu, ymin, ymax) = (True, self.y) if self.y is not None else (False, (0.0, 0.0, 0.0, 0.0))
        buf = np.empty(_BUF_BYTES + 1024, np.uint8)
        total = 0
        for c in chunks:
            # bytes each row can take at most: label (24) + space + newline,
            # "qid:-9223372036854775808 " (25), the dense items, 25 per
            # explicit item ("2147483647:-1.23457e-308 ")
            bound = np.cumsum(51 + dense_len + 25 * np.diff(c.indptr))
            r = 0
            while r < c.n_rows:
                base = bound[r - 1] if r else 0
                r1 = int(np.searchsorted(bound, base + _BUF_BYTES, "right"))
                r1 = max(r1, r + 1)
                need = int(bound[r1 - 1] - base)
                if need > len(buf):
                    buf = np.empty(need, np.uint8)
                pos = 0
                while True:
                    status, r, pos, new_nnz, miss, P = K.write_rows(
                        c.labels, c.qid, c.indptr, c.indices, c.values, r, r1, self.feature_min,
                        self.feature_max, self.lower, self.upper, ys, yl, yu, ymin, ymax,
                        dense_feat, dense_off, dense_blob, *t6.args(), *t17.args(), buf, pos)
                    total += new_nnz
                    if status != K.MISS:
                        break
                    (t6 if P == 6 else t17).add(miss)
                out.write(buf[:pos])
        return total


# ------------------------------------------------------------------ in memory (svm-train --scale)

# at most this many stored values in a scaled Chunk: the scaled 0 of a
# feature with min < 0 < ... (e.g. -l -1 on nonnegative sparse data) is
# nonzero and fills every row, as svm-scale writes it
MAX_SCALED_VALUES = 200_000_000


def scaler_of(ranges):
    """The Scaler that applies ``ranges`` (as LIBSVM's ``svm-scale -r``) to
    rows of any width: features without a line in the ranges scale to 0
    (they are dropped), as svm-scale does with data features the range
    file lacks. Built once per Ranges object."""
    cached = getattr(ranges, "_scaler", None)
    if cached is None:
        n = int(ranges.index.max()) if len(ranges.index) else 0
        fmin, fmax = np.zeros(n), np.zeros(n)
        fmin[ranges.index - 1] = ranges.feature_min
        fmax[ranges.index - 1] = ranges.feature_max
        cached = Scaler(ranges.lower, ranges.upper, fmin, fmax)
        object.__setattr__(ranges, "_scaler", cached)
    return cached


def scale_rows(ranges, chunk):
    """``chunk`` (a Chunk) scaled by ``ranges``: the values svm-scale would
    write, at full precision (svm-scale prints them with ``%g``), as a new
    Chunk with the same labels and qid. See :meth:`Scaler.scale_chunk`."""
    return scaler_of(ranges).scale_chunk(chunk)


def _scale_values(v, mn, mx, lower, upper):
    """svm-scale's arithmetic (_scaling_kernels._scale) on arrays: lower at
    the min, upper at the max, linear in between."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mid = lower + (upper - lower) * (v - mn) / (mx - mn)
    return np.where(v == mn, lower, np.where(v == mx, upper, mid))
