#!/usr/bin/env python3
"""Precomputed kernels (``-t 4``) against LIBSVM's svm-train -t 4 / svm-predict, same run.

    python scripts/bench_precomputed.py [--repeats 3] [--rows 2000] [--workdir DIR] [--out results/bench_precomputed]

Two kernel files in LIBSVM's format (``label 0:ID 1:K(x,x1) ... L:K(x,xL)``,
values written with 17 significant digits), each split at random (seeded)
into training rows and test rows (the test rows' values against the
training rows):

* heart_scale's linear kernel matrix K = X X' (270 rows: 216 train, 54
  test), ``-t 4 -c 1``;
* svmguide1 scaled to [-1, 1] as LIBSVM's guide does (svm-scale -l -1 -u 1),
  its RBF kernel matrix exp(-2 |x - y|^2) on ``--rows`` training rows (the
  rest of its 3089 rows are the test rows), ``-t 4 -c 2`` (the guide's
  -c 2 -g 2).

Kernel values are written with ``--digits`` significant digits (17 by
default, so they read back exactly; svm-train's reader converts those in
numba by the Eisel-Lemire algorithm, numbers of more than 18 digits in
Python at about a microsecond each).

Each line is trained by svm-train (``-t 4``, LIBSVM's own line, so ``-s smo``)
and by /usr/bin/svm-train, alternating, ``--repeats`` times after one
untimed run of ours (numba compiled); each model predicts the test rows
(and the training rows) with its own svm-predict. Reported: the medians of
the whole processes' wall seconds (ours without the start-up server, so
with Python's and numba's start-up), svm-train's own "Training time" (the
solver in the process), their ratios, the support vectors of both, the
agreement of the predicted labels, and the load average.
"""
import argparse
import os
import statistics
import subprocess
import sys
import re
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as L  # noqa: E402

LIBSVM_SCALE = "/usr/bin/svm-scale"


def dense(path):
    """(labels, dense X) of a LIBSVM file (1-based indices)."""
    from svmtrain.io.reader import read_libsvm
    c = read_libsvm(path)
    X = np.zeros((c.n_rows, c.n_features))
    X[np.repeat(np.arange(c.n_rows), np.diff(c.indptr)), c.indices] = c.values
    return c.labels, X


DIGITS = 17       # significant digits of the kernel values (17: they read back exactly)


def write_kernel(path, y, K):
    """LIBSVM's precomputed rows of K (n x L) with serial numbers 1..n."""
    with open(path, "w") as f:
        for i in range(len(y)):
            f.write(f"{y[i]:g} 0:{i + 1} " + " ".join(f"{j}:{v:.{DIGITS}g}" for j, v in enumerate(K[i].tolist(), 1))
                    + "\n")


def kernel_files(workdir, name, y, X, kernel, n_train, seed=1):
    """(train file, test file, rows): a seeded split, the kernel against the training rows."""
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(y))
    tr, te = np.sort(perm[:n_train]), np.sort(perm[n_train:])
    paths = tuple(os.path.join(workdir, f"{name}.{DIGITS}g.{part}.k") for part in ("train", "test"))
    if not all(os.path.exists(p) for p in paths):
        write_kernel(paths[0], y[tr], kernel(X[tr], X[tr]))
        write_kernel(paths[1], y[te], kernel(X[te], X[tr]))
    return paths[0], paths[1], (len(tr), len(te))


def rbf(gamma):
    def k(A, B):
        d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
        return np.exp(-gamma * np.maximum(d2, 0.0))
    return k


def heart(workdir):
    y, X = dense(L.plain(L.data_file("heart_scale.xz"), workdir))
    return kernel_files(workdir, "heart_linear", y, X, lambda A, B: A @ B.T, 216)


def guide(workdir, rows):
    src = L.data_file("svmguide1.xz")
    if src is None:
        raise SystemExit("svmguide1.xz not found under data/ or ../shared/data")
    scaled = os.path.join(workdir, "svmguide1.scale")
    with open(scaled, "w") as f:
        subprocess.run([LIBSVM_SCALE, "-l", "-1", "-u", "1", L.plain(src, workdir)], stdout=f, check=True)
    y, X = dense(scaled)
    return kernel_files(workdir, f"svmguide1_rbf{rows}", y, X, rbf(2.0), rows)


def total_sv(model):
    for line in open(model):
        if line.startswith("total_sv"):
            return int(line.split()[1])
    return None


def bench_line(name, files, options, workdir, repeats):
    train, test, (n_train, n_test) = files
    opts = options.split()
    ours_model, theirs_model = os.path.join(workdir, "ours.model"), os.path.join(workdir, "theirs.model")
    ours_cmd = [L.OURS_TRAIN, *opts, "--model-format", "libsvm", train, ours_model]
    theirs_cmd = [L.LIBSVM_TRAIN, *opts, "-q", train, theirs_model]
    L.run(ours_cmd)                                         # numba's first compile, untimed
    t = {"ours": [], "theirs": [], "solver": [], "ours predict": [], "theirs predict": []}
    for _ in range(repeats):
        wall, text = L.run(ours_cmd)
        t["ours"].append(wall)
        t["solver"].append(float(re.search(r"Training time = ([0-9.]+) s", text).group(1)))
        t["theirs"].append(L.run(theirs_cmd)[0])
        t["ours predict"].append(L.run([L.OURS_PREDICT, test, ours_model, os.path.join(workdir, "o.out")])[0])
        t["theirs predict"].append(L.run([L.LIBSVM_PREDICT, test, theirs_model,
                                          os.path.join(workdir, "t.out")])[0])
    agree = {}
    o_out, t_out = os.path.join(workdir, "o.out"), os.path.join(workdir, "t.out")
    for part, path in (("test", test), ("train", train)):
        L.run([L.OURS_PREDICT, path, ours_model, o_out])
        L.run([L.LIBSVM_PREDICT, path, theirs_model, t_out])
        ours, theirs = np.loadtxt(o_out), np.loadtxt(t_out)
        agree[part] = 100.0 * float(np.mean(ours == theirs))
        y = np.loadtxt(path, usecols=0)
        agree[part + " acc"] = (100.0 * float(np.mean(ours == y)), 100.0 * float(np.mean(theirs == y)))
    med = {k: statistics.median(v) for k, v in t.items()}
    return {"line": name, "rows": f"{n_train} + {n_test}", "file MB": os.path.getsize(train) / 1e6,
            "ours s": med["ours"], "LIBSVM s": med["theirs"], "wall ratio": med["ours"] / med["theirs"],
            "ours train s": med["solver"],
            "predict ours s": med["ours predict"], "predict LIBSVM s": med["theirs predict"],
            "predict ratio": med["ours predict"] / med["theirs predict"],
            "nSV ours": total_sv(ours_model), "nSV LIBSVM": total_sv(theirs_model),
            "agree test %": agree["test"], "agree train %": agree["train"],
            "test acc ours %": agree["test acc"][0], "test acc LIBSVM %": agree["test acc"][1]}


def main(argv=None):
    global DIGITS
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rows", type=int, default=2000, help="svmguide1's training rows (default 2000)")
    ap.add_argument("--digits", type=int, default=17,
                    help="significant digits of the kernel values written (default 17, exact)")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--out", default=os.path.join(L.RESULTS, "bench_precomputed"))
    a = ap.parse_args(argv)
    DIGITS = a.digits
    workdir = a.workdir or tempfile.mkdtemp(prefix="bench_precomputed.")
    lines = [("heart_scale linear K (-t 4 -c 1)", heart(workdir), "-t 4 -c 1"),
             ("svmguide1 scaled, RBF K gamma 2 (-t 4 -c 2)", guide(workdir, a.rows), "-t 4 -c 2")]
    rows = []
    for name, files, options in lines:
        rows.append(bench_line(name, files, options, workdir, a.repeats))
        print(rows[-1], flush=True)
    for r in rows:
        r["digits"] = DIGITS
    cols = ["line", "rows", "digits", "file MB", "ours s", "LIBSVM s", "wall ratio", "ours train s", "predict ours s",
            "predict LIBSVM s", "predict ratio", "nSV ours", "nSV LIBSVM", "agree test %", "agree train %",
            "test acc ours %", "test acc LIBSVM %"]
    print(L.write_table(rows, cols, a.out))
    print(f"load average: {L.load_average()}")


if __name__ == "__main__":
    main()
