"""``-s ocas``: the Optimized Cutting Plane Algorithm (Franc & Sonnenburg 2008).

Minimises, in C-form as svmocas does,

    F(w) = 1/2 |w|^2 + sum_i c_i max(0, 1 - y_i w.x_i),   c_i = C * class cost,

(the lambda form of FitResult.objective is F / (n C)) by cutting planes.
A cut taken at a point w is ``R(v) >= b - a.v`` with
``a = sum_{i viol} c_i y_i x_i``, ``b = sum_{i viol} c_i`` over the margin
violators at w. The reduced problem (regulariser + max(0, max over cuts))
is solved in its dual, max ``b.alpha - 1/2 alpha'H alpha`` over
``alpha >= 0, sum alpha <= 1`` (H = Gram matrix of the cuts, kept and
extended by one row per cut), by ``_ocas_kernels.qp_simplex``, exactly
or as libocas does (the form's ``reduced_qp``, see QP_LIBOCAS); it gives
``w_c = sum alpha_j a_j`` and the lower bound ``Q_D`` on min F.

Each iteration (``params.ocas_method == "ocas"``):

1. solve the reduced dual, warm started -> alpha, w_c, Q_D;
2. one pass over the data: the outputs ``out_d = X (w_c - w_b)``;
3. the exact line search ``min_{t >= 0} F(w_b + t (w_c - w_b))`` from the
   kept outputs ``out_b = X w_b`` and ``out_d`` (no further data pass);
   ``w_b`` moves there and ``Q_P = F(w_b)`` (the upper bound);
4. stop (below) or take the next cut at ``(1 - mu) w_b + mu w_c``
   (mu = 0.1): its violators come from the kept outputs, and the cut
   vector from a second pass over the rows whose violator flag changed
   since the last cut (added to the last cut's vector) or, when more rows
   changed than violate, over the violators;
5. append the cut to the buffer and its Gram row (O(k d)).

With ``"cp"`` it is the plain cutting-plane method (BMRM / SVMperf): no line
search, the next cut is taken at ``w_c``, and ``w_b`` is the best iterate
seen (so Q_P is still an upper bound).

Where the cuts and the points w_b, w_c live is the loop's ``form``:
``DenseForm`` keeps them as dense d-vectors (steps 1 and 5 cost O(k d));
``RowForm``, for wide data in memory (more than twice as many features as
rows), keeps them as combinations of the rows (n-vectors), so that an
iteration costs O(nnz + k n + d) and step 2 needs no data pass; the
iterates are the same up to rounding. A RowForm run turns into a
DenseForm one (``RowForm.to_dense``, once) when the cuts turn out sparse:
on real text the late cuts touch about 1 % of the features, and O(k n)
then costs more than the dense form's sparse cuts and data pass
(``switch_pays``). ``ocas_cs.CrammerSinger`` is the form and data side of
the multi-class (Crammer-Singer) problem.

Everything per example or per feature is a numba kernel in
``_ocas_kernels``; this loop does O(1) Python work per iteration. The loop
(``solve``) sees the data only through four methods (``LocalData``: the
line search, the loss at w_c, the move of w_b with the next cut point's
violators, the cut); the Dask engine (``svmtrain.distributed.ocas``)
implements them over partitions held by workers.
``params.threads`` sets numba's thread count for the call (restored after);
the kernels split their ranges into one block per thread and sum partial
results in block order, so a run is reproducible for a given thread count;
a pass of little work (``_numba.options.PARALLEL_MIN_PASS``) runs the
kernel's serial twin on the same blocks, with the same numbers.

Stopping (as svmocas): Q_P - Q_D <= eps |Q_P| (``params.eps``, default
0.01), Q_P - Q_D <= TolAbs (``params.tol_abs`` if the field exists,
default 0), Q_P <= QPBound (``params.qp_bound`` if it exists, default 0),
``params.max_time`` seconds, ``params.max_iter`` iterations (default
100000). Only the first three count as converged.

The cut buffer holds at most ``params.cut_buffer`` cuts (default 2000) as
dense vectors of length d + 1, so it needs 8 (d + 1) bytes per cut. When it
is full the new cut replaces the cut that has been inactive (alpha = 0)
the longest; when every cut is active, the two oldest cuts are merged into
their alpha-weighted average (a valid cut that keeps the current reduced
solution and Q_D), so the method goes on where svmocas stops.
"""
import math
import time

import numba
import numpy as np

from ..._numba import options as _opts
from ...data.chunk_source import as_source, is_streamed, with_float32_values
from ...errors import ParameterError
from . import _ocas_kernels as K
from .._common import margins
from .. import require_base
from ..base import FitResult, finish_w, kernel_bias
from ..snapshots import linear_snapshot

DEFAULT_EPS = 0.01
DEFAULT_MAX_ITER = 100000
MU = 0.1                 # cut point: (1 - MU) w_b + MU w_c
QP_TOL = 1e-4            # reduced-QP duality gap <= QP_TOL * min(max(eps |Q_P|, TolAbs), Q_P - Q_D)
# How a form's reduced dual is solved each iteration (the form's
# ``reduced_qp``; see _reduced_dual): "exact" (face solves, then pair steps
# with Newton polishes, to QP_TOL of the outer gap) or "libocas" (pair
# steps only, stopped at a relative gap of eps / 2, as libocas's solvers
# call libqp_splx with QPSolverTolRel = TolRel / 2, or at half of TolAbs
# when that is set). The inexact solutions
# keep more cuts active; where that pays depends on the problem
# (measured, whole runs, two threads): Crammer-Singer on the 20-topic bag
# of words 1,009 iterations in 32 s against 1,328 in 59 s (msvmocas 1,022),
# on 8,000 docstrings 428 against 427, on all 26,504 412 against 393 (21-23
# s against 18 s); binary on the bag of words 275 against 275, on the
# binary docstring sample 154 against 145. So Crammer-Singer takes
# libocas's rule (the peer's method and iterations) and binary the exact one.
QP_EXACT = "exact"
QP_LIBOCAS = "libocas"
CUT_RESERVE_BYTES = 2 << 30  # initial address space reserved for the cut buffer
MIN_NNZ_PER_THREAD = 50000  # small problems use fewer threads (see _threads_for)
DELTA_REFRESH = 32       # recompute a cut from scratch after this many incremental ones
SPARSE_CUT = 2           # DenseForm stores a cut sparse when it touches at most 1/SPARSE_CUT of the features
# RowForm turns into DenseForm when the dense form's estimated work per
# iteration times SWITCH_MARGIN is below the row form's (see switch_pays;
# the switch itself costs one pass over the violators' rows a stored cut).
# Issue 33's text-like set (gen_synthetic.bag_of_words, 12,779 rows, 62,061
# features, the late cuts 2,000-3,000 features), one thread, loaded machine:
# the row form alone 3.9 s, the dense form alone 2.0 s, the switch at
# margin 1.5 (iteration 114) 2.5-2.7 s, 1.0 (71) 1.9-2.3 s, 0.6 (43)
# 1.8-2.5 s; a real docstring corpus (27,900 rows, 226,188 features, 23
# iterations) stays in rows (0.84 s against 1.26 s dense).
SWITCH_MARGIN = 1.0
# LocalData and ScoreData copy in-memory values that are all float32 exactly
# (counts, 0/1) as float32 from this many stored values (a pass of 65,536
# values takes about 0.1 ms; below, the copy's pass is not won back). Not
# PARALLEL_MIN_NNZ: serial runs (one-vs-rest classes in threads, svm-grid's
# workers) copy too. svm-train --precompile sets it to 0.
FLOAT32_MIN_NNZ = 1 << 16

EXIT_TOLREL = "TolRel"
EXIT_TOLABS = "TolAbs"
EXIT_QPBOUND = "QPBound"
EXIT_MAXTIME = "MaxTime"
EXIT_MAXITER = "MaxIter"
EXIT_EMPTY = "EmptyData"
EXIT_CUTBUFFER = "CutBuffer"     # full of active cuts that cannot be merged (as svmocas stops)


def compact_pool(start, length, live, pools, need):
    """New pools (arrays of the same dtypes as ``pools``) holding only the
    segments of the slots ``live`` (slot j: ``length[j]`` entries from
    ``start[j]``, the same in every pool), in slot order, with room for at
    least ``need`` more entries; updates ``start`` in place. Returns (the
    new pools, the end of what they hold)."""
    used = int(length[live].sum())
    size = max(1024, 2 * (used + need))
    new = tuple(np.empty(size, p.dtype) for p in pools)
    at = 0
    for j in live:          # (one slice copy per segment)
        st, ln = int(start[j]), int(length[j])
        for old, fresh in zip(pools, new):
            fresh[at:at + ln] = old[st:st + ln]
        start[j] = at
        at += ln
    return new, at


class _Cuts:
    """The cut buffer: offsets b[j], Gram matrix H, duals alpha, and the
    cut vectors as rows of the arrays ``stores`` (one array per width in
    ``widths``: a dense cut is one row of length d + 1, a cut over the
    examples two rows of length n; see DenseForm and RowForm). Cuts whose
    rows are not linear in the cut (``mergeable`` false: ocas_cs's class
    indices, stored as ``dtype``) are never merged: a full buffer of active cuts takes no more."""

    def __init__(self, widths, limit, nb, mergeable=True, dtype=np.float64):
        self.widths = tuple(widths)
        self.mergeable = mergeable
        self.dtype = dtype
        self.limit = limit
        self.nb = nb
        # np.empty reserves address space only (pages are touched row by
        # row as cuts arrive, as huge pages where numpy can madvise them),
        # so start with room for up to 2 GiB of cuts and grow rarely
        row_bytes = np.dtype(dtype).itemsize * max(1, sum(self.widths))
        self.cap = min(limit, max(2, CUT_RESERVE_BYTES // row_bytes))
        self.k = 0
        self.stores = [np.empty((self.cap, w), dtype) for w in self.widths]
        self.H = np.zeros((self.cap, self.cap))
        self.b = np.zeros(self.cap)
        self.alpha = np.zeros(self.cap)
        self.last_active = np.zeros(self.cap, np.int64)
        self.born = np.zeros(self.cap, np.int64)
        self.hrow = np.zeros(self.cap)
        self.n_dropped = 0
        self.n_merged = 0
        # sparse cuts (DenseForm, ``sparse=True``): slot j with sp_len[j] >= 0
        # holds its sp_len[j] indices/values from sp_start[j] in pidx/pval
        # (a pool filled from pend, compacted when full), not a dense row.
        # The values are float32 while every one is a float32 exactly (cuts
        # of word counts or 0/1 features whose sums stay float32 numbers, as
        # at C = 1): the products and sums read a third less, in float64
        # with the same numbers; the first value that is not turns the pool
        # float64 for the rest of the run
        self.sp_start = np.zeros(self.cap, np.int64)
        self.sp_len = np.full(self.cap, -1, np.int64)
        self.pidx = np.empty(0, np.int32)
        self.pval = np.empty(0, np.float32)
        self.pend = 0

    def has_sparse(self):
        return bool((self.sp_len[:self.k] >= 0).any())

    def moved_to(self, other, vectors):
        """``other`` (an empty buffer of another width) holding these k cuts:
        the same offsets, Gram matrix, duals and ages, cut j's vector
        ``vectors(j)`` (stored by density)."""
        k = self.k
        while other.cap < k:
            other._grow()
        other.k = k
        other.H[:k, :k] = self.H[:k, :k]
        for name in ("b", "alpha", "last_active", "born", "hrow"):
            getattr(other, name)[:k] = getattr(self, name)[:k]
        other.n_dropped, other.n_merged = self.n_dropped, self.n_merged
        for j in range(k):          # (k cuts, each one data pass in vectors())
            a = vectors(j)
            other.put(j, a, int(np.count_nonzero(a)))
        return other

    def put(self, slot, a, nnz):
        """Store the dense cut ``a`` (nnz nonzeros) in ``slot``: sparse when
        it touches at most 1/SPARSE_CUT of its entries, else as the slot's dense row."""
        if nnz * SPARSE_CUT > a.shape[0]:
            self.stores[0][slot] = a
            self.sp_len[slot] = -1
            return
        self.sp_len[slot] = -1
        if self.pend + nnz > self.pidx.shape[0]:
            self._compact(nnz)
        self.sp_start[slot] = self.pend
        stored = K.sparsify(a, self.pidx, self.pval, self.pend)
        if stored < 0:          # a value that is no float32: the pool's values are float64 from now on
            wide = np.empty(self.pval.shape[0])
            wide[:self.pend] = self.pval[:self.pend]      # (the rest holds nothing yet)
            self.pval = wide
            stored = K.sparsify(a, self.pidx, self.pval, self.pend)
        self.sp_len[slot] = stored
        self.pend += nnz

    def _compact(self, need):
        """Drop the pool's dead segments (and grow it) so that ``need`` more entries fit."""
        live = np.flatnonzero(self.sp_len[:self.cap] >= 0)
        (self.pidx, self.pval), self.pend = compact_pool(self.sp_start, self.sp_len, live, (self.pidx, self.pval),
                                                         need)

    def dense(self, j):
        """Cut j as a dense vector (a new array)."""
        if self.sp_len[j] < 0:
            return self.stores[0][j].copy()
        v = np.zeros(self.stores[0].shape[1])
        st, ln = int(self.sp_start[j]), int(self.sp_len[j])
        v[self.pidx[st:st + ln]] = self.pval[st:st + ln]
        return v

    def _grow(self):
        cap = min(self.limit, 2 * self.cap)
        k = self.k
        for q, old in enumerate(self.stores):
            new = np.empty((cap, old.shape[1]), old.dtype)
            new[:k] = old[:k]
            self.stores[q] = new
        H = np.zeros((cap, cap))
        H[:k, :k] = self.H[:k, :k]
        self.H = H
        for name in ("b", "alpha", "last_active", "born", "hrow", "sp_start", "sp_len"):
            old = getattr(self, name)
            new = np.zeros(cap, old.dtype) if name != "sp_len" else np.full(cap, -1, old.dtype)
            new[:k] = old[:k]
            setattr(self, name, new)
        self.cap = cap

    def _free_slot(self):
        """A slot for a new cut; frees one when the buffer is full (None
        when it cannot)."""
        if self.k < self.cap:
            self.k += 1
            return self.k - 1
        if self.cap < self.limit:
            self._grow()
            self.k += 1
            return self.k - 1
        k = self.k
        alpha = self.alpha[:k]
        inactive = np.flatnonzero(alpha <= 0.0)
        if len(inactive):
            # the cut inactive for longest (ties: the oldest)
            la = self.last_active[inactive]
            cand = inactive[la == la.min()]
            slot = int(cand[np.argmin(self.born[cand])])
            self.n_dropped += 1
            return slot
        if not self.mergeable:
            return None
        # all active: merge the two oldest cuts into their weighted average
        i, j = (int(s) for s in np.argsort(self.born[:k], kind="stable")[:2])
        ai, aj = alpha[i], alpha[j]
        s = ai + aj
        ti, tj = ai / s, aj / s
        H = self.H
        Hii, Hjj, Hij = H[i, i], H[j, j], H[i, j]
        row = ti * H[i, :k] + tj * H[j, :k]
        row[i] = ti * ti * Hii + 2.0 * ti * tj * Hij + tj * tj * Hjj
        row[j] = 0.0
        H[i, :k] = row
        H[:k, i] = row
        if self.sp_len[i] >= 0 or self.sp_len[j] >= 0:     # a sparse cut: merge densely, store by density
            v = self.dense(i)
            v *= ti
            v += tj * self.dense(j)
            self.sp_len[j] = -1
            self.put(i, v, int(np.count_nonzero(v)))
        else:
            for rows in self.stores:      # every representation of a cut is linear in it
                rows[i] *= ti
                K.axpy_sqnorm(rows[i], tj, rows[j], self.nb)
        self.b[i] = ti * self.b[i] + tj * self.b[j]
        self.alpha[i] = s
        self.born[i] = min(self.born[i], self.born[j])
        self.n_merged += 1
        return j

    def add(self, fill, bval, it):
        """Append a cut with offset ``bval``: ``fill(slot, k, hrow)`` stores
        its rows in ``stores[...][slot]`` and sets hrow[j] (j < k) to its
        products with cut j (itself at j = slot). Returns False (and adds
        nothing) when the buffer is full and no cut can go."""
        slot = self._free_slot()
        if slot is None:
            return False
        k = self.k
        self.b[slot] = bval
        self.alpha[slot] = 0.0
        self.last_active[slot] = it
        self.born[slot] = it
        fill(slot, k, self.hrow)
        self.H[slot, :k] = self.hrow[:k]
        self.H[:k, slot] = self.hrow[:k]
        return True


class DenseForm:
    """w_b, w_c = sum alpha_j a_j and w_d = w_c - w_b as dense vectors and
    the cuts as dense rows of length d + 1: O(k d) work per iteration
    (the Gram row of a new cut, w_c), over ``data`` (LocalData or any
    object with its methods, in memory, streamed or on Dask)."""

    reduced_qp = QP_EXACT

    def __init__(self, data, dim, cut_limit, nb):
        self.data, self.nb = data, nb
        self.cuts = _Cuts((dim,), cut_limit, nb)
        self.w_b = _zeros(dim)
        self.w_c = _zeros(dim)
        self.w_d = _zeros(dim)

    def start_at(self, w0):
        """w_b = w0 (with its outputs); returns |w0|^2."""
        self.w_b[:] = w0
        self.data.start_at(self.w_b)
        return float(self.w_b @ self.w_b)

    def combine(self):
        """w_c and w_d from the cuts' alpha; returns (|w_c|^2, |w_d|^2, w_b.w_d)."""
        c = self.cuts
        if c.has_sparse():
            return K.combine_mixed(c.stores[0], c.sp_start, c.sp_len, c.pidx, c.pval, c.alpha, c.k, self.w_b,
                                   self.w_c, self.w_d, self.nb)
        return K.combine_cuts(c.stores[0], c.alpha, c.k, self.w_b, self.w_c, self.w_d, self.nb)

    def line_search(self, qa, qb):
        return self.data.line_search(self.w_b, self.w_d, qa, qb)

    def loss_at_end(self):
        return self.data.loss_at_end(self.w_b, self.w_d)

    def moved(self, t, scc):
        """w_b += t w_d after ``data.move(t, ...)``; returns |w_b|^2."""
        if t == 1.0:
            self.w_b[:] = self.w_c
            return scc
        return K.axpy_sqnorm(self.w_b, t, self.w_d, self.nb)

    def add_cut(self, bval, it):
        a = self.data.cut()
        c = self.cuts
        nnz = int(np.count_nonzero(a))

        def fill(slot, k, hrow):
            c.put(slot, a, nnz)
            if c.has_sparse():     # products from the sparse side: O(nnz_j) per sparse cut j
                K.gram_row_mixed(c.stores[0], c.sp_start, c.sp_len, c.pidx, c.pval, k, a, self.nb, hrow)
            else:
                K.rows_dot(c.stores[0], k, a, self.nb, hrow)
        return c.add(fill, bval, it)

    def w(self):
        """w_b (owned by this object)."""
        return self.w_b


class RowForm:
    """Cuts and points as combinations of the examples, for in-memory data
    with fewer examples than features: cut j is a_j = X~' G[j] (X~ the rows
    with the constant feature B) and U[j] = X~ a_j its outputs, both
    n-vectors; w_b = s0 w0 + X~' g_b (w0 a warm start). Then w_c's outputs
    are U' alpha and every product the loop needs is a sum over the
    examples (``_ocas_kernels.combine_rows``), so an iteration costs
    O(nnz + k n + d) (one pass to scatter the new cut, one to take its
    outputs), not O(k d); the line search needs no data pass. w itself is
    formed once, at the end (``w()``).

    ``data`` is a LocalData over one in-memory Chunk (``cut_coefficients``
    and ``outputs_of``)."""

    reduced_qp = QP_EXACT

    def __init__(self, data, n, dim, cut_limit, nb, switch=True):
        self.data, self.nb, self.dim, self.n = data, nb, dim, n
        self.cut_limit, self.switch = cut_limit, switch
        self.cuts = _Cuts((n, n), cut_limit, nb)
        self.cut_nnz = np.zeros(cut_limit, np.int64)    # the features each stored cut touches
        self.g_b = _zeros(n)
        self.g_d = _zeros(n)
        self.u = _zeros(n)
        self.out0 = np.zeros(0)
        self.s0 = 0.0
        self.n00 = 0.0
        self.w0 = None

    def start_at(self, w0):
        self.w0 = np.array(w0, np.float64)
        self.data.start_at(self.w0)
        self.out0 = self.data.out_b.copy()
        self.s0 = 1.0
        self.n00 = float(self.w0 @ self.w0)
        return self.n00

    def combine(self):
        c, d = self.cuts, self.data
        G, U = c.stores
        return K.combine_rows(G, U, c.alpha, c.k, self.g_b, d.out_b, self.out0, self.s0, self.n00,
                              self.g_d, d.out_d, self.nb)

    def line_search(self, qa, qb):
        return self.data.line_search(None, None, qa, qb)

    def loss_at_end(self):
        return self.data.loss_at_end(None, None)

    def moved(self, t, scc):
        self.s0 *= 1.0 - t
        return K.shift_rows(self.g_b, t, self.g_d, self.data.out_b, self.out0, self.s0, self.n00, self.nb)

    def add_cut(self, bval, it):
        data = self.data
        a = data.cut()
        nnz = int(np.count_nonzero(a))
        data.outputs_of(a, self.u)
        g = data.cut_coefficients()
        G, U = self.cuts.stores

        def fill(slot, k, hrow):
            G[slot] = g
            U[slot] = self.u
            self.cut_nnz[slot] = nnz
            K.rows_dot(G, k, self.u, self.nb, hrow)
        return self.cuts.add(fill, bval, it)

    def next_form(self):
        """This form, or (once the cuts are sparse enough that
        :func:`switch_pays`) a DenseForm holding the same cuts and w_b."""
        c = self.cuts
        if self.switch and switch_pays(self.cut_nnz[:c.k], c.alpha[:c.k] > 0.0, self.n, self.dim,
                                       self.data.X.nnz):
            return self.to_dense()
        return self

    def to_dense(self):
        """A DenseForm at the same point: w_b = s0 w0 + X~' g_b, every cut
        a_j = X~' G[j] (one data pass a cut), the same H, b and alpha (so
        the next iterates are this form's up to rounding)."""
        dense = DenseForm(self.data, self.dim, self.cut_limit, self.nb)
        dense.w_b[:] = self.w()
        G = self.cuts.stores[0]
        self.cuts.moved_to(dense.cuts, lambda j: self.data.combination(G[j], _zeros(self.dim)))
        return dense

    def w(self):
        """w_b = s0 w0 + X~' g_b (a new array)."""
        w = self.data.combination(self.g_b, _zeros(self.dim))
        if self.s0 != 0.0:
            w += self.s0 * self.w0
        return w


def _zeros(shape, dtype=np.float64):
    a = np.empty(shape, dtype)
    a.fill(0)
    return a


def check_params(params, class_cost):
    """Raise ParameterError for what -s ocas cannot do (shared with the Dask engine)."""
    if params.unreg_bias:
        raise ParameterError("-R is not supported by -s ocas; use -B")
    if params.cut_buffer is not None and params.cut_buffer < 2:
        raise ParameterError("--cut-buffer must be at least 2 for -s ocas")
    if params.ocas_method not in ("ocas", "cp"):
        raise ParameterError(f"--ocas-method must be ocas or cp (got {params.ocas_method})")
    if not all(c > 0 and math.isfinite(c) for c in class_cost):
        raise ParameterError(f"class costs must be > 0 (got {class_cost})")


def _check(X, y, n_features, params, class_cost):
    check_params(params, class_cost)
    if len(y) != X.n_rows:
        raise ValueError("y and X have different numbers of rows")
    if not is_streamed(X) and X.nnz and int(X.indices.max()) >= n_features:
        raise ValueError("feature index beyond n_features")


WARM_START = True      # fit takes warm_start (see solve)
PARALLEL_CLASSES = True   # one-vs-rest classes may train in threads (svmtrain.training.class_threads)


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None,
        warm_start=None, cut_form=None):
    """Train one binary linear SVM (hinge loss) by OCAS; see the module doc.
    ``warm_start``: see :func:`solve`. ``cut_form``: "dense", "rows" (in
    memory only) or None, which picks by :func:`rows_pay` and lets a row
    form turn dense when :func:`switch_pays` (``info["cut_form"]`` says
    which form ended the run).

    ``X`` is a Chunk or a chunk source (:mod:`svmtrain.data.chunk_source`); from a
    source each iteration reads every block once for the outputs and the
    blocks holding a row of the next cut (both passes are needed in memory
    as well); the per-row state (outputs, violator flags, line-search
    scratch) stays in memory, 42 bytes per row, plus y. ``monitor`` (in
    memory only) is called after every iteration (svmtrain.training.trace).
    """
    require_base("ocas", params)
    _check(X, y, n_features, params, class_cost)
    y = np.ascontiguousarray(y, np.float64)
    on_iteration = None if monitor is None else _trace_iterations(monitor, X, y, params, class_cost)
    X = as_source(X)
    nb = _threads_for(params.threads, getattr(X, "max_block_nnz", X.nnz))
    old_threads = numba.get_num_threads()
    numba.set_num_threads(nb)
    try:
        return _fit(X, y, n_features, params, progress, log, class_cost, nb, on_iteration, warm_start, cut_form)
    finally:
        numba.set_num_threads(old_threads)


def _trace_iterations(monitor, X, y, params, class_cost):
    """The ``on_iteration`` of ``solve`` that hands ``monitor`` a snapshot of w_b."""
    lam, cost = params.resolved_lambda(X.n_rows), np.where(y > 0, class_cost[0], class_cost[1])

    def on_iteration(w_b, it, Q_D):
        monitor(lambda: linear_snapshot(X, y, w_b, 0.0, params.bias, lam, it, it, cost=cost, dual=Q_D * lam))
    return on_iteration


def _threads_for(threads, nnz):
    """The thread count (= block count) of a run: ``threads`` (default all
    cores), but no more than one per MIN_NNZ_PER_THREAD nonzeros, since on
    small problems the per-iteration cost of waking threads (eight
    parallel regions per iteration) outweighs the work."""
    want = threads or numba.config.NUMBA_NUM_THREADS
    want = min(int(want), numba.config.NUMBA_NUM_THREADS)
    return max(1, min(want, nnz // MIN_NNZ_PER_THREAD))


class LocalData:
    """The data side of an OCAS run on one machine (see ``solve``).

    Keeps the n-vectors ``out_b = X w_b``, ``out_d = X d``, the violator
    flags of the current and the previous cut point, line-search scratch,
    and the previous cut vector (for incremental cuts). The distributed
    engine (``svmtrain.distributed.ocas``) implements the same four
    methods over partitions held by Dask workers.
    """

    def __init__(self, X, y, cw, B, dim, nb):
        # a Chunk, or the blocks of a --stream run; a Chunk's values as
        # float32 when they all are (counts, 0/1): the two passes over the
        # rows an iteration read a third less, with the same numbers
        X = with_float32_values(as_source(X), FLOAT32_MIN_NNZ)
        n = X.n_rows
        self.X, self.y, self.cw, self.B, self.nb = X, y, cw, B, nb
        # large arrays by np.empty + fill: numpy madvises huge pages for its own
        # allocations but not for np.zeros (calloc), and first touches of 4 KiB
        # pages can cost more than the arithmetic done on them
        self.out_b = _zeros(n)
        self.out_d = _zeros(n)
        self.viol = _zeros(n, np.int8)
        self.prev = _zeros(n, np.int8)
        self.ls_t = np.empty(n)      # line-search scratch: breakpoints and their weights
        self.ls_w = np.empty(n)
        self.buf = np.empty((nb, dim)) if nb > 1 else np.empty((1, 1))
        self.a_cut = _zeros(dim)      # the last cut vector, the base of the next incremental one
        self.chain = 0
        self.nv = self.nch = 0

    def _outputs(self, w_d):
        """out_d = X w_d, block by block (one pass over the source)."""
        self.outputs_of(w_d, self.out_d)

    def outputs_of(self, w, out):
        """out = X w (with the constant feature B); returns out."""
        b = self.X.bounds
        for j, c in self.X.blocks():
            margins(c.indptr, c.indices, c.values, w, self.B, 0.0, out[b[j]:b[j + 1]])
        return out

    def cut_coefficients(self):
        """The last cut's coefficients over the rows, c_i y_i viol_i (a new
        array): the cut vector is their combination of the rows."""
        return self.cw * self.y * self.viol

    def combination(self, g, out):
        """out += sum_i g_i x_i (the constant feature B included; the rows
        with g_i = 0 are not read); returns out."""
        b = self.X.bounds
        ones = np.ones(self.X.n_rows)
        flags = (g != 0.0).astype(np.int8)
        for j, c in self.X.blocks():
            r = slice(b[j], b[j + 1])
            K.scatter_cut(c.indptr, c.indices, c.values, self.B, g[r], ones[r], flags[r], self.prev[r], False,
                          self.nb, self.buf, out)
        return out

    def start_at(self, w):
        """out_b = X w: the outputs of a starting point other than 0."""
        self._outputs(w)
        self.out_b[:] = self.out_d

    def line_search(self, w_b, w_d, qa, qb):
        """The exact minimiser t >= 0 of F(w_b + t w_d) (qa = |w_d|^2 > 0,
        qb = w_b.w_d); computes and keeps the outputs of w_d (w_d None:
        ``out_d`` already holds them)."""
        if w_d is not None:
            self._outputs(w_d)
        return K.line_search(self.y, self.cw, self.out_b, self.out_d, qa, qb, self.nb,
                             self.ls_t, self.ls_w)[0]

    def loss_at_end(self, w_b, w_d):
        """The loss at w_b + w_d (= w_c); computes and keeps the outputs of
        w_d (w_d None: ``out_d`` already holds them)."""
        if w_d is not None:
            self._outputs(w_d)
        return K.loss_at(self.y, self.cw, self.out_b, self.out_d, 1.0, self.nb)

    def move(self, t, mu):
        """w_b += t w_d (the outputs follow) and classify the next cut point
        w_b + mu (1 - t) w_d. Returns (loss at the new w_b, training errors,
        violators of the cut point, sum of their c_i)."""
        self.viol, self.prev = self.prev, self.viol
        loss, nerr, nv, bsum, nch = K.update_outputs(self.y, self.cw, self.out_b, self.out_d, t, mu,
                                                     self.viol, self.prev, self.nb)
        self.nv, self.nch = nv, nch
        return loss, nerr, nv, bsum

    def cut(self):
        """The cut vector a at the last cut point (an array owned by this
        object, valid until the next call): from scratch, or as the change
        from the previous cut when fewer rows changed than violate (added
        to the previous cut's vector in place)."""
        X, b = self.X, self.X.bounds
        a_new = self.a_cut
        delta = self.nch < self.nv and self.chain < DELTA_REFRESH
        if delta:
            self.chain += 1
        else:
            a_new[:] = 0.0
            self.chain = 0
        order = None
        if X.n_blocks > 1:     # streamed: blocks whose rows all have coefficient 0 are not read
            flags = (self.viol != self.prev) if delta else (self.viol != 0)
            order = np.flatnonzero(np.logical_or.reduceat(flags, b[:-1]))
            del flags
        # the rows to add hold about rows * nnz / n values (2 units each, as
        # PARALLEL_MIN_PASS counts): fewer, and the serial twin adds them on
        # the same blocks (the same numbers) without waking a thread
        rows = self.nch if delta else self.nv
        scatter = K.scatter_cut
        if 2 * rows * X.nnz < _opts.PARALLEL_MIN_PASS * max(1, X.n_rows):
            scatter = K.scatter_cut.serial
        for j, c in X.blocks(order):
            r = slice(b[j], b[j + 1])
            scatter(c.indptr, c.indices, c.values, self.B, self.y[r], self.cw[r], self.viol[r], self.prev[r], delta,
                    self.nb, self.buf, a_new)
        return a_new


def rows_pay(X, n_features):
    """Whether ``fit`` keeps the cuts as rows over the examples (RowForm):
    for data in memory (one block) with more than twice as many features
    as rows, where a cut's two n-vectors are shorter than its dense d-vector
    and O(k n) work per iteration is less than O(k d)."""
    X = as_source(X)
    return X.n_blocks == 1 and 2 * X.n_rows < n_features + 1


def switch_pays(cut_nnz, active, n, dim, nnz):
    """Whether RowForm's work per iteration over the k stored cuts (touching
    ``cut_nnz`` features each; ``active``: alpha_j > 0) exceeds SWITCH_MARGIN
    times DenseForm's: k n for the new cut's Gram row and 2 n per active
    cut for the combination, against min(nnz_j, dim) per cut for the Gram
    row and per active cut for the combination (sparse cuts), nnz for the
    data pass that gives the outputs of w_d, and four passes over the
    d-vectors."""
    k = len(cut_nnz)
    touched = np.minimum(cut_nnz, dim)
    dense = int(touched.sum()) + int(touched[active].sum()) + nnz + 4 * dim
    return SWITCH_MARGIN * dense < (k + 2 * int(np.count_nonzero(active))) * n


def _fit(X, y, n_features, params, progress, log, class_cost, nb, on_iteration=None, warm_start=None,
         cut_form=None):
    t0 = time.perf_counter()
    n = X.n_rows
    dim = n_features + 1
    C = params.resolved_C(n)
    if n == 0:
        return FitResult(w=finish_w(_zeros(dim), params), n_iter=0, objective=0.0, converged=True,
                         info={"Q_P": 0.0, "Q_D": 0.0, "gap_rel": 0.0, "n_cuts": 0,
                               "history": [], "exit": EXIT_EMPTY})
    cw = np.where(y > 0, C * float(class_cost[0]), C * float(class_cost[1]))
    data = LocalData(X, y, cw, kernel_bias(params), dim, nb)
    if cut_form not in (None, "dense", "rows"):
        raise ValueError(f"cut_form must be dense or rows (got {cut_form})")
    auto = cut_form is None
    if auto:
        cut_form = "rows" if rows_pay(X, n_features) else "dense"
    if cut_form == "rows" and X.n_blocks != 1:
        raise ValueError("cut_form rows needs the data in memory")
    form = RowForm(data, n, dim, _cut_limit(params), nb, switch=auto) if cut_form == "rows" else None
    return solve(data, n, dim, params, progress, log, nb, t0, on_iteration, warm_start, form)


def solve(data, n, dim, params, progress=None, log=None, nb=1, t0=None, on_iteration=None, warm_start=None,
          form=None):
    """The OCAS (or cutting-plane) master loop over ``data``, a LocalData or
    any object with its methods (line_search, loss_at_end, move, cut).
    ``on_iteration(w_b, it, Q_D)``, if given, is called after every iteration.
    ``form`` holds the cuts and the points w_b, w_c: a DenseForm over
    ``data`` (the default), a RowForm, or any object with their methods;
    after each cut a form with a ``next_form()`` method is replaced by what
    it returns (a RowForm hands over to a DenseForm there).

    ``warm_start``: a dict owned by the caller for a path of C values on the
    same rows (``-C``): when it holds ``"w"`` (a solution at another C, the
    constant feature's weight last) the first best point and first cut are
    there instead of at 0 (``data.start_at``); any starting point keeps
    OCAS's guarantees (Q_P is F at the point reached, Q_D a lower bound).
    On return it holds this run's w.

    ``n`` rows (n > 0), weight vectors of length ``dim``; ``nb`` blocks for
    the O(k dim) kernels of the cut buffer. Returns a FitResult whose
    objective is Q_P / (n C) (the lambda form).
    """
    t0 = time.perf_counter() if t0 is None else t0
    lim = _Limits(params)
    mu = MU if params.ocas_method == "ocas" else 1.0
    form = DenseForm(data, dim, _cut_limit(params), nb) if form is None else form
    cuts = form.cuts
    Q_P, history = _iteration_zero(data, form, warm_start, t0, n, log)
    Q_D = 0.0
    gap_prev = Q_P

    it = 0
    exit_reason = EXIT_MAXITER
    converged = False
    qp_steps_total = 0
    switched_at = None          # the iteration after which a RowForm turned dense
    while True:
        it += 1
        neg_f, steps, active = _reduced_dual(cuts, it, Q_P, gap_prev, lim, getattr(form, "reduced_qp", QP_EXACT))
        qp_steps_total += steps
        Q_D = max(Q_D, neg_f)
        Q_P, nerr, nv, bsum = _move(data, form, params.ocas_method, mu, Q_P)
        gap = Q_P - Q_D
        gap_prev = gap
        elapsed = time.perf_counter() - t0
        history.append((it, elapsed, Q_P, Q_D))
        if log is not None:
            log(_line(it, elapsed, Q_P, Q_D, int(active.sum()), nerr, nv, n))
        if progress is not None:
            progress(it, lim.max_iter, f"gap {gap / abs(Q_P) if Q_P else 0.0:.2e} (stop at {lim.eps:g})")
        if on_iteration is not None:
            on_iteration(form.w(), it, Q_D)
        exit_reason, converged = _exit(gap, Q_P, elapsed, it, lim)
        if exit_reason is not None:
            break
        if not form.add_cut(bsum, it):
            exit_reason = EXIT_CUTBUFFER
            break
        following = form.next_form() if hasattr(form, "next_form") else form
        if following is not form:
            switched_at = it
        form, cuts = following, following.cuts
    loop = {"qp_steps": qp_steps_total, "threads": nb, "history": history, "exit": exit_reason,
            "cut_form": "rows" if isinstance(form, RowForm) else "dense", "switched_at": switched_at}
    return _result(form, warm_start, params, n, it, converged, Q_P, Q_D, loop, t0)


class _Limits:
    """solve's stopping settings (eps, tol_abs, qp_bound, max_iter, max_time), svmocas's defaults filled in."""

    def __init__(self, params):
        self.eps = DEFAULT_EPS if params.eps is None else float(params.eps)
        self.tol_abs = float(params.tol_abs)
        self.qp_bound = float(params.qp_bound)
        self.max_iter = params.max_iter or DEFAULT_MAX_ITER
        self.max_time = params.max_time if params.max_time is not None else math.inf


def _iteration_zero(data, form, warm_start, t0, n, log):
    """(Q_P, history) at w_b = 0 or the warm start, logged, with the first cut taken there added to ``form``."""
    wb_sq = 0.0
    if warm_start is not None and "w" in warm_start:
        wb_sq = form.start_at(warm_start["w"])
    loss, nerr, nv, bsum = data.move(0.0, 0.0)
    Q_P = 0.5 * wb_sq + loss
    Q_D = 0.0
    history = [(0, time.perf_counter() - t0, Q_P, Q_D)]
    if log is not None:
        log(_line(0, history[-1][1], Q_P, Q_D, 0, nerr, nv, n))
    form.add_cut(bsum, 0)
    return Q_P, history


def _reduced_dual(cuts, it, Q_P, gap_prev, lim, rule=QP_EXACT):
    """(-f, QP steps, active mask): the reduced dual solved warm from
    ``cuts.alpha`` by ``rule`` (QP_EXACT or QP_LIBOCAS); active cuts stamped
    ``it``. Either way every alpha is feasible, so -f is a lower bound on
    the objective."""
    k = cuts.k
    max_steps = max(100000, 1000 * k)
    if rule == QP_LIBOCAS:      # (half of --tol-abs too: a tiny -e with a TolAbs stop must not crawl)
        f, qgap, steps, _ = K.qp_simplex(cuts.H, cuts.b, cuts.alpha, k, 1.0, 0.5 * lim.tol_abs, 0.5 * lim.eps,
                                         max_steps, 0, False)
    else:
        tol_qp = QP_TOL * min(max(lim.eps * abs(Q_P), lim.tol_abs), gap_prev) if gap_prev > 0 else 0.0
        f, qgap, steps, _ = K.qp_simplex(cuts.H, cuts.b, cuts.alpha, k, 1.0, tol_qp, 0.0, max_steps, 3 * k + 50,
                                         True)
    active = cuts.alpha[:k] > 0.0
    cuts.last_active[:k][active] = it
    return -f, steps, active


def _move(data, form, method, mu, Q_P):
    """(Q_P, errors, violators, cut offset) after w_b moves towards w_c (line search, or cp's all-or-nothing)."""
    scc, qa, qb = form.combine()
    if method == "ocas":
        t = form.line_search(qa, qb) if qa > 0.0 else 0.0
    else:
        F_c = 0.5 * scc + form.loss_at_end()
        t = 1.0 if F_c < Q_P else 0.0
    loss, nerr, nv, bsum = data.move(t, mu)
    return 0.5 * form.moved(t, scc) + loss, nerr, nv, bsum


def _exit(gap, Q_P, elapsed, it, lim):
    """(exit reason, or None to go on; converged): svmocas's stopping tests, in its order."""
    if gap <= lim.eps * abs(Q_P):
        return EXIT_TOLREL, True
    if gap <= lim.tol_abs:
        return EXIT_TOLABS, True
    if Q_P <= lim.qp_bound:
        return EXIT_QPBOUND, True
    if elapsed >= lim.max_time:
        return EXIT_MAXTIME, False
    if it >= lim.max_iter:
        return EXIT_MAXITER, False
    return None, False


def _result(form, warm_start, params, n, it, converged, Q_P, Q_D, loop, t0):
    """The FitResult at the final w_b (also left in ``warm_start``), objective Q_P / (n C), info in solve's order."""
    cuts = form.cuts
    w_b = form.w()
    if warm_start is not None:
        warm_start["w"] = w_b.copy()
    k = cuts.k
    info = {
        "Q_P": Q_P,
        "Q_D": Q_D,
        "gap_rel": (Q_P - Q_D) / abs(Q_P) if Q_P != 0 else 0.0,
        "n_cuts": int(k),
        "n_active": int((cuts.alpha[:k] > 0).sum()),
        "cuts_dropped": cuts.n_dropped,
        "cuts_merged": cuts.n_merged,
        **loop,
        "time": time.perf_counter() - t0,
    }
    return FitResult(w=finish_w(w_b.copy(), params), n_iter=it, objective=Q_P / (n * params.resolved_C(n)),
                     converged=converged, info=info)


def _cut_limit(params):
    return params.cut_buffer or 2000


def _line(it, tim, Q_P, Q_D, nza, nerr, nviol, n):
    rel = (Q_P - Q_D) / abs(Q_P) if Q_P != 0 else 0.0
    return (f"{it:4d}: tim={tim:.3f}, Q_P={Q_P:.6f}, Q_D={Q_D:.6f}, Q_P-Q_D={Q_P - Q_D:.6f}, "
            f"(Q_P-Q_D)/|Q_P|={rel:.6f}, nza={nza:4d}, err={100.0 * nerr / n:.2f}%, viol={nviol}")
