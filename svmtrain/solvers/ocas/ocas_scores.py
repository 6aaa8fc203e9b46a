"""The data side of OCAS for losses of the scores s = X w (``ocas.solve``'s
four methods), shared by ranking and regression.

A problem here is  F(w) = 1/2 |w|^2 + c sum_k loss_k(s)  with a convex loss
of the scores whose one pass, ``loss_pass(s)``, returns

    (coef, n_violated, loss, bconst)

with coef_k = -d loss / d s_k (a subgradient), the loss, and bconst =
loss + coef . s, so that the cut at s is  loss(s') >= bconst - coef . s'
for every s' (a tangent: exact for a piecewise-linear loss). In w the
cut is  c loss >= c bconst - <a, w>  with a = c sum_k coef_k x_k, the form
of :class:`svmtrain.solvers.ocas.ocas.LocalData`'s cuts.

The line search of ``--ocas-method ocas`` minimises F(w_b + t d) by a
safeguarded root search (regula falsi, Illinois) on its derivative, which
only grows; each evaluation is one pass at the scores X w_b + t X d (at
most ``LS_EVALS`` passes per line search). It is inexact, which costs only
iterations: Q_P is always F at the point reached and Q_D a lower bound, so
the stopping rule certifies the optimum as for classification.
"""
import time

import numba
import numpy as np

from ...data.chunk_source import as_source, with_float32_values
from . import _ocas_kernels as K
from .._common import margins
from ..base import FitResult, finish_w, kernel_bias
from . import ocas
from .ocas import _threads_for, solve

LS_EVALS = 8          # derivative evaluations (data passes) per line search, at most


class ScoreData:
    """OCAS's data side for ``loss_pass`` (see the module doc) on the rows of X,
    a Chunk or the blocks of a ``--stream`` run (a chunk source: every pass
    over the scores' inputs reads each block once; the cut reads the blocks
    holding a row with a nonzero coefficient).

    Keeps ``out_b = X w_b``, ``out_d = X d``, the coefficients at w_b (the
    derivative at t = 0 of the next line search) and at the last cut point.
    ``B`` is the constant feature's value in the scores and the cuts;
    ``cut_bias`` (default B) its value in the cuts alone (0 where it cancels).
    ``exact_search(out_b, out_d, qa, qb, nb)``, if given, is the loss's exact
    line search (the minimiser t >= 0 from the outputs, no further data
    pass), used instead of :func:`regula_falsi`.
    """

    def __init__(self, X, loss_pass, cost, B, dim, nb, exact_search=None):
        X = with_float32_values(as_source(X), ocas.FLOAT32_MIN_NNZ)       # (as ocas.LocalData)
        n = X.n_rows
        self.X, self.loss_pass, self.cost, self.B, self.nb = X, loss_pass, cost, B, nb
        self.cut_bias = B
        self.out_b = np.zeros(n)
        self.out_d = np.zeros(n)
        self.coef_b = np.zeros(n)
        self.coef_cut = np.zeros(n)
        self.cw = np.full(n, cost)
        self.flag = np.zeros(n, np.int8)
        self.zero = np.zeros(n, np.int8)
        self.buf = np.empty((nb, dim)) if nb > 1 else np.empty((1, 1))
        self.a = np.zeros(dim)
        self.n_passes = 0
        self.exact_search = exact_search

    def _pass(self, scores):
        self.n_passes += 1
        return self.loss_pass(scores)

    def start_at(self, w):
        """out_b = X w: the outputs of a starting point other than 0."""
        self._outputs(w)
        self.out_b[:] = self.out_d

    def errors(self, scores):
        """The count shown as ``nerr`` in ocas's --verbose lines (none here)."""
        return 0

    def _outputs(self, w_d):
        """out_d = X w_d, block by block."""
        b = self.X.bounds
        for j, c in self.X.blocks():
            margins(c.indptr, c.indices, c.values, w_d, self.B, 0.0, self.out_d[b[j]:b[j + 1]])

    def _slope(self, t):
        """dF(w_b + t d)/dt minus its regulariser part: -c sum_k coef_k(t) out_d[k]."""
        coef = self._pass(self.out_b + t * self.out_d)[0]
        return -self.cost * float(coef @ self.out_d)

    def line_search(self, w_b, w_d, qa, qb):
        """A minimiser t >= 0 of F(w_b + t w_d) (qa = |w_d|^2 > 0, qb = w_b.w_d)
        by :func:`regula_falsi`; keeps the outputs of w_d."""
        self._outputs(w_d)
        if self.exact_search is not None:
            return self.exact_search(self.out_b, self.out_d, qa, qb, self.nb)
        return regula_falsi(qb - self.cost * float(self.coef_b @ self.out_d), qa, qb, self._slope)

    def loss_at_end(self, w_b, w_d):
        """The loss at w_b + w_d (= w_c); keeps the outputs of w_d."""
        self._outputs(w_d)
        return self.cost * self._pass(self.out_b + self.out_d)[2]

    def move(self, t, mu):
        """w_b += t d and the cut at the next cut point w_b + mu (1 - t) d.
        Returns (loss at the new w_b, ``errors`` there (counted by
        subclasses that show them), violations at the cut point, c times
        the cut's bconst)."""
        if t != 0.0:
            self.out_b += t * self.out_d
        coef, nv, loss, bconst = self._pass(self.out_b)
        self.coef_b[:] = coef
        nerr = self.errors(self.out_b)
        s = mu * (1.0 - t)
        if s != 0.0:
            coef, nv, _, bconst = self._pass(self.out_b + s * self.out_d)
            self.coef_cut[:] = coef
        else:
            self.coef_cut[:] = self.coef_b
        return self.cost * loss, nerr, nv, self.cost * bconst

    def cut(self):
        """The cut vector c sum_k coef_k x_k at the last cut point (owned by this object)."""
        X, b = self.X, self.X.bounds
        nonzero = self.flag.view(bool)
        np.not_equal(self.coef_cut, 0.0, out=nonzero)
        self.a[:] = 0.0
        order = np.flatnonzero(np.logical_or.reduceat(nonzero, b[:-1])) if X.n_blocks > 1 else None
        for j, c in X.blocks(order):
            r = slice(b[j], b[j + 1])
            K.scatter_cut(c.indptr, c.indices, c.values, self.cut_bias, self.coef_cut[r], self.cw[r], self.flag[r],
                          self.zero[r], False, self.nb, self.buf, self.a)
        return self.a


def regula_falsi(g0, qa, qb, slope):
    """A minimiser t >= 0 of phi(t) = F(w_b + t d) from its derivative
    g(t) = qa t + qb + slope(t), which never decreases (F is convex): g0 =
    g(0); ``slope(t)`` is the loss part of g, one data pass. At most
    ``LS_EVALS`` calls of ``slope``; the answer is a point where g <= 0 or
    the last root estimate (inexact: see the module doc)."""
    lo, g_lo = 0.0, g0
    if g_lo >= 0.0:
        return 0.0
    hi = -g_lo / qa                    # g(hi) >= 0: the derivative only grows
    g_hi = qa * hi + qb + slope(hi)
    side = 0
    for _ in range(LS_EVALS - 1):
        if g_hi <= 0.0 or hi - lo <= 1e-12 * hi:
            return hi if g_hi <= 0.0 else lo
        if abs(g_hi - g_lo - qa * (hi - lo)) <= 1e-12 * (abs(g_hi) + abs(g_lo)):
            return lo - g_lo / qa      # g is linear on [lo, hi]: the exact root
        t = lo - g_lo * (hi - lo) / (g_hi - g_lo)
        g_t = qa * t + qb + slope(t)
        if g_t < 0.0:
            lo, g_lo = t, g_t
            if side == -1:
                g_hi *= 0.5            # Illinois: keep the stale end from stalling
            side = -1
        else:
            hi, g_hi = t, g_t
            if side == 1:
                g_lo *= 0.5
            side = 1
    return lo - g_lo * (hi - lo) / (g_hi - g_lo) if g_hi > g_lo else lo


def fit_scores(X, loss_pass, C, n_features, params, progress=None, log=None, warm_start=None, exact_search=None):
    """Minimise 1/2 |w|^2 + C loss(X w) by ``ocas.solve`` over
    ``ScoreData(X, loss_pass, C)`` (a Chunk or a ``--stream`` source, ``-B``
    as LIBLINEAR's), with ocas's threads; ``warm_start`` as ``ocas.solve``'s,
    ``exact_search`` as ScoreData's.
    The FitResult's info adds ``primal_C_form`` (= Q_P, the primal value)
    and ``C``; no rows give w = 0."""
    t0 = time.perf_counter()
    n, dim = X.n_rows, int(n_features) + 1
    if n == 0:
        return FitResult(w=finish_w(np.zeros(dim), params), n_iter=0, objective=0.0, converged=True,
                         info={"Q_P": 0.0, "Q_D": 0.0, "exit": "EmptyData"})
    nb = _threads_for(params.threads, getattr(X, "max_block_nnz", X.nnz))
    old_threads = numba.get_num_threads()
    numba.set_num_threads(nb)
    try:
        result = solve(ScoreData(X, loss_pass, C, kernel_bias(params), dim, nb, exact_search), n, dim, params, progress, log,
                       nb, t0, warm_start=warm_start)
    finally:
        numba.set_num_threads(old_threads)
    result.info.update(primal_C_form=result.info["Q_P"], C=C)
    return result
