"""Feature scaling (svm-scale) and its numba kernels."""
