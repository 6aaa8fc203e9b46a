"""One training run: in memory, streamed or on Dask, with -v / -C / --grid on top.

:func:`run` is the one orchestration behind ``svm-train`` and
:func:`svmtrain.train` (and what an estimator's fit can call): it takes the
data source (a path, or an in-memory :class:`svmtrain.data.dataset.Chunk`),
the :class:`svmtrain.params.TrainParams` and the :class:`RunOptions` (what
``svm-train`` spells -v, -C, --grid, --stream, --memory-limit, --engine,
--trace, --scale...), checks how they combine (:func:`check_run`, then the
engine's own checks as it dispatches), and returns a :class:`RunResult`.
It never prints: what a run has to say goes through :class:`Hooks`
(progress bars, the solvers' lines, the lines of a search, its result
lines, notes and warnings, and each finished model), which svm-train turns
into its output and the Python API leaves silent.
"""
import dataclasses
import os
from dataclasses import dataclass, field

from .errors import ParameterError

DEFAULT_FOLDS = 5          # -C and --grid without -v N


@dataclass
class RunOptions:
    """How to run, beside the TrainParams (svm-train's flag in brackets).

    ``folds`` (-v N): cross-validate, or the folds of -C / --grid (default 5).
    ``find_c`` (-C): search C (and p for regression); ``start_p``: a given -p,
    where regression's search starts. ``grid`` (--grid) with ``log2c``,
    ``log2g``, ``grid_out``, ``grid_png``, ``jobs``: search C and gamma.
    ``best_model``: after -C / --grid, train the model at the best point.
    ``stream`` / ``memory_limit`` (MB) / ``shuffle_buffer`` (rows): out of core.
    ``cache``: None (none), "" or True (beside the file), or its path.
    ``chunk_size``: rows per chunk when reading. ``engine`` "local" or
    "dask", ``scheduler``: the Dask scheduler's address (None: a local
    cluster). ``trace`` (a CSV path), ``trace_test``, ``trace_every``.
    ``scale`` and ``scale_range``: scale the features as svm-scale.
    """
    folds: int = None
    find_c: bool = False
    start_p: float = None
    grid: bool = False
    log2c: str = None
    log2g: str = None
    grid_out: str = None
    grid_png: str = None
    jobs: int = None
    best_model: bool = True
    stream: bool = False
    memory_limit: float = None
    shuffle_buffer: int = None
    cache: object = None
    chunk_size: int = None
    engine: str = "local"
    scheduler: str = None
    trace: str = None
    trace_test: str = None
    trace_every: int = None
    scale: bool = False
    scale_range: tuple = (-1.0, 1.0)

    @property
    def streamed(self):
        return bool(self.stream) or self.memory_limit is not None

    @property
    def search_folds(self):
        return DEFAULT_FOLDS if self.folds is None else self.folds

    @property
    def trains_model(self):
        """Whether the run ends with a model without -C / --grid (not -v)."""
        return self.folds is None and not self.find_c and not self.grid


class _NoBar:
    """The bar of a run nobody watches: its solvers get no progress callback."""
    advance = set_to = None

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


def _bar(hooks, desc, **kw):
    return _NoBar() if hooks.bar is None else hooks.bar(desc, **kw)


class _SearchBar:
    """The bar of a search (-C, --grid): the points done and, beside them,
    the best point so far (``best(status)`` after each point)."""

    def __init__(self, bar):
        self._bar, self._done, self._total, self._status = bar, 0, None, None

    @property
    def progress(self):
        """The ``progress(done, total, status=None)`` callback of the search, or None without a bar."""
        return None if self._bar.set_to is None else self._progress

    def _progress(self, done, total, _status=None):
        self._done, self._total = done, total
        self._bar.set_to(done, total, self._status)

    def best(self, status):
        self._status = status
        if self._bar.set_to is not None and self._total:
            self._bar.set_to(self._done, self._total, status)


def _ignore(*_args):
    pass


@dataclass
class Hooks:
    """Where a run's output goes (each is called, never printed here).

    ``bar(desc, total=None, unit="it", unit_scale=False)``: a progress bar
    (``advance(n)``, ``set_to(done, total, status)``, ``close()``, a context
    manager; None: no progress callbacks at all). ``log``: the solvers' lines (None: they make none). ``echo``:
    the lines of a search as it runs. ``result``: the result lines (-v's
    line, the best C, the best grid point). ``say``: notes about the cache,
    the memory plan and the cluster. ``warn``: warnings about the data.
    ``model(model, params)``: each model as it is finished, with the
    parameters it was trained with (a search's best point).
    """
    bar: object = None
    log: object = None
    echo: object = _ignore
    result: object = _ignore
    say: object = _ignore
    warn: object = _ignore
    model: object = _ignore


@dataclass
class RunResult:
    """A run's outcome: the model and its parameters (None after -v, or after
    a search without ``best_model``), the result lines, the search's
    CPath or GridResult, the --trace monitor."""
    model: object = None
    params: object = None
    lines: list = field(default_factory=list)
    search: object = None
    monitor: object = None


# ------------------------------------------------------------------ checks

def check_run(params, opts, model_format=None):
    """ParameterError for the first option that does not combine with the
    others (the same messages as svm-train's flags); the engine's own
    checks follow in :func:`run`. ``model_format``: the model file's format
    (svm-train's --model-format; None: no file)."""
    from .params import check_params
    check_params(params)
    if opts.engine not in ("local", "dask"):
        raise ParameterError(f"--engine must be local or dask (got {opts.engine})")
    if opts.scheduler and opts.engine != "dask":
        raise ParameterError("--scheduler needs --engine dask")
    _check_trace(opts)
    if opts.chunk_size is not None and opts.chunk_size <= 0:
        raise ParameterError(f"--chunk-size must be > 0 (got {opts.chunk_size})")
    _check_scale(opts, model_format)
    if opts.find_c and opts.grid:
        raise ParameterError("give -C (linear solvers) or --grid (kernel solvers), not both")
    if opts.find_c:
        from .selection.param_search import check_search
        check_search(params, opts.search_folds)
        _in_memory_only("-C", opts)
    if opts.grid:
        from .selection.grid_search import check_grid
        check_grid(params, opts.search_folds)
        _grid_engine(opts)
    elif any(getattr(opts, k) is not None for k in ("log2c", "log2g", "grid_out", "grid_png", "jobs")):
        raise ParameterError("-log2c, -log2g, -out, -png and --jobs belong to --grid")
    if params.kernel_type == 4:
        _check_precomputed(opts)
    if params.transduction is not None and (opts.folds is not None or opts.find_c or opts.streamed
                                            or opts.engine == "dask" or opts.trace):
        raise ParameterError("--transduction trains one model in memory: it does not combine with -v, -C, "
                             "--stream, --engine dask or --trace")


def _check_precomputed(opts):
    """-t 4: the kernel values are read with index 0 (LIBSVM's 0:ID) and trained in memory, unscaled."""
    for flag, given in (("--scale", opts.scale), ("--stream", opts.streamed),
                        ("--cache", opts.cache not in (None, False)), ("--engine dask", opts.engine == "dask")):
        if given:
            raise ParameterError(f"{flag} does not apply to -t 4 (precomputed kernel): its file is the kernel "
                                 "values, read whole" + (" (scale the features before computing the kernel)"
                                                          if flag == "--scale" else ""))


def _check_trace(opts):
    if opts.trace is None and (opts.trace_test is not None or opts.trace_every is not None):
        raise ParameterError("--trace-test and --trace-every need --trace FILE")
    if opts.trace is not None and opts.folds is not None:
        raise ParameterError("--trace does not combine with -v (cross-validation)")
    if opts.trace_every is not None and opts.trace_every <= 0:
        raise ParameterError(f"--trace-every must be > 0 (got {opts.trace_every})")


def _check_scale(opts, model_format):
    lower, upper = opts.scale_range
    if not opts.scale:
        if (lower, upper) != (-1.0, 1.0):
            raise ParameterError("--scale-range belongs to --scale")
        return
    if opts.streamed or (opts.engine == "dask" and not _cluster_search(opts)):
        raise ParameterError("--scale scales in memory: with --stream or --engine dask, run svm-scale first "
                             "(svm-scale -s RANGE_FILE)")
    if model_format not in (None, "svmtrain"):
        raise ParameterError(f"--scale keeps the ranges in the model, which a {model_format} model file cannot "
                             "hold: use svmtrain's format, or svm-scale -s RANGE_FILE and -r at predict time")
    if not lower < upper:
        raise ParameterError(f"--scale-range needs LOWER < UPPER (got {lower:g} {upper:g})")


def _grid_engine(opts):
    """--grid searches data held in memory here; its tasks run in local
    worker processes, or on a Dask cluster (--engine dask)."""
    if opts.streamed or opts.trace:
        raise ParameterError("--grid searches in memory: it cannot be combined with --stream or --trace")
    if opts.engine == "dask" and opts.jobs is not None:
        raise ParameterError("--jobs counts local worker processes; with --engine dask the cluster's workers "
                             "run --grid's tasks")


def _cluster_search(opts):
    """Whether the run is --grid with its tasks on a Dask cluster (the data stays in memory here)."""
    return opts.grid and opts.engine == "dask"


def _in_memory_only(flag, opts):
    if opts.streamed or opts.engine == "dask" or opts.trace:
        raise ParameterError(f"{flag} searches in memory: it cannot be combined with --stream, --engine dask or "
                             "--trace")


def _check_engine(source, opts, monitor):
    """The checks of --stream and --engine dask against the rest (after the
    caller has settled its model file), in svm-train's order."""
    from .data.dataset import Chunk
    if not opts.streamed and opts.shuffle_buffer is not None:
        raise ParameterError("--shuffle-buffer applies to --stream")
    elsewhere = opts.streamed or (opts.engine == "dask" and not _cluster_search(opts))
    if opts.trace is not None and elsewhere:
        raise ParameterError("--trace traces in-memory training; it cannot be combined with --stream or --engine dask")
    if monitor is not None and elsewhere:
        raise ParameterError("a monitor traces in-memory training: give none with stream=True or engine='dask'")
    if elsewhere and isinstance(source, Chunk):
        raise ParameterError("stream=True, memory_limit= and engine='dask' train from files: give a path")
    if opts.engine == "dask" and opts.streamed:
        raise ParameterError("--stream trains on this machine; it cannot be combined with --engine dask")
    if opts.streamed and opts.folds is not None:
        raise ParameterError("-v (cross-validation) trains in memory; it cannot be combined with --stream")


# --------------------------------------------------------------------- run

def run(source, params, opts=None, hooks=None, monitor=None, n_features=None):
    """Train (or cross-validate, or search) on ``source`` (a path, ``-``
    for standard input, or a Chunk) with ``params`` as ``opts`` say; see
    the module doc. ``monitor``: e.g. a Trace, handed to an in-memory
    solver (--trace builds its own). ``n_features`` overrides the dimension
    of an in-memory run. Returns a :class:`RunResult`."""
    from .data.dataset import Chunk
    opts = RunOptions() if opts is None else opts
    hooks = Hooks() if hooks is None else hooks
    if not isinstance(source, Chunk):
        source = os.fspath(source)
    check_run(params, opts)
    _check_engine(source, opts, monitor)
    if opts.engine == "dask" and not _cluster_search(opts):
        return _finished(_on_cluster(source, params, opts, hooks), params, hooks)
    if opts.streamed:
        return _finished(_streamed(source, params, opts, hooks), params, hooks)
    data, name = _load(source, params, opts, hooks)
    scaling = None
    if opts.scale:
        data, scaling = _scaled(data, opts.scale_range, hooks)
    if opts.find_c:
        return _search_c(data, params, opts, hooks, scaling, n_features)
    if opts.grid:
        return _search_grid(data, params, opts, hooks, name, scaling, n_features)
    if opts.folds is not None:
        line = cross_validation_line(data, params, opts.folds, name)
        hooks.result(line)
        return RunResult(lines=[line])
    return _in_memory(data, name, params, opts, hooks, scaling, monitor, n_features)


def _finished(model, params, hooks, scaling=None, **more):
    """The RunResult of a finished model, handed to ``hooks.model`` first
    (``scaling``: the --scale ranges the model keeps)."""
    model.scaling = scaling
    hooks.model(model, params)
    return RunResult(model=model, params=params, **more)


def _in_memory(data, name, params, opts, hooks, scaling, monitor, n_features):
    from .training.train import train
    if opts.trace is not None:
        from .io.reader import read_libsvm
        from .training.trace import Trace
        test = read_libsvm(opts.trace_test, chunk_rows=opts.chunk_size) if opts.trace_test else None
        monitor = Trace(data.labels, test=test, steps=opts.trace_every)
    with _bar(hooks, f"training ({params.solver})") as bar:
        model = train(data, params, progress=bar.set_to, log=hooks.log, source=name, monitor=monitor,
                      n_features=n_features)
    result = _finished(model, params, hooks, scaling, monitor=monitor)
    if opts.trace is not None:
        monitor.write(opts.trace)
    return result


def _cache_path(source, cache):
    """The binary cache's path of ``cache`` (see RunOptions), or None."""
    if cache is None or cache is False:
        return None
    if cache is True or cache == "":
        from .io.cache import default_cache_path
        return default_cache_path(source)
    return os.fspath(cache)


def _size_of(path):
    if path == "-":
        return None
    try:
        return os.path.getsize(path)
    except OSError:
        return None


def _load(source, params, opts, hooks):
    """(the Chunk of ``source``, its name in messages): parsed (or from its
    cache) unless it is one already; the qid warning of classification data."""
    from .data.dataset import Chunk
    if isinstance(source, Chunk):
        return source, None
    from .io.reader import display_name, read_libsvm
    base = 0 if params.kernel_type == 4 else 1      # -t 4: LIBSVM's 0:ID is a column
    with _bar(hooks, "reading", total=_size_of(source), unit="B", unit_scale=True) as bar:
        def read(path):
            return read_libsvm(path, chunk_rows=opts.chunk_size, progress=bar.advance, threads=params.threads,
                               index_base=base)
        cache_path = _cache_path(source, opts.cache)
        if cache_path is None:
            data = read(source)
        else:
            from .io.cache import load_or_build
            data = load_or_build(source, cache_path, read, log=hooks.say)
    name = display_name(source)
    if base == 0:
        from .mercer.precomputed import check_training
        check_training(data, name)
    if params.task != "p" and data.qid is not None and data.qid.any():
        hooks.warn(f"{name} has qid: on its rows; qid is used by ranking only and is ignored for classification")
    return data, name


def _scaled(data, scale_range, hooks):
    """(data scaled as svm-scale -l LOWER -u UPPER would scale it, its Ranges)."""
    from .preprocess.scaling import Ranges, compute_stats, scale_rows
    ranges = Ranges.from_stats(compute_stats([data]), *scale_range)
    scaled = scale_rows(ranges, data)
    if scaled.nnz > 2 * data.nnz:
        hooks.warn(f"--scale made {scaled.nnz - data.nnz} zeros nonzero (as svm-scale does); "
                   "--scale-range 0 1 keeps sparse nonnegative data sparse")
    return scaled, ranges


def cross_validation_line(data, params, folds, source=None):
    """LIBSVM's -v output: the accuracy (for the one-class SVM, of its +1 / -1
    against the file's labels, as LIBSVM), or for regression the MSE and
    squared correlation, or for ranking its measures."""
    import numpy as np

    from .prediction import regression_summary
    from .training.train import cross_val_predict
    pred = cross_val_predict(data, params, folds, source=source)
    if params.task == "r":
        return regression_summary(pred, data.labels).line("Cross Validation ")
    if params.task == "p":
        from .data.queries import ranking_summary
        return ranking_summary(pred, data.labels, data.qid).line("Cross Validation ")
    return "Cross Validation Accuracy = %g%%" % (100.0 * float(np.mean(pred == data.labels)))


# ---------------------------------------------------------------- searches

def _search_c(data, params, opts, hooks, scaling, n_features):
    """-C: LIBLINEAR's lines through ``hooks.echo``, the best C's line through
    ``hooks.result``, then (``best_model``) the model at the best C (and,
    for regression, p)."""
    from .selection.param_search import CPath, max_c, search_c
    from .training.train import train
    folds = opts.search_folds
    hooks.echo(f"Doing parameter search with {folds}-fold cross validation.")
    seen = CPath()

    def on_point(point):
        hooks.echo(point.line())
        seen.points.append(point)
        b = seen.best
        bar.best(f"best C = {b.C:g}, CV accuracy {100.0 * b.accuracy:g}%" if b.mse is None
                 else f"best C = {b.C:g}, p = {b.p:g}, CV MSE {b.mse:g}")

    with _bar(hooks, "C path") as plain:
        bar = _SearchBar(plain)
        path = search_c(data, params, folds, progress=bar.progress, on_point=on_point, start_p=opts.start_p,
                        on_max=lambda: hooks.echo(f"WARNING: maximum C ({max_c(params):g}) reached."))
    line = path.best_line()
    hooks.result(line)
    if not opts.best_model:
        return RunResult(lines=[line], search=path)
    best = dataclasses.replace(params, C=path.best.C)
    if path.best.p is not None:
        best = dataclasses.replace(best, epsilon=path.best.p)
    with _bar(hooks, f"training ({params.solver}) at C = {path.best.C:g}") as bar:
        model = train(data, best, progress=bar.set_to, log=hooks.log, n_features=n_features)
    return _finished(model, best, hooks, scaling, lines=[line], search=path)


def grid_axes(params, opts):
    """(the log2 C exponents, the log2 gamma exponents) of --grid, each None
    for ``null``: -log2c / -log2g as grid.py reads them (floats), else its
    defaults, which grid.py keeps as ints (its lines read ``5 -7``, not
    ``5.0 -7.0``); a linear kernel has no gamma."""
    from .selection.grid_search import DEFAULT_LOG2C, DEFAULT_LOG2G, parse_range

    def axis(given, default, flag):
        return parse_range(given, flag) if given else [int(x) for x in parse_range(default, flag)]
    c_exps = axis(opts.log2c, DEFAULT_LOG2C, "-log2c")
    g_exps = axis(opts.log2g, DEFAULT_LOG2G, "-log2g")
    if params.kernel_type in (0, 4):
        g_exps = None                  # a linear or precomputed kernel has no gamma
    return c_exps, g_exps


def _search_grid(data, params, opts, hooks, name, scaling, n_features):
    """--grid: grid.py's lines through ``hooks.echo`` and its .out file, the
    model at the best point (``best_model``), then grid.py's last line, the
    best point, through ``hooks.result``."""
    c_exps, g_exps = grid_axes(params, opts)
    if opts.grid_png:
        from .selection.grid_plot import require_matplotlib
        require_matplotlib()           # before the search, not after it
    out_path = opts.grid_out or ("null" if name is None else os.path.basename(name.rstrip("/")) + ".out")
    result = _grid_points(data, params, opts, hooks, c_exps, g_exps, out_path)
    if opts.grid_png:
        from .selection.grid_plot import contour_png
        contour_png(result, opts.grid_png, name or "<data>")
    ran = RunResult(lines=[result.best_line()], search=result)
    if opts.best_model:
        from .training.train import train
        best = result.best_params(params)
        with _bar(hooks, f"training ({params.solver}) at the best point") as bar:
            model = train(data, best, progress=bar.set_to, log=hooks.log, n_features=n_features)
        ran = _finished(model, best, hooks, scaling, lines=ran.lines, search=result)
    hooks.result(result.best_line())
    return ran


def _grid_client(opts):
    """A context giving the Dask client of --grid --engine dask (the
    scheduler at --scheduler, or a local cluster), or None (local workers)."""
    import contextlib
    if not _cluster_search(opts):
        return contextlib.nullcontext()
    from .distributed.engine import connect
    return connect(opts.scheduler)


def _grid_points(data, params, opts, hooks, c_exps, g_exps, out_path):
    """The GridResult of the search, each point's line to ``hooks.echo`` and,
    unless ``out_path`` is null, to the .out file as it comes (created with
    the first point: a search refused before it writes no file)."""
    from .selection.grid_search import search_grid
    out = []
    try:
        with _bar(hooks, "grid") as plain:
            bar = _SearchBar(plain)

            def on_point(result, point):
                hooks.echo(result.progress_line(point))
                bar.best(result.best_status())
                if out_path.lower() != "null":
                    if not out:
                        out.append(open(out_path, "w"))
                    out[0].write(point.out_line() + "\n")
                    out[0].flush()
            with _grid_client(opts) as client:
                return search_grid(data, params, c_exps, g_exps, opts.search_folds, opts.jobs, on_point,
                                   bar.progress, client=client)
    finally:
        for f in out:
            f.close()


# ------------------------------------------------------- out of core, Dask

def _streamed(source, params, opts, hooks):
    """The model of an out-of-core run (:mod:`svmtrain.training.streamed`):
    a reading bar, then a training bar."""
    from .training.streamed import train_streamed
    bars = [_bar(hooks, "reading", total=_size_of(source), unit="B", unit_scale=True)]

    def progress(done, total, status=None):
        if len(bars) == 1:          # training has started: the reading bar is done
            bars[0].close()
            bars.append(_bar(hooks, f"training ({params.solver}, streamed)"))
        bars[1].set_to(done, total, status)

    try:
        return train_streamed(source, params, memory_limit_mb=opts.memory_limit,
                              shuffle_buffer=opts.shuffle_buffer, cache_path=_cache_path(source, opts.cache),
                              chunk_rows=opts.chunk_size, read_progress=bars[0].advance,
                              progress=None if hooks.bar is None else progress, log=hooks.log, say=hooks.say)
    finally:
        for bar in bars:
            bar.close()


def _on_cluster(source, params, opts, hooks):
    """The model trained on the partitions that ``source`` names (a file, a
    glob, a directory or a list file) on the cluster at ``opts.scheduler``
    (None: a LocalCluster for the run)."""
    from .distributed.engine import connect
    from .distributed.partitions import expand
    from .distributed.training import check_supported, train

    if opts.folds is not None:
        raise ParameterError("-v (cross-validation) is not supported with --engine dask")
    if opts.cache not in (None, False, True, ""):
        raise ParameterError("--cache=PATH names one file; with --engine dask give --cache alone "
                             "(each partition gets its cache beside it)")
    check_supported(params)
    specs = expand(source)
    with connect(opts.scheduler) as client:
        with _bar(hooks, f"training ({params.solver}, dask)") as bar:
            model, _, _ = train(specs, params, client, progress=bar.set_to, log=hooks.log, notify=hooks.say,
                                cache=opts.cache not in (None, False), source=source)
    return model
