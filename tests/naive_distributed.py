"""Plain NumPy twins of svmtrain/distributed/_kernels.py."""
import numpy as np


def batch_violators(Xe, labels, pos, rows, w, b):
    """(g, violators, sum y): g = sum y_i x_i over the rows (with repeats)
    whose margin y_i (w.x_i + b) is below 1; Xe has the constant feature last."""
    y = np.where(labels[rows] == pos, 1.0, -1.0)
    viol = y * (Xe[rows] @ w + b) < 1.0
    g = (y[viol, None] * Xe[rows][viol]).sum(axis=0)
    return g, int(viol.sum()), float(y[viol].sum())


def hinge_sum(Xe, labels, pos, w, b):
    y = np.where(labels == pos, 1.0, -1.0)
    return float(np.maximum(0.0, 1.0 - y * (Xe @ w + b)).sum())
