#!/usr/bin/env python3
"""make exp-pegasos: primal objective and test error against training time for pegasos,
dcd and ocas on one problem (in the style of Fig. 2 of the Pegasos paper).

Default: a9a / a9a.t at lambda = 1e-4 (the Pegasos paper's kind of lambda; C = 0.307).
Every solver runs in this process with --trace's monitor (evaluation time excluded from
the time axis):

* pegasos, 30 epochs, a row every n/4 steps: the default (averaging the last half of the
  iterates) and --no-average (the paper's last iterate);
* dcd at -e 0.001, ocas at -e 1e-4 (a row per outer iteration).

The objective is shown as primal - f*, f* the lowest primal value seen, in practice
that of dcd at -e 1e-6 (whose dual value, printed, bounds f* from below). Writes results/exp-pegasos.csv (every trace row, with the
solver and f*) and results/exp-pegasos.png.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exp_common as E  # noqa: E402

NAME = "exp-pegasos"
RUNS = [  # (label, TrainParams fields)
    ("pegasos (averaged)", dict(solver="pegasos")),
    ("pegasos (last iterate)", dict(solver="pegasos", average=False)),
    ("dcd", dict(solver="dcd", eps=1e-3)),
    ("ocas", dict(solver="ocas", eps=1e-4)),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--train", default="a9a.xz")
    ap.add_argument("--test", default="a9a.t.xz")
    ap.add_argument("--lam", type=float, default=1e-4)
    ap.add_argument("--epochs", type=int, default=30, help="pegasos epochs")
    args = ap.parse_args()
    X, T = E.read(args.train), E.read(args.test)
    print(f"{NAME}: {args.train} ({X.n_rows} rows), lambda = {args.lam:g}; load {E.L.load_average()}")
    from svmtrain.params import TrainParams
    from svmtrain.training.train import train
    fit = train(X, TrainParams(solver="dcd", lam=args.lam, eps=1e-6, max_iter=100000)).fit_results[0]
    ref = {"primal": fit.objective, "dual": fit.info["dual_objective"] / (X.n_rows * fit.info["C"])}
    rows = []
    for label, params in RUNS:
        E.warm_up(**params)
        steps = max(1, X.n_rows // 4) if params["solver"] == "pegasos" else None
        epochs = args.epochs if params["solver"] == "pegasos" else None
        _, trace = E.traced(X, T, steps=steps, lam=args.lam, epochs=epochs, **params)
        last = trace[-1]
        print(f"  {label:24s} {len(trace):4d} rows, {last['elapsed_s']:.3f} s, primal {last['primal']:.6g}, "
              f"test accuracy {100 * last['test_accuracy']:.2f} %")
        rows += [dict(solver=label, **r) for r in trace]
    f_star = min([ref["primal"]] + [r["primal"] for r in rows])
    print(f"f* = {f_star:.8g} (dcd -e 1e-6: primal {ref['primal']:.8g}, dual {ref['dual']:.8g})")
    E.write_csv(NAME, [dict(r, f_star=f_star) for r in rows])
    plot(rows, f_star, args)


def plot(rows, f_star, args):
    panels = E.two_panels(NAME)
    if panels is None:
        return
    fig, ax1, ax2 = panels
    for label, _ in RUNS:
        mine = [r for r in rows if r["solver"] == label]
        t = [max(r["elapsed_s"], 1e-4) for r in mine]
        ax1.plot(t, [max(r["primal"] - f_star, 1e-10) for r in mine], ".-", label=label, ms=3)
        ax2.plot(t, [100 * (1 - r["test_accuracy"]) for r in mine], ".-", label=label, ms=3)
    ax1.set(xscale="log", yscale="log", xlabel="training seconds (evaluation excluded)",
            ylabel="primal objective - f*", title=f"{os.path.basename(args.train)}, lambda = {args.lam:g}")
    ax2.set(xscale="log", xlabel="training seconds (evaluation excluded)", ylabel="test error (%)",
            title=f"test error on {os.path.basename(args.test)}")
    lo = min(100 * (1 - r["test_accuracy"]) for r in rows)
    ax2.set_ylim(lo - 0.5, lo + 6)
    ax1.legend(fontsize=8)
    E.save(fig, NAME)


if __name__ == "__main__":
    main()
