#!/usr/bin/env python3
"""Train scikit-learn's linear SVM peers on a LIBSVM file, as one process (so bench.py can
time it and take its peak RSS like any other program): reading with load_svmlight_file,
fitting, and saving w, b and the label order to an .npz file.

    python scripts/sklearn_fit.py sgd TRAIN OUT.npz --lam 1e-4 [--seed 1]
    python scripts/sklearn_fit.py linearsvc TRAIN OUT.npz --C 1

sgd: SGDClassifier(loss="hinge", alpha=lam, fit_intercept=False), sklearn's defaults otherwise
(max_iter 1000, tol 1e-3); linearsvc: LinearSVC(loss="hinge", C=C, dual=True,
fit_intercept=False), both minimising lambda/2 |w|^2 + mean hinge with lambda = 1/(n C).
"""
import argparse

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=["sgd", "linearsvc"])
    ap.add_argument("train")
    ap.add_argument("out")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--lam", type=float, default=None)
    ap.add_argument("--n-features", type=int, default=None)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    from sklearn.datasets import load_svmlight_file
    X, y = load_svmlight_file(a.train, n_features=a.n_features)
    if X.nnz < 2 ** 31:   # recent scipy returns int64 indices, which sklearn's SGD and liblinear refuse
        X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    if a.kind == "sgd":
        from sklearn.linear_model import SGDClassifier
        lam = a.lam if a.lam is not None else 1.0 / (X.shape[0] * a.C)
        clf = SGDClassifier(loss="hinge", alpha=lam, fit_intercept=False, random_state=a.seed)
    else:
        from sklearn.svm import LinearSVC
        clf = LinearSVC(loss="hinge", C=a.C, dual=True, fit_intercept=False, random_state=a.seed)
    clf.fit(X, y)
    # decision_function > 0 predicts classes_[1]
    np.savez(a.out, w=np.asarray(clf.coef_[0], np.float64), b=float(np.atleast_1d(clf.intercept_)[0]),
             labels=np.array([clf.classes_[1], clf.classes_[0]], np.float64), n_iter=int(np.max(clf.n_iter_)))


if __name__ == "__main__":
    main()
