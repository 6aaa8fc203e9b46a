"""One place that turns library exceptions into one-line messages and exit codes.

Exit codes: 2 for bad input, bad model files and bad parameters (as click's
usage errors), 1 for failures of the system (a file that cannot be
written) and for internal errors, 130 after Ctrl-C, 141 (silently) when
the reader of the output has gone (a closed pipe). Never a traceback
(unless SVMTRAIN_DEBUG is set).
"""
import contextlib
import os
import sys

import click

from ..errors import SvmtrainError


@contextlib.contextmanager
def handle_errors(prog):
    try:
        yield
    except SvmtrainError as e:
        _die(prog, str(e), 2)
    except KeyboardInterrupt:
        _die(prog, "interrupted; no files were written", 130)
    except MemoryError:
        _die(prog, "out of memory (try a smaller --chunk-size, or fewer rows)", 1)
    except BrokenPipeError:
        # the reader of the output went away (svm-train -C ... | head): stop without a word,
        # with the status of a process ended by SIGPIPE, as LIBSVM's and LIBLINEAR's tools
        sys.exit(128 + 13)
    except OSError as e:
        where = f"{e.filename}: " if getattr(e, "filename", None) else ""
        _die(prog, f"{where}{e.strerror or e}", 1)
    except Exception as e:  # a bug: still one line, the traceback on request
        if os.environ.get("SVMTRAIN_DEBUG"):
            raise
        _die(prog, f"internal error: {type(e).__name__}: {e} (please report it; "
                   "SVMTRAIN_DEBUG=1 shows the traceback)", 1)


def run_and_exit(command):
    """Run a click ``command`` as a console script, then end the process
    without the interpreter's teardown (numba's and LLVM's finalisers take
    ~0.13 s, a quarter of a small run). Everything the command writes is
    closed by then (model and prediction files are written atomically and
    closed; bars and clusters are closed by their context managers); its
    standard streams are flushed here. The exit code is the command's."""
    try:
        command.main()
        code = 0
    except SystemExit as e:
        code = e.code
    if not isinstance(code, int):       # sys.exit("message") or None
        if code is not None:
            print(code, file=sys.stderr)
        code = 0 if code is None else 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:                     # a closed pipe (svm-predict ... - | head): nothing more to say
        code = code or 1
    os._exit(code)


def parse_foreign(prog, translate, args, command):
    """``translate(args, command)`` (svmtrain.cli.foreign), or exit 2 with its one-line refusal."""
    try:
        return translate(args, command)
    except SvmtrainError as e:
        _die(prog, str(e), 2)


def _die(prog, message, code):
    click.echo(f"{prog}: {message}", err=True)
    sys.exit(code)
