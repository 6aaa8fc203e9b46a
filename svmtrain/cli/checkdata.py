"""svm-checkdata: LIBSVM's tools/checkdata.py (Debian's svm-checkdata).

Checks every line of a file against LIBSVM's format and prints
checkdata.py's messages (``line N: ...``, then ``Found N lines with
error.`` and exit status 1, or ``No error.`` and 0). LIBSVM's format is
stricter than svmtrain's reader, which also takes comments, ``qid:``,
indices in any order: a file svm-checkdata flags may still train here.
"""
import os
import sys

import click

from .._version import __version__
from ._errors import run_and_exit

PROG = "svm-checkdata"
USAGE = f"Usage: {PROG} dataset"


def _number(text):
    """A real number as checkdata.py takes it: Python's float, but no nan or inf."""
    low = text.lower()
    if "nan" in low or "inf" in low:
        raise ValueError(text)
    return float(text)


def _label_problem(label):
    try:
        for part in label.split(","):
            _number(part)
    except ValueError:
        if "," in label:
            return f"label {label} is not a valid multi-label form"
        return f"label {label} is not a number"
    return None


def line_problems(line):
    """checkdata.py's messages for one line (its text with its newline)."""
    problems = []
    if not line.endswith("\n"):
        problems.append("missing a newline character in the end")
    words = line.split()
    if not words:
        return problems + ["missing label, perhaps an empty line?"]
    label = _label_problem(words[0])
    if label:
        problems.append(label)
    features = words[1:]
    previous = -1
    for k, word in enumerate(features):
        pair = word.split(":")
        try:
            if len(pair) != 2:
                raise ValueError(word)
            index = int(pair[0])
            _number(pair[1])
        except ValueError:
            problems.append(f"feature '{word}' not an <index>:<value> pair, <index> integer, "
                            "<value> real number ")
            continue
        # index 0 is allowed: the rows of a precomputed kernel start with 0:ID
        if index < 0:
            problems.append(f"feature index must be positive; wrong feature {word}")
        elif index <= previous:
            problems.append(f"feature indices must be in an ascending order, previous/current features "
                            f"{features[k - 1]} {word}")
        previous = index
    return problems


def check(path, echo=click.echo):
    """Print the messages of the file at ``path`` (plain, or gzip/bzip2/xz as
    svm-train reads it); return the exit status."""
    import io
    from ..io.reader import open_source
    bad = 0
    with io.TextIOWrapper(open_source(path), encoding="utf-8", errors="replace") as f:
        for number, line in enumerate(f, 1):
            problems = line_problems(line)
            for p in problems:
                echo(f"line {number}: {p}")
            bad += bool(problems)
    if bad:
        echo(f"Found {bad} lines with error.")
        return 1
    echo("No error.")
    return 0


@click.command(add_help_option=False, context_settings={"ignore_unknown_options": True})
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
def main(argv):
    """Check DATASET against LIBSVM's format, as LIBSVM's checkdata.py does."""
    if len(argv) == 1 and argv[0] in ("--help", "--version"):
        click.echo(USAGE if argv[0] == "--help" else f"{PROG} (svmtrain) {__version__}")
        return
    if len(argv) != 1:
        click.echo(USAGE)
        sys.exit(1)
    if not os.path.exists(argv[0]):
        click.echo(f"dataset {argv[0]} not found")
        sys.exit(1)
    try:
        sys.exit(check(argv[0]))
    except BrokenPipeError:
        sys.exit(128 + 13)
    except OSError as e:
        click.echo(f"{PROG}: {argv[0]}: {e.strerror or e}", err=True)
        sys.exit(1)


def console_main():
    """The ``svm-checkdata`` console script: :func:`main`, then a fast exit."""
    run_and_exit(main)


if __name__ == "__main__":
    console_main()
