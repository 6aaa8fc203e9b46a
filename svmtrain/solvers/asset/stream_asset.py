"""``-s asset --stream``: ASSET (Algorithm 1, or ASSET* with
``--strongly-convex``) fed from a shuffle buffer of row blocks.

Everything but the source of the steps' rows is :mod:`svmtrain.solvers.asset.asset`:
the feature map is built once (Nystrom: the landmarks are the rows the
seeded RNG draws, as in memory, read from the blocks that hold them;
Fourier: Omega needs only the number of features), D_G is estimated from
``DG_SAMPLES`` rows read the same way, and the step sizes, projection,
averaging and model are those of ``asset.fit_asset`` and
``_asset_kernels.asset_steps``. With the same seed the map and the D_G
estimate are those of in-memory training.

The steps' rows pass through the shuffle buffer of streamed Pegasos
(:class:`svmtrain.solvers.sgd.stream_pegasos.ShuffleBuffer`): each epoch
visits the blocks in a random order, each block's rows join a pool of at
most ``shuffle_rows`` rows, and the surplus is drawn in random order, k
rows per step. Each epoch thus uses every row once (in memory: ceil(n/k)
steps of k rows drawn i.i.d.); the run makes floor(T n / k) steps,
averaged from the middle on. Drawn rows are mapped to their features
``map_rows`` at a time (float32), right before their steps: the mapped
training set is never held. The objective (``-e``, and the result's) is a
pass over the blocks, mapping each in turn.

The Nystrom rows are mapped by ``NystromMap.transform_rows``: kernel rows
against the landmarks stored by feature (numba, ``landmark_kernel_rows``),
then the projection; no dense copy of the landmarks, whatever the number
of features.

Memory (:func:`state_bytes`, :func:`mapped_bytes`; the plan is
:func:`plan_memory`, which the declaration names, and :func:`shuffle_cost`
sizes the mapped rows beside the shuffle buffer): per binary problem y, the loss
weights (16 bytes per row) and two (d+1)-vectors, the n margins of an
objective pass, the map (Omega, or the landmarks and the projection);
before the first epoch also the s x s matrices of the eigendecomposition
or the D_G sample (its rows and float32 features), whichever is larger;
then the two block buffers, the shuffle buffer (from the first epoch on)
and one block of mapped rows.
"""
import dataclasses

import numpy as np

from ...data.dataset import Chunk
from ...errors import ParameterError
from . import _asset_kernels as K
from . import asset
from ..memory_plan import MIN_BLOCK_BYTES, MemoryPlan, check_limit
from ..sgd import stream_pegasos
from ..sgd.stream_pegasos import ShuffleBuffer

# s x s matrices alive while the Nystrom map is built besides the projection
# (K_SS, its symmetrised copy, eigh's copy, Q and workspace)
NYSTROM_BUILD_MATRICES = 5
CSR_ROW_BYTES = 16          # label (or qid) and indptr of a copied row
CSR_NNZ_BYTES = 12          # index and value of a copied nonzero
NNZ_SLACK = 2.0             # landmarks / sampled rows: nonzeros above the mean


def _map_sizes(params, n):
    """(landmarks s, feature dim D) of the map of ``params`` (s = 0 for Fourier)."""
    D = int(params.dim)
    return (min(D, n), min(D, n)) if params.approx == "nystrom" else (0, D)


def state_bytes(n, n_features, nnz, params, n_problems):
    """(kept, setup): the memory a streamed ASSET run keeps besides its
    blocks, shuffle buffer and mapped rows (per-problem state, the n margins
    of an objective pass, the map, the map kernel's scratch), and what it
    needs on top of that only before the first epoch (building the Nystrom
    map; the D_G sample), when the shuffle buffer does not exist yet."""
    s, D = _map_sizes(params, n)
    row_nnz = nnz / max(n, 1) * NNZ_SLACK
    csr_row = CSR_ROW_BYTES + CSR_NNZ_BYTES * row_nnz
    kept = n_problems * (16 * n + 2 * 8 * (D + 2)) + 8 * n
    if params.approx == "nystrom":
        # the landmarks (CSR and by feature), the projection
        kept += s * (CSR_ROW_BYTES + 2 * CSR_NNZ_BYTES * row_nnz) + 8 * (n_features + 1) + 8 * s * D
        build = NYSTROM_BUILD_MATRICES * 8 * s * s
    else:
        kept += 8 * max(n_features, 1) * D + 8 * D
        build = 0
    M = min(asset.DG_SAMPLES, n)
    sample = M * (2 * csr_row + 4 * D + 8)     # rows, their features, |V|^2 (mapped in blocks)
    return int(kept), int(max(build, sample))


def mapped_bytes(params, n):
    """Bytes per row of a block of mapped rows: the float32 features, the
    row numbers and positions, and for Nystrom the float64 kernel row
    against the landmarks and the float64 product."""
    s, D = _map_sizes(params, n)
    b = 4 * D + 16
    if params.approx == "nystrom":
        b += 8 * s + 8 * D
    return int(b)


def plan_map_rows(share, params, n):
    """Rows mapped at a time: a multiple of k within ``share`` bytes (at
    least k, at most asset.STREAM_STEPS steps' worth). Returns (rows, bytes)."""
    k = max(1, min(int(params.batch_size), n))
    per = mapped_bytes(params, n)
    steps = max(1, min(asset.STREAM_STEPS, int(share // (per * k))))
    return steps * k, steps * k * per


def plan_memory(name, n, d, params, limit, nnz=0, n_problems=1):
    """The MemoryPlan of ``-s asset --stream`` (see :mod:`svmtrain.solvers.memory_plan`):
    the labels and what :func:`state_bytes` keeps; before the first epoch
    its setup and two blocks fit in what the state leaves. Two block
    buffers of an eighth each of what is left (at most what the setup
    leaves); the mapped rows a quarter (:func:`shuffle_cost`), the shuffle
    buffer the rest."""
    kept, setup = state_bytes(n, d, nnz, params, n_problems)
    state = 8 * n + kept
    free = check_limit(name, n, d, limit, state, setup)
    return MemoryPlan(limit, state, int(max(MIN_BLOCK_BYTES, min(free / 8, (free - setup) / 2))),
                      setup=setup)


def shuffle_cost(plan, source, params, d):
    """Reserve the block of mapped rows in ``plan`` (a quarter of what the
    state leaves, at least one step's), and price pegasos' shuffle buffer
    with ``-k`` rows per step."""
    plan.map_rows, plan.map_bytes = plan_map_rows((plan.limit - plan.state) / 4, params, source.n_rows)
    return stream_pegasos.shuffle_cost(plan, source, params, d)


class StreamedFeatures:
    """The features of :func:`asset.fit_asset` over a chunk source (see the
    module docstring and :class:`asset.Features`)."""

    cached = False

    def __init__(self, fmap, source, shuffle_rows, map_rows, longest=None):
        self.fmap, self.source = fmap, source
        self.n, self.dim = source.n_rows, fmap.dim
        self.R = max(1, min(int(shuffle_rows), self.n))
        self.map_rows = max(1, int(map_rows))
        self.longest = longest
        self.buffer = None
        self.note = (f"features streamed: shuffle buffer {self.R} rows, "
                     f"{self.map_rows} rows mapped at a time")

    def rows(self, rows):
        """float32[len(rows), d]: the feature rows of ``rows`` (sorted), read
        from their blocks and mapped ``map_rows`` at a time."""
        from ...data.chunk_source import take_source_rows
        X = take_source_rows(self.source, rows)
        out = np.empty((X.n_rows, self.dim), asset.FEATURE_DTYPE)
        for lo in range(0, X.n_rows, self.map_rows):
            hi = min(X.n_rows, lo + self.map_rows)
            self.fmap.transform_rows(X, np.arange(lo, hi, dtype=np.int64), out[lo:hi])
        return out

    def total_steps(self, k, epochs):
        """Steps of a run of ``epochs``: every row once per epoch, k per step."""
        return max(1, (epochs * self.n) // k)

    def epoch(self, rng, k, max_steps):
        """(F, positions, rows) blocks of one epoch: the rows drawn from the
        shuffle buffer (at most ``max_steps`` steps' worth), mapped."""
        if self.buffer is None:
            self.buffer = ShuffleBuffer(self.source, self.R, k, self.longest, rng)
        src, left = self.source, [max_steps * k]
        for j, c in src.blocks(rng.permutation(src.n_blocks)):
            self.buffer.add(c, np.arange(src.bounds[j], src.bounds[j + 1], dtype=np.float64))
            del c
            yield from self._drawn(False, left)
        yield from self._drawn(True, left)

    def _drawn(self, drain, left):
        for P, drawn in self.buffer.feed(drain, left[0]):
            left[0] -= len(drawn)
            pool = Chunk(labels=P.y, indptr=P.indptr, indices=P.indices, values=P.values, qid=None)
            step = max(self.buffer.k, self.map_rows // self.buffer.k * self.buffer.k)   # whole steps
            F = np.empty((min(step, len(drawn)), self.dim), asset.FEATURE_DTYPE)
            for lo in range(0, len(drawn), step):
                sel = drawn[lo:lo + step]
                self.fmap.transform_rows(pool, sel, F[:len(sel)])
                yield F[:len(sel)], np.arange(len(sel), dtype=np.int64), P.y[sel].astype(np.int64)
            del F

    def margins(self, w, Bc, b):
        """V w[:d] + Bc w[d] + b for every row: one pass, each block mapped in turn."""
        out = np.empty(self.n, np.float64)
        bounds = self.source.bounds
        F = np.empty((min(self.map_rows, self.n), self.dim), asset.FEATURE_DTYPE)
        for j, c in self.source.blocks():
            for lo in range(0, c.n_rows, self.map_rows):
                hi = min(c.n_rows, lo + self.map_rows)
                self.fmap.transform_rows(c, np.arange(lo, hi, dtype=np.int64), F[:hi - lo])
                K.feature_margins(F[:hi - lo], w, Bc, b, out[bounds[j] + lo:bounds[j] + hi])
        return out


def check_streamable(params):
    """ParameterError for what ASSET cannot do streamed (--inner)."""
    if params.inner is not None:
        raise ParameterError(f"--inner {params.inner} trains ASSET in memory only; -s asset --stream runs "
                             "Algorithm 1 (or ASSET* with --strongly-convex)")


def train_model(source, order, problems, n_features, params, plan, progress=None, log=None):
    """The model of ASSET on the chunk ``source`` within ``plan`` (its
    ``shuffle_rows`` and ``map_rows``); see the module docstring."""
    check_streamable(params)
    if params.batch_size > source.n_rows:
        params = dataclasses.replace(params, batch_size=source.n_rows)

    def features(fmap):
        return StreamedFeatures(fmap, source, plan.shuffle_rows, plan.map_rows, getattr(source, "longest", None))

    return asset.train_model(source, order, list(problems), n_features, params, progress, log,
                             features=features)
