#!/usr/bin/env python3
"""scikit-learn-intelex's SVC (oneDAL) as a whole program, for scripts/bench_kernel.py.

    python scripts/sklearnex_svc.py TRAIN TEST C GAMMA

Reads both LIBSVM files with scikit-learn's reader, fits sklearnex.svm.SVC
(RBF, tol 1e-3, cache 200 MB, as LIBSVM's defaults), predicts TEST and prints
LIBSVM-style lines: ``nSV = N``, ``train = SECONDS`` (the fit alone) and
``Accuracy = P% (k/m)``. Needs the optional package scikit-learn-intelex.
"""
import sys
import time

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearnex.svm import SVC


def main():
    train, test, C, gamma = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    X, y = load_svmlight_file(train)
    Xt, yt = load_svmlight_file(test, n_features=X.shape[1])
    t0 = time.perf_counter()
    model = SVC(C=C, gamma=gamma, tol=1e-3, cache_size=200).fit(X, y)
    print(f"train = {time.perf_counter() - t0:.3f}")
    print(f"nSV = {int(model.n_support_.sum())}")
    right = int(np.sum(model.predict(Xt) == yt))
    print(f"Accuracy = {100.0 * right / len(yt):g}% ({right}/{len(yt)})")


if __name__ == "__main__":
    main()
