"""numba kernels of ``-s sgd``: one example per step, three update rules.

All three minimise

    f(w, b) = lambda/2 |w|^2 + 1/n sum_i loss(w.x_i + b; y_i)   (+ l1 |w|_1, FOLOS only)

with the losses of Pegasos (``_pegasos_kernels.loss_slope``: g = -d loss / d s
at the score s) and the step size

    eta_t = eta0 / (1 + decay t),   t = 0, 1, ...   (the steps made so far)

``decay = lambda eta0`` in a run, which is L. Bottou's 1/(lambda (t + t0))
with t0 = 1/(lambda eta0); ``decay = 0`` gives the constant steps of the
pilot that chooses eta0 (``sgd.pilot_eta0``). ``w`` has length d + 1, its
last entry the weight of the constant feature B (0 without -B); ``b`` is
the unregularised bias of -R, moved by eta_t g.

BOTTOU (SVM-SGD, L. Bottou 2007): w = a v. A step on x_i takes the slope g
at the current w, then w <- (1 - eta lambda) w + eta g x_i: a shrinks by
(1 - eta lambda) and v moves by eta g x_i / a, O(nnz of x_i).

SGDQN (SGD-QN, A. Bordes, L. Bottou, P. Gallinari, JMLR 10, 2009, Fig. 2):
w explicit and a diagonal scaling D (the paper's B times lambda: 1 at the
start, never below 1e-2). A step moves w_j by eta g D_j x_ij; the
regulariser is applied every ``skip`` steps at once,
w_j <- w_j (1 - skip eta lambda D_j) (O(d)); the step after it re-estimates
D on its example from the change of the example's gradient
g_t(w) = lambda w - g(w) x_i between w_t and w_{t+1}:
D_j <- D_j + 2/r (lambda dw_j / dgrad_j - D_j), r = 2, 3, ... per update,
for the features of x_i (the others did not move).

FOBOS (FOLOS, J. Duchi, Y. Singer, JMLR 10, 2009): the gradient step
w_{t+1/2} = w_t + eta g x_i, then the proximal step of
r(w) = lambda/2 |w|^2 + l1 |w|_1, in closed form
w_{t+1} = sign(w) max(|w_{t+1/2}| - eta l1, 0) / (1 + eta lambda). The
proximal steps are applied lazily, so a step costs O(nnz): composing them,
steps a+1..b map |w| to max(|w| - (Q_b - Q_a) / P_a, 0) P_a / P_b with
P_t = prod_{k<=t} (1 + eta_k lambda) and Q_t = sum_{k<=t} eta_k l1 P_{k-1};
each feature keeps the (P, Q) it was last brought to (``pst``, ``qst``)
and is brought up to date when an example touches it.

State vector (float64[STATE_SIZE]): steps t, scale a (BOTTOU), bias b,
P, Q (FOBOS), r, steps to the next regularisation, update-D flag (SGDQN).
"""
import numpy as np
from numba import njit

from .._common import row_axpy, row_dot
from ._pegasos_kernels import loss_slope

BOTTOU, SGDQN, FOBOS = 0, 1, 2
RULES = {"bottou": BOTTOU, "sgdqn": SGDQN, "fobos": FOBOS}
T, SCALE, BIAS, P_PROD, Q_SUM, R_COUNT, COUNT, UPDATE_D = range(8)
STATE_SIZE = 8
RESCALE_BELOW = 1e-9
D_FLOOR = 1e-2       # SGD-QN's lower bound of B: 1e-2 / lambda


def new_state(skip):
    """The state vector at the start of a run (t = 0, w = 0, b = 0)."""
    state = np.zeros(STATE_SIZE)
    state[SCALE] = 1.0
    state[P_PROD] = 1.0
    state[R_COUNT] = 2.0
    state[COUNT] = skip
    return state


@njit(cache=True, nogil=True)
def _bottou_step(indptr, indices, values, i, yi, eta, lam, B, unreg_bias, loss, p, v, state):
    a = state[SCALE]
    g = loss_slope(loss, a * row_dot(indptr, indices, values, i, v, B) + state[BIAS], yi, p)
    shrink = 1.0 - eta * lam
    if shrink <= 0.0:       # a step so long that it lands on w = 0 before the loss term
        v[:] = 0.0
        a = 1.0
    else:
        a *= shrink
    if g != 0.0:
        row_axpy(indptr, indices, values, i, eta * g / a, v, B)
        if unreg_bias:
            state[BIAS] += eta * g
    if a < RESCALE_BELOW:
        v *= a
        a = 1.0
    state[SCALE] = a


@njit(cache=True, nogil=True)
def _scaled_axpy(indptr, indices, values, i, c, D, w, B):
    """w_j += c D_j x_ij over the nonzeros of x_i and the constant feature."""
    last = w.shape[0] - 1
    w[last] += c * D[last] * B
    for q in range(indptr[i], indptr[i + 1]):
        j = indices[q]
        w[j] += c * D[j] * values[q]


@njit(cache=True, nogil=True)
def _ratio_update(step, slope_change, x, lam, rate, D, j):
    """D_j moved 2/r of the way to lambda dw_j / dgrad_j (``step`` = eta g,
    ``slope_change`` = g(w_{t+1}) - g(w_t)), floored at D_FLOOR."""
    dw = step * D[j] * x
    dgrad = lam * dw - slope_change * x
    if dw != 0.0 and dgrad != 0.0:
        D[j] += rate * (lam * dw / dgrad - D[j])
        if D[j] < D_FLOOR:
            D[j] = D_FLOOR


@njit(cache=True, nogil=True)
def _sgdqn_step(indptr, indices, values, i, yi, eta, lam, B, unreg_bias, loss, p, skip, w, D, state):
    g = loss_slope(loss, row_dot(indptr, indices, values, i, w, B) + state[BIAS], yi, p)
    if g != 0.0:
        _scaled_axpy(indptr, indices, values, i, eta * g, D, w, B)
        if unreg_bias:
            state[BIAS] += eta * g
        if state[UPDATE_D] != 0.0:
            change = loss_slope(loss, row_dot(indptr, indices, values, i, w, B) + state[BIAS], yi, p) - g
            rate = 2.0 / state[R_COUNT]
            last = w.shape[0] - 1
            if B != 0.0:
                _ratio_update(eta * g, change, B, lam, rate, D, last)
            for q in range(indptr[i], indptr[i + 1]):
                _ratio_update(eta * g, change, values[q], lam, rate, D, indices[q])
            state[R_COUNT] += 1.0
            state[UPDATE_D] = 0.0
    state[COUNT] -= 1.0
    if state[COUNT] <= 0.0:
        c = skip * eta * lam
        for j in range(w.shape[0]):
            w[j] *= max(0.0, 1.0 - c * D[j])
        state[COUNT] = skip
        state[UPDATE_D] = 1.0


@njit(cache=True, nogil=True)
def _catch_up(j, w, pst, qst, P, Q):
    """Apply feature j's pending proximal steps: bring it from (pst[j], qst[j]) to (P, Q)."""
    if pst[j] != P:
        x = w[j]
        m = max(abs(x) - (Q - qst[j]) / pst[j], 0.0) * pst[j] / P
        w[j] = m if x >= 0.0 else -m
        pst[j] = P
        qst[j] = Q


@njit(cache=True, nogil=True)
def _fobos_step(indptr, indices, values, i, yi, eta, lam, l1, B, unreg_bias, loss, p, w, pst, qst, state):
    P, Q = state[P_PROD], state[Q_SUM]
    if B != 0.0:
        _catch_up(w.shape[0] - 1, w, pst, qst, P, Q)
    for q in range(indptr[i], indptr[i + 1]):
        _catch_up(indices[q], w, pst, qst, P, Q)
    g = loss_slope(loss, row_dot(indptr, indices, values, i, w, B) + state[BIAS], yi, p)
    if g != 0.0:
        row_axpy(indptr, indices, values, i, eta * g, w, B)
        if unreg_bias:
            state[BIAS] += eta * g
    state[Q_SUM] = Q + eta * l1 * P
    state[P_PROD] = P * (1.0 + eta * lam)


@njit(cache=True, nogil=True)
def sgd_steps(indptr, indices, values, y, rows, rule, eta0, decay, lam, l1, B, unreg_bias, loss, p, skip,
              w, D, pst, qst, state):
    """One step of update rule ``rule`` (BOTTOU, SGDQN, FOBOS) on each row of
    ``rows`` in order, continuing from ``state`` (see the module docstring).
    ``w``: v of w = a v (BOTTOU) or w itself; ``D`` SGD-QN's scaling,
    ``pst``/``qst`` FOLOS's per-feature stamps (length-1 dummies for the
    other rules). Returns the number of steps made."""
    for r in range(rows.shape[0]):
        i = rows[r]
        eta = eta0 / (1.0 + decay * state[T])
        if rule == BOTTOU:
            _bottou_step(indptr, indices, values, i, y[i], eta, lam, B, unreg_bias, loss, p, w, state)
        elif rule == SGDQN:
            _sgdqn_step(indptr, indices, values, i, y[i], eta, lam, B, unreg_bias, loss, p, skip, w, D, state)
        else:
            _fobos_step(indptr, indices, values, i, y[i], eta, lam, l1, B, unreg_bias, loss, p, w, pst, qst, state)
        state[T] += 1.0
    return rows.shape[0]


@njit(cache=True, nogil=True)
def current_w(rule, w, pst, qst, state):
    """The weight vector the state holds, as a new array: a v (BOTTOU), w
    with every pending proximal step applied (FOBOS), w (SGDQN)."""
    out = w.copy()
    if rule == BOTTOU:
        out *= state[SCALE]
    elif rule == FOBOS:
        ps, qs = pst.copy(), qst.copy()
        for j in range(out.shape[0]):
            _catch_up(j, out, ps, qs, state[P_PROD], state[Q_SUM])
    return out
