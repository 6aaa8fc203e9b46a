#!/usr/bin/env python3
"""svmtrain's estimators in scikit-learn: GridSearchCV over C on a9a, then a
Pipeline with a scaler and an RBF-kernel model, both saved for svm-predict.

    python scripts/sklearn_example.py [--data-dir data] [--out-dir .]

Needs scikit-learn (``pip install 'svmtrain[sklearn]'``).
"""
import argparse
import lzma
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=os.path.join(ROOT, "data"))
    ap.add_argument("--out-dir", default=".")
    args = ap.parse_args()
    from sklearn.datasets import load_svmlight_file
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MaxAbsScaler
    from svmtrain.sklearn import SVMClassifier

    with tempfile.TemporaryDirectory() as tmp:
        sets = []
        for name in ("a9a", "a9a.t"):
            path = os.path.join(tmp, name)
            with lzma.open(os.path.join(args.data_dir, name + ".xz")) as f, open(path, "wb") as g:
                g.write(f.read())
            sets.append(load_svmlight_file(path, n_features=123))
    (X, y), (T, t) = sets

    # 1. C by 5-fold cross-validation (LIBLINEAR's hinge-loss dual solver)
    search = GridSearchCV(SVMClassifier(solver="dcd"), {"C": [0.01, 0.1, 1.0, 10.0]}, cv=5, n_jobs=1)
    search.fit(X, y)
    print(f"best C = {search.best_params_['C']:g}: CV accuracy {100 * search.best_score_:.2f} %, "
          f"test accuracy {100 * search.score(T, t):.2f} %")
    path = os.path.join(args.out_dir, "a9a-linear.model")
    search.best_estimator_.save(path)
    print(f"saved {path} (svm-predict reads it)")

    # 2. a Pipeline: features scaled to [-1, 1] by their largest magnitude, an RBF model by sbp
    pipe = make_pipeline(MaxAbsScaler(), SVMClassifier(solver="sbp", kernel="rbf", C=100.0, gamma=0.01))
    pipe.fit(X, y)
    print(f"scaler + sbp RBF: test accuracy {100 * pipe.score(T, t):.2f} %")


if __name__ == "__main__":
    main()
