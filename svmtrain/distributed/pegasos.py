"""``-s pegasos`` on a Dask cluster: synchronous mini-batches.

The driver draws the mini-batches exactly as the local solver does (the
same generator from ``--seed``, ``steps_per_epoch * k`` row numbers per
epoch over the rows of all partitions in order), so a distributed run
visits the same examples in the same steps as a local run on the
concatenated file. Each step is one round: the driver sends w (O(dim)) and
each worker the row numbers of the batch that fall in its partitions; the
worker returns sum g_i x_i over its rows of the batch, g_i = -d loss / d s
at the row's score (``batch_slopes``: for the hinge y_i on the margin
violators A_t^+, 0 elsewhere; the logistic and regression losses as in
``solvers._pegasos_kernels``), as a dense O(dim) vector or its nonzeros
when fewer, their count and sum g_i. The driver takes the step of Fig. 1
of the paper, as locally:

    w <- (1 - 1/t) w + 1/(lambda t k) sum_{A_t} g_i x_i,
    w <- min(1, sqrt(radius2) / |w|) w,    (b <- b + 1/(lambda t k) sum g_i with -R)

(radius2 = 1/lambda for the hinge, 2 f(0) / lambda for the other losses:
``solvers.pegasos.loss_setup``; f(0) is one extra round)

and, with ``--average``, adds w to the running sum from the same step on.
The result equals the local one up to rounding (the local solver keeps w
as a scale times a vector). Steps are pure functions of their inputs, so a
lost worker only costs the rescheduling of its task (Dask runs it
elsewhere, which parses the partitions again).
"""
import math

import numpy as np

from ..solvers.sgd import pegasos as local
from ..solvers._common import sq_norm
from ..solvers.sgd._pegasos_kernels import HINGE, LOSS_CODES
from ..solvers.base import FitResult, finish_w, kernel_bias, with_defaults
from . import _kernels as KD
from .partitions import partition

DEFAULTS = local.DEFAULTS


def _subgradient(run_id, specs, nb, problem, w, b, B, rows):
    """Sum of g_i x_i over this worker's rows among ``rows`` (one array of
    local row numbers per spec) with a nonzero slope g_i; returns (the sum,
    those rows' count, the sum of their g_i)."""
    g = np.zeros(len(w))
    nv = 0
    gsum = 0.0
    for spec, r in zip(specs, rows):
        if len(r):
            c = partition(run_id, spec, threads=nb)
            v, s = KD.batch_slopes(c.indptr, c.indices, c.values, c.labels, *problem[:2], r, w, B, b, *problem[2:], g)
            nv += v
            gsum += s
    nz = np.flatnonzero(g)
    if 12 * len(nz) < g.nbytes:       # sparse is smaller: (int32 index, value) pairs
        return (nz.astype(np.int32), g[nz]), nv, gsum
    return g, nv, gsum


def _loss(run_id, specs, nb, problem, w, b, B):
    s = 0.0
    for spec in specs:
        c = partition(run_id, spec, threads=nb)
        s += KD.loss_sum(c.indptr, c.indices, c.values, c.labels, *problem[:2], w, B, b, *problem[2:])
    return s


def objective(session, problem, w, b, B, lam, n):
    """lambda/2 |w|^2 + 1/n sum of the losses over every partition (one round);
    ``problem`` = (positive label, regression, loss code, tube p)."""
    total = sum(session.run("objective", _loss, problem, w, b, B))
    return 0.5 * lam * sq_norm(w) + total / max(n, 1)


def fit(session, problem, n, n_features, params, progress=None, log=None):
    """Train one problem by mini-batch Pegasos over the session's
    partitions; ``problem`` = (index, positive label or None (regression:
    the labels are the targets), class costs). Same parameters, loss
    (``params.loss``), defaults and result as ``solvers.pegasos.fit``."""
    _, pos, cost = problem
    local.check_params(params, cost)
    problem = loss_problem(pos, params)
    lam = params.resolved_lambda(n)
    B = kernel_bias(params)
    params = with_defaults(params, local.DEFAULTS)
    k, epochs, steps_per_epoch, avg_start = local.schedule(n, params)
    average = params.average
    unreg = bool(params.unreg_bias)
    offsets = row_offsets(session)
    radius2 = _radius2(session, problem, n_features, B, lam, n)

    rng = np.random.default_rng(params.seed)
    dim = n_features + 1
    w = np.zeros(dim)
    b = 0.0
    acc = np.zeros(dim)
    b_acc = 0.0
    n_avg = 0
    t = 0
    prev_obj = math.inf
    converged = params.eps is None
    epoch = 0
    for epoch in range(epochs):
        draws = rng.integers(0, n, size=steps_per_epoch * k)
        for s in range(steps_per_epoch):
            t += 1
            b = _step(session, problem, w, b, B, draws[s * k:(s + 1) * k], offsets, t, 1.0 / (lam * t * k),
                      radius2, unreg)
            if t >= avg_start:
                acc += w
                b_acc += b
                n_avg += 1
        if progress is not None:
            progress(epoch + 1, epochs)
        if params.eps is not None:
            w_now, b_now = _current(w, b, acc, b_acc, n_avg)
            converged, prev_obj = local.epoch_check(objective(session, problem, w_now, b_now, B, lam, n),
                                                    prev_obj, epoch, params.eps, log)
            if converged:
                break
    warn_not_reached(log, converged, params.eps, epochs)
    w, b = _current(w, b, acc, b_acc, n_avg)
    obj = objective(session, problem, w, b, B, lam, n)
    return FitResult(w=finish_w(w, params), b=b, n_iter=t, objective=obj, converged=converged,
                     info={"epochs": epoch + 1, "steps": t, "lambda": lam, "averaged": average})


def loss_problem(pos, params):
    """The workers' (positive label, regression, loss code, tube p); regression when ``pos`` is None."""
    regression = pos is None
    code = LOSS_CODES[params.loss]
    p = float(params.epsilon) if regression else 0.0
    return (0.0 if regression else float(pos), regression, code, p)


def row_offsets(session):
    """int64[partitions + 1]: the first row number of each partition over all partitions in order."""
    offsets = np.zeros(len(session.specs) + 1, np.int64)
    np.cumsum([m["rows"] for m in session.meta], out=offsets[1:])
    return offsets


def by_partition(offsets, rows):
    """{partition: its local row numbers} of ``rows`` (global numbers), partitions ascending, order kept."""
    part = np.searchsorted(offsets, rows, side="right") - 1
    return {int(i): rows[part == i] - offsets[i] for i in np.unique(part)}


def warn_not_reached(log, converged, eps, epochs):
    """Logs that -e was not reached in ``epochs`` epochs, when not ``converged``."""
    if not converged and log is not None:
        log(f"WARNING: -e {eps:g} not reached in {epochs} epochs (raise -T)")


def _radius2(session, problem, n_features, B, lam, n):
    """The squared radius of solvers.pegasos.loss_setup's ball: 1/lambda (hinge), else 2 f(0) / lambda."""
    radius2 = 1.0 / lam
    if problem[2] != HINGE:
        radius2 = max(2.0 * objective(session, problem, np.zeros(n_features + 1), 0.0, B, lam, n), 1e-300) / lam
    return radius2


def _step(session, problem, w, b, B, batch, offsets, t, eta_k, radius2, unreg):
    """b after Pegasos step ``t`` on ``batch`` (one round); w updated and projected in place."""
    rows = by_partition(offsets, batch)
    empty = np.empty(0, np.int64)
    got = session.run("step", _subgradient, problem, w, b, B, only=set(rows),
                      per_group=lambda specs: ([rows.get(sp.index, empty) for sp in specs],),
                      what=f" (step {t})")
    if t == 1:
        w[:] = 0.0
    else:
        w *= 1.0 - 1.0 / t
    for g, nv, gsum in got:
        if isinstance(g, tuple):
            np.add.at(w, g[0], eta_k * g[1])
        else:
            w += eta_k * g
        if unreg:
            b += eta_k * gsum
    nu = float(w @ w)
    if nu > radius2:
        w *= math.sqrt(radius2 / nu)
    return b


def _current(w, b, acc, b_acc, n_avg):
    """(w, b): the average of the averaged iterates, or the last iterate."""
    if n_avg > 0:
        return acc / n_avg, b_acc / n_avg
    return w.copy(), b
