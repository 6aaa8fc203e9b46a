"""LIBSVM's cross-validation folds (``--folds libsvm``), row for row.

LIBSVM 3.24's ``svm_cross_validation`` for C-SVC and nu-SVC with fewer
folds than rows groups the rows by class (``svm_group_classes``: classes
in order of first appearance of the label cast to int, the two classes
swapped when they are -1 then +1; the rows of each class in file order),
shuffles each class with ``j = i + rand() % (count - i)``, and deals each
class's consecutive slices ``[i*count/folds, (i+1)*count/folds)`` to fold
i; every other run (regression, one-class, or folds >= rows) shuffles all
rows the same way and fold i is ``perm[i*l/folds : (i+1)*l/folds]``.
rand() is glibc's with seed 1 (svm-train never calls srand), so every
svm-train process, hence every point of grid.py, gets the same folds.
Fold i trains on ``perm[:begin]`` then ``perm[end:]``, in that order.
(LIBSVM's int arithmetic overflows beyond 2^31 / folds rows; here it does not.)
"""
import numpy as np
from numba import njit

from .._numba._crand_kernels import c_rand, rand_state

LIBSVM_SEED = 1     # glibc's state in a process that never calls srand


def class_groups(labels):
    """(perm, start, count) of svm_group_classes: ``perm`` the rows grouped
    by class (stable), class c at ``perm[start[c] : start[c] + count[c]]``,
    classes in LIBSVM's order (first appearance of int(label); -1/+1 swapped)."""
    as_int = np.trunc(np.asarray(labels, np.float64)).astype(np.int64)
    uniq, first, inverse = np.unique(as_int, return_index=True, return_inverse=True)
    by_first = np.argsort(first, kind="stable")
    if len(uniq) == 2 and uniq[by_first[0]] == -1 and uniq[by_first[1]] == 1:
        by_first = by_first[::-1]
    rank = np.empty(len(uniq), np.int64)
    rank[by_first] = np.arange(len(uniq))
    cls = rank[inverse.ravel()]
    perm = np.argsort(cls, kind="stable").astype(np.int64)
    count = np.bincount(cls, minlength=len(uniq)).astype(np.int64)
    start = np.r_[0, np.cumsum(count)[:-1]].astype(np.int64)
    return perm, start, count


@njit(cache=True, nogil=True)
def stratified_perm(index, start, count, folds, state):
    """LIBSVM's stratified deal: shuffles each class's ``index[start[c] :
    start[c] + count[c]]`` in place with ``c_rand(state)``, then returns
    (perm, fold_start): fold i is ``perm[fold_start[i] : fold_start[i+1]]``,
    holding slice [i*count[c]/folds, (i+1)*count[c]/folds) of each class c,
    classes in order."""
    n_class = len(count)
    for c in range(n_class):
        s = start[c]
        for i in range(count[c]):
            j = i + c_rand(state) % (count[c] - i)
            t = index[s + j]
            index[s + j] = index[s + i]
            index[s + i] = t
    fold_start = np.zeros(folds + 1, np.int64)
    for i in range(folds):
        size = 0
        for c in range(n_class):
            size += (i + 1) * count[c] // folds - i * count[c] // folds
        fold_start[i + 1] = fold_start[i] + size
    perm = np.empty(len(index), np.int64)
    fill = fold_start[:folds].copy()
    for c in range(n_class):
        for i in range(folds):
            begin = start[c] + i * count[c] // folds
            end = start[c] + (i + 1) * count[c] // folds
            for j in range(begin, end):
                perm[fill[i]] = index[j]
                fill[i] += 1
    return perm, fold_start


@njit(cache=True, nogil=True)
def plain_perm(n, folds, state):
    """LIBSVM's unstratified deal: (perm, fold_start), perm 0..n-1 shuffled
    with ``c_rand(state)`` and fold_start[i] = i*n/folds."""
    perm = np.arange(n)
    for i in range(n):
        j = i + c_rand(state) % (n - i)
        t = perm[i]
        perm[i] = perm[j]
        perm[j] = t
    fold_start = np.empty(folds + 1, np.int64)
    for i in range(folds + 1):
        fold_start[i] = i * n // folds
    return perm, fold_start


def libsvm_perm(labels, folds, stratified):
    """(perm, fold_start) of LIBSVM's svm_cross_validation for these
    labels: stratified by class when ``stratified`` (C-SVC, nu-SVC) and
    folds < rows, else the plain shuffle (see the module doc)."""
    n = len(labels)
    state = rand_state(LIBSVM_SEED)
    if stratified and folds < n:
        index, start, count = class_groups(labels)
        return stratified_perm(index, start, count, np.int64(folds), state)
    return plain_perm(np.int64(n), np.int64(folds), state)


def libsvm_splits(labels, folds, stratified):
    """[(training rows, test rows)] of each fold as LIBSVM builds them:
    training rows ``perm[:begin]`` then ``perm[end:]``, test rows ``perm[begin:end]``."""
    perm, fold_start = libsvm_perm(labels, folds, stratified)
    return [(np.concatenate([perm[:fold_start[k]], perm[fold_start[k + 1]:]]), perm[fold_start[k]:fold_start[k + 1]])
            for k in range(folds)]
