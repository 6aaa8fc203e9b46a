#!/usr/bin/env python3
"""``-s ocas`` on sparse high-dimensional data against its peers, in one run
(issue 19's benchmark):

    binary       svm-train -s ocas                    vs  svmocas
    ovr          svm-train -s ocas (20 one-vs-rest)   vs  liblinear-train -s 3   (and svm-train -s dcd)
    cs           svm-train -s ocas --multiclass cs    vs  msvmocas

    python scripts/bench_ocas_sparse.py [--sections binary,ovr,cs] [--rows 20000] [--features 1300000]
        [--nnz-per-row 500] [--classes 20] [--cs-features 100000] [-c 1] [--repeat 3] [--workdir DIR]

The files come from ``scripts/gen_synthetic.py`` (written once into
``--workdir``): a binary one and a ``--classes`` one of ``--rows`` x
``--features``, and for the Crammer-Singer section one with
``--cs-features`` features, since msvmocas keeps every cutting plane as a
dense features x classes matrix (8 d M bytes each: 208 MB at 1.3M
features and 20 classes, so it runs out of memory there long before it
converges). Every program is one whole process (read, train, write the
model), timed with its peak RSS, ``--repeat`` times alternating, after an
untimed run of ours (numba's cache load). Objectives are computed here from
the model files, by one function per problem, in C form (1/2 |w|^2 + C
sum of losses): the hinge for binary and per class for one-vs-rest (the
sum over the classes' binary problems), the Crammer-Singer loss for cs.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import LIBLINEAR_TRAIN, OURS_TRAIN, ROOT, SVMOCAS, load_average, timed  # noqa: E402

MSVMOCAS = "/usr/bin/msvmocas"


def make(path, args, features, classes=None):
    if not os.path.exists(path):
        cmd = [sys.executable, os.path.join(ROOT, "scripts", "gen_synthetic.py"), "--rows", str(args.rows),
               "--features", str(features), "--nnz-per-row", str(args.nnz_per_row), "-o", path]
        if classes:
            cmd += ["--classes", str(classes)]
        subprocess.run(cmd, check=True, capture_output=True)
    return path


def read(path):
    from svmtrain.io.reader import read_libsvm
    return read_libsvm(path)


def hinge_objective(X, y, W, C):
    """sum over the columns of W (one binary problem each, y[:, j] = +-1) of 1/2 |w|^2 + C sum hinge."""
    S = X @ W
    return float(0.5 * np.sum(W * W) + C * np.sum(np.maximum(0.0, 1.0 - y * S)))


def cs_objective(X, yi, W, C):
    """1/2 |W|^2 + C sum_i max_m ([m != y_i] + s_im - s_iy_i)."""
    S = X @ W
    rows = np.arange(len(yi))
    Z = S - S[rows, yi][:, None] + 1.0
    Z[rows, yi] = 0.0
    return float(0.5 * np.sum(W * W) + C * np.sum(Z.max(axis=1)))


def csr(data, d):
    import scipy.sparse as sp
    return sp.csr_matrix((data.values, data.indices, data.indptr), shape=(data.n_rows, d))


def ours_W(path, d, labels):
    """Our model's weights (d x classes, in the order of ``labels``) and its labels."""
    from svmtrain.io.model_io import load_model
    m = load_model(path)
    W = np.asarray(m.W, np.float64)[:d]
    if W.shape[1] == 1 and len(m.labels) == 2:
        W = np.hstack([W, -W])
    order = [list(m.labels).index(c) for c in labels]
    return W[:, order]


def run_all(cmds, repeat):
    """Run every command ``repeat`` times, alternating; prints each run as it ends."""
    walls = {k: [] for k in cmds}
    rss = {}
    for _ in range(repeat):
        for name, cmd in cmds.items():
            wall, mb, _ = timed(cmd)
            walls[name].append(wall)
            rss[name] = mb
            print(f"  {name}: {wall:.2f} s, {mb:.0f} MB", flush=True)
    return {k: statistics.median(v) for k, v in walls.items()}, walls, rss


def report(title, cmds, walls, runs, rss, objectives, base):
    print(f"\n## {title}")
    for name in cmds:
        print(f"{name}: median {walls[name]:.2f} s (runs {', '.join(f'{w:.2f}' for w in runs[name])}), "
              f"peak RSS {rss[name]:.0f} MB, objective {objectives.get(name, float('nan')):.6f}, "
              f"wall / {base} {walls[name] / walls[base]:.3f}", flush=True)


def binary(args, work):
    path = make(os.path.join(work, f"bin-r{args.rows}-f{args.features}-k{args.nnz_per_row}"), args, args.features)
    opts = ["-c", str(args.c)]
    cmds = {"svmtrain -s ocas": [OURS_TRAIN, "-s", "ocas", "-q", *opts, path, os.path.join(work, "bin.ours")],
            "svmocas": [SVMOCAS, "-v", "0", *opts, path, os.path.join(work, "bin.svmocas")]}
    if not args.skip_warmup:
        timed(cmds["svmtrain -s ocas"])
    walls, runs, rss = run_all(cmds, args.repeat)
    data = read(path)
    X = csr(data, args.features)
    y = np.where(data.labels > 0, 1.0, -1.0)[:, None]
    w_ours = ours_W(os.path.join(work, "bin.ours"), args.features, [1.0, -1.0])[:, :1]
    w_svmocas = np.loadtxt(os.path.join(work, "bin.svmocas")).reshape(-1)
    assert abs(w_svmocas[-1]) == 0.0, "svmocas trained a bias"
    obj = {"svmtrain -s ocas": hinge_objective(X, y, w_ours, args.c),
           "svmocas": hinge_objective(X, y, w_svmocas[:args.features, None], args.c)}
    report(f"binary: {path}", cmds, walls, runs, rss, obj, "svmocas")
    print(f"objective: ours / svmocas = {obj['svmtrain -s ocas'] / obj['svmocas']:.5f}")


def ovr(args, work):
    path = make(os.path.join(work, f"mc-r{args.rows}-f{args.features}-k{args.nnz_per_row}-c{args.classes}"), args,
                args.features, args.classes)
    opts = ["-c", str(args.c)]
    cmds = {"svmtrain -s ocas": [OURS_TRAIN, "-s", "ocas", "-q", *opts, path, os.path.join(work, "ovr.ocas")],
            "svmtrain -s dcd": [OURS_TRAIN, "-s", "dcd", "-q", *opts, path, os.path.join(work, "ovr.dcd")],
            "liblinear-train -s 3": [LIBLINEAR_TRAIN, "-s", "3", "-q", *opts, path, os.path.join(work, "ovr.ll")]}
    if not args.skip_warmup:
        timed(cmds["svmtrain -s ocas"])
    walls, runs, rss = run_all(cmds, args.repeat)
    data = read(path)
    labels = sorted(set(data.labels.tolist()))
    X = csr(data, args.features)
    Y = np.where(data.labels[:, None] == np.array(labels)[None, :], 1.0, -1.0)
    obj = {name: hinge_objective(X, Y, ours_W(os.path.join(work, f), args.features, labels), args.c)
           for name, f in (("svmtrain -s ocas", "ovr.ocas"), ("svmtrain -s dcd", "ovr.dcd"),
                           ("liblinear-train -s 3", "ovr.ll"))}
    report(f"one-vs-rest, {args.classes} classes: {path} (objective: sum of the binary problems')", cmds, walls,
           runs, rss, obj, "liblinear-train -s 3")


def cs(args, work):
    path = make(os.path.join(work, f"mc-r{args.rows}-f{args.cs_features}-k{args.nnz_per_row}-c{args.classes}"),
                args, args.cs_features, args.classes)
    opts = ["-c", str(args.c)]
    cmds = {"svmtrain -s ocas --multiclass cs": [OURS_TRAIN, "-s", "ocas", "--multiclass", "cs", "-q", *opts, path,
                                                 os.path.join(work, "cs.ours")],
            "msvmocas": [MSVMOCAS, "-v", "0", *opts, path, os.path.join(work, "cs.msvmocas")]}
    if not args.skip_warmup:
        timed(cmds["svmtrain -s ocas --multiclass cs"])
    walls, runs, rss = run_all(cmds, args.repeat)
    data = read(path)
    labels = sorted(set(data.labels.tolist()))      # msvmocas's columns: classes 1..M in order
    X = csr(data, args.cs_features)
    yi = np.searchsorted(labels, data.labels)
    W_m = np.loadtxt(os.path.join(work, "cs.msvmocas"))
    W_full = np.zeros((args.cs_features, W_m.shape[1]))
    W_full[:W_m.shape[0]] = W_m[:args.cs_features]
    obj = {"svmtrain -s ocas --multiclass cs": cs_objective(X, yi, ours_W(os.path.join(work, "cs.ours"),
                                                                          args.cs_features, labels), args.c),
           "msvmocas": cs_objective(X, yi, W_full, args.c)}
    report(f"Crammer-Singer, {args.classes} classes: {path}", cmds, walls, runs, rss, obj, "msvmocas")
    print(f"objective: ours / msvmocas = {obj['svmtrain -s ocas --multiclass cs'] / obj['msvmocas']:.5f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sections", default="binary,ovr,cs")
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--features", type=int, default=1300000)
    ap.add_argument("--cs-features", type=int, default=100000)
    ap.add_argument("--nnz-per-row", type=int, default=500)
    ap.add_argument("--classes", type=int, default=20)
    ap.add_argument("-c", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--skip-warmup", action="store_true",
                    help="no untimed first run of ours (the numba cache is known to be warm)")
    args = ap.parse_args()
    work = args.workdir or tempfile.mkdtemp(prefix="bench_ocas_sparse_")
    os.makedirs(work, exist_ok=True)
    print(f"{args.rows} rows, ~{args.nnz_per_row} nonzeros per row, C = {args.c}; load {load_average()}; {work}")
    for section in args.sections.split(","):
        {"binary": binary, "ovr": ovr, "cs": cs}[section](args, work)


if __name__ == "__main__":
    main()
