"""Numba kernels of the L1-regularised solvers (``-s cdn``): the columns, CDN and newGLMNET.

Both methods are coordinate descent over the features, so they read the
data by columns: :func:`csr_to_csc` transposes the CSR rows once (two
passes, O(nnz)), optionally with a constant column (``-B``, or the
unregularised bias of ``-R``).

:func:`cdn_run` minimises the L1-regularised squared-hinge SVM

    min_w  sum_j |w_j| + sum_i C_i max(0, 1 - y_i w.x_i)^2

by coordinate descent with one-dimensional Newton steps and an Armijo line
search (CDN: G.-X. Yuan, K.-W. Chang, C.-J. Hsieh, C.-J. Lin, "A comparison
of optimization methods and software for large-scale L1-regularized linear
classification", JMLR 2010, section 4.1 and appendix F; LIBLINEAR's -s 5).
Each outer iteration visits the active features in a fresh random order;
a feature's step is the minimiser of the second-order model of the loss
plus |w_j + d| (soft thresholding), accepted when the quick upper bound of
the loss change (its second derivative bounded by 2 sum_i C_i x_ij^2)
already gives sufficient decrease, else halved until the exact change
does. Features at zero whose gradient lies strictly inside (-1 + M/l,
1 - M/l), M the largest violation of the previous iteration, are shrunk
(dropped from the active set); the run stops when the violations' sum
falls to eps times that of the first iteration on the whole set (after a
stop on a shrunk set the whole set is checked again).

:func:`glmnet_run` minimises L1-regularised logistic regression

    min_w  sum_j |w_j| + sum_i C_i log(1 + exp(-y_i w.x_i))

by newGLMNET (G.-X. Yuan, C.-H. Ho, C.-J. Lin, "An improved GLMNET for
L1-regularized logistic regression", JMLR 2012; LIBLINEAR's -s 6): each
Newton iteration builds the quadratic model of the loss at w (gradient and
the diagonal Hessian terms D_i = C_i tau_i (1 - tau_i), with a tiny nu added
to the Hessian's diagonal), minimises the model plus |w + d|_1 by
coordinate descent with its own shrinking and an adaptive inner tolerance,
then takes the largest step 2^-k along d that gives sufficient decrease.
The outer stop, shrinking and maximum iterations follow LIBLINEAR's
(outer: the violations' sum to eps times the first; inner: to
inner_eps times the first, inner_eps starting at 1 and quartered whenever
an inner solve took a single pass).

The constant column can be left unregularised (``free_last``, -R): its
coordinate then has the plain Newton step and the violation |G|, and is
never shrunk (LIBLINEAR 2.5's regularize_bias = 0).

All state lives in arrays owned by the caller, so a front runs a few outer
iterations per call (for a progress bar) or all at once, with the same
iterates either way. The random orders are LIBLINEAR's: its shuffles drawn
from glibc's rand() (:func:`c_rand`, seeded by ``--seed``; seed 1, the
default, is the state LIBLINEAR's train starts from), so a binary problem
takes LIBLINEAR's steps.
"""
import math

import numpy as np
from numba import njit

# return codes (svmtrain.solvers.base)
RUNNING, CONVERGED, MAX_ITER = 0, 1, 2

# istate slots
ACTIVE = 0          # cdn: size of the active set
ITER = 1            # outer iterations done (cdn: CD passes; glmnet: Newton iterations)
INNER = 2           # glmnet: CD passes of the inner solves, summed
INNER_CAP = 3       # glmnet: inner solves that hit their cap
LS_FAIL = 4         # line searches that ran out of halvings
ISTATE = 5
# fstate slots
GMAX_OLD = 0        # the largest violation of the previous iteration (shrinking)
GNORM1_INIT = 1     # the violations' sum the stop is relative to (< 0: take the first iteration's)
GNORM1 = 2          # the violations' sum of the last iteration (progress)
INNER_EPS = 3       # glmnet: the inner tolerance
W_NORM = 4          # glmnet: sum |w_j| of the regularised coordinates
FSTATE = 5

SIGMA = 0.01            # sufficient decrease of the line searches
MAX_LINESEARCH = 20
CDN_H_MIN = 1e-12       # CDN's floor of the second derivative
GLMNET_NU = 1e-12       # newGLMNET's nu added to the Hessian's diagonal
GLMNET_MAX_INNER = 1000
STEP_MIN = 1e-12        # coordinate steps below this are not taken
GLMNET_Z_MAX = 10.0     # newGLMNET's bound on one inner step

_U = np.uint64          # unsigned positions: numba omits the negative-index wraparound

# glibc's rand(), shared with LIBSVM's folds (svmtrain/_numba/_crand_kernels.py)
from ..._numba._crand_kernels import RAND_SEP, RAND_STATE, RAND_WORDS, c_rand, rand_state  # noqa: F401


@njit(cache=True, nogil=True)
def shuffle(index, m, rng):
    """LIBLINEAR's shuffle of index[:m]: swap position s with s + rand() % (m - s), s = 0 .. m - 1."""
    for s in range(m):
        j = s + c_rand(rng) % (m - s)
        t = index[s]
        index[s] = index[j]
        index[j] = t


@njit(cache=True, nogil=True)
def csr_to_csc(indptr, indices, values, n_features, const, const_value):
    """The columns of CSR rows: (colptr int64[m + 1], rowind int32[nnz'],
    colval float64[nnz']) with m = n_features (+ 1 when ``const``: a last
    column holding ``const_value`` in every row); each column's rows in
    increasing order."""
    n = indptr.shape[0] - 1
    m = n_features + (1 if const else 0)
    nnz = indptr[n]
    total = nnz + (n if const else 0)
    colptr = np.zeros(m + 1, np.int64)
    for p in range(_U(nnz)):
        colptr[indices[p] + 1] += 1
    if const:
        colptr[m] += n
    for j in range(m):
        colptr[j + 1] += colptr[j]
    fill = colptr[:m].copy()
    rowind = np.empty(total, np.int32)
    colval = np.empty(total, np.float64)
    for i in range(n):
        for p in range(_U(indptr[i]), _U(indptr[i + 1])):
            j = indices[p]
            q = fill[j]
            rowind[q] = i
            colval[q] = values[p]
            fill[j] = q + 1
    if const:
        base = colptr[m - 1]
        for i in range(n):
            rowind[base + i] = i
            colval[base + i] = const_value
    return colptr, rowind, colval


@njit(cache=True, nogil=True)
def signed_values(rowind, colval, y):
    """y_i x_ij for every stored value of the columns (CDN's data)."""
    out = np.empty(colval.shape[0], np.float64)
    for p in range(_U(colval.shape[0])):
        out[p] = y[rowind[p]] * colval[p]
    return out


@njit(cache=True, nogil=True)
def column_products(colptr, rowind, colval, row):
    """sum_i row_i x_ij for every column j."""
    m = colptr.shape[0] - 1
    out = np.zeros(m, np.float64)
    for j in range(m):
        s = 0.0
        for p in range(_U(colptr[j]), _U(colptr[j + 1])):
            s += row[rowind[p]] * colval[p]
        out[j] = s
    return out


@njit(cache=True, nogil=True)
def column_sq_products(colptr, rowind, colval, row):
    """sum_i row_i x_ij^2 for every column j."""
    m = colptr.shape[0] - 1
    out = np.zeros(m, np.float64)
    for j in range(m):
        s = 0.0
        for p in range(_U(colptr[j]), _U(colptr[j + 1])):
            v = colval[p]
            s += row[rowind[p]] * v * v
        out[j] = s
    return out


@njit(cache=True, nogil=True)
def columns_times_w(colptr, rowind, colval, w, out):
    """out[i] += sum_j w_j x_ij over the columns with w_j != 0 (X w by columns)."""
    m = colptr.shape[0] - 1
    for j in range(m):
        wj = w[j]
        if wj == 0.0:
            continue
        for p in range(_U(colptr[j]), _U(colptr[j + 1])):
            out[rowind[p]] += wj * colval[p]
    return out


# ---------------------------------------------------------------- CDN (-s 5)

@njit(cache=True, nogil=True, inline="always")
def _violation(g, wj, bound):
    """(the violation of the optimality conditions of an L1-regularised
    weight wj with loss derivative g, whether LIBLINEAR shrinks it: wj = 0
    with g + 1 > bound and g - 1 < -bound, its violation then 0)."""
    gp = g + 1.0
    gn = g - 1.0
    if wj == 0.0:
        if gp < 0.0:
            return -gp, False
        if gn > 0.0:
            return gn, False
        return 0.0, gp > bound and gn < -bound
    if wj > 0.0:
        return abs(gp), False
    return abs(gn), False


@njit(cache=True, nogil=True, inline="always")
def _soft_step(g, h, wj):
    """The d that minimises g d + h d^2 / 2 + |wj + d| - |wj| (h > 0)."""
    gp = g + 1.0
    gn = g - 1.0
    if gp < h * wj:
        return -gp / h
    if gn > h * wj:
        return -gn / h
    return -wj


@njit(cache=True, nogil=True, error_model="numpy")
def cdn_run(colptr, rowind, yx, cost, w, b, xj_sq, free_last, eps, max_iter, n_steps, index, istate, fstate,
            rng):
    """At most ``n_steps`` outer iterations of CDN (see the module doc).

    ``yx`` holds y_i x_ij in the columns' layout; ``cost`` C_i per row;
    ``b`` = 1 - y_i w.x_i per row, kept up to date; ``xj_sq`` =
    sum_i C_i x_ij^2 per column; ``index`` the permutation of the columns
    whose first istate[ACTIVE] are active. Returns RUNNING, CONVERGED or
    MAX_ITER.
    """
    n = b.shape[0]
    w_size = w.shape[0]
    last = w_size - 1
    active = istate[ACTIVE]
    it = istate[ITER]
    gmax_old = fstate[GMAX_OLD]
    gnorm1_init = fstate[GNORM1_INIT]
    steps = 0
    status = MAX_ITER
    while it < max_iter:
        if steps == n_steps:
            status = RUNNING
            break
        gmax_new = 0.0
        gnorm1_new = 0.0
        shuffle(index, active, rng)
        s = 0
        while s < active:
            j = index[s]
            p0 = _U(colptr[j])
            p1 = _U(colptr[j + 1])
            g_loss = 0.0
            h = 0.0
            for p in range(p0, p1):
                # the rows with b_i > 0, without a branch (a mispredicted one per row
                # costs several times this loop); the terms of the others add zeros
                i = _U(rowind[p])
                bi = b[i]
                v = yx[p]
                t = cost[i] * v
                pos = bi > 0.0
                g_loss -= t * bi if pos else 0.0
                h += t * v if pos else 0.0
            g_loss *= 2.0
            g = g_loss
            h = max(2.0 * h, CDN_H_MIN)
            wj = w[j]
            free = free_last and j == last
            if free:
                violation = abs(g)
                d = -g / h
            else:
                violation, shrink = _violation(g, wj, gmax_old / n)
                if shrink:
                    active -= 1
                    index[s] = index[active]
                    index[active] = j
                    continue
                d = _soft_step(g, h, wj)
            gmax_new = max(gmax_new, violation)
            gnorm1_new += violation
            s += 1
            if abs(d) < STEP_MIN:
                continue
            if free:
                delta = g * d
            else:
                delta = abs(wj + d) - abs(wj) + g * d
            d_old = 0.0
            loss_old = 0.0
            ls = 0
            while ls < MAX_LINESEARCH:
                d_diff = d_old - d
                if free:
                    cond = -SIGMA * delta
                else:
                    cond = abs(wj + d) - abs(wj) - SIGMA * delta
                if xj_sq[j] * d * d + g_loss * d + cond <= 0.0:
                    # the upper bound of the loss change already decreases enough
                    for p in range(p0, p1):
                        b[_U(rowind[p])] += d_diff * yx[p]
                    break
                loss_new = 0.0
                if ls == 0:
                    for p in range(p0, p1):
                        i = _U(rowind[p])
                        bi = b[i]
                        c = cost[i]
                        loss_old += c * bi * bi if bi > 0.0 else 0.0
                        bn = bi + d_diff * yx[p]
                        b[i] = bn
                        loss_new += c * bn * bn if bn > 0.0 else 0.0
                else:
                    for p in range(p0, p1):
                        i = _U(rowind[p])
                        bn = b[i] + d_diff * yx[p]
                        b[i] = bn
                        loss_new += cost[i] * bn * bn if bn > 0.0 else 0.0
                cond = cond + loss_new - loss_old
                if cond <= 0.0:
                    break
                d_old = d
                d *= 0.5
                delta *= 0.5
                ls += 1
            w[j] = wj + d
            if ls >= MAX_LINESEARCH:
                # b drifted from the tried steps: recompute it from w
                istate[LS_FAIL] += 1
                for i in range(n):
                    b[i] = 1.0
                for k in range(w_size):
                    wk = w[k]
                    if wk == 0.0:
                        continue
                    for p in range(_U(colptr[k]), _U(colptr[k + 1])):
                        b[_U(rowind[p])] -= wk * yx[p]
        if gnorm1_init < 0.0:
            gnorm1_init = gnorm1_new
        it += 1
        steps += 1
        fstate[GNORM1] = gnorm1_new
        if gnorm1_new <= eps * gnorm1_init:
            if active == w_size:
                status = CONVERGED
                break
            active = w_size         # stopped on the shrunk set: check them all
            gmax_old = math.inf
            continue
        gmax_old = gmax_new
    istate[ACTIVE] = active
    istate[ITER] = it
    fstate[GMAX_OLD] = gmax_old
    fstate[GNORM1_INIT] = gnorm1_init
    return status


# ----------------------------------------------------------- newGLMNET (-s 6)

@njit(cache=True, nogil=True, error_model="numpy")
def logistic_terms(exp_wx, cost, tau, D):
    """tau_i = C_i / (1 + e^{w.x_i}) and D_i = C_i e^{w.x_i} / (1 + e^{w.x_i})^2 from exp_wx."""
    for i in range(exp_wx.shape[0]):
        t = 1.0 / (1.0 + exp_wx[i])
        tau[i] = cost[i] * t
        D[i] = cost[i] * exp_wx[i] * t * t


@njit(cache=True, nogil=True, error_model="numpy")
def glmnet_run(colptr, rowind, colval, negative, cost, w, wpd, exp_wx, exp_wx_new, tau, D, xTd, Hdiag, Grad,
               xjneg_sum, free_last, eps, max_iter, n_steps, index, istate, fstate, rng):
    """At most ``n_steps`` Newton iterations of newGLMNET (see the module doc).

    ``negative[i]`` is 1 for the rows of label -1; ``cost`` C_i per row;
    ``exp_wx`` = e^{w.x_i}, ``tau`` and ``D`` as :func:`logistic_terms`
    makes them, all kept up to date; ``xjneg_sum`` = sum over the negative
    rows of C_i x_ij; ``wpd`` (w + d) equal to w on entry; ``exp_wx_new``,
    ``xTd``, ``Hdiag``, ``Grad`` work space. Returns RUNNING, CONVERGED or MAX_ITER.
    """
    n = exp_wx.shape[0]
    w_size = w.shape[0]
    last = w_size - 1
    newton_iter = istate[ITER]
    gmax_old = fstate[GMAX_OLD]
    gnorm1_init = fstate[GNORM1_INIT]
    inner_eps = fstate[INNER_EPS]
    w_norm = fstate[W_NORM]
    steps = 0
    status = MAX_ITER
    while newton_iter < max_iter:
        if steps == n_steps:
            status = RUNNING
            break
        gmax_new = 0.0
        gnorm1_new = 0.0
        active = w_size
        s = 0
        while s < active:
            j = index[s]
            hd = GLMNET_NU
            tmp = 0.0
            for p in range(_U(colptr[j]), _U(colptr[j + 1])):
                i = _U(rowind[p])
                v = colval[p]
                hd += v * v * D[i]
                tmp += v * tau[i]
            Hdiag[j] = hd
            gj = -tmp + xjneg_sum[j]
            Grad[j] = gj
            if free_last and j == last:
                violation = abs(gj)
            else:
                violation, shrink = _violation(gj, w[j], gmax_old / n)
                if shrink:
                    active -= 1
                    index[s] = index[active]
                    index[active] = j
                    continue
            gmax_new = max(gmax_new, violation)
            gnorm1_new += violation
            s += 1
        if gnorm1_init < 0.0:
            gnorm1_init = gnorm1_new
        fstate[GNORM1] = gnorm1_new
        if gnorm1_new <= eps * gnorm1_init:
            status = CONVERGED
            break

        # the inner problem: coordinate descent on the quadratic model over wpd
        inner = 0
        qp_gmax_old = math.inf
        qp_active = active
        for i in range(n):
            xTd[i] = 0.0
        while inner < GLMNET_MAX_INNER:
            qp_gmax_new = 0.0
            qp_gnorm1_new = 0.0
            shuffle(index, qp_active, rng)
            s = 0
            while s < qp_active:
                j = index[s]
                H = Hdiag[j]
                p0 = _U(colptr[j])
                p1 = _U(colptr[j + 1])
                G = Grad[j] + (wpd[j] - w[j]) * GLMNET_NU
                for p in range(p0, p1):
                    i = _U(rowind[p])
                    G += colval[p] * D[i] * xTd[i]
                wj = wpd[j]
                if free_last and j == last:
                    violation = abs(G)
                    z = -G / H
                else:
                    violation, shrink = _violation(G, wj, qp_gmax_old / n)
                    if shrink:
                        qp_active -= 1
                        index[s] = index[qp_active]
                        index[qp_active] = j
                        continue
                    z = _soft_step(G, H, wj)
                qp_gmax_new = max(qp_gmax_new, violation)
                qp_gnorm1_new += violation
                s += 1
                if abs(z) < STEP_MIN:
                    continue
                z = min(max(z, -GLMNET_Z_MAX), GLMNET_Z_MAX)
                wpd[j] = wj + z
                for p in range(p0, p1):
                    xTd[_U(rowind[p])] += z * colval[p]
            inner += 1
            if qp_gnorm1_new <= inner_eps * gnorm1_init:
                if qp_active == active:
                    break
                qp_active = active          # stopped on the shrunk set: check them all
                qp_gmax_old = math.inf
                continue
            qp_gmax_old = qp_gmax_new
        if inner >= GLMNET_MAX_INNER:
            istate[INNER_CAP] += 1
        istate[INNER] += inner

        # the line search along d = wpd - w
        delta = 0.0
        w_norm_new = 0.0
        for j in range(w_size):
            delta += Grad[j] * (wpd[j] - w[j])
            if wpd[j] != 0.0:
                w_norm_new += abs(wpd[j])
        if free_last:
            w_norm_new -= abs(wpd[last])
        delta += w_norm_new - w_norm
        negsum_xTd = 0.0
        for i in range(n):
            if negative[i]:
                negsum_xTd += cost[i] * xTd[i]
        ls = 0
        while ls < MAX_LINESEARCH:
            cond = w_norm_new - w_norm + negsum_xTd - SIGMA * delta
            for i in range(n):
                e = math.exp(xTd[i])
                en = exp_wx[i] * e
                exp_wx_new[i] = en
                cond += cost[i] * math.log((1.0 + en) / (e + en))
            if cond <= 0.0:
                w_norm = w_norm_new
                for j in range(w_size):
                    w[j] = wpd[j]
                for i in range(n):
                    exp_wx[i] = exp_wx_new[i]
                logistic_terms(exp_wx, cost, tau, D)
                break
            w_norm_new = 0.0
            for j in range(w_size):
                wpd[j] = (w[j] + wpd[j]) * 0.5
                if wpd[j] != 0.0:
                    w_norm_new += abs(wpd[j])
            if free_last:
                w_norm_new -= abs(wpd[last])
            delta *= 0.5
            negsum_xTd *= 0.5
            for i in range(n):
                xTd[i] *= 0.5
            ls += 1
        if ls >= MAX_LINESEARCH:
            # no step: w stays; recompute e^{w.x} from w and start the next model at w
            istate[LS_FAIL] += 1
            for i in range(n):
                exp_wx[i] = 0.0
            columns_times_w(colptr, rowind, colval, w, exp_wx)
            for i in range(n):
                exp_wx[i] = math.exp(exp_wx[i])
            for j in range(w_size):
                wpd[j] = w[j]
        if inner == 1:
            inner_eps *= 0.25
        newton_iter += 1
        steps += 1
        gmax_old = gmax_new
    istate[ITER] = newton_iter
    fstate[GMAX_OLD] = gmax_old
    fstate[GNORM1_INIT] = gnorm1_init
    fstate[INNER_EPS] = inner_eps
    fstate[W_NORM] = w_norm
    return status
