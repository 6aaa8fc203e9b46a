"""What the two L1 solvers share: checks, the columns (transposed once), the costs, the bias, the objective.

The model is LIBLINEAR's: w over the n features, plus, with ``-B B``
(B >= 0), the weight of a constant feature of value B, L1-regularised like
every other weight (LIBLINEAR's default); with ``-R`` that constant
coordinate is left unregularised (LIBLINEAR 2.5's ``-B 1 -R``): with -B it
stays the model's bias row, without -B it is a constant 1 whose weight is
returned as the model's unregularised ``b``.
"""
import math
import threading
import weakref
from dataclasses import dataclass

import numpy as np

from ...errors import ParameterError
from .._common import margins
from ..base import FitResult, csr_arrays, finish_w, stopping
from . import _l1_kernels as K

DEFAULT_EPS = 0.01          # LIBLINEAR's -e for -s 5 and -s 6


@dataclass
class Problem:
    """One binary L1 problem as the kernels take it: the columns of X (with
    the constant one, ``const``), the per-row costs C_i, the stopping rule."""
    X: object
    y: np.ndarray           # +1 / -1, float64
    n_features: int
    params: object
    C: float
    eps: float
    max_iter: int
    tol: float              # LIBLINEAR's relative tolerance (relative_tolerance)
    const: bool
    const_value: float
    free: bool              # the constant coordinate's weight unregularised (-R)
    colptr: np.ndarray
    rowind: np.ndarray
    colval: np.ndarray
    cost: np.ndarray

    @property
    def w_size(self):
        return len(self.colptr) - 1


def problem(X, y, n_features, params, class_cost, default_max_iter, name):
    """The :class:`Problem` of a fit call, after the checks (ParameterError
    for bad class weights or labels outside {+1, -1})."""
    eps, max_iter = check_params(params, class_cost, default_max_iter)
    d = int(n_features)
    y = np.ascontiguousarray(y, np.float64)
    n = X.n_rows
    if y.shape != (n,) or (n and not np.all((y == 1.0) | (y == -1.0))):
        raise ParameterError(f"{name} needs labels y in {{+1, -1}}")
    C = params.resolved_C(n)
    const, const_value, free = constant_column(params)
    colptr, rowind, colval = columns(X, d, const, const_value)
    return Problem(X, y, d, params, C, eps, max_iter, relative_tolerance(eps, y), const, const_value, free,
                   colptr, rowind, colval, row_costs(X, y, class_cost, C))


def fit_result(prob, w, loss, n_iter, converged, log, note, info=()):
    """The FitResult of base.py's contract from the kernels' ``w``: the C-form
    primal |w|_1 + sum_i C_i loss(y_i s_i) (``loss`` maps the margins y s to
    the losses), its lambda form as ``objective``, the nonzero weights; the
    line ``#nonzeros/#features = ..., note`` to ``log``."""
    d, params, n = prob.n_features, prob.params, prob.X.n_rows
    w_ext, bias_b = split_w(w, d, params, prob.const, prob.free)
    s = scores(prob.X, d, w_ext, bias_b, params)
    primal_C = l1_norm(w_ext, params) + float(np.sum(prob.cost * loss(prob.y * s)))
    nnz = nonzeros(w_ext, params)
    if log is not None:
        log(f"#nonzeros/#features = {nnz}/{d}, {note}")
    info = {"primal_C_form": primal_C, "nnz": nnz, "n_iter": n_iter, **dict(info), "C": prob.C}
    return FitResult(w=finish_w(w_ext, params), b=bias_b, n_iter=n_iter,
                     objective=primal_C / (max(n, 1) * prob.C), converged=converged, info=info)


def check_params(params, class_cost, default_max_iter):
    """(eps, max_iter) after checking what the L1 solvers take; ParameterError otherwise."""
    for c in class_cost:
        if not (c > 0 and math.isfinite(c)):
            raise ParameterError(f"class weights must be > 0 (got {c})")
    return stopping(params, DEFAULT_EPS, default_max_iter)


def relative_tolerance(eps, y):
    """LIBLINEAR's eps max(min(#pos, #neg), 1) / l for labels ``y`` (+1 / -1)."""
    n = len(y)
    pos = int(np.count_nonzero(y > 0))
    return eps * max(min(pos, n - pos), 1) / max(n, 1)


def constant_column(params):
    """(const, value, free): whether the columns get a constant one, its
    value, and whether its weight is unregularised (-R)."""
    free = bool(params.unreg_bias)
    if params.bias >= 0:
        return True, float(params.bias), free
    return free, 1.0, free


_lock = threading.RLock()     # re-entered by _forget when a Chunk dies during a transposition
_cached = {}            # id(Chunk) -> (weakref to it, key, (colptr, rowind, colval)), while the Chunk lives
CACHED_CHUNKS = 8       # the folds of -C's path (and -v) train in threads, each on its own Chunk


def columns(X, n_features, const, const_value):
    """(colptr, rowind, colval) of ``X``'s rows by columns (see
    :func:`._l1_kernels.csr_to_csc`). A transposition is kept while its
    Chunk lives (for the last CACHED_CHUNKS Chunks), so the binary problems
    of one-vs-rest (classes trained in threads) and the C values of -C's
    path transpose each Chunk once."""
    key = (int(n_features), bool(const), float(const_value))
    with _lock:
        entry = _cached.get(id(X))
        if entry is not None and entry[0]() is X and entry[1] == key:
            return entry[2]
        indptr, indices, values = csr_arrays(X, int(n_features))
        cols = K.csr_to_csc(indptr, indices, values, int(n_features), bool(const), float(const_value))
        try:
            ref = weakref.ref(X, lambda _r, k=id(X): _forget(k, _r))
        except TypeError:           # not weak-referenceable: no cache
            return cols
        _cached.pop(id(X), None)
        _cached[id(X)] = (ref, key, cols)
        while len(_cached) > CACHED_CHUNKS:
            _cached.pop(next(iter(_cached)))
        return cols


def _forget(k, ref):
    """A cached Chunk died: drop its columns (unless the id now caches another Chunk)."""
    with _lock:
        entry = _cached.get(k)
        if entry is not None and entry[0] is ref:
            del _cached[k]


def row_costs(X, y, class_cost, C):
    """C_i for every row: C times its class's weight (-w) times its row weight (sample weights)."""
    cost = np.where(y > 0, C * float(class_cost[0]), C * float(class_cost[1]))
    weights = getattr(X, "weights", None)
    return cost * weights if weights is not None else cost


def violation_sum(G, w, free_last):
    """sum_j of the violation of the optimality conditions of the L1
    problem at ``w`` for the gradient ``G`` of its loss: |G_j + sign(w_j)|
    where w_j != 0, max(|G_j| - 1, 0) where w_j = 0; |G_j| for an
    unregularised last coordinate."""
    viol = np.where(w > 0, np.abs(G + 1.0), np.where(w < 0, np.abs(G - 1.0), np.maximum(np.abs(G) - 1.0, 0.0)))
    if free_last and len(viol):
        viol[-1] = abs(G[-1])
    return float(np.sum(viol))


def new_rng(seed):
    """The generator state of the kernels' shuffles, from --seed: glibc's rand() after srand(seed)."""
    return K.rand_state(seed)


def split_w(w, n_features, params, const, free):
    """(w_ext, b) of base.py's contract from the kernels' w (n_features
    columns, + the constant one): w_ext has length n_features + 1 (its last
    entry the -B weight, 0 without -B), b the unregularised bias of -R without -B."""
    w_ext = np.zeros(n_features + 1, np.float64)
    w_ext[:n_features] = w[:n_features]
    b = 0.0
    if const:
        if params.bias >= 0:
            w_ext[n_features] = w[n_features]
        else:
            b = float(w[n_features])
    return w_ext, b


def scores(X, n_features, w_ext, b, params):
    """w.x_i (+ the constant feature) + b for every row."""
    indptr, indices, values = csr_arrays(X, int(n_features))
    B = float(params.bias) if params.bias >= 0 else 0.0
    return margins(indptr, indices, values, w_ext, B, b, np.empty(X.n_rows, np.float64))


def l1_norm(w_ext, params):
    """sum |w_j| of the regularised weights (the -B weight too, unless -R)."""
    if params.bias >= 0 and params.unreg_bias:
        return float(np.sum(np.abs(w_ext[:-1])))
    return float(np.sum(np.abs(w_ext)))


def nonzeros(w_ext, params):
    """The nonzero weights of the features (the -B weight not counted)."""
    return int(np.count_nonzero(w_ext[:-1]))


def path_start_c(data, params, curvature):
    """The first C of ``-C``'s warm-started path for an L1 model (the hook
    ``path_start_c`` of the solver's module; LIBLINEAR has no -C for -s 5
    and -s 6): 2^floor(log2(C0)) with C0 = 1 / max_j |g_j|, g the gradient
    of the loss at w = 0 for C = 1 (``curvature``: its derivative at margin
    0, 2 for the squared hinge, 1/2 for the logistic loss; times the class
    and row weights) over every binary problem of ``data``: below C0 the
    L1 model is w = 0, so the path starts where the weights begin to move
    (from w = 0 on, it would count five unchanged points and stop). The
    unregularised bias of -R does not count; the -B feature does."""
    from ...training.train import task_problems
    _order, problems = task_problems(data.labels, params)
    rows = np.repeat(np.arange(data.n_rows), np.diff(data.indptr))
    B = float(params.bias)
    top = 0.0
    for y, class_cost in problems:
        coef = curvature * y * row_costs(data, y, class_cost, 1.0)
        g = np.bincount(data.indices, weights=data.values * coef[rows], minlength=data.n_features)
        top = max(top, float(np.max(np.abs(g), initial=0.0)))
        if B >= 0 and not params.unreg_bias:
            top = max(top, abs(B * float(np.sum(coef))))
    return 2.0 ** math.floor(math.log2(1.0 / top)) if top > 0 else 1.0
