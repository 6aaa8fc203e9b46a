#!/usr/bin/env python3
"""svm-train -C against liblinear-train -C (LIBLINEAR's warm-started search for C).

    python scripts/bench_param_search.py [--repeats 3] [--rows 50000] [--features 20000] [--nnz 60]
                                         [--workdir DIR]

Files: a9a (bundled) and a synthetic file of scripts/gen_synthetic.py
(``--rows`` x ``--features``, made once in ``--workdir``). Lines: ``-C -s 2``
(the squared hinge; LIBLINEAR's primal Newton solver, svmtrain's dcd) and
``-C -s 0`` (logistic regression), 5 folds each, the same command line for
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
BEST = re.compile(r"Best C = (\S+)  CV accuracy = (\S+)%")


def best_of(text):
    m = BEST.search(text)
    return (float(m.group(1)), float(m.group(2))) if m else (float("nan"), float("nan"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--features", type=int, default=20_000)
    ap.add_argument("--nnz", type=int, default=60)
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "svmtrain-bench"))
    a = ap.parse_args(argv)
    import gen_synthetic as G
    os.makedirs(a.workdir, exist_ok=True)
    a9a = L.plain(L.data_file("a9a.xz"), a.workdir)
    syn = os.path.join(a.workdir, f"syn-c-{a.rows}x{a.features}-{a.nnz}-0.txt")
    if not os.path.exists(syn):
        G.generate(syn, a.rows, a.features, a.nnz, seed=1)
    print(f"medians of {a.repeats} alternating runs; load {L.load_average()}")
    print("| file | line | svm-train s | liblinear-train s | ratio | svm-train best | LIBLINEAR best |")
    print("|---|---|---|---|---|---|---|")
    for name, path in (("a9a", a9a), (f"synthetic {a.rows} x {a.features}", syn)):
        for flags in (["-C", "-s", "2"], ["-C", "-s", "0"]):
            ours, theirs = [SVM_TRAIN, *flags, path], [LIBLINEAR, *flags, path]
            L.run(ours)
            t_ours, t_theirs = [], []
            for _ in range(a.repeats):
                t, out_ours = L.run(ours)
                t_ours.append(t)
                t, out_theirs = L.run(theirs)
                t_theirs.append(t)
            to, tt = statistics.median(t_ours), statistics.median(t_theirs)
            (co, ro), (ct, rt) = best_of(out_ours), best_of(out_theirs)
            print(f"| {name} | `{' '.join(flags)}` | {to:.2f} | {tt:.2f} | {to / tt:.2f} | C = {co:g}, {ro:g} % "
                  f"| C = {ct:g}, {rt:g} % |", flush=True)


if __name__ == "__main__":
    main()
