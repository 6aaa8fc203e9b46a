"""Choosing C for the linear solvers (``svm-train -C``): a warm-started path.

LIBLINEAR 2.x's ``train -C`` (B.-Y. Chu, C.-H. Ho, C.-H. Tsai, C.-Y. Lin,
C.-J. Lin, "Warm start for parameter selection of linear classifiers",
KDD 2015): k-fold cross-validation at C = start, 2 start, 4 start, ...
up to ``MAX_C`` (1024), every fold's solver started from its own solution
at the previous C. The path stops early once the CV accuracy, having
risen above its value at the start (where every C predicts the majority
class), has not improved for ``PATIENCE`` (3) C values in a row (the
accuracy stops improving), or, as LIBLINEAR's, once no fold's w has moved
(by more than 1e-15) for ``UNCHANGED_STOP`` (5) steps in a row. The start is
LIBLINEAR's: 2^floor(log2(c0)) with c0 = 1 / (2 l max |x_i|^2) for the
squared hinge, 1 / (l max |x_i|^2) for the logistic loss and (svmtrain's
addition; LIBLINEAR has no -C for -s 3) the hinge, where l is the number of
training rows and |x_i| includes the -B feature; a given ``-c`` is the
start instead, as in LIBLINEAR.

The folds are drawn once from ``--seed``, stratified by class
(:func:`svmtrain.training.fold_assignment`), and are the same at every C;
the best C is the first with the highest accuracy. Solvers that take a warm
start (``WARM_START``) resume there: dcd (each loss) from its dual
solution scaled by the ratio of the C values, ocas (hinge, log) from its w
(its first cut and best point); the others (pegasos) solve every point from
scratch. The folds of one C train in parallel threads (the solvers' kernels
release the GIL), ``threads`` of them (default: all cores).
"""
import dataclasses
import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from .data.dataset import take_rows
from .errors import ParameterError
from .tasks import CLASSIFICATION

MAX_C = 1024.0
UNCHANGED_STOP = 5
PATIENCE = 3
W_MOVED = 1e-15


@dataclass
class CPoint:
    """One C of the path: its cross-validation accuracy (0..1) and seconds."""
    C: float
    accuracy: float
    seconds: float

    def line(self):
        """LIBLINEAR's line for this C, with the time appended."""
        return f"log2c={math.log2(self.C):7.2f}\trate={100.0 * self.accuracy:g}\ttime={self.seconds:.3g} s"


@dataclass
class CPath:
    """The points visited, the best one, and whether the path hit MAX_C."""
    points: list = field(default_factory=list)
    reached_max: bool = False

    @property
    def best(self):
        """The first point with the highest accuracy."""
        return max(self.points, key=lambda p: p.accuracy) if self.points else None

    def best_line(self):
        return f"Best C = {self.best.C:g}  CV accuracy = {100.0 * self.best.accuracy:g}%"


def start_c(data, params):
    """LIBLINEAR's calc_start_C for ``params.loss`` on all rows of ``data``
    (see the module doc), or ``params.C`` when given; at most MAX_C."""
    if params.C is not None:
        return min(float(params.C), MAX_C)
    sq = np.add.reduceat(data.values * data.values, data.indptr[:-1]) if data.nnz else np.zeros(data.n_rows)
    sq[np.diff(data.indptr) == 0] = 0.0                  # reduceat's value for an empty row is not 0
    if params.bias is not None and params.bias >= 0:
        sq = sq + params.bias * params.bias
    max_sq = float(sq.max()) if len(sq) else 0.0
    if max_sq <= 0.0:
        return 1.0
    c0 = 1.0 / ((2.0 if params.loss == "squared-hinge" else 1.0) * data.n_rows * max_sq)
    return min(2.0 ** math.floor(math.log2(c0)), MAX_C)


def check_search(params, folds):
    """ParameterError unless -C applies to ``params`` (a linear solver on a
    classification task) with ``folds`` >= 2."""
    from .solvers import KERNEL_SOLVERS
    if params.task != CLASSIFICATION:
        raise ParameterError("-C searches C for classification (LIBLINEAR's -s 0 and -s 2); for other tasks "
                             "run -v N at several -c")
    if params.solver not in ("dcd", "ocas", "pegasos") or (params.solver in KERNEL_SOLVERS and
                                                           params.kernel_type not in (None, 0)):
        raise ParameterError(f"-C searches C for the linear solvers (-s dcd, ocas, pegasos), not -s {params.solver}"
                             " with a kernel")
    if params.lam is not None:
        raise ParameterError("-C searches over C: give no -l (lambda)")
    if folds < 2:
        raise ParameterError(f"-C needs -v N with N >= 2 folds (got {folds})")


def search_c(data, params, folds=5, progress=None, on_point=None, threads=None):
    """Run the C path of the module doc on ``data`` (a Chunk); returns a CPath.

    ``on_point(point)`` is called after each C (the command prints its line);
    ``progress(done, total, status)`` after each C, ``total`` counting the
    folds of every C up to MAX_C. The result does not depend on ``threads``."""
    from .training import fold_assignment, train
    check_search(params, folds)
    n = data.n_rows
    if folds > n:
        raise ParameterError(f"-v {folds}: more folds than the {n} training rows")
    fold_of = fold_assignment(data, params, folds)
    splits = [(np.flatnonzero(fold_of != k), np.flatnonzero(fold_of == k)) for k in range(folds)]
    train_sets = [take_rows(data, tr) for tr, _ in splits]
    test_sets = [take_rows(data, te) for _, te in splits]
    warm = [[] for _ in range(folds)]
    previous_w = [None] * folds
    d = data.n_features
    C = start_c(data, params)
    total = folds * (int(round(math.log2(MAX_C / C))) + 1)
    path, unchanged, since_best, done = CPath(), 0, 0, 0
    rose = False            # has the accuracy risen above its first value?

    def run_fold(k, point_params):
        model = train(train_sets[k], point_params, n_features=d, warm_start=warm[k], log=None)
        return model.W, int(np.count_nonzero(model.predict(test_sets[k]) == test_sets[k].labels))

    workers = max(1, min(folds, threads or os.cpu_count() or 1))
    with ThreadPoolExecutor(workers) as pool:
        while C <= MAX_C:
            t0 = time.perf_counter()
            point_params = dataclasses.replace(params, C=C, lam=None, threads=1, probability=False)   # labels only
            results = list(pool.map(lambda k: run_fold(k, point_params), range(folds)))
            # as LIBLINEAR: the first C counts as unchanged
            moved = any(previous_w[k] is not None and float(np.linalg.norm(W - previous_w[k])) > W_MOVED
                        for k, (W, _) in enumerate(results))
            previous_w = [W for W, _ in results]
            best = path.best
            point = CPoint(C, sum(c for _, c in results) / n, time.perf_counter() - t0)
            path.points.append(point)
            done += folds
            if progress is not None:
                progress(done, total, f"C = {C:g}")
            if on_point is not None:
                on_point(point)
            unchanged = 0 if moved else unchanged + 1
            rose |= best is not None and point.accuracy > path.points[0].accuracy
            since_best = 0 if best is None or point.accuracy > best.accuracy or not rose else since_best + 1
            if unchanged == UNCHANGED_STOP or since_best == PATIENCE:
                break
            C *= 2.0
    path.reached_max = C > MAX_C
    return path
