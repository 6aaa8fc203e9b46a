"""Chunk sources: a training set seen as row blocks, one pass at a time.

A solver that can train out of core takes a *chunk source* instead of one
in-memory :class:`svmtrain.data.dataset.Chunk`. It knows nothing of files: it
asks for the blocks of a pass, in an order of its choosing, and gets
Chunks. The protocol:

``n_rows``, ``nnz``
    rows and nonzeros of the whole training set.
``bounds``
    int64[n_blocks + 1]: block j holds rows ``bounds[j]:bounds[j + 1]``
    (global row numbers, so a solver can keep per-row state such as the
    dual variables in an n-sized array and slice it per block).
``n_blocks``
    ``len(bounds) - 1``.
``blocks(order=None)``
    an iterator of ``(j, chunk)`` over the blocks ``order`` (default all,
    in order); ``chunk`` is a Chunk of the block's rows (``indptr``
    starting at 0). A block's arrays are valid until the iterator is
    advanced: a solver that needs rows longer copies them.

:class:`InMemorySource` wraps a Chunk as a source of one block, so the
same solver code runs in memory and streamed;
:class:`svmtrain.io.block_reader.FileBlockSource` reads blocks from the
binary cache (or the spool of a ``--stream`` run) with bounded memory.
"""
import dataclasses

import numpy as np

from .dataset import Chunk, float32_copy
from .memory import available_bytes


class InMemorySource:
    """A Chunk seen as a chunk source with a single block."""

    def __init__(self, chunk):
        self.chunk = chunk
        self.n_rows = chunk.n_rows
        self.nnz = chunk.nnz
        self.bounds = np.array([0, chunk.n_rows], np.int64)
        self.n_blocks = 1

    def blocks(self, order=None):
        for j in (range(1) if order is None else order):
            if j != 0:
                raise IndexError(f"block {j} of a single-block source")
            yield 0, self.chunk


def as_source(data):
    """``data`` itself when it is a chunk source, else an InMemorySource of the Chunk."""
    if isinstance(data, Chunk):
        return InMemorySource(data)
    return data


def with_float32_values(source, min_nnz, max_bytes=None):
    """``source`` itself, or, when it is one in-memory Chunk of at least
    ``min_nnz`` stored values that are all float32 exactly, an
    InMemorySource over a copy holding them as float32
    (:func:`svmtrain.data.dataset.float32_copy`): a kernel that computes in
    float64 gets the same numbers from it and reads a third fewer bytes a
    pass. The copy costs 4 bytes a stored value for as long as it is held:
    none is made above ``max_bytes`` (default a quarter of the memory
    available, :func:`svmtrain.data.memory.available_bytes`)."""
    if not isinstance(source, InMemorySource) or source.nnz < min_nnz:
        return source
    if 4 * source.nnz > (available_bytes() // 4 if max_bytes is None else max_bytes):
        return source
    values = float32_copy(source.chunk.values)
    if values is None:
        return source
    return InMemorySource(dataclasses.replace(source.chunk, values=values))


def take_source_rows(data, rows):
    """A Chunk of ``rows`` (sorted global row numbers) of ``data``, a Chunk
    or a chunk source; a source is read only in the blocks holding them."""
    from .dataset import concat_chunks, take_rows
    rows = np.ascontiguousarray(rows, np.int64)
    if isinstance(data, Chunk):
        return take_rows(data, rows)
    bounds = data.bounds
    block = np.searchsorted(bounds, rows, side="right") - 1
    parts = [take_rows(c, rows[block == j] - bounds[j]) for j, c in data.blocks(np.unique(block))]
    return concat_chunks(parts) if parts else Chunk.empty()


def is_streamed(data):
    """True when ``data`` is a chunk source rather than one in-memory Chunk."""
    return not isinstance(data, Chunk)
