"""Numba plumbing: options, start-up, and small kernels shared by several packages (LU solve, sort, %g formatting)."""
