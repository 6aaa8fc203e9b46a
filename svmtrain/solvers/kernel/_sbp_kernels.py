"""numba kernels of the Stochastic Batch Perceptron (Cotter, Shalev-Shwartz, Srebro, ICML 2012).

The problem (paper eq. 2.3/3.1, with the bias of section 3.6): over |w| <= 1,

    maximise f(w) = max_{b, xi >= 0, sum xi <= n nu} min_i (c_i + y_i b + xi_i),
    c_i = y_i <w, Phi(x_i)>   (the "responses").

Water filling (section 3.2, Figure 1). Pouring the volume T = n nu onto
the responses gives the water level Lambda: with d_(1) <= d_(2) <= ... the
sorted responses, k* = max{k : k d_(k) - sum_{j<=k} d_(j) <= T} points are
submerged and Lambda = (T + sum_{j<=k*} d_(j)) / k*. The uniform
distribution on the k* submerged points is minimax optimal, so a step adds
y_j Phi(x_j) for j drawn from them. :func:`water_level` finds k* without
sorting: a quickselect whose pivot tests need(k) = k d_(k) - S(k), which is
non-decreasing in k (expected O(n)).

Two basins (section 3.6). With the bias the positive and the negative
examples form two basins with levels L+ and L-, b = (L- - L+)/2 and the
common level is gamma = (L+ + L-)/2. Maximising L+ + L- for a total volume
T forces equal submerged counts on both sides, and then
L+ + L- = (T + S+(k) + S-(k)) / k: the single-basin rule applied to the
paired values d_(k) = c+_(k) + c-_(k) (the k-th smallest of each side).
:func:`water_level_bias` finds that k* by a quickselect over ranks
(expected O(n)); the minimax distribution is uniform on the k* lowest of
each side with mass 1/2 per side, so a step takes one positive and one
negative point (each with weight 1/2). Any split of L+ + L- within the
order-statistic brackets is optimal; :func:`bias_from_level` takes the
middle.

Representation. The loop keeps c = s * v and alpha = s * a with a global
scale s (the projection onto |w| <= 1 only changes s), |w|^2 = sum_i
alpha_i c_i (section 3.3). A step with the kernel rows of the sampled
points j_1..j_L adds eta/L to each alpha_j and eta/L y_i y_j K(x_i, x_j)
to each c_i (eq. 3.4) -- L = B without a bias, 2B with one.

Averaging. The averaged iterate uses weights omega_t = t**avg_power; with
Omega_t = sum_{tau <= t} omega_tau s_tau, sum_t omega_t c_t = Omega_T v_T - r
where r accumulates Omega_{t-1} * (the change of v at step t): the running
average costs one more multiply-add per updated entry. When s has shrunk
below FOLD_BELOW it is folded into v and a, and Omega v - r is flushed
into an explicit sum first (fold_scale), so the two terms never grow far
apart (no cancellation on long runs).
"""
import math

import numpy as np
from numba import njit, prange

from ..._numba import options as _opts
from ..._numba.options import PRANGE, arg_index, by_size, serial_twin

from ...mercer.cache import fetch, fetch_serial
from ._smo_kernels import _pair

# scalar state (float64 vector) of the step loop
S_SCALE, S_OMEGA, S_WEIGHT, S_STEP, S_ROWS, S_LEVEL, S_K = range(7)
STATE_SIZE = 7
APPLY_BLOCK = 4096       # rows per parallel task when the responses are updated
FOLD_BELOW = 1e-3       # fold the scale into v and a (and flush the running sums) below this


# ----------------------------------------------------------------- randomness
@njit(cache=True, nogil=True)
def rand_below(rs, m):
    """A pseudo-random int in [0, m) from the xorshift64* state rs[0] (seeded by the caller's rng)."""
    x = rs[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rs[0] = x
    z = x * np.uint64(2685821657736338717)
    u = (z >> np.uint64(11)) * (1.0 / 9007199254740992.0)
    k = int(u * m)
    return k if k < m else m - 1


# ------------------------------------------------------------------ selection
@njit(cache=True, nogil=True)
def partition3(vals, idx, lo, hi, pivot):
    """Reorder idx[lo:hi] into < pivot, == pivot, > pivot (by vals[idx]); returns (lt, gt, sum of the < part)."""
    i = lo
    lt = lo
    gt = hi
    s = 0.0
    while i < gt:
        x = vals[idx[i]]
        if x < pivot:
            tmp = idx[lt]
            idx[lt] = idx[i]
            idx[i] = tmp
            lt += 1
            i += 1
            s += x
        elif x > pivot:
            gt -= 1
            tmp = idx[gt]
            idx[gt] = idx[i]
            idx[i] = tmp
        else:
            i += 1
    return lt, gt, s


@njit(cache=True, nogil=True)
def quickselect(vals, idx, lo, hi, q, rs):
    """Reorder idx[lo:hi] so that position q holds its (q-lo)-th smallest, smaller ones before, larger after."""
    while hi - lo > 1:
        pivot = vals[idx[lo + rand_below(rs, hi - lo)]]
        lt, gt, _ = partition3(vals, idx, lo, hi, pivot)
        if q < lt:
            hi = lt
        elif q >= gt:
            lo = gt
        else:
            return


def water_level(vals, idx, volume, rs, hint=np.nan):
    """Python entry to :func:`_water_level` (one compiled signature: hint always a float)."""
    return _water_level(vals, idx, float(volume), rs, float(hint))


@njit(cache=True, nogil=True)
def _water_level(vals, idx, volume, rs, hint):
    """Water level of vals[idx] with ``volume`` poured in; returns (k, level).

    idx is reordered so that idx[:k] are the k submerged points (the k
    smallest values; k >= 1 when idx is not empty). level = (volume + their
    sum) / k, so sum over idx of max(0, level - vals) == volume.

    ``hint`` (the previous level, when known) is tried as the first pivot,
    and the nearest value beyond it as the second: when the level moved
    little the search ends after about two passes. Later pivots are random
    (expected O(n) in any case).
    """
    lo = np.int64(0)      # (np.int64: a literal 0 would be a second specialisation of partition3)
    hi = idx.shape[0]
    cnt = 0
    total = 0.0
    probe = 0
    lo_side = True
    while lo < hi:
        if probe == 0 and not np.isnan(hint):
            pivot = hint
        elif probe == 1 and not np.isnan(hint):
            # the smallest value still above water, or the largest still below
            pivot = vals[idx[lo]]
            for p in range(lo + 1, hi):
                x = vals[idx[p]]
                if (x < pivot) if lo_side else (x > pivot):
                    pivot = x
        else:
            pivot = vals[idx[lo + rand_below(rs, hi - lo)]]
        lt, gt, s_lt = partition3(vals, idx, lo, hi, pivot)
        r = cnt + (gt - lo)
        s_r = total + s_lt + (gt - lt) * pivot
        if r * pivot - s_r <= volume:
            cnt = r
            total = s_r
            lo = gt
            lo_side = True
        else:
            hi = lt
            lo_side = False
        probe += 1
    if cnt == 0:
        return 0, 0.0
    return cnt, (volume + total) / cnt


@njit(cache=True, nogil=True)
def _range_sum(vals, idx, lo, hi):
    s = 0.0
    for p in range(lo, hi):
        s += vals[idx[p]]
    return s


def water_level_bias(vals, idx_pos, idx_neg, volume, rs, hint=0):
    """Python entry to :func:`_water_level_bias` (one compiled signature: hint always an int)."""
    return _water_level_bias(vals, idx_pos, idx_neg, float(volume), rs, int(hint))


@njit(cache=True, nogil=True)
def _water_level_bias(vals, idx_pos, idx_neg, volume, rs, hint):
    """Two-basin water level (section 3.6); returns (k, level_sum) with level_sum = L+ + L- = 2 gamma.

    idx_pos / idx_neg are reordered so that their first k entries are the k
    lowest of each side (the submerged points); k is the largest rank with
    k d_(k) - S(k) <= volume for the paired values d_(k) = c+_(k) + c-_(k).
    ``hint`` (the previous k, when > 0) is probed first and its neighbour
    second; later probes are random ranks (expected O(n) in any case).
    """
    k_hi = min(idx_pos.shape[0], idx_neg.shape[0])
    lo_p = np.int64(0)    # (np.int64: see _water_level)
    hi_p = idx_pos.shape[0]
    lo_n = np.int64(0)
    hi_n = idx_neg.shape[0]
    cnt = 0
    total = 0.0
    probe = 0
    included = False
    while cnt < k_hi:
        if probe == 0 and hint > 0:
            r = min(max(hint, 1), k_hi)
        elif probe == 1 and hint > 0:
            r = cnt + 1 if included else k_hi
        else:
            r = cnt + 1 + rand_below(rs, k_hi - cnt)
        q_p = lo_p + (r - cnt) - 1
        q_n = lo_n + (r - cnt) - 1
        quickselect(vals, idx_pos, lo_p, hi_p, q_p, rs)
        quickselect(vals, idx_neg, lo_n, hi_n, q_n, rs)
        s_r = total + _range_sum(vals, idx_pos, lo_p, q_p + 1) + _range_sum(vals, idx_neg, lo_n, q_n + 1)
        d_r = vals[idx_pos[q_p]] + vals[idx_neg[q_n]]
        included = r * d_r - s_r <= volume
        if included:
            cnt = r
            total = s_r
            lo_p = q_p + 1
            lo_n = q_n + 1
        else:
            k_hi = r - 1
            hi_p = q_p
            hi_n = q_n
        probe += 1
    if cnt == 0:
        return 0, 0.0
    return cnt, (volume + total) / cnt


@njit(cache=True, nogil=True)
def bias_from_level(vals, idx_pos, idx_neg, k, level_sum):
    """(b, gamma) for the two-basin solution: L+ in the middle of its optimal bracket, b = (L- - L+)/2."""
    inf = np.inf
    top_p = -inf
    for p in range(k):
        top_p = max(top_p, vals[idx_pos[p]])
    top_n = -inf
    for p in range(k):
        top_n = max(top_n, vals[idx_neg[p]])
    next_p = inf
    for p in range(k, idx_pos.shape[0]):
        next_p = min(next_p, vals[idx_pos[p]])
    next_n = inf
    for p in range(k, idx_neg.shape[0]):
        next_n = min(next_n, vals[idx_neg[p]])
    lo = max(top_p, level_sum - next_n)
    hi = min(next_p, level_sum - top_n)
    if lo > hi:          # only by rounding
        lo = hi = 0.5 * (lo + hi)
    level_p = 0.5 * (lo + hi)
    level_n = level_sum - level_p
    return 0.5 * (level_n - level_p), 0.5 * level_sum


# ------------------------------------------------------------------- the loop
@njit(cache=True, nogil=True, inline="always")
def _apply_block(M, slots, coef, y, v, r, a, n_train, omega, u, lo, hi):
    for i in range(lo, hi):
        u[i] = 0.0
    for b in range(slots.shape[0]):
        c = coef[b]
        row = slots[b]
        for i in range(lo, hi):
            u[i] += c * M[row, i]
    for i in range(lo, hi):
        ui = u[i] * y[i]
        v[i] += ui
        r[i] += omega * ui
    acc = 0.0
    for i in range(lo, min(hi, n_train)):
        acc += a[i] * v[i]
    return acc


@njit(cache=True, nogil=True, parallel=PRANGE)
def _apply_parallel(M, slots, coef, y, v, r, a, n_train, omega, u):
    n = v.shape[0]
    n_blocks = (n + APPLY_BLOCK - 1) // APPLY_BLOCK
    parts = np.zeros(n_blocks)
    for blk in prange(n_blocks):
        lo = blk * APPLY_BLOCK
        parts[blk] = _apply_block(M, slots, coef, y, v, r, a, n_train, omega, u, lo, min(n, lo + APPLY_BLOCK))
    return parts.sum()


@njit(cache=True, nogil=True)
def apply_rows(M, slots, coef, y, v, r, a, n_train, omega, u):
    """v_i += y_i u_i and r_i += omega y_i u_i with u_i = sum_b coef_b M[slots_b, i]; returns sum_{i<n_train} a_i v_i.

    ``u`` is float64[len(v)] scratch. Small sets are done serially (a parallel
    region costs more than it saves there).
    """
    n = v.shape[0]
    if n <= 2 * APPLY_BLOCK:
        return _apply_block(M, slots, coef, y, v, r, a, n_train, omega, u, 0, n)
    return _apply_parallel(M, slots, coef, y, v, r, a, n_train, omega, u)


@njit(cache=True, nogil=True)
def fold_scale(v, r, acc_c, a, ra, acc_a, state):
    """Move the running sums into acc_c/acc_a, then fold the scale s into v and a (c = s v unchanged).

    Afterwards Omega = 0 and r = ra = 0, so the lazy sums restart from the
    new units; this keeps Omega v - r free of cancellation however much s
    shrinks over a long run.
    """
    s = state[S_SCALE]
    om = state[S_OMEGA]
    for i in range(v.shape[0]):
        acc_c[i] += om * v[i] - r[i]
        r[i] = 0.0
        v[i] *= s
    for i in range(a.shape[0]):
        acc_a[i] += om * a[i] - ra[i]
        ra[i] = 0.0
        a[i] *= s
    state[S_OMEGA] = 0.0
    state[S_SCALE] = 1.0


@njit(cache=True, nogil=True)
def sbp_steps_kernel(n_steps, row_budget, bias, B, volume, eta0, max_kii, avg_power, fold_below,
              y, v, r, acc_c, a, ra, acc_a, state, idx_all, idx_pos, idx_neg, uniforms, rs, trace,
              indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
              M, slot_of, owner, stamp, cstate, D, miss_rows, miss_slots):
    """Run up to n_steps SBP steps (stopping early once ``row_budget`` kernel rows were used).

    y: +1/-1 over all rows (training rows first, then held-out rows); v, r,
    acc_c: float64 over all rows; a, ra, acc_a: float64 over training rows;
    state: see S_*; fold_below: the scale s is folded into v and a (and the
    running sums flushed, see fold_scale) when it falls below this; uniforms: float64[n_steps, L] from the caller's seeded generator
    (which submerged points are drawn); rs: xorshift state (pivots); trace:
    int64[n_steps, L] receives the drawn rows when it has n_steps rows (pass
    shape (0, L) otherwise). The cache arguments are those of
    svmtrain.mercer.cache.fetch. Returns the number of steps run.
    """
    n_train = a.shape[0]
    L = 2 * B if bias else B
    js = np.empty(L, np.int64)
    slots = np.empty(L, np.int64)
    coef = np.empty(L)
    u = np.empty(v.shape[0])
    for step in range(n_steps):
        if state[S_ROWS] >= row_budget:
            return step
        s = state[S_SCALE]
        t = state[S_STEP] + 1.0
        # 1. the water level; p* is uniform on the submerged points (per basin)
        if bias:
            k, level = _water_level_bias(v, idx_pos, idx_neg, volume / s, rs, np.int64(state[S_K]))
            for b in range(B):
                js[b] = idx_pos[int(uniforms[step, b] * k)]
                js[B + b] = idx_neg[int(uniforms[step, B + b] * k)]
        else:
            k, level = _water_level(v, idx_all, volume / s, rs, state[S_LEVEL] / s if state[S_K] > 0 else np.nan)
            for b in range(B):
                js[b] = idx_all[int(uniforms[step, b] * k)]
        state[S_LEVEL] = level * s
        state[S_K] = k
        if trace.shape[0] > step:
            for b in range(L):
                trace[step, b] = js[b]
        # 2. the kernel rows of the drawn points
        fetch(js, indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
              M, slot_of, owner, stamp, cstate, D, miss_rows, miss_slots, slots)
        state[S_ROWS] += L
        # 3. alpha_j += eta / L for each drawn j (in units of s); every response by eq. 3.4
        eta = eta0 / math.sqrt(t * max_kii)
        delta = eta / (L * s)
        omega_prev = state[S_OMEGA]
        for b in range(L):
            j = js[b]
            a[j] += delta
            ra[j] += omega_prev * delta
            coef[b] = delta * y[j]
        norm2 = apply_rows(M, slots, coef, y, v, r, a, n_train, omega_prev, u) * s * s
        # 4. projection onto |w| <= 1: |w|^2 = sum_i alpha_i c_i
        if norm2 > 1.0:
            s = s / math.sqrt(norm2)
        state[S_SCALE] = s
        if s < fold_below:
            fold_scale(v, r, acc_c, a, ra, acc_a, state)
            s = 1.0
        # 5. the running average, iterate t weighted t**avg_power
        w = t ** avg_power
        state[S_OMEGA] += w * s
        state[S_WEIGHT] += w
        state[S_STEP] = t
    return n_steps


_apply_parallel_serial = serial_twin(_apply_parallel)
apply_rows_serial = serial_twin(apply_rows, {"_apply_parallel": _apply_parallel_serial})
sbp_steps_serial = serial_twin(sbp_steps_kernel, {"fetch": fetch_serial, "apply_rows": apply_rows_serial})
_INDPTR = arg_index(sbp_steps_kernel, "indptr")
# sbp_steps: the serial twin (no parallel code compiled or run) on data of
# fewer than PARALLEL_MIN_NNZ stored values; the same numbers either way
sbp_steps = by_size(sbp_steps_kernel, sbp_steps_serial,
                    lambda args: args[_INDPTR][-1] >= _opts.PARALLEL_MIN_NNZ)


@njit(cache=True, nogil=True, parallel=PRANGE)
def averaged_kernel(v, r, acc, omega, weight, out):
    """out = (acc + omega v - r) / weight: the running average of s v (responses) or s a (alpha)."""
    for i in prange(v.shape[0]):
        out[i] = (acc[i] + omega * v[i] - r[i]) / weight
    return out


averaged = by_size(averaged_kernel, serial_twin(averaged_kernel),
                   lambda args: args[0].shape[0] >= _opts.PARALLEL_MIN_WORK)


# ------------------------------------------------------- the pilot for nu
@njit(cache=True, nogil=True)
def pilot_smo(K, y, C, bias, eps, max_iter, alpha, grad):
    """Solve the dual SVM  min 1/2 a'Qa - sum a,  0 <= a <= C  (Q_ij = y_i y_j K_ij) on a small K.

    With ``bias`` the equality y'a = 0 is kept by updating pairs (the
    maximal-violating i and the second-order choice of j of Fan, Chen and
    Lin 2005), else single coordinates (the largest projected gradient).
    Stops when the violation is below ``eps`` or after ``max_iter``
    updates. ``alpha``/``grad`` (float64[m]) are outputs (grad = Qa - 1).
    Returns (iterations, rho): the decision function is
    sum_j a_j y_j K(x_j, x) - rho.
    """
    m = y.shape[0]
    for t in range(m):
        alpha[t] = 0.0
        grad[t] = -1.0
    it = 0
    while it < max_iter:
        if bias:
            g_max = -np.inf
            i = -1
            for t in range(m):
                if (y[t] > 0 and alpha[t] < C) or (y[t] < 0 and alpha[t] > 0):
                    if -y[t] * grad[t] >= g_max:
                        g_max = -y[t] * grad[t]
                        i = t
            g_min = np.inf
            j = -1
            best = np.inf
            for t in range(m):
                if (y[t] > 0 and alpha[t] > 0) or (y[t] < 0 and alpha[t] < C):
                    v = -y[t] * grad[t]
                    if v < g_min:
                        g_min = v
                    diff = g_max - v
                    if i >= 0 and diff > 0:
                        quad = K[i, i] + K[t, t] - 2.0 * K[i, t]
                        if quad <= 0:
                            quad = 1e-12
                        obj = -diff * diff / quad
                        if obj <= best:
                            best = obj
                            j = t
            if i < 0 or j < 0 or g_max - g_min < eps:
                break
            old_i = alpha[i]
            old_j = alpha[j]
            ai, aj = _pair(y[i], y[j], C, C, old_i, old_j, grad[i], grad[j], K[i, i], K[j, j],
                           y[i] * y[j] * K[i, j])
            d_i = ai - old_i
            d_j = aj - old_j
            alpha[i] = ai
            alpha[j] = aj
            for t in range(m):
                grad[t] += y[t] * (y[i] * K[t, i] * d_i + y[j] * K[t, j] * d_j)
        else:
            worst = 0.0
            i = -1
            for t in range(m):
                g = grad[t]
                if (alpha[t] <= 0 and g > 0) or (alpha[t] >= C and g < 0):
                    g = 0.0
                if abs(g) > worst:
                    worst = abs(g)
                    i = t
            if i < 0 or worst < eps:
                break
            kii = K[i, i] if K[i, i] > 0 else 1e-12
            ai = min(max(alpha[i] - grad[i] / kii, 0.0), C)
            d_i = ai - alpha[i]
            alpha[i] = ai
            for t in range(m):
                grad[t] += y[t] * y[i] * K[t, i] * d_i
        it += 1
    if not bias:
        return it, 0.0
    # rho: the mean of y_t grad_t over the free alphas, else the middle of the feasible interval
    n_free = 0
    s = 0.0
    ub = np.inf
    lb = -np.inf
    for t in range(m):
        yg = y[t] * grad[t]
        if 0 < alpha[t] < C:
            n_free += 1
            s += yg
        elif (alpha[t] >= C) == (y[t] > 0):
            lb = max(lb, yg)
        else:
            ub = min(ub, yg)
    if n_free > 0:
        return it, s / n_free
    if not np.isfinite(ub):
        ub = lb
    if not np.isfinite(lb):
        lb = ub
    return it, 0.5 * (ub + lb)
