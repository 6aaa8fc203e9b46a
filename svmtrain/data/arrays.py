"""NumPy and SciPy sparse input: a Chunk over the rows of a matrix.

The solvers take CSR arrays (``Chunk``: int64 indptr, int32 indices,
float64 values). A SciPy CSR matrix whose arrays already have those
dtypes, sorted indices and no explicit zeros is used without a copy of its
data (``indptr`` is widened when it is int32: n + 1 numbers); anything
else (CSC, COO, float32, int64 indices, a dense array) is converted once.
Read-only inputs are copied: the kernels are compiled for writable arrays.
"""
import numpy as np


def is_matrix(data):
    """True for a NumPy array (2-D) or a SciPy sparse matrix/array."""
    return isinstance(data, np.ndarray) or hasattr(data, "tocsr")


def as_chunk(X, y=None, qid=None, sample_weight=None, keep_zeros=False):
    """A Chunk over the rows of ``X`` (2-D array or SciPy sparse), with
    labels/targets ``y`` (zeros when None), query ids ``qid`` (zeros when
    None) and row weights ``sample_weight`` (None: all 1). Zero values are
    left out, as in LIBSVM files, unless ``keep_zeros`` (a precomputed
    kernel's rows must hold every column). ValueError for non-finite
    values, negative weights, weights all 0 or a shape that is not 2-D."""
    from .dataset import Chunk
    import scipy.sparse as sp
    if not hasattr(X, "tocsr"):
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (got {X.ndim} dimensions)")
        if keep_zeros:              # every entry stored (csr_matrix of a dense array leaves zeros out)
            n, m = X.shape
            X = sp.csr_matrix((np.ascontiguousarray(X, np.float64).ravel(), np.tile(np.arange(m, dtype=np.int32), n),
                               np.arange(n + 1, dtype=np.int64) * m), shape=(n, m))
        else:
            X = sp.csr_matrix(X.astype(np.float64, copy=False))
    X = X.tocsr()
    if X.dtype != np.float64 or X.indices.dtype != np.int32 or not X.has_sorted_indices:
        X = sp.csr_matrix((X.data.astype(np.float64), X.indices.astype(np.int32), X.indptr), shape=X.shape)
        X.sort_indices()
    values, indices = X.data, X.indices
    if not np.all(np.isfinite(values)):
        raise ValueError("X contains NaN or infinity")
    if not (values.flags.writeable and indices.flags.writeable):
        values, indices = values.copy(), indices.copy()
    if not keep_zeros and np.any(values == 0.0):    # explicit zeros: LIBSVM files never hold them
        keep = values != 0.0
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        counts = np.bincount(rows[keep], minlength=X.shape[0])
        values, indices = values[keep], indices[keep]
        indptr = np.r_[0, np.cumsum(counts)].astype(np.int64)
    else:
        indptr = X.indptr.astype(np.int64)
    n = X.shape[0]
    labels = np.zeros(n) if y is None else np.ascontiguousarray(y, np.float64)
    q = np.zeros(n, np.int64) if qid is None else np.ascontiguousarray(qid, np.int64)
    weights = None if sample_weight is None else np.array(sample_weight, np.float64).reshape(-1)
    if len(labels) != n or len(q) != n or (weights is not None and len(weights) != n):
        raise ValueError(f"X has {n} rows but y, qid or sample_weight has another length")
    if weights is not None and not np.all(np.isfinite(weights) & (weights >= 0)):
        raise ValueError("sample_weight must be finite and >= 0")
    if weights is not None and n and not np.any(weights):
        raise ValueError("sample_weight is zero for every row: nothing to train on")
    return Chunk(labels=labels, indptr=indptr, indices=np.ascontiguousarray(indices, np.int32),
                 values=np.ascontiguousarray(values, np.float64), qid=q, weights=weights)
