"""scikit-learn estimators over svmtrain's solvers (optional: ``pip install 'svmtrain[sklearn]'``).

One estimator per task, the solver a parameter (as ``SGDClassifier``
takes its loss): :class:`SVMClassifier` (every solver, linear and kernel),
:class:`SVMRegressor` (``--task r``), :class:`SVMOneClass` (``--task o``)
and :class:`SVMRanker` (``--task p``; ``fit(X, y, qid=...)``). They take
NumPy arrays and SciPy sparse matrices (CSR without a copy where the
dtypes allow, see :mod:`svmtrain.data.arrays`), work in ``Pipeline`` and
``GridSearchCV``, pickle, and ``save(path)`` / ``load(path)`` the
portable model file that ``svm-predict`` reads.

Parameters map to the command line's: ``C`` (-c), ``loss`` (--loss),
``kernel`` (-t: "linear", "poly", "rbf", "sigmoid", "precomputed": X is
then the kernel matrix, n_samples x n_samples at fit and n_test x
n_samples at predict, as scikit-learn's SVC; solver="smo"), ``gamma`` (-g; None
is 1/n_features), ``degree`` (-d), ``coef0`` (-r), ``tol`` (-e; None is
the solver's default), ``max_iter`` (--max-iter), ``bias`` (-B; the
intercept's constant feature, regularised as LIBLINEAR's, < 0 for none;
dcd, ocas and pegasos only: the kernel solvers learn their own bias),
``class_weight`` (-w: a dict label -> weight), ``probability`` (-b 1),
``random_state`` (--seed), ``epsilon`` (-p), ``nu`` (--nu); ``options`` is
a dict of any other TrainParams field (e.g. {"epochs": 10}; the fields,
their flags and help: ``svmtrain.params.TrainParams.describe()``, the same
description svm-train builds its options from).
"""
from contextlib import contextmanager

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, OutlierMixin, RegressorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .data.arrays import as_chunk
from .errors import ParameterError
from .params import TrainParams
from .solvers import declaration
from .run import run

KERNELS = {"linear": None, "poly": 1, "rbf": 2, "sigmoid": 3, "precomputed": 4}

# scikit-learn checks that fail for a sound reason (check name -> reason), per estimator class
EXPECTED_FAILED_CHECKS = {
    "SVMOneClass": {
        "check_outliers_train": "a row scored exactly 0 is an outlier (-1), as in LIBSVM and svm-predict; "
                                "scikit-learn's check counts it as an inlier",
    },
}
# ... and per solver, where a solver lacks what a check exercises
SOLVER_FAILED_CHECKS = {
    "sbp": {"check_class_weight_classifiers": "-s sbp takes no class weights (solver='asset' does)"},
    "pegasos": {"check_class_weight_classifiers": "pegasos draws rows in proportion to their weights; weights "
                "1000 : 0.0001 divide its lambda by about 1000 and its O(1/(lambda T)) rate needs far more "
                "than the default 30 epochs (tests/test_sample_weights.py checks weights 1 : 3)"},
}
# why a solver that takes unequal sample weights still fails scikit-learn's
# check that weight 2 equals a repeated row (one reason per cause)
SAMPLE_WEIGHT_EQUIVALENCE = {
    "dcd": "weights equal repeated rows at the optimum only, and dcd stops at its tolerance (default 0.1) "
           "before it (tests/test_sample_weights.py checks dcd at tol 1e-9)",
    "pegasos": "pegasos is stochastic: a weighted row is drawn in proportion to its weight, a repeated row "
               "twice, so the iterates differ (tests/test_sample_weights.py checks the weighted objective)",
}
UNEQUAL_WEIGHTS = "this solver, task and loss take equal (or 0/1) sample weights only: ValueError naming dcd, pegasos"
WEIGHT_CHECKS = ("check_sample_weight_equivalence_on_dense_data", "check_sample_weight_equivalence_on_sparse_data")


def expected_failed_checks(estimator):
    """The checks ``estimator`` is expected to fail, with the reasons (the
    form of ``check_estimator(expected_failed_checks=...)``)."""
    from .solvers import default_loss
    out = dict(EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {}))
    if isinstance(estimator, SVMClassifier):
        out.update(SOLVER_FAILED_CHECKS.get(estimator.solver, {}))
    if isinstance(estimator, (SVMClassifier, SVMRegressor)):
        task = estimator._task
        loss = estimator.loss or default_loss(task, estimator.solver)
        takes_weights = (estimator.kernel == "linear"
                         and declaration(estimator.solver).takes_sample_weights(task, loss))
        if takes_weights:
            out.update(dict.fromkeys(WEIGHT_CHECKS, SAMPLE_WEIGHT_EQUIVALENCE[estimator.solver]))
        else:
            out.update(dict.fromkeys(WEIGHT_CHECKS + ("check_sample_weights_not_overwritten",), UNEQUAL_WEIGHTS))
    return out


@contextmanager
def _value_errors():
    """svmtrain's ParameterError raised as ValueError, scikit-learn's convention for bad parameters."""
    try:
        yield
    except ParameterError as e:
        raise ValueError(str(e)) from None


class _SVMBase(BaseEstimator):
    """What the estimators share: parameters -> TrainParams, array input, the model."""

    _task = "c"

    def __init__(self, solver="dcd", C=1.0, loss=None, kernel="linear", gamma=None, degree=3, coef0=0.0,
                 tol=None, max_iter=None, bias=1.0, random_state=0, options=None):
        self.solver = solver
        self.C = C
        self.loss = loss
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.max_iter = max_iter
        self.bias = bias
        self.random_state = random_state
        self.options = options

    def _params(self, **extra):
        if self.kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {', '.join(KERNELS)} (got {self.kernel!r})")
        seed = self.random_state
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise ValueError("random_state must be an int or None (svmtrain's --seed)")
        kernel_type = KERNELS[self.kernel]
        if kernel_type is None and declaration(self.solver).kernel == "always":
            kernel_type = 0         # a kernel solver's own default is LIBSVM's RBF: "linear" is -t 0 there
        fields = dict(solver=self.solver, C=None if self.C is None else float(self.C), loss=self.loss, task=self._task,
                      kernel_type=kernel_type, gamma=self.gamma,
                      degree=None if self.kernel != "poly" else int(self.degree),
                      coef0=None if self.kernel in ("linear", "rbf", "precomputed") else float(self.coef0),
                      eps=self.tol, max_iter=self.max_iter, seed=0 if seed is None else int(seed))
        if self.kernel == "linear" and declaration(self.solver).bias:
            fields["bias"] = float(self.bias)
        fields.update(extra)
        fields.update(self.options or {})
        return TrainParams(**fields)

    def _fit_chunk(self, chunk, n_features, **extra):
        self.__dict__.pop("_online_", None)         # partial_fit starts over after fit
        with _value_errors():
            self.model_ = run(chunk, self._params(**extra), n_features=n_features).model
        results = getattr(self.model_, "fit_results", None) or []
        self.n_iter_ = max([int(r.n_iter) for r in results] + [1])
        return self

    def _learns_online(self):
        return self.kernel == "linear" and declaration(self.solver).online

    def _partial_fit_rows(self, X, problems, labels, sample_weight, **extra):
        """One epoch of Pegasos steps on the rows of X for each binary problem
        (``problems``: y per weight column; ``labels`` the model's), going on
        from the previous call's run (:class:`svmtrain.training.online.OnlinePegasos`)."""
        from .training.online import OnlinePegasos
        chunk = as_chunk(X, problems[0], sample_weight=sample_weight)
        if not hasattr(self, "_online_"):
            with _value_errors():
                self._online_ = OnlinePegasos(self._params(**extra), X.shape[1], len(problems), chunk)
        self.model_ = self._online_.epoch(chunk, problems, labels)
        self.n_iter_ = self._online_.steps
        return self

    def _training_chunk(self, X, y=None, sample_weight=None):
        """(the Chunk of the training rows, their n_features): with
        kernel="precomputed" X is the square kernel matrix, made into LIBSVM's
        -t 4 rows (column 0 the row's ID 1..n, column j its value against
        row j, zeros kept)."""
        if self.kernel != "precomputed":
            return as_chunk(X, y, sample_weight=sample_weight), X.shape[1]
        X = X.toarray() if hasattr(X, "toarray") else X
        if X.shape[0] != X.shape[1]:
            raise ValueError(f"kernel='precomputed' needs the square kernel matrix of the training rows "
                             f"(got {X.shape[0]} x {X.shape[1]})")
        ids = np.arange(1, X.shape[0] + 1, dtype=np.float64)[:, None]
        return as_chunk(np.hstack([ids, X]), y, sample_weight=sample_weight, keep_zeros=True), X.shape[1] + 1

    def _chunk(self, X):
        check_is_fitted(self, "model_")
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        if self.kernel == "precomputed":        # kernel values against the training rows, column 0 unused
            X = X.toarray() if hasattr(X, "toarray") else X
            return as_chunk(np.hstack([np.zeros((X.shape[0], 1)), X]), keep_zeros=True)
        return as_chunk(X)

    def _scores(self, X):
        chunk = self._chunk(X)                  # NotFittedError before fit
        return self.model_.decision_function(chunk)

    def save(self, path):
        """Write the model file that ``svm-predict`` reads (svmtrain's format),
        with the original labels (ValueError for labels that are not numbers)."""
        import copy
        from .io.model_io import save_model
        check_is_fitted(self, "model_")
        model = self.model_
        if hasattr(self, "classes_"):
            try:
                labels = np.asarray(self.classes_, np.float64)
            except (TypeError, ValueError):
                raise ValueError("model files hold numeric labels; these classes are not numbers") from None
            model = copy.copy(model)
            model.labels = labels[self.model_.labels.astype(np.int64)]
        save_model(model, path)

    @property
    def _linear(self):
        return hasattr(self.model_, "W")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = self.kernel == "precomputed"     # (cross-validation slices rows and columns)
        return tags


class SVMClassifier(ClassifierMixin, _SVMBase):
    """Classification by any svmtrain solver (see the module doc); one-vs-rest
    for more than two classes (LIBLINEAR's and svmtrain's), so
    ``decision_function`` has one column per class, or one for two classes
    (positive for ``classes_[1]``)."""

    def __init__(self, solver="dcd", C=1.0, loss=None, kernel="linear", gamma=None, degree=3, coef0=0.0,
                 tol=None, max_iter=None, bias=1.0, class_weight=None, probability=False, random_state=0,
                 options=None):
        super().__init__(solver=solver, C=C, loss=loss, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                         tol=tol, max_iter=max_iter, bias=bias, random_state=random_state, options=options)
        self.class_weight = class_weight
        self.probability = probability

    def fit(self, X, y, sample_weight=None):
        """Train on X, y; ``sample_weight`` (a weight >= 0 per row) where the
        solver takes them (dcd with the hinges, pegasos), else ValueError;
        weights that are all 0 or 1 select rows, for every solver."""
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes in the data; got 1 class")
        weights = {}
        for label, w in (self.class_weight or {}).items():
            hit = np.flatnonzero(self.classes_ == label)
            if len(hit) == 0:
                raise ValueError(f"class_weight names label {label!r}, not in the training data")
            weights[float(hit[0])] = float(w)
        return self._fit_chunk(*self._training_chunk(X, codes.astype(np.float64), sample_weight),
                               class_weights=weights, probability=bool(self.probability))

    @available_if(_SVMBase._learns_online)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One epoch of Pegasos steps (solver="pegasos", kernel="linear") on
        X, y, going on from the previous call: steps of size 1/(lambda t)
        with t counted over all calls, rows drawn i.i.d. (with probability
        proportional to ``sample_weight`` when given), lambda = 1/(n C) with
        n the rows of the first call (or options={"lam": ...}). ``classes``
        (every class) is needed on the first call. The model is the last
        iterate, or with options={"average": True} the average of every
        iterate. ``fit`` starts over; so does the first partial_fit after it
        (``classes`` may then be left out: fit's are used)."""
        if self.class_weight:
            raise ValueError("partial_fit takes no class weights; give sample_weight instead")
        first = not hasattr(self, "_online_")
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, reset=first)
        check_classification_targets(y)
        if first:
            if classes is None and not hasattr(self, "classes_"):
                raise ValueError("classes must be passed on the first call to partial_fit")
            self.classes_ = np.unique(self.classes_ if classes is None else classes)
            if len(self.classes_) < 2:
                raise ValueError("partial_fit needs at least 2 classes")
        elif classes is not None and not np.array_equal(np.unique(classes), self.classes_):
            raise ValueError(f"classes {np.unique(classes)} differ from those of the first call, {self.classes_}")
        codes = np.searchsorted(self.classes_, y)
        if np.any(codes >= len(self.classes_)) or np.any(self.classes_[np.minimum(codes, len(self.classes_) - 1)] != y):
            raise ValueError(f"y holds labels not in classes {self.classes_}")
        k = len(self.classes_)
        # binary: one column scoring classes_[1]; else one column per class (one-vs-rest)
        positives = [1] if k == 2 else range(k)
        problems = [np.where(codes == c, 1.0, -1.0) for c in positives]
        labels = np.array([1.0, 0.0]) if k == 2 else np.arange(k, dtype=np.float64)
        return self._partial_fit_rows(X, problems, labels, sample_weight, probability=bool(self.probability))

    def _columns(self, scores):
        """Scores in classes_ order (binary: one column, positive for classes_[1])."""
        labels = self.model_.labels.astype(np.int64)
        if scores.shape[1] == 1:
            return scores[:, 0] if labels[0] == 1 else -scores[:, 0]
        out = np.empty_like(scores)
        out[:, labels] = scores
        return out

    def decision_function(self, X):
        """The scores: (n,) for two classes (> 0: classes_[1]), else (n, n_classes)."""
        return self._columns(self._scores(X))

    def predict(self, X):
        scores = self._scores(X)
        return self.classes_[self.model_.predict_from_scores(scores).astype(np.int64)]

    def _has_proba(self):
        return self.probability or self.loss == "log"

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Each class's probability, in classes_ order (Platt's sigmoids, or the
        logistic model's own)."""
        p = self.model_.probabilities(self._scores(X))
        out = np.empty_like(p)
        out[:, self.model_.labels.astype(np.int64)] = p
        return out

    @property
    def coef_(self):
        """Linear models: the weights, (1, n_features) for two classes (toward classes_[1])."""
        check_is_fitted(self, "model_")
        if not self._linear:
            raise AttributeError("coef_ exists for linear models only (kernel='linear')")
        W = self.model_.W[:self.n_features_in_].T
        return self._oriented(W)

    @property
    def intercept_(self):
        check_is_fitted(self, "model_")
        if not self._linear:
            raise AttributeError("intercept_ exists for linear models only (kernel='linear')")
        m = self.model_
        b = (m.W[-1] * m.bias if m.bias >= 0 else np.zeros(m.W.shape[1])) + np.asarray(m.b, np.float64)
        return self._oriented(b[:, None])[:, 0]

    def _oriented(self, rows):
        labels = self.model_.labels.astype(np.int64)
        if rows.shape[0] == 1:
            return rows if labels[0] == 1 else -rows
        out = np.empty_like(rows)
        out[labels] = rows
        return out


class SVMRegressor(RegressorMixin, _SVMBase):
    """Support vector regression (``--task r``; dcd, ocas, pegasos, asset ``--inner dcd``)."""

    _task = "r"

    def __init__(self, solver="dcd", C=1.0, epsilon=0.1, loss=None, kernel="linear", gamma=None, degree=3,
                 coef0=0.0, tol=None, max_iter=None, bias=1.0, random_state=0, options=None):
        super().__init__(solver=solver, C=C, loss=loss, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                         tol=tol, max_iter=max_iter, bias=bias, random_state=random_state, options=options)
        self.epsilon = epsilon

    def fit(self, X, y, sample_weight=None):
        """Train on X, y; ``sample_weight`` as :meth:`SVMClassifier.fit` (pegasos takes them)."""
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, y_numeric=True)
        return self._fit_chunk(*self._training_chunk(X, y, sample_weight), epsilon=float(self.epsilon))

    @available_if(_SVMBase._learns_online)
    def partial_fit(self, X, y, sample_weight=None):
        """One epoch of Pegasos steps on X, y, going on from the previous
        call (see :meth:`SVMClassifier.partial_fit`)."""
        first = not hasattr(self, "_online_")
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, y_numeric=True, reset=first)
        return self._partial_fit_rows(X, [y], np.empty(0), sample_weight, epsilon=float(self.epsilon))

    def predict(self, X):
        return self._scores(X)[:, 0].copy()


class SVMOneClass(OutlierMixin, _SVMBase):
    """The one-class SVM (``--task o``; dcd, asset ``--inner dcd``): +1 inside, -1 outside."""

    _task = "o"

    def __init__(self, solver="dcd", nu=0.5, kernel="linear", gamma=None, degree=3, coef0=0.0, tol=None,
                 max_iter=None, random_state=0, options=None):
        super().__init__(solver=solver, C=None, loss=None, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                         tol=tol, max_iter=max_iter, bias=-1.0, random_state=random_state, options=options)
        self.nu = nu

    def fit(self, X, y=None):
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64)
        self.offset_ = 0.0           # decision_function = score_samples - offset_ (scikit-learn's convention)
        return self._fit_chunk(*self._training_chunk(X), nu=float(self.nu), C=None)

    def score_samples(self, X):
        """The model's score w.x - rho (> 0 inside)."""
        return self._scores(X)[:, 0].copy()

    def decision_function(self, X):
        """> 0 inside, < 0 outside."""
        return self.score_samples(X) - self.offset_

    def predict(self, X):
        return np.where(self.decision_function(X) > 0, 1, -1)


class SVMRanker(_SVMBase):
    """Pairwise ranking (``--task p``; ocas, or tron for the squared pairwise
    hinge): ``fit(X, y, qid)`` with relevance labels y and query ids;
    ``predict`` returns scores; ``score`` the pair accuracy."""

    _task = "p"

    def __init__(self, solver="ocas", C=1.0, loss=None, tol=None, max_iter=None, random_state=0, options=None):
        super().__init__(solver=solver, C=C, loss=loss, kernel="linear", tol=tol, max_iter=max_iter, bias=-1.0,
                         random_state=random_state, options=options)

    def fit(self, X, y, qid):
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, y_numeric=True)
        return self._fit_chunk(as_chunk(X, y, qid), X.shape[1])

    def predict(self, X):
        """The ranking score of each row (compare within a query)."""
        return self._scores(X)[:, 0].copy()

    def score(self, X, y, qid):
        """The fraction of pairs (y_i > y_j, same query) ordered correctly."""
        from .data.queries import ranking_summary
        return ranking_summary(self.predict(X), np.asarray(y, np.float64), np.asarray(qid)).pair_accuracy


def load(path):
    """The estimator for a model file written by ``save`` or by ``svm-train``
    (its task decides the class); ready to predict."""
    from .io.model_io import load_model
    model = load_model(path)
    task = getattr(model, "task", "c")
    est = {"c": SVMClassifier, "r": SVMRegressor, "o": SVMOneClass, "p": SVMRanker}[task]()
    est.model_ = model
    est.n_features_in_ = int(model.n_features)
    if task == "c":
        est.classes_ = np.asarray(model.labels)
        model.labels = np.arange(len(model.labels), dtype=np.float64)
    return est
