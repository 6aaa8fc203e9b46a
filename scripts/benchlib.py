"""What the benchmarks and experiments in scripts/ share: data files, timed commands,
one objective function for every kind of model, tables.

Every number that compares programs comes from the same run on the same
files: the machine may be shared, so only ratios measured together mean much.
"""
import csv
import lzma
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
BIN = os.path.dirname(sys.executable)            # the venv's console scripts
OURS_TRAIN = os.path.join(BIN, "svm-train")
OURS_PREDICT = os.path.join(BIN, "svm-predict")
LIBSVM_TRAIN = "/usr/bin/svm-train"             # LIBSVM's, same name as ours: always by full path
LIBSVM_PREDICT = "/usr/bin/svm-predict"
LIBLINEAR_TRAIN = "/usr/bin/liblinear-train"
SVMOCAS = "/usr/bin/svmocas"
RESULTS = os.path.join(ROOT, "results")
SHARED_DATA = os.environ.get("SVMTRAIN_SHARED_DATA") or os.path.join(os.path.dirname(ROOT), "shared", "data")
TEST_BLOCK = 10 ** 6     # first block of a synthetic test file (other rows, same hidden model)

# Whole processes of svm-train/svm-predict are timed and measured here: without the start-up
# server (README, "The start-up server"), whose runs happen in its children, not in the
# measured process (scripts/bench_server.py measures the server).
os.environ.setdefault("SVMTRAIN_SERVER", "0")


def load_average():
    """The 1, 5 and 15 minute load averages as text (the machine may be shared)."""
    try:
        return "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        return "?"


def data_file(name):
    """A data file by name: bundled under data/, else ../shared/data; None when neither has it."""
    for folder in (os.path.join(ROOT, "data"), SHARED_DATA):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            return path
    return None


def plain(src, workdir, name=None):
    """``src`` decompressed (xz) or copied into ``workdir`` once: peers read only plain text."""
    os.makedirs(workdir, exist_ok=True)
    name = name or os.path.basename(src).removesuffix(".xz")
    dst = os.path.join(workdir, name)
    if not os.path.exists(dst):
        opener = lzma.open if src.endswith(".xz") else open
        with opener(src, "rb") as fin, open(dst + ".tmp", "wb") as fout:
            shutil.copyfileobj(fin, fout)
        os.replace(dst + ".tmp", dst)
    return dst


def split(src, workdir, name, test_fraction=0.2, seed=1):
    """(train, test) paths: the rows of ``src`` split at random (seeded), labels written as +1/-1
    (the first label of the file is +1), so that every peer reads them."""
    train, test = os.path.join(workdir, name + ".train"), os.path.join(workdir, name + ".test")
    if os.path.exists(train) and os.path.exists(test):
        return train, test
    lines = [ln.split(None, 1) for ln in open(plain(src, workdir), encoding="ascii").read().splitlines()
             if ln.strip() and not ln.startswith("#")]
    first = float(lines[0][0])
    text = [("+1" if float(lab) == first else "-1") + " " + (rest[0] if rest else "") for lab, *rest in lines]
    rng = np.random.default_rng(seed)
    is_test = rng.permutation(len(text)) < int(round(test_fraction * len(text)))
    for path, keep in ((train, ~is_test), (test, is_test)):
        with open(path, "w") as f:
            f.write("\n".join(t for t, k in zip(text, keep) if k) + "\n")
    return train, test


def synthetic(workdir, rows, features, nnz, test_rows, seed=1):
    """(train, test) synthetic files of scripts/gen_synthetic.py (same hidden model), made once."""
    from bench_parse import cached_file
    train = cached_file(workdir, rows, features, nnz, seed)
    test = cached_file(workdir, test_rows, features, nnz, seed, first_block=TEST_BLOCK)
    return str(train), str(test)


def run(cmd):
    """(wall seconds, stdout and stderr) of a command; raises RuntimeError when it fails."""
    t = time.perf_counter()
    proc = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - t
    if proc.returncode:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stdout[-2000:]}")
    return wall, proc.stdout


def timed(cmd):
    """(wall seconds, peak RSS in MB, output) of cmd; the RSS from GNU time (/usr/bin/time -f %M),
    NaN where it is not installed."""
    if not os.path.exists("/usr/bin/time"):
        wall, text = run(cmd)
        return wall, float("nan"), text
    with tempfile.NamedTemporaryFile(suffix=".rss") as rss:
        wall, text = run(["/usr/bin/time", "-f", "%M", "-o", rss.name] + list(cmd))
        return wall, int(open(rss.name).read().split()[-1]) / 1024.0, text


def printed_accuracy(text):
    """The fraction in an 'Accuracy = X% (a/b)' line (svm-predict, LIBSVM, LIBLINEAR); NaN without one."""
    m = re.search(r"Accuracy = [0-9.]+% \((\d+)/(\d+)\)", text)
    return int(m.group(1)) / int(m.group(2)) if m else float("nan")


def binary_y(model, labels):
    """+1 where a label is the model's labels[0] (the class a positive score predicts), else -1."""
    return np.where(labels == model.labels[0], 1.0, -1.0)


def objective(model, X, lam):
    """lambda/2 |w|^2 + mean hinge(y_i f(x_i)) of a binary model on the rows of X (a Chunk).

    The same function for every model, so values are comparable: f from the
    model's decision function (an unregularised b included); |w|^2 from the
    weights (LinearModel: every weight, a -B weight included), the kernel
    expansion (KernelModel: coef' K coef, from the decision values of the
    support vectors) or the random features (FourierModel: |W|^2, the norm in
    the approximate feature space).
    """
    scores = model.decision_function(X)[:, 0]
    kind = type(model).__name__
    if kind == "KernelModel":
        a = model.coef[:, 0]
        norm2 = float(a @ (model.decision_function(model.SV)[:, 0] - model.b[0]))
    else:
        norm2 = float(model.W[:, 0] @ model.W[:, 0])
    hinge = np.maximum(0.0, 1.0 - binary_y(model, X.labels) * scores)
    return 0.5 * lam * norm2 + float(hinge.mean())


def accuracy(model, T):
    """Fraction of the rows of T (a Chunk) whose label the model predicts."""
    return float(np.mean(model.predict(T) == T.labels))


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return "" if v != v else f"{v:.4g}"
    return str(v)


def write_table(rows, cols, base):
    """Write rows (dicts) as BASE.csv and a Markdown table BASE.md; return the Markdown."""
    os.makedirs(os.path.dirname(os.path.abspath(base)), exist_ok=True)
    with open(base + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(fmt(r.get(k)) for k in cols) + " |" for r in rows]
    md = "\n".join(lines) + "\n"
    with open(base + ".md", "w") as f:
        f.write(md)
    return md
