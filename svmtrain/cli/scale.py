"""svm-scale: scale a data file's features (and labels) as LIBSVM's svm-scale."""
import contextlib
import os
import shutil
import sys
import tempfile

import click

from .._version import __version__
from ..errors import InputFormatError, ParameterError
from ._errors import handle_errors, run_and_exit

HELP = """Scale DATA_FILE (LIBSVM/SVMlight text; .gz/.bz2/.xz; - for standard
input) to [lower, upper] per feature and write it to standard output, as
LIBSVM's svm-scale does (the same bytes). Save the ranges with -s and apply
them to other data with -r:

\b
  svm-scale -s range train > train.scale
  svm-scale -r range test > test.scale

The file is read twice (min/max, then scaling); standard input is first
copied to a temporary file in $TMPDIR."""

PROG = "svm-scale"


@click.command(help=HELP, no_args_is_help=True,
               context_settings={"help_option_names": ["--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name=PROG, message="%(prog)s (svmtrain) %(version)s")
@click.option("-l", "lower", type=float, default=-1.0, show_default=True, help="x scaling lower limit.")
@click.option("-u", "upper", type=float, default=1.0, show_default=True, help="x scaling upper limit.")
@click.option("-y", "y_limits", type=float, nargs=2, default=None, metavar="Y_LOWER Y_UPPER",
              help="Scale the labels (targets) to [Y_LOWER, Y_UPPER] too (default: no y scaling).")
@click.option("-s", "save", metavar="SAVE_FILENAME", help="Save the scaling parameters (range file) to this file.")
@click.option("-r", "restore", metavar="RESTORE_FILENAME",
              help="Restore the scaling parameters from this range file (its lower/upper and y section win).")
@click.option("--chunk-size", type=int, default=None, help="Rows per chunk when reading.")
@click.argument("data_file")
def main(data_file, lower, upper, y_limits, save, restore, chunk_size):
    with handle_errors(PROG):
        from .._numba.start import skip_blas_probe
        skip_blas_probe()
        if not (upper > lower) or (y_limits is not None and not (y_limits[1] > y_limits[0])):
            raise ParameterError("inconsistent lower/upper specification (need lower < upper)")
        if save and restore:
            raise ParameterError("cannot use -r and -s simultaneously")
        if chunk_size is not None and chunk_size <= 0:
            raise ParameterError(f"--chunk-size must be > 0 (got {chunk_size})")
        if save and data_file != "-":
            from ..io.atomic import same_file
            if same_file(save, data_file):
                raise ParameterError(f"SAVE_FILENAME {save} is the same file as {data_file}; refusing to overwrite it")
        with _two_pass_source(data_file) as path:
            _run(path, data_file, lower, upper, y_limits, save, restore, chunk_size)


@contextlib.contextmanager
def _two_pass_source(data_file):
    """A path that can be read twice: DATA_FILE itself, or for ``-`` a
    temporary copy of standard input (removed afterwards); errors in it are
    reported as ``<stdin>``."""
    if data_file != "-":
        yield data_file
        return
    fd, tmp = tempfile.mkstemp(prefix="svm-scale.", suffix=".stdin")
    try:
        with os.fdopen(fd, "wb") as f:
            shutil.copyfileobj(sys.stdin.buffer, f, 1 << 20)
        try:
            yield tmp
        except InputFormatError as e:
            if e.path != tmp:
                raise
            raise InputFormatError("<stdin>", e.line, e.problem) from None
    finally:
        os.unlink(tmp)


def _run(path, name, lower, upper, y_limits, save, restore, chunk_size):
    from ..io.atomic import atomic_write
    from ..io.reader import iter_chunks
    from ..preprocess.scaling import Ranges, Scaler, compute_stats

    ranges = Ranges.read(restore) if restore else None     # a bad range file stops before any output
    stats = compute_stats(iter_chunks(path, chunk_rows=chunk_size))
    if ranges is not None:
        scaler, warned = Scaler.restore(stats, ranges, y_limits)
        if not ranges.in_order():
            _warn(f"the feature lines of {restore} are not in increasing index order; "
                  "applied in file order as LIBSVM does (a later line wins)")
        if len(warned):
            shown = ", ".join(str(i) for i in warned[:5]) + (", ..." if len(warned) > 5 else "")
            _warn(f"{len(warned)} feature(s) of {name} not in the range file {restore} "
                  f"are scaled to 0, i.e. left out (index {shown})")
    else:
        scaler = Scaler.from_stats(stats, lower, upper, y_limits)
        if save:
            with atomic_write(save, "wb") as f:       # the range file, whole or not at all
                f.write(Ranges.from_stats(stats, lower, upper, y_limits).to_bytes())
    out = sys.stdout.buffer
    try:
        new_nnz = scaler.write(iter_chunks(path, chunk_rows=chunk_size), out)
        out.flush()
    except BrokenPipeError:
        # the reader went away (svm-scale data | head): stop quietly, as
        # LIBSVM's does on SIGPIPE; exit code 1
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    if new_nnz > stats.nnz:
        _warn(f"original #nonzeros {stats.nnz} > new #nonzeros {new_nnz}; if feature values are "
              "non-negative and sparse, use -l 0 rather than the default -l -1")


def _warn(message):
    click.echo(f"{PROG}: warning: {message}", err=True)


def console_main():
    """The ``svm-scale`` console script: :func:`main`, then a fast exit."""
    run_and_exit(main)


if __name__ == "__main__":
    console_main()
