"""Prediction: stream a data file through a model, write labels, count accuracy."""
from dataclasses import dataclass, fields

import numpy as np

from .data.dataset import Chunk
from .errors import ParameterError


def format_label(x):
    """A label as LIBLINEAR users expect it: '1', '-1', '2', '0.5'."""
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


@dataclass
class PredictionSummary:
    correct: int = 0
    total: int = 0

    @property
    def accuracy(self):
        return self.correct / self.total if self.total else 0.0

    def merge(self, other):
        """Add the counts of ``other`` (another part of the same predictions)."""
        self.correct += other.correct
        self.total += other.total

    def line(self):
        """LIBLINEAR's summary line, e.g. 'Accuracy = 84.9702% (13834/16281)'."""
        return "Accuracy = %g%% (%d/%d)" % (100.0 * self.accuracy, self.correct, self.total)


@dataclass
class RegressionSummary:
    """LIBSVM's regression measures, accumulated chunk by chunk (sums only)."""
    # a line printed before the measures (svm-predict -b 1: LIBSVM's Laplace noise model), or None
    note = None
    total: int = 0
    sq_err: float = 0.0
    sum_p: float = 0.0
    sum_y: float = 0.0
    sum_pp: float = 0.0
    sum_yy: float = 0.0
    sum_py: float = 0.0

    def add(self, pred, truth):
        self.total += len(pred)
        self.sq_err += float(np.sum((pred - truth) ** 2))
        self.sum_p += float(pred.sum())
        self.sum_y += float(truth.sum())
        self.sum_pp += float(pred @ pred)
        self.sum_yy += float(truth @ truth)
        self.sum_py += float(pred @ truth)

    def merge(self, other):
        """Add the sums of ``other`` (another part of the same predictions)."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    @property
    def mse(self):
        return self.sq_err / self.total if self.total else 0.0

    @property
    def scc(self):
        """The squared correlation coefficient of predictions and targets (LIBSVM's formula)."""
        n = self.total
        num = (n * self.sum_py - self.sum_p * self.sum_y) ** 2
        den = (n * self.sum_pp - self.sum_p ** 2) * (n * self.sum_yy - self.sum_y ** 2)
        return num / den if den > 0 else float("nan")

    def line(self, prefix=""):
        """LIBSVM's two lines, e.g. 'Mean squared error = 124.6 (regression)', after the note if any."""
        return ("" if self.note is None else self.note + "\n") + (f"{prefix}Mean squared error = {self.mse:g} (regression)\n"
                f"{prefix}Squared correlation coefficient = {self.scc:g} (regression)")


def regression_summary(pred, truth):
    """The RegressionSummary of predictions ``pred`` against targets ``truth``."""
    summary = RegressionSummary()
    summary.add(np.asarray(pred, np.float64), np.asarray(truth, np.float64))
    return summary


def predict(data, model):
    """Predicted original labels (float64[n]) of ``data`` (a Chunk or a path)."""
    if not isinstance(data, Chunk):
        from .io.reader import read_libsvm
        from .mercer.precomputed import index_base
        data = read_libsvm(data, index_base=index_base(model))
    return model.predict(data)


def predict_stream(chunks, model, out, decision_values=False, probabilities=False):
    """Write one predicted label per line of ``out`` for every row of ``chunks``.

    With ``decision_values`` each line continues with the model's scores, in
    the model's label order (one score for a binary model). With
    ``probabilities`` (``-b 1``; models with probability information only,
    else ParameterError) the output is LIBLINEAR's and LIBSVM's: a ``labels
    ...`` line, then per row the label and each label's probability, ``%g``.
    Returns a PredictionSummary against the labels in the data; for a
    regression model one value per line (``%.17g``, as LIBSVM and LIBLINEAR)
    and a RegressionSummary against the targets; for a ranking model (task
    "p") one score per line (``%.17g``) and a
    :class:`svmtrain.data.queries.RankingSummary` (pair accuracy, NDCG@10) against
    the relevance labels and qid: of the rows.
    """
    task = getattr(model, "task", "c")
    if task == "r":
        return _predict_values(chunks, model, out, decision_values, probabilities)
    if task == "p":
        return _predict_ranking(chunks, model, out)
    if probabilities:
        return _predict_probabilities(chunks, model, out)
    summary = PredictionSummary()
    label_text = np.array([format_label(x) for x in model.labels], dtype=object)
    for chunk in chunks:
        if chunk.n_rows == 0:
            continue
        scores = model.decision_function(chunk)
        idx = model.predict_index(scores)
        summary.correct += int(np.count_nonzero(model.labels[idx] == chunk.labels))
        summary.total += chunk.n_rows
        text = label_text[idx]
        if decision_values:
            cols = [np.char.mod("%.10g", scores[:, c]).astype(object) for c in range(scores.shape[1])]
            for col in cols:
                text = text + " " + col
        out.write("\n".join(text.tolist()))
        out.write("\n")
    return summary


def _predict_values(chunks, model, out, decision_values, probabilities=False):
    """A regression model's predictions, one per line; the decision value is
    the prediction. ``probabilities`` (-b 1): the summary starts with
    LIBSVM's line of the model's Laplace noise (ParameterError without one)."""
    summary = RegressionSummary()
    if probabilities:
        from .models.probability import LAPLACE_LINE
        if model.laplace_sigma is None:
            raise ParameterError("-b 1: this regression model has no noise model (train it with -b 1, "
                                 "as LIBSVM's -s 3 -b 1)")
        summary.note = f"{LAPLACE_LINE}{model.laplace_sigma:g}"
    for chunk in chunks:
        if chunk.n_rows == 0:
            continue
        pred = model.predict_from_scores(model.decision_function(chunk))
        summary.add(pred, chunk.labels)
        out.write("\n".join(np.char.mod("%.17g", pred).tolist()))
        out.write("\n")
    return summary


def _predict_probabilities(chunks, model, out):
    """``-b 1``: each row's label and every label's probability, in LIBSVM's and
    LIBLINEAR's format. The label is LIBLINEAR's for a logistic model (its
    decision) and LIBSVM's for Platt's sigmoids (the most probable label)."""
    if not getattr(model, "has_probabilities", False):
        raise ParameterError("-b 1: this model has no probability information (logistic models have it: "
                             "train with --loss log, LIBLINEAR's -s 0/7; LIBSVM models trained with -b 1 do)")
    summary = PredictionSummary()
    out.write("labels " + " ".join("%g" % x for x in model.labels) + "\n")
    for chunk in chunks:
        if chunk.n_rows == 0:
            continue
        scores = model.decision_function(chunk)
        probs = model.probabilities(scores)
        idx = np.argmax(probs, axis=1) if model.prob_A is not None else model.predict_index(scores)
        summary.correct += int(np.count_nonzero(model.labels[idx] == chunk.labels))
        summary.total += chunk.n_rows
        cols = [np.char.mod("%g", model.labels[idx])] + [np.char.mod("%g", probs[:, c])
                                                          for c in range(probs.shape[1])]
        out.write("\n".join(" ".join(row) for row in zip(*(c.tolist() for c in cols))))
        out.write("\n")
    return summary


def _predict_ranking(chunks, model, out):
    """A ranking model's scores, one per line, written chunk by chunk. The
    measures need whole queries and a query may span chunks (or, ungrouped,
    the whole file), so the labels, qids and scores are kept (24 bytes a
    row) and measured at the end; rows without qid: are one query (qid 0)."""
    from .data.queries import ranking_summary
    labels, qids, scores = [], [], []
    for chunk in chunks:
        if chunk.n_rows == 0:
            continue
        pred = model.predict_from_scores(model.decision_function(chunk))
        labels.append(chunk.labels)
        qids.append(chunk.qid if chunk.qid is not None else np.zeros(chunk.n_rows, np.int64))
        scores.append(pred)
        out.write("\n".join(np.char.mod("%.17g", pred).tolist()))
        out.write("\n")
    if not scores:
        return ranking_summary(np.zeros(0), np.zeros(0), np.zeros(0, np.int64))
    return ranking_summary(np.concatenate(scores), np.concatenate(labels), np.concatenate(qids))
