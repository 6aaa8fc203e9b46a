"""Dual coordinate descent (LIBLINEAR's solvers): hinge and squared hinge, logistic, SVR, one-class, Crammer-Singer, streamed."""
