"""Parsed rows spooled to disk chunk by chunk (the first pass of ``--stream``).

A :class:`Spool` appends each Chunk's arrays to five temporary files, one
per array of a binary cache (labels, indptr, indices, values, qid, in the
order and byte layout of :data:`svmtrain.io.cache.ARRAYS`), so that no more
than one chunk is ever held in memory. While it writes, it computes the
cache's CRC-32 of every 4 MiB block of each array. At the end the spool can
be

* read back block by block (:class:`svmtrain.io.block_reader.ArrayFiles`),
  and/or
* turned into a cache file in the format of :mod:`svmtrain.io.cache`
  (:meth:`Spool.write_cache`): header, then the spooled arrays copied in
  (``os.copy_file_range``, in the kernel, no copy through this process),
  atomically (temporary file, fsync, rename).

The spool files are named ``.STEM.XXXXXXXX.ARRAY.tmp`` in the given
directory (with STEM the cache's base name, so that
:func:`svmtrain.io.atomic.remove_stale_temps` removes those a killed run left
behind) and are removed by :meth:`Spool.remove`.
"""
import contextlib
import os
import tempfile
import zlib

import numpy as np

from .atomic import atomic_write
from .cache import ARRAYS, BLOCK, header_bytes

_COPY_STEP = 64 << 20


class _BlockCrc:
    """CRC-32 of each BLOCK-byte block of a byte stream fed piece by piece."""

    def __init__(self):
        self.crcs = []
        self._crc = 0
        self._fill = 0

    def update(self, view):
        pos, n = 0, len(view)
        while pos < n:
            take = min(BLOCK - self._fill, n - pos)
            self._crc = zlib.crc32(view[pos:pos + take], self._crc)
            self._fill += take
            pos += take
            if self._fill == BLOCK:
                self.crcs.append(self._crc)
                self._crc, self._fill = 0, 0

    def finish(self):
        if self._fill:
            self.crcs.append(self._crc)
            self._crc, self._fill = 0, 0
        return self.crcs


class Spool:
    """Append-only storage of parsed rows in five array files.

    ``append(chunk)`` adds the chunk's rows (its indptr is rebased onto the
    rows before it); ``n_rows``, ``nnz``, ``first_line`` and ``lengths``
    (bytes per array) describe what was written. ``crc`` False skips the
    checksums (a spool that will never become a cache).
    """

    def __init__(self, directory, stem, crc=True):
        self.directory = directory
        self.paths = []
        self._files = []
        self._crcs = [_BlockCrc() for _ in ARRAYS] if crc else None
        self.lengths = [0] * len(ARRAYS)
        self.n_rows = 0
        self.nnz = 0
        self.first_line = 1
        try:
            base = None
            for name, _ in ARRAYS:
                if base is None:
                    fd, path = tempfile.mkstemp(prefix=f".{stem}.", suffix=f".{name}.tmp", dir=directory)
                    base = path[:-len(f".{name}.tmp")]
                else:
                    path = f"{base}.{name}.tmp"
                    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
                self.paths.append(path)
                self._files.append(os.fdopen(fd, "w+b", buffering=0))
            self._write(1, np.zeros(1, "<i8"))
        except BaseException:
            self.remove()
            raise

    def _write(self, k, a):
        view = memoryview(np.ascontiguousarray(a, ARRAYS[k][1])).cast("B")
        done = 0
        while done < len(view):        # unbuffered: a raw write may be short
            got = self._files[k].write(view[done:])
            if not got:
                raise OSError(5, "cannot write: short write", None)
            done += got
        if self._crcs is not None:
            self._crcs[k].update(view)
        self.lengths[k] += len(view)

    def append(self, chunk):
        """Write the rows of ``chunk`` after those already spooled."""
        m = chunk.n_rows
        if m == 0:
            return
        if self.n_rows == 0:
            self.first_line = int(chunk.first_line)
        z = int(chunk.indptr[m])
        self._write(0, chunk.labels)
        self._write(1, chunk.indptr[1:m + 1] + (self.nnz - int(chunk.indptr[0])))
        self._write(2, chunk.indices[chunk.indptr[0]:z])
        self._write(3, chunk.values[chunk.indptr[0]:z])
        self._write(4, chunk.qid)
        self.n_rows += m
        self.nnz += z - int(chunk.indptr[0])

    def finish(self):
        """Returns [(fd, 0)] per array for reading back (the files are
        unbuffered: everything appended is already in the kernel's hands)."""
        return [(f.fileno(), 0) for f in self._files]

    def write_cache(self, cache_path, identity):
        """Write the spooled arrays as a cache file at ``cache_path``
        (atomically), recording ``identity``. Needs ``crc=True``. Raises OSError."""
        self.finish()
        crcs = [c for bc in self._crcs for c in list(bc.finish())]
        head, offsets, total = header_bytes(self.n_rows, self.nnz, self.first_line, identity,
                                            self.lengths, crcs)
        with atomic_write(cache_path, "wb") as out:
            out.write(head)
            out.flush()
            pos = len(head)
            for f, off, n in zip(self._files, offsets, self.lengths):
                if off > pos:
                    os.pwrite(out.fileno(), bytes(off - pos), pos)
                _copy(f.fileno(), out.fileno(), n, off)
                pos = off + n
            assert pos == total

    def remove(self):
        """Close and delete the spool files (errors ignored)."""
        for f in self._files:
            with contextlib.suppress(OSError):
                f.close()
        for p in self.paths:
            with contextlib.suppress(OSError):
                os.unlink(p)
        self._files, self.paths = [], []


def _copy(src, dst, n, dst_offset):
    """Copy ``n`` bytes from the start of fd ``src`` to fd ``dst`` at ``dst_offset``."""
    done = 0
    use_range = hasattr(os, "copy_file_range")
    while done < n:
        step = min(_COPY_STEP, n - done)
        got = 0
        if use_range:
            try:
                got = os.copy_file_range(src, dst, step, done, dst_offset + done)
            except OSError:
                use_range = False     # another file system, an old kernel: copy by hand
                continue
        else:
            data = os.pread(src, min(step, 4 << 20), done)
            got = os.pwrite(dst, data, dst_offset + done) if data else 0
        if got <= 0:
            raise OSError(5, "cannot write: short copy", None)
        done += got
