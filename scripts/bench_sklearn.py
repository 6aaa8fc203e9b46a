#!/usr/bin/env python3
"""svmtrain.sklearn's estimators against scikit-learn's own, in one run, on a9a.

    python scripts/bench_sklearn.py [--data-dir data] [--repeat 3] [--no-svc]

a9a and a9a.t are read with ``sklearn.datasets.load_svmlight_file`` (CSR,
123 features), then each pair is fitted on the same arrays, alternating,
``--repeat`` times (median fit seconds; numba compiled by an untimed fit
first):

* ``SVMClassifier(solver="dcd")`` against ``LinearSVC(loss="hinge",
  dual=True)``, C = 1, the same tolerance (``--tol``, LIBLINEAR's eps for
  both) and an intercept as a constant feature 1 (LinearSVC's default);
* ``SVMClassifier(solver="sbp", kernel="rbf")`` against ``SVC(kernel="rbf")``,
  C = 100, gamma = 0.01 (once each: SVC takes tens of seconds).

Reported: fit seconds, their ratio, and the test accuracy on a9a.t.
"""
import argparse
import lzma
import os
import statistics
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def load(data_dir):
    from sklearn.datasets import load_svmlight_file
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("a9a", "a9a.t"):
            path = os.path.join(tmp, name)
            with lzma.open(os.path.join(data_dir, name + ".xz")) as f, open(path, "wb") as g:
                g.write(f.read())
            X, y = load_svmlight_file(path, n_features=123)
            X.indices = X.indices.astype(np.int32)      # scikit-learn's SVMs take 32-bit indices only
            X.indptr = X.indptr.astype(np.int32)
            out.extend((X, y))
    return out


def timed_fit(make, X, y):
    est = make()
    t = time.perf_counter()
    est.fit(X, y)
    return time.perf_counter() - t, est


def compare(name, ours, theirs, X, y, T, t, repeat):
    timed_fit(ours, X[:2000], y[:2000])                  # numba's compile or cache load, untimed
    times = {"svmtrain": [], "scikit-learn": []}
    fitted = {}
    for _ in range(repeat):
        for label, make in (("svmtrain", ours), ("scikit-learn", theirs)):
            secs, est = timed_fit(make, X, y)
            times[label].append(secs)
            fitted[label] = est
    a, b = statistics.median(times["svmtrain"]), statistics.median(times["scikit-learn"])
    acc = {k: 100.0 * float(np.mean(v.predict(T) == t)) for k, v in fitted.items()}
    print(f"{name}: svmtrain {a:.3f} s ({acc['svmtrain']:.2f} %), scikit-learn {b:.3f} s "
          f"({acc['scikit-learn']:.2f} %); ratio {a / b:.3f}; runs: "
          f"{', '.join(f'{x:.3f}' for x in times['svmtrain'])} / {', '.join(f'{x:.3f}' for x in times['scikit-learn'])}",
          flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=os.path.join(ROOT, "data"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tol", type=float, default=0.1)
    ap.add_argument("--no-svc", action="store_true", help="skip the RBF pair (SVC takes tens of seconds)")
    args = ap.parse_args()
    from sklearn.svm import SVC, LinearSVC
    from svmtrain.sklearn import SVMClassifier
    X, y, T, t = load(args.data_dir)
    print(f"a9a: {X.shape[0]} rows, a9a.t: {T.shape[0]} rows, {X.shape[1]} features; load {os.getloadavg()[0]:.2f}")
    compare(f"linear, C = 1, tol = {args.tol:g}", lambda: SVMClassifier(solver="dcd", C=1.0, tol=args.tol),
            lambda: LinearSVC(loss="hinge", dual=True, C=1.0, tol=args.tol, max_iter=1000), X, y, T, t, args.repeat)
    if not args.no_svc:
        compare("RBF, C = 100, gamma = 0.01",
                lambda: SVMClassifier(solver="sbp", kernel="rbf", C=100.0, gamma=0.01),
                lambda: SVC(kernel="rbf", C=100.0, gamma=0.01), X, y, T, t, 1)


if __name__ == "__main__":
    main()
