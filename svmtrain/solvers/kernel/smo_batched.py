"""``-s smo --working-set Q``: the batched working-set decomposition of
ThunderSVM (Wen, Shi, He, JMLR MLOSS 2018) and oneDAL's ``thunder``
method, on the same dual as ``-s smo``'s pair steps (signs y, bounds C,
linear term p, data row index[t] of each variable: C-SVC, epsilon-SVR and
one-class alike).

Each round selects Q variables, half the most violating of I_up and half
of I_low by y G (LIBSVM's sets; the members kept from the previous round
are skipped), keeping the Q/2 members that joined last round (first in,
first out); fetches the members' kernel rows through the shared row
cache (one fetch a round: its missing rows are computed together); forms
the Q x Q block of their kernel values (gathered from the cached rows, or,
on long data of short rows, computed from the data: ``computes_block``);
runs LIBSVM's pair steps (second-order selection, clipping) on the block until the
local violation is below max(eps, FRAC x its start value) or after
INNER_STEPS x Q steps; then updates the gradient of every variable with
the members' alpha changes (one parallel pass over their cached rows). It
stops when LIBSVM's rule holds over all variables (m(alpha) - M(alpha) <
eps); rho and ``obj`` are computed as the pair method computes them. The
kernels are in ``_smo_batched_kernels``.
"""
import time

import numpy as np

from ..._numba import options as opts
from ...mercer.cache import fetch, fetch_serial
from ...mercer.functions import PRECOMPUTED
from . import _smo_batched_kernels as KB
from . import _smo_kernels as K
from ..base import FitResult
from .sbp import threads
from .smo_dual import dual_arrays, step_cap

FRAC = 0.1              # inner stopping: local violation < max(eps, FRAC * its start value)
INNER_STEPS = 100       # inner step cap: INNER_STEPS * Q (ThunderSVM's)
D_BUDGET = 32 << 20     # bytes of the dense batch D[feature, b] of one row fetch
ROWS_PER_FETCH = 64     # missing rows computed together (a9a: 0.25 ms a row at 32-64, 0.6 ms at 1024)
BLOCK_MAX_NNZ = 16     # compute_block from here down (stored values a row; see computes_block)
BLOCK_MIN_ROWS = 25_000    # (measured on the sensor set: 20,000 rows gathered 10 % faster, 49,990 computed 30 %)
MIN_Q = 8               # a smaller working set (tiny cache) falls back to the pair steps


def plan(n_vars, n_rows, n_features, q, cache_mb, slots=None):
    """(working-set size, rows per fetch) for ``q`` requested: at most the
    variables, even, and at most the cache's rows (all members' rows must
    be resident at once: ``slots``, or what ``cache_mb`` holds); 0 when
    that leaves fewer than MIN_Q."""
    if slots is None:
        per_row = 4 * max(n_rows, 1)
        slots = max(min(int(cache_mb * (1 << 20)) // per_row, n_rows), 1)
    q = min(int(q), n_vars, slots)
    q -= q % 2
    if q < MIN_Q:
        return 0, 0
    return q, min(q, rows_per_fetch(n_features))


def rows_per_fetch(n_features):
    """The most missing rows one fetch computes together over data of ``n_features``."""
    return int(max(1, min(ROWS_PER_FETCH, D_BUDGET // (8 * max(int(n_features), 1)))))


def computes_block(X, cache):
    """Whether a round computes the new members' kernel block from the data
    (``compute_block``) rather than gathering it from their cached rows
    (``gather_block``); the same bits either way. Computing pays where rows
    are short (at most BLOCK_MAX_NNZ stored values on average) and the
    cached rows long (at least BLOCK_MIN_ROWS data rows, so that reading a
    member's row at the members' places misses the CPU's caches); not for
    a precomputed kernel, whose values are the data."""
    return (cache.kernel.code != PRECOMPUTED and X.n_rows >= BLOCK_MIN_ROWS
            and X.nnz <= BLOCK_MAX_NNZ * X.n_rows)


def solve(X, y, C, p, kernel, params, q, alpha=None, index=None, progress=None, n_features=None, cache=None,
          point=None):
    """The dual of :func:`svmtrain.solvers.kernel.smo.solve` by rounds of ``q``
    variables (module doc; ``cache`` and ``point`` as there: a point's G is
    used when known, its G_bar is not kept). Returns (alpha, rho,
    FitResult), or None when the cache cannot hold a working set of MIN_Q
    rows (the caller then takes the pair steps)."""
    t0 = time.perf_counter()
    n = len(y)
    d = max(X.n_features if n_features is None else int(n_features), 1)
    q, batch = plan(n, X.n_rows, d, q, params.cache_mb, None if cache is None else cache.slots)
    if q == 0:
        return None
    if cache is not None:
        batch = min(batch, cache.max_batch)
    y, C, p, index, alpha, cache, QD, G = dual_arrays(X, y, C, p, kernel, params, alpha, index, n_features, batch,
                                                      cache)
    eps = float(params.eps)
    max_iter = step_cap(params, n)
    parallel = X.nnz >= opts.PARALLEL_MIN_NNZ
    blk = _Block(X, n, q, batch, cache, parallel, index)
    ws = blk.ws
    half = q // 2
    start = 0
    steps = rounds = 0
    optimal = False
    gap = np.inf
    phase = np.zeros(5)     # seconds in: selection, rows, inner SMO, gradient update, the block
    clock = time.perf_counter
    with threads(params):
        if point is not None and point.G is not None:
            G[:] = point.G
        elif np.any(alpha != 0.0):
            start_gradient = K.initial_gradient if parallel else K.initial_gradient_serial
            start_gradient(y, C, p, index, alpha, G, np.zeros(n), *blk.args)
        while True:
            c0 = clock()
            gap = KB.select_working_set(y, C, alpha, G, blk.flag, ws, start, blk.key)
            c1 = clock()
            phase[0] += c1 - c0
            if not gap >= eps:
                optimal = True
                break
            if steps >= max_iter:
                break
            taken = blk.round(y, C, alpha, G, QD, index, start, eps, min(INNER_STEPS * q, max_iter - steps),
                              phase, c1)
            blk.demote_unused(alpha, index, q - half)
            steps += taken
            rounds += 1
            if taken == 0:      # (cannot happen while the global pair violates: it is in the set)
                break
            ws[:half] = ws[q - half:]
            start = half
            if progress is not None and rounds % 16 == 0:
                progress(int(min(steps, max_iter)), max_iter, f"{rounds} rounds, {steps} steps, gap {gap:.3g}")
    if point is not None:
        point.alpha, point.G, point.G_bar = alpha, (G if optimal else None), None
    loop = {"working_set": q, "rounds": rounds, "gap": float(gap)}
    return _result(y, C, p, alpha, G, cache, loop, phase, steps, optimal, t0)


class _Block:
    """A round's working set, buffers and kernels (parallel or serial), reused from round to round."""

    def __init__(self, X, n, q, batch, cache, parallel, index):
        self.q, self.cache, self.n_rows = q, cache, X.n_rows
        self.get_rows = fetch if parallel else fetch_serial
        self.gather = KB.gather_block if parallel else KB.gather_block_serial
        self.update = KB.update_gradient if parallel else KB.update_gradient_serial
        # (the round fetches all q members at once: its missing rows are
        # computed together, ``batch`` at a time, whatever their places in ws)
        self.args = cache.args()[:-2] + (np.empty(q, np.int64), np.empty(q, np.int64))
        self.compute = computes_block(X, cache)
        if self.compute:        # (its own dense scratch: -v's fold threads share one filled cache, D included)
            self.compute_block = KB.compute_block if parallel else KB.compute_block_serial
            self.block_args = self.args[:9] + (np.zeros((cache.D.shape[0], batch)), np.empty(q, np.int64),
                                               np.empty(q), np.empty(q, np.int64))
        self.symmetric = cache.kernel.code != PRECOMPUTED
        self.shared_rows = len(np.unique(index)) < len(index)     # (SVR's 2n variables read n rows)
        self.flag = np.zeros(n, np.bool_)
        self.key = np.empty(n)
        self.ws = np.empty(q, np.int64)
        self.slots = np.empty(q, np.int64)
        self.Kws = np.empty((q, q), np.float32)
        self.F = np.zeros((6, q))
        self.keys = np.empty(q, np.int64)
        self.dcoef = np.zeros(q)

    def round(self, y, C, alpha, G, QD, index, start, eps, cap, phase, c1):
        """Pair steps taken (<= cap) on the working set; G updated for every variable, part times added to phase."""
        ws, slots, clock = self.ws, self.slots, time.perf_counter
        ws[start:] = np.sort(ws[start:])      # new members in data order: closer reads of the rows
        self.get_rows(index[ws], *self.args, slots)
        c2 = clock()
        if self.compute:
            self.compute_block(ws, index, self.Kws, start, *self.block_args)
        else:
            self.gather(ws, index, slots, self.cache.M, self.Kws, start, self.symmetric)
        c3 = clock()
        taken, _ = KB.inner_smo(y, C, alpha, G, QD, ws, self.Kws, eps, FRAC, cap, self.F, self.keys, self.dcoef)
        c4 = clock()
        moved = np.flatnonzero(self.dcoef)
        if len(moved):
            self.update(G, y, index, self.cache.M, slots[moved], self.dcoef[moved], len(moved), self.n_rows)
        c5 = clock()
        phase += (0.0, c2 - c1, c4 - c3, c5 - c4, c3 - c2)
        return taken


    def demote_unused(self, alpha, index, leaving):
        """After a round: the cached rows of the members leaving the working
        set (ws[:leaving]) at alpha 0, whose data rows no variable at a
        nonzero alpha reads either, are evicted first from now on. They are
        rarely needed again soon, the support vectors' rows are (the sensor
        set: 9,872 rows computed against LRU's 11,286, of 9,244 distinct);
        the solve is the same to the bit."""
        out = self.ws[:leaving]
        rows = index[out[alpha[out] == 0.0]]
        if self.shared_rows and len(rows):
            used = np.zeros(self.n_rows, np.bool_)
            used[index[alpha != 0.0]] = True
            rows = rows[~used[rows]]
        self.cache.demote(rows)


def _result(y, C, p, alpha, G, cache, loop, phase, steps, optimal, t0):
    """(alpha, rho, FitResult): rho and the dual value as the pair method computes them, info in solve's order."""
    rho = K.rho_of(y, C, alpha, G) if len(y) else 0.0
    obj = K.dual_value(alpha, G, p)
    info = {"obj": obj, "rho": rho, "n_sv": int(np.count_nonzero(alpha)),
            "n_bsv": int(np.count_nonzero(alpha >= C)), "kernel_rows": cache.misses, "cache_hits": cache.hits,
            **loop,
            "phases": dict(zip(("select", "rows", "inner", "gradient", "block"), np.round(phase, 3).tolist())),
            "time": time.perf_counter() - t0}
    return alpha, rho, FitResult(w=np.zeros(0), b=-rho, n_iter=steps, objective=obj, converged=optimal, info=info)
