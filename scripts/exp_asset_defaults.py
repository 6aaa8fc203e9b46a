#!/usr/bin/env python3
"""make exp-asset-defaults: the measurements behind -s asset's defaults (epochs, averaging,
Nystrom eigenvalue threshold), the tables of docs/solvers.md ("Defaults, measured").

a9a / a9a.t, RBF gamma = 0.01, C = 100 (lambda = 1/(100 n)), trained in this process by
``svmtrain.train`` and predicted by ``svmtrain.predict`` (the same code as
``svm-train -s asset -g 0.01 -c 100 [--approx fourier] -D DIM -T EPOCHS [--no-average]
--seed SEED data/a9a.xz``; --cli-check, on by default, runs the console scripts once per
approximation and checks that they predict the same a9a.t labels).

1. Epochs and averaging: Nystrom ``-D 512`` and Fourier ``--approx fourier -D 2048``,
   ``-T`` in --epochs, averaging on (the default: the eta-weighted average of the iterates
   from step rho N on, rho = 0.5, a constant of svmtrain/solvers/asset/asset.py, not a flag) and
   ``--no-average`` (the last iterate), seeds 1..--seeds. Table: mean test accuracy over the
   seeds, and the mean objective (lambda form) of the averaged model.
2. The defaults (-T 5, averaged) over seeds 1..--spread-seeds: range and mean accuracy.
3. Nystrom s = 512 with each --eig-threshold, seeds 1..--seeds: the dimension kept (the
   model's feature_dim, one per seed), mean accuracy, and the smallest kept and largest
   dropped eigenvalue of the landmarks' kernel matrix (recomputed from the same seeded
   landmark draw; the script checks that the kept count matches the model's), and per seed
   the landmarks that repeat another landmark's row (a9a has duplicate rows) against the
   eigenvalues below 1e-12.

Accuracy does not depend on the machine; training times (in process, after an untimed
warm-up that compiles numba's code) are in results/exp-asset-defaults.csv, one row per run.
"""
import argparse
import os
import sys
import tempfile
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exp_common as E  # noqa: E402

NAME = "exp-asset-defaults"
APPROX = [("nystrom", 512, "Nystrom s = 512"), ("fourier", 2048, "Fourier D = 2048")]


def ints(text):
    return [int(v) for v in text.split(",") if v]


def exp(v):
    """1e-08 -> 1e-8: a threshold as one would type it."""
    return f"{v:.0e}".replace("e-0", "e-").replace("e+0", "e") if v == float(f"{v:.0e}") else f"{v:g}"


def floats(text):
    return [float(v) for v in text.split(",") if v]


class Runner:
    """Trains and predicts once per distinct configuration (runs are shared between the tables)."""

    def __init__(self, X, T, C, gamma):
        self.X, self.T, self.C, self.gamma = X, T, C, gamma
        self.runs = {}

    def __call__(self, approx, dim, epochs, average, seed, eig_threshold=None):
        key = (approx, dim, epochs, average, seed, eig_threshold)
        if key not in self.runs:
            import svmtrain
            opts = dict(solver="asset", approx=approx, dim=dim, epochs=epochs, average=average, seed=seed,
                        C=self.C, gamma=self.gamma)
            if eig_threshold is not None:
                opts["eig_threshold"] = eig_threshold
            model = svmtrain.train(self.X, **opts)
            labels = svmtrain.predict(self.T, model)
            fit = model.fit_results[0]
            self.runs[key] = dict(approx=approx, dim=dim, epochs=epochs, average=average, seed=seed,
                                  eig_threshold=eig_threshold, test_acc=float(np.mean(labels == self.T.labels)),
                                  objective=fit.objective, feature_dim=fit.info["feature_dim"],
                                  train_s=model.train_time, labels=labels)
        return self.runs[key]


def cli_check(run, args):
    """Train and predict with the console scripts; raise if the a9a.t labels differ from in-process."""
    L = E.L
    with tempfile.TemporaryDirectory() as tmp:
        for approx, dim, _ in APPROX:
            for average in (True, False):
                r = run(approx, dim, 5, average, 1)
                model, out = os.path.join(tmp, "m"), os.path.join(tmp, "out")
                cmd = [L.OURS_TRAIN, "-q", "-s", "asset", "-g", repr(args.gamma), "-c", repr(args.cost),
                       "--approx", approx, "-D", str(dim), "-T", "5", "--seed", "1",
                       "--average" if average else "--no-average", L.data_file("a9a.xz"), model]
                L.run(cmd)
                L.run([L.OURS_PREDICT, L.data_file("a9a.t.xz"), model, out])
                cli = np.loadtxt(out)
                if not np.array_equal(cli, r["labels"]):
                    raise SystemExit(f"CLI and in-process predictions differ: {' '.join(cmd)}")
                print(f"  CLI check {approx} -D {dim} {'averaged' if average else 'no averaging'}: "
                      f"same {len(cli)} labels ({100 * r['test_acc']:.2f} %)", flush=True)


def spectrum(X, dim, gamma, seed):
    """(every eigenvalue of K_SS, descending; landmarks that repeat an earlier landmark's row)
    for the landmarks -s asset draws with this seed."""
    from svmtrain.mercer.feature_maps import build_map
    p = SimpleNamespace(kernel_type=2, gamma=gamma, degree=3, coef0=0.0, approx="nystrom", dim=dim,
                        eig_threshold=-np.inf)
    with np.errstate(invalid="ignore", divide="ignore"):
        fmap, _ = build_map(X, p, X.n_features, np.random.default_rng(seed))
    S = fmap.landmarks
    rows = {(S.indices[a:b].tobytes(), S.values[a:b].tobytes()) for a, b in zip(S.indptr[:-1], S.indptr[1:])}
    return fmap.eigenvalues, S.n_rows - len(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--epochs", type=ints, default=ints("1,3,5,10,20"), help="values of -T (default 1,3,5,10,20)")
    ap.add_argument("--seeds", type=int, default=3, help="seeds 1..N for the tables (default 3)")
    ap.add_argument("--spread-seeds", type=int, default=8,
                    help="seeds 1..N for the defaults' range (default 8; 0 skips it)")
    ap.add_argument("--eig-thresholds", type=floats, default=floats("1e-16,1e-12,1e-8,1e-4,1e-3,1e-2"),
                    help="Nystrom --eig-threshold values (default 1e-16,1e-12,1e-8,1e-4,1e-3,1e-2; '' skips)")
    ap.add_argument("-c", "--cost", type=float, default=100.0)
    ap.add_argument("-g", "--gamma", type=float, default=0.01)
    ap.add_argument("--no-cli-check", action="store_true", help="skip the console-script comparison")
    args = ap.parse_args()
    X, T = E.read("a9a.xz"), E.read("a9a.t.xz")
    print(f"{NAME}: a9a ({X.n_rows} rows), RBF gamma {args.gamma:g}, C {args.cost:g}; load {E.L.load_average()}",
          flush=True)
    for approx, _, _ in APPROX:
        E.warm_up(solver="asset", approx=approx, dim=8)
    run = Runner(X, T, args.cost, args.gamma)
    seeds = range(1, args.seeds + 1)
    mean = lambda rs, k: float(np.mean([r[k] for r in rs]))  # noqa: E731

    lines = [f"Epochs and averaging: mean of seeds {seeds[0]}-{seeds[-1]}, a9a.t accuracy %",
             "", "| epochs (`-T`) | averaged (default) | no averaging (`--no-average`) | objective, averaged |",
             "|---|---|---|---|"]
    for approx, dim, label in APPROX:
        for i, ep in enumerate(args.epochs):
            avg = [run(approx, dim, ep, True, s) for s in seeds]
            last = [run(approx, dim, ep, False, s) for s in seeds]
            row = (f"| {label + ', ' if i == 0 else ''}{ep} | {100 * mean(avg, 'test_acc'):.2f} | "
                   f"{100 * mean(last, 'test_acc'):.2f} | {mean(avg, 'objective'):.3f} |")
            lines.append(row)
            print(f"  {row}  ({mean(avg, 'train_s'):.2f} s averaged)", flush=True)
    tables = ["\n".join(lines)]

    if args.spread_seeds > 0:
        lines = [f"The defaults (-T 5, averaged) over seeds 1-{args.spread_seeds}, a9a.t accuracy %", "",
                 "| approximation | min | max | mean |", "|---|---|---|---|"]
        for approx, dim, label in APPROX:
            acc = [100 * run(approx, dim, 5, True, s)["test_acc"] for s in range(1, args.spread_seeds + 1)]
            lines.append(f"| {label} | {min(acc):.2f} | {max(acc):.2f} | {np.mean(acc):.2f} |")
            print(f"  {lines[-1]}", flush=True)
        tables.append("\n".join(lines))

    if args.eig_thresholds:
        spectra, repeats = {}, {}
        for s in seeds:
            spectra[s], repeats[s] = spectrum(X, 512, args.gamma, s)
        lines = [f"Nystrom s = 512, -T 5, averaged, seeds {seeds[0]}-{seeds[-1]}", "",
                 "| `--eig-threshold` | dimension kept (per seed) | a9a.t accuracy % | smallest kept eigenvalue "
                 "| largest dropped eigenvalue |", "|---|---|---|---|---|"]
        for th in args.eig_thresholds:
            rs = [run("nystrom", 512, 5, True, s, th) for s in seeds]
            for s, r in zip(seeds, rs):
                if int(np.sum(spectra[s] >= th)) != r["feature_dim"]:
                    raise SystemExit(f"seed {s}, threshold {exp(th)}: recomputed spectrum keeps "
                                     f"{int(np.sum(spectra[s] >= th))}, the model {r['feature_dim']}")
            kept = [spectra[s][spectra[s] >= th] for s in seeds]
            dropped = [spectra[s][spectra[s] < th] for s in seeds]
            small = min(k.min() for k in kept if len(k))
            large = max((d.max() for d in dropped if len(d)), default=None)
            lines.append(f"| {exp(th)} | {', '.join(str(r['feature_dim']) for r in rs)} | "
                         f"{100 * mean(rs, 'test_acc'):.2f} | {small:.3g} | "
                         f"{'none dropped' if large is None else f'{large:.3g}'} |")
            print(f"  {lines[-1]}", flush=True)
        lines += ["", "Per seed: landmarks repeating another landmark's row "
                  f"{', '.join(str(repeats[s]) for s in seeds)}; eigenvalues below 1e-12 "
                  f"{', '.join(str(int(np.sum(spectra[s] < 1e-12))) for s in seeds)}"]
        print(f"  {lines[-1]}", flush=True)
        tables.append("\n".join(lines))

    if not args.no_cli_check:
        cli_check(run, args)
    E.write_csv(NAME, [{k: v for k, v in r.items() if k != "labels"} for r in run.runs.values()])
    print()
    print("\n\n".join(tables))


if __name__ == "__main__":
    main()
