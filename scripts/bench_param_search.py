#!/usr/bin/env python3
"""svm-train -C against liblinear-train -C (LIBLINEAR's warm-started search for C).

    python scripts/bench_param_search.py [--repeats 5] [--adult] [--synthetic] [--rows 50000]
                                         [--features 20000] [--nnz 60] [--web] [--only a9a,...] [--own-only]
                                         [--svm-train CMD] [--workdir DIR]

Files: a9a (bundled), the LIBSVM sets of ../shared/data that are there
(heart_scale, diabetes_scale, mushrooms, svmguide1; concrete_scale for
regression), with ``--adult`` the whole UCI Adult set (a9a's 32,561 rows
and a9a.t's 16,281 in one file, 48,842 rows: a real file where LIBLINEAR
needs a few seconds) and, with ``--synthetic``, a file of
scripts/gen_synthetic.py (``--rows`` x ``--features``, made once in
``--workdir``) and, with ``--web``, ``gen_synthetic.web_rows`` (issue 32's
dip-and-rise shape: 49,749 rows, 300 binary features, 3 % positives,
where the CV accuracy is not unimodal in C; made once in ``--workdir``);
``--only`` keeps the named files. Lines: ``-C -s 2`` (the
squared hinge) and ``-C -s 0`` (logistic regression), 5 folds each (both
programs walk the path by a primal Newton method: LIBLINEAR's own,
svmtrain's ``-s tron`` inside the ``-s dcd`` search), and for the
regression set ``-C -s 11`` (C and p; the MSE reported), the same command
line for both programs.

Each line times three commands, ``--repeats`` times, alternating: svm-train
through its start-up server (the default a user gets after the first run:
numpy, numba and the cached kernels already loaded; a warm server of a
private runtime directory, started for the benchmark with
``SVMTRAIN_SERVER_WATCH=0`` so that edits to the checkout meanwhile do not
restart it, and stopped at the end), svm-train in its own process
(``SVMTRAIN_SERVER=0``: Python, numpy and numba start-up included), and
liblinear-train. Wall seconds are medians of whole processes (reading
included); each ratio is the median of the repeats' ratios (the commands of
a repeat ran back to back, so a load change hits all), the acceptance
ratio (issue 32: at most 0.5) is the server's; CPU seconds (user + system,
medians) of the own-process runs and LIBLINEAR's show what each used
whatever the load (svm-train's path runs its folds on two threads). A
server run whose client used more than 0.3 CPU seconds ran in its own
process (no server answered): it is run again. svm-train runs once untimed
first so numba has compiled. Reported: both programs' ``Best C = ...  CV
accuracy = ...%`` lines (the same folds since stop 41: a LIBLINEAR ``-C``
line takes ``--folds liblinear``; before, svmtrain stratified its own) and
the load averages before and after each
line. ``--own-only``: no server runs. ``--svm-train CMD``: another
svm-train (e.g. a wrapper running an older checkout, for before/after).
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

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


def served_run(cmd, servers):
    """(wall, output) of ``cmd`` through the warm server of ``servers``; a run
    that went in its own process (the client used > 0.3 CPU s) is run again
    after the server is restarted (at most twice)."""
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall, out = timed_env(cmd, servers.env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime) <= 0.3:
            return wall, out
        servers.stop()
        servers.start_warm()
    raise RuntimeError("no server answered " + " ".join(cmd))


def timed_env(cmd, env):
    """(wall seconds, output) of one whole process with ``env``."""
    t = time.perf_counter()
    proc = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env)
    wall = time.perf_counter() - t
    if proc.returncode:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stdout[-2000:]}")
    return wall, proc.stdout


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--adult", action="store_true", help="also a9a + a9a.t in one file (48,842 rows)")
    ap.add_argument("--synthetic", action="store_true", help="also the synthetic file")
    ap.add_argument("--web", action="store_true", help="also the dip-and-rise set (gen_synthetic.web_rows)")
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--features", type=int, default=20_000)
    ap.add_argument("--nnz", type=int, default=60)
    ap.add_argument("--only", help="comma-separated file names to keep (a9a, adult, mushrooms, ...)")
    ap.add_argument("--own-only", action="store_true", help="no server runs (svm-train in its own process only)")
    ap.add_argument("--svm-train", default=SVM_TRAIN, help="the svm-train to time (default: this venv's)")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "svmtrain-bench"))
    a = ap.parse_args(argv)
    import bench_server
    import gen_synthetic as G
    bench_server.TRAIN = a.svm_train
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
    if a.web:
        web = os.path.join(a.workdir, "web-49749")
        if not os.path.exists(web):
            G.write_dense(web, *G.web_rows())
        runs.append(("web", web, ("-s 2", "-s 0")))
    if a.only:
        keep = set(a.only.split(","))
        runs = [r for r in runs if r[0].split()[0] in keep]
    servers = None
    if not a.own_only:
        servers = bench_server.Servers(tempfile.mkdtemp(prefix="svmtrain-bench-rt-"), watch=False)
        servers.start_warm()
    own_env = dict(os.environ, SVMTRAIN_SERVER="0")
    print(f"medians of {a.repeats} alternating runs ({a.svm_train}); the acceptance ratio is the server's")
    print("| file | line | svm-train s (server) | svm-train s (own process) | liblinear-train s "
          "| ratio (server) | ratio (own process) | CPU s (own process / LIBLINEAR) "
          "| svm-train best | LIBLINEAR best | load before / after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    try:
        for name, path, lines in runs:
            for flags in (["-C"] + line.split() for line in lines):
                ours, theirs = [a.svm_train, *flags, path], [LIBLINEAR, *flags, path]
                load = L.load_average().split()[0]
                timed_env(ours, own_env)
                if servers is not None:
                    served_run(ours, servers)
                t_srv, t_own, t_theirs, c_own, c_theirs = [], [], [], [], []
                for _ in range(a.repeats):
                    if servers is not None:
                        t, out_srv = served_run(ours, servers)
                        t_srv.append(t)
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    t, out_ours = timed_env(ours, own_env)
                    mid = resource.getrusage(resource.RUSAGE_CHILDREN)
                    t_own.append(t)
                    t2, out_theirs = timed_env(theirs, own_env)
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    t_theirs.append(t2)
                    c_own.append((mid.ru_utime - before.ru_utime) + (mid.ru_stime - before.ru_stime))
                    c_theirs.append((after.ru_utime - mid.ru_utime) + (after.ru_stime - mid.ru_stime))
                tt = statistics.median(t_theirs)
                srv = "-" if servers is None else f"{statistics.median(t_srv):.2f}"
                r_srv = "-" if servers is None else \
                    f"{statistics.median(o / t for o, t in zip(t_srv, t_theirs)):.2f}"
                r_own = statistics.median(o / t for o, t in zip(t_own, t_theirs))
                print(f"| {name} | `{' '.join(flags)}` | {srv} | {statistics.median(t_own):.2f} | {tt:.2f} "
                      f"| {r_srv} | {r_own:.2f} "
                      f"| {statistics.median(c_own):.2f} / {statistics.median(c_theirs):.2f} "
                      f"| {best_of(out_ours)} | {best_of(out_theirs)} | {load} / {L.load_average().split()[0]} |",
                      flush=True)
    finally:
        if servers is not None:
            servers.stop()


if __name__ == "__main__":
    main()
