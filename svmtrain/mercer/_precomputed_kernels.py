"""Numba kernels of LIBSVM's precomputed kernels (``-t 4``), over CSR rows read
with index base 0 (column c holds the file's index c).

A precomputed row is ``0:ID 1:K(x, x_1) ... M:K(x, x_M)``: dense from index
0, every index present, so column c of row i is ``values[indptr[i] + c]``
and K(x_i, x_j) is row i's column ID_j, the ID of row j (LIBSVM's
kernel_precomputed: ``x[i][(int) x[j][0].value].value``).
"""
import numpy as np
from numba import njit, prange

from .._numba.options import PRANGE, serial_twin

# what :func:`check_rows` found (the row is its first return value)
OK, NO_ID, GAP, BAD_ID, SHORT = 0, 1, 2, 3, 4


@njit(cache=True, nogil=True)
def check_rows(indptr, indices, values, training, need):
    """(row, problem, aux) of the first row that is not a precomputed row, or
    (-1, OK, need): every row starts with index 0 (else NO_ID) and holds every
    index from 0 to its last (else GAP, aux the first missing index).
    ``training``: each row's ID (its column 0) is an integer 1 <= ID <= the
    row's last index (else BAD_ID, aux that last index), and ``need``
    becomes the largest ID. Then every row's last index must be at least
    ``need`` (else SHORT, aux that last index): it has a value at every ID."""
    n = indptr.shape[0] - 1
    for i in range(n):
        lo = indptr[i]
        hi = indptr[i + 1]
        if hi == lo or indices[lo] != 0:
            return i, NO_ID, np.int64(0)
        for p in range(lo, hi):
            if indices[p] != p - lo:
                return i, GAP, np.int64(p - lo)
        if training:
            v = values[lo]
            if not (v >= 1.0 and v <= hi - lo - 1 and v == np.floor(v)):
                return i, BAD_ID, np.int64(hi - lo - 1)
    if training:
        need = np.int64(0)
        for i in range(n):
            need = max(need, np.int64(values[indptr[i]]))
    for i in range(n):
        if indptr[i + 1] - indptr[i] - 1 < need:
            return i, SHORT, np.int64(indptr[i + 1] - indptr[i] - 1)
    return np.int64(-1), OK, np.int64(need)


@njit(cache=True, nogil=True, parallel=PRANGE)
def gather(indptr, values, rows, ids, out):
    """out[r, c] = column ids[c] of row rows[r] (in out's dtype: the solver's
    float32 kernel rows, prediction's float64), in parallel over r. Every
    row must hold its columns 0..max(ids) densely (:func:`check_rows`)."""
    m = ids.shape[0]
    for r in prange(rows.shape[0]):
        base = indptr[rows[r]]
        for c in range(m):
            out[r, c] = values[base + ids[c]]
    return out


# below PARALLEL_MIN_WORK entries (svmtrain._numba.options) the same copy serially:
# a run on small data compiles no parallel kernel
gather_serial = serial_twin(gather)
