"""``-s ocas --loss log`` and ``-s ocas --task r`` on a Dask cluster.

The data side of ``solvers.ocas.solve`` for the losses of the scores
(logistic regression, epsilon-insensitive regression and its square): what
:class:`svmtrain.solvers.ocas.ocas_scores.ScoreData` does locally, each worker
does for its partitions, keeping per partition the outputs of w_b and d
and the loss coefficients at w_b (n-vectors, in worker memory). An
iteration makes these rounds:

* ``direction`` (d goes out, O(dim) per worker): each worker computes
  X d and its part of the line search's derivative at t = 0;
* one ``line search`` round per derivative evaluation of the regula falsi
  (``ocas_scores.regula_falsi``, at most ``LS_EVALS`` - 1 rounds): t goes
  out, one number comes back; for the epsilon-insensitive loss instead the
  exact search of :mod:`svmtrain.distributed.linesearch` over each row's two
  breakpoints (``_ocas_kernels.svr_breakpoints``), as the local run's
  (whose regula falsi stalled on targets far from 0);
* ``move`` (t and mu go out): each worker moves its outputs, makes its pass
  at w_b and at the next cut point and returns its loss, violations, cut
  constant and its part of the cut vector (a dense O(dim) vector).

Worker losses are handled as in :mod:`svmtrain.distributed.ocas` (the
driver loop is that module's ``DaskData``): a task that finds a
partition's state missing or stale raises StateLost, the driver sends w_b
with the next direction round and every stale partition rebuilds X w_b
and its coefficients there.
"""
import numpy as np

from ..solvers.dcd import _dcd_logistic_kernels as KL
from ..solvers.ocas import _ocas_kernels as K
from ..solvers.dcd import _dcd_regression_kernels as KS
from ..solvers._common import margins
from ..solvers.ocas.ocas_scores import regula_falsi
from . import linesearch
from .ocas import DaskData, ready, run, states_for_direction
from .partitions import partition


EXACT_SEARCH = "epsilon-insensitive"      # the loss whose line search is exact (breakpoints), not regula falsi


class _ScoreState:
    """One partition's share of a score-loss OCAS run (in the worker's registry).
    ``problem`` = (index, positive label or None (regression: the labels are
    the targets), C_pos, C_neg, loss, tube p, dim)."""

    def __init__(self, chunk, problem):
        n = chunk.n_rows
        self.problem = problem[0]
        pos, c_pos, c_neg, self.loss, self.p = problem[1:6]
        if pos is None:
            self.y = np.asarray(chunk.labels, np.float64)
            self.cw = np.full(n, c_pos)
        else:
            self.y = np.where(chunk.labels == pos, 1.0, -1.0)
            self.cw = np.where(self.y > 0, c_pos, c_neg)
        self.out_b = np.zeros(n)
        self.out_d = np.zeros(n)
        self.coef_b = np.zeros(n)        # coefficients at w_b
        self.coef = np.zeros(n)          # coefficients of the last other pass (line search, cut point)
        self.scores = np.zeros(n)
        self.flag = np.zeros(n, np.int8)
        self.ones = np.ones(n)
        self.version = -1
        self.d_version = -1
        if self.loss == EXACT_SEARCH:          # the breakpoints of the exact line search, two a row
            self.kb, self.wb, self.m = np.empty(2 * n), np.empty(2 * n), 0

    def rebuilt(self):
        """After out_b = X w_b was rebuilt: the coefficients at w_b."""
        self.loss_pass(self.out_b, self.coef_b)

    def loss_pass(self, scores, coef):
        """(violations, weighted loss, weighted cut constant) at ``scores``;
        ``coef`` receives cw_i times -d loss_i / d s_i."""
        if self.loss == "log":
            return KL.log_score_pass(scores, self.y, self.cw, coef)
        nv, loss, bconst = KS.svr_score_pass(scores, self.y, self.p, self.loss != "epsilon-insensitive", coef)
        c = self.cw[0] if len(self.cw) else 0.0
        coef *= c
        return nv, c * loss, c * bconst

    def shifted(self, t):
        """out_b + t out_d (into a scratch vector)."""
        np.multiply(self.out_d, t, out=self.scores)
        self.scores += self.out_b
        return self.scores


def _direction(run_id, specs, nb, problem, version, w_d, w_b, B, want):
    """Outputs of w_d on every partition; then for ``want`` "ls" the loss
    part of the line search's derivative at 0, for "loss" the loss at
    w_b + w_d, for "none" nothing."""
    states = states_for_direction(run_id, specs, nb, problem, version, w_b, B, _ScoreState)
    out = {"g0": 0.0, "loss": 0.0, "m": 0}
    for spec, st in zip(specs, states):
        chunk = partition(run_id, spec, threads=nb)
        margins(chunk.indptr, chunk.indices, chunk.values, w_d, B, 0.0, st.out_d)
        st.d_version = version
        if want == "ls" and st.loss == EXACT_SEARCH:
            g, st.m = K.svr_breakpoints(st.y, st.out_b, st.out_d, st.p, float(st.cw[0]) if len(st.cw) else 0.0,
                                        0.0, nb, st.kb, st.wb)
            out["g0"] += g
            out["m"] += st.m
        elif want == "ls":
            out["g0"] -= float(st.coef_b @ st.out_d)
        elif want == "loss":
            out["loss"] += st.loss_pass(st.shifted(1.0), st.coef)[1]
    if want == "ls" and problem[4] == EXACT_SEARCH:
        out["answer"] = linesearch.summarize([(st.kb, st.wb, st.m) for st in states], 0, linesearch.ALL, nb)
    return out


def _slope(run_id, specs, nb, problem, version, t):
    """The loss part of the line search's derivative at t: -sum coef_i(t) (X d)_i."""
    s = 0.0
    for st in ready(run_id, specs, problem, version):
        st.loss_pass(st.shifted(t), st.coef)
        s -= float(st.coef @ st.out_d)
    return s


def _move(run_id, specs, nb, problem, version, t, mu, dim, B):
    """w_b += t d on every partition and the cut at w_b + mu (1 - t) d:
    returns the sums of (loss at w_b, 0 errors, violations at the cut point,
    cut constant) and of the partitions' cut vectors."""
    if version == 0:
        states = states_for_direction(run_id, specs, nb, problem, 0, None, B, _ScoreState)
    else:
        states = ready(run_id, specs, problem, version)
    loss = bsum = 0.0
    nv = 0
    a_sum = np.zeros(dim)
    buf = np.empty((nb, dim)) if nb > 1 else np.empty((1, 1))
    s = mu * (1.0 - t)
    for spec, st in zip(specs, states):
        if t != 0.0:
            st.out_b += t * st.out_d
        v, l, b = st.loss_pass(st.out_b, st.coef_b)
        coef = st.coef_b
        if s != 0.0:
            v, _, b = st.loss_pass(st.shifted(s), st.coef)
            coef = st.coef
        st.version = version + 1
        loss += l
        nv += v
        bsum += b
        chunk = partition(run_id, spec, threads=nb)
        nonzero = st.flag.view(bool)
        np.not_equal(coef, 0.0, out=nonzero)
        K.scatter_cut(chunk.indptr, chunk.indices, chunk.values, B, coef, st.ones, st.flag,
                      st.flag, False, nb, buf, a_sum)
    return loss, 0, nv, bsum, a_sum


class DaskScoreData(DaskData):
    """``DaskData`` with the rounds above: ``problem`` = (index, positive
    label or None, C_pos, C_neg, loss, tube p)."""

    DIRECTION = staticmethod(_direction)
    MOVE = staticmethod(_move)

    def _search(self, qa, qb):
        if self.problem[4] == EXACT_SEARCH:
            return super()._search(qa, qb)          # the hinge's exact search, over the rows' two breakpoints
        g0 = qb + sum(r["g0"] for r in self._direction("ls"))

        def slope(t):
            self.ls_rounds += 1
            return sum(self.s.run("line search", _slope, self.problem, self.version, t,
                                  what=f" (iteration {self.version})"))
        return regula_falsi(g0, qa, qb, slope)


DRIVER_THREADS = True      # fit takes driver_threads, the threads of its master QP


def fit(session, problem, n, n_features, params, progress=None, log=None, driver_threads=1):
    """Train one problem with ``params.loss`` (``--loss log``, or a
    regression loss with ``--task r``) by OCAS over the session's partitions.
    ``problem`` = (index, positive label or None for regression, (cost_pos,
    cost_neg)). Same problem, objective and FitResult as the local
    ``solvers.ocas_logistic`` / ``solvers.ocas_regression`` ``fit``, with the
    line-search rounds in ``info``; ``info["primal_C_form"]`` is F."""
    j, pos, cost = problem
    C = params.resolved_C(n)
    p = float(params.epsilon) if pos is None else 0.0
    res = run(session, DaskScoreData, (j, None if pos is None else float(pos), C * float(cost[0]),
                                       C * float(cost[1]), params.loss, p), n, n_features, params, cost,
              progress, log, driver_threads)
    res.info.update(primal_C_form=res.info.get("Q_P", 0.0), C=C)
    return res
