"""``-s asset``: ASSET (Lee and Wright, ICPRAM 2012) -- kernel SVMs through
low-dimensional feature maps and robust stochastic approximation.

1. A feature map (``svmtrain.mercer.feature_maps``; ``--approx nystrom`` with
   ``-D`` landmarks, or ``--approx fourier`` with ``-D`` random features)
   turns the kernel problem into a linear one, (PL), on d-dimensional rows
   V_i. The map is built once per run and shared by all one-vs-rest
   problems; the rows are computed once and cached (float32) when they
   fit in memory (:func:`cache_budget`), otherwise recomputed block by
   block of drawn rows on every pass.
2. (PL) is solved by Algorithm 1 (``_asset_kernels.asset_steps``): steps
   D_X / (D_G sqrt(j)) with D_X the radius of the feasible set
   {|gamma| <= 1/sqrt(lambda), |b| <= b_box} and D_G^2 estimated from
   ``DG_SAMPLES`` sub-gradients at (0, 0); projection; the eta-weighted
   average of the iterates from step rho N on (``AVERAGE_FROM`` = rho).
   ``--strongly-convex`` runs ASSET* instead: step 1/(lambda j), no
   unregularised bias, no averaging (the last iterate is returned).
   ``--inner pegasos|dcd`` instead hands the cached rows (as a CSR Chunk)
   to the linear solver of that name, with all of its flags.
3. The model predicts without the training set: a
   :class:`svmtrain.models.fourier.FourierModel` (z(x) W + b), or for Nystrom
   a :class:`svmtrain.models.kernel.KernelModel` whose support vectors are
   the landmarks with coefficients alpha_S = Q_d D_d^{-1/2} gamma (the
   paper's section 2.4), writable in LIBSVM's format.

Bias: Algorithm 1 always learns the paper's unregularised intercept b
(so ``-R`` is accepted and changes nothing); ASSET* has none. ``-B``
adds a regularised constant feature in both (its weight times B is
folded into the model's intercept). b_box ("sufficiently large B") is
1 + R / sqrt(lambda) with R the largest feature-row norm among the
D_G samples: with both classes present an optimal |b| never exceeds
1 + max_i |V_i.gamma| <= 1 + R |gamma|.
"""
import math

import numpy as np

from ...data.dataset import Chunk
from ...data.memory import available_bytes
from ...errors import ParameterError
from ...mercer.feature_maps import FourierMap, NystromMap, build_map
from ...models.fourier import FourierModel
from . import _asset_kernels as K
from .._common import sq_norm
from ..base import FitResult, for_problem, with_defaults

# Measured on a9a (RBF, C = 100; scripts/exp_asset_defaults.py, tables in
# docs/solvers.md): past 5 epochs test accuracy gains about the seeds' spread
# (0.1-0.2 points to 20 epochs); the averaged iterate beats the last one by
# 1-10 points; 1e-8 drops only the rounding-level eigenvalues of duplicated
# landmarks; s = 512 as the paper. rho = 0.5 is the paper's choice, not a flag.
DEFAULTS = {"approx": "nystrom", "dim": 512, "eig_threshold": 1e-8, "epochs": 5, "average": True,
            "kernel_type": 2}
AVERAGE_FROM = 0.5      # rho: average the iterates from step rho N on
DG_SAMPLES = 1000       # M, the sub-gradients sampled to estimate D_G
FEATURE_DTYPE = np.float32
CACHE_MAX_BYTES = 4 << 30
STREAM_STEPS = 8192     # steps per block of freshly mapped rows when not cached


def cache_budget():
    """Bytes the feature cache may take: half the available memory, at most CACHE_MAX_BYTES."""
    return min(CACHE_MAX_BYTES, available_bytes() // 2)


class Features:
    """The rows V_i of a feature map over ``data``: cached, or mapped on demand.

    What :func:`fit_asset` asks of its features (also provided by the
    streamed :class:`svmtrain.solvers.asset.stream_asset.StreamedFeatures`):
    ``n``, ``dim``, ``cached``, ``note``, ``rows``, ``margins``,
    ``total_steps`` and ``epoch``.
    """

    def __init__(self, fmap, data, budget=None):
        self.fmap = fmap
        self.data = data
        self.n = data.n_rows
        self.dim = fmap.dim
        need = self.n * self.dim * np.dtype(FEATURE_DTYPE).itemsize
        self.cached = need <= (cache_budget() if budget is None else budget)
        self.F = fmap.transform(data, dtype=FEATURE_DTYPE) if self.cached else None
        self.note = "features cached" if self.cached else "features recomputed per block (cache too small)"

    def rows(self, rows):
        """float[len(rows), d]: the feature rows of ``rows``."""
        if self.cached:
            return self.F[rows]
        return self.fmap.transform(self.data, rows=rows, dtype=FEATURE_DTYPE)

    def total_steps(self, k, epochs):
        """Steps of a run of ``epochs``: ceil(n / k) per epoch."""
        return max(1, math.ceil(self.n / k)) * epochs

    def epoch(self, rng, k, max_steps):
        """(F, positions, rows) blocks of one epoch's steps: ceil(n / k) steps
        of k rows drawn i.i.d. (``max_steps`` is never less here)."""
        draws = rng.integers(0, self.n, size=max(1, math.ceil(self.n / k)) * k)
        return self.blocks(draws, k)

    def blocks(self, draws, k):
        """(F, positions, rows) to run the steps of ``draws`` on, block by block."""
        if self.cached:
            yield self.F, draws, None
            return
        step = STREAM_STEPS * k
        for lo in range(0, len(draws), step):
            rows = draws[lo:lo + step]
            yield self.fmap.transform(self.data, rows=rows, dtype=FEATURE_DTYPE), \
                np.arange(len(rows), dtype=np.int64), rows

    def margins(self, w, Bc, b):
        """V w[:d] + Bc w[d] + b for every row."""
        out = np.empty(self.n, np.float64)
        if self.cached:
            return K.feature_margins(self.F, w, Bc, b, out)
        for lo in range(0, self.n, STREAM_STEPS):
            rows = np.arange(lo, min(self.n, lo + STREAM_STEPS), dtype=np.int64)
            K.feature_margins(self.rows(rows), w, Bc, b, out[lo:lo + len(rows)])
        return out

    def as_chunk(self, labels):
        """The rows as a dense-in-CSR Chunk (float64), for the linear solvers."""
        return dense_chunk(self.F if self.cached else self.fmap.transform(self.data, dtype=np.float64), labels)


def dense_chunk(F, labels):
    """The rows of the dense matrix F as a Chunk (every entry stored)."""
    n, d = F.shape
    return Chunk(labels=np.asarray(labels, np.float64), indptr=np.arange(n + 1, dtype=np.int64) * d,
                 indices=np.tile(np.arange(d, dtype=np.int32), n),
                 values=np.ascontiguousarray(F, np.float64).reshape(-1),
                 qid=np.zeros(n, np.int64))


class Mapped:
    """A linear model over the mapped rows that scores raw rows (for svmtrain.training.trace)."""

    def __init__(self, fmap, model):
        self.fmap, self.model = fmap, model

    def decision_function(self, chunk):
        return self.model.decision_function(dense_chunk(self.fmap.transform(chunk), chunk.labels))


def _mapped_monitor(monitor, fmap):
    """A monitor for the inner solver whose snapshots score raw rows (through ``fmap``)."""
    def mapped(snapshot, problem=0):
        def snap():
            s = snapshot()
            s.model = Mapped(fmap, s.model)
            return s
        monitor(snap, problem=problem)
    mapped.steps = getattr(monitor, "steps", None)
    return mapped


def _check(params):
    if params.strongly_convex and params.unreg_bias:
        raise ParameterError("--strongly-convex (ASSET*) has no unregularised bias; drop -R (use -B for a "
                             "regularised one)")
    if params.strongly_convex and params.inner is not None:
        raise ParameterError("--strongly-convex selects ASSET*'s own steps; it does not combine with --inner")
    if params.inner != "dcd" and params.loss != "hinge":
        raise ParameterError(f"-s asset trains --loss {params.loss} with --inner dcd only (its own steps, "
                             "and pegasos', take the hinge loss)")
    if params.approx not in ("nystrom", "fourier"):
        raise ParameterError(f"--approx must be nystrom or fourier (got {params.approx})")


def train_model(data, order, problems, n_features, params, progress=None, log=None, monitor=None,
                features=None):
    """Map once, solve each binary problem on the mapped rows, return the model.
    ``features(fmap)`` makes the features object (default :class:`Features`
    over ``data``); ``data`` may then be a chunk source."""
    params = with_defaults(params, DEFAULTS)
    _check(params)
    n = data.n_rows
    lam = params.resolved_lambda(n)
    rng = np.random.default_rng(params.seed)
    fmap, kernel = build_map(data, params, n_features, rng)
    feats = Features(fmap, data) if features is None else features(fmap)
    if log is not None:
        what = (f"{fmap.n_landmarks} landmarks, rank {fmap.dim} ({fmap.n_dropped} eigenvalues "
                f"< {params.eig_threshold:g} dropped)" if isinstance(fmap, NystromMap)
                else f"{fmap.dim} random Fourier features")
        log(f"asset: {params.approx} map, {what}, kernel {kernel.name} gamma = {kernel.gamma:g}; "
            f"{feats.note}")
    Bc = float(params.bias) if params.bias >= 0 else 0.0
    if params.inner is None:
        results = fit_asset(feats, problems, params, lam, rng, progress=progress, monitor=monitor)
    else:
        results = _fit_inner(feats, problems, params, progress, log, monitor)
    d = fmap.dim
    W = np.zeros((d, len(problems)))
    b = np.zeros(len(problems))
    for j, r in enumerate(results):
        W[:, j] = r.w[:d]
        b[j] = r.b + (Bc * r.w[d] if len(r.w) > d else 0.0)
    if len(order) == 1:
        W[:] = 0.0
        b[:] = 0.0
    if isinstance(fmap, FourierMap):
        model = FourierModel(labels=order, omega=fmap.omega, phases=fmap.phases, W=W, b=b,
                             n_features=n_features, solver=params.solver, task=params.task)
    else:
        from ...models.kernel import KernelModel
        model = KernelModel(order, fmap.landmarks, fmap.expansion(W), b, kernel, n_features,
                            params.solver, [], task=params.task)
    model.fit_results = results
    return model


def estimate_DG(feats, y_cost, has_b, Bc, rng):
    """(D_G, R): sqrt of 1/M sum_l d_l^2 (|V_l|^2 + 1) at (0, 0), and max_l |V_l|.

    At gamma = 0, b = 0 every margin is 0 < 1, so d_l = cost_l (times y_l).
    """
    M = min(DG_SAMPLES, feats.n)
    rows = np.sort(rng.choice(feats.n, size=M, replace=False))
    sq = K.row_sqnorms(np.ascontiguousarray(feats.rows(rows))) + Bc * Bc
    c2 = y_cost[rows] ** 2
    DG2 = float(np.mean(c2 * (sq + (1.0 if has_b else 0.0))))
    return math.sqrt(max(DG2, 1e-300)), math.sqrt(float(sq.max()))


def fit_asset(feats, problems, params, lam, rng, progress=None, monitor=None):
    """Algorithm 1 (or ASSET*) on every problem, in lockstep over shared draws."""
    k = int(params.batch_size)
    strong = bool(params.strongly_convex)
    has_b = not strong and params.unreg_bias is not False   # --no-bias turns it off
    Bc = float(params.bias) if params.bias >= 0 else 0.0
    epochs = int(params.epochs)
    total = feats.total_steps(k, epochs)
    averaged = bool(params.average) and not strong
    avg_start = int(total * AVERAGE_FROM) + 1 if averaged else total + 2
    runs = [_new_run(feats, y, cost, lam, has_b, Bc, rng, params.eps is None) for y, cost in problems]
    viol = np.empty(k, np.int64)
    t = 0
    for epoch in range(epochs):
        for F, pos, rows in feats.epoch(rng, k, total - t):
            for run in runs:
                if not run["active"]:
                    continue
                y, cw = (run["y"], run["cost"]) if rows is None else (run["y"][rows], run["cost"][rows])
                K.asset_steps(F, pos, y, cw, k, t, lam, Bc, has_b, run["b_box"], run["step0"], strong,
                              avg_start, run["v"], run["state"], run["T"], viol)
            t += len(pos) // k
        for run in runs:
            if run["active"]:
                run["epochs"] = epoch + 1
                run["steps"] = t
        if progress is not None:
            progress(epoch + 1, epochs)
        for j, run in enumerate(runs if monitor is not None else ()):
            if run["active"]:
                monitor(lambda: _snapshot(feats, run, averaged and t >= avg_start, Bc, params.bias, lam, epoch + 1, t),
                        problem=j)
        if params.eps is not None and _all_settled(feats, runs, averaged and t >= avg_start, Bc, lam, params.eps):
            break
    return [_run_result(feats, run, averaged and run["steps"] >= avg_start, Bc, lam, params, strong)
            for run in runs]


def _new_run(feats, y, cost, lam, has_b, Bc, rng, converged):
    """One problem's run at (0, 0), active: labels, row costs, D_G, D_X, the bias box, the first step."""
    d = feats.dim
    y = np.ascontiguousarray(y, np.float64)
    cw = np.where(y > 0, float(cost[0]), float(cost[1]))
    DG, R = estimate_DG(feats, cw, has_b, Bc, rng)
    b_box = 1.0 + R / math.sqrt(lam)
    DX = math.sqrt(1.0 / lam + (b_box ** 2 if has_b else 0.0))
    return {"y": y, "cost": cw, "DG": DG, "DX": DX, "b_box": b_box, "step0": DX / DG,
            "v": np.zeros(d + 1), "T": np.zeros(d + 1), "state": K.new_state(),
            "active": True, "prev": math.inf, "epochs": 0, "steps": 0,
            "converged": converged}


def _all_settled(feats, runs, averaged, Bc, lam, eps):
    """-e after an epoch: stops each active run that improved by <= eps relative; True when none is left."""
    for run in runs:
        if not run["active"]:
            continue
        w, b = current(run, averaged)
        obj = objective(feats, run["y"], run["cost"], w, Bc, b, lam)
        if run["prev"] - obj <= eps * abs(obj):
            run["active"] = False
            run["converged"] = True
        run["prev"] = obj
    return not any(run["active"] for run in runs)


def _run_result(feats, run, use_avg, Bc, lam, params, strong):
    """The FitResult of a finished run at its averaged (``use_avg``) or last iterate."""
    d = feats.dim
    steps = run["steps"]
    w, b = current(run, use_avg)
    obj = objective(feats, run["y"], run["cost"], w, Bc, b, lam)
    w_out = w if params.bias >= 0 else w[:d].copy()
    return FitResult(w=w_out, b=b, n_iter=steps, objective=obj, converged=run["converged"],
                     info={"epochs": run["epochs"], "steps": steps, "lambda": lam,
                           "D_G": run["DG"], "D_X": run["DX"], "b_box": run["b_box"],
                           "averaged": use_avg, "strongly_convex": strong,
                           "feature_dim": d, "cached": feats.cached})


def current(run, averaged):
    """(gamma_ext, b): the eta-weighted average of the averaged iterates, or the last one."""
    st = run["state"]
    if averaged and st[K.ETA_SUM] > 0:
        return (run["T"] + st[K.AVG_A] * run["v"]) / st[K.ETA_SUM], float(st[K.B_SUM] / st[K.ETA_SUM])
    return run["v"] * st[K.SCALE], float(st[K.BIAS])


def _snapshot(feats, run, averaged, Bc, bias, lam, epochs, steps):
    """The trace's Snapshot of ``run``'s current model."""
    from ...models.linear import LinearModel
    from ..snapshots import Snapshot
    w, b = current(run, averaged)
    d = feats.dim
    model = LinearModel(labels=[1.0, -1.0], W=w if bias >= 0 else w[:d], n_features=d, bias=bias, b=[b])
    return Snapshot(iter=epochs, updates=steps, lam=lam, y=run["y"], cost=run["cost"], scores=feats.margins(w, Bc, b),
                    norm2=sq_norm(w), model=Mapped(feats.fmap, model))


def objective(feats, y, cost, w, Bc, b, lam):
    """lambda/2 |w_ext|^2 + 1/n sum_i cost_i hinge(y_i (V_i.w + Bc w_B + b))."""
    scores = feats.margins(np.ascontiguousarray(w, np.float64), Bc, b)
    return 0.5 * lam * sq_norm(w) + K.hinge_sum(y, cost, scores) / max(feats.n, 1)


def _fit_inner(feats, problems, params, progress, log, monitor=None):
    """--inner pegasos|dcd: that solver's fit on the mapped rows (dense rows in CSR)."""
    from ..base import split_progress
    from .. import get_solver
    solver = get_solver(params.inner, task=params.task, loss=params.loss)
    X = feats.as_chunk(problems[0][0])
    out = []
    for j, (y, cost) in enumerate(problems):
        kw = {} if monitor is None else {"monitor": for_problem(_mapped_monitor(monitor, feats.fmap), j)}
        out.append(solver.fit(X, y, feats.dim, params, progress=split_progress(progress, j, len(problems)),
                              log=None, class_cost=cost, **kw))
    return out
