"""Numba kernel of the dual coordinate descent solver (Hsieh et al. 2008).

The dual of the L2-regularised hinge / squared-hinge SVM is

    min_alpha  f(alpha) = 1/2 alpha^T Qbar alpha - e^T alpha,   0 <= alpha_i <= U_i,

with Qbar_ij = y_i y_j x_i.x_j + D_ii [i == j]. Hinge: U_i = C_i, D_ii = 0;
squared hinge: U_i = inf, D_ii = 1 / (2 C_i). The kernel keeps
w = sum_i alpha_i y_i x_i up to date, so the partial derivative of f in
alpha_i is G = y_i w.x_i - 1 + D_ii alpha_i and the one-variable problem has
the closed form alpha_i <- min(max(alpha_i - G / Qbar_ii, 0), U_i).

Like LIBLINEAR's solver, the kernel visits the active set in a fresh random
order every outer iteration and shrinks variables whose projected gradient
is beyond the previous iteration's bounds [PGmin, PGmax]; when the
violation on the active set drops below eps it re-checks the full set.

All the optimisation state lives in arrays owned by the caller, so the
front can run the kernel a few outer iterations at a time (for a progress
bar) or all at once, and get bit-identical results either way.
"""
import numpy as np
from numba import njit

from ._common import row_axpy, row_dot

# istate slots
ACTIVE = 0      # size of the active set (index[:active] are active)
ITER = 1        # outer iterations done
# fstate slots
PGMAX_OLD = 0
PGMIN_OLD = 1

# return codes
RUNNING = 0
CONVERGED = 1
MAX_ITER = 2

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)


@njit(cache=True, nogil=True)
def _next_u64(rng):
    """splitmix64: the next 64 random bits of the generator state rng[0]."""
    z = rng[0] + _GOLDEN
    rng[0] = z
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True, nogil=True)
def _shuffle(index, m, rng):
    """Fisher-Yates shuffle of index[:m] in place."""
    for s in range(m - 1):
        j = s + np.int64(_next_u64(rng) % np.uint64(m - s))
        t = index[s]
        index[s] = index[j]
        index[j] = t


@njit(cache=True, nogil=True, error_model="numpy")
def dcd_run(indptr, indices, values, y, B, U_pos, U_neg, D_pos, D_neg, QD,
            eps, max_iter, n_steps, w, alpha, index, istate, fstate, rng):
    """Run at most ``n_steps`` outer iterations of dual coordinate descent.

    ``QD[i] = |x_i|^2 + D_ii`` (the constant feature included), ``w`` has
    length n_features + 1 with ``w[-1]`` multiplying ``B``; ``alpha``,
    ``index``, ``istate``, ``fstate`` and ``rng`` carry the state between
    calls (see the module constants). Returns RUNNING, CONVERGED or MAX_ITER.
    """
    n = y.shape[0]
    active = istate[ACTIVE]
    it = istate[ITER]
    pgmax_old = fstate[PGMAX_OLD]
    pgmin_old = fstate[PGMIN_OLD]
    status = RUNNING
    steps = 0
    while steps < n_steps:
        if it >= max_iter:
            status = MAX_ITER
            break
        pgmax_new = -np.inf
        pgmin_new = np.inf
        _shuffle(index, active, rng)
        s = 0
        while s < active:
            i = index[s]
            yi = y[i]
            a = alpha[i]
            if yi > 0:
                U = U_pos
                G = yi * row_dot(indptr, indices, values, i, w, B) - 1.0 + a * D_pos
            else:
                U = U_neg
                G = yi * row_dot(indptr, indices, values, i, w, B) - 1.0 + a * D_neg
            PG = 0.0
            if a == 0.0:
                if G > pgmax_old:
                    active -= 1
                    index[s] = index[active]
                    index[active] = i
                    continue
                elif G < 0.0:
                    PG = G
            elif a == U:
                if G < pgmin_old:
                    active -= 1
                    index[s] = index[active]
                    index[active] = i
                    continue
                elif G > 0.0:
                    PG = G
            else:
                PG = G
            if PG > pgmax_new:
                pgmax_new = PG
            if PG < pgmin_new:
                pgmin_new = PG
            if PG > 1e-12 or PG < -1e-12:
                a_new = a - G / QD[i]
                if a_new < 0.0:
                    a_new = 0.0
                elif a_new > U:
                    a_new = U
                alpha[i] = a_new
                row_axpy(indptr, indices, values, i, (a_new - a) * yi, w, B)
            s += 1
        it += 1
        steps += 1
        if pgmax_new - pgmin_new <= eps:
            if active == n:
                status = CONVERGED
                break
            # converged on the shrunk set: re-check every variable
            active = n
            pgmax_old = np.inf
            pgmin_old = -np.inf
            continue
        pgmax_old = pgmax_new
        pgmin_old = pgmin_new
        if pgmax_old <= 0.0:
            pgmax_old = np.inf
        if pgmin_old >= 0.0:
            pgmin_old = -np.inf
    if status == RUNNING and it >= max_iter:
        status = MAX_ITER
    istate[ACTIVE] = active
    istate[ITER] = it
    fstate[PGMAX_OLD] = pgmax_old
    fstate[PGMIN_OLD] = pgmin_old
    return status


@njit(cache=True, nogil=True)
def dual_terms(y, alpha, D_pos, D_neg):
    """(sum_i alpha_i^2 D_ii, sum_i alpha_i, #{alpha_i > 0})."""
    sq = 0.0
    sa = 0.0
    nsv = 0
    for i in range(y.shape[0]):
        a = alpha[i]
        if a > 0.0:
            nsv += 1
            sa += a
            if y[i] > 0:
                sq += a * a * D_pos
            else:
                sq += a * a * D_neg
    return sq, sa, nsv
