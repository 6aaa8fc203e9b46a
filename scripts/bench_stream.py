#!/usr/bin/env python3
"""Benchmark ``svm-train --stream``: peak memory against ``--memory-limit``,
test accuracy against in-memory training of the same solver.

Generates (or reuses) a synthetic file with ``gen_synthetic.generate`` under
``--workdir`` (default ``bench-data/``) of ``--rows`` + ``--test-rows`` rows
and splits it into a training file (the first ``--rows`` lines; it must be
at least 3 times ``--memory-limit``) and a test file (the rest, the same
hidden model). Then, each command a fresh process under ``/usr/bin/time -v``
(or, where that tool is missing, a Python wrapper reading the child's
``ru_maxrss``):

1. the baseline: ``svm-train -q -s SOLVER`` on a tiny file (bundled
   heart_scale): the peak RSS of the interpreter with numpy, scipy, numba
   and the solver's compiled kernels loaded, which ``--memory-limit`` does
   not cover;
2. per solver in ``--solvers`` (default ``pegasos,ocas,dcd``; also
   ``asset`` (Nystrom) and ``asset-fourier``, with ``--asset-args``):
   ``svm-train -q -s SOLVER -c C --memory-limit MB TRAIN`` and the same
   without ``--memory-limit`` (in memory), then ``svm-predict`` of both
   models on the test file.

Prints, per solver: peak RSS of the streamed run, the bound (limit +
baseline), the in-memory run's peak RSS, both accuracies and their
difference, wall times; and the load average (the machine may be shared).
Exit status 1 when a streamed run's peak RSS exceeds the bound or its
accuracy is more than 0.2 points (asset, a stochastic method sampling
differently when streamed: 0.5) from in-memory training's.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from bench_parse import _load  # noqa: E402
from gen_synthetic import generate  # noqa: E402

# Whole processes of svm-train/svm-predict are timed and measured here: without the start-up
# server (README, "The start-up server"), whose runs happen in its children, not in the
# measured process (scripts/bench_server.py measures the server).
os.environ.setdefault("SVMTRAIN_SERVER", "0")

MIB = 1 << 20
# svm-train arguments of each --solvers name, and the accuracy tolerance
SOLVER_ARGS = {"asset": ["-s", "asset", "--approx", "nystrom"],
               "asset-fourier": ["-s", "asset", "--approx", "fourier"]}
TOLERANCE = {"asset": 0.5, "asset-fourier": 0.5}
TIME = "/usr/bin/time"
_WRAPPER = ("import resource, subprocess, sys\n"
            "rc = subprocess.call(sys.argv[1:])\n"
            "print('Maximum resident set size (kbytes): %d'"
            " % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
            "sys.exit(rc)\n")


def _tool(name):
    script = Path(sys.executable).with_name(name)
    if script.exists():
        return [str(script)]
    module = {"svm-train": "svmtrain.cli.train", "svm-predict": "svmtrain.cli.predict"}[name]
    return [sys.executable, "-c", f"from {module} import main; main()"]


def _measured(cmd):
    """(wall seconds, peak RSS in bytes, stdout) of ``cmd`` run in a fresh process."""
    if os.access(TIME, os.X_OK):
        full = [TIME, "-v"] + cmd
    else:
        full = [sys.executable, "-c", _WRAPPER] + cmd
    t0 = time.perf_counter()
    r = subprocess.run(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"bench_stream: {' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    return wall, int(m.group(1)) * 1024, r.stdout


def _split(path, train_rows, train_path, test_path):
    """The first ``train_rows`` lines of ``path`` into train_path, the rest into test_path."""
    if train_path.exists() and test_path.exists():
        return
    with open(path, "rb") as f:
        seen, offset = 0, None
        while offset is None:
            block = f.read(64 << 20)
            if not block:
                sys.exit(f"bench_stream: {path} has fewer than {train_rows} lines")
            count = block.count(b"\n")
            if seen + count < train_rows:
                seen += count
                continue
            pos = -1
            for _ in range(train_rows - seen):
                pos = block.index(b"\n", pos + 1)
            offset = f.tell() - len(block) + pos + 1
        for out, start, stop in ((train_path, 0, offset), (test_path, offset, os.path.getsize(path))):
            tmp = out.with_suffix(".tmp")
            with open(tmp, "wb") as g:
                f.seek(start)
                left = stop - start
                while left:
                    chunk = f.read(min(left, 64 << 20))
                    g.write(chunk)
                    left -= len(chunk)
            os.replace(tmp, out)


def _accuracy(stdout):
    return float(re.search(r"Accuracy = ([0-9.]+)%", stdout).group(1))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=500_000, help="training rows")
    ap.add_argument("--test-rows", type=int, default=100_000)
    ap.add_argument("--features", type=int, default=20_000)
    ap.add_argument("--nnz-per-row", type=float, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--memory-limit", type=float, default=64, help="MB for --memory-limit")
    ap.add_argument("-c", type=float, default=0.1, help="C of every solver")
    ap.add_argument("--solvers", default="pegasos,ocas,dcd",
                    help="comma-separated: pegasos, ocas, dcd, asset (Nystrom), asset-fourier")
    ap.add_argument("--asset-args", default="-D 512",
                    help="further svm-train arguments of the asset runs (default: %(default)s)")
    ap.add_argument("--workdir", default=str(ROOT / "bench-data"))
    args = ap.parse_args(argv)

    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    stem = f"stream-r{args.rows}+{args.test_rows}-f{args.features}-k{args.nnz_per_row:g}-s{args.seed}"
    full = workdir / f"{stem}.svm"
    train_path, test_path = workdir / f"{stem}.train", workdir / f"{stem}.test"
    if not (train_path.exists() and test_path.exists()):
        if not full.exists():
            print(f"generating {full} ...", flush=True)
            generate(full, args.rows + args.test_rows, args.features, args.nnz_per_row, args.seed)
        _split(full, args.rows, train_path, test_path)
        full.unlink()
    size = os.path.getsize(train_path)
    limit = args.memory_limit * MIB
    print(f"training file {train_path}: {size / MIB:.0f} MB, {args.rows} rows "
          f"({size / limit:.1f}x --memory-limit {args.memory_limit:g}); test file {args.test_rows} rows")
    if size < 3 * limit:
        sys.exit("bench_stream: the training file must be at least 3x --memory-limit (raise --rows)")

    train, predict = _tool("svm-train"), _tool("svm-predict")
    tiny = ROOT / "data" / "heart_scale.xz"
    rows, failed = [], False
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        # page cache: every run reads the file from memory
        _measured(["cat", str(train_path)])
        for solver in args.solvers.split(","):
            common = ["-q"] + SOLVER_ARGS.get(solver, ["-s", solver]) + ["-c", str(args.c)]
            if solver.startswith("asset"):
                common += args.asset_args.split()
            _, base, _ = _measured(train + common + [str(tiny), os.path.join(tmp, "tiny.model")])
            res = {}
            for mode, extra in (("stream", ["--memory-limit", f"{args.memory_limit:g}"]), ("memory", [])):
                model = os.path.join(tmp, f"{solver}.{mode}.model")
                wall, rss, _ = _measured(train + common + extra + [str(train_path), model])
                _, _, out = _measured(predict + [str(test_path), model, os.devnull])
                res[mode] = (wall, rss, _accuracy(out))
            (ws, rs, acs), (wm, rm, acm) = res["stream"], res["memory"]
            bound = limit + base
            ok = rs <= bound and abs(acs - acm) <= TOLERANCE.get(solver, 0.2)
            failed |= not ok
            rows.append((solver, rs, base, bound, rm, acs, acm, ws, wm, ok))
            print(f"{solver}: streamed peak RSS {rs / MIB:.0f} MB (bound {bound / MIB:.0f} = limit "
                  f"{args.memory_limit:g} + baseline {base / MIB:.0f}), in memory {rm / MIB:.0f} MB; "
                  f"accuracy {acs:.2f}% streamed, {acm:.2f}% in memory; {ws:.1f} s vs {wm:.1f} s"
                  f"{'' if ok else '  <-- NOT MET'}", flush=True)

    print("\n| solver | streamed peak RSS | limit + baseline | in-memory peak RSS | "
          "accuracy streamed | in memory | time streamed | in memory |")
    print("|---|---|---|---|---|---|---|---|")
    for solver, rs, base, bound, rm, acs, acm, ws, wm, ok in rows:
        print(f"| {solver} | {rs / MIB:.0f} MB | {args.memory_limit:g} + {base / MIB:.0f} = {bound / MIB:.0f} MB "
              f"| {rm / MIB:.0f} MB | {acs:.2f}% | {acm:.2f}% | {ws:.1f} s | {wm:.1f} s |")
    print(f"\nload average: {_load()} (on a shared machine, times vary; RSS does not)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
