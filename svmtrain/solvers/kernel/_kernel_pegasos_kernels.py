"""numba kernel of Pegasos with a Mercer kernel (Shalev-Shwartz et al. 2007, section 4).

    minimise  lambda/2 |w|^2 + 1/n sum_i max(0, 1 - y_i (<w, Phi(x_i)> + b))

w = s * sum_j beta_j Phi(x_j) is never formed: the loop keeps the unscaled
coefficients beta and the unscaled responses v_i = sum_j beta_j K(x_j, x_i)
of every training row, so <w, Phi(x_i)> = s v_i. Step t (eta = 1/(lambda t))
scales w by 1 - 1/t (only s changes), adds eta/k y_j Phi(x_j) for each
violator j of the mini-batch (one kernel row updates every response: the
"responses" form the SBP paper compares against in its Figure 2), and
projects onto |w| <= 1/sqrt(lambda). |w|^2 is tracked exactly from the
responses: |w + g|^2 = |w|^2 + 2 <w, g> + |g|^2 with <w, y_j Phi_j> = y_j s v_j
and |g|^2 from the kernel values among the violators. Steps without a
violator evaluate no kernel row at all.

The unregularised bias (-R) moves by eta/k sum_{violators} y_j and is never
projected. Averaging from step ``avg_start`` uses the identity of
_sbp_kernels: with Omega = sum of s over the averaged steps, the sum of the
averaged responses is Omega v - r where r collects Omega * (each change of v),
flushed into acc_v (and acc_beta) whenever s is folded into v and beta.

State vector (float64): s, |w|^2, b, Omega, n_avg, b_sum.
"""
import numpy as np
from numba import njit

from ..._numba import options as _opts
from ..._numba.options import arg_index, by_size, serial_twin
from ...mercer.cache import fetch, fetch_serial

S_SCALE, S_NORM2, S_BIAS, S_OMEGA, S_NAVG, S_BSUM = range(6)
STATE_SIZE = 6
FOLD_BELOW = 1e-3


@njit(cache=True, nogil=True)
def kpegasos_steps_kernel(draws, t0, lam, unreg_bias, avg_start, fold_below, y, v, beta, r, rbeta, acc_v, acc_beta, state,
                   indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
                   M, slot_of, owner, stamp, cstate, D, miss_rows, miss_slots):
    """Run draws.shape[0] steps numbered t0+1, ...; draws[s] are the k rows of step s.

    v, r: float64[n] (unscaled responses, averaging accumulator); beta,
    rbeta: float64[n] (unscaled coefficients, their accumulator); acc_v,
    acc_beta: the flushed sums (see below); fold_below: s is folded into v
    and beta when it falls below this. The averaged responses are
    (acc_v + Omega v - r) / n_avg, the coefficients likewise. The cache
    arguments are those of svmtrain.mercer.cache.fetch (rows of the training
    set). Returns the number of kernel rows used.
    """
    n_steps, k = draws.shape
    n = v.shape[0]
    radius2 = 1.0 / lam
    viol = np.empty(k, np.int64)
    slots = np.empty(k, np.int64)
    rows_used = 0
    for step in range(n_steps):
        t = t0 + step + 1
        eta = 1.0 / (lam * t)
        s = state[S_SCALE]
        b = state[S_BIAS]
        nv = 0
        for q in range(k):
            i = draws[step, q]
            if y[i] * (s * v[i] + b) < 1.0:
                viol[nv] = i
                nv += 1
        # w <- (1 - 1/t) w
        shrink = 1.0 - 1.0 / t
        if shrink == 0.0:
            # the first step: w becomes 0 (averaging has not started: avg_start >= 1)
            v[:] = 0.0
            beta[:] = 0.0
            s = 1.0
            state[S_NORM2] = 0.0
        else:
            s *= shrink
            state[S_NORM2] *= shrink * shrink
        averaging = t >= avg_start
        omega = state[S_OMEGA]
        if nv > 0:
            fetch(viol[:nv], indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
                  M, slot_of, owner, stamp, cstate, D, miss_rows, miss_slots, slots[:nv])
            rows_used += nv
            c = eta / k
            # |w + g|^2 = |w|^2 + 2 <w, g> + |g|^2 with g = c sum_j y_j Phi_j
            wg = 0.0
            gg = 0.0
            for p in range(nv):
                j = viol[p]
                wg += y[j] * s * v[j]
                for q in range(nv):
                    gg += y[j] * y[viol[q]] * M[slots[p], viol[q]]
            state[S_NORM2] += 2.0 * c * wg + c * c * gg
            delta = c / s
            for p in range(nv):
                j = viol[p]
                dj = delta * y[j]
                beta[j] += dj
                if averaging:
                    rbeta[j] += omega * dj
                row = slots[p]
                if averaging:
                    for i in range(n):
                        kv = dj * M[row, i]
                        v[i] += kv
                        r[i] += omega * kv
                else:
                    for i in range(n):
                        v[i] += dj * M[row, i]
                if unreg_bias:
                    b += c * y[j]
        if state[S_NORM2] < 0.0:
            state[S_NORM2] = 0.0
        # projection onto |w| <= 1/sqrt(lambda)
        if state[S_NORM2] > radius2:
            s *= np.sqrt(radius2 / state[S_NORM2])
            state[S_NORM2] = radius2
        state[S_SCALE] = s
        state[S_BIAS] = b
        if s < fold_below:
            # flush the running sums (Omega v - r) into acc, then fold s into v and beta
            om = state[S_OMEGA]
            for i in range(n):
                acc_v[i] += om * v[i] - r[i]
                acc_beta[i] += om * beta[i] - rbeta[i]
                r[i] = 0.0
                rbeta[i] = 0.0
                v[i] *= s
                beta[i] *= s
            state[S_OMEGA] = 0.0
            state[S_SCALE] = 1.0
        if averaging:
            state[S_OMEGA] += state[S_SCALE]
            state[S_NAVG] += 1.0
            state[S_BSUM] += b
    return rows_used


# kpegasos_steps: the serial twin (no parallel code compiled or run) on data
# of fewer than PARALLEL_MIN_NNZ stored values; the same numbers either way
_INDPTR = arg_index(kpegasos_steps_kernel, "indptr")
kpegasos_steps = by_size(kpegasos_steps_kernel,
                         serial_twin(kpegasos_steps_kernel, {"fetch": fetch_serial}),
                         lambda args: args[_INDPTR][-1] >= _opts.PARALLEL_MIN_NNZ)


@njit(cache=True, nogil=True)
def norm2_from_responses(beta, v, s):
    """|w|^2 = s^2 sum_j beta_j v_j (exact, O(n))."""
    acc = 0.0
    for j in range(beta.shape[0]):
        acc += beta[j] * v[j]
    return acc * s * s
