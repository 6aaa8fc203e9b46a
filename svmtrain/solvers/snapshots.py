"""What a solver hands a monitor (``--trace``, svmtrain/training/trace.py): a
:class:`Snapshot` of the model it would return were it stopped at that
boundary, built by :func:`linear_snapshot` or :func:`kernel_snapshot`."""
from dataclasses import dataclass

import numpy as np


@dataclass
class Snapshot:
    """A binary model at a boundary of the run, as the trace needs it.

    ``scores`` are the decision values of the training rows the objective
    sums over (positive means y = +1), ``y`` their labels in {+1, -1},
    ``cost`` the per-row loss weights (None: 1); ``norm2`` is |w|^2 of the
    regulariser; ``model.decision_function(chunk)`` gives float64[n, 1]
    decision values of any rows (for the test set).
    """
    iter: float
    updates: int
    lam: float
    y: np.ndarray
    scores: np.ndarray
    norm2: float
    model: object
    cost: np.ndarray = None
    loss: str = "hinge"
    dual: float = None
    kernel_evals: int = None


def linear_snapshot(X, y, w_ext, b, bias, lam, iter, updates, cost=None, loss="hinge", dual=None):
    """The Snapshot of a linear model: w_ext as in solvers/base.py, ``bias`` the -B value (< 0: none)."""
    from ..models.linear import LinearModel
    from ._common import margins, sq_norm
    B = float(bias) if bias >= 0 else 0.0
    scores = margins(X.indptr, X.indices, X.values, w_ext, B, float(b), np.empty(X.n_rows))
    d = len(w_ext) - 1
    model = LinearModel(labels=[1.0, -1.0], W=w_ext if bias >= 0 else w_ext[:d], n_features=d,
                        bias=bias, b=[float(b)])
    return Snapshot(iter=iter, updates=updates, lam=lam, y=y, scores=scores, norm2=sq_norm(w_ext),
                    model=model, cost=cost, loss=loss, dual=dual)


def kernel_snapshot(X, kernel, coef, b, y, scores, norm2, lam, iter, updates, kernel_evals):
    """The Snapshot of a kernel expansion sum_i coef_i K(x_i, .) + b over the rows of X."""
    from ..data.dataset import take_rows
    from ..models.kernel import KernelModel
    sv = np.flatnonzero(coef)
    model = KernelModel(labels=[1.0, -1.0], SV=take_rows(X, sv), coef=coef[sv], b=[b], kernel=kernel,
                        n_features=X.n_features)
    return Snapshot(iter=iter, updates=updates, lam=lam, y=y, scores=scores, norm2=norm2, model=model,
                    kernel_evals=kernel_evals)
