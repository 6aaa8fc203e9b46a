"""numba kernels of ASSET (Lee and Wright, ICPRAM 2012, Algorithm 1).

The problem (PL) is a linear SVM on dense feature rows F[r] = V_r:

    min  lambda/2 |gamma|^2 + 1/n sum_i cost_i hinge(y_i (V_i.gamma + b))
    over X = { |gamma| <= 1/sqrt(lambda), |b| <= b_box }

gamma is extended by one weight for the constant feature Bc (-B; Bc = 0.0
when there is none), regularised with the rest. Each step j draws k rows
(i.i.d., by the caller), forms the stochastic sub-gradient of Table 1
averaged over the batch,

    G = ( lambda gamma - 1/k sum_{viol} cost_i y_i V_i ,  -1/k sum_{viol} cost_i y_i )

(``viol``: the drawn rows with y_i (V_i.gamma + b) < 1), moves by
eta_j = step0 / sqrt(j) with step0 = D_X / D_G, and projects onto X (the
ball and the interval separately: X is their product). With ``strong``
(ASSET*) the step is 1/(lambda j) and b is not used.

Averaging (steps 8-10): from step ``avg_start`` on, the eta-weighted mean
of the iterates, sum_j eta_j x_j / sum_j eta_j. gamma is kept as a * v
(so the lambda-shrink is O(1)); the weighted sum is kept as T + A v, with
A += eta_j a_j each averaged step and, when v changes by delta,
T -= A delta (so it costs nothing on steps without a violation).

State vector (float64[6]): a, nu = |v|^2, b, A, sum of eta, sum of eta b.

The dot products over dense rows are reductions; numba vectorises them
only when allowed to reassociate (``FASTMATH``: reassoc and contract, no
assumptions about NaN or infinities). That made a step ~4x faster; the
result depends on the summation order only at rounding level.
"""
import numpy as np
from numba import njit, prange

from ..._numba import options as _opts
from ..._numba.options import PRANGE

SCALE, NU, BIAS, AVG_A, ETA_SUM, B_SUM = 0, 1, 2, 3, 4, 5
RESCALE_BELOW = 1e-6
FASTMATH = {"reassoc", "contract"}
ROWS_PER_TASK = 64        # rows per parallel task of feature_margins / row_sqnorms


def new_state():
    return np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0])


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def asset_steps(F, pos, y, cost, k, t0, lam, Bc, has_b, b_box, step0, strong, avg_start,
                v, state, T, viol):
    """Run len(pos)//k steps numbered t0+1, t0+2, ... of Algorithm 1.

    ``F`` (float32 or float64, n_F x d) holds feature rows, ``pos`` the rows
    drawn (k per step), ``y``/``cost`` (aligned with F's rows) labels in
    {+1, -1} and per-row loss weights. ``v`` (d+1), ``state`` and ``T``
    (d+1) are updated in place; ``viol`` is int64 scratch of length k.
    Returns the number of steps run.
    """
    d = F.shape[1]
    n_steps = pos.shape[0] // k
    radius2 = 1.0 / lam
    for s in range(n_steps):
        t = t0 + s + 1
        if strong:
            eta = 1.0 / (lam * t)
        else:
            eta = step0 / np.sqrt(t)
        a = state[SCALE]
        b = state[BIAS]
        # the violators of the batch under (gamma_{j-1}, b_{j-1})
        nv = 0
        for j in range(k):
            r = pos[s * k + j]
            dot = Bc * v[d]
            for q in range(d):
                dot += F[r, q] * v[q]
            if y[r] * (a * dot + b) < 1.0:
                viol[nv] = r
                nv += 1
        averaging = t >= avg_start
        shrink = 1.0 - eta * lam
        if shrink <= 0.0:
            # gamma <- 0 (first step of ASSET*): settle the lazy average first
            A = state[AVG_A]
            if A != 0.0:
                for q in range(d + 1):
                    T[q] += A * v[q]
                state[AVG_A] = 0.0
            v[:] = 0.0
            state[NU] = 0.0
            a = 1.0
        else:
            a *= shrink
        A = state[AVG_A]
        for j in range(nv):
            r = viol[j]
            c = eta * cost[r] * y[r] / k
            delta = c / a
            nu = 0.0
            if A != 0.0:
                ad = A * delta
                for q in range(d):
                    x = F[r, q]
                    v[q] += delta * x
                    T[q] -= ad * x
                    nu += v[q] * v[q]
                T[d] -= ad * Bc
            else:
                for q in range(d):
                    v[q] += delta * F[r, q]
                    nu += v[q] * v[q]
            v[d] += delta * Bc
            nu += v[d] * v[d]
            state[NU] = nu
            if has_b:
                b += c
        # projection onto X
        g2 = a * a * state[NU]
        if g2 > radius2:
            a *= np.sqrt(radius2 / g2)
        if has_b:
            if b > b_box:
                b = b_box
            elif b < -b_box:
                b = -b_box
        if a < RESCALE_BELOW:
            for q in range(d + 1):
                v[q] *= a
            state[NU] *= a * a
            state[AVG_A] /= a
            a = 1.0
        state[SCALE] = a
        state[BIAS] = b
        if averaging:
            state[AVG_A] += eta * a
            state[ETA_SUM] += eta
            state[B_SUM] += eta * b
    return n_steps


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _margins_range(F, w, c0, out, lo, hi):
    d = F.shape[1]
    for r in range(lo, hi):
        s = c0
        for q in range(d):
            s += F[r, q] * w[q]
        out[r] = s


@njit(cache=True, nogil=True, parallel=PRANGE)
def feature_margins_parallel(F, w, Bc, b, out):
    """feature_margins in parallel over blocks of ROWS_PER_TASK rows."""
    n, d = F.shape
    c0 = Bc * w[d] + b
    for t in prange((n + ROWS_PER_TASK - 1) // ROWS_PER_TASK):
        _margins_range(F, w, c0, out, t * ROWS_PER_TASK, min(n, (t + 1) * ROWS_PER_TASK))
    return out


def feature_margins(F, w, Bc, b, out):
    """out[r] = F[r].w[:d] + Bc w[d] + b for every row; returns out. In
    parallel from PARALLEL_MIN_WORK entries of F on (each row's sum is
    computed by the same code either way)."""
    n, d = F.shape
    if n * d >= _opts.PARALLEL_MIN_WORK:
        return feature_margins_parallel(F, w, Bc, b, out)
    _margins_range(F, w, Bc * w[d] + b, out, 0, n)
    return out


@njit(cache=True, nogil=True)
def hinge_sum(y, cost, scores):
    """sum_i cost_i max(0, 1 - y_i scores_i)."""
    s = 0.0
    for i in range(y.shape[0]):
        m = 1.0 - y[i] * scores[i]
        if m > 0.0:
            s += cost[i] * m
    return s


@njit(cache=True, nogil=True, fastmath=FASTMATH)
def _sqnorms_range(F, out, lo, hi):
    d = F.shape[1]
    for r in range(lo, hi):
        s = 0.0
        for q in range(d):
            x = F[r, q]
            s += x * x
        out[r] = s


@njit(cache=True, nogil=True, parallel=PRANGE)
def row_sqnorms_parallel(F, out):
    """row_sqnorms in parallel over blocks of ROWS_PER_TASK rows."""
    n = F.shape[0]
    for t in prange((n + ROWS_PER_TASK - 1) // ROWS_PER_TASK):
        _sqnorms_range(F, out, t * ROWS_PER_TASK, min(n, (t + 1) * ROWS_PER_TASK))
    return out


def row_sqnorms(F):
    """|F[r]|^2 for every row (float64[n]). In parallel from
    PARALLEL_MIN_WORK entries of F on (the same numbers either way)."""
    n, d = F.shape
    out = np.empty(n)
    if n * d >= _opts.PARALLEL_MIN_WORK:
        return row_sqnorms_parallel(F, out)
    _sqnorms_range(F, out, 0, n)
    return out
