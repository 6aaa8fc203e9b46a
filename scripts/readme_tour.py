#!/usr/bin/env python3
"""Fill README.md's one-minute tour with the output of a real run.

Runs every tour command (svm-train / svm-predict of *this* checkout, through
the running interpreter, in a fresh temporary directory where ``data`` links to
the repository's data/) and rewrites the block between

    <!-- tour:begin -->
    <!-- tour:end -->

in README.md with each command and what it printed (standard output and
standard error, in the order written).

    python scripts/readme_tour.py            # rewrite the block (make readme-tour)
    python scripts/readme_tour.py --check    # exit 1 if the block differs from a fresh run
    python scripts/readme_tour.py --print    # print the fresh block, change nothing

``--check`` compares after masking the figures that are times (``Training
time = 0.012 s``, ``1.3 it/s``, ``tim=0.243``, ...), so only a change of
behaviour makes it fail. Exit codes: 0 fine, 1 the README is out of date,
2 a tour command did not exit as expected (nothing is written then).

To change the tour, edit TOUR below: each step is a sentence of prose and a
list of commands; ``svm-train``/``svm-predict`` run this checkout's code,
``head -n N FILE`` is done in Python; anything else runs as is. A command
expected to fail names its exit status (``expect=2``).
"""
import argparse
import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BEGIN = "<!-- tour:begin -->"
END = "<!-- tour:end -->"
TIMEOUT = 900  # seconds per command; the first run also compiles numba's kernels

# (prose before the commands, [(command, expected exit status), ...])
TOUR = [
    ("Train the default solver (`-s dcd`, LIBLINEAR's `-s 3`) on the bundled "
     "heart_scale; the model goes to `heart_scale.model` in the current directory:",
     [("svm-train data/heart_scale.xz", 0)]),
    ("Pegasos on UCI Adult (a9a, 32,561 rows), then predict the held-out a9a.t "
     "(one label per line in the output file, the accuracy on the terminal):",
     [("svm-train -s pegasos -l 1e-4 data/a9a.xz a9a.model", 0),
      ("svm-predict data/a9a.t.xz a9a.model a9a.t.predictions", 0)]),
    ("Five-fold cross-validation (any solver; no model is written):",
     [("svm-train -v 5 -c 1 data/heart_scale.xz", 0)]),
    ("A kernel SVM (RBF kernel, gamma 0.01, C 100) trained by ASSET on 512 Nystrom "
     "landmarks, then prediction as before:",
     [("svm-train -s asset -g 0.01 -c 100 data/a9a.xz a9a-rbf.model", 0),
      ("svm-predict data/a9a.t.xz a9a-rbf.model a9a-rbf.predictions", 0)]),
    ("A LIBSVM command line does what it did there (here an RBF C-SVC, trained by `-s smo`, LIBSVM's own solver), "
     "as does a LIBLINEAR one (here `-s 6`, L1-regularised logistic regression, `-s cdn`: a sparse model); "
     "one that would train something else stops and names the equivalent:",
     [("svm-train -t 2 -g 0.5 -c 10 data/heart_scale.xz heart-rbf.model", 0),
      ("svm-train -s 6 -c 0.1 data/heart_scale.xz heart-l1.model", 0),
      ("svm-train -s 1 -W weights data/heart_scale.xz", 2)]),
    ("A model file that LIBLINEAR's `liblinear-predict` reads (`--model-format liblinear`); "
     "svmtrain's own format is readable text too (see [Model files](#model-files)):",
     [("svm-train -q --model-format liblinear data/heart_scale.xz heart_scale.liblinear", 0),
      ("head -n 7 heart_scale.liblinear", 0)]),
]

# svm-train / svm-predict run this checkout's code, named as the console scripts: the
# entry points of pyproject.toml's [project.scripts] (these if it cannot be read).
DEFAULT_RUNNERS = {
    "svm-train": "svmtrain.cli.train:main",
    "svm-predict": "svmtrain.cli.predict:main",
}
RUNNER_CODE = "import sys; sys.argv[0] = {name!r}; from {module} import {func}; sys.exit({func}())"


def console_scripts():
    scripts = dict(DEFAULT_RUNNERS)
    try:
        text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return scripts
    section = re.search(r"^\[project\.scripts\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if section:
        for name, target in re.findall(r'^\s*"?([\w.-]+)"?\s*=\s*"([\w.]+:[\w.]+)"', section.group(1), re.M):
            scripts[name] = target
    return scripts

# Figures that are times: masked by --check.
TIME_PATTERNS = [
    re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?(?=\s*(?:s|sec|seconds|ms|it/s|s/it)\b)"),
    re.compile(r"(?<=tim=)\s*\d+(?:\.\d+)?"),
    re.compile(r"(?<=elapsed )\d+(?:\.\d+)?"),
    re.compile(r"\d+:\d\d(?::\d\d)?(?=[<,\]])"),  # tqdm's [00:01<00:02, ...]
]


class TourError(Exception):
    pass


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["PYTHONUNBUFFERED"] = "1"  # keep stdout and stderr in the order written
    env.pop("SVMTRAIN_DEBUG", None)
    env.setdefault("COLUMNS", "100")
    return env


def _head(argv, cwd):
    n, path = 10, None
    args = list(argv[1:])
    while args:
        a = args.pop(0)
        if a == "-n":
            n = int(args.pop(0))
        elif a.startswith("-n"):
            n = int(a[2:])
        else:
            path = a
    with open(Path(cwd) / path, encoding="utf-8", errors="replace") as f:
        lines = [line for _, line in zip(range(n), f)]
    return 0, "".join(lines)


def run_command(command, cwd, env, runners):
    argv = shlex.split(command)
    if argv[0] == "head":
        return _head(argv, cwd)
    if argv[0] in runners:
        module, func = runners[argv[0]].split(":")
        code = RUNNER_CODE.format(module=module, func=func, name=argv[0])
        argv = [sys.executable, "-c", code] + argv[1:]
    try:
        p = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise TourError(f"{command}: no answer after {TIMEOUT} s")
    return p.returncode, p.stdout.decode("utf-8", errors="replace")


def fresh_block(verbose=True):
    """Run the tour; return the text between the markers."""
    env = _env()
    runners = console_scripts()
    out = ["", "<!-- Written by scripts/readme_tour.py (make readme-tour); do not edit by hand. -->", ""]
    with tempfile.TemporaryDirectory(prefix="svmtrain-tour-") as tmp:
        os.symlink(ROOT / "data", Path(tmp) / "data")
        for prose, commands in TOUR:
            out += textwrap.wrap(prose, width=76, break_long_words=False, break_on_hyphens=False)
            out += ["", "```console"]
            for command, expect in commands:
                if verbose:
                    print(f"$ {command}", file=sys.stderr, flush=True)
                status, text = run_command(command, tmp, env, runners)
                if status != expect:
                    raise TourError(f"{command}: exit status {status}, expected {expect}; it printed:\n{text}")
                out.append(f"$ {command}")
                out += [line.rstrip() for line in text.rstrip("\n").splitlines()] if text.strip() else []
                if expect != 0:
                    out += ["$ echo $?", str(status)]
            out += ["```", ""]
    return "\n".join(out)


def split_readme(text):
    try:
        start = text.index(BEGIN) + len(BEGIN)
        end = text.index(END, start)
    except ValueError:
        raise TourError(f"{README} has no {BEGIN} ... {END} block")
    return text[:start], text[start:end], text[end:]


def mask(text):
    lines = []
    for line in text.strip().splitlines():
        for pattern in TIME_PATTERNS:
            line = pattern.sub("<t>", line)
        lines.append(line.rstrip())
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="exit 1 if README.md's tour differs from a fresh run (times masked)")
    mode.add_argument("--print", action="store_true", help="print the fresh block; change nothing")
    ap.add_argument("--readme", type=Path, default=README, help="the README to fill (default: %(default)s)")
    ap.add_argument("-q", "--quiet", action="store_true", help="do not echo the commands as they run")
    args = ap.parse_args(argv)
    try:
        if args.print:
            print(fresh_block(verbose=not args.quiet))
            return 0
        text = args.readme.read_text(encoding="utf-8")
        head, old, tail = split_readme(text)
        new = fresh_block(verbose=not args.quiet)
    except TourError as e:
        print(f"readme_tour: {e}", file=sys.stderr)
        return 2
    if args.check:
        a, b = mask(old), mask(new)
        if a == b:
            print(f"readme_tour: {args.readme.name}'s tour matches a fresh run (times masked)", file=sys.stderr)
            return 0
        sys.stderr.writelines(line + "\n" for line in difflib.unified_diff(
            a, b, f"{args.readme.name} (tour, times masked)", "fresh run (times masked)", lineterm=""))
        print(f"readme_tour: {args.readme.name}'s tour is out of date: run `make readme-tour`", file=sys.stderr)
        return 1
    updated = head + new + "\n" + tail
    if updated != text:
        tmp = args.readme.with_name(f".{args.readme.name}.tour.tmp")
        tmp.write_text(updated, encoding="utf-8")
        shutil.copymode(args.readme, tmp)
        os.replace(tmp, args.readme)
    print(f"readme_tour: wrote the tour into {args.readme}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
