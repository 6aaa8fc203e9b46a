"""Numba kernel of dual coordinate descent for support vector regression.

C.-H. Ho, C.-J. Lin, "Large-scale linear support vector regression", JMLR
13, 2012 (Algorithm 4, as LIBLINEAR's solve_l2r_l1l2_svr, -s 12/13). The
dual of  min_w 1/2 |w|^2 + C sum_i loss(y_i - w.x_i)  with the
epsilon-insensitive loss max(0, |r| - p) (L1, -s 13) or its square (L2,
-s 12) is

    min_beta  1/2 beta^T Q beta - y^T beta + p |beta|_1 + lambda/2 |beta|^2,
              -U <= beta_i <= U,

Q_ij = x_i.x_j; L1: lambda = 0, U = C; L2: lambda = 1/(2C), U = inf. The
kernel keeps w = sum_i beta_i x_i, so the one-variable problem in beta_i
has gradient G = w.x_i - y_i + lambda beta_i and curvature
H = x_i.x_i + lambda, and the closed-form Newton step of the paper on
G +- p. Each outer iteration visits the active set in a fresh random order
and shrinks variables whose gradient is beyond the previous iteration's
largest violation; it stops when the summed violation falls below eps
times that of the first iteration, after a final pass over every variable.

The state lives in caller-owned arrays (as ``_dcd_kernels.dcd_run``), so a
front can run a few outer iterations at a time and get the same result.
"""
import math

import numpy as np
from numba import njit

from .._common import row_axpy, row_dot
from ._dcd_kernels import CONVERGED, MAX_ITER, PREFETCH, RUNNING, _prefetch, _prefetch_row, _shuffle

# istate slots
ACTIVE = 0          # index[:active] are active
ITER = 1            # outer iterations done
# fstate slots
GMAX_OLD = 0        # the largest violation of the previous outer iteration (shrinking bound)
GNORM1_INIT = 1     # the summed violation of the first outer iteration
GNORM1_LAST = 2     # the summed violation of the last outer iteration


@njit(cache=True, nogil=True, error_model="numpy")
def svr_run(indptr, indices, values, B, y, beta, QD, upper, lam, p, eps, max_iter, steps,
            w, index, istate, fstate, rstate):
    """At most ``steps`` outer iterations; returns RUNNING, CONVERGED or MAX_ITER.

    ``QD[i] = x_i.x_i + lam`` (the constant feature B included); ``beta``,
    ``w``, ``index``, ``istate``, ``fstate`` and ``rstate`` carry the state
    between calls.
    """
    n = y.shape[0]
    active = istate[ACTIVE]
    it = istate[ITER]
    gmax_old = fstate[GMAX_OLD]
    for _ in range(steps):
        if it >= max_iter:
            istate[ACTIVE] = active
            return MAX_ITER
        gmax_new = 0.0
        gnorm1_new = 0.0
        _shuffle(index, active, rstate)
        s = 0
        while s < active:
            # the rows ahead in the visiting order: their indptr and state
            # entries, then their data (hints only, as in _dcd_kernels.dcd_run)
            if s + 2 * PREFETCH < active:
                j = index[s + 2 * PREFETCH]
                _prefetch(indptr, j)
                _prefetch(beta, j)
                _prefetch(y, j)
                _prefetch(QD, j)
            if s + PREFETCH < active:
                _prefetch_row(indptr, indices, values, index[s + PREFETCH])
            i = index[s]
            G = row_dot(indptr, indices, values, i, w, B) - y[i] + lam * beta[i]
            H = QD[i]
            Gp = G + p
            Gn = G - p
            b = beta[i]
            violation = 0.0
            shrink = False
            if b == 0.0:
                if Gp < 0.0:
                    violation = -Gp
                elif Gn > 0.0:
                    violation = Gn
                elif Gp > gmax_old and Gn < -gmax_old:
                    shrink = True
            elif b >= upper:
                if Gp > 0.0:
                    violation = Gp
                elif Gp < -gmax_old:
                    shrink = True
            elif b <= -upper:
                if Gn < 0.0:
                    violation = -Gn
                elif Gn > gmax_old:
                    shrink = True
            elif b > 0.0:
                violation = abs(Gp)
            else:
                violation = abs(Gn)
            if shrink:
                active -= 1
                index[s] = index[active]
                index[active] = i
                continue
            gmax_new = max(gmax_new, violation)
            gnorm1_new += violation
            s += 1
            if H <= 0.0:
                # an all-zero row under the L1 loss: its term in beta is linear, G beta + p |beta|,
                # minimised at a bound (w does not move, the dual value does)
                d = (upper if Gp < 0.0 else (-upper if Gn > 0.0 else 0.0)) - b
            elif Gp < H * b:
                d = -Gp / H
            elif Gn > H * b:
                d = -Gn / H
            else:
                d = -b
            if abs(d) < 1.0e-12:
                continue
            nb = min(max(b + d, -upper), upper)
            d = nb - b
            beta[i] = nb
            if d != 0.0:
                row_axpy(indptr, indices, values, i, d, w, B)
        if it == 0:
            fstate[GNORM1_INIT] = gnorm1_new
        it += 1
        istate[ITER] = it
        fstate[GNORM1_LAST] = gnorm1_new
        if gnorm1_new <= eps * fstate[GNORM1_INIT]:
            if active == n:
                istate[ACTIVE] = active
                fstate[GMAX_OLD] = gmax_new
                return CONVERGED
            active = n
            gmax_old = math.inf
            continue
        gmax_old = gmax_new
        fstate[GMAX_OLD] = gmax_old
    istate[ACTIVE] = active
    fstate[GMAX_OLD] = gmax_old
    return RUNNING


@njit(cache=True, nogil=True)
def svr_loss_sum(y, scores, p, squared):
    """sum_i loss(y_i - scores_i): max(0, |r| - p), or its square when ``squared``."""
    s = 0.0
    for i in range(y.shape[0]):
        r = abs(y[i] - scores[i]) - p
        if r > 0.0:
            s += r * r if squared else r
    return s


@njit(cache=True, nogil=True)
def svr_dual_terms(y, beta, p, lam):
    """(sum_i (p |beta_i| - y_i beta_i + lam/2 beta_i^2), number of nonzero beta_i)."""
    s = 0.0
    nnz = 0
    for i in range(y.shape[0]):
        b = beta[i]
        s += p * abs(b) - y[i] * b + 0.5 * lam * b * b
        if b != 0.0:
            nnz += 1
    return s, nnz


@njit(cache=True, nogil=True)
def svr_score_pass(scores, y, p, squared, coef):
    """One pass of the epsilon-insensitive loss (or its square) at ``scores``:
    coef_i = -d loss_i / d s_i (+-1, or +-2(|r_i| - p) squared; 0 inside the
    tube |r_i| <= p, r_i = s_i - y_i). Returns (rows outside the tube, sum of
    the losses, sum of loss_i + coef_i s_i: the constant of the tangent cut)."""
    nv = 0
    loss = 0.0
    bconst = 0.0
    for i in range(y.shape[0]):
        r = scores[i] - y[i]
        e = abs(r) - p
        if e <= 0.0:
            coef[i] = 0.0
            continue
        nv += 1
        g = 2.0 * e if squared else 1.0
        li = e * e if squared else e
        c = -g if r > 0.0 else g
        coef[i] = c
        loss += li
        bconst += li + c * scores[i]
    return nv, loss, bconst
