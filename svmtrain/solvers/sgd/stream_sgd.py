"""``-s sgd --stream``: SVM-SGD, SGD-QN and FOLOS over pegasos' shuffle buffer.

The update rules, the step sizes eta_t = eta0 / (1 + lambda eta0 t), the
bias and the objective are those of :mod:`svmtrain.solvers.sgd.sgd`, run by
the same numba kernel (``_sgd_kernels.sgd_steps``, one example per step)
on the same state (:class:`svmtrain.solvers.sgd.sgd.Run`); only where the
examples come from differs. In memory each epoch is a fresh random
permutation of all n rows. Here the rows pass through the *shuffle buffer*
of ``-s pegasos --stream`` (:class:`svmtrain.solvers.sgd.stream_pegasos.ShuffleBuffer`,
at most ``shuffle_rows`` rows, ``--shuffle-buffer``) with one row per step
(k = 1), by the same epoch loop (:func:`stream_pegasos.epoch_draws`): every
epoch visits the blocks in a fresh random order, each block's rows join the
pool, and the surplus of the pool is drawn in random order and stepped on;
the pool is drained at the end of the epoch. So every epoch makes exactly
n steps, one on each row (random reshuffling, rows mixed up to a shuffle
buffer apart and blocks arbitrarily far apart): T n steps in all, as in
memory.

eta0: SVM-SGD's pilot (:func:`sgd.pilot_eta0`, PILOT_ROWS = 1000 rows) runs
on the pool the first time it is fed, i.e. right before the first step: a
sample of min(1000, pool rows) of the rows in the pool then, drawn from
the run's generator. No extra pass is needed. The pool then holds the
rows of the first blocks visited (in a random block order): with a
shuffle buffer that holds every row (the default when the memory limit
allows) it is a uniform sample of the whole training set, as in memory;
with a small shuffle buffer it is a sample of the first blocks visited
(on a file sorted by label it may see one class only; eta0 is then chosen
on that sample, which affects the speed of convergence, not what is
minimised).

Every random choice (block orders, pool draws, the pilot sample) comes
from ``np.random.default_rng(params.seed)``: the same seed, data and block
layout give the same w, bit for bit. With ``-e`` the objective of each
epoch, f(w, b) (+ l1 |w|_1 for fobos), is computed by one streamed pass
(``_stream_common.streamed_loss``), and the last one is the result's.

How close to the in-memory run: with one block and a shuffle buffer that
holds all rows, each epoch steps on a uniformly random permutation of all
rows and the pilot sees a uniform sample of 1000 rows, exactly as in
memory; only the random numbers differ (the streamed run draws its block
order, then each epoch's permutation, and the pilot's sample after the
first permutation), so the two runs are two samples of the same random
algorithm, not the same bits. On heart_scale so (one block, all rows:
the pilot sees every row both ways, so eta0 is the same) the objectives
agree within 0.3 % for each rule and seeds 1-8 (tested: 1 %). With several
blocks and a small buffer (a9a, lambda = 1e-3, 9 blocks, 2000 rows) the
objective is within 1.5 % of in-memory training's over seeds 1-10 for each
rule, which is about the seed-to-seed spread of SGD's last iterate in
memory (tested: 3 %, and 3 % of LIBLINEAR's optimum).

Memory: :func:`plan_memory` (the plan the declaration names; the weight
vectors of :func:`state_vectors`) and :func:`shuffle_cost` (the pilot's
sample beside pegasos' shuffle buffer, one row per step).
"""
import math

import numpy as np

from ...data.dataset import Chunk
from . import sgd, stream_pegasos
from ..base import with_defaults
from ..memory_plan import LABEL_BYTES, MIN_BLOCK_BYTES, MemoryPlan, check_limit
from .pegasos import end_epoch
from .stream_pegasos import ShuffleBuffer, _objective, epoch_draws

# float64 (d+1)-vectors held at most, per rule: those the run keeps (w; SGD-QN's
# D; FOLOS's two stamp vectors) plus the transient ones (current_w's copy, and
# FOLOS's copies of its stamps while it makes it; the l1 term's |w| or the
# model's copy of w at the end)
KEPT_VECTORS = {"bottou": 1, "sgdqn": 2, "fobos": 3}
TRANSIENT_VECTORS = {"bottou": 2, "sgdqn": 2, "fobos": 3}


def state_vectors(update):
    """float64 (d+1)-vectors a streamed run of rule ``update`` holds at most."""
    update = update or sgd.DEFAULTS["update"]
    return KEPT_VECTORS[update] + TRANSIENT_VECTORS[update]


def pilot_bytes(n, nnz, longest, d):
    """Memory of the pilot beside the full shuffle buffer: the sample of
    min(n, PILOT_ROWS) rows copied out of the pool (at most ``longest``
    nonzeros each, at most ``nnz`` in all: 12 bytes per nonzero, about 64
    per row for the sample's arrays, the draw and the scores) and its two
    weight vectors."""
    m = min(n, sgd.PILOT_ROWS)
    return 64 * (m + 1) + 12 * min(nnz, m * max(int(longest), 1)) + 2 * 8 * (d + 1)


def plan_memory(name, n, d, params, limit, nnz=0, n_problems=1):
    """The MemoryPlan of ``-s sgd --stream`` (see :mod:`svmtrain.solvers.memory_plan`):
    w, SGD-QN's D or FOLOS's two stamp vectors, and their transient copies
    (:func:`state_vectors`) beside the labels; two block buffers of an
    eighth each of what is left, the pilot and the shuffle buffer the rest
    (:func:`shuffle_cost`)."""
    state = LABEL_BYTES * n + state_vectors(params.update) * 8 * (d + 1)
    free = check_limit(name, n, d, limit, state)
    return MemoryPlan(limit, state, int(max(MIN_BLOCK_BYTES, free / 8)))


def shuffle_cost(plan, source, params, d):
    """Reserve the pilot's sample in ``plan`` (``d`` features), and price
    pegasos' shuffle buffer with one row per step (k = 1)."""
    plan.pilot = pilot_bytes(source.n_rows, source.nnz, source.longest, d)
    return stream_pegasos.shuffle_cost(plan, source, params, d, k=1)


def _pool_chunk(P):
    """The rows of pool ``P`` as a Chunk (views, no copy) for the pilot."""
    n = P.n
    return Chunk(labels=P.y[:n], indptr=P.indptr[:n + 1], indices=P.indices, values=P.values,
                 qid=np.broadcast_to(np.int64(0), (n,)))


def fit(source, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0),
        shuffle_rows=None, longest=None):
    """Train one binary (or regression) model by ``params.update``'s rule
    from the chunk ``source``; see the module docstring. ``shuffle_rows``
    bounds the shuffle buffer (default: all rows); ``longest`` is the
    largest row's nonzero count (default: found from the blocks' sizes).

    Guarantees as in memory: the returned objective is f(w, b) of the
    returned model (with the l1 term for fobos); the result depends only on
    the data, its block layout and params. The FitResult's info has
    :func:`sgd.fit`'s keys, and ``shuffle_rows`` and ``blocks`` as
    ``-s pegasos --stream``'s.
    """
    sgd.check_params(params, class_cost)
    params = with_defaults(params, sgd.DEFAULTS)
    n = source.n_rows
    lam = params.resolved_lambda(n)
    y = np.ascontiguousarray(y, np.float64)
    R = n if shuffle_rows is None else max(1, min(int(shuffle_rows), n))
    total_steps = params.epochs * n

    rng = np.random.default_rng(params.seed)
    buf = ShuffleBuffer(source, R, 1, longest, rng)
    run = sgd.Run(source, y, n_features, params, lam, rng, pilot=False)

    def objective(w, b):
        f = _objective(source, y, w, run.B, b, lam, params.loss, run.p)
        return f + run.l1 * float(np.abs(w).sum()) if run.l1 else f

    prev_obj = math.inf
    converged = params.eps is None
    epoch = 0
    for epoch in range(params.epochs):
        for P, drawn in epoch_draws(source, y, buf, rng, lambda: total_steps - run.t):
            if run.eta0 is None:
                run.pilot(_pool_chunk(P), P.y[:P.n], rng)
            run.steps(drawn, P, P.y)
        stop, prev_obj = end_epoch(epoch, progress, params, log, prev_obj, objective, run.current)
        if stop:
            converged = True
            break
    # with -e the last epoch's objective is that of the current (w, b): no further pass
    last = objective if params.eps is None else (lambda w, b: prev_obj)
    return run.result(params, epoch + 1, converged, log, last, shuffle_rows=R, blocks=int(source.n_blocks))
