"""Plain NumPy twins of svmtrain/distributed/_kernels.py (and of the Pegasos losses they call)."""
import numpy as np

from naive import loss_slope as slope

LOSSES = ("hinge", "log", "epsilon-insensitive", "squared-epsilon-insensitive")


def targets(labels, pos, regression):
    return np.asarray(labels, float) if regression else np.where(labels == pos, 1.0, -1.0)


def loss(name, s, y, p):
    """The loss of each score s_i against y_i."""
    if name == "hinge":
        return np.maximum(0.0, 1.0 - y * s)
    if name == "log":
        return np.logaddexp(0.0, -y * s)
    e = np.maximum(np.abs(s - y) - p, 0.0)
    return e if name == "epsilon-insensitive" else e * e


def batch_slopes(Xe, labels, pos, regression, rows, w, b, name, p):
    """(g, rows with a nonzero slope, their slope sum): g = sum g_i x_i over
    the rows (with repeats); Xe has the constant feature last."""
    y = targets(labels[rows], pos, regression)
    gi = slope(name, Xe[rows] @ w + b, y, p)
    nz = gi != 0.0
    return (gi[:, None] * Xe[rows]).sum(axis=0), int(nz.sum()), float(gi.sum())


def loss_sum(Xe, labels, pos, regression, w, b, name, p):
    return float(loss(name, Xe @ w + b, targets(labels, pos, regression), p).sum())
