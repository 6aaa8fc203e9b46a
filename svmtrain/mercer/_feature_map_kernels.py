"""numba kernels of the random Fourier feature map (Rahimi and Recht 2008).

    z(x)[c] = scale * cos(phases[c] + sum_j x_j omega[j, c]),   scale = sqrt(2 / D)

computed straight from CSR rows: each stored entry x_j adds ``x_j`` times
row j of the dense ``omega`` (n_features x D, C order, so the inner loop is
contiguous), the input is never densified. Rows are split into blocks run
in parallel; each block accumulates in its own float64 scratch row so the
output may be float32 (the training cache) or float64 (prediction).
Features with index >= n_features (absent at training time) are ignored.

The cosine is :func:`fast_cos`, not libm's: without SVML numba calls a
scalar libm cos (~20 ns), which made the cosines 80 % of the map's time.
fast_cos reduces to r in [-pi, pi] (2 pi split in two parts) and sums the
Taylor series of cos to r^18: truncation error <= pi^20/20! < 4e-9,
vectorisable, several times faster.
"""
import math

import numpy as np
from numba import njit, prange

from .._numba import options as _opts
from .._numba.options import PRANGE
from .functions import kernel_from_dot

ROWS_PER_TASK = 64
INV_TWO_PI = 1.0 / (2.0 * math.pi)
TWO_PI_HI = 6.283185307179586          # float64 nearest 2 pi
TWO_PI_LO = 2.4492935982947064e-16     # 2 pi - TWO_PI_HI
# (-1)^m / (2m)!, m = 0..9
COS_COEFFS = tuple((-1.0) ** m / math.factorial(2 * m) for m in range(10))
C0, C1, C2, C3, C4, C5, C6, C7, C8, C9 = COS_COEFFS


@njit(cache=True, nogil=True, inline="always")
def fast_cos(x):
    """cos(x) to within 4e-9 for |x| up to ~1e6 (see the module docstring)."""
    k = np.floor(x * INV_TWO_PI + 0.5)
    r = (x - k * TWO_PI_HI) - k * TWO_PI_LO
    z = r * r
    return C0 + z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * (C6 + z * (C7 + z * (C8 + z * C9))))))))


@njit(cache=True, nogil=True)
def _fourier_range(indptr, indices, values, rows, omega, phases, scale, out, lo, hi, acc):
    """fourier_rows for lo <= r < hi; ``acc`` is float64[D] scratch."""
    n_features = omega.shape[0]
    D = omega.shape[1]
    for r in range(lo, hi):
        i = rows[r]
        for c in range(D):
            acc[c] = phases[c]
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            if j < n_features:
                v = values[p]
                for c in range(D):
                    acc[c] += v * omega[j, c]
        for c in range(D):
            out[r, c] = scale * fast_cos(acc[c])


@njit(cache=True, nogil=True, parallel=PRANGE)
def fourier_rows_parallel(indptr, indices, values, rows, omega, phases, scale, out):
    """fourier_rows in parallel over tasks of ROWS_PER_TASK rows."""
    n = rows.shape[0]
    D = omega.shape[1]
    for task in prange((n + ROWS_PER_TASK - 1) // ROWS_PER_TASK):
        acc = np.empty(D, np.float64)
        lo = task * ROWS_PER_TASK
        _fourier_range(indptr, indices, values, rows, omega, phases, scale, out, lo, min(n, lo + ROWS_PER_TASK),
                       acc)
    return out


def fourier_rows(indptr, indices, values, rows, omega, phases, scale, out):
    """out[r, :] = z(x_{rows[r]}) for every r; see the module docstring.
    In parallel from PARALLEL_MIN_WORK output entries on (the same numbers
    either way). Returns out."""
    n = rows.shape[0]
    if n * omega.shape[1] >= _opts.PARALLEL_MIN_WORK:
        return fourier_rows_parallel(indptr, indices, values, rows, omega, phases, scale, out)
    _fourier_range(indptr, indices, values, rows, omega, phases, scale, out, 0, n,
                   np.empty(omega.shape[1], np.float64))
    return out


@njit(cache=True, nogil=True)
def _landmark_range(indptr, indices, values, rows, F_ptr, F_landmark, F_values, L_sq,
                    code, gamma, degree, coef0, out, lo, hi):
    """landmark_kernel_rows for lo <= r < hi."""
    s = out.shape[1]
    n_features = F_ptr.shape[0] - 1
    for r in range(lo, hi):
        i = rows[r]
        for c in range(s):
            out[r, c] = 0.0
        sq = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            v = values[p]
            sq += v * v
            j = indices[p]
            if j < n_features:
                for q in range(F_ptr[j], F_ptr[j + 1]):
                    out[r, F_landmark[q]] += v * F_values[q]
        for c in range(s):
            out[r, c] = kernel_from_dot(out[r, c], sq, L_sq[c], code, gamma, degree, coef0)


@njit(cache=True, nogil=True, parallel=PRANGE)
def landmark_kernel_rows_parallel(indptr, indices, values, rows, F_ptr, F_landmark, F_values, L_sq,
                                  code, gamma, degree, coef0, out):
    """landmark_kernel_rows in parallel over tasks of ROWS_PER_TASK rows."""
    n = rows.shape[0]
    for task in prange((n + ROWS_PER_TASK - 1) // ROWS_PER_TASK):
        lo = task * ROWS_PER_TASK
        _landmark_range(indptr, indices, values, rows, F_ptr, F_landmark, F_values, L_sq,
                        code, gamma, degree, coef0, out, lo, min(n, lo + ROWS_PER_TASK))
    return out


def landmark_kernel_rows(indptr, indices, values, rows, F_ptr, F_landmark, F_values, L_sq,
                         code, gamma, degree, coef0, out):
    """out[r, c] = K(x_{rows[r]}, landmark c) from sparse rows and the
    landmarks stored by feature (CSC: feature j's entries are
    ``F_ptr[j]:F_ptr[j + 1]`` of ``F_landmark`` (landmark numbers) and
    ``F_values``; features >= len(F_ptr) - 1 occur in no landmark).

    Each stored entry x_j of a row adds x_j times feature j's landmark
    entries to the row's dot products: O(sum over the row's features of the
    landmarks having them), no dense copy of the landmarks; the sums run in
    the order of ``kernels._block``'s. |x|^2 counts every stored value of
    the row, as ``kernels.sq_norms``. The streamed Nystrom map uses it.
    In parallel from PARALLEL_MIN_WORK output entries on (the same numbers
    either way). Returns out.
    """
    n = rows.shape[0]
    if n * out.shape[1] >= _opts.PARALLEL_MIN_WORK:
        return landmark_kernel_rows_parallel(indptr, indices, values, rows, F_ptr, F_landmark, F_values, L_sq,
                                             code, gamma, degree, coef0, out)
    _landmark_range(indptr, indices, values, rows, F_ptr, F_landmark, F_values, L_sq,
                    code, gamma, degree, coef0, out, 0, n)
    return out
