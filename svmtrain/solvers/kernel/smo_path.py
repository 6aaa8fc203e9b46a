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
"""
import numpy as np

from ...data.dataset import take_rows
from ...mercer.cache import KernelCache
from ...mercer.functions import kernel_matrix, sq_norms
from ...models.kernel import KernelModel
from ..base import with_defaults
from .smo import DEFAULTS, kernel_of, ovo_pairs, solve
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


def rows_kernel(data, params, n_features):
    """A filled KernelCache over every row of ``data`` at ``params``' kernel
    when the whole matrix fits in the grid's budget (one matrix for all the
    folds of a gamma: each fold's training rows are some of its rows), else None."""
    if 4.0 * data.n_rows * data.n_rows > kernel_budget_mb(params) * (1 << 20):
        return None
    kernel = kernel_of(with_defaults(params, DEFAULTS), n_features)
    cache = KernelCache(data, kernel, kernel_budget_mb(params), max_batch=rows_per_fetch(n_features),
                        n_features=n_features)
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
    params = with_defaults(params, DEFAULTS)
    X = take_rows(data, train_rows)
    T = take_rows(data, test_rows)
    kernel = kernel_of(params, n_features)
    base, at, cache = _fold_kernel(data, X, train_rows, kernel, params, n_features, rows_cache)
    scorer = FoldScores(kernel, T, X, sq_norms(X.indptr, X.values), kernel_budget_mb(params))
    model = _label_model(X, order, kernel, n_features)
    pairs = ovo_pairs(X.labels, order, params)
    points = [DualPoint() for _ in pairs]
    scores = np.zeros((T.n_rows, max(len(pairs), 1)))
    correct = np.zeros(len(cs), np.int64)
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
        correct[i] = np.count_nonzero(model.predict_from_scores(scores) == T.labels)
    return correct


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
