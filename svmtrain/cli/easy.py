"""svm-easy: LIBSVM's tools/easy.py (Debian's svm-easy) in one process.

easy.py's steps, files and lines: scale the training file to [-1, 1]
(TRAIN.range, TRAIN.scale, as svm-scale -s), search C and gamma on grid.py's
default grid (TRAIN.scale.out, and TRAIN.scale.png with matplotlib), train
LIBSVM's RBF C-SVC at the best point (TRAIN.model, LIBSVM's format), then
with TEST scale it with TRAIN.range (TEST.scale) and predict (TEST.predict).
Every file is written in the current directory under the base name of its
input, as easy.py writes them; no step starts another process.
"""
import os
import sys

import click

from .._version import __version__
from ..errors import ParameterError
from ._errors import handle_errors, run_and_exit
from .grid import grid_hooks, matplotlib_installed, train_line

PROG = "svm-easy"

HELP = """Scale TRAIN_FILE, choose C and gamma by 5-fold cross-validation on
LIBSVM grid.py's default grid, train LIBSVM's RBF C-SVC at the best point and,
with TEST_FILE, scale it the same way and predict it: LIBSVM's easy.py
(svm-easy) in one process, with its files in the current directory
(TRAIN.range, TRAIN.scale, TRAIN.scale.out, TRAIN.scale.png with matplotlib,
TRAIN.model; TEST.scale, TEST.predict) and its lines."""


@click.command(help=HELP, no_args_is_help=True,
               context_settings={"help_option_names": ["--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name=PROG, message="%(prog)s (svmtrain) %(version)s")
@click.option("--jobs", type=int, default=None, help="Worker processes of the grid search (default: all cores).")
@click.option("-q", "quiet", is_flag=True, help="No progress bar and no warnings (easy.py's lines are printed).")
@click.argument("train_file")
@click.argument("test_file", required=False)
def main(train_file, test_file, jobs, quiet):
    with handle_errors(PROG):
        from .._numba.start import skip_blas_probe
        skip_blas_probe()
        easy(train_file, test_file, jobs, quiet)


def _files(train_file, test_file):
    """easy.py's file names: each input's base name in the current directory."""
    name = os.path.split(train_file)[1]
    files = {"scale": name + ".scale", "model": name + ".model", "range": name + ".range"}
    if test_file is not None:
        test_name = os.path.split(test_file)[1]
        if test_name == name:
            raise ParameterError(f"{train_file} and {test_file} have the same base name: their .scale files "
                                 "would be one file")
        files.update(test_scale=test_name + ".scale", predict=test_name + ".predict")
    return files


def _check_readable(path, what):
    if path != "-" and not os.path.isfile(path):
        raise ParameterError(f"{path}: {what} not found")


def easy(train_file, test_file=None, jobs=None, quiet=False, echo=click.echo):
    """easy.py's steps (see the module doc); returns the best GridPoint."""
    _check_readable(train_file, "training file")
    if test_file is not None:
        _check_readable(test_file, "testing file")
    files = _files(train_file, test_file)
    for key, path in files.items():
        for given in (train_file, test_file):
            if given is not None and os.path.exists(path) and os.path.samefile(path, given):
                raise ParameterError(f"{path} would overwrite the input {given}: run svm-easy in another "
                                     "directory")
    warn = (lambda text: None) if quiet else (lambda text: click.echo(f"{PROG}: warning: {text}", err=True))

    echo("Scaling training data...")
    _scale(train_file, files["scale"], warn, save=files["range"])

    echo("Cross validation...")
    from ..io.reader import read_libsvm
    from ..run import RunOptions, run
    params, _, scaled, _ = train_line(PROG, ["--folds", "libsvm", "--grid", files["scale"]])     # easy.py's folds
    data = read_libsvm(scaled)
    png = files["scale"] + ".png" if matplotlib_installed() else None
    if png is None and not quiet:
        click.echo(f"{PROG}: no contour plot {files['scale']}.png: matplotlib is not installed "
                   "(pip install 'svmtrain[plot]')", err=True)
    hooks = grid_hooks(PROG, quiet, echo=False)
    hooks.result = lambda line: None
    grid = run(data, params, RunOptions(grid=True, grid_out=files["scale"] + ".out", jobs=jobs,
                                        best_model=False), hooks).search
    if png is not None:
        from ..selection.grid_plot import contour_png
        contour_png(grid, png, files["scale"])
    best = grid.best
    c, g = 2.0 ** best.log2c, 2.0 ** best.log2g
    echo(f"Best c={c}, g={g} CV rate={best.rate}")

    echo("Training...")
    models = []
    hooks.model = lambda model, _params: models.append(model)
    run(data, grid.best_params(params), RunOptions(), hooks)
    _write_model(models[0], files["model"], warn)
    echo(f"Output model: {files['model']}")
    if test_file is None:
        return best

    echo("Scaling testing data...")
    _scale(test_file, files["test_scale"], warn, restore=files["range"])
    echo("Testing...")
    from ..io.atomic import atomic_write
    from ..io.model_io import load_model
    from ..io.reader import iter_chunks
    from ..prediction import predict_stream
    model = load_model(files["model"])           # what svm-predict reads
    with atomic_write(files["predict"]) as f:
        summary = predict_stream(iter_chunks(files["test_scale"]), model, f)
    echo(summary.line())
    echo(f"Output prediction: {files['predict']}")
    return best


def _scale(source, target, warn, save=None, restore=None):
    """svm-scale -s SAVE SOURCE > TARGET (to [-1, 1]), or -r RESTORE: the
    same bytes as svm-scale writes, and its warnings."""
    from ..io.atomic import atomic_write
    from ..io.reader import iter_chunks
    from ..preprocess.scaling import Ranges, Scaler, compute_stats
    stats = compute_stats(iter_chunks(source))
    if restore is not None:
        ranges = Ranges.read(restore)
        scaler, dropped = Scaler.restore(stats, ranges)
        if len(dropped):
            shown = ", ".join(str(i) for i in dropped[:5]) + (", ..." if len(dropped) > 5 else "")
            warn(f"{len(dropped)} feature(s) of {source} not in the range file {restore} are scaled to 0, "
                 f"i.e. left out (index {shown})")
    else:
        scaler = Scaler.from_stats(stats, -1.0, 1.0)
        with atomic_write(save, "wb") as f:
            f.write(Ranges.from_stats(stats, -1.0, 1.0).to_bytes())
    with atomic_write(target, "wb") as f:
        new_nnz = scaler.write(iter_chunks(source), f)
    if new_nnz > stats.nnz:
        warn(f"{target}: original #nonzeros {stats.nnz} > new #nonzeros {new_nnz}; if feature values are "
             "non-negative and sparse, svm-scale -l 0 rather than easy.py's -l -1 keeps them sparse")


def _write_model(model, path, warn):
    """LIBSVM's model file (LIBSVM's svm-predict reads it), or svmtrain's
    where LIBSVM's format cannot hold the model (more than two classes,
    labels that are not integers), with a warning that says why."""
    from ..io.libsvm_format import write_libsvm_model
    from ..io.model_io import save_model
    try:
        write_libsvm_model(model, path)
    except ParameterError as e:
        save_model(model, path)
        warn(f"{path} is in svmtrain's format, for svmtrain's svm-predict ({e})")


def console_main():
    """The ``svm-easy`` console script: :func:`main`, then a fast exit."""
    run_and_exit(main)


if __name__ == "__main__":
    sys.exit(console_main())
