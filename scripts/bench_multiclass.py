#!/usr/bin/env python3
"""Crammer-Singer multi-class: ``svm-train -s dcd --multiclass cs`` against
``liblinear-train -s 4`` (the same sequential dual method and stopping
rule; ours revisits the rows that still violate), in one run.

    python scripts/bench_multiclass.py [--rows 20000] [--features 1300000] [--nnz-per-row 500]
                                       [--classes 20] [--test-rows 5000] [-c 1] [-e 0.1] [--repeat 3]
                                       [--workdir DIR] [--docstrings [ROWS]]

It writes (once, into ``--workdir``) a sparse high-dimensional multi-class
training file and a test file of the same hidden model with
``scripts/gen_synthetic.py --classes``, then runs both commands
``--repeat`` times, alternating, each as a whole process (read, train,
write the model), after an untimed run of ours (numba's compile or cache
load). Reported: median wall seconds and peak RSS, the ratio, the dual
objective each prints (LIBLINEAR prints its negative as "Objective
value"; ours is recomputed here from a run in this process) and the test
accuracy of each model (``svm-predict`` on both files: it reads LIBLINEAR's).

``--docstrings [ROWS]`` runs on real text instead: the docstrings of this
environment's 20 largest packages as word counts, labelled by package
(``scripts/docstrings_bow.py --counts --classes 20``, about 26,500
training rows and 23,000 features here), the training rows a seeded
sample of ROWS of them (default 8,000; 0 for all: LIBLINEAR then takes
about 2 minutes). A few long docstrings hold counts in the hundreds, the
shape of news20's counts that keeps LIBLINEAR's schedule at it for
thousands of passes.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import LIBLINEAR_TRAIN, OURS_PREDICT, OURS_TRAIN, ROOT, load_average, printed_accuracy, timed  # noqa: E402


def make(path, rows, args, first_block=0):
    if not os.path.exists(path):
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_synthetic.py"), "--rows", str(rows),
                        "--features", str(args.features), "--nnz-per-row", str(args.nnz_per_row),
                        "--classes", str(args.classes), "--first-block", str(first_block), "-o", path],
                       check=True, capture_output=True)
    return path


def docstring_files(work, rows, seed=1):
    """(train, test) of the docstring word-count corpus, written once into ``work``;
    the training file a seeded random sample of ``rows`` rows (0: all)."""
    prefix = os.path.join(work, "docstrings-counts-20")
    if not os.path.exists(prefix + ".t"):
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "docstrings_bow.py"), prefix, "--counts",
                        "--classes", "20"], check=True)
    if not rows:
        return prefix, prefix + ".t"
    sample = f"{prefix}-{rows}"
    if not os.path.exists(sample):
        import numpy as np
        with open(prefix) as f:
            lines = f.readlines()
        keep = np.sort(np.random.default_rng(seed).choice(len(lines), min(rows, len(lines)), replace=False))
        with open(sample, "w") as f:
            f.writelines(lines[i] for i in keep)
    return sample, prefix + ".t"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--features", type=int, default=1300000)
    ap.add_argument("--nnz-per-row", type=int, default=500)
    ap.add_argument("--classes", type=int, default=20)
    ap.add_argument("--test-rows", type=int, default=5000)
    ap.add_argument("-c", type=float, default=1.0)
    ap.add_argument("-e", type=float, default=0.1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--docstrings", type=int, nargs="?", const=8000, default=None, metavar="ROWS")
    args = ap.parse_args()
    work = args.workdir or tempfile.mkdtemp(prefix="bench_multiclass_")
    os.makedirs(work, exist_ok=True)
    if args.docstrings is not None:
        train, test = docstring_files(work, args.docstrings)
        shape = "docstring word counts of 20 packages"
    else:
        tag = f"r{args.rows}-f{args.features}-k{args.nnz_per_row}-c{args.classes}"
        train = make(os.path.join(work, f"mc-{tag}"), args.rows, args)
        test = make(os.path.join(work, f"mc-{tag}.t"), args.test_rows, args, first_block=10 ** 6)
        shape = (f"{args.rows} rows, {args.features} features, ~{args.nnz_per_row} nonzeros per row, "
                 f"{args.classes} classes")
    opts = ["-c", str(args.c), "-e", str(args.e)]
    cmds = {"svmtrain -s dcd --multiclass cs": [OURS_TRAIN, "-s", "dcd", "--multiclass", "cs", "-q", *opts, train,
                                                os.path.join(work, "ours.model")],
            "liblinear-train -s 4": [LIBLINEAR_TRAIN, "-s", "4", *opts, train, os.path.join(work, "ll.model")]}
    timed(cmds["svmtrain -s dcd --multiclass cs"])         # compile or load the kernels, untimed
    print(f"{train}: {shape}; C = {args.c}, -e {args.e}; load {load_average()}", flush=True)
    walls = {k: [] for k in cmds}
    rss = {}
    out = {}
    for _ in range(args.repeat):
        for name, cmd in cmds.items():
            wall, mb, text = timed(cmd)
            walls[name].append(wall)
            rss[name] = mb
            out[name] = text
    theirs = -float(out["liblinear-train -s 4"].split("Objective value = ")[1].split()[0])
    import svmtrain
    ours = svmtrain.train(train, solver="dcd", multiclass="cs", C=args.c, eps=args.e).fit_results[0].info
    acc = {}
    for name, model in (("svmtrain -s dcd --multiclass cs", "ours.model"), ("liblinear-train -s 4", "ll.model")):
        text = subprocess.run([OURS_PREDICT, test, os.path.join(work, model), os.path.join(work, "out")],
                              capture_output=True, text=True, check=True).stdout
        acc[name] = 100.0 * printed_accuracy(text)
    for name in cmds:
        print(f"{name}: median {statistics.median(walls[name]):.2f} s (runs {', '.join(f'{w:.2f}' for w in walls[name])}), "
              f"peak RSS {rss[name]:.0f} MB, test accuracy {acc[name]:.2f} %")
    a, b = (statistics.median(walls[k]) for k in cmds)
    print(f"ratio {a / b:.3f}; dual objective: ours {ours['dual_objective']:.6f} ({ours['n_iter']} iterations), "
          f"LIBLINEAR {theirs:.6f}; relative difference {abs(ours['dual_objective'] - theirs) / abs(theirs):.2e}")


if __name__ == "__main__":
    main()
