"""Numba kernels of ``-s smo``: LIBSVM's ``Solver`` (the loops are in ``smo.py``).

The dual problem, over variables t with signs y_t = +-1, per-variable
bounds C_t and linear term p_t:

    min_alpha  f(alpha) = 1/2 alpha' Q alpha + p' alpha,   Q_st = y_s y_t K(x_index[s], x_index[t]),
    s.t.       0 <= alpha_t <= C_t,  y' alpha = constant,

C-SVC: one variable per row, p = -1. epsilon-SVR: two per row (index[t] =
t mod n; y = +1 then -1; p = eps - z, eps + z). One-class: one per row,
y = +1, p = 0, started from LIBSVM's feasible alpha (sum nu n).

by sequential minimal optimisation with the second-order working-set
selection of Fan, Chen and Lin (JMLR 2005), as LIBSVM's ``Solver``: G is
the gradient Q alpha + p; i maximises -y_t G_t over I_up = {t: alpha_t <
C_t, y_t = 1, or alpha_t > 0, y_t = -1}; j, among the t in I_low with
-y_t G_t < -y_i G_i, minimises -(b_it)^2 / a_it (b_it the gradient gap,
a_it = K_ii + K_tt - 2 K_it, or TAU when that is not positive); the pair
is solved exactly with LIBSVM's clipping; G is updated with the two kernel
rows. It stops when m(alpha) - M(alpha) = max over I_up + max over I_low of
-y G and y G falls below eps (LIBSVM's -e, default 0.001).

Kernel rows come from the shared LRU row cache
(:mod:`svmtrain.mercer.cache`, float32 rows, ``-m`` MB) through ``fetch``
(its serial twin on small data), so the loop never returns to Python but
every ``chunk`` iterations (for the progress bar).
"""
import numpy as np
from numba import njit

from ..._numba._bit_kernels import bits_of, double_of
from ..._numba.options import serial_twin
from ...mercer.cache import fetch, fetch_serial, partial_row, partial_row_serial

TAU = 1e-12


# the loop's persistent state (``run``'s ``stats``)
# (WHOLE, set by the caller: every kernel row is resident in the cache, which
# the caller filled; LAST_M: the active size of the last compact epoch)
STEPS, OPTIMAL, ACTIVE, COUNTER, UNSHRUNK, EPOCH, WHOLE, LAST_M = 0, 1, 2, 3, 4, 5, 6, 7
N_STATS = 8


@njit(cache=True, nogil=True, inline="always")
def _row(j, js, slots, indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
         M, slot_of, owner, stamp, state, D, miss_rows, miss_slots):
    """K(x_j, .) from the cache (computed on a miss)."""
    js[0] = j
    fetch(js, indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
          M, slot_of, owner, stamp, state, D, miss_rows, miss_slots, slots)
    return M[slots[0]]


@njit(cache=True, nogil=True)
def _select_i(y, C, alpha, G, act, m):
    """(the maximal violating index on the I_up side among act[:m], its -y G)."""
    g_max = -np.inf
    i = -1
    for q in range(m):
        t = act[q]
        if y[t] > 0.0:
            if alpha[t] < C[t] and -G[t] >= g_max:
                g_max = -G[t]
                i = t
        elif alpha[t] > 0.0 and G[t] >= g_max:
            g_max = G[t]
            i = t
    return i, g_max


@njit(cache=True, nogil=True)
def _select_j(y, C, alpha, G, QD, act, m, i, g_max, K_i, index):
    """(the second-order choice j on the I_low side among act[:m], the max
    of y G over I_low there)."""
    g_max2 = -np.inf
    j = -1
    best = np.inf
    for q in range(m):
        t = act[q]
        if y[t] > 0.0:
            if alpha[t] <= 0.0:
                continue
            diff = g_max + G[t]
            if G[t] >= g_max2:
                g_max2 = G[t]
        else:
            if alpha[t] >= C[t]:
                continue
            diff = g_max - G[t]
            if -G[t] >= g_max2:
                g_max2 = -G[t]
        if diff > 0.0:
            quad = QD[i] + QD[t] - 2.0 * K_i[index[t]]
            if quad <= 0.0:
                quad = TAU
            obj = -(diff * diff) / quad
            if obj <= best:
                best = obj
                j = t
    return j, g_max2


# --- the selections over a block of contiguous variables, vectorised ----------
# The same choices as _select_i / _select_j (the last index of the maximal
# value, the last of the minimal objective; -0.0 and 0.0 equal), found by
# comparing int64 keys that order as the float64 values: the loops then have
# no data-dependent branch and run in SIMD lanes (measured 2-3x faster per
# variable on 400-3000 variables). The equality is tested in tests/test_smo_block_select.py.

_MAGNITUDE = np.int64(0x7FFFFFFFFFFFFFFF)


@njit(cache=True, nogil=True, inline="always")
def order_key(x):
    """An int64 that orders as the float64 ``x`` does (x not NaN; -0.0 and
    0.0 get the key of 0.0): negative numbers' magnitude bits flipped."""
    b = bits_of(x + 0.0)
    return b ^ ((b >> 63) & _MAGNITUDE)


@njit(cache=True, nogil=True, inline="always")
def key_value(k):
    """The float64 of an :func:`order_key` (0.0 for either zero)."""
    return double_of(k ^ ((k >> 63) & _MAGNITUDE))


@njit(cache=True, nogil=True, inline="always")
def _last_of(keys, m, k):
    """The last q < m with keys[q] == k (-1 if none)."""
    found = -1
    for q in range(m):
        found = max(found, q if keys[q] == k else -1)
    return found


@njit(cache=True, nogil=True)
def block_select_i(yc, Cc, ac, Gc, m, keys):
    """_select_i over the contiguous variables 0..m-1: (i, its -y G), or
    (-1, -inf) when I_up is empty. ``keys``: int64[>= m] scratch."""
    none = order_key(-np.inf)
    best = none
    for q in range(m):
        y = yc[q]
        a = ac[q]
        up = ((y > 0.0) & (a < Cc[q])) | ((y < 0.0) & (a > 0.0))
        k = order_key(-y * Gc[q])
        k = k if up else none
        keys[q] = k
        best = max(best, k)
    if best == none:
        return -1, -np.inf
    i = _last_of(keys, m, best)
    return i, -yc[i] * Gc[i]


@njit(cache=True, nogil=True)
def block_select_j(yc, Cc, ac, Gc, QDc, m, qi, g_max, K_i, keys):
    """_select_j over the contiguous variables 0..m-1 (K_i: i's kernel row
    over them): (j or -1, the max of y G over I_low, -inf when empty)."""
    none = order_key(-np.inf)
    top = order_key(np.inf)
    g2 = none
    best = top
    qd = QDc[qi]
    for q in range(m):
        y = yc[q]
        a = ac[q]
        low = ((y > 0.0) & (a > 0.0)) | ((y < 0.0) & (a < Cc[q]))
        yg = y * Gc[q]
        g2 = max(g2, order_key(yg) if low else none)
        diff = g_max + yg
        quad = qd + QDc[q] - 2.0 * K_i[q]
        quad = quad if quad > 0.0 else TAU
        obj = -(diff * diff) / quad
        k = order_key(obj) if (low & (diff > 0.0)) else top
        keys[q] = k
        best = min(best, k)
    g_max2 = key_value(g2) if g2 != none else -np.inf
    if best == top:
        return -1, g_max2
    return _last_of(keys, m, best), g_max2


@njit(cache=True, nogil=True)
def _be_shrunk(t, y, C, alpha, G, g1, g2):
    if alpha[t] >= C[t]:
        return -G[t] > (g1 if y[t] > 0.0 else g2)
    if alpha[t] <= 0.0:
        return G[t] > (g2 if y[t] > 0.0 else g1)
    return False


@njit(cache=True, nogil=True)
def _shrink(y, C, alpha, G, act, m, eps, stats):
    """LIBSVM's do_shrinking over act[:m]: moves the bounded indices that
    cannot enter a violating pair behind the active ones; returns the new
    active size. The first time the gap falls below 10 eps it asks for the
    whole gradient instead (returns -1: the caller reconstructs and
    unshrinks)."""
    g1 = -np.inf     # max -y G over I_up
    g2 = -np.inf     # max y G over I_low
    for q in range(m):
        t = act[q]
        if y[t] > 0.0:
            if alpha[t] < C[t]:
                g1 = max(g1, -G[t])
            if alpha[t] > 0.0:
                g2 = max(g2, G[t])
        else:
            if alpha[t] < C[t]:
                g2 = max(g2, -G[t])
            if alpha[t] > 0.0:
                g1 = max(g1, G[t])
    if stats[UNSHRUNK] == 0 and g1 + g2 <= 10.0 * eps:
        stats[UNSHRUNK] = 1
        return -1
    q = 0
    while q < m:
        if _be_shrunk(act[q], y, C, alpha, G, g1, g2):
            m -= 1
            while m > q:
                if not _be_shrunk(act[m], y, C, alpha, G, g1, g2):
                    tmp = act[q]
                    act[q] = act[m]
                    act[m] = tmp
                    break
                m -= 1
        q += 1
    return m


# why _compact_steps stopped
COMPACT_SHRINK, COMPACT_OPTIMAL, COMPACT_LIMIT = 0, 1, 2


def compact_work(n, d, max_mb=64, whole=False):
    """The buffers of :func:`_compact_steps` for n variables over data of d
    features, for active sets of up to w = n // 2 + 1 variables (n when
    ``whole``: see WHOLE): float64[5, n] (y, C, alpha, G, QD of each active
    position), int64[n] (its data row), float32[S + 1, w] compact kernel
    rows (S direct-mapped slots, at most ``max_mb`` MB, and a spare),
    int64[2, S] (each slot's variable and epoch), float64[d] (a dense row,
    zero), int64[w] (the selections' keys) and int64[w] (the last epoch's
    active list)."""
    width = n if whole else n // 2 + 1
    S = int(max(2, min(4096, (max_mb << 20) // (4 * width) - 1)))
    return (np.zeros((5, n)), np.zeros(n, np.int64), np.zeros((S + 1, width), np.float32),
            np.full((2, S), -1, np.int64), np.zeros(d), np.zeros(width, np.int64), np.zeros(width, np.int64))


@njit(cache=True, nogil=True)
def _compact_row(v, home, avoid, epoch, m, index, rowc, Mc, own, dense, indptr, indices, values, sq, code,
                 gamma, degree, coef0, squarings, M, slot_of):
    """The slot of Mc holding variable v's kernel row over the m active
    positions (K(x_index[v], x_rowc[q])), kept for this epoch: gathered from
    the shared cache's full row when it holds it, else computed for the
    active rows only. Its slot is home mod the slots (home: v, or under
    WHOLE its position, which no other active variable shares). Slot
    ``avoid`` (the pair's other row) is never overwritten: the spare slot
    is used instead."""
    S = Mc.shape[0] - 1
    h = home % S
    if own[0, h] == v and own[1, h] == epoch:
        return h
    if h == avoid:
        h = S
    else:
        own[0, h] = v
        own[1, h] = epoch
    r = index[v]
    s = slot_of[r]
    row = Mc[h]
    if s >= 0:
        full = M[s]
        for q in range(m):
            row[q] = full[rowc[q]]
    else:
        partial_row(r, rowc, m, row, dense, indptr, indices, values, sq, code, gamma, degree, coef0, squarings)
    return h


@njit(cache=True, nogil=True)
def _keep_rows(stats, act, m, last, rowc, index, Mc, own, M, slot_of, changed):
    """Whether the compact rows of the last epoch are kept for the active
    list act[:m] (``rowc`` already its data rows): only with WHOLE (each row
    a copy of a resident full row) and when at most m / 8 positions hold
    another variable than then; the kept rows' entries at those positions
    are gathered again, so every row still equals a fresh gather. Records
    act[:m] in ``last``; ``changed`` (int64[>= m]) is scratch."""
    k = 0
    if stats[WHOLE] != 0:
        for q in range(m):
            if q >= stats[LAST_M] or last[q] != act[q]:
                changed[k] = q
                k += 1
    keep = stats[WHOLE] != 0 and stats[LAST_M] > 0 and 8 * k <= m
    if keep and k > 0:
        epoch = stats[EPOCH]
        for h in range(own.shape[1]):
            if own[1, h] == epoch:
                full = M[slot_of[index[own[0, h]]]]
                row = Mc[h]
                for c in range(k):
                    row[changed[c]] = full[rowc[changed[c]]]
    for q in range(m):
        last[q] = act[q]
    stats[LAST_M] = m
    return keep


@njit(cache=True, nogil=True)
def _compact_steps(y, C, index, alpha, G, G_bar, QD, act, m, eps, max_steps, stats, work, js, slots,
                   indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
                   M, slot_of, owner, stamp, state, D, miss_rows, miss_slots):
    """:func:`run`'s steps over the active variables act[:m] copied to
    contiguous arrays (position q holds variable act[q]: the same order, so
    the same choices), with kernel rows restricted to them (compact rows,
    kept until the next shrink). Stops before a step when the shrinking
    counter runs out (COMPACT_SHRINK), when the active problem is optimal
    (COMPACT_OPTIMAL), or after max_steps (COMPACT_LIMIT); writes alpha and
    G back. Returns (steps taken, why)."""
    F, rowc, Mc, own, dense, keys, last = work
    yc, Cc, ac, Gc, QDc = copy_variables(y, C, alpha, G, QD, act, m, F)
    for q in range(m):
        rowc[q] = index[act[q]]
    if not _keep_rows(stats, act, m, last, rowc, index, Mc, own, M, slot_of, keys):
        stats[EPOCH] += 1
    epoch = stats[EPOCH]
    whole = stats[WHOLE] != 0
    taken = 0
    why = COMPACT_LIMIT
    first = True
    qi, g_max = block_select_i(yc, Cc, ac, Gc, m, keys)     # (then chosen with each step's gradient update)
    while taken < max_steps:
        if not first:
            stats[COUNTER] -= 1
            if stats[COUNTER] == 0:
                why = COMPACT_SHRINK
                break
        first = False
        qj = -1
        g_max2 = -np.inf
        si = -1
        if qi >= 0:
            si = _compact_row(act[qi], qi if whole else act[qi], -1, epoch, m, index, rowc, Mc, own, dense, indptr,
                              indices, values, sq, code, gamma, degree, coef0, squarings, M, slot_of)
            qj, g_max2 = block_select_j(yc, Cc, ac, Gc, QDc, m, qi, g_max, Mc[si], keys)
        if qi < 0 or qj < 0 or g_max + g_max2 < eps:
            why = COMPACT_OPTIMAL
            break
        sj = _compact_row(act[qj], qj if whole else act[qj], si, epoch, m, index, rowc, Mc, own, dense, indptr,
                          indices, values, sq, code, gamma, degree, coef0, squarings, M, slot_of)
        a_i, a_j, next_i, next_g = pair_then_select_i(yc, Cc, ac, Gc, QDc, Mc[si], Mc[sj], qi, qj, m, keys)
        n_i, n_j = ac[qi], ac[qj]
        # G_bar (every variable) needs the full rows, rarely
        if (a_i >= Cc[qi]) != (n_i >= Cc[qi]):
            full = _row(rowc[qi], js, slots, indptr, indices, values, sq, code, gamma, degree, coef0,
                        squarings, M, slot_of, owner, stamp, state, D, miss_rows, miss_slots)
            _bound_change(G_bar, y, index, full, yc[qi], Cc[qi], a_i, n_i)
        if (a_j >= Cc[qj]) != (n_j >= Cc[qj]):
            full = _row(rowc[qj], js, slots, indptr, indices, values, sq, code, gamma, degree, coef0,
                        squarings, M, slot_of, owner, stamp, state, D, miss_rows, miss_slots)
            _bound_change(G_bar, y, index, full, yc[qj], Cc[qj], a_j, n_j)
        taken += 1
        qi, g_max = next_i, next_g
    for q in range(m):
        t = act[q]
        alpha[t] = ac[q]
        G[t] = Gc[q]
    return taken, why


@njit(cache=True, nogil=True, inline="always")
def _pair(y_i, y_j, C_i, C_j, a_i, a_j, G_i, G_j, QD_i, QD_j, Q_ij):
    """The two-variable sub-problem, solved and clipped as LIBSVM does: (new a_i, new a_j)."""
    if y_i != y_j:
        quad = QD_i + QD_j + 2.0 * Q_ij
        if quad <= 0.0:
            quad = TAU
        delta = (-G_i - G_j) / quad
        diff = a_i - a_j
        n_i = a_i + delta
        n_j = a_j + delta
        if diff > 0.0:
            if n_j < 0.0:
                n_j = 0.0
                n_i = diff
        else:
            if n_i < 0.0:
                n_i = 0.0
                n_j = -diff
        if diff > C_i - C_j:
            if n_i > C_i:
                n_i = C_i
                n_j = C_i - diff
        else:
            if n_j > C_j:
                n_j = C_j
                n_i = C_j + diff
    else:
        quad = QD_i + QD_j - 2.0 * Q_ij
        if quad <= 0.0:
            quad = TAU
        delta = (G_i - G_j) / quad
        total = a_i + a_j
        n_i = a_i - delta
        n_j = a_j + delta
        if total > C_i:
            if n_i > C_i:
                n_i = C_i
                n_j = total - C_i
        else:
            if n_j < 0.0:
                n_j = 0.0
                n_i = total
        if total > C_j:
            if n_j > C_j:
                n_j = C_j
                n_i = total - C_j
        else:
            if n_i < 0.0:
                n_i = 0.0
                n_j = total
    return n_i, n_j


@njit(cache=True, nogil=True, inline="always")
def copy_variables(y, C, alpha, G, QD, members, m, F):
    """Rows 0-4 of F (float64[>= 5, >= m]) get y, C, alpha, G and QD of the
    variables members[:m], in that order (a block's contiguous copies);
    returns those five rows."""
    for q in range(m):
        t = members[q]
        F[0, q] = y[t]
        F[1, q] = C[t]
        F[2, q] = alpha[t]
        F[3, q] = G[t]
        F[4, q] = QD[t]
    return F[0], F[1], F[2], F[3], F[4]


@njit(cache=True, nogil=True, inline="always")
def _block_pair(yc, Cc, ac, Gc, QDc, K_i, qi, qj):
    """The pair (qi, qj) of a block solved and clipped by ``_pair``, its
    alphas stored; returns (the two alphas before, their coefficient
    changes (new - old) y)."""
    a_i, a_j = ac[qi], ac[qj]
    n_i, n_j = _pair(yc[qi], yc[qj], Cc[qi], Cc[qj], a_i, a_j, Gc[qi], Gc[qj], QDc[qi], QDc[qj],
                     yc[qi] * yc[qj] * K_i[qj])
    ac[qi] = n_i
    ac[qj] = n_j
    return a_i, a_j, (n_i - a_i) * yc[qi], (n_j - a_j) * yc[qj]


@njit(cache=True, nogil=True, inline="always")
def pair_on_block(yc, Cc, ac, Gc, QDc, K_i, K_j, qi, qj, m):
    """One LIBSVM step on the pair (qi, qj) of a block of m contiguous
    variables (signs yc, bounds Cc, alphas ac, gradients Gc, diagonal QDc;
    K_i, K_j the kernel rows of qi and qj over the block): the two alphas
    solved and clipped by ``_pair``, every gradient of the block updated.
    Returns the two alphas before the step. (The solvers take the fused
    :func:`pair_then_select_i`; this unfused step is what its test holds
    it to.)"""
    a_i, a_j, d_i, d_j = _block_pair(yc, Cc, ac, Gc, QDc, K_i, qi, qj)
    for q in range(m):
        Gc[q] += yc[q] * (K_i[q] * d_i + K_j[q] * d_j)
    return a_i, a_j


@njit(cache=True, nogil=True)
def pair_then_select_i(yc, Cc, ac, Gc, QDc, K_i, K_j, qi, qj, m, keys):
    """:func:`pair_on_block`, then :func:`block_select_i` of the next step,
    in the same pass over the block as the gradient update (the same
    numbers as the two calls). Returns (the two alphas before the step,
    the next i, its -y G)."""
    a_i, a_j, d_i, d_j = _block_pair(yc, Cc, ac, Gc, QDc, K_i, qi, qj)
    none = order_key(-np.inf)
    best = none
    for q in range(m):
        y = yc[q]
        g = Gc[q] + y * (K_i[q] * d_i + K_j[q] * d_j)
        Gc[q] = g
        a = ac[q]
        up = ((y > 0.0) & (a < Cc[q])) | ((y < 0.0) & (a > 0.0))
        k = order_key(-y * g)
        k = k if up else none
        keys[q] = k
        best = max(best, k)
    if best == none:
        return a_i, a_j, -1, -np.inf
    i = _last_of(keys, m, best)
    return a_i, a_j, i, -yc[i] * Gc[i]


@njit(cache=True, nogil=True, inline="always")
def _bound_change(G_bar, y, index, K, y_v, C_v, a_old, a_new):
    """G_bar += (the change of variable v's part at its upper bound) over every variable."""
    if (a_old >= C_v) != (a_new >= C_v):
        sgn = C_v * y_v if a_new >= C_v else -C_v * y_v
        for t in range(y.shape[0]):
            G_bar[t] += y[t] * K[index[t]] * sgn


@njit(cache=True, nogil=True)
def run(y, C, p, index, alpha, G, G_bar, QD, act, eps, shrinking, max_steps, stats, work,
        indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
        M, slot_of, owner, stamp, state, D, miss_rows, miss_slots):
    """At most ``max_steps`` SMO steps from (alpha, G), in place (variable t
    reads the kernel row of data row index[t]), with LIBSVM's shrinking
    when ``shrinking``: every min(n, 1000) steps the indices that cannot
    enter a violating pair leave the active list act[:stats[ACTIVE]];
    their gradients are rebuilt (from G_bar, the part of G due to alphas at
    their upper bound, kept for every row) before the final check on all
    rows. While at most half the variables are active (with stats[WHOLE],
    every kernel row resident: whatever the number) the steps run on
    contiguous copies (:func:`_compact_steps`, ``work`` its buffers), the
    same steps in the same order. ``stats`` (STEPS, OPTIMAL, ACTIVE,
    COUNTER, UNSHRUNK, EPOCH, WHOLE, LAST_M) persists between calls. Returns the steps taken."""
    n = y.shape[0]
    js = np.empty(1, np.int64)
    slots = np.empty(1, np.int64)
    taken = 0
    m = stats[ACTIVE]
    recheck = False     # the gradients were just rebuilt: select again over all rows before shrinking
    shrink_now = False  # the compact loop stopped where the shrinking counter ran out
    while taken < max_steps:
        if shrinking and not recheck:
            shrunk = False
            if shrink_now:
                shrink_now = False
                stats[COUNTER] = 0
            else:
                stats[COUNTER] -= 1
            if stats[COUNTER] == 0:
                stats[COUNTER] = min(n, 1000)
                new_m = _shrink(y, C, alpha, G, act, m, eps, stats)
                if new_m < 0:
                    _reconstruct(y, p, index, alpha, G, G_bar, C, act, m, js, slots, indptr, indices, values,
                                 sq, code, gamma, degree, coef0, squarings, M, slot_of, owner, stamp, state,
                                 D, miss_rows, miss_slots)
                    m = n
                    new_m = _shrink(y, C, alpha, G, act, m, eps, stats)
                m = new_m
                shrunk = True
            # (WHOLE: every step runs compact, the same steps)
            if 0 < m and ((shrunk and m <= n // 2) or stats[WHOLE] != 0):
                done, status = _compact_steps(y, C, index, alpha, G, G_bar, QD, act, m, eps,
                                              max_steps - taken, stats, work, js, slots, indptr, indices,
                                              values, sq, code, gamma, degree, coef0, squarings, M, slot_of,
                                              owner, stamp, state, D, miss_rows, miss_slots)
                taken += done
                if status == COMPACT_SHRINK:
                    shrink_now = True
                    continue
                if status == COMPACT_LIMIT:
                    break
                # optimal on the active rows: rebuild every gradient and check them all
                _reconstruct(y, p, index, alpha, G, G_bar, C, act, m, js, slots, indptr, indices, values,
                             sq, code, gamma, degree, coef0, squarings, M, slot_of, owner, stamp, state, D,
                             miss_rows, miss_slots)
                m = n
                recheck = True
                continue
        i, g_max = _select_i(y, C, alpha, G, act, m)
        j = -1
        g_max2 = -np.inf
        if i >= 0:
            K_i = _row(index[i], js, slots, indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
                       M, slot_of, owner, stamp, state, D, miss_rows, miss_slots)
            j, g_max2 = _select_j(y, C, alpha, G, QD, act, m, i, g_max, K_i, index)
        if i < 0 or j < 0 or g_max + g_max2 < eps:
            if m == n:
                stats[OPTIMAL] = 1
                break
            _reconstruct(y, p, index, alpha, G, G_bar, C, act, m, js, slots, indptr, indices, values, sq,
                         code, gamma, degree, coef0, squarings, M, slot_of, owner, stamp, state, D, miss_rows,
                         miss_slots)
            m = n
            recheck = True
            continue
        if recheck:
            stats[COUNTER] = 1          # as LIBSVM: take this step over all rows, shrink at the next
            recheck = False
        K_j = _row(index[j], js, slots, indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
                   M, slot_of, owner, stamp, state, D, miss_rows, miss_slots)
        K_i = M[slot_of[index[i]]]   # still cached: i's row was the most recent before j's
        pair_step(y, C, alpha, G, G_bar, QD, index, act, m, i, j, K_i, K_j)
        taken += 1
    stats[ACTIVE] = m
    stats[STEPS] += taken
    return taken


@njit(cache=True, nogil=True, inline="always")
def pair_step(y, C, alpha, G, G_bar, QD, index, act, m, i, j, K_i, K_j):
    """LIBSVM's update of the pair (i, j) (rows K_i, K_j of their kernel
    values by data row): the two alphas, G of the active variables act[:m],
    and G_bar where an alpha reaches or leaves its bound."""
    a_i, a_j = alpha[i], alpha[j]
    n_i, n_j = _pair(y[i], y[j], C[i], C[j], a_i, a_j, G[i], G[j], QD[i], QD[j], y[i] * y[j] * K_i[index[j]])
    alpha[i] = n_i
    alpha[j] = n_j
    d_i = (n_i - a_i) * y[i]
    d_j = (n_j - a_j) * y[j]
    for q in range(m):
        t = act[q]
        r = index[t]
        G[t] += y[t] * (K_i[r] * d_i + K_j[r] * d_j)
    _bound_change(G_bar, y, index, K_i, y[i], C[i], a_i, n_i)
    _bound_change(G_bar, y, index, K_j, y[j], C[j], a_j, n_j)


@njit(cache=True, nogil=True)
def _reconstruct(y, p, index, alpha, G, G_bar, C, act, m, js, slots, indptr, indices, values, sq, code, gamma,
                 degree, coef0, squarings, M, slot_of, owner, stamp, state, D, miss_rows, miss_slots):
    """LIBSVM's reconstruct_gradient: G of the inactive rows act[m:] from
    G_bar plus the free alphas' part, by whichever costs fewer kernel
    values: the rows of the free active alphas, or those of the inactive rows."""
    n = y.shape[0]
    if m == n:
        return
    for q in range(m, n):
        t = act[q]
        G[t] = G_bar[t] + p[t]
    n_free = 0
    for q in range(m):
        t = act[q]
        if 0.0 < alpha[t] < C[t]:
            n_free += 1
    if n_free * n > 2 * m * (n - m):
        for q in range(m, n):
            t = act[q]
            K_t = _row(index[t], js, slots, indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
                       M, slot_of, owner, stamp, state, D, miss_rows, miss_slots)
            acc = 0.0
            for r in range(m):
                u = act[r]
                if 0.0 < alpha[u] < C[u]:
                    acc += alpha[u] * y[u] * K_t[index[u]]
            G[t] += y[t] * acc
    else:
        for r in range(m):
            u = act[r]
            if 0.0 < alpha[u] < C[u]:
                K_u = _row(index[u], js, slots, indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
                           M, slot_of, owner, stamp, state, D, miss_rows, miss_slots)
                au = alpha[u] * y[u]
                for q in range(m, n):
                    t = act[q]
                    G[t] += y[t] * au * K_u[index[t]]


# on data of fewer than PARALLEL_MIN_NNZ values: the same loop over the
# cache's serial twin (the same numbers)
_row_serial = serial_twin(_row, {"fetch": fetch_serial})
_reconstruct_serial = serial_twin(_reconstruct, {"_row": _row_serial})
_compact_row_serial = serial_twin(_compact_row, {"partial_row": partial_row_serial})
_compact_steps_serial = serial_twin(_compact_steps, {"_row": _row_serial, "_compact_row": _compact_row_serial})
run_serial = serial_twin(run, {"_row": _row_serial, "_reconstruct": _reconstruct_serial,
                               "_compact_steps": _compact_steps_serial})



@njit(cache=True, nogil=True)
def rho_of(y, C, alpha, G):
    """LIBSVM's rho (b = -rho): the mean of y_t G_t over the free alphas, or
    the middle of the interval the bounded ones leave."""
    ub = np.inf
    lb = -np.inf
    total = 0.0
    n_free = 0
    for t in range(y.shape[0]):
        yG = y[t] * G[t]
        if alpha[t] >= C[t]:
            if y[t] < 0.0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        elif alpha[t] <= 0.0:
            if y[t] > 0.0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        else:
            n_free += 1
            total += yG
    if n_free > 0:
        return total / n_free
    return 0.5 * (ub + lb)


@njit(cache=True, nogil=True)
def dual_value(alpha, G, p):
    """f(alpha) = 1/2 alpha'Q alpha + p'alpha from G = Q alpha + p: sum alpha_t (G_t + p_t) / 2
    (LIBSVM's ``obj``)."""
    v = 0.0
    for t in range(alpha.shape[0]):
        v += alpha[t] * (G[t] + p[t])
    return 0.5 * v


@njit(cache=True, nogil=True)
def initial_gradient(y, C, p, index, alpha, G, G_bar, indptr, indices, values, sq, code, gamma, degree, coef0,
                     squarings, M, slot_of, owner, stamp, state, D, miss_rows, miss_slots):
    """G = Q alpha + p and G_bar = the part of Q alpha from the alphas at
    their bound, for a start alpha != 0 (one-class), as LIBSVM: one kernel
    row per nonzero alpha."""
    n = y.shape[0]
    js = np.empty(1, np.int64)
    slots = np.empty(1, np.int64)
    for t in range(n):
        G[t] = p[t]
        G_bar[t] = 0.0
    for s in range(n):
        if alpha[s] > 0.0:
            K_s = _row(index[s], js, slots, indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
                       M, slot_of, owner, stamp, state, D, miss_rows, miss_slots)
            a = alpha[s] * y[s]
            for t in range(n):
                G[t] += y[t] * a * K_s[index[t]]
            if alpha[s] >= C[s]:
                c = C[s] * y[s]
                for t in range(n):
                    G_bar[t] += y[t] * c * K_s[index[t]]


initial_gradient_serial = serial_twin(initial_gradient, {"_row": _row_serial})



# --- a Newton step on the free variables (``--grid``'s C path) ---------------
# Near a solution at a large C, SMO's pair steps converge slowly on the free
# variables (the kernel block of the free support vectors is ill-conditioned):
# on svmguide1 at C = 2^15 most of 850,000 steps polish about 100 free alphas.
# With every kernel row resident, the minimum of the dual on the face (the
# free variables moving, the others fixed, y'alpha unchanged) is one small
# linear system; :func:`newton_face` moves there (or as far as the box
# allows) and the pair steps resume from the better point, to the same
# stopping rule.

FACE_TOL = 1e-8     # alphas within this fraction of C of a bound stay fixed in the face
FACE_JITTER = 1e-10     # the first diagonal jitter of a singular face (relative), then 100 times more
FACE_TRIES = 3


@njit(cache=True, nogil=True)
def _cholesky(A, k, jitter):
    """A[:k, :k] + jitter I (symmetric; its lower triangle read) overwritten
    by its lower Cholesky factor; False when it is not numerically positive
    definite (A is then spoilt)."""
    for j in range(k):
        s = A[j, j] + jitter
        for p in range(j):
            s -= A[j, p] * A[j, p]
        if not s > 1e-13 * (1.0 + abs(A[j, j])):
            return False
        dj = np.sqrt(s)
        A[j, j] = dj
        for i in range(j + 1, k):
            s = A[i, j]
            for p in range(j):
                s -= A[i, p] * A[j, p]
            A[i, j] = s / dj
    return True


@njit(cache=True, nogil=True)
def _cholesky_solve(L, k, b):
    """b[:k] overwritten by x with L L' x = b (L from :func:`_cholesky`)."""
    for i in range(k):
        s = b[i]
        for p in range(i):
            s -= L[i, p] * b[p]
        b[i] = s / L[i, i]
    for i in range(k - 1, -1, -1):
        s = b[i]
        for p in range(i + 1, k):
            s -= L[p, i] * b[p]
        b[i] = s / L[i, i]


@njit(cache=True, nogil=True)
def _factor_face(y, index, M, slot_of, face, k, A):
    """A[:k, :k] = the Cholesky factor of K_FF of the face's rows, plus the
    least jitter (FACE_JITTER times the mean diagonal, 100 times more at
    each of FACE_TRIES tries) that makes it positive definite: K_FF of
    nearby points is often singular to float32's precision. False when none does."""
    scale = 0.0
    for a in range(k):
        r = index[face[a]]
        scale += M[slot_of[r], r]
    scale /= k
    jitter = 0.0
    for attempt in range(FACE_TRIES + 1):
        for a in range(k):
            row = M[slot_of[index[face[a]]]]
            for b in range(a + 1):
                A[a, b] = row[index[face[b]]]
        if _cholesky(A, k, jitter):
            return True
        jitter = FACE_JITTER * scale if attempt == 0 else 100.0 * jitter
    return False


@njit(cache=True, nogil=True)
def _face(C, alpha, act, m, face, max_free):
    """The free variables of act[:m] (farther than FACE_TOL C from both
    bounds) into face; their number, or -1 when more than max_free."""
    k = 0
    for q in range(m):
        t = act[q]
        if FACE_TOL * C[t] < alpha[t] < (1.0 - FACE_TOL) * C[t]:
            if k == max_free:
                return -1
            face[k] = t
            k += 1
    return k


@njit(cache=True, nogil=True)
def _move_face(y, index, G, act, m, M, slot_of, face, k, d):
    """G[t] += y_t sum_a K(t, face[a]) y_face[a] d[a] for the active t."""
    for a in range(k):
        c = y[face[a]] * d[a]
        if c == 0.0:
            continue
        row = M[slot_of[index[face[a]]]]
        for q in range(m):
            t = act[q]
            G[t] += y[t] * row[index[t]] * c


@njit(cache=True, nogil=True)
def _cholesky_drop(L, k, j):
    """L[:k-1, :k-1] = the Cholesky factor of L L' (k x k) without row and
    column j: the rows below j lose their entry in column j, which enters
    the trailing factor as a rank-one update (O((k - j)^2) work)."""
    x = L[j + 1:k, j].copy()
    for p in range(j + 1, k):       # the rank-one update of L[j+1:, j+1:] by x x'
        q = p - j - 1
        r = np.sqrt(L[p, p] * L[p, p] + x[q] * x[q])
        c = r / L[p, p]
        s = x[q] / L[p, p]
        L[p, p] = r
        for i in range(p + 1, k):
            L[i, p] = (L[i, p] + s * x[i - j - 1]) / c
            x[i - j - 1] = c * x[i - j - 1] - s * L[i, p]
    for i in range(j, k - 1):       # row and column j out
        for b in range(j):
            L[i, b] = L[i + 1, b]
        for b in range(j, i + 1):
            L[i, b] = L[i + 1, b + 1]


@njit(cache=True, nogil=True)
def _newton_direction(yf, Gf, k, L, u, w, d):
    """d[:k] = the Newton step of the face's alphas (K_FF u + rho 1 = -y G,
    1'u = 0, d = y u) from the factor L of K_FF; ``yf``, ``Gf``: y and G of
    the face's variables, in the face's order."""
    for a in range(k):
        u[a] = -yf[a] * Gf[a]
        w[a] = 1.0
    _cholesky_solve(L, k, u)
    _cholesky_solve(L, k, w)
    su = 0.0
    sw = 0.0
    for a in range(k):
        su += u[a]
        sw += w[a]
    rho = su / sw
    for a in range(k):
        d[a] = yf[a] * (u[a] - rho * w[a])


@njit(cache=True, nogil=True)
def _move_within(yf, Gf, index, M, slot_of, face, k, d):
    """Gf[b] += yf[b] sum_a K(face[b], face[a]) yf[a] d[a] for b < k: the
    face's own gradients after a move (O(k^2); the other active variables'
    follow once, after the last round)."""
    for a in range(k):
        c = yf[a] * d[a]
        if c == 0.0:
            continue
        row = M[slot_of[index[face[a]]]]
        for b in range(k):
            Gf[b] += yf[b] * row[index[face[b]]] * c


@njit(cache=True, nogil=True)
def _longest_step(C, alpha, face, k, d):
    """(the largest t <= 1 with alpha + t d inside the box on the face, the
    position of the variable that stops it or -1); then alpha moved by
    t d (that variable put exactly on its bound) and d the moves made."""
    t_max = 1.0
    block = -1
    for a in range(k):
        v = face[a]
        if d[a] > 0.0 and C[v] - alpha[v] < t_max * d[a]:
            t_max = (C[v] - alpha[v]) / d[a]
            block = a
        elif d[a] < 0.0 and -alpha[v] > t_max * d[a]:
            t_max = -alpha[v] / d[a]
            block = a
    for a in range(k):
        v = face[a]
        new = alpha[v] + t_max * d[a]
        if a == block:
            new = C[v] if d[a] > 0.0 else 0.0
        d[a] = new - alpha[v]
        alpha[v] = new
    return block


@njit(cache=True, nogil=True)
def newton_face(y, C, alpha, G, G_bar, index, act, m, M, slot_of, max_free, max_rounds, budget, A, face, u, w, d):
    """Moves the free variables among act[:m] toward the minimum of the dual
    on their face, in at most ``max_rounds`` rounds: the Newton direction of
    the free variables (the others fixed, y'alpha unchanged: K_FF u + rho 1
    = -y G, 1'u = 0 for u = y dalpha, by Cholesky), then the longest step
    along it inside the box; a variable that reaches a bound there leaves
    the face (its row and column leave the factor, O(k^2)), and the next
    round solves again without it. alpha stays feasible, the dual decreases
    at each step (a convex quadratic along a segment toward its minimum), G
    is kept for the active variables and G_bar for all (a variable reaching
    C adds its row). A round updates the face's own gradients only (O(k^2));
    the other active variables' G take the rounds' summed moves once at the
    end (O(k m) in all, not a round). Every kernel row must be resident
    (M[slot_of[r]]). Does nothing when the first factorisation (k^3 / 6
    multiply-adds for k free variables) would exceed ``budget``, when more
    than ``max_free`` variables are free, or when ``max_free`` is 0. A
    (float64[>= k, >= k]), face (int64), u, w, d (float64, >= max_free) are
    scratch. Returns the rounds taken."""
    if max_free <= 0:
        return 0
    k = _face(C, alpha, act, m, face, max_free)
    if k <= 0 or k * k * k // 6 > budget or not _factor_face(y, index, M, slot_of, face, k, A):
        return 0
    first = face[:k].copy()             # the face at the start, and each one's summed move
    moved = np.zeros(k)
    at = np.arange(k)                   # position in ``first`` of each variable of the face
    yf = np.empty(k)
    Gf = np.empty(k)
    for a in range(k):
        yf[a] = y[face[a]]
        Gf[a] = G[face[a]]
    rounds = 0
    while k > 0 and rounds < max_rounds:
        rounds += 1
        _newton_direction(yf, Gf, k, A, u, w, d)
        block = _longest_step(C, alpha, face, k, d)
        for a in range(k):
            moved[at[a]] += d[a]
        if block < 0:
            break
        _move_within(yf, Gf, index, M, slot_of, face, k, d)
        v = face[block]
        if alpha[v] >= C[v]:
            row = M[slot_of[index[v]]]
            for t in range(y.shape[0]):
                G_bar[t] += y[t] * row[index[t]] * C[v] * y[v]
        _cholesky_drop(A, k, block)
        for a in range(block, k - 1):
            face[a] = face[a + 1]
            at[a] = at[a + 1]
            yf[a] = yf[a + 1]
            Gf[a] = Gf[a + 1]
        k -= 1
    _move_face(y, index, G, act, m, M, slot_of, first, first.shape[0], moved)
    return rounds
