"""PLACEHOLDER reader (slow, pure Python) until the streaming numba reader lands.

Public contract that the real reader keeps:
    read_libsvm(path, ...) -> Chunk          whole file as one Chunk
    iter_chunks(path, ...) -> iterator of Chunk
"""
import lzma

import numpy as np

from ..dataset import Chunk, concat_chunks


def iter_chunks(path, **kwargs):
    opener = lzma.open if str(path).endswith(".xz") else open
    labels, indptr, indices, values = [], [0], [], []
    with opener(path, "rt") as f:
        for line in f:
            line = line.split("#")[0].strip()
            if not line:
                continue
            toks = line.split()
            labels.append(float(toks[0]))
            for t in toks[1:]:
                k, v = t.split(":")
                if k == "qid":
                    continue
                indices.append(int(k) - 1)
                values.append(float(v))
            indptr.append(len(indices))
    yield Chunk(np.array(labels, np.float64), np.array(indptr, np.int64),
                np.array(indices, np.int32), np.array(values, np.float64),
                np.zeros(len(labels), np.int64))


def read_libsvm(path, **kwargs):
    return concat_chunks(iter_chunks(path, **kwargs))
