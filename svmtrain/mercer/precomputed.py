"""LIBSVM's precomputed kernels (``-t 4``): the kernel values are the data.

LIBSVM's format (its README, "Precomputed Kernels"): a training row is
``label 0:ID 1:K(x, x_1) ... L:K(x, x_L)``, ID its serial number (1..L),
its kernel values against all L training rows; a test row lists its
values against the same L training rows after a ``0:`` of any value.
Such files are read with index base 0 (``read_libsvm(..., index_base=0)``:
column c holds the file's index c), and K(x_i, x_j) is row i's column
ID_j (LIBSVM's kernel_precomputed, ``x[i][(int) x[j][0].value].value``).
A model keeps each support vector's ID only (its column 0: LIBSVM's
``0:ID`` lines), and scores a test row from its columns at those IDs.

Checks (LIBSVM exits on the first two, and reads the kernel by position,
so a row with a gap silently reads wrong values there): every row starts
with ``0:`` and holds every index from 0 to its last; a training row's
ID is an integer from 1 to its last index ("sample_serial_number out of
range"); the training kernel is square: every training row has a value
at every training row's ID (rows may list more columns than that, e.g.
against a larger pool); a test row has a value at every support
vector's ID. Each failure is an InputFormatError ``FILE:LINE: problem``.

The training kernel is gathered once into a dense float32 matrix (LIBSVM
keeps its kernel rows as float32 too), the KernelCache's rows (see
:class:`svmtrain.mercer.cache.KernelCache`): every row resident, none
computed again; its diagonal, in float64, is the solver's QD.
"""
import numpy as np

from .._numba import options as _opts
from ..data.dataset import Chunk
from ..errors import InputFormatError
from . import _precomputed_kernels as K

WHAT = "-t 4 (precomputed kernel)"
FORMAT = "0:ID 1:K(x,x1) ... L:K(x,xL)"


def ids_of(chunk):
    """int64[n]: each row's ID, its column 0 (LIBSVM's (int) of the value);
    the rows must start with index 0 (:func:`check_training`)."""
    return chunk.values[chunk.indptr[:-1]].astype(np.int64)


def id_rows(chunk):
    """The rows of ``chunk`` reduced to their column 0 (``0:ID``): a model's support vectors."""
    n = chunk.n_rows
    return Chunk(labels=chunk.labels.copy(), indptr=np.arange(n + 1, dtype=np.int64),
                 indices=np.zeros(n, np.int32), values=chunk.values[chunk.indptr[:-1]].astype(np.float64),
                 qid=np.zeros(n, np.int64))


def check_training(chunk, source=None, row_base=0):
    """InputFormatError naming the first row of ``chunk`` (a training set read
    with index base 0) that is not a precomputed training row, or whose
    kernel values do not reach every training row's ID (module doc).
    ``source`` names the data (its line is found when it is a file)."""
    row, problem, aux = K.check_rows(chunk.indptr, chunk.indices, chunk.values, True, 0)
    if row >= 0:
        raise _error(chunk, source, row, row_base, problem, aux, None)


def check_test(chunk, need, source=None, row_base=0):
    """InputFormatError naming the first row of ``chunk`` (read with index
    base 0) that is not a precomputed row with a value at every ID up to
    ``need`` (the model's largest support-vector ID)."""
    row, problem, aux = K.check_rows(chunk.indptr, chunk.indices, chunk.values, False, int(need))
    if row >= 0:
        raise _error(chunk, source, row, row_base, problem, aux, int(need))


def of_model(model):
    """Whether ``model`` is a kernel expansion over a precomputed kernel (-t 4)."""
    kernel = getattr(model, "kernel", None)
    return kernel is not None and getattr(kernel, "code", None) == 4


def index_base(model):
    """The index base to read data for ``model`` with: 0 for a precomputed kernel, else 1."""
    return 0 if of_model(model) else 1


def model_need(model):
    """The largest support-vector ID of a precomputed model (0 without support vectors)."""
    SV = model.SV
    return int(_max_id(SV)) if SV.n_rows else 0


def checked_chunks(chunks, need, source):
    """The chunks of a test file, each checked by :func:`check_test` as it comes."""
    rows = 0
    for chunk in chunks:
        check_test(chunk, need, source, rows)
        rows += chunk.n_rows
        yield chunk


def _error(chunk, source, row, row_base, problem, aux, need):
    """The InputFormatError of ``problem`` in row ``row`` of ``chunk``."""
    lo = int(chunk.indptr[row])
    if problem == K.NO_ID:
        text = (f"{WHAT}: the row does not start with 0:ID (LIBSVM's 'first column must be "
                f"0:sample_serial_number'); a row is {FORMAT}")
    elif problem == K.GAP:
        text = (f"{WHAT}: the row has no index {aux}: a row lists every index, {FORMAT}, "
                "as LIBSVM reads the kernel values by position")
    elif problem == K.BAD_ID:
        text = (f"{WHAT}: sample serial number {chunk.values[lo]:.17g} out of range: a training row's "
                f"ID is an integer 1..{aux} (its serial number, 1..L)")
    elif need is None:
        text = (f"{WHAT}: the training kernel is not square: this row's kernel values stop at index {aux}, "
                f"but a training row has ID {int(_max_id(chunk))} (every training row lists its values "
                "against all training rows)")
    else:
        text = (f"{WHAT}: the row's kernel values stop at index {aux}, but the model has a support vector "
                f"with ID {need} (a test row lists its values against all L training rows)")
    name = source if source is not None else "<data>"
    line = row_line(source, chunk.first_line, row)
    if line is None:
        text = f"data row {row_base + row + 1}: {text}"
    return InputFormatError(name, line, text)


def _max_id(chunk):
    return chunk.values[chunk.indptr[:-1]].max()


def row_line(source, first_line, row):
    """The line of data row ``row`` of a chunk whose first row is on line
    ``first_line`` of the file ``source`` (counting the lines that are not
    blank or a comment), or None when ``source`` cannot be read again
    (standard input, not a file). For error messages only: reads the file
    up to that line."""
    from ..io.reader import STDIN_NAME, open_source
    if source is None or source == STDIN_NAME:
        return None
    try:
        f = open_source(source)
    except Exception:
        return None
    with f:
        seen = -1
        for number, text in enumerate(f, start=1):
            if number < first_line:
                continue
            body = text.strip()
            if body and not body.startswith(b"#"):
                seen += 1
                if seen == row:
                    return number
    return None


def training_matrix(chunk):
    """(float32[n, n] M with M[j, i] = K(x_j, x_i) = row j's column ID_i,
    float64[n] its diagonal K(x_i, x_i)) of a checked training set: the
    kernel rows LIBSVM's solver reads, and its QD."""
    n = chunk.n_rows
    ids = ids_of(chunk)
    M = np.empty((n, n), np.float32)
    if n:
        _gather(chunk.indptr, chunk.values, np.arange(n, dtype=np.int64), ids, M)
    diag = chunk.values[chunk.indptr[:-1] + ids] if n else np.zeros(0)
    return M, diag


def kernel_block(X, Y, rows=None, out=None):
    """float64[X.n_rows, len(rows)]: K(X_i, Y_rows[c]) = row i of X at column
    ID(Y_rows[c]) (``rows`` default: every row of Y; Y's rows start with
    ``0:ID``). X's rows must hold those columns densely (checked for
    length: InputFormatError without a line otherwise)."""
    rows = np.arange(Y.n_rows, dtype=np.int64) if rows is None else np.asarray(rows, np.int64)
    starts = Y.indptr[rows]
    if len(rows) and (np.any(Y.indptr[rows + 1] == starts) or np.any(Y.indices[np.minimum(starts, Y.nnz - 1)] != 0)):
        raise InputFormatError("<model>", None, f"{WHAT}: a support vector without its 0:ID")
    ids = Y.values[starts].astype(np.int64) if len(rows) else np.zeros(0, np.int64)
    if out is None:
        out = np.empty((X.n_rows, len(rows)))
    if X.n_rows == 0 or len(rows) == 0:
        return out
    need = int(ids.max())
    short = np.flatnonzero(np.diff(X.indptr) - 1 < need)
    if len(short) or ids.min() < 0:
        raise InputFormatError("<data>", None, f"data row {int(short[0]) + 1 if len(short) else 1}: {WHAT}: "
                               f"no kernel value at index {need} (a row lists {FORMAT})")
    return _gather(X.indptr, X.values, np.arange(X.n_rows, dtype=np.int64), ids, out)


def _gather(indptr, values, rows, ids, out):
    """K.gather, in parallel from PARALLEL_MIN_WORK entries on (the same numbers either way)."""
    parallel = len(rows) * len(ids) >= _opts.PARALLEL_MIN_WORK
    return (K.gather if parallel else K.gather_serial)(indptr, values, rows, ids, out)
