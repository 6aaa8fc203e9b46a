"""svmtrain.data.arrays.as_chunk: matrices to the solvers' CSR arrays, by hand."""
import numpy as np
import pytest
import scipy.sparse as sp

from svmtrain.data.arrays import as_chunk


def test_dense_rows_become_the_csr_of_their_nonzeros():
    X = np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 0.0], [1.5, 0.0, -3.0]])
    c = as_chunk(X, [1, -1, 1])
    assert c.indptr.tolist() == [0, 1, 1, 3] and c.indptr.dtype == np.int64
    assert c.indices.tolist() == [1, 0, 2] and c.indices.dtype == np.int32
    assert c.values.tolist() == [2.0, 1.5, -3.0] and c.labels.tolist() == [1.0, -1.0, 1.0]
    assert c.qid.tolist() == [0, 0, 0]


def test_sparse_inputs_are_normalised():
    """Explicit zeros dropped, indices sorted, float32 and int64 converted,
    CSC accepted; read-only data copied; a compatible CSR's data not copied."""
    X = sp.csr_matrix((np.array([0.0, 5.0, 1.0], np.float32), np.array([2, 1, 0], np.int64),
                       np.array([0, 2, 3])), shape=(2, 3))
    c = as_chunk(X)
    assert c.indptr.tolist() == [0, 1, 2] and c.indices.tolist() == [1, 0] and c.values.tolist() == [5.0, 1.0]
    c2 = as_chunk(X.tocsc())
    assert c2.indices.tolist() == [1, 0] and c2.values.tolist() == [5.0, 1.0]
    ok = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]]))
    assert np.shares_memory(as_chunk(ok).values, ok.data)
    ok.data.flags.writeable = False
    ro = as_chunk(ok)
    assert ro.values.flags.writeable and not np.shares_memory(ro.values, ok.data)


def test_bad_matrices_are_value_errors():
    with pytest.raises(ValueError, match="NaN or infinity"):
        as_chunk(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueError, match="2-D"):
        as_chunk(np.ones(3))
    with pytest.raises(ValueError, match="rows"):
        as_chunk(np.ones((3, 2)), y=[1, 2])
