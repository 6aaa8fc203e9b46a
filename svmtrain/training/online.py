"""Pegasos that goes on between calls: the scikit-learn estimators' ``partial_fit``.

Each call is one epoch on the rows it is given (as ``SGDClassifier``'s
``partial_fit``): ceil(n / k) steps of i.i.d. draws from those rows, for
every binary problem, continuing the step count, the iterate and the
random stream of the previous calls (:class:`svmtrain.solvers.sgd.pegasos.Run`).
E calls on the same rows give the model of ``fit`` with ``-T E`` and no
averaging, bit for bit (tests/test_online.py).
"""
import math
import time

import numpy as np

from ..errors import ParameterError
from ..params import check_params
from ..solvers.sgd import pegasos
from ..solvers._common import primal_objective
from ..solvers.base import FitResult, finish_w
from ..solvers import check_supported
from .train import finish_model, linear_model

NEVER = 2 ** 62     # an averaging start no run reaches


class OnlinePegasos:
    """One Pegasos run per binary problem (or the regression problem), kept
    between calls. lambda is fixed at the first call: ``params.lam``, or
    1/(n C) with n that call's rows (with sample weights, the lambda of
    :func:`svmtrain.solvers.sgd.pegasos.weighted_lambda` for that call's
    weights; later calls draw their rows in proportion to their own)."""

    def __init__(self, params, n_features, n_problems, first):
        check_params(params)
        check_supported("pegasos", params.task, params.loss)
        if params.class_weights:
            raise ParameterError("partial_fit takes no class weights; give sample_weight instead")
        if params.probability:
            raise ParameterError("probability=True needs fit (Platt's sigmoids come from cross-validation); "
                                 "loss='log' gives probabilities with partial_fit")
        weights = _checked_weights(first)
        self.params = params
        self.n_features = int(n_features)
        self.lam = params.resolved_lambda(first.n_rows)
        step_lam = pegasos.weighted_lambda(self.lam, first.n_rows, weights)
        avg_start = 1 if params.average else NEVER
        y = first.labels
        self.runs = [pegasos.Run(self.n_features, params, step_lam, y, avg_start, params.seed, weights)
                     for _ in range(n_problems)]

    @property
    def steps(self):
        """The steps made so far (per problem)."""
        return self.runs[0].t

    def epoch(self, chunk, problems, labels):
        """One epoch on ``chunk`` for each problem (``problems``: its y, one
        per run); returns the LinearModel of the iterates reached, with
        ``labels`` (the classes' codes, or empty for regression) and each
        column's objective on these rows."""
        if len(problems) != len(self.runs):
            raise ValueError(f"{len(problems)} problems, but the run has {len(self.runs)}")
        start = time.perf_counter()
        weights = _checked_weights(chunk)
        n = chunk.n_rows
        cdf = None if weights is None else np.cumsum(weights)
        runs = self.runs
        n_steps = max(1, math.ceil(n / runs[0].k))
        results = []
        for run, y in zip(runs, problems):
            y = np.ascontiguousarray(y, np.float64)
            run.steps(chunk, y, run.draws(n, n_steps, cdf))
            w, b = run.current()
            obj = primal_objective(chunk, y, w, run.B, b, self.lam, self.params.loss, run.p, weights)
            results.append(FitResult(w=finish_w(w, self.params), b=b, n_iter=run.t, objective=obj,
                                     converged=True, info={"lambda": self.lam, "steps": run.t}))
        model = linear_model(labels, results, self.n_features, self.params)
        return finish_model(model, self.params, n, start)


def _checked_weights(chunk):
    """The chunk's row weights, None when absent or all 1 (``svmtrain.data.arrays.as_chunk``
    has refused negative weights and weights that are all 0)."""
    weights = chunk.weights
    return None if weights is None or np.all(weights == 1.0) else weights
