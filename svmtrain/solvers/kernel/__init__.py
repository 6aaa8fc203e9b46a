"""Kernel (support-vector expansion) solvers: SMO, SBP, CVM, NORMA and kernel Pegasos."""
