"""The one data contract between the reader, the solvers and prediction.

A :class:`Chunk` holds consecutive rows of a LIBSVM/SVMlight file as CSR
arrays with fixed dtypes:

* ``labels``  float64[n]    the label of each row, as written in the file
* ``indptr``  int64[n+1]    row i occupies ``indptr[i]:indptr[i+1]``; ``indptr[0] == 0``
* ``indices`` int32[nnz]    0-based feature indices (file index - 1), strictly
                            increasing within a row
* ``values``  float64[nnz]  feature values (explicit zeros are kept)
* ``qid``     int64[n]      the ``qid:`` of each row, 0 where absent
* ``first_line``            the 1-based line number in the source of the
                            first line this chunk covers (for messages)
* ``weights`` float64[n]    the weight of each row's loss (sample weights,
                            Python API only; None: every row weighs 1)

int32 indices halve the memory of int64 and cover LIBSVM's range (indices
up to 2^31-1, so 0-based up to 2^31-2). Solver kernels take these arrays
directly, never scipy objects.
"""
from dataclasses import dataclass

import numpy as np

from .._numba import options as _opts
from ._dataset_kernels import gather_rows, narrow_exact


@dataclass
class Chunk:
    labels: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    qid: np.ndarray
    first_line: int = 1
    weights: np.ndarray = None

    @property
    def n_rows(self):
        return len(self.labels)

    @property
    def nnz(self):
        return int(self.indptr[-1])

    @property
    def n_features(self):
        """Largest 0-based index + 1 that occurs in this chunk (0 if none)."""
        return int(self.indices.max()) + 1 if len(self.indices) else 0

    @classmethod
    def empty(cls):
        return cls(
            labels=np.empty(0, np.float64),
            indptr=np.zeros(1, np.int64),
            indices=np.empty(0, np.int32),
            values=np.empty(0, np.float64),
            qid=np.empty(0, np.int64),
        )


def concat_chunks(chunks):
    """Join chunks (an iterable, consumed once) into one Chunk.

    Each input chunk is released as soon as it is copied, and the output is
    filled page by page, so peak memory stays near one copy of the data
    plus one chunk rather than two copies.
    """
    chunks = list(chunks)
    if not chunks:
        return Chunk.empty()
    first_line = chunks[0].first_line
    n = sum(c.n_rows for c in chunks)
    nnz = sum(c.nnz for c in chunks)
    out = Chunk(
        labels=np.empty(n, np.float64),
        indptr=np.empty(n + 1, np.int64),
        indices=np.empty(nnz, np.int32),
        values=np.empty(nnz, np.float64),
        qid=np.empty(n, np.int64),
        first_line=first_line,
    )
    out.indptr[0] = 0
    r = 0
    z = 0
    while chunks:
        c = chunks.pop(0)
        m, k = c.n_rows, c.nnz
        out.labels[r:r + m] = c.labels
        out.qid[r:r + m] = c.qid
        out.indptr[r + 1:r + m + 1] = c.indptr[1:] + z
        out.indices[z:z + k] = c.indices[:k]
        out.values[z:z + k] = c.values[:k]
        r += m
        z += k
        del c
    return out


def take_rows(chunk, rows):
    """A new Chunk holding ``rows`` (int array) of ``chunk``, in that order.

    Below NUMPY_MAX_NNZ stored values taken the entries are gathered by
    NumPy indexing (small data compile no kernel for it; its temporary
    positions cost 8 bytes an entry), else by the numba kernel gather_rows;
    both copy the same entries."""
    rows = np.ascontiguousarray(rows, np.int64)
    lengths = chunk.indptr[rows + 1] - chunk.indptr[rows]
    indptr = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(lengths, out=indptr[1:])
    if indptr[-1] < _opts.NUMPY_MAX_NNZ:
        # entry p of the new rows is entry p - indptr[r] + chunk.indptr[rows[r]] of the old, r its row
        positions = np.arange(indptr[-1]) + np.repeat(chunk.indptr[rows] - indptr[:-1], lengths)
        indices, values = chunk.indices[positions], chunk.values[positions]
    else:
        indices = np.empty(indptr[-1], np.int32)
        values = np.empty(indptr[-1], np.float64)
        gather_rows(chunk.indptr, chunk.indices, chunk.values, rows, indptr, indices, values)
    return Chunk(labels=chunk.labels[rows], indptr=indptr, indices=indices, values=values,
                 qid=chunk.qid[rows], first_line=chunk.first_line,
                 weights=None if chunk.weights is None else chunk.weights[rows])


def float32_copy(values):
    """``values`` (float64) as a new float32 array when every value is a
    float32 exactly (word counts, 0/1 features, halves...), else None. A
    product or sum in float64 of a value read from the copy is the same
    number as of the original, and a CSR pass reads 8 bytes a stored value
    instead of 12. Stops at the first value that is not a float32."""
    out = np.empty(values.shape[0], np.float32)
    return out if narrow_exact(values, out) == values.shape[0] else None
