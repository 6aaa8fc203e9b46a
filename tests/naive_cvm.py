"""Plain-NumPy/SciPy twins of the Core Vector Machine (svmtrain/solvers/kernel/cvm.py).

The exact minimum enclosing ball of the points with kernel matrix Kt
(constant diagonal eta) solves  min alpha' Kt alpha  over the simplex. The
twin solves it by non-negative least squares, independently of any SMO:
with Kt = L L', minimising |L' a|^2 + (1' a - 1)^2 over a >= 0 gives
a = s beta with beta the simplex minimiser (for a fixed s = 1' a the
first term is s^2 beta' Kt beta and the second does not depend on beta),
so beta = a / sum(a). SciPy's nnls is an active-set method (Lawson-Hanson)
that ends at the exact solution up to rounding.
"""
import numpy as np
from scipy.linalg import cholesky
from scipy.optimize import nnls


def transformed_kernel(Kx, y, C):
    """K~ = y y' (Kx + 1) + I / C (the CVM's two-class L2-SVM kernel)."""
    return np.outer(y, y) * (Kx + 1.0) + np.eye(len(y)) / C


def meb(Kt):
    """(alpha, R^2) of the exact MEB of the points of Kt (constant diagonal): alpha on the simplex
    minimising alpha' Kt alpha, R^2 = Kt_11 - alpha' Kt alpha."""
    m = len(Kt)
    L = cholesky(Kt, lower=True)
    A = np.vstack([L.T, np.ones((1, m))])
    rhs = np.zeros(m + 1)
    rhs[-1] = 1.0
    a, _ = nnls(A, rhs, maxiter=50 * m)
    beta = a / a.sum()
    return beta, float(Kt[0, 0] - beta @ Kt @ beta)


def distances2(Kt, alpha):
    """|c - phi~(z_i)|^2 of every point for the centre c = sum_i alpha_i phi~(z_i)."""
    return np.diag(Kt) - 2.0 * Kt @ alpha + alpha @ Kt @ alpha


def decision(Kx_test, y, alpha):
    """f(x) = sum_i alpha_i y_i k(x_i, x) + b, b = sum_i alpha_i y_i (paper eq. 18), for each
    column of Kx_test = k(x_i, x_test)."""
    ya = alpha * y
    return ya @ Kx_test + ya.sum()
