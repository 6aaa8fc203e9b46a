"""``-s pegasos --stream``: Pegasos over a shuffle buffer of row blocks.

The step, the projection, the bias and the averaging are those of
:mod:`svmtrain.solvers.sgd.pegasos`, run by the same numba kernel
(``_pegasos_kernels.pegasos_steps``); only where the examples come from
differs. In memory, each step draws its ``k`` rows i.i.d. from all n rows.
Here the rows pass through a *shuffle buffer* (a pool of rows in memory,
at most ``shuffle_rows`` of them, the ``--shuffle-buffer``):

* every epoch visits the blocks of the source in a fresh random order;
* each block's rows join the pool; when the pool holds more than
  ``shuffle_rows`` rows (or more nonzeros than its share of memory), a
  uniformly random subset of the pool, as many rows as the surplus rounded
  down to a multiple of ``k``, is drawn in random order and fed to the
  kernel, ``k`` rows per step; the others stay;
* at the end of the epoch the pool is drained the same way (all but fewer
  than ``k`` rows, which stay for the next epoch).

So each epoch uses every row once (in a random order that mixes rows up to
a shuffle buffer apart, and blocks arbitrarily far apart), rather than n
draws with replacement: "random reshuffling", which is known to do at
least as well as i.i.d. sampling for SGD. The run makes floor(T n / k)
steps (in memory: T ceil(n / k)); averaging covers the last half of them.
Every random choice comes from ``params.seed``: the same seed, data and
block layout give the same w, bit for bit.

Memory: :func:`plan_memory` (the plan the declaration names) and
:func:`shuffle_cost`, the shuffle buffer's price, which streamed sgd and
asset share.
"""
import math

import numpy as np

from ...data._dataset_kernels import gather_rows
from .._common import sq_norm
from ._pegasos_kernels import pegasos_steps
from .._stream_common import streamed_loss
from ..base import kernel_bias, with_defaults
from ..memory_plan import LABEL_BYTES, MIN_BLOCK_BYTES, MemoryPlan, check_limit
from .pegasos import AVERAGE_FROM, DEFAULTS, _current, check_params, end_epoch, loss_setup, new_state, run_result

# bytes of a pool row / nonzero: two pools (indptr, y; indices, values)
# plus the per-block permutation and its temporaries
POOL_ROW_BYTES = 2 * 16 + 32
POOL_NNZ_BYTES = 2 * 12
NNZ_SLACK = 1.1


class _Pool:
    """Rows in memory as CSR with their y; ``n`` rows used. ``y``
    is a float per row: pegasos keeps the label there, ASSET the row's
    number in the training set (exact: below 2^53)."""

    def __init__(self, rows, nnz):
        self.indptr = np.zeros(rows + 1, np.int64)
        self.indices = np.empty(nnz, np.int32)
        self.values = np.empty(nnz, np.float64)
        self.y = np.empty(rows, np.float64)
        self.n = 0

    def append(self, c, yb):
        n, z = self.n, int(self.indptr[self.n])
        m, k = c.n_rows, c.nnz
        if n + m > len(self.y) or z + k > len(self.values):
            raise RuntimeError("stream_pegasos: shuffle buffer overflow (a bug in the memory plan)")
        np.add(c.indptr[1:m + 1], z, out=self.indptr[n + 1:n + m + 1])
        self.indices[z:z + k] = c.indices[:k]
        self.values[z:z + k] = c.values[:k]
        self.y[n:n + m] = yb
        self.n = n + m

    def keep(self, rows, out):
        """Copy ``rows`` (sorted) of this pool into the pool ``out``."""
        m = len(rows)
        np.cumsum(self.indptr[rows + 1] - self.indptr[rows], out=out.indptr[1:m + 1])
        gather_rows(self.indptr, self.indices, self.values, rows, out.indptr, out.indices, out.values)
        np.take(self.y, rows, out=out.y[:m])
        out.n = m


class ShuffleBuffer:
    """The shuffle buffer of a streamed SGD run (see the module docstring):
    blocks of ``source`` join a pool of at most ``R`` kept rows (and their
    share of nonzeros); :meth:`feed` draws the surplus, ``k`` rows per step,
    in an order from ``rng``. ``longest``: the largest row's nonzero count
    (default: the largest block's). Memory: :func:`pool_bytes`."""

    def __init__(self, source, R, k, longest, rng):
        max_block_rows = int(np.diff(source.bounds).max())
        max_block_nnz = int(getattr(source, "max_block_nnz", source.nnz))
        if longest is None:
            longest = max_block_nnz
        cap_rows, cap_nnz, self.keep_nnz = pool_size(R, source.nnz / max(source.n_rows, 1), longest, k,
                                                     max_block_rows, max_block_nnz)
        self.pools = [_Pool(cap_rows, cap_nnz), _Pool(cap_rows, cap_nnz)]
        self.R, self.k, self.rng = R, k, rng

    def add(self, c, yb):
        """Append the rows of block ``c`` with their ``yb`` (see :class:`_Pool`)."""
        self.pools[0].append(c, yb)

    def feed(self, drain, max_rows):
        """Yield once ``(pool, drawn)``: the rows ``drawn`` (positions in
        ``pool``, a multiple of k, at most ``max_rows``) are the surplus of
        the pool (all rows when ``drain``), in random order; use them before
        advancing, the others are then kept. Yields nothing when no row is due."""
        P, k = self.pools[0], self.k
        pr = P.n
        e = pr if drain else max(0, pr - self.R)
        if not drain and e == 0 and int(P.indptr[pr]) <= self.keep_nnz:
            return
        perm = self.rng.permutation(pr)
        if not drain:
            lengths = P.indptr[perm + 1] - P.indptr[perm]
            tail = np.cumsum(lengths[::-1])[::-1]       # nonzeros of perm[i:]
            fits = tail <= self.keep_nnz
            e = max(e, int(np.argmax(fits)) if fits.any() else pr)
            del lengths, tail, fits
        e = min((e // k) * k, max_rows)
        if e <= 0:
            return
        yield P, perm[:e]
        P.keep(np.sort(perm[e:]), self.pools[1])
        self.pools.reverse()


def epoch_draws(source, y, buf, rng, max_rows):
    """One epoch of a streamed SGD run: yield ``(pool, drawn)`` as
    :meth:`ShuffleBuffer.feed` does, over the blocks of ``source`` visited
    in the order ``rng.permutation(n_blocks)``, each block's rows added to
    ``buf`` with their ``y`` and the surplus fed after each block, the pool
    drained at the end. ``max_rows()`` is asked before each feed for the rows the run may
    still take. The caller steps on ``drawn`` before advancing."""
    bounds = source.bounds
    for j, c in source.blocks(rng.permutation(source.n_blocks)):
        buf.add(c, y[bounds[j]:bounds[j + 1]])
        del c
        yield from buf.feed(False, max_rows())
    yield from buf.feed(True, max_rows())


def pool_size(shuffle_rows, avg_nnz, longest, k, max_block_rows, max_block_nnz):
    """(row capacity, nonzero capacity, nonzeros the kept rows may hold) of each pool."""
    keep_nnz = int(math.ceil(shuffle_rows * avg_nnz * NNZ_SLACK)) + longest
    rows = shuffle_rows + max_block_rows + k
    nnz = keep_nnz + max_block_nnz + k * longest
    return rows, nnz, keep_nnz


def pool_bytes(shuffle_rows, avg_nnz, longest, k, max_block_rows, max_block_nnz):
    """Memory of a shuffle buffer of ``shuffle_rows`` rows (both pools and temporaries)."""
    rows, nnz, _ = pool_size(shuffle_rows, avg_nnz, longest, k, max_block_rows, max_block_nnz)
    return rows * POOL_ROW_BYTES + nnz * POOL_NNZ_BYTES


def plan_memory(name, n, d, params, limit, nnz=0, n_problems=1):
    """The MemoryPlan of ``-s pegasos --stream`` (see :mod:`svmtrain.solvers.memory_plan`):
    v, and with averaging the sum and its correction (doubled while the
    average is formed at the end), beside the labels; two block buffers of
    an eighth each of what is left, the shuffle buffer the rest
    (:func:`shuffle_cost`)."""
    state = LABEL_BYTES * n + (6 if params.average is not False else 1) * 8 * (d + 1)
    free = check_limit(name, n, d, limit, state)
    return MemoryPlan(limit, state, int(max(MIN_BLOCK_BYTES, free / 8)))


def shuffle_cost(plan, source, params, d, k=None):
    """The bytes of a shuffle buffer of r rows (a function of r) over the
    blocks of ``source``, ``k`` rows per step (default: ``-k``, at most n).
    Streamed pegasos holds nothing else beside it (streamed sgd and asset
    reserve their shares in ``plan`` first, then price it here)."""
    n = source.n_rows
    if k is None:
        k = max(1, min(int(params.batch_size), n))
    avg = source.nnz / max(n, 1)
    mbr = int(np.diff(source.bounds).max())

    def cost(r):
        return pool_bytes(r, avg, source.longest, k, mbr, source.max_block_nnz)

    return cost


def fit(source, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0),
        shuffle_rows=None, longest=None):
    """Train one binary Pegasos model from the chunk ``source``; see the
    module docstring. ``shuffle_rows`` bounds the shuffle buffer (default:
    all rows); ``longest`` is the largest row's nonzero count (default:
    found from the blocks' sizes).

    Guarantees as in memory: |w| <= 1/sqrt(lambda); the result depends only
    on the data, its block layout and params.
    """
    check_params(params, class_cost)
    params = with_defaults(params, DEFAULTS)
    n = source.n_rows
    lam = params.resolved_lambda(n)
    B = kernel_bias(params)
    k = max(1, min(int(params.batch_size), n))
    epochs, average = params.epochs, params.average
    total_steps = (epochs * n) // k
    avg_start = int(total_steps * AVERAGE_FROM) + 1 if average else total_steps + 2
    y = np.ascontiguousarray(y, np.float64)
    R = n if shuffle_rows is None else max(1, min(int(shuffle_rows), n))

    rng = np.random.default_rng(params.seed)
    buf = ShuffleBuffer(source, R, k, longest, rng)
    v, acc, corr, state, viol, slope = new_state(n_features + 1, average, k)
    loss, p, radius2 = loss_setup(params, y, lam)
    unreg = bool(params.unreg_bias)

    def objective(w, b):
        return _objective(source, y, w, B, b, lam, params.loss, p)

    t = 0
    prev_obj = math.inf
    converged = params.eps is None
    epoch = 0
    for epoch in range(epochs):
        for P, drawn in epoch_draws(source, y, buf, rng, lambda: k * (total_steps - t)):
            t += pegasos_steps(P.indptr, P.indices, P.values, P.y, drawn, k, t, lam, B,
                               unreg, avg_start, v, state, acc, corr, viol, slope, loss, p, radius2)
        stop, prev_obj = end_epoch(epoch, progress, params, log, prev_obj, objective,
                                   lambda: _current(v, state, acc, corr, average and t >= avg_start))
        if stop:
            converged = True
            break
    return run_result(v, state, acc, corr, average and t >= avg_start, objective, params, t, epoch,
                      converged, log, {"lambda": lam, "shuffle_rows": R, "blocks": int(source.n_blocks)})


def _objective(source, y, w, B, b, lam, loss="hinge", epsilon=0.0):
    """lambda/2 |w|^2 + mean loss, one pass over the source."""
    n = max(source.n_rows, 1)
    return 0.5 * lam * sq_norm(w) + streamed_loss(source, y, w, B, b, loss, epsilon=epsilon) / n
