"""-s cvm: the Core Vector Machine (I. W. Tsang, J. T. Kwok, P.-M. Cheung, "Core Vector
Machines: Fast SVM Training on Very Large Data Sets", JMLR 6:363-392, 2005).

The problem (the paper's two-class L2-SVM, squared slacks and a bias):

    min_{w, b, rho, xi}  |w|^2 + b^2 - 2 rho + C sum_i xi_i^2
    s.t.  y_i (w.phi(x_i) + b) >= rho - xi_i,

with C = ``params.resolved_C(n)``: -c as given, not scaled by n (the paper
and LibCVM, whose kernel adds 1/C to the diagonal, put C on the sum of the
squared slacks as written; -l lambda gives C = 1/(n lambda)). Its dual is

    max_alpha  -alpha' K~ alpha   s.t.  alpha >= 0, sum_i alpha_i = 1,
    K~_ij = y_i y_j (k(x_i, x_j) + 1) + delta_ij / C,

and when k(x, x) = kappa for every x (RBF: kappa = 1), K~_ii = eta =
kappa + 1 + 1/C is constant and this is the dual of the minimum enclosing
ball (MEB) of the points phi~(z_i) of kernel K~: centre
c = sum_i alpha_i phi~(z_i), radius R^2 = eta - alpha' K~ alpha. Kernels
whose k(x, x) varies over the rows (linear or polynomial on rows of
different norms) are refused, as is the sigmoid kernel (not positive
semi-definite): -s smo and -s sbp train those.

The algorithm (Badoiu-Clarkson core sets), for epsilon = -e (default 1e-6,
the value of the paper's experiments; LibCVM's own default,
(4e-6 / kappa + 2 / (15000 C)) / (2 eta), is 1.3e-6 for an RBF kernel and C = 100):

1. the initial core set of the paper: from a random row z, the row z_a
   farthest from phi~(z), then the row z_b farthest from phi~(z_a);
   S_0 = {z_a, z_b} with alpha = (1/2, 1/2) (their MEB);
2. the row farthest from the centre, |c - phi~(z)|^2 = alpha'K~alpha
   - 2 sum_j alpha_j K~(z_j, z) + eta; if it lies within (1 + epsilon) R,
   stop;
3. otherwise add it to the core set (alpha = 0) and solve the MEB of the
   core set again from the previous alpha (:func:`_cvm_kernels.smo`, an
   SMO on the simplex with LibCVM's working-set choice) to
   max_{alpha_j > 0} G_j - min_i G_i <= SMO_FRACTION epsilon R^2
   (G = K~ alpha), so that every core point lies within (1 + epsilon) R of
   the centre too; go to 2.

"Farthest" is, by default, the paper's probabilistic speedup: the
farthest of a sample of ``SAMPLE_SIZE`` = 59 rows drawn uniformly (with
replacement) among the rows outside the core set, which is among the 5 %
farthest rows with probability 0.95; the run stops when no sampled row is
outside the (1 + epsilon) ball (``SAMPLE_ROUNDS`` = 1 sample per iteration;
LibCVM draws up to 7 before it stops). ``core_ball(sample_size=None)``
scans every row instead (the exact farthest point): then every row is
within (1 + epsilon) R of the centre at the end, and R <= R_MEB <=
(1 + epsilon) R. Every random choice comes from
``np.random.default_rng(params.seed)`` (one child generator per binary
problem, ``Generator.spawn``); iteration t always uses the t-th block of
draws, so a run does not depend on how often it reports or is traced.

The classifier: w = sum_i alpha_i y_i phi(x_i), b = sum_i alpha_i y_i, and
the margin rho = alpha' K~ alpha (the KKT conditions), so
f(x) = sum_i alpha_i y_i k(x_i, x) + b. The model stores f / rho, the same
classifier scaled to margin 1, which solves the L2-SVM
min |w|^2 + b^2 + C sum_i max(0, 1 - y_i f(x_i))^2 (regularised bias).
The objective reported (model file, ``--trace``) is that problem in the
lambda form of the other solvers, lambda/2 (|w|^2 + b^2) + 1/n sum_i
max(0, 1 - y_i f(x_i))^2 with lambda = 2 / (n C) (so -c is twice the C of
LIBLINEAR's squared hinge), with the dual value 1 / (n C rho) below it
(alpha / rho is feasible for the L2-SVM's dual).

Accuracy: epsilon is relative to R^2 ~ eta, while the margin rho can be
much smaller (rho = 1 / P*, P* = min |w|^2 + b^2 + C sum_i xi_i^2 of the
margin-1 problem, which grows with n C): a row z is outside the
(1 + epsilon) ball exactly when y_z f(x_z) / rho < 1 - epsilon (1 + epsilon/2) R^2 / rho,
so the run ignores every margin violation smaller than epsilon R^2 / rho.
On a9a (n = 32561, RBF gamma 0.01) with C = 100, rho is 1.8e-6, so
epsilon = 1e-6 stops with a primal-dual gap of 75 % (test accuracy 77.5 %,
5980 core points); C = 10 or C = 1 (rho 8e-6, 7e-5) reach 85.0 % and 85.2 %,
and C = 100 with -e 1e-7 reaches 84.7 % (LIBSVM's L1-SVM, C = 100: 84.9 %).
Loosli and Canu (JMLR 8, 2007) discuss this dependence of the CVM's
stopping rule on C.

The core-set matrix K~ stays in memory (float64, one row and column more
per iteration, its storage doubled when full): --max-iter caps the core
set (default ``DEFAULTS["max_iter"]``, 3.2 GB). -B, -R/--no-bias and -w
are refused: the CVM has its own, regularised, bias b and one C.
"""
from dataclasses import dataclass

import numpy as np

from ...errors import ParameterError
from ...mercer.functions import Kernel, sq_norms
from ...mercer.cache import partial_row_serial, squarings_for
from ...models.kernel import expansion_model
from . import _cvm_kernels as K
from ..base import FitResult, for_problem, split_progress
from .sbp import threads

DEFAULTS = {"kernel_type": 2, "eps": 1e-6, "max_iter": 20000}
SAMPLE_SIZE = 59        # rows per sample of the probabilistic speedup (paper section 4.3)
SAMPLE_ROUNDS = 1       # samples per iteration before the run stops (LibCVM: 7)
SMO_FRACTION = 1.0      # the core-set SMO stops at max G - min G <= SMO_FRACTION eps R^2
SEGMENT = 64            # iterations per numba call between progress reports
FIRST_CAPACITY = 256    # core points the first K~ storage holds
MAX_SMO_STEPS = 10**7   # SMO pair steps per iteration, at most


@dataclass
class Ball:
    """An approximate MEB of the K~ points: centre sum_a alpha[a] phi~(z_core[a]).

    ``rho`` = alpha' K~ alpha = |c|^2, ``eta`` = K~_ii; ``converged`` is False
    when the core set reached its cap before the stopping test passed.
    """
    core: np.ndarray
    alpha: np.ndarray
    rho: float
    eta: float
    iterations: int = 0
    smo_steps: int = 0
    kernel_evals: int = 0
    converged: bool = True

    @property
    def r2(self):
        """R^2 = eta - rho, the squared radius (a lower bound on the MEB's)."""
        return self.eta - self.rho


def train_model(data, order, problems, n_features, params, progress=None, log=None, monitor=None):
    """One CVM per binary problem (one-vs-rest for more than two classes); returns a KernelModel."""
    check_params(params, problems)
    with threads(params):
        d = max(int(n_features), data.n_features, 1)
        kernel = Kernel(params.kernel_type, params.gamma, params.degree, params.coef0).resolved(n_features)
        sq = sq_norms(data.indptr, data.values)
        kappa = constant_diagonal(kernel, sq)
        n = data.n_rows
        C = params.resolved_C(n)
        rngs = np.random.default_rng(params.seed).spawn(len(problems))
        results, coefs = [], []
        for c, (y, _) in enumerate(problems):
            if log is not None and len(problems) > 1:
                log(f"class {order[c]:g} vs rest")
            report = split_progress(progress, c, len(problems))
            y = np.ascontiguousarray(y, np.float64)
            res, coef = _fit(data, y, kernel, kappa, C, params, rngs[c], d, sq, report, log,
                             for_problem(monitor, c))
            results.append(res)
            coefs.append(coef)
        return expansion_model(data, order, coefs, results, kernel, n_features, "cvm")


def check_params(params, problems):
    """ParameterError for what the CVM does not train (naming what does)."""
    if params.task != "c" or params.loss != "squared-hinge":
        raise ParameterError("-s cvm trains classification with the squared hinge (the L2-SVM); "
                             "-s smo or -s asset train the other tasks and losses with a kernel")
    if params.bias >= 0:
        raise ParameterError("-B is not supported by -s cvm: it learns its own bias b (regularised, "
                             "b^2 in the objective)")
    if params.unreg_bias is not None:
        raise ParameterError("-R/--no-bias is not supported by -s cvm: its bias b is part of the enclosing "
                             "ball (regularised, b^2 in the objective); -s sbp or -s pegasos -R learn an "
                             "unregularised one")
    for _, cost in problems:
        if tuple(cost) != (1.0, 1.0):
            raise ParameterError("-w (class weights) is not supported by -s cvm (a per-class C breaks the "
                                 "constant diagonal of the ball); -s smo or -s asset train a kernel model with -w")


def constant_diagonal(kernel, sq):
    """kappa = k(x, x), the same for every row (the CVM's condition); ParameterError otherwise."""
    code, gamma, degree, coef0 = kernel.params()
    if code == 3:
        raise ParameterError("-s cvm needs a positive semi-definite kernel with constant k(x, x) "
                             "(e.g. -t 2, rbf); the sigmoid kernel (-t 3) is neither: use -s smo or -s sbp")
    if code == 2 or len(sq) == 0:
        return 1.0
    diag = sq if code == 0 else (gamma * sq + coef0) ** degree
    lo, hi = float(diag.min()), float(diag.max())
    if hi - lo > 1e-10 * max(1.0, abs(hi)):
        raise ParameterError(f"-s cvm needs a kernel with constant k(x, x) (the minimum enclosing ball of "
                             f"the paper); -t {code} gives values from {lo:.6g} to {hi:.6g} on these rows "
                             "(normalise the rows, or use -t 2); -s smo or -s sbp train any kernel")
    return hi


def _fit(X, y, kernel, kappa, C, params, rng, d, sq, progress, log, monitor):
    """One binary CVM; returns (FitResult, coefficients over the rows of X)."""
    n = len(y)
    if np.all(y > 0) or np.all(y < 0):
        # one class only: a constant decision
        return (FitResult(w=np.zeros(n), b=float(np.sign(y[0])), n_iter=0, objective=0.0, converged=True,
                          info={"core": 0, "n_sv": 0}), np.zeros(n))
    ball = core_ball(X, y, kernel, C, params.eps, rng, kappa=kappa, sample_size=SAMPLE_SIZE, rounds=SAMPLE_ROUNDS,
                     max_core=params.max_iter, d=d, sq=sq, progress=progress, log=log, monitor=monitor)
    coef, b = classifier(ball, y, n)
    u = scores(X, y, ball, kernel, d, sq)
    primal, dual, norm2 = objectives(ball, y, u, C)
    if log is not None:
        log(f"core set {len(ball.core)}, support {int(np.count_nonzero(ball.alpha))}, "
            f"{ball.iterations} iterations, {ball.smo_steps} SMO steps; R^2 {ball.r2:.10g}, "
            f"margin rho {ball.rho:.6g}; objective {primal:.6g}, dual {dual:.6g}")
        if not ball.converged:
            log(f"WARNING: the core set reached --max-iter {params.max_iter} points before every sampled row "
                "was inside the (1 + eps) ball; the solution may be inaccurate (raise --max-iter or -e)")
    info = dict(core=len(ball.core), n_sv=int(np.count_nonzero(ball.alpha)), iterations=ball.iterations,
                smo_steps=ball.smo_steps, kernel_evals=ball.kernel_evals, r2=ball.r2, rho=ball.rho, C=C,
                eps=params.eps, dual=dual, norm2=norm2)
    return (FitResult(w=coef, b=b, n_iter=ball.iterations, objective=primal, converged=ball.converged, info=info),
            coef)


def classifier(ball, y, n):
    """(coefficients over the n rows, b) of f / rho: alpha_i y_i / rho and sum_i alpha_i y_i / rho."""
    coef = np.zeros(n)
    coef[ball.core] = ball.alpha * y[ball.core] / ball.rho
    return coef, float(coef.sum())


def scores(X, y, ball, kernel, d, sq):
    """u_i = sum_j alpha_j y_j (k(x_j, x_i) + 1) for every row i (f(x_i) before the 1/rho scaling)."""
    sv = np.flatnonzero(ball.alpha > 0.0)
    rows = np.ascontiguousarray(ball.core[sv], np.int64)
    w = ball.alpha[sv] * y[rows]
    out = np.empty(X.n_rows)
    code, gamma, degree, coef0 = kernel.params()
    K.all_scores(X.indptr, X.indices, X.values, sq, rows, w, len(rows), code, gamma, degree, coef0,
                 squarings_for(kernel, sq.max() if len(sq) else 0.0), d, out)
    return out


def objectives(ball, y, u, C):
    """(primal, dual, |w|^2 + b^2) of the margin-1 classifier f / rho, in the lambda form of the module
    docstring (lambda = 2 / (n C)); ``u`` are the rows' scores (:func:`scores`)."""
    n = len(y)
    rho = ball.rho
    norm2 = max(rho - float(ball.alpha @ ball.alpha) / C, 0.0) / (rho * rho)
    loss = np.maximum(0.0, 1.0 - y * u / rho)
    primal = (norm2 + C * float(loss @ loss)) / (n * C)
    return primal, 1.0 / (n * C * rho), norm2


def core_ball(X, y, kernel, C, eps, rng, kappa=None, sample_size=SAMPLE_SIZE, rounds=SAMPLE_ROUNDS,
              max_core=None, d=None, sq=None, progress=None, log=None, monitor=None, smo_fraction=None):
    """The CVM's (1 + eps)-approximate MEB of the K~ points of (X, y) (see the module docstring).

    Returns a :class:`Ball` with R^2 = eta - rho <= the MEB's R^2 (any
    alpha on the simplex gives a lower bound). With ``sample_size=None``
    (the exact farthest point) and ``converged``, every row lies within
    (1 + eps) R of the centre, hence R_MEB <= (1 + eps) R; with a sample,
    every sampled row of the last iteration does. ``max_core`` caps the
    core set (None: n).
    """
    n = X.n_rows
    sq = sq_norms(X.indptr, X.values) if sq is None else sq
    d = max(X.n_features, 1) if d is None else int(d)
    kappa = constant_diagonal(kernel, sq) if kappa is None else kappa
    eta = kappa + 1.0 + 1.0 / C
    S = 0 if sample_size is None else int(sample_size)
    smo_fraction = SMO_FRACTION if smo_fraction is None else smo_fraction
    limit = n if max_core is None else max(2, min(n, int(max_core)))
    st = _State(X, y, kernel, sq, d, eta, min(limit, FIRST_CAPACITY), max(S, 1))
    st.start(_initial_pair(st, rng, S))
    pending = np.empty((0, rounds, S))
    status = K.RUNNING
    checkpoint = _next_checkpoint(monitor, 0)
    while status != K.CONVERGED:
        if len(pending) == 0:
            pending = rng.random((min(SEGMENT, checkpoint - st.iterations), rounds, S))
        before = st.iterations
        status = st.steps(pending, eps, smo_fraction)
        pending = pending[st.iterations - before:]
        capped = status == K.FULL and st.capacity >= limit
        if status == K.FULL and not capped:
            st.grow(min(limit, 2 * st.capacity))
        if progress is not None:
            progress(st.ncore, limit, f"core {st.ncore} R^2 {st.r2:.8g}")
        if st.iterations >= checkpoint or status == K.CONVERGED or capped:
            _report(st, log, monitor, C)
            checkpoint = _next_checkpoint(monitor, st.iterations)
        if capped:
            break
    return st.ball(status == K.CONVERGED)


def _next_checkpoint(monitor, it):
    """The iteration of the next log line / snapshot: every ``monitor.steps`` iterations when set,
    else the next power of two."""
    every = getattr(monitor, "steps", None) if monitor is not None else None
    if every:
        return (it // int(every) + 1) * int(every)
    return 1 << int(it).bit_length()


def _report(st, log, monitor, C):
    """A log line and a trace snapshot of the current ball."""
    if log is not None:
        log(f"iteration {st.iterations}: core set {st.ncore}, R^2 {st.r2:.10g}, rho {st.rho:.6g}")
    if monitor is not None:
        monitor(lambda: _snapshot(st, C))


def _snapshot(st, C):
    """The trace's Snapshot of f / rho for the current ball (squared hinge, with its dual):
    iter = core-set iterations, updates = SMO pair steps."""
    from ..snapshots import kernel_snapshot
    ball = st.ball(False)
    n = len(st.y)
    coef, b = classifier(ball, st.y, n)
    u = scores(st.X, st.y, ball, st.kernel, st.d, st.sq)
    primal, dual, norm2 = objectives(ball, st.y, u, C)
    snap = kernel_snapshot(st.X, st.kernel, coef, b, st.y, u / ball.rho, norm2, 2.0 / (n * C), st.iterations,
                           ball.smo_steps, st.kevals)
    snap.loss = "squared-hinge"
    snap.dual = dual
    return snap


def _initial_pair(st, rng, S):
    """The paper's S_0: z_a farthest from a random row z, z_b farthest from z_a (each among a sample
    of S rows drawn with replacement, or among all rows for S == 0)."""
    z = int(rng.integers(st.n))
    za = _farthest_from(st, z, rng, S)
    return za, _farthest_from(st, za, rng, S)


def _farthest_from(st, z, rng, S):
    """The row (not z) farthest from phi~(z) among a sample of S rows (all rows for S == 0):
    |phi~(z) - phi~(x)|^2 = 2 eta - 2 y_z y_x (k(z, x) + 1)."""
    cand = np.arange(st.n, dtype=np.int64) if S == 0 else rng.integers(0, st.n, S).astype(np.int64)
    k = np.empty(len(cand))
    partial_row_serial(z, cand, len(cand), k, st.dense, st.X.indptr, st.X.indices, st.X.values, st.sq, *st.kparams)
    st.istate[K.I_KEVALS] += len(cand)
    dist = 2.0 * st.eta - 2.0 * st.y[z] * st.y[cand] * (k + 1.0)
    dist[cand == z] = -np.inf
    if not np.isfinite(dist.max()):
        return (z + 1) % st.n
    return int(cand[int(np.argmax(dist))])


class _State:
    """The arrays of one run (see _cvm_kernels' docstring) and the calls on them."""

    def __init__(self, X, y, kernel, sq, d, eta, capacity, S):
        self.X, self.y, self.kernel, self.sq, self.d, self.eta = X, y, kernel, sq, d, eta
        self.n = X.n_rows
        code, gamma, degree, coef0 = kernel.params()
        self.kparams = (code, gamma, degree, coef0, squarings_for(kernel, sq.max() if len(sq) else 0.0))
        self.capacity = capacity
        self.core = np.full(capacity, -1, np.int64)
        self.Kt = np.zeros((capacity, capacity))
        self.alpha = np.zeros(capacity)
        self.G = np.zeros(capacity)
        self.out_list = np.arange(self.n, dtype=np.int64)
        self.out_pos = np.arange(self.n, dtype=np.int64)
        self.sv_rows = np.zeros(capacity, np.int64)
        self.sv_w = np.zeros(capacity)
        self.istate = np.zeros(K.ISTATE_SIZE, np.int64)
        self.istate[K.I_NOUT] = self.n
        self.fstate = np.zeros(K.FSTATE_SIZE)
        self.D = np.zeros((d, max(S, 1)))
        self.dense = np.zeros(d)
        self.cand = np.zeros(max(S, 1), np.int64)
        self.u = np.zeros(max(S, self.n, 1))
        self.krow = np.zeros(capacity)

    def start(self, pair):
        """The core set {z_a, z_b} (or {z_a} for a single row) with its MEB."""
        rows = [pair[0]] if self.n == 1 or pair[0] == pair[1] else list(pair)
        for r in rows:
            self._add(r)
        m = len(rows)
        self.alpha[:m] = 1.0 / m
        self.G[:m] = self.Kt[:m, :m] @ self.alpha[:m]
        self.fstate[K.F_RHO] = float(self.alpha[:m] @ self.G[:m])

    def _add(self, r):
        K.add_point(r, self.y, self.eta, self.core, self.Kt, self.alpha, self.G, self.out_list, self.out_pos,
                    self.istate, self.X.indptr, self.X.indices, self.X.values, self.sq, *self.kparams,
                    self.dense, self.krow)

    def steps(self, uniforms, eps, smo_fraction):
        """Up to len(uniforms) iterations (:func:`_cvm_kernels.cvm_steps`); returns its status."""
        status = K.cvm_steps(len(uniforms), np.ascontiguousarray(uniforms), float(eps), float(smo_fraction),
                             MAX_SMO_STEPS, self.y, self.eta, self.core, self.Kt, self.alpha, self.G, self.out_list,
                             self.out_pos, self.sv_rows, self.sv_w, self.istate, self.fstate,
                             self.X.indptr, self.X.indices, self.X.values, self.sq, *self.kparams,
                             self.D, self.dense, self.cand, self.u, self.krow)
        return status

    def grow(self, capacity):
        """Room for ``capacity`` core points (the first ncore kept)."""
        m = self.ncore
        Kt = np.zeros((capacity, capacity))
        Kt[:m, :m] = self.Kt[:m, :m]
        self.Kt = Kt
        for name in ("core", "alpha", "G", "sv_rows", "sv_w", "krow"):
            old = getattr(self, name)
            new = np.zeros(capacity, old.dtype)
            new[:len(old)] = old
            setattr(self, name, new)
        self.capacity = capacity

    @property
    def ncore(self):
        return int(self.istate[K.I_NCORE])

    @property
    def iterations(self):
        return int(self.istate[K.I_ITER])

    @property
    def kevals(self):
        """Kernel values computed so far (scores, new K~ rows, the initial pair)."""
        return int(self.istate[K.I_KEVALS])

    @property
    def rho(self):
        return float(self.fstate[K.F_RHO])

    @property
    def r2(self):
        return self.eta - self.rho

    def ball(self, converged):
        """The current Ball (copies)."""
        m = self.ncore
        return Ball(core=self.core[:m].copy(), alpha=self.alpha[:m].copy(), rho=self.rho, eta=self.eta,
                    iterations=self.iterations, smo_steps=int(self.istate[K.I_SMO]), kernel_evals=self.kevals,
                    converged=converged)
