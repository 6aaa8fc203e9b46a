#!/usr/bin/env python3
"""svm-easy (one process) against LIBSVM's easy.py (/usr/bin/svm-easy over LIBSVM's tools) on the same files.

    python scripts/bench_easy.py [--file svmguide1.xz] [--repeat 1] [--workdir DIR]

The file (../shared/data/svmguide1.xz by default) is split as LIBSVM's guide
and the README do: training on three quarters (``awk 'NR%4!=0'``), testing on
the rest (``awk 'NR%4==0'``). Each program runs ``svm-easy TRAIN TEST`` from
start to exit in its own directory: easy.py scales, runs grid.py (one local
worker, gnuplot drawing the contour) over LIBSVM's svm-train, trains and
predicts, a process per step and per grid point; ours does the same steps in
one process (the grid on all cores). Reported: wall seconds, the ratio to
easy.py, the CPU seconds of each process tree (what a shared machine
disturbs least), the best point and the test accuracy of each.

Debian's svm-easy calls ``../svm-scale``, ``../svm-train``, ``../svm-predict``
and ``./grid.py`` relative to the current directory (easy.py's layout in
LIBSVM's tools/), so its run gets a directory with those names linked to
``/usr/bin``'s LIBSVM programs and ``/usr/bin/svm-grid``, and a PATH without
this venv (only a ``python`` for grid.py's ``#!/usr/bin/env python``): it
cannot reach svmtrain's commands. numba's kernels are compiled before timing
(an untimed svm-easy on 60 rows of heart_scale).
"""
import argparse
import lzma
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as L  # noqa: E402

OURS = os.path.join(L.BIN, "svm-easy")
LIBSVM_EASY = "/usr/bin/svm-easy"
LIBSVM_TOOLS = {"svm-scale": "/usr/bin/svm-scale", "svm-train": L.LIBSVM_TRAIN, "svm-predict": L.LIBSVM_PREDICT}


def split(src, workdir):
    """(train, test): the lines of ``src`` whose number is not / is a multiple of 4 (awk's NR)."""
    name = os.path.basename(src).removesuffix(".xz")
    train, test = os.path.join(workdir, name + ".tr"), os.path.join(workdir, name + ".te")
    if not (os.path.exists(train) and os.path.exists(test)):
        opener = lzma.open if src.endswith(".xz") else open
        with opener(src, "rt") as f:
            lines = f.read().splitlines(keepends=True)
        with open(train, "w") as tr, open(test, "w") as te:
            for nr, line in enumerate(lines, 1):
                (te if nr % 4 == 0 else tr).write(line)
    return train, test


def libsvm_layout(workdir):
    """(the directory to run Debian's svm-easy in, its environment): easy.py's
    ../svm-* and ./grid.py, and a PATH that holds only a python and /usr/bin."""
    root = os.path.join(workdir, "libsvm")
    tools = os.path.join(root, "tools")
    pybin = os.path.join(root, "pybin")
    os.makedirs(tools, exist_ok=True)
    os.makedirs(pybin, exist_ok=True)
    links = {os.path.join(root, k): v for k, v in LIBSVM_TOOLS.items()}
    links[os.path.join(tools, "grid.py")] = "/usr/bin/svm-grid"
    links[os.path.join(pybin, "python")] = getattr(sys, "_base_executable", None) or sys.executable
    for link, target in links.items():
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(target, link)
    env = dict(os.environ, PATH=os.pathsep.join([pybin, "/usr/bin", "/bin"]))
    return tools, env


def timed(cmd, cwd, env=None):
    """(wall seconds, CPU seconds of the whole process tree, standard output) of one run in ``cwd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        raise RuntimeError(f"{' '.join(cmd)} in {cwd}: exit {p.returncode}\n{p.stdout[-1000:]}\n{p.stderr[-1000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, p.stdout


def best_line(text):
    m = re.search(r"^Best c=.*$", text, re.M)
    return m.group(0) if m else "?"


def fresh(directory, keep=()):
    """Remove what an earlier run left in ``directory`` (but the names in ``keep``)."""
    os.makedirs(directory, exist_ok=True)
    for name in os.listdir(directory):
        if name not in keep:
            path = os.path.join(directory, name)
            if os.path.isfile(path) or os.path.islink(path):
                os.unlink(path)


def warm_up(workdir):
    """numba compiled before timing: svm-easy on 60 rows of heart_scale, untimed."""
    small = os.path.join(workdir, "warm", "heart60")
    os.makedirs(os.path.dirname(small), exist_ok=True)
    with lzma.open(L.data_file("heart_scale.xz"), "rt") as f:
        head = f.read().splitlines(keepends=True)[:60]
    for path in (small, small + ".t"):
        with open(path, "w") as f:
            f.writelines(head)
    subprocess.run([OURS, "-q", small, small + ".t"], cwd=os.path.dirname(small), check=True, capture_output=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", default="svmguide1.xz", help="a data file of data/ or ../shared/data")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each program, alternating (best wall kept)")
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "svmtrain-bench-easy"))
    a = ap.parse_args(argv)
    src = L.data_file(a.file)
    if src is None:
        sys.exit(f"{a.file} not found in data/ or {L.SHARED_DATA}")
    missing = [p for p in [LIBSVM_EASY, "/usr/bin/svm-grid", "/usr/bin/gnuplot", *LIBSVM_TOOLS.values()]
               if not os.path.exists(p)]
    if missing:
        sys.exit(f"{', '.join(missing)} missing: apt-get install libsvm-tools gnuplot")
    os.makedirs(a.workdir, exist_ok=True)
    train, test = split(src, a.workdir)
    their_dir, their_env = libsvm_layout(a.workdir)
    our_dir = os.path.join(a.workdir, "ours")
    warm_up(a.workdir)
    cores = os.cpu_count() or 1
    n_train = sum(1 for _ in open(train))
    n_test = sum(1 for _ in open(test))
    print(f"{os.path.basename(src)}: {n_train} training rows, {n_test} test rows; {cores} cores; "
          f"load before {L.load_average()}")
    runs = {"easy.py": [], "svm-easy": []}
    for _ in range(a.repeat):
        fresh(their_dir, keep=("grid.py",))
        runs["easy.py"].append(timed([LIBSVM_EASY, train, test], their_dir, their_env))
        fresh(our_dir)
        runs["svm-easy"].append(timed([OURS, "-q", train, test], our_dir))
    print(f"load after {L.load_average()}")
    print("| program | wall s | ratio to easy.py | CPU s | ratio | best point (CV rate) | test accuracy |")
    print("|---|---|---|---|---|---|---|")
    t_ref = min(r[0] for r in runs["easy.py"])
    c_ref = min(r[1] for r in runs["easy.py"])
    for name, done in runs.items():
        wall, cpu, out = min(done)
        walls = ", ".join(f"{r[0]:.1f}" for r in done)
        cpus = min(r[1] for r in done)
        acc = 100.0 * L.printed_accuracy(out)
        label = "`/usr/bin/svm-easy` (LIBSVM 3.24 tools)" if name == "easy.py" else "`svm-easy` (svmtrain)"
        print(f"| {label} | {walls} | {wall / t_ref:.2f} | {cpus:.1f} | {cpus / c_ref:.2f} | {best_line(out)[5:]} "
              f"| {acc:.4f} % |", flush=True)
    print("\nsvm-easy's lines (last run):\n" + runs["svm-easy"][-1][2].rstrip())


if __name__ == "__main__":
    main()
