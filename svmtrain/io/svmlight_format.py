"""SVMlight model files (``svm_learn``'s output, V5.x and V6.x): read them.

The format (``write_model`` in SVMlight's svm_common.c) is eleven header
lines, each a value followed by a ``#`` comment, then one line per
support vector::

    SVM-light Version V6.02
    2 # kernel type                     0 linear, 1 polynomial, 2 rbf, 3 sigmoid, 4 user
    3 # kernel parameter -d             degree
    0.5 # kernel parameter -g           rbf gamma
    1 # kernel parameter -s             polynomial / sigmoid scale
    1 # kernel parameter -r             polynomial / sigmoid constant
    empty# kernel parameter -u          user kernel parameter (text)
    13 # highest feature index
    270 # number of training documents
    101 # number of support vectors plus 1
    0.123 # threshold b, each following line is a SV (starting with alpha*y)
    0.25 1:0.5 3:-1 #
    -0.25 2:1 #

A support vector line is a line of SVMlight data whose "label" is
alpha_i y_i: an optional ``qid:`` (ignored) and a trailing ``#`` comment
may follow. The decision value is

    f(x) = sum_i alpha_i y_i K(sv_i, x) - b

(the threshold is subtracted) with K(u, v) = u.v, (s u.v + r)^d,
exp(-g |u - v|^2) or tanh(s u.v + r); SVMlight predicts +1 when
f(x) > 0, else -1. In svmtrain's terms that is a binary model with labels
``[1, -1]``, one score column equal to f(x) and bias ``-b``; polynomial
and sigmoid kernels have gamma = s and coef0 = r, rbf has gamma = g.

A linear model (kernel type 0) is read as a LinearModel with
w = sum_i alpha_i y_i sv_i, the weight vector SVMlight's svm_classify
itself predicts with (summed in the file's order, as SVMlight sums it);
the other kernels are read as a KernelModel. SVMlight keeps feature
values in single precision; svmtrain computes in double precision with
the numbers as written, so decision values agree with svm_classify's to
about 1e-7 relative, not bit for bit.
"""
import os
import re

import numpy as np

from ..errors import InputFormatError, ModelFormatError
from ..mercer.functions import LINEAR, POLYNOMIAL, RBF, SIGMOID, Kernel
from .liblinear_format import _parse_float, _parse_int

SUPPORTED_MAJOR = (5, 6)          # versions whose model layout is the one above
USER_KERNEL = 4
N_HEADER = 11                     # lines before the first support vector
_VERSION = re.compile(rb"SVM-light Version\s+(\S+)\s*\Z")
_VERSION_NUMBER = re.compile(rb"V(\d+)\.(\d+)\Z")
# header lines 2..11: (what the value is, parser)
_FIELDS = (
    ("kernel type", "int"), ("kernel parameter -d", "int"), ("kernel parameter -g", "float"),
    ("kernel parameter -s", "float"), ("kernel parameter -r", "float"), ("kernel parameter -u", "text"),
    ("highest feature index", "int"), ("number of training documents", "int"),
    ("number of support vectors plus 1", "int"), ("threshold b", "float"),
)


def read_svmlight_model(path):
    """Read an SVMlight model file as a binary model with labels ``[1, -1]``.

    Returns a LinearModel for a linear kernel, else a KernelModel; either
    one's single score column is SVMlight's f(x) (positive: label 1).
    Raises ModelFormatError naming the file and line for a truncated or
    damaged file, an unsupported version, an unknown kernel type and a
    user-defined kernel (which cannot be evaluated outside SVMlight).
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise ModelFormatError(path, None, f"cannot open model: {e.strerror or e}") from None
    parts = data.split(b"\n", N_HEADER)
    head = parts[:N_HEADER]
    rest = parts[N_HEADER] if len(parts) > N_HEADER else b""
    if len(parts) <= N_HEADER and head and head[-1] == b"":
        head.pop()                                  # the file's final newline
    version = _version(path, head[0] if head else b"")
    values = []
    for k, (what, kind) in enumerate(_FIELDS):
        lineno = k + 2
        if lineno > len(head):
            raise ModelFormatError(path, lineno, f"truncated model: no line '{what}'")
        values.append(_value(path, lineno, head[lineno - 1], what, kind))
    code, degree, g, s, r, user, totwords, totdoc, sv_num, threshold = values
    if code == USER_KERNEL:
        raise ModelFormatError(path, 2, f"kernel type 4 (user-defined kernel, -u {user!r}) cannot be "
                               "evaluated outside SVMlight")
    if code not in (LINEAR, POLYNOMIAL, RBF, SIGMOID):
        raise ModelFormatError(path, 2, f"unknown kernel type {code} (SVMlight's are 0 linear, 1 polynomial, "
                               "2 rbf, 3 sigmoid, 4 user-defined)")
    for lineno, v, least in ((8, totwords, 0), (9, totdoc, 0), (10, sv_num, 1)):
        if v < least:
            raise ModelFormatError(path, lineno, f"{_FIELDS[lineno - 2][0]} must be >= {least} (got {v})")
    SV = _support_vectors(path, rest, sv_num - 1)
    alpha_y = SV.labels
    n_features = max(totwords, SV.n_features)
    header = [("solver", f"svmlight-{version}"), ("n_train", totdoc)]
    if code == LINEAR:
        from ..models.linear import LinearModel
        w = np.bincount(SV.indices, weights=np.repeat(alpha_y, np.diff(SV.indptr)) * SV.values,
                        minlength=n_features)
        return LinearModel(labels=np.array([1.0, -1.0]), W=w.reshape(-1, 1), n_features=n_features,
                           bias=-1.0, b=np.array([-threshold]), solver=f"svmlight-{version}", header=header)
    from ..models.kernel import KernelModel
    gamma, coef0 = (g, 0.0) if code == RBF else (s, r)
    return KernelModel(labels=np.array([1.0, -1.0]), SV=SV, coef=alpha_y.reshape(-1, 1).copy(),
                       b=np.array([-threshold]), kernel=Kernel(code, gamma, degree, coef0),
                       n_features=n_features, solver=f"svmlight-{version}", header=header)


def _version(path, line):
    """The version word of line 1 (``V6.02``); refuses versions other than V5.x and V6.x."""
    m = _VERSION.match(line.rstrip(b"\r"))
    if not m:
        raise ModelFormatError(path, 1, "not an SVM-light model file (expected 'SVM-light Version V6.02' "
                               "or similar on line 1)")
    word = m.group(1).decode("ascii", "backslashreplace")
    number = _VERSION_NUMBER.match(m.group(1))
    if not number:
        raise ModelFormatError(path, 1, f"unrecognised SVM-light version {word[:20]!r}")
    if int(number.group(1)) not in SUPPORTED_MAJOR:
        raise ModelFormatError(path, 1, f"SVM-light model version {word} is not supported "
                               "(reads the V5.x and V6.x model layout)")
    return word


def _value(path, lineno, raw, what, kind):
    """The value that starts header line ``lineno``; the rest of the line (its comment) is ignored."""
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise ModelFormatError(path, lineno, "not a text line (non-ASCII bytes)") from None
    value = text.split("#", 1)[0]
    if kind == "text":
        return value.strip()
    tokens = value.split()
    if not tokens:
        raise ModelFormatError(path, lineno, f"missing value for '{what}'")
    if kind == "int":
        return _parse_int(tokens[0], path, lineno, what)
    v = _parse_float(tokens[0], path, lineno, what)
    if not np.isfinite(v):
        raise ModelFormatError(path, lineno, f"{what} must be a finite number (got {tokens[0][:40]!r})")
    return v


def _support_vectors(path, rest, n_sv):
    """The ``n_sv`` support vector lines (from file line N_HEADER + 1 on) as a
    Chunk whose labels are alpha_i y_i; only blank lines may follow them."""
    from .reader import parse_bytes
    first = N_HEADER + 1
    arr = np.frombuffer(rest, np.uint8)
    ends = np.flatnonzero(arr == ord("\n"))
    n_lines = len(ends) + (1 if len(rest) and rest[-1:] != b"\n" else 0)
    if n_lines < n_sv:
        raise ModelFormatError(path, first + n_lines, f"truncated model: {n_lines} of {n_sv} support vectors")
    stop = int(ends[n_sv - 1]) + 1 if n_sv and n_sv <= len(ends) else (len(rest) if n_sv else 0)
    body, tail = rest[:stop], rest[stop:]
    if tail.strip():
        extra = len(tail) - len(tail.lstrip())
        raise ModelFormatError(path, first + n_sv + tail.count(b"\n", 0, extra),
                               f"unexpected text after the {n_sv} support vectors the header announces")
    if body and body[-1:] != b"\n":
        body += b"\n"
    try:
        SV = parse_bytes(body, name=path)
    except InputFormatError as e:
        raise ModelFormatError(path, None if e.line is None else first - 1 + e.line,
                               f"bad support vector (alpha*y, then index:value pairs): {e.problem}") from None
    if SV.n_rows != n_sv:
        # a blank or comment-only line holds no support vector
        empty = [not line.split(b"#", 1)[0].strip() for line in body.split(b"\n")[:n_sv]]
        k = empty.index(True)
        if all(empty[k:]):
            raise ModelFormatError(path, first + k, f"truncated model: {k} of {n_sv} support vectors")
        raise ModelFormatError(path, first + k, "empty support vector line (expected alpha*y, then "
                               "index:value pairs)")
    SV.first_line = first
    return SV
