"""-s norma: NORMA, kernel online (sub)gradient descent with a truncated expansion
(J. Kivinen, A. J. Smola, R. C. Williamson, "Online learning with kernels",
IEEE Trans. Signal Processing 52(8):2165-2176, 2004), for hinge-loss classification.

Each step takes one stochastic subgradient step on

    lambda/2 |f|_H^2 + 1/n sum_i max(0, 1 - y_i (f(x_i) + b)),    lambda = params.resolved_lambda(n),

keeping f as an expansion over the rows seen: on row (x_t, y_t), with
eta_t = 1/(lambda (t + t0)),

    every old alpha_j <- (1 - eta_t lambda) alpha_j
    if y_t (f_t(x_t) + b) < 1:  append alpha_t = eta_t y_t,  b <- b + eta_t y_t

and only the ``--budget`` most recent terms are kept (the paper's truncation:
the oldest term is dropped when a new one would exceed the budget; the
kept terms are the latest ``budget`` violators). The numba loop is in
``_norma_kernels.py`` (a ring buffer, a global scale for the shrinking,
kernel values from the CSR rows).

Choices (the paper leaves them open):

* step size: eta_t = 1/(lambda (t + t0)), the schedule of the paper's strongly
  convex analysis (as Pegasos), with t0 = 1/(lambda eta0) and
  eta0 = 1/max_i K(x_i, x_i) (1 for RBF): the first step then moves f(x_1) by
  at most y_1, the hinge's margin, instead of by 1/lambda. Note that with
  this schedule every kept term has the same weight 1/(lambda (T + t0))
  after T steps, whenever it entered: the decay that makes the paper's
  truncation error exponentially small belongs to a constant step;
* bias: the unregularised offset b (the paper's offset, moved by the same
  step) is learned by default, as by LIBSVM and -s sbp; ``--no-bias``
  (unreg_bias False) turns it off, ``-R`` changes nothing;
* sampling: each epoch visits the rows in a fresh random permutation
  (``-T`` epochs, default DEFAULTS["epochs"]), all draws from
  ``np.random.default_rng(params.seed)``; no averaging (NORMA returns the last f);
* ``-e EPS``: stop after an epoch whose objective fell by at most EPS
  relative (the objective is then evaluated each epoch); none by default;
* kernel values: the kept rows are copied densely (float64[features, budget])
  when that copy fits in ``-m`` MB (the kernel-cache budget; 200 MB: a9a
  takes 2 MB), else each step reads their CSR entries (several times slower).

Everything runs serially (a step is a few microseconds: too short to share
out), so ``--threads`` changes nothing.

Not supported (ParameterError): -B, -w, tasks other than c with the hinge.
"""
import math

import numpy as np

from ...errors import ParameterError
from ...mercer.cache import squarings_for
from ...mercer.functions import Kernel, sq_norms
from ...models.kernel import expansion_model
from . import _norma_kernels as K
from ..base import FitResult, csr_arrays, for_problem, segment_steps, split_progress

DEFAULTS = {"kernel_type": 2, "epochs": 5, "budget": 2000}


def train_model(data, order, problems, n_features, params, progress=None, log=None, monitor=None):
    """One NORMA run per binary problem (one-vs-rest); returns a KernelModel whose
    support vectors are the rows of the terms kept (coefficients of repeated rows summed)."""
    _refuse(params, problems)
    rows = Rows(data, Kernel(params.kernel_type, params.gamma, params.degree, params.coef0), n_features)
    rng = np.random.default_rng(params.seed)
    results = []
    for c, (y, _) in enumerate(problems):
        if log is not None and len(problems) > 1:
            log(f"class {order[c]:g} vs rest")
        results.append(_fit(rows, np.ascontiguousarray(y, np.float64), params, rng,
                            split_progress(progress, c, len(problems)), log, for_problem(monitor, c)))
    return _model(rows, order, results, n_features)


def _refuse(params, problems):
    """ParameterError for what NORMA does not train, naming an alternative."""
    if params.task != "c" or params.loss != "hinge":
        raise ParameterError("-s norma trains hinge-loss classification; -s asset --inner dcd trains the other "
                             "tasks and losses with a kernel")
    for _, cost in problems:
        if tuple(cost) != (1.0, 1.0):
            raise ParameterError("-w (class weights) is not supported by -s norma; -s asset trains a kernel model "
                                 "with -w")
    if params.bias >= 0:
        raise ParameterError("-B is not supported by -s norma: it learns an unregularised bias "
                             "(--no-bias turns it off)")
    if params.budget is not None and params.budget < 1:
        raise ParameterError(f"--budget must be >= 1 (got {params.budget})")


class Rows:
    """The training rows as the numba loop takes them: CSR arrays, squared norms,
    the resolved kernel and its parameters (with exp_neg's squarings)."""

    def __init__(self, data, kernel, n_features):
        self.chunk = data
        self.d = max(int(n_features), 1)
        self.indptr, self.indices, self.values = csr_arrays(data, n_features)
        self.sq = sq_norms(self.indptr, self.values)
        self.kernel = kernel.resolved(n_features)
        code, gamma, degree, coef0 = self.kernel.params()
        squarings = squarings_for(self.kernel, self.sq.max() if len(self.sq) else 0.0)
        self.kparams = (code, gamma, degree, coef0, squarings)

    def args(self):
        """(indptr, indices, values, sq, code, gamma, degree, coef0, squarings) in norma_steps' order."""
        return (self.indptr, self.indices, self.values, self.sq) + self.kparams

    def step_offset(self, lam):
        """t0 = 1/(lambda eta0) with eta0 = 1/max_i K(x_i, x_i) (eta0 = 1 when that is not positive)."""
        code, gamma, degree, coef0, _ = self.kparams
        kmax = K.max_self_kernel(self.sq, code, gamma, degree, coef0) if len(self.sq) else 1.0
        eta0 = 1.0 / kmax if kmax > 0.0 and math.isfinite(kmax) else 1.0
        return 1.0 / (lam * eta0)


class Ring:
    """The kept terms: a ring buffer of ``budget`` slots (rows, unscaled
    coefficients, squared norms), the scale and bias, the dense copy of the kept
    rows (float64[d, budget]) when it fits in ``dense_bytes``, and the loop's scratch."""

    def __init__(self, budget, d, dense_bytes):
        self.rows = np.zeros(budget, np.int64)
        self.coef = np.zeros(budget)
        self.sq = np.zeros(budget)
        self.dense = 8 * d * budget <= dense_bytes
        self.D = np.zeros((d, budget) if self.dense else (0, 0))
        self.x = np.zeros(0 if self.dense else d)
        self.dots = np.empty(budget)
        self.state = np.zeros(K.STATE_SIZE)
        self.state[K.S_SCALE] = 1.0
        self.counters = np.zeros(K.COUNTERS_SIZE, np.int64)

    def args(self):
        """(dense, rows, coef, sq, D, state, counters) in norma_steps' order."""
        return self.dense, self.rows, self.coef, self.sq, self.D, self.state, self.counters

    @property
    def count(self):
        return int(self.counters[K.C_COUNT])

    @property
    def bias(self):
        return float(self.state[K.S_BIAS])

    def terms(self):
        """(rows, alphas) of the kept terms, oldest first."""
        count, nxt = self.count, int(self.counters[K.C_NEXT])
        slots = np.arange(count) if count < len(self.rows) else (nxt + np.arange(count)) % count
        return self.rows[slots].copy(), self.state[K.S_SCALE] * self.coef[slots]

    def coefficients(self, n):
        """float64[n]: the alpha of each training row (repeated rows summed)."""
        rows, alphas = self.terms()
        coef = np.zeros(n)
        np.add.at(coef, rows, alphas)
        return coef

    def values_at(self, rows, targets):
        """f(x_j) - b for each row j in ``targets`` (kernel values as the steps compute them)."""
        out = np.empty(len(targets))
        K.expansion_values(np.ascontiguousarray(targets, np.int64), self.dense, self.rows, self.coef, self.sq,
                           self.D, self.count, *rows.args(), self.x, self.dots, out)
        return self.state[K.S_SCALE] * out

    def evaluate(self, rows, n):
        """(f(x_i) + b for the n training rows, |f|_H^2 = sum_s alpha_s (f(x_{row_s}) - b))."""
        scores = self.values_at(rows, np.arange(n)) + self.bias
        kept, alphas = self.terms()
        norm2 = float(alphas @ self.values_at(rows, kept))
        return scores, max(norm2, 0.0)


def run_steps(rows, y, order, t_start, lam, t0, use_bias, ring, fold_below=K.FOLD_BELOW):
    """NORMA steps t_start+1, ... over the rows ``order`` (int64), updating ``ring``; returns the violators."""
    return K.norma_steps(np.ascontiguousarray(order, np.int64), int(t_start), float(lam), float(t0),
                         bool(use_bias), float(fold_below), y, *ring.args(), *rows.args(), ring.x, ring.dots)


def _fit(rows, y, params, rng, progress, log, monitor=None):
    """One binary NORMA run; FitResult.w holds the alpha of every training row."""
    n = len(y)
    lam = params.resolved_lambda(n)
    epochs = int(params.epochs)
    ring = Ring(max(1, min(int(params.budget), n * epochs)), rows.d, params.cache_mb * (1 << 20))
    t0 = rows.step_offset(lam)
    use_bias = params.unreg_bias is not False
    every = segment_steps(monitor, n)
    t, prev_obj, converged, obj = 0, math.inf, params.eps is None, None
    for epoch in range(epochs):
        order = rng.permutation(n)
        for lo in range(0, n, every):
            part = order[lo:lo + every]
            run_steps(rows, y, part, t, lam, t0, use_bias, ring)
            t += len(part)
            if monitor is not None:
                monitor(lambda t=t: _snapshot(rows, ring, y, lam, t / n, t))
        if progress is not None:
            progress(epoch + 1, epochs)
        if log is not None:
            log(f"epoch {epoch + 1}: {int(ring.counters[K.C_VIOL])} violators so far, {ring.count} terms kept")
        if params.eps is not None:
            obj = objective(ring, rows, y, lam)
            if prev_obj - obj <= params.eps * abs(obj):
                converged = True
                break
            prev_obj = obj
    coef = ring.coefficients(n)
    if obj is None:
        obj = objective(ring, rows, y, lam)
    return FitResult(w=coef, b=ring.bias, n_iter=t, objective=obj, converged=converged,
                     info={"epochs": epoch + 1, "steps": t, "lambda": lam, "t0": t0, "budget": len(ring.rows),
                           "terms": ring.count, "violators": int(ring.counters[K.C_VIOL]),
                           "kernel_evals": int(ring.counters[K.C_KEVALS]), "n_sv": int(np.count_nonzero(coef))})


def objective(ring, rows, y, lam):
    """lambda/2 |f|_H^2 + 1/n sum_i max(0, 1 - y_i (f(x_i) + b)) of the kept expansion
    (every kernel value evaluated: n + budget expansions)."""
    scores, norm2 = ring.evaluate(rows, len(y))
    return 0.5 * lam * norm2 + float(np.maximum(0.0, 1.0 - y * scores).mean())


def _snapshot(rows, ring, y, lam, epochs, steps):
    """The trace's Snapshot of the current expansion."""
    from ..snapshots import kernel_snapshot
    coef = ring.coefficients(len(y))
    scores, norm2 = ring.evaluate(rows, len(y))
    return kernel_snapshot(rows.chunk, rows.kernel, coef, ring.bias, y, scores, norm2, lam, epochs, steps,
                           int(ring.counters[K.C_KEVALS]))


def _model(rows, order, results, n_features):
    """The KernelModel of one FitResult per problem: the union of the kept rows, one coefficient column each."""
    return expansion_model(rows.chunk, order, [r.w for r in results], results, rows.kernel, n_features, "norma")
