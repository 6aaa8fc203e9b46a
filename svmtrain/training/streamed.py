"""Out-of-core training (``svm-train --stream``, ``--memory-limit``).

The training file is never held whole. Pass 0 parses it chunk by chunk
(:func:`svmtrain.io.reader.iter_chunks`) and spools the parsed arrays to
disk (:mod:`svmtrain.io.spool`), keeping only the labels (8 bytes per row)
and a few counts; with ``--cache`` the spool becomes the binary cache (and
a valid cache skips pass 0 altogether: it is checked block by block). Every
later pass reads row blocks from that file with ``os.preadv``
(:class:`svmtrain.io.block_reader.FileBlockSource`), so the text is parsed
once whatever the number of passes.

:func:`plan_memory` divides ``--memory-limit`` between the solver's state
(O(d) weight vectors, O(n) per-row arrays, OCAS's cut buffer) and the
streamed data (two block buffers, the shuffle buffer of pegasos, sgd and
asset), and refuses, with the numbers, a limit too small for the state alone. The solvers see a
chunk source (:mod:`svmtrain.data.chunk_source`), never a file:

* pegasos: :mod:`svmtrain.solvers.sgd.stream_pegasos` (shuffle buffer);
* sgd: :mod:`svmtrain.solvers.sgd.stream_sgd` (the three update rules, one row
  per step, fed by pegasos' shuffle buffer; eta0's pilot on the first pool fed);
* ocas: :mod:`svmtrain.solvers.ocas.ocas` itself, a pass per iteration;
  Crammer-Singer (``--multiclass cs``): :mod:`svmtrain.solvers.ocas.stream_ocas_cs`
  (its n x M state and cut buffer in memory, four passes per iteration);
* bmrm: :mod:`svmtrain.solvers.ocas.bmrm`, i.e. ocas's cutting-plane loop
  streamed as ocas (the same plan: per-row state and cut buffer);
* dcd: :mod:`svmtrain.solvers.dcd.stream_dcd` (block minimization);
* asset: :mod:`svmtrain.solvers.asset.stream_asset` (its feature map built once,
  Algorithm 1's steps fed by pegasos' shuffle buffer, rows mapped as drawn).

sbp, smo, norma, cvm, tron, kernel pegasos (``-t`` other than 0) and asset
``--inner`` train in memory only.
"""
import contextlib
import dataclasses
import math
import os
import time

import numpy as np

from ..errors import InputFormatError, ParameterError
from ..params import check_params

DEFAULT_MEMORY_LIMIT_MB = 1024
STREAMED = ("pegasos", "sgd", "ocas", "bmrm", "dcd", "asset")
SHUFFLED = ("pegasos", "sgd", "asset")     # the solvers with a shuffle buffer
OCAS_LIKE = ("ocas", "bmrm")               # ocas's streamed loop and cut buffer
MIB = 1 << 20
MIN_BLOCK_BYTES = 64 << 10
# pass 0: the reader's text blocks are this fraction of the limit (its
# buffers and parse outputs in flight take about 8-10 such blocks)
READER_SHARE = 1 / 24
MAX_READER_BLOCK = 8 << 20


# ---------------------------------------------------------------- the C heap

M_MMAP_THRESHOLD = -3          # glibc's mallopt parameter number
MMAP_THRESHOLD = 256 << 10


def _glibc():
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except (OSError, AttributeError):   # not glibc (musl, macOS): nothing to tune
        return None


def bound_heap():
    """Make glibc's malloc serve every allocation of 256 KiB or more by its own
    mapping, returned to the system when freed. By default glibc raises that
    threshold as large blocks are freed (up to 32 MiB) and then keeps freed
    blocks in the heap, so the block-sized temporaries of a streamed run
    would leave tens of MB of resident, unused heap behind (measured: 20 MB
    more peak RSS in pass 0 at --memory-limit 100). No effect elsewhere."""
    libc = _glibc()
    if libc is not None:
        libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def trim_heap():
    """Give the free memory at the top of glibc's heaps back to the system."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


# ---------------------------------------------------------------- pass 0

class StreamData:
    """The parsed training set on disk: ``files`` (ArrayFiles), ``labels``
    (in memory), ``n_rows``, ``nnz``, ``n_features``, ``cache_used``."""

    def __init__(self, files, labels, n_features, big_value, cleanup=None):
        self.files = files
        self.labels = labels
        self.n_rows = files.n_rows
        self.nnz = files.nnz
        self.n_features = n_features
        self.big_value = big_value
        self._cleanup = cleanup

    def source(self, block_bytes, max_rows=None):
        """A FileBlockSource over blocks of at most ``block_bytes``."""
        from ..io.block_reader import FileBlockSource, block_bounds
        bounds, ip_at, longest = block_bounds(self.files, block_bytes, max_rows)
        src = FileBlockSource(self.files, bounds, ip_at)
        src.longest = longest
        return src

    def close(self):
        self.files.close()
        if self._cleanup is not None:
            self._cleanup()
            self._cleanup = None


def _spool_place(train_file, cache_path):
    """(directory, stem) for the spool files of a run."""
    if cache_path is not None:
        path = os.fspath(cache_path)
    elif train_file == "-":
        path = "stdin.svmcache"
    else:
        from ..io.cache import default_cache_path
        path = default_cache_path(train_file)
    return os.path.dirname(os.path.abspath(path)), os.path.basename(path), path


def prepare(train_file, memory_limit, cache_path=None, chunk_rows=None, threads=None,
            read_progress=None, say=None):
    """Pass 0: the training set of ``train_file`` as a :class:`StreamData`.

    With ``cache_path``, a valid cache there is used without parsing (it is
    checked in bounded memory); otherwise the text is parsed into a spool,
    which then becomes the cache (with ``cache_path``) or stays a temporary
    file removed by ``close()``. Raises InputFormatError for bad input.
    """
    from ..io import reader
    from ..io.block_reader import ArrayFiles, open_cache_streamed
    from ..io.atomic import remove_stale_temps
    from ..io.cache import (ARRAYS, probe_cache, read_layout, source_identity,
                           store_cache)
    from ..io.spool import Spool
    say = say or (lambda s: None)
    identity = None
    if cache_path is not None:
        identity, scan = probe_cache(train_file, cache_path, say, open_cache_streamed)
        if scan is not None:
            return StreamData(scan.files, scan.labels, scan.n_features, scan.big_value)
    else:
        with contextlib.suppress(OSError):
            identity = source_identity(train_file)
    directory, stem, target = _spool_place(train_file, cache_path)
    remove_stale_temps(target)
    spool = Spool(directory, stem, crc=cache_path is not None)
    try:
        labels = np.empty(1 << 16, np.float64)
        d, big = 0, -1
        chunk_bytes = int(min(MAX_READER_BLOCK, max(64 << 10, memory_limit * READER_SHARE)))
        for c in reader.iter_chunks(train_file, chunk_rows=chunk_rows, chunk_bytes=chunk_bytes,
                                    progress=read_progress, threads=threads):
            n0, m = spool.n_rows, c.n_rows
            if n0 + m > len(labels):
                labels.resize(max(2 * len(labels), n0 + m), refcheck=False)
            labels[n0:n0 + m] = c.labels
            if c.nnz:
                d = max(d, int(c.indices[:c.nnz].max()) + 1)
                if big < 0:
                    from ..data._dataset_kernels import first_too_large
                    p = first_too_large(c.values[:c.nnz])
                    if p >= 0:
                        big = spool.nnz + p
            spool.append(c)
            del c
        labels.resize(spool.n_rows, refcheck=False)
        spans = spool.finish()
        if cache_path is not None and spool.n_rows and store_cache(
                train_file, cache_path, identity, say,
                lambda: spool.write_cache(cache_path, identity)):
            spool.remove()
            f = open(cache_path, "rb")
            try:
                lay = read_layout(f, cache_path)
            except BaseException:
                f.close()
                raise
            spans = {a: (f.fileno(), off) for (a, _), off in zip(ARRAYS, lay.offsets)}
            files = ArrayFiles(spans, lay.n_rows, lay.nnz, lay.first_line, close=f.close)
            return StreamData(files, labels, d, big)
        files = ArrayFiles({a: s for (a, _), s in zip(ARRAYS, spans)}, spool.n_rows, spool.nnz,
                           spool.first_line)
        return StreamData(files, labels, d, big, cleanup=spool.remove)
    except BaseException:
        spool.remove()
        raise


# ---------------------------------------------------------------- memory plan

@dataclasses.dataclass
class MemoryPlan:
    """How a run spends ``limit`` bytes: ``state`` (solver and labels),
    ``block_bytes`` per block (two are held), and the solver's share."""
    limit: int
    state: int
    block_bytes: int
    cut_buffer: int = None          # ocas, bmrm
    shuffle_rows: int = None        # pegasos, sgd, asset
    shuffle_bytes: int = 0
    map_rows: int = None            # asset: rows mapped to features at a time
    map_bytes: int = 0
    setup: int = 0                  # asset: held before the first epoch only (map build, D_G sample)
    pilot: int = 0                  # sgd: the pilot's sample, held beside the full shuffle buffer

    def describe(self):
        parts = [f"limit {self.limit / MIB:.0f} MB", f"state {self.state / MIB:.1f} MB",
                 f"blocks of {self.block_bytes / MIB:.1f} MB"]
        if self.cut_buffer is not None:
            parts.append(f"{self.cut_buffer} cuts")
        if self.shuffle_rows is not None:
            parts.append(f"shuffle buffer {self.shuffle_rows} rows ({self.shuffle_bytes / MIB:.1f} MB)")
        if self.map_rows is not None:
            parts.append(f"{self.map_rows} feature rows at a time ({self.map_bytes / MIB:.1f} MB)")
        return ", ".join(parts)


def _too_small(limit, need, what):
    return ParameterError(f"--memory-limit {round(limit / MIB, 4):g} MB is too small: {what}; "
                          f"give at least {math.ceil(need / MIB)} MB")


def _ocas_cut_bytes(cap, row_bytes):
    """A cut buffer of ``cap`` cuts of ``row_bytes`` each, with its Gram matrix and per-cut numbers."""
    return cap * row_bytes + 8 * cap * cap + 48 * cap


def _ocas_cs_state(n, d1, M):
    """Bytes of ``-s ocas --multiclass cs``'s state beyond the labels, for n
    rows, d1 = d + 1 weights and M classes: class index, C_i and cut
    classes per row (24 n), six n x M arrays (scores S_b, S_d; coefficients
    G_b, G_c, G_d, G_new), the line search's n (M - 1) breakpoints and
    weights, and (d + 1) x M weights four times (the working W and, at the
    end, the model's copies)."""
    return 24 * n + 48 * n * M + 16 * n * (M - 1) + 4 * 8 * d1 * M


def _is_cs(solver, params):
    return solver == "ocas" and getattr(params, "multiclass", "ovr") == "cs"


def plan_memory(solver, n, d, params, limit, nnz=0, n_problems=1):
    """The MemoryPlan of ``solver`` on n rows, d features and ``nnz``
    nonzeros (``n_problems`` binary problems; with ``--multiclass cs`` the
    number of classes) within ``limit`` bytes (before
    the block layout is known; the shuffle buffer of pegasos, sgd and asset
    is sized by :func:`plan_shuffle`). Raises ParameterError when the limit
    cannot hold the solver's state and two minimal blocks."""
    d1 = d + 1
    state = 16 * n                      # labels, y of the current problem
    if solver == "pegasos":
        # v, and with averaging the sum and its correction (doubled while the
        # average is formed at the end)
        state += (6 if params.average is not False else 1) * 8 * d1
    elif solver == "sgd":
        # w, SGD-QN's D or FOLOS's two stamp vectors, and their transient copies
        from ..solvers.sgd.stream_sgd import state_vectors
        state += state_vectors(params.update) * 8 * d1
    elif solver == "dcd":
        state += 8 * d1 + 24 * n
    elif _is_cs(solver, params):
        state += _ocas_cs_state(n, d1, n_problems)
    elif solver in OCAS_LIKE:
        import numba
        nb = max(1, int(numba.config.NUMBA_NUM_THREADS))
        state += (5 + (nb if nb > 1 else 0)) * 8 * d1 + 43 * n
    elif solver == "asset":
        from ..solvers.asset.stream_asset import state_bytes
        kept, setup = state_bytes(n, d, nnz, params, n_problems)
        state = 8 * n + kept
    free = limit - state
    if _is_cs(solver, params):      # a cut: one class index per row
        from ..solvers.ocas.ocas_cs import cut_dtype
        cut_row = np.dtype(cut_dtype(n_problems)).itemsize * n
    else:
        cut_row = 8 * d1
    minimum = state + 4 * MIN_BLOCK_BYTES + (_ocas_cut_bytes(2, cut_row) if solver in OCAS_LIKE else 0)
    if solver == "asset":
        # before the first epoch, setup + the two blocks (read for the
        # landmarks and the D_G sample) fit in what the state leaves
        minimum += setup
    if free < minimum - state:
        raise _too_small(limit, minimum, f"-s {solver} keeps {state / MIB:.1f} MB of state for "
                         f"{n} rows and {d} features")
    if solver in OCAS_LIKE:
        want = max(2, int(params.cut_buffer or 2000))
        cap = want
        while cap > 2 and _ocas_cut_bytes(cap, cut_row) > free / 2:
            cap = max(2, min(cap - 1, int(cap * (free / 2) / _ocas_cut_bytes(cap, cut_row))))
        if _is_cs(solver, params):
            # short rows (2 bytes per row): the Gram matrix, quadratic in cap,
            # dominates, so the proportional guess above is far too low; take
            # the largest cap that fits in half of what the state leaves
            hi = want
            while cap < hi:
                mid = (cap + hi + 1) // 2
                if _ocas_cut_bytes(mid, cut_row) <= free / 2:
                    cap = mid
                else:
                    hi = mid - 1
        cut = _ocas_cut_bytes(cap, cut_row)
        return MemoryPlan(limit, state + cut, int(max(MIN_BLOCK_BYTES, (free - cut) / 2.5)),
                          cut_buffer=cap)
    if solver == "dcd":
        # two block buffers + temporaries on a block's first visit (16 bytes per row)
        return MemoryPlan(limit, state, int(max(MIN_BLOCK_BYTES, free / 3)))
    if solver == "asset":
        # two block buffers of free/8 each (at most what setup leaves); the
        # mapped rows a quarter (plan_shuffle), the shuffle buffer the rest
        return MemoryPlan(limit, state, int(max(MIN_BLOCK_BYTES, min(free / 8, (free - setup) / 2))),
                          setup=setup)
    # pegasos, sgd: two block buffers of free/8 each; the shuffle buffer gets the rest
    return MemoryPlan(limit, state, int(max(MIN_BLOCK_BYTES, free / 8)))


def plan_shuffle(plan, source, params, shuffle_rows=None, d=0):
    """Size the shuffle buffer (pegasos, sgd, asset) in ``plan`` for the
    blocks of ``source``: ``shuffle_rows`` when given (ParameterError when it
    does not fit), else as many rows as the limit leaves room for (at most n).
    For asset, first the block of mapped rows (a quarter of what the state
    leaves, at least one step's); for sgd, first the pilot's sample (``d``:
    the number of features) and one row per step (k = 1)."""
    from ..solvers.sgd.stream_pegasos import pool_bytes
    n = source.n_rows
    if params.solver == "asset":
        from ..solvers.asset.stream_asset import plan_map_rows
        plan.map_rows, plan.map_bytes = plan_map_rows((plan.limit - plan.state) / 4, params, n)
    if params.solver == "sgd":
        from ..solvers.sgd.stream_sgd import pilot_bytes
        plan.pilot = pilot_bytes(n, source.nnz, source.longest, d)
    k = 1 if params.solver == "sgd" else max(1, min(int(params.batch_size), n))
    avg = source.nnz / max(n, 1)
    mbr = int(np.diff(source.bounds).max())

    def cost(r):
        return pool_bytes(r, avg, source.longest, k, mbr, source.max_block_nnz)

    room = plan.limit - plan.state - source.buffer_bytes - plan.map_bytes - plan.pilot
    if shuffle_rows is not None:
        r = max(1, min(int(shuffle_rows), n))
        if cost(r) > room:
            raise ParameterError(f"--shuffle-buffer {shuffle_rows} needs {cost(r) / MIB:.1f} MB here; "
                                 f"--memory-limit {round(plan.limit / MIB, 4):g} MB leaves {max(room, 0) / MIB:.1f} MB "
                                 "for it (raise --memory-limit or lower --shuffle-buffer)")
    else:
        if cost(1) > room:
            need = plan.state + source.buffer_bytes + plan.map_bytes + plan.pilot + cost(1)
            raise _too_small(plan.limit, need, f"no room is left for {params.solver}'s shuffle buffer")
        lo, hi = 1, n
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if cost(mid) <= room:
                lo = mid
            else:
                hi = mid - 1
        r = lo
    plan.shuffle_rows = r
    plan.shuffle_bytes = cost(r)
    return plan


# ---------------------------------------------------------------- training

class _Problems:
    """The binary problems of training.py, built one at a time (each y is n floats)."""

    def __init__(self, labels, order, params):
        self.labels, self.order, self.params = labels, order, params

    def __len__(self):
        return 1 if len(self.order) <= 2 else len(self.order)

    def __iter__(self):
        from .train import _binary_problems
        return _binary_problems(self.labels, self.order, self.params)


class _StreamSolver:
    """The ``fit`` of a streamed solver, with its share of the memory plan."""

    def __init__(self, name, plan, longest):
        self.name, self.plan, self.longest = name, plan, longest

    def fit(self, source, y, d, params, progress=None, log=None, class_cost=(1.0, 1.0)):
        if self.name == "pegasos":
            from ..solvers.sgd import stream_pegasos
            return stream_pegasos.fit(source, y, d, params, progress, log, class_cost,
                                      shuffle_rows=self.plan.shuffle_rows, longest=self.longest)
        if self.name == "sgd":
            from ..solvers.sgd import stream_sgd
            return stream_sgd.fit(source, y, d, params, progress, log, class_cost,
                                  shuffle_rows=self.plan.shuffle_rows, longest=self.longest)
        if self.name == "dcd":
            from ..solvers.dcd import stream_dcd
            return stream_dcd.fit(source, y, d, params, progress, log, class_cost)
        from ..solvers import get_solver
        # ocas (hinge, log or regression) or bmrm (ocas's cp loop): their fit takes a source
        solver = get_solver(self.name, task=params.task, loss=params.loss)
        return solver.fit(source, y, d, params, progress, log, class_cost)


def check_streamable(params):
    """ParameterError unless ``params`` names a solver that can stream."""
    if params.task == "p":
        raise ParameterError("--task p (ranking) trains in memory only; it cannot be combined with --stream")
    if params.multiclass == "cs" and params.solver != "ocas":
        raise ParameterError(f"-s {params.solver} --multiclass cs (Crammer-Singer) trains in memory only; "
                             "-s ocas --multiclass cs streams (or drop --stream)")
    if params.loss == "log" and params.solver not in ("ocas", "pegasos", "sgd"):
        raise ParameterError(f"-s {params.solver} --loss log (logistic regression) trains in memory; "
                             "with --stream, -s ocas, -s pegasos or -s sgd --loss log trains it")
    if params.solver not in STREAMED:
        raise ParameterError(f"-s {params.solver} trains in memory only; --stream works with "
                             f"{', '.join(STREAMED)}")
    if params.task != "c" and not (params.task == "r" and params.solver in ("dcd", "ocas", "pegasos", "sgd")):
        from ..tasks import NAMES
        raise ParameterError(f"--stream trains classification, and regression with -s dcd, ocas, pegasos or sgd; "
                             f"{NAMES.get(params.task, params.task)} (--task {params.task}) with -s {params.solver} "
                             "trains in memory (drop --stream)")
    if params.solver == "asset":
        from ..solvers.asset.stream_asset import check_streamable as check_asset
        check_asset(params)
    elif params.kernel_type not in (None, 0):
        raise ParameterError(f"kernel -s {params.solver} (-t {params.kernel_type}) trains in memory "
                             "only; --stream trains linear models")


def train_streamed(train_file, params, memory_limit_mb=None, shuffle_buffer=None, cache_path=None,
                   chunk_rows=None, read_progress=None, progress=None, log=None, say=None):
    """Train a model on ``train_file`` out of core (linear; for asset its
    kernel-approximation model); see the module docstring.

    ``memory_limit_mb`` (default DEFAULT_MEMORY_LIMIT_MB) bounds the data,
    buffers and solver state (not the interpreter and numba themselves);
    ``shuffle_buffer`` rows for pegasos, sgd and asset (default: what the limit allows);
    ``cache_path``: use or build the binary cache there; ``chunk_rows``:
    at most so many rows per block. ``log`` gets the solvers' lines, ``say``
    the notes about the cache and the memory plan. Returns the model; its
    ``stream_plan`` is the MemoryPlan used.
    """
    from ..solvers import get_solver
    from ..solvers.base import with_defaults
    from ..tasks import REGRESSION
    from .train import (_train_linear, check_class_weights, finish_model, label_order, magnitude_error,
                           task_problems)
    check_params(params)
    check_streamable(params)
    if shuffle_buffer is not None and shuffle_buffer < 1:
        raise ParameterError(f"--shuffle-buffer must be >= 1 (got {shuffle_buffer})")
    if shuffle_buffer is not None and params.solver not in SHUFFLED:
        raise ParameterError("--shuffle-buffer applies to -s pegasos, -s sgd and -s asset")
    mb = DEFAULT_MEMORY_LIMIT_MB if memory_limit_mb is None else float(memory_limit_mb)
    if not (mb > 0 and math.isfinite(mb)):
        raise ParameterError(f"--memory-limit must be > 0 (got {memory_limit_mb})")
    limit = int(mb * MIB)
    say = say or (lambda s: None)
    solver = get_solver(params.solver, multiclass=params.multiclass)
    params = with_defaults(params, getattr(solver, "DEFAULTS", {}))
    from ..io.reader import display_name
    name = display_name(train_file)

    bound_heap()
    data = prepare(train_file, limit, cache_path, chunk_rows, params.threads, read_progress, say)
    trim_heap()
    source = None
    try:
        n = data.n_rows
        if n == 0:
            raise InputFormatError(name, None, "the training set is empty (no data lines)")
        if data.big_value >= 0:
            from ..io.block_reader import row_of_nonzero
            row = row_of_nonzero(data.files, data.big_value)
            value = data.files.read("values", data.big_value, np.empty(1))[0]
            raise magnitude_error(name, row, value)
        if params.task == REGRESSION:
            order, problems = task_problems(data.labels, params)
        else:
            order = label_order(data.labels)
            check_class_weights(params, order)
            problems = _Problems(data.labels, order, params)
        d = data.n_features
        cs = _is_cs(params.solver, params)
        plan = plan_memory(params.solver, n, d, params, limit, data.nnz, len(order) if cs else len(problems))
        source = data.source(plan.block_bytes, chunk_rows)
        if params.solver in SHUFFLED:
            plan_shuffle(plan, source, params, shuffle_buffer, d)
        if params.solver in OCAS_LIKE and plan.cut_buffer < (params.cut_buffer or 2000):
            what = f"{n} class indices" if cs else f"{d + 1} weights"
            say(f"--memory-limit leaves room for {plan.cut_buffer} cuts of {what} "
                f"(--cut-buffer {params.cut_buffer})")
            params = dataclasses.replace(params, cut_buffer=plan.cut_buffer)
        if log is not None:
            log(f"streaming {n} rows in {source.n_blocks} blocks: {plan.describe()}")
        start = time.perf_counter()
        if params.solver == "asset":
            from ..solvers.asset import stream_asset
            model = stream_asset.train_model(source, order, problems, d, params, plan, progress, log)
        elif cs:
            from ..solvers.ocas import stream_ocas_cs
            model = stream_ocas_cs.train_model(source, data.labels, order, d, params, progress, log)
        else:
            model = _train_linear(_StreamSolver(params.solver, plan, source.longest), source, order,
                                  problems, d, params, progress, log)
        finish_model(model, params, n, start)
        model.header += [("stream", True), ("memory_limit", mb), ("stream_blocks", int(source.n_blocks))]
        if plan.shuffle_rows is not None:
            model.header.append(("shuffle_buffer", int(plan.shuffle_rows)))
        model.stream_plan = plan
        return model
    finally:
        if source is not None:
            source.close()
        data.close()
