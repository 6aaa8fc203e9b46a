"""Numba kernel of dual coordinate descent for L2-regularised logistic regression.

H.-F. Yu, F.-L. Huang, C.-J. Lin, "Dual coordinate descent methods for
logistic regression and maximum entropy models", Machine Learning 85, 2011
(Algorithm 5, as LIBLINEAR's solve_l2r_lr_dual, -s 7). The dual of
min_w 1/2 |w|^2 + sum_i C_i log(1 + exp(-y_i w.x_i)) is

    min_alpha  1/2 alpha^T Q alpha + sum_i [alpha_i log alpha_i + (C_i - alpha_i) log(C_i - alpha_i)],
               0 < alpha_i < C_i,

Q_ij = y_i y_j x_i.x_j, with w = sum_i y_i alpha_i x_i kept up to date.
Each variable is held as the pair (alpha_i, C_i - alpha_i) so that neither
loses precision near a bound; its one-variable problem is solved by a
safeguarded Newton method on whichever of the two is smaller. The inner
tolerance tightens as the outer iterations need fewer Newton steps, and
the run stops when the largest one-variable gradient of a pass is below eps.

The state lives in caller-owned arrays so a front can run a few outer
iterations at a time.
"""
import math

import numpy as np
from numba import njit

from .._common import row_axpy, row_dot
from ._dcd_kernels import CONVERGED, MAX_ITER, PREFETCH, RUNNING, _prefetch, _prefetch_row, _shuffle

MAX_INNER = 100         # Newton steps per one-variable problem
SHRINK_Z = 0.1          # the paper's xi: a step that leaves (0, C) shrinks z instead
# istate slots
ITER = 0
# fstate slots
INNER_EPS = 0           # the current tolerance of the one-variable problems
GMAX = 1                # the largest one-variable gradient of the last pass


@njit(cache=True, nogil=True, error_model="numpy")
def lr_run(indptr, indices, values, B, y, alpha, upper, xsq, eps, inner_eps_min, max_iter, steps,
           w, index, istate, fstate, rstate):
    """At most ``steps`` outer iterations; returns RUNNING, CONVERGED or MAX_ITER.

    ``alpha`` is (n, 2): (alpha_i, C_i - alpha_i), both > 0; ``upper[i] = C_i``;
    ``xsq[i] = x_i.x_i`` (the constant feature B included).
    """
    n = y.shape[0]
    it = istate[ITER]
    inner_eps = fstate[INNER_EPS]
    for _ in range(steps):
        if it >= max_iter:
            return MAX_ITER
        _shuffle(index, n, rstate)
        newton_steps = 0
        gmax = 0.0
        alpha_rows = alpha[:, 0]
        for s in range(n):
            # the rows ahead in the visiting order (hints only, as in _dcd_kernels.dcd_run)
            if s + 2 * PREFETCH < n:
                j = index[s + 2 * PREFETCH]
                _prefetch(indptr, j)
                _prefetch(alpha_rows, j)
                _prefetch(upper, j)
                _prefetch(xsq, j)
                _prefetch(y, j)
            if s + PREFETCH < n:
                _prefetch_row(indptr, indices, values, index[s + PREFETCH])
            i = index[s]
            C = upper[i]
            a = xsq[i]
            b = y[i] * row_dot(indptr, indices, values, i, w, B)
            # minimise over the smaller of (alpha_i, C - alpha_i): z is that one
            k1, k2, sign = 0, 1, 1.0
            if 0.5 * a * (alpha[i, 1] - alpha[i, 0]) + b < 0.0:
                k1, k2, sign = 1, 0, -1.0
            z_old = alpha[i, k1]
            z = z_old
            if C - z < 0.5 * C:
                z = SHRINK_Z * z
            gp = a * (z - z_old) + sign * b + math.log(z / (C - z))
            gmax = max(gmax, abs(gp))
            inner = 0
            while inner <= MAX_INNER:
                if abs(gp) < inner_eps:
                    break
                gpp = a + C / (C - z) / z
                trial = z - gp / gpp
                if trial <= 0.0:
                    z *= SHRINK_Z
                else:
                    z = trial
                gp = a * (z - z_old) + sign * b + math.log(z / (C - z))
                newton_steps += 1
                inner += 1
            if inner > 0:
                alpha[i, k1] = z
                alpha[i, k2] = C - z
                row_axpy(indptr, indices, values, i, sign * (z - z_old) * y[i], w, B)
        it += 1
        istate[ITER] = it
        fstate[GMAX] = gmax
        if gmax < eps:
            fstate[INNER_EPS] = inner_eps
            return CONVERGED
        if newton_steps <= n // 10:
            inner_eps = max(inner_eps_min, 0.1 * inner_eps)
    fstate[INNER_EPS] = inner_eps
    return RUNNING


@njit(cache=True, nogil=True)
def log_loss_sum(y, scores, weights):
    """sum_i weights_i log(1 + exp(-y_i score_i)), computed without overflow."""
    s = 0.0
    for i in range(y.shape[0]):
        m = -y[i] * scores[i]
        s += weights[i] * (m + math.log1p(math.exp(-m)) if m > 0.0 else math.log1p(math.exp(m)))
    return s


@njit(cache=True, nogil=True)
def lr_dual_terms(alpha):
    """sum_i [alpha_i log alpha_i + (C_i - alpha_i) log(C_i - alpha_i)] (the entropy part of the dual)."""
    s = 0.0
    for i in range(alpha.shape[0]):
        s += alpha[i, 0] * math.log(alpha[i, 0]) + alpha[i, 1] * math.log(alpha[i, 1])
    return s


@njit(cache=True, nogil=True)
def log_score_pass(scores, y, weights, coef):
    """One pass of the weighted logistic loss sum_i weights_i log(1 + exp(-y_i s_i))
    at ``scores``: coef_i = -d loss / d s_i = weights_i y_i / (1 + exp(y_i s_i)).
    Returns (rows with y_i s_i <= 0, the loss, sum of loss_i + coef_i s_i:
    the constant of the tangent cut), computed without overflow."""
    wrong = 0
    loss = 0.0
    bconst = 0.0
    for i in range(y.shape[0]):
        m = y[i] * scores[i]
        if m <= 0.0:
            wrong += 1
        if m > 0.0:
            e = math.exp(-m)
            li = math.log1p(e)
            sig = e / (1.0 + e)          # 1 / (1 + exp(m))
        else:
            e = math.exp(m)
            li = -m + math.log1p(e)
            sig = 1.0 / (1.0 + e)
        c = weights[i] * y[i] * sig
        coef[i] = c
        loss += weights[i] * li
        bconst += weights[i] * li + c * scores[i]
    return wrong, loss, bconst
