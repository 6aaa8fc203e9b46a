"""``svm-train --grid -s smo``: one fold's C path at one gamma, warm-started.

At one gamma the kernel does not depend on C, and the dual at bounds r C
is the dual at C scaled: if alpha solves the problem at C, r alpha is
feasible at r C (0 <= r alpha <= r C, sum y r alpha = 0) and its gradient
is p + r (G - p), exactly, with no kernel row (alpha seeding, DeCoste and
Wagstaff 2000). :func:`fold_correct` therefore visits the C values of the
grid in increasing order and starts each one-vs-one problem from its
solution at the previous C, rescaled
(:meth:`svmtrain.solvers.kernel.smo_dual.DualPoint.rescaled`); the solver
then runs to LIBSVM's stopping rule as a cold run does, so every solution
is one a cold run could have returned (the same dual, the same ``-e``):
predictions agree with a cold ``-v`` run except where a decision value is
within the solver's tolerance of 0 (none differed on heart_scale, a
three-class variant and a quarter of svmguide1, 270 fold-points, tested).

The kernel work is shared across the C values and the pairs: one
:class:`svmtrain.mercer.cache.KernelCache` over the fold's training rows
serves every solve; when the whole matrix fits in the grid's budget
(:func:`kernel_budget_mb`) it is computed once, in batches, up front, and
then the solver takes LIBSVM's pair steps on compact copies of the active
variables throughout, and every NEWTON_EVERY steps a Newton step on the
free variables (:func:`svmtrain.solvers.kernel._smo_kernels.newton_face`),
which cuts the long ends of large C (on svmguide1 at gamma 2 and C = 2^15,
850,000 steps to about 40,000). Otherwise the cache keeps the rows it can.
The test rows' kernel values against the training rows (float64, as a
model's prediction computes them) are computed once too when they fit,
and each C's decision values are then a sum over its support vectors.

``svm-train -s smo -v N`` (:func:`cross_val_predict`, the module's
``CROSS_VALIDATION`` hook) is the same machinery at one C: the matrix of
all the rows computed once when it fits in ``-m``, each fold's solves
compact with the Newton steps, the test rows' decision values read from
that matrix (:class:`MatrixScores`).
"""
import copy
import dataclasses
import queue

import numba
import numpy as np

from ..._numba import options as opts
from ...data.dataset import take_rows
from ...mercer.cache import KernelCache
from ...mercer.functions import kernel_matrix, sq_norms
from ...models.kernel import KernelModel
from ..base import with_defaults
from ...tasks import CLASSIFICATION
from .smo import DEFAULTS, kernel_of, ovo_pairs, solve
from ._smo_path_kernels import matrix_scores
from .smo_batched import rows_per_fetch
from .smo_dual import DualPoint

# memory for the kernel values a grid worker keeps: the matrix of all rows
# (float32; shared by the folds of a gamma), else of a fold's training rows,
# and a fold's test rows against its training rows (float64), each kept
# whole when it fits in max(-m, GRID_KERNEL_MB) MB (10,000 rows: 400 MB)
GRID_KERNEL_MB = 512


def kernel_budget_mb(params):
    """The MB each of a grid task's two kernel blocks may take: max(-m, GRID_KERNEL_MB)."""
    return max(float(params.cache_mb), float(GRID_KERNEL_MB))


def rows_kernel(data, params, n_features, budget_mb=None):
    """A filled KernelCache over every row of ``data`` at ``params``' kernel
    when the whole matrix fits in ``budget_mb`` MB (default: the grid's
    budget, :func:`kernel_budget_mb`; one matrix for all the folds of a
    gamma: each fold's training rows are some of its rows), else None."""
    budget_mb = kernel_budget_mb(params) if budget_mb is None else float(budget_mb)
    if 4.0 * data.n_rows * data.n_rows > budget_mb * (1 << 20):
        return None
    kernel = kernel_of(with_defaults(params, DEFAULTS), n_features)
    cache = KernelCache(data, kernel, budget_mb, max_batch=rows_per_fetch(n_features), n_features=n_features)
    cache.fill()
    return cache


def fold_correct(data, train_rows, test_rows, params, cs, n_features, order, rows_cache=None):
    """The number of test rows predicted right at each bound C of ``cs`` (in
    that order; each C as params.resolved_C gives it) by the C-SVC trained
    on ``train_rows`` of ``data`` with ``params`` (its kernel, gamma,
    ``-e``, ``-w``), one-vs-one over the labels ``order`` (the cold run's:
    :func:`svmtrain.training.train.label_order` of the training labels),
    the C values visited in increasing order, each solve warm-started from
    the previous C's solution (module doc). ``params.C`` is not read.
    ``rows_cache``: :func:`rows_kernel` of ``data`` at this gamma, shared
    with the other folds (else the fold's own matrix, or row cache)."""
    truth = data.labels[np.asarray(test_rows, np.int64)]
    correct = np.zeros(len(cs), np.int64)
    for i, predicted in fold_predictions(data, train_rows, test_rows, params, cs, n_features, order, rows_cache):
        correct[i] = np.count_nonzero(predicted == truth)
    return correct


def fold_predictions(data, train_rows, test_rows, params, cs, n_features, order, rows_cache=None):
    """Yield (i, the labels predicted for ``test_rows``) for each bound C =
    cs[i], in increasing order of C, by the C-SVC of :func:`fold_correct`
    (the same solves; its arguments as there). With one C and
    ``rows_cache`` (-v), the decision values come from that matrix
    (:class:`MatrixScores`); else the test rows' kernel values are computed
    (:class:`FoldScores`: against every training row once when several C
    values share them, else against the support vectors)."""
    params = with_defaults(params, DEFAULTS)
    X = take_rows(data, train_rows)
    T = take_rows(data, test_rows)
    kernel = kernel_of(params, n_features)
    base, at, cache = _fold_kernel(data, X, train_rows, kernel, params, n_features, rows_cache)
    if rows_cache is not None and len(cs) == 1:
        scorer = MatrixScores(rows_cache, at, np.asarray(test_rows, np.int64))
    else:
        scorer = FoldScores(kernel, T, X, sq_norms(X.indptr, X.values), kernel_budget_mb(params) if len(cs) > 1 else 0)
    model = _label_model(X, order, kernel, n_features)
    pairs = ovo_pairs(X.labels, order, params)
    points = [DualPoint() for _ in pairs]
    scores = np.zeros((T.n_rows, max(len(pairs), 1)))
    previous = None
    for i in np.argsort(cs, kind="stable"):
        C = float(cs[i])
        for p, (_, _, rows, y, weight) in enumerate(pairs):
            lin = np.full(len(y), -1.0)
            start = DualPoint() if previous is None else points[p].rescaled(previous * weight, C * weight, lin)
            alpha, rho, _ = solve(base, y, C * weight, lin, kernel, params, index=at[rows], n_features=n_features,
                                  cache=cache, point=start, newton=True)
            points[p] = start
            scores[:, p] = scorer.scores(rows, y * alpha, -rho)
        previous = C
        yield int(i), model.predict_from_scores(scores)


def cross_val_predict(data, params, splits, n_features):
    """``-v``'s out-of-fold labels of a C-SVC, every fold solved over one
    kernel matrix of all the rows of ``data`` (:func:`rows_kernel`, computed
    once), compact and with Newton steps (:func:`fold_predictions` at one
    C): float64[data.n_rows], row i predicted by the model of the split
    whose test rows hold it. ``splits``: (training rows, test rows, label
    order of the training rows) per fold, the cold run's folds. The solves
    are the same dual to the same ``-e`` as the fold-by-fold runs of
    :func:`svmtrain.solvers.kernel.smo.train_model`, so the predictions are
    theirs but where a decision value is within the solver's tolerance of 0.
    None when this path does not apply (the caller then trains fold by
    fold): another task than classification, ``--nu``, ``-B`` or
    ``--no-bias`` (train_model refuses them), a kernel other than -t 0-3,
    or a matrix larger than ``-m`` MB."""
    params = with_defaults(params, DEFAULTS)
    if (params.task != CLASSIFICATION or params.nu is not None or params.bias >= 0 or params.unreg_bias is False
            or params.kernel_type not in (None, 0, 1, 2, 3)):
        return None
    rows_cache = rows_kernel(data, params, n_features, budget_mb=params.cache_mb)
    if rows_cache is None:
        return None
    pred = np.empty(data.n_rows)
    workers = fold_workers(params, len(splits))
    one = dataclasses.replace(params, threads=1) if workers > 1 else params
    views = queue.SimpleQueue()
    for _ in range(workers):
        views.put(_cache_view(rows_cache) if workers > 1 else rows_cache)

    def fold(split):
        train_rows, test_rows, order = split
        view = views.get()
        try:
            C = one.resolved_C(len(train_rows))
            _, pred[test_rows] = next(fold_predictions(data, train_rows, test_rows, one, [C], n_features, order,
                                                       view))
        finally:
            views.put(view)

    if workers == 1:
        for split in splits:
            fold(split)
        return pred
    from concurrent.futures import ThreadPoolExecutor
    with opts.serial_kernels(), ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(fold, splits))
    return pred


def fold_workers(params, n_folds):
    """How many folds of -v are solved at once: one (its kernels parallel
    from their size on, as a training run's), or with ``--threads N`` given
    N (at most the cores and the folds), each then on one thread with
    serial kernels (no parallel region is launched from two threads, and
    none starts numba's thread pool). (Not all cores by default: on the
    2-core machine shared with other jobs, two folds at once took 1.0-1.7x
    the CPU time and more wall time than one after the other, svmguide1's
    points of grid.py's range.)"""
    cores = int(numba.config.NUMBA_NUM_THREADS)
    return max(1, min(int(params.threads or 1), cores, n_folds))


def _cache_view(cache):
    """A KernelCache over the same filled matrix as ``cache`` (read only: no
    row is computed again) with its own hit counts and scratch buffers, for
    one thread of folds."""
    view = copy.copy(cache)
    view.stamp, view.state, view.scratch = cache.stamp.copy(), cache.state.copy(), {}
    return view


def _fold_kernel(data, X, train_rows, kernel, params, n_features, rows_cache):
    """(the rows the solver reads, the row there of each training row, the
    kernel cache over them): ``rows_cache`` over all of ``data``, else a
    cache of the grid's budget over the training rows ``X``, filled when
    the whole matrix fits."""
    if rows_cache is not None:
        return data, np.asarray(train_rows, np.int64), rows_cache
    cache = KernelCache(X, kernel, kernel_budget_mb(params), max_batch=rows_per_fetch(n_features),
                        n_features=n_features)
    cache.fill()
    return X, np.arange(X.n_rows), cache


def _label_model(X, order, kernel, n_features):
    """A model with no support vectors that turns decision values into labels as the cold run's model does."""
    k = len(order)
    m = max(k * (k - 1) // 2, 1)
    return KernelModel(labels=order, SV=take_rows(X, np.empty(0, np.int64)), coef=np.zeros((0, m)),
                       b=np.zeros(m), kernel=kernel, n_features=n_features, decision="ovo" if k > 2 else "ovr")


class MatrixScores:
    """Decision values of the test rows ``test_rows`` of a filled kernel
    cache over all the rows (:func:`rows_kernel`) for expansions over its
    rows ``train_rows``: f(t) = sum_s coef_s K(t, x_s) + b with the cache's
    float32 values, the ones the solver read (7 digits: a decision value
    moves by at most about 1e-7 sum_s |coef_s|, far inside the solver's
    ``-e``), gathered for the support vectors only: no kernel value is
    computed again."""

    def __init__(self, cache, train_rows, test_rows):
        self.M, self.slot_of, self.train, self.test = cache.M, cache.slot_of, train_rows, test_rows

    def scores(self, rows, coef, b):
        """float64[len(test_rows)]: the decision values of coef[s] on training row train_rows[rows[s]], plus b."""
        out = np.full(len(self.test), float(b))
        sv = np.flatnonzero(coef)
        if len(sv):
            matrix_scores(self.M, self.slot_of, self.test, self.train[rows[sv]], np.ascontiguousarray(coef[sv]), out)
        return out


class FoldScores:
    """Decision values of the test rows ``T`` for expansions over the
    training rows ``X``: f(t) = sum_s coef_s K(t, x_s) + b, with K in
    float64 as :class:`svmtrain.models.kernel.KernelModel` computes it; the
    whole test-by-training block is computed once when it fits in
    ``budget_mb``, else the support vectors' columns at each call."""

    def __init__(self, kernel, T, X, X_sq, budget_mb):
        self.kernel, self.T, self.X, self.X_sq = kernel, T, X, X_sq
        self.T_sq = sq_norms(T.indptr, T.values)
        self.block = None
        if 8.0 * T.n_rows * X.n_rows <= budget_mb * (1 << 20):
            self.block = kernel_matrix(kernel, T, self.T_sq, X, X_sq)

    def scores(self, rows, coef, b):
        """float64[T.n_rows]: the decision values of coef[s] on training row
        rows[s], plus b. (einsum's own loops, not BLAS: a grid worker stays
        on one thread.)"""
        out = np.full(self.T.n_rows, float(b))
        sv = np.flatnonzero(coef)
        if self.block is not None and 2 * len(sv) >= self.X.n_rows:
            full = np.zeros(self.X.n_rows)
            full[rows] = coef
            out += np.einsum("ij,j->i", self.block, full)
        elif self.block is not None:        # (few support vectors: their columns only)
            out += np.einsum("ij,j->i", self.block[:, rows[sv]], coef[sv])
        elif len(sv):
            out += np.einsum("ij,j->i", kernel_matrix(self.kernel, self.T, self.T_sq, self.X, self.X_sq,
                                                      rows=rows[sv]), coef[sv])
        return out
