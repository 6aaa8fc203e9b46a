"""``-s ocas``: the Optimized Cutting Plane Algorithm (Franc & Sonnenburg 2008).

Minimises, in C-form as svmocas does,

    F(w) = 1/2 |w|^2 + sum_i c_i max(0, 1 - y_i w.x_i),   c_i = C * class cost,

by cutting planes. The risk is bounded below by cuts ``b_j - a_j.w``
taken at earlier points; the reduced problem (regulariser + max over the
cuts) is solved exactly in its dual by ``qp_simplex`` and gives ``w_c``
and the lower bound ``Q_D``. OCAS then line-searches exactly between the
best point so far ``w_b`` and ``w_c`` (``Q_P = F(w_b)``, the upper bound)
and takes the next cut at ``(1 - mu) w_b + mu w_c`` with mu = 0.1. With
``params.ocas_method == "cp"`` it is the plain cutting-plane method
(BMRM / SVMperf): the next cut is taken at ``w_c`` and ``w_b`` is only the
best iterate seen.

The master loop below is per iteration; everything per example or per
feature is a numba kernel in ``_ocas_kernels`` (two passes over the data
per iteration: the outputs of ``w_c`` and the new cut).

Stopping (as svmocas): Q_P - Q_D <= eps |Q_P| (``params.eps``, default
0.01), Q_P - Q_D <= TolAbs (``params.tol_abs`` if the field exists,
default 0), Q_P <= QPBound (``params.qp_bound`` if it exists, default 0),
``params.max_time`` seconds, ``params.max_iter`` iterations.

When the cut buffer (``params.cut_buffer``) is full the new cut replaces
the cut that has been inactive (alpha = 0) the longest; when every cut is
active, the two oldest cuts are merged into their alpha-weighted average
(a valid cut that keeps the current reduced solution), so the method goes
on instead of stopping as svmocas does.
"""
import math
import time

import numba
import numpy as np

from ..errors import ParameterError
from . import _ocas_kernels as K
from ._common import margins
from .base import FitResult, finish_w, kernel_bias

DEFAULT_EPS = 0.01
DEFAULT_MAX_ITER = 100000
MU = 0.1                 # cut point: (1 - MU) w_b + MU w_c
QP_TOL_REL = 1e-2        # reduced-QP gap <= QP_TOL_REL * eps * |Q_D|
QP_TOL_GAP = 1e-3        # ... or <= QP_TOL_GAP * (Q_P - Q_D) of the last iteration
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
        self.cap = min(limit, 32)
        self.k = 0
        self.A = np.zeros((self.cap, dim))
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
        A = np.zeros((cap, self.dim))
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
        self.A[i] = ti * self.A[i] + tj * self.A[j]
        self.b[i] = ti * self.b[i] + tj * self.b[j]
        self.alpha[i] = s
        self.born[i] = min(self.born[i], self.born[j])
        self.n_merged += 1
        return j

    def add(self, a, bval, it):
        slot = self._free_slot()
        k = self.k
        self.A[slot] = a
        self.b[slot] = bval
        self.alpha[slot] = 0.0
        self.last_active[slot] = it
        self.born[slot] = it
        aa = K.gram_row(self.A, k, self.A[slot], self.nb, self.hrow)
        self.hrow[slot] = aa
        self.H[slot, :k] = self.hrow[:k]
        self.H[:k, slot] = self.hrow[:k]


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


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0)):
    """Train one binary linear SVM (hinge loss) by OCAS; see the module doc."""
    _check(X, y, n_features, params, class_cost)
    old_threads = numba.get_num_threads()
    want = params.threads or numba.config.NUMBA_NUM_THREADS
    want = max(1, min(int(want), numba.config.NUMBA_NUM_THREADS))
    numba.set_num_threads(want)
    try:
        return _fit(X, np.ascontiguousarray(y, np.float64), n_features, params,
                    progress, log, class_cost, want)
    finally:
        numba.set_num_threads(old_threads)


def _fit(X, y, n_features, params, progress, log, class_cost, nb):
    t0 = time.perf_counter()
    n = X.n_rows
    dim = n_features + 1
    B = kernel_bias(params)
    C = params.resolved_C(n)
    eps = DEFAULT_EPS if params.eps is None else float(params.eps)
    tol_abs = float(getattr(params, "tol_abs", None) or 0.0)
    qp_bound = float(getattr(params, "qp_bound", None) or 0.0)
    max_iter = params.max_iter or DEFAULT_MAX_ITER
    max_time = params.max_time if params.max_time is not None else math.inf
    cut_limit = params.cut_buffer or 2000
    method = params.ocas_method
    mu = MU if method == "ocas" else 1.0

    w_b = np.zeros(dim)
    if n == 0:
        return FitResult(w=finish_w(w_b, params), n_iter=0, objective=0.0, converged=True,
                         info={"Q_P": 0.0, "Q_D": 0.0, "gap_rel": 0.0, "n_cuts": 0,
                               "history": [], "exit": EXIT_EMPTY})

    indptr, indices, values = X.indptr, X.indices, X.values
    cw = np.where(y > 0, C * float(class_cost[0]), C * float(class_cost[1]))
    out_b = np.zeros(n)
    out_c = np.zeros(n)
    viol = np.zeros(n, np.int8)
    prev = np.zeros(n, np.int8)
    kb = np.empty(n)
    wb = np.empty(n)
    buf = np.empty((nb, dim)) if nb > 1 else np.empty((1, 1))
    w_c = np.zeros(dim)
    a_new = np.zeros(dim)
    a_prev = np.zeros(dim)
    cuts = _Cuts(dim, cut_limit, nb)

    # iteration 0: w_b = 0; every example violates; first cut at 0
    loss, nerr, nv, bsum, nch = K.update_outputs(y, cw, out_b, out_c, 0.0, 0.0, viol, prev, nb)
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
        tol_qp = max(QP_TOL_REL * eps * abs(Q_D), 0.0)
        tol_qp = min(tol_qp, QP_TOL_GAP * gap_prev) if gap_prev > 0 else tol_qp
        f, qgap, steps, _ = K.qp_simplex(cuts.H, cuts.b, cuts.alpha, k, 1.0,
                                         tol_qp, 0.0, max(100000, 1000 * k))
        qp_steps_total += steps
        Q_D = max(Q_D, -f)
        active = cuts.alpha[:k] > 0.0
        cuts.last_active[:k][active] = it
        scc, scb, sbb = K.combine_cuts(cuts.A, cuts.alpha, k, w_b, w_c, nb)
        margins(indptr, indices, values, w_c, B, 0.0, out_c)
        if method == "ocas":
            qa = scc - 2.0 * scb + sbb
            qb = scb - sbb
            t = K.line_search(y, cw, out_b, out_c, qa, qb, nb, kb, wb)[0] if qa > 0.0 else 0.0
        else:
            F_c = 0.5 * scc + K.loss_at(y, cw, out_b, out_c, 1.0, nb)
            t = 1.0 if F_c < Q_P else 0.0
        viol, prev = prev, viol
        loss, nerr, nv, bsum, nch = K.update_outputs(y, cw, out_b, out_c, t, mu, viol, prev, nb)
        if t != 0.0:
            w_b *= 1.0 - t
            w_b += t * w_c
        Q_P = 0.5 * float(w_b @ w_b) + loss
        gap = Q_P - Q_D
        gap_prev = gap
        elapsed = time.perf_counter() - t0
        history.append((it, elapsed, Q_P, Q_D))
        if log is not None:
            log(_line(it, elapsed, Q_P, Q_D, int(active.sum()), nerr, nv, n))
        if progress is not None:
            progress(it, max_iter)
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
