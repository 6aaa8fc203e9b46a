"""svm-subset: LIBSVM's tools/subset.py (Debian's svm-subset), reproducible.

Pick SUBSET_SIZE rows of a data file, stratified by class (``-s 0``, the
default: subset.py's rule, the rarest class first and at least one row of
each) or uniformly (``-s 1``), and write them, and optionally the other
rows, as the file's own lines in the file's order. The file is read (and
checked) by svmtrain's reader; the draw is one vectorised numpy operation
from ``--seed`` (default 1), so a run is repeatable (subset.py draws anew on
every run).
"""
import math
import re
import sys

import click
import numpy as np

from .._version import __version__
from ..errors import ParameterError
from ._errors import handle_errors, run_and_exit

PROG = "svm-subset"

HELP = """Select SUBSET_SIZE rows of DATASET (LIBSVM/SVMlight text; .gz/.bz2/.xz; -
for standard input) as LIBSVM's subset.py does: -s 0 stratified by class
(the rarest class first, at least one row of each; classification only), -s
1 at random. OUTPUT1 gets the selected lines (default: standard output),
OUTPUT2 the other lines, each as written in DATASET and in its order (blank
and comment lines go to OUTPUT2). The draw depends on --seed only, so the
same line gives the same subset (subset.py's differs on every run)."""

# a line that svmtrain's reader skips: blanks, then the end of the line or a comment
_SKIPPED = re.compile(rb"(?m)^[ \t\r\x0b\x0c]*[#\n]")


@click.command(help=HELP, no_args_is_help=True,
               context_settings={"help_option_names": ["--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name=PROG, message="%(prog)s (svmtrain) %(version)s")
@click.option("-s", "method", type=click.IntRange(0, 1), default=0, show_default=True,
              help="0: stratified selection (classification only); 1: random selection.")
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the draw.")
@click.argument("dataset")
@click.argument("subset_size", type=int)
@click.argument("output1", required=False)
@click.argument("output2", required=False)
def main(dataset, subset_size, output1, output2, method, seed):
    with handle_errors(PROG):
        from .._numba.start import skip_blas_probe
        skip_blas_probe()
        subset(dataset, subset_size, output1, output2, method, seed)


def read_lines(path):
    """(the file's text as a uint8 array, ending with a newline; the start
    offset of every line, one more at the end; which lines are data rows;
    the rows' labels as svmtrain's reader reads them)."""
    from ..io.reader import display_name, open_source, parse_bytes
    with open_source(path) as f:
        text = f.read()
    if text and not text.endswith(b"\n"):
        text += b"\n"
    data = parse_bytes(text, display_name(path))
    buf = np.frombuffer(text, np.uint8)
    starts = np.concatenate(([0], np.flatnonzero(buf == 10) + 1)).astype(np.int64)
    is_row = np.ones(len(starts) - 1, bool)
    skipped = np.fromiter((m.start() for m in _SKIPPED.finditer(text)), np.int64)
    is_row[np.searchsorted(starts, skipped)] = False
    if int(is_row.sum()) != data.n_rows:       # the reader's rule for skipped lines is _SKIPPED's
        raise RuntimeError(f"{int(is_row.sum())} data lines but {data.n_rows} rows read")
    return buf, starts, is_row, data.labels


def stratified(labels, size, rng):
    """subset.py's stratified selection: classes from the rarest (ties: the
    first seen first), each ``min(left, max(1, ceil(count * size / n)))``
    rows, drawn without replacement; the sorted row numbers."""
    n = len(labels)
    classes, first, inverse, counts = np.unique(labels, return_index=True, return_inverse=True,
                                                return_counts=True)
    take = np.zeros(len(classes), np.int64)
    left = size
    for k in np.lexsort((first, counts)).tolist():
        s = int(min(left, max(1, math.ceil(counts[k] * (float(size) / n)))))
        if s == 0:
            raise ParameterError(f"failed to have at least one row per class in {size} rows ({len(classes)} "
                                 "classes): regression data, or classes too unbalanced or small; use -s 1")
        take[k] = s
        left -= s
    # every row a random key; within its class, the rows with the smallest keys are taken
    order = np.lexsort((rng.random(n), inverse))
    rank = np.arange(n) - np.repeat(np.cumsum(counts) - counts, counts)
    return np.sort(order[rank < take[inverse[order]]])


def select(labels, size, method, seed):
    """The sorted row numbers of the subset (see :func:`stratified`)."""
    n = len(labels)
    if size < 0:
        raise ParameterError(f"subset_size must be >= 0 (got {size})")
    if size > n:
        raise ParameterError(f"subset_size {size} is larger than the {n} rows of the data")
    rng = np.random.default_rng(seed)
    if method == 0:
        return stratified(labels, size, rng)
    return np.sort(rng.choice(n, size, replace=False))


def subset(dataset, size, output1=None, output2=None, method=0, seed=1):
    """Write the subset's lines to ``output1`` (None: standard output) and the
    other lines to ``output2`` (None: nowhere); returns the row numbers taken."""
    from ..io.atomic import atomic_write, same_file
    for out in (output1, output2):
        if out is not None and dataset != "-" and same_file(out, dataset):
            raise ParameterError(f"{out} is the same file as {dataset}; refusing to overwrite it")
    buf, starts, is_row, labels = read_lines(dataset)
    rows = select(labels, size, method, seed)
    chosen = np.zeros(len(is_row), bool)
    chosen[np.flatnonzero(is_row)[rows]] = True
    per_byte = np.repeat(chosen, np.diff(starts))
    if output1 is None:
        sys.stdout.buffer.write(buf[per_byte].tobytes())
        sys.stdout.buffer.flush()
    else:
        with atomic_write(output1, "wb") as f:
            f.write(buf[per_byte].tobytes())
    if output2 is not None:
        with atomic_write(output2, "wb") as f:
            f.write(buf[~per_byte].tobytes())
    return rows


def console_main():
    """The ``svm-subset`` console script: :func:`main`, then a fast exit."""
    run_and_exit(main)


if __name__ == "__main__":
    console_main()
