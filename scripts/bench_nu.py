#!/usr/bin/env python3
"""nu-SVC and nu-SVR (``-s smo --nu``) against LIBSVM's svm-train -s 1 / -s 4, same run.

    python scripts/bench_nu.py [--repeats 3] [--workdir DIR] [--out results/bench_nu]

Lines (LIBSVM's own spelling, which svm-train translates to ``-s smo --nu``):

* nu-SVC on svmguide1 scaled to [-1, 1] as LIBSVM's guide does (svm-scale
  -l -1 -u 1 on the training file, its ranges applied to svmguide1.t when
  ../shared/data has it; otherwise the training rows are predicted),
  ``-s 1 -n 0.5 -g 0.5``;
* nu-SVR on concrete_scale (a seeded 80/20 split of its rows, both MSEs
  reported), ``-s 4 -n 0.5 -t 2`` (LIBSVM's defaults) and
  ``-s 4 -n 0.2 -c 10 -g 0.5``.

Each line is trained by svm-train (``--model-format libsvm``, so both model
files give total_sv) and by /usr/bin/svm-train, alternating, ``--repeats``
times after one untimed run of ours (numba compiled); wall seconds are
medians of whole processes (ours without the start-up server, so with
Python's and numba's start-up, about 1.5 s here), and "ours train s" the
median of svm-train's own "Training time" (the solver in the process,
numba's cache loaded). Both models predict with their own
svm-predict. Reported: walls and their ratio, support vectors of both,
the agreement of the predicted labels (classification) or both MSEs
(regression), and the load average.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as L  # noqa: E402

LIBSVM_SCALE = "/usr/bin/svm-scale"
# (name, data, LIBSVM's options)
LINES = [
    ("nu-SVC svmguide1 (-s 1 -n 0.5 -g 0.5)", "svmguide1", "-s 1 -n 0.5 -g 0.5"),
    ("nu-SVR concrete (-s 4 -n 0.5 -t 2)", "concrete", "-s 4 -n 0.5 -t 2"),
    ("nu-SVR concrete (-s 4 -n 0.2 -c 10 -g 0.5)", "concrete", "-s 4 -n 0.2 -c 10 -g 0.5"),
]


def svmguide1(workdir):
    """(train, test, test name): svmguide1 scaled as LIBSVM's guide; svmguide1.t with the same ranges if present."""
    src = L.data_file("svmguide1.xz")
    if src is None:
        raise SystemExit("svmguide1.xz not found under data/ or ../shared/data")
    raw = L.plain(src, workdir)
    rng = os.path.join(workdir, "svmguide1.range")
    train = os.path.join(workdir, "svmguide1.scale")
    with open(train, "w") as f:
        subprocess.run([LIBSVM_SCALE, "-l", "-1", "-u", "1", "-s", rng, raw], stdout=f, check=True)
    t_src = L.data_file("svmguide1.t.xz") or L.data_file("svmguide1.t")
    if t_src is None:
        return train, train, "training rows"
    test = os.path.join(workdir, "svmguide1.t.scale")
    with open(test, "w") as f:
        subprocess.run([LIBSVM_SCALE, "-r", rng, L.plain(t_src, workdir)], stdout=f, check=True)
    return train, test, "svmguide1.t"


def concrete(workdir, seed=1):
    """(train, test, test name): a seeded 80/20 split of concrete_scale's rows."""
    src = L.data_file("concrete_scale.xz")
    if src is None:
        raise SystemExit("concrete_scale.xz not found under data/ or ../shared/data")
    lines = open(L.plain(src, workdir)).read().splitlines()
    is_test = np.random.default_rng(seed).permutation(len(lines)) < len(lines) // 5
    paths = [os.path.join(workdir, f"concrete.{k}") for k in ("train", "test")]
    for path, keep in zip(paths, (~is_test, is_test)):
        with open(path, "w") as f:
            f.write("\n".join(t for t, k in zip(lines, keep) if k) + "\n")
    return paths[0], paths[1], "20% of the rows"


def total_sv(model):
    for line in open(model):
        if line.startswith("total_sv"):
            return int(line.split()[1])
    return None


def predictions(predict, test, model, out):
    L.run([predict, test, model, out])
    return np.loadtxt(out)


def bench_line(name, data, options, files, workdir, repeats):
    train, test, test_name = files[data]
    opts = options.split()
    ours_model, theirs_model = os.path.join(workdir, "ours.model"), os.path.join(workdir, "theirs.model")
    ours_cmd = [L.OURS_TRAIN, *opts, "--model-format", "libsvm", train, ours_model]
    theirs_cmd = [L.LIBSVM_TRAIN, *opts, "-q", train, theirs_model]
    L.run(ours_cmd)                                         # numba's first compile, untimed
    walls = {"ours": [], "theirs": [], "solver": []}
    for _ in range(repeats):
        wall, text = L.run(ours_cmd)
        walls["ours"].append(wall)
        walls["solver"].append(float(re.search(r"Training time = ([0-9.]+) s", text).group(1)))
        walls["theirs"].append(L.run(theirs_cmd)[0])
    ours_p = predictions(L.OURS_PREDICT, test, ours_model, os.path.join(workdir, "ours.out"))
    theirs_p = predictions(L.LIBSVM_PREDICT, test, theirs_model, os.path.join(workdir, "theirs.out"))
    row = {"line": name, "test": test_name,
           "ours s": statistics.median(walls["ours"]), "LIBSVM s": statistics.median(walls["theirs"]),
           "ours train s": statistics.median(walls["solver"]),
           "nSV ours": total_sv(ours_model), "nSV LIBSVM": total_sv(theirs_model)}
    row["wall ratio"] = row["ours s"] / row["LIBSVM s"]
    row["nSV diff %"] = 100.0 * abs(row["nSV ours"] - row["nSV LIBSVM"]) / row["nSV LIBSVM"]
    if data == "concrete":
        y_test = np.loadtxt(test, usecols=0)
        row["MSE ours"] = float(np.mean((ours_p - y_test) ** 2))
        row["MSE LIBSVM"] = float(np.mean((theirs_p - y_test) ** 2))
        row["MSE diff %"] = 100.0 * abs(row["MSE ours"] - row["MSE LIBSVM"]) / row["MSE LIBSVM"]
        y_train = np.loadtxt(train, usecols=0)
        tr_o = predictions(L.OURS_PREDICT, train, ours_model, os.path.join(workdir, "ours.tr"))
        tr_t = predictions(L.LIBSVM_PREDICT, train, theirs_model, os.path.join(workdir, "theirs.tr"))
        row["train MSE ours"] = float(np.mean((tr_o - y_train) ** 2))
        row["train MSE LIBSVM"] = float(np.mean((tr_t - y_train) ** 2))
    else:
        row["agree %"] = 100.0 * float(np.mean(ours_p == theirs_p))
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--out", default=os.path.join(L.RESULTS, "bench_nu"))
    a = ap.parse_args(argv)
    workdir = a.workdir or tempfile.mkdtemp(prefix="bench_nu.")
    files = {"svmguide1": svmguide1(workdir), "concrete": concrete(workdir)}
    rows = []
    for name, data, options in LINES:
        rows.append(bench_line(name, data, options, files, workdir, a.repeats))
        print(rows[-1], flush=True)
    cols = ["line", "test", "ours s", "LIBSVM s", "wall ratio", "ours train s", "nSV ours", "nSV LIBSVM",
            "nSV diff %", "agree %", "MSE ours", "MSE LIBSVM", "MSE diff %", "train MSE ours", "train MSE LIBSVM"]
    print(L.write_table(rows, cols, a.out))
    print(f"load average: {L.load_average()}")


if __name__ == "__main__":
    main()
