#!/usr/bin/env python3
"""``-s smo`` against LIBSVM's ``svm-train`` as the training set grows (issue 21's second set).

Dense synthetic files from ``scripts/gen_synthetic.py`` (``--features``
features, every one stored, labels from a hidden linear model with 5 %
flipped), the first N rows for each N of ``--sizes``; RBF C-SVC at
``-c``/``-g`` by both programs, whole processes, alternating, in one run,
after an untimed run of ours (numba's cache load). Prints each program's
wall time, dual objective ``obj`` and support vectors, the time ratio, and
the growth exponent of each program's time between consecutive sizes
(log t2/t1 / log n2/n1).

    python scripts/bench_smo_growth.py [--sizes 25000,50000,100000] [--features 20] [-c 1] [-g 0.05]
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import LIBSVM_TRAIN, OURS_TRAIN, ROOT, run  # noqa: E402


def numbers(text):
    """(obj, total support vectors) printed by svm-train (LIBSVM's lines or -s smo's summary)."""
    obj = re.findall(r"obj = (-?[0-9.]+)", text)
    n_sv = re.search(r"Total nSV = (\d+)", text) or re.search(r"nSV = (\d+)", text)
    return (float(obj[-1]) if obj else float("nan")), (int(n_sv.group(1)) if n_sv else -1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="25000,50000,100000")
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("-c", type=float, default=1.0)
    ap.add_argument("-g", type=float, default=0.05)
    ap.add_argument("--no-libsvm", action="store_true")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    flags = ["-c", repr(args.c), "-g", repr(args.g)]
    have_libsvm = not args.no_libsvm and os.path.exists(LIBSVM_TRAIN)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        full = os.path.join(tmp, "all.svm")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_synthetic.py"), "--rows", str(max(sizes)),
                        "--features", str(args.features), "--nnz-per-row", str(args.features), "-o", full],
                       check=True, capture_output=True)
        with open(full) as f:
            lines = f.readlines()
        run([OURS_TRAIN, "-q", "-s", "smo", *flags, os.path.join(ROOT, "data", "heart_scale.xz"),
             os.path.join(tmp, "warm.model")])
        for n in sizes:
            path = os.path.join(tmp, f"n{n}.svm")
            with open(path, "w") as f:
                f.writelines(lines[:n])
            ours_t, out = run([OURS_TRAIN, "-s", "smo", *flags, path, os.path.join(tmp, "ours.model")])
            ours = (ours_t, *numbers(out))
            print(f"n = {n}: smo {ours_t:.2f} s", file=sys.stderr, flush=True)
            theirs = None
            if have_libsvm:
                t, out = run([LIBSVM_TRAIN, *flags, path, os.path.join(tmp, "libsvm.model")])
                theirs = (t, *numbers(out))
                print(f"n = {n}: LIBSVM {t:.2f} s", file=sys.stderr, flush=True)
            rows.append((n, ours, theirs))
    print(f"dense synthetic, {args.features} features, RBF C = {args.c:g}, gamma = {args.g:g}\n")
    print("| rows | smo (s) | LIBSVM (s) | smo / LIBSVM | smo obj | LIBSVM obj | smo nSV | LIBSVM nSV |")
    print("|---|---|---|---|---|---|---|---|")
    for n, ours, theirs in rows:
        t = theirs or (float("nan"),) * 3
        print(f"| {n} | {ours[0]:.2f} | {t[0]:.2f} | {ours[0] / t[0]:.3f} | {ours[1]:.6f} | {t[1]:.6f} | "
              f"{ours[2]} | {t[2]} |")
    for (n1, o1, t1), (n2, o2, t2) in zip(rows, rows[1:]):
        grow = math.log(n2 / n1)
        line = f"{n1} -> {n2}: smo time grows as n^{math.log(o2[0] / o1[0]) / grow:.2f}"
        if t1 and t2:
            line += f", LIBSVM's as n^{math.log(t2[0] / t1[0]) / grow:.2f}"
        print(line)


if __name__ == "__main__":
    main()
