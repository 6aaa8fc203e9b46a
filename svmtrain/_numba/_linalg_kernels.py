"""Dense linear solves for small systems inside numba kernels.

numba's ``np.linalg.solve`` / ``lstsq`` go through LAPACK wrappers whose
compilation costs seconds; the QP of ``-s ocas`` only needs the solution
of small dense systems (the KKT matrix of a face of its simplex), for
which plain Gaussian elimination is enough and compiles in a fraction of
that time.
"""
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def lu_solve(M, r, rcond):
    """Solve ``M x = r`` (M square, not modified) by Gaussian elimination
    with complete pivoting. Returns ``(full_rank, x)``.

    The pivot of each step is the largest remaining entry in absolute
    value. When it is ``<= rcond * (the first pivot)`` (with ``rcond = 0``:
    when it is exactly 0, as LAPACK's getrf reports singularity), the
    matrix is treated as having the rank ``k`` reached so far:
    ``full_rank`` is False and x is the basic solution that solves the
    leading k pivoted equations with the other unknowns set to 0 (it
    solves ``M x = r`` whenever the system is consistent and the dropped
    part is exactly singular). Otherwise ``full_rank`` is True and x is
    the solution, accurate to about cond(M) * 1e-16 relative. A NaN
    entry makes the rank stop there (never an exception).
    """
    n = M.shape[0]
    A = np.empty((n, n))
    b = np.empty(n)
    col = np.empty(n, np.int64)
    for i in range(n):
        b[i] = r[i]
        col[i] = i
        for j in range(n):
            A[i, j] = M[i, j]
    rank = n
    first = 0.0
    for k in range(n):
        best = -1.0
        bi = k
        bj = k
        for i in range(k, n):
            for j in range(k, n):
                a = abs(A[i, j])
                if a > best:
                    best = a
                    bi = i
                    bj = j
        if k == 0:
            first = best
        if not (best > rcond * first) or best <= 0.0:
            rank = k
            break
        if bi != k:
            for j in range(n):
                t = A[k, j]
                A[k, j] = A[bi, j]
                A[bi, j] = t
            t = b[k]
            b[k] = b[bi]
            b[bi] = t
        if bj != k:
            for i in range(n):
                t = A[i, k]
                A[i, k] = A[i, bj]
                A[i, bj] = t
            c = col[k]
            col[k] = col[bj]
            col[bj] = c
        piv = A[k, k]
        for i in range(k + 1, n):
            f = A[i, k] / piv
            if f != 0.0:
                for j in range(k + 1, n):
                    A[i, j] -= f * A[k, j]
                b[i] -= f * b[k]
    y = np.zeros(n)
    for k in range(rank - 1, -1, -1):
        s = b[k]
        for j in range(k + 1, rank):
            s -= A[k, j] * y[j]
        y[k] = s / A[k, k]
    x = np.empty(n)
    for k in range(n):
        x[col[k]] = y[k]
    return rank == n, x
