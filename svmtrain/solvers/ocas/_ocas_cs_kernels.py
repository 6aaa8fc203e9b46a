"""Numba kernels of ``-s ocas --multiclass cs`` (the loop is ``ocas.solve``,
the problem's side ``ocas_cs.CrammerSinger``).

Notation (C-form, as msvmocas): M classes, W feature-major (d+1, M), the
scores of row i s_i = W' x~_i (x~_i the row with the constant feature B),

    F(W) = 1/2 |W|^2 + sum_i C_i max_m (e_im + s_im - s_iy_i),   e_im = [m != y_i].

A cut at W: each row's most violating class yhat_i = argmax_m (e_im +
s_im - s_iy_i) (the lowest such m; y_i itself, no violation, when that
maximum is 0). Its vector is A = X~' G with G[i, y_i] = C_i, G[i, yhat_i] =
-C_i over the violators (G's other entries 0), its offset b = sum of their
C_i. A cut is stored as its yhat vector (-1 where row i does not violate),
as small integers (a row of ``Yhat``).

Every point the loop needs is such a combination of the rows: W_b = X~' G_b,
W_c = X~' G_c with G_c = sum_j alpha_j G_j, so |W|^2-type products are sums
over the rows of G times the scores (``directions``), and the scores of
such a point, X~ X~' G, come from one pass over the columns of X
(``products``) without forming its (d+1) x M weights; only the final
model's are formed (``weights``). Over row blocks (``--stream``, Dask
partitions) the same scores take two passes over the rows: W' += (X~_blk'
G_blk)' block by block (``scatter_rows``), then S_blk = X~_blk W
(``row_scores``); with the blocks in order these are the numbers of
``products`` and ``weights`` with nb = 1 (the same sums in the same order).

Parallel kernels split rows (or, for the scatter, features) into ``nb``
blocks and sum partial results in block order, as ``_ocas_kernels``'s; each
runs through ``by_blocks`` (its serial twin when nb == 1).
"""
import numpy as np
from numba import njit, prange

from ..._numba.options import PRANGE, by_blocks
from ._ocas_kernels import _U, _block, _dot, _pass


GRAM_SPAN_BYTES = 1 << 19      # gram_lists_kernel's span of S_new (fits a core's L2 cache)


def gram_span(M):
    """gram_lists's span: the rows of an n x M S_new in GRAM_SPAN_BYTES (at
    least 64). On the 26,504 docstrings (20 classes, 412 cuts, 3.45 million
    violators, the last Gram row of a run) it took 6.5-6.7 ms a call against
    7.6-8.0 ms in one walk per cut (two threads, best of 60 alternating
    calls; medians 7.4-7.5 against 8.7-9.1 ms)."""
    return max(64, GRAM_SPAN_BYTES // (8 * M))


@njit(cache=True, nogil=True, parallel=PRANGE)
def products_kernel(colptr, rows, values, B, G, S, buf, live, nb):
    """S = X~ X~' G over the columns of X (CSC: ``colptr``, ``rows``,
    ``values``) and the constant feature B: for each feature j its weights
    w_j = sum_i x_ij G[i] (M numbers, never stored), then S[i] += x_ij w_j.
    One pass over the data, no (d+1) x M array: only G and S (n x M) are
    touched at random. Feature blocks add into their own n x M slice of
    ``buf`` (nb, n, M), summed in block order (with nb == 1, S directly).

    A cut's G is zero outside its violators' rows, so w_j skips the rows of
    G that are zero (flagged first into the scratch ``live``, int8[n]) and a
    feature whose rows are all such adds nothing to S. Both skip only terms
    that are exactly 0, and a sum that starts at +0 is the same after adding
    +-0: the same bits as adding every term."""
    n = G.shape[0]
    M = G.shape[1]
    d = colptr.shape[0] - 1
    for rb in prange(nb):
        lo, hi = _block(rb, nb, n)
        for i in range(lo, hi):
            flag = 0
            for m in range(M):
                if G[i, m] != 0.0:
                    flag = 1
            live[i] = flag
    for blk in prange(nb):
        out = S if nb == 1 else buf[blk]
        for i in range(n):
            for m in range(M):
                out[i, m] = 0.0
        w = np.empty(M)
        lo, hi = _block(blk, nb, d)
        for j in range(lo, hi):
            p0 = colptr[j]
            p1 = colptr[j + 1]
            touched = False
            for m in range(M):
                w[m] = 0.0
            for p in range(_U(p0), _U(p1)):
                i = _U(rows[p])
                if live[i]:
                    touched = True
                    v = values[p]
                    for m in range(M):
                        w[m] += v * G[i, m]
            if not touched:
                continue
            for p in range(_U(p0), _U(p1)):
                v = values[p]
                i = _U(rows[p])
                for m in range(M):
                    out[i, m] += v * w[m]
        if blk == nb - 1 and B != 0.0:          # the constant feature, last
            for m in range(M):
                w[m] = 0.0
            for i in range(n):
                if live[i]:
                    for m in range(M):
                        w[m] += B * G[i, m]
            for i in range(n):
                for m in range(M):
                    out[i, m] += B * w[m]
    if nb > 1:
        for rb in prange(nb):
            lo, hi = _block(rb, nb, n)
            for i in range(lo, hi):
                for m in range(M):
                    acc = 0.0
                    for blk in range(nb):
                        acc += buf[blk, i, m]
                    S[i, m] = acc


products = by_blocks(products_kernel, 8)


@njit(cache=True, nogil=True, parallel=PRANGE)
def weights_kernel(colptr, rows, values, B, G, W, nb):
    """W = X~' G ((d+1) x M, the constant feature's row last), over the
    columns of X, in parallel over feature blocks."""
    M = G.shape[1]
    d = colptr.shape[0] - 1
    for blk in prange(nb):
        lo, hi = _block(blk, nb, d)
        for j in range(lo, hi):
            for m in range(M):
                W[j, m] = 0.0
            for p in range(_U(colptr[j]), _U(colptr[j + 1])):
                v = values[p]
                i = _U(rows[p])
                for m in range(M):
                    W[j, m] += v * G[i, m]
    for m in range(M):
        W[d, m] = 0.0
    for i in range(G.shape[0]):
        for m in range(M):
            W[d, m] += B * G[i, m]


weights = by_blocks(weights_kernel, 6)


@njit(cache=True, nogil=True, parallel=PRANGE)
def scatter_rows_kernel(indptr, indices, values, B, G, Wt, nb):
    """Wt += (X~' G)' over the rows of one CSR block (``indptr``, ``indices``,
    ``values``; G its rows' coefficients, n_blk x M): Wt is class-major
    (M, d+1), the constant feature B's weight in the last column. Threads
    split the classes (no shared writes, no buffer) and add each row's
    terms in row order, so the numbers do not depend on nb: over the blocks
    in order (Wt zero first) they are ``weights``' with nb = 1, and the
    sums ``products`` forms."""
    n = indptr.shape[0] - 1
    M = G.shape[1]
    d = Wt.shape[1] - 1
    for blk in prange(nb):
        lo, hi = _block(blk, nb, M)
        if lo == hi:
            continue
        for i in range(n):
            for p in range(_U(indptr[i]), _U(indptr[i + 1])):
                j = _U(indices[p])
                v = values[p]
                for m in range(lo, hi):
                    Wt[m, j] += v * G[i, m]
            if B != 0.0:
                for m in range(lo, hi):
                    Wt[m, d] += B * G[i, m]


scatter_rows = by_blocks(scatter_rows_kernel, 6)


@njit(cache=True, nogil=True, parallel=PRANGE)
def row_scores_kernel(indptr, indices, values, B, Wt, S, nb):
    """S[i, m] = x~_i . w_m for the rows of one CSR block (Wt class-major
    (M, d+1) as ``scatter_rows`` forms it), in parallel over row ranges;
    each row's sum in its stored order, the constant feature last (as
    ``products``: the same numbers when the rows' indices are sorted)."""
    n = indptr.shape[0] - 1
    M = Wt.shape[0]
    d = Wt.shape[1] - 1
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        for i in range(lo, hi):
            p0 = _U(indptr[i])
            p1 = _U(indptr[i + 1])
            for m in range(M):
                w_m = Wt[m]
                acc = 0.0
                for p in range(p0, p1):
                    acc += values[p] * w_m[_U(indices[p])]
                if B != 0.0:
                    acc += B * Wt[m, d]
                S[i, m] = acc


row_scores = by_blocks(row_scores_kernel, 6)


@njit(cache=True, nogil=True)
def _worst(S, i, y, s, S_d):
    """(the class m maximising e_im + z_m - z_y over z = S[i] + s S_d[i], that maximum)."""
    zy = S[i, y] + s * S_d[i, y]
    best, arg = 0.0, y
    for m in range(S.shape[1]):
        if m != y:
            v = 1.0 + S[i, m] + s * S_d[i, m] - zy
            if v > best:
                best, arg = v, m
    return arg, best


@njit(cache=True, nogil=True, parallel=PRANGE)
def move_kernel(yi, cw, S_b, S_d, t, s, yhat, G_new, nb):
    """S_b += t S_d (the scores follow w_b's move), then at the new w_b the
    loss and the training errors, and the next cut at the scores S_b + s
    S_d: yhat (a float array: the class, -1 where a row does not violate)
    and its G (G_new).
    Returns (loss, errors, violators, sum of the violators' C_i)."""
    n = S_b.shape[0]
    M = S_b.shape[1]
    part = np.zeros((nb, 4))
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        loss = 0.0
        nerr = 0.0
        nv = 0.0
        bsum = 0.0
        for i in range(lo, hi):
            y = yi[i]
            if t != 0.0:
                for m in range(M):
                    S_b[i, m] += t * S_d[i, m]
            arg, worst = _worst(S_b, i, y, 0.0, S_d)
            loss += cw[i] * worst
            for m in range(M):
                if m != y and S_b[i, m] >= S_b[i, y]:
                    nerr += 1.0
                    break
            if s != 0.0:
                arg, worst = _worst(S_b, i, y, s, S_d)
            for m in range(M):
                G_new[i, m] = 0.0
            if worst > 0.0:
                yhat[i] = arg
                G_new[i, y] = cw[i]
                G_new[i, arg] = -cw[i]
                nv += 1.0
                bsum += cw[i]
            else:
                yhat[i] = -1
        part[blk, 0] = loss
        part[blk, 1] = nerr
        part[blk, 2] = nv
        part[blk, 3] = bsum
    tot = np.zeros(4)
    for blk in range(nb):
        for q in range(4):
            tot[q] += part[blk, q]
    return tot[0], int(tot[1]), int(tot[2]), tot[3]


move = by_blocks(move_kernel, 8, _pass(2, 2))


@njit(cache=True, nogil=True, parallel=PRANGE)
def loss_at_kernel(yi, cw, S_b, S_d, t, nb):
    """sum_i C_i max_m (e_im + z_im - z_iy_i) at the scores z = S_b + t S_d."""
    n = S_b.shape[0]
    part = np.zeros(nb)
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        acc = 0.0
        for i in range(lo, hi):
            acc += cw[i] * _worst(S_b, i, yi[i], t, S_d)[1]
        part[blk] = acc
    s = 0.0
    for blk in range(nb):
        s += part[blk]
    return s


loss_at = by_blocks(loss_at_kernel, 5, _pass(1, 2))


@njit(cache=True, nogil=True, inline="always")
def _add_violator(G, i, y, m, a):
    """G[i] += a (e_y - e_m): a violator's term, weight a = alpha_j C_i."""
    G[i, y] += a
    G[i, m] -= a


@njit(cache=True, nogil=True, parallel=PRANGE)
def combine_kernel(Yhat, alpha, k, yi, cw, G_c, nb):
    """G_c = sum_{j<k, alpha_j>0} alpha_j G_j, each cut's G from its yhat
    row ``Yhat[j]`` (-1: the row does not violate)."""
    n = G_c.shape[0]
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        G_c[lo:hi] = 0.0
        for j in range(k):
            aj = alpha[j]
            if aj > 0.0:
                row = Yhat[j]
                for i in range(lo, hi):
                    m = int(row[i])
                    if m >= 0:
                        _add_violator(G_c, i, yi[i], m, aj * cw[i])


combine = by_blocks(combine_kernel, 6)


@njit(cache=True, nogil=True, inline="always")
def _sum_blocks(part, k, out):
    """out[j] = the blocks' partial sums part[:, j], added in block order, for j < k."""
    for j in range(k):
        s = 0.0
        for blk in range(part.shape[0]):
            s += part[blk, j]
        out[j] = s


@njit(cache=True, nogil=True, parallel=PRANGE)
def gram_kernel(Yhat, k, yi, cw, S_new, out, nb):
    """out[j] = A_j . A_new for j < k: sum over cut j's violators of
    C_i (S_new[i, y_i] - S_new[i, yhat_ji]), S_new the scores of A_new."""
    n = S_new.shape[0]
    part = np.zeros((nb, k))
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        for j in range(k):
            row = Yhat[j]
            acc = 0.0
            for i in range(lo, hi):
                m = int(row[i])
                if m >= 0:
                    acc += cw[i] * (S_new[i, yi[i]] - S_new[i, m])
            part[blk, j] = acc
    _sum_blocks(part, k, out)


gram = by_blocks(gram_kernel, 6)


@njit(cache=True, nogil=True, inline="always")
def _first_at_or_after(rows, st, en, lo):
    """The first position q in [st, en) with rows[q] >= lo (rows ascending there), else en."""
    return st + np.searchsorted(rows[st:en], lo)


@njit(cache=True, nogil=True, parallel=PRANGE)
def combine_lists_kernel(v_start, v_len, v_rows, v_cls, alpha, k, yi, cw, G_c, nb):
    """G_c = sum_{j<k, alpha_j>0} alpha_j G_j, each cut given by its
    violators: cut j's rows v_rows[v_start[j]:v_start[j] + v_len[j]]
    (ascending) and their most violating classes v_cls there (G_j is C_i
    at (i, y_i) and -C_i at (i, v_cls) for those rows, 0 elsewhere).
    O(violators of the active cuts); every entry adds its terms in cut
    order, so the blocks change nothing."""
    n = G_c.shape[0]
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        G_c[lo:hi] = 0.0
        for j in range(k):
            aj = alpha[j]
            if aj > 0.0:
                en = v_start[j] + v_len[j]
                q = _first_at_or_after(v_rows, v_start[j], en, lo)
                while q < en and v_rows[q] < hi:
                    i = _U(v_rows[q])
                    _add_violator(G_c, i, _U(yi[i]), _U(v_cls[q]), aj * cw[i])
                    q += 1


combine_lists = by_blocks(combine_lists_kernel, 9)


@njit(cache=True, nogil=True, parallel=PRANGE)
def gram_lists_kernel(v_start, v_len, v_rows, v_cls, k, yi, cw, S_new, out, nb, span):
    """out[j] = A_j . A_new for j < k: sum over cut j's violators (given as
    in ``combine_lists_kernel``) of C_i (S_new[i, y_i] - S_new[i, yhat_ji]),
    S_new the scores of A_new; O(violators of the k cuts), each block's rows
    ascending and the blocks' partial sums added in block order.

    Each block walks its rows in spans of ``span`` rows (``gram_span``),
    every cut's violators in a span before the next span (so that the rows
    of S_new the cuts share stay in cache), each cut's sum carried from span
    to span: the same additions in the same order as one walk per cut, so
    the span changes nothing but the time."""
    n = S_new.shape[0]
    part = np.zeros((nb, k))
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        at = np.empty(k, np.int64)          # each cut's next violator
        for j in range(k):
            at[j] = _first_at_or_after(v_rows, v_start[j], v_start[j] + v_len[j], lo)
        for s_lo in range(lo, hi, span):
            s_hi = min(hi, s_lo + span)
            for j in range(k):
                en = v_start[j] + v_len[j]
                q = at[j]
                acc = part[blk, j]
                while q < en and v_rows[q] < s_hi:
                    i = _U(v_rows[q])
                    acc += cw[i] * (S_new[i, _U(yi[i])] - S_new[i, _U(v_cls[q])])
                    q += 1
                part[blk, j] = acc
                at[j] = q
    _sum_blocks(part, k, out)


gram_lists = by_blocks(gram_lists_kernel, 9)


@njit(cache=True, nogil=True, parallel=PRANGE)
def directions_kernel(G_c, G_b, S_b, G_d, S_d, nb):
    """With S_d holding the scores of W_c on entry: G_d = G_c - G_b and
    S_d -= S_b (the direction W_d = W_c - W_b). Returns (|W_c|^2, |W_d|^2,
    W_b.W_d) as sums over the rows of coefficients times scores."""
    g_c = G_c.reshape(-1)
    g_b = G_b.reshape(-1)
    g_d = G_d.reshape(-1)
    s_b = S_b.reshape(-1)
    s_d = S_d.reshape(-1)
    n = g_c.shape[0]
    part = np.zeros((nb, 3))
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        part[blk, 0] = _dot(g_c, s_d, lo, hi)
        for q in range(lo, hi):
            g_d[q] = g_c[q] - g_b[q]
            s_d[q] -= s_b[q]
        part[blk, 1] = _dot(g_d, s_d, lo, hi)
        part[blk, 2] = _dot(g_b, s_d, lo, hi)
    tot = np.zeros(3)
    for blk in range(nb):
        for q in range(3):
            tot[q] += part[blk, q]
    return tot[0], tot[1], tot[2]


directions = by_blocks(directions_kernel, 5, _pass(2, 2))


@njit(cache=True, nogil=True, parallel=PRANGE, error_model="numpy")
def breakpoints_kernel(yi, cw, S_b, S_d, qb, nb, kb, wb):
    """The line search's breakpoints: row i's loss along W_b + t W_d is C_i
    times the upper envelope of the lines e_im + (S_b - S_b,y_i)[m] +
    t (S_d - S_d,y_i)[m]; walking it from t = 0 gives at most M - 1
    breakpoints t > 0, each where the slope rises (by C_i times the rise).
    They go to kb/wb[i (M-1) + r] (inf and 0 for unused slots). Returns
    (qb + the loss's slope at 0+, the number of breakpoints)."""
    n = S_b.shape[0]
    M = S_b.shape[1]
    part = np.zeros((nb, 2))
    for blk in prange(nb):
        lo, hi = _block(blk, nb, n)
        G = 0.0
        count = 0.0
        for i in range(lo, hi):
            y = yi[i]
            base = i * (M - 1)
            for r in range(M - 1):
                kb[base + r] = np.inf
                wb[base + r] = 0.0
            # the line on top at 0+ (ties: the steepest)
            a_cur = 0.0
            s_cur = 0.0
            for m in range(M):
                if m != y:
                    a = 1.0 + S_b[i, m] - S_b[i, y]
                    sl = S_d[i, m] - S_d[i, y]
                    if a > a_cur or (a == a_cur and sl > s_cur):
                        a_cur, s_cur = a, sl
            G += cw[i] * s_cur
            r = 0
            t_prev = 0.0
            while r < M - 1:
                # the next line to overtake the current one (ties: the steepest)
                best_t = np.inf
                a_n = 0.0
                s_n = s_cur
                for m in range(M):
                    if m == y:
                        a, sl = 0.0, 0.0
                    else:
                        a = 1.0 + S_b[i, m] - S_b[i, y]
                        sl = S_d[i, m] - S_d[i, y]
                    if sl > s_cur:
                        tm = max((a_cur - a) / (sl - s_cur), t_prev)
                        if tm < best_t or (tm == best_t and sl > s_n):
                            best_t, a_n, s_n = tm, a, sl
                if not (0.0 < best_t < np.inf):
                    break
                kb[base + r] = best_t
                wb[base + r] = cw[i] * (s_n - s_cur)
                a_cur, s_cur, t_prev = a_n, s_n, best_t
                r += 1
            count += r
        part[blk, 0] = G
        part[blk, 1] = count
    G = qb
    m_total = 0.0
    for blk in range(nb):
        G += part[blk, 0]
        m_total += part[blk, 1]
    return G, int(m_total)


breakpoints = by_blocks(breakpoints_kernel, 5, _pass(3, 2))
