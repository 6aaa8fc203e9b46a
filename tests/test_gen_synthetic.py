"""scripts/gen_synthetic.py --dense: the dense two-class set of the kernel benchmarks."""
import sys

import numpy as np
import pytest
import scipy.sparse
from conftest import ROOT

from svmtrain.data.dataset import take_rows
from svmtrain.io.reader import read_libsvm
from svmtrain.params import TrainParams
from svmtrain.training.train import train


def _gen_synthetic():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import gen_synthetic
    finally:
        sys.path.pop(0)
    return gen_synthetic


def test_dense_mode_stores_every_feature_and_balanced_learnable_labels(tmp_path):
    """Every row has features 1..d, the classes are near half and half, a
    linear model learns the hidden w.(x - 0.5) up to the 5 % of flipped labels,
    and another --first-block gives other rows of the same model."""
    G = _gen_synthetic()
    d = 12
    G.generate(tmp_path / "train", rows=4000, features=d, dense=True, seed=3)
    G.generate(tmp_path / "test", rows=2000, features=d, dense=True, seed=3, first_block=1000)
    train_set, test_set = read_libsvm(tmp_path / "train"), read_libsvm(tmp_path / "test")
    for data in (train_set, test_set):
        assert np.array_equal(np.diff(data.indptr), np.full(data.n_rows, d))
        assert np.array_equal(data.indices, np.tile(np.arange(d), data.n_rows))
        assert np.all((data.values > 0) & (data.values < 1))
        assert 0.45 < np.mean(data.labels > 0) < 0.55
    assert not np.array_equal(train_set.values[:d], test_set.values[:d])
    model = train(train_set, TrainParams(C=10.0, bias=1.0, eps=1e-4))
    accuracy = np.mean(model.predict(test_set) == test_set.labels)
    assert accuracy > 0.9


def test_sparse_mode_unchanged_by_the_dense_option(tmp_path):
    """Without dense=True the bytes stay those the generator wrote before the
    option existed (the seeded files other benchmarks share): the digest below
    is of the previous version's output."""
    import hashlib
    G = _gen_synthetic()
    G.generate(tmp_path / "a", rows=300, features=50, nnz_per_row=8, seed=5)
    digest = hashlib.sha256((tmp_path / "a").read_bytes()).hexdigest()
    assert digest == "4aef5b0133074cf74c4e706c19e788c75d0238bb68ba80ba20b69a2e11c67a4e"


def test_sensor_rows_have_ijcnn1s_shape_and_few_support_vectors(tmp_path):
    """sensor_rows (bench_smo_dense's set): one of the one-hot features 1-10
    per row, 12 readings in (-1, 1), about 10 % positives; written and read
    back the same (6 digits); RBF C = 32, gamma = 2 learns it (held-out
    accuracy) with a minority of the rows as support vectors (at 4,000
    rows; 8.8 % of the 49,990 rows of bench_smo_dense)."""
    G = _gen_synthetic()
    X, y = G.sensor_rows(6000, seed=2)
    assert X.shape == (6000, 22)
    assert np.array_equal(X[:, :10].sum(axis=1), np.ones(6000)) and set(np.unique(X[:, :10])) == {0.0, 1.0}
    assert np.all(np.abs(X[:, 10:]) < 1) and 0.08 < np.mean(y > 0) < 0.12
    G.write_dense(tmp_path / "s", X, y)
    data = read_libsvm(tmp_path / "s")
    dense = scipy.sparse.csr_matrix((data.values, data.indices, data.indptr), shape=(6000, 22)).toarray()
    np.testing.assert_allclose(dense, X, atol=5e-7)
    assert np.array_equal(data.labels, y)
    fit, held = take_rows(data, np.arange(4000)), take_rows(data, np.arange(4000, 6000))
    model = train(fit, TrainParams(solver="smo", kernel_type=2, gamma=2.0, C=32.0))
    assert model.SV.n_rows < 0.4 * 4000
    assert np.mean(model.predict(held) == held.labels) > 0.93      # (all negative: 0.90)


def test_web_rows_have_w8as_shape():
    """web_rows (bench_param_search --web): 0/1 features, about 11 set a row
    with a few common and many rare features, 3 % positives; the same seed
    gives the same rows."""
    G = _gen_synthetic()
    X, y = G.web_rows(5000, seed=4)
    assert X.shape == (5000, 300) and set(np.unique(X)) == {0.0, 1.0}
    assert 10 < X.sum(axis=1).mean() < 12.5
    frequency = np.sort(X.mean(axis=0))[::-1]
    assert frequency[0] > 20 * np.median(frequency)          # a power law, not uniform
    assert 0.025 < np.mean(y > 0) < 0.035
    X2, y2 = G.web_rows(5000, seed=4)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)


def test_write_sparse_rows_writes_libsvm_text(tmp_path):
    """Hand-written expectation: 1-based indices ascending (an unsorted row
    too), %d labels for integers and %.16g otherwise, an empty row as the
    label and a space."""
    G = _gen_synthetic()
    M = scipy.sparse.csr_matrix((np.array([1.5, 2.0, 1e-7, 3.25]), np.array([1, 0, 0, 2]), np.array([0, 2, 2, 4])),
                      shape=(3, 3))
    assert not M.has_sorted_indices
    G.write_sparse_rows(tmp_path / "i", M, np.array([1, -1, 2]))
    assert (tmp_path / "i").read_text() == "1 1:2 2:1.5\n-1 \n2 1:1e-07 3:3.25\n"
    G.write_sparse_rows(tmp_path / "f", M, np.array([0.5, -1.0, 2.0]))
    assert (tmp_path / "f").read_text() == "0.5 1:2 2:1.5\n-1 \n2 1:1e-07 3:3.25\n"


def test_write_sparse_rows_is_scikit_learns_writer(tmp_path):
    """The bytes of scikit-learn's dump_svmlight_file on the bag of words
    (counts, and tf-idf rows whose indices are not sorted), integer and
    float labels."""
    datasets = pytest.importorskip("sklearn.datasets")
    G = _gen_synthetic()
    for tfidf in (False, True):
        M, topic = G.bag_of_words(rows=600, tfidf=tfidf)
        for labels in (np.where(topic < 10, 1, -1), topic * 0.5):
            G.write_sparse_rows(tmp_path / "ours", M, labels)
            datasets.dump_svmlight_file(M, labels, str(tmp_path / "theirs"), zero_based=False)
            assert (tmp_path / "ours").read_bytes() == (tmp_path / "theirs").read_bytes()
