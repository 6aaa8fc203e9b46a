"""Solver registry: ``-s`` name (with kernel, task and loss) -> module, imported lazily.

Importing a solver compiles or loads only its own numba kernels, so
``svm-train -s pegasos`` never pays for the others. A solver's variant for
another task or loss lives in a module of its own (:data:`VARIANTS`), which
may build on the base module; the base module never imports its variants.
Which pairs exist at all is :data:`svmtrain.tasks.SUPPORT`'s business.
"""
import importlib

from ..errors import ParameterError
from ..tasks import CLASSIFICATION, ONE_CLASS, RANKING, REGRESSION

SOLVERS = {
    "pegasos": "svmtrain.solvers.sgd.pegasos",
    "dcd": "svmtrain.solvers.dcd.dcd",
    "ocas": "svmtrain.solvers.ocas.ocas",
    "sbp": "svmtrain.solvers.kernel.sbp",
    "smo": "svmtrain.solvers.kernel.smo",
    "asset": "svmtrain.solvers.asset.asset",
    "tron": "svmtrain.solvers.tron.tron_ranking",     # trains ranking only (tasks.SUPPORT)
    # the survey's other solvers (Menon 2009, Table 1)
    "sgd": "svmtrain.solvers.sgd.sgd",               # SVM-SGD, SGD-QN, FOLOS (--update)
    "bmrm": "svmtrain.solvers.ocas.bmrm",             # BMRM / SVMperf: ocas's cutting planes without line search
    "norma": "svmtrain.solvers.kernel.norma",           # kernel online SGD with a truncated expansion
    "cvm": "svmtrain.solvers.kernel.cvm",               # Core Vector Machine: a minimum enclosing ball by core sets
}
# solvers that train kernel models (-t, -g, -d, -r); the others are linear only
KERNEL_SOLVERS = ("pegasos", "sbp", "asset", "smo", "norma", "cvm")
# solvers with a separate kernelized module, used when -t names a nonlinear kernel
KERNELIZED = {"pegasos": "svmtrain.solvers.kernel.kernel_pegasos"}
# (solver, task) or (solver, task, loss) -> the module that trains that
# problem; every other supported pair is the base module's
VARIANTS = {
    ("dcd", REGRESSION): "svmtrain.solvers.dcd.dcd_regression",
    ("dcd", ONE_CLASS): "svmtrain.solvers.dcd.dcd_oneclass",
    ("dcd", CLASSIFICATION, "log"): "svmtrain.solvers.dcd.dcd_logistic",
    ("ocas", CLASSIFICATION, "log"): "svmtrain.solvers.ocas.ocas_logistic",
    ("ocas", RANKING): "svmtrain.solvers.ocas.ocas_ranking",
    ("ocas", REGRESSION): "svmtrain.solvers.ocas.ocas_regression",
}

# solver -> the module of its Crammer-Singer multi-class problem (--multiclass cs)
MULTICLASS_CS = {"dcd": "svmtrain.solvers.dcd.dcd_cs", "ocas": "svmtrain.solvers.ocas.ocas_cs"}


def trains_kernel_model(name, kernel_type=None):
    """Whether ``-s name`` with ``-t kernel_type`` (None: not given) trains a
    kernel model: a kernel solver, and for one with a separate kernelized
    module (KERNELIZED) only with a nonlinear -t."""
    return name in KERNEL_SOLVERS and (name not in KERNELIZED or kernel_type not in (None, 0))


def get_solver(name, kernel_type=None, task=None, loss=None, multiclass="ovr"):
    """The solver module for ``-s name``: its Crammer-Singer module for
    ``multiclass="cs"``, its kernelized module for a nonlinear
    ``-t kernel_type`` where it has one, its variant for ``task`` (and
    ``loss``) where :data:`VARIANTS` names one, else the base module.
    The module's ``fit`` (or ``train_model``) trains exactly that problem."""
    if name not in SOLVERS:
        raise ParameterError(f"unknown solver '{name}'; known solvers: {', '.join(SOLVERS)}")
    if multiclass == "cs":
        return importlib.import_module(MULTICLASS_CS[name])
    if kernel_type not in (None, 0) and name in KERNELIZED:
        return importlib.import_module(KERNELIZED[name])
    variant = VARIANTS.get((name, task, loss)) or VARIANTS.get((name, task))
    return importlib.import_module(variant or SOLVERS[name])


def require_base(name, params):
    """ParameterError unless ``params``' task and loss are trained by solver
    ``name``'s base module itself (a guard for direct calls of its fit)."""
    variant = VARIANTS.get((name, params.task, params.loss)) or VARIANTS.get((name, params.task))
    if variant is not None:
        raise ParameterError(f"-s {name} --task {params.task} --loss {params.loss} is trained by {variant}: "
                             f"get it with svmtrain.solvers.get_solver({name!r}, task=..., loss=...)")
