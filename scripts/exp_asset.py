#!/usr/bin/env python3
"""make exp-asset: test error against the approximation dimension for Nystrom and random
Fourier features (in the style of Fig. 1 of the ASSET paper).

a9a / a9a.t, RBF gamma = 0.01, C = 100. For each dimension (Nystrom: landmarks s,
Fourier: random features D) and each of --seeds seeds, `-s asset` (Algorithm 1, 5
epochs, its defaults) trains in this process; the test error of the model and its
training time are recorded. LIBSVM's exact-kernel test error is the reference line
(measured once, kept in results/, see exp_common.libsvm_reference).

Writes results/exp-asset.csv (one row per run) and results/exp-asset.png (mean and range
over the seeds).
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exp_common as E  # noqa: E402

NAME = "exp-asset"


def ints(text):
    return [int(v) for v in text.split(",")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nystrom", type=ints, default=ints("16,32,64,128,256,512,1024,2048"))
    ap.add_argument("--fourier", type=ints, default=ints("16,32,64,128,256,512,1024,2048,4096"))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("-c", "--cost", type=float, default=100.0)
    ap.add_argument("-g", "--gamma", type=float, default=0.01)
    ap.add_argument("--no-libsvm", action="store_true")
    ap.add_argument("--rerun-libsvm", action="store_true")
    ap.add_argument("--workdir", default=os.path.join(E.L.ROOT, "bench-data"))
    args = ap.parse_args()
    X, T = E.read("a9a.xz"), E.read("a9a.t.xz")
    print(f"{NAME}: a9a ({X.n_rows} rows), RBF gamma {args.gamma:g}, C {args.cost:g}; load {E.L.load_average()}")
    from svmtrain.params import TrainParams
    from svmtrain.training.train import train
    rows = []
    for approx, dims in (("nystrom", args.nystrom), ("fourier", args.fourier)):
        E.warm_up(solver="asset", approx=approx, dim=8)
        for dim in dims:
            for seed in range(1, args.seeds + 1):
                model = train(X, TrainParams(solver="asset", approx=approx, dim=dim, C=args.cost, gamma=args.gamma,
                                             seed=seed))
                acc = E.L.accuracy(model, T)
                rows.append(dict(approx=approx, dim=dim, seed=seed, test_error=1 - acc,
                                 train_s=model.train_time, objective=model.fit_results[0].objective))
            mine = [r["test_error"] for r in rows[-args.seeds:]]
            print(f"  {approx:8s} {dim:5d}: test error {100 * np.mean(mine):.2f} % "
                  f"({100 * min(mine):.2f}-{100 * max(mine):.2f}), {rows[-1]['train_s']:.2f} s", flush=True)
    ref = None if args.no_libsvm else E.libsvm_reference(args.cost, args.gamma, args.workdir, args.rerun_libsvm)
    if ref is not None:
        rows.append(dict(approx="LIBSVM (exact kernel)", dim=ref["n_sv"], seed="", test_error=1 - ref["test_acc"],
                         train_s=ref["wall_s"]))
    E.write_csv(NAME, rows)
    plot(rows, ref, args)


def plot(rows, ref, args):
    panels = E.two_panels(NAME)
    if panels is None:
        return
    fig, ax1, ax2 = panels
    for approx, label in (("nystrom", "Nystrom (s landmarks)"), ("fourier", "random Fourier (D features)")):
        dims = sorted({r["dim"] for r in rows if r["approx"] == approx})
        errs = [[100 * r["test_error"] for r in rows if r["approx"] == approx and r["dim"] == d] for d in dims]
        mean = np.array([np.mean(e) for e in errs])
        lo, hi = mean - [min(e) for e in errs], [max(e) for e in errs] - mean
        ax1.errorbar(dims, mean, yerr=[lo, hi], fmt="o-", ms=4, capsize=3, label=label)
        ax2.plot(dims, [np.mean([r["train_s"] for r in rows if r["approx"] == approx and r["dim"] == d])
                        for d in dims], "o-", ms=4, label=label)
    if ref is not None:
        e = 100 * (1 - ref["test_acc"])
        ax1.axhline(e, color="k", ls="--", lw=1, label=f"LIBSVM, exact kernel ({e:.2f} %)")
        ax2.axhline(ref["wall_s"], color="k", ls="--", lw=1, label=f"LIBSVM ({ref['wall_s']:.0f} s, whole run)")
    ax1.set(xscale="log", xlabel="approximation dimension", ylabel="test error on a9a.t (%)",
            title=f"ASSET on a9a, RBF gamma={args.gamma:g}, C={args.cost:g} ({args.seeds} seeds)")
    ax2.set(xscale="log", yscale="log", xlabel="approximation dimension", ylabel="training seconds (in process)",
            title="training time")
    ax1.set_xscale("log", base=2)
    ax2.set_xscale("log", base=2)
    for ax in (ax1, ax2):
        ax.legend(fontsize=7)
    E.save(fig, NAME)


if __name__ == "__main__":
    main()
