"""The solver registry: the one table of solver names and what each can do.

Each family package declares its solvers (:class:`.contract.Declaration`,
in ``FAMILY/__init__.py``, data only); :data:`REGISTRY` collects them, in
the order the command line lists them. Every layer asks the functions
below (which solvers train a task, take a kernel, stream, run on Dask,
take sample weights...) and never names a solver, so a new solver, or a
new capability of one, is a change in its own package alone. A refusal
names the solvers that can, from the same table.

Importing a solver compiles or loads only its own numba kernels:
:func:`get_solver` imports the one module that trains the problem asked
for (its variant for a task or loss, its kernelized or Crammer-Singer
module), so ``svm-train -s pegasos`` never pays for the others.
"""
import importlib

from ..errors import ParameterError
from ..tasks import DEFAULT_LOSS, LOSSES, NAMES
from .contract import PENALTIES, PENALTY_NAMES
from .asset import DECLARATIONS as _ASSET
from .dcd import DECLARATIONS as _DCD
from .kernel import DECLARATIONS as _KERNEL
from .l1 import DECLARATIONS as _L1
from .ocas import DECLARATIONS as _OCAS
from .sgd import DECLARATIONS as _SGD
from .tron import DECLARATIONS as _TRON

_ORDER = ("dcd", "ocas", "pegasos", "tron", "cdn", "smo", "sbp", "asset", "sgd", "bmrm", "norma", "cvm")
_ALL = {d.name: d for d in _DCD + _L1 + _OCAS + _SGD + _KERNEL + _ASSET + _TRON}
REGISTRY = {name: _ALL[name] for name in _ORDER}
assert set(REGISTRY) == set(_ALL), "every declared solver has its place in _ORDER"
SOLVERS = tuple(REGISTRY)


def declaration(name):
    """The Declaration of ``-s name``; ParameterError naming the known solvers otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ParameterError(f"unknown solver '{name}'; known solvers: {', '.join(SOLVERS)}") from None


def names(predicate):
    """The solvers whose Declaration satisfies ``predicate``, in registry order."""
    return [name for name, d in REGISTRY.items() if predicate(d)]


def listing(solvers, kernel_note=False):
    """'-s a, -s b' of ``solvers``; with ``kernel_note``, ' -t K' after those
    that train a kernel model only with a nonlinear -t."""
    return ", ".join(f"-s {s}" + (" -t K" if kernel_note and REGISTRY[s].kernel == "nonlinear" else "")
                     for s in solvers)


# ----------------------------------------------------------- tasks and losses

def solvers_for(task, loss=None):
    """The solvers that train ``task`` (with ``loss`` when given), in registry order."""
    return names(lambda d: d.trains(task, loss))


def default_loss(task, solver=None):
    """The loss of ``task`` when --loss is not given: the task's first loss,
    or, when ``solver`` trains the task but not with that loss, the
    solver's first loss for it (None for an unknown task)."""
    d = REGISTRY.get(solver)
    losses = d.tasks.get(task, ()) if d is not None else ()
    if losses and DEFAULT_LOSS.get(task) not in losses:
        return losses[0]
    return DEFAULT_LOSS.get(task)


def check_supported(solver, task, loss, kernel_type=None):
    """Raise ParameterError naming the alternatives unless ``solver`` trains
    ``task`` with ``loss`` (with ``-t kernel_type``)."""
    if task not in NAMES:
        raise ParameterError(f"-z must be one of {', '.join(NAMES)} (got {task})")
    if loss not in LOSSES[task]:
        raise ParameterError(f"--loss {loss} is not a {NAMES[task]} loss; -z {task} takes "
                             f"{', '.join(LOSSES[task])}")
    d = declaration(solver)
    if d.trains(task, loss, kernel_type):
        return
    what = f"{NAMES[task]} (--task {task})" + ("" if loss == DEFAULT_LOSS[task] else f" with --loss {loss}")
    if d.trains(task, loss):        # but not with this kernel
        able = names(lambda x: x.trains(task, loss, kernel_type) and x.trains_kernel_model(kernel_type))
        raise ParameterError(f"-s {solver} with a kernel (-t {kernel_type}) does not train {what}; "
                             + (f"kernel solvers that do: {listing(able)}" if able else
                                f"no kernel solver does; -s {solver} without -t trains it linearly"))
    others = solvers_for(task, loss)
    hints = []
    if task in d.tasks:
        hints.append(f"it takes --loss {', '.join(d.tasks[task])} there")
    if others:
        hints.append(f"solvers that do: {listing(others)}")
    raise ParameterError(f"-s {solver} does not train {what}; " + ("; ".join(hints) or "no solver trains it yet"))


# ----------------------------------------------------------------- penalties

def default_penalty(solver):
    """The regulariser of ``-s solver`` when --penalty is not given: its first (None for an unknown solver)."""
    d = REGISTRY.get(solver)
    return d.penalties[0] if d is not None else None


def check_penalty(solver, penalty):
    """Raise ParameterError naming the solvers that do unless ``-s solver``
    trains models with ``--penalty penalty`` (None: its default, always)."""
    if penalty is None:
        return
    if penalty not in PENALTIES:
        raise ParameterError(f"--penalty must be one of {', '.join(PENALTIES)} (got {penalty})")
    d = declaration(solver)
    if penalty in d.penalties:
        return
    others = names(lambda x: penalty in x.penalties)
    raise ParameterError(f"-s {solver} does not train --penalty {penalty} ({PENALTY_NAMES[penalty]}); "
                         f"it takes --penalty {', '.join(d.penalties)}; solvers that do: {listing(others)}")


def trains_nu(solver, task):
    """Whether ``--nu`` with ``-s solver --task task`` trains the nu
    formulation (LIBSVM's nu-SVC, nu-SVR: the Declaration's ``nu_tasks``)."""
    d = REGISTRY.get(solver)
    return d is not None and task in d.nu_tasks


def check_sample_weights(solver, task, loss):
    """Raise ParameterError naming the alternatives unless ``solver`` takes row weights for ``task`` with ``loss``."""
    if declaration(solver).takes_sample_weights(task, loss):
        return
    others = names(lambda d: d.takes_sample_weights(task, loss))
    raise ParameterError(f"sample weights are not supported by -s {solver} for {NAMES.get(task, task)} with "
                         f"--loss {loss}" + (f"; solvers that take them: {', '.join(others)}" if others else ""))


# ----------------------------------------------------------------- kernels

def trains_kernel_model(name, kernel_type=None):
    """Whether ``-s name`` with ``-t kernel_type`` (None: not given) trains a kernel model."""
    return declaration(name).trains_kernel_model(kernel_type)


def precomputed_solvers():
    """The solvers that take LIBSVM's precomputed kernels (-t 4)."""
    return names(lambda d: d.precomputed)


def kernel_solvers():
    """The solvers that train kernel models: those that always do, then those that need -t K."""
    return names(lambda d: d.kernel == "always") + names(lambda d: d.kernel == "nonlinear")


# ----------------------------------------------------------------- modules

def get_solver(name, kernel_type=None, task=None, loss=None, multiclass="ovr"):
    """The solver module for ``-s name``: its Crammer-Singer module for
    ``multiclass="cs"``, its kernelized module for a nonlinear
    ``-t kernel_type`` where it has one, its variant for ``task`` (and
    ``loss``) where it declares one, else the base module.
    The module's ``fit`` (or ``train_model``) trains exactly that problem."""
    d = declaration(name)
    module = d.module_for(task, loss, kernel_type, multiclass)
    if module is None:
        raise ParameterError(f"--multiclass cs (Crammer-Singer) is trained by "
                             f"{listing(names(lambda x: x.multiclass_cs))}, not -s {name}")
    return importlib.import_module(module)


def require_base(name, params):
    """ParameterError unless ``params``' task and loss are trained by solver
    ``name``'s base module itself (a guard for direct calls of its fit)."""
    d = declaration(name)
    variant = d.variants.get((params.task, params.loss)) or d.variants.get((params.task,))
    if variant is not None:
        raise ParameterError(f"-s {name} --task {params.task} --loss {params.loss} is trained by {variant}: "
                             f"get it with svmtrain.solvers.get_solver({name!r}, task=..., loss=...)")


def load(spec):
    """The object that ``"module:name"`` names (a declaration's hook), imported now."""
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)
