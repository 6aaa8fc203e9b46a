#!/usr/bin/env python3
"""Distributed OCAS (--engine dask) with 1 and 2 workers, on partitions of a
synthetic file, in one run, against the local solver.

The synthetic file (scripts/gen_synthetic.py, shared with the other
benchmarks under --workdir) is split by lines into --parts partition files.
For each worker count a LocalCluster of that many single-threaded worker
processes on 127.0.0.1 is started; the partitions are parsed on the
workers (timed apart), then OCAS trains at C = --C (training time only,
the driver's QP included). Reported per run: wall seconds, iterations, the
rounds of tasks per iteration, the payload per iteration (driver -> each
worker and each worker -> driver, counted by the engine: arrays by their
size, numbers as 8 bytes) and the bytes that crossed the loopback
interface per iteration (psutil; everything: Dask's own protocol
messages, heartbeats, and whatever else the machine sent over loopback
meanwhile). The local solver runs in-process on the concatenated data with
--threads 1 and 2 for reference. The machine's cores are shared with other
jobs: the load average is printed before and after, and each configuration
runs --repeat times (minimum reported, all listed).

    python scripts/bench_dask.py                         # 200,000 rows, 4 partitions
    python scripts/bench_dask.py --rows 400000 --parts 8 --repeat 3
    python scripts/bench_dask.py --loss log              # logistic regression
"""
import argparse
import csv
import os
import sys
import time

import numpy as np

# Whole processes of svm-train/svm-predict are timed and measured here: without the start-up
# server (README, "The start-up server"), whose runs happen in its children, not in the
# measured process (scripts/bench_server.py measures the server).
os.environ.setdefault("SVMTRAIN_SERVER", "0")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, ROOT)


def split(path, parts, workdir):
    """``path`` split by lines into ``parts`` files under workdir (reused when present)."""
    base = os.path.join(workdir, os.path.basename(path) + f".parts{parts}")
    names = [os.path.join(base, f"part-{i:03d}") for i in range(parts)]
    if all(os.path.exists(n) for n in names):
        return base
    os.makedirs(base, exist_ok=True)
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        for i, name in enumerate(names):
            end = size * (i + 1) // parts
            chunk = f.read(max(0, end - f.tell()))
            chunk += f.readline()          # to the end of the line
            with open(name + ".tmp", "wb") as out:
                out.write(chunk)
            os.replace(name + ".tmp", name)
    return base


def loopback_bytes():
    import psutil
    c = psutil.net_io_counters(pernic=True).get("lo")
    return c.bytes_sent if c is not None else float("nan")


def load_avg():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run_dask(workers, specs, params):
    from svmtrain.distributed.engine import Session, connect
    from svmtrain.distributed.training import check_supported
    from svmtrain.training.train import label_order, problem_costs

    with connect(n_workers=workers) as client:     # the LocalCluster svm-train starts
        # warm the workers (imports, numba's cached kernels) on a tiny problem
        client.run(_warm)
        sess = Session(client, specs)
        t0 = time.perf_counter()
        meta = sess.load()
        t_load = time.perf_counter() - t0
        n = sum(m["rows"] for m in meta)
        d = max(m["n_features"] for m in meta)
        order = label_order(np.concatenate([m["labels"] for m in meta]))
        (label, cost), = problem_costs(order, params)
        lo0 = loopback_bytes()
        t0 = time.perf_counter()
        res = check_supported(params).fit(sess, (0, label, cost), n, d, params)
        t_train = time.perf_counter() - t0
        lo = loopback_bytes() - lo0
        tr = sess.traffic
        kinds = [k for k in tr.rounds if k != "load"]
        it = res.n_iter + 1                      # iteration 0 included
        down = sum(tr.down[k] for k in kinds) / it
        up = sum(tr.up[k] for k in kinds) / it
        tasks = sum(tr.tasks[k] for k in kinds) / it
        rounds = sum(tr.rounds[k] for k in kinds) / it
        wall = sum(tr.wall[k] for k in kinds)
        compute = sum(tr.compute[k] for k in kinds)
        sess.close()
        return dict(t_load=t_load, t_train=t_train, n_iter=res.n_iter, objective=res.objective,
                    t_workers=compute, t_dask=wall - compute, t_driver=t_train - wall,
                    rounds_per_iter=rounds, down_per_worker=down / (tasks / rounds) if rounds else 0,
                    up_per_worker=up / (tasks / rounds) if rounds else 0, loopback_per_iter=lo / it,
                    ls_rounds=res.info["line_search_rounds"] / max(res.n_iter, 1), n=n, d=d)


def _warm():
    from svmtrain.distributed import _kernels  # noqa: F401
    from svmtrain.solvers.ocas import _ocas_kernels
    return True


def run_local(path, params, threads):
    import dataclasses
    from svmtrain.io.reader import read_libsvm
    from svmtrain.solvers import get_solver
    ocas = get_solver("ocas", task="c", loss=params.loss)
    X = read_libsvm(path)
    y = np.where(X.labels > 0, 1.0, -1.0)
    p = dataclasses.replace(params, threads=threads)
    t0 = time.perf_counter()
    res = ocas.fit(X, y, X.n_features, p)
    return dict(t_train=time.perf_counter() - t0, n_iter=res.n_iter, objective=res.objective,
                threads_used=res.info.get("threads", p.threads))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=200_000)
    ap.add_argument("--nnz", type=float, default=60)
    ap.add_argument("--parts", type=int, default=4)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--loss", default="hinge", help="hinge or log (logistic regression)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--no-local", action="store_true", help="skip the local reference runs")
    ap.add_argument("--workdir", default=os.path.join(ROOT, "bench-data"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "bench_dask.csv"))
    args = ap.parse_args()

    from bench_parse import cached_file
    from svmtrain.distributed.partitions import expand
    from svmtrain.params import TrainParams

    path = str(cached_file(args.workdir, args.rows, args.features, args.nnz, 1))
    base = split(path, args.parts, args.workdir)
    specs = expand(base)
    params = TrainParams(solver="ocas", C=args.C, loss=args.loss)
    print(f"{path}: {os.path.getsize(path) / 1e6:.0f} MB in {len(specs)} partitions; "
          f"{os.cpu_count()} cores; load average {load_avg()}", flush=True)

    rows = []
    for rep in range(args.repeat):           # configurations interleaved: the load drifts
        if not args.no_local:
            for threads in (1, 2):
                r = run_local(path, params, threads)
                r.update(config=f"local --threads {threads}", rep=rep, load=load_avg())
                rows.append(r)
                print(f"  local threads={threads} (used {r['threads_used']}): {r['t_train']:.2f} s, "
                      f"{r['n_iter']} iterations, objective {r['objective']:.8g}; load {r['load']}",
                      flush=True)
        for workers in [int(w) for w in args.workers.split(",")]:
            r = run_dask(workers, specs, params)
            r.update(config=f"dask {workers} worker{'s' if workers > 1 else ''}", rep=rep, load=load_avg())
            rows.append(r)
            print(f"  dask workers={workers}: parse {r['t_load']:.2f} s, train {r['t_train']:.2f} s "
                  f"(slowest worker task of each round {r['t_workers']:.2f} s, Dask round trips "
                  f"{r['t_dask']:.2f} s, driver {r['t_driver']:.2f} s), {r['n_iter']} iterations, "
                  f"objective {r['objective']:.8g}, {r['rounds_per_iter']:.2f} rounds/iteration "
                  f"({r['ls_rounds']:.2f} line-search rounds), per iteration per worker "
                  f"{r['down_per_worker'] / 1e3:.1f} kB down, {r['up_per_worker'] / 1e3:.1f} kB up; "
                  f"loopback {r['loopback_per_iter'] / 1e3:.1f} kB/iteration; load {r['load']}", flush=True)

    best = {}
    for r in rows:
        if r["config"] not in best or r["t_train"] < best[r["config"]]["t_train"]:
            best[r["config"]] = r
    print(f"\nload average after: {load_avg()}")
    print("| run | train s (min of runs) | all runs | iterations | objective |")
    print("|---|---|---|---|---|")
    for cfg, r in best.items():
        all_t = ", ".join(f"{x['t_train']:.2f}" for x in rows if x["config"] == cfg)
        print(f"| {cfg} | {r['t_train']:.2f} | {all_t} | {r['n_iter']} | {r['objective']:.8g} |")
    one, two = best.get("dask 1 worker"), best.get("dask 2 workers")
    if one and two:
        print(f"\nspeed-up, 2 workers vs 1: {one['t_train'] / two['t_train']:.2f}x (training); "
              f"{one['t_load'] / two['t_load']:.2f}x (parsing)")
    loc = best.get("local --threads 1")
    if loc and one:
        print(f"dask 1 worker vs local 1 thread: {one['t_train'] / loc['t_train']:.2f}x the time")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    keys = sorted({k for r in rows for k in r})
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
