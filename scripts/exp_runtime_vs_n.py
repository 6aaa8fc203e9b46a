#!/usr/bin/env python3
"""make exp-runtime-vs-n: time to reach a fixed test error as the training set grows, for
Pegasos against dcd and ocas (section 5.3 and Fig. 3 of the survey in shared/papers: with
more data Pegasos needs no more time to a given generalisation error, while solvers that
pass over all the data every iteration need more).

Data: one synthetic training file of max(--sizes) rows and a test file of --test-rows
other rows of the same hidden model (scripts/gen_synthetic.py, kept under bench-data/);
the training set of size n is its first n rows. lambda is fixed (--lam), not C: the
regularised problem, hence Pegasos' step sizes, do not change with n. Every run is
traced in this process (evaluation excluded from the times):

* pegasos, the paper's last iterate (--no-average), k = 1, a row every --every steps, up to
  --steps steps, --seeds seeds (the median time is plotted, the range as a bar);
* dcd (-e 0.01) and ocas (-e 1e-3), a row per outer iteration.

The time to target of a run is the elapsed time of its first row whose test error is
<= --target (the solver's own time since it started, including its O(n) set-up: for
pegasos the squared norms of all rows and an epoch of random indices; the time to the
first row, set-up plus --every steps, is recorded as first_row_s and plotted).
Writes results/exp-runtime-vs-n.csv (one row per run: n, solver, seed, time and steps
to the target), results/exp-runtime-vs-n-traces.csv (every trace row) and
results/exp-runtime-vs-n.png.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exp_common as E  # noqa: E402

NAME = "exp-runtime-vs-n"


def ints(text):
    return [int(v) for v in text.split(",")]


def time_to(trace, target):
    """(elapsed seconds, updates) at the first row with test error <= target; (nan, nan) if none."""
    for r in trace:
        if 1.0 - r["test_accuracy"] <= target:
            return r["elapsed_s"], r["updates"]
    return float("nan"), float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=ints, default=ints("50000,100000,200000,400000"))
    ap.add_argument("--test-rows", type=int, default=20000)
    ap.add_argument("--features", type=int, default=20000)
    ap.add_argument("--nnz", type=int, default=30)
    ap.add_argument("--lam", type=float, default=1e-4)
    ap.add_argument("--target", type=float, default=0.20, help="test error to reach (a fraction)")
    ap.add_argument("--steps", type=int, default=300000, help="pegasos steps per run")
    ap.add_argument("--every", type=int, default=2000, help="pegasos steps between trace rows")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--workdir", default=os.path.join(E.L.ROOT, "bench-data"))
    args = ap.parse_args()
    from svmtrain.data.dataset import take_rows
    train, test = E.L.synthetic(args.workdir, max(args.sizes), args.features, args.nnz, args.test_rows)
    full, T = E.read(train), E.read(test)
    print(f"{NAME}: lambda {args.lam:g}, target test error {args.target:g}; load {E.L.load_average()}")
    runs = [("pegasos", dict(solver="pegasos", average=False), range(1, args.seeds + 1)),
            ("dcd", dict(solver="dcd", eps=0.01), [1]),
            ("ocas", dict(solver="ocas", eps=1e-3), [1])]
    for _, params, _ in runs:
        E.warm_up(**params)
    summary, traces = [], []
    for n in sorted(args.sizes):
        X = take_rows(full, np.arange(n))
        for label, params, seeds in runs:
            for seed in seeds:
                extra = dict(epochs=-(-args.steps // n)) if label == "pegasos" else {}
                _, trace = E.traced(X, T, steps=args.every if label == "pegasos" else None, lam=args.lam, seed=seed,
                                    **params, **extra)
                t, u = time_to(trace, args.target)
                best = 1.0 - max(r["test_accuracy"] for r in trace)
                summary.append(dict(n=n, solver=label, seed=seed, time_to_target_s=t, updates_to_target=u,
                                    best_test_error=best, first_row_s=trace[0]["elapsed_s"],
                                    total_s=trace[-1]["elapsed_s"], rows=len(trace)))
                traces += [dict(n=n, solver=label, seed=seed, **r) for r in trace]
                print(f"  n {n:7d} {label:8s} seed {seed}: to {args.target:g}: {t:.3f} s ({u} updates); "
                      f"best test error {best:.4f}; run {trace[-1]['elapsed_s']:.2f} s", flush=True)
    E.write_csv(NAME, summary)
    E.write_csv(NAME + "-traces", traces)
    plot(summary, traces, args)


def plot(summary, traces, args):
    panels = E.two_panels(NAME)
    if panels is None:
        return
    fig, ax1, ax2 = panels
    sizes = sorted({r["n"] for r in summary})
    for label, style in (("pegasos", "o-"), ("dcd", "s-"), ("ocas", "^-")):
        per_n = [[r["time_to_target_s"] for r in summary if r["solver"] == label and r["n"] == n] for n in sizes]
        ok = [(n, t) for n, t in zip(sizes, per_n) if t and not np.isnan(np.median(t))]
        if not ok:
            continue
        med = np.array([np.median(t) for _, t in ok])
        err = [med - [min(t) for _, t in ok], [max(t) for _, t in ok] - med]
        ax1.errorbar([n for n, _ in ok], med, yerr=err, fmt=style, ms=5, capsize=3,
                     label=label + (" (median of seeds)" if label == "pegasos" else ""))
    first = [np.median([r["first_row_s"] for r in summary if r["solver"] == "pegasos" and r["n"] == n]) for n in sizes]
    ax1.plot(sizes, first, "o:", color="C0", ms=3, lw=1, label=f"pegasos: set-up + first {args.every} steps")
    ax1.set(xscale="log", yscale="log", xlabel="training set size n",
            ylabel=f"seconds to test error <= {100 * args.target:g} %",
            title=f"synthetic ({args.features} features), lambda={args.lam:g}")
    ax1.legend(fontsize=8)
    for n in sizes:
        mine = [r for r in traces if r["solver"] == "pegasos" and r["seed"] == 1 and r["n"] == n]
        ax2.plot([r["updates"] for r in mine], [100 * (1 - r["test_accuracy"]) for r in mine], lw=1, label=f"n={n}")
    ax2.axhline(100 * args.target, color="k", ls="--", lw=1, label="target")
    ax2.set(xscale="log", xlabel="pegasos steps (seed 1, last iterate)", ylabel="test error (%)",
            title="pegasos: test error against steps")
    ax2.set_ylim(100 * args.target - 6, 100 * args.target + 15)
    ax2.legend(fontsize=7)
    E.save(fig, NAME)


if __name__ == "__main__":
    main()
