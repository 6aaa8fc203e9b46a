"""``-s ocas``: the Optimized Cutting Plane Algorithm (Franc & Sonnenburg 2008).

Minimises, in C-form as svmocas does,

    F(w) = 1/2 |w|^2 + sum_i c_i max(0, 1 - y_i w.x_i),   c_i = C * class cost,

(the lambda form of FitResult.objective is F / (n C)) by cutting planes.
A cut taken at a point w is ``R(v) >= b - a.v`` with
``a = sum_{i viol} c_i y_i x_i``, ``b = sum_{i viol} c_i`` over the margin
violators at w. The reduced problem (regulariser + max(0, max over cuts))
is solved in its dual, max ``b.alpha - 1/2 alpha'H alpha`` over
``alpha >= 0, sum alpha <= 1`` (H = Gram matrix of the cuts, kept and
extended by one row per cut), by ``_ocas_kernels.qp_simplex``; it gives
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

Everything per example or per feature is a numba kernel in
``_ocas_kernels``; this loop does O(1) Python work per iteration.
``params.threads`` sets numba's thread count for the call (restored after);
the kernels split their ranges into one block per thread and sum partial
results in block order, so a run is reproducible for a given thread count.

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

from ..errors import ParameterError
from . import _ocas_kernels as K
from ._common import margins
from .base import FitResult, finish_w, kernel_bias
from ..trace import linear_snapshot

DEFAULT_EPS = 0.01
DEFAULT_MAX_ITER = 100000
MU = 0.1                 # cut point: (1 - MU) w_b + MU w_c
QP_TOL = 1e-4            # reduced-QP duality gap <= QP_TOL * min(eps |Q_P|, Q_P - Q_D)
CUT_RESERVE_BYTES = 2 << 30  # initial address space reserved for the cut buffer
MIN_NNZ_PER_THREAD = 50000  # small problems use fewer threads (see _threads_for)
DELTA_REFRESH = 32       # recompute a cut from scratch after this many incremental ones

EXIT_TOLREL = "TolRel"
EXIT_TOLABS = "TolAbs"
EXIT_QPBOUND = "QPBound"
EXIT_MAXTIME = "MaxTime"
EXIT_MAXITER = "MaxIter"
EXIT_EMPTY = "EmptyData"


class _Cuts:
    """The cut buffer: vectors A[j], offsets b[j], Gram matrix H, duals alpha."""

    def __init__(self, dim, limit, nb):
        self.dim = dim
        self.limit = limit
        self.nb = nb
        # np.empty reserves address space only (pages are touched row by
        # row as cuts arrive, as huge pages where numpy can madvise them),
        # so start with room for up to 2 GiB of cuts and grow rarely
        self.cap = min(limit, max(2, CUT_RESERVE_BYTES // (8 * dim)))
        self.k = 0
        self.A = np.empty((self.cap, dim))
        self.H = np.zeros((self.cap, self.cap))
        self.b = np.zeros(self.cap)
        self.alpha = np.zeros(self.cap)
        self.last_active = np.zeros(self.cap, np.int64)
        self.born = np.zeros(self.cap, np.int64)
        self.hrow = np.zeros(self.cap)
        self.n_dropped = 0
        self.n_merged = 0

    def _grow(self):
        cap = min(self.limit, 2 * self.cap)
        k = self.k
        A = np.empty((cap, self.dim))
        A[:k] = self.A[:k]
        H = np.zeros((cap, cap))
        H[:k, :k] = self.H[:k, :k]
        self.A, self.H = A, H
        for name in ("b", "alpha", "last_active", "born", "hrow"):
            old = getattr(self, name)
            new = np.zeros(cap, old.dtype)
            new[:k] = old[:k]
            setattr(self, name, new)
        self.cap = cap

    def _free_slot(self):
        """A slot for a new cut; frees one when the buffer is full."""
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
        self.A[i] *= ti
        K.axpy_sqnorm(self.A[i], tj, self.A[j], self.nb)
        self.b[i] = ti * self.b[i] + tj * self.b[j]
        self.alpha[i] = s
        self.born[i] = min(self.born[i], self.born[j])
        self.n_merged += 1
        return j

    def add(self, a, bval, it):
        slot = self._free_slot()
        k = self.k
        self.b[slot] = bval
        self.alpha[slot] = 0.0
        self.last_active[slot] = it
        self.born[slot] = it
        K.gram_row(self.A, k, slot, a, self.nb, self.hrow)
        self.H[slot, :k] = self.hrow[:k]
        self.H[:k, slot] = self.hrow[:k]


def _zeros(shape, dtype=np.float64):
    a = np.empty(shape, dtype)
    a.fill(0)
    return a


def _check(X, y, n_features, params, class_cost):
    if params.unreg_bias:
        raise ParameterError("-R is not supported by -s ocas; use -B")
    if params.loss != "hinge":
        raise ParameterError(f"-s ocas supports only --loss hinge (got {params.loss})")
    if params.cut_buffer is not None and params.cut_buffer < 2:
        raise ParameterError("--cut-buffer must be at least 2 for -s ocas")
    if params.ocas_method not in ("ocas", "cp"):
        raise ParameterError(f"--ocas-method must be ocas or cp (got {params.ocas_method})")
    if len(y) != X.n_rows:
        raise ValueError("y and X have different numbers of rows")
    if X.nnz and int(X.indices.max()) >= n_features:
        raise ValueError("feature index beyond n_features")
    if not all(c > 0 and math.isfinite(c) for c in class_cost):
        raise ParameterError(f"class costs must be > 0 (got {class_cost})")


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None):
    """Train one binary linear SVM (hinge loss) by OCAS; see the module doc."""
    _check(X, y, n_features, params, class_cost)
    nb = _threads_for(params.threads, X.nnz)
    old_threads = numba.get_num_threads()
    numba.set_num_threads(nb)
    try:
        return _fit(X, np.ascontiguousarray(y, np.float64), n_features, params,
                    progress, log, class_cost, nb, monitor)
    finally:
        numba.set_num_threads(old_threads)


def _threads_for(threads, nnz):
    """The thread count (= block count) of a run: ``threads`` (default all
    cores), but no more than one per MIN_NNZ_PER_THREAD nonzeros, since on
    small problems the per-iteration cost of waking threads (eight
    parallel regions per iteration) outweighs the work."""
    want = threads or numba.config.NUMBA_NUM_THREADS
    want = min(int(want), numba.config.NUMBA_NUM_THREADS)
    return max(1, min(want, nnz // MIN_NNZ_PER_THREAD))


def _fit(X, y, n_features, params, progress, log, class_cost, nb, monitor=None):
    t0 = time.perf_counter()
    n = X.n_rows
    dim = n_features + 1
    B = kernel_bias(params)
    C = params.resolved_C(n)
    eps = DEFAULT_EPS if params.eps is None else float(params.eps)
    tol_abs = float(params.tol_abs)
    qp_bound = float(params.qp_bound)
    max_iter = params.max_iter or DEFAULT_MAX_ITER
    max_time = params.max_time if params.max_time is not None else math.inf
    cut_limit = params.cut_buffer or 2000
    method = params.ocas_method
    mu = MU if method == "ocas" else 1.0

    w_b = _zeros(dim)
    if n == 0:
        return FitResult(w=finish_w(w_b, params), n_iter=0, objective=0.0, converged=True,
                         info={"Q_P": 0.0, "Q_D": 0.0, "gap_rel": 0.0, "n_cuts": 0,
                               "history": [], "exit": EXIT_EMPTY})

    indptr, indices, values = X.indptr, X.indices, X.values
    cw = np.where(y > 0, C * float(class_cost[0]), C * float(class_cost[1]))
    # large arrays by np.empty + fill: numpy madvises huge pages for its own
    # allocations but not for np.zeros (calloc), and first touches of 4 KiB
    # pages can cost more than the arithmetic done on them
    out_b = _zeros(n)
    out_d = _zeros(n)
    viol = _zeros(n, np.int8)
    prev = _zeros(n, np.int8)
    ls_t = np.empty(n)      # line-search scratch: breakpoints and their weights
    ls_w = np.empty(n)
    buf = np.empty((nb, dim)) if nb > 1 else np.empty((1, 1))
    w_c = _zeros(dim)
    w_d = _zeros(dim)
    a_new = _zeros(dim)
    a_prev = _zeros(dim)
    cuts = _Cuts(dim, cut_limit, nb)

    # iteration 0: w_b = 0; every example violates; first cut at 0
    loss, nerr, nv, bsum, nch = K.update_outputs(y, cw, out_b, out_d, 0.0, 0.0, viol, prev, nb)
    Q_P = loss
    Q_D = 0.0
    history = [(0, time.perf_counter() - t0, Q_P, Q_D)]
    if log is not None:
        log(_line(0, history[-1][1], Q_P, Q_D, 0, nerr, nv, n))
    K.scatter_cut(indptr, indices, values, B, y, cw, viol, prev, False, nb, buf, a_new)
    cuts.add(a_new, bsum, 0)
    a_prev, a_new = a_new, a_prev
    chain = 0
    gap_prev = Q_P

    it = 0
    exit_reason = EXIT_MAXITER
    converged = False
    qp_steps_total = 0
    while True:
        it += 1
        k = cuts.k
        tol_qp = QP_TOL * min(eps * abs(Q_P), gap_prev) if gap_prev > 0 else 0.0
        f, qgap, steps, _ = K.qp_simplex(cuts.H, cuts.b, cuts.alpha, k, 1.0,
                                         tol_qp, 0.0, max(100000, 1000 * k), 3 * k + 50)
        qp_steps_total += steps
        Q_D = max(Q_D, -f)
        active = cuts.alpha[:k] > 0.0
        cuts.last_active[:k][active] = it
        scc, qa, qb = K.combine_cuts(cuts.A, cuts.alpha, k, w_b, w_c, w_d, nb)
        margins(indptr, indices, values, w_d, B, 0.0, out_d)
        if method == "ocas":
            t = K.line_search(y, cw, out_b, out_d, qa, qb, nb, ls_t, ls_w)[0] if qa > 0.0 else 0.0
        else:
            F_c = 0.5 * scc + K.loss_at(y, cw, out_b, out_d, 1.0, nb)
            t = 1.0 if F_c < Q_P else 0.0
        viol, prev = prev, viol
        loss, nerr, nv, bsum, nch = K.update_outputs(y, cw, out_b, out_d, t, mu, viol, prev, nb)
        if t == 1.0:
            w_b[:] = w_c
            Q_P = 0.5 * scc + loss
        else:
            Q_P = 0.5 * K.axpy_sqnorm(w_b, t, w_d, nb) + loss
        gap = Q_P - Q_D
        gap_prev = gap
        elapsed = time.perf_counter() - t0
        history.append((it, elapsed, Q_P, Q_D))
        if log is not None:
            log(_line(it, elapsed, Q_P, Q_D, int(active.sum()), nerr, nv, n))
        if progress is not None:
            progress(it, max_iter)
        if monitor is not None:
            monitor(lambda: linear_snapshot(X, y, w_b, 0.0, params.bias, params.resolved_lambda(n), it, it,
                                            cost=np.where(y > 0, class_cost[0], class_cost[1]), dual=Q_D / (n * C)))
        if gap <= eps * abs(Q_P):
            exit_reason, converged = EXIT_TOLREL, True
        elif gap <= tol_abs:
            exit_reason, converged = EXIT_TOLABS, True
        elif Q_P <= qp_bound:
            exit_reason, converged = EXIT_QPBOUND, True
        elif elapsed >= max_time:
            exit_reason = EXIT_MAXTIME
        elif it >= max_iter:
            exit_reason = EXIT_MAXITER
        else:
            exit_reason = None
        if exit_reason is not None:
            break
        # the next cut, from scratch or as a change of the previous one
        if nch < nv and chain < DELTA_REFRESH:
            a_new[:] = a_prev
            K.scatter_cut(indptr, indices, values, B, y, cw, viol, prev, True, nb, buf, a_new)
            chain += 1
        else:
            a_new[:] = 0.0
            K.scatter_cut(indptr, indices, values, B, y, cw, viol, prev, False, nb, buf, a_new)
            chain = 0
        cuts.add(a_new, bsum, it)
        a_prev, a_new = a_new, a_prev

    k = cuts.k
    info = {
        "Q_P": Q_P,
        "Q_D": Q_D,
        "gap_rel": (Q_P - Q_D) / abs(Q_P) if Q_P != 0 else 0.0,
        "n_cuts": int(k),
        "n_active": int((cuts.alpha[:k] > 0).sum()),
        "cuts_dropped": cuts.n_dropped,
        "cuts_merged": cuts.n_merged,
        "qp_steps": qp_steps_total,
        "threads": nb,
        "history": history,
        "exit": exit_reason,
        "time": time.perf_counter() - t0,
    }
    return FitResult(w=finish_w(w_b.copy(), params), n_iter=it, objective=Q_P / (n * C),
                     converged=converged, info=info)


def _line(it, tim, Q_P, Q_D, nza, nerr, nviol, n):
    rel = (Q_P - Q_D) / abs(Q_P) if Q_P != 0 else 0.0
    return (f"{it:4d}: tim={tim:.3f}, Q_P={Q_P:.6f}, Q_D={Q_D:.6f}, Q_P-Q_D={Q_P - Q_D:.6f}, "
            f"(Q_P-Q_D)/|Q_P|={rel:.6f}, nza={nza:4d}, err={100.0 * nerr / n:.2f}%, viol={nviol}")
