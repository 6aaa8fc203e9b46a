#!/usr/bin/env python3
"""Timing of ranking (--task p): the pairwise loss/subgradient pass and
OCAS iterations as the rows grow at a fixed number of queries.

    python scripts/bench_ranking.py [--rows 100000,300000,1000000] [--queries 10000]
                                    [--features 20000] [--nnz-per-row 20] [--threads 1]
                                    [--iters 10]

For each size it builds a sparse ranking problem in memory (rows split into
``--queries`` contiguous queries of varying size, relevance 0-3 from a
hidden linear score plus noise, as ``gen_synthetic.py --queries``), then
reports the median seconds of one pair pass (``QueryGroups.pair_pass``:
the loss, violated pairs and subgradient coefficients at given scores,
sorting each query), of one pass X w (``margins``), and the seconds per
iteration of ``-s ocas --task p`` (``--iters`` iterations; both methods)
with its pair passes per iteration. The pair count grows with the square
of the query size; the pass time should grow like n log(n / Q). Times
are wall seconds after a warm-up run (numba compiled).
"""
import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def problem(n, queries, features, nnz_per_row, seed=1):
    """A ranking Chunk of n rows (see the module doc)."""
    from svmtrain.dataset import Chunk
    rng = np.random.default_rng(seed)
    k = np.maximum(rng.poisson(nnz_per_row, n), 1)
    indptr = np.r_[0, np.cumsum(k)].astype(np.int64)
    row = np.repeat(np.arange(n), k)
    idx = np.minimum((features * rng.random(len(row)) ** 2).astype(np.int64), features - 1)
    key = np.unique(row * features + idx)            # sorted, unique within a row
    row, idx = key // features, key % features
    indptr = np.r_[0, np.cumsum(np.bincount(row, minlength=n))].astype(np.int64)
    values = rng.random(len(idx))
    w = rng.standard_normal(features) * (np.arange(features) < max(1, features // 20))
    score = np.bincount(row, weights=values * w[idx], minlength=n)
    noisy = score + 0.3 * score.std() * rng.standard_normal(n)
    y = np.searchsorted(np.quantile(noisy, [0.5, 0.8, 0.95]), noisy, side="right").astype(np.float64)
    cuts = np.sort(rng.choice(np.arange(1, n), size=queries - 1, replace=False))
    q = np.zeros(n, np.int64)
    q[cuts] = 1
    return Chunk(labels=y, indptr=indptr, indices=idx.astype(np.int32), values=values, qid=np.cumsum(q) + 1)


def median_time(fn, reps=5):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default="100000,300000,1000000")
    ap.add_argument("--queries", type=int, default=10000)
    ap.add_argument("--features", type=int, default=20000)
    ap.add_argument("--nnz-per-row", type=float, default=20)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--iters", type=int, default=10)
    a = ap.parse_args(argv)
    import numba
    from svmtrain.params import TrainParams
    from svmtrain.ranking import QueryGroups
    from svmtrain.solvers._common import margins
    from svmtrain.training import train
    numba.set_num_threads(min(a.threads, numba.config.NUMBA_NUM_THREADS))

    print(f"{'rows':>9} {'queries':>7} {'pairs':>12} {'pass s':>8} {'ns/(n log2(n/Q))':>17} "
          f"{'X.w s':>7} {'ocas s/it':>9} {'passes/it':>9} {'cp s/it':>8}")
    for n in (int(x) for x in a.rows.split(",")):
        data = problem(n, a.queries, a.features, a.nnz_per_row)
        groups = QueryGroups.build(data.qid, data.labels)
        rng = np.random.default_rng(0)
        s = rng.standard_normal(n)
        groups.pair_pass(s)                                   # warm-up (compilation)
        t_pass = median_time(lambda: groups.pair_pass(s))
        w = rng.standard_normal(a.features + 1)
        out = np.empty(n)
        margins(data.indptr, data.indices, data.values, w, 0.0, 0.0, out)
        t_xw = median_time(lambda: margins(data.indptr, data.indices, data.values, w, 0.0, 0.0, out))
        per_it = {}
        for method in ("ocas", "cp"):
            p = TrainParams(solver="ocas", task="p", C=1.0, max_iter=a.iters, ocas_method=method,
                            threads=a.threads, eps=1e-12)
            t = time.perf_counter()
            r = train(data, p, n_features=a.features).fit_results[0]
            per_it[method] = ((time.perf_counter() - t) / max(r.n_iter, 1), r.info["n_passes"] / max(r.n_iter, 1))
        norm = t_pass / (n * math.log2(max(n / a.queries, 2))) * 1e9
        print(f"{n:9d} {groups.n_queries:7d} {groups.n_pairs:12d} {t_pass:8.4f} {norm:17.1f} {t_xw:7.4f} "
              f"{per_it['ocas'][0]:9.3f} {per_it['ocas'][1]:9.1f} {per_it['cp'][0]:8.3f}", flush=True)


if __name__ == "__main__":
    main()
