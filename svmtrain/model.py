"""Trained linear models and their decision function.

A :class:`LinearModel` holds ``m`` weight columns: ``m = 1`` for a binary
problem (the column scores ``labels[0]`` against ``labels[1]``, as in
LIBLINEAR) and ``m = k`` for a k-class one-vs-rest problem. A regression
model (``task = "r"``) has no labels and one column: its score is the
prediction.
"""
from dataclasses import dataclass, field

import numpy as np
from numba import njit, prange

from ._numba_options import PARALLEL_MIN_NNZ, PRANGE


class ScoredModel:
    """What every model shares: labels from its float64[n, m] scores
    (``decision_function``). m = 1 for two labels (the column scores
    ``labels[0]`` against ``labels[1]``), m = k for k-class one-vs-rest (the
    largest score wins), as LIBLINEAR decides."""

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
    task: str = "c"             # svmtrain.tasks: "c" classification, "r" regression, "p" ranking

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

    def decision_function(self, chunk):
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
                ("n_models", self.n_models), ("bias", float(self.bias)), ("b", self.b)]

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
        return cls(labels=labels, W=W, n_features=n_features, bias=bias, b=b,
                   solver=dict(header).get("solver", ""), header=header, task=task)



def task_of_file(fields, header, labels, n_models, one_vs_one=False):
    """The task recorded in a model file's header ("c" when absent: files from
    before the task axis), after checking that labels and score columns fit
    it: regression has no labels and one column; classification's columns
    follow :func:`check_label_columns` (unless ``one_vs_one``, checked by the caller)."""
    task = str(dict(header).get("task", "c")).strip()
    if task in ("r", "p"):
        if n_models != 1 or len(labels) or one_vs_one:
            what = "regression" if task == "r" else "ranking"
            fields.fail("n_models", f"a {what} model has one score column and no labels")
    elif task != "c":
        fields.fail("labels", f"a model's task must be c, r or p (got {task[:20]!r})")
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
    m = W.shape[1]
    for c in range(m):
        out[i, c] = b[c]
        if has_bias:
            out[i, c] += B * W[n_features, c]
    for p in range(indptr[i], indptr[i + 1]):
        j = indices[p]
        if j < n_features:
            v = values[p]
            for c in range(m):
                out[i, c] += v * W[j, c]


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
    """out[i, c] = b[c] + B W[n_features, c] (with a bias) + x_i . W[:, c]
    (features >= n_features ignored); returns out. In parallel over rows
    from PARALLEL_MIN_NNZ stored values on (the same numbers either way)."""
    if indptr[-1] - indptr[0] >= PARALLEL_MIN_NNZ:
        return _decision_values_parallel(indptr, indices, values, W, n_features, B, has_bias, b, out)
    return _decision_values_serial(indptr, indices, values, W, n_features, B, has_bias, b, out)
