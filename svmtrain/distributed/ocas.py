"""``-s ocas`` on a Dask cluster: the data side of ``solvers.ocas.solve``.

The master loop is the local one (``svmtrain.solvers.ocas.ocas.solve``): the
driver keeps the cut buffer, solves the reduced QP, forms w_c and
d = w_c - w_b and moves w_b. ``DaskData`` implements what the loop asks of
the data, with each worker doing it for its partitions and keeping, per
partition, the n-vectors of the local run (outputs of w_b and d, violator
flags, breakpoints, the partition's previous cut vector) in memory:

* ``line_search``: one round ``direction`` (d goes out, O(dim) per worker;
  each worker computes its outputs X d, its breakpoints and the first
  line-search answer), then the rounds of ``linesearch.search`` (O(1)
  per worker each);
* ``move(t, mu)``: one round ``move`` (t goes out; each worker moves its
  outputs, classifies the next cut point and returns its loss, errors,
  violator count, sum of c_i and its part of the new cut, a dense O(dim)
  vector, computed from scratch or incrementally as locally);
* ``cut``: the sum of those parts (no round).

So an iteration makes 2 + (line-search rounds) rounds and each worker sends
and receives O(dim) numbers, whatever its number of examples.

Failure: a worker's state is tagged with the version of w_b it belongs to
(the number of moves so far). A task that finds a partition's state
missing or of another version raises StateLost; the driver then sends
w_b itself with the next ``direction`` round, which rebuilds the outputs
(X w_b) of every stale partition, and recomputes the iteration (the line
search, or, when the loss happened in ``move``, the outputs of d before
moving again with the same t). The result is the same model up to
rounding.
"""
import numpy as np

from ..errors import SvmtrainError
from ..solvers.ocas import _ocas_kernels as K
from ..solvers.ocas import ocas as local
from ..solvers._common import margins
from ..solvers.base import FitResult, finish_w, kernel_bias
from . import linesearch
from .engine import MAX_RECOVERIES, StateLost
from .partitions import STATE, partition

# ---------------------------------------------------------------- on a worker


class _PartState:
    """One partition's share of an OCAS run (lives in the worker's registry)."""

    def __init__(self, chunk, problem):
        index, pos, c_pos, c_neg, dim = problem
        n = chunk.n_rows
        self.problem = index
        self.y = np.where(chunk.labels == pos, 1.0, -1.0)
        self.cw = np.where(self.y > 0, c_pos, c_neg)
        self.out_b = local._zeros(n)
        self.out_d = local._zeros(n)
        self.viol = local._zeros(n, np.int8)
        self.prev = local._zeros(n, np.int8)
        self.kb = np.empty(n)
        self.wb = np.empty(n)
        self.m = 0
        self.a = local._zeros(dim)       # this partition's last cut vector
        self.version = -1                # out_b = X w_b of this version (number of moves)
        self.d_version = -1              # out_d (and kb, wb) belong to this version's direction
        self.have_cut = False
        self.chain = 0


    def rebuilt(self):
        """Called after out_b was rebuilt from w_b (nothing else depends on it here)."""


def _state(run_id, spec, problem, version, w_b, B, nb, cls=_PartState):
    """The partition's state (a ``cls(chunk, problem)``) at ``version``,
    (re)built when it is missing or stale: fresh at version 0, else from
    ``w_b`` (out_b = X w_b, then its ``rebuilt()``) when given; StateLost
    otherwise."""
    key = (run_id, spec.index)
    st = STATE.get(key)
    if valid(st, problem, version):
        return st
    if version > 0 and w_b is None:
        raise StateLost(None, [spec.index])
    chunk = partition(run_id, spec, threads=nb)
    if st is None or st.problem != problem[0]:
        st = cls(chunk, problem)
        STATE[key] = st
    if version == 0:
        st.out_b.fill(0.0)
        st.out_d.fill(0.0)
        st.d_version = 0
    else:
        margins(chunk.indptr, chunk.indices, chunk.values, w_b, B, 0.0, st.out_b)
        st.rebuilt()
        st.d_version = -1
    st.version = version
    st.have_cut = False
    return st


def states_for_direction(run_id, specs, nb, problem, version, w_b, B, cls=_PartState):
    """The states of ``specs`` for a direction round: when ``w_b`` is not sent
    (version > 0), StateLost naming every stale partition; else each one
    current or rebuilt by ``_state``."""
    if w_b is None and version > 0:
        missing = [s.index for s in specs if not valid(STATE.get((run_id, s.index)), problem, version)]
        if missing:
            raise StateLost(None, missing)
    return [_state(run_id, s, problem, version, w_b, B, nb, cls) for s in specs]


def _direction(run_id, specs, nb, problem, version, w_d, w_b, B, want):
    """Outputs of the direction w_d on every partition; then, for ``want``
    "ls", the breakpoints and the first line-search answer; for "loss" the
    loss at w_b + w_d; for "none" nothing."""
    states = states_for_direction(run_id, specs, nb, problem, version, w_b, B)
    out = {"g0": 0.0, "m": 0, "loss": 0.0}
    for spec, st in zip(specs, states):
        chunk = partition(run_id, spec, threads=nb)
        margins(chunk.indptr, chunk.indices, chunk.values, w_d, B, 0.0, st.out_d)
        st.d_version = version
        if want == "ls":
            g, m = K.breakpoints(st.y, st.cw, st.out_b, st.out_d, 0.0, nb, st.kb, st.wb)
            st.m = m
            out["g0"] += g
            out["m"] += m
        elif want == "loss":
            out["loss"] += K.loss_at(st.y, st.cw, st.out_b, st.out_d, 1.0, nb)
    if want == "ls":
        out["answer"] = linesearch.summarize([(st.kb, st.wb, st.m) for st in states], 0, linesearch.ALL, nb)
    return out


def valid(st, problem, version, direction=False):
    return (st is not None and st.problem == problem[0] and st.version == version
            and (not direction or st.d_version == version))


def ready(run_id, specs, problem, version):
    """The states of ``specs`` at ``version`` with outputs of its direction, or StateLost."""
    states = [STATE.get((run_id, s.index)) for s in specs]
    missing = [s.index for s, st in zip(specs, states) if not valid(st, problem, version, True)]
    if missing:
        raise StateLost(None, missing)
    return states


def _refine(run_id, specs, nb, problem, version, prefix, pshift):
    states = ready(run_id, specs, problem, version)
    return linesearch.summarize([(st.kb, st.wb, st.m) for st in states], prefix, pshift, nb)


def _move(run_id, specs, nb, problem, version, t, mu, dim, B):
    """Move every partition's outputs by t and return the sums of the loss,
    errors, violators and their c_i, and the sum of the partitions' new
    cut vectors."""
    if version == 0:
        states = [_state(run_id, s, problem, 0, None, B, nb) for s in specs]
    else:
        states = ready(run_id, specs, problem, version)
    loss = bsum = 0.0
    nerr = nv = 0
    a_sum = np.zeros(dim)
    buf = np.empty((nb, dim)) if nb > 1 else np.empty((1, 1))
    for spec, st in zip(specs, states):
        st.viol, st.prev = st.prev, st.viol
        l, e, v, b, nch = K.update_outputs(st.y, st.cw, st.out_b, st.out_d, t, mu, st.viol, st.prev, nb)
        st.version = version + 1
        loss += l
        nerr += e
        nv += v
        bsum += b
        chunk = partition(run_id, spec, threads=nb)
        delta = st.have_cut and nch < v and st.chain < local.DELTA_REFRESH
        if delta:
            st.chain += 1
        else:
            st.a.fill(0.0)
            st.chain = 0
        K.scatter_cut(chunk.indptr, chunk.indices, chunk.values, B, st.y, st.cw, st.viol, st.prev,
                      delta, nb, buf, st.a)
        st.have_cut = True
        a_sum += st.a
    return loss, nerr, nv, bsum, a_sum


# ---------------------------------------------------------------- the driver


class DaskData:
    """The data side of ``solvers.ocas.solve`` over a Session's partitions
    (see the module doc). ``problem`` = (index, positive label, c_pos, c_neg)."""

    DIRECTION = staticmethod(_direction)     # the worker sides of the rounds
    MOVE = staticmethod(_move)

    def __init__(self, session, problem, dim, B):
        self.s = session
        self.problem = tuple(problem) + (dim,)
        self.dim = dim
        self.B = B
        self.version = 0
        self.w_b = None
        self.w_d = None
        self.rebuild = False     # send w_b with the next direction round
        self.a = None
        self.ls_rounds = 0

    def _lost(self, e, where):
        self.s.notify(f"iteration {self.version}: the state of partition(s) "
                      f"{', '.join(self.s.specs[i].display for i in e.indices)} is gone "
                      f"(worker lost); recomputing {where}")
        self.rebuild = True

    def _retrying(self):
        for _ in range(MAX_RECOVERIES):
            yield
        raise SvmtrainError(f"giving up after {MAX_RECOVERIES} worker losses in one OCAS iteration")

    def _direction(self, want):
        w_b = self.w_b if self.rebuild else None
        res = self.s.run("direction", self.DIRECTION, self.problem, self.version, self.w_d, w_b, self.B, want,
                         what=f" (iteration {self.version})")
        self.rebuild = False
        return res

    def _search(self, qa, qb):
        res = self._direction("ls")
        G = qb
        m = 0
        for r in res:
            G += r["g0"]
            m += r["m"]

        def ask(prefix, pshift):
            return self.s.run("line search", _refine, self.problem, self.version, prefix, pshift,
                              what=f" (iteration {self.version})")
        t, rounds = linesearch.search([r["answer"] for r in res], G, m, qa, ask)
        self.ls_rounds += rounds
        return t

    def line_search(self, w_b, w_d, qa, qb):
        self.w_b = w_b.copy()
        self.w_d = w_d.copy()
        for _ in self._retrying():
            try:
                return self._search(qa, qb)
            except StateLost as e:
                self._lost(e, "the line search")

    def loss_at_end(self, w_b, w_d):
        self.w_b = w_b.copy()
        self.w_d = w_d.copy()
        for _ in self._retrying():
            try:
                return sum(r["loss"] for r in self._direction("loss"))
            except StateLost as e:
                self._lost(e, "the loss at w_c")

    def move(self, t, mu):
        for _ in self._retrying():
            try:
                res = self.s.run("move", self.MOVE, self.problem, self.version, t, mu, self.dim, self.B,
                                 what=f" (iteration {self.version})")
                break
            except StateLost as e:
                self._lost(e, "the outputs, then the move")
                if self.version > 0:
                    self._recompute_outputs()
        self.version += 1
        loss = bsum = 0.0
        nerr = nv = 0
        self.a = np.zeros(self.dim)
        for l, e, v, b, a in res:
            loss += l
            nerr += e
            nv += v
            bsum += b
            self.a += a
        return loss, nerr, nv, bsum

    def _recompute_outputs(self):
        for _ in self._retrying():
            try:
                return self._direction("none")
            except StateLost as e:
                self._lost(e, "the outputs")

    def cut(self):
        return self.a


DRIVER_THREADS = True      # fit takes driver_threads, the threads of its master QP


def fit(session, problem, n, n_features, params, progress=None, log=None, driver_threads=1):
    """Train one binary problem (the hinge loss) by OCAS over the session's partitions.

    ``problem`` = (index, positive label, (cost_pos, cost_neg)); ``n`` rows
    in all. Returns a FitResult as ``solvers.ocas.fit`` does, with the
    line-search rounds in ``info``.
    """
    j, pos, cost = problem
    C = params.resolved_C(n)
    return run(session, DaskData, (j, float(pos), C * float(cost[0]), C * float(cost[1])), n, n_features,
               params, cost, progress, log, driver_threads)


def run(session, data_class, problem, n, n_features, params, cost, progress, log, driver_threads):
    """``solvers.ocas.solve`` over ``data_class(session, problem, dim, B)``
    (``DaskData`` or a subclass); the FitResult with the line-search rounds."""
    local.check_params(params, cost)
    dim = n_features + 1
    if n == 0:
        return FitResult(w=finish_w(np.zeros(dim), params), n_iter=0, objective=0.0, converged=True,
                         info={"exit": local.EXIT_EMPTY, "history": []})
    data = data_class(session, problem, dim, kernel_bias(params))
    res = local.solve(data, n, dim, params, progress, log, driver_threads)
    res.info["line_search_rounds"] = data.ls_rounds
    return res
