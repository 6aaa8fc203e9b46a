"""``-s ocas --multiclass cs --stream``: Crammer-Singer OCAS over a chunk source.

The problem, master loop, stopping rules and options are those of
:mod:`svmtrain.solvers.ocas.ocas_cs` (``ocas.solve`` over a
:class:`~svmtrain.solvers.ocas.ocas_cs.TwoPassCrammerSinger`); only the
products with the data differ: the rows are read block by block
(:class:`SourceRows`), and each product X~ X~' G is two passes over the
blocks, W' = sum over blocks (X~_blk' G_blk)', then S_blk = X~_blk W.
The n x M arrays (scores, coefficients), the line-search scratch, the cut
buffer (one class index per row and cut) and one (d+1) x M array stay in
memory (:func:`plan_memory` accounts them). Two products per
iteration: four passes over the blocks. With the blocks in order the sums
are those of the in-memory run with one thread, so a streamed run and an
in-memory one with ``--threads 1`` take the same iterates.
"""
import time

import numpy as np

from . import _ocas_cs_kernels as K
from .. import require_base
from ..base import kernel_bias
from ..memory_plan import LABEL_BYTES
from .ocas import _cut_limit, _threads_for, check_params
from .ocas_cs import TwoPassCrammerSinger, class_costs, class_indices, cs_model, cut_dtype, solve_with_threads
from .stream_memory import plan_cuts


def state_bytes(n, d1, M):
    """Bytes of ``-s ocas --multiclass cs``'s state beyond the labels, for n
    rows, d1 = d + 1 weights and M classes: class index, C_i and cut
    classes per row (24 n), six n x M arrays (scores S_b, S_d; coefficients
    G_b, G_c, G_d, G_new), the line search's n (M - 1) breakpoints and
    weights, and (d + 1) x M weights four times (the working W and, at the
    end, the model's copies)."""
    return 24 * n + 48 * n * M + 16 * n * (M - 1) + 4 * 8 * d1 * M


def plan_memory(name, n, d, params, limit, nnz=0, n_problems=1):
    """The MemoryPlan of ``-s ocas --multiclass cs --stream`` over
    ``n_problems`` = M classes (see :mod:`svmtrain.solvers.memory_plan`):
    the labels and :func:`state_bytes`; a cut is one class index per row
    (2 bytes below 2^15 classes), so the cut buffer takes the largest
    number of cuts that fits in half of what the state leaves
    (:func:`svmtrain.solvers.ocas.stream_memory.plan_cuts`)."""
    state = LABEL_BYTES * n + state_bytes(n, d + 1, n_problems)
    cut_row = np.dtype(cut_dtype(n_problems)).itemsize * n
    return plan_cuts(name, n, d, params, limit, state, cut_row, fill=True)


class SourceRows:
    """The two products of :class:`TwoPassCrammerSinger` over the blocks of
    a chunk source (the constant feature B included), ``nb`` threads."""

    def __init__(self, X, B, nb):
        self.X, self.B, self.nb = X, B, nb

    def weights(self, G, Wt):
        """Wt = (X~' G)' (class-major (M, d+1)): one pass, blocks in order."""
        b = self.X.bounds
        Wt.fill(0.0)
        for j, c in self.X.blocks():
            K.scatter_rows(c.indptr, c.indices, c.values, self.B, G[b[j]:b[j + 1]], Wt, self.nb)
        return Wt

    def scores(self, Wt, S):
        """S = X~ W (n x M): one pass."""
        b = self.X.bounds
        for j, c in self.X.blocks():
            K.row_scores(c.indptr, c.indices, c.values, self.B, Wt, S[b[j]:b[j + 1]], self.nb)
        return S


def train_model(source, labels, order, d, params, progress=None, log=None):
    """The Crammer-Singer LinearModel of the rows of ``source`` (a chunk
    source with n > 0 rows, ``labels`` theirs) over the classes ``order``,
    as :func:`svmtrain.solvers.ocas.ocas_cs.train_model` returns it in memory."""
    require_base("ocas", params)
    check_params(params, (1.0, 1.0))
    t0 = time.perf_counter()
    n, M, dim = source.n_rows, len(order), d + 1
    yi = class_indices(labels, order)
    costs, C = class_costs(order, params, n)
    cw = costs[yi]
    nb = _threads_for(params.threads, getattr(source, "max_block_nnz", source.nnz))
    B = kernel_bias(params)
    problem = TwoPassCrammerSinger(SourceRows(source, B, nb), B, yi, cw, M, dim, _cut_limit(params), nb)
    result = solve_with_threads(problem, n, dim, params, progress, log, nb, t0)
    return cs_model(result, order, d, params, C)
