"""Solver registry: ``-s`` name -> module, imported lazily.

Importing a solver compiles or loads only its own numba kernels, so
``svm-train -s pegasos`` never pays for the others.
"""
import importlib

from ..errors import ParameterError

SOLVERS = {
    "pegasos": "svmtrain.solvers.pegasos",
    "dcd": "svmtrain.solvers.dcd",
    "ocas": "svmtrain.solvers.ocas",
    "sbp": "svmtrain.solvers.sbp",
    "asset": "svmtrain.solvers.asset",
}
# solvers that train kernel models (-t, -g, -d, -r); the others are linear only
KERNEL_SOLVERS = ("pegasos", "sbp", "asset")
# solvers with a separate kernelized module, used when -t names a nonlinear kernel
KERNELIZED = {"pegasos": "svmtrain.solvers.kernel_pegasos"}


def get_solver(name, kernel_type=None):
    """The solver module for ``-s name`` (and ``-t kernel_type`` where it matters)."""
    if name not in SOLVERS:
        raise ParameterError(f"unknown solver '{name}'; known solvers: {', '.join(SOLVERS)}")
    if kernel_type not in (None, 0) and name in KERNELIZED:
        return importlib.import_module(KERNELIZED[name])
    return importlib.import_module(SOLVERS[name])
