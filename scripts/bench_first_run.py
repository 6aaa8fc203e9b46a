"""First runs after installation: numba compile time per solver, with and without --precompile.

The package is copied to a temporary directory, so numba's on-disk cache
(kept beside the sources) starts empty; each figure is the wall time of
``svm-train -q`` on heart_scale run with this interpreter from that copy.

* without precompile: for each solver, the cache emptied, then its first
  run (everything it uses compiles) and its second run;
* with precompile: the cache emptied once, ``svm-train --precompile`` timed
  (the set-up step of ``make install``), then each solver's first and second
  run -- which should be within 0.3 s of each other (nothing compiles).

``--baseline REF`` repeats the first part for a git revision (before/after).
``--repeat K`` takes the median of K first runs (and K second runs) of each
solver, the baseline's and ours alternating, since one run varies by 10-20 %
on a small shared machine; ``--solvers a,b`` keeps only those rows (names as
printed, e.g. ``pegasos,kernel pegasos``); ``--no-precompile`` skips the
second part.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOLVERS = [("dcd", []), ("pegasos", ["-s", "pegasos"]), ("ocas", ["-s", "ocas"]), ("sbp", ["-s", "sbp"]),
           ("asset (nystrom)", ["-s", "asset"]), ("asset (fourier)", ["-s", "asset", "--approx", "fourier"]),
           ("kernel pegasos", ["-s", "pegasos", "-t", "2"])]
TRAIN = "import sys; from svmtrain.cli.train import main; sys.argv[0] = 'svm-train'; main()"


def copy_package(src_root, dest):
    """A copy of ``src_root``'s svmtrain package without any numba cache files."""
    shutil.copytree(os.path.join(src_root, "svmtrain"), os.path.join(dest, "svmtrain"),
                    ignore=shutil.ignore_patterns("*.nbi", "*.nbc", "__pycache__"))
    return dest


def clear_cache(tree):
    for d, _, files in os.walk(os.path.join(tree, "svmtrain")):
        for f in files:
            if f.endswith((".nbi", ".nbc")):
                os.unlink(os.path.join(d, f))


def run(tree, args, data, model):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}   # the cache beside the copy
    env["PYTHONPATH"] = tree
    t = time.perf_counter()
    # from inside the tree: "python -c" puts the working directory first on sys.path
    subprocess.run([sys.executable, "-c", TRAIN, *args, data, model], check=True, env=env, cwd=tree,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def without_precompile(trees, data, model, solvers, repeat=1):
    """{tree: [(solver, median first run, median second run)]}: each solver's
    first run from an empty cache and its second run, ``repeat`` times, the
    trees taking turns."""
    times = {(tree, name): ([], []) for tree in trees for name, _ in solvers}
    for _ in range(repeat):
        for name, args in solvers:
            for tree in trees:
                clear_cache(tree)
                first, second = times[tree, name]
                first.append(run(tree, ["-q"] + args, data, model))
                second.append(run(tree, ["-q"] + args, data, model))
    return {tree: [(name, statistics.median(times[tree, name][0]), statistics.median(times[tree, name][1]))
                   for name, _ in solvers] for tree in trees}


def with_precompile(tree, data, model, solvers):
    clear_cache(tree)
    setup = run(tree, ["--precompile"], data, model)
    rows = [(name, run(tree, ["-q"] + args, data, model), run(tree, ["-q"] + args, data, model))
            for name, args in solvers]
    return setup, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", metavar="REF", help="also time a git revision without precompile")
    ap.add_argument("--repeat", type=int, default=1, help="median of this many first (and second) runs")
    ap.add_argument("--solvers", help="comma-separated solver names to time (default: all)")
    ap.add_argument("--no-precompile", action="store_true", help="skip the runs after --precompile")
    args = ap.parse_args()
    solvers = SOLVERS
    if args.solvers:
        wanted = [s.strip() for s in args.solvers.split(",")]
        unknown = set(wanted) - {name for name, _ in SOLVERS}
        if unknown:
            ap.error(f"unknown solver names {sorted(unknown)}; known: {[name for name, _ in SOLVERS]}")
        solvers = [(name, a) for name, a in SOLVERS if name in wanted]
    data = os.path.join(ROOT, "data", "heart_scale.xz")
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "m")
        here = copy_package(ROOT, os.path.join(tmp, "here"))
        base = None
        if args.baseline:
            wt = os.path.join(tmp, "baseline-worktree")
            subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", "-q", wt, args.baseline], check=True)
            try:
                base = copy_package(wt, os.path.join(tmp, "baseline"))
            finally:
                subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", wt], check=False)
        cold = without_precompile([here] + ([base] if base else []), data, model, solvers, args.repeat)
        base_rows = cold.get(base) if base else None
        warm = None if args.no_precompile else with_precompile(here, data, model, solvers)
    print(f"heart_scale, wall seconds; {os.cpu_count()} cores" +
          (f"; medians of {args.repeat} runs" if args.repeat > 1 else ""))
    if warm:
        print(f"svm-train --precompile (set-up, cache empty): {warm[0]:.1f} s")
    print()
    head = "| solver | " + (f"first run at {args.baseline} | " if base_rows else "") + \
        "first run (no precompile) | second run |" + \
        (" after --precompile: first run | second run | difference |" if warm else "")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for k, (name, first, second) in enumerate(cold[here]):
        before = f"{base_rows[k][1]:.2f} | " if base_rows else ""
        after = ""
        if warm:
            _, pf, ps = warm[1][k]
            after = f" {pf:.2f} | {ps:.2f} | {pf - ps:+.2f} |"
        print(f"| {name} | {before}{first:.2f} | {second:.2f} |{after}")


if __name__ == "__main__":
    main()
