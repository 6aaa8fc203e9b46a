"""--folds libsvm: LIBSVM 3.24's svm_cross_validation folds, row for row.

The kernels are checked against a plain-Python transcription of LIBSVM's
svm_group_classes / svm_cross_validation over an independent Python copy
of glibc's rand() (seed 1); the whole -v run against /usr/bin/svm-train's
printed rate, and svm-grid against /usr/bin/svm-grid, where installed.
"""
import dataclasses
import lzma
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from svmtrain._numba._crand_kernels import c_rand, rand_state
from svmtrain.io.reader import read_libsvm
from svmtrain.params import TrainParams
from svmtrain.tasks import CLASSIFICATION, ONE_CLASS, REGRESSION
from svmtrain.training.libsvm_folds import libsvm_perm, libsvm_splits
from svmtrain.training.train import cross_validate, fold_assignment, fold_splits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEART = os.path.join(ROOT, "data", "heart_scale.xz")
LIBSVM = "/usr/bin/svm-train"
LIBSVM_GRID = "/usr/bin/svm-grid"
BIN = os.path.dirname(sys.executable)


def glibc_rand():
    """An independent copy of glibc's random_r TYPE_3 after srand(1): yields rand()."""
    r = [1]
    for i in range(1, 31):
        r.append((16807 * r[i - 1]) % 2147483647)
    for i in range(31, 34):
        r.append(r[i - 31])
    i = 34
    while True:
        r.append((r[i - 31] + r[i - 3]) & 0xFFFFFFFF)
        if i >= 344:
            yield r[i] >> 1
        i += 1


def reference_perm(y, nr_fold, svc):
    """LIBSVM's svm_cross_validation perm and fold_start, transcribed line by line."""
    rand = glibc_rand()
    l = len(y)
    if svc and nr_fold < l:
        label, count, data_label = [], [], []
        for v in y:                                     # svm_group_classes
            this_label = int(v)
            for j in range(len(label)):
                if this_label == label[j]:
                    count[j] += 1
                    break
            else:
                j = len(label)
                label.append(this_label)
                count.append(1)
            data_label.append(j)
        if len(label) == 2 and label[0] == -1 and label[1] == 1:
            label.reverse()
            count.reverse()
            data_label = [1 - d for d in data_label]
        nr_class = len(label)
        start = [0] * nr_class
        for c in range(1, nr_class):
            start[c] = start[c - 1] + count[c - 1]
        perm = [0] * l
        for i in range(l):
            perm[start[data_label[i]]] = i
            start[data_label[i]] += 1
        start[0] = 0
        for c in range(1, nr_class):
            start[c] = start[c - 1] + count[c - 1]
        index = list(perm)
        for c in range(nr_class):
            for i in range(count[c]):
                j = i + next(rand) % (count[c] - i)
                index[start[c] + j], index[start[c] + i] = index[start[c] + i], index[start[c] + j]
        fold_count = [sum((i + 1) * count[c] // nr_fold - i * count[c] // nr_fold for c in range(nr_class))
                      for i in range(nr_fold)]
        fold_start = [0]
        for i in range(nr_fold):
            fold_start.append(fold_start[-1] + fold_count[i])
        fill = list(fold_start)
        for c in range(nr_class):
            for i in range(nr_fold):
                for j in range(start[c] + i * count[c] // nr_fold, start[c] + (i + 1) * count[c] // nr_fold):
                    perm[fill[i]] = index[j]
                    fill[i] += 1
        return perm, fold_start
    perm = list(range(l))
    for i in range(l):
        j = i + next(rand) % (l - i)
        perm[i], perm[j] = perm[j], perm[i]
    return perm, [i * l // nr_fold for i in range(nr_fold + 1)]


def test_shared_rand_is_glibc():
    state, ref = rand_state(1), glibc_rand()
    assert [int(c_rand(state)) for _ in range(1000)] == [next(ref) for _ in range(1000)]
    # glibc's first outputs after srand(1) (or none), as any C program prints them
    assert [int(c_rand(s)) for s in [rand_state(1)] for _ in range(3)] == [1804289383, 846930886, 1681692777]


@pytest.mark.parametrize("n,classes,folds", [(10, 2, 3), (57, 3, 5), (100, 4, 10), (9, 2, 9), (9, 2, 12),
                                             (40, 5, 7), (3, 3, 2), (200, 7, 5)])
def test_stratified_matches_libsvm_code(n, classes, folds):
    rng = np.random.default_rng(n * 31 + classes)
    for labels in (rng.integers(0, classes, n) * 2 - 1.0,           # -1, +1, 3, ... in a random first order
                   np.where(rng.random(n) < 0.4, -1.0, 1.0),          # two-class -1/+1: LIBSVM's swap
                   rng.integers(0, classes, n) + 0.25):               # labels truncated to int by LIBSVM
        perm, fold_start = libsvm_perm(labels, folds, stratified=True)
        ref_perm, ref_start = reference_perm(labels.tolist(), folds, svc=True)
        assert perm.tolist() == ref_perm and fold_start.tolist() == ref_start


@pytest.mark.parametrize("n,folds", [(10, 3), (101, 5), (7, 7), (5, 9)])
def test_plain_matches_libsvm_code(n, folds):
    y = np.linspace(-1, 1, n)
    perm, fold_start = libsvm_perm(y, folds, stratified=False)
    ref_perm, ref_start = reference_perm(y.tolist(), folds, svc=False)
    assert perm.tolist() == ref_perm and fold_start.tolist() == ref_start


def test_splits_follow_libsvm_row_order():
    y = np.array([1, -1, 1, 2, 2, -1, 1, 1, 2, -1, -1, 1.0])
    perm, fold_start = reference_perm(y.tolist(), 3, svc=True)
    for k, (train_rows, test_rows) in enumerate(libsvm_splits(y, 3, stratified=True)):
        b, e = fold_start[k], fold_start[k + 1]
        assert train_rows.tolist() == perm[:b] + perm[e:] and test_rows.tolist() == perm[b:e]


@pytest.fixture(scope="module")
def heart(tmp_path_factory):
    path = tmp_path_factory.mktemp("folds") / "heart_scale"
    path.write_bytes(lzma.open(HEART).read())
    return str(path)


def test_fold_splits_choice(heart):
    data = read_libsvm(heart)
    seed = TrainParams(solver="smo")
    fold_of = fold_assignment(data, seed, 5)
    assert [(a.tolist(), b.tolist()) for a, b in fold_splits(data, seed, 5)] == \
        [(np.flatnonzero(fold_of != k).tolist(), np.flatnonzero(fold_of == k).tolist()) for k in range(5)]
    for task, svc in ((CLASSIFICATION, True), (REGRESSION, False), (ONE_CLASS, False)):
        params = dataclasses.replace(seed, fold_style="libsvm", task=task)
        perm, fold_start = reference_perm(data.labels.tolist(), 5, svc=svc)
        got = fold_splits(data, params, 5)
        assert [b.tolist() for _, b in got] == [perm[fold_start[k]:fold_start[k + 1]] for k in range(5)]


def _rate(text):
    return re.search(r"Cross Validation Accuracy = ([0-9.]+)%", text).group(1)


@pytest.mark.skipif(not os.path.exists(LIBSVM), reason="LIBSVM's svm-train is not installed")
@pytest.mark.parametrize("c,g,seed_rate", [(1, 0.5, "78.5185"), (8, 0.03125, "82.963"), (0.5, 2, "60.3704")])
def test_cv_rate_equals_libsvm(heart, c, g, seed_rate):
    """LIBSVM's -v 5 line gives LIBSVM's printed rate (its folds); --folds seed other folds."""
    theirs = _rate(subprocess.run([LIBSVM, "-q", "-v", "5", "-c", str(c), "-g", str(g), heart],
                                  capture_output=True, text=True, check=True).stdout)
    data = read_libsvm(heart)
    params = TrainParams(solver="smo", C=float(c), gamma=float(g), fold_style="libsvm")
    assert f"{100 * cross_validate(data, params, 5):g}" == theirs
    env = dict(os.environ, SVMTRAIN_SERVER="0")
    line = subprocess.run([os.path.join(BIN, "svm-train"), "-q", "-v", "5", "-c", str(c), "-g", str(g), heart],
                          capture_output=True, text=True, check=True, env=env).stdout
    assert _rate(line) == theirs          # a LIBSVM line with -v takes LIBSVM's folds by default
    seed = cross_validate(data, dataclasses.replace(params, fold_style="seed"), 5)
    assert f"{100 * seed:g}" == seed_rate   # svm-train's own folds (--seed 1), as before --folds


def test_libsvm_lines_get_libsvm_folds():
    from svmtrain.cli import train
    from svmtrain.cli.foreign import translate_train
    assert "libsvm" in translate_train(["-v", "5", "-g", "0.5", "f"], train.main)
    assert "libsvm" in translate_train(["-s", "2", "-n", "0.2", "-t", "2", "-v", "3", "f"], train.main)
    assert "libsvm" not in translate_train(["-g", "0.5", "f"], train.main)                      # no -v
    assert "libsvm" not in translate_train(["-s", "smo", "-g", "0.5", "-v", "5", "f"], train.main)  # our own
    assert translate_train(["-g", "0.5", "-v", "5", "--folds", "seed", "f"], train.main).count("--folds") == 1


@pytest.mark.skipif(not (os.path.exists(LIBSVM_GRID) and os.path.exists(LIBSVM)),
                    reason="LIBSVM's svm-grid is not installed")
def test_svm_grid_equals_libsvm_grid(heart, tmp_path):
    grid = ["-log2c", "-1,3,2", "-log2g", "-3,0,1", "-v", "5", "-gnuplot", "null", "-out", "null", heart]
    theirs = subprocess.run([LIBSVM_GRID, "-svmtrain", LIBSVM] + grid,
                            capture_output=True, text=True, check=True, cwd=tmp_path).stdout.splitlines()
    env = dict(os.environ, SVMTRAIN_SERVER="0")
    ours = subprocess.run([os.path.join(BIN, "svm-grid")] + grid, capture_output=True, text=True, check=True,
                          cwd=tmp_path, env=env).stdout.splitlines()
    assert ours[-1] == theirs[-1]                   # the best point and its rate
    assert sorted(ours) == sorted(theirs)           # every point's rate
