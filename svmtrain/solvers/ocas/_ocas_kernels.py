"""Numba kernels of ``-s ocas`` (the master loop lives in ``ocas.py``).

Notation (C-form, as svmocas):

    F(w) = 1/2 |w|^2 + sum_i c_i max(0, 1 - y_i w.x_i),   c_i = C * class cost

A cutting plane (cut) taken at a point w is the pair (a, b) with
``a = sum_{i in S} c_i y_i x_i`` and ``b = sum_{i in S} c_i`` over the set S
of margin violators at w; ``R(v) >= b - a.v`` for every v (for any S in
fact, which is why rounding in S can never make a cut invalid). The
reduced problem over cuts a_1..a_k has the dual

    max_alpha  b.alpha - 1/2 alpha' H alpha,  alpha >= 0, sum alpha <= Cb

with ``H_jl = a_j.a_l`` and primal solution ``w_c = sum_j alpha_j a_j``
(Cb = 1 since c_i already carries C; the value of any feasible alpha is a
lower bound on min F).

Outputs are kept as n-vectors: ``out_b = X w_b`` and ``out_d = X d`` with
``d = w_c - w_b``, so the line search and the next cut's violators need no
extra pass over the data.

Parallel kernels split their range into ``nb`` contiguous blocks (the
front passes the numba thread count) and each prange iteration owns one
block and its own row of partial results; partials are then summed in
block order. No kernel uses fastmath: reassociated reductions would
vectorise differently with the arrays' alignment, and the cutting-plane
path amplifies such last-bit differences (a run could then differ from
the same run in another process). So the result depends on ``nb`` only,
never on the thread schedule or the memory layout. Each such kernel is
called through ``_numba_options.by_blocks``: with ``nb == 1`` (small data,
``--threads 1``) its serial twin runs, the same code compiled without
``parallel``, so those runs compile no parallel code.
"""
import math

import numpy as np
from numba import njit, prange

from ..._numba.options import PRANGE, by_blocks

from ..._numba._linalg_kernels import lu_solve
from ..._numba._sort_kernels import argsort_range



DENSE_SPEEDUP = 4      # a dense cut's product costs about d / DENSE_SPEEDUP gathers' time (_work_bounds)


def _pass(cost, arg=0):
    """A ``by_blocks`` work estimate: a pass over the entries of array
    argument ``arg``, ``cost`` units each (PARALLEL_MIN_PASS: a unit is
    about 1.5 ns)."""
    return lambda args: cost * args[arg].size


def _cuts_work(sp_len, k, d, alpha=None):
    """The work of a pass over cuts 0..k-1 (those with alpha > 0 when
    ``alpha`` is given): each sparse cut's stored values, d / DENSE_SPEEDUP
    for each dense one (as ``_cut_work``)."""
    lens = sp_len[:k] if alpha is None else sp_len[:k][alpha[:k] > 0.0]
    return int(np.where(lens >= 0, lens, d // DENSE_SPEEDUP + 1).sum())


def _active(alpha, k):
    """How many of cuts 0..k-1 have alpha > 0."""
    return int(np.count_nonzero(alpha[:k] > 0.0))


# The work estimates of the cut-buffer kernels below (``by_blocks``; their
# argument tuples ``a`` as the kernels' signatures): dense products stream
# DENSE_SPEEDUP entries a unit, sparse cuts a stored value a unit, and the
# d- or n-vectors the kernel writes one or two units an entry.
def _rows_dot_work(a):          # (M, k, v, nb, out)
    return a[1] * a[2].shape[0] // DENSE_SPEEDUP


def _gram_row_mixed_work(a):    # (A, sp_start, sp_len, pidx, pval, k, a, nb, out)
    return _cuts_work(a[2], a[5], a[6].shape[0])


def _combine_mixed_work(a):     # (A, sp_start, sp_len, pidx, pval, alpha, k, w_b, w_c, w_d, nb)
    return _cuts_work(a[2], a[6], a[7].shape[0], a[5]) + 2 * a[7].shape[0]


def _combine_cuts_work(a):      # (A, alpha, k, w_b, w_c, w_d, nb)
    return _active(a[1], a[2]) * a[3].shape[0] // DENSE_SPEEDUP + 2 * a[3].shape[0]


def _combine_rows_work(a):      # (G, U, alpha, k, g_b, ...): two n-rows an active cut
    return 2 * _active(a[2], a[3]) * a[4].shape[0] // DENSE_SPEEDUP + 3 * a[4].shape[0]


# Gathers and scatters through stored indices (a[pidx[t]]) index with
# unsigned integers, as solvers/_common.py's row kernels do: numba then
# drops its negative-index wraparound test. The same sums in the same
# order; at the last cut buffer of the 12,779-row bag of words (275 cuts,
# a million pool entries, two threads) the Gram row took 0.70 ms against
# 1.45 and the combination 0.70 against 1.10; the scores pass of streamed
# and Dask Crammer-Singer runs (_ocas_cs_kernels.row_scores, which also
# takes each class's row of Wt once; 26,504 docstrings, 20 classes) 13-15
# ms against 23-43 (the in-memory runs' ``products`` did not change
# measurably).
_U = np.uint64


@njit(cache=True, nogil=True, inline="always")
def _block(b, nb, n):
    return (b * n) // nb, ((b + 1) * n) // nb


@njit(cache=True, nogil=True)
def _dot(x, y, lo, hi):
    """x[lo:hi].y[lo:hi] with eight interleaved partial sums.

    The summation order is fixed by the code (so the result does not
    depend on how the arrays happen to be aligned, as it would with
    fastmath reassociation), and the eight independent chains still let
    the compiler pipeline or vectorise the loop.
    """
    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0     # (scalars: an array here was a heap allocation a call)
    n8 = lo + ((hi - lo) // 8) * 8
    for q in range(lo, n8, 8):
        a0 += x[q] * y[q]
        a1 += x[q + 1] * y[q + 1]
        a2 += x[q + 2] * y[q + 2]
        a3 += x[q + 3] * y[q + 3]
        a4 += x[q + 4] * y[q + 4]
        a5 += x[q + 5] * y[q + 5]
        a6 += x[q + 6] * y[q + 6]
        a7 += x[q + 7] * y[q + 7]
    s = 0.0
    for q in range(n8, hi):
        s += x[q] * y[q]
    return (((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))) + s


# ---------------------------------------------------------------------------
# Per-example pass after the line search: new outputs of w_b, the loss, the
# violators of the next cut point and their summary.
# ---------------------------------------------------------------------------
@njit(cache=True, nogil=True, parallel=PRANGE)
def update_outputs_kernel(y, cw, out_b, out_d, t, mu, viol, prev, nb):
    """Move w_b to w_b + t d (d = w_c - w_b) and classify the next cut point.

    ``out_b`` (outputs of w_b) becomes ``out_b + t out_d`` in place, where
    ``out_d`` are the outputs of d. The cut point is ``(1-mu) w_b_new + mu
    w_c = w_b_new + mu (1-t) d``; ``viol[i]`` becomes 1 when example i
    violates the margin there (``y_i o_i < 1``), else 0. ``prev`` holds the
    violator flags of the previous cut (read only).

    Returns (loss, n_err, n_viol, b_sum, n_change): the weighted hinge loss
    of the new w_b, its training errors (y_i o_i <= 0), the number of
    violators of the cut point and the sum of their c_i, and how many
    flags differ from ``prev``.
    """
    n = y.shape[0]
    part = np.zeros((nb, 2))
    ipart = np.zeros((nb, 3), np.int64)
    step = mu * (1.0 - t)
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        loss = 0.0
        bsum = 0.0
        nerr = 0
        nv = 0
        nch = 0
        for i in range(lo, hi):
            # branch-free: the tests below are unpredictable per example
            ob = out_b[i] + t * out_d[i]
            out_b[i] = ob
            m = y[i] * ob
            loss += cw[i] * max(1.0 - m, 0.0)
            nerr += m <= 0.0
            z = y[i] * (ob + step * out_d[i])
            v = np.int8(z < 1.0)
            viol[i] = v
            nv += v
            bsum += cw[i] * v
            nch += v != prev[i]
        part[blk, 0] = loss
        part[blk, 1] = bsum
        ipart[blk, 0] = nerr
        ipart[blk, 1] = nv
        ipart[blk, 2] = nch
    loss = 0.0
    bsum = 0.0
    nerr = 0
    nv = 0
    nch = 0
    for blk in range(nb):
        loss += part[blk, 0]
        bsum += part[blk, 1]
        nerr += ipart[blk, 0]
        nv += ipart[blk, 1]
        nch += ipart[blk, 2]
    return loss, nerr, nv, bsum, nch


update_outputs = by_blocks(update_outputs_kernel, 8, _pass(2))


@njit(cache=True, nogil=True, parallel=PRANGE)
def loss_at_kernel(y, cw, out_b, out_d, t, nb):
    """sum_i c_i max(0, 1 - y_i (out_b_i + t out_d_i))."""
    n = y.shape[0]
    part = np.zeros(nb)
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        s = 0.0
        for i in range(lo, hi):
            m = y[i] * (out_b[i] + t * out_d[i])
            s += cw[i] * max(1.0 - m, 0.0)
        part[blk] = s
    s = 0.0
    for blk in range(nb):
        s += part[blk]
    return s


loss_at = by_blocks(loss_at_kernel, 5, _pass(1))


# ---------------------------------------------------------------------------
# The new cut: a = sum_i coef_i x_i over the rows with coef_i != 0.
# ---------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _scatter_range(indptr, indices, values, B, y, cw, viol, prev, delta, lo, hi, out):
    """The part of scatter_cut_kernel's sum that falls on features lo..hi-1."""
    n = y.shape[0]
    last = out.shape[0] - 1
    full = lo == 0 and hi == last + 1
    for i in range(n):
        c = viol[i] - prev[i] if delta else viol[i]
        if c != 0:
            a = c * cw[i] * y[i]
            if lo <= last < hi:
                out[last] += a * B
            if full:
                for p in range(_U(indptr[i]), _U(indptr[i + 1])):
                    out[_U(indices[p])] += a * values[p]
            else:
                for p in range(_U(indptr[i]), _U(indptr[i + 1])):
                    j = indices[p]
                    if lo <= j < hi:
                        out[_U(j)] += a * values[p]


SPLIT_FEATURES = True   # scatter_cut_kernel's feature ranges; False in its serial twin (one pass, the same sums)


@njit(cache=True, nogil=True, parallel=PRANGE)
def scatter_cut_kernel(indptr, indices, values, B, y, cw, viol, prev, delta, nb, buf, out):
    """out += sum_i coef_i x_i (the constant feature B included), where
    coef_i = c_i y_i viol_i (``delta`` false: the full cut) or
    coef_i = c_i y_i (viol_i - prev_i) (``delta`` true: the change from the
    previous cut, whose vector the caller has put in ``out``).

    With nb > 1, when the rows to add hold fewer values than about three
    times nb (d+1) / (nb - 1) (wide data, few rows), each block owns a
    feature range and reads every such row, keeping its own features;
    otherwise row blocks are scattered into the rows of ``buf`` (nb, d+1),
    one per block, then summed into ``out`` in block order, in parallel
    over feature ranges. ``buf`` is scratch; with nb == 1 it is not touched.
    The serial twin (``scatter_cut.serial``) gives the same numbers for the
    same nb: where this kernel splits the features it makes one pass.
    """
    n = y.shape[0]
    dd = out.shape[0]
    if nb == 1:
        _scatter_range(indptr, indices, values, B, y, cw, viol, prev, delta, 0, dd, out)
        return out
    nnz_sel = 0
    for i in range(n):
        c = viol[i] - prev[i] if delta else viol[i]
        if c != 0:
            nnz_sel += indptr[i + 1] - indptr[i]
    if (nb - 1) * nnz_sel < 3 * nb * dd:
        if SPLIT_FEATURES:
            for fb in prange(nb):
                lo, hi = _block(fb, nb, dd)
                _scatter_range(indptr, indices, values, B, y, cw, viol, prev, delta, lo, hi, out)
        else:   # (every feature's sum in the same row order as the ranges give, in one pass over the rows)
            _scatter_range(indptr, indices, values, B, y, cw, viol, prev, delta, 0, dd, out)
        return out
    last = dd - 1
    for blk in prange(nb):
        row = buf[blk]
        row[:] = 0.0
        lo, hi = _block(blk, nb, n)
        for i in range(lo, hi):
            c = viol[i] - prev[i] if delta else viol[i]
            if c != 0:
                a = c * cw[i] * y[i]
                row[last] += a * B
                for p in range(_U(indptr[i]), _U(indptr[i + 1])):
                    row[_U(indices[p])] += a * values[p]
    for fb in prange(nb):
        lo, hi = _block(fb, nb, dd)
        for blk in range(nb):
            row = buf[blk]
            for j in range(lo, hi):
                out[j] += row[j]
    return out


scatter_cut = by_blocks(scatter_cut_kernel, 9, replace={"SPLIT_FEATURES": False})


# ---------------------------------------------------------------------------
# Cut buffer: Gram row of a new cut, and w_c = sum alpha_j a_j.
# ---------------------------------------------------------------------------
@njit(cache=True, nogil=True, parallel=PRANGE)
def rows_dot_kernel(M, k, v, nb, out):
    """out[j] = M[j].v for j < k: one pass over the first k rows of M,
    parallel over column blocks (the O(k width), memory-bound step of
    each iteration)."""
    width = v.shape[0]
    part = np.zeros((nb, k))
    for fb in prange(nb):
        lo, hi = _block(fb, nb, width)
        for j in range(k):
            part[fb, j] = _dot(M[j], v, lo, hi)
    for j in range(k):
        s = 0.0
        for fb in range(nb):
            s += part[fb, j]
        out[j] = s
    return out


rows_dot = by_blocks(rows_dot_kernel, 3, _rows_dot_work)


def gram_row(A, k, slot, a, nb, out):
    """Store the cut ``a`` as ``A[slot]`` and set out[j] = A[j].a for j < k
    (slot < k); returns out[slot] = a.a."""
    A[slot] = a
    rows_dot(A, k, a, nb, out)
    return out[slot]


@njit(cache=True, nogil=True, inline="always")
def _cut_work(ln, d):
    """The work of a product with a cut: its ln stored values when sparse
    (ln >= 0), d / DENSE_SPEEDUP when dense (the product vectorises)."""
    return ln if ln >= 0 else d // DENSE_SPEEDUP + 1


@njit(cache=True, nogil=True)
def _work_bounds(sp_len, k, d, nb):
    """Cut indices 0 = bounds[0] <= ... <= bounds[nb] = k splitting cuts 0..k-1
    into nb runs of about equal work (``_cut_work``)."""
    total = 0
    for j in range(k):
        total += _cut_work(sp_len[j], d)
    bounds = np.empty(nb + 1, np.int64)
    bounds[0] = 0
    blk = 1
    acc = 0
    for j in range(k):
        acc += _cut_work(sp_len[j], d)
        while blk < nb and acc * nb >= blk * total:
            bounds[blk] = j + 1
            blk += 1
    while blk <= nb:
        bounds[blk] = k
        blk += 1
    return bounds


@njit(cache=True, nogil=True, parallel=PRANGE)
def gram_row_mixed_kernel(A, sp_start, sp_len, pidx, pval, k, a, nb, out):
    """out[j] = a_j.a for j < k where cut j is sparse (sp_len[j] >= 0: its
    sp_len[j] indices and values from sp_start[j] in pidx/pval, a gather
    from the dense ``a``, O(nnz_j)) or dense (row A[j], O(d)); parallel
    over blocks of consecutive cuts of about equal work (``_work_bounds``:
    the early cuts of a run touch far more features than the late ones),
    each product summed in one order (the results depend on nothing else)."""
    d = a.shape[0]
    bounds = _work_bounds(sp_len, k, d, nb)
    for blk in prange(nb):
        lo, hi = bounds[blk], bounds[blk + 1]
        for j in range(lo, hi):
            ln = sp_len[j]
            if ln >= 0:
                s = 0.0
                st = _U(sp_start[j])
                for t in range(st, st + _U(ln)):
                    s += pval[t] * a[_U(pidx[t])]
                out[j] = s
            else:
                out[j] = _dot(A[j], a, 0, d)
    return out


gram_row_mixed = by_blocks(gram_row_mixed_kernel, 7, _gram_row_mixed_work)


@njit(cache=True, nogil=True, inline="always")
def _difference_products(w_c, w_b, w_d, lo, hi, out):
    """w_d[lo:hi] = w_c - w_b there; out = (w_c.w_c, w_d.w_d, w_b.w_d) over
    [lo, hi), the last two from w_d itself (not as differences of dot
    products, which cancel badly when w_c is close to w_b)."""
    for q in range(lo, hi):
        w_d[q] = w_c[q] - w_b[q]
    out[0] = _dot(w_c, w_c, lo, hi)
    out[1] = _dot(w_d, w_d, lo, hi)
    out[2] = _dot(w_b, w_d, lo, hi)


@njit(cache=True, nogil=True, inline="always")
def _column_sums(part):
    """The three column sums of part (nb x 3), rows added in order."""
    scc = 0.0
    sdd = 0.0
    sbd = 0.0
    for fb in range(part.shape[0]):
        scc += part[fb, 0]
        sdd += part[fb, 1]
        sbd += part[fb, 2]
    return scc, sdd, sbd


@njit(cache=True, nogil=True, parallel=PRANGE)
def combine_mixed_kernel(A, sp_start, sp_len, pidx, pval, alpha, k, w_b, w_c, w_d, nb):
    """``combine_cuts`` over a buffer holding sparse cuts (see
    ``gram_row_mixed_kernel``): per block of features (in parallel) the
    dense active cuts are added as there, then the sparse active ones
    scattered, each cut's entries in the block found by bisection of its
    ascending indices, O(nnz) in all; every feature sums its terms in cut
    order, dense cuts first, so the blocks change nothing. Then w_d = w_c -
    w_b and the three products."""
    dd = w_c.shape[0]
    part = np.zeros((nb, 3))
    for fb in prange(nb):
        lo, hi = _block(fb, nb, dd)
        for q in range(lo, hi):
            w_c[q] = 0.0
        for j in range(k):
            aj = alpha[j]
            if aj > 0.0 and sp_len[j] < 0:
                Aj = A[j]
                for q in range(lo, hi):
                    w_c[q] += aj * Aj[q]
        for j in range(k):
            aj = alpha[j]
            if aj > 0.0 and sp_len[j] >= 0:
                st = sp_start[j]
                end = st + sp_len[j]
                t = _U(st + np.searchsorted(pidx[st:end], lo))
                while t < _U(end):
                    q = pidx[t]
                    if q >= hi:
                        break
                    w_c[_U(q)] += aj * pval[t]
                    t += _U(1)
    for fb in prange(nb):
        lo, hi = _block(fb, nb, dd)
        _difference_products(w_c, w_b, w_d, lo, hi, part[fb])
    return _column_sums(part)


combine_mixed = by_blocks(combine_mixed_kernel, 10, _combine_mixed_work)


@njit(cache=True, nogil=True)
def sparsify(a, pidx, pval, start):
    """Append the nonzeros of ``a`` (indices ascending) to pidx/pval from
    ``start`` (room for all of them); returns their count, or -1 when
    ``pval`` is float32 and one of them is not a float32 exactly (what was
    written is then of no use)."""
    t = start
    for q in range(a.shape[0]):
        v = a[q]
        if v != 0.0:
            pidx[t] = q
            pval[t] = v
            kept = pval[t]
            if kept != v and kept == kept:      # (NaN stays NaN)
                return -1
            t += 1
    return t - start


@njit(cache=True, nogil=True, parallel=PRANGE)
def axpy_sqnorm_kernel(w, t, v, nb):
    """w += t v in place; returns w.w (parallel over blocks)."""
    dd = w.shape[0]
    part = np.zeros(nb)
    for fb in prange(nb):
        lo, hi = _block(fb, nb, dd)
        for q in range(lo, hi):
            w[q] += t * v[q]
        part[fb] = _dot(w, w, lo, hi)
    s = 0.0
    for fb in range(nb):
        s += part[fb]
    return s


axpy_sqnorm = by_blocks(axpy_sqnorm_kernel, 3, _pass(1))


@njit(cache=True, nogil=True, parallel=PRANGE)
def combine_cuts_kernel(A, alpha, k, w_b, w_c, w_d, nb):
    """w_c = sum_{j<k, alpha_j>0} alpha_j A[j] and w_d = w_c - w_b.

    Returns (w_c.w_c, w_d.w_d, w_b.w_d), the last two computed from w_d
    itself (not as differences of dot products, which cancel badly when
    w_c is close to w_b)."""
    dd = w_c.shape[0]
    part = np.zeros((nb, 3))
    for fb in prange(nb):
        lo, hi = _block(fb, nb, dd)
        for q in range(lo, hi):
            w_c[q] = 0.0
        for j in range(k):
            aj = alpha[j]
            if aj > 0.0:
                Aj = A[j]
                for q in range(lo, hi):
                    w_c[q] += aj * Aj[q]
        _difference_products(w_c, w_b, w_d, lo, hi, part[fb])
    return _column_sums(part)


combine_cuts = by_blocks(combine_cuts_kernel, 6, _combine_cuts_work)


# ---------------------------------------------------------------------------
# Cuts as rows over the examples (ocas.RowForm): a_j = X~' G[j] and
# U[j] = X~ a_j, so w_c = X~' g_c with g_c = sum alpha_j G[j] and its outputs
# X~ w_c = sum alpha_j U[j] cost O(k n), not O(k d). w_b = s0 w0 + X~' g_b
# (w0 a warm start, out0 = X~ w0, n00 = |w0|^2; out0 is empty without one).
# ---------------------------------------------------------------------------
@njit(cache=True, nogil=True, parallel=PRANGE)
def combine_rows_kernel(G, U, alpha, k, g_b, out_b, out0, s0, n00, g_d, out_d, nb):
    """g_d = sum_{j<k, alpha_j>0} alpha_j G[j] - g_b and out_d = sum alpha_j
    U[j] - out_b (the coefficients and outputs of w_d = w_c - w_b).

    Returns (w_c.w_c, w_d.w_d, w_b.w_d), each as a sum over the examples
    of a coefficient times an output (w_d.w_d from g_d and out_d
    themselves, not as a difference of dot products)."""
    n = g_b.shape[0]
    warm = out0.shape[0] > 0
    part = np.zeros((nb, 5))
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        for i in range(lo, hi):
            g_d[i] = 0.0
            out_d[i] = 0.0
        for j in range(k):
            aj = alpha[j]
            if aj > 0.0:
                Gj = G[j]
                Uj = U[j]
                for i in range(lo, hi):
                    g_d[i] += aj * Gj[i]
                    out_d[i] += aj * Uj[i]
        part[blk, 0] = _dot(g_d, out_d, lo, hi)          # g_c . out_c = |w_c|^2
        for i in range(lo, hi):
            g_d[i] -= g_b[i]
            out_d[i] -= out_b[i]
        part[blk, 1] = _dot(g_d, out_d, lo, hi)
        part[blk, 2] = _dot(g_d, out_b, lo, hi)
        if warm:
            part[blk, 3] = _dot(g_d, out0, lo, hi)
            part[blk, 4] = _dot(g_b, out0, lo, hi)
    s = np.zeros(5)
    for blk in range(nb):
        for q in range(5):
            s[q] += part[blk, q]
    scc = s[0]
    sdd = s[1] - s0 * (s[3] - s0 * n00)
    sbd = s[2] - s0 * (s0 * n00 + s[4])
    return scc, sdd, sbd


combine_rows = by_blocks(combine_rows_kernel, 11, _combine_rows_work)


@njit(cache=True, nogil=True, parallel=PRANGE)
def shift_rows_kernel(g_b, t, g_d, out_b, out0, s0, n00, nb):
    """g_b += t g_d in place (w_b moved to w_b + t w_d, whose outputs out_b
    and weight s0 of w0 the caller has already moved); returns |w_b|^2 =
    g_b.out_b + s0 (s0 n00 + g_b.out0)."""
    n = g_b.shape[0]
    warm = out0.shape[0] > 0
    part = np.zeros((nb, 2))
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        for i in range(lo, hi):
            g_b[i] += t * g_d[i]
        part[blk, 0] = _dot(g_b, out_b, lo, hi)
        if warm:
            part[blk, 1] = _dot(g_b, out0, lo, hi)
    s_b = 0.0
    s_0 = 0.0
    for blk in range(nb):
        s_b += part[blk, 0]
        s_0 += part[blk, 1]
    return s_b + s0 * (s0 * n00 + s_0)


shift_rows = by_blocks(shift_rows_kernel, 7, _pass(1))


# ---------------------------------------------------------------------------
# Reduced problem: min f(alpha) = 1/2 alpha'H alpha - b.alpha
#                  s.t. alpha >= 0, sum alpha <= Cb.
# ---------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _qp_gradient(H, bvec, alpha, k, g):
    """g = H alpha - b over the first k coordinates; returns sum alpha."""
    asum = 0.0
    for j in range(k):
        g[j] = -bvec[j]
    for l in range(k):
        al = alpha[l]
        if al != 0.0:
            asum += al
            for j in range(k):
                g[j] += H[j, l] * al
    return asum


@njit(cache=True, nogil=True)
def _qp_value(H, bvec, alpha, k):
    f = 0.0
    for j in range(k):
        aj = alpha[j]
        if aj != 0.0:
            s = 0.0
            for l in range(k):
                s += H[j, l] * alpha[l]
            f += aj * (0.5 * s - bvec[j])
    return f


@njit(cache=True, nogil=True)
def _qp_newton(H, bvec, Cb, support, with_sum):
    """The minimiser of the QP restricted to ``support`` (all others 0),
    with the sum constraint as an equality (``with_sum``) or dropped.
    Returns (ok, z) where ok says z is strictly positive and feasible."""
    m = support.shape[0]
    dim = m + 1 if with_sum else m
    M = np.zeros((dim, dim))
    r = np.zeros(dim)
    for a in range(m):
        ja = support[a]
        r[a] = bvec[ja]
        for c in range(m):
            M[a, c] = H[ja, support[c]]
    if with_sum:
        for a in range(m):
            M[a, m] = 1.0
            M[m, a] = 1.0
        r[m] = Cb
    x = lu_solve(M, r, 1e-13)[1]
    z = x[:m].copy()
    tot = 0.0
    for a in range(m):
        if not (z[a] > 0.0):
            return False, z
        tot += z[a]
    if tot > Cb:
        if tot > Cb * (1.0 + 1e-12):
            return False, z
        for a in range(m):
            z[a] *= Cb / tot
    return True, z


@njit(cache=True, nogil=True)
def _qp_polish(H, bvec, alpha, k, Cb, asum):
    """Try to jump to the exact solution on the current support (a Newton
    step on the face of the feasible set); keep it only if it is feasible
    and does not increase the objective. Returns True when taken."""
    m = 0
    for j in range(k):
        m += alpha[j] > 0.0
    if m == 0:
        return False
    support = np.empty(m, np.int64)
    m = 0
    for j in range(k):
        if alpha[j] > 0.0:
            support[m] = j
            m += 1
    on_face = asum >= Cb * (1.0 - 1e-12)
    ok, z = _qp_newton(H, bvec, Cb, support, on_face)
    if not ok:
        ok, z = _qp_newton(H, bvec, Cb, support, not on_face)
        if not ok:
            return False
    f_old = _qp_value(H, bvec, alpha, k)
    old = alpha[:k].copy()
    for a in range(m):
        alpha[support[a]] = z[a]
    if _qp_value(H, bvec, alpha, k) <= f_old:
        return True
    for j in range(k):
        alpha[j] = old[j]
    return False


@njit(cache=True, nogil=True)
def _eqp(H, bvec, free, k, Cb):
    """Minimiser of the QP on the face {z_j = 0 for j not free, sum z = Cb}
    (z over the k cuts and the slack, index k): the KKT system
    [H_FF 1; 1' 0] [y; nu] = [b_F; Cb]. Returns (ok, y over F, F)."""
    m = 0
    for j in range(k + 1):
        m += free[j]
    F = np.empty(m, np.int64)
    m = 0
    for j in range(k + 1):
        if free[j]:
            F[m] = j
            m += 1
    M = np.zeros((m + 1, m + 1))
    r = np.zeros(m + 1)
    for a in range(m):
        ja = F[a]
        if ja < k:
            r[a] = bvec[ja]
            for c in range(m):
                jc = F[c]
                if jc < k:
                    M[a, c] = H[ja, jc]
        M[a, m] = 1.0
        M[m, a] = 1.0
    r[m] = Cb
    ok, x = lu_solve(M, r, 0.0)
    if not ok:  # singular face: a basic solution of the well-conditioned part
        x = lu_solve(M, r, 1e-13)[1]
    for a in range(m + 1):
        if not np.isfinite(x[a]):
            return False, x[:m].copy(), F
    return True, x[:m].copy(), F


@njit(cache=True, nogil=True)
def qp_active_set(H, bvec, alpha, k, Cb, tol_gap, max_iter):
    """Primal active-set method for the reduced dual (in place, warm start).

    The slack s = Cb - sum alpha is the coordinate k (zero row, column and
    linear term), so the feasible set is the simplex {z >= 0, sum z = Cb}.
    The free set F starts as the support of the warm start. Each step
    minimises the QP on the face of F exactly (a dense (|F|+1)^2 KKT
    solve); if that point is feasible it is taken and the coordinate of
    least gradient outside F enters when its gradient is more than
    tol_gap / Cb below the common gradient on F (otherwise the point is
    optimal up to a reduced duality gap of tol_gap); if not, the step stops
    at the first coordinate that hits zero, which leaves F.

    Returns the number of face solves, negated when it gave up (a face
    solve failed, no progress, or max_iter): ``qp_simplex`` then finishes
    from the feasible point left in alpha.
    """
    z = np.empty(k + 1)
    tot = 0.0
    for j in range(k):
        z[j] = alpha[j] if alpha[j] > 0.0 else 0.0
        tot += z[j]
    if tot > Cb:
        for j in range(k):
            z[j] *= Cb / tot
        tot = Cb
    z[k] = Cb - tot
    free = np.zeros(k + 1, np.bool_)
    for j in range(k + 1):
        free[j] = z[j] > 0.0
    g = np.empty(k + 1)
    last_in = -1
    it = 0
    status = 1
    while True:
        if it >= max_iter:
            status = -1
            break
        it += 1
        ok, y, F = _eqp(H, bvec, free, k, Cb)
        if not ok:
            status = -1
            break
        m = F.shape[0]
        tau = 1.0
        block = -1
        for a in range(m):
            ja = F[a]
            if y[a] < 0.0:
                t = z[ja] / (z[ja] - y[a])
                if t < tau:
                    tau = t
                    block = a
        if block < 0:
            for a in range(m):
                z[F[a]] = y[a]
            # gradient; the entering candidate is the least one outside F
            for j in range(k):
                s = -bvec[j]
                for a in range(m):
                    ja = F[a]
                    if ja < k:
                        s += H[j, ja] * z[ja]
                g[j] = s
            g[k] = 0.0
            lam = 0.0
            for a in range(m):
                lam += z[F[a]] * g[F[a]]
            lam /= Cb
            jin = -1
            gmin = lam - tol_gap / Cb
            for j in range(k + 1):
                if not free[j] and g[j] < gmin:
                    gmin = g[j]
                    jin = j
            if jin < 0:
                break
            free[jin] = True
            last_in = jin
        else:
            if tau <= 0.0 and F[block] == last_in:
                status = -1
                break
            for a in range(m):
                ja = F[a]
                z[ja] += tau * (y[a] - z[ja])
            z[F[block]] = 0.0
            free[F[block]] = False
            for a in range(m):
                if z[F[a]] <= 0.0:
                    z[F[a]] = 0.0
                    free[F[a]] = False
            last_in = -1 if last_in == F[block] else last_in
    for j in range(k):
        alpha[j] = z[j] if z[j] > 0.0 else 0.0
    return it * status


@njit(cache=True, nogil=True, inline="always")
def _hx(H, k, a, c):
    """H extended by the slack coordinate k (zero row and column)."""
    return H[a, c] if a < k and c < k else 0.0


@njit(cache=True, nogil=True)
def _rcol(H, k, F, m, j, c):
    """Column of the reduced Hessian for coordinate j on the face F[:m]
    (base F[0]): c[i - 1] = (e_Fi - e_F0)' H (e_j - e_F0), i = 1..m-1;
    returns its diagonal entry (e_j - e_F0)' H (e_j - e_F0)."""
    f0 = F[0]
    h00 = _hx(H, k, f0, f0)
    hj0 = _hx(H, k, j, f0)
    for i in range(1, m):
        fi = F[i]
        c[i - 1] = _hx(H, k, fi, j) - _hx(H, k, fi, f0) - hj0 + h00
    return _hx(H, k, j, j) - 2.0 * hj0 + h00


@njit(cache=True, nogil=True)
def _chol_forward(L, q, c, out):
    """out = L^-1 c (L lower triangular q x q); returns out.out."""
    ss = 0.0
    for i in range(q):
        v = c[i]
        row = L[i]
        for r in range(i):
            v -= row[r] * out[r]
        v /= row[i]
        out[i] = v
        ss += v * v
    return ss


@njit(cache=True, nogil=True)
def _chol_backward(L, q, v):
    """v = L'^-1 v in place (column-oriented: rows of L only)."""
    for i in range(q - 1, -1, -1):
        si = v[i] / L[i, i]
        v[i] = si
        row = L[i]
        for r in range(i):
            v[r] -= row[r] * si


@njit(cache=True, nogil=True)
def chol_delete(L, q, c):
    """L L' = R (q x q, L lower triangular) -> the factor of R without row
    and column c, in L[:q-1, :q-1], by Givens rotations of L's columns."""
    for i in range(c, q - 1):
        for r in range(i + 2):
            L[i, r] = L[i + 1, r]
    for i in range(c, q - 1):
        a = L[i, i]
        b = L[i, i + 1]
        rho = math.hypot(a, b)
        if rho == 0.0:
            continue
        cs = a / rho
        sn = b / rho
        for r in range(i, q - 1):
            t1 = L[r, i]
            t2 = L[r, i + 1]
            L[r, i] = cs * t1 + sn * t2
            L[r, i + 1] = -sn * t1 + cs * t2
        L[i, i + 1] = 0.0
    for r in range(q):
        L[q - 1, r] = 0.0
        L[r, q - 1] = 0.0


@njit(cache=True, nogil=True)
def _move_along(H, k, F, m, p, jx, px, z, g, tau):
    """z += tau p over the face F[:m] (and coordinate jx with px when
    jx >= 0); g = H z - b follows (the slack's g stays 0)."""
    for a in range(m + (1 if jx >= 0 else 0)):
        ja = F[a] if a < m else jx
        pa = p[a] if a < m else px
        if pa == 0.0:
            continue
        z[ja] += tau * pa
        if ja < k:
            d = tau * pa
            row = H[ja]
            for l in range(k):
                g[l] += d * row[l]


@njit(cache=True, nogil=True)
def _ratio(F, m, p, jx, px, z, tau):
    """The largest step <= tau keeping z + t p >= 0 over F[:m] (and jx):
    (t, blocking position in F, m for jx, or -1)."""
    blk = -1
    for a in range(m + (1 if jx >= 0 else 0)):
        pa = p[a] if a < m else px
        if pa < 0.0:
            za = z[F[a]] if a < m else z[jx]
            t = za / -pa if za > 0.0 else 0.0
            if t < tau:
                tau = t
                blk = a
    return tau, blk


@njit(cache=True, nogil=True)
def qp_faces(H, bvec, alpha, k, Cb, tol_gap, max_iter):
    """Primal active-set method for the reduced dual (in place, warm
    start), with an updated factorisation: the successor of
    ``qp_active_set`` (same problem, slack coordinate k, same entering rule
    and tolerance), at O(m^2 + k m) per face instead of a dense O(m^3)
    KKT solve.

    On the face F (the coordinates allowed to be positive; base f0 = F[0])
    the simplex is parametrised by the moves e_Fi - e_f0, whose reduced
    Hessian R (the Gram matrix of the cut differences a_Fi - a_f0; the
    slack's cut is 0) is kept as its Cholesky factor L L' = R: a coordinate
    entering appends a row (a triangular solve), one leaving deletes a row
    (Givens rotations), and each face step is two triangular solves (the
    Newton step from the current point, cut short at the first coordinate
    that reaches zero, which leaves). Cuts are often linearly dependent
    (k cuts in fewer dimensions than k, e.g. regression on a few features):
    a coordinate whose new pivot vanishes (R singular) is not added;
    instead the point moves along the null direction of R (where f is
    linear) downhill until a coordinate of the face (or the new one)
    reaches zero and leaves, and the coordinate is tried again. The base
    leaving, or a rejected warm start, rebuilds the factor from scratch.
    Every iterate is feasible and f never increases.

    Returns the number of faces visited, negated when it gave up
    (numerical trouble or max_iter): ``qp_simplex`` then finishes from the
    feasible point left in alpha.
    """
    n1 = k + 1
    z = np.empty(n1)
    tot = 0.0
    for j in range(k):
        z[j] = alpha[j] if alpha[j] > 0.0 else 0.0
        tot += z[j]
    if tot > Cb:
        for j in range(k):
            z[j] *= Cb / tot
        tot = Cb
    z[k] = Cb - tot if Cb - tot > 0.0 else 0.0
    g = np.zeros(n1)
    for j in range(k):
        g[j] = -bvec[j]
    for a in range(k):
        if z[a] > 0.0:
            row = H[a]
            za = z[a]
            for l in range(k):
                g[l] += za * row[l]
    cap = 8
    for j in range(n1):
        cap += z[j] > 0.0
    cap = min(cap * 2, n1)
    L = np.zeros((cap, cap))
    F = np.empty(n1, np.int64)
    inF = np.zeros(n1, np.bool_)
    col = np.empty(n1)
    lvec = np.empty(n1)
    p = np.empty(n1)
    pending = np.empty(n1, np.int64)
    m = 0
    npend = 0
    rebuild = True
    it = 0
    status = 1
    jadd = -1          # coordinate being added (from pending or entering)
    while True:
        if it >= max_iter:
            status = -1
            break
        if rebuild:
            rebuild = False

            for a in range(m):
                inF[F[a]] = False
            f0 = -1
            best = 0.0
            for j in range(n1):
                if z[j] > best:
                    best = z[j]
                    f0 = j
            if f0 < 0:
                status = -1
                break
            F[0] = f0
            inF[f0] = True
            m = 1
            npend = 0
            for j in range(n1):
                if j != f0 and z[j] > 0.0:
                    pending[npend] = j
                    npend += 1
            jadd = -1
        if jadd < 0 and npend > 0:
            npend -= 1
            jadd = pending[npend]
        if jadd >= 0:
            # add jadd to the face: append a row to L, or move along R's null direction
            it += 1
            j = jadd
            q = m - 1
            d = _rcol(H, k, F, m, j, col)
            ll = _chol_forward(L, q, col, lvec)
            delta = d - ll
            if d > 0.0 and delta > 1e-11 * d:
                if q + 1 > L.shape[0] - 1 or m + 1 > L.shape[0]:
                    big = min(2 * L.shape[0] + 2, n1)
                    L2 = np.zeros((big, big))
                    L2[:q, :q] = L[:q, :q]
                    L = L2
                for r in range(q):
                    L[q, r] = lvec[r]
                L[q, q] = math.sqrt(delta)
                F[m] = j
                inF[j] = True
                m += 1
                jadd = -1
                continue
            # null direction s = (-L'^-1 l, 1) over (F[1:], j); base -sum
            for r in range(q):
                p[r] = lvec[r]
            _chol_backward(L, q, p)
            psum = 0.0
            for a in range(q, 0, -1):
                p[a] = -p[a - 1]
                psum += p[a]
            p[0] = -(psum + 1.0)
            pj = 1.0
            slope = pj * g[j]
            for a in range(m):
                slope += p[a] * g[F[a]]
            if slope > 0.0:
                for a in range(m):
                    p[a] = -p[a]
                pj = -1.0
            tau, blk = _ratio(F, m, p, j, pj, z, np.inf)
            if blk < 0:
                status = -1
                break
            _move_along(H, k, F, m, p, j, pj, z, g, tau)
            if blk == m:        # j itself reached zero: it stays out
                z[j] = 0.0
                jadd = -1
                continue
            out = F[blk]
            z[out] = 0.0
            inF[out] = False
            if blk == 0:
                rebuild = True   # j still has z > 0 (or 0): rebuild picks it up if positive
                continue
            chol_delete(L, m - 1, blk - 1)
            for a in range(blk, m - 1):
                F[a] = F[a + 1]
            m -= 1
            continue              # try j again
        # Newton step on the face from z: R s = -rg, rg_i = g_Fi - g_f0
        it += 1
        q = m - 1
        f0 = F[0]
        for a in range(q):
            p[a] = -(g[F[a + 1]] - g[f0])
        _chol_forward(L, q, p, lvec)
        for a in range(q):
            p[a] = lvec[a]
        _chol_backward(L, q, p)
        psum = 0.0
        for a in range(q, 0, -1):
            p[a] = p[a - 1]
            psum += p[a]
        p[0] = -psum
        tau, blk = _ratio(F, m, p, -1, 0.0, z, 1.0)
        if tau > 0.0:
            _move_along(H, k, F, m, p, -1, 0.0, z, g, tau)
        if blk >= 0:
            out = F[blk]
            z[out] = 0.0
            inF[out] = False
            if blk == 0:
                rebuild = True
                continue
            chol_delete(L, q, blk - 1)
            for a in range(blk, m - 1):
                F[a] = F[a + 1]
            m -= 1
            continue
        # the face's minimiser: price the coordinates outside it
        lam = 0.0
        zs = 0.0
        for a in range(m):
            lam += z[F[a]] * g[F[a]]
            zs += z[F[a]]
        lam /= zs
        jin = -1
        gmin = lam - tol_gap / Cb
        for j in range(n1):
            if not inF[j] and g[j] < gmin:
                gmin = g[j]
                jin = j
        if jin < 0:
            break
        z[jin] = 0.0
        jadd = jin
    for j in range(k):
        alpha[j] = z[j] if z[j] > 0.0 else 0.0
    return it * status


@njit(cache=True, nogil=True)
def qp_simplex(H, bvec, alpha, k, Cb, tol_abs, tol_rel, max_steps, max_faces, polish=True):
    """Solve the reduced dual in place over alpha[:k] (warm start).

    First the active-set method ``qp_active_set`` (exact up to rounding; a
    few face solves per call when warm started; at most ``max_faces``, 0
    skips it). Then, to certify the gap, or to finish where the active-set
    method gave up (degenerate faces), a sequential two-coordinate
    (SMO-like) method: the inequality is made an equality by a slack
    coordinate s = Cb - sum alpha with zero row and column in H and zero
    linear term. Each step moves mass from a positive coordinate j to the
    coordinate i of least gradient (i by steepest descent, j by the
    second-order gain (g_j - g_i)^2 / (H_ii + H_jj - 2 H_ij)), with the
    exact clipped step. The cuts are often nearly parallel (H
    ill-conditioned), where two-coordinate steps crawl once the support
    has settled; so whenever the support has not changed for a while, a
    Newton step solves the QP restricted to that support (a small dense
    linear system) and is kept when it is feasible and no worse (not with
    ``polish`` false: pair steps only, as libocas's ``libqp_splx``). Every
    iterate is feasible, so -f is always a valid lower bound.

    Stops when the duality gap of the reduced problem (the Frank-Wolfe gap
    alpha.g - Cb min(0, min g), g = H alpha - b, which equals the reduced
    primal at w = sum alpha_j a_j minus the dual value) is <=
    max(tol_abs, tol_rel * |f|), or after max_steps steps.

    Returns (f, gap, steps, hit_tol) with f the objective at the returned
    alpha (the reduced dual value is -f).
    """
    if max_faces > 0:
        qp_faces(H, bvec, alpha, k, Cb, tol_abs, max_faces)
    g = np.empty(k)
    asum = _qp_gradient(H, bvec, alpha, k, g)
    if asum > Cb:  # defensive: scale a drifted warm start back
        for j in range(k):
            alpha[j] *= Cb / asum
        asum = _qp_gradient(H, bvec, alpha, k, g)
    steps = 0
    f = 0.0
    gap = 0.0
    hit = False
    stable = 0
    wait = 10
    while True:
        # objective, gap and the up coordinate (index k = slack, g = 0)
        ag = 0.0
        ab = 0.0
        gi = 0.0
        i = k
        for j in range(k):
            ag += alpha[j] * g[j]
            ab += alpha[j] * bvec[j]
            if g[j] < gi:
                gi = g[j]
                i = j
        # alpha'H alpha = alpha.(g + b)
        f = 0.5 * (ag + ab) - ab
        gap = ag - Cb * gi
        if gap <= tol_abs or gap <= tol_rel * abs(f):
            hit = True
            break
        if steps >= max_steps:
            break
        if polish and stable >= wait:
            stable = 0
            if _qp_polish(H, bvec, alpha, k, Cb, asum):
                asum = _qp_gradient(H, bvec, alpha, k, g)
                wait = 10
                continue
            wait *= 2
        slack = Cb - asum
        Hii = H[i, i] if i < k else 0.0
        # down coordinate: second-order choice among positive coordinates
        j_best = -1
        best = -1.0
        for j in range(k + 1):
            if j < k:
                if alpha[j] <= 0.0:
                    continue
                gj = g[j]
                Hjj = H[j, j]
                Hij = H[i, j] if i < k else 0.0
            else:
                if slack <= 0.0:
                    continue
                gj = 0.0
                Hjj = 0.0
                Hij = 0.0
            diff = gj - gi
            if diff <= 0.0 or j == i:
                continue
            eta = Hii + Hjj - 2.0 * Hij
            if eta < 1e-12 * (Hii + Hjj) or eta <= 0.0:
                eta = max(1e-12 * (Hii + Hjj), 1e-300)
            gain = diff * diff / eta
            if gain > best:
                best = gain
                j_best = j
        if j_best < 0:
            hit = True
            break
        j = j_best
        gj = g[j] if j < k else 0.0
        Hjj = H[j, j] if j < k else 0.0
        Hij = H[i, j] if (i < k and j < k) else 0.0
        eta = Hii + Hjj - 2.0 * Hij
        if eta < 1e-12 * (Hii + Hjj) or eta <= 0.0:
            eta = max(1e-12 * (Hii + Hjj), 1e-300)
        avail = alpha[j] if j < k else slack
        d = (gj - gi) / eta
        changed = False
        if d >= avail:
            d = avail
            changed = True
        if i < k:
            changed = changed or alpha[i] == 0.0
            alpha[i] += d
            for l in range(k):
                g[l] += d * H[l, i]
        else:
            asum -= d
        if j < k:
            alpha[j] = 0.0 if d == avail else alpha[j] - d
            for l in range(k):
                g[l] -= d * H[l, j]
        else:
            asum += d
        stable = 0 if changed else stable + 1
        steps += 1
    return f, gap, steps, hit


# ---------------------------------------------------------------------------
# Exact line search: min_{t >= 0} F((1-t) w_b + t w_c).
# ---------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _walk(kb, wb, order, lo, G, qa):
    """Walk sorted breakpoints from the point lo (derivative there qa*lo+G,
    < 0) and return the minimiser of the piecewise quadratic."""
    for r in range(order.shape[0]):
        q = order[r]
        kq = kb[q]
        if qa * kq + G >= 0.0:
            if qa > 0.0:
                t = -G / qa
                return t if t > lo else lo
            return lo
        G += wb[q]
        lo = kq
    if qa > 0.0:
        t = -G / qa
        return t if t > lo else lo
    return lo


@njit(cache=True, nogil=True)
def _as_float(bits):
    """The float64 whose IEEE bit pattern is the int64 ``bits``."""
    tmp = np.empty(1, np.int64)
    tmp[0] = bits
    return tmp.view(np.float64)[0]


@njit(cache=True, nogil=True, parallel=PRANGE)
def _prefix_hist_kernel(kbits, wb, prefix, pshift, shift, nbins, nb):
    """Weight of the breakpoints per bin: among the t_i whose bit pattern
    has ``kbits >> pshift == prefix`` (all of them when pshift == 64), bin
    ``(kbits >> shift) & (nbins - 1)``. Per-block rows summed in order."""
    n = kbits.shape[0]
    h = np.zeros((nb, nbins))
    mask = nbins - 1
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        row = h[blk]
        if pshift >= 64:
            for i in range(lo, hi):
                row[(kbits[i] >> shift) & mask] += wb[i]
        else:
            for i in range(lo, hi):
                kbit = kbits[i]
                if (kbit >> pshift) == prefix:
                    row[(kbit >> shift) & mask] += wb[i]
    out = np.zeros(nbins)
    for blk in range(nb):
        for j in range(nbins):
            out[j] += h[blk, j]
    return out


_prefix_hist = by_blocks(_prefix_hist_kernel, 6, _pass(1))


@njit(cache=True, nogil=True)
def _select_bin(hist, key0, shift, G, qa):
    """The first bin whose upper end U has qa U + G + (weight up to and
    including the bin) >= 0, i.e. where phi' changes sign. Bin j spans the
    bit patterns [(key0 + j) << shift, (key0 + j + 1) << shift).
    Returns (j, G before bin j)."""
    nbins = hist.shape[0]
    bits = np.empty(1, np.int64)        # one scratch word for the bit casts (not one per bin)
    as_float = bits.view(np.float64)
    for j in range(nbins):
        top = key0 + j + 1
        if top >= (np.int64(1) << (63 - shift)):
            U = np.inf
        else:
            bits[0] = top << shift
            U = as_float[0]
        if qa * U + G + hist[j] >= 0.0:
            return j, G
        G += hist[j]
    return nbins - 1, G - hist[nbins - 1]


@njit(cache=True, nogil=True, parallel=PRANGE, error_model="numpy")
def breakpoints_kernel(y, cw, out_b, out_d, qb, nb, kb, wb):
    """Pass 1 of the line search (see ``line_search``): every example's
    breakpoint t_i = p_i / r_i into ``kb`` (inf when it has none in
    (0, inf)) and its weight c_i |r_i| into ``wb`` (0 when none).

    Returns (qb + phi'(0+) of the loss, number of breakpoints); the sum
    starts from ``qb`` and adds the blocks' partial sums in block order.
    """
    n = y.shape[0]
    g0p = np.zeros(nb)
    cnt = np.zeros(nb, np.int64)
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        g = 0.0
        c = 0
        for i in range(lo, hi):
            p = 1.0 - y[i] * out_b[i]
            r = y[i] * out_d[i]
            # active on all of (0, eps): r > 0, p > 0  or  r < 0, p >= 0
            act = ((r > 0.0) & (p > 0.0)) | ((r < 0.0) & (p >= 0.0))
            # a breakpoint in (0, inf): r > 0, p > 0  or  r < 0, p < 0
            isbp = ((r > 0.0) & (p > 0.0)) | ((r < 0.0) & (p < 0.0))
            g -= cw[i] * r * act
            c += isbp
            kb[i] = p / r if isbp else np.inf
            wb[i] = cw[i] * abs(r) * isbp
        g0p[blk] = g
        cnt[blk] = c
    G = qb
    m = 0
    for blk in range(nb):
        G += g0p[blk]
        m += cnt[blk]
    return G, m


breakpoints = by_blocks(breakpoints_kernel, 5, _pass(3))


@njit(cache=True, nogil=True, parallel=PRANGE, error_model="numpy")
def svr_breakpoints_kernel(y, out_b, out_d, p, cost, qb, nb, kb, wb):
    """Pass 1 of the exact line search of the epsilon-insensitive loss
    (``--task r``, ``ocas_regression``): phi(t) = 1/2 |w_b + t d|^2 +
    cost sum_i max(0, |e_i + t r_i| - p), e_i = out_b_i - y_i, r_i = out_d_i.
    Row i's loss is the sum of two hinges max(0, u + t v), (u, v) = (e_i - p,
    r_i) and (-e_i - p, -r_i), each with a breakpoint in (0, inf) where
    u v < 0, at t = -u / v, raising phi' by cost |v|. Row i's two
    breakpoints go to kb[2i], kb[2i + 1] (inf, weight 0 when none), their
    weights to wb (both 2n long), the input of ``minimise_over_breakpoints``.

    Returns (qb + phi'(0+) of the loss, number of breakpoints), block sums
    added in block order."""
    n = y.shape[0]
    g0p = np.zeros(nb)
    cnt = np.zeros(nb, np.int64)
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        g = 0.0
        c = 0
        for i in range(lo, hi):
            e = out_b[i] - y[i]
            r = out_d[i]
            for h in range(2):
                u = e - p if h == 0 else -e - p
                v = r if h == 0 else -r
                # active on (0, eps): u > 0, or u == 0 and v > 0
                if u > 0.0 or (u == 0.0 and v > 0.0):
                    g += cost * v
                q = 2 * i + h
                if (u < 0.0 and v > 0.0) or (u > 0.0 and v < 0.0):
                    kb[q] = -u / v
                    wb[q] = cost * abs(v)
                    c += 1
                else:
                    kb[q] = np.inf
                    wb[q] = 0.0
        g0p[blk] = g
        cnt[blk] = c
    G = qb
    m = 0
    for blk in range(nb):
        G += g0p[blk]
        m += cnt[blk]
    return G, m


svr_breakpoints = by_blocks(svr_breakpoints_kernel, 6, _pass(3))


def svr_line_search(y, out_b, out_d, p, cost, qa, qb, nb, kb, wb):
    """The exact minimiser t >= 0 of the epsilon-insensitive SVR objective
    along d (see ``svr_breakpoints_kernel``; qa = |d|^2 > 0, qb = w_b.d,
    ``kb``/``wb`` scratch arrays of length 2n). Returns (t, breakpoints)."""
    G, m = svr_breakpoints(y, out_b, out_d, p, cost, qb, nb, kb, wb)
    return minimise_over_breakpoints(kb, wb, G, m, qa, nb), m


@njit(cache=True, nogil=True, parallel=PRANGE)
def _prefix_counts_kernel(kbits, key, shift, nb):
    """Per block, how many bit patterns have ``kbits >> shift == key``."""
    n = kbits.shape[0]
    cnt = np.zeros(nb, np.int64)
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        c = 0
        for i in range(lo, hi):
            c += (kbits[i] >> shift) == key
        cnt[blk] = c
    return cnt


_prefix_counts = by_blocks(_prefix_counts_kernel, 3, _pass(1))


def count_prefix(kbits, key, shift, nb):
    """How many bit patterns have ``kbits >> shift == key``."""
    return int(_prefix_counts(kbits, key, shift, nb).sum())


@njit(cache=True, nogil=True, parallel=PRANGE)
def gather_prefix_kernel(kb, wb, key, shift, nb):
    """The breakpoints ``kb`` (and weights ``wb``) whose bit patterns have
    ``bits >> shift == key``, in index order, as two new arrays."""
    n = kb.shape[0]
    kbits = kb.view(np.int64)
    cnt = np.empty(nb, np.int64)
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        c = 0
        for i in range(lo, hi):
            c += (kbits[i] >> shift) == key
        cnt[blk] = c
    tot = 0
    for blk in range(nb):
        c = cnt[blk]
        cnt[blk] = tot
        tot += c
    sk = np.empty(tot)
    sw = np.empty(tot)
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        o = cnt[blk]
        for i in range(lo, hi):
            if (kbits[i] >> shift) == key:
                sk[o] = kb[i]
                sw[o] = wb[i]
                o += 1
    return sk, sw


gather_prefix = by_blocks(gather_prefix_kernel, 4, _pass(1))


def line_search(y, cw, out_b, out_d, qa, qb, nb, kb, wb):
    """The exact minimiser t* >= 0 of

        phi(t) = 1/2 |w_b + t d|^2 + sum_i c_i max(0, p_i - t r_i)

    with d = w_c - w_b, p_i = 1 - y_i out_b_i, r_i = y_i out_d_i (out_d =
    the outputs of d); the regulariser's derivative is qa t + qb
    (qa = |d|^2 > 0, qb = w_b.d). ``kb``/``wb`` are n-sized scratch arrays.

    phi' is piecewise linear and increasing; each example with a breakpoint
    t_i = p_i / r_i > 0 raises it by c_i |r_i| there. The minimiser is
    found by walking the breakpoints in sorted order from phi'(0+) until
    phi' turns >= 0. Sorting all n of them would cost O(n log n) serial
    time per iteration, so the walk is narrowed first (a radix-style
    selection on the IEEE bit patterns, which order positive doubles
    exactly): a histogram of the breakpoint weights by binary exponent
    finds the binade where phi' changes sign, a second histogram by the
    next 12 mantissa bits finds the sub-range inside it, and only the
    breakpoints of that sub-range are gathered, sorted (argsort_range) and
    walked. Every pass is parallel over blocks and O(n); the result is the
    exact minimiser that sorting everything gives.

    Returns (t, n_breakpoints).
    """
    # pass 1: phi'(0+) and every example's breakpoint (inf, weight 0 when none)
    G, m = breakpoints(y, cw, out_b, out_d, qb, nb, kb, wb)
    return minimise_over_breakpoints(kb, wb, G, m, qa, nb), m


def minimise_over_breakpoints(kb, wb, G, m, qa, nb):
    """The minimiser t* >= 0 of a convex piecewise quadratic whose
    derivative is qa t + G at 0+ and rises by wb[q] > 0 at each breakpoint
    kb[q] > 0 (inf with weight 0 where there is none; m of them are
    finite), by the radix-style selection described in ``line_search``."""
    if G >= 0.0:
        return 0.0
    if m == 0:
        return -G / qa
    kbits = kb.view(np.int64)
    # level 1: sign bit (0) + 11 exponent bits
    h1 = _prefix_hist(kbits, wb, 0, 64, 52, 2048, nb)
    e, G = _select_bin(h1, 0, 52, G, qa)
    if e == 2047:  # phi' < 0 past every breakpoint
        return -G / qa
    # level 2: the next 12 bits inside binade e
    h2 = _prefix_hist(kbits, wb, e, 52, 40, 4096, nb)
    s, G = _select_bin(h2, e << 12, 40, G, qa)
    key = (e << 12) | s
    lo_t = _as_float(key << 40)
    # gather that bin's breakpoints (bit patterns with kbits >> 40 == key)
    sk, sw = gather_prefix(kb, wb, key, 40, nb)
    order = np.empty(sk.shape[0], np.int64)
    argsort_range(sk, 0, sk.shape[0], order)
    return _walk(sk, sw, order, lo_t, G, qa)
