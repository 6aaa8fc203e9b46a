#!/usr/bin/env python3
"""make exp-survey: every solver of the survey's Table 1 on the same data as the training set grows.

The survey in shared/papers (Menon 2009) compares twelve solvers in its Table 1 and asks in
section 5.3 whether training time falls or grows with the number of training rows n. This
experiment runs svmtrain's implementation of each row of that table (and sbp and asset) with
its defaults on the first n rows of a fixed random order of a training set, for growing n,
and measures the training time (in this process, after numba's first compile) and the
error on a fixed test set:

    survey row            svm-train                       kind
    SMO / SVMlight        -s smo                          kernel, exact dual
    Core Vector Machine   -s cvm                          kernel, squared hinge
    SVMperf / BMRM        -s bmrm                         linear
    NORMA                 -s norma (--budget 2000)        kernel
    SVM-SGD               -s sgd --update bottou          linear
    Pegasos               -s pegasos                      linear (and -t 2: kernel)
    LibLinear             -s dcd                          linear
    SGD-QN                -s sgd --update sgdqn           linear
    FOLOS                 -s sgd --update fobos           linear
    OCAS                  -s ocas                         linear

Linear solvers get a fixed lambda (--lam, default 1e-4), so the regularised problem and the
steps of the SGD family do not change with n (section 5.3's setting); kernel solvers a fixed
RBF C and gamma (LIBSVM's convention: -c 100 -g 0.01 on a9a, -c 1 -g 0.05 on the dense
synthetic set), and run up to --kernel-max-n rows (SMO's time grows about as n^2).

Data: a9a (train a9a, test a9a.t; bundled under data/) and a dense synthetic set (20 features,
a hidden linear model with flipped labels; scripts/gen_synthetic.py, kept under bench-data/).
Writes results/exp-survey.csv (one row per dataset, n and solver: seconds, test error,
objective, support vectors or nonzero weights) and results/exp-survey.png (time and test error
against n, one row of panels per dataset), and prints a table per dataset.

    python scripts/exp_survey.py [--datasets a9a,synthetic] [--sizes-a9a 4000,8000,16000,32561]
                                 [--sizes-synthetic 5000,10000,20000,40000] [--solvers smo,dcd,...]
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exp_common as E  # noqa: E402

NAME = "exp-survey"
# (label, TrainParams fields, kernel?) in the survey's Table 1 order, then svmtrain's other kernel solvers
SOLVERS = [
    ("SMO / SVMlight", dict(solver="smo"), True),
    ("CVM", dict(solver="cvm"), True),
    ("BMRM / SVMperf", dict(solver="bmrm"), False),
    ("NORMA", dict(solver="norma"), True),
    ("SVM-SGD", dict(solver="sgd", update="bottou"), False),
    ("Pegasos", dict(solver="pegasos"), False),
    ("Pegasos, kernel", dict(solver="pegasos", kernel_type=2), True),
    ("LibLinear (dcd)", dict(solver="dcd"), False),
    ("SGD-QN", dict(solver="sgd", update="sgdqn"), False),
    ("FOLOS", dict(solver="sgd", update="fobos"), False),
    ("OCAS", dict(solver="ocas"), False),
    ("SBP", dict(solver="sbp"), True),
    ("ASSET", dict(solver="asset"), True),
]
KERNEL = {"a9a": dict(C=100.0, gamma=0.01), "synthetic": dict(C=1.0, gamma=0.05)}
SYNTHETIC_FEATURES = 20


def ints(text):
    return [int(v) for v in text.split(",") if v]


def key(params):
    """The short name of a run: the solver and its update rule or kernel."""
    name = params["solver"]
    if "update" in params:
        name += "-" + params["update"]
    if params.get("kernel_type"):
        name += "-rbf"
    return name


def load(dataset, sizes, workdir):
    """(training Chunk in a fixed random order, test Chunk) of ``dataset``."""
    from svmtrain.data.dataset import take_rows
    if dataset == "a9a":
        train, test = E.read("a9a.xz"), E.read("a9a.t.xz")
    else:
        paths = E.L.synthetic(workdir, max(sizes), SYNTHETIC_FEATURES, SYNTHETIC_FEATURES, 10000)
        train, test = E.read(paths[0]), E.read(paths[1])
    order = np.random.default_rng(1).permutation(train.n_rows)
    return take_rows(train, order), test


def run_one(X, test, params):
    """(seconds, test error, objective, size) of one training run on X: the size is the
    support vectors of a kernel model or the nonzero weights of a linear one."""
    from svmtrain.params import TrainParams
    from svmtrain.prediction import predict
    from svmtrain.training.train import train
    t0 = time.perf_counter()
    model = train(X, TrainParams(**params))
    seconds = time.perf_counter() - t0
    error = float(np.mean(predict(test, model) != test.labels))
    results = getattr(model, "fit_results", None) or []
    objective = float(np.mean([r.objective for r in results])) if results else float("nan")
    size = getattr(model, "n_sv", None)
    if size is None:
        size = int(np.count_nonzero(np.any(model.W != 0, axis=1))) if hasattr(model, "W") else -1
    return seconds, error, objective, int(size)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default="a9a,synthetic")
    ap.add_argument("--sizes-a9a", type=ints, default=ints("4000,8000,16000,32561"))
    ap.add_argument("--sizes-synthetic", type=ints, default=ints("5000,10000,20000,40000"))
    ap.add_argument("--kernel-max-n", type=int, default=40000, help="largest n of the kernel solvers")
    ap.add_argument("--lam", type=float, default=1e-4, help="lambda of the linear solvers")
    ap.add_argument("--solvers", default=None, help="comma-separated short names (smo, sgd-sgdqn, pegasos-rbf, ...)")
    ap.add_argument("--workdir", default=os.path.join(E.L.ROOT, "bench-data"))
    ap.add_argument("--replot", action="store_true", help="only redraw the table and PNG from results/exp-survey.csv")
    args = ap.parse_args()
    if args.replot:
        rows = read_rows()
        print_tables(rows)
        plot(rows)
        return
    chosen = [s for s in SOLVERS if args.solvers is None or key(s[1]) in args.solvers.split(",")]
    print(f"{NAME}: {len(chosen)} solvers; load {E.L.load_average()}", flush=True)
    for _, params, _ in chosen:
        E.warm_up(**params)
    rows = []
    for dataset in args.datasets.split(","):
        sizes = getattr(args, "sizes_" + dataset)
        full, test = load(dataset, sizes, args.workdir)
        from svmtrain.data.dataset import take_rows
        for n in sorted(s for s in sizes if s <= full.n_rows):
            X = take_rows(full, np.arange(n))
            for label, params, kernel in chosen:
                if kernel and n > args.kernel_max_n:
                    continue
                run = dict(params, **(KERNEL[dataset] if kernel else {"lam": args.lam}))
                seconds, error, objective, size = run_one(X, test, run)
                rows.append(dict(dataset=dataset, n=n, solver=label, key=key(params), kernel=kernel,
                                 train_s=seconds, test_error=error, objective=objective, size=size))
                print(f"  {dataset} n {n:6d} {label:18s} {seconds:8.2f} s  test error {100 * error:6.2f} %  "
                      f"objective {objective:.6g}  size {size}", flush=True)
    E.write_csv(NAME, rows)
    print_tables(rows)
    plot(rows)


def read_rows():
    """The rows of results/exp-survey.csv with their numbers as numbers."""
    import csv
    with open(os.path.join(E.RESULTS, NAME + ".csv")) as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r.update(n=int(r["n"]), kernel=r["kernel"] == "True", train_s=float(r["train_s"]),
                 test_error=float(r["test_error"]), objective=float(r["objective"]), size=int(r["size"]))
    return rows


def print_tables(rows):
    """One markdown table per dataset: a row per solver, a column per n, 'seconds (test error %)'."""
    for dataset in dict.fromkeys(r["dataset"] for r in rows):
        mine = [r for r in rows if r["dataset"] == dataset]
        sizes = sorted({r["n"] for r in mine})
        print(f"\n{dataset}: training seconds (test error %)\n")
        print("| solver | " + " | ".join(f"n = {n}" for n in sizes) + " |")
        print("|---|" + "---|" * len(sizes))
        for label in dict.fromkeys(r["solver"] for r in mine):
            cells = {r["n"]: f"{r['train_s']:.2f} ({100 * r['test_error']:.2f})" for r in mine if r["solver"] == label}
            print(f"| {label} | " + " | ".join(cells.get(n, "") for n in sizes) + " |")


def plot(rows):
    plt = E.pyplot(NAME)
    if plt is None:
        return
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    fig, axes = plt.subplots(len(datasets), 2, figsize=(11, 4 * len(datasets)), squeeze=False)
    markers = "os^vD<>pPX*hd"
    for (ax_t, ax_e), dataset in zip(axes, datasets):
        mine = [r for r in rows if r["dataset"] == dataset]
        for j, label in enumerate(dict.fromkeys(r["solver"] for r in mine)):
            pts = sorted((r["n"], r["train_s"], 100 * r["test_error"], r["kernel"]) for r in mine if r["solver"] == label)
            style = dict(marker=markers[j % len(markers)], ms=4, lw=1, ls="-" if pts[0][3] else "--", label=label,
                         color=plt.cm.tab20(j % 20))
            ax_t.plot([p[0] for p in pts], [p[1] for p in pts], **style)
            ax_e.plot([p[0] for p in pts], [p[2] for p in pts], **style)
        ax_t.set(xscale="log", yscale="log", xlabel="training rows n", ylabel="training seconds",
                 title=f"{dataset}: time (solid: kernel, dashed: linear)")
        ax_e.set(xscale="log", xlabel="training rows n", ylabel="test error (%)", title=f"{dataset}: test error")
        ax_e.legend(fontsize=7, ncol=2)
    E.save(fig, NAME)


if __name__ == "__main__":
    main()
