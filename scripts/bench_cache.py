#!/usr/bin/env python3
"""Benchmark ``svm-train --cache``: a first (parsing) run against a cached run.

Generates (or reuses) a synthetic file with ``gen_synthetic.generate`` under
``--workdir`` (default ``bench-data/``, named after its parameters, as
``scripts/bench_parse.py`` names it, so the two share the file), reads it
once so every run finds it in the page cache, then:

1. in-process: parse time of ``read_libsvm`` (after a warm-up on a small
   file, so numba's cache loading is not counted), time to write the cache,
   and time to load + verify it (``read_cache``), read into memory (the
   default) and mapped; with ``--compare-mmap`` also training time on read
   vs mapped arrays (``-s pegasos -T 5`` and ``-s dcd`` with 5 iterations),
   each in a fresh process;
2. end to end, for each solver in ``--solvers`` (default ``dcd,pegasos``;
   a solver that is not registered is skipped with a note): the wall time of
   ``svm-train -q -s SOLVER -c 1 [--extra] FILE MODEL`` without a cache, with
   ``--cache=PATH`` and no cache file yet (parse + write the cache), and with
   ``--cache=PATH`` again (mapped), each as a fresh process (the console
   script of the running interpreter's environment, or ``python -m svmtrain``).

Prints seconds, the cached-run speed-up over the first ``--cache`` run and
over the plain run, and the load average (the machine may be shared). Use
``--rows 100000`` for a ~90 MB file instead of the default ~900 MB one.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gen_synthetic import generate  # noqa: E402

# Whole processes of svm-train/svm-predict are timed and measured here: without the start-up
# server (README, "The start-up server"), whose runs happen in its children, not in the
# measured process (scripts/bench_server.py measures the server).
os.environ.setdefault("SVMTRAIN_SERVER", "0")


def _cached_file(workdir, rows, features, nnz, seed, skew=2.0):
    """The synthetic file for these parameters (named as scripts/bench_parse.py
    names it, so the benchmarks share it), generated when missing."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / f"synthetic-r{rows}-f{features}-k{nnz:g}-s{seed}-z{skew:g}.svm"
    if path.exists():
        print(f"reusing {path}")
    else:
        print(f"generating {path} ...", flush=True)
        t0 = time.perf_counter()
        generate(path, rows, features, nnz, seed, skew=skew)
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


def _train_command():
    script = Path(sys.executable).with_name("svm-train")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "svmtrain"]


def _timed(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")
    return dt, r.stderr.strip()


def compare_mmap(cache_path, solver, extra):
    """Each in a fresh process: load the cache read into memory or mapped,
    then train; wall and CPU seconds of both phases."""
    code = (
        "import sys, time\n"
        "from svmtrain.io import cache\n"
        "from svmtrain.params import TrainParams\n"
        "from svmtrain.training.train import train\n"
        "p = TrainParams(solver=sys.argv[2], C=1.0, **eval(sys.argv[4]))\n"
        "w0, c0 = time.perf_counter(), time.process_time()\n"
        "d = cache.read_cache(sys.argv[1], None, mmap_arrays=sys.argv[3] == 'mmap')\n"
        "w1, c1 = time.perf_counter(), time.process_time()\n"
        "train(d, p)\n"
        "w2, c2 = time.perf_counter(), time.process_time()\n"
        "print(w1 - w0, c1 - c0, w2 - w1, c2 - c1)\n")
    print(f"\nread vs mmap, -s {solver} {extra} (fresh processes; wall / CPU seconds):")
    for mode in ("read", "mmap", "read", "mmap"):
        out = subprocess.run([sys.executable, "-c", code, str(cache_path), solver, mode, repr(extra)],
                             check=True, capture_output=True, text=True).stdout.split()
        lw, lc, tw, tc = map(float, out[-4:])
        print(f"  {mode:5} load {lw:6.2f} / {lc:6.2f}   train {tw:7.2f} / {tc:7.2f}   total {lw + tw:7.2f}")


def micro(path, warm, cache_path):
    from svmtrain.io import cache
    from svmtrain.io.reader import read_libsvm

    read_libsvm(warm)                     # numba cache loading, thread pool
    t0 = time.perf_counter()
    data = read_libsvm(path)
    t_parse = time.perf_counter() - t0
    ident = cache.source_identity(path)
    t0 = time.perf_counter()
    cache.write_cache(data, cache_path, ident)
    t_write = time.perf_counter() - t0
    nbytes = os.path.getsize(cache_path)
    del data
    t0 = time.perf_counter()
    loaded = cache.read_cache(cache_path, ident, mmap_arrays=False)
    t_read = time.perf_counter() - t0
    del loaded
    t0 = time.perf_counter()
    mapped = cache.read_cache(cache_path, ident, mmap_arrays=True)
    t_map = time.perf_counter() - t0
    del mapped
    print(f"parse  read_libsvm            {t_parse:8.2f} s")
    print(f"write  cache ({nbytes / 1e6:7.1f} MB)      {t_write:8.2f} s  (checksums + write + fsync)")
    print(f"read   read_cache (+verify)   {t_read:8.2f} s  = parse / {t_parse / t_read:.1f}  (the default)")
    print(f"map    read_cache(mmap=True)  {t_map:8.2f} s  = parse / {t_parse / t_map:.1f}")
    return t_parse, t_write, t_map


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--features", type=int, default=200_000)
    ap.add_argument("--nnz-per-row", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--skew", type=float, default=2.0, help="gen_synthetic's index skew")
    ap.add_argument("--workdir", default="bench-data")
    ap.add_argument("--solvers", default="dcd,pegasos", help="comma-separated -s values")
    ap.add_argument("--extra", default="", help="more svm-train options, e.g. '-T 5'")
    ap.add_argument("--no-plain", action="store_true", help="skip the run without --cache")
    ap.add_argument("--no-micro", action="store_true", help="skip the in-process timings")
    ap.add_argument("--compare-mmap", action="store_true",
                    help="also time training on arrays read into memory vs mapped")
    ap.add_argument("--no-end-to-end", action="store_true", help="skip the svm-train runs")
    a = ap.parse_args(argv)

    from svmtrain.solvers import SOLVERS

    workdir = Path(a.workdir)
    path = _cached_file(workdir, a.rows, a.features, a.nnz_per_row, a.seed, a.skew)
    warm = _cached_file(workdir, 3000, 1000, 20, 12345)
    size = path.stat().st_size
    print(f"file   {path}  {size / 1e6:.1f} MB   load average {_load()}")
    _warm_page_cache(path)
    tmp = Path(tempfile.mkdtemp(prefix="bench-cache-", dir=workdir))
    try:
        if not a.no_micro:
            micro(path, warm, tmp / "micro.svmcache")
            if a.compare_mmap:
                compare_mmap(tmp / "micro.svmcache", "pegasos", {"epochs": 5})
                compare_mmap(tmp / "micro.svmcache", "dcd", {"max_iter": 5})
            os.unlink(tmp / "micro.svmcache")
        if a.no_end_to_end:
            return
        train = _train_command()
        subprocess.run(train + ["-q", "-T", "1", str(warm), str(tmp / "warm.model")], check=True)
        rows = []
        for solver in [s for s in a.solvers.split(",") if s]:
            if solver not in SOLVERS:
                print(f"-s {solver}: not registered in svmtrain.solvers.SOLVERS; skipped")
                continue
            cache_path = tmp / f"{solver}.svmcache"
            base = train + ["-q", "-s", solver, "-c", "1"] + a.extra.split()
            model = str(tmp / f"{solver}.model")
            plain = None if a.no_plain else _timed(base + [str(path), model])[0]
            first, _ = _timed(base + [f"--cache={cache_path}", str(path), model])
            second, note = _timed(base + [f"--cache={cache_path}", str(path), model])
            if note:
                print(f"  unexpected message on the cached run: {note}")
            rows.append((solver, plain, first, second))
            os.unlink(cache_path)
        print(f"\nend to end (wall seconds; svm-train -q -s S -c 1 {a.extra}):")
        print(f"{'solver':8} {'no cache':>9} {'1st --cache':>12} {'2nd --cache':>12} {'speed-up':>9} {'vs plain':>9}")
        for solver, plain, first, second in rows:
            p = f"{plain:9.2f}" if plain is not None else f"{'-':>9}"
            vs = f"{plain / second:8.1f}x" if plain is not None else f"{'-':>9}"
            print(f"{solver:8} {p} {first:12.2f} {second:12.2f} {first / second:8.1f}x {vs}")
        print(f"load average {_load()}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
