"""Check that svmtrain.cli.precompile leaves nothing to compile for real runs.

    python scripts/check_precompile.py [--jobs N] [--data FILE] [--solvers dcd,ocas,...]
    python scripts/check_precompile.py --in-place [--jobs N] [--data FILE]

Copies the package into a temporary directory (so numba's in-tree cache
starts empty), runs ``precompile(jobs)`` there and prints its groups'
seconds and its wall time, then runs each command line below (svm-train
on FILE, default data/heart_scale.xz, then svm-predict with the model) in
a fresh interpreter with a numba compile-event listener and prints how
many functions each run compiled (0 expected) and which.

``--in-place`` precompiles the installed package itself (its own cache,
which the test suite then finds warm: ``make test`` runs this first, on a
fresh clone, where the cache starts empty) and runs every command line in
one interpreter (``RUN_ALL_AND_COUNT``). On a checkout whose cache some
earlier run filled, a kernel that precompile misses goes unnoticed: the
check proves something only where the cache started empty.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RUNS = [
    ["-s", "dcd"], ["-s", "dcd", "--loss", "squared-hinge", "-B", "1"], ["-s", "dcd", "-v", "3"],
    ["-s", "dcd", "--model-format", "liblinear"],
    ["-s", "pegasos"], ["-s", "pegasos", "-k", "8", "-R"],
    ["-s", "ocas"], ["-s", "ocas", "--ocas-method", "cp", "-B", "1"],
    ["-s", "sbp"], ["-s", "sbp", "-t", "1"], ["-s", "sbp", "--model-format", "libsvm"],
    ["-s", "pegasos", "-t", "2"],
    ["-s", "asset"], ["-s", "asset", "--approx", "fourier"], ["-s", "asset", "--inner", "dcd"],
    ["-s", "asset", "--inner", "pegasos"], ["-s", "asset", "--strongly-convex"],
    ["-s", "dcd", "--stream"], ["-s", "pegasos", "--stream"], ["-s", "ocas", "--stream"],
    ["-s", "asset", "--stream"], ["-s", "asset", "--approx", "fourier", "--stream"],
    ["--task", "r"], ["-s", "12", "-B", "1"], ["-s", "asset", "--task", "r", "--inner", "dcd"],
    ["--task", "o"], ["-s", "21", "-n", "0.2", "--model-format", "liblinear"],
    ["-s", "asset", "--task", "o", "--inner", "dcd", "--model-format", "libsvm"],
    ["-s", "ocas", "--task", "r"], ["-s", "ocas", "--loss", "log"], ["-s", "pegasos", "--loss", "log"],
    ["-s", "pegasos", "--task", "r"], ["-s", "pegasos", "--task", "r", "--stream"], ["-C", "-s", "2"], ["-C", "-s", "0"],
    ["-s", "sgd"], ["-s", "sgd", "--update", "sgdqn", "-B", "1"], ["-s", "sgd", "--update", "fobos", "--l1", "0.001"],
    ["-s", "sgd", "--loss", "log", "-R"], ["-s", "sgd", "--task", "r"], ["-s", "sgd", "--stream"],
    ["-s", "bmrm"], ["-s", "bmrm", "--stream"], ["-s", "norma"], ["-s", "cvm"],
    ["-s", "smo", "-t", "2"], ["-s", "smo", "-t", "2", "--working-set", "64"], ["-s", "smo", "-v", "3"], ["-t", "2", "-v", "3"],
    ["-s", "smo", "--nu", "0.3"], ["-s", "smo", "--task", "r", "--nu", "0.3"],
    ["-s", "smo", "--task", "r", "--working-set", "64"], ["-s", "ocas", "--multiclass", "cs", "--stream"],
    ["-s", "5"], ["-s", "6", "-B", "1", "--model-format", "liblinear"], ["-s", "cdn", "-R", "-w", "1", "2"],
    ["-s", "6", "-v", "3"], ["-C", "-s", "6"], ["-C", "-s", "5"],
    ["-s", "smo", "--grid", "-log2c", "-1,3,2", "-log2g", "-3,-1,2", "-v", "3", "--jobs", "1", "-out", "null"],
    ["-b", "1", "-t", "2"],
]




LISTENER = r"""
import json, os, sys, tempfile
from numba.core import event
compiled = []
class Listener(event.Listener):
    def on_start(self, ev):
        d = ev.data["dispatcher"]
        compiled.append(d.py_func.__module__ + "." + d.py_func.__qualname__ + str(ev.data["args"])[:60])
    def on_end(self, ev):
        pass
event.register("numba:compile", Listener())
"""

# argv: data file, then one svm-train argument list; prints the functions
# its run (svm-train, then svm-predict unless -v) compiled
RUN_AND_COUNT = LISTENER + r"""
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main
data, args = sys.argv[1], sys.argv[2:]
model = os.path.join(tempfile.mkdtemp(), "m")
train_main(["-q"] + args + [data, model], standalone_mode=False)
if "-v" not in args:
    predict_main(["-q", data, model, model + ".out"], standalone_mode=False)
print(json.dumps(compiled))
"""

# argv: data file, JSON list of svm-train argument lists; counts[k] is the
# list of functions run k (svm-train, then svm-predict unless -v) compiled
# (tests/test_readonly_install.py runs this loop too)
RUN_LOOP = r"""
import json, os, sys, tempfile
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main
data, runs, counts = sys.argv[1], json.loads(sys.argv[2]), []
for args in runs:
    before = len(compiled)
    model = os.path.join(tempfile.mkdtemp(), "m")
    train_main(["-q"] + args + [data, model], standalone_mode=False)
    if "-v" not in args:
        predict_main(["-q", data, model, model + ".out"], standalone_mode=False)
    counts.append(compiled[before:])
"""

# ... and prints counts
RUN_ALL_AND_COUNT = LISTENER + RUN_LOOP + "print(json.dumps(counts))\n"


def in_place(args):
    """--in-place: precompile the importable package, then every run in one interpreter; exit status 1 if any compiled."""
    code = ("import sys, time; from svmtrain.cli.precompile import precompile; t = time.perf_counter(); "
            f"precompile(jobs={args.jobs!r}); print(f'precompile: {{time.perf_counter() - t:.1f}} s')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(out.stderr)
    print(out.stdout.strip(), flush=True)
    out = subprocess.run([sys.executable, "-c", RUN_ALL_AND_COUNT, args.data, json.dumps(RUNS)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(out.stderr)
    counts = json.loads(out.stdout.strip().splitlines()[-1])
    bad = [(run, names) for run, names in zip(RUNS, counts) if names]
    for run, names in bad:
        print(f"  {' '.join(run):45s} {len(names)} compiled" + "".join(f"\n      {c}" for c in names))
    print(f"OK: {len(RUNS)} runs compiled nothing after precompile" if not bad
          else f"{len(bad)} run(s) compiled after precompile")
    sys.exit(1 if bad else 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--data", default=str(ROOT / "data" / "heart_scale.xz"))
    ap.add_argument("--solvers", default=None,
                    help="comma-separated: check only the runs of these -s solvers (e.g. dcd,ocas for big data)")
    ap.add_argument("--in-place", action="store_true",
                    help="precompile the installed package itself, then check every run in one interpreter")
    args = ap.parse_args()
    args.data = str(Path(args.data).resolve())
    if args.in_place:
        in_place(args)
    tmp = Path(tempfile.mkdtemp(prefix="svmtrain-check-precompile-"))
    try:
        shutil.copytree(ROOT / "svmtrain", tmp / "svmtrain",
                        ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc", "*.pyc"))
        env = dict(os.environ, PYTHONPATH=str(tmp) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        code = ("import json, sys, time; from svmtrain.cli.precompile import precompile; t = time.perf_counter(); "
                f"r = precompile(jobs={args.jobs!r}, log=lambda s: print(s, file=sys.stderr, flush=True)); "
                "print(json.dumps([r, time.perf_counter() - t]))")
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if out.returncode != 0:
            sys.exit(out.stderr)
        groups, inner = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"precompile(jobs={args.jobs}): {inner:.1f} s inside, {wall:.1f} s with interpreter start")
        for name, secs in groups:
            print(f"  {name:15s} {secs:6.1f} s")
        bad = 0
        only = None if args.solvers is None else set(args.solvers.split(","))
        for run in RUNS:
            key = "kernel-pegasos" if run[1] == "pegasos" and "-t" in run else run[1]
            if only is not None and key not in only:
                continue
            out = subprocess.run([sys.executable, "-c", RUN_AND_COUNT, args.data] + run, env=env, cwd=tmp,
                                 capture_output=True, text=True)
            if out.returncode != 0:
                print(f"  {' '.join(run):45s} FAILED\n{out.stderr}")
                bad += 1
                continue
            compiled = json.loads(out.stdout.strip().splitlines()[-1])
            bad += bool(compiled)
            print(f"  {' '.join(run):45s} {len(compiled)} compiled" + "".join(f"\n      {c}" for c in compiled))
        print("OK: nothing compiled after precompile" if not bad else f"{bad} run(s) compiled or failed")
        sys.exit(1 if bad else 0)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
