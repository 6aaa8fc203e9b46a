"""svm-train: read a LIBSVM/SVMlight file, train, write a model."""
import os
from dataclasses import MISSING, fields

import click

from .._version import __version__
from ..errors import ParameterError
from ..params import TrainParams
from ._errors import handle_errors, parse_foreign, run_and_exit
from ._progress import Progress, bars_wanted
from .foreign import translate_train

HELP = """Train an SVM on TRAIN_FILE (LIBSVM/SVMlight text; .gz/.bz2/.xz; - for
standard input) and write MODEL_FILE (default: TRAIN_FILE's base name +
'.model' in the current directory, as LIBLINEAR). LIBSVM, LIBLINEAR and
SVMlight option spellings work as there or stop with the svmtrain
equivalent (README, "Coming from LIBSVM, LIBLINEAR or SVMlight"); a line
with LIBSVM's -b, -m or -h and no -s NAME trains LIBSVM's model (an RBF
C-SVC by -s smo unless -t says otherwise)."""


class _Command(click.Command):
    """Foreign spellings are translated first (svmtrain.cli.foreign).
    ``--cache`` alone never takes the next word as its PATH (that is
    ``--cache=PATH``), so ``svm-train --cache data.svm`` trains on data.svm."""

    def parse_args(self, ctx, args):
        if "--cache" in args:
            end = args.index("--") if "--" in args else len(args)
            args = ["--cache=" if a == "--cache" and i < end else a for i, a in enumerate(args)]
        if args and not ctx.resilient_parsing:
            args = parse_foreign("svm-train", translate_train, args, self)
        return super().parse_args(ctx, args)


def _precompile(ctx, _param, value):
    """--precompile: compile every solver's kernels now (parallel processes), then exit."""
    if not value or ctx.resilient_parsing:
        return
    with handle_errors("svm-train"):
        from .precompile import precompile
        precompile(log=click.echo)
    ctx.exit(0)


def click_spelling(f):
    """click.option's keyword arguments for the TrainParams field ``f``,
    from its one description (:func:`svmtrain.params.option`)."""
    spelling = dict(f.metadata["spelling"])
    kw = {"help": f.metadata["help"]}
    default = None if f.default is MISSING else f.default
    if "choices" in spelling:
        kw["type"] = click.Choice(list(spelling.pop("choices")))
    if "int_range" in spelling:
        kw["type"] = click.IntRange(*spelling.pop("int_range"))
    if "type" in spelling:
        kw["type"] = spelling.pop("type")
    if "metavar" in spelling:
        kw["metavar"] = spelling.pop("metavar")
    if spelling.pop("pair", False):
        kw.update(type=(float, float), multiple=True)
        return kw
    if spelling.pop("as_bool", False):
        kw["callback"] = lambda _ctx, _param, value: bool(value)
        default = int(default)
    elif spelling.pop("flag", False):
        kw["is_flag"] = True
    elif default is not None:
        kw["show_default"] = True
    if spelling:
        raise TypeError(f"TrainParams.{f.name}: unknown spelling {sorted(spelling)}")
    kw["default"] = default
    return kw


def param_options(command):
    """svm-train's options for the TrainParams fields, in their order."""
    for f in reversed(fields(TrainParams)):
        command = click.option(*f.metadata["flags"], f.name, **click_spelling(f))(command)
    return command


@click.command(cls=_Command, help=HELP, no_args_is_help=True,
               context_settings={"help_option_names": ["--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name="svm-train", message="%(prog)s (svmtrain) %(version)s")
@click.option("--precompile", is_flag=True, is_eager=True, expose_value=False, callback=_precompile,
              help="Compile every solver's kernels now, in parallel processes, and exit (make demo runs it; "
              "otherwise a solver's first run compiles its own).")
@param_options
@click.option("-v", "folds", type=int, help="N-fold cross-validation: print the accuracy, write no model.")
@click.option("--scale", "scale", is_flag=True,
              help="Scale the features as svm-scale does (to --scale-range) and keep the ranges in the model: "
              "svm-predict scales test rows the same way (svmtrain's model format only).")
@click.option("--scale-range", "scale_range", type=(float, float), default=(-1.0, 1.0), show_default=True,
              metavar="LOWER UPPER", help="--scale: svm-scale's -l and -u.")
@click.option("--grid", "grid", is_flag=True,
              help="Search C and gamma of a kernel solver by cross-validation (-v N, default 5) on LIBSVM grid.py's "
              "grid: grid.py's lines, its .out file, the best 'C gamma rate' last; with MODEL_FILE, the model there.")
@click.option("-log2c", "log2c", default=None, metavar="B,E,S", help="--grid: log2 of C from B to E by S, or null "
              "(default -5,15,2).")
@click.option("-log2g", "log2g", default=None, metavar="B,E,S",
              help="--grid: log2 of gamma, or null (default 3,-15,-2).")
@click.option("-out", "grid_out", default=None, metavar="FILE", help="--grid: the .out file, or null "
              "(default: TRAIN_FILE's name + .out).")
@click.option("-png", "grid_png", default=None, metavar="FILE",
              help="--grid: a contour plot of the rates (matplotlib).")
@click.option("--jobs", type=int, default=None, help="--grid: worker processes (default: all cores).")
@click.option("-C", "find_c", is_flag=True,
              help="Search C by warm-started cross-validation (-v N folds, default 5; LIBLINEAR's -C): one line "
              "per C, then 'Best C = ...'; with MODEL_FILE, train at the best C and write the model.")
@click.option("--chunk-size", type=int, default=None, help="Rows per chunk when reading (memory vs. speed).")
@click.option("--cache", "cache", default=None, metavar="[=PATH]",
              help="Keep the parsed data in a binary cache file (TRAIN_FILE.svmcache, or PATH given as "
              "--cache=PATH) and load it instead of parsing on later runs; rebuilt when TRAIN_FILE changes.")
@click.option("--stream", is_flag=True,
              help="Out of core: parse TRAIN_FILE once into a binary cache (--cache's, or a temporary "
              "one) and train from it block by block in bounded memory (pegasos, sgd, ocas, bmrm, dcd, asset; "
              "sbp and asset --inner train in memory only).")
@click.option("--memory-limit", type=float, metavar="MB",
              help="Memory for the data, buffers and solver state with --stream (implies --stream; "
              "default 1024).")
@click.option("--shuffle-buffer", type=int, metavar="ROWS",
              help="Rows in the shuffle buffer of pegasos, sgd and asset with --stream (default: what "
              "--memory-limit allows).")
@click.option("--model-format", type=click.Choice(["svmtrain", "liblinear", "libsvm"]), default="svmtrain",
              show_default=True, help="Model file format: svmtrain's, LIBLINEAR's (linear models) or "
              "LIBSVM's (kernel expansions).")
@click.option("--record-time", is_flag=True,
              help="Record the training time in the model header (the file then differs between runs).")
@click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Train here, or on a Dask cluster (-s ocas, bmrm, pegasos, sgd; TRAIN_FILE may then be a glob, "
              "a directory or a list file of partitions).")
@click.option("--scheduler", metavar="ADDRESS",
              help="Dask scheduler address (--engine dask; default: a local cluster, one worker per core).")
@click.option("--trace", "trace", metavar="FILE", help="Write a CSV row per epoch / outer iteration / check "
              "(time, updates, objective, gap, training error) to FILE (see docs/traces.md).")
@click.option("--trace-test", metavar="TEST", help="Also trace the accuracy on TEST (with --trace).")
@click.option("--trace-every", type=int, metavar="STEPS",
              help="With --trace: also a row every STEPS steps within an epoch (pegasos).")
@click.option("-q", "quiet", is_flag=True, help="Quiet: no progress bars, no summary, no warnings.")
@click.option("--verbose", is_flag=True, help="Also print the solvers' per-iteration lines.")
@click.argument("train_file")
@click.argument("model_file", required=False)
def main(train_file, model_file, folds, chunk_size, model_format, record_time, quiet, verbose, class_weights,
         **options):
    with handle_errors("svm-train"):
        _run(train_file, model_file, folds, chunk_size, model_format, record_time, quiet, verbose, class_weights,
             options)


def solver_log(quiet, verbose):
    """Where the solvers' ``log`` lines go: per-iteration detail to stdout with
    --verbose only; lines starting with WARNING always, unless -q."""
    def log(line):
        if not quiet and (verbose or line.startswith("WARNING")):
            click.echo(line)
    return log


def _run(train_file, model_file, folds, chunk_size, model_format, record_time, quiet, verbose, class_weights,
         options):
    from .._numba.start import skip_blas_probe
    skip_blas_probe()
    from ..io.reader import display_name, read_libsvm
    from ..params import TrainParams, check_params

    cache = options.pop("cache", None)
    stream = {k: options.pop(k) for k in ("stream", "memory_limit", "shuffle_buffer")}
    engine, scheduler = options.pop("engine"), options.pop("scheduler")
    trace = {k: options.pop(k) for k in ("trace", "trace_test", "trace_every")}
    find_c = options.pop("find_c")
    scale, scale_range = options.pop("scale"), options.pop("scale_range")
    grid = {k: options.pop(k) for k in ("grid", "log2c", "log2g", "grid_out", "grid_png", "jobs")}
    given_p = options.get("epsilon")        # -C for regression searches p from a given -p down
    params = check_params(TrainParams(class_weights=dict(class_weights), **options))
    if scheduler and engine != "dask":
        raise ParameterError("--scheduler needs --engine dask")
    _check_trace(trace, folds)
    if chunk_size is not None and chunk_size <= 0:
        raise ParameterError(f"--chunk-size must be > 0 (got {chunk_size})")
    if scale:
        if stream["stream"] or stream["memory_limit"] is not None or engine == "dask":
            raise ParameterError("--scale scales in memory: with --stream or --engine dask, run svm-scale first "
                                 "(svm-scale -s RANGE_FILE)")
        if model_format != "svmtrain":
            raise ParameterError(f"--scale keeps the ranges in the model, which a {model_format} model file cannot "
                                 "hold: use svmtrain's format, or svm-scale -s RANGE_FILE and -r at predict time")
        if not scale_range[0] < scale_range[1]:
            raise ParameterError(f"--scale-range needs LOWER < UPPER (got {scale_range[0]:g} {scale_range[1]:g})")
    elif scale_range != (-1.0, 1.0):
        raise ParameterError("--scale-range belongs to --scale")
    if find_c and grid["grid"]:
        raise ParameterError("give -C (linear solvers) or --grid (kernel solvers), not both")
    if find_c:
        from ..selection.param_search import check_search
        check_search(params, 5 if folds is None else folds)
        if stream["stream"] or stream["memory_limit"] is not None or engine == "dask" or trace["trace"]:
            raise ParameterError("-C searches in memory: it cannot be combined with --stream, --engine dask or "
                                 "--trace")
    if grid["grid"]:
        from ..selection.grid_search import check_grid
        check_grid(params, 5 if folds is None else folds)
        if stream["stream"] or stream["memory_limit"] is not None or engine == "dask" or trace["trace"]:
            raise ParameterError("--grid searches in memory: it cannot be combined with --stream, --engine dask or "
                                 "--trace")
    elif any(grid[k] is not None for k in ("log2c", "log2g", "grid_out", "grid_png", "jobs")):
        raise ParameterError("-log2c, -log2g, -out, -png and --jobs belong to --grid")
    if model_file is None and folds is None and not find_c and not grid["grid"]:
        if train_file == "-":
            raise ParameterError("give MODEL_FILE when TRAIN_FILE is standard input")
        if engine == "dask" and any(c in train_file for c in "*?["):
            raise ParameterError("give MODEL_FILE when TRAIN_FILE is a pattern")
        model_file = os.path.basename(train_file.rstrip("/")) + ".model"
    show = bars_wanted(quiet)
    echo = (lambda s: None) if quiet else click.echo
    log = solver_log(quiet, verbose)
    streamed = stream["stream"] or stream["memory_limit"] is not None
    if not streamed and stream["shuffle_buffer"] is not None:
        raise ParameterError("--shuffle-buffer applies to --stream")
    if trace["trace"] is not None and (streamed or engine == "dask"):
        raise ParameterError("--trace traces in-memory training; it cannot be combined with --stream or --engine dask")
    if engine == "dask":
        if streamed:
            raise ParameterError("--stream trains on this machine; it cannot be combined with --engine dask")
        from .dask import train_on_cluster
        model, _ = train_on_cluster(train_file, params, scheduler, cache, folds, show, log)
        return _finish(model, params, echo, log, record_time, model_file, model_format)
    if streamed:
        if folds is not None:
            raise ParameterError("-v (cross-validation) trains in memory; it cannot be combined with --stream")
        model = _train_streamed(train_file, cache, chunk_size, params, stream, show, log)
        return _finish(model, params, echo, log, record_time, model_file, model_format)

    total = _size_of(train_file)
    with Progress(show, "reading", total=total, unit="B", unit_scale=True) as bar:
        def read(path):
            return read_libsvm(path, chunk_rows=chunk_size, progress=bar.advance, threads=params.threads)
        if cache is None:
            data = read(train_file)
        else:
            from ..io.cache import default_cache_path, load_or_build
            data = load_or_build(train_file, cache or default_cache_path(train_file), read,
                                 log=lambda s: click.echo(f"svm-train: {s}", err=True))
    if not quiet and params.task != "p":
        warn_qid(data, display_name(train_file))
    scaling = None
    if scale:
        data, scaling = _scaled(data, scale_range, quiet)

    if find_c:
        return _search_c(data, params, 5 if folds is None else folds, show, echo, log, record_time, model_file,
                         model_format, scaling, given_p)
    if grid["grid"]:
        return _search_grid(data, params, 5 if folds is None else folds, grid, display_name(train_file), show,
                            echo, log, record_time, model_file, model_format, scaling)
    if folds is not None:
        click.echo(_cross_validation_lines(data, params, folds, display_name(train_file)))
        return

    from ..training.train import train
    monitor = None
    if trace["trace"] is not None:
        from ..training.trace import Trace
        test = read_libsvm(trace["trace_test"], chunk_rows=chunk_size) if trace["trace_test"] else None
        monitor = Trace(data.labels, test=test, steps=trace["trace_every"])
    with Progress(show, f"training ({params.solver})") as bar:
        model = train(data, params, progress=bar.set_to, log=log, source=display_name(train_file),
                      monitor=monitor)
    _finish(model, params, echo, log, record_time, model_file, model_format, scaling)
    if monitor is not None:
        monitor.write(trace["trace"])


def _scaled(data, scale_range, quiet):
    """(data scaled as svm-scale -l LOWER -u UPPER would scale it, its Ranges)."""
    from ..preprocess.scaling import Ranges, compute_stats, scale_rows
    ranges = Ranges.from_stats(compute_stats([data]), *scale_range)
    scaled = scale_rows(ranges, data)
    if not quiet and scaled.nnz > 2 * data.nnz:
        click.echo(f"svm-train: warning: --scale made {scaled.nnz - data.nnz} zeros nonzero (as svm-scale does); "
                   "--scale-range 0 1 keeps sparse nonnegative data sparse", err=True)
    return scaled, ranges


def _search_c(data, params, folds, show, echo, log, record_time, model_file, model_format, scaling=None,
              start_p=None):
    """-C: LIBLINEAR's lines (with -q only the best C), then with MODEL_FILE
    the model at the best C (and, for regression, p)."""
    import dataclasses

    from ..selection.param_search import max_c, search_c
    echo(f"Doing parameter search with {folds}-fold cross validation.")
    with Progress(show, "C path") as bar:
        path = search_c(data, params, folds, progress=bar.set_to, on_point=lambda p: echo(p.line()),
                        start_p=start_p, on_max=lambda: echo(f"WARNING: maximum C ({max_c(params):g}) reached."))
    click.echo(path.best_line())
    if model_file is None:
        return
    from ..training.train import train
    best = dataclasses.replace(params, C=path.best.C)
    if path.best.p is not None:
        best = dataclasses.replace(best, epsilon=path.best.p)
    with Progress(show, f"training ({params.solver}) at C = {path.best.C:g}") as bar:
        model = train(data, best, progress=bar.set_to, log=log)
    _finish(model, best, echo, log, record_time, model_file, model_format, scaling)


def _search_grid(data, params, folds, grid, name, show, echo, log, record_time, model_file, model_format,
                 scaling=None):
    """--grid: grid.py's lines and .out file, the model at the best point
    (with MODEL_FILE), then grid.py's last line, the best point."""
    from ..selection.grid_search import DEFAULT_LOG2C, DEFAULT_LOG2G, parse_range, search_grid
    c_exps = parse_range(grid["log2c"] or DEFAULT_LOG2C, "-log2c")
    g_exps = parse_range(grid["log2g"] or DEFAULT_LOG2G, "-log2g")
    if params.kernel_type == 0:
        g_exps = None                  # a linear kernel has no gamma
    if grid["grid_png"]:
        from ..selection.grid_plot import require_matplotlib
        require_matplotlib()           # before the search, not after it
    out_path = grid["grid_out"] or os.path.basename(name.rstrip("/")) + ".out"
    out = None if out_path.lower() == "null" else open(out_path, "w")
    try:
        with Progress(show, "grid") as bar:
            def on_point(result, point):
                echo(result.progress_line(point))
                if out is not None:
                    out.write(point.out_line() + "\n")
                    out.flush()
            result = search_grid(data, params, c_exps, g_exps, folds, grid["jobs"], on_point, bar.set_to)
    finally:
        if out is not None:
            out.close()
    if grid["grid_png"]:
        from ..selection.grid_plot import contour_png
        contour_png(result, grid["grid_png"], name)
    if model_file is not None:
        from ..training.train import train
        best = result.best_params(params)
        with Progress(show, f"training ({params.solver}) at the best point") as bar:
            model = train(data, best, progress=bar.set_to, log=log)
        _finish(model, best, echo, log, record_time, model_file, model_format, scaling)
    click.echo(result.best_line())


def _cross_validation_lines(data, params, folds, source):
    """LIBSVM's -v output: the accuracy (for the one-class SVM, of its +1 / -1
    against the file's labels, as LIBSVM), or for regression the MSE and
    squared correlation."""
    import numpy as np

    from ..prediction import regression_summary
    from ..training.train import cross_val_predict
    pred = cross_val_predict(data, params, folds, source=source)
    if params.task == "r":
        return regression_summary(pred, data.labels).line("Cross Validation ")
    if params.task == "p":
        from ..data.queries import ranking_summary
        return ranking_summary(pred, data.labels, data.qid).line("Cross Validation ")
    return "Cross Validation Accuracy = %g%%" % (100.0 * float(np.mean(pred == data.labels)))


def warn_qid(data, source):
    """One warning when a classification training set carries qid: values."""
    if data.qid is not None and data.qid.any():
        click.echo(f"svm-train: warning: {source} has qid: on its rows; qid is used by ranking only and is "
                   "ignored for classification", err=True)


def _finish(model, params, echo, log, record_time, model_file, model_format, scaling=None):
    """The summary line, then the model file in the format asked for
    (``scaling``: the --scale ranges the model keeps)."""
    model.scaling = scaling
    _summary(model, params, echo, log)
    if record_time:
        model.header.append(("train_time", round(model.train_time, 6)))

    from ..io.atomic import remove_stale_temps
    remove_stale_temps(model_file)   # left by a run that was killed while writing it
    if model_format == "liblinear":
        from ..io.liblinear_format import write_liblinear_model
        write_liblinear_model(model, model_file)
    elif model_format == "libsvm":
        from ..io.libsvm_format import write_libsvm_model
        write_libsvm_model(model, model_file)
    else:
        from ..io.model_io import save_model
        save_model(model, model_file)


def _train_streamed(train_file, cache, chunk_size, params, stream, show, log):
    """The model of an out-of-core run (svmtrain.training.streamed)."""
    from ..io.cache import default_cache_path
    from ..training.streamed import train_streamed
    cache_path = None if cache is None else (cache or default_cache_path(train_file))
    bars = [Progress(show, "reading", total=_size_of(train_file), unit="B", unit_scale=True)]

    def progress(done, total, status=None):
        if len(bars) == 1:          # training has started: the reading bar is done
            bars[0].close()
            bars.append(Progress(show, f"training ({params.solver}, streamed)"))
        bars[1].set_to(done, total, status)

    try:
        return train_streamed(train_file, params, memory_limit_mb=stream["memory_limit"],
                              shuffle_buffer=stream["shuffle_buffer"], cache_path=cache_path,
                              chunk_rows=chunk_size, read_progress=bars[0].advance, progress=progress,
                              log=log, say=lambda s: click.echo(f"svm-train: {s}", err=True))
    finally:
        for bar in bars:
            bar.close()


def _check_trace(trace, folds):
    if trace["trace"] is None and (trace["trace_test"] is not None or trace["trace_every"] is not None):
        raise ParameterError("--trace-test and --trace-every need --trace FILE")
    if trace["trace"] is not None and folds is not None:
        raise ParameterError("--trace does not combine with -v (cross-validation)")
    if trace["trace_every"] is not None and trace["trace_every"] <= 0:
        raise ParameterError(f"--trace-every must be > 0 (got {trace['trace_every']})")


def _size_of(path):
    if path == "-":
        return None
    try:
        return os.path.getsize(path)
    except OSError:
        return None


def _summary(model, params, echo, log):
    """One line at the end: data, parameters, iterations, objective, support
    vectors, training time (LIBLINEAR's field names); with several binary
    problems (one-vs-rest) their totals and mean objective, and each
    problem's own line to ``log`` (shown with --verbose).

    Warnings (an iteration cap reached) come from the solvers through ``log``.
    """
    header = dict(model.header)
    if params.task == "o":
        return _one_class_summary(model, params, echo, header)
    if params.solver == "smo":
        return _dual_summary(model, params, echo, log, header)
    lam = header["lambda_used"]
    results = model.fit_results
    k = len(results)
    objective = sum(r.objective for r in results) / k
    fields = [f"#iter = {sum(r.n_iter for r in results)}" + (f" ({k} one-vs-rest problems)" if k > 1 else ""),
              f"Objective value = {objective:.10g} (lambda form{', mean' if k > 1 else ''}; "
              f"C form {objective / lam:.10g})"]
    n_sv = getattr(model, "n_sv", None)
    if n_sv is None and all("n_sv" in r.info for r in results):
        n_sv = sum(r.info["n_sv"] for r in results)
    if n_sv is not None:
        fields.append(f"nSV = {n_sv}")
    fields.append(f"Training time = {model.train_time:.3f} s")
    if k > 1:
        for label, r in zip(model.labels, results):
            sv = f", nSV = {r.info['n_sv']}" if "n_sv" in r.info else ""
            log(f"class {label:g}: #iter = {r.n_iter}, Objective value = {r.objective:.10g}{sv}")
    what = "regression" if params.task == "r" else f"{len(model.labels)} classes"
    if params.task == "p":
        info = results[0].info
        what = f"ranking ({info.get('n_queries', 0)} queries, {info.get('n_pairs', 0)} pairs)"
    echo(f"{params.solver}: {header['n_train']} examples, {model.n_features} features, {what}, "
         f"lambda = {lam:.6g} (C = {header['C_used']:.6g}): " + ", ".join(fields))


def _dual_summary(model, params, echo, log, header):
    """The line of -s smo, in LIBSVM's terms: iterations, the dual objective
    ``obj`` and ``rho`` (of each one-vs-one problem to ``log`` when there
    are several), support vectors, training time."""
    results = model.fit_results
    k = len(results)
    fields = [f"#iter = {sum(r.n_iter for r in results)}" + (f" ({k} one-vs-one problems)" if k > 1 else "")]
    if k == 1:
        fields.append(f"obj = {results[0].info['obj']:.6f}, rho = {results[0].info['rho']:.6f}")
    for r in results if k > 1 else ():
        log(f"#iter = {r.n_iter}, obj = {r.info['obj']:.6f}, rho = {r.info['rho']:.6f}, nSV = {r.info['n_sv']}")
    fields += [f"nSV = {model.n_sv}", f"Training time = {model.train_time:.3f} s"]
    what = "regression" if params.task == "r" else f"{len(model.labels)} classes"
    echo(f"{params.solver}: {header['n_train']} examples, {model.n_features} features, "
         f"{what} (C = {header['C_used']:.6g}): " + ", ".join(fields))


def _one_class_summary(model, params, echo, header):
    """The one-class line: nu, iterations, LIBLINEAR's objective 1/2 |w|^2
    (LIBSVM's 1/2 alpha^T Q alpha; for asset, on the mapped rows), rho, support
    vectors (a kernel model's expansion terms), training time."""
    r = model.fit_results[0]
    rho = -float(model.b[0])
    fields = [f"#iter = {r.n_iter}", f"Objective value = {r.objective:.10g} (1/2 alpha^T Q alpha)",
              f"rho = {rho:.10g}"]
    n_sv = getattr(model, "n_sv", None)
    if n_sv is None:
        n_sv = r.info.get("n_sv")
    if n_sv is not None:
        fields.append(f"nSV = {n_sv}")
    fields.append(f"Training time = {model.train_time:.3f} s")
    echo(f"{params.solver}: {header['n_train']} examples, {model.n_features} features, one-class, "
         f"nu = {params.nu:g}: " + ", ".join(fields))


def console_main():
    """The ``svm-train`` console script: :func:`main`, then a fast exit."""
    run_and_exit(main)


if __name__ == "__main__":
    console_main()
