"""Choosing C for the linear solvers (``svm-train -C``): a warm-started path.

LIBLINEAR 2.x's ``train -C`` (B.-Y. Chu, C.-H. Ho, C.-H. Tsai, C.-Y. Lin,
C.-J. Lin, "Warm start for parameter selection of linear classifiers",
KDD 2015): k-fold cross-validation at C = start, 2 start, 4 start, ...
up to ``MAX_C`` (1024), every fold's solver started from its own solution
at the previous C. As LIBLINEAR's, the path stops early only once no fold's
w has moved (by more than 1e-15) for ``UNCHANGED_STOP`` (5) steps in a row
(the first C counts as unchanged): never on the accuracy, whose curve on
real data is not unimodal (it may dip and rise again). The start is
LIBLINEAR's: 2^floor(log2(c0)) with c0 = 1 / (2 l max |x_i|^2) for the
squared hinge, 1 / (l max |x_i|^2) for the logistic loss and (svmtrain's
addition; LIBLINEAR has no -C for -s 3) the hinge, where l is the number of
training rows and |x_i| includes the -B feature; a given ``-c`` is the
start instead, as in LIBLINEAR.

Regression (LIBLINEAR 2.4's ``-s 11 -C``, here ``--task r``) searches C
and the tube width p: p = i max|y| / 20 for i = 19 down to 0 (from the
given ``-p`` down, when one is given), and at each p the C path above from
LIBLINEAR's start for that p (``start_c``) up to ``MAX_C_REGRESSION``
(2^20), scored by the cross-validation mean squared error; the best point
is the first with the lowest error. dcd's regression resumes each C from
its dual point at the previous C, scaled by the C ratio and clipped to the
new box; the other regression solvers solve every point afresh.

The folds are drawn once from ``--seed``, stratified by class
(:func:`svmtrain.training.train.fold_assignment`), and are the same at every C;
the best C is the first with the highest accuracy.

The squared hinge and the logistic loss (LIBLINEAR's -s 2 and -s 0: -s dcd
with those losses, and -s tron) are walked as LIBLINEAR walks them, by the
primal Newton method of :mod:`svmtrain.solvers.tron.tron_primal` (the
solver module's ``newton_path_eps`` gives its -e: a tenth of dcd's, or
tron's own): each fold's one-vs-rest problems are set up once
(:func:`_newton_folds`) and resume at each C from their w (and X w) at the
previous C, untouched, stopping at LIBLINEAR's |grad f(w)| <= e max(min(#pos,
#neg), 1) / l |grad f(0)|; a w that meets it at the next C takes no step,
which is what ends LIBLINEAR's path by the unchanged-w rule. For the
squared hinge on few features each fold's problem keeps the active rows'
Gram matrix from one C to the next (the same steps, from n_vars^2 products
instead of passes over the rows: :mod:`svmtrain.solvers.tron._newton_kernels`);
two-class folds are scored by one pass over the test rows. dcd and tron
minimise the same objective, so the rates are those of independent -v
runs of either up to the tolerance; the model that ``svm-train -C`` then
writes is the named solver's (``svmtrain.run``). Other solvers train each
fold and C themselves (:func:`_trained_folds`); those that take a warm start
(``WARM_START``) resume there: dcd (the hinge, regression) from its dual
solution scaled by the ratio of the C values, ocas (hinge, log) from its w
(its first cut and best point); the others (pegasos) solve every point from
scratch.

Each fold walks its C values as a chain of tasks on ``threads`` threads
(default ``--threads``, else all cores; the solvers' kernels release the
GIL, and run their serial twins): fold k at the next C starts as soon as
it is done with this C, at most ``LOOKAHEAD`` C values ahead of the last
point out, so no core idles while the slowest fold of a C finishes. The
points do not depend on the number of threads.
"""
import dataclasses
import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ..data.dataset import take_rows
from ..errors import ParameterError
from ..tasks import CLASSIFICATION, REGRESSION

MAX_C = 1024.0
MAX_C_REGRESSION = 2.0 ** 20
P_STEPS = 20                    # regression: p = i max|y| / P_STEPS, i = P_STEPS - 1 .. 0
UNCHANGED_STOP = 5
LOOKAHEAD = 1                   # a fold may run this many C values ahead of the last point out
W_MOVED = 1e-15
SVR_DELTA = 0.1                 # LIBLINEAR's delta in the start C of regression


@dataclass
class CPoint:
    """One point of the path: C, its cross-validation accuracy (0..1; for
    regression the mean squared error, ``mse``, and the tube width ``p``)
    and seconds."""
    C: float
    accuracy: float
    seconds: float
    p: float = None
    mse: float = None

    def line(self):
        """LIBLINEAR's line for this point, with the time appended."""
        if self.mse is not None:
            return (f"log2c={math.log2(self.C):7.2f}\tp={self.p:7.2f}\tMean squared error={self.mse:g}"
                    f"\ttime={self.seconds:.3g} s")
        return f"log2c={math.log2(self.C):7.2f}\trate={100.0 * self.accuracy:g}\ttime={self.seconds:.3g} s"


@dataclass
class CPath:
    """The points visited, the best one, and whether a path hit its maximum C."""
    points: list = field(default_factory=list)
    reached_max: bool = False

    @property
    def best(self):
        """The first point with the highest accuracy (regression: the lowest error)."""
        if not self.points:
            return None
        if self.points[0].mse is not None:
            return min(self.points, key=lambda p: p.mse)
        return max(self.points, key=lambda p: p.accuracy)

    def best_line(self):
        b = self.best
        if b.mse is not None:
            return f"Best C = {b.C:g} Best p = {b.p:g}  CV MSE = {b.mse:g}"
        return f"Best C = {b.C:g}  CV accuracy = {100.0 * b.accuracy:g}%"


def max_c(params):
    """The end of the C path: 1024, or 2^20 for regression (LIBLINEAR's)."""
    return MAX_C_REGRESSION if params.task == REGRESSION else MAX_C


def start_c(data, params):
    """LIBLINEAR's calc_start_C for ``params.loss`` (regression: for the tube
    width ``params.epsilon``) on all rows of ``data`` (see the module doc),
    the solver's own ``path_start_c(data, params)`` when it has one (-s cdn,
    as LIBLINEAR's L1 start), or ``params.C`` when given; at most max_c(params)."""
    top = max_c(params)
    if params.C is not None:
        return min(float(params.C), top)
    from ..solvers import get_solver
    own = getattr(get_solver(params.solver, params.kernel_type, params.task, params.loss, params.multiclass),
                  "path_start_c", None)
    if own is not None:                 # the solver's own start (L1: below it every weight is 0)
        return min(own(data, params), top)
    sq = np.add.reduceat(data.values * data.values, data.indptr[:-1]) if data.nnz else np.zeros(data.n_rows)
    sq[np.diff(data.indptr) == 0] = 0.0                  # reduceat's value for an empty row is not 0
    if params.bias is not None and params.bias >= 0:
        sq = sq + params.bias * params.bias
    max_sq = float(sq.max()) if len(sq) else 0.0
    if params.task == REGRESSION:
        y = np.abs(data.labels)
        loss = float(np.sum(np.maximum(y - params.epsilon, 0.0) ** 2))
        if loss <= 0.0 or max_sq <= 0.0:
            return top
        c0 = SVR_DELTA * SVR_DELTA * loss / (8.0 * float(y.sum()) ** 2 * max_sq)
    elif max_sq <= 0.0:
        return 1.0
    else:
        c0 = 1.0 / ((2.0 if params.loss == "squared-hinge" else 1.0) * data.n_rows * max_sq)
    return min(2.0 ** math.floor(math.log2(c0)), top)


def p_values(data, start_p=None):
    """The tube widths of the regression search, largest first: i max|y| / 20
    for i = 19 .. 0, or from the step of a given ``start_p`` down (LIBLINEAR's)."""
    top = float(np.abs(data.labels).max()) if data.n_rows else 0.0
    first = P_STEPS - 1
    if start_p is not None and start_p > 0 and top > 0:
        first = min(int(start_p / (top / P_STEPS)), first)
    return [i * top / P_STEPS for i in range(first, -1, -1)]


def check_search(params, folds):
    """ParameterError unless -C applies to ``params`` (a linear solver on a
    classification or regression task) with ``folds`` >= 2."""
    from ..solvers import listing, trains_kernel_model
    if params.task not in (CLASSIFICATION, REGRESSION):
        raise ParameterError("-C searches C for classification (LIBLINEAR's -s 0 and -s 2) and C and p for "
                             "regression (-s 11); for other tasks run -v N at several -c")
    if trains_kernel_model(params.solver, params.kernel_type):
        raise ParameterError(f"-C searches C for the linear solvers ({listing(searchers(params.task, params.loss))}), "
                             f"not -s {params.solver} with a kernel")
    if params.task == REGRESSION and not _resumes(params.solver, params.loss):
        raise ParameterError(f"-C for regression walks C up to 2^20 at 20 tube widths and needs a solver that "
                             f"resumes along C ({listing(searchers(REGRESSION, params.loss))}), "
                             f"not -s {params.solver}")
    if params.lam is not None:
        raise ParameterError("-C searches over C: give no -l (lambda)")
    if folds < 2:
        raise ParameterError(f"-C needs -v N with N >= 2 folds (got {folds})")


def searchers(task, loss):
    """The solvers -C takes for ``task`` with ``loss``: the linear ones, and
    for regression those whose module resumes along C."""
    from ..solvers import solvers_for, trains_kernel_model
    return [s for s in solvers_for(task, loss) if not trains_kernel_model(s)
            and (task != REGRESSION or _resumes(s, loss))]


def _resumes(solver, loss):
    """Whether the registry's module for ``solver``'s regression with ``loss`` takes a warm start."""
    from ..solvers import get_solver
    return bool(getattr(get_solver(solver, task=REGRESSION, loss=loss), "WARM_START", False))


def search_c(data, params, folds=5, progress=None, on_point=None, threads=None, start_p=None, on_max=None):
    """Run the path of the module doc on ``data`` (a Chunk); returns a CPath.

    ``on_point(point)`` is called after each point (the command prints its
    line), ``on_max()`` after a C path that reached its maximum C (the
    command prints LIBLINEAR's warning); ``progress(done, total, status)``
    after each point, ``total`` counting the folds of every C up to the
    maximum. ``start_p``: regression's given -p (None: from the top).
    ``threads``: the folds' threads (default ``params.threads``, else all
    cores); the result does not depend on it."""
    from ..training.train import fold_splits
    check_search(params, folds)
    n = data.n_rows
    if folds > n:
        raise ParameterError(f"-v {folds}: more folds than the {n} training rows")
    splits = fold_splits(data, params, folds)
    folds_data = _Folds(data, splits)
    p_list = p_values(data, start_p) if params.task == REGRESSION else [None]
    points = [dataclasses.replace(params, epsilon=p) if p is not None else params for p in p_list]
    starts = [start_c(data, q) for q in points]
    top = max_c(params)
    total = folds * sum(int(round(math.log2(top / c))) + 1 for c in starts)
    path, done = CPath(), [0]

    def step(point):
        path.points.append(point)
        done[0] += folds
        if progress is not None:
            progress(done[0], total, f"C = {point.C:g}" + ("" if point.p is None else f", p = {point.p:g}"))
        if on_point is not None:
            on_point(point)

    workers = max(1, min(folds, threads or params.threads or os.cpu_count() or 1))
    with ThreadPoolExecutor(workers) as pool:
        for point_params, C in zip(points, starts):
            if _c_path(folds_data, n, data.n_features, point_params, C, top, pool, step):
                path.reached_max = True
                if on_max is not None:
                    on_max()
    return path


class _Folds:
    """The folds' (training rows, test rows) Chunks, fold k's made at its
    first use: in the thread of fold k's first point, so the folds' copies
    are made in parallel. Each fold is used by one thread at a time (its
    chain of C values)."""

    def __init__(self, data, splits):
        self.data, self.splits, self.made = data, splits, [None] * len(splits)

    def __len__(self):
        return len(self.splits)

    def __getitem__(self, k):
        if self.made[k] is None:
            train_rows, test_rows = self.splits[k]
            self.made[k] = (take_rows(self.data, train_rows), take_rows(self.data, test_rows))
        return self.made[k]


def newton_path(params):
    """The -e at which the C path of ``params`` solves each fold by tron's
    primal Newton method (:class:`svmtrain.solvers.tron.tron_primal.Problem`),
    or None: the solver module's ``newton_path_eps(params)`` (dcd with the
    squared hinge or the logistic loss, tron), one-vs-rest classification only."""
    from ..solvers import get_solver
    if params.task != CLASSIFICATION or params.multiclass != "ovr":
        return None
    module = get_solver(params.solver, params.kernel_type, params.task, params.loss, params.multiclass)
    hook = getattr(module, "newton_path_eps", None)
    return None if hook is None else hook(params)


def _c_path(folds_data, n, d, params, C, top, pool, step):
    """One path over C = C, 2C, ... <= top at ``params``' p, each fold
    warm-started from its previous C where the solver takes it; ``step(point)``
    after each C. True when the path reached ``top`` (not the stop on w).

    Each fold walks its own chain of C values on ``pool``: fold k at the
    next C starts as soon as fold k at this C is done (it needs nothing
    from the other folds), at most ``LOOKAHEAD`` C values ahead of the
    last C whose point is out, so no core waits for the slowest fold of a
    C. The points, and the stop, are the same as one C at a time."""
    import threading

    from .._numba.options import serial_kernels
    regression = params.task == REGRESSION
    eps = newton_path(params)
    run_fold = _trained_folds(folds_data, d, params) if eps is None else _newton_folds(folds_data, d, params, eps)
    Cs = [C]
    while Cs[-1] * 2.0 <= top:
        Cs.append(Cs[-1] * 2.0)
    if C > top:
        Cs = []
    folds = len(folds_data)
    done = {}                       # (C index, fold) -> its future
    waiting = []                    # folds whose next C is beyond the lookahead
    state = {"out": -1, "stopped": False, "running": 0, "t0": time.perf_counter()}
    cond = threading.Condition()

    def submit(k, j):
        state["running"] += 1
        future = pool.submit(run_fold, k, Cs[j])
        future.add_done_callback(lambda f: finished(k, j, f))

    def finished(k, j, future):
        with cond:
            state["running"] -= 1
            done[j, k] = future
            nxt = j + 1
            if future.exception() is None and nxt < len(Cs) and not state["stopped"]:
                if nxt <= state["out"] + LOOKAHEAD:
                    submit(k, nxt)
                else:
                    waiting.append((k, nxt))
            cond.notify_all()

    previous_w = [None] * folds
    unchanged = 0
    with serial_kernels():            # the folds are the threads: no parallel region from several at once
        try:
            with cond:
                for k in range(folds if Cs else 0):
                    submit(k, 0)
            for j, C in enumerate(Cs):
                with cond:
                    cond.wait_for(lambda: all((j, k) in done for k in range(folds)))
                    results = [done.pop((j, k)).result() for k in range(folds)]
                # as LIBLINEAR: the first C counts as unchanged
                moved = any(previous_w[k] is not None and float(np.linalg.norm(W - previous_w[k])) > W_MOVED
                            for k, (W, _) in enumerate(results))
                previous_w = [W for W, _ in results]
                score = sum(s for _, s in results) / n
                now = time.perf_counter()
                seconds, state["t0"] = now - state["t0"], now
                step(CPoint(C, float("nan"), seconds, params.epsilon, score) if regression
                     else CPoint(C, score, seconds))
                unchanged = 0 if moved else unchanged + 1
                if unchanged == UNCHANGED_STOP:
                    return False
                with cond:
                    state["out"] = j
                    ready = [(k, nxt) for k, nxt in waiting if nxt <= j + LOOKAHEAD]
                    waiting[:] = [x for x in waiting if x not in ready]
                    for k, nxt in ready:
                        submit(k, nxt)
            return True
        finally:
            with cond:                # folds already at the next C (or running on after an error)
                state["stopped"] = True
                cond.wait_for(lambda: state["running"] == 0)


def _score(model, test_set, regression):
    """Fold ``test_set``'s sum of squared errors (regression) or its rows predicted right."""
    if regression:
        return float(np.sum((model.predict(test_set) - test_set.labels) ** 2))
    return int(np.count_nonzero(model.predict(test_set) == test_set.labels))


def _trained_folds(folds_data, d, params):
    """``run(k, C)`` -> (W, score) of fold k at C by the solver itself
    (``train``), resuming from its own state at the previous C where it takes a warm start."""
    from ..training.train import train
    regression = params.task == REGRESSION
    warm = [[] for _ in range(len(folds_data))]

    def run(k, C):
        train_set, test_set = folds_data[k]
        point_params = dataclasses.replace(params, C=C, lam=None, threads=1, probability=False)   # labels only
        model = train(train_set, point_params, n_features=d, warm_start=warm[k], log=None)
        return model.W, _score(model, test_set, regression)
    return run


def _newton_folds(folds_data, d, params, eps):
    """``run(k, C)`` -> (W, score) of fold k at C by tron's primal Newton
    method at -e ``eps`` (LIBLINEAR's -C solver), each binary problem
    resuming from its w at the previous C. The folds' problems are set up
    once, each at its fold's first C (labels, costs, row weights as
    ``train`` makes them; kept along the path as ``tron_primal.Problem``
    says with ``path``), so a C costs the solves and the
    scoring only; with two classes a fold is scored by one pass over its
    test rows (``_path_kernels.binary_correct``: the model's predictions,
    without building it)."""
    from ..solvers import check_sample_weights
    from ..solvers.base import FitResult, finish_w
    from ..solvers.tron.tron_primal import Problem
    from ..training.train import linear_model, task_problems
    from ._path_kernels import binary_correct
    newton = dataclasses.replace(params, solver="tron", eps=eps, max_iter=None, C=1.0, lam=None)
    has_bias = params.bias is not None and params.bias >= 0
    folds = [None] * len(folds_data)

    def set_up(k):
        """Fold k's problems, made in its thread at its first C (the folds' set-ups run in parallel)."""
        train_set, test_set = folds_data[k]
        if train_set.weights is not None:       # as train's weighted_rows: the weights are the rows' costs
            weights = train_set.weights
            if not np.all(weights == weights[0]):
                check_sample_weights(params.solver, params.task, params.loss)
            train_set = take_rows(train_set, np.flatnonzero(weights))      # rows of weight 0 add nothing
        order, problems = task_problems(train_set.labels, params)
        side = test_set.labels == order[0] if len(order) == 2 else None     # two classes: scored in one pass
        folds[k] = (order, [Problem(train_set, y, d, newton, cost, path=True) for y, cost in problems],
                    [(np.zeros(d + 1), np.full(train_set.n_rows, np.nan)) for _ in problems], test_set, side)
        return folds[k]

    def run(k, C):
        order, problems, ws, test_set, side = folds[k] or set_up(k)
        results = []
        for problem, (w, z) in zip(problems, ws):
            problem.solve(C, w, z)          # w and X w carried to the next C
            results.append(FitResult(w=finish_w(w.copy(), params)))
        if side is not None:                # as the model would score it
            W = results[0].w.reshape(-1, 1)
            return W, binary_correct(test_set.indptr, test_set.indices, test_set.values, W[:, 0], d,
                                     float(params.bias) if has_bias else 0.0, has_bias, side)
        model = linear_model(order, results, d, params)
        return model.W, _score(model, test_set, False)
    return run
