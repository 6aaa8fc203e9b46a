#!/usr/bin/env python3
"""Regression and logistic regression on a large synthetic file, against LIBLINEAR.

    python scripts/bench_tasks.py [--rows 200000] [--test-rows 50000] [--features 200000]
                                  [--nnz 60] [-c 1] [--repeats 3] [--workdir DIR]

Files: a regression train/test pair and a classification train/test pair
from scripts/gen_synthetic.py (same hidden model within a pair; made once
in ``--workdir``). Each line is run by svm-train with LIBLINEAR's own
spelling (``svm-train -s 12 ...`` is translated to ``-s dcd --task r``, see
the README) and by ``liblinear-train`` with the same flags, alternating,
``--repeats`` times; wall seconds are the medians (whole processes: read,
train, write). svm-train runs once untimed before, so numba has compiled.

Reported per line: both wall times and their ratio; the primal objective
of both models computed here from the model files on the training rows
(regression: 1/2 |w|^2 + C sum loss_eps(w.x - y), loss |.| or its square;
logistic: 1/2 |w|^2 + C sum log(1 + exp(-y w.x))) and their relative
difference; the test measure of both (MSE, or accuracy in %).
"""
import argparse
import os
import statistics
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as L  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SVM_TRAIN = os.path.join(os.path.dirname(sys.executable), "svm-train")
LIBLINEAR = "/usr/bin/liblinear-train"

# (name, task, flags, loss of the objective)
LINES = [
    ("L2-loss SVR (-s 12 -p 0.1)", "r", ["-s", "12", "-p", "0.1"], "sq-eps"),
    ("L1-loss SVR (-s 13 -p 0.1)", "r", ["-s", "13", "-p", "0.1"], "eps"),
    ("logistic, primal (-s 0)", "c", ["-s", "0"], "log"),
    ("logistic, dual (-s 7)", "c", ["-s", "7"], "log"),
]


def make_files(workdir, a):
    """{task: (train, test)}: gen_synthetic files, made once per size."""
    import gen_synthetic as G
    files = {}
    for task in ("r", "c"):
        pair = []
        for rows, block in ((a.rows, 0), (a.test_rows, L.TEST_BLOCK)):
            path = os.path.join(workdir, f"syn-{task}-{rows}x{a.features}-{a.nnz}-{block}.txt")
            if not os.path.exists(path):
                G.generate(path, rows, a.features, a.nnz, seed=1, first_block=block, task=task)
            pair.append(path)
        files[task] = tuple(pair)
    return files


def primal(model, X, C, loss, p=0.1):
    """The LIBLINEAR primal objective of a binary or regression linear model on
    the rows of X (a Chunk); for a binary model labels[0] is the +1 side."""
    import scipy.sparse as sp
    w = np.zeros(X.n_features)
    W = model.W[:, 0]
    k = min(len(w), len(W))
    w[:k] = W[:k]
    A = sp.csr_matrix((X.values, X.indices, X.indptr), shape=(X.n_rows, X.n_features))
    s = A @ w
    if loss == "log":
        y = np.where(X.labels == model.labels[0], 1.0, -1.0)
        return 0.5 * w @ w + C * np.logaddexp(0.0, -y * s).sum()
    r = np.maximum(np.abs(s - X.labels) - p, 0.0)
    return 0.5 * w @ w + C * (r.sum() if loss == "eps" else (r * r).sum())


def test_measure(model, T):
    s = model.decision_function(T)[:, 0]
    if getattr(model, "task", "c") == "r":
        return float(np.mean((s - T.labels) ** 2))
    return 100.0 * float(np.mean(model.labels[np.where(s > 0, 0, 1)] == T.labels))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--test-rows", type=int, default=50_000)
    ap.add_argument("--features", type=int, default=200_000)
    ap.add_argument("--nnz", type=int, default=60)
    ap.add_argument("-c", "--cost", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "svmtrain-bench"))
    ap.add_argument("--lines", default="all", help="comma-separated indices of LINES (0-3), or all")
    ap.add_argument("-e", "--eps", default=None, help="-e given to both programs (default: each one's own)")
    a = ap.parse_args(argv)
    from svmtrain.io.model_io import load_model
    from svmtrain.io.reader import read_libsvm
    os.makedirs(a.workdir, exist_ok=True)
    files = make_files(a.workdir, a)
    data = {}
    chosen = LINES if a.lines == "all" else [LINES[int(i)] for i in a.lines.split(",")]
    print(f"{a.rows} training rows, {a.test_rows} test rows, {a.features} features, {a.nnz} nonzeros per row; "
          f"C = {a.cost}; -e {a.eps or 'default'}; medians of {a.repeats} alternating runs; load {L.load_average()}")
    print("| line | svm-train s | liblinear-train s | ratio | objective (svmtrain) | objective (LIBLINEAR) "
          "| rel. difference | test (svmtrain) | test (LIBLINEAR) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, task, flags, loss in chosen:
        train, test = files[task]
        if task not in data:
            data[task] = (read_libsvm(train), read_libsvm(test))
        X, T = data[task]
        ours_m, theirs_m = os.path.join(a.workdir, "ours.model"), os.path.join(a.workdir, "theirs.model")
        tol = [] if a.eps is None else ["-e", a.eps]
        ours = [SVM_TRAIN, "-q", "-c", repr(a.cost), *tol, *flags, train, ours_m]
        theirs = [LIBLINEAR, "-q", "-c", repr(a.cost), *tol, *flags, train, theirs_m]
        L.run(ours)                                       # numba compiled before timing
        t_ours, t_theirs = [], []
        for _ in range(a.repeats):
            t_ours.append(L.run(ours)[0])
            t_theirs.append(L.run(theirs)[0])
        mo, mt = load_model(ours_m), load_model(theirs_m)
        fo, ft = primal(mo, X, a.cost, loss), primal(mt, X, a.cost, loss)
        to, tt = statistics.median(t_ours), statistics.median(t_theirs)
        print(f"| {name} | {to:.2f} | {tt:.2f} | {to / tt:.2f} | {fo:.10g} | {ft:.10g} | {(fo - ft) / ft:+.2e} "
              f"| {test_measure(mo, T):.6g} | {test_measure(mt, T):.6g} |", flush=True)


if __name__ == "__main__":
    main()
