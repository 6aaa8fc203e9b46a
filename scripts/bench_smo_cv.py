#!/usr/bin/env python3
"""``svm-train -s smo -v 5`` against LIBSVM's ``svm-train -v 5`` (issues 33 and 34), whole commands.

    python scripts/bench_smo_cv.py [--runs 3] [--points 32,0.5 0.03125,8 32768,8 8,8] [--grid] [--workdir DIR]

svmguide1 (../shared/data, scaled to [-1, 1] by LIBSVM's svm-scale, as the
guide does) at grid.py points (C, gamma), and heart_scale at the defaults.
Each command runs ``--runs`` times, the programs alternating, and its best
wall time is kept: LIBSVM's ``/usr/bin/svm-train -q -v 5 -c C -g G``;
svmtrain's ``svm-train -s smo -v 5 -c C -g G`` through a warm start-up
server (in a private runtime directory, ``SVMTRAIN_SERVER_WATCH=0``) and
with ``SVMTRAIN_SERVER=0``; and, with SVMTRAIN_SERVER=0 too, the path -v
took before the folds shared one kernel matrix (each fold trained by
``train()`` and predicted by its model). "work" is a run's wall time minus
that of a tiny run of the same program (10 rows, ``-v 2``); the issue's
bar: svmtrain's work summed over the svmguide1 points at most LIBSVM's
wall summed. The folds differ from LIBSVM's (svmtrain's own stratified
ones), so the rates differ a little. Load averages before and after.

``--grid``: the 110 points of grid.py's default grid (log2 C = -5..15 step
2, log2 gamma = 3..-15 step -2) on the training three quarters of
svmguide1 (``awk 'NR%4!=0'``, scaled), as easy.py's grid.py runs them, one
``svm-train -v 5`` process a point: LIBSVM's and svmtrain's through the
server (one fold at a time, and two with ``--threads 2``), alternating point by point;
reported: the wall seconds summed, the points where svmtrain's is the
slower, and the best rate of each.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_server as S  # noqa: E402

# the fold-by-fold path (before the solver's CROSS_VALIDATION hook), in process
BEFORE = ("import sys; import svmtrain.training.train as T; T._solver_folds = lambda *a: None; "
          "sys.argv[0] = 'svm-train'; from svmtrain.cli.train import main; main()")


def rate(text):
    m = re.search(r"Cross Validation Accuracy = ([0-9.]+)%", text)
    return m.group(1) if m else "?"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--points", nargs="*", default=["32,0.5", "0.03125,8", "32768,8", "8,8"])
    ap.add_argument("--no-before", action="store_true", help="skip the fold-by-fold path")
    ap.add_argument("--grid", action="store_true", help="grid.py's 110 points, LIBSVM against the server")
    ap.add_argument("--workdir", default=None)
    a = ap.parse_args(argv)
    guide_xz = S.SHARED / "svmguide1.xz"
    if not guide_xz.exists() or not os.path.exists(S.LIBSVM["svm-train"]):
        sys.exit(f"needs {guide_xz} and /usr/bin/svm-train (apt-get install libsvm-tools)")
    work = Path(a.workdir or tempfile.mkdtemp(prefix="svmtrain-bench-smo-cv-"))
    work.mkdir(parents=True, exist_ok=True)
    raw = S.plain(guide_xz, work)
    guide = work / "svmguide1.scale"
    with open(guide, "wb") as f:
        subprocess.run([S.LIBSVM["svm-scale"], "-l", "-1", "-u", "1", str(raw)], stdout=f, check=True)
    heart = S.plain(S.ROOT / "data" / "heart_scale.xz", work)
    tiny = work / "tiny"
    tiny.write_text("".join(heart.read_text().splitlines(keepends=True)[:10]))
    runtime = Path(tempfile.mkdtemp(prefix="svmtrain-bench-run-"))
    runtime.chmod(0o700)
    s = S.Servers(runtime, watch=False)
    load0 = os.getloadavg()
    programs = {"LIBSVM": ([S.LIBSVM["svm-train"], "-q"], None),
                "server": ([S.TRAIN, "-s", "smo"], s.env),
                "SVMTRAIN_SERVER=0": ([S.TRAIN, "-s", "smo"], s.off)}
    if not a.no_before:
        programs["before, SVMTRAIN_SERVER=0"] = ([sys.executable, "-c", BEFORE, "-s", "smo"], s.off)
    cases = [(f"svmguide1 C={c} g={g}", ["-v", "5", "-c", c, "-g", g, guide]) for c, g in
             (p.split(",") for p in a.points)]
    cases.append(("heart_scale (defaults)", ["-v", "5", heart]))
    cases.append(("tiny (10 rows, -v 2)", ["-v", "2", tiny]))
    best = {}
    if a.grid:
        return grid(s, raw, work, runtime)
    try:
        print(s.start_warm())
        for prog, (cmd, env) in programs.items():        # numba's kernels compiled, the server warm
            S.timed(cmd + ["-v", "5", heart], env)
        for name, args in cases:
            for _ in range(a.runs):
                for prog, (cmd, env) in programs.items():
                    dt, p = S.timed(cmd + args, env, text=True)
                    old = best.get((name, prog))
                    if old is None or dt < old[0]:
                        best[(name, prog)] = (dt, rate(p.stdout))
    finally:
        s.stop()
        shutil.rmtree(runtime, ignore_errors=True)
    load1 = os.getloadavg()
    names = list(programs)
    print(f"{os.cpu_count()} cores; load average before {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, "
          f"after {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}; best of {a.runs} wall seconds (CV rate %)")
    print("| case | " + " | ".join(names) + " | server / LIBSVM |")
    print("|---" * (len(names) + 2) + "|")
    for name, _ in cases:
        cells = [f"{best[(name, p)][0]:.3f} ({best[(name, p)][1]})" for p in names]
        ratio = best[(name, "server")][0] / best[(name, "LIBSVM")][0]
        print(f"| {name} | " + " | ".join(cells) + f" | {ratio:.2f} |")
    guide_cases = [n for n, _ in cases if n.startswith("svmguide1")]
    tiny_name = cases[-1][0]
    for p in names:
        total = sum(best[(n, p)][0] for n in guide_cases)
        work_s = sum(best[(n, p)][0] - best[(tiny_name, p)][0] for n in guide_cases)
        print(f"svmguide1 points summed, {p}: wall {total:.3f} s, work (minus the tiny run) {work_s:.3f} s")
    return 0


def grid(s, raw, work, runtime):
    """--grid (see the module doc)."""
    lines = raw.read_text().splitlines(keepends=True)
    train = work / "svmguide1.tr"
    train.write_text("".join(line for i, line in enumerate(lines, 1) if i % 4 != 0))
    scaled = work / "svmguide1.tr.scale"
    with open(scaled, "wb") as f:
        subprocess.run([S.LIBSVM["svm-scale"], str(train)], stdout=f, check=True)
    programs = {"LIBSVM": ([S.LIBSVM["svm-train"], "-q"], None),
                "server": ([S.TRAIN, "-s", "smo"], s.env),
                "server --threads 2": ([S.TRAIN, "-s", "smo", "--threads", "2"], s.env)}
    total = {p: 0.0 for p in programs}
    slower = {p: 0 for p in programs}
    top = {p: (-1.0, None) for p in programs}
    load0 = os.getloadavg()
    try:
        print(s.start_warm())
        for cmd, env in programs.values():
            S.timed(cmd + ["-v", "5", scaled], env)
        for lc in range(-5, 16, 2):
            for lg in range(3, -16, -2):
                args = ["-v", "5", "-c", repr(2.0 ** lc), "-g", repr(2.0 ** lg), scaled]
                walls = {}
                for p, (cmd, env) in programs.items():
                    dt, out = S.timed(cmd + args, env, text=True)
                    walls[p] = dt
                    total[p] += dt
                    r = float(rate(out.stdout))
                    if r > top[p][0]:
                        top[p] = (r, (lc, lg))
                for p in programs:
                    slower[p] += walls[p] > walls["LIBSVM"]
    finally:
        s.stop()
        shutil.rmtree(runtime, ignore_errors=True)
    load1 = os.getloadavg()
    print(f"grid.py's 110 points on svmguide1's training quarters, one process a point; {os.cpu_count()} cores; "
          f"load average before {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, after {load1[0]:.2f} {load1[1]:.2f} "
          f"{load1[2]:.2f}")
    print("| program | wall s summed | ratio to LIBSVM | points slower than LIBSVM | best rate (log2 c, log2 g) |")
    print("|---|---|---|---|---|")
    for p in programs:
        print(f"| {p} | {total[p]:.2f} | {total[p] / total['LIBSVM']:.2f} | {slower[p]} | {top[p][0]}% {top[p][1]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
