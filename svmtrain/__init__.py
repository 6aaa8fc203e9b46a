"""svmtrain: fast large-scale SVM training from LIBSVM/SVMlight files.

Public API (imported lazily so that ``import svmtrain`` stays cheap)::

    model = svmtrain.train("data/a9a.xz", solver="pegasos", lam=1e-4)
    labels = svmtrain.predict("data/a9a.t.xz", model)
    model = svmtrain.train(X, y, C=1.0)              # X: NumPy array or SciPy sparse matrix
    labels = svmtrain.predict(X_test, model)
    from .sklearn import SVMClassifier      # scikit-learn estimators (optional extra)
    svmtrain.save_model(model, "a9a.model"); svmtrain.load_model("a9a.model")
    X = svmtrain.read_libsvm("data/a9a.xz")      # a Chunk of CSR arrays
"""
import os as _os

# numba's OpenMP threads spin while waiting by default; on a busy machine (more
# runnable threads than cores) that made a 0.1 s OCAS run on a9a take 7-9 s.
# Sleeping waits cost microseconds per parallel region. A user's setting wins.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from ._version import __version__  # noqa: F401 (public)
__all__ = ["train", "predict", "read_libsvm", "iter_chunks", "load_model", "save_model", "TrainParams"]


def train(data, y=None, params=None, monitor=None, qid=None, sample_weight=None, **options):
    """Train on ``data``: a path, a Chunk, or a NumPy array / SciPy sparse
    matrix of rows with their labels or targets ``y`` (and ``qid`` for
    ranking); ``options`` are TrainParams fields (``TrainParams.describe()``
    lists each with its svm-train flag, default and help). ``sample_weight``: a
    weight >= 0 per row of an array or matrix, multiplying its loss (its C)
    where the solver takes them (``svmtrain.tasks.SAMPLE_WEIGHTS``: dcd
    with the hinges, pegasos).

    Returns a model that predicts the original labels. ``monitor``: e.g. a
    :class:`svmtrain.training.trace.Trace`, which collects the ``--trace`` rows.
    """
    from .data.arrays import as_chunk, is_matrix
    from .params import TrainParams
    from .training.train import train as _train
    if params is None:
        params = TrainParams(**options)
    elif options:
        raise TypeError("give either params or keyword options, not both")
    if is_matrix(data):
        if y is None:
            raise TypeError("train(X, y): an array or matrix X needs its labels y")
        return _train(as_chunk(data, y, qid, sample_weight), params, monitor=monitor, n_features=data.shape[1])
    if y is not None or sample_weight is not None:
        raise TypeError("y and sample_weight go with an array or matrix X; a file or Chunk carries its labels")
    return _train(data, params, monitor=monitor)


def predict(data, model):
    """Predicted labels (float64 array) of ``data`` (a path, a Chunk, or a
    NumPy array / SciPy sparse matrix of rows)."""
    from .data.arrays import as_chunk, is_matrix
    from .prediction import predict as _predict
    return _predict(as_chunk(data) if is_matrix(data) else data, model)


def __getattr__(name):
    if name in ("read_libsvm", "iter_chunks"):
        from .io import reader
        return getattr(reader, name)
    if name in ("load_model", "save_model"):
        from .io import model_io
        return getattr(model_io, name)
    if name == "TrainParams":
        from .params import TrainParams
        return TrainParams
    raise AttributeError(f"module 'svmtrain' has no attribute {name!r}")
