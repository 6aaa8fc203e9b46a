"""``-s sgd`` on a Dask cluster: iterative parameter mixing.

SVM-SGD, SGD-QN and FOLOS (:mod:`svmtrain.solvers.sgd.sgd`) make one step per
example; one Dask round per step is out of the question. So each epoch is
one round of *iterative parameter mixing* (R. McDonald, K. Hall, G. Mann,
"Distributed training strategies for the structured perceptron", NAACL
2010; its one-shot form, averaging once at the end, is M. Zinkevich,
M. Weimer, A. Smola, L. Li, "Parallelized stochastic gradient descent",
NIPS 2010):

1. the driver sends the current state to every worker: w (O(dim)), b, and
   the rule's state: SGD-QN's diagonal D (O(dim)) and its count r of
   D-updates; FOLOS's pending proximal steps are always flushed into w at
   the end of an epoch, and BOTTOU's scale a is folded into w, so every
   epoch starts from an explicit w (a = 1, fresh FOLOS stamps P = 1,
   Q = 0, SGD-QN's regularisation counter at ``skip``);
2. each partition (a *shard*) makes one step on each of its n_p rows, in a
   random order drawn from a generator seeded by (a key derived from
   --seed, the epoch, the partition index), with the in-memory kernel
   (``_sgd_kernels.sgd_steps``), from that state; SGD-QN then applies the
   regularisation still pending since its last one (fewer than ``skip``
   steps' worth), so no step's share of lambda/2 |w|^2 is lost;
3. every worker returns sum_p n_p w_p, sum_p n_p b_p, sum_p n_p D_p and
   sum_p n_p r_p over its partitions (O(dim) numbers up, whatever n_p);
   the driver divides by n: the new state is the average of the
   partitions' end states weighted by their rows.

Step numbers. In memory, epoch e makes the steps t = e n, ..., (e+1) n - 1,
eta_t = eta0 / (1 + lambda eta0 t). Here shard p makes n_p steps per epoch,
and they are numbered as if its rows were spread over the whole epoch:
local step k of epoch e is step e n + k n / n_p (the kernel's step count
starts at e n_p and its decay is lambda eta0 n / n_p). So the step count
advances by n per epoch, as in memory, the step sizes of epoch e span the
in-memory epoch's, and after E epochs they are the in-memory run's.
Interleaving the shards' steps (shard p's k-th step numbered e n + k P + p
for P equal shards) would be the same up to the offset p, which only
matters within the first epoch. The alternative, each shard numbering its
steps as if it were the whole data set (local step k of epoch e is step
e n_p + k: steps P times as long), gives each shard's chain the in-memory
schedule on n_p rows; measured against it on a9a (C = 0.1 and 1, -T 10 and
30, seeds 1 and 2, every rule), the spread numbering ended within 0.35-1.7 %
of the optimum on 4 equal partitions where the other ended within
0.5-5.5 %, and was as good or better on 3 unequal ones (10/20/70 %):
averaging P models is a variance reduction, and the longer steps bring
back the variance it removes. (Row weights are the right mixing weights in
this regime, where each epoch's steps are long enough for every shard to
come close to the minimiser of lambda/2 |w|^2 plus its own mean loss: the
row-weighted average of those minimisers is close to the whole problem's.)

What it guarantees. f is convex and every shard steps on its own rows, so
mixing is exact only in the limit of short steps; otherwise the result is
an average of models that each saw a part of the data, which is as good as
in-memory SGD when every partition is a random sample of the rows (a9a cut
into 4 consecutive parts of the file: 0.35-1.0 % above the optimum at C =
0.1, -T 10, where the in-memory run's last iterate is 1.6-2.4 % above; the
averaging smooths SGD's last iterate), and can be far off when the
partitions differ: a9a sorted by label into 2 partitions (one class each)
stays 58-80 % above the optimum after 10 epochs and 56 % after 300. Shuffle
the rows before splitting, or train such data with -s ocas or -s bmrm,
whose distributed runs are the in-memory ones. With one partition the run
*is* the in-memory algorithm: the same eta0, the same step sizes, every
epoch one step per row in a random order; only the orders differ (drawn
per partition and epoch here, from one generator in memory) and, for
SGD-QN, the regularisation pending at an epoch's end is applied there
rather than at the next skip boundary. With the in-memory run given the
same orders (``epoch_order``), w agrees to rounding for bottou and fobos
(tested), and for SGD-QN within 2.5 % of its largest weight, the objective
within 0.1 % (heart_scale, 5 epochs, tested); with its own orders the
objective differs by the seed-to-seed spread of SGD's last iterate (a few
percent on a9a).

eta0 is SVM-SGD's pilot (:func:`svmtrain.solvers.sgd.sgd.pilot_eta0`), run on
the driver on the rows the in-memory run's pilot uses: the driver draws
min(n, 1000) row numbers from ``np.random.default_rng(--seed)`` exactly as
in memory (over the rows of all partitions in order) and gathers them in
one round (``sample``), so eta0 is the in-memory run's, bit for bit. skip
(SGD-QN) is computed from the whole data set's nonzeros, as in memory.

The objective f(w, b) (+ l1 |w|_1 for fobos) is one round of loss sums
(as ``distributed.pegasos.objective``): after every epoch with -e, and
once at the end (not again when -e just computed it). So after loading a
run of E epochs makes E + 2 rounds (the pilot's sample, the epochs, the
objective), 2 E + 1 with -e.

Tasks are pure functions of their arguments (the partition's rows and the
state sent), so a lost worker only costs the rescheduling of its task,
and the result does not depend on which worker holds which partition
(except for the rounding of the sums of the averages, taken per worker).
"""
import math
from types import SimpleNamespace

import numpy as np

from ..data.dataset import Chunk, concat_chunks, take_rows
from ..solvers.sgd import _sgd_kernels as K
from ..solvers.sgd import sgd as local
from ..solvers.base import FitResult, finish_w, kernel_bias, with_defaults
from ..solvers.sgd.pegasos import end_epoch
from .partitions import partition
from .pegasos import by_partition, loss_problem, row_offsets, warn_not_reached
from .pegasos import objective as loss_objective

DEFAULTS = local.DEFAULTS


def _targets(chunk, pos, regression):
    """y of a partition's rows: the targets (regression), else +1 for ``pos`` and -1 for the others."""
    if regression:
        return np.ascontiguousarray(chunk.labels, np.float64)
    return np.where(chunk.labels == pos, 1.0, -1.0)


# ---------------------------------------------------------------- on a worker


def _sample(run_id, specs, nb, rows):
    """The rows ``rows`` (one array of local row numbers per spec) of this
    worker's partitions, as [(partition index, labels, indptr, indices, values)]."""
    out = []
    for spec, r in zip(specs, rows):
        if len(r):
            c = take_rows(partition(run_id, spec, threads=nb), r)
            out.append((spec.index, c.labels, c.indptr, c.indices, c.values))
    return out


def _epoch(run_id, specs, nb, problem, rule, w, b, D, r, epoch, n, key):
    """One epoch of ``rule`` on each of this worker's partitions from the
    state (w, b, D, r); returns the row-weighted sums of the partitions'
    end states (w, b, D or None, r) and their rows (see the module doc)."""
    pos, regression, loss, p = problem
    code, eta0, lam, l1, B, unreg_bias, skip = rule
    d1 = len(w)
    one = np.ones(1)
    w_sum = np.zeros(d1)
    D_sum = np.zeros(d1) if code == K.SGDQN else None
    b_sum = r_sum = 0.0
    rows = 0
    for spec in specs:
        c = partition(run_id, spec, threads=nb)
        m = c.n_rows
        if m == 0:
            continue
        y = _targets(c, pos, regression)
        order = epoch_order(key, epoch, spec.index, m)
        v = w.copy()
        Dp = D.copy() if code == K.SGDQN else one
        pst = np.ones(d1) if code == K.FOBOS else one
        qst = np.zeros(d1) if code == K.FOBOS else one
        state = K.new_state(skip)
        state[K.BIAS] = b
        state[K.R_COUNT] = r
        # local step k is step e n + k s, s = n / m: eta0 / (1 + lambda eta0 s (e m + k))
        # (with m = n exactly the in-memory run's decay and step count)
        state[K.T] = float(epoch * m)
        decay = lam * eta0 * (n / m)
        K.sgd_steps(c.indptr, c.indices, c.values, y, order, code, eta0, decay, lam, l1, B, unreg_bias,
                    loss, p, skip, v, Dp, pst, qst, state)
        if code == K.SGDQN:
            _flush_regularisation(v, Dp, state, eta0 / (1.0 + decay * (state[K.T] - 1.0)), lam, skip)
        w_sum += m * K.current_w(code, v, pst, qst, state)
        b_sum += m * state[K.BIAS]
        r_sum += m * state[K.R_COUNT]
        if D_sum is not None:
            D_sum += m * Dp
        rows += m
    return w_sum, b_sum, D_sum, r_sum, rows


def _flush_regularisation(w, D, state, eta, lam, skip):
    """SGD-QN: apply the regularisation of the steps made since its last
    one (skip - COUNT of them; ``_sgdqn_step`` applies skip steps' worth
    every skip steps), at the last step's eta."""
    pending = skip - state[K.COUNT]
    if pending > 0.0:
        w *= np.maximum(0.0, 1.0 - pending * eta * lam * D)
        state[K.COUNT] = skip


# ---------------------------------------------------------------- the driver


def draws(seed, n):
    """(the pilot's row numbers, the key of the epochs' orders) of a run on
    n rows: the in-memory run's pilot rows (the first draw of
    ``np.random.default_rng(seed)``, as in ``sgd.pilot_eta0``), then the
    key, the next draw (``integers(2**63)``) of the same generator."""
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(n, size=min(n, local.PILOT_ROWS), replace=False)).astype(np.int64)
    return rows, int(rng.integers(2 ** 63))


def epoch_order(key, epoch, index, m):
    """The order in which partition ``index`` (m rows) makes its steps in epoch ``epoch`` (from 0)."""
    return np.random.default_rng([key, epoch, index]).permutation(m).astype(np.int64)


def pilot(session, problem, rows, offsets, d1, lam, B, unreg_bias, loss_name):
    """eta0 by ``sgd.pilot_eta0`` on the rows ``rows`` (numbers over all
    partitions in order), gathered in one ``sample`` round: the in-memory
    pilot's eta0 when they are its rows."""
    pos, regression, code, p = problem
    wanted = by_partition(offsets, rows)
    empty = np.empty(0, np.int64)
    got = session.run("sample", _sample, only=set(wanted),
                      per_group=lambda specs: ([wanted.get(sp.index, empty) for sp in specs],),
                      what=" (the pilot's sample)")
    pieces = {}
    for res in got:
        for index, labels, indptr, indices, values in res:
            pieces[index] = Chunk(labels=labels, indptr=indptr, indices=indices, values=values,
                                  qid=np.zeros(len(labels), np.int64))
    sample = concat_chunks([pieces[i] for i in sorted(pieces)])
    ys = _targets(sample, pos, regression)
    # the sample has at most PILOT_ROWS rows: pilot_eta0 steps on all of them, in order (its
    # generator is not used then)
    return local.pilot_eta0(sample, ys, d1, lam, B, unreg_bias, code, loss_name, p, np.random.default_rng(0))


def fit(session, problem, n, n_features, params, progress=None, log=None):
    """Train one problem by ``params.update``'s rule with iterative
    parameter mixing over the session's partitions (see the module doc).
    ``problem`` = (index, positive label or None (regression: the labels
    are the targets), class costs). Same parameters, defaults and
    FitResult as ``solvers.sgd.fit`` (info: epochs, steps, lambda, eta0,
    t0, update), with ``info["mixing"] = "iterative"``; the objective is
    f(w, b) of the returned model (+ l1 |w|_1 with fobos)."""
    _, pos, cost = problem
    params = with_defaults(params, DEFAULTS)
    local.check_params(params, cost)
    problem = loss_problem(pos, params)
    d1 = n_features + 1
    kernel_rule, key = _kernel_rule(session, problem, n, d1, params)
    rule, eta0, lam, l1, B, unreg, skip = kernel_rule

    w = np.zeros(d1)
    b = 0.0
    D = np.ones(d1) if rule == K.SGDQN else None
    r = K.new_state(skip)[K.R_COUNT]
    t = 0

    def objective(w_, b_):
        f = loss_objective(session, problem, w_, b_, B, lam, n)
        return f + l1 * float(np.abs(w_).sum()) if l1 else f

    prev_obj = math.inf
    converged = params.eps is None
    epoch = 0
    for epoch in range(params.epochs):
        got = session.run("epoch", _epoch, problem, kernel_rule, w, b, D, r, epoch, n, key,
                          what=f" (epoch {epoch + 1})")
        w, b, r, D = _mix(got, d1, n, D is not None)
        t += n
        stop, prev_obj = end_epoch(epoch, progress, params, log, prev_obj, objective, lambda: (w, b))
        if stop:
            converged = True
            break
    warn_not_reached(log, converged, params.eps, params.epochs)
    obj = prev_obj if params.eps is not None else objective(w, b)
    return FitResult(w=finish_w(w, params), b=b, n_iter=t, objective=obj, converged=converged,
                     info={"epochs": epoch + 1, "steps": t, "lambda": lam, "eta0": eta0,
                           "t0": 1.0 / (lam * eta0), "update": params.update, "mixing": "iterative"})


def _kernel_rule(session, problem, n, d1, params):
    """(the epochs' rule tuple with the pilot's eta0 and SGD-QN's skip, the key of their orders)."""
    lam = params.resolved_lambda(n)
    B = kernel_bias(params)
    unreg = bool(params.unreg_bias)
    l1 = float(params.l1 or 0.0)
    rule = K.RULES[params.update]
    nnz = sum(m["nnz"] for m in session.meta)
    skip = float(local.sgdqn_skip(SimpleNamespace(nnz=nnz, n_rows=n), d1))
    offsets = row_offsets(session)
    rows, key = draws(params.seed, n)
    eta0 = pilot(session, problem, rows, offsets, d1, lam, B, unreg, params.loss)
    return (rule, eta0, lam, l1, B, unreg, skip), key


def _mix(got, d1, n, with_D):
    """(w, b, r, D or None): the partitions' end states averaged, weighted by rows, summed in ``got``'s order."""
    w_sum = np.zeros(d1)
    b_sum = r_sum = 0.0
    D_sum = np.zeros(d1) if with_D else None
    for ws, bs, Ds, rs, _ in got:
        w_sum += ws
        b_sum += bs
        r_sum += rs
        if D_sum is not None:
            D_sum += Ds
    return w_sum / n, b_sum / n, r_sum / n, (D_sum / n if with_D else None)
