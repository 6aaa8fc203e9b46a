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
(O(d) weight vectors, O(n) per-row arrays, a cut buffer) and the streamed
data (two block buffers, a shuffle buffer), and refuses, with the numbers,
a limit too small for the state alone. The solvers see a chunk source
(:mod:`svmtrain.data.chunk_source`), never a file.

Nothing here names a solver: each streamable solver's declaration
(:class:`svmtrain.solvers.contract.Streamed`, in its family's
``__init__.py``) says which tasks and losses it streams, which module
trains from a chunk source (its streamed module, or its in-memory module
when that takes a source), its memory plan (a function next to its code,
see :mod:`svmtrain.solvers.memory_plan`), whether it draws rows through
the shuffle buffer or keeps a cut buffer, its Crammer-Singer module, and
its own further checks. The refusals of :func:`check_streamable` name the
solvers that can, from the registry.
"""
import contextlib
import dataclasses
import importlib
import math
import os
import time

import numpy as np

from ..errors import InputFormatError, ParameterError
from ..params import check_params
from ..solvers.memory_plan import MIB, too_small

DEFAULT_MEMORY_LIMIT_MB = 1024
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


def _spool_text(spool, train_file, memory_limit, chunk_rows, threads, read_progress):
    """Parse ``train_file`` into ``spool``; returns (labels sized to its rows, n_features, first too-big nonzero or -1)."""
    from ..io import reader
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
    return labels, d, big


def _cache_files(cache_path):
    """The ArrayFiles of the cache at ``cache_path``, owning its open file (closed here if its layout is bad)."""
    from ..io.block_reader import ArrayFiles
    from ..io.cache import ARRAYS, read_layout
    f = open(cache_path, "rb")
    try:
        lay = read_layout(f, cache_path)
    except BaseException:
        f.close()
        raise
    spans = {a: (f.fileno(), off) for (a, _), off in zip(ARRAYS, lay.offsets)}
    return ArrayFiles(spans, lay.n_rows, lay.nnz, lay.first_line, close=f.close)


def prepare(train_file, memory_limit, cache_path=None, chunk_rows=None, threads=None,
            read_progress=None, say=None):
    """Pass 0: the training set of ``train_file`` as a :class:`StreamData`.

    With ``cache_path``, a valid cache there is used without parsing (it is
    checked in bounded memory); otherwise the text is parsed into a spool,
    which then becomes the cache (with ``cache_path``) or stays a temporary
    file removed by ``close()``. Raises InputFormatError for bad input.
    """
    from ..io.block_reader import ArrayFiles, open_cache_streamed
    from ..io.atomic import remove_stale_temps
    from ..io.cache import ARRAYS, probe_cache, source_identity, store_cache
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
        labels, d, big = _spool_text(spool, train_file, memory_limit, chunk_rows, threads, read_progress)
        spans = spool.finish()
        if cache_path is not None and spool.n_rows and store_cache(
                train_file, cache_path, identity, say,
                lambda: spool.write_cache(cache_path, identity)):
            spool.remove()
            return StreamData(_cache_files(cache_path), labels, d, big)
        files = ArrayFiles({a: s for (a, _), s in zip(ARRAYS, spans)}, spool.n_rows, spool.nnz,
                           spool.first_line)
        return StreamData(files, labels, d, big, cleanup=spool.remove)
    except BaseException:
        spool.remove()
        raise


# ---------------------------------------------------------------- memory plan

def _streamed(solver):
    """The Streamed of ``-s solver``; ParameterError when it trains in memory only."""
    from ..solvers import declaration
    s = declaration(solver).streamed
    if s is None:
        raise ParameterError(f"-s {solver} trains in memory only")
    return s


def plan_memory(solver, n, d, params, limit, nnz=0, n_problems=1):
    """The MemoryPlan of ``solver`` on n rows, d features and ``nnz``
    nonzeros (``n_problems`` binary problems; with ``--multiclass cs`` the
    number of classes) within ``limit`` bytes (before the block layout is
    known; a shuffle buffer is sized by :func:`plan_shuffle`): the plan its
    declaration names (``Streamed.memory``, or ``multiclass_cs_memory``).
    Raises ParameterError when the limit cannot hold the solver's state and
    two minimal blocks."""
    from ..solvers import load
    s = _streamed(solver)
    spec = s.multiclass_cs_memory if getattr(params, "multiclass", "ovr") == "cs" else s.memory
    return load(spec)(solver, n, d, params, limit, nnz, n_problems)


def plan_shuffle(plan, source, params, shuffle_rows=None, d=0):
    """Size the shuffle buffer of ``params.solver`` (one with
    ``Streamed.shuffle_buffer``) in ``plan`` for the blocks of ``source``:
    ``shuffle_rows`` when given (ParameterError when it does not fit), else
    as many rows as the limit leaves room for (at most n). First its
    streamed module's ``shuffle_cost(plan, source, params, d)`` reserves
    the solver's own shares beside the buffer (``d``: the number of
    features) and prices a buffer of r rows."""
    cost = importlib.import_module(_streamed(params.solver).module).shuffle_cost(plan, source, params, d)
    n = source.n_rows
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
            raise too_small(plan.limit, need, f"no room is left for {params.solver}'s shuffle buffer")
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
    """The ``fit`` of a streamed solver (``Streamed.module``'s, or its
    in-memory module's when that takes a chunk source), with its share of
    the memory plan."""

    def __init__(self, streamed, plan, longest):
        self.streamed, self.plan, self.longest = streamed, plan, longest

    def fit(self, source, y, d, params, progress=None, log=None, class_cost=(1.0, 1.0)):
        s = self.streamed
        if s.module is None:
            from ..solvers import get_solver
            solver = get_solver(params.solver, task=params.task, loss=params.loss)
            return solver.fit(source, y, d, params, progress, log, class_cost)
        module = importlib.import_module(s.module)
        if s.shuffle_buffer:
            return module.fit(source, y, d, params, progress, log, class_cost,
                              shuffle_rows=self.plan.shuffle_rows, longest=self.longest)
        return module.fit(source, y, d, params, progress, log, class_cost)


def _either(solvers, conjunction="or"):
    """'-s a, -s b or -s c' of ``solvers``."""
    listed = [f"-s {name}" for name in solvers]
    return listed[0] if len(listed) == 1 else f"{', '.join(listed[:-1])} {conjunction} {listed[-1]}"


_LOSS_NOTES = {"log": " (logistic regression)"}


def check_streamable(params):
    """ParameterError unless ``params`` names a solver that can stream its
    task, loss and kind of model; each refusal names the solvers that can
    (from the registry's ``Streamed`` declarations)."""
    from ..solvers import declaration, listing, load, names
    from ..tasks import DEFAULT_LOSS, NAMES
    solver, task, loss = params.solver, params.task, params.loss
    decl = declaration(solver)
    s = decl.streamed
    task_streamers = names(lambda x: x.streams(task))
    if not task_streamers:
        raise ParameterError(f"--task {task} ({NAMES.get(task, task)}) trains in memory only; "
                             "it cannot be combined with --stream")
    if params.multiclass == "cs" and (s is None or s.multiclass_cs is None):
        cs = names(lambda x: x.streamed is not None and x.streamed.multiclass_cs is not None)
        raise ParameterError(f"-s {solver} --multiclass cs (Crammer-Singer) trains in memory only; "
                             f"{_either(cs)} --multiclass cs stream{'s' if len(cs) == 1 else ''} (or drop --stream)")
    streamers = names(lambda x: x.streamed is not None)
    loss_streamers = names(lambda x: x.streams(task, loss))
    if s is None:
        # those that stream this very problem (all of them: no need to say which problem)
        problem = NAMES.get(task, task) + ("" if loss == DEFAULT_LOSS.get(task) else f" with --loss {loss}")
        if not loss_streamers:
            raise ParameterError(f"-s {solver} trains in memory only; no solver streams {problem}")
        raise ParameterError(f"-s {solver} trains in memory only; --stream works with {listing(loss_streamers)}"
                             + ("" if loss_streamers == streamers else f" for {problem}"))
    if loss_streamers != task_streamers and not decl.streams(task, loss):
        what = f"--loss {loss}{_LOSS_NOTES.get(loss, '')}"
        if not loss_streamers:
            raise ParameterError(f"{what} trains in memory only; it cannot be combined with --stream")
        raise ParameterError(f"-s {solver} {what} trains in memory; with --stream, "
                             f"{_either(loss_streamers)} --loss {loss} trains it")
    if not decl.streams(task):
        kinds = []
        for t, name in NAMES.items():
            those = names(lambda x, t=t: x.streams(t))
            if those:
                kinds.append(name if those == streamers else f"{name} with {_either(those)}")
        kinds = kinds[0] if len(kinds) == 1 else f"{', '.join(kinds[:-1])}, and {kinds[-1]}"
        raise ParameterError(f"--stream trains {kinds}; {NAMES.get(task, task)} (--task {task}) with -s {solver} "
                             "trains in memory (drop --stream)")
    if s.check is not None:
        load(s.check)(params)
    if decl.kernelized is not None and params.kernel_type not in (None, 0):
        raise ParameterError(f"kernel -s {solver} (-t {params.kernel_type}) trains in memory "
                             "only; --stream trains linear models")


def _stream_options(params, shuffle_buffer, memory_limit_mb):
    """(the solver's Streamed, the limit in MB) once params, streaming and the stream options pass their checks."""
    from ..solvers import names
    check_params(params)
    check_streamable(params)
    streamed = _streamed(params.solver)
    if shuffle_buffer is not None and shuffle_buffer < 1:
        raise ParameterError(f"--shuffle-buffer must be >= 1 (got {shuffle_buffer})")
    if shuffle_buffer is not None and not streamed.shuffle_buffer:
        shuffled = names(lambda x: x.streamed is not None and x.streamed.shuffle_buffer)
        raise ParameterError(f"--shuffle-buffer applies to {_either(shuffled, 'and')}")
    mb = DEFAULT_MEMORY_LIMIT_MB if memory_limit_mb is None else float(memory_limit_mb)
    if not (mb > 0 and math.isfinite(mb)):
        raise ParameterError(f"--memory-limit must be > 0 (got {memory_limit_mb})")
    return streamed, mb


def _check_values(data, name):
    """InputFormatError unless the training set has rows and no value too large (naming its row)."""
    from .train import magnitude_error
    if data.n_rows == 0:
        raise InputFormatError(name, None, "the training set is empty (no data lines)")
    if data.big_value >= 0:
        from ..io.block_reader import row_of_nonzero
        row = row_of_nonzero(data.files, data.big_value)
        value = data.files.read("values", data.big_value, np.empty(1))[0]
        raise magnitude_error(name, row, value)


def _problems(labels, params):
    """(order, problems) of the task: regression's, or the label order (class weights checked) and binary problems."""
    from ..tasks import REGRESSION
    from .train import check_class_weights, label_order, task_problems
    if params.task == REGRESSION:
        order, problems = task_problems(labels, params)
    else:
        order = label_order(labels)
        check_class_weights(params, order)
        problems = _Problems(labels, order, params)
    return order, problems


def _fit_cut_buffer(plan, params, n, d, cs, say):
    """``params`` with --cut-buffer lowered to the plan's room for cuts (said), when that is less than wanted."""
    if plan.cut_buffer < plan.want_cuts:
        what = f"{n} class indices" if cs else f"{d + 1} weights"
        say(f"--memory-limit leaves room for {plan.cut_buffer} cuts of {what} "
            f"(--cut-buffer {params.cut_buffer})")
        params = dataclasses.replace(params, cut_buffer=plan.cut_buffer)
    return params


def _train_model(streamed, cs, source, labels, order, problems, d, params, plan, progress, log):
    """The model from the streamed solver: its Crammer-Singer module's, its module's own loop, or training.py's."""
    from .train import _train_linear
    module = streamed.multiclass_cs if cs else streamed.module
    module = None if module is None else importlib.import_module(module)
    if cs:
        return module.train_model(source, labels, order, d, params, progress, log)
    if hasattr(module, "train_model"):          # the whole model (its module's own loop over problems)
        return module.train_model(source, order, problems, d, params, plan, progress, log)
    return _train_linear(_StreamSolver(streamed, plan, source.longest), source, order,
                         problems, d, params, progress, log)


def train_streamed(train_file, params, memory_limit_mb=None, shuffle_buffer=None, cache_path=None,
                   chunk_rows=None, read_progress=None, progress=None, log=None, say=None):
    """Train a model on ``train_file`` out of core (linear; for asset its
    kernel-approximation model); see the module docstring.

    ``memory_limit_mb`` (default DEFAULT_MEMORY_LIMIT_MB) bounds the data,
    buffers and solver state (not the interpreter and numba themselves);
    ``shuffle_buffer`` rows for the solvers with a shuffle buffer (default: what the limit allows);
    ``cache_path``: use or build the binary cache there; ``chunk_rows``:
    at most so many rows per block. ``log`` gets the solvers' lines, ``say``
    the notes about the cache and the memory plan. Returns the model; its
    ``stream_plan`` is the :class:`~svmtrain.solvers.memory_plan.MemoryPlan` used.
    """
    from ..solvers import get_solver
    from ..solvers.base import with_defaults
    from .train import finish_model
    streamed, mb = _stream_options(params, shuffle_buffer, memory_limit_mb)
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
        _check_values(data, name)
        order, problems = _problems(data.labels, params)
        d = data.n_features
        cs = params.multiclass == "cs"          # check_streamable: the solver streams it
        plan = plan_memory(params.solver, n, d, params, limit, data.nnz, len(order) if cs else len(problems))
        source = data.source(plan.block_bytes, chunk_rows)
        if streamed.shuffle_buffer:
            plan_shuffle(plan, source, params, shuffle_buffer, d)
        if streamed.cut_buffer:
            params = _fit_cut_buffer(plan, params, n, d, cs, say)
        if log is not None:
            log(f"streaming {n} rows in {source.n_blocks} blocks: {plan.describe()}")
        start = time.perf_counter()
        model = _train_model(streamed, cs, source, data.labels, order, problems, d, params, plan, progress, log)
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
