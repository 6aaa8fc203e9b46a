"""Helpers the streamed solvers share: passes that sum the loss of a model."""
import numpy as np

from ._common import LOSS_CODES, loss_sum, margins, score_loss_sum


def streamed_loss(source, y, w_ext, B, b, loss="hinge", cost=(1.0, 1.0), epsilon=0.0):
    """sum_i c_i loss(w.x_i + b; y_i) over every row of the chunk source,
    one pass (c_i = cost[0] for y_i > 0, else cost[1]; the losses of
    ``_common.score_loss_sum`` beyond the hinges take no cost). Per block it
    allocates two block-sized float arrays."""
    total = 0.0
    bounds = source.bounds
    for j, c in source.blocks():
        yb = y[bounds[j]:bounds[j + 1]]
        scores = margins(c.indptr, c.indices, c.values, w_ext, B, b, np.empty(c.n_rows))
        if loss in LOSS_CODES:
            weights = np.where(yb > 0, float(cost[0]), float(cost[1]))
            total += loss_sum(yb, scores, LOSS_CODES[loss], weights)
        else:
            total += score_loss_sum(yb, scores, loss, epsilon)
    return total


def streamed_regression_loss(source, y, w_ext, B, p, squared):
    """sum_i loss(y_i - w.x_i) over every row of the chunk source, one pass:
    the epsilon-insensitive loss max(0, |r| - p), or its square when ``squared``."""
    from .dcd._dcd_regression_kernels import svr_loss_sum
    total = 0.0
    bounds = source.bounds
    for j, c in source.blocks():
        scores = margins(c.indptr, c.indices, c.values, w_ext, B, 0.0, np.empty(c.n_rows))
        total += svr_loss_sum(y[bounds[j]:bounds[j + 1]], scores, p, squared)
    return total
