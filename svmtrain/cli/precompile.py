"""Compile (and cache) every numba kernel ahead of the first real run.

numba compiles a kernel the first time it is called with a new signature
and stores the machine code in its cache (``__pycache__`` beside the
sources, or the user-wide cache directory when the package is read-only),
so the first run of each solver pays its compilation. :func:`precompile`
pays it up front: each *group* below runs one part of svmtrain (the reader,
scoring, or one solver) on a tiny synthetic problem, through the same entry
points a real run uses (``training.train`` on a :class:`Chunk` with the
reader's dtypes, ``streaming.train_streamed`` on a small temporary file,
model files written and read back, ``predict_stream``), so exactly the
specialisations of real runs are compiled. Groups run in parallel worker
processes; afterwards no run of any solver compiles anything (checked by
``scripts/check_precompile.py`` and ``tests/test_precompile.py``).

The groups, and what they cover:

* ``reader``: the LIBSVM reader (in memory and threaded file reads), row
  selection (``-v``), linear scoring (serial and parallel), model files and
  the pair passes of ranking data;
* one group per solver of the registry (``dcd``, ``ocas``, ``pegasos``...):
  the warm-up runs its declaration lists (``Declaration.warm_up``: its
  tasks, losses, kernels, Crammer-Singer, options, each on a tiny problem),
  trained and scored, every model written in each format it fits and read back;
* ``stream``: ``--stream`` training of every solver that streams (its
  ``Streamed.warm_up`` runs; run after ``reader``, whose parser it uses);
* ``dask``: the worker kernels of ``--engine dask`` (called directly;
  Dask itself is not needed);
* ``scale``: svm-scale's statistics, range files and number formatting.
"""
import io
import os
import tempfile
import time
import warnings

import numpy as np

# groups that read files with the reader: started once ``reader`` has finished,
# so they load its cached kernels instead of compiling them again
AFTER_READER = ("stream", "scale")


# ------------------------------------------------------------ synthetic data
def _chunk(n=48, d=7, n_classes=2, seed=0):
    """A small deterministic Chunk with the reader's dtypes (rows sorted, a
    few empty features, labels 1..n_classes with both signs of the margin)."""
    from ..data.dataset import Chunk
    rng = np.random.RandomState(seed)
    labels = np.empty(n, np.float64)
    indptr = np.zeros(n + 1, np.int64)
    indices = []
    values = []
    for i in range(n):
        c = i % n_classes
        labels[i] = [1.0, -1.0, 2.0, 3.0][c] if n_classes > 2 else (1.0 if c == 0 else -1.0)
        cols = np.flatnonzero(rng.rand(d) < 0.6)
        if len(cols) == 0:
            cols = np.array([i % d])
        vals = rng.randn(len(cols)) * 0.5 + (0.8 if c == 0 else -0.8)
        indices.extend(cols.tolist())
        values.extend(vals.tolist())
        indptr[i + 1] = len(indices)
    return Chunk(labels=labels, indptr=indptr, indices=np.asarray(indices, np.int32),
                 values=np.asarray(values, np.float64), qid=np.zeros(n, np.int64))


def _text(chunk):
    """The chunk as LIBSVM text (1-based indices)."""
    lines = []
    for i in range(chunk.n_rows):
        lo, hi = chunk.indptr[i], chunk.indptr[i + 1]
        feats = " ".join(f"{j + 1}:{v!r}" for j, v in zip(chunk.indices[lo:hi].tolist(),
                                                          chunk.values[lo:hi].tolist()))
        lines.append(f"{chunk.labels[i]:g} {feats}".rstrip())
    return "\n".join(lines) + "\n"


def _params(**kw):
    from ..params import TrainParams
    return TrainParams(**kw)


def _score(model, chunk, tmp):
    """Score ``chunk`` as svm-predict does, with the model itself and with
    each model file format it can be written in, read back."""
    from ..io.model_io import load_model, save_model
    from ..prediction import predict_stream
    predict_stream([chunk], model, io.StringIO(), decision_values=True)
    if getattr(model, "logistic", False):
        predict_stream([chunk], model, io.StringIO(), probabilities=True)
    model.predict(chunk)
    writers = [save_model]
    try:
        from ..io.liblinear_format import write_liblinear_model
        from ..io.libsvm_format import write_libsvm_model
        writers += [write_liblinear_model, write_libsvm_model]
    except ImportError:
        pass
    for k, write in enumerate(writers):
        path = os.path.join(tmp, f"model{k}")
        try:
            write(model, path)
        except Exception:       # this format does not hold this kind of model
            continue
        predict_stream([chunk], load_model(path), io.StringIO(), decision_values=True)


def _train_and_score(chunk, tmp, **kw):
    from ..training.train import train
    model = train(chunk, _params(**kw))
    _score(model, chunk, tmp)
    return model


# ------------------------------------------------------------------ groups
def _reader(tmp):
    from ..data._dataset_kernels import gather_rows
    from ..data.dataset import take_rows
    from ..io.reader import iter_chunks, parse_bytes, read_libsvm
    from ..models.linear import LinearModel
    from ..solvers._common import margins, score_loss_sum
    chunk = _chunk()
    text = _text(chunk)
    # an unsorted row and a number that needs the exact conversion
    text += "-1 5:1.25 2:0.5 3:1.00000000000000000000001e-3\n"
    path = os.path.join(tmp, "data.svm")
    with open(path, "w") as f:
        f.write(text)
    for threads in (1, 2):
        data = read_libsvm(path, threads=threads)
        for _ in iter_chunks(path, chunk_rows=7, threads=threads):
            pass
    parse_bytes(text.encode())
    rows = np.arange(0, data.n_rows, 2)
    taken = take_rows(data, rows)       # and its kernel, which takes NUMPY_MAX_NNZ values or more (-v on such data)
    gather_rows(data.indptr, data.indices, data.values, rows, taken.indptr, np.empty_like(taken.indices),
                np.empty_like(taken.values))
    w = np.zeros(data.n_features + 1)
    scores = margins(data.indptr, data.indices, data.values, w, 1.0, 0.0, np.empty(data.n_rows))
    score_loss_sum(data.labels, scores, "hinge")    # the objective's kernel from NUMPY_MAX_NNZ values (-v's folds)
    d = data.n_features
    for bias in (-1.0, 1.0):
        for k in (1, 3):
            rows = d + 1 if bias >= 0 else d
            W = np.linspace(-1.0, 1.0, rows * k).reshape(rows, k)
            labels = np.array([1.0, -1.0, 2.0][:k] if k > 1 else [1.0, -1.0])
            model = LinearModel(labels=labels, W=W, n_features=d, bias=bias,
                                b=np.zeros(k), solver="dcd")
            _score(model, data, tmp)
    _path_kernels(data)
    _queries(tmp)


def _path_kernels(data):
    """-C's own kernel: a fold's binary score; LIBSVM's folds (--folds libsvm), stratified and plain."""
    from ..selection._path_kernels import binary_correct
    from ..training.libsvm_folds import libsvm_splits
    w = np.zeros(data.n_features + 1)
    binary_correct(data.indptr, data.indices, data.values, w, data.n_features, 1.0, True, data.labels > 0)
    for stratified in (True, False):
        libsvm_splits(data.labels, 3, stratified)


def _warm_up_data(classes=2, rows=48, features=7, ranking=False, precomputed=False, counts=False):
    """The tiny problem of a warm-up run (see Declaration.warm_up);
    ``precomputed``: its linear kernel matrix in LIBSVM's -t 4 rows, as the
    reader gives them with index base 0 (0:ID, then K against every row);
    ``counts``: rows of three words, counted 1 to 4 (values that are float32
    exactly, which OCAS copies as float32 in :func:`run_group`, and cuts
    that touch few of the features, kept sparse in float32)."""
    chunk = _chunk(n=rows, d=features, n_classes=4 if ranking else classes)
    if counts:
        rng = np.random.RandomState(1)
        p = 1.0 / np.arange(1, features + 1)            # word frequencies: a power law
        chunk.indices = np.concatenate([np.sort(rng.choice(features, 3, replace=False, p=p / p.sum()))
                                        for _ in range(rows)]).astype(np.int32)
        chunk.indptr = np.arange(0, 3 * rows + 1, 3, dtype=np.int64)
        chunk.values = rng.randint(1, 5, 3 * rows).astype(np.float64)
    if ranking:             # six queries of eight rows, relevance 0-3
        chunk.qid = np.repeat(np.arange(1, 7), 8).astype(np.int64)
        chunk.labels = np.abs(chunk.labels) - 1.0
    if precomputed:
        X = np.zeros((rows, features))
        X[np.repeat(np.arange(rows), np.diff(chunk.indptr)), chunk.indices] = chunk.values
        values = np.hstack([np.arange(1.0, rows + 1)[:, None], X @ X.T]).ravel()
        chunk.indptr = np.arange(0, rows * (rows + 1) + 1, rows + 1, dtype=np.int64)
        chunk.indices = np.tile(np.arange(rows + 1, dtype=np.int32), rows)
        chunk.values = values
    return chunk


DATA_KEYS = ("classes", "rows", "features", "ranking", "precomputed", "counts")


def _solver_group(name):
    """The group of ``-s name``: each of its declared warm-up runs trained
    and scored, then, when its module has its own cross-validation
    (``CROSS_VALIDATION``), a 3-fold -v of the first."""
    from ..solvers import declaration, get_solver
    from ..training.train import cross_val_predict

    def run(tmp):
        for run_kw in declaration(name).warm_up:
            data = {k: v for k, v in run_kw.items() if k in DATA_KEYS}
            params = {k: v for k, v in run_kw.items() if k not in DATA_KEYS}
            _train_and_score(_warm_up_data(**data), tmp, solver=name, **params)
        if getattr(get_solver(name), "CROSS_VALIDATION", None):
            first = declaration(name).warm_up[0]
            cross_val_predict(_warm_up_data(**{k: v for k, v in first.items() if k in DATA_KEYS}),
                              _params(solver=name, **{k: v for k, v in first.items() if k not in DATA_KEYS}), 3)
    return run


def _queries(tmp):
    """The parallel pair pass of ranking data, which only data of PARALLEL_MIN_NNZ / 4 rows or more uses."""
    from ..data.queries import QueryGroups
    from ..data import _query_kernels as KR
    chunk = _warm_up_data(ranking=True)
    g = QueryGroups.build(chunk.qid, chunk.labels)
    n, L, Q = chunk.n_rows, g.lptr[-1], g.n_queries
    for margin, strict in ((1.0, True), (0.0, False)):
        KR.pair_pass_parallel(np.linspace(0.0, 1.0, n), g.lev, g.order, g.qptr, g.lptr, margin, strict,
                              np.zeros(n), np.empty(n), np.empty(n, np.int64), np.zeros(L, np.int64),
                              np.zeros(L, np.int64), np.zeros(L, np.int64), np.zeros(Q, np.int64), np.zeros(Q))
    z = np.linspace(0.0, 1.0, n)
    KR.pair_sums_parallel(z, z, g.lev, g.order, g.qptr, g.lptr, 1.0, np.empty(n), np.empty(n, np.int64),
                          np.zeros(L, np.int64), np.zeros(L, np.int64), np.zeros(L, np.int64), np.zeros(L),
                          np.zeros(L), np.zeros(L), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n))


def _dask(tmp):
    from ..distributed import _kernels as KD
    c = _chunk()
    d1 = c.n_features + 1
    w = np.zeros(d1)
    g = np.zeros(d1)
    pos = np.float64(1.0)
    rows = np.arange(c.n_rows, dtype=np.int64)
    KD.batch_slopes(c.indptr, c.indices, c.values, c.labels, pos, False, rows, w, 0.0, 0.0, 0, 0.0, g)
    KD.loss_sum(c.indptr, c.indices, c.values, c.labels, pos, False, w, 0.0, 0.0, 0, 0.0)


def _scale(tmp):
    """svm-scale's kernels: statistics, range files, and the scaled text (x and y)."""
    from ..io.reader import iter_chunks
    from ..preprocess.scaling import Ranges, Scaler, compute_stats
    chunk = _chunk()
    path = os.path.join(tmp, "scale.svm")
    with open(path, "w") as f:
        f.write(_text(chunk) + "0.5 1:1e-30 2:-0 3:1e300\n")
    for lower, y_limits in ((-1.0, None), (0.0, (-1.0, 1.0))):
        stats = compute_stats(iter_chunks(path))
        ranges = Ranges.from_stats(stats, lower, 1.0, y_limits)
        Ranges.parse(ranges.to_bytes())
        Scaler.from_stats(stats, lower, 1.0, y_limits).write(iter_chunks(path), io.BytesIO())
        Scaler.restore(stats, ranges, y_limits)[0].write(iter_chunks(path), io.BytesIO())


def _stream(tmp):
    """--stream training of every solver that streams: its declared streamed warm-up runs."""
    from ..solvers import REGISTRY
    from ..training.streamed import train_streamed
    chunk = _chunk()
    path = os.path.join(tmp, "stream.svm")
    with open(path, "w") as f:
        f.write(_text(chunk))
    for name, d in REGISTRY.items():
        for kw in d.streamed.warm_up if d.streamed is not None else ():
            model = train_streamed(path, _params(solver=name, **kw), memory_limit_mb=64, chunk_rows=16)
            _score(model, chunk, tmp)


def _groups():
    """group name -> its function: the reader, one group per solver of the registry, then the rest."""
    from ..solvers import SOLVERS
    return {"reader": _reader, **{name: _solver_group(name) for name in SOLVERS},
            "dask": _dask, "stream": _stream, "scale": _scale}


def run_group(name):
    """Run one group in this process (compiling and caching its kernels);
    returns its wall seconds. Prints nothing.

    The group's workload runs twice: as is (the tiny problems take the
    serial twins of the kernels that have one) and with the size thresholds
    of :mod:`svmtrain._numba.options` at 0 and ocas given more than one
    block (the parallel twins, which real runs on larger data take). Both
    times ocas copies float32 values at any size (``FLOAT32_MIN_NNZ``), so
    that both twins are compiled for them."""
    from .._numba import options as opts
    from ..solvers.ocas import ocas
    t0 = time.perf_counter()
    saved = opts.PARALLEL_MIN_NNZ, opts.PARALLEL_MIN_WORK, opts.PARALLEL_MIN_PASS, ocas.MIN_NNZ_PER_THREAD
    saved_float32 = ocas.FLOAT32_MIN_NNZ
    with tempfile.TemporaryDirectory(prefix="svmtrain-precompile-") as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ocas.FLOAT32_MIN_NNZ = 0
            for setting in (saved, (0, 0, 0, 1)):
                opts.PARALLEL_MIN_NNZ, opts.PARALLEL_MIN_WORK, opts.PARALLEL_MIN_PASS, ocas.MIN_NNZ_PER_THREAD = setting
                _groups()[name](tmp)
        finally:
            opts.PARALLEL_MIN_NNZ, opts.PARALLEL_MIN_WORK, opts.PARALLEL_MIN_PASS, ocas.MIN_NNZ_PER_THREAD = saved
            ocas.FLOAT32_MIN_NNZ = saved_float32
    return time.perf_counter() - t0


def _worker(name):
    return name, run_group(name)


def precompile(jobs=None, log=None, groups=None):
    """Compile and cache the numba kernels of every solver (see the module
    docstring); returns ``[(group_name, seconds)]`` in the order the groups
    finished. ``jobs`` worker processes (default ``os.cpu_count()``; the
    groups are independent), ``log(line)`` gets one line per group,
    ``groups`` selects some of the group names (default all: ``reader``, one per solver, ``dask``, ``stream``, ``scale``). Deterministic:
    the same synthetic problems every time. Raises the first error a group
    raises. The workers are started with the "spawn" method, so a script
    that calls this must do so under ``if __name__ == "__main__":``."""
    import concurrent.futures as cf
    import multiprocessing as mp
    known = _groups()
    names = list(known if groups is None else groups)
    unknown = [g for g in names if g not in known]
    if unknown:
        raise ValueError(f"unknown precompile group(s): {', '.join(unknown)}")
    jobs = max(1, min(int(jobs or os.cpu_count() or 1), len(names)))
    out = []
    first = [g for g in names if g not in AFTER_READER]
    later = [g for g in names if g in AFTER_READER]
    if "reader" not in names:
        first, later = first + later, []
    with cf.ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn")) as pool:
        pending = {pool.submit(_worker, g) for g in first}
        while pending:
            done, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for fut in sorted(done, key=lambda f: names.index(f.result()[0])):
                name, secs = fut.result()
                out.append((name, secs))
                if log is not None:
                    log(f"{name}: {secs:.1f} s")
                if name == "reader":
                    pending |= {pool.submit(_worker, g) for g in later}
    return out
