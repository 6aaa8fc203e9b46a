"""What every solver returns, and the contract every solver follows.

A solver module ``svmtrain/solvers/NAME.py`` exposes

    fit(X: Chunk, y: float64[n] of +1/-1, n_features: int,
        params: TrainParams, progress=None, log=None,
        class_cost=(1.0, 1.0)) -> FitResult

It trains ONE binary problem (positive class = +1). It knows nothing of
files, labels or the command line; the multi-class loop lives in
``svmtrain.training.train``. ``progress``, when given, is called as
``progress(done, total)`` with done/total in the solver's own units
(epochs, outer iterations) so the CLI can draw a bar, optionally with a third argument, a short
status such as the duality gap shown beside the bar. ``log``, when given,
takes one human-readable line: per-iteration detail, which the CLI shows
with ``--verbose`` only, or a warning, a line starting with ``WARNING``,
which it always shows (not with ``-q``); the library itself never prints. ``class_cost = (cost_pos, cost_neg)``
multiplies C (or the loss weight) of the positive / negative examples
(LIBLINEAR's -wi); solvers without class weights raise ParameterError when
it is not (1, 1).

Bias conventions (LIBLINEAR's ``-B``): the solver works on the weight
vector ``w`` of length ``n_features + 1``; ``w[n_features]`` multiplies a
constant feature of value ``B = params.bias`` when ``params.bias >= 0`` and
is regularised like any other weight. With ``params.bias < 0`` the kernels
are given ``B = 0.0`` and ``w[n_features]`` stays 0. The returned
``FitResult.w`` already has that last entry dropped when ``bias < 0``.
``-R`` (``params.unreg_bias``) asks for an unregularised bias ``b``
returned separately; solvers that cannot do it raise ParameterError.

``monitor``, when given (``--trace``), is called at each epoch / outer
iteration boundary as ``monitor(snapshot)`` with a function returning a
:class:`svmtrain.solvers.snapshots.Snapshot` of the current model; solvers with their
own one-vs-rest loop (``train_model``) call ``monitor(snapshot, problem=j)``.
Without a monitor a solver does no extra work (svmtrain/training/trace.py).
"""
import dataclasses
from dataclasses import dataclass, field

import numpy as np


@dataclass
class FitResult:
    """One trained binary linear model: decision(x) = w[:d].x + w[d]*B + b."""

    w: np.ndarray
    b: float = 0.0
    n_iter: int = 0
    objective: float = float("nan")
    converged: bool = True
    info: dict = field(default_factory=dict)


def kernel_bias(params):
    """The constant-feature value the kernels see: B, or 0.0 when no -B."""
    return float(params.bias) if params.bias >= 0 else 0.0


def finish_w(w_ext, params):
    """Drop the constant-feature weight when the model has no -B bias."""
    return w_ext if params.bias >= 0 else w_ext[:-1].copy()


def segment_steps(monitor, steps_per_epoch):
    """Steps between monitor calls within an epoch: ``monitor.steps`` when set, else the whole epoch."""
    every = getattr(monitor, "steps", None) if monitor is not None else None
    return max(1, min(int(every), steps_per_epoch)) if every else steps_per_epoch


def for_problem(monitor, problem):
    """``monitor`` bound to binary problem ``problem`` (called as ``m(snapshot)``; keeps ``steps``)."""
    if monitor is None:
        return None

    def bound(snapshot):
        monitor(snapshot, problem=problem)
    bound.steps = getattr(monitor, "steps", None)
    return bound


def split_progress(progress, j, n_problems):
    """A progress callback for problem j of n that reports on the whole run."""
    if progress is None:
        return None
    return lambda done, total, status=None: progress(j * total + done, n_problems * total, status)


def with_defaults(params, defaults):
    """``params`` with each field that is None replaced by ``defaults[field]``.

    Each solver module keeps its defaults in a module-level ``DEFAULTS``
    dict; training applies them before recording the parameters, so a model
    file shows the values actually used.
    """
    missing = {k: v for k, v in defaults.items() if getattr(params, k) is None}
    return dataclasses.replace(params, **missing) if missing else params


# the status codes of kernels that run a few outer iterations per call (see :func:`drive`);
# the numba modules define the same values (_dcd_kernels; tests/test_regression.py checks)
RUNNING, CONVERGED, MAX_ITER = 0, 1, 2


def stopping(params, default_eps, default_max_iter):
    """(eps, max_iter): ``-e`` and ``--max-iter``, or the solver's defaults;
    ParameterError unless eps > 0 (finite) and max_iter >= 1."""
    import math

    from ..errors import ParameterError
    eps = default_eps if params.eps is None else float(params.eps)
    max_iter = default_max_iter if params.max_iter is None else int(params.max_iter)
    if not (eps > 0 and math.isfinite(eps)):
        raise ParameterError(f"-e must be > 0 (got {eps})")
    if max_iter < 1:
        raise ParameterError(f"--max-iter must be >= 1 (got {max_iter})")
    return eps, max_iter


def csr_arrays(X, n_features):
    """(indptr int64, indices int32, values float64) of ``X``, contiguous, as the
    kernels take them; ParameterError when an index is outside [0, n_features)."""
    from ..errors import ParameterError
    indptr = np.ascontiguousarray(X.indptr, np.int64)
    indices = np.ascontiguousarray(X.indices, np.int32)
    values = np.ascontiguousarray(X.values, np.float64)
    if len(indices) and (int(indices.max()) >= n_features or int(indices.min()) < 0):
        raise ParameterError(f"feature index out of range for n_features={n_features}")
    return indptr, indices, values


def drive(run, n, max_iter, progress, report):
    """Run a kernel to the end: ``run(steps)`` does at most ``steps`` outer
    iterations and returns RUNNING, CONVERGED or MAX_ITER. Without
    ``progress`` it is called once for all ``max_iter`` iterations; with it,
    one iteration at a time, each followed by ``progress(*report(), )`` where
    ``report()`` gives (iterations done, status text) -- the same iterates
    either way. Nothing runs for n = 0. Returns True when it converged."""
    steps = max_iter if progress is None else 1
    status = RUNNING if n else CONVERGED
    while status == RUNNING:
        status = run(steps)
        if progress is not None:
            done, text = report()
            progress(done, max_iter, text)
    return status == CONVERGED


def warn_max_iter(log, converged, max_iter):
    """LIBLINEAR's warning, through ``log``, when a run stopped at its iteration cap."""
    if log is not None and not converged:
        log(f"WARNING: reaching max number of iterations ({max_iter}); "
            "the solution may be inaccurate (raise --max-iter or -e)")
