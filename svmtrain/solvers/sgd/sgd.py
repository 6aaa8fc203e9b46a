"""``-s sgd``: plain stochastic gradient descent, with three update rules (``--update``).

Solves  min_w lambda/2 |w|^2 + 1/n sum_i loss(w.x_i + b; y_i)  (lambda =
params.resolved_lambda(n); + l1 |w|_1 with ``--update fobos --l1``) for
the losses of Pegasos (hinge, log; epsilon-insensitive and its square for
regression), one example per step, in epochs over a fresh random
permutation of the rows (-T epochs, default 30, as -s pegasos):

* ``bottou`` (default): SVM-SGD (L. Bottou 2007, the svmsgd programs): step
  eta_t = 1/(lambda (t + t0)), w kept as a scale times a vector;
* ``sgdqn``: SGD-QN (A. Bordes, L. Bottou, P. Gallinari, JMLR 10, 2009): the
  same steps scaled per feature by a diagonal estimate of the inverse
  Hessian, re-estimated after every ``skip``-th step;
* ``fobos``: FOLOS (J. Duchi, Y. Singer, JMLR 10, 2009): a gradient step,
  then the closed-form proximal step of lambda/2 |w|^2 + l1 |w|_1 (exact
  zeros with --l1).

t0 comes from SVM-SGD's pilot (:func:`pilot_eta0`): constant steps eta on
a sample of the rows, eta0 the best of a factor-2 search, t0 = 1/(lambda
eta0). None of the three projects or averages (that is -s pegasos). -B adds
a regularised constant feature, -R an unregularised bias moved by the same
steps. The steps themselves are ``_sgd_kernels``; every random choice comes
from ``np.random.default_rng(params.seed)``.
"""
import math

import numpy as np

from ...data.dataset import take_rows
from ...errors import ParameterError
from ..snapshots import linear_snapshot
from . import _sgd_kernels as K
from .._common import primal_objective
from ._pegasos_kernels import LOSS_CODES
from ..base import FitResult, finish_w, kernel_bias, segment_steps
from .pegasos import end_epoch

DEFAULTS = {"epochs": 30, "update": "bottou", "average": False}
PARALLEL_CLASSES = True   # one-vs-rest classes may train in threads (svmtrain.training.class_threads)
PILOT_ROWS = 1000       # SVM-SGD's pilot sample
PILOT_FACTOR = 2.0      # its search over eta0: powers of 2 from 1
PILOT_MAX_TRIES = 60
SKIP_MIN = 16           # SGD-QN's skip on dense data (the paper's value)


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None):
    """Train one binary (or regression) model by ``params.update``'s rule; see the module docstring.

    Guarantees: the result depends only on (X, y, params); the returned
    objective is f(w, b) of the returned model (with the l1 term for fobos).
    """
    check_params(params, class_cost)
    n = X.n_rows
    lam = params.resolved_lambda(n)
    y = np.ascontiguousarray(y, np.float64)
    rng = np.random.default_rng(params.seed)
    run = Run(X, y, n_features, params, lam, rng)
    prev_obj = math.inf
    converged = params.eps is None
    every = segment_steps(monitor, n)
    for epoch in range(params.epochs):
        order = rng.permutation(n)
        for lo in range(0, n, every):
            run.steps(order[lo:lo + every])
            if monitor is not None:
                monitor(lambda: linear_snapshot(X, y, *run.current(), params.bias, lam, run.t / n, run.t))
        stop, prev_obj = end_epoch(epoch, progress, params, log, prev_obj, run.objective, run.current)
        if stop:
            converged = True
            break
    return run.result(params, epoch + 1, converged, log, run.objective)


class Run:
    """An SGD run on (X, y): the kernel's arrays and the steps made so far.
    eta0 comes from :func:`pilot_eta0` on a sample drawn from ``rng``: of X
    here, or with ``pilot=False`` of the rows given to :meth:`pilot` later
    (the streamed run, ``stream_sgd``, whose X is a chunk source: only its
    ``n_rows`` and ``nnz`` are used then, and every step names its rows)."""

    def __init__(self, X, y, n_features, params, lam, rng, pilot=True):
        self.X, self.y, self.lam = X, y, lam
        self.rule = K.RULES[params.update]
        self.B = kernel_bias(params)
        self.unreg_bias = bool(params.unreg_bias)
        self.loss = LOSS_CODES[params.loss]
        self.loss_name = params.loss
        self.p = float(params.epsilon) if params.task == "r" else 0.0
        self.l1 = float(params.l1 or 0.0)
        d1 = n_features + 1
        self.skip = float(sgdqn_skip(X, d1))
        self.w = np.zeros(d1)
        one = np.ones(1)
        self.D = np.ones(d1) if self.rule == K.SGDQN else one
        self.pst = np.ones(d1) if self.rule == K.FOBOS else one
        self.qst = np.zeros(d1) if self.rule == K.FOBOS else one
        self.state = K.new_state(self.skip)
        self.eta0 = None
        if pilot:
            self.pilot(X, y, rng)

    def pilot(self, X, y, rng):
        """Set eta0 by :func:`pilot_eta0` on a sample of the rows of X (a Chunk) drawn from ``rng``."""
        self.eta0 = pilot_eta0(X, y, len(self.w), self.lam, self.B, self.unreg_bias, self.loss, self.loss_name,
                               self.p, rng)

    @property
    def t(self):
        """Steps made so far."""
        return int(self.state[K.T])

    def steps(self, rows, X=None, y=None):
        """One step on each of ``rows`` (of X and y: CSR arrays and labels; default the run's), in order."""
        X = self.X if X is None else X
        y = self.y if y is None else y
        K.sgd_steps(X.indptr, X.indices, X.values, y, np.ascontiguousarray(rows, np.int64),
                    self.rule, self.eta0, self.lam * self.eta0, self.lam, self.l1, self.B, self.unreg_bias,
                    self.loss, self.p, self.skip, self.w, self.D, self.pst, self.qst, self.state)

    def current(self):
        """(w, b) so far (w with the constant feature's weight last)."""
        return K.current_w(self.rule, self.w, self.pst, self.qst, self.state), float(self.state[K.BIAS])

    def result(self, params, epochs, converged, log, objective, **info):
        """The FitResult of the run's current (w, b) after ``epochs`` epochs,
        with ``objective(w, b)`` as its objective; ``info`` adds to sgd's keys
        (epochs, steps, lambda, eta0, t0, update). Logs the warning of a -e
        not reached."""
        if not converged and log is not None:
            log(f"WARNING: -e {params.eps:g} not reached in {params.epochs} epochs (raise -T)")
        w, b = self.current()
        info = {"epochs": epochs, "steps": self.t, "lambda": self.lam, "eta0": self.eta0,
                "t0": 1.0 / (self.lam * self.eta0), "update": params.update, **info}
        return FitResult(w=finish_w(w, params), b=b, n_iter=self.t, objective=objective(w, b), converged=converged,
                         info=info)

    def objective(self, w, b):
        """f(w, b) on all rows, the l1 term included."""
        f = primal_objective(self.X, self.y, w, self.B, b, self.lam, self.loss_name, self.p)
        return f + self.l1 * float(np.abs(w).sum())


def pilot_eta0(X, y, d1, lam, B, unreg_bias, loss, loss_name, p, rng):
    """SVM-SGD's choice of eta0: one pass of constant steps eta (the rule
    bottou) over a sample of PILOT_ROWS rows drawn from ``rng``, from w = 0,
    scored by the objective on the sample; from eta = 1, doubling while the
    doubled eta scores better, else halving while the halved eta scores
    better or the steps diverge (an infinite objective); the last eta kept
    (a power of 2; the smaller one of the final pair when halving, as svmsgd)."""
    n = X.n_rows
    rows = np.sort(rng.choice(n, size=min(n, PILOT_ROWS), replace=False)).astype(np.int64)
    sample = take_rows(X, rows)
    ys = y[rows]
    one = np.ones(1)

    def cost(eta):
        w = np.zeros(d1)
        state = K.new_state(1.0)
        K.sgd_steps(X.indptr, X.indices, X.values, y, rows, K.BOTTOU, eta, 0.0, lam, 0.0, B, unreg_bias, loss, p,
                    1.0, w, one, one, one, state)
        with np.errstate(over="ignore", invalid="ignore"):      # a diverging eta is scored inf
            f = primal_objective(sample, ys, w * state[K.SCALE], B, state[K.BIAS], lam, loss_name, p)
        return f if math.isfinite(f) else math.inf

    lo, hi = 1.0, PILOT_FACTOR
    lo_cost, hi_cost = cost(lo), cost(hi)
    tries = 0
    if lo_cost < hi_cost or not math.isfinite(lo_cost):     # halve (also while the steps diverge)
        while (lo_cost < hi_cost or not math.isfinite(lo_cost)) and tries < PILOT_MAX_TRIES:
            hi, hi_cost = lo, lo_cost
            lo /= PILOT_FACTOR
            lo_cost = cost(lo)
            tries += 1
    else:
        while hi_cost < lo_cost and tries < PILOT_MAX_TRIES:
            lo, lo_cost = hi, hi_cost
            hi *= PILOT_FACTOR
            hi_cost = cost(hi)
            tries += 1
    return lo


def sgdqn_skip(X, d1):
    """SGD-QN's skip: 16 (the paper's choice for dense data), or more on
    sparse data, so that the O(d) regularisation every skip steps costs no
    more than the steps between (d1 / mean nonzeros per row)."""
    mean_nnz = max(X.nnz / max(X.n_rows, 1), 1.0)
    return max(SKIP_MIN, math.ceil(d1 / mean_nnz))


def check_params(params, class_cost):
    """Raise ParameterError for what -s sgd does not do (class weights, averaging)."""
    if tuple(class_cost) != (1.0, 1.0):
        raise ParameterError("-w (class weights) is not supported by -s sgd; use -s pegasos or -s dcd")
    if params.average:
        raise ParameterError("--average is not part of -s sgd's rules; -s pegasos averages its iterates")
