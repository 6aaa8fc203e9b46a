"""A small stable argsort for numba kernels.

numba's own ``np.argsort`` (quicksort or mergesort) costs about a second
of compilation per key dtype; this one is a few loops (insertion sort of
runs of ``RUN`` elements, then bottom-up merging between two buffers)
and compiles in a fraction of that. It is O(n log n) in the worst case
and O(n) on already sorted input, which is the common case for the rows
of a LIBSVM file and for short lists.
"""
import numpy as np
from numba import njit

RUN = 16


@njit(cache=True, nogil=True)
def argsort_range(keys, lo, hi, perm):
    """Stable argsort of ``keys[lo:hi]`` into ``perm[:hi-lo]``.

    Afterwards ``keys[lo + perm[0]] <= keys[lo + perm[1]] <= ...``, ties
    in their original order, i.e. ``perm[:hi-lo]`` equals
    ``np.argsort(keys[lo:hi], kind="stable")``. ``perm`` is an int64
    array with at least ``hi - lo`` entries; keys must not be NaN.
    """
    n = hi - lo
    for p in range(n):
        perm[p] = p
    # insertion sort of each run of RUN elements
    for s in range(0, n, RUN):
        e = min(s + RUN, n)
        for p in range(s + 1, e):
            q = perm[p]
            kq = keys[lo + q]
            j = p - 1
            while j >= s and keys[lo + perm[j]] > kq:
                perm[j + 1] = perm[j]
                j -= 1
            perm[j + 1] = q
    if n <= RUN:
        return perm
    # bottom-up merges, alternating between perm and tmp
    tmp = np.empty(n, np.int64)
    src = perm
    dst = tmp
    in_tmp = False      # whether the sorted runs are in tmp
    width = RUN
    while width < n:
        for s in range(0, n, 2 * width):
            m = min(s + width, n)
            e = min(s + 2 * width, n)
            i = s
            j = m
            o = s
            if m < e and keys[lo + src[m - 1]] <= keys[lo + src[m]]:
                # the two runs are already in order: copy
                for p in range(s, e):
                    dst[p] = src[p]
                continue
            while i < m and j < e:
                if keys[lo + src[j]] < keys[lo + src[i]]:
                    dst[o] = src[j]
                    j += 1
                else:
                    dst[o] = src[i]
                    i += 1
                o += 1
            while i < m:
                dst[o] = src[i]
                i += 1
                o += 1
            while j < e:
                dst[o] = src[j]
                j += 1
                o += 1
        src, dst = dst, src
        in_tmp = not in_tmp
        width *= 2
    if in_tmp:
        for p in range(n):
            perm[p] = src[p]
    return perm
