"""svmtrain's model file format (text, versioned), for every kind of model.

Layout::

    svmtrain-model 1            format and version
    kind linear                 which model class reads the rest
    solver pegasos              informational header: parameters as used,
    ...                         objective, iterations (kept as text)
    labels 1.0 -1.0             kind-specific fields the model is built from
    n_features 123
    ...
    dense W 123 1               a dense section: name, rows, columns,
    <123 lines of 1 float>      then one line per row
    csr SV 2                    a sparse section: name, rows, then one
    <2 lines of idx:val ...>    line per row of 1-based idx:val pairs
    end

A model of ``svm-train --scale`` adds, for any kind, the header lines
``scale_lower L`` and ``scale_upper U`` and a section ``dense SCALE k 3``:
one line ``INDEX MIN MAX`` per scaled feature (svm-scale's range file);
``load_model`` gives it back as ``model.scaling`` (a
:class:`svmtrain.preprocess.scaling.Ranges`), which scores apply to every row.

Floats are written with ``repr`` and so read back bit for bit. Each model
class (``svmtrain.models.linear.LinearModel`` and later kinds) provides
``file_fields()``, ``file_sections()`` and ``from_file(...)``; this module
knows only the layout.

``load_model`` also reads the model files of three other programs, told
apart by their first line:

* ``solver_type ...``: LIBLINEAR (``svmtrain.io.liblinear_format``), a
  LinearModel;
* ``svm_type ...``: LIBSVM (``svmtrain.io.libsvm_format``), a KernelModel;
* ``SVM-light Version ...``: SVMlight's svm_learn, V5.x and V6.x
  (``svmtrain.io.svmlight_format``), a binary LinearModel (linear kernel)
  or KernelModel with labels [1, -1].

Any other first line is refused, naming the formats ``load_model`` reads.
"""
import dataclasses
import importlib

import numpy as np

from ..data.dataset import Chunk
from ..errors import ModelFormatError
from ..params import TrainParams
from .atomic import atomic_write

MAGIC = "svmtrain-model"
VERSION = 1
# every format load_model reads, for its refusal of other files
FORMATS = "svmtrain, LIBLINEAR, LIBSVM or SVMlight"
# kind -> "module:Class"; imported only when a file of that kind is read
KINDS = {
    "linear": "svmtrain.models.linear:LinearModel",
    "kernel": "svmtrain.models.kernel:KernelModel",
    "fourier": "svmtrain.models.fourier:FourierModel",
}
# informational keys any model may carry: every training parameter, and results
# (a model class may add its own in INFO_KEYS)
INFORMATIONAL = tuple(f.name for f in dataclasses.fields(TrainParams)) + (
    "lambda_used", "C_used", "n_train", "objective", "n_iter", "converged", "train_time",
    "stream", "memory_limit", "stream_blocks", "shuffle_buffer",      # --stream runs
    "prob_A", "prob_B", "laplace_sigma",                               # -b 1: Platt's sigmoids, SVR's sigma
)
SCALING_KEYS = ("scale_lower", "scale_upper")                          # --scale (with the SCALE section)


def register_kind(kind, target):
    """Make ``load_model`` read files of ``kind`` with ``target`` ("module:Class")."""
    KINDS[kind] = target


def format_value(v):
    """One header value as text: floats round-trip, None is 'none', lists space-separated."""
    if v is None:
        return "none"
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    if isinstance(v, (list, tuple, np.ndarray)):
        return " ".join(format_value(x) for x in (v.tolist() if isinstance(v, np.ndarray) else v))
    return str(v)


def save_model(model, path):
    """Write ``model`` to ``path`` atomically (the old file survives any failure)."""
    fields = model.file_fields()
    own = {k for k, _ in fields}
    lines = [f"{MAGIC} {VERSION}", f"kind {model.KIND}"]
    lines += [f"{k} {format_value(v)}" for k, v in model.header if k not in own and k != "kind"]
    lines += [f"{k} {format_value(v)}" for k, v in fields]
    sections = list(model.file_sections())
    scaling = getattr(model, "scaling", None)
    if scaling is not None:
        lines += [f"scale_lower {format_value(scaling.lower)}", f"scale_upper {format_value(scaling.upper)}"]
        sections.append(("SCALE", np.column_stack([scaling.index.astype(np.float64), scaling.feature_min,
                                                    scaling.feature_max]).reshape(-1, 3)))
    with atomic_write(path) as f:
        f.write("\n".join(lines) + "\n")
        for name, data in sections:
            if isinstance(data, Chunk):
                _write_csr(f, name, data)
            else:
                _write_dense(f, name, np.asarray(data, np.float64))
        f.write("end\n")


# dense sections larger than this are written with C's "%.17g" (numba, about
# 20x faster than Python's repr; exact too, but not the shortest digits)
FAST_DENSE_VALUES = 1 << 20


def _write_dense(f, name, a):
    if a.ndim == 1:
        a = a.reshape(-1, 1)
    rows, cols = a.shape
    f.write(f"dense {name} {rows} {cols}\n")
    # a block of rows at a time: a whole large matrix as Python floats and
    # one string would take ~60 bytes per entry (a streamed Fourier model's
    # Omega); one row at a time is slow for a tall weight vector
    step = max(1, (1 << 16) // max(cols, 1))
    fast = a.size > FAST_DENSE_VALUES
    for lo in range(0, rows if a.size else 0, step):
        if fast:
            f.write(dense_text(np.ascontiguousarray(a[lo:lo + step], np.float64)))
            continue
        vals = list(map(repr, a[lo:lo + step].ravel().tolist()))
        lines = vals if cols == 1 else [" ".join(vals[k:k + cols]) for k in range(0, len(vals), cols)]
        f.write("\n".join(lines) + "\n")


def dense_text(block):
    """The rows of ``block`` (2-D float64) as text, "%.17g" values separated
    by spaces, a newline after each row; the few values the numba formatter
    leaves out (|x| < about 1e-11 or >= 1.8e19) written by Python's repr."""
    from .._numba._gformat_kernels import format_block
    buf, at, of = format_block(block, 17)
    if len(at) == 0:
        return buf.tobytes().decode("ascii")
    flat = block.ravel()
    parts, prev = [], 0
    for p, i in zip(at.tolist(), of.tolist()):
        parts += [buf[prev:p].tobytes().decode("ascii"), repr(float(flat[i]))]
        prev = p
    parts.append(buf[prev:].tobytes().decode("ascii"))
    return "".join(parts)


def _write_csr(f, name, c):
    f.write(f"csr {name} {c.n_rows}\n")
    idx = (c.indices.astype(np.int64) + 1).tolist()
    vals = list(map(repr, c.values.tolist()))
    pairs = [f"{i}:{v}" for i, v in zip(idx, vals)]
    bounds = c.indptr.tolist()
    if c.n_rows:
        f.write("\n".join(" ".join(pairs[lo:hi]) for lo, hi in zip(bounds[:-1], bounds[1:])))
        f.write("\n")


def load_model(path):
    """Read a model file in svmtrain's, LIBLINEAR's, LIBSVM's or SVMlight's format
    (chosen by its first line). Any problem raises ModelFormatError naming
    the file and, where one applies, the line."""
    try:
        with open(path, "r", encoding="utf-8", errors="strict") as f:
            first = f.readline()
            if first.startswith("solver_type"):
                from .liblinear_format import read_liblinear_model
                return read_liblinear_model(path)
            if first.startswith("svm_type"):
                from .libsvm_format import read_libsvm_model
                return read_libsvm_model(path)
            if first.startswith("SVM-light Version"):
                from .svmlight_format import read_svmlight_model
                return read_svmlight_model(path)
            return _read_svmtrain(path, first, f)
    except UnicodeDecodeError:
        raise ModelFormatError(path, None, "not a model file (binary content)") from None
    except IsADirectoryError:
        raise ModelFormatError(path, None, "cannot open model: is a directory") from None
    except OSError as e:
        raise ModelFormatError(path, None, f"cannot open model: {e.strerror or e}") from None


class FieldReader:
    """The kind-specific header fields of a model file, with checked conversions."""

    def __init__(self, path, fields):
        self.path = path
        self.fields = fields            # key -> (line number, text)

    def text(self, key):
        if key not in self.fields:
            raise ModelFormatError(self.path, None, f"header key {key!r} missing")
        return self.fields[key]

    def floats(self, key, count=None):
        line, text = self.text(key)
        try:
            out = np.array([float(t) for t in text.split()])
        except ValueError:
            raise ModelFormatError(self.path, line, f"bad number in {key}: {text[:40]!r}") from None
        if count is not None and len(out) != count:
            raise ModelFormatError(self.path, line, f"{key} needs {count} values, found {len(out)}")
        if not np.all(np.isfinite(out)):
            raise ModelFormatError(self.path, line, f"{key} must be finite")
        return out

    def int(self, key, minimum=0):
        line, text = self.text(key)
        try:
            v = int(text)
        except ValueError:
            raise ModelFormatError(self.path, line, f"{key} must be an integer (got {text[:40]!r})") from None
        if v < minimum:
            raise ModelFormatError(self.path, line, f"{key} must be >= {minimum} (got {v})")
        return v

    def fail(self, key, problem):
        raise ModelFormatError(self.path, self.fields.get(key, (None,))[0], problem)


def _model_class(path, line, kind):
    if kind not in KINDS:
        raise ModelFormatError(path, line, f"unknown model kind {kind!r}")
    module, _, name = KINDS[kind].partition(":")
    return getattr(importlib.import_module(module), name)


def _read_svmtrain(path, first, f):
    parts = first.split()
    if len(parts) != 2 or parts[0] != MAGIC:
        raise ModelFormatError(path, 1, f"not a model file in {FORMATS} format "
                               f"(first line {first.strip()[:40]!r})")
    try:
        version = int(parts[1])
    except ValueError:
        raise ModelFormatError(path, 1, f"bad format version {parts[1]!r}") from None
    if version > VERSION:
        raise ModelFormatError(path, 1, f"model format version {version} is newer than this svmtrain "
                               f"(reads up to {VERSION}); upgrade svmtrain")
    if version < 1:
        raise ModelFormatError(path, 1, f"bad format version {version}")
    lines = f.read().replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    pos = 0
    if not lines or not lines[0].startswith("kind "):
        raise ModelFormatError(path, 2, "expected 'kind KIND' on line 2")
    cls = _model_class(path, 2, lines[0][5:].strip())
    own = set(cls.FIELDS)
    fields, header = {}, []
    pos = 1
    while pos < len(lines) and not lines[pos].startswith(("dense ", "csr ")) and lines[pos] != "end":
        key, _, value = lines[pos].partition(" ")
        if key in own or key in SCALING_KEYS:
            fields[key] = (pos + 2, value)
        elif key in INFORMATIONAL or key in getattr(cls, "INFO_KEYS", ()):
            header.append((key, value))
        else:
            raise ModelFormatError(path, pos + 2, f"unknown header key {key!r}")
        pos += 1
    for key in cls.FIELDS:
        if key not in fields:
            raise ModelFormatError(path, pos + 2, f"truncated or damaged model: header key {key!r} missing")
    sections = {}
    while True:
        if pos >= len(lines):
            raise ModelFormatError(path, pos + 1, "truncated model: missing 'end'")
        head = lines[pos]
        if head == "end":
            if pos + 1 != len(lines):
                raise ModelFormatError(path, pos + 3, "unexpected text after 'end'")
            break
        name, rows, pos = _section(path, lines, pos)
        sections[name] = rows
    scaling = _scaling_of(path, fields, sections)
    model = cls.from_file(FieldReader(path, fields), sections, header, path)
    model.scaling = scaling
    return model


def _scaling_of(path, fields, sections):
    """The Ranges of a --scale model (removing its fields and section), or None."""
    given = [k for k in SCALING_KEYS if k in fields]
    if not given and "SCALE" not in sections:
        return None
    if len(given) != 2 or "SCALE" not in sections:
        raise ModelFormatError(path, None, "a --scale model needs scale_lower, scale_upper and a SCALE section")
    reader = FieldReader(path, {k: fields.pop(k) for k in SCALING_KEYS})
    lower, upper = reader.floats("scale_lower", 1)[0], reader.floats("scale_upper", 1)[0]
    table = sections.pop("SCALE")
    index = table[:, 0] if table.ndim == 2 and table.shape[1] == 3 else None
    if index is None or np.any(index < 1) or np.any(index != np.floor(index)):
        raise ModelFormatError(path, None, "section SCALE: one 'INDEX MIN MAX' line per feature, INDEX >= 1")
    from ..preprocess.scaling import Ranges
    return Ranges(float(lower), float(upper), table[:, 0].astype(np.int64), table[:, 1].copy(), table[:, 2].copy())


def _section(path, lines, pos):
    """Parse the section starting at lines[pos]; returns (name, data, next pos)."""
    lineno = pos + 2
    parts = lines[pos].split()
    try:
        if parts[0] == "dense" and len(parts) == 4:
            name, n_rows, n_cols = parts[1], int(parts[2]), int(parts[3])
        elif parts[0] == "csr" and len(parts) == 3:
            name, n_rows, n_cols = parts[1], int(parts[2]), None
        else:
            raise ValueError
        if n_rows < 0 or (n_cols is not None and n_cols < 0):
            raise ValueError
    except (ValueError, IndexError):
        raise ModelFormatError(path, lineno, f"bad section line {lines[pos][:40]!r}") from None
    body = lines[pos + 1:pos + 1 + n_rows]
    stop = next((k for k, line in enumerate(body) if line == "end" or line.startswith(("dense ", "csr "))), None)
    if len(body) < n_rows or stop is not None:
        got = len(body) if stop is None else stop
        raise ModelFormatError(path, lineno + got + 1, f"truncated model: section {name} has {got} of {n_rows} rows")
    if n_cols is None:
        return name, _parse_csr(path, lineno + 1, body), pos + 1 + n_rows
    try:
        a = np.array(" ".join(body).split(), dtype=np.float64)
    except ValueError:
        raise ModelFormatError(path, lineno + 1, f"bad number in section {name}") from None
    if a.size != n_rows * n_cols:
        raise ModelFormatError(path, lineno + 1, f"section {name}: expected {n_rows} x {n_cols} numbers, found {a.size}")
    if not np.all(np.isfinite(a)):
        raise ModelFormatError(path, lineno + 1, f"section {name}: numbers must be finite")
    return name, a.reshape(n_rows, n_cols), pos + 1 + n_rows


def _parse_csr(path, first_line, body):
    counts = np.char.count(np.array(body, dtype=str), ":") if body else np.zeros(0, np.int64)
    tokens = " ".join(body).split()
    if len(tokens) != int(counts.sum()):
        raise ModelFormatError(path, first_line, "bad sparse row (expected idx:val pairs)")
    try:
        parts = np.char.partition(np.array(tokens, dtype=str), ":") if tokens else np.empty((0, 3), str)
        idx = parts[:, 0].astype(np.int64) - 1
        vals = parts[:, 2].astype(np.float64)
    except ValueError:
        raise ModelFormatError(path, first_line, "bad number in a sparse row") from None
    if len(idx) and (idx.min() < 0 or idx.max() >= 2**31 - 1 or not np.all(np.isfinite(vals))):
        raise ModelFormatError(path, first_line, "bad index or value in a sparse row")
    indptr = np.zeros(len(body) + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    return Chunk(labels=np.zeros(len(body)), indptr=indptr, indices=idx.astype(np.int32), values=vals,
                 qid=np.zeros(len(body), np.int64))
