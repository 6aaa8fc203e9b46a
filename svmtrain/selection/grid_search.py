"""Choosing C and gamma for the kernel solvers (``svm-train --grid``), as
LIBSVM's grid.py does, on data parsed once.

grid.py's ranges and order: ``-log2c begin,end,step`` and ``-log2g
begin,end,step`` (defaults -5,15,2 and 3,-15,-2; ``null`` leaves an axis
out), each axis permuted middle-first (:func:`permute`) and the two
interleaved (:func:`grid_points`), so that a coarse picture of the grid
comes first. At each point, k-fold cross-validation with the folds of
:func:`svmtrain.training.train.fold_splits` (``--folds``: LIBSVM's, or
stratified by class from ``--seed``), the same at every point; the rate is svm-train's ``-v``
accuracy as grid.py reads it (``%g`` of the percentage), and the best point
follows grid.py's rule (a higher rate; at an equal rate and gamma, the
smaller C).

Tasks: a solver whose module says ``GRID_PATH`` (``-s smo``) is given one
task per gamma and fold, which visits every C of the grid in increasing
order, each warm-started from the previous one's solution, with the fold's
kernel matrix computed once (:mod:`svmtrain.solvers.kernel.smo_path`); a
point's rate is then the sum of its folds' counts. The other kernel solvers
get one task per point, every fold trained afresh. Either way each rate is
a cold ``-v`` run's at that point (for the C path: up to the solver's
tolerance, a prediction differing only where its decision value is within
it of 0). The tasks run in ``jobs`` worker processes forked after the data
is parsed (every worker reads the same arrays, copy-on-write, never the
text; each runs its solver on one thread), or on a Dask cluster, where the
data is scattered once; they finish in any order, and the points are
reported in grid.py's order, each once all its folds are in. The result
depends on neither ``jobs`` nor the engine. Which solvers --grid takes is
the solver registry's answer (:func:`svmtrain.solvers.trains_kernel_model`):
the ones that train a kernel model with the given options.
"""
import contextlib
import dataclasses
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ..data.dataset import take_rows
from ..errors import ParameterError

DEFAULT_LOG2C = "-5,15,2"
DEFAULT_LOG2G = "3,-15,-2"


def parse_range(text, flag):
    """grid.py's ``begin,end,step`` as the list of exponents it visits (in
    range order, floats as grid.py's), or None for ``null``."""
    if text.strip().lower() == "null":
        return None
    parts = text.split(",")
    try:
        begin, end, step = (float(x) for x in parts)
    except ValueError:
        raise ParameterError(f"{flag} takes begin,end,step or null (got {text!r})") from None
    if step == 0 or (end - begin) * step < 0:
        raise ParameterError(f"{flag} {text}: the step must be nonzero and lead from begin to end")
    seq, x = [], begin
    while (step > 0 and x <= end) or (step < 0 and x >= end):
        seq.append(x)
        x += step
    return seq


def permute(seq):
    """grid.py's order of one axis: the middle first, then the halves' own
    orders interleaved."""
    if len(seq) <= 1:
        return list(seq)
    mid = len(seq) // 2
    left, right = permute(seq[:mid]), permute(seq[mid + 1:])
    out = [seq[mid]]
    while left or right:
        if left:
            out.append(left.pop(0))
        if right:
            out.append(right.pop(0))
    return out


def grid_points(c_exps, g_exps):
    """Every (log2c, log2g) point in grid.py's order (an axis left out is
    [None]): rows and columns of the permuted axes added alternately."""
    cs = permute(c_exps) if c_exps is not None else [None]
    gs = permute(g_exps) if g_exps is not None else [None]
    points, i, j = [], 0, 0
    while i < len(cs) or j < len(gs):
        if i / len(cs) < j / len(gs):
            points += [(cs[i], gs[k]) for k in range(j)]
            i += 1
        else:
            points += [(cs[k], gs[j]) for k in range(i)]
            j += 1
    return points


@dataclass
class GridPoint:
    log2c: float
    log2g: float
    rate: float          # the CV accuracy in percent, as grid.py reads svm-train's %g

    def out_line(self):
        """The point's line of grid.py's .out file."""
        text = "" if self.log2c is None else f"log2c={self.log2c} "
        text += "" if self.log2g is None else f"log2g={self.log2g} "
        return text + f"rate={self.rate}"


@dataclass
class GridResult:
    points: list = field(default_factory=list)
    best: GridPoint = None

    def add(self, point):
        """Record ``point``; the best follows grid.py's update rule."""
        b = self.best
        if b is None or point.rate > b.rate or (point.rate == b.rate and point.log2g == b.log2g
                                                and point.log2c is not None and point.log2c < b.log2c):
            self.best = point
        self.points.append(point)

    def progress_line(self, point):
        """grid.py's stdout line after ``point``: the point and the best so far."""
        head = " ".join(str(x) for x in (point.log2c, point.log2g) if x is not None)
        return f"[local] {head} {point.rate} ({self.best_status()})"

    def best_status(self):
        """grid.py's words for the best point so far: ``best c=..., g=..., rate=...``."""
        b = self.best
        text = "best "
        text += "" if b.log2c is None else f"c={2.0 ** b.log2c}, "
        text += "" if b.log2g is None else f"g={2.0 ** b.log2g}, "
        return text + f"rate={b.rate}"

    def best_line(self):
        """grid.py's last line: the best C and gamma, then the rate."""
        b = self.best
        values = [2.0 ** x for x in (b.log2c, b.log2g) if x is not None]
        return f"{' '.join(map(str, values))} {b.rate}"

    def best_params(self, params):
        """``params`` at the best point."""
        return point_params(params, self.best.log2c, self.best.log2g)


def point_params(params, log2c, log2g):
    """``params`` with C = 2^log2c and gamma = 2^log2g (an axis left out keeps its value)."""
    changes = {}
    if log2c is not None:
        changes.update(C=2.0 ** log2c, lam=None)
    if log2g is not None:
        changes["gamma"] = 2.0 ** log2g
    return dataclasses.replace(params, **changes)


def check_grid(params, folds):
    """ParameterError unless --grid applies: a kernel solver on classification, folds >= 2."""
    from ..solvers import kernel_solvers, listing, trains_kernel_model
    if not trains_kernel_model(params.solver, params.kernel_type):
        raise ParameterError(f"--grid searches C and gamma for the kernel solvers "
                             f"({listing(kernel_solvers(), kernel_note=True)}); "
                             f"for -s {params.solver} without a kernel, -C searches C")
    if params.task != "c":
        raise ParameterError("--grid searches for classification; for other tasks run -v N at several -c -g")
    if folds < 2:
        raise ParameterError(f"--grid needs -v N with N >= 2 folds (got {folds})")


@dataclass
class GridJob:
    """What every task of one grid run reads: the data, the parameters (one
    thread, no probabilities), the folds' (train rows, test rows) and the
    C exponents (None: -log2c null). Local workers fork after it is set and
    read it in place; on Dask it is scattered to the workers once."""
    data: object
    params: object
    splits: list
    c_exps: list
    kept: dict = field(default=None, repr=False, compare=False)   # see _rows_kernel; never pickled

    def __getstate__(self):
        return {**self.__dict__, "kept": None}

    def path_correct(self, log2g, fold):
        """Test rows of ``fold`` predicted right at each C of the grid (in
        ``c_exps`` order) at gamma 2^log2g, by the solver's warm-started C
        path (:mod:`svmtrain.solvers.kernel.smo_path`)."""
        from ..solvers.kernel.smo_path import fold_correct
        from ..training.train import label_order
        train_rows, test_rows = self.splits[fold]
        n = len(train_rows)
        cs = [point_params(self.params, c, log2g).resolved_C(n) for c in (self.c_exps or [None])]
        params = point_params(self.params, None, log2g)
        return fold_correct(self.data, train_rows, test_rows, params, cs, self.data.n_features,
                            label_order(self.data.labels[train_rows]), self._rows_kernel(params, log2g))

    def _rows_kernel(self, params, log2g):
        """The kernel matrix of all rows at gamma 2^log2g (smo_path.rows_kernel,
        None when it does not fit), kept for this thread's next task: tasks
        come gamma by gamma, so a worker computes it once for the folds of a
        gamma it runs. The same numbers whichever worker computes it."""
        import threading
        from ..solvers.kernel.smo_path import rows_kernel
        if self.kept is None:
            self.kept = {}
        key = threading.get_ident()
        gamma, cache = self.kept.get(key, (None, None))
        if gamma != log2g or cache is None:
            self.kept[key] = (None, None)          # (the old matrix freed first)
            cache = rows_kernel(self.data, params, self.data.n_features)
            self.kept[key] = (log2g, cache)
        return cache

    def point_rate(self, point):
        """The CV rate at one (log2c, log2g) point, every fold trained afresh."""
        from ..training.train import train
        data = self.data
        p = point_params(self.params, *point)
        correct = 0
        for train_rows, test_rows in self.splits:
            test = take_rows(data, test_rows)
            model = train(take_rows(data, train_rows), p, n_features=data.n_features, log=None)
            correct += int(np.count_nonzero(model.predict(test) == test.labels))
        return rate_of(correct, data.n_rows)


def rate_of(correct, n_rows):
    """grid.py's reading of svm-train's -v line: %g of the percentage."""
    return float("%g" % (100.0 * correct / n_rows))


def warm_path(params, data):
    """Whether --grid runs the solver's warm-started C path (tasks of one
    gamma and one fold) rather than every point afresh: the solver module
    says so (``GRID_PATH``; -s smo's C-SVC), on rows without weights and without --nu."""
    from ..solvers import get_solver
    solver = get_solver(params.solver, params.kernel_type, params.task, params.loss, params.multiclass)
    return bool(getattr(solver, "GRID_PATH", False)) and data.weights is None and params.nu is None


# the job of a grid run, set before the local workers fork (each reads it in place)
_SHARED = {}


def _local(task):
    """One task in a local worker (or in this process): (method name, its arguments)."""
    name, args = task
    return getattr(_SHARED["job"], name)(*args)


def _on_dask(job, name, args):
    """One task on a Dask worker, on one numba thread."""
    _worker_start()
    return getattr(job, name)(*args)


def _worker_start():
    import numba
    numba.set_num_threads(1)


def _forked_worker_start():
    """A local worker, forked from the run: one numba thread and no parallel
    region (``_numba.options.serial_only``: the run's process may have started
    numba's threading layer, and with GNU OpenMP's a forked process's first
    parallel region kills it)."""
    from .._numba import options
    _worker_start()
    options.serial_only()


def _results(job, tasks, workers, client):
    """The results of ``tasks`` ((method name, args) of ``job``), in order:
    in this process (one worker), in ``workers`` forked processes, or on
    the Dask ``client``'s cluster."""
    with contextlib.ExitStack() as stack:
        if client is not None:
            shared = client.scatter(job, broadcast=True)
            futures = [client.submit(_on_dask, shared, name, args, pure=False) for name, args in tasks]
            stack.callback(client.cancel, futures)
            for future in futures:
                yield future.result()
            return
        _SHARED["job"] = job
        stack.callback(_SHARED.clear)
        if workers == 1:
            yield from map(_local, tasks)
            return
        pool = stack.enter_context(ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("fork"), initializer=_forked_worker_start))
        yield from pool.map(_local, tasks)


def _point_rates(job, points, workers, client):
    """(point, rate) in the order of ``points``: from tasks of one gamma and
    one fold (the warm path: every C of the grid) when the solver has one,
    else one task per point; ``workers`` local processes at most."""
    if not warm_path(job.params, job.data):
        tasks = [("point_rate", (pt,)) for pt in points]
        yield from zip(points, _results(job, tasks, min(workers, len(tasks)), client))
        return
    gammas = list(dict.fromkeys(g for _, g in points))         # grid.py's order of first appearance
    folds = len(job.splits)
    tasks = [("path_correct", (g, k)) for g in gammas for k in range(folds)]
    counts = zip((g for _, (g, _) in tasks), _results(job, tasks, min(workers, len(tasks)), client))
    c_index = {c: i for i, c in enumerate(job.c_exps or [None])}
    correct = {}                # gamma -> [right predictions at each C, summed over its folds so far, folds]
    for log2c, log2g in points:
        while correct.get(log2g, (None, 0))[1] < folds:
            g, fold_counts = next(counts)
            total, done = correct.get(g, (0, 0))
            correct[g] = (total + np.asarray(fold_counts, np.int64), done + 1)
        yield (log2c, log2g), rate_of(int(correct[log2g][0][c_index[log2c]]), job.data.n_rows)


def search_grid(data, params, c_exps, g_exps, folds=5, jobs=None, on_point=None, progress=None, client=None):
    """Cross-validate ``params`` at every point of the grid (see the module
    doc) on ``data`` (a Chunk); returns a GridResult with the points in
    grid.py's order. ``on_point(result, point)`` after each point, in that
    order; ``progress(done, total)``. The tasks run in ``jobs`` local worker
    processes, or on the Dask ``client``'s cluster; the result depends on
    neither."""
    from ..training.train import fold_splits
    check_grid(params, folds)
    if c_exps is None and g_exps is None:
        raise ParameterError("-log2c and -log2g are both null: nothing to search")
    if c_exps is not None and params.nu is not None:
        raise ParameterError(f"--grid with --nu: -s {params.solver} --nu has no C to search (nu sets the "
                             "trade-off): give -log2c null to search gamma alone")
    if folds > data.n_rows:
        raise ParameterError(f"-v {folds}: more folds than the {data.n_rows} training rows")
    splits = fold_splits(data, params, folds)
    points = grid_points(c_exps, g_exps)
    job = GridJob(data, dataclasses.replace(params, threads=1, probability=False), splits, c_exps)
    result = GridResult()
    workers = max(1, jobs or os.cpu_count() or 1)
    for done, (point, rate) in enumerate(_point_rates(job, points, workers, client), 1):
        p = GridPoint(point[0], point[1], rate)
        result.add(p)
        if on_point is not None:
            on_point(result, p)
        if progress is not None:
            progress(done, len(points))
    return result
