#!/usr/bin/env python3
"""--loss roc-area (SVMperf's -l 10) against the hinge SVM at its best C, by test AUC.

    python scripts/bench_roc_area.py [--train a9a.xz] [--test a9a.t.xz]

The hinge SVM (-s ocas) is trained at C = 2^-7 .. 2^3 and its best C is
chosen by svm-train -C's 5-fold cross-validation accuracy (LIBLINEAR's
criterion); the ROC-area model at the same C values. Reported per C: the
test AUC of both (pairs counted, ties one half) and the training seconds,
then the hinge's AUC at its CV-best C against the ROC-area model's at the
same C and at its own best. SVMperf is not packaged here, so no peer runs.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as L  # noqa: E402

from svmtrain.io.reader import read_libsvm  # noqa: E402
from svmtrain.params import TrainParams  # noqa: E402
from svmtrain.selection.param_search import search_c  # noqa: E402
from svmtrain.training.train import train  # noqa: E402


def auc(model, data):
    """Test AUC of ``model``'s scores for label +1 (rank statistic; ties one half)."""
    from scipy.stats import rankdata
    s = model.decision_function(data)[:, 0]
    s = s if model.labels[0] == 1.0 else -s
    pos = data.labels == 1.0
    r = rankdata(s)
    return (r[pos].sum() - pos.sum() * (pos.sum() + 1) / 2) / (pos.sum() * (~pos).sum())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="a9a.xz")
    ap.add_argument("--test", default="a9a.t.xz")
    args = ap.parse_args()
    tr, te = read_libsvm(L.data_file(args.train)), read_libsvm(L.data_file(args.test))
    train(tr, TrainParams(solver="ocas", loss="roc-area", C=1.0))        # compile first
    print(f"{args.train}: {tr.n_rows} rows, {np.mean(tr.labels == 1.0):.1%} positive; test {args.test}")
    Cs = [2.0 ** k for k in range(-7, 4)]
    rows = {}
    print(f"{'C':>9} {'hinge AUC':>10} {'s':>6} {'roc-area AUC':>13} {'s':>6}")
    for C in Cs:
        t = time.perf_counter()
        h = auc(train(tr, TrainParams(solver="ocas", C=C)), te)
        th = time.perf_counter() - t
        t = time.perf_counter()
        r = auc(train(tr, TrainParams(solver="ocas", loss="roc-area", C=C)), te)
        tr_s = time.perf_counter() - t
        rows[C] = (h, r)
        print(f"{C:9.4g} {h:10.5f} {th:6.2f} {r:13.5f} {tr_s:6.2f}")
    path = search_c(tr, TrainParams(solver="ocas", C=Cs[0]), folds=5)
    best = min((p for p in path.points if p.C in rows), key=lambda p: -p.accuracy).C
    h_best = rows[best][0]
    r_best = max(r for _, r in rows.values())
    print(f"hinge at its CV-best C = {best:g}: AUC {h_best:.5f}; roc-area at that C {rows[best][1]:.5f}, "
          f"at its best C {r_best:.5f}")


if __name__ == "__main__":
    main()
