"""svmtrain: fast large-scale SVM training from LIBSVM/SVMlight files.

Public API (imported lazily so that ``import svmtrain`` stays cheap)::

    model = svmtrain.train("data/a9a.xz", solver="pegasos", lam=1e-4)
    labels = svmtrain.predict("data/a9a.t.xz", model)
    model = svmtrain.train(X, y, C=1.0)              # X: NumPy array or SciPy sparse matrix
    model = svmtrain.train("big.svm", solver="pegasos", stream=True, memory_limit=256)   # out of core
    model = svmtrain.train("parts/*.svm", solver="ocas", engine="dask", scheduler=None)  # on a Dask cluster
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


def train(data, y=None, params=None, monitor=None, qid=None, sample_weight=None, *, stream=False,
          memory_limit=None, shuffle_buffer=None, cache=None, chunk_size=None, engine="local", scheduler=None,
          log=None, **options):
    """Train on ``data``: a path, a Chunk, or a NumPy array / SciPy sparse
    matrix of rows with their labels or targets ``y`` (and ``qid`` for
    ranking); ``options`` are TrainParams fields (``TrainParams.describe()``
    lists each with its svm-train flag, default and help). ``sample_weight``: a
    weight >= 0 per row of an array or matrix, multiplying its loss (its C)
    where the solver takes them (``Declaration.sample_weights`` in ``svmtrain.solvers``: dcd
    with the hinges, pegasos).

    Where it trains (the run of ``svm-train``, :func:`svmtrain.run.run`,
    so the model is the one svm-train writes): in memory by default; out of
    core from a path with ``stream=True`` or ``memory_limit=MB``
    (``--stream``, ``--memory-limit``; ``shuffle_buffer`` rows, ``cache``:
    True for the binary cache beside the file, or its path); on a Dask
    cluster with ``engine="dask"`` (``scheduler``: its address, None: a
    local cluster for the run), ``data`` then a file, glob, directory or
    list file of partitions. ``chunk_size``: rows per chunk when reading.
    ``log``: a function given the solvers' lines and the run's notes.

    Returns a model that predicts the original labels. ``monitor``: e.g. a
    :class:`svmtrain.training.trace.Trace`, which collects the ``--trace`` rows
    (in-memory runs).
    """
    from .data.arrays import as_chunk, is_matrix
    from .params import TrainParams
    from .run import Hooks, RunOptions, run
    if params is None:
        params = TrainParams(**options)
    elif options:
        raise TypeError("give either params or keyword options, not both")
    n_features = None
    if is_matrix(data):
        if y is None:
            raise TypeError("train(X, y): an array or matrix X needs its labels y")
        data, n_features = as_chunk(data, y, qid, sample_weight), data.shape[1]
    elif y is not None or sample_weight is not None:
        raise TypeError("y and sample_weight go with an array or matrix X; a file or Chunk carries its labels")
    opts = RunOptions(stream=stream, memory_limit=memory_limit, shuffle_buffer=shuffle_buffer, cache=cache,
                      chunk_size=chunk_size, engine=engine, scheduler=scheduler)
    hooks = Hooks() if log is None else Hooks(log=log, say=log, warn=log)
    return run(data, params, opts, hooks, monitor=monitor, n_features=n_features).model


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
