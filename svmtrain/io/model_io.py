"""svmtrain's model file format (text, versioned), and format detection.

Layout (one item per line, ``key value`` headers, then the weights)::

    svmtrain-model 1
    kind linear
    solver pegasos
    ...                    every training parameter, the objective, the time
    labels 1 -1
    n_features 123
    n_models 1
    bias -1
    b 0.0
    W
    <n_features (+1 when bias >= 0) lines of n_models floats>
    end

Floats are written with ``repr`` and so read back bit for bit. A file
whose first line is ``solver_type ...`` is a LIBLINEAR model and is read
by ``svmtrain.io.liblinear_format``.
"""
import numpy as np

from ..errors import ModelFormatError
from ..model import LinearModel
from .atomic import atomic_write

MAGIC = "svmtrain-model"
VERSION = 1
# keys every version-1 linear model has, parsed into the model
REQUIRED = ("kind", "labels", "n_features", "n_models", "bias", "b")
# keys written for people and provenance; kept as text in model.header
INFORMATIONAL = (
    "solver", "lam", "C", "unreg_bias", "eps", "epochs", "batch_size", "seed", "average",
    "loss", "class_weights", "max_iter", "threads", "max_time", "cut_buffer", "ocas_method",
    "lambda_used", "C_used", "n_train", "objective", "n_iter", "converged", "train_time",
)


def format_value(v):
    """One header value as text: floats round-trip, None is 'none'."""
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (list, tuple, np.ndarray)):
        return " ".join(format_value(float(x) if isinstance(x, (float, np.floating)) else x) for x in v)
    return str(v)


def save_model(model, path):
    """Write ``model`` to ``path`` atomically (the old file survives any failure)."""
    lines = [f"{MAGIC} {VERSION}", "kind linear"]
    for key, value in model.header:
        if key in REQUIRED:
            continue
        lines.append(f"{key} {format_value(value)}")
    lines += [
        f"labels {format_value([float(x) for x in model.labels])}",
        f"n_features {model.n_features}",
        f"n_models {model.n_models}",
        f"bias {format_value(float(model.bias))}",
        f"b {format_value([float(x) for x in model.b])}",
        "W",
    ]
    body = "\n".join(" ".join(map(repr, row)) for row in model.W.tolist())
    with atomic_write(path) as f:
        f.write("\n".join(lines))
        f.write("\n")
        if body:
            f.write(body)
            f.write("\n")
        f.write("end\n")


def _float_list(path, lineno, text, what):
    try:
        return [float(t) for t in text.split()]
    except ValueError:
        raise ModelFormatError(path, lineno, f"bad number in {what}: {text.strip()[:40]!r}") from None


def load_model(path):
    """Read an svmtrain or LIBLINEAR model file; ModelFormatError names file and line."""
    try:
        with open(path, "r", encoding="utf-8", errors="strict") as f:
            first = f.readline()
            if first.startswith("solver_type"):
                from .liblinear_format import read_liblinear_model
                return read_liblinear_model(path)
            return _read_svmtrain(path, first, f)
    except UnicodeDecodeError:
        raise ModelFormatError(path, None, "not a model file (binary content)") from None
    except IsADirectoryError:
        raise ModelFormatError(path, None, "cannot open model: is a directory") from None
    except OSError as e:
        raise ModelFormatError(path, None, f"cannot open model: {e.strerror or e}") from None


def _read_svmtrain(path, first, f):
    parts = first.split()
    if len(parts) != 2 or parts[0] != MAGIC:
        raise ModelFormatError(path, 1, f"not an svmtrain or LIBLINEAR model file (first line {first.strip()[:40]!r})")
    try:
        version = int(parts[1])
    except ValueError:
        raise ModelFormatError(path, 1, f"bad format version {parts[1]!r}") from None
    if version > VERSION:
        raise ModelFormatError(path, 1, f"model format version {version} is newer than this svmtrain "
                               f"(reads up to {VERSION}); upgrade svmtrain")
    if version < 1:
        raise ModelFormatError(path, 1, f"bad format version {version}")
    fields = {}
    header = []
    lineno = 1
    for line in f:
        lineno += 1
        line = line.rstrip("\n")
        if line == "W":
            break
        key, _, value = line.partition(" ")
        if key in REQUIRED:
            fields[key] = (lineno, value)
        elif key in INFORMATIONAL:
            header.append((key, value))
        else:
            raise ModelFormatError(path, lineno, f"unknown header key {key!r}")
    else:
        raise ModelFormatError(path, lineno, "truncated model: no weight section 'W'")
    for key in REQUIRED:
        if key not in fields:
            raise ModelFormatError(path, lineno, f"header key {key!r} missing")
    if fields["kind"][1] != "linear":
        raise ModelFormatError(path, fields["kind"][0], f"unknown model kind {fields['kind'][1]!r}")
    labels = _float_list(path, fields["labels"][0], fields["labels"][1], "labels")
    try:
        n_features = int(fields["n_features"][1])
        n_models = int(fields["n_models"][1])
    except ValueError:
        raise ModelFormatError(path, fields["n_features"][0], "n_features and n_models must be integers") from None
    bias = _float_list(path, fields["bias"][0], fields["bias"][1], "bias")
    b = _float_list(path, fields["b"][0], fields["b"][1], "b")
    if len(bias) != 1 or len(b) != n_models or n_models < 1 or n_features < 0 or not labels:
        raise ModelFormatError(path, fields["b"][0], "inconsistent header (bias, b, n_models, labels)")
    expected = 1 if len(labels) <= 2 else len(labels)
    if n_models != expected:
        raise ModelFormatError(path, fields["n_models"][0], f"{len(labels)} labels need {expected} weight columns, "
                               f"header says {n_models}")
    n_rows = n_features + (1 if bias[0] >= 0 else 0)
    start = lineno  # the 'W' line
    lines = f.read().replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    try:
        end = lines.index("end")
    except ValueError:
        raise ModelFormatError(path, start + len(lines), "truncated model: missing 'end'") from None
    if end != n_rows:
        what = "truncated model" if end < n_rows else "more weight rows than the header declares"
        raise ModelFormatError(path, start + end + 1, f"{what}: {end} of {n_rows} weight rows")
    if end + 1 != len(lines):
        raise ModelFormatError(path, start + end + 2, "unexpected text after 'end'")
    try:
        W = np.array(" ".join(lines[:end]).split(), dtype=np.float64)
    except ValueError:
        raise ModelFormatError(path, start + 1, "bad number in the weight rows") from None
    if W.size != n_rows * n_models:
        raise ModelFormatError(path, start + 1, f"expected {n_rows} x {n_models} weights, found {W.size}")
    if not np.all(np.isfinite(W)):
        raise ModelFormatError(path, start + 1, "weights must be finite")
    return LinearModel(labels=np.array(labels), W=W.reshape(n_rows, n_models), n_features=n_features,
                       bias=bias[0], b=np.array(b), solver=dict(header).get("solver", ""), header=header)
