"""Crammer-Singer multi-class SVM by OCAS (``-s ocas --multiclass cs``, the
problem of msvmocas: V. Franc, S. Sonnenburg, JMLR 2009).

Minimises, in C-form as msvmocas does (M classes, W = (w_1 .. w_M)),

    F(W) = 1/2 |W|^2 + sum_i C_i max_m ([m != y_i] + w_m.x_i - w_{y_i}.x_i),

LIBLINEAR's ``-s 4`` primal, by ``ocas.solve``: the same master loop,
reduced dual, stopping rules and options as binary ``-s ocas``. This
module is the problem's side of the loop, :class:`CrammerSingerForm`, with
its data in memory (:class:`CrammerSinger`) or in row blocks elsewhere
(:class:`TwoPassCrammerSinger`: ``--stream``,
:mod:`svmtrain.solvers.ocas.stream_ocas_cs`; Dask,
:mod:`svmtrain.distributed.ocas_cs`); its kernels (the cut, the scores, the exact line search over each row's
envelope of M lines) are in :mod:`svmtrain.solvers.ocas._ocas_cs_kernels`.

Every point of the loop (w_b, w_c, a cut) is a combination X~' G of the
rows (G an n x M coefficient matrix), and a cut is kept as one class index
per row (2 bytes a row: the bound ``--stream``'s memory plan counts) or, in
memory, as the list of its violators and their classes
(:class:`ViolatorLists`), so the products the loop needs are sums over the
rows (O(n M) per cut) or over each cut's violators. The scores of such a point,
X~ X~' G, take one pass over the columns of X (a CSC copy of the data) and no (d+1) x M array: two passes per
iteration, one for w_c's scores and one for the new cut's; W is formed once,
at the end. Over row blocks each product is two passes over the rows
(W' = (X~' G)' accumulated block by block, then S = X~ W): with the
blocks in order the same sums as in memory with one thread. With two classes the columns are w and -w exactly (each row of
G sums to zero), so the model keeps the first, as ``-s dcd --multiclass cs``.
C_i = C times the class weight of row i's label (-w).
"""
import time

import numba
import numpy as np
import scipy.sparse as sp

from ...errors import ParameterError
from ...models.linear import LinearModel
from . import _ocas_cs_kernels as K
from . import _ocas_kernels as KO
from .. import require_base
from ..base import FitResult, csr_arrays, kernel_bias
from .ocas import EXIT_EMPTY, QP_LIBOCAS, _Cuts, _cut_limit, _threads_for, _zeros, check_params, compact_pool, solve


class CrammerSingerForm:
    """The form (see ``ocas.solve``) and data side of one Crammer-Singer
    problem, whatever holds the rows: the scores S_b = X~ W_b and S_d = X~
    W_d (n x M), the coefficients G_b, G_c, G_d and the next cut's G_new,
    and the cut buffer: one row of class indices per cut, or with
    ``lists`` each cut's violators (:class:`ViolatorLists`: the Gram row and
    w_c's coefficients then sum over them, not over all rows; the same
    numbers). A subclass supplies the two products with the data:
    ``_scores_of(G, S)`` (S = X~ X~' G) and ``w()`` (W_b = X~' G_b, (d+1) x
    M, a new array). The reduced dual is solved as msvmocas solves it
    (``QP_LIBOCAS``: inexact, to half the relative tolerance), which takes
    the peer's iterations: far fewer than the exact solution on text like
    issue 33's, a few more on some (see ocas.QP_LIBOCAS)."""

    reduced_qp = QP_LIBOCAS

    def __init__(self, B, yi, cw, M, dim, cut_limit, nb, lists=False):
        n = len(yi)
        self.B, self.yi, self.cw, self.nb = B, yi, cw, nb
        self.cuts = _Cuts((0,) if lists else (n,), cut_limit, nb, mergeable=False, dtype=cut_dtype(M))
        self.violators = ViolatorLists(self.cuts.limit) if lists else None
        self.S_b, self.S_d = _zeros((n, M)), _zeros((n, M))
        self.G_b, self.G_c, self.G_d, self.G_new = (_zeros((n, M)) for _ in range(4))
        self.yhat = np.full(n, -1.0)
        self.dim = dim
        self.ls_t = np.empty(n * (M - 1))
        self.ls_w = np.empty(n * (M - 1))

    # the data side -------------------------------------------------------
    def start_at(self, w0):
        raise ParameterError("-s ocas --multiclass cs does not take a starting point (-C, warm start)")

    def move(self, t, mu):
        """W_b += t W_d and the cut at W_b + mu (1 - t) W_d; returns (loss,
        errors, violators, their sum of C_i) as LocalData.move."""
        return K.move(self.yi, self.cw, self.S_b, self.S_d, t, mu * (1.0 - t), self.yhat, self.G_new, self.nb)

    # the form ------------------------------------------------------------
    def _scores_of(self, G, S):
        raise NotImplementedError

    def w(self):
        raise NotImplementedError

    def combine(self):
        """G_c, W_c's scores and the direction; returns (|W_c|^2, |W_d|^2, W_b.W_d)."""
        c, v = self.cuts, self.violators
        if v is None:
            K.combine(c.stores[0], c.alpha, c.k, self.yi, self.cw, self.G_c, self.nb)
        else:
            K.combine_lists(v.start, v.length, v.rows, v.cls, c.alpha, c.k, self.yi, self.cw, self.G_c, self.nb)
        self._scores_of(self.G_c, self.S_d)
        return K.directions(self.G_c, self.G_b, self.S_b, self.G_d, self.S_d, self.nb)

    def line_search(self, qa, qb):
        G, m = K.breakpoints(self.yi, self.cw, self.S_b, self.S_d, qb, self.nb, self.ls_t, self.ls_w)
        return KO.minimise_over_breakpoints(self.ls_t, self.ls_w, G, m, qa, self.nb)

    def loss_at_end(self):
        return K.loss_at(self.yi, self.cw, self.S_b, self.S_d, 1.0, self.nb)

    def moved(self, t, scc):
        """G_b += t G_d after ``move``; returns |W_b|^2 = sum G_b . S_b."""
        return KO.shift_rows(self.G_b.reshape(-1), t, self.G_d.reshape(-1), self.S_b.reshape(-1),
                             np.zeros(0), 0.0, 0.0, self.nb)

    def add_cut(self, bval, it):
        S_new = self.S_d            # free until the next combine
        self._scores_of(self.G_new, S_new)

        v = self.violators

        def fill(slot, k, hrow):
            if v is None:
                rows = self.cuts.stores[0]          # (after the buffer has grown for this cut)
                rows[slot] = self.yhat
                K.gram(rows, k, self.yi, self.cw, S_new, hrow, self.nb)
            else:
                v.put(slot, self.yhat, k)
                K.gram_lists(v.start, v.length, v.rows, v.cls, k, self.yi, self.cw, S_new, hrow, self.nb,
                             K.gram_span(S_new.shape[1]))
        return self.cuts.add(fill, bval, it)


class ViolatorLists:
    """Each stored cut's violators, for the kernels that sum over them
    (``combine_lists``, ``gram_lists``): slot j's rows (ascending) and
    their most violating classes are ``rows``/``cls`` from ``start[j]``,
    ``length[j]`` of them, in one pool; a replaced cut's segment is dropped
    when the pool is next compacted."""

    def __init__(self, limit):
        self.start = np.zeros(limit, np.int64)
        self.length = np.zeros(limit, np.int64)
        self.rows = np.empty(1024, np.int32)
        self.cls = np.empty(1024, np.int32)
        self.end = 0

    def put(self, slot, yhat, k):
        """Slot ``slot`` (< k, the slots in use) holds the cut whose class per
        row is ``yhat`` (-1 where the row does not violate)."""
        rows = np.flatnonzero(yhat >= 0)
        self.length[slot] = 0
        if self.end + len(rows) > len(self.rows):
            self._compact(len(rows), k)
        at = self.end
        self.rows[at:at + len(rows)] = rows
        self.cls[at:at + len(rows)] = yhat[rows]
        self.start[slot], self.length[slot] = at, len(rows)
        self.end = at + len(rows)

    def _compact(self, need, k):
        """Keep the segments of slots 0..k-1 only, in a pool with room for ``need`` more."""
        live = np.flatnonzero(self.length[:k])
        (self.rows, self.cls), self.end = compact_pool(self.start, self.length, live, (self.rows, self.cls), need)


class CrammerSinger(CrammerSingerForm):
    """The problem in memory, over the columns of X (CSC arrays ``colptr``,
    ``rows``, ``values``): one pass over them per product; cuts as violator lists."""

    def __init__(self, colptr, rows, values, B, yi, cw, M, dim, cut_limit, nb):
        super().__init__(B, yi, cw, M, dim, cut_limit, nb, lists=True)
        self.csc = (colptr, rows, values)
        n = len(yi)
        self.buf = np.empty((nb, n, M)) if nb > 1 else np.empty((1, 1, 1))
        self.live = np.empty(n, np.int8)         # products' scratch: the rows where G is not zero

    def _scores_of(self, G, S):
        """S = X~ (X~' G), one pass over the columns."""
        colptr, rows, values = self.csc
        K.products(colptr, rows, values, self.B, G, S, self.buf, self.live, self.nb)

    def w(self):
        """W_b = X~' G_b, (d+1) x M (a new array)."""
        colptr, rows, values = self.csc
        W = np.empty((self.dim, self.G_b.shape[1]))
        K.weights(colptr, rows, values, self.B, self.G_b, W, self.nb)
        return W


class TwoPassCrammerSinger(CrammerSingerForm):
    """The problem over rows held elsewhere in blocks (``--stream``'s chunk
    source, Dask partitions): ``rows`` has ``weights(G, Wt)`` (Wt = (X~'
    G)', class-major (M, d+1), zeroed by it) and ``scores(Wt, S)`` (S = X~
    W), each one pass over the blocks; a product X~ X~' G is the two
    passes, with one (d+1) x M array (``Wt``) in memory. The n x M arrays
    and the cut buffer are this object's, as in memory."""

    def __init__(self, rows, B, yi, cw, M, dim, cut_limit, nb):
        super().__init__(B, yi, cw, M, dim, cut_limit, nb)
        self.rows = rows
        self.Wt = _zeros((M, dim))

    def _scores_of(self, G, S):
        self.rows.weights(G, self.Wt)
        self.rows.scores(self.Wt, S)

    def w(self):
        """W_b = X~' G_b, (d+1) x M (a new array)."""
        self.rows.weights(self.G_b, self.Wt)
        return self.Wt.T.copy()


def cut_dtype(M):
    """The type of a cut's class indices (2 bytes per row below 2^15 classes)."""
    return np.int16 if M < 2 ** 15 else np.int32


def class_indices(labels, order):
    """Each row's class index (int64) in ``order`` (the sorted-out label order)."""
    sorter = np.argsort(order)
    return sorter[np.searchsorted(order, labels, sorter=sorter)].astype(np.int64)


def class_costs(order, params, n):
    """(C times each class's weight (-w), in ``order``; C) for n rows: row
    i's C_i is the first at its class index."""
    C = params.resolved_C(n)
    weights = np.array([params.class_weights.get(float(c), 1.0) for c in order])
    return C * weights, C


def solve_with_threads(problem, n, dim, params, progress, log, nb, t0):
    """``ocas.solve`` over ``problem`` (its own form) with numba at ``nb``
    threads for the call (restored after)."""
    old_threads = numba.get_num_threads()
    numba.set_num_threads(nb)
    try:
        return solve(problem, n, dim, params, progress, log, nb, t0, form=problem)
    finally:
        numba.set_num_threads(old_threads)


def cs_model(result, order, d, params, C):
    """The LinearModel of a Crammer-Singer FitResult (``result.w`` (d+1 or d)
    x M; with two classes its first column only: the second is its
    negative); ``fit_results`` holds the result, with C and Q_P as
    ``primal_C_form`` in ``info``."""
    result.info.update(primal_C_form=result.info["Q_P"], C=C)
    W = result.w                    # without the constant feature's row when there is no -B
    if len(order) == 2:
        W = W[:, :1]                # the second column is -W[:, 0]
    result.w = W
    model = LinearModel(labels=order, W=np.ascontiguousarray(W), n_features=d, bias=params.bias,
                        b=np.zeros(W.shape[1]), solver=params.solver, task=params.task)
    model.fit_results = [result]
    return model


def train_model(data, order, problems, d, params, progress=None, log=None):
    """The Crammer-Singer LinearModel of ``data`` for the labels ``order``
    (``problems``, the one-vs-rest split, is not used). ``fit_results``
    holds one FitResult: the objective (lambda form, the primal over n C),
    and in ``info`` OCAS's Q_P (the C-form primal, ``primal_C_form``), Q_D
    and history."""
    require_base("ocas", params)
    check_params(params, (1.0, 1.0))
    t0 = time.perf_counter()
    M = len(order)
    n = data.n_rows
    dim = d + 1
    indptr, indices, values = csr_arrays(data, d)
    X = sp.csr_matrix((values, indices, indptr), shape=(n, d)).tocsc()
    colptr, rows = X.indptr.astype(np.int64), X.indices.astype(np.int32)
    yi = class_indices(data.labels, order)
    costs, C = class_costs(order, params, n)
    cw = costs[yi]
    if n == 0:
        result = FitResult(w=np.zeros((dim, M)), n_iter=0, objective=0.0, converged=True,
                           info={"Q_P": 0.0, "Q_D": 0.0, "exit": EXIT_EMPTY})
    else:
        nb = _threads_for(params.threads, int(indptr[-1]))
        problem = CrammerSinger(colptr, rows, X.data, kernel_bias(params), yi, cw, M, dim,
                                _cut_limit(params), nb)
        result = solve_with_threads(problem, n, dim, params, progress, log, nb, t0)
    return cs_model(result, order, d, params, C)
