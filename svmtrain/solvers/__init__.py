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
}


def get_solver(name):
    """The solver module for ``-s name`` (params.check_params has vetted the name)."""
    if name not in SOLVERS:
        raise ParameterError(f"unknown solver '{name}'; known solvers: {', '.join(SOLVERS)}")
    return importlib.import_module(SOLVERS[name])
