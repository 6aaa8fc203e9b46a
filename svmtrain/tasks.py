"""The task axis: what a model predicts, by which loss, and which solver trains it.

A training run is a solver (``-s``) applied to a task (``-z``) with a loss
(``--loss``)::

    -z c  classification       hinge, squared-hinge, log,    labels; one-vs-rest for k > 2
                               roc-area (every pos-neg pair)
    -z r  regression           epsilon-insensitive,          real targets; -p epsilon
                               squared-epsilon-insensitive
    -z p  preference ranking   pairwise-hinge,               labels are relevance, qid: groups
                               pairwise-squared-hinge
    -z o  one-class            one-class                     labels ignored

(SVMlight's letters for c, r and p; o added.) Which solver trains which
task with which loss each solver declares (:mod:`svmtrain.solvers`: its
``Declaration.tasks``); every entry point (command line, Python API,
streaming, Dask) checks a run against the registry through
:func:`svmtrain.solvers.check_supported`, so a solver never sees a pair
it does not implement and holds no if-ladder of its own.
"""
CLASSIFICATION, REGRESSION, RANKING, ONE_CLASS = "c", "r", "p", "o"
NAMES = {CLASSIFICATION: "classification", REGRESSION: "regression", RANKING: "ranking", ONE_CLASS: "one-class"}
LOSSES = {
    CLASSIFICATION: ("hinge", "squared-hinge", "log", "roc-area"),
    REGRESSION: ("epsilon-insensitive", "squared-epsilon-insensitive"),
    RANKING: ("pairwise-hinge", "pairwise-squared-hinge"),
    ONE_CLASS: ("one-class",),
}
DEFAULT_LOSS = {task: losses[0] for task, losses in LOSSES.items()}
ALL_LOSSES = tuple(loss for losses in LOSSES.values() for loss in losses)
DEFAULT_EPSILON = 0.1       # -p, as LIBLINEAR and LIBSVM
DEFAULT_NU = 0.5            # --nu of the one-class SVM, as LIBLINEAR's and LIBSVM's -n
