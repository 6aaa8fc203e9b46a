"""Streaming reader of LIBSVM / SVMlight files.

Public API
----------
``open_source(path)``
    A binary file object for ``path`` (a str or Path, or ``"-"`` for standard
    input). gzip, bzip2 and xz are recognised by their magic bytes, not by
    the file name, on standard input too.
``iter_chunks(path, chunk_rows=None, chunk_bytes=None, progress=None, threads=None, index_base=1)``
    Iterator of :class:`svmtrain.data.dataset.Chunk`, streamed block by block.
    ``index_base=0`` reads LIBSVM's precomputed-kernel files (``-t 4``),
    whose index 0 (``0:ID``) is a feature: column c holds file index c
    (with 1, the default, column c holds file index c + 1 and index 0 is
    an error).
``read_libsvm(path, **same)``
    The whole file as one Chunk.
``parse_bytes(data, name="<bytes>", **same)``
    The same parser over a bytes object (tests, small inputs).
``parse_range(buf, start, end)``
    Low level: one call of the kernel over whole lines of a buffer.

Every problem with the input raises :class:`svmtrain.errors.InputFormatError`
whose ``str()`` is ``FILE:LINE: problem`` (``FILE: problem`` when no line
applies, e.g. a file that cannot be opened or a corrupt compressed stream).
Lines are physical lines, 1-based, blank and comment lines included. The
name of standard input in messages is ``<stdin>``.

How it works: the decompressed text is read in blocks (256 KiB first,
doubling up to ``chunk_bytes``), cut after the block's last newline (the
tail is carried into the next block). A block of at least 1 MiB is split at
newlines into one range per thread and each range is parsed by one call of
the numba kernel :func:`svmtrain.io._plain_reader_kernels.parse_plain_lines`
(the plain lines; from the first other line on, the full parser
:func:`svmtrain.io._reader_kernels.parse_lines`; another call only when the
output arrays must grow), which releases the GIL; the
ranges run on a small thread pool while this thread reads (and
decompresses) the next block. Results are taken in file order, so line
numbers, chunk order and "the first error" are the same as in a serial read.
The kernel converts numbers of up to 18 significant digits exactly
(Clinger's fast path, else Eisel-Lemire); the rest (more digits, subnormal
or overflowing results) are converted here with ``float()`` (correctly
rounded, like C's ``strtod``).
``iter_chunks`` hands out the kernel's arrays (views, no copy);
``read_libsvm`` copies each range into one set of growing result arrays and
reuses the kernel's arrays, so it never holds the data twice.

``progress(n)``, when given, is called with the number of bytes consumed
from the underlying source since the previous call: bytes of the file as
stored on disk (so the *compressed* bytes for a compressed file; use
``os.path.getsize(path)`` as the bar's total) or bytes read from standard
input (total unknown).
"""
import bz2
import gzip
import io
import lzma
import os
import re
import sys
import zlib
from collections import deque

import numpy as np

from ..data.dataset import Chunk
from ..errors import InputFormatError
from . import _plain_reader_kernels as KP
from . import _reader_kernels as K

# 8 MiB blocks: large enough that the per-block Python work is negligible,
# small enough that the buffers and kernel outputs in flight stay a few tens
# of MB (fresh memory is slow to fault in on some VMs).
DEFAULT_CHUNK_BYTES = 8 << 20
DEFAULT_CHUNK_ROWS = 1 << 20
STDIN_NAME = "<stdin>"

# A block is split over threads only when each part gets at least this much.
_MIN_PART_BYTES = 512 << 10
_FIRST_BLOCK_BYTES = 256 << 10
_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"))
_READ_ERRORS = (EOFError, OSError, lzma.LZMAError, zlib.error, ValueError)
_TOKEN = re.compile(rb"[^ \t\r\n\x0b\x0c#]*")


# ---------------------------------------------------------------- opening

def display_name(path):
    """How ``path`` is named in messages."""
    if isinstance(path, str) and path == "-":
        return STDIN_NAME
    return os.fspath(path)


class _RawSource(io.RawIOBase):
    """The raw byte source: replays the peeked magic bytes, then reads the
    underlying file; counts the bytes consumed (for progress)."""

    def __init__(self, f, prefix, owns):
        super().__init__()
        self._f = f
        self._prefix = prefix
        self._owns = owns
        self.consumed = 0

    def readable(self):
        return True

    def readinto(self, b):
        mv = memoryview(b).cast("B")
        if self._prefix:
            k = min(len(mv), len(self._prefix))
            mv[:k] = self._prefix[:k]
            self._prefix = self._prefix[k:]
            self.consumed += k
            return k
        readinto = getattr(self._f, "readinto", None)
        if readinto is not None:
            k = readinto(mv) or 0
        else:
            data = self._f.read(len(mv))
            k = len(data)
            mv[:k] = data
        self.consumed += k
        return k

    def close(self):
        if not self.closed:
            try:
                if self._owns:
                    self._f.close()
            finally:
                super().close()


class _ClosesRaw:
    """Mixin: closing the decompressor also closes the raw source."""
    _raw = None

    def close(self):
        try:
            super().close()
        finally:
            if self._raw is not None:
                self._raw.close()


class _GzipSource(_ClosesRaw, gzip.GzipFile):
    pass


class _Bz2Source(_ClosesRaw, bz2.BZ2File):
    pass


class _XzSource(_ClosesRaw, lzma.LZMAFile):
    pass


def _open(path):
    """(binary file object, _RawSource) for ``path``."""
    name = display_name(path)
    if isinstance(path, str) and path == "-":
        f = getattr(sys.stdin, "buffer", None)
        if f is None:
            raise InputFormatError(name, None, "cannot open: no standard input")
        owns = False
    else:
        try:
            f = open(path, "rb", buffering=0)
        except OSError as e:
            raise InputFormatError(name, None, f"cannot open: {e.strerror or e}") from None
        owns = True
    try:
        prefix = b""
        while len(prefix) < 6:
            more = f.read(6 - len(prefix))
            if not more:
                break
            prefix += more
    except OSError as e:
        if owns:
            f.close()
        raise InputFormatError(name, None, f"cannot open: {e.strerror or e}") from None
    raw = _RawSource(f, prefix, owns)
    for magic, kind in _MAGIC:
        if prefix.startswith(magic):
            break
    else:
        return raw, raw
    if kind == "gzip":
        src = _GzipSource(fileobj=raw, mode="rb")
    elif kind == "bzip2":
        src = _Bz2Source(raw, "rb")
    else:
        src = _XzSource(raw, "rb")
    src._raw = raw
    return src, raw


def open_source(path):
    """Binary file object for ``path`` (``"-"``: standard input), with
    gzip/bzip2/xz decompression chosen by magic bytes. Closing it closes
    the file (never standard input itself).

    Raises InputFormatError(path, None, "cannot open: ...").
    """
    return _open(path)[0]


# ---------------------------------------------------------------- blocks

def _blocks(f, name, chunk_bytes, on_read, free):
    """Yield (bytearray, n): ``buf[:n]`` is whole lines, ending with '\\n'
    (one is appended at the end of the input when missing; every buffer has
    one spare byte for it). Buffers are taken from the list ``free`` when
    one is large enough (the caller puts back those it is done with)."""
    carry = b""
    # Start small and double up to chunk_bytes, so that small inputs do not
    # pay for a large buffer and the first rows come early.
    step = min(chunk_bytes, _FIRST_BLOCK_BYTES)
    want = step
    first = True
    while True:
        size = len(carry) + want
        buf = None
        while free:
            b = free.pop()
            if len(b) >= size + 1:
                buf = b
                break
        if buf is None:
            buf = bytearray(size + 1)
        buf[:len(carry)] = carry
        n = len(carry)
        mv = memoryview(buf)
        eof = False
        try:
            while n < size:
                k = f.readinto(mv[n:size])
                if not k:
                    eof = True
                    break
                n += k
        except _READ_ERRORS as e:
            raise InputFormatError(name, None, f"cannot read: {_reason(e)}") from None
        finally:
            on_read()
        if eof:
            if n == 0:
                return
            if buf[n - 1] != 10:
                buf[n] = 10
                n += 1
            last = n - 1
        else:
            last = buf.rfind(b"\n", 0, n)
            if last < 0:          # a line longer than the block: read more
                carry = bytes(buf[:n])
                want = max(step, len(carry))
                continue
        if first:             # the first block handed out starts the input
            first = False
            if buf.startswith(b"\xef\xbb\xbf"):   # UTF-8 byte order mark
                buf[0:3] = b"   "
        if eof:
            yield buf, n
            return
        carry = bytes(buf[last + 1:n])
        step = min(chunk_bytes, 2 * step)
        want = step
        yield buf, last + 1


def _reason(e):
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return str(e) or type(e).__name__


def _ranges(buf, n, parts):
    """Split ``buf[:n]`` at newlines into at most ``parts`` ranges."""
    if parts <= 1 or n < 2 * _MIN_PART_BYTES:
        return [(0, n)]
    parts = min(parts, n // _MIN_PART_BYTES)
    step = n // parts
    out = []
    s = 0
    for k in range(1, parts):
        t = buf.find(b"\n", max(s, k * step), n)
        if t < 0 or t + 1 >= n:
            break
        out.append((s, t + 1))
        s = t + 1
    out.append((s, n))
    return out


# ---------------------------------------------------------------- messages

def _token(buf, pos):
    tok = _TOKEN.match(buf, pos).group()
    return tok


def _show(tok, limit=40):
    s = tok[:limit].decode("utf-8", "backslashreplace")
    s = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in s)
    if len(tok) > limit:
        s += "..."
    return f"'{s}'"


def _problem(code, buf, pos, aux, base=1):
    tok = _token(buf, pos)
    if code == K.E_LABEL:
        if b":" in tok:
            return f"missing label: the line starts with {_show(tok)}"
        return f"invalid label {_show(tok)}"
    if code == K.E_LABEL_NONFINITE:
        return f"label {_show(tok)} is not a finite number"
    if code in (K.E_INDEX_NONPOS, K.E_INDEX_BIG):
        digits = tok.split(b":", 1)[0].decode("ascii", "replace")
        sign = "-" if digits.startswith("-") else ""
        digits = digits.lstrip("-").lstrip("0") or "0"
        if len(digits) > 30:
            digits = digits[:30] + "..."
        if code == K.E_INDEX_NONPOS:
            return f"feature index {sign}{digits} is invalid: indices are " + ("1-based" if base else ">= 0")
        return f"feature index {digits} is too large (max {K.MAX_INDEX})"
    if code == K.E_FEATURE:
        return f"invalid feature {_show(tok)}: expected index:value"
    if code == K.E_NO_VALUE:
        return f"feature {_show(tok)} has no value"
    if code == K.E_VALUE:
        return f"invalid value in feature {_show(tok)}"
    if code == K.E_VALUE_NONFINITE:
        return f"value in feature {_show(tok)} is not a finite number"
    if code == K.E_DUPLICATE:
        return f"duplicate feature index {aux}"
    if code == K.E_QID:
        return f"invalid qid {_show(tok)}: expected qid:NONNEGATIVE_INTEGER"
    if code == K.E_QID_POSITION:
        return f"{_show(tok)}: qid must come right after the label"
    return f"parse error {code}"  # pragma: no cover


# ---------------------------------------------------------------- parsing

class _Out:
    """The arrays :func:`_reader_kernels.parse_lines` fills for one range.

    Sized for a range of ``n`` bytes (about 1 row per 128 bytes and 1
    nonzero per 8 bytes, grown on demand); read_libsvm reuses them from
    range to range, so it touches no fresh memory per range.
    """
    __slots__ = ("labels", "qid", "rowline", "indptr", "indices", "values",
                 "slow_slot", "slow_text")

    def __init__(self, n):
        rows = n // 128 + 16
        nnz = n // 8 + 16
        self.labels = np.empty(rows, np.float64)
        self.qid = np.empty(rows, np.int64)
        self.rowline = np.empty(rows, np.int64)
        self.indptr = np.empty(rows + 1, np.int64)
        self.indices = np.empty(nnz, np.int32)
        self.values = np.empty(nnz, np.float64)
        self.slow_slot = np.empty(256, np.int64)
        self.slow_text = np.empty(8192, np.uint8)


class _Result:
    """One parsed range: ``out`` arrays and the counts parse_lines returned."""
    __slots__ = ("buf", "start", "out", "n_rows", "nnz", "n_lines", "n_slow", "n_text",
                 "err", "err_pos", "err_aux", "base")


def _grown(a, n):
    b = np.empty(2 * len(a) + 16, a.dtype)
    b[:n] = a[:n]
    return b


def _grow(o, need, row, z, n_slow, n_text):
    """Grow the arrays of ``o`` that a parse kernel's status ``need`` names,
    keeping the first ``row`` rows, ``z`` nonzeros and the slow numbers."""
    if need == K.NEED_ROWS:
        o.labels, o.qid, o.rowline = _grown(o.labels, row), _grown(o.qid, row), _grown(o.rowline, row)
        o.indptr = _grown(o.indptr, row + 1)
    elif need == K.NEED_NNZ:
        o.indices, o.values = _grown(o.indices, z), _grown(o.values, z)
    else:
        o.slow_slot, o.slow_text = _grown(o.slow_slot, n_slow), _grown(o.slow_text, n_text)


def parse_range(buf, start, end, out=None, base=1):
    """Parse the whole lines of ``buf[start:end]`` (``buf`` a bytearray or
    uint8 array; ``buf[end-1]`` must be ``'\\n'``) with the numba kernels
    :func:`_plain_reader_kernels.parse_plain_lines` and, from the first line
    it leaves, :func:`_reader_kernels.parse_lines`, growing the output arrays when
    they are short (``base``: the smallest index, see :func:`iter_chunks`).
    Returns a _Result; the slow numbers are not converted
    and errors are not raised yet (see :func:`_check`).
    """
    arr = np.frombuffer(buf, np.uint8) if not isinstance(buf, np.ndarray) else buf
    o = _Out(end - start) if out is None else out
    o.indptr[0] = 0
    i, line, row, z, n_slow, n_text, err_pos, err_aux = start, 0, 0, 0, 0, 0, -1, 0
    while True:                         # the plain lines (most files: all of them)
        err, i, line, row, z = KP.parse_plain_lines(arr, i, end, line, row, z, o.labels, o.qid, o.rowline,
                                                    o.indptr, o.indices, o.values, base)
        if err == K.NEED_ROWS or err == K.NEED_NNZ:
            _grow(o, err, row, z, n_slow, n_text)
        else:
            break
    # from the first other line on: the full parser, without sorting until a row needs it
    parse = K.parse_lines_presorted if err == KP.NEED_FULL else None
    while parse is not None:
        (err, i, line, row, z, n_slow, n_text, err_pos, err_aux) = parse(
            arr, i, end, line, row, z, n_slow, n_text,
            o.labels, o.qid, o.rowline, o.indptr, o.indices, o.values, o.slow_slot, o.slow_text, base)
        if err == K.NEED_SORT:
            parse = K.parse_lines
        elif err in (K.NEED_ROWS, K.NEED_NNZ, K.NEED_SLOW):
            _grow(o, err, row, z, n_slow, n_text)
        else:
            parse = None
    r = _Result()
    r.buf, r.start, r.out = buf, start, o
    r.n_rows, r.nnz, r.n_lines, r.n_slow, r.n_text = row, z, line, n_slow, n_text
    r.err, r.err_pos, r.err_aux = err, err_pos, err_aux
    r.base = base
    return r


def _check(r, name, line_base):
    """Convert the slow numbers of a range (raising on an overflow) and raise
    the range's parse error, if any. ``line_base``: lines before the range."""
    o = r.out
    if r.n_slow:
        toks = o.slow_text[:r.n_text].tobytes().split()
        vals = np.array([float(t) for t in toks], np.float64)
        bad = ~np.isfinite(vals)
        if bad.any():
            k = int(np.argmax(bad))
            slot = int(o.slow_slot[k])
            if slot < 0:
                row = -slot - 1
                what = f"label {_show(toks[k])}"
            else:
                row = int(np.searchsorted(o.indptr[:r.n_rows + 1], slot, "right")) - 1
                what = f"value {_show(toks[k])}"
            raise InputFormatError(name, line_base + int(o.rowline[row]) + 1,
                                   f"{what} is out of range (overflows to infinity)")
        slots = o.slow_slot[:r.n_slow]
        is_value = slots >= 0
        o.values[slots[is_value]] = vals[is_value]
        o.labels[-slots[~is_value] - 1] = vals[~is_value]
    if r.err == K.E_INTERNAL:  # pragma: no cover - a bug in the block splitting
        raise RuntimeError("reader: a parse range does not end with a newline")
    if r.err:
        line = line_base + r.buf.count(b"\n", r.start, r.err_pos) + 1
        raise InputFormatError(name, line, _problem(r.err, r.buf, r.err_pos, r.err_aux, r.base))


def _chunks(r, line_base, chunk_rows):
    """The rows of a checked range as Chunks of at most chunk_rows rows."""
    o, n = r.out, r.n_rows
    if n == 0:
        return []
    if n <= chunk_rows:
        # Views: the unused tail of the arrays was never written, so it
        # takes address space but no memory.
        return [Chunk(labels=o.labels[:n], indptr=o.indptr[:n + 1], indices=o.indices[:r.nnz],
                      values=o.values[:r.nnz], qid=o.qid[:n],
                      first_line=line_base + int(o.rowline[0]) + 1)]
    chunks = []
    for r0 in range(0, n, chunk_rows):
        r1 = min(n, r0 + chunk_rows)
        z0 = int(o.indptr[r0])
        z1 = int(o.indptr[r1])
        chunks.append(Chunk(
            labels=o.labels[r0:r1].copy(), indptr=o.indptr[r0:r1 + 1] - z0,
            indices=o.indices[z0:z1].copy(), values=o.values[z0:z1].copy(),
            qid=o.qid[r0:r1].copy(), first_line=line_base + int(o.rowline[r0]) + 1))
    return chunks


def _default_threads():
    try:
        from numba import config
        return max(1, int(config.NUMBA_NUM_THREADS))
    except Exception:  # pragma: no cover
        return os.cpu_count() or 1


def _read_reporter(progress, raw):
    """_blocks' ``on_read``: passes ``progress`` the bytes ``raw`` consumed since its last call, if any."""
    reported = [0]

    def on_read():
        if progress is not None and raw is not None:
            n = raw.consumed - reported[0]
            if n:
                reported[0] = raw.consumed
                progress(n)
    return on_read


def _out_supplier(outs):
    """``out_for(n)``: reused arrays from ``outs`` large enough for n bytes, else fresh; None without outs."""
    def out_for(n):
        if outs is None:
            return None             # parse_range allocates fresh arrays
        while outs:
            o = outs.pop()
            if len(o.labels) >= n // 128 + 16 and len(o.indices) >= n // 8 + 16:
                return o
        return _Out(n)
    return out_for


def _iter_results(f, raw, name, chunk_bytes, progress, threads, outs=None, base=1):
    """Parse the stream ``f``; yield (checked _Result, line_base) per range,
    in file order. With ``outs`` (a list), each range's output arrays are
    taken from it when it has some, and the caller puts ``r.out`` back when
    done with the result."""
    chunk_bytes = DEFAULT_CHUNK_BYTES if chunk_bytes is None else int(chunk_bytes)
    if chunk_bytes < 1:
        raise ValueError("chunk_bytes must be positive")
    threads = _default_threads() if threads is None else max(1, int(threads))
    on_read = _read_reporter(progress, raw)
    out_for = _out_supplier(outs)
    pool = None
    pending = deque()          # (buffer, _Result or Future), in file order
    limit = 2 * threads        # ranges in flight
    free = []                  # block buffers to reuse
    line_base = 0
    try:
        for buf, n in _blocks(f, name, chunk_bytes, on_read, free):
            ranges = _ranges(buf, n, threads)
            if threads > 1 and len(ranges) > 1:
                if pool is None:
                    from concurrent.futures import ThreadPoolExecutor
                    pool = ThreadPoolExecutor(threads, thread_name_prefix="svmtrain-reader")
                for s, e in ranges:
                    pending.append((buf, pool.submit(parse_range, buf, s, e, out_for(e - s), base)))
            else:
                for s, e in ranges:
                    pending.append((buf, parse_range(buf, s, e, out_for(e - s), base)))
            while pending and (pool is None or len(pending) > limit):
                b, item = pending.popleft()
                r = item if isinstance(item, _Result) else item.result()
                _check(r, name, line_base)
                if not pending or pending[0][0] is not b:
                    free.append(b)      # no other range of this block left
                del item
                yield r, line_base
                line_base += r.n_lines
        while pending:
            b, item = pending.popleft()
            r = item if isinstance(item, _Result) else item.result()
            _check(r, name, line_base)
            del item
            yield r, line_base
            line_base += r.n_lines
    finally:
        if pool is not None:
            for _, item in pending:
                if not isinstance(item, _Result):
                    item.cancel()
            pool.shutdown(wait=True)


def _iter_stream(f, raw, name, chunk_rows, chunk_bytes, progress, threads, base=1):
    chunk_rows = DEFAULT_CHUNK_ROWS if chunk_rows is None else int(chunk_rows)
    if chunk_rows < 1:
        raise ValueError("chunk_rows must be positive")
    for r, line_base in _iter_results(f, raw, name, chunk_bytes, progress, threads, base=base):
        yield from _chunks(r, line_base, chunk_rows)


class _Collector:
    """Appends checked ranges into one set of growing arrays (grown in place
    with ``ndarray.resize``, i.e. realloc, which moves no data for large
    arrays); the result equals ``concat_chunks`` of the chunks, without
    holding every chunk and the joined copy at the same time."""

    def __init__(self, size_hint):
        # Guesses from the file size; the untouched part of an over-estimate
        # costs address space only, and the result is trimmed at the end.
        rows = min(max(1024, size_hint // 256), 1 << 24)
        nnz = min(max(4096, size_hint // 10), 1 << 27)
        self.labels = np.empty(rows, np.float64)
        self.qid = np.empty(rows, np.int64)
        self.indptr = np.zeros(rows + 1, np.int64)
        self.indices = np.empty(nnz, np.int32)
        self.values = np.empty(nnz, np.float64)
        self.n = 0
        self.z = 0
        self.first_line = 1

    def add(self, r, line_base):
        o, m, k = r.out, r.n_rows, r.nnz
        if m == 0:
            return
        if self.n == 0:
            self.first_line = line_base + int(o.rowline[0]) + 1
        n, z = self.n, self.z
        if n + m > len(self.labels):
            cap = max(2 * len(self.labels), n + m)
            self.labels.resize(cap, refcheck=False)
            self.qid.resize(cap, refcheck=False)
            self.indptr.resize(cap + 1, refcheck=False)
        if z + k > len(self.indices):
            cap = max(2 * len(self.indices), z + k)
            self.indices.resize(cap, refcheck=False)
            self.values.resize(cap, refcheck=False)
        self.labels[n:n + m] = o.labels[:m]
        self.qid[n:n + m] = o.qid[:m]
        np.add(o.indptr[1:m + 1], z, out=self.indptr[n + 1:n + m + 1])
        self.indices[z:z + k] = o.indices[:k]
        self.values[z:z + k] = o.values[:k]
        self.n, self.z = n + m, z + k

    def chunk(self):
        n, z = self.n, self.z
        for a, size in ((self.labels, n), (self.qid, n), (self.indptr, n + 1),
                        (self.indices, z), (self.values, z)):
            a.resize(size, refcheck=False)
        c = Chunk(self.labels, self.indptr, self.indices, self.values, self.qid, self.first_line)
        self.labels = self.qid = self.indptr = self.indices = self.values = None
        return c


def _collect(f, raw, name, chunk_bytes, progress, threads, size_hint, base=1):
    coll = _Collector(size_hint)
    outs = []
    results = _iter_results(f, raw, name, chunk_bytes, progress, threads, outs, base)
    try:
        for r, line_base in results:
            coll.add(r, line_base)
            outs.append(r.out)
    finally:
        results.close()
    return coll.chunk()


def _size_hint(raw):
    """Size of a plain regular file behind ``raw`` (0 when unknown)."""
    try:
        st = os.fstat(raw._f.fileno())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return 0
    import stat
    return st.st_size if stat.S_ISREG(st.st_mode) else 0


def iter_chunks(path, chunk_rows=None, chunk_bytes=None, progress=None, threads=None, index_base=1):
    """Iterate over the file as Chunks of at most ``chunk_rows`` rows
    (default 2^20) and about ``chunk_bytes`` bytes of text (default 8 MiB).

    ``threads`` bounds the threads parsing in parallel (default: numba's
    NUMBA_NUM_THREADS). ``progress(n)`` is called with bytes consumed from
    the underlying source (compressed bytes for compressed files).
    ``index_base``: the smallest feature index, 1 (column c holds file
    index c + 1) or 0 (column c holds file index c: LIBSVM's precomputed
    kernels, ``0:ID`` then the kernel values).
    The file is opened when the iteration starts.
    """
    f, raw = _open(path)
    try:
        yield from _iter_stream(f, raw, display_name(path), chunk_rows, chunk_bytes,
                                progress, threads, _base(index_base))
    finally:
        f.close()


def _base(index_base):
    if index_base not in (0, 1):
        raise ValueError("index_base must be 0 or 1")
    return int(index_base)


def read_libsvm(path, chunk_rows=None, chunk_bytes=None, progress=None, threads=None, index_base=1):
    """The whole file as one Chunk: the same arrays as
    ``concat_chunks(iter_chunks(path, ...))``, assembled with less memory
    (``chunk_rows`` does not matter here)."""
    f, raw = _open(path)
    try:
        hint = _size_hint(raw) if f is raw else 0
        return _collect(f, raw, display_name(path), chunk_bytes, progress, threads, hint, _base(index_base))
    finally:
        f.close()


def parse_bytes(data, name="<bytes>", chunk_rows=None, chunk_bytes=None, threads=None, index_base=1):
    """Parse LIBSVM text given as bytes (already decompressed) into one Chunk."""
    return _collect(io.BytesIO(data), None, name, chunk_bytes, None, threads, len(data), _base(index_base))
