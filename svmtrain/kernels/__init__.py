"""Kernels and what is built on them.

* :mod:`.functions`: the kernel functions (linear, polynomial, RBF, sigmoid),
  their parameters (:class:`~.functions.Kernel`) and kernel matrices;
* :mod:`.cache`: the kernel row cache of the kernel solvers (sbp, kernel pegasos);
* :mod:`.model`: :class:`~.model.KernelModel`, a support-vector expansion;
* :mod:`.feature_maps`: asset's approximate feature maps (Nystrom, random
  Fourier features) and the model over them.
"""
