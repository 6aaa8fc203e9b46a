"""Numba kernel of a primal truncated Newton method for L2-regularised
squared-hinge and logistic loss (LIBLINEAR's -s 2 and -s 0 solver).

Minimises the C-form primal

    f(w) = 1/2 |w|^2 + sum_i c_i loss(y_i w.x_i),

loss(m) = max(0, 1 - m)^2 (``LOSS_SQUARED_HINGE``) or log(1 + exp(-m))
(``LOSS_LOG``), c_i > 0 each row's cost, the constant feature B of the
w-extension convention of :mod:`svmtrain.solvers._common` (regularised, as
LIBLINEAR's -B). With z = X w, the gradient is w + X^T u and the
(generalised) Hessian I + X^T diag(D) X, where per row

    squared hinge:  u_i = 2 c_i (z_i - y_i),        D_i = 2 c_i   if y_i z_i < 1 (else both 0),
    logistic:       u_i = c_i y_i (sigma_i - 1),    D_i = c_i sigma_i (1 - sigma_i),
                    sigma_i = 1 / (1 + exp(-y_i z_i)).

The method is the one of LIBLINEAR 2.4's ``newton.cpp`` (C.-Y. Hsia,
W.-L. Chiang, C.-J. Lin, "Preconditioned conjugate gradient methods in
truncated Newton frameworks for large-scale linear classification", ACML
2018; C.-P. Lee, C.-J. Lin's line-search Newton): each iteration solves
H s = -g by conjugate gradients preconditioned with the diagonal of H
(mixed with the identity: M = 0.99 + 0.01 diag(H)), stopped when the
quadratic model's decrease of the last step is below ``eps_cg`` times its
average decrease (or sqrt of the preconditioned gradient norm if smaller),
then backtracks the step s (halving from 1, at most 20 times) until
f(w + a s) - f(w) <= 0.01 a g.s. f(w + a s) costs no pass over the data
beyond X s. The run stops when |grad f(w)| <= eps |grad f(0)| (LIBLINEAR's
rule, measured against the gradient at w = 0, so a warm start that
already meets it takes no step), when a line search fails, when f
decreases by less than 1e-12 |f|, or after ``max_iter`` iterations.
Rows where D_i = 0 and u_i = 0 (the squared hinge's rows beyond the
margin) are left out of the passes over the data; the line search's X s
is summed, for the other rows, from the products x_i.d that the CG steps'
Hessian-vector products compute anyway (X s = sum_k alpha_k X d_k), so
only the rows left out take a pass of their own.

For a path of C values with few features (-C, ``tron_primal.Problem``
with ``gram``), the squared hinge's Hessian is I + 2 C sum over the active
rows of s_i x_i x_i^T (c_i = C s_i): the caller keeps that sum G (and
sum s_i y_i x_i, so g = w + 2 C (G w - r) at z = X w) from one C to the
next, updated by the rows that enter or leave the active set. Every H v
and g then costs n_vars^2 and an iteration passes over the rows once (X s
for the line search): the same iterations and CG steps up to rounding.

``tests/naive_newton.py`` is the plain-NumPy twin (tests/test_tron_primal.py).
"""
import math

import numpy as np
from numba import njit

from .._common import _U, row_axpy, row_dot

LOSS_SQUARED_HINGE = 0
LOSS_LOG = 1
LOSS_CODES = {"squared-hinge": LOSS_SQUARED_HINGE, "log": LOSS_LOG}

ETA = 0.01                  # sufficient decrease of the line search
MAX_LINESEARCH = 20
ALPHA_PCG = 0.01            # M = (1 - ALPHA_PCG) + ALPHA_PCG diag(H)
EPS_CG = 0.5

# return codes
CONVERGED = 0
MAX_ITER = 1
LINE_SEARCH_FAILED = 2
NO_PROGRESS = 3


@njit(cache=True, nogil=True)
def _trial_loss(loss, y, cost, z, xs, a, ev):
    """sum_i c_i loss(y_i (z_i + a xs_i)), the line search's trial at step
    a; for the logistic loss ev_i = exp(-|m_i|) of each trial margin
    (:func:`_terms_after_trial` then needs no exponential)."""
    total = 0.0
    for i in range(y.shape[0]):
        m = y[i] * (z[i] + a * xs[i])
        if loss == LOSS_SQUARED_HINGE:
            t = 1.0 - m
            if t > 0.0:
                total += cost[i] * t * t
        else:
            e = math.exp(-abs(m))
            ev[i] = e
            total += cost[i] * (max(-m, 0.0) + math.log1p(e))
    return total


@njit(cache=True, nogil=True)
def _terms(loss, y, cost, z, u, D, active):
    """u, D (see the module doc) from z; the rows with either nonzero into
    ``active[:k]`` in order, the others into ``active[k:]`` (in reverse
    order); returns (sum_i c_i loss_i, k)."""
    n = y.shape[0]
    total = 0.0
    k = 0
    for i in range(n):
        m = y[i] * z[i]
        c = cost[i]
        if loss == LOSS_SQUARED_HINGE:
            t = 1.0 - m
            if t > 0.0:
                total += c * t * t
                u[i] = 2.0 * c * (z[i] - y[i])
                D[i] = 2.0 * c
                active[k] = i
                k += 1
            else:
                u[i] = 0.0
                D[i] = 0.0
                active[n - 1 - (i - k)] = i
        else:
            e = math.exp(-abs(m))
            total += c * (max(-m, 0.0) + math.log1p(e))
            _logistic_row(i, m, e, c, y, u, D)
            active[k] = i
            k += 1
    return total, k


@njit(cache=True, nogil=True, inline="always")
def _logistic_row(i, m, e, c, y, u, D):
    """u_i and D_i of the logistic loss at margin m with e = exp(-|m|)."""
    sigma = 1.0 / (1.0 + e) if m >= 0.0 else e / (1.0 + e)
    u[i] = c * y[i] * (sigma - 1.0)
    D[i] = c * sigma * (1.0 - sigma)


@njit(cache=True, nogil=True)
def _terms_after_trial(loss, y, cost, z, ev, u, D, active):
    """:func:`_terms`' u, D and active rows at the accepted trial of the
    line search (z updated), the logistic loss's exponentials from ``ev``;
    returns the number of active rows."""
    if loss == LOSS_SQUARED_HINGE:
        return _terms(loss, y, cost, z, u, D, active)[1]
    for i in range(y.shape[0]):
        _logistic_row(i, y[i] * z[i], ev[i], cost[i], y, u, D)
        active[i] = i
    return y.shape[0]


@njit(cache=True, nogil=True)
def _grad_and_preconditioner(indptr, indices, values, B, w, u, D, active, n_active, g, M, xtu, dsq):
    """xtu = sum over the active rows of u_i x_i and dsq_j = sum_i D_i x_ij^2
    in one pass over the rows, then g = w + xtu and the preconditioner
    M = (1 - ALPHA_PCG) + ALPHA_PCG (1 + dsq) (see :func:`_from_sums`)."""
    xtu[:] = 0.0
    dsq[:] = 0.0
    last = M.shape[0] - 1
    for k in range(n_active):
        i = active[k]
        ui = u[i]
        di = D[i]
        xtu[last] += ui * B
        dsq[last] += di * B * B
        for p in range(_U(indptr[i]), _U(indptr[i + 1])):
            j = _U(indices[p])
            v = values[p]
            xtu[j] += ui * v
            dsq[j] += di * v * v
    _from_sums(w, xtu, dsq, 1.0, g, M)


@njit(cache=True, nogil=True)
def _from_sums(w, xtu, dsq, ratio, g, M):
    """g = w + ratio xtu, M = (1 - ALPHA_PCG) + ALPHA_PCG (1 + ratio dsq)."""
    for j in range(w.shape[0]):
        g[j] = w[j] + ratio * xtu[j]
        M[j] = (1.0 - ALPHA_PCG) + ALPHA_PCG * (1.0 + ratio * dsq[j])


@njit(cache=True, nogil=True)
def _hess_vec(indptr, indices, values, B, D, active, n_active, v, out, xv):
    """out = v + sum over the active rows of D_i (x_i.v) x_i; xv_i = x_i.v of each active row."""
    out[:] = 0.0
    for k in range(n_active):
        i = active[k]
        xi_v = row_dot(indptr, indices, values, i, v, B)
        xv[i] = xi_v
        t = D[i] * xi_v
        if t != 0.0:
            row_axpy(indptr, indices, values, i, t, out, B)
    out += v


@njit(cache=True, nogil=True)
def _add_row(indptr, indices, values, B, i, si, yi, G, r):
    """G += si x_i x_i^T (its upper triangle: G[j, k] for j <= k) and
    r += si y_i x_i, the constant feature B last; the row's features may
    come in any order."""
    last = G.shape[0] - 1
    a = _U(indptr[i])
    b = _U(indptr[i + 1])
    for p in range(a, b):
        jp = _U(indices[p])
        vp = si * values[p]
        r[jp] += yi * vp
        G[jp, last] += vp * B
        for q in range(p, b):
            jq = _U(indices[q])
            if jq >= jp:
                G[jp, jq] += vp * values[q]
            else:
                G[jq, jp] += vp * values[q]
    G[last, last] += si * B * B
    r[last] += si * yi * B


@njit(cache=True, nogil=True)
def _mirror(G):
    """The lower triangle of G from its upper one."""
    for j in range(G.shape[0]):
        for k in range(j):
            G[j, k] = G[k, j]


@njit(cache=True, nogil=True)
def _build(indptr, indices, values, B, y, scale, in_G, G, r):
    """G = sum s_i x_i x_i^T and r = sum s_i y_i x_i over the rows with in_G[i]."""
    G[:, :] = 0.0
    r[:] = 0.0
    for i in range(y.shape[0]):
        if in_G[i]:
            _add_row(indptr, indices, values, B, i, scale[i], y[i], G, r)
    _mirror(G)


@njit(cache=True, nogil=True)
def gram(indptr, indices, values, B, y, scale, n_vars):
    """(G, r) of the squared hinge's Gram form over all rows: G = sum_i s_i
    x_i x_i^T (``n_vars`` x ``n_vars``, the constant feature B last,
    symmetric) and r = sum_i s_i y_i x_i, for the row costs s_i =
    ``scale`` at C = 1 (at w = 0 every row is active). Costs sum_i nnz_i
    (nnz_i + 1) / 2 multiply-adds."""
    G = np.empty((n_vars, n_vars), np.float64)
    r = np.empty(n_vars, np.float64)
    _build(indptr, indices, values, B, y, scale, np.ones(y.shape[0], np.uint8), G, r)
    return G, r


@njit(cache=True, nogil=True)
def _sync_gram(indptr, indices, values, B, y, scale, D, in_G, G, r, flips):
    """Make G and r the sums over the active rows (D_i > 0) again: each row
    that entered or left the active set since the last call is added or
    taken out (sum nnz_i (nnz_i + 1) / 2 over those rows); once more rows
    have moved than there are rows (``flips[0]`` counts them) the sums are
    rebuilt from the active rows, so rounding does not pile up."""
    n = y.shape[0]
    moved = 0
    for i in range(n):
        act = D[i] > 0.0
        if act != (in_G[i] != 0):
            _add_row(indptr, indices, values, B, i, scale[i] if act else -scale[i], y[i], G, r)
            in_G[i] = 1 if act else 0
            moved += 1
    if moved == 0:
        return
    flips[0] += moved
    if flips[0] > n:
        _build(indptr, indices, values, B, y, scale, in_G, G, r)
        flips[0] = 0
    else:
        _mirror(G)


@njit(cache=True, nogil=True)
def _grad_and_preconditioner_gram(w, G, r, c2, g, M):
    """The squared hinge's g and M of :func:`_grad_and_preconditioner` from
    the active rows' Gram form (``c2`` = 2 C, z = X w): g = w + c2 (G w - r),
    M = (1 - ALPHA_PCG) + ALPHA_PCG (1 + c2 diag(G)); no pass over the rows."""
    nv = w.shape[0]
    for j in range(nv):
        t = 0.0
        for k in range(nv):
            t += G[j, k] * w[k]
        g[j] = w[j] + c2 * (t - r[j])
        M[j] = (1.0 - ALPHA_PCG) + ALPHA_PCG * (1.0 + c2 * G[j, j])


@njit(cache=True, nogil=True)
def _hess_vec_gram(G, c2, v, out):
    """The squared hinge's H v from the active rows' Gram form: v + c2 G v."""
    nv = v.shape[0]
    for j in range(nv):
        t = 0.0
        for k in range(nv):
            t += G[j, k] * v[k]
        out[j] = v[j] + c2 * t


@njit(cache=True, nogil=True)
def _pcg(indptr, indices, values, B, D, active, n_active, g, M, s, r, d, Hd, zv, xs, xd, eps_cg,
         use_gram, G, c2):
    """Preconditioned CG on H s = -g (LIBLINEAR's stopping rule on the
    quadratic model); s and r = -g - H s filled, and xs_i = x_i.s for the
    active rows (summed from the products H d needs); returns the CG steps.
    ``use_gram``: H d from the active rows' Gram form (:func:`_hess_vec_gram`), xs not filled."""
    nv = g.shape[0]
    zTr = 0.0
    for j in range(nv):
        s[j] = 0.0
        r[j] = -g[j]
        zv[j] = r[j] / M[j]
        d[j] = zv[j]
        zTr += zv[j] * r[j]
    if not use_gram:
        for k in range(n_active):
            xs[active[k]] = 0.0
    cgtol = min(eps_cg, math.sqrt(math.sqrt(zTr)))
    Q = 0.0
    steps = 0
    while steps < max(nv, 5):
        steps += 1
        if use_gram:
            _hess_vec_gram(G, c2, d, Hd)
        else:
            _hess_vec(indptr, indices, values, B, D, active, n_active, d, Hd, xd)
        dHd = 0.0
        for j in range(nv):
            dHd += d[j] * Hd[j]
        if dHd <= 1.0e-16:
            break
        alpha = zTr / dHd
        sr = 0.0
        sg = 0.0
        for j in range(nv):
            s[j] += alpha * d[j]
            r[j] -= alpha * Hd[j]
            sr += s[j] * r[j]
            sg += s[j] * g[j]
        if not use_gram:
            for k in range(n_active):
                i = active[k]
                xs[i] += alpha * xd[i]
        newQ = -0.5 * (sr - sg)
        Qdiff = newQ - Q
        if newQ <= 0.0 and Qdiff <= 0.0:
            if steps * Qdiff >= cgtol * newQ:
                break
        else:
            break
        Q = newQ
        znew = 0.0
        for j in range(nv):
            zv[j] = r[j] / M[j]
            znew += zv[j] * r[j]
        beta = znew / zTr
        for j in range(nv):
            d[j] = zv[j] + beta * d[j]
        zTr = znew
    return steps


@njit(cache=True, nogil=True)
def _gradient(indptr, indices, values, B, y, z, w, u, D, active, n_active, g, M, xtu, dsq, gram_state, c2):
    """g and M at w (u, D and the active rows at z = X w made), from the
    active rows' Gram form when there is one (``gram_state`` = (G, r, in_G,
    scale, flips) with a non-empty G, brought up to date first); returns
    whether it did (the iteration's CG then uses it too). Otherwise xtu and
    dsq hold the passes' sums (:func:`_grad_and_preconditioner`)."""
    G, r, in_G, scale, flips = gram_state
    if G.shape[0] == w.shape[0]:
        _sync_gram(indptr, indices, values, B, y, scale, D, in_G, G, r, flips)
        _grad_and_preconditioner_gram(w, G, r, c2, g, M)
        return True
    _grad_and_preconditioner(indptr, indices, values, B, w, u, D, active, n_active, g, M, xtu, dsq)
    return False


@njit(cache=True, nogil=True)
def grad_norm_at_zero(indptr, indices, values, B, y, cost, loss, n_vars):
    """|grad f(0)| for w of ``n_vars`` entries: at w = 0 every row has
    u_i = -2 c_i y_i (squared hinge) or -c_i y_i / 2 (logistic)."""
    k = 0.5 if loss == LOSS_LOG else 2.0
    g = np.zeros(n_vars, np.float64)
    for i in range(y.shape[0]):
        row_axpy(indptr, indices, values, i, -k * cost[i] * y[i], g, B)
    return math.sqrt(np.sum(g * g))


@njit(cache=True, nogil=True)
def newton_run(indptr, indices, values, B, y, cost, loss, w, z, z_known, eps, gnorm0, max_iter, G, r_gram, in_G,
               scale, flips, gram_c, carry):
    """Minimise f from ``w`` (updated in place) until |grad f(w)| <= eps
    gnorm0 or another stop of the module doc; gnorm0 is |grad f(0)|
    (:func:`grad_norm_at_zero`), computed here when given <= 0 (one entry
    point: a run loads one compiled function from numba's cache). ``z``
    (n entries) holds X w on return, and on entry too when ``z_known`` (a
    path of C values resumes from the previous C's w and X w: no pass to
    recompute it). Returns (status, Newton iterations, CG steps, f,
    |grad f|, gnorm0).

    ``G``, ``r_gram``, ``in_G``, ``scale``, ``flips``: the squared hinge's
    Gram form (-C's Problems; kept by the caller from one C to the next,
    ``cost`` = ``gram_c`` ``scale``; built here, as :func:`gram` builds it,
    when ``flips[0]`` < 0): G and r_gram hold
    sum s_i x_i x_i^T and sum s_i y_i x_i over the rows marked in in_G,
    brought up to the active rows at each iteration (:func:`_sync_gram`), so
    g, the preconditioner and every H v take no pass over the rows, and an
    iteration passes over them once, for X s (the same steps up to
    rounding). With an empty G (0 x 0), the passes of LIBLINEAR's method.

    ``carry`` (2 n_vars + 2 entries, or none): on return, this solve's C
    (``gram_c``), loss sum, X^T u and sum D x^2 at the returned w (C 0 when
    they are not known: the Gram form's last gradient); on entry, when its
    C is > 0 and ``z_known`` (the same w and z, untouched since), the
    first gradient and preconditioner are those sums times gram_c / that C
    (u, D and the loss are linear in the costs: for the path's doubling of
    C the very numbers a pass would give), so a C where the warm start
    already meets the stop takes no pass over the data.
    """
    n = y.shape[0]
    nv = w.shape[0]
    if gnorm0 <= 0.0:
        gnorm0 = grad_norm_at_zero(indptr, indices, values, B, y, cost, loss, nv)
    u = np.empty(n, np.float64)
    D = np.empty(n, np.float64)
    xs = np.empty(n, np.float64)
    ev = np.empty(n, np.float64)
    xd = np.empty(n, np.float64)
    active = np.empty(n, np.int64)
    g = np.empty(nv, np.float64)
    s = np.empty(nv, np.float64)
    r = np.empty(nv, np.float64)
    d = np.empty(nv, np.float64)
    Hd = np.empty(nv, np.float64)
    zv = np.empty(nv, np.float64)
    M = np.empty(nv, np.float64)

    if not z_known:
        for i in range(n):
            z[i] = row_dot(indptr, indices, values, i, w, B)
    wTw = 0.0
    for j in range(nv):
        wTw += w[j] * w[j]
    xtu = np.empty(nv, np.float64)
    dsq = np.empty(nv, np.float64)
    if loss != LOSS_SQUARED_HINGE:
        G = G[:0, :0]
    elif G.shape[0] == nv and flips[0] < 0:       # not built yet: every row's sums
        in_G[:] = 1
        _build(indptr, indices, values, B, y, scale, in_G, G, r_gram)
        flips[0] = 0
    gram_state = (G, r_gram, in_G, scale, flips)
    c2 = 2.0 * gram_c
    keeps = carry.shape[0] == 2 * nv + 2
    if keeps and z_known and carry[0] > 0.0 and G.shape[0] != nv:
        ratio = gram_c / carry[0]                 # the sums at the previous C, scaled
        lsum = ratio * carry[1]
        for j in range(nv):
            xtu[j] = carry[2 + j]
            dsq[j] = carry[2 + nv + j]
        _from_sums(w, xtu, dsq, ratio, g, M)
        for j in range(nv):
            xtu[j] *= ratio
            dsq[j] *= ratio
        f = lsum + 0.5 * wTw
        gnorm = math.sqrt(np.sum(g * g))
        if gnorm <= eps * gnorm0:
            _keep(carry, gram_c, lsum, xtu, dsq, False)
            return CONVERGED, 0, 0, f, gnorm, gnorm0
        n_active = _terms(loss, y, cost, z, u, D, active)[1]
        by_gram = False
    else:
        lsum, n_active = _terms(loss, y, cost, z, u, D, active)
        f = lsum + 0.5 * wTw
        by_gram = _gradient(indptr, indices, values, B, y, z, w, u, D, active, n_active, g, M, xtu, dsq,
                            gram_state, c2)
        gnorm = math.sqrt(np.sum(g * g))
        if gnorm <= eps * gnorm0:
            if keeps:
                _keep(carry, gram_c, lsum, xtu, dsq, by_gram)
            return CONVERGED, 0, 0, f, gnorm, gnorm0

    it = 0
    cg_total = 0
    status = MAX_ITER
    while it < max_iter:
        cg_total += _pcg(indptr, indices, values, B, D, active, n_active, g, M, s, r, d, Hd, zv, xs, xd, EPS_CG,
                         by_gram, G, c2)
        # line search along s: f(w + a s) from z + a X s (the inactive rows' x_i.s still to compute;
        # all rows' in the Gram form)
        for k in range(0 if by_gram else n_active, n):
            i = active[k]
            xs[i] = row_dot(indptr, indices, values, i, s, B)
        sTs = 0.0
        wTs = 0.0
        gTs = 0.0
        for j in range(nv):
            sTs += s[j] * s[j]
            wTs += s[j] * w[j]
            gTs += s[j] * g[j]
        f_old = f
        a = 1.0
        found = False
        trial = lsum
        for _ in range(MAX_LINESEARCH):
            trial = _trial_loss(loss, y, cost, z, xs, a, ev)
            f = trial + 0.5 * (a * a * sTs + wTw) + a * wTs
            if f - f_old <= ETA * a * gTs:
                found = True
                break
            a *= 0.5
        it += 1
        if not found:
            f = f_old
            status = LINE_SEARCH_FAILED
            break
        lsum = trial
        for i in range(n):
            z[i] += a * xs[i]
        for j in range(nv):
            w[j] += a * s[j]
        wTw += a * a * sTs + 2.0 * a * wTs
        n_active = _terms_after_trial(loss, y, cost, z, ev, u, D, active)
        by_gram = _gradient(indptr, indices, values, B, y, z, w, u, D, active, n_active, g, M, xtu, dsq,
                            gram_state, c2)
        gnorm = math.sqrt(np.sum(g * g))
        if gnorm <= eps * gnorm0:
            status = CONVERGED
            break
        if abs(f_old - f) <= 1.0e-12 * abs(f):
            status = NO_PROGRESS
            break
    if keeps:
        _keep(carry, gram_c, lsum, xtu, dsq, by_gram)
    return status, it, cg_total, f, gnorm, gnorm0


@njit(cache=True, nogil=True)
def _keep(carry, C, lsum, xtu, dsq, by_gram):
    """newton_run's ``carry`` at the end of a solve (C 0: not kept, after a Gram-form gradient)."""
    nv = xtu.shape[0]
    carry[0] = 0.0 if by_gram else C
    carry[1] = lsum
    for j in range(nv):
        carry[2 + j] = xtu[j]
        carry[2 + nv + j] = dsq[j]
