"""Numba kernels of pairwise ranking: the pairwise hinge loss and its
subgradient without enumerating pairs (Joachims, "Training linear SVMs in
linear time", KDD 2006, counting per relevance level).

The rows of a query are ``order[qptr[q]:qptr[q+1]]``; ``lev[i]`` is row
i's relevance level *within its query* (0 = least relevant, dense ranks
0 .. R_q - 1); ``lptr[q]:lptr[q+1]`` (R_q + 1 entries) is the query's
region of the level scratch arrays. A pair (i, j) of one query with
lev_i > lev_j is *violated* at margin ``margin`` when

    s_j + margin > s_i            (``strict``: a tie s_j + margin == s_i is not violated)
    s_j + margin >= s_i           (not ``strict``: ties are violated)

For each query the kernel sorts its scores once (``argsort_range``) and
merges the sequence ``v_i = s_i`` with the sequence ``u_j = s_j + margin``
(sorted in the same order, as adding a constant is monotone), keeping
Fenwick trees of the levels of the u's and v's seen so far. At a v event,
``c+_i = #{j: lev_j < lev_i, pair violated}``; at a u event
``c-_j = #{i: lev_i > lev_j, pair violated}``. Cost: O(m log m + m log R)
for a query of m rows and R levels.
"""
import numpy as np
from numba import njit, prange

from .._numba.options import PRANGE, serial_twin
from .._numba._sort_kernels import argsort_range


@njit(cache=True, nogil=True)
def _fen_add(tree, base, r, R, val):
    """Add ``val`` at level r of the Fenwick tree tree[base : base + R + 1] (R levels;
    counts in an int tree, sums in a float one)."""
    i = r + 1
    while i <= R:
        tree[base + i] += val
        i += i & (-i)


@njit(cache=True, nogil=True)
def _fen_prefix(tree, base, r, R):
    """The total over levels 0 .. r-1 of the Fenwick tree at ``base`` (R levels)."""
    s = tree[base] * 0                            # entry 0 is unused (0): a zero of the tree's type
    i = min(r, R)
    while i > 0:
        s += tree[base + i]
        i -= i & (-i)
    return s


@njit(cache=True, nogil=True)
def _prepare(s, lev, order, lo, hi, L0, L1, keys, perm, fu, fv, low):
    """A query's sweep set-up: its Fenwick trees fu, fv at [L0 : L1] emptied
    (entry 0 unused), low[L0 + r] = its rows of level < r, keys = its scores
    and perm their sorting permutation."""
    R = L1 - L0 - 1
    for k in range(L0, L1):
        fu[k] = 0
        fv[k] = 0
        low[k] = 0
    for k in range(lo, hi):
        keys[k] = s[order[k]]
        low[L0 + lev[order[k]] + 1] += 1        # histogram, shifted by one level
    for r in range(1, R + 1):
        low[L0 + r] += low[L0 + r - 1]
    argsort_range(keys, lo, hi, perm[lo:hi])


@njit(cache=True, nogil=True)
def _query(s, lev, order, lo, hi, L0, L1, margin, strict, coef, keys, perm, fu, fv, low):
    """One query: adds c+_i - c-_i to coef[i] (coef of its rows must be 0 on
    entry); returns (violated pairs, their hinge loss sum (margin - s_i + s_j))."""
    m = hi - lo
    R = L1 - L0 - 1
    _prepare(s, lev, order, lo, hi, L0, L1, keys, perm, fu, fv, low)
    a = 0
    b = 0
    nv = 0
    viol = 0
    loss = 0.0
    while a < m or b < m:
        if a < m and b < m:
            va = keys[lo + perm[lo + a]]
            ub = keys[lo + perm[lo + b]] + margin
            take_u = ub <= va if strict else ub < va
        else:
            take_u = b < m
        if take_u:
            k = perm[lo + b]
            i = order[lo + k]
            r = lev[i]
            cm = nv - _fen_prefix(fv, L0, r + 1, R)     # v's seen with level > r
            coef[i] -= cm
            loss += cm * keys[lo + k]
            _fen_add(fu, L0, r, R, 1)
            b += 1
        else:
            k = perm[lo + a]
            i = order[lo + k]
            r = lev[i]
            cp = low[L0 + r] - _fen_prefix(fu, L0, r, R)  # lower rows whose u is not yet seen
            coef[i] += cp
            viol += cp
            loss += cp * (margin - keys[lo + k])
            _fen_add(fv, L0, r, R, 1)
            nv += 1
            a += 1
    return viol, loss


@njit(cache=True, nogil=True, parallel=PRANGE)
def pair_pass_parallel(s, lev, order, qptr, lptr, margin, strict, coef, keys, perm, fu, fv, low,
                       q_viol, q_loss):
    """pair_pass, in parallel over queries (the same numbers)."""
    coef[:] = 0.0
    for q in prange(qptr.shape[0] - 1):
        v, l_ = _query(s, lev, order, qptr[q], qptr[q + 1], lptr[q], lptr[q + 1], margin, strict,
                       coef, keys, perm, fu, fv, low)
        q_viol[q] = v
        q_loss[q] = l_


pair_pass_serial = serial_twin(pair_pass_parallel)     # one query after the other; the same numbers


# ---------------------------------------------------------------- pair sums (the squared pairwise hinge)

@njit(cache=True, nogil=True)
def _query_sums(s, t, lev, order, lo, hi, L0, L1, margin, keys, perm, fu, fv, low, tu, tv, lowt,
                cp, sp, cm, sm):
    """One query: for each row k, over the pairs violated at ``margin``
    (strict: s_j + margin > s_i): cp[k], sp[k] = the count and the sum of
    t_j of its lower-level partners j; cm[k], sm[k] = the count and the sum
    of t_i of its higher-level partners i."""
    m = hi - lo
    R = L1 - L0 - 1
    _prepare(s, lev, order, lo, hi, L0, L1, keys, perm, fu, fv, low)
    for k in range(L0, L1):
        tu[k] = 0.0
        tv[k] = 0.0
        lowt[k] = 0.0
    for k in range(lo, hi):
        lowt[L0 + lev[order[k]] + 1] += t[order[k]]
    for r in range(1, R + 1):                     # lowt[L0 + r]: the sum of t over rows of level < r
        lowt[L0 + r] += lowt[L0 + r - 1]
    a = 0
    b = 0
    nv = 0
    tv_seen = 0.0
    while a < m or b < m:
        if a < m and b < m:
            take_u = keys[lo + perm[lo + b]] + margin <= keys[lo + perm[lo + a]]
        else:
            take_u = b < m
        if take_u:
            i = order[lo + perm[lo + b]]
            r = lev[i]
            cm[i] = nv - _fen_prefix(fv, L0, r + 1, R)             # v's seen with level > r
            sm[i] = tv_seen - _fen_prefix(tv, L0, r + 1, R)
            _fen_add(fu, L0, r, R, 1)
            _fen_add(tu, L0, r, R, t[i])
            b += 1
        else:
            i = order[lo + perm[lo + a]]
            r = lev[i]
            cp[i] = low[L0 + r] - _fen_prefix(fu, L0, r, R)        # lower rows whose u is not yet seen
            sp[i] = lowt[L0 + r] - _fen_prefix(tu, L0, r, R)
            _fen_add(fv, L0, r, R, 1)
            _fen_add(tv, L0, r, R, t[i])
            tv_seen += t[i]
            nv += 1
            a += 1


@njit(cache=True, nogil=True, parallel=PRANGE)
def pair_sums_parallel(s, t, lev, order, qptr, lptr, margin, keys, perm, fu, fv, low, tu, tv, lowt,
                       cp, sp, cm, sm):
    """_query_sums over every query, in parallel over queries."""
    for q in prange(qptr.shape[0] - 1):
        _query_sums(s, t, lev, order, qptr[q], qptr[q + 1], lptr[q], lptr[q + 1], margin, keys, perm,
                    fu, fv, low, tu, tv, lowt, cp, sp, cm, sm)


pair_sums_serial = serial_twin(pair_sums_parallel)     # one query after the other; the same numbers
