#!/usr/bin/env python3
"""Every svmtrain solver against every installed peer, on the same files, in one table.

Linear section (every data file, the same C, no bias):

    svmtrain -s dcd | -s ocas | -s pegasos       (.venv/bin/svm-train)
    liblinear-train -s 3                        (/usr/bin/liblinear-train, L1-loss dual CD)
    svmocas                                     (/usr/bin/svmocas, TolRel 0.01)
    sklearn SGDClassifier, LinearSVC            (when scikit-learn is importable)

Kernel section (a9a, RBF gamma 0.01, C 100, the SBP and ASSET papers' setting):

    LIBSVM /usr/bin/svm-train -c 100 -g 0.01
    svmtrain -s sbp | -s asset (Nystrom 512, Fourier 2048) | -s pegasos -t 2 (-T --kernel-epochs)

Files: the bundled data (a9a with a9a.t; heart_scale and mushrooms split 80/20),
../shared/data when present (diabetes_scale, svmguide1, split 80/20) and a
synthetic train/test pair from scripts/gen_synthetic.py (--rows, --test-rows,
--features, --nnz). Every program is one process timed from start to exit
(reading, training, writing its model): wall seconds and peak RSS from GNU
time. The primal objective lambda/2 |w|^2 + mean hinge at the common lambda =
1/(n C) and the test accuracy are computed here, by one function each
(scripts/benchlib.py), from every model file, so they are comparable.
Ratios: objective / the best objective on that file, wall time and RSS /
the best peer's (the fastest, the leanest) on that file.

    python scripts/bench.py                               # default sizes (make bench)
    python scripts/bench.py --rows 1000000 --test-rows 100000   # a ~900 MB synthetic file
    python scripts/bench.py --sections linear --datasets a9a
"""
import argparse
import importlib.util
import os
import sys
from dataclasses import dataclass

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as L  # noqa: E402

COLUMNS = ["section", "dataset", "n_train", "program", "wall_s", "peak_rss_mb", "objective", "obj_vs_best",
           "test_acc_pct", "time_vs_best_peer", "rss_vs_best_peer"]
SPLIT = {"bundled": ["heart_scale", "mushrooms"], "shared": ["diabetes_scale", "svmguide1"]}   # split 80/20


@dataclass
class Program:
    label: str
    peer: bool
    command: object          # (train, model, n_features) -> argv
    load: str = "model"      # how to read its model: model (svmtrain/LIBLINEAR/LIBSVM file), svmocas, npz


def linear_programs(C, sklearn):
    c = repr(C)
    progs = [Program(f"svmtrain {s}", False, (lambda s: lambda tr, m, d: [L.OURS_TRAIN, "-q", "-s", s, "-c", c, tr, m])(s))
             for s in ("dcd", "ocas", "pegasos")]
    if os.path.exists(L.LIBLINEAR_TRAIN):
        progs.append(Program("liblinear -s 3", True, lambda tr, m, d: [L.LIBLINEAR_TRAIN, "-q", "-s", "3", "-c", c, tr, m]))
    if os.path.exists(L.SVMOCAS):
        progs.append(Program("svmocas", True, lambda tr, m, d: [L.SVMOCAS, "-v", "0", "-c", c, tr, m], "svmocas"))
    if sklearn:
        fit = os.path.join(L.ROOT, "scripts", "sklearn_fit.py")
        for kind, name in (("sgd", "SGDClassifier"), ("linearsvc", "LinearSVC")):
            progs.append(Program(f"sklearn {name}", True, (lambda kind: lambda tr, m, d: [
                sys.executable, fit, kind, tr, m + ".npz", "--C", c, "--n-features", str(d)])(kind), "npz"))
    return progs


def kernel_programs(C, gamma, epochs):
    c, g = repr(C), repr(gamma)
    ours = [L.OURS_TRAIN, "-q", "-c", c, "-g", g]
    progs = []
    if os.path.exists(L.LIBSVM_TRAIN):
        progs.append(Program("LIBSVM svm-train", True, lambda tr, m, d: [L.LIBSVM_TRAIN, "-q", "-c", c, "-g", g, tr, m]))
    for label, extra in (("svmtrain sbp", ["-s", "sbp"]),
                         ("svmtrain asset nystrom 512", ["-s", "asset", "-D", "512"]),
                         ("svmtrain asset fourier 2048", ["-s", "asset", "--approx", "fourier", "-D", "2048"]),
                         (f"svmtrain pegasos -t 2 -T {epochs}", ["-s", "pegasos", "-t", "2", "-T", str(epochs)])):
        progs.append(Program(label, False, (lambda extra: lambda tr, m, d: ours + extra + [tr, m])(extra)))
    return progs


def load(prog, path, n_features):
    from svmtrain.io.model_io import load_model
    from svmtrain.models.linear import LinearModel
    if prog.load == "svmocas":      # w (n_features lines) then w0
        w = np.loadtxt(path).reshape(-1)
        W = np.zeros(n_features)
        W[:min(n_features, len(w) - 1)] = w[:-1][:n_features]
        return LinearModel(labels=[1.0, -1.0], W=W, n_features=n_features, b=[w[-1]])
    if prog.load == "npz":
        z = np.load(path + ".npz")
        W = np.zeros(n_features)
        W[:min(n_features, len(z["w"]))] = z["w"][:n_features]
        return LinearModel(labels=z["labels"], W=W, n_features=n_features, b=[float(z["b"])])
    return load_model(path)


def datasets(args):
    """(name, train, test) of the linear section, plain text in the work folder."""
    want = args.datasets.split(",")
    out = []
    if "a9a" in want:
        out.append(("a9a", L.plain(L.data_file("a9a.xz"), args.workdir), L.plain(L.data_file("a9a.t.xz"), args.workdir)))
    known = SPLIT["bundled"] + SPLIT["shared"]
    names = [n for token in want for n in SPLIT.get(token, [token] if token in known else [])]
    for name in dict.fromkeys(names):
        src = L.data_file(name + ".xz")
        if src is None:
            print(f"{name}: not bundled and no {L.SHARED_DATA}: left out")
        else:
            out.append((name, *L.split(src, args.workdir, name)))
    if "synthetic" in want:
        train, test = L.synthetic(args.workdir, args.rows, args.features, args.nnz, args.test_rows)
        out.append((os.path.basename(train).removesuffix(".svm"), train, test))
    return out


def bench_file(section, name, train, test, programs, C, workdir):
    from svmtrain.io.reader import read_libsvm
    X, T = read_libsvm(train), read_libsvm(test)
    lam = 1.0 / (X.n_rows * C)
    rows = []
    print(f"\n## {section}: {name} ({X.n_rows} rows, {X.n_features} features; lambda = {lam:.4g}, C = {C:g}); "
          f"load {L.load_average()}", flush=True)
    for prog in programs:
        model_path = os.path.join(workdir, f"{name}.{prog.label.replace(' ', '_')}.model")
        try:
            wall, rss, _ = L.timed(prog.command(train, model_path, X.n_features))
        except RuntimeError as e:
            lines = str(e).splitlines()   # the command, then its output: its last line says why
            print(f"  {prog.label}: FAILED {lines[0]} {lines[-1] if len(lines) > 1 else ''}", flush=True)
            continue
        model = load(prog, model_path, X.n_features)
        r = dict(section=section, dataset=name, n_train=X.n_rows, program=prog.label, peer=prog.peer, wall_s=wall,
                 peak_rss_mb=rss, objective=L.objective(model, X, lam), test_acc_pct=100.0 * L.accuracy(model, T))
        rows.append(r)
        print(f"  {prog.label:32s} {wall:8.2f} s {rss:8.0f} MB  objective {r['objective']:.6g}  "
              f"test {r['test_acc_pct']:.2f} %", flush=True)
    best = min(r["objective"] for r in rows)
    peers = [r for r in rows if r["peer"]]
    for r in rows:
        r["obj_vs_best"] = r["objective"] / best if best > 0 else float("nan")
        r["time_vs_best_peer"] = r["wall_s"] / min(p["wall_s"] for p in peers) if peers else float("nan")
        r["rss_vs_best_peer"] = r["peak_rss_mb"] / min(p["peak_rss_mb"] for p in peers) if peers else float("nan")
    return rows


def warm_up(programs, workdir):
    """Run each of our programs once on a small file: numba compiles (or loads) its code."""
    heart = L.plain(L.data_file("heart_scale.xz"), workdir)
    for prog in programs:
        if not prog.peer:
            L.run(prog.command(heart, os.path.join(workdir, "warm.model"), 13))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sections", default="linear,kernel")
    ap.add_argument("--datasets", default="a9a,bundled,shared,synthetic",
                    help="linear section: a9a, bundled (heart_scale, mushrooms), shared (../shared/data), "
                    "synthetic, or names")
    ap.add_argument("--rows", type=int, default=200_000, help="synthetic training rows")
    ap.add_argument("--test-rows", type=int, default=50_000, help="synthetic test rows")
    ap.add_argument("--features", type=int, default=200_000)
    ap.add_argument("--nnz", type=int, default=60, help="synthetic nonzeros per row")
    ap.add_argument("-c", "--cost", type=float, default=1.0, help="C of the linear section")
    ap.add_argument("--kernel-C", type=float, default=100.0)
    ap.add_argument("--kernel-gamma", type=float, default=0.01)
    ap.add_argument("--kernel-epochs", type=int, default=2, help="-T of kernel Pegasos")
    ap.add_argument("--no-sklearn", action="store_true")
    ap.add_argument("--workdir", default=os.path.join(L.ROOT, "bench-data"))
    ap.add_argument("--out", default=os.path.join(L.RESULTS, "bench"))
    args = ap.parse_args()
    args.workdir = os.path.abspath(args.workdir)
    os.makedirs(args.workdir, exist_ok=True)
    sklearn = not args.no_sklearn and importlib.util.find_spec("sklearn") is not None
    if not args.no_sklearn and not sklearn:
        print("scikit-learn is not importable: its peers are left out")
    sections = args.sections.split(",")
    before = L.load_average()
    rows = []
    if "linear" in sections:
        progs = linear_programs(args.cost, sklearn)
        warm_up(progs, args.workdir)
        for name, train, test in datasets(args):
            rows += bench_file("linear", name, train, test, progs, args.cost, args.workdir)
    if "kernel" in sections:
        progs = kernel_programs(args.kernel_C, args.kernel_gamma, args.kernel_epochs)
        warm_up(progs, args.workdir)
        train, test = L.plain(L.data_file("a9a.xz"), args.workdir), L.plain(L.data_file("a9a.t.xz"), args.workdir)
        rows += bench_file("kernel", f"a9a rbf g={args.kernel_gamma:g}", train, test, progs, args.kernel_C,
                           args.workdir)
    md = L.write_table(rows, COLUMNS, args.out)
    note = (f"\nLoad average before {before}, after {L.load_average()} ({os.cpu_count()} cores). "
            "Wall time and peak RSS of whole processes (reading, training, writing the model).\n")
    with open(args.out + ".md", "a") as f:
        f.write(note)
    print("\n" + md + note)
    print(f"written {args.out}.md and {args.out}.csv")


if __name__ == "__main__":
    main()
