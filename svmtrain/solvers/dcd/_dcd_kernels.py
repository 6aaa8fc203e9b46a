"""Numba kernel of the dual coordinate descent solver.

See Algorithm 3 of Hsieh et al., "A dual coordinate descent method for
large-scale linear SVM", ICML 2008 (section 4.4.2 of the survey in
shared/papers), with the random permutation and shrinking of the paper, as in
LIBLINEAR's solve_l2r_l1l2_svc.

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

The per-row state is one (n, 2) array, ``state[i] = (alpha_i, y_i Qbar_ii)``
(``new_state``): a row visited in random order then costs one cache line of
state instead of three (alpha, y and Qbar_ii), and y_i is the sign of the
second column (a signed zero when Qbar_ii = 0).
"""
import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .._common import row_axpy, row_dot

# istate slots
ACTIVE = 0      # size of the active set (index[:active] are active)
ITER = 1        # outer iterations done
# fstate slots
PGMAX_OLD = 0
PGMIN_OLD = 1
# optional fstate slots (when fstate has 4 entries): the largest and smallest
# projected gradient of the first outer iteration of a call, before any
# shrinking if the call starts unshrunk (block minimization's stopping test)
FIRST_PGMAX = 2
FIRST_PGMIN = 3

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
_S32 = np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)
_MAX_BELOW = 1 << 32


# Rows are visited in random order, so each row's data, and its indptr and
# state entries, are cache misses on large sets. The kernel prefetches every
# cache line of the row PREFETCH positions ahead in the visiting order, and
# that row's indptr / state entries 2 * PREFETCH ahead (so its indptr is in
# cache when its data is prefetched). About 2x faster on sets that do not
# fit in cache than no prefetch, and 15-50 % faster than prefetching only a
# row's first line (measured on a 300,000-row synthetic set with 60
# nonzeros per row). Row data is read once per visit, so it is prefetched
# non-temporally: it then does not evict w from the caches (9-13 % faster
# on the 1,000,000-row benchmark file than a high-locality prefetch).
# Prefetches are hints and never change results.
PREFETCH = 8


def _prefetch_intrinsic(locality):
    """A numba intrinsic ``f(arr, idx)`` that hints the CPU to load the cache
    line of arr[idx] (no bounds check, no fault) with LLVM's ``locality``
    (3: keep in every cache level; 0: non-temporal, used once)."""
    @intrinsic
    def prefetch(typingctx, arr, idx):
        sig = types.void(arr, idx)

        def codegen(context, builder, signature, args):
            aryty = signature.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False)
            ptr = builder.bitcast(ptr, ir.IntType(8).as_pointer())
            i32 = ir.IntType(32)
            fnty = ir.FunctionType(ir.VoidType(), [ptr.type, i32, i32, i32])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch")
            builder.call(fn, [ptr, i32(0), i32(locality), i32(1)])     # read, data
            return context.get_dummy_value()

        return sig, codegen
    return prefetch


_prefetch = _prefetch_intrinsic(3)
_prefetch_once = _prefetch_intrinsic(0)


@njit(cache=True, nogil=True, inline="always")
def _prefetch_row(indptr, indices, values, j):
    """Hint the CPU to load every cache line of row j's values and indices,
    non-temporally."""
    p = indptr[j]
    end = indptr[j + 1]
    q = p
    while q < end:
        _prefetch_once(values, q)
        q += 64 // values.itemsize
    q = p
    while q < end:
        _prefetch_once(indices, q)
        q += 64 // indices.itemsize


def new_state(y, QD, out=None):
    """The (n, 2) per-row state of ``dcd_run`` for labels ``y`` (+1 / -1)
    and diagonal ``QD`` (>= 0) with every alpha 0, in ``out`` when given:
    ``state[:, 0]`` is alpha (a writable view of it is the dual solution),
    ``state[:, 1]`` is y_i * QD_i, whose sign is y_i even where QD_i is 0."""
    state = np.empty((len(y), 2), np.float64) if out is None else out
    state[:, 0] = 0.0
    state[:, 1] = np.copysign(QD, y)
    return state


@njit(cache=True, nogil=True)
def _next_u64(rng):
    """splitmix64: the next 64 random bits of the generator state rng[0]."""
    z = rng[0] + _GOLDEN
    rng[0] = z
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True, nogil=True)
def _below(bound, rng):
    """A uniform integer in [0, bound) for 0 < bound <= 2**32, from the high
    32 bits of the generator's outputs: Lemire's multiply-shift with
    rejection (ACM TOMACS 2019), exact and almost never dividing."""
    r = np.uint64(bound)
    m = (_next_u64(rng) >> _S32) * r
    low = m & _LOW32
    if low < r:
        floor = (_LOW32 - r + np.uint64(1)) % r        # 2**32 mod r
        while low < floor:
            m = (_next_u64(rng) >> _S32) * r
            low = m & _LOW32
    return np.int64(m >> _S32)


@njit(cache=True, nogil=True)
def _shuffle(index, m, rng):
    """Fisher-Yates shuffle of index[:m] in place (every order equally likely)."""
    for s in range(m - 1):
        if m - s <= _MAX_BELOW:
            j = s + _below(m - s, rng)
        else:
            j = s + np.int64(_next_u64(rng) % np.uint64(m - s))
        t = index[s]
        index[s] = index[j]
        index[j] = t


@njit(cache=True, nogil=True, error_model="numpy")
def dcd_run(indptr, indices, values, B, U_pos, U_neg, D_pos, D_neg, state, row_cost,
            eps, max_iter, n_steps, w, index, istate, fstate, rng):
    """Run at most ``n_steps`` outer iterations of dual coordinate descent.

    ``state`` is the (n, 2) array of ``new_state``: alpha and y_i * QD_i with
    ``QD[i] = |x_i|^2 + D_ii`` (the constant feature included); ``row_cost``
    is empty, or holds a weight s_i > 0 per row (sample weights) that scales
    its class's bound and divides its diagonal term: U_i = U s_i, D_ii = D / s_i
    (LIBLINEAR's instance-weight variant; QD must include D / s_i); ``w`` has
    length n_features + 1 with ``w[-1]`` multiplying ``B``; ``state``,
    ``index``, ``istate``, ``fstate`` and ``rng`` carry the state between
    calls (see the module constants); an ``fstate`` of length 4 also
    receives the projected-gradient extremes of the call's first outer
    iteration (FIRST_PGMAX, FIRST_PGMIN). Returns RUNNING, CONVERGED or
    MAX_ITER.
    """
    n = state.shape[0]
    weighted = row_cost.shape[0] != 0
    row_state = state[:, 0]         # row_state[j]: the first word of state[j]
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
            if s + 2 * PREFETCH < active:
                j = index[s + 2 * PREFETCH]
                _prefetch(indptr, j)
                _prefetch(row_state, j)
            if s + PREFETCH < active:
                _prefetch_row(indptr, indices, values, index[s + PREFETCH])
            i = index[s]
            a = state[i, 0]
            qd = state[i, 1]
            yi = math.copysign(1.0, qd)
            if yi > 0:
                U = U_pos
                D = D_pos
            else:
                U = U_neg
                D = D_neg
            if weighted:
                U *= row_cost[i]
                D /= row_cost[i]
            G = yi * row_dot(indptr, indices, values, i, w, B) - 1.0 + a * D
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
                a_new = a - G / abs(qd)
                if a_new < 0.0:
                    a_new = 0.0
                elif a_new > U:
                    a_new = U
                state[i, 0] = a_new
                row_axpy(indptr, indices, values, i, (a_new - a) * yi, w, B)
            s += 1
        if steps == 0 and fstate.shape[0] > FIRST_PGMIN:
            fstate[FIRST_PGMAX] = pgmax_new
            fstate[FIRST_PGMIN] = pgmin_new
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
def dual_terms(y, alpha, D_pos, D_neg, row_cost):
    """(sum_i alpha_i^2 D_ii, sum_i alpha_i, #{alpha_i > 0}); D_ii divided by
    row_cost[i] when ``row_cost`` is not empty (as in ``dcd_run``)."""
    sq = 0.0
    sa = 0.0
    nsv = 0
    weighted = row_cost.shape[0] != 0
    for i in range(y.shape[0]):
        a = alpha[i]
        if a > 0.0:
            nsv += 1
            sa += a
            D = D_pos if y[i] > 0 else D_neg
            if weighted:
                D /= row_cost[i]
            sq += a * a * D
    return sq, sa, nsv
