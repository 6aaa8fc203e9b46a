"""Stochastic (sub)gradient solvers: Pegasos and SVM-SGD / SGD-QN / FOBOS, in memory and streamed."""
