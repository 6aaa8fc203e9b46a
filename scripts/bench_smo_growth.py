#!/usr/bin/env python3
"""``-s smo`` against LIBSVM's ``svm-train`` and scikit-learn-intelex's SVC as
the training set grows (issue 21's second set).

Dense synthetic rows from ``scripts/gen_synthetic.py --dense`` (``--features``
features, every one stored, values uniform in (0, 1), labels the signs of a
hidden ``w . (x - 0.5)`` with 5 % flipped: two balanced classes); the first
N rows for each N of ``--sizes``, and ``--test-rows`` other rows of the same
hidden model as the test set. RBF C-SVC at ``-c``/``-g`` by each program as
a whole process, in one run, after an untimed run of ours (numba's cache
load): LIBSVM's ``svm-train``, then ``svm-predict`` on the test rows;
``svm-train -s smo``, then our ``svm-predict``; scikit-learn-intelex's SVC
(``scripts/sklearnex_svc.py``: read, fit, predict) when it is importable.
Prints each program's training wall time (sklearnex: the whole program, its
fit alone in brackets), dual objective ``obj``, support vectors and test
accuracy, the time ratios, and the growth exponent of each program's time
between consecutive sizes (log t2/t1 / log n2/n1).

    python scripts/bench_smo_growth.py [--sizes 25000,50000,100000] [--features 20] [-c 1] [-g 0.05]
"""
import argparse
import importlib.util
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import LIBSVM_PREDICT, LIBSVM_TRAIN, OURS_PREDICT, OURS_TRAIN, ROOT, TEST_BLOCK, run  # noqa: E402

NAN = float("nan")


def numbers(text):
    """(obj, total support vectors) printed by svm-train (LIBSVM's lines or -s smo's summary)."""
    obj = re.findall(r"obj = (-?[0-9.]+)", text)
    n_sv = re.search(r"Total nSV = (\d+)", text) or re.search(r"nSV = (\d+)", text)
    return (float(obj[-1]) if obj else NAN), (int(n_sv.group(1)) if n_sv else -1)


def accuracy(text):
    """The percentage of ``Accuracy = P%`` in a program's output (nan when absent)."""
    m = re.search(r"Accuracy = ([0-9.]+)%", text)
    return float(m.group(1)) if m else NAN


def generate(path, rows, features, first_block=0):
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_synthetic.py"), "--dense", "--rows", str(rows),
                    "--features", str(features), "--first-block", str(first_block), "-o", path],
                   check=True, capture_output=True)


def train_and_test(train_cmd, predict_cmd):
    """(train seconds, obj, nSV, test accuracy) of one program's train and predict commands."""
    t, out = run(train_cmd)
    obj, n_sv = numbers(out)
    _, out = run(predict_cmd)
    return t, obj, n_sv, accuracy(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="25000,50000,100000")
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--test-rows", type=int, default=20000)
    ap.add_argument("-c", type=float, default=1.0)
    ap.add_argument("-g", type=float, default=0.05)
    ap.add_argument("--no-libsvm", action="store_true")
    ap.add_argument("--no-sklearnex", action="store_true", help="skip scikit-learn-intelex even when installed")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    flags = ["-c", repr(args.c), "-g", repr(args.g)]
    have_libsvm = not args.no_libsvm and os.path.exists(LIBSVM_TRAIN)
    have_sklearnex = not args.no_sklearnex and importlib.util.find_spec("sklearnex") is not None
    sklearnex_svc = os.path.join(ROOT, "scripts", "sklearnex_svc.py")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        full, test = os.path.join(tmp, "all.svm"), os.path.join(tmp, "test.svm")
        generate(full, max(sizes), args.features)
        generate(test, args.test_rows, args.features, TEST_BLOCK)
        with open(full) as f:
            lines = f.readlines()
        run([OURS_TRAIN, "-q", "-s", "smo", *flags, os.path.join(ROOT, "data", "heart_scale.xz"),
             os.path.join(tmp, "warm.model")])
        out_file = os.path.join(tmp, "out")
        for n in sizes:
            path = os.path.join(tmp, f"n{n}.svm")
            with open(path, "w") as f:
                f.writelines(lines[:n])
            model = os.path.join(tmp, "ours.model")
            ours = train_and_test([OURS_TRAIN, "-s", "smo", *flags, path, model],
                                  [OURS_PREDICT, test, model, out_file])
            print(f"n = {n}: smo {ours[0]:.2f} s", file=sys.stderr, flush=True)
            theirs = (NAN, NAN, -1, NAN)
            if have_libsvm:
                model = os.path.join(tmp, "libsvm.model")
                theirs = train_and_test([LIBSVM_TRAIN, *flags, path, model],
                                        [LIBSVM_PREDICT, test, model, out_file])
                print(f"n = {n}: LIBSVM {theirs[0]:.2f} s", file=sys.stderr, flush=True)
            onedal = (NAN, NAN, -1, NAN)
            if have_sklearnex:
                t, out = run([sys.executable, sklearnex_svc, path, test, repr(args.c), repr(args.g)])
                fit = re.search(r"train = ([0-9.]+)", out)
                onedal = (t, float(fit.group(1)) if fit else NAN, numbers(out)[1], accuracy(out))
                print(f"n = {n}: sklearnex {t:.2f} s", file=sys.stderr, flush=True)
            rows.append((n, ours, theirs, onedal))
    print(f"dense synthetic, {args.features} features, {args.test_rows} test rows, "
          f"RBF C = {args.c:g}, gamma = {args.g:g}\n")
    print("| rows | smo (s) | LIBSVM (s) | sklearnex (s; fit) | smo / LIBSVM | smo / sklearnex | smo obj | LIBSVM obj "
          "| obj difference | smo nSV | LIBSVM nSV | sklearnex nSV | smo acc (%) | LIBSVM acc | sklearnex acc |")
    print("|---" * 15 + "|")
    for n, o, t, x in rows:
        print(f"| {n} | {o[0]:.2f} | {t[0]:.2f} | {x[0]:.2f} ({x[1]:.2f}) | {o[0] / t[0]:.3f} | {o[0] / x[0]:.3f} "
              f"| {o[1]:.6f} | {t[1]:.6f} | {abs(o[1] - t[1]) / abs(t[1]):.1e} | {o[2]} | {t[2]} | {x[2]} "
              f"| {o[3]:.3f} | {t[3]:.3f} | {x[3]:.3f} |")
    for (n1, o1, t1, x1), (n2, o2, t2, x2) in zip(rows, rows[1:]):
        grow = math.log(n2 / n1)
        line = f"{n1} -> {n2}: smo time grows as n^{math.log(o2[0] / o1[0]) / grow:.2f}"
        if have_libsvm:
            line += f", LIBSVM's as n^{math.log(t2[0] / t1[0]) / grow:.2f}"
        if have_sklearnex:
            line += f", sklearnex's as n^{math.log(x2[0] / x1[0]) / grow:.2f}"
        print(line)


if __name__ == "__main__":
    main()
