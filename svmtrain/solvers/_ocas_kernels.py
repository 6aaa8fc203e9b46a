"""Numba kernels of ``-s ocas`` (the master loop lives in ``ocas.py``).

Notation (C-form, as svmocas):

    F(w) = 1/2 |w|^2 + sum_i c_i max(0, 1 - y_i w.x_i),   c_i = C * class cost

A cutting plane (cut) taken at a point w is the pair (a, b) with
``a = sum_{i in S} c_i y_i x_i`` and ``b = sum_{i in S} c_i`` over the set S
of margin violators at w; ``R(v) >= b - a.v`` for every v. The reduced
problem over cuts a_1..a_k has the dual

    max_alpha  b.alpha - 1/2 alpha' H alpha,  alpha >= 0, sum alpha <= C'

with ``H_jl = a_j.a_l`` (C' = 1 here because c_i already carries C; the
front passes whatever bound it uses) and primal solution
``w_c = sum_j alpha_j a_j``.

Parallel kernels split their range into ``nb`` contiguous blocks (the
front passes the numba thread count) and each prange iteration owns one
block and its own row of partial results; partials are then summed in
block order. The result therefore depends on ``nb`` only, never on the
thread schedule.
"""
import numpy as np
from numba import njit, prange

# Line search: below this many breakpoints, sort them all; above, locate
# the bucket holding the minimiser first (see ``line_search``).
SORT_ALL_MAX = 1 << 11
N_PIVOTS = 1023


@njit(cache=True, nogil=True, inline="always")
def _block(b, nb, n):
    return (b * n) // nb, ((b + 1) * n) // nb


# ---------------------------------------------------------------------------
# Per-example pass after the line search: new outputs of w_b, the loss, the
# violators of the next cut point and their summary.
# ---------------------------------------------------------------------------
@njit(cache=True, nogil=True, parallel=True)
def update_outputs(y, cw, out_b, out_c, k, mu, viol, prev, nb):
    """Move w_b to (1-k) w_b + k w_c and classify the next cut point.

    ``out_b`` (outputs of w_b) becomes ``(1-k) out_b + k out_c`` in place.
    The cut point is ``(1-mu) w_b_new + mu w_c``; ``viol[i]`` becomes 1
    when example i violates the margin there (``y_i o_i < 1``), else 0.
    ``prev`` holds the violator flags of the previous cut (read only).

    Returns (loss, n_err, n_viol, b_sum, n_change): the weighted hinge loss
    of the new w_b, its training errors (y_i o_i <= 0), the number of
    violators of the cut point and the sum of their c_i, and how many
    flags differ from ``prev``.
    """
    n = y.shape[0]
    part = np.zeros((nb, 2))
    ipart = np.zeros((nb, 3), np.int64)
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        loss = 0.0
        bsum = 0.0
        nerr = 0
        nv = 0
        nch = 0
        for i in range(lo, hi):
            ob = (1.0 - k) * out_b[i] + k * out_c[i]
            out_b[i] = ob
            m = y[i] * ob
            if m < 1.0:
                loss += cw[i] * (1.0 - m)
            if m <= 0.0:
                nerr += 1
            z = y[i] * ((1.0 - mu) * ob + mu * out_c[i])
            v = 1 if z < 1.0 else 0
            viol[i] = v
            if v:
                nv += 1
                bsum += cw[i]
            if v != prev[i]:
                nch += 1
        part[blk, 0] = loss
        part[blk, 1] = bsum
        ipart[blk, 0] = nerr
        ipart[blk, 1] = nv
        ipart[blk, 2] = nch
    loss = 0.0
    bsum = 0.0
    nerr = 0
    nv = 0
    nch = 0
    for blk in range(nb):
        loss += part[blk, 0]
        bsum += part[blk, 1]
        nerr += ipart[blk, 0]
        nv += ipart[blk, 1]
        nch += ipart[blk, 2]
    return loss, nerr, nv, bsum, nch


@njit(cache=True, nogil=True, parallel=True)
def loss_at(y, cw, out_b, out_c, k, nb):
    """sum_i c_i max(0, 1 - y_i ((1-k) out_b_i + k out_c_i))."""
    n = y.shape[0]
    part = np.zeros(nb)
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        s = 0.0
        for i in range(lo, hi):
            m = y[i] * ((1.0 - k) * out_b[i] + k * out_c[i])
            if m < 1.0:
                s += cw[i] * (1.0 - m)
        part[blk] = s
    s = 0.0
    for blk in range(nb):
        s += part[blk]
    return s


# ---------------------------------------------------------------------------
# The new cut: a = sum_i coef_i x_i over the rows with coef_i != 0.
# ---------------------------------------------------------------------------
@njit(cache=True, nogil=True, parallel=True)
def scatter_cut(indptr, indices, values, B, y, cw, viol, prev, delta, nb, buf, out):
    """out += sum_i coef_i x_i (the constant feature B included), where
    coef_i = c_i y_i viol_i (``delta`` false: the full cut) or
    coef_i = c_i y_i (viol_i - prev_i) (``delta`` true: the change from the
    previous cut, whose vector the caller has put in ``out``).

    Row blocks are scattered into the rows of ``buf`` (nb, d+1), one per
    block, then summed into ``out`` in block order, in parallel over
    feature ranges. ``buf`` is scratch; with nb == 1 it is not touched.
    """
    n = y.shape[0]
    dd = out.shape[0]
    last = dd - 1
    if nb == 1:
        for i in range(n):
            c = viol[i] - prev[i] if delta else viol[i]
            if c != 0:
                a = c * cw[i] * y[i]
                out[last] += a * B
                for p in range(indptr[i], indptr[i + 1]):
                    out[indices[p]] += a * values[p]
        return out
    for blk in prange(nb):
        row = buf[blk]
        row[:] = 0.0
        lo, hi = _block(blk, nb, n)
        for i in range(lo, hi):
            c = viol[i] - prev[i] if delta else viol[i]
            if c != 0:
                a = c * cw[i] * y[i]
                row[last] += a * B
                for p in range(indptr[i], indptr[i + 1]):
                    row[indices[p]] += a * values[p]
    for fb in prange(nb):
        lo, hi = _block(fb, nb, dd)
        for blk in range(nb):
            row = buf[blk]
            for j in range(lo, hi):
                out[j] += row[j]
    return out


# ---------------------------------------------------------------------------
# Cut buffer: Gram row of a new cut, and w_c = sum alpha_j a_j.
# ---------------------------------------------------------------------------
@njit(cache=True, nogil=True, parallel=True)
def gram_row(A, k, a, nb, out):
    """out[j] = A[j].a for j < k; returns a.a. Parallel over feature blocks."""
    dd = a.shape[0]
    part = np.zeros((nb, k + 1))
    for fb in prange(nb):
        lo, hi = _block(fb, nb, dd)
        for j in range(k):
            Aj = A[j]
            s = 0.0
            for q in range(lo, hi):
                s += Aj[q] * a[q]
            part[fb, j] = s
        s = 0.0
        for q in range(lo, hi):
            s += a[q] * a[q]
        part[fb, k] = s
    for j in range(k):
        s = 0.0
        for fb in range(nb):
            s += part[fb, j]
        out[j] = s
    s = 0.0
    for fb in range(nb):
        s += part[fb, k]
    return s


@njit(cache=True, nogil=True, parallel=True)
def combine_cuts(A, alpha, k, w_b, w_c, nb):
    """w_c = sum_{j<k, alpha_j>0} alpha_j A[j]; returns (w_c.w_c, w_c.w_b, w_b.w_b)."""
    dd = w_c.shape[0]
    part = np.zeros((nb, 3))
    for fb in prange(nb):
        lo, hi = _block(fb, nb, dd)
        for q in range(lo, hi):
            w_c[q] = 0.0
        for j in range(k):
            aj = alpha[j]
            if aj > 0.0:
                Aj = A[j]
                for q in range(lo, hi):
                    w_c[q] += aj * Aj[q]
        scc = 0.0
        scb = 0.0
        sbb = 0.0
        for q in range(lo, hi):
            scc += w_c[q] * w_c[q]
            scb += w_c[q] * w_b[q]
            sbb += w_b[q] * w_b[q]
        part[fb, 0] = scc
        part[fb, 1] = scb
        part[fb, 2] = sbb
    scc = 0.0
    scb = 0.0
    sbb = 0.0
    for fb in range(nb):
        scc += part[fb, 0]
        scb += part[fb, 1]
        sbb += part[fb, 2]
    return scc, scb, sbb


# ---------------------------------------------------------------------------
# Reduced problem: min f(alpha) = 1/2 alpha'H alpha - b.alpha
#                  s.t. alpha >= 0, sum alpha <= Cb.
# ---------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def qp_simplex(H, bvec, alpha, k, Cb, tol_abs, tol_rel, max_steps):
    """Solve the reduced dual in place over alpha[:k] (warm start).

    A sequential two-coordinate (SMO-like) method: the inequality is made
    an equality by a slack coordinate s = Cb - sum alpha with zero row and
    column in H and zero linear term. Each step moves mass from a positive
    coordinate j to the coordinate i of least gradient (i by steepest
    descent, j by the second-order gain (g_j - g_i)^2 / (H_ii + H_jj -
    2 H_ij)), with the exact clipped step.

    Stops when the duality gap of the reduced problem (the Frank-Wolfe gap
    alpha.g - Cb min(0, min g), g = H alpha - b) is <= max(tol_abs,
    tol_rel * |f|) or after max_steps steps.

    Returns (f, gap, steps, hit_tol) with f the objective at the returned
    alpha (the reduced dual value is -f).
    """
    g = np.empty(k)
    for j in range(k):
        g[j] = -bvec[j]
    for l in range(k):
        al = alpha[l]
        if al != 0.0:
            for j in range(k):
                g[j] += H[j, l] * al
    asum = 0.0
    for j in range(k):
        asum += alpha[j]
    if asum > Cb:  # defensive: project a drifted warm start back
        for j in range(k):
            alpha[j] *= Cb / asum
        for j in range(k):
            g[j] = -bvec[j]
        for l in range(k):
            for j in range(k):
                g[j] += H[j, l] * alpha[l]
        asum = Cb
    steps = 0
    f = 0.0
    gap = 0.0
    hit = False
    while True:
        # objective, gap and the up coordinate (index k = slack, g = 0)
        ag = 0.0
        ab = 0.0
        gi = 0.0
        i = k
        for j in range(k):
            ag += alpha[j] * g[j]
            ab += alpha[j] * bvec[j]
            if g[j] < gi:
                gi = g[j]
                i = j
        # alpha'H alpha = alpha.(g + b)
        f = 0.5 * (ag + ab) - ab
        gap = ag - Cb * gi
        if gap <= tol_abs or gap <= tol_rel * abs(f):
            hit = True
            break
        if steps >= max_steps:
            break
        slack = Cb - asum
        Hii = H[i, i] if i < k else 0.0
        # down coordinate: second-order choice among positive coordinates
        j_best = -1
        best = -1.0
        for j in range(k + 1):
            if j < k:
                if alpha[j] <= 0.0:
                    continue
                gj = g[j]
                Hjj = H[j, j]
                Hij = H[i, j] if i < k else 0.0
            else:
                if slack <= 0.0:
                    continue
                gj = 0.0
                Hjj = 0.0
                Hij = 0.0
            diff = gj - gi
            if diff <= 0.0 or j == i:
                continue
            eta = Hii + Hjj - 2.0 * Hij
            if eta < 1e-12 * (Hii + Hjj) or eta <= 0.0:
                eta = max(1e-12 * (Hii + Hjj), 1e-300)
            gain = diff * diff / eta
            if gain > best:
                best = gain
                j_best = j
        if j_best < 0:
            hit = True
            break
        j = j_best
        gj = g[j] if j < k else 0.0
        Hjj = H[j, j] if j < k else 0.0
        Hij = H[i, j] if (i < k and j < k) else 0.0
        eta = Hii + Hjj - 2.0 * Hij
        if eta < 1e-12 * (Hii + Hjj) or eta <= 0.0:
            eta = max(1e-12 * (Hii + Hjj), 1e-300)
        avail = alpha[j] if j < k else slack
        d = (gj - gi) / eta
        if d > avail:
            d = avail
        if i < k:
            alpha[i] += d
            for l in range(k):
                g[l] += d * H[l, i]
        else:
            asum -= d
        if j < k:
            alpha[j] = 0.0 if d == avail else alpha[j] - d
            for l in range(k):
                g[l] -= d * H[l, j]
        else:
            asum += d
        steps += 1
    return f, gap, steps, hit


# ---------------------------------------------------------------------------
# Exact line search: min_{t >= 0} F((1-t) w_b + t w_c).
# ---------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _walk(kb, wb, order, lo, G, qa):
    """Walk sorted breakpoints from the point lo (derivative there qa*lo+G,
    < 0) and return the minimiser of the piecewise quadratic."""
    for r in range(order.shape[0]):
        q = order[r]
        kq = kb[q]
        if qa * kq + G >= 0.0:
            if qa > 0.0:
                t = -G / qa
                return t if t > lo else lo
            return lo
        G += wb[q]
        lo = kq
    if qa > 0.0:
        t = -G / qa
        return t if t > lo else lo
    return lo


@njit(cache=True, nogil=True, inline="always")
def _bucket(piv, t):
    """The s with piv[s-1] < t <= piv[s] (S when t > piv[S-1])."""
    lo = 0
    hi = piv.shape[0]
    while lo < hi:
        mid = (lo + hi) >> 1
        if piv[mid] < t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True, parallel=True)
def line_search(y, cw, out_b, out_c, qa, qb, nb, kb, wb):
    """The exact minimiser t* >= 0 of

        phi(t) = 1/2 |w_b + t (w_c - w_b)|^2 + sum_i c_i max(0, p_i - t r_i)

    with p_i = 1 - y_i out_b_i, r_i = y_i (out_c_i - out_b_i); the
    regulariser's derivative is qa t + qb (qa = |w_c - w_b|^2,
    qb = w_b.(w_c - w_b)). ``kb``/``wb`` are n-sized scratch arrays.

    phi' is piecewise linear and increasing; each example with a breakpoint
    t_i = p_i / r_i > 0 raises it by c_i |r_i| there. The breakpoints are
    gathered, and the minimiser found by walking them in sorted order; with
    many breakpoints a sorted sample of pivots first locates the one bucket
    of breakpoints between two pivots where phi' changes sign (one pass,
    binary search per breakpoint), and only that bucket is sorted. The
    result is the same exact minimiser as sorting everything.

    Returns (t, n_breakpoints).
    """
    n = y.shape[0]
    g0p = np.zeros(nb)
    cnt = np.zeros(nb + 1, np.int64)
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        g = 0.0
        c = 0
        for i in range(lo, hi):
            p = 1.0 - y[i] * out_b[i]
            r = y[i] * (out_c[i] - out_b[i])
            if r > 0.0:
                if p > 0.0:
                    g -= cw[i] * r
                    c += 1
            elif r < 0.0:
                if p >= 0.0:
                    g -= cw[i] * r
                else:
                    c += 1
        g0p[blk] = g
        cnt[blk + 1] = c
    G0 = qb
    for blk in range(nb):
        G0 += g0p[blk]
        cnt[blk + 1] += cnt[blk]
    m = cnt[nb]
    if G0 >= 0.0:
        return 0.0, m
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        o = cnt[blk]
        for i in range(lo, hi):
            p = 1.0 - y[i] * out_b[i]
            r = y[i] * (out_c[i] - out_b[i])
            if (r > 0.0 and p > 0.0) or (r < 0.0 and p < 0.0):
                kb[o] = p / r
                wb[o] = cw[i] * abs(r)
                o += 1
    if m <= SORT_ALL_MAX:
        order = np.argsort(kb[:m])
        return _walk(kb, wb, order, 0.0, G0, qa), m
    # pivots: a deterministic strided sample of the breakpoints, sorted
    S = N_PIVOTS
    piv = np.empty(S)
    for s in range(S):
        piv[s] = kb[((2 * s + 1) * m) // (2 * S)]
    piv.sort()
    # weight of the breakpoints in each bucket (piv[s-1], piv[s]]; bucket S
    # is (piv[S-1], inf)
    bw = np.zeros((nb, S + 1))
    for blk in prange(nb):
        lo, hi = _block(blk, nb, m)
        for q in range(lo, hi):
            s = _bucket(piv, kb[q])
            bw[blk, s] += wb[q]
    # first pivot where the right derivative is >= 0
    G = G0
    sel = S
    lo_t = 0.0
    for s in range(S):
        w = 0.0
        for blk in range(nb):
            w += bw[blk, s]
        if qa * piv[s] + G + w >= 0.0:
            sel = s
            break
        G += w
        lo_t = piv[s]
    hi_t = piv[sel] if sel < S else np.inf
    # gather bucket sel: lo_t < t_i <= hi_t (lo_t = 0 for the first)
    bc = 0
    for q in range(m):
        t = kb[q]
        if t > lo_t and t <= hi_t:
            bc += 1
    sk = np.empty(bc)
    sw = np.empty(bc)
    bc = 0
    for q in range(m):
        t = kb[q]
        if t > lo_t and t <= hi_t:
            sk[bc] = t
            sw[bc] = wb[q]
            bc += 1
    order = np.argsort(sk)
    return _walk(sk, sw, order, lo_t, G, qa), m
