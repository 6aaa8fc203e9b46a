#!/usr/bin/env python3
"""Benchmark svmtrain's LIBSVM reader against LIBLINEAR's.

Generates (or reuses) a synthetic file with ``gen_synthetic.generate`` under
``--workdir`` (default ``bench-data/``, named after its parameters, e.g.
``synthetic-r1000000-f200000-k60-s1-z2.svm`` for the defaults), reads it
once so both programs find it in the page cache, then times

* ``svmtrain.io.reader.read_libsvm(FILE)`` (after a warm-up read of a small
  file, so numba compilation / cache loading is not counted), best of
  ``--repeat`` runs;
* ``liblinear-train -s 3 -c 1 -e 1000 FILE MODEL`` (with that tolerance the
  solver stops after one pass, so the run is almost pure reading; the model
  goes to a temporary directory), best of ``--liblinear-repeat`` runs,
  skipped with a message when ``liblinear-train`` is not on PATH.

Prints the size in MB (10^6 bytes), seconds and MB/s of both, the ratio
svmtrain_rate / liblinear_rate, the CPU seconds of both (svmtrain: all its
threads; less sensitive than wall time to other load, though svmtrain's
use of several cores does not show there), and the load average before and
after (the machine may be shared; wall-clock numbers suffer when it is
busy).
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gen_synthetic import generate  # noqa: E402


def cached_file(workdir, rows, features, nnz, seed, skew=2.0, first_block=0):
    """Path of the synthetic file for these parameters under ``workdir``,
    generated first when missing (other benchmarks may share it)."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    tail = f"-b{first_block}" if first_block else ""
    path = workdir / f"synthetic-r{rows}-f{features}-k{nnz:g}-s{seed}-z{skew:g}{tail}.svm"
    if path.exists():
        print(f"reusing {path}")
    else:
        print(f"generating {path} ...", flush=True)
        t0 = time.perf_counter()
        generate(path, rows, features, nnz, seed, skew=skew, first_block=first_block)
        print(f"  done in {time.perf_counter() - t0:.1f} s")
    return path


def _warm_page_cache(path):
    buf = bytearray(64 << 20)
    with open(path, "rb", buffering=0) as f:
        while f.readinto(buf):
            pass


def _load():
    try:
        return "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:  # pragma: no cover
        return "?"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--features", type=int, default=200_000)
    ap.add_argument("--nnz-per-row", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--skew", type=float, default=2.0, help="see gen_synthetic.py")
    ap.add_argument("--workdir", default="bench-data")
    ap.add_argument("--repeat", type=int, default=1, help="svmtrain runs (best is reported)")
    ap.add_argument("--liblinear-repeat", type=int, default=1)
    ap.add_argument("--threads", type=int, default=None, help="reader threads (default: all)")
    ap.add_argument("--no-liblinear", action="store_true")
    a = ap.parse_args(argv)

    from svmtrain.io.reader import read_libsvm

    workdir = Path(a.workdir)
    path = cached_file(workdir, a.rows, a.features, a.nnz_per_row, a.seed, a.skew)
    warm = cached_file(workdir, 3000, 1000, 20, 12345)
    size = path.stat().st_size
    mb = size / 1e6
    print(f"file: {path} ({mb:.1f} MB)")
    print(f"load average before: {_load()}  (cores: {os.cpu_count()})")

    t0 = time.perf_counter()
    read_libsvm(warm, threads=a.threads)
    print(f"warm-up read (numba compile/cache load): {time.perf_counter() - t0:.2f} s")
    _warm_page_cache(path)

    best = float("inf")
    best_cpu = None
    for k in range(max(1, a.repeat)):
        c0 = time.process_time()
        t0 = time.perf_counter()
        chunk = read_libsvm(path, threads=a.threads)
        dt = time.perf_counter() - t0
        dc = time.process_time() - c0
        if dt < best:
            best, best_cpu = dt, dc
        print(f"  svmtrain run {k + 1}: {dt:.2f} s wall, {dc:.2f} s cpu "
              f"({chunk.n_rows} rows, {chunk.nnz} nonzeros)")
        del chunk
    rate = mb / best
    print(f"svmtrain read_libsvm : {best:7.2f} s  {rate:8.1f} MB/s  (cpu {best_cpu:.2f} s)")

    exe = shutil.which("liblinear-train")
    if a.no_liblinear or exe is None:
        print("liblinear-train: skipped" + ("" if a.no_liblinear else " (not on PATH)"))
    else:
        lbest = float("inf")
        lbest_cpu = None
        with tempfile.TemporaryDirectory() as tmp:
            for k in range(max(1, a.liblinear_repeat)):
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                subprocess.run([exe, "-s", "3", "-c", "1", "-e", "1000", str(path),
                                os.path.join(tmp, "model")],
                               check=True, stdout=subprocess.DEVNULL)
                dt = time.perf_counter() - t0
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                dc = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
                if dt < lbest:
                    lbest, lbest_cpu = dt, dc
                print(f"  liblinear run {k + 1}: {dt:.2f} s wall, {dc:.2f} s cpu")
        lrate = mb / lbest
        print(f"liblinear-train      : {lbest:7.2f} s  {lrate:8.1f} MB/s  (cpu {lbest_cpu:.2f} s)")
        print(f"ratio svmtrain/liblinear: {rate / lrate:.2f}x "
              f"(cpu seconds: {lbest_cpu / best_cpu:.2f}x fewer)")
    print(f"load average after: {_load()}")


if __name__ == "__main__":
    main()
