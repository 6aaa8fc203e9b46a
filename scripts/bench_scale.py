#!/usr/bin/env python3
"""svm-scale against LIBSVM's /usr/bin/svm-scale on one synthetic file, in the same run.

Generates (once) a synthetic LIBSVM file with scripts/gen_synthetic.py
(default 50,000 rows x 20,000 features, about 45 nonzeros per row, ~30 MB)
in --dir, runs ours once untimed (numba's first compile / cache load), then
alternates LIBSVM's and ours --repeat times with the same flags (default
``-l 0``), each writing to a file in --dir; checks that every output is
byte-identical (``cmp``) and prints both median wall times and their ratio.

    python scripts/bench_scale.py [--rows N] [--features F] [--nnz-per-row K]
                                  [--flags "-l 0"] [--repeat 3] [--dir DIR]
"""
import argparse
import filecmp
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

# Whole processes of svm-train/svm-predict are timed and measured here: without the start-up
# server (README, "The start-up server"), whose runs happen in its children, not in the
# measured process (scripts/bench_server.py measures the server).
os.environ.setdefault("SVMTRAIN_SERVER", "0")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
LIBSVM_SCALE = "/usr/bin/svm-scale"


def _timed(cmd, out_path, env=None):
    with open(out_path, "wb") as out:
        t = time.perf_counter()
        subprocess.run(cmd, stdout=out, stderr=subprocess.DEVNULL, check=True, env=env)
        return time.perf_counter() - t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--features", type=int, default=20_000)
    ap.add_argument("--nnz-per-row", type=float, default=45)
    ap.add_argument("--flags", default="-l 0")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "svmtrain-bench-scale"))
    a = ap.parse_args(argv)
    if not os.path.exists(LIBSVM_SCALE):
        sys.exit(f"{LIBSVM_SCALE} not found (LIBSVM's svm-scale is the reference)")
    os.makedirs(a.dir, exist_ok=True)
    data = os.path.join(a.dir, f"synthetic_{a.rows}x{a.features}_{a.nnz_per_row:g}.svm")
    if not os.path.exists(data):
        from gen_synthetic import generate
        generate(data, rows=a.rows, features=a.features, nnz_per_row=a.nnz_per_row)
    flags = shlex.split(a.flags)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    ours = [sys.executable, "-m", "svmtrain.cli.scale", *flags, data]
    theirs = [LIBSVM_SCALE, *flags, data]
    out_ours = os.path.join(a.dir, "ours.out")
    out_theirs = os.path.join(a.dir, "libsvm.out")
    _timed(ours, out_ours, env)                     # compile / load numba's cache
    t_ours, t_theirs = [], []
    for _ in range(a.repeat):
        t_theirs.append(_timed(theirs, out_theirs))
        t_ours.append(_timed(ours, out_ours, env))
        if not filecmp.cmp(out_ours, out_theirs, shallow=False):
            sys.exit(f"DIFFERENT output: cmp {out_ours} {out_theirs}")
    mo, ml = statistics.median(t_ours), statistics.median(t_theirs)
    size = os.path.getsize(data) / 1e6
    print(f"file {data} ({size:.0f} MB), flags {a.flags!r}, {a.repeat} runs each, outputs identical (cmp)")
    print(f"LIBSVM svm-scale  median {ml:6.2f} s  ({', '.join(f'{t:.2f}' for t in t_theirs)})")
    print(f"svmtrain svm-scale median {mo:6.2f} s  ({', '.join(f'{t:.2f}' for t in t_ours)})")
    print(f"ratio ours/LIBSVM {mo / ml:.3f}  (load {' '.join(f'{x:.2f}' for x in os.getloadavg())})")


if __name__ == "__main__":
    main()
