#!/usr/bin/env python3
"""svm-train -C against liblinear-train -C (LIBLINEAR's warm-started search for C).

    python scripts/bench_param_search.py [--repeats 3] [--adult] [--synthetic] [--rows 50000]
                                         [--features 20000] [--nnz 60] [--only a9a,...] [--workdir DIR]

Files: a9a (bundled), the LIBSVM sets of ../shared/data that are there
(heart_scale, diabetes_scale, mushrooms, svmguide1; concrete_scale for
regression), with ``--adult`` the whole UCI Adult set (a9a's 32,561 rows
and a9a.t's 16,281 in one file, 48,842 rows: a real file where LIBLINEAR
needs a few seconds) and, with ``--synthetic``, a file of
scripts/gen_synthetic.py (``--rows`` x ``--features``, made once in
``--workdir``); ``--only`` keeps the named files. Lines: ``-C -s 2`` (the
squared hinge) and ``-C -s 0`` (logistic regression), 5 folds each (both
programs walk the path by a primal Newton method: LIBLINEAR's own,
svmtrain's ``-s tron`` inside the ``-s dcd`` search), and for the
regression set ``-C -s 11`` (C and p; the MSE reported), the same command
line for both programs. Each pair runs ``--repeats`` times, alternating;
wall seconds are medians of whole processes (reading included), the ratio
is the median of the pairs' ratios (each pair ran back to back, so a load
change hits both), and CPU seconds (user + system, medians) show what each
used whatever the load; svm-train runs once untimed first so numba has
compiled. Reported: both programs' ``Best C = ...  CV accuracy = ...%``
lines (the folds differ: LIBLINEAR deals rows at random, svmtrain
stratifies by class). svm-train runs in its own process
(``SVMTRAIN_SERVER=0``), start-up included, unless ``--server``: then the
runs go to svmtrain's fork server where the checkout has one (its CPU
seconds are then the server's child's, not counted here).
"""
import argparse
import os
import re
import resource
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


def run_timed(cmd):
    """(wall seconds, CPU seconds (user + system), output) of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, out = L.run(cmd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out


def adult(workdir):
    """The whole UCI Adult set in one file: a9a's rows, then a9a.t's."""
    path = os.path.join(workdir, "adult")
    if not os.path.exists(path):
        parts = [L.plain(L.data_file(name), workdir) for name in ("a9a.xz", "a9a.t.xz")]
        with open(path + ".tmp", "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    out.write(f.read())
        os.replace(path + ".tmp", path)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--adult", action="store_true", help="also a9a + a9a.t in one file (48,842 rows)")
    ap.add_argument("--synthetic", action="store_true", help="also the synthetic file")
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--features", type=int, default=20_000)
    ap.add_argument("--nnz", type=int, default=60)
    ap.add_argument("--only", help="comma-separated file names to keep (a9a, adult, mushrooms, ...)")
    ap.add_argument("--server", action="store_true", help="let svm-train use its fork server (if any)")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "svmtrain-bench"))
    a = ap.parse_args(argv)
    if not a.server:
        os.environ["SVMTRAIN_SERVER"] = "0"
    import gen_synthetic as G
    os.makedirs(a.workdir, exist_ok=True)
    runs = [("a9a", L.plain(L.data_file("a9a.xz"), a.workdir), ("-s 2", "-s 0"))]
    if a.adult and L.data_file("a9a.t.xz"):
        runs.append(("adult", adult(a.workdir), ("-s 2", "-s 0")))
    for name, *lines in REAL:
        if L.data_file(name + ".xz"):
            runs.append((name, L.plain(L.data_file(name + ".xz"), a.workdir), lines))
    if a.synthetic:
        syn = os.path.join(a.workdir, f"syn-c-{a.rows}x{a.features}-{a.nnz}-0.txt")
        if not os.path.exists(syn):
            G.generate(syn, a.rows, a.features, a.nnz, seed=1)
        runs.append((f"synthetic {a.rows} x {a.features}", syn, ("-s 2", "-s 0")))
    if a.only:
        keep = set(a.only.split(","))
        runs = [r for r in runs if r[0].split()[0] in keep]
    print(f"medians of {a.repeats} alternating runs; load {L.load_average()}; svm-train "
          + ("through its fork server where there is one" if a.server else "in its own process"))
    print("| file | line | svm-train s | liblinear-train s | ratio | CPU s (svm-train / LIBLINEAR) "
          "| svm-train best | LIBLINEAR best |")
    print("|---|---|---|---|---|---|---|---|")
    for name, path, lines in runs:
        for flags in (["-C"] + line.split() for line in lines):
            ours, theirs = [SVM_TRAIN, *flags, path], [LIBLINEAR, *flags, path]
            L.run(ours)
            t_ours, t_theirs, c_ours, c_theirs = [], [], [], []
            for _ in range(a.repeats):
                t, c, out_ours = run_timed(ours)
                t_ours.append(t)
                c_ours.append(c)
                t, c, out_theirs = run_timed(theirs)
                t_theirs.append(t)
                c_theirs.append(c)
            to, tt = statistics.median(t_ours), statistics.median(t_theirs)
            ratio = statistics.median(o / t for o, t in zip(t_ours, t_theirs))
            print(f"| {name} | `{' '.join(flags)}` | {to:.2f} | {tt:.2f} | {ratio:.2f} "
                  f"| {statistics.median(c_ours):.2f} / {statistics.median(c_theirs):.2f} "
                  f"| {best_of(out_ours)} | {best_of(out_theirs)} |", flush=True)


if __name__ == "__main__":
    main()
