"""A trust-region Newton method (TRON) for smooth convex primal problems.

C.-J. Lin, R. C. Weng, S. S. Keerthi, "Trust region Newton method for
large-scale logistic regression", JMLR 9, 2008 (LIBLINEAR's tron.cpp):
each iteration solves the Newton system H s = -g approximately by
conjugate gradients inside a trust region |s| <= delta, then accepts or
rejects w + s by the ratio of the actual to the predicted reduction and
resizes the region. It needs from the problem only f(w), its gradient and
Hessian-vector products, so the problem decides how those are computed
(the ranking one without materialising its pairs).

The problem object: ``fun(w)`` -> f(w) (and it may keep what ``grad``
and ``hess_vec`` need at that w), ``grad(w)`` -> the gradient at the w of
the last ``fun`` call, ``hess_vec(v)`` -> the (generalised) Hessian at
that w times v.
"""
import math

import numpy as np

ETA0, ETA1, ETA2 = 1e-4, 0.25, 0.75          # step acceptance / region update thresholds
SIGMA1, SIGMA2, SIGMA3 = 0.25, 0.5, 4.0      # region shrink and growth factors
CG_TOL = 0.1                                 # CG stops at |r| <= CG_TOL |g|


def _trcg(problem, g, delta):
    """Conjugate gradients on H s = -g within |s| <= delta: (s, r = -g - H s, CG steps)."""
    s = np.zeros_like(g)
    r = -g
    d = r.copy()
    rtr = float(r @ r)
    cgtol = CG_TOL * math.sqrt(float(g @ g))
    steps = 0
    while math.sqrt(rtr) > cgtol:
        Hd = problem.hess_vec(d)
        steps += 1
        dHd = float(d @ Hd)
        if dHd <= 0.0:
            break
        alpha = rtr / dHd
        s += alpha * d
        if math.sqrt(float(s @ s)) > delta:       # to the region's boundary along d
            s -= alpha * d
            std, sts, dtd = float(s @ d), float(s @ s), float(d @ d)
            rad = math.sqrt(std * std + dtd * (delta * delta - sts))
            alpha = (delta * delta - sts) / (std + rad) if std >= 0 else (rad - std) / dtd
            s += alpha * d
            r -= alpha * Hd
            break
        r -= alpha * Hd
        rtr_new = float(r @ r)
        d = r + (rtr_new / rtr) * d
        rtr = rtr_new
    return s, r, steps


def minimize(problem, w, eps, max_iter, progress=None):
    """Minimise the problem from ``w`` (changed in place) until |grad| <=
    eps |grad at the start| or ``max_iter`` accepted steps. Returns
    (f at the end, accepted steps, CG steps in all, converged). f never
    increases: a step is taken only when it reduces f."""
    f = problem.fun(w)
    g = problem.grad(w)
    gnorm0 = math.sqrt(float(g @ g))
    delta = gnorm0
    it = 0
    cg_total = 0
    if gnorm0 == 0.0:
        return f, 0, 0, True
    while it < max_iter:
        s, r, steps = _trcg(problem, g, delta)
        cg_total += steps
        w_new = w + s
        gs = float(g @ s)
        prered = -0.5 * (gs - float(s @ r))
        f_new = problem.fun(w_new)
        actred = f - f_new
        snorm = math.sqrt(float(s @ s))
        if it == 0:
            delta = min(delta, snorm)
        alpha = SIGMA3 if f_new - f - gs <= 0 else max(SIGMA1, -0.5 * (gs / (f_new - f - gs)))
        if actred < ETA0 * prered:
            delta = min(max(alpha, SIGMA1) * snorm, SIGMA2 * delta)
        elif actred < ETA1 * prered:
            delta = max(SIGMA1 * delta, min(alpha * snorm, SIGMA2 * delta))
        elif actred < ETA2 * prered:
            delta = max(SIGMA1 * delta, min(alpha * snorm, SIGMA3 * delta))
        else:
            delta = max(delta, min(alpha * snorm, SIGMA3 * delta))
        if actred > ETA0 * prered:
            it += 1
            w[:] = w_new
            f = f_new
            g = problem.grad(w)
            gnorm = math.sqrt(float(g @ g))
            if progress is not None:
                progress(it, max_iter, f"|grad| {gnorm / gnorm0:.2e} of the first (stop at {eps:g})")
            if gnorm <= eps * gnorm0:
                return f, it, cg_total, True
        else:
            problem.fun(w)                    # back to w: grad and hess_vec refer to it again
        if abs(actred) <= 0 and prered <= 0:
            break
        if abs(actred) <= 1e-12 * abs(f) and abs(prered) <= 1e-12 * abs(f):
            break
    return f, it, cg_total, False
