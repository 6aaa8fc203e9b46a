"""``-s tron --task c``: LIBLINEAR's primal solver of -s 2 and -s 0.

Minimises the C-form primal

    min_w  1/2 |w|^2 + sum_i C_i loss(y_i w.x_i)

with loss = squared hinge (``--loss squared-hinge``, LIBLINEAR -s 2) or
logistic (``--loss log``, LIBLINEAR -s 0), C_i = C times the class weight
of y_i (-w) times the row's sample weight, -B LIBLINEAR's regularised
constant feature, by a truncated Newton method with preconditioned
conjugate gradients and a line search (``_newton_kernels.newton_run``,
LIBLINEAR 2.4's ``newton.cpp``). The optimum is dcd's (``-s dcd`` with
the same loss solves the dual of the same problem).

The stop is LIBLINEAR's: |grad f(w)| <= eps' |grad f(0)| with
eps' = eps max(min(#pos, #neg), 1) / l, ``-e`` eps (default 0.01). A
warm start (``-C``) begins at the previous C's w, unchanged, as
LIBLINEAR's: when that w already meets the stop at the new C no step is
taken (LIBLINEAR's -C then counts w as unchanged).
"""
import math

import numpy as np

from ...errors import ParameterError
from . import _newton_kernels as K
from .. import require_base
from ..base import FitResult, csr_arrays, finish_w, kernel_bias, stopping, warn_max_iter
from ..dcd.dcd import kernel_row_cost, row_costs

DEFAULT_EPS = 0.01
DEFAULT_MAX_ITER = 1000
WARM_START = True         # fit takes warm_start
PARALLEL_CLASSES = True   # one-vs-rest classes may train in threads (svmtrain.training.class_threads)


def check_params(params, class_cost):
    """(eps, max_iter) after checking what tron supports; raises ParameterError."""
    if params.unreg_bias:
        raise ParameterError("-R (unregularized bias) is not supported by -s tron; use -B")
    if params.loss not in K.LOSS_CODES:
        raise ParameterError(f"-s tron --task c trains --loss squared-hinge or log, not {params.loss}")
    for c in class_cost:
        if not (c > 0 and math.isfinite(c)):
            raise ParameterError(f"class weights must be > 0 (got {c})")
    return stopping(params, DEFAULT_EPS, DEFAULT_MAX_ITER)


def newton_path_eps(params):
    """-C: the path runs this module's Newton method (see
    :mod:`svmtrain.selection.param_search`) at tron's own -e."""
    return DEFAULT_EPS if params.eps is None else float(params.eps)


def relative_tolerance(eps, y):
    """LIBLINEAR's eps max(min(#pos, #neg), 1) / l for labels ``y`` (+1 / -1)."""
    n = len(y)
    pos = int(np.count_nonzero(y > 0))
    return eps * max(min(pos, n - pos), 1) / max(n, 1)


GRAM_MAX_BUILD = 64         # the Gram form's build at most this many multiply-adds per stored value


def gram_pays(indptr, n_vars):
    """Whether the Gram form of rows ``indptr`` with ``n_vars`` variables is
    worth building for a path: n_vars^2 at most a quarter of the stored values
    (a dense H v then costs less than an eighth of a pass's two products) and its build,
    sum_i nnz_i (nnz_i + 1) / 2, at most GRAM_MAX_BUILD per stored value."""
    nnz = int(indptr[-1] - indptr[0])
    lengths = np.diff(indptr).astype(np.float64)
    return 4 * n_vars * n_vars <= nnz and float(np.sum(lengths * (lengths + 1.0))) / 2.0 <= GRAM_MAX_BUILD * nnz


class Problem:
    """One binary problem (rows ``X``, labels ``y`` in {+1, -1}, class costs
    ``class_cost``) made ready once for solves at many C (the -C path):
    :meth:`solve` at C = its cost C_i = C s_i with s_i the class weight
    times the row weight. Checks what :func:`fit` checks.

    ``path``: solves along a path of C values (-C), each from the previous
    one's w and X w: keep the sums at the end of each solve for the next
    (``newton_run``'s ``carry``: a C where w already meets the stop takes no
    pass over the data), and for the squared hinge, when the features are
    few enough (:func:`gram_pays`), the active rows' Gram form
    (``_newton_kernels.gram``, updated as rows enter and leave the active
    set): a Newton iteration then passes over the rows once instead of
    about ten times (a single solve does not repay building it)."""

    def __init__(self, X, y, n_features, params, class_cost=(1.0, 1.0), path=False):
        self.eps, self.max_iter = check_params(params, class_cost)
        self.csr = csr_arrays(X, int(n_features))
        self.y = y = np.ascontiguousarray(y, np.float64)
        n = X.n_rows
        if y.shape != (n,) or (n and not np.all((y == 1.0) | (y == -1.0))):
            raise ParameterError("tron needs labels y in {+1, -1}")
        self.n_vars = int(n_features) + 1
        self.scale = row_costs(y, class_cost, kernel_row_cost(X))
        self.B = kernel_bias(params)
        self.loss = K.LOSS_CODES[params.loss]
        self.tol = relative_tolerance(self.eps, y)
        self.gnorm0 = None          # |grad f(0)| at C = 1 (at C it is C times this), from the first solve
        self.G, self.r, self.in_G = np.empty((0, 0)), np.empty(0), np.empty(0, np.uint8)
        self.flips = np.zeros(1, np.int64)
        self.carry = np.zeros(2 * self.n_vars + 2) if path else np.empty(0)
        if path and self.loss == K.LOSS_SQUARED_HINGE and gram_pays(self.csr[0], self.n_vars):
            # built by the first solve (in the fold's thread): flips -1
            self.G, self.r = np.empty((self.n_vars, self.n_vars)), np.empty(self.n_vars)
            self.in_G, self.flips[0] = np.ones(n, np.uint8), -1

    def solve(self, C, w, z=None):
        """Minimise at ``C`` from ``w`` (updated in place); (status, Newton
        iterations, CG steps, f, |grad f|, |grad f(0)|) as newton_run's.
        |grad f(0)| is C times its value at C = 1, computed once. ``z``: an
        array of n entries the caller keeps with ``w`` along a path (X w
        on return; a NaN first entry when not yet known). With ``path``
        each solve after the first must be given the previous one's w and
        z, untouched (the kept sums and Gram form are theirs)."""
        known = -1.0 if self.gnorm0 is None else C * self.gnorm0
        if z is None:
            z = np.full(len(self.y), np.nan)
        z_known = len(z) > 0 and not np.isnan(z[0])
        out = K.newton_run(*self.csr, self.B, self.y, C * self.scale, self.loss, w, z, z_known, self.tol, known,
                           self.max_iter, self.G, self.r, self.in_G, self.scale, self.flips, float(C), self.carry)
        if self.gnorm0 is None:
            self.gnorm0 = out[-1] / C
        return out


def fit(X, y, n_features, params, progress=None, log=None, class_cost=(1.0, 1.0), monitor=None,
        warm_start=None):
    """Train one binary problem (y in {+1, -1}); see the module docstring.

    FitResult: ``w`` (n_features, + 1 with -B), ``n_iter`` (Newton
    iterations), ``objective`` (the lambda-form primal, the C-form one
    divided by n C), ``converged`` and ``info`` with ``primal_C_form``,
    ``grad_norm`` and ``grad_norm0`` (|grad f| at the end and at w = 0),
    ``cg_steps`` and ``C``. ``warm_start``: a dict owned by the caller
    (``-C``): when it holds ``"w"`` the method starts there (see the module
    doc); on return it holds this run's w.
    """
    require_base("tron", params)
    if monitor is not None:
        raise ParameterError("--trace does not trace -s tron")
    problem = Problem(X, y, n_features, params, class_cost)
    C = params.resolved_C(X.n_rows)
    w = np.zeros(problem.n_vars, np.float64)
    if warm_start is not None and "w" in warm_start:
        w[:] = warm_start["w"]
    status, n_iter, cg_steps, f, gnorm, gnorm0 = problem.solve(C, w)
    max_iter = problem.max_iter
    converged = status != K.MAX_ITER
    if progress is not None:
        progress(n_iter, max_iter, f"|grad| {gnorm / gnorm0 if gnorm0 else 0.0:.2e} of |grad f(0)|")
    warn_max_iter(log, converged, max_iter)
    if log is not None and status == K.LINE_SEARCH_FAILED:
        log("WARNING: line search fails")
    if warm_start is not None:
        warm_start["w"] = w.copy()
    info = {"primal_C_form": f, "grad_norm": gnorm, "grad_norm0": gnorm0, "cg_steps": cg_steps,
            "n_iter": n_iter, "C": C}
    return FitResult(w=finish_w(w, params), b=0.0, n_iter=n_iter, objective=f / (max(X.n_rows, 1) * C),
                     converged=converged, info=info)
