#!/usr/bin/env python3
"""Linear solvers against their peers, on the same files, in one run.

For each data set, every installed program trains at the same C (no bias):

    svmtrain -s dcd      vs  liblinear-train -s 3   (LIBLINEAR, L1-loss dual CD)
    svmtrain -s ocas     vs  svmocas                (same TolRel 0.01)
    svmtrain -s pegasos      (lambda = 1/(n C))

and the table reports wall time, peak RSS (of the process, from GNU time),
the primal objective 1/2|w|^2 + C sum hinge computed here from each model
file, its ratio to the best objective, test accuracy when a test file is
given, iterations where the program reports them, and time ratios
svmtrain/peer. Our runs come after a warm-up so numba's on-disk cache is
filled (what every run after a user's first one sees).

    python scripts/bench.py                      # a9a + the ~700 MB synthetic file
    python scripts/bench.py --rows 100000        # a smaller synthetic file
    python scripts/bench.py --datasets a9a       # bundled data only
"""
import argparse
import csv
import lzma
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
BIN = os.path.dirname(sys.executable)


def run(cmd):
    """(wall seconds, combined output) of one command; raises when it fails."""
    t = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - t
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-2000:]}")
    return wall, proc.stdout


def timed(cmd):
    """(wall seconds, peak RSS in MB, output) of cmd; RSS from GNU time when installed."""
    if not os.path.exists("/usr/bin/time"):
        wall, text = run(cmd)
        return wall, float("nan"), text
    rss_file = os.path.join(WORKDIR, ".rss")
    wall, text = run(["/usr/bin/time", "-f", "%M", "-o", rss_file] + cmd)
    with open(rss_file) as f:
        return wall, int(f.read().split()[-1]) / 1024.0, text


def load_any_model(path, kind, n_features):
    """A LinearModel from our model file, a LIBLINEAR model, or svmocas's w-then-w0 file."""
    from svmtrain.io.model_io import load_model
    from svmtrain.model import LinearModel
    if kind != "svmocas":
        return load_model(path)
    w = np.loadtxt(path)
    W = np.zeros((n_features, 1))
    W[:min(n_features, len(w) - 1), 0] = w[:-1][:n_features]
    return LinearModel(labels=[1.0, -1.0], W=W, n_features=n_features, b=[w[-1]])


def objective(model, X, y, C):
    """1/2 |w|^2 + C sum hinge, w and b read from a binary model scoring +1."""
    scores = model.decision_function(X)[:, 0]
    if model.labels[0] != 1.0:
        scores = -scores
    w = model.W[:, 0]
    return 0.5 * float(w @ w) + C * float(np.maximum(0.0, 1.0 - y * scores).sum())


def iterations(kind, text):
    """Iterations as the program printed them (None when it printed none)."""
    if kind == "svmocas":
        return len(re.findall(r"^\s*\d+: tim=", text, re.M))
    m = re.search(r"#iter = (\d+)", text)
    return int(m.group(1)) if m else None


def datasets(args):
    out = []
    if "a9a" in args.datasets:
        for name in ("a9a", "a9a.t"):
            plain = os.path.join(WORKDIR, name)
            if not os.path.exists(plain):
                with lzma.open(os.path.join(ROOT, "data", name + ".xz")) as src, open(plain, "wb") as dst:
                    shutil.copyfileobj(src, dst)
        out.append(("a9a", os.path.join(WORKDIR, "a9a"), os.path.join(WORKDIR, "a9a.t")))
    if "synthetic" in args.datasets:
        from bench_parse import cached_file   # shared with the parse benchmark: generated once
        path = str(cached_file(WORKDIR, args.rows, args.features, args.nnz, 1))
        out.append((os.path.basename(path), path, None))
    return out


def main():
    global WORKDIR
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default="a9a,synthetic")
    ap.add_argument("--solvers", default="dcd,ocas,pegasos")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--features", type=int, default=200_000)
    ap.add_argument("--nnz", type=int, default=60)
    ap.add_argument("-c", "--cost", type=float, default=1.0)
    ap.add_argument("--workdir", default=os.path.join(ROOT, "bench-data"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "bench"))
    args = ap.parse_args()
    WORKDIR = os.path.abspath(args.workdir)
    os.makedirs(WORKDIR, exist_ok=True)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    from svmtrain.io.reader import read_libsvm

    ours = os.path.join(BIN, "svm-train")
    C = args.cost
    programs = []   # (label, kind, solver, peer label or None, command builder)
    solvers = args.solvers.split(",")
    if "dcd" in solvers:
        programs.append(("svmtrain dcd", "svmtrain", "dcd", "liblinear -s 3",
                         lambda tr, m: [ours, "-q", "-s", "dcd", "-c", str(C), tr, m]))
        if shutil.which("liblinear-train"):
            programs.append(("liblinear -s 3", "liblinear", None, None,
                             lambda tr, m: ["liblinear-train", "-s", "3", "-c", str(C), tr, m]))
    if "ocas" in solvers:
        programs.append(("svmtrain ocas", "svmtrain", "ocas", "svmocas",
                         lambda tr, m: [ours, "-s", "ocas", "-c", str(C), tr, m]))
        if shutil.which("svmocas"):
            programs.append(("svmocas", "svmocas", None, None,
                             lambda tr, m: ["svmocas", "-c", str(C), tr, m]))
    if "pegasos" in solvers:
        programs.append(("svmtrain pegasos", "svmtrain", "pegasos", None,
                         lambda tr, m: [ours, "-q", "-s", "pegasos", "-c", str(C), tr, m]))

    # warm numba's cache for every solver of ours
    for _, kind, solver, _, build in programs:
        if kind == "svmtrain":
            run(build(os.path.join(ROOT, "data", "heart_scale.xz"), os.path.join(WORKDIR, "warm.model")))

    rows = []
    for name, train_path, test_path in datasets(args):
        print(f"\n## {name}", flush=True)
        X = read_libsvm(train_path)
        y = np.where(X.labels > 0, 1.0, -1.0)
        T = read_libsvm(test_path) if test_path else None
        size_mb = os.path.getsize(train_path) / 1e6
        results = {}
        for label, kind, solver, peer, build in programs:
            model_path = os.path.join(WORKDIR, f"{name}.{label.replace(' ', '_')}.model")
            wall, rss, text = timed(build(train_path, model_path))
            model = load_any_model(model_path, kind, X.n_features)
            obj = objective(model, X, y, C)
            acc = float(np.mean(model.predict(T) == T.labels)) * 100 if T is not None else float("nan")
            results[label] = dict(dataset=name, program=label, size_mb=size_mb, wall_s=wall, peak_rss_mb=rss,
                                  objective=obj, test_acc=acc, iterations=iterations(kind, text),
                                  peer=peer)
            print(f"  {label:18s} {wall:8.2f} s  {rss:8.0f} MB  obj {obj:.6g}", flush=True)
        best = min(r["objective"] for r in results.values())
        for r in results.values():
            r["obj_ratio"] = r["objective"] / best
            p = results.get(r["peer"]) if r["peer"] else None
            r["time_ratio"] = r["wall_s"] / p["wall_s"] if p else float("nan")
            r["rss_ratio"] = r["peak_rss_mb"] / p["peak_rss_mb"] if p else float("nan")
            rows.append(r)

    cols = ["dataset", "program", "size_mb", "wall_s", "peak_rss_mb", "objective", "obj_ratio", "test_acc",
            "iterations", "peer", "time_ratio", "rss_ratio"]
    with open(args.out + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows({k: r.get(k) for k in cols} for r in rows)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(_fmt(r.get(k)) for k in cols) + " |")
    with open(args.out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n" + "\n".join(lines))
    print(f"\nwritten {args.out}.md and {args.out}.csv")


def _fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return "" if v != v else f"{v:.4g}"
    return str(v)


if __name__ == "__main__":
    main()
