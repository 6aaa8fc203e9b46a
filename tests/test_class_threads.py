"""One-vs-rest classes in threads (svmtrain.training.class_threads): the same models
as the classes one after the other with --threads 1, the rules for when
classes run side by side, and the shared progress."""
import dataclasses

import numba
import numpy as np
import pytest

import svmtrain._numba.options as opts
import svmtrain.training.train as training
from svmtrain.training.class_threads import class_workers, shared_progress
from svmtrain.data.dataset import Chunk
from svmtrain.params import TrainParams
from svmtrain.solvers import get_solver
from svmtrain.training.train import train


def _multiclass(n=3000, d=400, nnz=30, classes=4, seed=3):
    """Sparse rows labelled by the best of ``classes`` hidden linear models
    (90,000 stored values: above PARALLEL_MIN_NNZ, so a lone class would
    run parallel kernels)."""
    rng = np.random.default_rng(seed)
    indices = np.sort(np.array([rng.choice(d, nnz, replace=False) for _ in range(n)]), axis=1)
    values = rng.random((n, nnz))
    W = rng.normal(size=(d, classes))
    scores = np.zeros((n, classes))
    for i in range(n):
        scores[i] = values[i] @ W[indices[i]]
    labels = (np.argmax(scores, axis=1) + 1).astype(np.float64)
    indptr = np.arange(0, n * nnz + 1, nnz, dtype=np.int64)
    return Chunk(labels=labels, indptr=indptr, indices=indices.ravel().astype(np.int32),
                 values=values.ravel(), qid=np.zeros(n, np.int64))


@pytest.mark.parametrize("solver, extra", [("dcd", {}), ("dcd", {"loss": "log"}), ("ocas", {}),
                                           ("bmrm", {}), ("pegasos", {}), ("sgd", {})])
def test_classes_in_threads_give_the_serial_models(solver, extra, monkeypatch):
    data = _multiclass()
    assert data.indptr[-1] >= opts.PARALLEL_MIN_NNZ
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", max(2, numba.config.NUMBA_NUM_THREADS))
    threaded = train(data, TrainParams(solver=solver, **extra))
    serial = train(data, TrainParams(solver=solver, threads=1, **extra))
    assert len(threaded.labels) == 4
    np.testing.assert_array_equal(threaded.W, serial.W)
    np.testing.assert_array_equal(threaded.b, serial.b)
    assert [r.n_iter for r in threaded.fit_results] == [r.n_iter for r in serial.fit_results]
    assert np.mean(threaded.predict(data) == data.labels) > 0.8
    # the size thresholds are back after the pool
    assert opts.PARALLEL_MIN_NNZ == 1 << 16 and opts.PARALLEL_MIN_WORK == 1 << 21


def test_classes_run_in_threads_only_where_they_can(monkeypatch):
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 4)
    dcd, sbp = get_solver("dcd"), get_solver("sbp", 2)
    p = TrainParams(solver="dcd")
    assert class_workers(dcd, p, 20) == 4
    assert class_workers(dcd, p, 3) == 3
    assert class_workers(dcd, dataclasses.replace(p, threads=2), 20) == 2
    assert class_workers(dcd, dataclasses.replace(p, threads=9), 20) == 4
    assert class_workers(dcd, dataclasses.replace(p, threads=1), 20) == 1
    assert class_workers(dcd, p, 1) == 1                     # binary: one problem
    assert class_workers(dcd, p, 20, monitored=True) == 1    # --trace, warm starts
    assert class_workers(sbp, p, 20) == 1                    # kernel solvers share a cache over classes


def test_serial_kernels_context_restores_the_thresholds():
    before = opts.PARALLEL_MIN_NNZ, opts.PARALLEL_MIN_WORK
    with pytest.raises(RuntimeError):
        with opts.serial_kernels():
            assert opts.PARALLEL_MIN_NNZ > 1 << 60 and opts.PARALLEL_MIN_WORK > 1 << 60
            raise RuntimeError
    assert (opts.PARALLEL_MIN_NNZ, opts.PARALLEL_MIN_WORK) == before
    # overlapping contexts (two runs in threads): the thresholds come back after the last
    first, second = opts.serial_kernels(), opts.serial_kernels()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)
    assert opts.PARALLEL_MIN_NNZ > 1 << 60
    second.__exit__(None, None, None)
    assert (opts.PARALLEL_MIN_NNZ, opts.PARALLEL_MIN_WORK) == before


def test_shared_progress_sums_the_classes():
    seen = []
    first, second, third = shared_progress(lambda d, t, s=None: seen.append((d, t, s)), 3)
    first(2, 10)            # the totals not yet known count as the largest known
    second(5, 20, "gap")
    first(10, 10)
    third(1, 10)
    assert seen == [(2, 30, None), (7, 50, "gap"), (15, 50, None), (16, 40, None)]
    assert shared_progress(None, 2) == [None, None]


def test_lines_of_classes_in_threads_name_their_class(monkeypatch):
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", max(2, numba.config.NUMBA_NUM_THREADS))
    data = _multiclass(n=400, classes=3)
    lines = []
    train(data, TrainParams(solver="ocas"), log=lines.append)
    assert {s.split(":")[0] for s in lines} == {"class 1", "class 2", "class 3"}
    assert training.class_workers is class_workers
