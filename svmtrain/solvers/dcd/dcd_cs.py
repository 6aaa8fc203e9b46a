"""Crammer-Singer multi-class SVM by sequential dual coordinate descent
(``-s dcd --multiclass cs``, LIBLINEAR's ``-s 4``); the kernels and the
method are in :mod:`svmtrain.solvers.dcd._dcd_cs_kernels`.

One problem over all k classes (not one per class): each column of the
model scores its class and the largest wins. With two classes the two
columns are w and -w (the dual's rows sum to zero), so the model keeps the
first, as LIBLINEAR predicts a two-class model by its first column's sign.
C_i = C times the class weight of row i's label (-w). Defaults as
LIBLINEAR's -s 4: -e 0.1, at most 100,000 outer iterations.
"""
import numpy as np

from ...errors import ParameterError
from ...models.linear import LinearModel
from . import _dcd_cs_kernels as K
from .._common import row_sqnorms, sq_norm
from ..base import FitResult, csr_arrays, kernel_bias, warn_max_iter

DEFAULTS = {"eps": 0.1, "max_iter": 100000}


def train_model(data, order, problems, d, params, progress=None, log=None):
    """The Crammer-Singer LinearModel of ``data`` for the labels ``order``
    (LIBLINEAR's order; ``problems``, the one-vs-rest split, is not used).
    ``fit_results`` holds one FitResult: the objective (lambda form, the
    primal over n C), and in ``info`` the C-form primal and dual values
    (LIBLINEAR prints the dual's negative as "Objective value")."""
    if params.unreg_bias:
        raise ParameterError("-R (unregularized bias) is not supported by -s dcd; use -B")
    k = len(order)
    n = data.n_rows
    indptr, indices, values = csr_arrays(data, d)
    sorter = np.argsort(order)
    y = sorter[np.searchsorted(order, data.labels, sorter=sorter)].astype(np.int64)   # position in order
    C = params.resolved_C(n)
    weights = np.array([params.class_weights.get(float(c), 1.0) for c in order])
    C_rows = C * weights[y]
    B = kernel_bias(params)
    QD = row_sqnorms(indptr, values, B)

    alpha = np.zeros(n * k)
    w = np.zeros((d + 1) * k)
    cls_order = np.tile(np.arange(k, dtype=np.int64), n)
    y_pos = y.copy()
    active_i = np.full(n, k, np.int64)
    index = np.arange(n, dtype=np.int64)
    rng = np.random.default_rng(params.seed)
    rstate = np.array([rng.integers(0, 2**64 - 1, dtype=np.uint64, endpoint=True)], np.uint64)
    eps, max_iter = float(params.eps), int(params.max_iter)
    if progress is not None:
        progress(0, max_iter)
    n_iter, converged = K.cs_run(indptr, indices, values, B, y, C_rows, QD, k, alpha, w, cls_order, y_pos,
                                 active_i, index, eps, max_iter, rstate)
    if progress is not None:
        progress(max_iter, max_iter)
    warn_max_iter(log, converged, max_iter)

    ww = sq_norm(w)
    primal_C = 0.5 * ww + K.cs_losses(indptr, indices, values, B, y, C_rows, k, w)
    dual_C = float(np.sum(alpha[np.arange(n) * k + y])) - 0.5 * ww
    W = w.reshape(d + 1, k)
    if params.bias < 0:
        W = W[:d]
    if k == 2:
        W = W[:, :1]                # the second column is -W[:, 0]
    result = FitResult(w=W, n_iter=int(n_iter), objective=primal_C / (max(n, 1) * C), converged=bool(converged),
                       info={"primal_C_form": primal_C, "dual_objective": dual_C, "n_iter": int(n_iter), "C": C,
                             "n_sv": int(np.count_nonzero(np.abs(alpha.reshape(n, k)).sum(axis=1)))})
    model = LinearModel(labels=order, W=np.ascontiguousarray(W), n_features=d, bias=params.bias,
                        b=np.zeros(W.shape[1]), solver=params.solver, task=params.task)
    model.fit_results = [result]
    return model

