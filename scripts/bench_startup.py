"""Start-up: wall time of svm-train and svm-predict on the small heart_scale file.

Each command runs once untimed (numba's on-disk cache is then warm), then
``--runs`` times; the table gives the median and the fastest run, beside
LIBLINEAR's ``liblinear-train`` / ``liblinear-predict`` and LIBSVM's
``/usr/bin/svm-train`` / ``/usr/bin/svm-predict`` when they are installed.
``--baseline REF`` times a git revision of this checkout too (run from a
temporary worktree with the same interpreter), for a before/after pair.
Target (issue 15): a median of at most 0.45 s for both commands.
"""
import argparse
import lzma
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# what the console scripts run: console_main where the revision has it (a fast exit), else main
TRAIN = ("import sys; import svmtrain.cli.train as m; sys.argv[0] = 'svm-train'; "
         "getattr(m, 'console_main', m.main)()")
PREDICT = ("import sys; import svmtrain.cli.predict as m; sys.argv[0] = 'svm-predict'; "
           "getattr(m, 'console_main', m.main)()")


def timed(cmd, env=None, runs=10, cwd=None):
    """(median, best) wall seconds of ``runs`` runs after one untimed run."""
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        times.append(time.perf_counter() - t)
    return statistics.median(times), min(times)


def svmtrain_rows(label, repo, data, tmp, runs):
    """Rows for svm-train / svm-predict run from checkout ``repo`` with this interpreter."""
    env = dict(os.environ, PYTHONPATH=repo)
    model, out = os.path.join(tmp, f"{label}.model"), os.path.join(tmp, f"{label}.out")
    # run from inside ``repo``: "python -c" puts the working directory first on sys.path
    rows = [(f"svm-train ({label})", timed([sys.executable, "-c", TRAIN, "-q", data, model], env, runs, repo))]
    rows.append((f"svm-predict ({label})",
                 timed([sys.executable, "-c", PREDICT, "-q", data, model, out], env, runs, repo)))
    return rows


def peer_rows(data, tmp, runs):
    rows = []
    peers = [("liblinear-train", "liblinear-predict", "LIBLINEAR"),
             ("/usr/bin/svm-train", "/usr/bin/svm-predict", "LIBSVM")]
    for train, predict, name in peers:
        if shutil.which(train) and shutil.which(predict):
            model, out = os.path.join(tmp, f"{name}.model"), os.path.join(tmp, f"{name}.out")
            rows.append((f"{train} ({name})", timed([train, "-q", data, model], runs=runs)))
            rows.append((f"{predict} ({name})", timed([predict, "-q", data, model, out], runs=runs)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--baseline", metavar="REF", help="also time this git revision (e.g. a commit before a change)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "heart_scale")     # plain text, so the peers read the same file
        with open(data, "wb") as f:
            f.write(lzma.decompress(open(os.path.join(ROOT, "data", "heart_scale.xz"), "rb").read()))
        rows = []
        if args.baseline:
            base = os.path.join(tmp, "baseline")
            subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", "-q", base, args.baseline], check=True)
            try:
                rows += svmtrain_rows(f"at {args.baseline}", base, data, tmp, args.runs)
            finally:
                subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", base], check=False)
        rows += svmtrain_rows("this checkout", ROOT, data, tmp, args.runs)
        rows += peer_rows(data, tmp, args.runs)
    print(f"heart_scale (270 rows), {args.runs} runs after one untimed run; wall seconds")
    print(f"| command | median | fastest |\n|---|---|---|")
    for name, (med, best) in rows:
        print(f"| {name} | {med:.3f} | {best:.3f} |")


if __name__ == "__main__":
    main()
