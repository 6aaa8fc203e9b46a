"""What a solver declares it can do: the one contract between a solver and the layers.

Each solver family's package (``svmtrain/solvers/FAMILY/__init__.py``)
declares its solvers with :class:`Declaration`, next to their code; the
registry (:mod:`svmtrain.solvers`) collects the declarations, and every
layer (the parameter checks, cross-validation, ``-C``, ``--grid``,
``--stream``, ``--engine dask``, sample weights, the estimators, the
command line's messages) asks the registry instead of naming solvers.
A declaration is data only: modules are named by their dotted paths and
imported when a run needs them, so reading the registry compiles nothing.
"""
from dataclasses import dataclass, field
from types import MappingProxyType

from ..tasks import CLASSIFICATION, LOSSES, NAMES

EMPTY = MappingProxyType({})
# the regularisers (--penalty): l2 = 1/2 |w|^2, l1 = |w|_1 (the constant feature of -B included in both)
PENALTIES = ("l2", "l1")
PENALTY_NAMES = {"l2": "L2-regularised, 1/2 |w|^2", "l1": "L1-regularised, |w|_1: sparse weights"}


@dataclass(frozen=True)
class Streamed:
    """How a solver trains out of core (``--stream``, ``--memory-limit``).

    ``tasks``: task -> the losses it streams. ``module``: the module that
    trains from a chunk source (None: the solver's own in-memory module's
    ``fit`` takes a source): its ``fit(source, y, d, params, ...)`` trains
    a binary problem, or its ``train_model(source, order, problems, d,
    params, plan, progress, log)`` the whole model where it has one.
    ``memory``: ``"module:function"``, the solver's memory plan,
    ``function(name, n, d, params, limit, nnz, n_problems) -> MemoryPlan``
    (see :mod:`svmtrain.solvers.memory_plan`). ``shuffle_buffer``: it draws
    rows through pegasos' shuffle buffer (``--shuffle-buffer``); ``module``
    then has ``shuffle_cost(plan, source, params, d)``, which reserves the
    solver's own shares beside the buffer in the plan and returns the bytes
    of a buffer of r rows as a function of r, and its ``fit`` takes
    ``shuffle_rows=`` and ``longest=``. ``cut_buffer``: it keeps OCAS's cut
    buffer, sized by the limit (its plan's ``cut_buffer`` and
    ``want_cuts``). ``multiclass_cs``: the module that streams its
    Crammer-Singer problem (``train_model(source, labels, order, d, params,
    progress, log)``), if any; ``multiclass_cs_memory``: that problem's
    memory plan (as ``memory``, with ``n_problems`` the number of
    classes). ``check``: ``"module:function"`` of further checks of a
    streamed run (or None). ``warm_up``: its streamed runs for
    ``svm-train --precompile`` (TrainParams keywords, as :attr:`Declaration.warm_up`).
    """
    tasks: dict
    module: str = None
    memory: str = None
    shuffle_buffer: bool = False
    cut_buffer: bool = False
    multiclass_cs: str = None
    multiclass_cs_memory: str = None
    check: str = None
    warm_up: tuple = ()


@dataclass(frozen=True)
class Declaration:
    """What ``-s name`` trains and which layers it composes with.

    * ``module``: the base module; its ``fit`` (one binary problem) or
      ``train_model`` (the whole model) trains every (task, loss) pair of
      ``tasks`` that ``variants`` does not send elsewhere.
    * ``tasks``: task -> the losses it trains (svmtrain.tasks' letters and names).
    * ``variants``: (task,) or (task, loss) -> the module that trains that problem.
    * ``kernel``: "none" (linear models only), "always" (a kernel model
      whatever ``-t``, linear kernel included) or "nonlinear" (a kernel
      model with ``-t`` other than 0, trained by ``kernelized``, which trains
      ``kernelized_tasks``: task -> losses, when not all of ``tasks``).
    * ``precomputed``: it trains on LIBSVM's precomputed kernels (``-t 4``:
      the data are kernel values, ``0:ID`` then K against every training row).
    * ``multiclass_cs``: the module of its Crammer-Singer problem (``--multiclass cs``).
    * ``sample_weights``: task -> the losses it takes row weights for (Python API).
    * ``options``: (TrainParams field, flag) of the options only this solver
      reads; given to another solver they are refused.
    * ``reads``: TrainParams fields of further options only this solver reads
      but that other solvers accept and ignore, as they always have (shown
      under its name in ``svm-train --help``).
    * ``penalties``: the regularisers of its models (``--penalty``, of
      :data:`PENALTIES`), its default first: ``l2`` (1/2 |w|^2, every
      solver but the L1 ones) or ``l1`` (|w|_1, sparse linear models).
    * ``bias``: it takes LIBLINEAR's ``-B`` (a constant feature) on linear models.
    * ``online``: its linear model can be updated a batch of rows at a time
      (:mod:`svmtrain.training.online`, the estimators' ``partial_fit``).
    * ``libsvm_summary``: svm-train ends its run with LIBSVM's lines (obj, rho, nSV, nBSV).
    * ``nu_tasks``: the tasks where ``--nu`` trains the nu formulation
      (LIBSVM's nu-SVC, nu-SVR): in classification nu replaces C (``-c``,
      ``-w`` are refused), in regression it finds the tube width (``-p`` unused).
    * ``warm_up``: the runs that compile its kernels (``svm-train --precompile``):
      each a dict of TrainParams keywords, plus the tiny data's shape where it
      is not two classes of 48 rows and 7 features (``classes``, ``rows``,
      ``features``; ``ranking``: relevance labels in qid groups; ``counts``:
      small whole-number values, as word counts).
    * ``streamed``: a :class:`Streamed`, or None (in memory only).
    * ``dask``: task -> loss -> the module that trains it on a cluster
      (``--engine dask``); ``dask_cs``: its Crammer-Singer module there.
    """
    name: str
    summary: str
    module: str
    tasks: dict
    variants: dict = field(default_factory=dict)
    kernel: str = "none"
    kernelized: str = None
    kernelized_tasks: dict = None
    precomputed: bool = False
    multiclass_cs: str = None
    sample_weights: dict = field(default_factory=dict)
    options: tuple = ()
    reads: tuple = ()
    penalties: tuple = ("l2",)
    bias: bool = False
    online: bool = False
    libsvm_summary: bool = False
    nu_tasks: tuple = ()
    warm_up: tuple = ()
    streamed: Streamed = None
    dask: dict = field(default_factory=dict)
    dask_cs: str = None

    def __post_init__(self):
        for task, losses in self.tasks.items():
            bad = [loss for loss in losses if loss not in LOSSES[task]]
            if bad:
                raise ValueError(f"-s {self.name}: {bad} are not {NAMES[task]} losses")
        if self.kernel not in ("none", "always", "nonlinear"):
            raise ValueError(f"-s {self.name}: kernel must be none, always or nonlinear")
        if not self.penalties or any(p not in PENALTIES for p in self.penalties):
            raise ValueError(f"-s {self.name}: penalties must be some of {', '.join(PENALTIES)}")
        if (self.kernel == "nonlinear") != (self.kernelized is not None):
            raise ValueError(f"-s {self.name}: a kernelized module goes with kernel='nonlinear' only")

    def trains(self, task, loss=None, kernel_type=None):
        """Whether it trains ``task`` (with ``loss`` when given) in memory, with ``-t kernel_type``."""
        tasks = self.tasks
        if self.kernelized_tasks is not None and kernel_type not in (None, 0):
            tasks = self.kernelized_tasks
        return task in tasks and (loss is None or loss in tasks[task])

    def module_for(self, task=None, loss=None, kernel_type=None, multiclass="ovr"):
        """The dotted name of the module that trains this problem."""
        if multiclass == "cs":
            return self.multiclass_cs
        if self.kernelized is not None and kernel_type not in (None, 0):
            return self.kernelized
        return self.variants.get((task, loss)) or self.variants.get((task,)) or self.module

    def trains_kernel_model(self, kernel_type=None):
        """Whether ``-t kernel_type`` (None: not given) makes it train a kernel model."""
        return self.kernel == "always" or (self.kernel == "nonlinear" and kernel_type not in (None, 0))

    def takes_kernel_options(self):
        """Whether -t, -g, -d and -r mean something to it."""
        return self.kernel != "none"

    def streams(self, task=CLASSIFICATION, loss=None):
        """Whether it trains ``task`` (with ``loss``) out of core."""
        s = self.streamed
        return s is not None and task in s.tasks and (loss is None or loss in s.tasks[task])

    def dask_module(self, task, loss):
        """The dotted name of the module that trains (task, loss) on a cluster, or None."""
        return self.dask.get(task, EMPTY).get(loss)

    def takes_sample_weights(self, task, loss):
        return loss in self.sample_weights.get(task, ())

    def trains_transductive(self, loss="hinge"):
        """Whether it trains the transductive SVM (--transduction) with
        ``loss``: a linear classifier that takes row costs (sample weights)."""
        return self.kernel != "always" and self.takes_sample_weights(CLASSIFICATION, loss)
