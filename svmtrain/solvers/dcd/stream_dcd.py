"""``-s dcd --stream``: block minimization of the dual (Yu, Hsieh, Chang, Lin, KDD 2010).

"Large linear classification when data cannot fit in memory": the rows are
split into blocks (the blocks of the chunk source); each outer iteration
visits the blocks in a fresh random order (from ``params.seed``) and, on
each, improves the dual sub-problem over that block's variables with the
others fixed. The sub-problem is the DCD problem of
:mod:`svmtrain.solvers.dcd.dcd` restricted to the block, and it is worked on by
the same kernel (``_dcd_kernels.dcd_run``): one DCD iteration over the
block's active rows in random order per visit (an inexact sub-problem
solve, which the paper allows; more inner iterations per visit did not
reduce the outer iterations on a9a, see docs/streaming.md). ``w = sum_i alpha_i
y_i x_i`` stays in memory and is updated by every block; so do ``alpha``,
``QD_ii = |x_i|^2 + D_ii`` (computed on a block's first visit) and each
block's visiting index, 24 bytes per row in all, sliced per block.

Shrinking and stopping are LIBLINEAR's, lifted from rows to the pass over
all blocks: a row whose projected gradient lies beyond the previous outer
iteration's extremes (over all blocks) leaves its block's active set; when
max PG - min PG over the active rows of all blocks is at most ``eps``
(``-e``), every row is re-activated and, if the next full iteration also
has a spread of at most ``eps``, the run has converged. ``--max-iter``
caps the outer iterations. Visiting rows block by block mixes them less
than one random order over all rows: on a9a, 9 blocks took about 3 times
the outer iterations of in-memory DCD to reach ``-e 0.1``.

Same problem, objective and result fields as :func:`svmtrain.solvers.dcd.dcd.fit`;
the objective needs one more pass. Regression (``--task r``) is block
minimization of the SVR dual in the same way (:func:`fit_regression`, the
kernel ``_svr_kernels.svr_run``, LIBLINEAR's stopping rule on the summed
violation over all blocks).

Memory (:func:`plan_memory`, the plan the declaration names): w and the
24 bytes per row above beside the labels; the rest of the limit is three
shares, two block buffers and the temporaries of a block's first visit.
"""
import numpy as np

import math

from ...errors import ParameterError
from ...tasks import REGRESSION
from . import _dcd_kernels as K
from . import _dcd_regression_kernels as KR
from .._common import row_sqnorms, sq_norm
from .._stream_common import streamed_loss, streamed_regression_loss
from ..base import FitResult, finish_w, kernel_bias, warn_max_iter
from ..memory_plan import LABEL_BYTES, MIN_BLOCK_BYTES, MemoryPlan, check_limit
from .dcd import check_params, dual_box

NO_WEIGHTS = np.empty(0, np.float64)    # streamed rows come from files: no sample weights


def plan_memory(name, n, d, params, limit, nnz=0, n_problems=1):
    """The MemoryPlan of ``-s dcd --stream`` (see :mod:`svmtrain.solvers.memory_plan`):
    w and alpha, QD and the index (24 bytes per row) beside the labels; the
    two block buffers a third each of what is left, the last third the
    temporaries of a block's first visit (16 bytes per row)."""
    state = LABEL_BYTES * n + 8 * (d + 1) + 24 * n
    free = check_limit(name, n, d, limit, state)
    return MemoryPlan(limit, state, int(max(MIN_BLOCK_BYTES, free / 3)))


class _BlockRun:
    """Block minimization's state over a chunk source's blocks (w, index, active counts, RNG, kernel scratch)."""

    def __init__(self, source, n_features, params, n_fstate):
        """w zero, every block unseen and all its rows active, the RNG seeded by ``params.seed``."""
        self.source = source
        self.w = np.zeros(n_features + 1, np.float64)
        self.index = np.empty(source.n_rows, np.int64)  # per block: its rows (local numbers), active ones first
        self.bounds = source.bounds
        self.sizes = np.diff(self.bounds)
        self.active = self.sizes.copy()                 # active rows of each block
        self.seen = np.zeros(source.n_blocks, bool)
        self.rng = np.random.default_rng(params.seed)
        self.istate = np.zeros(2, np.int64)
        self.fstate = np.zeros(n_fstate, np.float64)
        self.rstate = np.zeros(1, np.uint64)

    def full(self):
        """True when every row of every block is active."""
        return bool(np.all(self.active == self.sizes))

    def blocks(self):
        """The (j, chunk) of every block, in a fresh random order drawn from the RNG."""
        return self.source.blocks(self.rng.permutation(self.source.n_blocks))

    def first_visit(self, j):
        """True on block j's first visit only, its index then reset to its rows in order."""
        if self.seen[j]:
            return False
        r0, r1 = self.bounds[j], self.bounds[j + 1]
        self.index[r0:r1] = np.arange(r1 - r0)
        self.seen[j] = True
        return True

    def start_visit(self, j, *fstate):
        """The kernel's state set for a visit of block j: its active rows, ``fstate`` and a fresh seed."""
        self.istate[:] = (self.active[j], 0)
        self.fstate[:] = fstate
        self.rstate[0] = self.rng.integers(0, 2**64 - 1, dtype=np.uint64, endpoint=True)

    def reactivate(self):
        """Every row of every block active again."""
        self.active[:] = self.sizes

    def result(self, params, it, converged, primal_C, C, info):
        """The FitResult of the run: w finished (bias), b 0 and the objective primal_C / (max(n, 1) C)."""
        objective = primal_C / (max(self.source.n_rows, 1) * C)
        return FitResult(w=finish_w(self.w, params), b=0.0, n_iter=it, objective=objective,
                         converged=bool(converged), info=info)


def _dcd_sweep(run, y, state, B, box, pg_old):
    """One outer iteration of :func:`fit`: a kernel pass on every block; returns (max PG, min PG) over them."""
    U_pos, U_neg, D_pos, D_neg = box
    pgmax, pgmin = -np.inf, np.inf
    for j, c in run.blocks():
        r0, r1 = run.bounds[j], run.bounds[j + 1]
        yb = y[r0:r1]
        if run.first_visit(j):
            QD = row_sqnorms(c.indptr, c.values, B)
            QD += np.where(yb > 0, D_pos, D_neg)
            K.new_state(yb, QD, out=state[r0:r1])
            del QD
        run.start_visit(j, pg_old[0], pg_old[1], -np.inf, np.inf)
        # one iteration over the block's active rows; eps -1: the kernel
        # never declares the block converged (the test in fit is global)
        K.dcd_run(c.indptr, c.indices, c.values, B, U_pos, U_neg, D_pos, D_neg, state[r0:r1], NO_WEIGHTS,
                  -1.0, 1, 1, run.w, run.index[r0:r1], run.istate, run.fstate, run.rstate)
        run.active[j] = run.istate[K.ACTIVE]
        pgmax = max(pgmax, run.fstate[K.FIRST_PGMAX])
        pgmin = min(pgmin, run.fstate[K.FIRST_PGMIN])
        del c
    return pgmax, pgmin


def fit(source, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0)):
    """Train one binary problem (y in {+1, -1}, n-sized, in memory) from the
    chunk ``source``; see the module docstring. Memory beyond the blocks:
    w (d + 1 floats), the (alpha, y QD) state and the index (24 bytes per
    row) and, on a block's first visit, 16 bytes per row of the block."""
    if params.task == REGRESSION:
        return fit_regression(source, y, n_features, params, progress, log, class_cost)
    eps, max_iter = check_params(params, class_cost)
    y = np.ascontiguousarray(y, np.float64)
    n = source.n_rows
    C, Cp, Cn, U_pos, U_neg, D_pos, D_neg = dual_box(params, class_cost, n)
    B = kernel_bias(params)
    run = _BlockRun(source, n_features, params, 4)
    state = np.zeros((n, 2), np.float64)  # (alpha, y_i (|x_i|^2 + D_ii)), the latter filled on a block's first visit
    alpha = state[:, 0]
    pgmax_old, pgmin_old = np.inf, -np.inf

    it = 0
    converged = n == 0
    spread = np.inf
    while not converged and it < max_iter:
        full = run.full()
        pgmax, pgmin = _dcd_sweep(run, y, state, B, (U_pos, U_neg, D_pos, D_neg), (pgmax_old, pgmin_old))
        it += 1
        spread = pgmax - pgmin
        if progress is not None:
            progress(it, max_iter)
        if spread <= eps:
            if full:
                converged = True
                break
            run.reactivate()              # converged on the shrunk rows: re-check all
            pgmax_old, pgmin_old = np.inf, -np.inf
            continue
        pgmax_old = pgmax if pgmax > 0.0 else np.inf
        pgmin_old = pgmin if pgmin < 0.0 else -np.inf
    warn_max_iter(log, converged, max_iter)

    ww = sq_norm(run.w)
    sq, sa, n_sv = K.dual_terms(y, alpha, D_pos, D_neg, NO_WEIGHTS)
    dual = sa - 0.5 * (ww + sq)
    primal_C = 0.5 * ww + streamed_loss(source, y, run.w, B, 0.0, params.loss, (Cp, Cn))
    info = {"dual_objective": dual, "primal_C_form": primal_C, "n_sv": int(n_sv),
            "n_iter": it, "C": C, "pg_spread": float(spread), "blocks": int(source.n_blocks)}
    return run.result(params, it, converged, primal_C, C, info)


def _svr_sweep(run, y, beta, QD, B, upper, lam, p, gmax_old):
    """One outer iteration of :func:`fit_regression`: a kernel pass on every block; returns (gmax, summed gnorm1)."""
    gmax, gnorm1 = 0.0, 0.0
    for j, c in run.blocks():
        r0, r1 = run.bounds[j], run.bounds[j + 1]
        if run.first_visit(j):
            QD[r0:r1] = row_sqnorms(c.indptr, c.values, B) + lam
        run.start_visit(j, gmax_old, 0.0, 0.0)
        # one pass over the block's active rows; eps -1: the stopping test is global
        KR.svr_run(c.indptr, c.indices, c.values, B, y[r0:r1], beta[r0:r1], QD[r0:r1], upper, lam, p,
                   -1.0, 1, 1, run.w, run.index[r0:r1], run.istate, run.fstate, run.rstate)
        run.active[j] = min(int(run.istate[KR.ACTIVE]), int(run.sizes[j]))
        gmax = max(gmax, run.fstate[KR.GMAX_OLD])
        gnorm1 += run.fstate[KR.GNORM1_LAST]
        del c
    return gmax, gnorm1


def fit_regression(source, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0)):
    """SVR (real targets ``y``, n-sized, in memory) from the chunk ``source``
    by block minimization; the problem and result fields of
    :func:`svmtrain.solvers.dcd.dcd_regression.fit`. Memory beyond the blocks:
    w, beta, QD and the index (24 bytes per row)."""
    if tuple(class_cost) != (1.0, 1.0):
        raise ParameterError("-w (class weights) applies to classification, not regression")
    eps, max_iter = check_params(params, class_cost)
    y = np.ascontiguousarray(y, np.float64)
    n = source.n_rows
    C = params.resolved_C(n)
    p = float(params.epsilon)
    squared = params.loss == "squared-epsilon-insensitive"
    lam, upper = (0.5 / C, math.inf) if squared else (0.0, C)
    B = kernel_bias(params)
    run = _BlockRun(source, n_features, params, 3)
    beta = np.zeros(n, np.float64)
    QD = np.zeros(n, np.float64)              # |x_i|^2 + lambda, filled on a block's first visit
    gmax_old = math.inf
    gnorm1_init = None
    it = 0
    converged = n == 0
    while not converged and it < max_iter:
        full = run.full()
        gmax, gnorm1 = _svr_sweep(run, y, beta, QD, B, upper, lam, p, gmax_old)
        it += 1
        if gnorm1_init is None:
            gnorm1_init = gnorm1
        if progress is not None:
            ratio = gnorm1 / gnorm1_init if gnorm1_init > 0 else 0.0
            progress(it, max_iter, f"violation {ratio:.2e} of the first (stop at {eps:g})")
        if gnorm1 <= eps * gnorm1_init:
            if full:
                converged = True
                break
            run.reactivate()                  # converged on the shrunk rows: re-check all
            gmax_old = math.inf
            continue
        gmax_old = gmax
    warn_max_iter(log, converged, max_iter)
    ww = sq_norm(run.w)
    primal_C = 0.5 * ww + C * streamed_regression_loss(source, y, run.w, B, p, squared)
    dual_terms, n_sv = KR.svr_dual_terms(y, beta, p, lam)
    info = {"primal_C_form": primal_C, "dual_objective": 0.5 * ww + dual_terms, "n_sv": int(n_sv),
            "n_iter": it, "C": C, "blocks": int(source.n_blocks)}
    return run.result(params, it, converged, primal_C, C, info)
