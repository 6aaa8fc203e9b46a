"""numba step loop of NORMA (Kivinen, Smola, Williamson, "Online learning with kernels",
IEEE Trans. Signal Processing 52(8), 2004) for the hinge loss.

The expansion f = sum_s alpha_s K(x_{rows[s]}, .) is kept in a ring buffer
of ``budget`` slots (row index, unscaled coefficient a_s, squared norm of
the row), with alpha_s = scale * a_s. Step t on row i (eta = 1/(lambda (t + t0))):

    f_t(x_i) = scale * sum_s a_s K(x_{rows[s]}, x_i)          (kept terms only)
    scale   <- (1 - eta lambda) scale                          (every old alpha, O(1))
    if y_i (f_t(x_i) + b) < 1:
        the term (i, eta y_i) enters the slot of the oldest term
        (the oldest is dropped once ``budget`` terms are kept)
        b <- b + eta y_i                                       (with the bias)
    if scale < fold_below: a <- scale a, scale <- 1            (O(budget), rarely)

Kernel values come straight from the CSR rows and their squared norms
(LIBSVM's kernel codes, :func:`svmtrain.mercer.functions.kernel_from_dot`;
RBF through :func:`svmtrain.mercer.cache.exp_neg`'s polynomial and
squarings, which vectorise). The dot products of x_i with the kept rows come
either from a dense feature-major copy D[feature, slot] of the kept rows
(``dense``: one contiguous axpy per stored value of x_i) or, for wide data,
from the kept rows' own CSR entries against a dense scatter of x_i (every
feature index must then be < d: ``solvers.base.csr_arrays`` checks). The
sum over the kept terms is reassociated so that it vectorises: results
depend on the summation order at rounding level only, and are the same
from run to run.

State: ``state`` float64[2] (scale, b); ``counters`` int64[4] (next slot,
terms kept, violators, kernel values evaluated).
"""
import numpy as np
from numba import njit

from ...mercer.cache import exp_poly
from ...mercer.functions import RBF, kernel_from_dot

S_SCALE, S_BIAS = 0, 1
STATE_SIZE = 2
C_NEXT, C_COUNT, C_VIOL, C_KEVALS = 0, 1, 2, 3
COUNTERS_SIZE = 4
FOLD_BELOW = 1e-3

# the sum over the kept terms may reassociate (it vectorises); the sparse dot
# products may not (a reassociated sparse dot vectorises into slow gathers)
SUM_MATH = {"reassoc", "contract"}
DOT_MATH = {"contract"}


@njit(cache=True, nogil=True, fastmath=DOT_MATH)
def _dots_dense(i, indptr, indices, values, D, count, dots):
    """dots[s] = <x_i, column s of D> for s < count (features >= D.shape[0] ignored)."""
    d = D.shape[0]
    for s in range(count):
        dots[s] = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        f = indices[p]
        if f < d:
            v = values[p]
            for s in range(count):
                dots[s] += v * D[f, s]


@njit(cache=True, nogil=True, fastmath=DOT_MATH)
def _dots_sparse(i, indptr, indices, values, rows, count, x, dots):
    """dots[s] = <x_i, x_{rows[s]}> for s < count, through a dense scatter x of x_i
    (x all zero on entry and on return; every feature index must be < len(x))."""
    for p in range(indptr[i], indptr[i + 1]):
        x[indices[p]] = values[p]
    for s in range(count):
        j = rows[s]
        acc = 0.0
        for q in range(indptr[j], indptr[j + 1]):
            acc += values[q] * x[indices[q]]
        dots[s] = acc
    for p in range(indptr[i], indptr[i + 1]):
        x[indices[p]] = 0.0


@njit(cache=True, nogil=True, fastmath=SUM_MATH)
def _kernel_values(dots, count, sq_i, ring_sq, code, gamma, degree, coef0, squarings):
    """dots[s] <- K(x_i, x_{rows[s]}) for s < count, from the dot products and squared norms."""
    if code == RBF:
        g = gamma * 0.5 ** squarings
        for s in range(count):
            d2 = sq_i + ring_sq[s] - 2.0 * dots[s]
            dots[s] = -g * (d2 if d2 > 0.0 else 0.0)
        for s in range(count):
            dots[s] = exp_poly(dots[s])
        for _ in range(squarings):
            for s in range(count):
                dots[s] = dots[s] * dots[s]
    else:
        for s in range(count):
            dots[s] = kernel_from_dot(dots[s], sq_i, ring_sq[s], code, gamma, degree, coef0)


@njit(cache=True, nogil=True, fastmath=SUM_MATH)
def _weighted_sum(a, k, count):
    """sum_{s < count} a[s] k[s]."""
    acc = 0.0
    for s in range(count):
        acc += a[s] * k[s]
    return acc


@njit(cache=True, nogil=True)
def _store(i, slot, replaced, indptr, indices, values, D):
    """Column ``slot`` of D becomes row i (row ``replaced`` >= 0 was there before)."""
    d = D.shape[0]
    if replaced >= 0:
        for p in range(indptr[replaced], indptr[replaced + 1]):
            if indices[p] < d:
                D[indices[p], slot] = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        if indices[p] < d:
            D[indices[p], slot] = values[p]


@njit(cache=True, nogil=True)
def expansion_value(i, dense, ring_rows, ring_coef, ring_sq, D, count, indptr, indices, values, sq,
                    code, gamma, degree, coef0, squarings, x, dots):
    """sum_{s < count} ring_coef[s] K(x_{ring_rows[s]}, x_i) (the unscaled expansion at row i)."""
    if count == 0:
        return 0.0
    if dense:
        _dots_dense(i, indptr, indices, values, D, count, dots)
    else:
        _dots_sparse(i, indptr, indices, values, ring_rows, count, x, dots)
    _kernel_values(dots, count, sq[i], ring_sq, code, gamma, degree, coef0, squarings)
    return _weighted_sum(ring_coef, dots, count)


@njit(cache=True, nogil=True)
def _add_term(i, coef, dense, ring_rows, ring_coef, ring_sq, D, counters, indptr, indices, values, sq):
    """Put the term (row i, unscaled coefficient coef) in the slot after the newest,
    dropping the oldest term when all slots are taken."""
    budget = ring_rows.shape[0]
    slot = counters[C_NEXT]
    replaced = -1
    if counters[C_COUNT] == budget:
        replaced = ring_rows[slot]
    else:
        counters[C_COUNT] += 1
    ring_rows[slot] = i
    ring_coef[slot] = coef
    ring_sq[slot] = sq[i]
    if dense:
        _store(i, slot, replaced, indptr, indices, values, D)
    counters[C_NEXT] = slot + 1 if slot + 1 < budget else 0


@njit(cache=True, nogil=True)
def norma_steps(order, t_start, lam, t0, use_bias, fold_below, y, dense, ring_rows, ring_coef, ring_sq, D,
                state, counters, indptr, indices, values, sq, code, gamma, degree, coef0, squarings, x, dots):
    """Run len(order) NORMA steps numbered t_start+1, ...; step s visits row order[s].

    ring_rows int64[budget], ring_coef, ring_sq float64[budget]: the ring
    buffer (slots < counters[C_COUNT] in use; counters[C_NEXT] is the next
    slot, which holds the oldest term once the ring is full). D:
    float64[d, budget], the kept rows feature-major, used when ``dense``;
    x: float64[d] zero scratch, used otherwise; dots: float64[budget]
    scratch. ``t0`` > 0, so 1 - eta lambda = 1 - 1/(t + t0) > 0 and the
    scale never reaches 0. Returns the number of violators.
    """
    n_viol = 0
    for s in range(order.shape[0]):
        i = order[s]
        t = t_start + s + 1
        eta = 1.0 / (lam * (t + t0))
        count = counters[C_COUNT]
        f = state[S_SCALE] * expansion_value(i, dense, ring_rows, ring_coef, ring_sq, D, count, indptr, indices,
                                             values, sq, code, gamma, degree, coef0, squarings, x, dots)
        counters[C_KEVALS] += count
        state[S_SCALE] *= 1.0 - eta * lam
        if y[i] * (f + state[S_BIAS]) < 1.0:
            _add_term(i, eta * y[i] / state[S_SCALE], dense, ring_rows, ring_coef, ring_sq, D, counters,
                      indptr, indices, values, sq)
            if use_bias:
                state[S_BIAS] += eta * y[i]
            n_viol += 1
        if state[S_SCALE] < fold_below:
            _fold(ring_coef, counters[C_COUNT], state)
    counters[C_VIOL] += n_viol
    return n_viol


@njit(cache=True, nogil=True)
def _fold(ring_coef, count, state):
    """a <- scale a, scale <- 1 (the same alphas)."""
    sc = state[S_SCALE]
    for s in range(count):
        ring_coef[s] *= sc
    state[S_SCALE] = 1.0


@njit(cache=True, nogil=True)
def max_self_kernel(sq, code, gamma, degree, coef0):
    """max_i K(x_i, x_i) from the squared norms (RBF: 1)."""
    best = -np.inf
    for i in range(sq.shape[0]):
        k = kernel_from_dot(sq[i], sq[i], sq[i], code, gamma, degree, coef0)
        if k > best:
            best = k
    return best


@njit(cache=True, nogil=True)
def expansion_values(targets, dense, ring_rows, ring_coef, ring_sq, D, count, indptr, indices, values, sq,
                     code, gamma, degree, coef0, squarings, x, dots, out):
    """out[q] = sum_{s < count} ring_coef[s] K(x_{ring_rows[s]}, x_{targets[q]}) for every q
    (the unscaled expansion at those rows, as the steps compute it)."""
    for q in range(targets.shape[0]):
        out[q] = expansion_value(targets[q], dense, ring_rows, ring_coef, ring_sq, D, count, indptr, indices,
                                 values, sq, code, gamma, degree, coef0, squarings, x, dots)
