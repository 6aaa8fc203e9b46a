"""svm-grid: LIBSVM's tools/grid.py (Debian's svm-grid) in one process.

grid.py's command line, ranges, order of points, standard output and .out
file; each point is cross-validated in this process (``svm-train --grid``,
:func:`svmtrain.run.run`) on data parsed once, never by a svm-train process
per point. The svm-train options of the line (LIBSVM's spellings or
svm-train's own) are read by svm-train's parser (:func:`train_line`).
"""
import dataclasses
import importlib.util
import os
import re
import sys

import click

from .._version import __version__
from ..errors import ParameterError
from ._errors import handle_errors, run_and_exit
from ._progress import Progress, bars_wanted

PROG = "svm-grid"

USAGE = """\
Usage: svm-grid [grid_options] [svm_options] dataset

Search C and gamma by cross-validation as LIBSVM's grid.py (svm-grid) does,
in this one process: the same ranges, order of points, lines and .out file.

grid_options :
-log2c {begin,end,step | "null"} : the range of log2(C) (default -5,15,2)
    "null" -- do not search C
-log2g {begin,end,step | "null"} : the range of log2(gamma) (default 3,-15,-2)
    "null" -- do not search gamma
-v n : n-fold cross validation (default 5)
-svmtrain pathname : accepted and ignored (every point is trained here)
-gnuplot {pathname | "null"} :
    pathname -- accepted and ignored (the plot is drawn with matplotlib)
    "null"   -- do not plot
-out {pathname | "null"} : the output file (default dataset.out)
    "null"   -- do not write it
-png pathname : the contour plot (default dataset.png; drawn when matplotlib is
    installed, an error without it when -png is given)
-resume [pathname] : go on from an output file (default dataset.out): its
    points are not trained again; the new ones are appended to -out's file

svm_options : svm-train options (LIBSVM's -t, -m, -w1 5, -e, -h, ... or
svm-train's own -s NAME, --jobs N, -q, ...); default -s smo, LIBSVM's C-SVC
with an RBF kernel. -q: no progress bar (the lines are printed as grid.py's).
"""


@dataclasses.dataclass
class GridLine:
    """grid.py's own options of a command line (the rest is ``passed``)."""
    dataset: str
    log2c: str = None
    log2g: str = None
    folds: int = None
    out: str = None            # None: dataset.out; "null": none
    png: str = None            # None: dataset.png when matplotlib is installed
    plot: bool = True          # False after -gnuplot null
    resume: str = None
    notes: list = dataclasses.field(default_factory=list)
    passed: list = dataclasses.field(default_factory=list)

    @property
    def title(self):
        return os.path.split(self.dataset)[1]


def parse_grid_line(argv):
    """The GridLine of ``argv`` (the words after svm-grid), as grid.py
    reads them: the dataset last, its options before; ParameterError for a
    line grid.py refuses (-c, -g, both axes null) or cannot read."""
    if not argv:
        raise ParameterError("missing dataset (usage: svm-grid [grid_options] [svm_options] dataset)")
    line = GridLine(argv[-1])
    options = list(argv[:-1])
    i = 0

    def value(flag):
        if i + 1 >= len(options):
            raise ParameterError(f"option {flag} needs a value")
        return options[i + 1]

    while i < len(options):
        a = options[i]
        if a in ("-log2c", "-log2g"):
            setattr(line, a[1:], value(a))
            i += 1
        elif a == "-v":
            v = value(a)
            try:
                line.folds = int(v)
            except ValueError:
                raise ParameterError(f"-v takes the number of folds (got {v})") from None
            i += 1
        elif a in ("-c", "-g"):
            raise ParameterError("Use -log2c and -log2g.")
        elif a == "-svmtrain":
            line.notes.append(f"-svmtrain {value(a)} ignored: every point is cross-validated in this process")
            i += 1
        elif a == "-gnuplot":
            v = value(a)
            if v == "null":
                line.plot = False
            else:
                line.notes.append(f"-gnuplot {v} ignored: the contour plot is drawn with matplotlib (-png FILE)")
            i += 1
        elif a == "-out":
            line.out = value(a)
            i += 1
        elif a == "-png":
            line.png = value(a)
            i += 1
        elif a == "-resume":
            if i == len(options) - 1 or options[i + 1].startswith("-"):
                line.resume = line.title + ".out"
            else:
                line.resume = options[i + 1]
                i += 1
        else:
            line.passed.append(a)
        i += 1
    if line.log2c == "null" and line.log2g == "null":
        raise ParameterError("-log2c and -log2g should not be null simultaneously")
    return line


def train_line(prog, args):
    """(TrainParams, the RunOptions fields given) of svm-train's options
    ``args`` (a list ending with the data file, which is returned third), read
    as svm-train reads them: foreign spellings translated, then svm-train's
    click options. A word that svm-train would take as MODEL_FILE is refused."""
    from ..params import TrainParams, check_params
    from ..run import RunOptions
    from . import train
    from .foreign import translate_train
    args = translate_train(list(args), train.main)
    ctx = click.Context(train.main, info_name=prog)
    try:
        with ctx:
            click.Command.parse_args(train.main, ctx, args)
    except click.ClickException as e:
        raise ParameterError(e.format_message()) from None
    values = ctx.params
    if values.get("model_file") is not None:
        raise ParameterError(f"unexpected argument {values['train_file']!r} before the dataset "
                             f"{values['model_file']!r}")
    names = {f.name for f in dataclasses.fields(TrainParams)}
    given = {k: v for k, v in values.items() if k in names}
    given["class_weights"] = dict(given.get("class_weights") or ())
    params = check_params(TrainParams(**given))
    run_fields = {f.name for f in dataclasses.fields(RunOptions)}
    run_given = {k: v for k, v in values.items() if k in run_fields and k != "grid"}
    return params, run_given, values["train_file"], bool(values.get("quiet"))


# -------------------------------------------------------------- output

class _Lines:
    """Lines to standard output, above the progress bar when one is shown."""

    def __init__(self, bars):
        self.bars = bars

    def __call__(self, line):
        if self.bars:
            from tqdm import tqdm
            tqdm.write(line, file=sys.stdout)
        else:
            click.echo(line)


def grid_hooks(prog, quiet, echo=True):
    """The Hooks of a grid run: grid.py's lines (``echo``) and last line to
    standard output, a bar (points done, best so far) on a terminal unless
    -q, warnings unless -q."""
    from ..run import Hooks
    show = bars_wanted(quiet)
    lines = _Lines(show)

    def warn(text):
        if not quiet:
            click.echo(f"{prog}: warning: {text}", err=True)

    return Hooks(bar=lambda desc, **kw: Progress(show, desc, **kw), log=None,
                 echo=lines if echo else (lambda s: None), result=lines,
                 say=lambda text: click.echo(f"{prog}: {text}", err=True), warn=warn)


def matplotlib_installed():
    return importlib.util.find_spec("matplotlib") is not None


def plot_path(line, c_exps, g_exps):
    """(the PNG to draw, or None; a note to print after the search, or None):
    grid.py draws one when both axes are searched, unless -gnuplot null;
    without matplotlib, -png FILE stops the run before the search and the
    default dataset.png is only noted as missing."""
    if not line.plot or c_exps is None or g_exps is None:
        return None, None
    if line.png is not None:
        return line.png, None
    png = line.title + ".png"
    if not matplotlib_installed():
        return None, (f"no contour plot {png}: matplotlib is not installed (pip install 'svmtrain[plot]'; "
                      "-gnuplot null skips the plot)")
    return png, None


# ---------------------------------------------------------------- resume

_RATE = re.compile(r"rate=([0-9.]+)")
_LOG2C = re.compile(r"log2c=([0-9.-]+)")
_LOG2G = re.compile(r"log2g=([0-9.-]+)")


def read_resume(path):
    """{(log2c, log2g): rate} of a grid.py .out file (None for an axis a line
    lacks), in file order; a line without ``rate=`` is skipped, as grid.py."""
    if not os.path.exists(path):
        raise ParameterError(f"{path}: file for resumption not found")
    found = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, text in enumerate(f, 1):
            rate = _RATE.search(text)
            if rate is None:
                continue
            try:
                key = tuple(None if m is None else float(m.group(1)) for m in (_LOG2C.search(text),
                                                                                _LOG2G.search(text)))
                found[key] = float(rate.group(1))
            except ValueError:
                raise ParameterError(f"{path}:{number}: not a grid.py line: {text.strip()!r}") from None
    return found


def _status(result, point):
    """The words in brackets of grid.py's line after ``point``: the best so far."""
    return result.progress_line(point).rsplit(" (", 1)[1][:-1]


def _resumed_search(line, params, opts, hooks, c_exps, g_exps, png, quiet):
    """-resume: the points of ``line.resume`` first (``[resumed]`` lines,
    not written again), then every other point of the grid, one run each,
    appended to the .out file; the contour plot and the last line as
    grid.py's. Returns the GridResult of every point shown."""
    from ..io.reader import read_libsvm
    from ..run import run
    from ..selection.grid_search import GridPoint, GridResult, grid_points
    done = read_resume(line.resume)
    out_path = line.out or line.title + ".out"
    data = read_libsvm(line.dataset, chunk_rows=opts.chunk_size, threads=params.threads)
    result = GridResult()
    for (c, g), rate in done.items():
        p = GridPoint(c, g, rate)
        result.add(p)
        hooks.echo(result.progress_line(p).replace("[local]", "[resumed]", 1))
    todo = [pt for pt in grid_points(c_exps, g_exps) if pt not in done]
    quiet_hooks = dataclasses.replace(hooks, bar=None, echo=lambda s: None, result=lambda s: None)
    shown = {}
    out = None if out_path == "null" else open(out_path, "a")
    try:
        with Progress(bars_wanted(quiet), "grid", total=len(todo)) as bar:
            for k, (c, g) in enumerate(todo, 1):
                point_opts = dataclasses.replace(opts, log2c="null" if c is None else f"{c!r},{c!r},1",
                                                 log2g="null" if g is None else f"{g!r},{g!r},1",
                                                 grid_out="null", grid_png=None, best_model=False)
                rate = run(data, params, point_opts, quiet_hooks).search.points[0].rate
                p = GridPoint(c, g, rate)
                result.add(p)
                shown[(c, g)] = p
                hooks.echo(result.progress_line(p))
                if out is not None:
                    out.write(p.out_line() + "\n")
                    out.flush()
                bar.set_to(k, len(todo), _status(result, p))
    finally:
        if out is not None:
            out.close()
    if png:
        from ..selection.grid_plot import contour_png
        plotted = GridResult(points=[shown.get(pt) or GridPoint(pt[0], pt[1], done[pt])
                                     for pt in grid_points(c_exps, g_exps)], best=result.best)
        contour_png(plotted, png, line.title)
    hooks.result(result.best_line())
    return result


# ------------------------------------------------------------------ main

@click.command(add_help_option=False,
               context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
def main(argv):
    if not argv:
        click.echo(USAGE, nl=False)
        sys.exit(1)              # as grid.py
    if argv[0] in ("--help", "-help"):
        click.echo(USAGE, nl=False)
        return
    if argv[0] == "--version":
        click.echo(f"{PROG} (svmtrain) {__version__}")
        return
    with handle_errors(PROG):
        _run(list(argv))


def _run(argv):
    from .._numba.start import skip_blas_probe
    skip_blas_probe()
    from ..run import RunOptions, check_run, grid_axes, run
    line = parse_grid_line(argv)
    for note in line.notes:
        click.echo(f"{PROG}: {note}", err=True)
    folds = [] if any(a.split("=")[0] == "--folds" for a in line.passed) else ["--folds", "libsvm"]   # grid.py's
    params, given, dataset, quiet = train_line(PROG, line.passed + folds + ["--grid", line.dataset])
    opts = RunOptions(**given)
    opts.grid, opts.log2c, opts.log2g, opts.best_model = True, line.log2c, line.log2g, False
    if line.folds is not None:
        opts.folds = line.folds
    c_exps, g_exps = grid_axes(params, opts)
    opts.grid_png, plot_note = plot_path(line, c_exps, g_exps)
    opts.grid_out = line.out or line.title + ".out"
    check_run(params, opts)
    hooks = grid_hooks(PROG, quiet)
    if line.resume is not None:
        if opts.grid_png:
            from ..selection.grid_plot import require_matplotlib
            require_matplotlib()
        result = _resumed_search(line, params, opts, hooks, c_exps, g_exps, opts.grid_png, quiet)
    else:
        result = run(dataset, params, opts, hooks).search
    if plot_note:
        click.echo(f"{PROG}: {plot_note}", err=True)
    return result


def console_main():
    """The ``svm-grid`` console script: :func:`main`, then a fast exit."""
    run_and_exit(main)


if __name__ == "__main__":
    console_main()
