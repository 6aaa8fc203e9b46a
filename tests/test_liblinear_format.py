"""LIBLINEAR model files: read LIBLINEAR's, write ours, predictions identical both ways."""
import numpy as np
import pytest
from liblinear import liblinearutil
import scipy.sparse as sp

from conftest import bundled
from svmtrain.data.dataset import Chunk
from svmtrain.errors import ModelFormatError, ParameterError
from svmtrain.io.liblinear_format import (is_liblinear_model, read_liblinear_model,
                                          write_liblinear_model)
from svmtrain.io.reader import read_libsvm
from svmtrain.models.linear import LinearModel


def chunk_of(A, labels):
    A = sp.csr_matrix(A)
    A.sort_indices()
    return Chunk(np.asarray(labels, np.float64), A.indptr.astype(np.int64),
                 A.indices.astype(np.int32), A.data.astype(np.float64),
                 np.zeros(A.shape[0], np.int64))


@pytest.fixture(scope="module")
def a9a():
    X = read_libsvm(bundled("a9a.xz"))
    T = read_libsvm(bundled("a9a.t.xz"))
    A = sp.csr_matrix((X.values, X.indices, X.indptr), shape=(X.n_rows, 123))
    # test rows, plus an empty row (a tie at decision 0 without -B)
    At = sp.vstack([sp.csr_matrix((T.values, T.indices, T.indptr), shape=(T.n_rows, 123)),
                    sp.csr_matrix((1, 123))]).tocsr()
    return X, A, chunk_of(At, np.append(T.labels, 1.0)), At


@pytest.fixture(scope="module")
def three_class():
    """A synthetic 3-class problem with labels 3, -2, 7 (first seen: 3)."""
    rng = np.random.default_rng(5)
    n, d = 300, 12
    centers = rng.normal(scale=2.0, size=(3, d))
    k = rng.integers(0, 3, size=n)
    k[:3] = [0, 1, 2]
    Xd = (centers[k] + rng.normal(size=(n, d))) * (rng.random((n, d)) < 0.7)
    labels = np.array([3.0, -2.0, 7.0])[k]
    A = sp.csr_matrix(Xd)
    Ad = sp.vstack([A, sp.csr_matrix((1, d))]).tocsr()   # plus an empty row
    return labels, A, chunk_of(Ad, np.append(labels, 3.0)), Ad


def ll_predict(m, A):
    labels, _, _ = liblinearutil.predict([], A, m, "-q")
    return np.asarray(labels, np.float64)


@pytest.mark.parametrize("opts", ["-s 3", "-s 3 -B 1", "-s 1 -B 2.5", "-s 0", "-s 4", "-s 4 -B 1",
                                  "-s 5", "-s 2 -B 1"])
def test_read_binary_liblinear_models(a9a, tmp_path, opts):
    X, A, T, At = a9a
    m = liblinearutil.train(X.labels, A, opts + " -q")
    path = tmp_path / "a9a.model"
    liblinearutil.save_model(str(path), m)
    assert is_liblinear_model(path)
    model = read_liblinear_model(path)
    assert model.n_features == 123 and model.n_models == 1
    assert model.bias == m.bias
    pred = model.predict(T)
    assert np.array_equal(pred, ll_predict(m, At))
    assert set(pred) == {1.0, -1.0}
    if "-s 4" not in opts:
        assert list(model.labels) == m.get_labels()
        w = np.array([m.get_decfun_coef(j, 0) for j in range(1, 124)])
        assert np.array_equal(model.W[:123, 0], w)


@pytest.mark.parametrize("opts", ["-s 3", "-s 1 -B 1", "-s 4", "-s 4 -B 1", "-s 0 -B 1"])
def test_read_multiclass_liblinear_models(three_class, tmp_path, opts):
    labels, A, T, Ad = three_class
    m = liblinearutil.train(labels, A, opts + " -q")
    path = tmp_path / "three.model"
    liblinearutil.save_model(str(path), m)
    model = read_liblinear_model(path)
    assert list(model.labels) == [3.0, -2.0, 7.0] and model.n_models == 3
    pred = model.predict(T)
    assert np.array_equal(pred, ll_predict(m, Ad))
    assert np.mean(pred[:-1] == labels) > 0.8


def random_model(rng, d, labels, bias, b):
    m = 1 if len(labels) == 2 else len(labels)
    W = rng.normal(size=(d + (1 if bias >= 0 else 0), m))
    return LinearModel(labels=np.array(labels, float), W=W, n_features=d, bias=bias,
                       b=None if b is None else np.asarray(b, float), solver="dcd",
                       header=[("loss", "hinge")])


@pytest.mark.parametrize("bias,b", [(-1.0, None), (1.0, None), (-1.0, [0.7]), (2.0, [-0.4]), (0.0, [0.3])])
def test_write_binary_read_by_liblinear(a9a, tmp_path, bias, b):
    X, A, T, At = a9a
    model = random_model(np.random.default_rng(1), 123, [1, -1], bias, b)
    model.W *= 0.1
    path = tmp_path / "ours.model"
    write_liblinear_model(model, path)
    m = liblinearutil.load_model(str(path))
    ours = model.predict(T)
    assert np.array_equal(ll_predict(m, At), ours)
    assert len(set(ours)) == 2
    back = read_liblinear_model(path)
    assert np.array_equal(back.predict(T), ours)
    if b is None:   # no folding: repr() round-trips every weight exactly
        assert np.array_equal(back.W, model.W) and back.bias == model.bias


@pytest.mark.parametrize("bias,b", [(-1.0, None), (1.0, [0.5, -1.0, 0.25]), (-1.0, [1.0, 0.0, -2.0])])
def test_write_multiclass_read_by_liblinear(three_class, tmp_path, bias, b):
    labels, A, T, Ad = three_class
    model = random_model(np.random.default_rng(2), 12, [3, -2, 7], bias, b)
    path = tmp_path / "ours3.model"
    write_liblinear_model(model, path)
    m = liblinearutil.load_model(str(path))
    assert m.get_labels() == [3, -2, 7] and m.get_nr_class() == 3
    ours = model.predict(T)
    assert np.array_equal(ll_predict(m, Ad), ours)
    assert len(set(ours)) == 3


def test_write_squared_hinge_solver_type_and_labels(tmp_path):
    model = LinearModel(labels=[2.0, 1.0], W=np.array([[0.5], [-0.25]]), n_features=2,
                        header=[("loss", "squared-hinge")])
    path = tmp_path / "m"
    write_liblinear_model(model, path)
    text = path.read_text().splitlines()
    assert text[:6] == ["solver_type L2R_L2LOSS_SVC_DUAL", "nr_class 2", "label 2 1",
                        "nr_feature 2", "bias -1", "w"]
    with pytest.raises(ParameterError, match="integer labels"):
        write_liblinear_model(LinearModel(labels=[1.5, 0.0], W=np.zeros((2, 1)), n_features=2), path)
    assert path.read_text().splitlines()[0] == "solver_type L2R_L2LOSS_SVC_DUAL"   # untouched


GOOD = """solver_type L2R_L1LOSS_SVC_DUAL
nr_class 3
label 1 2 3
nr_feature 2
bias 1
w
0.5 -1 2 
0.25 0 1e-3 
-1.5 2.5 0 
"""


def write(tmp_path, text):
    p = tmp_path / "bad.model"
    p.write_text(text)
    return p


def test_read_good_small_file(tmp_path):
    model = read_liblinear_model(write(tmp_path, GOOD))
    assert model.W.shape == (3, 3) and model.W[1, 2] == 1e-3 and model.bias == 1.0


@pytest.mark.parametrize("text,line,what", [
    (GOOD.rsplit("\n", 2)[0] + "\n", 9, "truncated"),                       # the last w row missing
    (GOOD.replace("0.25 0 1e-3", "0.25 0"), 8, "expected 3"),               # a column missing
    (GOOD.replace("0.25 0 1e-3", "0.25 0x1 1e-3"), 8, "bad number"),
    (GOOD.replace("0.25 0 1e-3", "0.25 nan 1e-3"), 8, "bad number"),
    (GOOD + "1 2 3\n", 10, "extra data"),
    (GOOD.replace("bias 1", "bias 1\ncolour blue"), 6, "unknown key"),
    (GOOD.replace("label 1 2 3", "label 1 2"), 3, "2 labels"),
    (GOOD.replace("nr_feature 2", "nr_feature two"), 4, "bad integer"),
    (GOOD.replace("nr_feature 2\n", ""), 5, "missing 'nr_feature'"),
    (GOOD.split("w\n")[0], 5, "no 'w'"),
    (GOOD.replace("L2R_L1LOSS_SVC_DUAL", "L9R_MAGIC"), 1, "unknown solver_type"),
])
def test_damaged_files(tmp_path, text, line, what):
    with pytest.raises(ModelFormatError, match=what) as e:
        read_liblinear_model(write(tmp_path, text))
    assert e.value.line == line
    assert str(e.value).startswith(f"{tmp_path / 'bad.model'}:{line}: ")
    assert "\n" not in str(e.value)


def test_oneclass_files(tmp_path):
    text = "solver_type ONECLASS_SVM\nnr_class 2\nnr_feature 2\nbias -1\nrho 0.75\nw\n0.5 \n-1.25 \n"
    model = read_liblinear_model(write(tmp_path, text))
    assert model.task == "o" and list(model.labels) == [1.0, -1.0] and list(model.b) == [-0.75]
    T = chunk_of(sp.csr_matrix(np.array([[2.0, 0.0], [1.0, 0.0], [0.0, -1.0]])), [1, 1, 1])
    assert model.predict(T).tolist() == [1.0, -1.0, 1.0]      # 1 - 0.75 > 0; 0.5 - 0.75 < 0; 1.25 - 0.75
    write_liblinear_model(model, tmp_path / "again.model")
    assert (tmp_path / "again.model").read_text() == text
    with pytest.raises(ModelFormatError, match="missing 'rho'") as e:
        read_liblinear_model(write(tmp_path, text.replace("rho 0.75\n", "")))
    assert e.value.line == 5


@pytest.mark.parametrize("st", ["L2R_L2LOSS_SVR", "L2R_L2LOSS_SVR_DUAL", "L2R_L1LOSS_SVR_DUAL"])
def test_regression_types_read_as_regression_models(tmp_path, st):
    text = f"solver_type {st}\nnr_class 2\nnr_feature 2\nbias 1\nw\n0.5 \n-1.25 \n3 \n"
    model = read_liblinear_model(write(tmp_path, text))
    assert model.task == "r" and len(model.labels) == 0 and model.n_models == 1
    assert model.W[:, 0].tolist() == [0.5, -1.25, 3.0] and model.bias == 1.0


def test_sniffing(tmp_path):
    assert is_liblinear_model(write(tmp_path, GOOD))
    assert not is_liblinear_model(write(tmp_path, "svm_type c_svc\nkernel_type linear\n"))
    assert not is_liblinear_model(tmp_path / "missing")


def test_single_label_model_round_trip(tmp_path):
    m = liblinearutil.train([5, 5, 5], [{1: 1.0}, {2: 1.0}, {1: 0.5}], "-s 3 -q")
    path = tmp_path / "one.model"
    liblinearutil.save_model(str(path), m)
    model = read_liblinear_model(path)
    T = chunk_of(sp.csr_matrix(np.array([[-3.0, 0.0], [0.0, 0.0]])), [0, 0])
    assert list(model.predict(T)) == [5.0, 5.0] == liblinearutil.predict([], [{1: -3.0}, {}], m, "-q")[0]
    write_liblinear_model(model, tmp_path / "again.model")
    assert (tmp_path / "again.model").read_text().splitlines()[1:3] == ["nr_class 1", "label 5"]
