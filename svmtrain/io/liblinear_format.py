"""LIBLINEAR model files: read them as LinearModel, write LinearModel as them.

The format (LIBLINEAR's ``save_model``) is a few ``key value`` lines, then
``w`` and one line per weight row::

    solver_type L2R_L1LOSS_SVC_DUAL
    nr_class 2
    label 1 -1
    nr_feature 123
    bias -1
    w
    -0.83348875753096863
    ...

There are ``nr_feature`` rows, plus one for the bias feature when
``bias >= 0``, each with ``nr_w`` numbers: ``nr_w = 1`` for two classes
(the column scores ``label[0]``: decision > 0 predicts ``label[0]``), except
MCSVM_CS, which always has ``nr_class`` columns (argmax). With more than two
classes there are ``nr_class`` one-vs-rest columns (argmax, first wins on a
tie). Labels are integers. One-class models (ONECLASS_SVM) have no
``label`` line and a ``rho`` line; their decision value is w.x - rho,
+1 when positive, else -1.

Interop rules implemented here:

* Reading: every classification and regression (SVR) solver_type is
  accepted; a regression model (no ``label`` line) becomes a LinearModel
  with ``task = "r"``; a one-class model (ONECLASS_SVM) a LinearModel
  with ``task = "o"``, labels (1, -1) and b = -rho. A two-class MCSVM_CS model keeps
  only its first column: LIBLINEAR predicts every two-class model by
  ``w[:,0].x > 0 -> label[0]`` and never looks at the second column, so
  that column alone is the equivalent binary model. A model of one label
  (``nr_class 1``, which LIBLINEAR writes when the training data has a
  single label) always predicts that label; it is read as a binary model
  whose two labels are equal.
* Writing: the LinearModel's columns are written as they are; solver_type
  is kept when the model was read from a LIBLINEAR file (and is not
  MCSVM_CS), MCSVM_CS for a Crammer-Singer model (header ``multiclass
  cs``; two classes get the columns w and -w), L1R_L2LOSS_SVC and L1R_LR
  for the L1-regularised models (header ``penalty l1``, ``-s cdn``: the
  squared hinge and the logistic loss), else L2R_L2LOSS_SVC_DUAL for a squared-hinge model (header
  ``loss``), L2R_LR_DUAL for a logistic one and L2R_L1LOSS_SVC_DUAL
  otherwise (the type only matters to
  LIBLINEAR for MCSVM_CS layout and -b 1 of logistic models). An
  unregularised bias ``b`` (-R) is folded into LIBLINEAR's bias feature:
  without -B the file gets ``bias 1`` and a last row equal to ``b``; with
  ``-B B > 0`` the last row becomes ``w_last + b / B``; with ``-B 0`` the
  bias value becomes 1 and the last row ``b``. A regression model is
  written as L2R_L1LOSS_SVR_DUAL (epsilon-insensitive loss) or
  L2R_L2LOSS_SVR_DUAL (squared), or its own type when read from a
  LIBLINEAR file, with ``nr_class 2`` and no label line, as LIBLINEAR
  writes it; a one-class model as ONECLASS_SVM with its ``rho``. Numbers are written with
  ``repr`` (shortest round-trip form, which LIBLINEAR's ``%lf`` reads back
  exactly).
"""
import math
import os
import re

import numpy as np

from ..errors import ModelFormatError, ParameterError
from ..models.linear import LinearModel
from .atomic import atomic_write

CLASSIFICATION_TYPES = (
    "L2R_LR", "L2R_L2LOSS_SVC_DUAL", "L2R_L2LOSS_SVC", "L2R_L1LOSS_SVC_DUAL",
    "MCSVM_CS", "L1R_L2LOSS_SVC", "L1R_LR", "L2R_LR_DUAL",
)
REGRESSION_TYPES = ("L2R_L2LOSS_SVR", "L2R_L2LOSS_SVR_DUAL", "L2R_L1LOSS_SVR_DUAL")
ONE_CLASS_TYPE = "ONECLASS_SVM"
HEADER_KEY = "liblinear_solver_type"
LOGISTIC_TYPES = ("L2R_LR", "L2R_LR_DUAL", "L1R_LR")    # the types whose models give probabilities
L1_TYPES = {"squared-hinge": "L1R_L2LOSS_SVC", "log": "L1R_LR"}     # the L1-regularised models' types, by loss

_INT = re.compile(r"[+-]?\d+\Z")
# what C's strtod accepts for a finite decimal number (no '_', no hex, no inf/nan)
_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")


def is_liblinear_model(path):
    """True when the file's first line is ``solver_type NAME`` (LIBLINEAR's format)."""
    try:
        with open(path, "rb") as f:
            first = f.readline(256)
    except OSError:
        return False
    parts = first.split()
    return len(parts) == 2 and parts[0] == b"solver_type"


def _parse_float(tok, path, line, what):
    if not _FLOAT.match(tok):
        raise ModelFormatError(path, line, f"bad number '{tok}' in {what}")
    return float(tok)


def _parse_int(tok, path, line, what):
    if not _INT.match(tok):
        raise ModelFormatError(path, line, f"bad integer '{tok}' in {what}")
    return int(tok)


def read_liblinear_model(path):
    """Read a LIBLINEAR classification or regression model file as a LinearModel."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    head, w_line = _read_header(path, lines)
    st = head["solver_type"][0] if "solver_type" in head else None
    regression = st in REGRESSION_TYPES
    one_class = st == ONE_CLASS_TYPE
    needed = ("solver_type", "nr_class", "nr_feature", "bias") + (
        ("rho",) if one_class else () if regression else ("label",))
    for key in needed:
        if key not in head:
            raise ModelFormatError(path, w_line, f"missing '{key}' before 'w'")
    if one_class or regression:
        return _single_column_model(path, lines, w_line, head, "o" if one_class else "r")
    return _classifier_model(path, lines, w_line, head)


def _read_header(path, lines):
    """(head {key: (value, line)}, line of 'w'): every line before 'w' valid, solver_type first; else raises."""
    head = {}
    for k, raw in enumerate(lines):
        lineno = k + 1
        try:
            text = raw.decode("ascii").strip()
        except UnicodeDecodeError:
            raise ModelFormatError(path, lineno, "not a text line (non-ASCII bytes)") from None
        if not text:
            continue
        toks = text.split()
        key, args = toks[0], toks[1:]
        if key == "w":
            if args:
                raise ModelFormatError(path, lineno, "unexpected text after 'w'")
            return head, lineno
        if key in head:
            raise ModelFormatError(path, lineno, f"duplicate key '{key}'")
        if k == 0 and key != "solver_type":
            raise ModelFormatError(path, lineno, "not a LIBLINEAR model file (expected 'solver_type' first)")
        head[key] = (_header_value(path, lineno, key, args), lineno)
    n_lines = len(lines) - (1 if lines and not lines[-1] else 0)
    raise ModelFormatError(path, max(n_lines, 1), "truncated: no 'w' line")


def _header_value(path, lineno, key, args):
    """The parsed, range-checked value of the header line ``key args``; ModelFormatError when bad or unknown."""
    if key == "solver_type":
        if len(args) != 1:
            raise ModelFormatError(path, lineno, "solver_type takes one name")
        st = args[0]
        if st not in CLASSIFICATION_TYPES + REGRESSION_TYPES + (ONE_CLASS_TYPE,):
            raise ModelFormatError(path, lineno, f"unknown solver_type '{st}'")
        return st
    if key in ("nr_class", "nr_feature"):
        if len(args) != 1:
            raise ModelFormatError(path, lineno, f"{key} takes one integer")
        v = _parse_int(args[0], path, lineno, key)
        if v < (1 if key == "nr_class" else 0):
            raise ModelFormatError(path, lineno, f"{key} out of range ({v})")
        return v
    if key == "label":
        return [_parse_int(a, path, lineno, "label") for a in args]
    if key in ("bias", "rho"):
        if len(args) != 1:
            raise ModelFormatError(path, lineno, f"{key} takes one number")
        return _parse_float(args[0], path, lineno, key)
    raise ModelFormatError(path, lineno, f"unknown key '{key}' in model header")


def _single_column_model(path, lines, w_line, head, task):
    """The regression (task r) or one-class (task o, b = -rho) LinearModel of one weight column."""
    st, nr_feature, bias = head["solver_type"][0], head["nr_feature"][0], head["bias"][0]
    W = _parse_w(path, lines, w_line, nr_feature + (1 if bias >= 0 else 0), 1)
    header = [(HEADER_KEY, st), ("source", "liblinear"), ("task", task)]
    labels, b = ([1.0, -1.0], [-head["rho"][0]]) if task == "o" else (np.empty(0), None)
    return LinearModel(labels=labels, W=W, n_features=nr_feature, bias=bias, b=b,
                       solver="liblinear:" + st, header=header, task=task)


def _classifier_model(path, lines, w_line, head):
    """The classifier's LinearModel: labels checked against nr_class, LIBLINEAR's column layout read."""
    st, nr_class, nr_feature = head["solver_type"][0], head["nr_class"][0], head["nr_feature"][0]
    labels, label_line = head["label"]
    bias = head["bias"][0]
    if len(labels) != nr_class:
        raise ModelFormatError(path, label_line, f"{len(labels)} labels for nr_class {nr_class}")
    if len(set(labels)) != len(labels):
        raise ModelFormatError(path, label_line, "repeated label")
    nr_w = 1 if (nr_class == 2 and st != "MCSVM_CS") else nr_class
    w_size = nr_feature + (1 if bias >= 0 else 0)
    W = _parse_w(path, lines, w_line, w_size, nr_w)

    labels = np.asarray(labels, np.float64)
    if st == "MCSVM_CS" and nr_class == 2:
        # LIBLINEAR predicts any two-class model by the sign of column 0 alone
        W = W[:, :1].copy()
    elif nr_class == 1:
        labels = np.array([labels[0], labels[0]], np.float64)
    header = [(HEADER_KEY, st), ("source", "liblinear")] + ([("loss", "log")] if st in LOGISTIC_TYPES else [])
    return LinearModel(labels=labels, W=W, n_features=nr_feature, bias=bias,
                       solver="liblinear:" + st, header=header)


def _parse_w(path, lines, w_line, w_size, nr_w):
    """The float64[w_size, nr_w] block after line ``w_line`` (1-based)."""
    body = lines[w_line:]
    while body and not body[-1].strip():
        body.pop()
    # the fast path: every row has nr_w plain numbers
    ok = len(body) == w_size
    if ok:
        counts = np.fromiter((len(r.split()) for r in body), np.int64, len(body))
        ok = bool(np.all(counts == nr_w))
    if ok:
        joined = b" ".join(body)
        ok = not joined.translate(None, b"0123456789+-.eE \t\r")   # only number characters
    if ok:
        try:
            W = np.array(joined.split(), dtype=np.float64).reshape(w_size, nr_w)
            ok = bool(np.all(np.isfinite(W)))
        except ValueError:
            ok = False
    if ok:
        return W
    # the slow path: find the first bad line for the message
    W = np.empty((w_size, nr_w), np.float64)
    for r, raw in enumerate(body):
        lineno = w_line + 1 + r
        if r >= w_size:
            raise ModelFormatError(path, lineno, f"extra data after the {w_size} rows of w")
        try:
            toks = raw.decode("ascii").split()
        except UnicodeDecodeError:
            raise ModelFormatError(path, lineno, "not a text line (non-ASCII bytes)") from None
        if len(toks) != nr_w:
            raise ModelFormatError(path, lineno, f"w row has {len(toks)} numbers, expected {nr_w}")
        for c, tok in enumerate(toks):
            v = _parse_float(tok, path, lineno, "w")
            if not math.isfinite(v):
                raise ModelFormatError(path, lineno, f"non-finite weight '{tok}'")
            W[r, c] = v
    if len(body) < w_size:
        raise ModelFormatError(path, w_line + len(body) + 1,
                               f"truncated: w has {len(body)} rows, expected {w_size}")
    return W


def _fmt(x):
    """Shortest exact text of a float; integers without '.0', as LIBLINEAR's %.17g."""
    x = float(x)
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


def write_liblinear_model(model, path):
    """Write a LinearModel (binary, one-vs-rest or regression) as a LIBLINEAR model file."""
    if getattr(model, "scaling", None) is not None:
        raise ParameterError("a LIBLINEAR model file cannot hold the ranges of svm-train --scale: save the model "
                             "in svmtrain's format, or scale with svm-scale -s RANGE_FILE instead")
    if getattr(model, "task", "c") == "r":
        return _write_regression(model, path)
    if getattr(model, "task", "c") == "o":
        return _write_one_class(model, path)
    if getattr(model, "task", "c") == "p":
        raise ParameterError("LIBLINEAR model files hold no ranking models (--task p): use the svmtrain format")
    int_labels = _int_labels(model.labels)
    W, b, d, has_bias = _checked_weights(model)
    W, b, int_labels = _liblinear_columns(W, b, int_labels)
    k = len(int_labels)
    W, bias = _fold_bias(W, b, float(model.bias), has_bias)
    st, W = _solver_type(dict(model.header or []), k, W)

    with atomic_write(path) as f:
        f.write(f"solver_type {st}\n")
        f.write(f"nr_class {k}\n")
        f.write("label " + " ".join(str(v) for v in int_labels) + "\n")
        f.write(f"nr_feature {d}\n")
        f.write(f"bias {_fmt(bias)}\n")
        f.write("w\n")
        rows = [" ".join(_fmt(x) for x in row) + " \n" for row in W.tolist()]
        f.write("".join(rows))


def _int_labels(labels):
    """The labels as Python ints; ParameterError unless each is an integer of magnitude < 2^31."""
    labels = np.asarray(labels, np.float64)
    int_labels = []
    for v in labels:
        if not (math.isfinite(v) and v == int(v) and abs(v) < 2**31):
            raise ParameterError(f"LIBLINEAR model files hold integer labels only; cannot write label {v!r}")
        int_labels.append(int(v))
    return int_labels


def _checked_weights(model):
    """(W, b, n_features, has_bias) as float64, b zeros if none; ParameterError unless shaped and finite."""
    W = np.asarray(model.W, np.float64)
    d = int(model.n_features)
    m = W.shape[1]
    has_bias = model.bias >= 0
    if W.shape[0] != d + (1 if has_bias else 0):
        raise ParameterError(f"model W has {W.shape[0]} rows for {d} features (bias {model.bias})")
    b = np.zeros(m) if model.b is None else np.asarray(model.b, np.float64)
    if not (np.all(np.isfinite(W)) and np.all(np.isfinite(b))):
        raise ParameterError("cannot write a model with non-finite weights")
    return W, b, d, has_bias


def _liblinear_columns(W, b, int_labels):
    """(W, b, labels) in LIBLINEAR's column layout for the labels; ParameterError when there is none."""
    m = W.shape[1]
    k = len(int_labels)
    if m == 2 and k == 2:
        # an argmax pair (first wins a tie): one column scoring label[1], labels swapped
        W = (W[:, 1] - W[:, 0]).reshape(-1, 1)
        b = np.array([b[1] - b[0]])
        int_labels = int_labels[::-1]
        m = 1
    if len(set(int_labels)) == 1 and k == 2 and m == 1:
        # a model whose two labels are equal predicts that label: LIBLINEAR's nr_class 1
        int_labels = int_labels[:1]
        k = 1
    if not ((m == 1 and k in (1, 2)) or (m == k and k >= 3)):
        raise ParameterError(f"cannot write a model with {k} labels and {m} weight columns")
    return W, b, int_labels


def _fold_bias(W, b, bias, has_bias):
    """(W, bias) with the unregularised b folded into the bias feature (W copied first), bias -1 for neither."""
    if np.any(b != 0.0):
        if not has_bias:
            W = np.vstack([W, b.reshape(1, -1)])
            bias = 1.0
        elif bias > 0:
            W = W.copy()
            W[-1] += b / bias
        else:
            W = W.copy()
            W[-1] = b
            bias = 1.0
    elif not has_bias:
        bias = -1.0
    return W, bias


def _solver_type(header, k, W):
    """(solver_type, W) to write: MCSVM_CS (two classes: columns w, -w), the type read, or the loss's."""
    st = header.get(HEADER_KEY)
    if header.get("multiclass") == "cs" and k >= 2:
        st = "MCSVM_CS"             # Crammer-Singer (-s dcd --multiclass cs): nr_class columns even for two
        if k == 2:
            W = np.hstack([W, -W])  # its two columns are w and -w; LIBLINEAR predicts by the first's sign
    elif st not in CLASSIFICATION_TYPES or st == "MCSVM_CS":
        if header.get("penalty") == "l1":       # -s cdn: LIBLINEAR's -s 5 and -s 6
            st = L1_TYPES.get(header.get("loss"))
            if st is None:
                raise ParameterError(f"LIBLINEAR has no L1-regularised model of the {header.get('loss')} loss")
        else:
            st = {"squared-hinge": "L2R_L2LOSS_SVC_DUAL", "log": "L2R_LR_DUAL"}.get(header.get("loss"),
                                                                                  "L2R_L1LOSS_SVC_DUAL")
    return st, W


def _write_regression(model, path):
    """A regression LinearModel as LIBLINEAR's SVR model file (nr_class 2, no labels)."""
    W = np.asarray(model.W, np.float64)
    if W.shape[1] != 1 or not np.all(np.isfinite(W)):
        raise ParameterError("cannot write this regression model: one finite weight column needed")
    b = float(model.b[0]) if model.b is not None else 0.0
    bias = float(model.bias)
    if b != 0.0:
        raise ParameterError("LIBLINEAR's regression models have no unregularised bias (-R)")
    header = dict(model.header or [])
    st = header.get(HEADER_KEY)
    if st not in REGRESSION_TYPES:
        squared = header.get("loss") == "squared-epsilon-insensitive"
        st = "L2R_L2LOSS_SVR_DUAL" if squared else "L2R_L1LOSS_SVR_DUAL"
    with atomic_write(path) as f:
        f.write(f"solver_type {st}\nnr_class 2\nnr_feature {int(model.n_features)}\n")
        f.write(f"bias {_fmt(bias if bias >= 0 else -1.0)}\nw\n")
        f.write("".join(_fmt(x) + " \n" for x in W[:, 0].tolist()))


def _write_one_class(model, path):
    """A one-class LinearModel as LIBLINEAR's ONECLASS_SVM file: w, and rho = -b."""
    W = np.asarray(model.W, np.float64)
    rho = -float(model.b[0])
    if W.shape[1] != 1 or not np.all(np.isfinite(W)) or not math.isfinite(rho):
        raise ParameterError("cannot write this one-class model: one finite weight column needed")
    bias = float(model.bias)
    with atomic_write(path) as f:
        f.write(f"solver_type {ONE_CLASS_TYPE}\nnr_class 2\nnr_feature {int(model.n_features)}\n")
        f.write(f"bias {_fmt(bias if bias >= 0 else -1.0)}\nrho {_fmt(rho)}\nw\n")
        f.write("".join(_fmt(x) + " \n" for x in W[:, 0].tolist()))
