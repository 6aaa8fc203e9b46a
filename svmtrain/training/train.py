"""Training orchestration: labels, one-vs-rest, solver calls, cross-validation.

This is the only place that knows how original labels map to the +1/-1
problems the solvers see.
"""
import dataclasses
import time

import numpy as np

from .class_threads import class_workers, fit_classes
from ..data._dataset_kernels import first_too_large
from ..data.dataset import Chunk, take_rows
from ..errors import InputFormatError, ParameterError, SvmtrainError
from ..models.linear import LinearModel
from ..params import check_params
from ..solvers import get_solver
from ..solvers.base import for_problem, split_progress, with_defaults
from ..solvers import check_sample_weights
from ..tasks import CLASSIFICATION, NAMES, ONE_CLASS, RANKING, REGRESSION

ONE_CLASS_LABELS = np.array([1.0, -1.0])    # a one-class model predicts +1 (inside) or -1 (outside)


def label_order(labels):
    """Distinct labels in LIBLINEAR's order: first appearance, but +1 before -1."""
    uniq, first = np.unique(labels, return_index=True)
    order = uniq[np.argsort(first, kind="stable")]
    if len(order) == 2 and order[0] == -1 and order[1] == 1:
        order = order[::-1].copy()
    return order


def problem_costs(order, params):
    """[(positive label, class_cost)] for each weight column of the model:
    y = +1 for the rows of that label, -1 for the others."""
    weights = params.class_weights
    if len(order) <= 2:
        # a single class still makes one problem (all +1); its model predicts that class
        neg = weights.get(float(order[1]), 1.0) if len(order) == 2 else 1.0
        return [(order[0], (float(weights.get(float(order[0]), 1.0)), float(neg)))]
    return [(c, (float(weights.get(float(c), 1.0)), 1.0)) for c in order]


def _binary_problems(labels, order, params):
    """Yield (y in {+1,-1}, class_cost) for each weight column of the model."""
    for c, cost in problem_costs(order, params):
        yield np.where(labels == c, 1.0, -1.0), cost


def check_class_weights(params, order):
    """-w may only name labels of the training data."""
    unknown = set(params.class_weights) - set(order.tolist())
    if unknown:
        raise ParameterError(f"-w names label(s) not in the training data: {', '.join(f'{u:g}' for u in sorted(unknown))}")


def task_problems(labels, params):
    """(label order, [(y, class_cost)] per weight column) of ``params.task``:
    classification makes one binary problem (y in {+1, -1}) per column in
    LIBLINEAR's label order; regression one problem on the targets, ranking
    one problem on the relevance labels (its queries are the data's qid),
    both without labels; the one-class SVM one problem whose y (all +1) the
    solver ignores, and the labels (+1, -1) of its prediction (the file's
    labels are not used, as in LIBSVM and LIBLINEAR)."""
    if params.task != CLASSIFICATION and params.class_weights:
        raise ParameterError(f"-w (class weights) applies to classification, not {NAMES[params.task]}")
    if params.task in (REGRESSION, RANKING):
        return np.empty(0, np.float64), [(np.asarray(labels, np.float64), (1.0, 1.0))]
    if params.task == ONE_CLASS:
        return ONE_CLASS_LABELS.copy(), [(np.ones(len(labels), np.float64), (1.0, 1.0))]
    order = label_order(labels)
    check_class_weights(params, order)
    return order, list(_binary_problems(labels, order, params))


def train(data, params, progress=None, log=None, n_features=None, source=None, monitor=None, warm_start=None):
    """Train a model on ``data`` (a Chunk, or a path read with the fast reader).

    Classification: two distinct labels give one binary model, more give
    one-vs-rest, and the model predicts the original labels; regression
    (``params.task == "r"``): one model of the targets; one-class (``"o"``):
    a model predicting +1 / -1 (labels [1, -1], one score column, the
    training labels unused). The model and its numbers are all
    finite (otherwise SvmtrainError). ``n_features`` overrides the dimension
    (the largest index in ``data`` otherwise); ``source`` names the data in
    error messages. ``monitor`` (e.g. a :class:`svmtrain.training.trace.Trace`) is
    handed to the solver (see svmtrain/training/trace.py). ``warm_start``: a list the
    caller keeps between runs on the same rows, one dict per binary problem
    (filled here), handed to linear solvers that take it (``WARM_START``);
    see :func:`svmtrain.solvers.dcd.dcd.fit`.
    """
    check_params(params)
    precomputed = params.kernel_type == 4      # LIBSVM's -t 4: the data are kernel values, 0:ID first
    if not isinstance(data, Chunk):
        from ..io.reader import read_libsvm
        source = source or str(data)
        data = read_libsvm(data, index_base=0 if precomputed else 1)
    source = source or "<data>"
    if precomputed:
        from ..mercer.precomputed import check_training
        check_training(data, source)
    if data.weights is not None:
        data, params = weighted_rows(data, params)
    if data.n_rows == 0:
        raise InputFormatError(source, None, "the training set is empty (no data lines)")
    check_magnitudes(data, source)
    if params.task == RANKING:
        check_queries(data, source)
    if params.transduction is not None:
        from .transductive import train_transductive
        start = time.perf_counter()
        model = train_transductive(data, params, train, n_features, source, progress, log)
        return finish_model(model, params, data.n_rows, start)
    solver = get_solver(params.solver, params.kernel_type, params.task, params.loss, params.multiclass)
    params = with_defaults(params, getattr(solver, "DEFAULTS", {}))
    d = data.n_features if n_features is None else int(n_features)
    order, problems = task_problems(data.labels, params)
    start = time.perf_counter()
    if hasattr(monitor, "begin"):
        monitor.begin()     # a trace's time zero is the solver's start, as train_time's
    if hasattr(solver, "train_model"):
        # kernel and feature-map solvers share work (kernel cache, feature map)
        # across the binary problems, so they run the one-vs-rest loop themselves
        kw = {} if monitor is None else {"monitor": monitor}
        model = solver.train_model(data, order, problems, d, params, progress=progress, log=log, **kw)
    else:
        model = _train_linear(solver, data, order, problems, d, params, progress, log, monitor, warm_start)
    if params.probability:
        from ..models.probability import fit_probability
        fit_probability(data, params, model, train, source=source, log=log, solver=solver)
    n_reg = len(np.unique(data.qid)) if params.task == RANKING else None
    return finish_model(model, params, data.n_rows, start, n_reg=n_reg)


def weighted_rows(data, params):
    """(data, params) ready for a run with row weights (sample weights):
    the rows of weight 0 dropped (they add nothing to the objective); equal
    weights s folded into C (C s, or lambda / s: the same objective), so
    that every solver takes them; other weights ParameterError unless the
    solver takes them for the task and loss
    (the solvers' declared ``sample_weights``; linear models only)."""
    weights = data.weights
    if np.any(weights == 0.0):
        data = take_rows(data, np.flatnonzero(weights))
        weights = data.weights
    if data.n_rows == 0:        # every weight was 0: train() reports the empty training set
        return dataclasses.replace(data, weights=None), params
    if np.all(weights == weights[0]):
        s = float(weights[0])
        if s != 1.0:
            params = (dataclasses.replace(params, lam=params.lam / s) if params.lam is not None
                      else dataclasses.replace(params, C=params.resolved_C(data.n_rows) * s))
        return dataclasses.replace(data, weights=None), params
    if params.kernel_type not in (None, 0):
        raise ParameterError(f"sample weights are not supported for kernel models (-s {params.solver} "
                             f"-t {params.kernel_type}); linear -s dcd or -s pegasos take them")
    check_sample_weights(params.solver, params.task, params.loss)
    return data, params


def finish_model(model, params, n_rows, start, n_reg=None):
    """Record the training time (since ``start``) and the header; check that
    every number of the model is finite (otherwise SvmtrainError).
    ``n_reg``: the n of lambda = 1/(n C) when not the rows (ranking: the queries)."""
    model.train_time = time.perf_counter() - start
    for name, section in model.file_sections():
        if isinstance(section, np.ndarray) and not np.all(np.isfinite(section)):
            raise SvmtrainError(f"training diverged: {name} has non-finite numbers; "
                                "scale the features (e.g. with svm-scale) or change -c/-l")
    results = model.fit_results
    model.header = params.header() + [
        ("lambda_used", params.resolved_lambda(n_rows if n_reg is None else n_reg)),
        ("C_used", params.resolved_C(n_rows if n_reg is None else n_reg)),
        ("n_train", n_rows),
        ("objective", [r.objective for r in results]),
        ("n_iter", [r.n_iter for r in results]),
        ("converged", all(r.converged for r in results)),
    ]
    return model


def check_queries(data, source):
    """Ranking data needs qid: on its rows (InputFormatError naming ``source`` otherwise).
    Rows of a query need not be contiguous: they are grouped by qid."""
    check_queries_in(data.qid, source)


def check_magnitudes(data, source, row_base=0):
    """Reject data whose squared row norms overflow: no solver can train on it.
    ``row_base``: rows of the training set before ``data`` (for the message)."""
    p = first_too_large(data.values)
    if p >= 0:
        row = int(np.searchsorted(data.indptr, p, side="right")) - 1
        raise magnitude_error(source, row_base + row, data.values[p])


def magnitude_error(source, row, value):
    """The InputFormatError for a value too large to train on in row ``row`` (0-based)."""
    return InputFormatError(source, None, f"data row {row + 1} has a feature value of magnitude "
                            f"{abs(value):.3g}: squared norms overflow; "
                            "scale the features (e.g. with svm-scale)")


def _train_linear(solver, data, order, problems, d, params, progress, log, monitor=None, warm_start=None):
    """One solver.fit per binary problem; the weight columns make a LinearModel.
    ``warm_start`` (see :func:`train`) is used when the solver takes it.
    Classes train side by side on spare cores where the solver allows it
    (:mod:`svmtrain.training.class_threads`)."""
    results = []
    if warm_start is not None and getattr(solver, "WARM_START", False):
        warm_start.extend({} for _ in range(len(problems) - len(warm_start)))
    else:
        warm_start = None
    workers = class_workers(solver, params, len(problems), monitored=monitor is not None or warm_start is not None)
    if workers > 1:
        results = fit_classes(solver, data, order, problems, d, params, progress, log, workers)
        return linear_model(order, results, d, params)
    for j, (y, cost) in enumerate(problems):
        if log is not None and len(problems) > 1:
            log(f"class {order[j]:g} vs rest")
        kw = {} if monitor is None else {"monitor": for_problem(monitor, j)}
        if warm_start is not None:
            kw["warm_start"] = warm_start[j]
        results.append(solver.fit(data, y, d, params, progress=split_progress(progress, j, len(problems)),
                                  log=log, class_cost=cost, **kw))
    return linear_model(order, results, d, params)


def linear_model(order, results, d, params):
    """The LinearModel of one FitResult per weight column."""
    W = np.stack([r.w for r in results], axis=1)
    if len(order) == 1:
        W[:] = 0.0
    model = LinearModel(labels=order, W=W, n_features=d, bias=params.bias,
                        b=np.array([r.b for r in results]), solver=params.solver, task=params.task)
    model.fit_results = results
    return model


def cross_validate(data, params, folds, log=None, source=None):
    """Accuracy (0..1) of ``folds``-fold cross-validation; folds as :func:`fold_splits`."""
    pred = cross_val_predict(data, params, folds, source=source)
    return float(np.mean(pred == data.labels))


def cross_val_predict(data, params, folds, source=None):
    """The out-of-fold prediction of every row (labels, or regression or
    ranking scores): each fold predicted by the model trained on the others;
    folds as :func:`fold_splits` (params.fold_style). ``data`` is a Chunk or a path."""
    if folds < 2:
        raise ParameterError(f"-v needs at least 2 folds (got {folds})")
    if not isinstance(data, Chunk):
        from ..io.reader import read_libsvm
        data = read_libsvm(data)
    n = data.n_rows
    if folds > n:
        raise ParameterError(f"-v {folds}: more folds than the {n} training rows")
    splits = fold_splits(data, params, folds, source)
    params = dataclasses.replace(params, probability=False)     # labels only: no sigmoids to fit
    d = data.n_features
    pred = _solver_folds(data, params, splits)
    if pred is not None:
        return pred
    pred = np.empty(n, np.float64)
    for train_rows, test_rows in splits:
        model = train(take_rows(data, train_rows), params, log=None, n_features=d, source=source)
        pred[test_rows] = model.predict(take_rows(data, test_rows))
    return pred


def _solver_folds(data, params, fold_splits):
    """The out-of-fold predictions of a classification run by the solver's
    own cross-validation, when its module has one (``CROSS_VALIDATION``,
    "module:function", e.g. one kernel matrix shared by the folds): the
    same folds (``fold_splits``: (training rows, test rows) per fold), each with its label order and ``-w`` checked
    as :func:`train` checks them. None when the solver has none or declines,
    and for the runs that :func:`train` treats apart (row weights,
    --transduction, values too large), which then train fold by fold."""
    from ..solvers import load
    if params.task != CLASSIFICATION or data.weights is not None or params.transduction is not None:
        return None
    check_params(params)
    solver = get_solver(params.solver, params.kernel_type, params.task, params.loss, params.multiclass)
    hook = getattr(solver, "CROSS_VALIDATION", None)
    if hook is None or first_too_large(data.values) >= 0:
        return None
    params = with_defaults(params, getattr(solver, "DEFAULTS", {}))
    splits = []
    for train_rows, test_rows in fold_splits:
        order = label_order(data.labels[train_rows])
        check_class_weights(params, order)
        splits.append((train_rows, test_rows, order))
    return load(hook)(data, params, splits, data.n_features)


def fold_splits(data, params, folds, source=None):
    """[(training rows, test rows)] of each of the ``folds`` folds of
    ``data``: with ``params.fold_style == "libsvm"`` LIBSVM's folds and row
    order (:mod:`.libsvm_folds`), with "liblinear" LIBLINEAR's (the same
    unstratified shuffle for every task: its cross_validation and
    find_parameters); neither for ranking, whose folds keep queries whole;
    else :func:`fold_assignment`'s folds, rows in file order."""
    if params.fold_style in ("libsvm", "liblinear") and params.task != RANKING:
        from .libsvm_folds import libsvm_splits
        stratified = params.fold_style == "libsvm" and params.task == CLASSIFICATION
        return libsvm_splits(data.labels, folds, stratified=stratified)
    fold_of = fold_assignment(data, params, folds, source)
    return [(np.flatnonzero(fold_of != k), np.flatnonzero(fold_of == k)) for k in range(folds)]


def fold_assignment(data, params, folds, source=None):
    """The fold (0 .. folds-1) of each row of ``data`` for ``params.task``,
    drawn from params.seed: classification stratified by class (as LIBSVM),
    ranking by whole queries, the other tasks a random deal (``--folds
    seed``; :func:`fold_splits` gives the folds of either choice)."""
    rng = np.random.default_rng(params.seed)
    if params.task == RANKING:
        return query_folds(data.qid, folds, rng, source)
    if params.task == CLASSIFICATION:
        return class_folds(data.labels, folds, rng)
    return rng.permutation(data.n_rows) % folds


def class_folds(labels, folds, rng):
    """Stratified folds: the rows of each class in a random order, the first
    count/folds of them to fold 0, the next to fold 1, ... (LIBSVM's split),
    so every fold holds each class in proportion, to one row."""
    labels = np.asarray(labels)
    _, cls = np.unique(labels, return_inverse=True)
    order = np.lexsort((rng.random(len(labels)), cls))       # by class, random within
    counts = np.bincount(cls)
    first = np.r_[0, np.cumsum(counts)[:-1]]
    position = np.arange(len(labels)) - first[cls[order]]     # rank within its class
    fold_of = np.empty(len(labels), np.int64)
    fold_of[order] = position * folds // counts[cls[order]]
    return fold_of


def query_folds(qid, folds, rng, source=None):
    """The fold (0 .. folds-1) of each row when whole queries are dealt to
    ``folds`` folds in a random order (each fold gets every folds-th query
    of the permutation). ParameterError when there are fewer queries than folds."""
    check_queries_in(qid, source)
    uniq, inverse = np.unique(qid, return_inverse=True)
    if folds > len(uniq):
        raise ParameterError(f"-v {folds}: more folds than the {len(uniq)} queries (ranking folds keep queries whole)")
    fold_of_query = np.empty(len(uniq), np.int64)
    fold_of_query[rng.permutation(len(uniq))] = np.arange(len(uniq)) % folds
    return fold_of_query[inverse]


def check_queries_in(qid, source):
    if qid is None or not np.any(qid):
        raise InputFormatError(source or "<data>", None, "--task p (ranking) needs qid: on the rows "
                               "(LABEL qid:Q INDEX:VALUE ...); this file has none")
