"""``-s ocas --multiclass cs`` on a Dask cluster: Crammer-Singer OCAS over partitions.

The master loop is the local one (``solvers.ocas.solve``) and the problem
that of :mod:`svmtrain.solvers.ocas.ocas_cs`: the driver keeps the cut buffer's
numbers (offsets, Gram matrix, duals) and solves the reduced QP. What the
in-memory :class:`~svmtrain.solvers.ocas.ocas_cs.CrammerSingerForm` keeps per
row stays on the workers, per partition (``_PartCS``): the class indices
and C_i, the scores S_b, S_d and coefficients G_b, G_c, G_d, G_new
(n_p x M each), the line search's breakpoints and the partition's share
of every cut (one class index per row). A product X~ X~' G is the two
passes of ``--stream`` done by the workers: each sums X~_p' G_p over its
partitions (``scatter_rows``), the driver adds those (M, d+1) arrays and
sends the sum back, and each computes its scores X~_p W (``row_scores``)
and its parts of the sums the loop needs. An iteration:

* ``move``: one round (t goes out; the loss, errors, violators, their C_i
  and |W_b|^2 come back);
* ``combine``: a ``scatter`` round (alpha goes out, W_c's part comes
  back) and a ``scores`` round (W_c goes out; |W_c|^2, |W_d|^2, W_b.W_d
  and the first line-search answer, or with ``--ocas-method cp`` the loss
  at W_c, come back), then the rounds of ``linesearch.search``;
* a new cut: a ``scatter`` and a ``scores`` round (its Gram row comes back).

So each worker sends and receives O((d+1) M + k) numbers per round (k
cuts), never per-row data; the driver holds no n-sized array. The sums
over workers are taken in another order than in memory, so the iterates
are the local run's up to rounding.

A lost worker takes its partitions' scores, coefficients and cuts with it,
which cannot be rebuilt from the driver's numbers: the run then stops with
an error (SvmtrainError) saying so, where binary OCAS recomputes.
"""
import time

import numpy as np

from ..errors import SvmtrainError
from ..solvers.ocas import _ocas_cs_kernels as K
from ..solvers.ocas import _ocas_kernels as KO
from ..solvers.base import kernel_bias
from ..solvers.ocas.ocas import QP_LIBOCAS, _Cuts, _cut_limit, _zeros, check_params, solve
from ..solvers.ocas.ocas_cs import class_costs, class_indices, cs_model, cut_dtype
from . import linesearch
from .engine import StateLost
from .partitions import STATE, partition

TAG = "ocas-cs"          # marks this solver's per-partition states
FIRST_CUTS = 16          # a partition's cut rows at first (the store doubles up to --cut-buffer)

# ---------------------------------------------------------------- on a worker


class _PartCS:
    """One partition's share of a Crammer-Singer OCAS run (in the worker's registry)."""

    def __init__(self, chunk, problem):
        _, order, costs, cut_limit = problem
        n, M = chunk.n_rows, len(order)
        self.problem = TAG
        self.yi = class_indices(chunk.labels, order)
        self.cw = np.asarray(costs)[self.yi]
        self.S_b, self.S_d = _zeros((n, M)), _zeros((n, M))
        self.G_b, self.G_c, self.G_d, self.G_new = (_zeros((n, M)) for _ in range(4))
        self.yhat = np.full(n, -1.0)
        self.kb = np.empty(n * (M - 1))
        self.wb = np.empty(n * (M - 1))
        self.m = 0
        self.cut_limit = cut_limit
        self.store = np.empty((min(FIRST_CUTS, cut_limit), n), cut_dtype(M))

    def put_cut(self, slot):
        """Store the last cut point's class indices (yhat) as cut ``slot``."""
        if slot >= self.store.shape[0]:
            cap = min(self.cut_limit, max(2 * self.store.shape[0], slot + 1))
            new = np.empty((cap, self.store.shape[1]), self.store.dtype)
            new[:self.store.shape[0]] = self.store
            self.store = new
        self.store[slot] = self.yhat


def _states(run_id, specs, nb, problem, create=False):
    """The partitions' states; with ``create`` new ones (the first move) where
    missing, else StateLost naming the partitions whose state is gone."""
    out, missing = [], []
    for s in specs:
        st = STATE.get((run_id, s.index))
        if st is None or st.problem != TAG:
            if not create:
                missing.append(s.index)
                continue
            st = _PartCS(partition(run_id, s, threads=nb), problem)
            STATE[(run_id, s.index)] = st
        out.append(st)
    if missing:
        raise StateLost(None, missing)
    return out


def _move(run_id, specs, nb, problem, first, t, s):
    """Every partition's S_b += t S_d, loss, errors and next cut (``K.move``
    at the scores S_b + s S_d), then G_b += t G_d. Returns the sums of
    (loss, errors, violators, their C_i, G_b . S_b)."""
    tot = [0.0, 0, 0, 0.0, 0.0]
    for st in _states(run_id, specs, nb, problem, create=first):
        loss, nerr, nv, bsum = K.move(st.yi, st.cw, st.S_b, st.S_d, t, s, st.yhat, st.G_new, nb)
        wb_sq = KO.shift_rows(st.G_b.reshape(-1), t, st.G_d.reshape(-1), st.S_b.reshape(-1),
                              np.zeros(0), 0.0, 0.0, nb)
        for q, v in enumerate((loss, nerr, nv, bsum, wb_sq)):
            tot[q] += v
    return tot


def _scatter(run_id, specs, nb, problem, which, alpha, k, dim, B):
    """(X~' G)' summed over the partitions ((M, dim), class-major) for G =
    G_c (formed first from the cuts' ``alpha``, ``which`` "c"), G_new ("new")
    or G_b ("b")."""
    states = _states(run_id, specs, nb, problem)
    Wt = np.zeros((len(problem[1]), dim))
    for spec, st in zip(specs, states):
        if which == "c":
            K.combine(st.store, alpha, k, st.yi, st.cw, st.G_c, nb)
        G = {"c": st.G_c, "new": st.G_new, "b": st.G_b}[which]
        c = partition(run_id, spec, threads=nb)
        K.scatter_rows(c.indptr, c.indices, c.values, B, G, Wt, nb)
    return Wt


def _scores(run_id, specs, nb, problem, which, Wt, B, want, slot, k):
    """S_d = X~ W on every partition, then for ``which`` "c" (W = W_c) the
    direction and the sums of (G_c.S_c, G_d.S_d, G_b.S_d), with ``want``
    "ls" the breakpoints and the first line-search answer, with "loss" the
    loss at W_c; for "new" (W the new cut's) the cut's class indices go to
    ``slot`` and its products with cuts 0..k-1 are summed."""
    states = _states(run_id, specs, nb, problem)
    out = {"dir": np.zeros(3), "g0": 0.0, "m": 0, "loss": 0.0, "hrow": np.zeros(k)}
    hrow = np.empty(k)
    for spec, st in zip(specs, states):
        c = partition(run_id, spec, threads=nb)
        K.row_scores(c.indptr, c.indices, c.values, B, Wt, st.S_d, nb)
        if which == "new":
            st.put_cut(slot)
            K.gram(st.store, k, st.yi, st.cw, st.S_d, hrow, nb)
            out["hrow"] += hrow
            continue
        out["dir"] += K.directions(st.G_c, st.G_b, st.S_b, st.G_d, st.S_d, nb)
        if want == "ls":
            g, st.m = K.breakpoints(st.yi, st.cw, st.S_b, st.S_d, 0.0, nb, st.kb, st.wb)
            out["g0"] += g
            out["m"] += st.m
        elif want == "loss":
            out["loss"] += K.loss_at(st.yi, st.cw, st.S_b, st.S_d, 1.0, nb)
    if which == "c" and want == "ls":
        out["answer"] = linesearch.summarize([(st.kb, st.wb, st.m) for st in states], 0, linesearch.ALL, nb)
    return out


def _refine(run_id, specs, nb, problem, prefix, pshift):
    states = _states(run_id, specs, nb, problem)
    return linesearch.summarize([(st.kb, st.wb, st.m) for st in states], prefix, pshift, nb)


# ---------------------------------------------------------------- the driver


class DaskCrammerSinger:
    """The form and data side of ``solvers.ocas.solve`` for one
    Crammer-Singer problem over a Session's partitions (see the module doc):
    the methods of ``ocas_cs.CrammerSingerForm``, each one or two rounds,
    and its reduced QP (msvmocas's, ``QP_LIBOCAS``).
    ``problem`` = (tag, label order, C per class, cut limit)."""

    reduced_qp = QP_LIBOCAS

    def __init__(self, session, problem, dim, B, cut_limit, method):
        M = len(problem[1])
        self.s, self.problem, self.dim, self.B = session, problem, dim, B
        self.want = "ls" if method == "ocas" else "loss"
        # the cut rows live on the workers: here only their numbers (H, b, alpha)
        self.cuts = _Cuts((0,), cut_limit, 1, mergeable=False, dtype=cut_dtype(M))
        self.first = True
        self.wb_sq = 0.0
        self.comb = None
        self.ls_rounds = 0

    def _run(self, kind, fn, *args):
        try:
            return self.s.run(kind, fn, self.problem, *args, what=f" ({kind})")
        except StateLost as e:
            names = ", ".join(self.s.specs[i].display for i in e.indices)
            raise SvmtrainError(f"the state of partition(s) {names} is gone (worker lost): -s ocas --multiclass cs "
                                "keeps its per-row scores and cuts on the workers and cannot rebuild them; "
                                "train again") from None

    def _product(self, which, alpha=None, k=0):
        """W' = (X~' G)' for G_which, summed over the workers."""
        parts = self._run("scatter", _scatter, which, alpha, k, self.dim, self.B)
        Wt = parts[0]
        for p in parts[1:]:
            Wt += p
        return Wt

    def start_at(self, w0):
        from ..errors import ParameterError
        raise ParameterError("-s ocas --multiclass cs does not take a starting point (-C, warm start)")

    def move(self, t, mu):
        res = self._run("move", _move, self.first, t, mu * (1.0 - t))
        self.first = False
        loss, nerr, nv, bsum, wb_sq = (sum(r[q] for r in res) for q in range(5))
        self.wb_sq = wb_sq
        return loss, int(nerr), int(nv), bsum

    def moved(self, t, scc):
        """|W_b|^2 after ``move`` (summed by its round)."""
        return self.wb_sq

    def combine(self):
        c = self.cuts
        Wt = self._product("c", c.alpha[:c.k].copy(), c.k)
        self.comb = self._run("scores", _scores, "c", Wt, self.B, self.want, -1, 0)
        scc, qa, qb = np.sum([r["dir"] for r in self.comb], axis=0)
        return float(scc), float(qa), float(qb)

    def line_search(self, qa, qb):
        G = qb + sum(r["g0"] for r in self.comb)
        m = sum(r["m"] for r in self.comb)

        def ask(prefix, pshift):
            return self._run("line search", _refine, prefix, pshift)
        t, rounds = linesearch.search([r["answer"] for r in self.comb], G, m, qa, ask)
        self.ls_rounds += rounds
        return t

    def loss_at_end(self):
        return sum(r["loss"] for r in self.comb)

    def add_cut(self, bval, it):
        def fill(slot, k, hrow):
            Wt = self._product("new")
            res = self._run("scores", _scores, "new", Wt, self.B, None, slot, k)
            hrow[:k] = np.sum([r["hrow"] for r in res], axis=0)
        return self.cuts.add(fill, bval, it)

    def w(self):
        """W_b = X~' G_b, (d+1) x M (a new array)."""
        return self._product("b").T.copy()


def train_model(session, order, n, d, params, progress=None, log=None, driver_threads=1):
    """The Crammer-Singer LinearModel of the session's partitions (n rows,
    d features) over the classes ``order``, as
    :func:`svmtrain.solvers.ocas.ocas_cs.train_model` returns it in memory
    (``info`` also has the line-search rounds)."""
    check_params(params, (1.0, 1.0))
    t0 = time.perf_counter()
    dim = d + 1
    costs, C = class_costs(order, params, n)
    problem = (TAG, np.asarray(order, np.float64), costs, _cut_limit(params))
    form = DaskCrammerSinger(session, problem, dim, kernel_bias(params), _cut_limit(params), params.ocas_method)
    result = solve(form, n, dim, params, progress, log, driver_threads, t0, form=form)
    result.info["line_search_rounds"] = form.ls_rounds
    return cs_model(result, order, d, params, C)
