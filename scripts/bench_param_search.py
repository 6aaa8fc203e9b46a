#!/usr/bin/env python3
"""svm-train -C against liblinear-train -C (LIBLINEAR's warm-started search for C).

    python scripts/bench_param_search.py [--repeats 3] [--synthetic] [--rows 50000] [--features 20000]
                                         [--nnz 60] [--workdir DIR]

Files: a9a (bundled), the LIBSVM sets of ../shared/data that are there
(heart_scale, diabetes_scale, mushrooms, svmguide1; concrete_scale for
regression) and, with ``--synthetic``, a file of scripts/gen_synthetic.py
(``--rows`` x ``--features``, made once in ``--workdir``). Lines: ``-C -s 2``
(the squared hinge; LIBLINEAR's primal Newton solver, svmtrain's dcd) and
``-C -s 0`` (logistic regression), 5 folds each, and for the regression
set ``-C -s 11`` (C and p; the MSE reported), the same command line for
both programs. Each pair runs ``--repeats`` times, alternating; wall seconds
are medians of whole processes (reading included); svm-train runs once
untimed first so numba has compiled. Reported: both times and their
ratio, and both programs' ``Best C = ...  CV accuracy = ...%`` lines (the
folds differ: LIBLINEAR deals rows at random, svmtrain stratifies by class).
"""
import argparse
import os
import re
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as L  # noqa: E402

SVM_TRAIN = os.path.join(os.path.dirname(sys.executable), "svm-train")
LIBLINEAR = "/usr/bin/liblinear-train"
BEST = re.compile(r"Best C = (\S+)(?: Best p = (\S+))?  CV (?:accuracy|MSE) = ([^%\s]+)(%?)")
REAL = (("heart_scale", "-s 2", "-s 0"), ("diabetes_scale", "-s 2", "-s 0"), ("mushrooms", "-s 2", "-s 0"),
        ("svmguide1", "-s 2", "-s 0"), ("concrete_scale", "-s 11"))


def best_of(text):
    """The best line as text: C, p (regression), accuracy % or MSE."""
    m = BEST.search(text)
    if not m:
        return "none"
    return f"C = {float(m.group(1)):g}" + (f", p = {m.group(2)}" if m.group(2) else "") + \
        (f", {m.group(3)} %" if m.group(4) else f", MSE {m.group(3)}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--synthetic", action="store_true", help="also the synthetic file")
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--features", type=int, default=20_000)
    ap.add_argument("--nnz", type=int, default=60)
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "svmtrain-bench"))
    a = ap.parse_args(argv)
    import gen_synthetic as G
    os.makedirs(a.workdir, exist_ok=True)
    runs = [("a9a", L.plain(L.data_file("a9a.xz"), a.workdir), ("-s 2", "-s 0"))]
    for name, *lines in REAL:
        if L.data_file(name + ".xz"):
            runs.append((name, L.plain(L.data_file(name + ".xz"), a.workdir), lines))
    if a.synthetic:
        syn = os.path.join(a.workdir, f"syn-c-{a.rows}x{a.features}-{a.nnz}-0.txt")
        if not os.path.exists(syn):
            G.generate(syn, a.rows, a.features, a.nnz, seed=1)
        runs.append((f"synthetic {a.rows} x {a.features}", syn, ("-s 2", "-s 0")))
    print(f"medians of {a.repeats} alternating runs; load {L.load_average()}")
    print("| file | line | svm-train s | liblinear-train s | ratio | svm-train best | LIBLINEAR best |")
    print("|---|---|---|---|---|---|---|")
    for name, path, lines in runs:
        for flags in (["-C"] + line.split() for line in lines):
            ours, theirs = [SVM_TRAIN, *flags, path], [LIBLINEAR, *flags, path]
            L.run(ours)
            t_ours, t_theirs = [], []
            for _ in range(a.repeats):
                t, out_ours = L.run(ours)
                t_ours.append(t)
                t, out_theirs = L.run(theirs)
                t_theirs.append(t)
            to, tt = statistics.median(t_ours), statistics.median(t_theirs)
            print(f"| {name} | `{' '.join(flags)}` | {to:.2f} | {tt:.2f} | {to / tt:.2f} | {best_of(out_ours)} "
                  f"| {best_of(out_theirs)} |", flush=True)


if __name__ == "__main__":
    main()
