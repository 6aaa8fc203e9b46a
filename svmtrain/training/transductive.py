"""The transductive SVM (``--transduction``; SVMlight's ``svm_learn -p``):
T. Joachims, "Transductive inference for text classification using support
vector machines", ICML 1999, the algorithm of its Figure 2.

Rows labelled 0 are unlabelled (the test rows, SVMlight's convention); the
others are labelled +1 or -1. A fraction ``p`` of the unlabelled rows is to
be labelled +1 (``--transduction P``; ``auto``: the fraction of +1 among
the labelled rows, SVMlight's default). The method:

1. train on the labelled rows; label the ``num+ = round(p k)`` unlabelled
   rows of highest score +1, the other k - num+ rows -1;
2. give the unlabelled rows a small cost, C*- = 1e-5 C for those labelled
   -1 and C*+ = C*- num+ / (k - num+) for those labelled +1 (each class of
   unlabelled rows weighs in proportion to its size), and train on all rows;
3. while some pair of unlabelled rows with opposite labels has slacks
   xi_m > 0, xi_l > 0 and xi_m + xi_l > 2, switch their labels (each such
   switch lowers the objective at the current w; disjoint pairs are
   switched together, the largest slacks first) and train again;
4. double C*- and C*+ (at most C) and go back to 3; stop after the round
   at C*- = C*+ = C.

Every switch keeps num+; the objective falls at every step, so the loop
ends (a cap of MAX_SWITCH_ROUNDS retrainings per cost guards against a
solver's tolerance making it cycle). The costs are row weights, so the
solver must take them (the registry's ``sample_weights``); each retraining
starts from the previous dual solution (``warm_start``), which stays
feasible for any labels and costs (dual coordinate descent has box
constraints only). The model is an ordinary linear model of the two labels.
"""
import dataclasses

import numpy as np

from ..data.dataset import take_rows
from ..errors import InputFormatError, ParameterError

UNLABELLED = 0.0
START_COST = 1e-5           # the unlabelled rows' first cost, a fraction of C (SVMlight's svm_unlabbound)
COST_GROWTH = 2.0           # the paper's doubling of C*- and C*+
MAX_SWITCH_ROUNDS = 500     # retrainings at one cost before giving up on further switches


def check_transduction(params):
    """ParameterError unless --transduction applies to ``params``: linear
    binary classification by a solver that takes row weights."""
    from ..solvers import declaration, listing, names
    if params.transduction is None:
        return
    value = params.transduction
    if value != "auto":
        try:
            value = float(value)
        except ValueError:
            value = None
        if value is None or not 0.0 <= value <= 1.0:
            raise ParameterError(f"--transduction takes a fraction in [0, 1] or auto (got {params.transduction!r})")
    if params.task != "c" or params.multiclass != "ovr":
        raise ParameterError("--transduction trains a binary classifier (--task c)")
    if params.probability:
        raise ParameterError("--transduction does not fit -b 1 probabilities (its labels are partly its own)")

    def takes(d):
        return d.trains_transductive(params.loss)
    if params.kernel_type not in (None, 0) or not takes(declaration(params.solver)):
        raise ParameterError(f"--transduction weighs the unlabelled rows by row costs, which "
                             f"{listing(names(takes))} take with --loss {params.loss} (linear models); "
                             f"not -s {params.solver}" + ("" if params.kernel_type in (None, 0) else " with a kernel"))


def positive_fraction(params, labels):
    """The fraction of unlabelled rows to label +1: --transduction's value,
    or for ``auto`` the fraction of +1 among the labelled ``labels``."""
    if params.transduction == "auto":
        return float(np.mean(labels == 1.0))
    return float(params.transduction)


def split_rows(data, source):
    """(labelled row indices, unlabelled row indices); InputFormatError
    unless there are both and the labelled rows are +1 / -1."""
    unlabelled = np.flatnonzero(data.labels == UNLABELLED)
    labelled = np.flatnonzero(data.labels != UNLABELLED)
    if len(unlabelled) == 0:
        raise InputFormatError(source, None, "--transduction needs unlabelled rows (label 0, SVMlight's "
                                             "convention); this file has none")
    other = np.setdiff1d(data.labels[labelled], [1.0, -1.0])
    if len(other):
        raise InputFormatError(source, None, f"--transduction: labelled rows are +1 or -1 and unlabelled ones 0 "
                                             f"(SVMlight's convention); this file also has label {other[0]:g}")
    if len(np.unique(data.labels[labelled])) < 2:
        raise InputFormatError(source, None, "--transduction needs labelled rows of both classes, +1 and -1")
    return labelled, unlabelled


def switch_pairs(slack, labels):
    """Indices (into ``slack``/``labels``, the unlabelled rows) of the rows
    to switch: the +1 rows and the -1 rows with positive slack, each in
    decreasing slack, paired in that order while a pair's slacks sum to
    more than 2. Returns (plus rows, minus rows) of equal length."""
    plus = np.flatnonzero((labels > 0) & (slack > 0.0))
    minus = np.flatnonzero((labels < 0) & (slack > 0.0))
    plus = plus[np.argsort(-slack[plus], kind="stable")]
    minus = minus[np.argsort(-slack[minus], kind="stable")]
    m = min(len(plus), len(minus))
    count = int(np.count_nonzero(slack[plus[:m]] + slack[minus[:m]] > 2.0))
    return plus[:count], minus[:count]


def _plus_scores(model, chunk):
    """The score of class +1 for each row of ``chunk``."""
    scores = model.decision_function(chunk)[:, 0]
    return scores if model.labels[0] == 1.0 else -scores


def train_transductive(data, params, train, n_features=None, source="<data>", progress=None, log=None):
    """The transductive SVM of the module doc on ``data`` (rows labelled 0
    unlabelled), trained by ``train(chunk, params, ...)`` with row weights;
    returns the final model, with ``transductive_labels`` (the labels given
    to the unlabelled rows, in their row order) and ``switches`` set."""
    check_transduction(params)
    labelled, unlabelled = split_rows(data, source)
    inner = dataclasses.replace(params, transduction=None)
    d = data.n_features if n_features is None else n_features
    first = train(take_rows(data, labelled), inner, n_features=d, source=source)
    k = len(unlabelled)
    n_plus = int(round(positive_fraction(params, data.labels[labelled]) * k))
    guess = np.full(k, -1.0)
    guess[np.argsort(-_plus_scores(first, take_rows(data, unlabelled)), kind="stable")[:n_plus]] = 1.0
    labels = data.labels.copy()
    base = np.ones(data.n_rows) if data.weights is None else data.weights
    cost_minus = START_COST
    cost_plus = START_COST * n_plus / (k - n_plus) if 0 < n_plus < k else START_COST
    warm, switches = [], 0
    rounds = int(np.ceil(np.log(1.0 / min(cost_minus, cost_plus)) / np.log(COST_GROWTH) - 1e-9)) + 1
    for step in range(rounds):
        for _ in range(MAX_SWITCH_ROUNDS):
            labels[unlabelled] = guess
            weights = base.copy()
            weights[unlabelled] *= np.where(guess > 0, cost_plus, cost_minus)
            chunk = dataclasses.replace(data, labels=labels.copy(), weights=weights)
            model = train(chunk, inner, n_features=d, source=source, warm_start=warm)
            slack = np.maximum(0.0, 1.0 - guess * _plus_scores(model, take_rows(data, unlabelled)))
            plus, minus = switch_pairs(slack, guess)
            if len(plus) == 0:
                break
            guess[plus], guess[minus] = -1.0, 1.0
            switches += len(plus)
        if log is not None:
            log(f"transduction: C*- = {cost_minus:g} C, C*+ = {cost_plus:g} C, {switches} switches so far")
        if progress is not None:
            progress(step + 1, rounds, f"{switches} switches")
        cost_minus, cost_plus = min(cost_minus * COST_GROWTH, 1.0), min(cost_plus * COST_GROWTH, 1.0)
    model.transductive_labels = guess.copy()
    model.switches = switches
    return model
