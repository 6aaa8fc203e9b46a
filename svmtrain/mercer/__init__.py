"""Mercer kernels ("kernel" in this package means only these; numba code lives in ``*_kernels.py``
modules everywhere else) and what is built on them.

* :mod:`.functions`: the kernel functions (linear, polynomial, RBF, sigmoid),
  their parameters (:class:`~.functions.Kernel`) and kernel matrices;
* :mod:`.cache`: the kernel row cache of the kernel solvers (smo, sbp, kernel pegasos);
* :mod:`.feature_maps`: asset's approximate feature maps (Nystrom, random
  Fourier features); the models live in :mod:`svmtrain.models`.
"""
