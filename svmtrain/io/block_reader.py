"""Row blocks read from a binary cache or a spool, in bounded memory.

The arrays of a parsed training set lie in files: the five arrays of a
cache file (:mod:`svmtrain.io.cache`) or the five files of a spool
(:mod:`svmtrain.io.spool`). :class:`ArrayFiles` says where each one lies;
:func:`block_bounds` cuts the rows into blocks of at most a given number of
bytes (reading the row pointers piece by piece); :class:`FileBlockSource`
is the chunk source (see :mod:`svmtrain.data.chunk_source`) that reads a pass
block by block with ``os.preadv`` into two reused sets of buffers; blocks
of 8 MiB or more are read ahead on a helper thread while the solver works
on the previous one. Memory: two blocks, whatever the size of the data; file pages live in
the kernel's page cache, not in this process.

:func:`open_cache_streamed` checks an existing cache in bounded memory
(every block CRC, the padding, the row pointers) and gathers what training
needs before its first pass: the labels, the number of features, the first
value too large to train on.
"""
import os
import zlib
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..data._dataset_kernels import first_too_large
from ..data.dataset import Chunk
from .cache import ARRAYS, BLOCK, CacheInvalid, _gaps, read_layout

_ITEM = {name: np.dtype(dt).itemsize for name, dt in ARRAYS}
_DTYPE = {name: np.dtype(dt) for name, dt in ARRAYS}
# bytes a block costs per row (labels, indptr) and per nonzero (indices, values)
ROW_BYTES = 16
NNZ_BYTES = 12
_PIECE_ROWS = 1 << 18
# Blocks are read ahead on a helper thread only when they are at least this
# large: handing a block to a thread costs about a millisecond on a busy
# machine (waking it, the GIL), more than reading a small block from the
# page cache takes.
PREFETCH_FROM = 8 << 20


def _pread_into(fd, view, offset):
    """Fill the byte view from fd at offset; OSError(EIO) when the file is short."""
    pos, n = 0, len(view)
    while pos < n:
        got = os.preadv(fd, [view[pos:]], offset + pos)
        if got <= 0:
            raise OSError(5, "unexpected end of file while reading a data block")
        pos += got


class ArrayFiles:
    """Where the arrays of a parsed training set lie: ``spans[name] = (fd, byte offset)``."""

    def __init__(self, spans, n_rows, nnz, first_line=1, close=None):
        self.spans = dict(spans)
        self.n_rows = int(n_rows)
        self.nnz = int(nnz)
        self.first_line = int(first_line)
        self._close = close

    def read(self, name, start, out):
        """Read items ``start:start + len(out)`` of array ``name`` into ``out``."""
        fd, base = self.spans[name]
        if len(out):
            _pread_into(fd, memoryview(out).cast("B"), base + start * _ITEM[name])
        return out

    def close(self):
        if self._close is not None:
            self._close()
            self._close = None


def block_bounds(files, block_bytes, max_rows=None):
    """Cut the rows of ``files`` into consecutive blocks of at most
    ``block_bytes`` bytes (ROW_BYTES per row + NNZ_BYTES per nonzero; a
    single row larger than that is a block of its own) and at most
    ``max_rows`` rows. Returns (bounds int64[n_blocks + 1], nnz at each
    bound int64[n_blocks + 1], longest row in nonzeros)."""
    n = files.n_rows
    block_bytes = max(int(block_bytes), 1)
    bounds, ip_at = [0], [0]
    r0, start_cost, longest = 0, 0, 0
    for s in range(0, n, _PIECE_ROWS):
        e = min(n, s + _PIECE_ROWS)
        ip = files.read("indptr", s, np.empty(e - s + 1, np.int64))
        longest = max(longest, int(np.max(ip[1:] - ip[:-1])))
        cost = ROW_BYTES * np.arange(s, e + 1, dtype=np.int64) + NNZ_BYTES * ip
        while r0 < e:
            cand = s + int(np.searchsorted(cost, start_cost + block_bytes, "right")) - 1
            cand = max(cand, r0 + 1)
            capped = max_rows is not None and cand >= r0 + max_rows
            if capped:
                cand = r0 + max_rows
            if cand >= n:
                break
            if cand >= e and not capped:
                break            # the block may extend into the next piece
            if cand > e:         # capped beyond this piece: read on
                break
            bounds.append(cand)
            ip_at.append(int(ip[cand - s]))
            r0, start_cost = cand, int(cost[cand - s])
    if bounds[-1] != n:
        bounds.append(n)
        ip_at.append(files.nnz)
    return np.array(bounds, np.int64), np.array(ip_at, np.int64), longest


class _Buffers:
    __slots__ = ("labels", "indptr", "indices", "values")

    def __init__(self, rows, nnz):
        self.labels = np.empty(rows, np.float64)
        self.indptr = np.empty(rows + 1, np.int64)
        self.indices = np.empty(nnz, np.int32)
        self.values = np.empty(nnz, np.float64)


class FileBlockSource:
    """Chunk source over :class:`ArrayFiles` cut at ``bounds`` (see
    :mod:`svmtrain.data.chunk_source`). ``ip_at``: the row pointer at each bound.
    Holds two blocks' worth of buffers (the largest block's size each)."""

    def __init__(self, files, bounds, ip_at, prefetch=None):
        self.files = files
        self.bounds = np.asarray(bounds, np.int64)
        self.ip_at = np.asarray(ip_at, np.int64)
        self.n_blocks = len(self.bounds) - 1
        self.n_rows = files.n_rows
        self.nnz = files.nnz
        rows = np.diff(self.bounds)
        nnz = np.diff(self.ip_at)
        self.max_block_rows = int(rows.max()) if len(rows) else 0
        self.max_block_nnz = int(nnz.max()) if len(nnz) else 0
        if prefetch is None:
            prefetch = self.buffer_bytes >= 2 * PREFETCH_FROM
        self._prefetch = prefetch
        self._bufs = None
        self._pool = None

    @property
    def buffer_bytes(self):
        """Memory of the two block buffers."""
        return 2 * (ROW_BYTES * self.max_block_rows + 8 + NNZ_BYTES * self.max_block_nnz)

    def _read(self, j, buf):
        r0, r1 = int(self.bounds[j]), int(self.bounds[j + 1])
        z0, z1 = int(self.ip_at[j]), int(self.ip_at[j + 1])
        m, k = r1 - r0, z1 - z0
        f = self.files
        labels = f.read("labels", r0, buf.labels[:m])
        indptr = f.read("indptr", r0, buf.indptr[:m + 1])
        if indptr[0] != z0 or indptr[m] != z1:
            raise OSError(5, "the data file changed while training (row pointers disagree)")
        indptr -= z0
        indices = f.read("indices", z0, buf.indices[:k])
        values = f.read("values", z0, buf.values[:k])
        qid = np.broadcast_to(np.zeros(1, np.int64), (m,))
        return Chunk(labels=labels, indptr=indptr, indices=indices, values=values, qid=qid,
                     first_line=f.first_line)

    def blocks(self, order=None):
        order = range(self.n_blocks) if order is None else [int(j) for j in order]
        if self._bufs is None:
            self._bufs = (_Buffers(self.max_block_rows, self.max_block_nnz),
                          _Buffers(self.max_block_rows, self.max_block_nnz))
        it = iter(order)
        j = next(it, None)
        if j is None:
            return
        if not self._prefetch:
            while j is not None:
                yield j, self._read(j, self._bufs[0])
                j = next(it, None)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="svmtrain-blocks")
        side = 0
        pending = self._pool.submit(self._read, j, self._bufs[side])
        try:
            while j is not None:
                chunk = pending.result()
                pending = None
                nxt = next(it, None)
                if nxt is not None:
                    pending = self._pool.submit(self._read, nxt, self._bufs[1 - side])
                yield j, chunk
                del chunk
                j, side = nxt, 1 - side
        finally:
            if pending is not None:
                pending.cancel()
                try:
                    pending.result()
                except BaseException:
                    pass

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self._bufs = None
        self.files.close()


# ---------------------------------------------------------------- an existing cache

class CacheScan:
    """What :func:`open_cache_streamed` found: the open ``files``, the
    ``labels`` (in memory), ``n_features`` (largest index + 1) and
    ``big_value`` (position of the first |value| > 1e150, or -1)."""

    def __init__(self, files, labels, n_features, big_value):
        self.files = files
        self.labels = labels
        self.n_features = n_features
        self.big_value = big_value


def open_cache_streamed(cache_path, identity=None):
    """Open the cache at ``cache_path`` for streamed training: check its
    header (and staleness against ``identity``), then every array block
    against its CRC, the padding and the row pointers, reading 4 MiB at a
    time. Returns a :class:`CacheScan` whose files stay open (close them).
    Raises as :func:`svmtrain.io.cache.read_cache`."""
    f = open(cache_path, "rb")
    try:
        lay = read_layout(f, cache_path, identity)
        fd = f.fileno()
        for a, b in _gaps(lay.offsets, lay.lengths):
            if os.pread(fd, b - a, a).count(0) != b - a:
                raise CacheInvalid("damaged", "nonzero padding")
        labels = np.empty(lay.n_rows, np.float64)
        scratch = np.empty(BLOCK, np.uint8)
        crc_at = 0
        n_features, big_value, last_ip = 0, -1, 0
        for (name, dt), off, length in zip(ARRAYS, lay.offsets, lay.lengths):
            item = np.dtype(dt).itemsize
            whole = memoryview(labels).cast("B") if name == "labels" else None
            for s in range(0, length, BLOCK):
                e = min(length, s + BLOCK)
                view = whole[s:e] if whole is not None else memoryview(scratch)[:e - s]
                _pread_into(fd, view, off + s)
                if zlib.crc32(view) != lay.crcs[crc_at]:
                    raise CacheInvalid("damaged", f"checksum mismatch in block {crc_at}")
                crc_at += 1
                a = np.frombuffer(view, dt)
                if name == "indptr":
                    if (s == 0 and a[0] != 0) or a[0] < last_ip or np.any(a[1:] < a[:-1]):
                        raise CacheInvalid("damaged", "inconsistent row pointers")
                    last_ip = int(a[-1])
                elif name == "indices" and len(a):
                    if int(a.min()) < 0:
                        raise CacheInvalid("damaged", "negative feature index")
                    n_features = max(n_features, int(a.max()) + 1)
                elif name == "values" and big_value < 0:
                    p = first_too_large(np.ascontiguousarray(a, np.float64))
                    if p >= 0:
                        big_value = s // item + p
        if last_ip != lay.nnz:
            raise CacheInvalid("damaged", "inconsistent row pointers")
        spans = {name: (fd, off) for (name, _), off in zip(ARRAYS, lay.offsets)}
        files = ArrayFiles(spans, lay.n_rows, lay.nnz, lay.first_line, close=f.close)
        return CacheScan(files, labels, n_features, big_value)
    except BaseException:
        f.close()
        raise


def row_of_nonzero(files, p):
    """The row holding nonzero number ``p`` (binary search over the row pointers on disk)."""
    lo, hi = 0, files.n_rows          # indptr[lo] <= p < indptr[hi]
    one = np.empty(1, np.int64)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if files.read("indptr", mid, one)[0] <= p:
            lo = mid
        else:
            hi = mid
    return lo
