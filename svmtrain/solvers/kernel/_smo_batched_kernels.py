"""Numba kernels of ``-s smo --working-set Q``: the batched ("thunder")
decomposition of ThunderSVM (Wen, Shi, He, JMLR MLOSS 2018) and oneDAL's
``thunder`` method, over the dual of :mod:`._smo_kernels` (signs y, bounds
C, linear term p, data row index[t] of each variable t; the loop is in
``smo_batched.py``).

Each outer round:

1. :func:`select_working_set`: the global violation m(alpha) - M(alpha)
   (LIBSVM's stopping quantity) and the working set: the variables sorted
   by y G; alternately the next one from the left that is in I_up (the
   most violating by -y G) and the next one from the right in I_low (by
   y G), skipping the members kept from the previous round;
2. the kernel rows of the members (the shared row cache), and the q x q
   block of the members' kernel values: :func:`gather_block` reads it from
   their cached rows, :func:`compute_block` computes the new members' part
   from the data (the same bits);
3. :func:`inner_smo`: LIBSVM's pair steps (the same second-order
   selection ``_select_i``/``_select_j`` and clipping ``_pair`` as
   ``-s smo``) on the q variables with the rest fixed, until the local
   violation falls below max(eps, frac * its value at the start) or after
   ``max_steps`` steps; it leaves each member's coefficient change
   dalpha_s y_s;
4. :func:`update_gradient`: G_t += y_t sum_s K(x_index[s], x_index[t]) dalpha_s y_s
   over every variable t, in parallel over blocks of t, from the members'
   float32 cached rows.
"""
import numpy as np
from numba import njit, prange

from ..._numba.options import PRANGE, serial_twin
from ...mercer.cache import rows_into, rows_into_serial
from ...mercer.functions import densify_rows
from ._smo_kernels import block_select_i, block_select_j, copy_variables, pair_then_select_i

# variables per block of the gradient update (one thread task)
GRAD_BLOCK = 2048


@njit(cache=True, nogil=True, inline="always")
def _in_up(y, C, alpha, t):
    return alpha[t] < C[t] if y[t] > 0.0 else alpha[t] > 0.0


@njit(cache=True, nogil=True, inline="always")
def _in_low(y, C, alpha, t):
    return alpha[t] > 0.0 if y[t] > 0.0 else alpha[t] < C[t]


@njit(cache=True, nogil=True)
def violation(y, C, alpha, G):
    """m(alpha) - M(alpha): max over I_up of -y G plus max over I_low of y G (LIBSVM's Gmax + Gmax2)."""
    g1 = -np.inf
    g2 = -np.inf
    for t in range(y.shape[0]):
        f = y[t] * G[t]
        if _in_up(y, C, alpha, t) and -f > g1:
            g1 = -f
        if _in_low(y, C, alpha, t) and f > g2:
            g2 = f
    return g1 + g2


@njit(cache=True, nogil=True)
def _side(y, C, alpha, key, reach, up):
    """The first ``reach`` variables of I_up by increasing ``key`` (``up``),
    or of I_low by decreasing ``key``, in that order (all of the side when
    it has fewer), found by one partition and a sort of the few, and True;
    or (anything, False) when two of them, or the last and the next, have
    equal keys (their order is then the full sort's to decide)."""
    n = y.shape[0]
    sgn = 1.0 if up else -1.0
    vals = np.empty(n)
    members = np.empty(n, np.int64)
    m = 0
    for t in range(n):
        if _in_up(y, C, alpha, t) if up else _in_low(y, C, alpha, t):
            vals[m] = sgn * key[t]
            members[m] = t
            m += 1
    if m > reach:
        bound = np.partition(vals[:m], reach - 1)[reach - 1]
        k = 0
        for a in range(m):
            v = sgn * key[members[a]]
            if v <= bound:
                vals[k] = v
                members[k] = members[a]
                k += 1
        if k > reach:        # a tie at the boundary
            return members[:0], False
        m = k
    order = np.argsort(vals[:m])
    out = np.empty(m, np.int64)
    for a in range(m):
        out[a] = members[order[a]]
        if a > 0 and vals[order[a]] == vals[order[a - 1]]:
            return out, False
    return out, True


@njit(cache=True, nogil=True)
def _sides(y, C, alpha, key, reach):
    """(I_up by increasing key, I_low by decreasing key), each at least its
    first ``reach`` variables, in the order of the full argsort of ``key``."""
    left, ok_left = _side(y, C, alpha, key, reach, True)
    right, ok_right = _side(y, C, alpha, key, reach, False)
    if ok_left and ok_right:
        return left, right
    order = np.argsort(key)
    n = order.shape[0]
    left = np.empty(n, np.int64)
    right = np.empty(n, np.int64)
    n_left = n_right = 0
    for a in range(n):
        if _in_up(y, C, alpha, order[a]):
            left[n_left] = order[a]
            n_left += 1
        if _in_low(y, C, alpha, order[n - 1 - a]):
            right[n_right] = order[n - 1 - a]
            n_right += 1
    return left[:n_left], right[:n_right]


@njit(cache=True, nogil=True)
def select_working_set(y, C, alpha, G, flag, ws, start, key):
    """Fill ws[start:] with new members and return m(alpha) - M(alpha).

    ws[:start] are the members kept from the previous round. The
    variables are ordered by y G (``key``: float64[n] scratch); new members
    are taken alternately from the left among I_up (the largest -y G
    first) and from the right among I_low (the largest y G first),
    skipping members already in the set; when both sides run out, any
    variables not in the set fill it (they leave the inner problem
    unchanged). ``flag`` (bool[n], all False) is False again on return.

    Each side scans at most q of its variables (each one it passes is new,
    kept or taken by the other side), so only the first q of each side are
    sorted (:func:`_side`); when keys tie there the whole order is sorted
    as before, so the set is always the full sort's."""
    n = y.shape[0]
    q = ws.shape[0]
    for t in range(n):
        key[t] = y[t] * G[t]
    gap = violation(y, C, alpha, G)
    for b in range(start):
        flag[ws[b]] = True
    left, right = _sides(y, C, alpha, key, q)
    k = start
    li = ri = 0
    while k < q and (li < left.shape[0] or ri < right.shape[0]):
        while li < left.shape[0] and flag[left[li]]:
            li += 1
        if li < left.shape[0]:
            flag[left[li]] = True
            ws[k] = left[li]
            k += 1
        if k == q:
            break
        while ri < right.shape[0] and flag[right[ri]]:
            ri += 1
        if ri < right.shape[0]:
            flag[right[ri]] = True
            ws[k] = right[ri]
            k += 1
    t = 0
    while k < q:
        if not flag[t]:
            flag[t] = True
            ws[k] = t
            k += 1
        t += 1
    for b in range(q):
        flag[ws[b]] = False
    return gap


# tile edge of gather_block's transposed copy
TILE = 32


@njit(cache=True, nogil=True, parallel=PRANGE)
def move_kept(Kws, kept):
    """Kws[:kept, :kept] = Kws[q - kept:, q - kept:]: the block of the members
    kept from the last round (its last ``kept``, now its first). ``kept`` is
    at most q / 2, so that the old and new places do not overlap (the rows
    move in parallel)."""
    off = Kws.shape[0] - kept
    for a in prange(kept):
        src = Kws[off + a]
        dst = Kws[a]
        for b in range(kept):
            dst[b] = src[off + b]


@njit(cache=True, nogil=True, parallel=PRANGE)
def mirror_kept(Kws, kept):
    """Kws[:kept, kept:] = Kws[kept:, :kept] transposed (a symmetric block
    whose rows from ``kept`` on are filled), in tiles of TILE x TILE."""
    q = Kws.shape[0]
    n_tiles = (kept + TILE - 1) // TILE
    for ta in prange(n_tiles):
        a_hi = min(kept, (ta + 1) * TILE)
        for b0 in range(kept, q, TILE):
            b_hi = min(q, b0 + TILE)
            for a in range(ta * TILE, a_hi):
                for b in range(b0, b_hi):
                    Kws[a, b] = Kws[b, a]


@njit(cache=True, nogil=True, parallel=PRANGE)
def gather_block(ws, index, slots, M, Kws, kept, symmetric):
    """Kws[a, b] = K(x_index[ws[a]], x_index[ws[b]]) from the cached rows
    M[slots[a]]. With ``kept`` > 0 (at most q / 2) the members ws[:kept]
    are the last round's ws[q - kept:], whose block Kws[q - kept:, q - kept:]
    still holds their values: it is moved to Kws[:kept, :kept]
    (:func:`move_kept`) and only the rest is gathered. ``symmetric``: the cached rows are bitwise symmetric
    (every computed kernel: the dot products sum the same nonzero terms in
    the same order either way), so Kws[:kept, kept:] is copied from the
    new members' rows instead of read from the kept members' (a third
    fewer scattered reads); not for a user's precomputed matrix."""
    q = ws.shape[0]
    move_kept(Kws, kept)
    first = kept if symmetric else 0
    for a in prange(first, q):
        row = M[slots[a]]
        out = Kws[a]
        lo = kept if a < kept else 0
        for b in range(lo, q):
            out[b] = row[index[ws[b]]]
    if symmetric and kept > 0:
        mirror_kept(Kws, kept)


@njit(cache=True, nogil=True)
def compute_block(ws, index, Kws, kept, indptr, indices, values, sq, code, gamma, degree, coef0, squarings, D,
                  rows, sq_b, out_rows):
    """gather_block's Kws for a computed (symmetric) kernel, with the new
    members' rows Kws[kept:] computed from the data by the row cache's own
    kernel (``rows_into`` over the members' data rows, D.shape[1] new
    members at a time) instead of read from their cached rows: the same
    bits, and no scattered reads of rows that are mostly out of the CPU's
    caches. The arguments from ``indptr`` to ``squarings`` are the row
    cache's (``KernelCache.args()``); ``D`` (float64[d, >= 1], not the
    cache's own when threads share the cache), ``rows``, ``sq_b`` and
    ``out_rows`` (q entries) are scratch."""
    q = ws.shape[0]
    move_kept(Kws, kept)
    for b in range(q):
        rows[b] = index[ws[b]]
    step = D.shape[1]
    for c0 in range(kept, q, step):
        m = min(step, q - c0)
        for b in range(m):
            sq_b[b] = sq[rows[c0 + b]]
            out_rows[b] = c0 + b
        densify_rows(indptr, indices, values, rows[c0:], m, D.shape[0], D)
        rows_into(indptr, indices, values, sq, D, sq_b, m, code, gamma, degree, coef0, squarings, Kws,
                  out_rows[:m], rows[:q])
    if kept > 0:
        mirror_kept(Kws, kept)


@njit(cache=True, nogil=True)
def inner_smo(y, C, alpha, G, QD, ws, Kws, eps, frac, max_steps, F, keys, dcoef):
    """LIBSVM's pair steps on the members ws (the other variables fixed):
    second-order selection and clipping as ``-s smo``'s loop, the q x q
    kernel block ``Kws``. Stops when the local violation is below
    max(eps, frac * the local violation at the start), when no pair
    violates, or after ``max_steps`` steps. Writes the members' new
    alphas into ``alpha`` and dcoef[b] = (new - old alpha) y of member b
    (G is not touched: :func:`update_gradient` updates every variable).
    ``F`` (float64[6, >= q]) and ``keys`` (int64[>= q]) are scratch.
    Returns (steps, the local violation at the start)."""
    q = ws.shape[0]
    yc, Cc, ac, Gc, QDc = copy_variables(y, C, alpha, G, QD, ws, q, F)
    a0 = F[5]
    for b in range(q):
        a0[b] = ac[b]
    steps = 0
    first = -np.inf
    local_eps = eps
    qi, g_max = block_select_i(yc, Cc, ac, Gc, q, keys)     # (then chosen with each step's gradient update)
    while True:
        qj = -1
        g_max2 = -np.inf
        if qi >= 0:
            qj, g_max2 = block_select_j(yc, Cc, ac, Gc, QDc, q, qi, g_max, Kws[qi], keys)
        gap = g_max + g_max2
        if steps == 0:
            first = gap
            local_eps = max(eps, frac * gap)
        if qi < 0 or qj < 0 or gap < local_eps or steps >= max_steps:
            break
        _, _, qi, g_max = pair_then_select_i(yc, Cc, ac, Gc, QDc, Kws[qi], Kws[qj], qi, qj, q, keys)
        steps += 1
    for b in range(q):
        alpha[ws[b]] = ac[b]
        dcoef[b] = (ac[b] - a0[b]) * yc[b]
    return steps, first


@njit(cache=True, nogil=True, parallel=PRANGE)
def update_gradient(G, y, index, M, slots, coef, k, n_rows):
    """G[t] += y[t] sum_{b < k} coef[b] M[slots[b], index[t]] for every
    variable t, in parallel over blocks of GRAD_BLOCK variables (each block
    sums all k rows in a local buffer before touching G). ``n_rows``: the
    data rows; variables t with index[t] == t mod n_rows (every variable of
    C-SVC, one-class and LIBSVM's 2n-variable SVR) read the rows
    contiguously."""
    n = G.shape[0]
    contiguous = True
    for t in range(n):
        if index[t] != t % n_rows:
            contiguous = False
            break
    n_blocks = (n + GRAD_BLOCK - 1) // GRAD_BLOCK
    for blk in prange(n_blocks):
        lo = blk * GRAD_BLOCK
        hi = min(n, lo + GRAD_BLOCK)
        h = hi - lo
        acc = np.zeros(h)
        if contiguous and lo // n_rows == (hi - 1) // n_rows:
            base = lo - (lo // n_rows) * n_rows
            b = 0
            while b + 4 <= k:       # four rows per sweep of acc
                r0 = M[slots[b]]
                r1 = M[slots[b + 1]]
                r2 = M[slots[b + 2]]
                r3 = M[slots[b + 3]]
                c0, c1, c2, c3 = coef[b], coef[b + 1], coef[b + 2], coef[b + 3]
                for i in range(h):
                    acc[i] += c0 * r0[base + i] + c1 * r1[base + i] + c2 * r2[base + i] + c3 * r3[base + i]
                b += 4
            while b < k:
                row = M[slots[b]]
                c = coef[b]
                for i in range(h):
                    acc[i] += c * row[base + i]
                b += 1
        else:
            for b in range(k):
                row = M[slots[b]]
                c = coef[b]
                for i in range(h):
                    acc[i] += c * row[index[lo + i]]
        for i in range(h):
            G[lo + i] += y[lo + i] * acc[i]


# on data of fewer than PARALLEL_MIN_NNZ values: the same numbers, no parallel code
move_kept_serial = serial_twin(move_kept)
mirror_kept_serial = serial_twin(mirror_kept)
gather_block_serial = serial_twin(gather_block, {"move_kept": move_kept_serial, "mirror_kept": mirror_kept_serial})
compute_block_serial = serial_twin(compute_block, {"move_kept": move_kept_serial, "mirror_kept": mirror_kept_serial,
                                                   "rows_into": rows_into_serial})
update_gradient_serial = serial_twin(update_gradient)
