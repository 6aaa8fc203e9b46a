"""Kernel SVM on a9a: `svm-train -s sbp` against LIBSVM's svm-train, in one run.

RBF kernel, gamma = 0.01, C = 100 (lambda = 1/(100 n)), with a bias (LIBSVM
always has one; sbp uses its unregularised bias by default). Both programs
read the same decompressed files; wall times are of whole commands
(start-up, reading, training, writing the model). Our solver's numba code
is compiled once before the timed runs (a one-time cost, cached on disk).
Prints a Markdown table with the training-time ratio sbp / LIBSVM.
"""
import argparse
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


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=3, help="timed sbp runs (the median is compared)")
    ap.add_argument("--sbp-args", default="", help="extra svm-train flags for sbp (e.g. '--seed 2')")
    ap.add_argument("--no-libsvm", action="store_true", help="skip LIBSVM even when installed")
    args = ap.parse_args()
    ours_train, ours_predict = OURS_TRAIN, OURS_PREDICT
    have_libsvm = not args.no_libsvm and os.path.exists(LIBSVM_TRAIN) and os.path.exists(LIBSVM_PREDICT)
    with tempfile.TemporaryDirectory() as tmp:
        train, test = plain(data_file("a9a.xz"), tmp), plain(data_file("a9a.t.xz"), tmp)
        # compile (or load) numba's code once, on a small file
        heart = plain(data_file("heart_scale.xz"), tmp)
        run([ours_train, "-q", "-s", "sbp", heart, os.path.join(tmp, "warm.model")])

        sbp_cmd = [ours_train, "-s", "sbp", "-c", "100", "-g", "0.01", *args.sbp_args.split()]
        rows = []
        times = []
        for r in range(args.runs):
            model = os.path.join(tmp, f"sbp{r}.model")
            dt, out = run(sbp_cmd + [train, model])
            pt, pout = run([ours_predict, test, model, os.path.join(tmp, "sbp.out")])
            nsv = re.search(r"nSV = (\d+)", out)
            times.append(dt)
            rows.append((f"sbp (run {r + 1})", dt, accuracy(pout), nsv.group(1) if nsv else "?", pt))
            print(f"sbp run {r + 1}: train {dt:.2f} s, accuracy {accuracy(pout):.2f} %, predict {pt:.2f} s",
                  file=sys.stderr)
        sbp_time = sorted(times)[len(times) // 2]
        lib = None
        if have_libsvm:
            model = os.path.join(tmp, "libsvm.model")
            dt, out = run([LIBSVM_TRAIN, "-c", "100", "-g", "0.01", train, model])
            pt, pout = run([LIBSVM_PREDICT, test, model, os.path.join(tmp, "libsvm.out")])
            nsv = re.search(r"Total nSV = (\d+)", out)
            lib = dt
            rows.append(("LIBSVM `svm-train -c 100 -g 0.01`", dt, accuracy(pout), nsv.group(1) if nsv else "?", pt))
            print(f"LIBSVM: train {dt:.2f} s, accuracy {accuracy(pout):.2f} %", file=sys.stderr)
    print(f"a9a (n = 32561), RBF gamma = 0.01, C = 100, with bias; sbp command: "
          f"`{' '.join(['svm-train'] + sbp_cmd[1:])}`\n")
    print("| solver | train wall time (s) | a9a.t accuracy (%) | nSV | predict wall time (s) | time / LIBSVM |")
    print("|---|---|---|---|---|---|")
    for name, dt, acc, nsv, pt in rows:
        ratio = f"{dt / lib:.3f}" if lib else "n/a"
        print(f"| {name} | {dt:.2f} | {acc:.2f} | {nsv} | {pt:.2f} | {ratio} |")
    if lib:
        print(f"\nsbp median {sbp_time:.2f} s = {sbp_time / lib:.3f} x LIBSVM's {lib:.2f} s (target <= 0.25)")
    else:
        print("\nLIBSVM (/usr/bin/svm-train) not found: no ratio")


if __name__ == "__main__":
    main()
