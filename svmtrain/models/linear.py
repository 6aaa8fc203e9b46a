"""Trained linear models and their decision function.

A :class:`LinearModel` holds ``m`` weight columns: ``m = 1`` for a binary
problem (the column scores ``labels[0]`` against ``labels[1]``, as in
LIBLINEAR) and ``m = k`` for a k-class one-vs-rest problem. A regression
model (``task = "r"``) has no labels and one column: its score is the
prediction. A one-class model (``task = "o"``) is a binary model with
labels (1, -1): +1 where w.x + b > 0 (b = -rho), -1 elsewhere.
"""
from dataclasses import dataclass, field

import numpy as np
from numba import njit, prange

from .._numba import options as _opts
from .._numba.options import PRANGE


class ScoredModel:
    """What every model shares: labels from its float64[n, m] scores
    (``decision_function``). m = 1 for two labels (the column scores
    ``labels[0]`` against ``labels[1]``), m = k for k-class one-vs-rest (the
    largest score wins), as LIBLINEAR decides."""

    # Platt's sigmoids, one (A, B) per score column (LIBSVM's probA/probB), or None
    prob_A = None
    prob_B = None
    # regression -b 1: the scale sigma of the Laplace noise, target = prediction + z (LIBSVM's SVR probA), or None
    laplace_sigma = None
    # svm-train --scale: the svmtrain.preprocess.scaling.Ranges every row is scaled by before scoring, or None
    scaling = None

    def decision_function(self, chunk):
        """float64[n, m]: the scores of each row of ``chunk`` (scaled first by
        the model's own ranges when it has them, ``svm-train --scale``)."""
        if self.scaling is not None:
            from ..preprocess.scaling import scale_rows
            chunk = scale_rows(self.scaling, chunk)
        return self._scores(chunk)

    @property
    def has_probabilities(self):
        """True when :meth:`probabilities` can answer (-b 1): a logistic model or Platt's sigmoids."""
        return self.prob_A is not None or getattr(self, "logistic", False)

    def probabilities(self, scores):
        """float64[n, k]: each label's probability (``labels`` order) from the scores.

        Platt's sigmoids (LIBSVM's svm_predict_probability): binary (p, 1 - p)
        with p clipped to [1e-7, 1 - 1e-7]; one-vs-one: the clipped pairwise
        probabilities coupled (Wu, Lin, Weng 2004); one-vs-rest: each class's
        sigmoid divided by their sum. A logistic model (LIBLINEAR's
        predict_probability): the sigmoid of each score, binary (p, 1 - p),
        one-vs-rest divided by their sum.
        """
        from .probability import MIN_PROB, pairwise_coupling, pairwise_probabilities, sigmoid
        m = scores.shape[1]
        platt = self.prob_A is not None
        A = np.asarray(self.prob_A, np.float64) if platt else -np.ones(m)
        B = np.asarray(self.prob_B, np.float64) if platt else np.zeros(m)
        if getattr(self, "decision", "ovr") == "ovo":
            return pairwise_coupling(pairwise_probabilities(scores, A, B, len(self.labels)))
        p = np.column_stack([sigmoid(scores[:, c], A[c], B[c]) for c in range(m)])
        if m == 1:
            if platt:
                p = np.clip(p, MIN_PROB, 1 - MIN_PROB)
            return np.column_stack([p[:, 0], 1.0 - p[:, 0]])
        return p / p.sum(axis=1, keepdims=True)

    def predict_index(self, scores):
        """Index into ``labels`` of each row's prediction, as LIBLINEAR decides it."""
        if len(self.labels) == 1:
            return np.zeros(scores.shape[0], np.int64)
        if self.n_models == 1:
            return np.where(scores[:, 0] > 0, 0, 1)
        return np.argmax(scores, axis=1)

    def predict_from_scores(self, scores):
        """The prediction of each row: its original label, or for a regression
        or ranking model (``task`` "r" or "p": no labels, one column) its score."""
        if getattr(self, "task", "c") in ("r", "p"):
            return scores[:, 0].copy()
        return self.labels[self.predict_index(scores)]

    def predict(self, chunk):
        """The original label of each row of ``chunk``."""
        return self.predict_from_scores(self.decision_function(chunk))


@dataclass
class LinearModel(ScoredModel):
    labels: np.ndarray          # float64[k], in LIBLINEAR's label order
    W: np.ndarray               # float64[n_features (+1 if bias >= 0), m], C-order
    n_features: int
    bias: float = -1.0          # the -B constant-feature value; < 0 means none
    b: np.ndarray = None        # float64[m], unregularised (-R) bias, zeros otherwise
    solver: str = ""
    header: list = field(default_factory=list)   # (key, value) pairs: parameters, objective, time...
    task: str = "c"             # svmtrain.tasks: "c" classification, "r" regression, "p" ranking, "o" one-class

    def __post_init__(self):
        self.labels = np.asarray(self.labels, np.float64)
        self.W = np.ascontiguousarray(self.W, np.float64)
        if self.W.ndim == 1:
            self.W = self.W.reshape(-1, 1)
        if self.b is None:
            self.b = np.zeros(self.W.shape[1], np.float64)
        self.b = np.asarray(self.b, np.float64)

    @property
    def n_models(self):
        return self.W.shape[1]

    @property
    def logistic(self):
        """True for a logistic-regression model (--loss log, or a LIBLINEAR LR
        model file): its scores give probabilities (:meth:`probabilities`)."""
        return dict(self.header or []).get("loss") == "log"

    def _scores(self, chunk):
        """float64[n, m]: scores of each row; features beyond the model are ignored."""
        out = np.empty((chunk.n_rows, self.n_models), np.float64)
        B = self.bias if self.bias >= 0 else 0.0
        return _decision_values(chunk.indptr, chunk.indices, chunk.values, self.W,
                                self.n_features, B, self.bias >= 0, self.b, out)

    # --- model files (svmtrain.io.model_io) ---
    KIND = "linear"
    FIELDS = ("labels", "n_features", "n_models", "bias", "b")

    def file_fields(self):
        return [("task", self.task), ("labels", self.labels), ("n_features", self.n_features),
                ("n_models", self.n_models), ("bias", float(self.bias)), ("b", self.b)] + probability_fields(self)

    def file_sections(self):
        return [("W", self.W)]

    @classmethod
    def from_file(cls, fields, sections, header, path):
        """Build from a parsed model file; raises ModelFormatError on inconsistency."""
        labels = fields.floats("labels")
        n_features = fields.int("n_features")
        n_models = fields.int("n_models", minimum=1)
        bias = fields.floats("bias", 1)[0]
        b = fields.floats("b", n_models)
        task = task_of_file(fields, header, labels, n_models)
        rows = n_features + (1 if bias >= 0 else 0)
        W = sections.get("W")
        if W is None or W.shape != (rows, n_models):
            fields.fail("n_features", f"section W must be {rows} x {n_models}")
        return read_probability(cls(labels=labels, W=W, n_features=n_features, bias=bias, b=b,
                              solver=dict(header).get("solver", ""), header=header, task=task), fields, header)



def probability_fields(model):
    """The model-file (key, value) pairs of ``model``'s probability
    information (-b 1): Platt's sigmoids, a regression's Laplace sigma; none without them."""
    out = [] if model.laplace_sigma is None else [("laplace_sigma", float(model.laplace_sigma))]
    if model.prob_A is None:
        return out
    return out + [("prob_A", [float(a) for a in model.prob_A]), ("prob_B", [float(b) for b in model.prob_B])]


def read_probability(model, fields, header):
    """``model`` with the probability information of its file's header, if
    it has any: Platt's sigmoids (prob_A, prob_B: one number per score column
    each), a regression's ``laplace_sigma`` (one positive number); ModelFormatError if malformed."""
    info = dict(header)
    if "laplace_sigma" in info:
        try:
            sigma = float(str(info["laplace_sigma"]))
        except ValueError:
            sigma = float("nan")
        if not (np.isfinite(sigma) and sigma > 0):
            fields.fail("labels", "laplace_sigma must be a positive number")
        model.laplace_sigma = sigma
    if "prob_A" not in info and "prob_B" not in info:
        return model
    try:
        A = np.array([float(t) for t in str(info.get("prob_A", "")).split()])
        B = np.array([float(t) for t in str(info.get("prob_B", "")).split()])
    except ValueError:
        fields.fail("labels", "prob_A / prob_B must be numbers")
    if len(A) != model.n_models or len(B) != model.n_models or not np.all(np.isfinite(np.r_[A, B])):
        fields.fail("labels", f"prob_A and prob_B need {model.n_models} finite numbers each")
    model.prob_A, model.prob_B = A, B
    return model


def task_of_file(fields, header, labels, n_models, one_vs_one=False):
    """The task recorded in a model file's header ("c" when absent: files from
    before the task axis), after checking that labels and score columns fit
    it: regression and ranking (p) have no labels and one column; one-class (o) has labels
    1 -1 and one column (+1 where the score is positive); classification's columns
    follow :func:`check_label_columns` (unless ``one_vs_one``, checked by the caller)."""
    task = str(dict(header).get("task", "c")).strip()
    if task in ("r", "p"):
        if n_models != 1 or len(labels) or one_vs_one:
            what = "regression" if task == "r" else "ranking"
            fields.fail("n_models", f"a {what} model has one score column and no labels")
    elif task == "o":
        if n_models != 1 or one_vs_one or list(labels) != [1.0, -1.0]:
            fields.fail("n_models", "a one-class model has one score column and labels 1 -1")
    elif task != "c":
        fields.fail("labels", f"a model's task must be c, r, p or o (got {task[:20]!r})")
    elif not one_vs_one:
        check_label_columns(fields, labels, n_models)
    return task


def check_label_columns(fields, labels, n_models):
    """A model with k labels has 1 score column when k <= 2, else k."""
    if len(labels) == 0:
        fields.fail("labels", "a model needs at least one label")
    expected = 1 if len(labels) <= 2 else len(labels)
    if n_models != expected:
        fields.fail("n_models", f"{len(labels)} labels need {expected} score columns, header says {n_models}")


@njit(cache=True, nogil=True)
def _score_row(indptr, indices, values, W, n_features, B, has_bias, b, out, i):
    """Row i's scores, summed in LIBLINEAR's order (the features in row order,
    then the bias feature), then b: a LIBLINEAR model scores bit for bit as
    liblinear-predict scores it."""
    m = W.shape[1]
    for c in range(m):
        out[i, c] = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        j = indices[p]
        if j < n_features:
            v = values[p]
            for c in range(m):
                out[i, c] += v * W[j, c]
    for c in range(m):
        if has_bias:
            out[i, c] += B * W[n_features, c]
        out[i, c] += b[c]


@njit(cache=True, nogil=True, parallel=PRANGE)
def _decision_values_parallel(indptr, indices, values, W, n_features, B, has_bias, b, out):
    for i in prange(indptr.shape[0] - 1):
        _score_row(indptr, indices, values, W, n_features, B, has_bias, b, out, i)
    return out


@njit(cache=True, nogil=True)
def _decision_values_serial(indptr, indices, values, W, n_features, B, has_bias, b, out):
    for i in range(indptr.shape[0] - 1):
        _score_row(indptr, indices, values, W, n_features, B, has_bias, b, out, i)
    return out


def _decision_values(indptr, indices, values, W, n_features, B, has_bias, b, out):
    """out[i, c] = x_i . W[:, c] + B W[n_features, c] (with a bias) + b[c]
    (features >= n_features ignored; summed as :func:`_score_row` says); returns out. In parallel over rows
    from PARALLEL_MIN_NNZ stored values on (the same numbers either way)."""
    if indptr[-1] - indptr[0] >= _opts.PARALLEL_MIN_NNZ:
        return _decision_values_parallel(indptr, indices, values, W, n_features, B, has_bias, b, out)
    return _decision_values_serial(indptr, indices, values, W, n_features, B, has_bias, b, out)
