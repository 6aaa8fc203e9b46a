#!/usr/bin/env python3
"""Timing of ranking (--task p): the pairwise loss/subgradient pass and
OCAS iterations as the rows grow at a fixed number of queries.

    python scripts/bench_ranking.py [--rows 100000,300000,1000000] [--queries 10000]
                                    [--features 20000] [--nnz-per-row 20] [--threads 1]
                                    [--iters 10]
    python scripts/bench_ranking.py --vs-liblinear [--pair-rows 20000] [--pair-queries 200] [--pair-c 20]

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

``--vs-liblinear`` instead compares with LIBLINEAR on the explicit pair
problem: it writes every pair difference x_i - x_j (y_i > y_j, one query)
of a training set to a LIBSVM file (labels alternating +1 / -1 with the
sign of the difference, the same problem), trains ``liblinear-train -s 3
-B -1`` on it with C = the pair cost, and ``svm-train -s ocas --task p``
(svm_rank's C: pair cost = C / queries) on the rows; then the squared
pairwise hinge: ``liblinear-train -s 2`` on the pairs and ``svm-train -s
tron --task p`` on the rows; all as commands, timed by wall clock. It
prints each pair of primal pair objectives (computed here from the weight
vectors) and the pair accuracy and NDCG@10 on held-out
queries of the same hidden model.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

# Whole processes of svm-train/svm-predict are timed and measured here: without the start-up
# server (README, "The start-up server"), whose runs happen in its children, not in the
# measured process (scripts/bench_server.py measures the server).
os.environ.setdefault("SVMTRAIN_SERVER", "0")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def problem(n, queries, features, nnz_per_row, seed=1, model_seed=None):
    """A ranking Chunk of n rows (see the module doc); the hidden weights are
    drawn from ``model_seed`` when given (rows of one model for two seeds)."""
    from svmtrain.data.dataset import Chunk
    rng = np.random.default_rng(seed)
    k = np.maximum(rng.poisson(nnz_per_row, n), 1)
    indptr = np.r_[0, np.cumsum(k)].astype(np.int64)
    row = np.repeat(np.arange(n), k)
    idx = np.minimum((features * rng.random(len(row)) ** 2).astype(np.int64), features - 1)
    key = np.unique(row * features + idx)            # sorted, unique within a row
    row, idx = key // features, key % features
    indptr = np.r_[0, np.cumsum(np.bincount(row, minlength=n))].astype(np.int64)
    values = rng.random(len(idx))
    w_rng = rng if model_seed is None else np.random.default_rng(model_seed)
    w = w_rng.standard_normal(features) * (np.arange(features) < max(1, features // 20))
    score = np.bincount(row, weights=values * w[idx], minlength=n)
    noisy = score + 0.3 * score.std() * rng.standard_normal(n)
    y = np.searchsorted(np.quantile(noisy, [0.5, 0.8, 0.95]), noisy, side="right").astype(np.float64)
    cuts = np.sort(rng.choice(np.arange(1, n), size=queries - 1, replace=False))
    q = np.zeros(n, np.int64)
    q[cuts] = 1
    return Chunk(labels=y, indptr=indptr, indices=idx.astype(np.int32), values=values, qid=np.cumsum(q) + 1)


def pair_differences(data, d):
    """CSR matrix of x_i - x_j for every pair (i, j) of one query with
    y_i > y_j, in query order (the pairs of a query enumerated at once)."""
    import scipy.sparse as sp
    X = sp.csr_matrix((data.values, data.indices, data.indptr), shape=(data.n_rows, d))
    qid, y = data.qid, data.labels
    order = np.argsort(qid, kind="stable")
    bounds = np.flatnonzero(np.r_[True, np.diff(qid[order]) != 0, True])
    I, J = [], []
    for a, b in zip(bounds[:-1], bounds[1:]):          # per query (a benchmark, not a hot loop)
        rows = order[a:b]
        i, j = np.nonzero(y[rows][:, None] > y[rows][None, :])
        I.append(rows[i])
        J.append(rows[j])
    I, J = np.concatenate(I), np.concatenate(J)
    return X[I] - X[J]


def pair_objective(D, w, cost, squared=False):
    """1/2 |w|^2 + cost * sum over pairs of max(0, 1 - w.(x_i - x_j)) (or its square)."""
    h = np.maximum(0.0, 1.0 - D @ w)
    return 0.5 * float(w @ w) + cost * float((h * h).sum() if squared else h.sum())


def write_libsvm(path, label_text, X):
    """A CSR matrix as LIBSVM text (1-based indices, ``%.17g`` values), row r
    starting with ``label_text[r]`` (e.g. "+1" or "2 qid:7"). Assembled with
    array operations: a token per nonzero, a label and a newline per row."""
    X = X.tocsr()
    X.sort_indices()
    n = X.shape[0]
    counts = np.diff(X.indptr)
    tokens = np.empty(X.nnz + 2 * n, dtype=object)
    first = X.indptr[:-1] + 2 * np.arange(n)              # each row's label slot
    items = np.ones(len(tokens), bool)
    items[first] = False
    items[first + counts + 1] = False
    tokens[first] = np.asarray(label_text, dtype=object)
    tokens[first + counts + 1] = "\n"
    tokens[items] = np.char.add(np.char.add(" ", (X.indices + 1).astype(str)),
                                np.char.add(":", np.char.mod("%.17g", X.data))).astype(object)
    with open(path, "w") as f:
        f.write("".join(tokens.tolist()))


def read_liblinear_w(path, d):
    """The weight vector of a binary LIBLINEAR model file (label order applied)."""
    lines = open(path).read().split("\n")
    labels = next(ln for ln in lines if ln.startswith("label")).split()[1:]
    start = lines.index("w") + 1
    w = np.array([float(x) for x in lines[start:start + d]])
    return w if labels[0] == "1" else -w


def vs_liblinear(a):
    from svmtrain.io.model_io import load_model
    from svmtrain.data.queries import ranking_summary
    rows, d, C = a.pair_rows, a.features, a.pair_c
    train, test = (problem(rows, a.pair_queries, d, a.nnz_per_row, seed=seed, model_seed=7) for seed in (1, 2))
    D = pair_differences(train, d)
    cost = C / len(np.unique(train.qid))
    sign = np.where(np.arange(D.shape[0]) % 2 == 0, 1, -1)
    import scipy.sparse as sp
    with tempfile.TemporaryDirectory() as tmp:
        pairs_file, rank_file = os.path.join(tmp, "pairs"), os.path.join(tmp, "rank")
        write_libsvm(pairs_file, np.where(sign > 0, "+1", "-1"), sp.diags(sign.astype(np.float64)) @ D)
        write_libsvm(rank_file, np.char.add(np.char.add(np.char.mod("%g", train.labels), " qid:"),
                                            train.qid.astype(str)),
                     sp.csr_matrix((train.values, train.indices, train.indptr)))
        svm_train = os.path.join(os.path.dirname(sys.executable), "svm-train")
        runs = []
        for solver, ll_s, squared in (("ocas", "3", False), ("tron", "2", True)):
            ll_model, our_model = os.path.join(tmp, "ll.model"), os.path.join(tmp, "our.model")
            subprocess.run([svm_train, "-q", "-s", solver, "--task", "p", "-c", "1", rank_file, our_model],
                           check=True)                          # numba's first compile, untimed
            t = time.perf_counter()
            subprocess.run([svm_train, "-q", "-s", solver, "--task", "p", "-c", repr(C), rank_file, our_model],
                           check=True)
            t_ours = time.perf_counter() - t
            t = time.perf_counter()
            subprocess.run(["liblinear-train", "-q", "-s", ll_s, "-B", "-1", "-c", repr(cost), pairs_file, ll_model],
                           check=True)
            t_ll = time.perf_counter() - t
            w_ours = np.zeros(d)
            W = load_model(our_model).W[:, 0]
            w_ours[:min(d, len(W))] = W[:d]
            runs.append((f"svm-train -s {solver} --task p", w_ours, t_ours, squared))
            runs.append((f"liblinear-train -s {ll_s} (pairs)", read_liblinear_w(ll_model, d), t_ll, squared))
    Xt = sp.csr_matrix((test.values, test.indices, test.indptr), shape=(test.n_rows, d))
    print(f"{rows} rows, {len(np.unique(train.qid))} queries, {D.shape[0]} pairs, {d} features; C = {C} "
          f"(pair cost {cost:.4g}); held-out: {test.n_rows} rows")
    print(f"{'':30} {'time s':>8} {'pair objective':>15} {'test pair acc':>13} {'test NDCG@10':>12}")
    for name, w, secs, squared in runs:
        m = ranking_summary(Xt @ w, test.labels, test.qid)
        print(f"{name:30} {secs:8.2f} {pair_objective(D, w, cost, squared):15.8g} {m.pair_accuracy:13.4f} "
              f"{m.ndcg:12.4f}")
    for k in (0, 2):
        print(f"time ratio {runs[k][0]} / {runs[k + 1][0]}: {runs[k][2] / runs[k + 1][2]:.2f}")


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
    ap.add_argument("--vs-liblinear", action="store_true",
                    help="compare with liblinear-train -s 3 on the explicit pair differences instead")
    ap.add_argument("--pair-rows", type=int, default=20000, help="rows of --vs-liblinear's training set")
    ap.add_argument("--pair-queries", type=int, default=200, help="its queries")
    ap.add_argument("--pair-c", type=float, default=20.0, help="its C (svm_rank's: pair cost C / queries)")
    a = ap.parse_args(argv)
    if a.vs_liblinear:
        return vs_liblinear(a)
    import numba
    from svmtrain.params import TrainParams
    from svmtrain.data.queries import QueryGroups
    from svmtrain.solvers._common import margins
    from svmtrain.training.train import train
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
