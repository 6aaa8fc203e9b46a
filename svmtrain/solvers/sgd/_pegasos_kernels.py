"""numba kernels of Pegasos (Shalev-Shwartz, Singer, Srebro, ICML 2007).

    minimise  f(w, b) = lambda/2 |w|^2 + 1/n sum_i loss(w.x_i + b; y_i)

with the hinge loss max(0, 1 - y s) of the paper, or (its section on
other losses: any convex loss, a subgradient in place of the hinge's) the
logistic loss log(1 + exp(-y s)), the epsilon-insensitive loss
max(0, |s - y| - p) or its square (regression, y real). A batch member
contributes its slope g_i = -d loss / d s at (w_t, b_t) (the hinge: y_i
when y_i s_i < 1, else 0), ``loss_slope``.

See Fig. 1 of the paper (../shared/papers/004_8250dc269e305ba1.txt): step
eta_t = 1/(lambda t); on a mini-batch A_t of k i.i.d. draws,
w <- (1 - eta_t lambda) w + eta_t/k sum_{A_t} g x, then projection onto
the ball |w|^2 <= radius2 (1/lambda for the hinge; 2 f(0) / lambda for the
other losses, since lambda/2 |w*|^2 <= f(w*) <= f(0)). w is kept as a * v with nu = |w|^2 (the
paper's sparse representation), so a step costs O(nnz of the batch). b
is the unregularised bias of the paper's section 4 (second approach),
moved by eta_t/k sum_{A_t^+} y and never projected.

Averaging: the mean of the iterates w_{t+1} for t >= avg_start is kept in
O(nnz) per step: with S = sum of a over the averaged iterates so far and
corr_j = sum over updates v_j += delta of delta * S(at that update),
sum_t w_t[j] = v_j * S - corr_j. The sum is flushed into ``acc`` (O(d))
only when v is rescaled.

State vector (float64[6]): a, nu, b, S, b_sum, n_avg.
"""
import numpy as np
from numba import njit

A, NU, BIAS, S_SUM, B_SUM, N_AVG = 0, 1, 2, 3, 4, 5
RESCALE_BELOW = 1e-6
HINGE, LOG, EPS_INSENSITIVE, SQUARED_EPS_INSENSITIVE = 0, 1, 2, 3
LOSS_CODES = {"hinge": HINGE, "log": LOG, "epsilon-insensitive": EPS_INSENSITIVE,
              "squared-epsilon-insensitive": SQUARED_EPS_INSENSITIVE}


@njit(cache=True, nogil=True)
def loss_slope(loss, s, y, p):
    """-d loss / d s at score s for label or target y (``loss`` a LOSS_CODES
    value; p the tube half-width of the regression losses)."""
    if loss == HINGE:
        return y if y * s < 1.0 else 0.0
    if loss == LOG:
        m = y * s
        return y / (1.0 + np.exp(m)) if m < 0.0 else y * np.exp(-m) / (1.0 + np.exp(-m))
    r = s - y
    if r > p:
        return -1.0 if loss == EPS_INSENSITIVE else -2.0 * (r - p)
    if r < -p:
        return 1.0 if loss == EPS_INSENSITIVE else 2.0 * (-r - p)
    return 0.0


@njit(cache=True, nogil=True)
def loss_value(loss, s, y, p):
    """The loss at score s for label or target y (the function ``loss_slope`` differentiates)."""
    if loss == HINGE:
        return max(0.0, 1.0 - y * s)
    if loss == LOG:
        m = y * s
        return -m + np.log1p(np.exp(m)) if m < 0.0 else np.log1p(np.exp(-m))
    e = max(abs(s - y) - p, 0.0)
    return e if loss == EPS_INSENSITIVE else e * e


@njit(cache=True, nogil=True)
def _flush_average(v, state, acc, corr):
    S = state[S_SUM]
    for j in range(v.shape[0]):
        acc[j] += v[j] * S - corr[j]
        corr[j] = 0.0
    state[S_SUM] = 0.0


@njit(cache=True, nogil=True)
def pegasos_steps(indptr, indices, values, y, draws, k, t0, lam, B,
                  unreg_bias, avg_start, v, state, acc, corr, viol, slope, loss, p, radius2):
    """Run len(draws)//k Pegasos steps numbered t0+1, t0+2, ...

    Updates v, state, acc, corr in place (see the module docstring);
    ``viol`` (int64) and ``slope`` (float64) are scratch space of length k.
    ``draws`` are row indices drawn i.i.d. by the caller's seeded generator;
    ``loss``, ``p``: the loss (LOSS_CODES) and the regression tube;
    ``radius2``: the squared radius of the projection. Returns the number
    of steps. A member's |x_i|^2 (with B^2) is summed in the pass that
    computes its w.x_i, in the order of a separate row_sqnorms pass.
    """
    d1 = v.shape[0]
    last = d1 - 1
    n_steps = draws.shape[0] // k
    for s in range(n_steps):
        t = t0 + s + 1
        eta = 1.0 / (lam * t)
        a = state[A]
        b = state[BIAS]
        # the batch members with a nonzero slope under (w_t, b_t) (hinge: margin < 1)
        nv = 0
        for j in range(k):
            i = draws[s * k + j]
            wx = B * v[last]
            for q in range(indptr[i], indptr[i + 1]):
                wx += values[q] * v[indices[q]]
            g = loss_slope(loss, a * wx + b, y[i], p)
            if g != 0.0:
                viol[nv] = i
                slope[nv] = g
                nv += 1
        # w <- (1 - 1/t) w
        shrink = 1.0 - 1.0 / t
        if shrink == 0.0:
            v[:] = 0.0
            a = 1.0
            state[NU] = 0.0
        else:
            a *= shrink
            state[NU] *= shrink * shrink
        averaging = t >= avg_start
        S = state[S_SUM]
        for j in range(nv):
            i = viol[j]
            c = eta * slope[j] / k
            wx = B * v[last]
            xx = B * B
            for q in range(indptr[i], indptr[i + 1]):
                x = values[q]
                wx += x * v[indices[q]]
                xx += x * x
            state[NU] += 2.0 * c * a * wx + c * c * xx
            delta = c / a
            v[last] += delta * B
            for q in range(indptr[i], indptr[i + 1]):
                v[indices[q]] += delta * values[q]
            if averaging:
                corr[last] += delta * B * S
                for q in range(indptr[i], indptr[i + 1]):
                    corr[indices[q]] += delta * values[q] * S
            if unreg_bias:
                b += c
        if state[NU] < 0.0:
            state[NU] = 0.0
        # projection onto |w|^2 <= radius2
        if state[NU] > radius2:
            a *= np.sqrt(radius2 / state[NU])
            state[NU] = radius2
        state[A] = a
        state[BIAS] = b
        if a < RESCALE_BELOW:
            if averaging:
                _flush_average(v, state, acc, corr)
            for j in range(d1):
                v[j] *= a
            state[A] = 1.0
        if averaging:
            state[S_SUM] += state[A]
            state[B_SUM] += b
            state[N_AVG] += 1.0
    return n_steps
