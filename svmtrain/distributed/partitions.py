"""Partitioned input: which files make a data set, and loading them on a worker.

``expand(spec)`` turns the TRAIN_FILE / TEST_FILE argument into the list of
partition files, in order (the order defines the row order of the data set:
labels, the Pegasos draws and the prediction output follow it):

* ``@FILE``, or a file whose name ends in ``.list``: a list file, one path
  per line; blank lines and lines starting with ``#`` are skipped; relative
  paths are relative to the list file's directory;
* a directory: its regular files, sorted by name, except hidden files,
  ``*.svmcache`` and ``*.tmp``;
* a pattern with ``*``, ``?`` or ``[``: the matching files, sorted by name;
* anything else: one file.

Every path is made absolute (workers do not share the driver's working
directory); messages keep the name as the user wrote it.

On a worker, partitions live in a per-process registry keyed by (run id,
partition index), parsed once by the ordinary reader (or loaded from the
binary cache) and kept until the run ends (``drop``). A task that finds its
partition missing (its worker was lost and the task was rescheduled)
parses it again.
"""
import glob
import os
from typing import NamedTuple

import numpy as np

from ..errors import InputFormatError

LIST_SUFFIX = ".list"
SKIP_SUFFIXES = (".svmcache", ".tmp")
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz")


class Spec(NamedTuple):
    """One partition: its index in the data set, absolute path, name in messages."""

    index: int
    path: str
    display: str


def expand(spec):
    """The partitions named by ``spec`` (see the module doc) as a list of Spec.

    Raises InputFormatError (a file that cannot be opened, an empty
    directory, a pattern that matches nothing, a bad list file).
    """
    spec = os.fspath(spec)
    if spec == "-":
        raise InputFormatError("<stdin>", None, "--engine dask reads files (a glob, a directory or a "
                               "list file), not standard input")
    if spec.startswith("@") or (spec.endswith(LIST_SUFFIX) and os.path.isfile(spec)):
        names = _read_list(spec[1:] if spec.startswith("@") else spec)
    elif os.path.isdir(spec):
        names = [os.path.join(spec, f) for f in sorted(os.listdir(spec))
                 if not f.startswith(".") and not f.endswith(SKIP_SUFFIXES)
                 and os.path.isfile(os.path.join(spec, f))]
        if not names:
            raise InputFormatError(spec, None, "the directory holds no data files")
    elif any(c in spec for c in "*?[") and not os.path.exists(spec):
        names = sorted(p for p in glob.glob(spec) if os.path.isfile(p))
        if not names:
            raise InputFormatError(spec, None, "no file matches this pattern")
    else:
        names = [spec]
    out = []
    for i, name in enumerate(names):
        if not os.path.isfile(name):
            why = "is a directory" if os.path.isdir(name) else "No such file or directory"
            raise InputFormatError(name, None, f"cannot open: {why}")
        out.append(Spec(i, os.path.abspath(name), name))
    return out


def _read_list(path):
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InputFormatError(path, None, f"cannot read the list file: {getattr(e, 'strerror', None) or e}") from None
    base = os.path.dirname(path)
    names = []
    for line in lines:
        line = line.strip()
        if line and not line.startswith("#"):
            names.append(line if os.path.isabs(line) else os.path.join(base, line))
    if not names:
        raise InputFormatError(path, None, "the list file names no data files")
    return names


def output_name(display):
    """The per-partition prediction file name for ``--output-dir``:
    the partition's base name without a compression suffix, + .predictions."""
    base = os.path.basename(display)
    for suffix in COMPRESSED_SUFFIXES:
        if base.endswith(suffix) and len(base) > len(suffix):
            base = base[:-len(suffix)]
            break
    return base + ".predictions"


def renamed(error, spec):
    """``error`` naming the partition as the user wrote it (not its absolute path)."""
    if isinstance(error, InputFormatError) and error.path == spec.path:
        return InputFormatError(spec.display, error.line, error.problem)
    return error


# ---------------------------------------------------------------- on a worker

_PARTS = {}     # (run_id, index) -> Chunk
STATE = {}      # (run_id, index) -> a solver's per-partition state


def read_partition(spec, threads=None, cache=False, messages=None):
    """Parse one partition with the ordinary reader (or its binary cache when
    ``cache``; cache messages are appended to ``messages``) and check that
    its values cannot overflow."""
    from ..io.reader import read_libsvm
    from ..training.train import check_magnitudes

    def read(path):
        return read_libsvm(path, threads=threads)
    try:
        if cache:
            from ..io.cache import default_cache_path, load_or_build
            say = messages.append if messages is not None else None
            chunk = load_or_build(spec.path, default_cache_path(spec.path), read, log=say)
        else:
            chunk = read(spec.path)
        check_magnitudes(chunk, spec.display)
    except InputFormatError as e:
        raise renamed(e, spec) from None
    return chunk


def partition(run_id, spec, threads=None, cache=False, messages=None):
    """The partition's Chunk from this worker's registry, parsed on a miss."""
    key = (run_id, spec.index)
    chunk = _PARTS.get(key)
    if chunk is None:
        chunk = read_partition(spec, threads, cache, messages)
        _PARTS[key] = chunk
    return chunk


def describe(chunk):
    """What the driver needs of a partition: rows, nonzeros, features and
    its distinct labels in order of first appearance."""
    uniq, first = np.unique(chunk.labels, return_index=True)
    return {"rows": chunk.n_rows, "nnz": chunk.nnz, "n_features": chunk.n_features,
            "labels": uniq[np.argsort(first, kind="stable")]}


def drop(run_id):
    """Forget a run's partitions and states on this worker; returns how many."""
    keys = [k for k in list(_PARTS) + list(STATE) if k[0] == run_id]
    for k in keys:
        _PARTS.pop(k, None)
        STATE.pop(k, None)
    return len(set(keys))
