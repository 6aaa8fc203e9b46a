"""Choosing C and gamma for the kernel solvers (``svm-train --grid``), as
LIBSVM's grid.py does, on data parsed once.

grid.py's ranges and order: ``-log2c begin,end,step`` and ``-log2g
begin,end,step`` (defaults -5,15,2 and 3,-15,-2; ``null`` leaves an axis
out), each axis permuted middle-first (:func:`permute`) and the two
interleaved (:func:`grid_points`), so that a coarse picture of the grid
comes first. At each point, k-fold cross-validation with the folds of
:func:`svmtrain.training.train.fold_assignment` (stratified by class, from
``--seed``), the same at every point; the rate is svm-train's ``-v``
accuracy as grid.py reads it (``%g`` of the percentage), and the best point
follows grid.py's rule (a higher rate; at an equal rate and gamma, the
smaller C).

Parallel: the points run in ``jobs`` worker processes forked after the data
is parsed, so every worker reads the same arrays (copy-on-write), never the
text; each worker runs its solver on one thread. Kernel solvers start every
point afresh (no warm start along C yet). Which solvers --grid takes is the
solver registry's answer (:func:`svmtrain.solvers.trains_kernel_model`):
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
        b = self.best
        head = " ".join(str(x) for x in (point.log2c, point.log2g) if x is not None)
        text = f"[local] {head} {point.rate} (best "
        text += "" if b.log2c is None else f"c={2.0 ** b.log2c}, "
        text += "" if b.log2g is None else f"g={2.0 ** b.log2g}, "
        return text + f"rate={b.rate})"

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


# the data of a grid run, set before the workers fork (each worker reads these arrays, never a copy)
_SHARED = {}


def _rate(point):
    """The CV rate (grid.py's reading of svm-train's %g percentage) at one point, in a worker."""
    from ..training.train import train
    data, params, splits = _SHARED["data"], _SHARED["params"], _SHARED["splits"]
    p = point_params(params, *point)
    correct = 0
    for train_rows, test_rows in splits:
        test = take_rows(data, test_rows)
        model = train(take_rows(data, train_rows), p, n_features=data.n_features, log=None)
        correct += int(np.count_nonzero(model.predict(test) == test.labels))
    return float("%g" % (100.0 * correct / data.n_rows))


def _worker_start():
    import numba
    numba.set_num_threads(1)


def search_grid(data, params, c_exps, g_exps, folds=5, jobs=None, on_point=None, progress=None):
    """Cross-validate ``params`` at every point of the grid (see the module
    doc) on ``data`` (a Chunk); returns a GridResult with the points in
    grid.py's order. ``on_point(result, point)`` after each point, in that
    order; ``progress(done, total)``. The result does not depend on ``jobs``."""
    from ..training.train import fold_assignment
    check_grid(params, folds)
    if c_exps is None and g_exps is None:
        raise ParameterError("-log2c and -log2g are both null: nothing to search")
    if folds > data.n_rows:
        raise ParameterError(f"-v {folds}: more folds than the {data.n_rows} training rows")
    fold_of = fold_assignment(data, params, folds)
    splits = [(np.flatnonzero(fold_of != k), np.flatnonzero(fold_of == k)) for k in range(folds)]
    points = grid_points(c_exps, g_exps)
    _SHARED.update(data=data, params=dataclasses.replace(params, threads=1, probability=False), splits=splits)
    result = GridResult()
    workers = max(1, min(len(points), jobs or os.cpu_count() or 1))
    try:
        with contextlib.ExitStack() as stack:
            if workers == 1:
                rates = map(_rate, points)
            else:
                pool = stack.enter_context(ProcessPoolExecutor(
                    workers, mp_context=multiprocessing.get_context("fork"), initializer=_worker_start))
                rates = pool.map(_rate, points)
            for done, (point, rate) in enumerate(zip(points, rates), 1):
                p = GridPoint(point[0], point[1], rate)
                result.add(p)
                if on_point is not None:
                    on_point(result, p)
                if progress is not None:
                    progress(done, len(points))
    finally:
        _SHARED.clear()
    return result
