#!/usr/bin/env python3
"""svm-train --grid against LIBSVM's grid.py (svm-grid) on the same ranges and folds count.

    python scripts/bench_grid.py [--log2c -5,15,2] [--log2g 3,-15,-2] [-v 5] [--files svmguide1,a9a-10k]
                                 [--solvers smo,sbp,asset] [--workdir DIR]

Files: svmguide1 (../shared/data, scaled to [-1, 1] by svm-scale as LIBSVM's
guide does) and the first N rows of a9a (bundled; ``a9a-5k``, ``a9a-10k``,
any ``a9a-<N>k``). grid.py runs ``/usr/bin/svm-train`` with as many local
workers as cores (its ``nr_local_worker``, set in a temporary copy of the
script; the installed one has 1) and no gnuplot; svm-train ``--grid`` runs
each solver of ``--solvers`` with ``--jobs`` = cores, after a small grid
of each has compiled its numba kernels. Each program is one process, timed
from start to exit; reported: wall seconds, CPU seconds (the process and
its children: user + system), the ratios to grid.py's, and the best ``C
gamma rate`` line of each (grid.py's folds are LIBSVM's; svm-train's are
its own stratified ones, or LIBSVM's with ``--libsvm-folds``, which passes
``--folds libsvm``). The machine may be shared: only
ratios from the same run mean much, and the CPU ratio is the steadier.
"""
import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as L  # noqa: E402

SVM_TRAIN = os.path.join(os.path.dirname(sys.executable), "svm-train")


def grid_py_copy(workdir, workers):
    """A copy of /usr/bin/svm-grid with nr_local_worker = ``workers``."""
    text = open("/usr/bin/svm-grid").read()
    text = re.sub(r"^nr_local_worker = \d+", f"nr_local_worker = {workers}", text, count=1, flags=re.M)
    path = os.path.join(workdir, "grid_workers.py")
    with open(path, "w") as f:
        f.write(text)
    return path


def head_rows(src, dst, rows):
    """The first ``rows`` lines of ``src`` into ``dst`` (once)."""
    if not os.path.exists(dst):
        with open(src) as fin, open(dst, "w") as fout:
            for k, line in enumerate(fin):       # the first rows of a file: a benchmark's setup
                if k == rows:
                    break
                fout.write(line)
    return dst


def files(workdir, names):
    out = {}
    if "svmguide1" in names and L.data_file("svmguide1.xz"):
        raw = L.plain(L.data_file("svmguide1.xz"), workdir)
        scaled = raw + ".scale"
        if not os.path.exists(scaled):
            with open(scaled, "w") as f:
                subprocess.run(["/usr/bin/svm-scale", raw], stdout=f, check=True)
        out["svmguide1 (scaled)"] = scaled
    for name in names:
        m = re.fullmatch(r"a9a-(\d+)k", name)
        if m:
            rows = int(m.group(1)) * 1000
            a9a = L.plain(L.data_file("a9a.xz"), workdir)
            out[f"a9a, first {rows:,} rows"] = head_rows(a9a, os.path.join(workdir, name), rows)
    return out


# svm-train runs in this process's child, not in a start-up server's (whose CPU time would not count)
OURS_ENV = dict(os.environ, SVMTRAIN_SERVER="0")


def timed(cmd, cwd, env=None):
    """(wall seconds, CPU seconds of the command and its children, its last line)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: {p.stderr[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, p.stdout.strip().splitlines()[-1]


def warm_up(solvers, workdir):
    """A small grid of each solver: numba's first compilation before any timing."""
    heart = L.plain(L.data_file("heart_scale.xz"), workdir)
    for solver in solvers:
        subprocess.run([SVM_TRAIN, "--grid", "-s", solver, "-q", "-log2c", "-1,1,2", "-log2g", "-3,-1,2",
                        "-v", "3", "-out", "null", heart], check=True, cwd=workdir, capture_output=True, env=OURS_ENV)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--log2c", default="-5,15,2")
    ap.add_argument("--log2g", default="3,-15,-2")
    ap.add_argument("-v", "--folds", default="5")
    ap.add_argument("--files", default="svmguide1,a9a-10k")
    ap.add_argument("--solvers", default="smo,sbp,asset")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "svmtrain-bench"))
    ap.add_argument("--libsvm-folds", action="store_true", help="svm-train --grid --folds libsvm (grid.py's folds)")
    a = ap.parse_args(argv)
    os.makedirs(a.workdir, exist_ok=True)
    cores = os.cpu_count() or 1
    grid_py = grid_py_copy(a.workdir, cores)
    ranges = ["-log2c", a.log2c, "-log2g", a.log2g, "-v", a.folds]
    solvers = a.solvers.split(",")
    warm_up(solvers, a.workdir)
    print(f"ranges {' '.join(ranges)}; {cores} cores; load {L.load_average()}")
    print("| file | program | wall s | CPU s | wall ratio | CPU ratio | best (C gamma rate) |")
    print("|---|---|---|---|---|---|---|")
    for name, path in files(a.workdir, a.files.split(",")).items():
        t_ref, c_ref, best_ref = timed([sys.executable, grid_py, "-svmtrain", "/usr/bin/svm-train", "-gnuplot",
                                        "null", "-out", "null"] + ranges + [path], a.workdir)
        print(f"| {name} | grid.py ({cores} workers) | {t_ref:.1f} | {c_ref:.1f} | 1.00 | 1.00 | {best_ref} |",
              flush=True)
        for solver in solvers:
            folds = ["--folds", "libsvm"] if a.libsvm_folds else []
            t, c, best = timed([SVM_TRAIN, "--grid", "-s", solver, "-q", "--jobs", str(cores), "-out", "null"]
                               + folds + ranges + [path], a.workdir, OURS_ENV)
            print(f"| {name} | svm-train --grid -s {solver} | {t:.1f} | {c:.1f} | {t / t_ref:.2f} | "
                  f"{c / c_ref:.2f} | {best} |", flush=True)
    print(f"load {L.load_average()}")


if __name__ == "__main__":
    main()
