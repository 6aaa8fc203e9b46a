"""numba kernels of Crammer-Singer multi-class SVM by sequential dual coordinate
descent (Keerthi, Sundararajan, Chang, Hsieh, Lin, "A sequential dual method
for large scale multi-class linear SVMs", KDD 2008; LIBLINEAR's -s 4).

Primal, k classes with weights w_m (column m of W)::

    min 1/2 sum_m |w_m|^2 + sum_i C_i max(0, max_{m != y_i} 1 + w_m.x_i - w_{y_i}.x_i)

Dual, per row i a k-vector alpha_i with sum_m alpha_i^m = 0, alpha_i^m <= 0
for m != y_i and alpha_i^{y_i} <= C_i; w_m = sum_i alpha_i^m x_i. A step
solves row i's sub-problem over its k variables exactly (the sort-based
solution of the paper's section 4: alpha_i^m = min(bound_m, (beta - B_m) / A_i)
with beta making the sum 0), visiting the active rows in a random order
each outer iteration.

Shrinking (LIBLINEAR's): a class m of row i whose alpha is at its bound
with gradient below the row's smallest free gradient leaves the row's
active classes; a row with at most one active class leaves the active
rows. When the largest violation (max G - min G over a row's active
classes) of a pass falls below eps_shrink, everything is made active
again, eps_shrink halves (down to eps), and the run ends when a pass that
started from everything is below eps.

Revisits (our schedule; ``revisits=0`` is LIBLINEAR's): from pass
REVISIT_AFTER on, after each pass, the rows whose violation exceeded eps
get up to REVISITS more steps, each round keeping those that still exceed
it, when they are at most HOT_SHARE of the active rows. On real word
counts a handful of long documents (|x|^2 up to 1e5) keep the largest
violation above 1 for thousands of passes while the other rows sit below
eps/10: the docstrings of 20 packages (8,000 rows, counts, C = 1) take
9,481 passes on LIBLINEAR's schedule and 817 with revisits, to the same
dual objective (2e-6) and test accuracy. Any order that steps every active
row once a pass keeps the method's convergence, and the stopping rule is
unchanged. Runs shorter than REVISIT_AFTER passes are LIBLINEAR's schedule
to the bit: revisited from the first pass, separable sets stop with a
primal up to 40 % above the plain schedule's (mushrooms: the same dual, a
few more hinge losses just under eps), a risk a short run need not take.

Layout: ``w`` is float64[(d + 1) * k], feature-major (w[f * k + m]; row d
multiplies the constant feature ``B``); ``alpha`` float64[n * k] row-major;
``order`` int64[n * k] holds each row's classes, its active ones first;
``y_pos[i]`` is the position of y_i in row i's ``order``.
"""
import numpy as np
from numba import njit

from .._common import _U
from ._dcd_kernels import _prefetch, _shuffle

TINY = 1e-12
REVISITS = 10   # extra steps a pass gives its rows that violate by more than eps (module docstring)
HOT_SHARE = 0.25    # ... when they are at most this share of the active rows
REVISIT_AFTER = 100     # ... from this pass on (shorter runs keep LIBLINEAR's schedule exactly)
AHEAD = 16      # nonzeros ahead whose weights are prefetched (hints only: the results never change)


@njit(cache=True, nogil=True)
def solve_sub_problem(A, yi, C_yi, active, B, alpha_new, D):
    """Row i's sub-problem over its ``active`` classes (positions 0..active-1):
    min_a 1/2 A |a|^2 + B.a with sum a = 0, a_m <= 0 (m != yi), a_yi <= C_yi.
    Writes the solution into alpha_new[:active]; ``D`` is scratch (length >= active)."""
    for r in range(active):
        D[r] = B[r]
    if yi < active:
        D[yi] += A * C_yi
    # D[:active] in decreasing order (insertion sort: k is small)
    for r in range(1, active):
        v = D[r]
        q = r - 1
        while q >= 0 and D[q] < v:
            D[q + 1] = D[q]
            q -= 1
        D[q + 1] = v
    beta = D[0] - A * C_yi
    r = 1
    while r < active and beta < r * D[r]:
        beta += D[r]
        r += 1
    beta /= r
    for r in range(active):
        bound = C_yi if r == yi else 0.0
        alpha_new[r] = min(bound, (beta - B[r]) / A)


@njit(cache=True, nogil=True, inline="always")
def _add_scores(indptr, indices, values, i, B, w, uk, ud, order, ubase, una, G):
    """G[m] += w_c . x_i for the classes c = order[ubase + m], m < una (the
    constant feature B included; unsigned indices, so that numba drops its
    negative-index wraparound), prefetching the weights of the feature
    AHEAD nonzeros on (its first and last line).

    Four classes at a time, their sums in registers (a sum through G's
    memory waits on each store); each G[m] still adds the products in the
    row's order, so the sums are the plain loop's to the bit."""
    start = _U(indptr[i])
    end = _U(indptr[i + 1])
    one, two, three = _U(1), _U(2), _U(3)
    m0 = _U(0)
    while m0 < una:
        c0 = _U(order[ubase + m0])                    # a missing lane repeats class c0; its sum is dropped
        c1 = _U(order[ubase + m0 + one]) if m0 + one < una else c0
        c2 = _U(order[ubase + m0 + two]) if m0 + two < una else c0
        c3 = _U(order[ubase + m0 + three]) if m0 + three < una else c0
        g0 = G[m0]
        g1 = G[m0 + one] if m0 + one < una else 0.0
        g2 = G[m0 + two] if m0 + two < una else 0.0
        g3 = G[m0 + three] if m0 + three < una else 0.0
        for q in range(start, end):
            if q + AHEAD < end:
                ahead = _U(indices[q + AHEAD]) * uk
                _prefetch(w, ahead)
                _prefetch(w, ahead + uk - one)
            wb = _U(indices[q]) * uk
            v = values[q]
            g0 += w[wb + c0] * v
            g1 += w[wb + c1] * v
            g2 += w[wb + c2] * v
            g3 += w[wb + c3] * v
        if B != 0.0:
            wb = ud * uk
            g0 += w[wb + c0] * B
            g1 += w[wb + c1] * B
            g2 += w[wb + c2] * B
            g3 += w[wb + c3] * B
        G[m0] = g0
        if m0 + one < una:
            G[m0 + one] = g1
        if m0 + two < una:
            G[m0 + two] = g2
        if m0 + three < una:
            G[m0 + three] = g3
        m0 += _U(4)


@njit(cache=True, nogil=True)
def _shrinkable(pos, y_pos_i, a, C_i, g, min_g):
    """True when the class at position ``pos`` sits at its bound with a gradient below min_g."""
    bound = C_i if pos == y_pos_i else 0.0
    return a == bound and g < min_g


@njit(cache=True, nogil=True, inline="always")
def _row_gradient(indptr, indices, values, B, y, C, w, k, d, alpha, order, y_pos, na, i, G):
    """Row i's gradient over its first ``na`` classes into G[:na]; returns
    (min_g, max_g): the smallest gradient of a class that can still move
    down, the largest of all (their difference is the row's violation)."""
    base = i * k
    yp = y_pos[i]
    for m in range(na):
        G[m] = 1.0
    if yp < na:
        G[yp] = 0.0
    _add_scores(indptr, indices, values, i, B, w, _U(k), _U(d), order, _U(base), _U(na), G)
    min_g = np.inf
    max_g = -np.inf
    for m in range(na):
        if alpha[base + order[base + m]] < 0.0 and G[m] < min_g:
            min_g = G[m]
        if G[m] > max_g:
            max_g = G[m]
    if yp < na and alpha[base + y[i]] < C[i] and G[yp] < min_g:
        min_g = G[yp]
    return min_g, max_g


@njit(cache=True, nogil=True, inline="always")
def _row_step(indptr, indices, values, B, C, A, w, k, d, alpha, order, y_pos, na, i, G, Bv, alpha_new, D,
              d_cls, d_val):
    """Solve row i's sub-problem over its first ``na`` classes (G holds their
    gradient) and move alpha_i and w to its solution."""
    base = i * k
    uk = _U(k)
    for m in range(na):
        Bv[m] = G[m] - A * alpha[base + order[base + m]]
    solve_sub_problem(A, y_pos[i], C[i], na, Bv, alpha_new, D)
    nz = 0
    for m in range(na):
        c = order[base + m]
        delta = alpha_new[m] - alpha[base + c]
        alpha[base + c] = alpha_new[m]
        if delta >= TINY or delta <= -TINY:
            d_cls[nz] = c
            d_val[nz] = delta
            nz += 1
    unz = _U(nz)
    for q in range(_U(indptr[i]), _U(indptr[i + 1])):
        wb = _U(indices[q]) * uk
        v = values[q]
        for z in range(unz):
            w[wb + _U(d_cls[z])] += d_val[z] * v
    if B != 0.0:
        wb = _U(d) * uk
        for z in range(unz):
            w[wb + _U(d_cls[z])] += d_val[z] * B


@njit(cache=True, nogil=True, error_model="numpy")
def cs_run(indptr, indices, values, B, y, C, QD, k, alpha, w, order, y_pos, active_i, index,
           eps, max_iter, rng, revisits=REVISITS):
    """Run the sequential dual method from the state given (see the module
    docstring) until it converges or makes ``max_iter`` outer iterations.
    ``y``: int64 class of each row (0..k-1); ``C``: each row's C;
    ``QD``: |x_i|^2 + B^2; ``revisits``: the extra steps a pass's violating
    rows get (0: LIBLINEAR's schedule). Returns (outer iterations, converged)."""
    n = y.shape[0]
    d = w.shape[0] // k - 1
    G = np.empty(k)
    Bv = np.empty(k)
    alpha_new = np.empty(k)
    D = np.empty(k)
    d_cls = np.empty(k, np.int64)
    d_val = np.empty(k)
    hot = np.empty(n, np.int64)
    active = n
    eps_shrink = max(10.0 * eps, 1.0)
    from_all = True
    it = 0
    converged = False
    while it < max_iter:
        stopping = -np.inf
        n_hot = 0
        _shuffle(index, active, rng)
        s = 0
        while s < active:
            i = index[s]
            A = QD[i]
            base = i * k
            if A > 0.0:
                na = active_i[i]
                min_g, max_g = _row_gradient(indptr, indices, values, B, y, C, w, k, d, alpha, order, y_pos,
                                             na, i, G)
                m = 0
                while m < na:
                    if _shrinkable(m, y_pos[i], alpha[base + order[base + m]], C[i], G[m], min_g):
                        na -= 1
                        while na > m:
                            if not _shrinkable(na, y_pos[i], alpha[base + order[base + na]], C[i], G[na], min_g):
                                t = order[base + m]
                                order[base + m] = order[base + na]
                                order[base + na] = t
                                g = G[m]
                                G[m] = G[na]
                                G[na] = g
                                if y_pos[i] == na:
                                    y_pos[i] = m
                                elif y_pos[i] == m:
                                    y_pos[i] = na
                                break
                            na -= 1
                    m += 1
                active_i[i] = na
                if na <= 1:
                    active -= 1
                    index[s] = index[active]
                    index[active] = i
                    continue
                if max_g - min_g <= TINY:
                    s += 1
                    continue
                if max_g - min_g > stopping:
                    stopping = max_g - min_g
                if max_g - min_g > eps:
                    hot[n_hot] = i
                    n_hot += 1
                _row_step(indptr, indices, values, B, C, A, w, k, d, alpha, order, y_pos, na, i, G, Bv,
                          alpha_new, D, d_cls, d_val)
            s += 1
        if n_hot > HOT_SHARE * active or it < REVISIT_AFTER:    # most rows still move, or the run is short
            n_hot = 0
        for _ in range(revisits):            # the pass's violating rows, while they still violate
            kept = 0
            for h in range(n_hot):
                i = hot[h]
                na = active_i[i]
                min_g, max_g = _row_gradient(indptr, indices, values, B, y, C, w, k, d, alpha, order, y_pos,
                                             na, i, G)
                if max_g - min_g > TINY:
                    _row_step(indptr, indices, values, B, C, QD[i], w, k, d, alpha, order, y_pos, na, i, G, Bv,
                              alpha_new, D, d_cls, d_val)
                if max_g - min_g > eps:
                    hot[kept] = i
                    kept += 1
            n_hot = kept
        it += 1
        if stopping < eps_shrink:
            if stopping < eps and from_all:
                converged = True
                break
            active = n
            for i in range(n):
                active_i[i] = k
            eps_shrink = max(eps_shrink / 2.0, eps)
            from_all = True
        else:
            from_all = False
    return it, converged


@njit(cache=True, nogil=True)
def cs_losses(indptr, indices, values, B, y, C, k, w):
    """sum_i C_i max(0, max_{m != y_i} 1 + w_m.x_i - w_{y_i}.x_i) (w feature-major, as cs_run's)."""
    n = y.shape[0]
    d = w.shape[0] // k - 1
    every = np.arange(k)
    s = np.empty(k)
    total = 0.0
    for i in range(n):
        s[:] = 0.0
        _add_scores(indptr, indices, values, i, B, w, _U(k), _U(d), every, _U(0), _U(k), s)
        worst = 0.0
        for m in range(k):
            if m != y[i]:
                worst = max(worst, 1.0 + s[m] - s[y[i]])
        total += C[i] * worst
    return total
