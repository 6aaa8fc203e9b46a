#!/usr/bin/env python3
"""L1-regularised models: ``svm-train -s 5`` / ``-s 6`` (``-s cdn``) against ``liblinear-train`` on the same lines.

    python scripts/bench_l1.py [--data a9a|docstrings|synthetic|TRAIN[:TEST]] ... [--line "-s 5" ...]
                               [--repeat 5] [--workdir DIR]

For each data set and line, both commands run ``--repeat`` times,
alternating, each as a whole process (read, train, write the model) with
``SVMTRAIN_SERVER=0`` (each run pays Python's start-up), after an untimed
run of ours (numba's cache load). Reported: median wall and CPU seconds
(the children's user + system time) and their ratios; the primal L1
objective of both model files, computed here in NumPy (sum |w_j| + C sum
loss, the -B weight included as LIBLINEAR regularises it); nonzero weights;
the test accuracy (svm-predict on our model, liblinear-predict on theirs).

Data: ``a9a`` (bundled, with a9a.t), ``docstrings`` (built once by
``scripts/docstrings_bow.py``: the installed packages' docstrings as a
bag of words, 27,900 x 226,188), ``synthetic`` (``gen_synthetic.py --rows
200000``: 200,000 x 200,000, 60 nonzeros per row, 180 MB, no test file),
or paths. The machine may be shared: the load average is printed.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (LIBLINEAR_TRAIN, OURS_PREDICT, OURS_TRAIN, ROOT, load_average, plain,  # noqa: E402
                      printed_accuracy)

LIBLINEAR_PREDICT = "/usr/bin/liblinear-predict"
LINES = ("-s 5", "-s 6", "-s 5 -c 10 -B 1", "-s 6 -c 10 -B 1")


def data_sets(names, workdir):
    """[(name, train, test or None)] of the --data names."""
    out = []
    for name in names:
        if name == "a9a":
            out.append((name, plain(os.path.join(ROOT, "data", "a9a.xz"), workdir),
                        plain(os.path.join(ROOT, "data", "a9a.t.xz"), workdir)))
        elif name == "docstrings":
            path = os.path.join(workdir, "docstrings")
            if not os.path.exists(path + ".t"):
                subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "docstrings_bow.py"), path], check=True)
            out.append((name, path, path + ".t"))
        elif name == "synthetic":
            path = os.path.join(workdir, "synthetic-200000")
            if not os.path.exists(path):
                subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_synthetic.py"), "--rows", "200000",
                                "-o", path], check=True)
            out.append((name, path, None))
        else:
            train, _, test = name.partition(":")
            out.append((os.path.basename(train), train, test or None))
    return out


def timed(cmd, env):
    """(wall, CPU) seconds of a whole command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def read_model(path):
    from svmtrain.io.liblinear_format import is_liblinear_model, read_liblinear_model
    from svmtrain.io.model_io import load_model
    return read_liblinear_model(path) if is_liblinear_model(path) else load_model(path)


def objective_and_nonzeros(train, model_path, loss, C):
    """(sum |w| + C sum loss, nonzero feature weights) of a binary model on ``train``, computed here."""
    from svmtrain.io.reader import read_libsvm
    X = read_libsvm(train)
    m = read_model(model_path)
    w = m.W[:, 0]
    d = m.n_features
    wd = np.zeros(max(d, X.n_features))
    wd[:d] = w[:d]
    rows = np.repeat(np.arange(X.n_rows), np.diff(X.indptr))
    s = np.bincount(rows, weights=X.values * wd[X.indices], minlength=X.n_rows)
    if m.bias >= 0:
        s += m.bias * w[d]
    if m.b is not None:
        s += float(m.b[0])
    y = np.where(X.labels == m.labels[0], 1.0, -1.0)
    z = y * s
    L = np.sum(np.maximum(0.0, 1.0 - z) ** 2) if loss == "squared-hinge" else np.sum(np.logaddexp(0.0, -z))
    return float(np.sum(np.abs(w)) + C * L), int(np.count_nonzero(w[:d]))


def accuracy(predict, test, model, workdir):
    out = subprocess.run([predict, test, model, os.path.join(workdir, "bench_l1.out")], capture_output=True,
                         text=True)
    return printed_accuracy(out.stdout + out.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", action="append", help="a9a, docstrings, synthetic or TRAIN[:TEST] (repeatable)")
    ap.add_argument("--line", action="append", help=f"a LIBLINEAR line (repeatable; default {', '.join(LINES)})")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workdir", default=os.path.join(ROOT, "bench-data"))
    args = ap.parse_args()
    env = dict(os.environ, SVMTRAIN_SERVER="0")
    print(f"load average {load_average()}")
    for name, train, test in data_sets(args.data or ["a9a", "docstrings"], args.workdir):
        for line in args.line or LINES:
            opts = line.split()
            ours_m = os.path.join(args.workdir, "bench_l1.ours.model")
            theirs_m = os.path.join(args.workdir, "bench_l1.liblinear.model")
            ours = [OURS_TRAIN, "-q", *opts, train, ours_m]
            theirs = [LIBLINEAR_TRAIN, "-q", *opts, train, theirs_m]
            timed(ours, env)
            o, t = [], []
            for r in range(args.repeat):
                for who in (("o", "t") if r % 2 == 0 else ("t", "o")):
                    (o if who == "o" else t).append(timed(ours if who == "o" else theirs, env))
            wo, wt = statistics.median(x[0] for x in o), statistics.median(x[0] for x in t)
            co, ct = statistics.median(x[1] for x in o), statistics.median(x[1] for x in t)
            loss = "squared-hinge" if opts[opts.index("-s") + 1] == "5" else "log"
            C = float(opts[opts.index("-c") + 1]) if "-c" in opts else 1.0
            fo, no = objective_and_nonzeros(train, ours_m, loss, C)
            ft, nt = objective_and_nonzeros(train, theirs_m, loss, C)
            acc = ""
            if test:
                acc = (f"; test accuracy {100 * accuracy(OURS_PREDICT, test, ours_m, args.workdir):.2f} % vs "
                       f"{100 * accuracy(LIBLINEAR_PREDICT, test, theirs_m, args.workdir):.2f} %")
            print(f"{name} {line}: objective {fo:.6f} vs {ft:.6f} (ratio {fo / ft:.7f}); nonzero weights {no} vs {nt}"
                  f"{acc}; wall {wo:.2f} s vs {wt:.2f} s ({wo / wt:.2f}x), CPU {co:.2f} s vs {ct:.2f} s "
                  f"({co / ct:.2f}x); load {load_average()}", flush=True)


if __name__ == "__main__":
    main()
