"""Numba kernels of ``-s smo``: LIBSVM's C-SVC solver (the loop is in ``smo.py``).

The dual of one binary problem (y_i = +-1, per-row bound C_i):

    min_alpha  f(alpha) = 1/2 alpha' Q alpha - e' alpha,   Q_ij = y_i y_j K(x_i, x_j),
    s.t.       0 <= alpha_i <= C_i,  y' alpha = 0,

by sequential minimal optimisation with the second-order working-set
selection of Fan, Chen and Lin (JMLR 2005), as LIBSVM's ``Solver``: G is
the gradient Q alpha - e; i maximises -y_t G_t over I_up = {t: alpha_t <
C_t, y_t = 1, or alpha_t > 0, y_t = -1}; j, among the t in I_low with
-y_t G_t < -y_i G_i, minimises -(b_it)^2 / a_it (b_it the gradient gap,
a_it = K_ii + K_tt - 2 K_it, or TAU when that is not positive); the pair
is solved exactly with LIBSVM's clipping; G is updated with the two kernel
rows. It stops when m(alpha) - M(alpha) = max over I_up + max over I_low of
-y G and y G falls below eps (LIBSVM's -e, default 0.001).

Kernel rows come from the shared LRU row cache
(:mod:`svmtrain.kernels.cache`, float32 rows, ``-m`` MB) through ``fetch``
(its serial twin on small data), so the loop never returns to Python but
every ``chunk`` iterations (for the progress bar).
"""
import numpy as np
from numba import njit

from .._numba_options import serial_twin
from ..kernels.cache import fetch, fetch_serial

TAU = 1e-12


# the loop's persistent state (``run``'s ``stats``)
STEPS, OPTIMAL, ACTIVE, COUNTER, UNSHRUNK = 0, 1, 2, 3, 4


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
def _select_j(y, C, alpha, G, QD, act, m, i, g_max, K_i):
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
            quad = QD[i] + QD[t] - 2.0 * K_i[t]
            if quad <= 0.0:
                quad = TAU
            obj = -(diff * diff) / quad
            if obj <= best:
                best = obj
                j = t
    return j, g_max2


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


@njit(cache=True, nogil=True)
def run(y, C, alpha, G, G_bar, QD, act, eps, shrinking, max_steps, stats,
        indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
        M, slot_of, owner, stamp, state, D, miss_rows, miss_slots):
    """At most ``max_steps`` SMO steps from (alpha, G), in place, with
    LIBSVM's shrinking when ``shrinking``: every min(n, 1000) steps the
    indices that cannot enter a violating pair leave the active list
    act[:stats[ACTIVE]]; their gradients are rebuilt (from G_bar, the part
    of G due to alphas at their upper bound, kept for every row) before
    the final check on all rows. ``stats`` (STEPS, OPTIMAL, ACTIVE,
    COUNTER, UNSHRUNK) persists between calls. Returns the steps taken."""
    n = y.shape[0]
    js = np.empty(1, np.int64)
    slots = np.empty(1, np.int64)
    taken = 0
    m = stats[ACTIVE]
    recheck = False     # the gradients were just rebuilt: select again over all rows before shrinking
    while taken < max_steps:
        if shrinking and not recheck:
            stats[COUNTER] -= 1
            if stats[COUNTER] == 0:
                stats[COUNTER] = min(n, 1000)
                new_m = _shrink(y, C, alpha, G, act, m, eps, stats)
                if new_m < 0:
                    _reconstruct(y, alpha, G, G_bar, C, act, m, js, slots, indptr, indices, values, sq, code,
                                 gamma, degree, coef0, squarings, M, slot_of, owner, stamp, state, D,
                                 miss_rows, miss_slots)
                    m = n
                    new_m = _shrink(y, C, alpha, G, act, m, eps, stats)
                m = new_m
        i, g_max = _select_i(y, C, alpha, G, act, m)
        j = -1
        g_max2 = -np.inf
        if i >= 0:
            K_i = _row(i, js, slots, indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
                       M, slot_of, owner, stamp, state, D, miss_rows, miss_slots)
            j, g_max2 = _select_j(y, C, alpha, G, QD, act, m, i, g_max, K_i)
        if i < 0 or j < 0 or g_max + g_max2 < eps:
            if m == n:
                stats[OPTIMAL] = 1
                break
            # optimal on the active rows: rebuild every gradient and check them all
            _reconstruct(y, alpha, G, G_bar, C, act, m, js, slots, indptr, indices, values, sq, code,
                         gamma, degree, coef0, squarings, M, slot_of, owner, stamp, state, D, miss_rows,
                         miss_slots)
            m = n
            recheck = True
            continue
        if recheck:
            stats[COUNTER] = 1          # as LIBSVM: take this step over all rows, shrink at the next
            recheck = False
        K_j = _row(j, js, slots, indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
                   M, slot_of, owner, stamp, state, D, miss_rows, miss_slots)
        K_i = M[slot_of[i]]          # still cached: i was the most recent row before j
        # the two-variable sub-problem, solved and clipped as LIBSVM does
        y_i, y_j = y[i], y[j]
        C_i, C_j = C[i], C[j]
        a_i, a_j = alpha[i], alpha[j]
        Q_ij = y_i * y_j * K_i[j]
        if y_i != y_j:
            quad = QD[i] + QD[j] + 2.0 * Q_ij
            if quad <= 0.0:
                quad = TAU
            delta = (-G[i] - G[j]) / quad
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
            quad = QD[i] + QD[j] - 2.0 * Q_ij
            if quad <= 0.0:
                quad = TAU
            delta = (G[i] - G[j]) / quad
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
        alpha[i] = n_i
        alpha[j] = n_j
        d_i = (n_i - a_i) * y_i
        d_j = (n_j - a_j) * y_j
        for q in range(m):
            t = act[q]
            G[t] += y[t] * (K_i[t] * d_i + K_j[t] * d_j)
        # G_bar: the rows' gradient part from alphas at their upper bound
        if (a_i >= C_i) != (n_i >= C_i):
            sgn = C_i * y_i if n_i >= C_i else -C_i * y_i
            for t in range(n):
                G_bar[t] += y[t] * K_i[t] * sgn
        if (a_j >= C_j) != (n_j >= C_j):
            sgn = C_j * y_j if n_j >= C_j else -C_j * y_j
            for t in range(n):
                G_bar[t] += y[t] * K_j[t] * sgn
        taken += 1
    stats[ACTIVE] = m
    stats[STEPS] += taken
    return taken


@njit(cache=True, nogil=True)
def _reconstruct(y, alpha, G, G_bar, C, act, m, js, slots, indptr, indices, values, sq, code, gamma, degree,
                 coef0, squarings, M, slot_of, owner, stamp, state, D, miss_rows, miss_slots):
    """LIBSVM's reconstruct_gradient: G of the inactive rows act[m:] from
    G_bar plus the free alphas' part, by whichever costs fewer kernel
    values: the rows of the free active alphas, or those of the inactive rows."""
    n = y.shape[0]
    if m == n:
        return
    for q in range(m, n):
        t = act[q]
        G[t] = G_bar[t] - 1.0
    n_free = 0
    for q in range(m):
        t = act[q]
        if 0.0 < alpha[t] < C[t]:
            n_free += 1
    if n_free * n > 2 * m * (n - m):
        for q in range(m, n):
            t = act[q]
            K_t = _row(t, js, slots, indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
                       M, slot_of, owner, stamp, state, D, miss_rows, miss_slots)
            acc = 0.0
            for r in range(m):
                u = act[r]
                if 0.0 < alpha[u] < C[u]:
                    acc += alpha[u] * y[u] * K_t[u]
            G[t] += y[t] * acc
    else:
        for r in range(m):
            u = act[r]
            if 0.0 < alpha[u] < C[u]:
                K_u = _row(u, js, slots, indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
                           M, slot_of, owner, stamp, state, D, miss_rows, miss_slots)
                au = alpha[u] * y[u]
                for q in range(m, n):
                    t = act[q]
                    G[t] += y[t] * au * K_u[t]


# on data of fewer than PARALLEL_MIN_NNZ values: the same loop over the
# cache's serial twin (the same numbers)
_row_serial = serial_twin(_row, {"fetch": fetch_serial})
_reconstruct_serial = serial_twin(_reconstruct, {"_row": _row_serial})
run_serial = serial_twin(run, {"_row": _row_serial, "_reconstruct": _reconstruct_serial})


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
def dual_value(alpha, G):
    """f(alpha) = 1/2 alpha'Q alpha - e'alpha from G = Q alpha - e: sum alpha_t (G_t - 1) / 2
    (LIBSVM's ``obj``)."""
    v = 0.0
    for t in range(alpha.shape[0]):
        v += alpha[t] * (G[t] - 1.0)
    return 0.5 * v
