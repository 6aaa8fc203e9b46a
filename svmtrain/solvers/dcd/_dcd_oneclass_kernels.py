"""Numba kernel of the linear one-class SVM, as LIBLINEAR 2.4x's -s 21.

The dual of Schoelkopf et al.'s one-class SVM (scaled as in LIBSVM and
LIBLINEAR) is

    min_alpha  f(alpha) = 1/2 alpha^T Q alpha,   0 <= alpha_i <= 1,   sum_i alpha_i = nu l,

Q_ij = x_i.x_j, l rows. The kernel keeps w = sum_i alpha_i x_i, so the
gradient is G_i = w.x_i. alpha is optimal when some rho separates the
gradients: G_i >= rho where alpha_i < 1 and G_i <= rho where alpha_i > 0,
i.e. when

    m(alpha) = max{-G_i : alpha_i < 1}  -  min{-G_i : alpha_i > 0}  <=  0;

the kernel stops when m < eps on the whole set (LIBLINEAR's test).

Each outer iteration (LIBLINEAR's solve_oneclass_svm, with its working
sets and shrinking):

1. computes G on the active set and m; if m < eps it re-activates every
   variable, or stops when all were active already;
2. shrinks the variables at a bound whose gradient is beyond the other
   side's extreme (alpha_i = 1 and -G_i > max{-G : alpha < 1}, or
   alpha_i = 0 and -G_i < min{-G : alpha > 0}): they cannot move soon;
3. takes the k = max(active / 10, 1) variables of largest -G_i among
   alpha_i < 1 and the k of smallest -G_i among alpha_i > 0 (as many of
   each as both sides have), pairs them in rank order, and for each
   still-violating pair (i, j) solves the two-variable problem exactly:
   alpha_i += t, alpha_j -= t, t = (G_j - G_i) / |x_i - x_j|^2, clipped
   to the box (the sum alpha_i + alpha_j, hence sum alpha, is unchanged).

The state lives in caller-owned arrays (``alpha``, ``w``, ``index``,
``istate``, ``fstate``), so a front can run a few outer iterations at a
time and get the same result as one call.
"""
import numpy as np
from numba import njit

from .._common import row_axpy, row_dot
from ._dcd_kernels import CONVERGED, MAX_ITER, RUNNING

# istate slots
ACTIVE = 0          # index[:active] are active
ITER = 1            # outer iterations done
# fstate slots
VIOLATION = 0       # m of the last outer iteration's active set (+inf before the first)

TINY_CURVATURE = 1e-12      # |x_i - x_j|^2 below this is taken as this (two equal rows)
MIN_GAIN = 1e-12            # pairs whose gradients differ by less are left alone


def start_alpha(n, nu):
    """The feasible start of LIBLINEAR: the first floor(nu n) alphas 1, the next
    one nu n - floor(nu n), the others 0 (sum = nu n, 0 <= alpha <= 1)."""
    alpha = np.zeros(n, np.float64)
    total = nu * n
    full = min(int(total), n)
    alpha[:full] = 1.0
    if full < n:
        alpha[full] = total - full
    return alpha


@njit(cache=True, nogil=True)
def add_rows(indptr, indices, values, alpha, w):
    """w += sum_i alpha_i x_i; returns w."""
    for i in range(indptr.shape[0] - 1):
        if alpha[i] != 0.0:
            row_axpy(indptr, indices, values, i, alpha[i], w, 0.0)
    return w


@njit(cache=True, nogil=True)
def rows_dot(indptr, indices, values, i, j):
    """x_i . x_j (indices strictly increasing within each row)."""
    p, pe = indptr[i], indptr[i + 1]
    q, qe = indptr[j], indptr[j + 1]
    s = 0.0
    while p < pe and q < qe:
        a = indices[p]
        b = indices[q]
        if a == b:
            s += values[p] * values[q]
            p += 1
            q += 1
        elif a < b:
            p += 1
        else:
            q += 1
    return s


# --- a bounded heap of (key, row) pairs ordered by key, then by row * order;
# the root holds the smallest entry, so the heap keeps the largest ones ---
@njit(cache=True, nogil=True, inline="always")
def _less(ka, ra, kb, rb, order):
    """(ka, ra) comes before (kb, rb): a smaller key, or an equal key and ra * order < rb * order."""
    return ka < kb or (ka == kb and ra * order < rb * order)


@njit(cache=True, nogil=True)
def _sift_down(keys, rows, size, pos, order):
    k = keys[pos]
    r = rows[pos]
    while True:
        c = 2 * pos + 1
        if c >= size:
            break
        if c + 1 < size and _less(keys[c + 1], rows[c + 1], keys[c], rows[c], order):
            c += 1
        if not _less(keys[c], rows[c], k, r, order):
            break
        keys[pos] = keys[c]
        rows[pos] = rows[c]
        pos = c
    keys[pos] = k
    rows[pos] = r


@njit(cache=True, nogil=True)
def _offer(keys, rows, size, cap, key, row, order):
    """Keep the ``cap`` largest (key, row * order) seen in a heap of ``size``
    entries; returns the new size."""
    if size < cap:
        pos = size
        while pos > 0:
            parent = (pos - 1) // 2
            if not _less(key, row, keys[parent], rows[parent], order):
                break
            keys[pos] = keys[parent]
            rows[pos] = rows[parent]
            pos = parent
        keys[pos] = key
        rows[pos] = row
        return size + 1
    if _less(keys[0], rows[0], key, row, order):
        keys[0] = key
        rows[0] = row
        _sift_down(keys, rows, size, 0, order)
    return size


@njit(cache=True, nogil=True)
def _drain(keys, rows, size, out, order):
    """Empty the heap into out[:size], largest entry first."""
    while size > 0:
        out[size - 1] = rows[0]
        size -= 1
        keys[0] = keys[size]
        rows[0] = rows[size]
        _sift_down(keys, rows, size, 0, order)


@njit(cache=True, nogil=True)
def _pair_step(indptr, indices, values, alpha, QD, w, i, j):
    """Solve the two-variable problem in (alpha_i, alpha_j) exactly, keeping their sum,
    when the pair violates the optimality condition; w follows. The arithmetic is
    LIBLINEAR's (the same step t moves alpha_i, alpha_j and w), so the iterates match
    its to the last bit."""
    ai = alpha[i]
    aj = alpha[j]
    if (ai == 0.0 and aj == 0.0) or (ai == 1.0 and aj == 1.0):
        return
    Gi = row_dot(indptr, indices, values, i, w, 0.0)
    Gj = row_dot(indptr, indices, values, j, w, 0.0)
    if not ((ai < 1.0 and aj > 0.0 and Gi + MIN_GAIN < Gj) or (ai > 0.0 and aj < 1.0 and Gj + MIN_GAIN < Gi)):
        return
    curv = QD[i] + QD[j] - 2.0 * rows_dot(indptr, indices, values, i, j)
    if curv <= 0.0:
        curv = TINY_CURVATURE
    d = (Gi - Gj) / curv        # the unconstrained step: alpha_i - d, alpha_j + d
    s = ai + aj
    ni = ai - d
    nj = aj + d
    # clip to the box: alpha_i in [max(0, s - 1), min(1, s)]
    if s > 1.0:
        if ni > 1.0:
            ni, nj = 1.0, s - 1.0
        elif nj > 1.0:
            ni, nj = s - 1.0, 1.0
    else:
        if nj < 0.0:
            ni, nj = s, 0.0
        elif ni < 0.0:
            ni, nj = 0.0, s
    alpha[i] = ni
    alpha[j] = nj
    t = ni - ai
    row_axpy(indptr, indices, values, i, t, w, 0.0)
    row_axpy(indptr, indices, values, j, -t, w, 0.0)


@njit(cache=True, nogil=True, error_model="numpy")
def oneclass_run(indptr, indices, values, alpha, QD, G, eps, max_iter, n_steps, w, index, istate, fstate,
                 heap_keys, heap_rows, up, down):
    """Run at most ``n_steps`` outer iterations (module docstring); returns
    RUNNING, CONVERGED or MAX_ITER.

    ``alpha`` must be feasible (``start_alpha``) and ``w = sum_i alpha_i
    x_i`` (length n_features + 1, the last entry unused); ``QD[i] =
    |x_i|^2``; ``G``, ``heap_keys``, ``heap_rows``, ``up`` and ``down`` are
    scratch arrays of n entries (float64, float64, int64, int64, int64).
    Every call keeps alpha feasible and w = sum_i alpha_i x_i (up to
    rounding); ``fstate[VIOLATION]`` is the last iteration's m.
    """
    n = alpha.shape[0]
    active = istate[ACTIVE]
    it = istate[ITER]
    steps = 0
    while steps < n_steps:
        if it >= max_iter:
            istate[ACTIVE] = active
            return MAX_ITER
        neg_max = -np.inf       # max{-G_i : alpha_i < 1}
        neg_min = np.inf        # min{-G_i : alpha_i > 0}
        for s in range(active):
            i = index[s]
            g = row_dot(indptr, indices, values, i, w, 0.0)
            G[i] = g
            if alpha[i] < 1.0 and -g > neg_max:
                neg_max = -g
            if alpha[i] > 0.0 and -g < neg_min:
                neg_min = -g
        fstate[VIOLATION] = neg_max - neg_min
        if neg_max - neg_min < eps:
            if active == n:
                istate[ACTIVE] = active
                return CONVERGED
            active = n          # optimal on the shrunk set: check them all
            continue
        s = 0
        while s < active:
            i = index[s]
            if (alpha[i] == 1.0 and -G[i] > neg_max) or (alpha[i] == 0.0 and -G[i] < neg_min):
                active -= 1
                index[s] = index[active]
                index[active] = i
            else:
                s += 1
        cap = max(active // 10, 1)
        # up: the cap rows of largest -G with alpha < 1; down: smallest -G with alpha > 0
        n_up = 0
        for s in range(active):
            i = index[s]
            if alpha[i] < 1.0:
                n_up = _offer(heap_keys, heap_rows, n_up, cap, -G[i], i, 1)
        _drain(heap_keys, heap_rows, n_up, up, 1)
        n_down = 0
        for s in range(active):
            i = index[s]
            if alpha[i] > 0.0:
                n_down = _offer(heap_keys, heap_rows, n_down, cap, G[i], i, -1)
        _drain(heap_keys, heap_rows, n_down, down, -1)
        for p in range(min(n_up, n_down)):
            _pair_step(indptr, indices, values, alpha, QD, w, up[p], down[p])
        it += 1
        steps += 1
        istate[ITER] = it
    istate[ACTIVE] = active
    return RUNNING


@njit(cache=True, nogil=True)
def oneclass_rho(indptr, indices, values, alpha, w):
    """(rho, number of alpha_i > 0): rho is the mean gradient w.x_i over the free
    alphas (0 < alpha_i < 1), or with none the midpoint of the largest gradient
    at alpha_i = 1 and the smallest at alpha_i = 0 (LIBLINEAR's rule; when one
    of those sets is empty, the other's end)."""
    n = alpha.shape[0]
    lb = -np.inf
    ub = np.inf
    free = 0
    total = 0.0
    nsv = 0
    for i in range(n):
        g = row_dot(indptr, indices, values, i, w, 0.0)
        a = alpha[i]
        if a > 0.0:
            nsv += 1
        if a == 1.0:
            lb = max(lb, g)
        elif a == 0.0:
            ub = min(ub, g)
        else:
            free += 1
            total += g
    if free > 0:
        return total / free, nsv
    if lb == -np.inf:       # no alpha at 1 (cannot happen when nu l >= 1)
        return ub, nsv
    if ub == np.inf:        # every alpha at 1 (nu = 1): any rho >= the largest gradient
        return lb, nsv
    return 0.5 * (ub + lb), nsv
