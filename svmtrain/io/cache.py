"""Binary cache of a parsed training file (``svm-train --cache``).

The first run parses the text and writes the CSR arrays of the resulting
:class:`svmtrain.data.dataset.Chunk` to a cache file; later runs load that file
(read or memory-mapped) instead of parsing. A cache records the source it was built
from (resolved path, size, ``mtime_ns``) and the svmtrain version; when any
of them differs the cache is *stale*. A cache that fails any check of its
own bytes (magic, format version, header checksum, length, checksums of the
arrays, zero padding, CSR invariants) is *damaged*. Both are reported as one
line through ``log`` and rebuilt.

File layout (all integers little-endian; arrays little-endian)::

    offset  size
    0       8    magic b"SVMCACHE"
    8       4    u32 format version (FORMAT_VERSION)
    12      4    u32 header length H (a multiple of ALIGN; the arrays start there)
    16      4    u32 CRC-32 of bytes [0, H) with this field read as zero
    20      4    u32 checksum block size B
    24      8    i64 source size in bytes   (-1: standard input)
    32      8    i64 source st_mtime_ns     (-1: standard input)
    40      8    i64 rows
    48      8    i64 nonzeros
    56      8    i64 first_line
    64      8    i64 total file length
    72      80   5 x (i64 offset, i64 length in bytes) of labels <f8,
                 indptr <i8, indices <i4, values <f8, qid <i8
    152     4    u32 length P of the source path (UTF-8, surrogateescape)
    156     4    u32 length V of the svmtrain version string
    160     4    u32 number K of array checksum blocks
    164     P+V  source path, svmtrain version
    ...     4K   u32 CRC-32 of each block (array by array, B bytes at a
                 time, the last block of an array possibly shorter)
    ...          zeros up to H
    H ...        each array at an offset that is a multiple of ALIGN
                 (4096), zero bytes between arrays

Checksums: CRC-32 (``zlib.crc32``) per block of ``B`` = 4 MiB, computed on a
small thread pool (``zlib.crc32`` releases the GIL), so verifying a cache
runs at several GB/s, a small fraction of parsing the text. Every byte of
the file is covered: the header by its CRC, the arrays by the block CRCs,
the padding by a check that it is zero, the length by the header.

Loading: by default the arrays are read (``os.preadv``, block by block on
the same thread pool, each block checked as it arrives) into fresh NumPy
arrays; with ``mmap_arrays=True`` they are mapped with ``mmap.ACCESS_COPY``
(a private, copy-on-write mapping: plain writable ``numpy.ndarray`` objects
backed by the page cache; nothing a solver writes reaches the file). The
mapping loads faster and shares memory with the page cache, but solvers may
train markedly slower on it; see :data:`MMAP_DEFAULT`.

The cache is written with :func:`svmtrain.io.atomic.atomic_write` (temporary
file beside it, fsync, rename): a reader sees the old cache or the new one,
never a mix. A file at the cache path that does not look like a cache at all
(its first bytes are not close to the magic) is never overwritten.

Public API: :func:`load_or_build`, :func:`default_cache_path`,
:func:`write_cache`, :func:`read_cache` (and :func:`svmtrain.io.atomic.remove_stale_temps`); for the
streamed path (``svmtrain.io.spool``, ``svmtrain.io.block_reader``):
:func:`read_layout`, :func:`header_bytes`, :func:`probe_cache`,
:func:`store_cache`.
"""
import mmap
import os
import stat
import struct
import zlib

import numpy as np

from ..data.dataset import Chunk
from ..errors import ParameterError
from .atomic import atomic_write, remove_stale_temps, same_file

MAGIC = b"SVMCACHE"
FORMAT_VERSION = 1
ALIGN = 4096
BLOCK = 4 << 20
SUFFIX = ".svmcache"
STDIN_ID = "<stdin>"
# Read the arrays into the process's memory (False) or map them (True). Reading
# costs one copy from the page cache and fresh memory for the process (0.7 s to
# 3.5 s for 744 MB on a busy 2-core VM; mapping 0.3-0.5 s), but its speed does
# not depend on the page cache: NumPy asks for transparent huge pages for its
# arrays, while a mapping gets whatever pages the kernel holds the file in; on
# 4 KiB pages -s pegasos ran 27% and -s dcd 45% slower per pass over 60 M
# nonzeros (scripts/bench_cache.py --compare-mmap), more than the load saves
# once training takes more than a few passes.
MMAP_DEFAULT = False

_PREFIX = struct.Struct("<8sII")                 # magic, version, header length
_FIXED = struct.Struct("<8sIIII" + "q" * 6 + "qq" * 5 + "III")
_CRC_AT = 16                                     # offset of the header CRC field
_MAX_HEADER = 1 << 24
# (field name, little-endian dtype) in file order
ARRAYS = (("labels", "<f8"), ("indptr", "<i8"), ("indices", "<i4"),
          ("values", "<f8"), ("qid", "<i8"))
_NATIVE = {"<f8": np.float64, "<i8": np.int64, "<i4": np.int32}


class CacheInvalid(Exception):
    """The cache cannot be used. ``kind`` is "stale", "damaged" or "version"."""

    def __init__(self, kind, reason):
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


class NotACache(Exception):
    """A file exists at the cache path and is not an svmtrain cache."""


# ---------------------------------------------------------------- identity

def source_identity(train_path):
    """(resolved path, size, mtime_ns) of the training source; stdin: (STDIN_ID, -1, -1).

    Raises OSError when the source cannot be stat'ed.
    """
    if train_path == "-":
        return STDIN_ID, -1, -1
    st = os.stat(train_path)
    return os.path.realpath(train_path), int(st.st_size), int(st.st_mtime_ns)


def _version():
    try:
        from .._version import __version__
        return str(__version__)
    except Exception:  # pragma: no cover
        return "unknown"


def default_cache_path(train_path):
    """TRAIN + '.svmcache' beside it, or in the current directory when its
    directory is not writable. Raises ParameterError for standard input."""
    if train_path == "-":
        raise ParameterError("--cache needs a PATH when TRAIN_FILE is standard input "
                             "(write --cache=PATH)")
    train_path = os.fspath(train_path)
    beside = train_path + SUFFIX
    directory = os.path.dirname(os.path.abspath(beside))
    if os.access(directory, os.W_OK | os.X_OK):
        return beside
    return os.path.basename(train_path.rstrip("/")) + SUFFIX


# ---------------------------------------------------------------- checksums

def _block_tasks(views):
    """[(array number, start, end)] for every checksum block of ``views``."""
    tasks = []
    for k, v in enumerate(views):
        n = len(v)
        for s in range(0, n, BLOCK):
            tasks.append((k, s, min(n, s + BLOCK)))
    return tasks


def _threads():
    try:
        return max(1, min(8, len(os.sched_getaffinity(0))))
    except (AttributeError, OSError):  # pragma: no cover
        return max(1, min(8, os.cpu_count() or 1))


def block_crcs(views):
    """CRC-32 of each block of the byte views (see :func:`_block_tasks`),
    computed in parallel threads."""
    tasks = _block_tasks(views)
    if len(tasks) <= 1 or _threads() == 1:
        return [zlib.crc32(views[k][s:e]) for k, s, e in tasks]
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(_threads(), thread_name_prefix="svmtrain-cache") as pool:
        return list(pool.map(lambda t: zlib.crc32(views[t[0]][t[1]:t[2]]), tasks))


def _byte_view(a):
    return memoryview(np.ascontiguousarray(a)).cast("B")


# ---------------------------------------------------------------- writing

def _align(n):
    return -(-n // ALIGN) * ALIGN


def _layout(lengths, header_len):
    """(offsets, total length) of arrays of ``lengths`` bytes after the header."""
    offsets = []
    pos = header_len
    for n in lengths:
        offsets.append(pos)
        pos = _align(pos + n)
    return offsets, (offsets[-1] + lengths[-1] if lengths else pos)


def _header(chunk, identity, lengths, crcs):
    return header_bytes(chunk.n_rows, int(chunk.indptr[-1]), int(chunk.first_line),
                        identity, lengths, crcs)


def header_bytes(n_rows, nnz, first_line, identity, lengths, crcs):
    """(header bytes, array offsets, total file length) of a cache holding
    arrays of ``lengths`` bytes (in ARRAYS order) with block ``crcs``."""
    path, size, mtime = identity
    path_b = path.encode("utf-8", "surrogateescape")
    ver_b = _version().encode("utf-8")
    var = path_b + ver_b + np.asarray(crcs, "<u4").tobytes()
    header_len = _align(_FIXED.size + len(var))
    offsets, total = _layout(lengths, header_len)
    spans = []
    for off, n in zip(offsets, lengths):
        spans += [off, n]
    fixed = _FIXED.pack(MAGIC, FORMAT_VERSION, header_len, 0, BLOCK,
                        size, mtime, n_rows, nnz, first_line,
                        total, *spans, len(path_b), len(ver_b), len(crcs))
    head = bytearray(header_len)
    head[:len(fixed)] = fixed
    head[len(fixed):len(fixed) + len(var)] = var
    struct.pack_into("<I", head, _CRC_AT, zlib.crc32(head))
    return head, offsets, total


def _arrays_of(chunk):
    out = []
    for name, dt in ARRAYS:
        a = np.ascontiguousarray(getattr(chunk, name), dtype=dt)
        out.append(a)
    return out


def write_cache(chunk, cache_path, identity):
    """Write ``chunk`` to ``cache_path`` atomically, recording ``identity``
    (see :func:`source_identity`). Raises OSError."""
    arrays = _arrays_of(chunk)
    views = [_byte_view(a) for a in arrays]
    lengths = [len(v) for v in views]
    crcs = block_crcs(views)
    head, offsets, total = _header(chunk, identity, lengths, crcs)
    remove_stale_temps(cache_path)
    with atomic_write(cache_path, "wb") as f:
        f.write(head)
        pos = len(head)
        for off, v in zip(offsets, views):
            if off > pos:
                f.write(bytes(off - pos))
            f.write(v)
            pos = off + len(v)
        assert pos == total


# ---------------------------------------------------------------- reading

def _looks_like_cache(prefix):
    """True when ``prefix`` (the first bytes of a file) is empty or close to
    the magic (at most 2 of its 8 bytes differ): a damaged cache, not a
    file of the user's."""
    k = min(len(prefix), len(MAGIC))
    if k == 0:
        return True
    diff = sum(a != b for a, b in zip(prefix[:k], MAGIC[:k]))
    return diff <= min(2, k // 2) if k >= 4 else diff == 0


def _damaged(reason):
    return CacheInvalid("damaged", reason)


class CacheLayout:
    """What a cache's header says: sizes, where each array lies, its block CRCs."""
    __slots__ = ("n_rows", "nnz", "first_line", "offsets", "lengths", "crcs", "total")

    def __init__(self, n_rows, nnz, first_line, offsets, lengths, crcs, total):
        self.n_rows, self.nnz, self.first_line = int(n_rows), int(nnz), int(first_line)
        self.offsets, self.lengths, self.crcs, self.total = offsets, lengths, crcs, total

    def span(self, name):
        """(file offset, byte length) of the array ``name`` (see ARRAYS)."""
        k = [a for a, _ in ARRAYS].index(name)
        return self.offsets[k], self.lengths[k]


def read_layout(f, cache_path, identity=None):
    """Check the header of the open cache ``f`` (and, with ``identity``, that
    it is not stale); return its :class:`CacheLayout`. Checks everything but
    the array bytes. Raises NotACache, CacheInvalid, OSError as read_cache."""
    st = os.fstat(f.fileno())
    if not stat.S_ISREG(st.st_mode):
        raise NotACache(f"{cache_path} is not a regular file")
    size = st.st_size
    f.seek(0)
    first = f.read(_FIXED.size)
    if not _looks_like_cache(first):
        raise NotACache(f"{cache_path} is not an svmtrain cache")
    if len(first) < _PREFIX.size:
        raise _damaged("truncated")
    magic, version, header_len = _PREFIX.unpack_from(first)
    if magic != MAGIC:
        raise _damaged("bad magic")
    if version != FORMAT_VERSION:
        raise CacheInvalid("version", f"format version {version}, expected {FORMAT_VERSION}")
    if len(first) < _FIXED.size:
        raise _damaged("truncated")
    if header_len % ALIGN or not _FIXED.size <= header_len <= _MAX_HEADER:
        raise _damaged("bad header length")
    if size < header_len:
        raise _damaged("truncated")
    head = bytearray(first + f.read(header_len - len(first)))
    if len(head) != header_len:
        raise _damaged("truncated")
    (crc,) = struct.unpack_from("<I", head, _CRC_AT)
    struct.pack_into("<I", head, _CRC_AT, 0)
    if zlib.crc32(head) != crc:
        raise _damaged("header checksum mismatch")
    fields = _FIXED.unpack_from(head)
    (_, _, _, _, block, src_size, src_mtime, n_rows, nnz, first_line, total) = fields[:11]
    spans = fields[11:21]
    path_len, ver_len, n_crcs = fields[21:24]
    pos = _FIXED.size
    src_path = bytes(head[pos:pos + path_len]).decode("utf-8", "surrogateescape")
    pos += path_len
    ver = bytes(head[pos:pos + ver_len]).decode("utf-8", "replace")
    pos += ver_len
    crcs = np.frombuffer(bytes(head[pos:pos + 4 * n_crcs]), "<u4").tolist()
    if block != BLOCK:
        raise _damaged("unexpected checksum block size")
    if size < total:
        raise _damaged(f"truncated ({size} bytes, expected {total})")
    if size > total:
        raise _damaged(f"{size - total} unexpected bytes at the end")
    if identity is not None:
        if src_path != identity[0]:
            raise CacheInvalid("stale", f"built from {src_path}")
        if (src_size, src_mtime) != tuple(identity[1:]):
            raise CacheInvalid("stale", "the training file changed")
        if ver != _version():
            raise CacheInvalid("stale", f"written by svmtrain {ver}")
    offsets, lengths = _check_layout(header_len, total, n_rows, nnz, spans, n_crcs)
    return CacheLayout(n_rows, nnz, first_line, offsets, lengths, crcs, total)


def read_cache(cache_path, identity=None, mmap_arrays=None):
    """The Chunk stored in the cache at ``cache_path``.

    ``identity`` (see :func:`source_identity`), when given, must match the
    recorded source, else CacheInvalid("stale"). The arrays are read into
    memory of the process, or, with ``mmap_arrays``, mapped from the file
    (default :data:`MMAP_DEFAULT`). Every byte is checked either way. Raises
    FileNotFoundError when there is no file, NotACache when the file is not
    a cache, CacheInvalid when it is damaged, stale, or of another format
    version, and OSError when it cannot be read.
    """
    with open(cache_path, "rb") as f:
        lay = read_layout(f, cache_path, identity)
        if MMAP_DEFAULT if mmap_arrays is None else mmap_arrays:
            arrays = _map_arrays(f, lay.offsets, lay.lengths, lay.crcs)
        else:
            arrays = _read_arrays(f, lay.offsets, lay.lengths, lay.crcs)
    ip = arrays["indptr"]
    if ip[0] != 0 or ip[-1] != lay.nnz or (lay.n_rows and np.any(ip[1:] < ip[:-1])):
        raise _damaged("inconsistent row pointers")
    return Chunk(first_line=lay.first_line, **arrays)


def _check_layout(header_len, total, n_rows, nnz, spans, n_crcs):
    """(offsets, lengths) of the arrays, checked against the header."""
    if n_rows < 0 or nnz < 0:
        raise _damaged("negative sizes")
    want = (n_rows * 8, (n_rows + 1) * 8, nnz * 4, nnz * 8, n_rows * 8)
    offsets = list(spans[0::2])
    lengths = list(spans[1::2])
    if tuple(lengths) != want:
        raise _damaged("array lengths disagree with the header")
    expect, expect_total = _layout(lengths, header_len)
    if offsets != expect or expect_total != total:
        raise _damaged("array offsets disagree with the header")
    if sum(-(-n // BLOCK) for n in lengths) != n_crcs:
        raise _damaged("checksum table has the wrong size")
    return offsets, lengths


def _gaps(offsets, lengths):
    """(start, end) of the zero padding after each array but the last."""
    return [(o + n, nxt) for o, n, nxt in zip(offsets, lengths, offsets[1:]) if nxt > o + n]


def _compare(got, crcs):
    if got != crcs:
        bad = next(i for i, (a, b) in enumerate(zip(got, crcs)) if a != b)
        raise _damaged(f"checksum mismatch in block {bad}")


def _native(a, dt):
    if np.dtype(dt) != np.dtype(_NATIVE[dt]):   # a big-endian host
        return a.astype(_NATIVE[dt])
    return a


def _read_arrays(f, offsets, lengths, crcs):
    """Read the arrays into fresh NumPy arrays (the process's own memory),
    block by block on a thread pool, checking each block's CRC."""
    fd = f.fileno()
    for a, b in _gaps(offsets, lengths):
        if os.pread(fd, b - a, a).count(0) != b - a:
            raise _damaged("nonzero padding")
    arrays = [np.empty(n // np.dtype(dt).itemsize, np.dtype(dt)) for (_, dt), n in zip(ARRAYS, lengths)]
    views = [memoryview(a).cast("B") for a in arrays]

    def work(task):
        k, s, e = task
        v = views[k][s:e]
        pos = 0
        while pos < e - s:
            if hasattr(os, "preadv"):
                got = os.preadv(fd, [v[pos:]], offsets[k] + s + pos)
            else:  # pragma: no cover -- not Linux
                data = os.pread(fd, e - s - pos, offsets[k] + s + pos)
                v[pos:pos + len(data)] = data
                got = len(data)
            if got <= 0:
                raise _damaged("truncated")
            pos += got
        return zlib.crc32(v)

    tasks = _block_tasks(views)
    if len(tasks) > 1 and _threads() > 1:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(_threads(), thread_name_prefix="svmtrain-cache") as pool:
            got = list(pool.map(work, tasks))
    else:
        got = [work(t) for t in tasks]
    _compare(got, crcs)
    del views
    return {name: _native(a, dt) for (name, dt), a in zip(ARRAYS, arrays)}


def _map_arrays(f, offsets, lengths, crcs):
    """Map the arrays copy-on-write from the file and check every block."""
    mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    if hasattr(mm, "madvise") and hasattr(mmap, "MADV_WILLNEED"):
        try:
            mm.madvise(mmap.MADV_WILLNEED)
        except OSError:  # pragma: no cover
            pass
    buf = memoryview(mm)
    for a, b in _gaps(offsets, lengths):
        if bytes(buf[a:b]).count(0) != b - a:
            raise _damaged("nonzero padding")
    views = [buf[o:o + n] for o, n in zip(offsets, lengths)]
    _compare(block_crcs(views), crcs)
    del views, buf
    out = {}
    for (name, dt), o, n in zip(ARRAYS, offsets, lengths):
        a = np.frombuffer(mm, dtype=np.dtype(dt), count=n // np.dtype(dt).itemsize, offset=o)
        out[name] = _native(a, dt)
    return out


# ---------------------------------------------------------------- load or build

def load_or_build(train_path, cache_path, read_fn, log=None, mmap_arrays=None):
    """The training data of ``train_path``, from the cache when it is valid.

    ``read_fn(train_path) -> Chunk`` parses the source. A cache that is
    missing is built; one that is stale or damaged is reported through
    ``log(message)`` (one line, no program name) and rebuilt. A cache that
    cannot be written is reported the same way and the parsed data is
    returned anyway. Raises ParameterError when ``cache_path`` is the
    training file itself or an existing file that is not a cache, and
    whatever ``read_fn`` raises.

    When ``train_path`` is ``"-"`` (standard input), a valid cache built
    from standard input is used and standard input is not read (as
    Vowpal Wabbit does); ``log`` says so. ``mmap_arrays``: see
    :func:`read_cache`.
    """
    say = log if log is not None else (lambda s: None)
    cache_path = os.fspath(cache_path)
    identity, data = probe_cache(train_path, cache_path, say,
                                 lambda path, ident: read_cache(path, ident, mmap_arrays))
    if data is not None:
        return data
    data = read_fn(train_path)
    store_cache(train_path, cache_path, identity, say,
                lambda: write_cache(data, cache_path, identity))
    return data


def probe_cache(train_path, cache_path, say, open_fn):
    """(identity of the source, ``open_fn(cache_path, identity)`` or None).

    None when there is no usable cache: missing, or stale / damaged / of
    another format (reported through ``say``). ``open_fn`` raises as
    :func:`read_cache` does. Raises ParameterError when ``cache_path`` is
    the training file or a file that is not a cache. The identity is None
    when the source cannot be stat'ed.
    """
    if train_path != "-" and same_file(train_path, cache_path):
        raise ParameterError(f"the cache {cache_path} is the training file itself")
    try:
        identity = source_identity(train_path)
    except OSError:
        identity = None        # the reader reports the missing source with its own message
    if identity is not None:
        try:
            data = open_fn(cache_path, identity)
        except FileNotFoundError:
            pass
        except NotACache:
            raise ParameterError(f"{cache_path} exists and is not an svmtrain cache; refusing to "
                                 f"overwrite it (remove it or give another --cache PATH)") from None
        except CacheInvalid as e:
            if e.kind == "stale":
                say(f"cache {cache_path} is stale ({e.reason}); rebuilding")
            elif e.kind == "version":
                say(f"cache {cache_path} has another format ({e.reason}); rebuilding")
            else:
                say(f"cache {cache_path} is damaged ({e.reason}); rebuilding")
        except OSError as e:
            say(f"cannot read cache {cache_path}: {e.strerror or e}; rebuilding")
        else:
            if train_path == "-":
                say(f"using cache {cache_path} built from standard input; standard input is not read")
            return identity, data
    elif os.path.lexists(cache_path) and not _is_cache_file(cache_path):
        raise ParameterError(f"{cache_path} exists and is not an svmtrain cache; refusing to "
                             f"overwrite it (remove it or give another --cache PATH)")
    return identity, None


def store_cache(train_path, cache_path, identity, say, write_fn):
    """Call ``write_fn()`` to write the cache of data just parsed from
    ``train_path``, unless the source changed while it was read (compared
    with ``identity`` from :func:`probe_cache`). A write that fails costs one
    line through ``say``. Returns True when the cache was written."""
    try:
        after = source_identity(train_path)
    except OSError:
        after = None
    if identity is None or after != identity:
        say(f"the training file changed while it was read; cache {cache_path} not written")
        return False
    try:
        write_fn()
    except OSError as e:
        where = f"{e.filename}: " if getattr(e, "filename", None) and e.filename != cache_path else ""
        reason = os.strerror(e.errno) if e.errno else (e.strerror or str(e))
        say(f"cannot write cache {cache_path}: {where}{reason}; continuing without it")
        return False
    return True


def _is_cache_file(path):
    try:
        with open(path, "rb") as f:
            return _looks_like_cache(f.read(len(MAGIC)))
    except OSError:
        return True   # unreadable: the write will fail with its own message
