"""Prediction: stream a data file through a model, write labels, count accuracy."""
from dataclasses import dataclass

import numpy as np

from .dataset import Chunk


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

    def line(self):
        """LIBLINEAR's summary line, e.g. 'Accuracy = 84.9702% (13834/16281)'."""
        return "Accuracy = %g%% (%d/%d)" % (100.0 * self.accuracy, self.correct, self.total)


def predict(data, model):
    """Predicted original labels (float64[n]) of ``data`` (a Chunk or a path)."""
    if not isinstance(data, Chunk):
        from .io.reader import read_libsvm
        data = read_libsvm(data)
    return model.predict(data)


def predict_stream(chunks, model, out, decision_values=False):
    """Write one predicted label per line of ``out`` for every row of ``chunks``.

    With ``decision_values`` each line continues with the model's scores, in
    the model's label order (one score for a binary model). Returns a
    PredictionSummary against the labels in the data.
    """
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
