"""svm-train: read a LIBSVM/SVMlight file, train, write a model."""
import os
from dataclasses import MISSING, fields

import click

from .._version import __version__
from ..errors import ParameterError
from ..params import TrainParams
from ._errors import handle_errors, parse_foreign, run_and_exit
from .capabilities import show_capabilities
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
    ``--cache=PATH``), so ``svm-train --cache data.svm`` trains on data.svm.
    Help is generated from the solver registry (svmtrain.cli.usage): no
    arguments print the short usage (click's no_args_is_help, its exit
    status), ``--help`` every option by group, ``--help -s NAME`` one
    solver's page; ``--help`` wins over the rest of the line."""

    def parse_args(self, ctx, args):
        from . import usage
        if not ctx.resilient_parsing:
            with handle_errors("svm-train"):
                ctx.meta[usage.PAGE] = usage.page_asked(args, self)
            if ctx.meta[usage.PAGE] not in (None, usage.SHORT):
                click.echo(self.get_help(ctx), color=ctx.color)
                ctx.exit(0)
        if "--cache" in args:
            end = args.index("--") if "--" in args else len(args)
            args = ["--cache=" if a == "--cache" and i < end else a for i, a in enumerate(args)]
        if args and not ctx.resilient_parsing:
            args = parse_foreign("svm-train", translate_train, args, self)
        return super().parse_args(ctx, args)

    def get_help(self, ctx):
        from . import usage
        return usage.help_text(ctx, self)


def _precompile(ctx, _param, value):
    """--precompile: compile every solver's kernels now (parallel processes), then exit."""
    if not value or ctx.resilient_parsing:
        return
    with handle_errors("svm-train"):
        from .precompile import precompile
        precompile(log=click.echo)
    ctx.exit(0)


def _server(ctx, _param, value):
    """--server status|start|stop: the start-up server's state, start or stop it (svmtrain.cli.client), then exit."""
    if value is None or ctx.resilient_parsing:
        return
    from .client import server_control
    ctx.exit(server_control("svm-train", value, echo=click.echo))


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
@click.option("--capabilities", is_flag=True, is_eager=True, expose_value=False, callback=show_capabilities,
              help="Print every solver against every task, loss, kernel and layer (docs/capabilities.md) and exit.")
@click.option("--precompile", is_flag=True, is_eager=True, expose_value=False, callback=_precompile,
              help="Compile every solver's kernels now, in parallel processes, and exit (make demo runs it; "
              "otherwise a solver's first run compiles its own).")
@click.option("--server", type=click.Choice(["status", "start", "stop"]), is_eager=True, expose_value=False,
              callback=_server, help="The start-up server (README, \"The start-up server\"): status lists this "
              "user's servers, start starts this environment's now, stop stops them all; then exit. "
              "SVMTRAIN_SERVER=0 runs without one.")
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


def _run(train_file, model_file, folds, chunk_size, model_format, record_time, quiet, verbose, class_weights,
         options):
    """Parse (the run's options, its TrainParams), run (:func:`svmtrain.run.run`),
    report (:mod:`svmtrain.cli._report`: the summary line, the model file)."""
    from .._numba.start import skip_blas_probe
    skip_blas_probe()
    from ..params import check_params
    from ..run import RunOptions, check_run, run
    from . import _report
    given = {f.name: options.pop(f.name) for f in fields(RunOptions) if f.name in options}
    # -C for regression searches p from a given -p down
    opts = RunOptions(folds=folds, chunk_size=chunk_size, start_p=options.get("epsilon"), **given)
    params = check_params(TrainParams(class_weights=dict(class_weights), **options))
    check_run(params, opts, model_format)
    if model_file is None and opts.trains_model:
        model_file = _default_model_file(train_file, opts)
    opts.best_model = model_file is not None

    def on_model(model, params, echo, log):
        _report.finish(model, params, echo, log, record_time, model_file, model_format)
    run(train_file, params, opts, _report.hooks(quiet, verbose, on_model))


def _default_model_file(train_file, opts):
    """TRAIN_FILE's base name + '.model' in the current directory, as LIBLINEAR."""
    if train_file == "-":
        raise ParameterError("give MODEL_FILE when TRAIN_FILE is standard input")
    if opts.engine == "dask" and any(c in train_file for c in "*?["):
        raise ParameterError("give MODEL_FILE when TRAIN_FILE is a pattern")
    return os.path.basename(train_file.rstrip("/")) + ".model"


def console_main():
    """The ``svm-train`` console script: :func:`main`, then a fast exit."""
    run_and_exit(main)


if __name__ == "__main__":
    console_main()
