"""The memory plan of ``-s ocas --stream`` and ``-s bmrm --stream``.

Both train from a chunk source with their in-memory modules (ocas's
cutting-plane loop makes a pass per iteration; bmrm is that loop), so
their plan is here rather than in a stream module: the per-row state, the
weight vectors and the cut buffer, sized by the limit
(:func:`plan_memory`, which their declarations name). Crammer-Singer
(``--multiclass cs``) has its own state and shares the cut-buffer sizing
(:func:`svmtrain.solvers.ocas.stream_ocas_cs.plan_memory`).
"""
from ..memory_plan import LABEL_BYTES, MIN_BLOCK_BYTES, MemoryPlan, check_limit
from .ocas import _cut_limit


def cut_bytes(cap, row_bytes):
    """A cut buffer of ``cap`` cuts of ``row_bytes`` each, with its Gram matrix and per-cut numbers."""
    return cap * row_bytes + 8 * cap * cap + 48 * cap


def plan_cuts(name, n, d, params, limit, state, cut_row, fill=False):
    """The MemoryPlan of a cut-buffer run whose state (labels included) is
    ``state`` bytes and whose cuts take ``cut_row`` bytes each: the cut
    buffer gets at most half of what the state leaves (at least 2 cuts, at
    most ``--cut-buffer``), the two block buffers 1/2.5 each of the rest.
    ``fill``: take the largest number of cuts that fits (short cuts, where
    the Gram matrix, quadratic in the cuts, dominates and the proportional
    guess falls far short)."""
    free = check_limit(name, n, d, limit, state, cut_bytes(2, cut_row))
    want = max(2, int(_cut_limit(params)))
    cap = want
    while cap > 2 and cut_bytes(cap, cut_row) > free / 2:
        cap = max(2, min(cap - 1, int(cap * (free / 2) / cut_bytes(cap, cut_row))))
    if fill:
        hi = want
        while cap < hi:
            mid = (cap + hi + 1) // 2
            if cut_bytes(mid, cut_row) <= free / 2:
                cap = mid
            else:
                hi = mid - 1
    cut = cut_bytes(cap, cut_row)
    return MemoryPlan(limit, state + cut, int(max(MIN_BLOCK_BYTES, (free - cut) / 2.5)),
                      cut_buffer=cap, want_cuts=_cut_limit(params))


def plan_memory(name, n, d, params, limit, nnz=0, n_problems=1):
    """The MemoryPlan of ``-s ocas --stream`` or ``-s bmrm --stream`` (see
    :mod:`svmtrain.solvers.memory_plan`): beside the labels 5 weight
    vectors (and one per numba thread with more than one), the per-row
    state of the outputs, violator flags and line search (43 bytes per
    row), and the cut buffer of (d+1)-vectors (:func:`plan_cuts`)."""
    import numba
    nb = max(1, int(numba.config.NUMBA_NUM_THREADS))
    d1 = d + 1
    state = LABEL_BYTES * n + (5 + (nb if nb > 1 else 0)) * 8 * d1 + 43 * n
    return plan_cuts(name, n, d, params, limit, state, 8 * d1)
