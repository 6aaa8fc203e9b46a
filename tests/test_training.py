"""Label handling and one-vs-rest, as LIBLINEAR does them."""
import numpy as np
import pytest

from svmtrain.data.dataset import Chunk, take_rows
from svmtrain.errors import ParameterError, SvmtrainError
from svmtrain.params import TrainParams
from svmtrain.training.train import cross_validate, label_order, train


@pytest.mark.parametrize("labels,expected", [
    ([-1, 1, -1], [1, -1]),          # {-1, +1}: +1 first
    ([1, -1], [1, -1]),
    ([2, 1, 2], [2, 1]),             # otherwise first appearance
    ([0, 1], [0, 1]),
    ([3, -1, 1, 3], [3, -1, 1]),
])
def test_label_order(labels, expected):
    assert label_order(np.array(labels, float)).tolist() == expected


def blobs(n_per_class, labels, seed=0, d=6):
    """Well separated Gaussian blobs as a Chunk, one class per label."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=4.0, size=(len(labels), d))
    X = np.vstack([c + rng.normal(size=(n_per_class, d)) for c in centers])
    y = np.repeat(np.array(labels, float), n_per_class)
    perm = rng.permutation(len(y))
    X, y = X[perm], y[perm]
    n = len(y)
    return Chunk(labels=y, indptr=np.arange(0, n * d + 1, d, dtype=np.int64),
                 indices=np.tile(np.arange(d, dtype=np.int32), n), values=X.ravel().copy(),
                 qid=np.zeros(n, np.int64))


def test_one_vs_rest_three_classes():
    data = blobs(200, [5, 7, 9])
    model = train(data, TrainParams(lam=1e-3, bias=1.0))
    assert model.labels.tolist() == list(dict.fromkeys(data.labels.tolist()))
    assert model.W.shape == (7, 3)
    assert np.mean(model.predict(data) == data.labels) > 0.95


def test_binary_model_scores_first_label():
    data = blobs(100, [2, 1])
    model = train(data, TrainParams(lam=1e-3, bias=1.0))
    assert model.labels.tolist() == [data.labels[0], 3 - data.labels[0]]
    scores = model.decision_function(data)[:, 0]
    assert np.mean((scores > 0) == (data.labels == model.labels[0])) > 0.95


def test_single_class_predicts_it():
    data = blobs(20, [4])
    model = train(data, TrainParams())
    assert np.all(model.predict(data) == 4)


def test_empty_training_set_is_an_error():
    with pytest.raises(SvmtrainError, match="empty"):
        train(Chunk.empty(), TrainParams())


def test_class_weight_for_unknown_label_is_an_error():
    with pytest.raises(ParameterError, match="-w names label"):
        train(blobs(10, [1, -1]), TrainParams(solver="pegasos", class_weights={3.0: 2.0}))


def test_cross_validation_is_seeded_and_sensible():
    data = blobs(100, [1, -1], seed=3)
    a1 = cross_validate(data, TrainParams(lam=1e-2, seed=5), folds=5)
    a2 = cross_validate(data, TrainParams(lam=1e-2, seed=5), folds=5)
    assert a1 == a2 and a1 > 0.95


def test_take_rows_matches_dense_indexing():
    data = blobs(10, [1, -1])
    rows = np.array([5, 0, 19, 5])
    sub = take_rows(data, rows)
    d = 6
    full = data.values.reshape(-1, d)
    assert np.array_equal(sub.values.reshape(-1, d), full[rows])
    assert np.array_equal(sub.labels, data.labels[rows])


@pytest.mark.parametrize("rows", [[5, 0, 19, 5], [], [3], list(range(19, -1, -1))])
def test_take_rows_numpy_path_equals_the_kernel(rows, monkeypatch):
    """take_rows below NUMPY_MAX_NNZ (NumPy indexing) and above it (gather_rows): the same CSR,
    with empty rows among the taken ones."""
    from svmtrain._numba import options as _numba_options
    data = blobs(10, [1, -1])
    lengths = np.diff(data.indptr).copy()
    lengths[[2, 7]] = 0                              # two empty rows
    data = Chunk(labels=data.labels, indptr=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                 indices=data.indices[:lengths.sum()].copy(), values=data.values[:lengths.sum()].copy(),
                 qid=data.qid)
    rows = np.array(rows + [2, 7], np.int64)
    small = take_rows(data, rows)
    monkeypatch.setattr(_numba_options, "NUMPY_MAX_NNZ", 0)
    large = take_rows(data, rows)
    for name in ("indptr", "indices", "values", "labels"):
        a, b = getattr(small, name), getattr(large, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name


def test_first_above_matches_numpy():
    from svmtrain.data._dataset_kernels import first_above, first_too_large
    rng = np.random.default_rng(0)
    for _ in range(20):
        v = rng.normal(size=50) * 10.0 ** rng.integers(0, 3, size=50)
        hits = np.flatnonzero(np.abs(v) > 50)
        assert first_above(v, 50.0) == (hits[0] if len(hits) else -1)
        assert first_too_large(v, 50.0) == (hits[0] if len(hits) else -1)
    assert first_too_large(np.zeros(0)) == -1
    assert first_too_large(np.array([1.0, -2e150, 3e150])) == 1
    assert first_too_large(np.array([1.0, np.nan, 1e150])) == -1
