"""Numba kernels of ``-s smo``'s nu-SVMs: LIBSVM's ``Solver_NU`` (the loop is driven by ``smo_nu.py``).

The dual of nu-SVC and nu-SVR has the form of ``_smo_kernels``' (module
doc there) with one more equality constraint:

    min_alpha  1/2 alpha' Q alpha + p' alpha,
    s.t.       0 <= alpha_t <= C_t,  sum_{y_t = +1} alpha_t = const,  sum_{y_t = -1} alpha_t = const,

both sums fixed by the (feasible) start. LIBSVM's Solver_NU keeps them by
choosing both variables of a pair with the same sign: i maximises -y_t G_t
over I_up within y = +1 (ip) and within y = -1 (in); j, over I_low of
either sign with a gradient gap to its sign's i, minimises -(b^2)/a (the
second-order choice of Fan, Chen and Lin) against that i, and the pair is
(the i of j's sign, j). It stops when max(m_p - M_p, m_n - M_n) < eps,
each sign's maximal violation. Shrinking (``shrinking``): every min(n,
1000) steps the bounded variables that cannot enter a violating pair of
their sign leave the active list (Solver_NU::be_shrunk / do_shrinking, the
four maxima), with the gradients rebuilt from G_bar the first time the
violation falls below 10 eps and before the final check (LIBSVM's
unshrinking). Each side's rho (LIBSVM's calculate_rho): r1 and r2, the
mean of G over the free variables of y = +1 and y = -1 (else the middle of
the bounded ones' interval); rho = (r1 - r2) / 2, r = (r1 + r2) / 2.

Kernel rows come from the shared row cache through ``_smo_kernels._row``
(its serial twin on small data); the pair step with its G and G_bar
updates (``pair_step``) and the rebuild of the gradients
(``_reconstruct``) are ``_smo_kernels``' own.
"""
import numpy as np
from numba import njit

from ..._numba.options import serial_twin
from ._smo_kernels import (ACTIVE, COUNTER, OPTIMAL, STEPS, TAU, UNSHRUNK, _reconstruct, _reconstruct_serial, _row,
                           _row_serial, pair_step)


@njit(cache=True, nogil=True)
def select_i(y, C, alpha, G, act, m):
    """(ip, Gmaxp, in, Gmaxn): the maximal -y G over I_up among act[:m]
    within y = +1 and within y = -1 (the last such index on ties; -1 and
    -inf when a side is empty), as Solver_NU::select_working_set."""
    gp = -np.inf
    gn = -np.inf
    ip = -1
    i_n = -1
    for q in range(m):
        t = act[q]
        if y[t] > 0.0:
            if alpha[t] < C[t] and -G[t] >= gp:
                gp = -G[t]
                ip = t
        elif alpha[t] > 0.0 and G[t] >= gn:
            gn = G[t]
            i_n = t
    return ip, gp, i_n, gn


@njit(cache=True, nogil=True)
def select_j(y, C, alpha, G, QD, act, m, ip, gp, K_ip, i_n, gn, K_in, index):
    """(j, Gmaxp2, Gmaxn2): j the second-order choice over I_low among
    act[:m] against the i of its own sign (K_ip, K_in: the data rows of
    ip and in; not read for a side without an i), -1 when none has a
    positive gap; Gmaxp2 / Gmaxn2 the max of y G over I_low within each sign."""
    gp2 = -np.inf
    gn2 = -np.inf
    j = -1
    best = np.inf
    for q in range(m):
        t = act[q]
        if y[t] > 0.0:
            if alpha[t] <= 0.0:
                continue
            diff = gp + G[t]
            if G[t] >= gp2:
                gp2 = G[t]
            if diff > 0.0:
                quad = QD[ip] + QD[t] - 2.0 * K_ip[index[t]]
                obj = -(diff * diff) / (quad if quad > 0.0 else TAU)
                if obj <= best:
                    best = obj
                    j = t
        else:
            if alpha[t] >= C[t]:
                continue
            diff = gn - G[t]
            if -G[t] >= gn2:
                gn2 = -G[t]
            if diff > 0.0:
                quad = QD[i_n] + QD[t] - 2.0 * K_in[index[t]]
                obj = -(diff * diff) / (quad if quad > 0.0 else TAU)
                if obj <= best:
                    best = obj
                    j = t
    return j, gp2, gn2


@njit(cache=True, nogil=True)
def shrink_maxima(y, C, alpha, G, act, m):
    """Solver_NU::do_shrinking's four maxima over act[:m], LIBSVM's Gmax1..Gmax4:
    max -G over alpha < C and max G over alpha > 0 within y = +1 (g1, g2),
    max G over alpha > 0 and max -G over alpha < C within y = -1 (g3, g4)."""
    g1 = -np.inf
    g2 = -np.inf
    g3 = -np.inf
    g4 = -np.inf
    for q in range(m):
        t = act[q]
        if alpha[t] < C[t]:
            if y[t] > 0.0:
                g1 = max(g1, -G[t])
            else:
                g4 = max(g4, -G[t])
        if alpha[t] > 0.0:
            if y[t] > 0.0:
                g2 = max(g2, G[t])
            else:
                g3 = max(g3, G[t])
    return g1, g2, g3, g4


@njit(cache=True, nogil=True)
def _be_shrunk(t, y, C, alpha, G, g1, g2, g3, g4):
    if alpha[t] >= C[t]:
        return -G[t] > (g1 if y[t] > 0.0 else g4)
    if alpha[t] <= 0.0:
        return G[t] > (g2 if y[t] > 0.0 else g3)
    return False


@njit(cache=True, nogil=True)
def shrink(y, C, alpha, G, act, m, g1, g2, g3, g4):
    """Moves the variables of act[:m] that Solver_NU::be_shrunk drops (with
    the maxima of :func:`shrink_maxima`) behind the active ones, by
    LIBSVM's swaps; returns the new active size."""
    q = 0
    while q < m:
        if _be_shrunk(act[q], y, C, alpha, G, g1, g2, g3, g4):
            m -= 1
            while m > q:
                if not _be_shrunk(act[m], y, C, alpha, G, g1, g2, g3, g4):
                    tmp = act[q]
                    act[q] = act[m]
                    act[m] = tmp
                    break
                m -= 1
        q += 1
    return m


@njit(cache=True, nogil=True)
def nu_rho(y, C, alpha, G):
    """(rho, r) of Solver_NU::calculate_rho over every variable: r1, r2 the
    mean G of the free variables with y = +1, y = -1 (else the middle of
    the interval their bounded ones leave); rho = (r1 - r2) / 2, r = (r1 + r2) / 2."""
    ub1 = np.inf
    ub2 = np.inf
    lb1 = -np.inf
    lb2 = -np.inf
    s1 = 0.0
    s2 = 0.0
    n1 = 0
    n2 = 0
    for t in range(y.shape[0]):
        if y[t] > 0.0:
            if alpha[t] >= C[t]:
                lb1 = max(lb1, G[t])
            elif alpha[t] <= 0.0:
                ub1 = min(ub1, G[t])
            else:
                n1 += 1
                s1 += G[t]
        else:
            if alpha[t] >= C[t]:
                lb2 = max(lb2, G[t])
            elif alpha[t] <= 0.0:
                ub2 = min(ub2, G[t])
            else:
                n2 += 1
                s2 += G[t]
    r1 = s1 / n1 if n1 > 0 else 0.5 * (ub1 + lb1)
    r2 = s2 / n2 if n2 > 0 else 0.5 * (ub2 + lb2)
    return 0.5 * (r1 - r2), 0.5 * (r1 + r2)


@njit(cache=True, nogil=True)
def run(y, C, p, index, alpha, G, G_bar, QD, act, eps, shrinking, max_steps, stats,
        indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
        M, slot_of, owner, stamp, state, D, miss_rows, miss_slots):
    """At most ``max_steps`` steps of Solver_NU from (alpha, G, G_bar), in
    place (variable t reads the kernel row of data row index[t]; the cache
    holds at least two rows), in LIBSVM's order: the shrinking counter, the
    working set (:func:`select_i`, :func:`select_j`), at an optimum of the
    active variables the gradients rebuilt and all variables checked
    (then a step over all of them and a shrink at the next), the pair
    solved and G, G_bar updated by ``_smo_kernels.pair_step`` (same signs). ``stats`` (``_smo_kernels``' STEPS, OPTIMAL,
    ACTIVE, COUNTER, UNSHRUNK) persists between calls. Returns the steps taken."""
    n = y.shape[0]
    js = np.empty(1, np.int64)
    slots = np.empty(1, np.int64)
    taken = 0
    m = stats[ACTIVE]
    recheck = False
    while taken < max_steps:
        if not recheck:
            stats[COUNTER] -= 1
            if stats[COUNTER] == 0:
                stats[COUNTER] = min(n, 1000)
                if shrinking:
                    g1, g2, g3, g4 = shrink_maxima(y, C, alpha, G, act, m)
                    if stats[UNSHRUNK] == 0 and max(g1 + g2, g3 + g4) <= 10.0 * eps:
                        stats[UNSHRUNK] = 1
                        _reconstruct(y, p, index, alpha, G, G_bar, C, act, m, js, slots, indptr, indices, values,
                                     sq, code, gamma, degree, coef0, squarings, M, slot_of, owner, stamp, state, D,
                                     miss_rows, miss_slots)
                        m = n
                    m = shrink(y, C, alpha, G, act, m, g1, g2, g3, g4)
        ip, gp, i_n, gn = select_i(y, C, alpha, G, act, m)
        K_ip = K_in = M[0]
        if ip >= 0:
            _row(index[ip], js, slots, indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
                 M, slot_of, owner, stamp, state, D, miss_rows, miss_slots)
        if i_n >= 0:
            K_in = _row(index[i_n], js, slots, indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
                        M, slot_of, owner, stamp, state, D, miss_rows, miss_slots)
        if ip >= 0:
            K_ip = M[slot_of[index[ip]]]      # still cached: the row before in's
        j, gp2, gn2 = select_j(y, C, alpha, G, QD, act, m, ip, gp, K_ip, i_n, gn, K_in, index)
        if j < 0 or max(gp + gp2, gn + gn2) < eps:
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
            stats[COUNTER] = 1          # as LIBSVM: this step over all variables, a shrink at the next
            recheck = False
        i = ip if y[j] > 0.0 else i_n
        _row(index[i], js, slots, indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
             M, slot_of, owner, stamp, state, D, miss_rows, miss_slots)
        K_j = _row(index[j], js, slots, indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
                   M, slot_of, owner, stamp, state, D, miss_rows, miss_slots)
        K_i = M[slot_of[index[i]]]      # the most recent row before j's
        pair_step(y, C, alpha, G, G_bar, QD, index, act, m, i, j, K_i, K_j)
        taken += 1
    stats[ACTIVE] = m
    stats[STEPS] += taken
    return taken


# on data of fewer than PARALLEL_MIN_NNZ values: the same loop over the cache's serial twin
run_serial = serial_twin(run, {"_row": _row_serial, "_reconstruct": _reconstruct_serial})
