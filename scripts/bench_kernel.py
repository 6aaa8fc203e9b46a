"""Kernel SVM on a9a: `svm-train -s sbp` (or `--solver smo`) against LIBSVM's
svm-train, in one run.

RBF kernel, gamma = 0.01, C = 100 (lambda = 1/(100 n)), with a bias (LIBSVM
always has one; sbp uses its unregularised bias by default, smo LIBSVM's).
For smo, which solves LIBSVM's dual exactly, the table also gives each
program's printed dual objective ``obj``. Both programs
read the same decompressed files; wall times are of whole commands
(start-up, reading, training, writing the model). Our solver's numba code
is compiled once before the timed runs (a one-time cost, cached on disk; for
smo both the pair steps and the batched working sets).
Prints a Markdown table with the training-time ratio ours / LIBSVM. When
scikit-learn-intelex is installed (optional; not a dependency), its SVC
(oneDAL) joins the table as a whole program too (``scripts/sklearnex_svc.py``:
reading with scikit-learn's reader, fitting, predicting).
"""
import argparse
import importlib.util
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import (LIBSVM_PREDICT, LIBSVM_TRAIN, OURS_PREDICT, OURS_TRAIN, data_file, plain,  # noqa: E402
                      printed_accuracy, run)


def accuracy(text):
    """The printed accuracy in percent."""
    return 100.0 * printed_accuracy(text)


def dual_objective(text):
    """The printed ``obj = ...`` (LIBSVM's and -s smo's dual objective), or "-"."""
    found = re.search(r"obj = (-?[0-9.]+)", text)
    return found.group(1) if found else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--solver", default="sbp", choices=("sbp", "smo"), help="our kernel solver")
    ap.add_argument("--runs", type=int, default=3, help="timed runs of ours (the median is compared)")
    ap.add_argument("--solver-args", "--sbp-args", default="",
                    help="extra svm-train flags for our solver (e.g. '--seed 2')")
    ap.add_argument("--no-libsvm", action="store_true", help="skip LIBSVM even when installed")
    ap.add_argument("--no-sklearnex", action="store_true", help="skip scikit-learn-intelex even when installed")
    args = ap.parse_args()
    ours_train, ours_predict = OURS_TRAIN, OURS_PREDICT
    have_libsvm = not args.no_libsvm and os.path.exists(LIBSVM_TRAIN) and os.path.exists(LIBSVM_PREDICT)
    with tempfile.TemporaryDirectory() as tmp:
        train, test = plain(data_file("a9a.xz"), tmp), plain(data_file("a9a.t.xz"), tmp)
        # compile (or load) numba's code once, on a small file
        heart = plain(data_file("heart_scale.xz"), tmp)
        name = args.solver
        run([ours_train, "-q", "-s", name, heart, os.path.join(tmp, "warm.model")])
        if name == "smo":       # the parallel twins (a9a's size) of both methods, in a few steps
            for ws in ("1536", "2"):
                run([ours_train, "-q", "-s", name, "--working-set", ws, "--max-iter", "3000", train,
                     os.path.join(tmp, "warm.model")])

        ours_cmd = [ours_train, "-s", name, "-c", "100", "-g", "0.01", *args.solver_args.split()]
        # smo: its default (the batched working sets on a9a) and LIBSVM's pair steps (--working-set 2)
        variants = [(name, ours_cmd)]
        if name == "smo" and "--working-set" not in args.solver_args:
            variants.append(("smo --working-set 2 (pair steps)", ours_cmd + ["--working-set", "2"]))
        rows = []
        medians = {}
        for label, cmd in variants:
            times = []
            for r in range(args.runs):
                model = os.path.join(tmp, f"{name}{r}.model")
                dt, out = run(cmd + [train, model])
                pt, pout = run([ours_predict, test, model, os.path.join(tmp, f"{name}.out")])
                nsv = re.search(r"nSV = (\d+)", out)
                times.append(dt)
                rows.append((f"{label} (run {r + 1})", dt, accuracy(pout), nsv.group(1) if nsv else "?", pt,
                             dual_objective(out)))
                print(f"{label} run {r + 1}: train {dt:.2f} s, accuracy {accuracy(pout):.2f} %, predict {pt:.2f} s",
                      file=sys.stderr)
            medians[label] = sorted(times)[len(times) // 2]
        lib = None
        if have_libsvm:
            model = os.path.join(tmp, "libsvm.model")
            dt, out = run([LIBSVM_TRAIN, "-c", "100", "-g", "0.01", train, model])
            pt, pout = run([LIBSVM_PREDICT, test, model, os.path.join(tmp, "libsvm.out")])
            nsv = re.search(r"Total nSV = (\d+)", out)
            lib = dt
            rows.append(("LIBSVM `svm-train -c 100 -g 0.01`", dt, accuracy(pout), nsv.group(1) if nsv else "?", pt,
                         dual_objective(out)))
            print(f"LIBSVM: train {dt:.2f} s, accuracy {accuracy(pout):.2f} %", file=sys.stderr)
        if not args.no_sklearnex and importlib.util.find_spec("sklearnex") is not None:
            dt, out = run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "sklearnex_svc.py"),
                           train, test, "100", "0.01"])
            nsv = re.search(r"nSV = (\d+)", out)
            fit = float(re.search(r"train = ([0-9.]+)", out).group(1))
            rows.append((f"scikit-learn-intelex SVC (fit alone {fit:.2f} s; predict included)", dt, accuracy(out),
                         nsv.group(1) if nsv else "?", float("nan"), "-"))
            print(f"sklearnex: {dt:.2f} s (fit {fit:.2f} s), accuracy {accuracy(out):.2f} %", file=sys.stderr)
    print(f"a9a (n = 32561), RBF gamma = 0.01, C = 100, with bias; our command: "
          f"`{' '.join(['svm-train'] + ours_cmd[1:])}`\n")
    print("| solver | train wall time (s) | a9a.t accuracy (%) | nSV | dual obj | predict wall time (s) | time / LIBSVM |")
    print("|---|---|---|---|---|---|---|")
    for label, dt, acc, nsv, pt, obj in rows:
        ratio = f"{dt / lib:.3f}" if lib else "n/a"
        print(f"| {label} | {dt:.2f} | {acc:.2f} | {nsv} | {obj} | {pt:.2f} | {ratio} |")
    if lib:
        print()
        for label, t in medians.items():
            print(f"{label} median {t:.2f} s = {t / lib:.3f} x LIBSVM's {lib:.2f} s (target <= 0.25)")
    else:
        print("\nLIBSVM (/usr/bin/svm-train) not found: no ratio")


if __name__ == "__main__":
    main()
