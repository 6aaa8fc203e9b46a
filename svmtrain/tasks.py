"""The task axis: what a model predicts, by which loss, and which solver trains it.

A training run is a solver (``-s``) applied to a task (``-z``) with a loss
(``--loss``)::

    -z c  classification       hinge, squared-hinge, log     labels; one-vs-rest for k > 2
    -z r  regression           epsilon-insensitive,          real targets; -p epsilon
                               squared-epsilon-insensitive
    -z p  preference ranking   pairwise-hinge,               labels are relevance, qid: groups
                               pairwise-squared-hinge
    -z o  one-class            one-class                     labels ignored

(SVMlight's letters for c, r and p; o added.) :data:`SUPPORT` is the one
place that says which solver trains which task with which loss; every
entry point (command line, Python API, streaming, Dask) checks a run
against it through :func:`check_supported`, so a solver never sees a pair
it does not implement and holds no if-ladder of its own.
"""
from .errors import ParameterError

CLASSIFICATION, REGRESSION, RANKING, ONE_CLASS = "c", "r", "p", "o"
NAMES = {CLASSIFICATION: "classification", REGRESSION: "regression", RANKING: "ranking", ONE_CLASS: "one-class"}
LOSSES = {
    CLASSIFICATION: ("hinge", "squared-hinge", "log"),
    REGRESSION: ("epsilon-insensitive", "squared-epsilon-insensitive"),
    RANKING: ("pairwise-hinge", "pairwise-squared-hinge"),
    ONE_CLASS: ("one-class",),
}
DEFAULT_LOSS = {task: losses[0] for task, losses in LOSSES.items()}
ALL_LOSSES = tuple(loss for losses in LOSSES.values() for loss in losses)
DEFAULT_EPSILON = 0.1       # -p, as LIBLINEAR and LIBSVM
DEFAULT_NU = 0.5            # --nu of the one-class SVM, as LIBLINEAR's and LIBSVM's -n

# solver -> task -> the losses it trains for that task
SUPPORT = {
    "dcd": {CLASSIFICATION: ("hinge", "squared-hinge", "log"),
            REGRESSION: ("epsilon-insensitive", "squared-epsilon-insensitive"),
            ONE_CLASS: ("one-class",)},
    "ocas": {CLASSIFICATION: ("hinge", "log"), RANKING: ("pairwise-hinge",),
             REGRESSION: ("epsilon-insensitive", "squared-epsilon-insensitive")},
    "pegasos": {CLASSIFICATION: ("hinge", "log"),
                REGRESSION: ("epsilon-insensitive", "squared-epsilon-insensitive")},
    "tron": {RANKING: ("pairwise-squared-hinge",)},
    "sbp": {CLASSIFICATION: ("hinge",)},
    "smo": {CLASSIFICATION: ("hinge",), REGRESSION: ("epsilon-insensitive",), ONE_CLASS: ("one-class",)},
    # asset: every loss but the hinge through --inner dcd (dcd on the mapped features)
    "asset": {CLASSIFICATION: ("hinge", "squared-hinge"),
              REGRESSION: ("epsilon-insensitive", "squared-epsilon-insensitive"),
              ONE_CLASS: ("one-class",)},
    "sgd": {CLASSIFICATION: ("hinge", "log"),
            REGRESSION: ("epsilon-insensitive", "squared-epsilon-insensitive")},
    "bmrm": {CLASSIFICATION: ("hinge",)},
    "norma": {CLASSIFICATION: ("hinge",)},
    # the CVM's minimum enclosing ball is the L2-SVM's dual (squared hinge, Tsang et al. 2005)
    "cvm": {CLASSIFICATION: ("squared-hinge",)},
}

# solver -> task -> the losses it trains with row weights (sample weights, Python API):
# dcd scales each row's dual bound (C_i = C s_i, LIBLINEAR's instance-weight
# variant), pegasos draws rows with probability proportional to their weight
SAMPLE_WEIGHTS = {
    "dcd": {CLASSIFICATION: ("hinge", "squared-hinge")},
    "pegasos": {CLASSIFICATION: ("hinge", "log"),
                REGRESSION: ("epsilon-insensitive", "squared-epsilon-insensitive")},
}


def check_sample_weights(solver, task, loss):
    """Raise ParameterError naming the alternatives unless ``solver`` takes row weights for ``task`` with ``loss``."""
    if loss in SAMPLE_WEIGHTS.get(solver, {}).get(task, ()):
        return
    others = [s for s, tasks in SAMPLE_WEIGHTS.items() if loss in tasks.get(task, ())]
    raise ParameterError(f"sample weights are not supported by -s {solver} for {NAMES.get(task, task)} with "
                         f"--loss {loss}" + (f"; solvers that take them: {', '.join(others)}" if others else ""))


def default_loss(task, solver=None):
    """The loss of ``task`` when --loss is not given: the task's first loss,
    or, when ``solver`` trains the task but not with that loss, the
    solver's first loss for it (None for an unknown task)."""
    losses = SUPPORT.get(solver, {}).get(task, ())
    if losses and DEFAULT_LOSS.get(task) not in losses:
        return losses[0]
    return DEFAULT_LOSS.get(task)


def solvers_for(task, loss=None):
    """The solvers that train ``task`` (with ``loss`` when given), in SUPPORT's order."""
    return [s for s, tasks in SUPPORT.items() if task in tasks and (loss is None or loss in tasks[task])]


def check_supported(solver, task, loss):
    """Raise ParameterError naming the alternatives unless ``solver`` trains ``task`` with ``loss``."""
    if task not in NAMES:
        raise ParameterError(f"-z must be one of {', '.join(NAMES)} (got {task})")
    if loss not in LOSSES[task]:
        raise ParameterError(f"--loss {loss} is not a {NAMES[task]} loss; -z {task} takes "
                             f"{', '.join(LOSSES[task])}")
    tasks = SUPPORT.get(solver, {})
    if task in tasks and loss in tasks[task]:
        return
    others = solvers_for(task, loss)
    what = f"{NAMES[task]} (--task {task})" + ("" if loss == DEFAULT_LOSS[task] else f" with --loss {loss}")
    hints = []
    if task in tasks:
        hints.append(f"it takes --loss {', '.join(tasks[task])} there")
    if others:
        hints.append(f"solvers that do: {', '.join('-s ' + s for s in others)}")
    raise ParameterError(f"-s {solver} does not train {what}; " + ("; ".join(hints) or "no solver trains it yet"))
