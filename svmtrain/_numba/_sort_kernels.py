"""A small argsort for numba kernels.

numba's own ``np.argsort`` (quicksort or mergesort) costs about a second
of compilation per key dtype; this Shell sort is one loop nest and
compiles in about a sixth of that. Its gaps grow by a factor of about
2.25 (1, 3, 7, 16, 37, ...; Tokuda's ratio), which keeps it within a
small factor of O(n log n) on the sizes it sorts here (the entries of one
data row, the breakpoints of one bin of the ocas line search), and it is
O(n) on sorted input, the common case for the rows of a LIBSVM file.
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def argsort_range(keys, lo, hi, perm):
    """Argsort of ``keys[lo:hi]`` into ``perm[:hi-lo]``; returns ``perm``.

    Afterwards ``keys[lo + perm[0]] <= keys[lo + perm[1]] <= ...`` and
    ``perm[:hi-lo]`` is a permutation of ``0 .. hi-lo-1``; with distinct
    keys it equals ``np.argsort(keys[lo:hi])``. Equal keys may come in any
    order (the sort is not stable), but the result depends on the keys
    only. ``perm`` is an int64 array with at least ``hi - lo`` entries;
    keys must not be NaN.
    """
    n = hi - lo
    for p in range(n):
        perm[p] = p
    gaps = np.empty(64, np.int64)
    m = 0
    g = 1
    while g < n and m < 64:
        gaps[m] = g
        m += 1
        g = (9 * g) // 4 + 1
    for t in range(m - 1, -1, -1):
        gap = gaps[t]
        for p in range(gap, n):
            q = perm[p]
            kq = keys[lo + q]
            j = p
            while j >= gap and keys[lo + perm[j - gap]] > kq:
                perm[j] = perm[j - gap]
                j -= gap
            perm[j] = q
    return perm
