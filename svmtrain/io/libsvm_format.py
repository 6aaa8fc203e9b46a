"""LIBSVM's model file format (svm-train / svm-predict), both directions.

A LIBSVM model is a header ::

    svm_type c_svc
    kernel_type rbf             linear | polynomial | rbf | sigmoid | precomputed
    degree 3                    polynomial only
    gamma 0.5                   polynomial, rbf, sigmoid
    coef0 0                     polynomial, sigmoid
    nr_class 2
    total_sv 120
    rho 0.42                    k(k-1)/2 values, one per pair of classes
    label 1 -1                  integer class labels, in LIBSVM's order
    probA ... / probB ...       optional (-b 1): Platt's sigmoid of each pair; a regression
                                model's probA alone, its Laplace noise's sigma
    nr_sv 61 59                 support vectors per class, stored class by class
    SV
    <total_sv lines: k-1 coefficients, then index:value pairs>

A precomputed-kernel model (``-t 4``) writes each support vector as
``0:ID``, its serial number in the training file, and nothing else.

For the pair of classes (i, j), i < j, the decision value is
sum_{s in class i} sv_coef[j-1][s] K(x_s, x) + sum_{s in class j}
sv_coef[i][s] K(x_s, x) - rho[p]; a positive value is a vote for i, and
the class with the most votes (the first on ties) is predicted. With two
classes this is one score, positive for ``label[0]``: exactly
svmtrain's binary convention with b = -rho, so a binary
:class:`~svmtrain.models.kernel.KernelModel` converts both ways. A LIBSVM
model of three or more classes is read as a KernelModel with ``decision =
"ovo"`` (one score column per pair, zero coefficients for the SVs outside
the pair), and such a model (``-s smo``'s) is written back the same way;
a one-vs-rest model of three or more classes has no one-vs-one form and is
refused (ParameterError).

The nu formulations (``svm-train -s smo --nu``) are written as nu_svc and
nu_svr: their models have the same form.

Regression models (epsilon_svr, nu_svr) and one-class models (one_class)
have ``nr_class 2``, one ``rho``, no ``label`` and ``nr_sv`` lines and one
coefficient per SV: f(x) = sum_s coef_s K(x_s, x) - rho is the prediction
(regression, ``task = "r"``) or, for one_class, predicts +1 when positive
and -1 otherwise (``task = "o"``: labels (1, -1), b = -rho, as
svmtrain's one-class models).
"""
import numpy as np

from ..data.dataset import Chunk
from ..errors import ModelFormatError, ParameterError
from ..mercer.functions import CODES, LINEAR, POLYNOMIAL, PRECOMPUTED, RBF, SIGMOID, Kernel
from .atomic import atomic_write

CLASSIFIERS = ("c_svc", "nu_svc")
REGRESSORS = ("epsilon_svr", "nu_svr")
ONE_CLASS = "one_class"
HEADER_KEYS = ("svm_type", "kernel_type", "degree", "gamma", "coef0", "nr_class", "total_sv", "rho",
               "label", "probA", "probB", "prob_density_marks", "nr_sv")


def write_libsvm_model(model, path):
    """Write a classifier KernelModel (two classes, or one-vs-one over more)
    as a LIBSVM c_svc (nu_svc) model file, a regression one as epsilon_svr
    (nu_svr), a one-class one as one_class; atomically."""
    if getattr(model, "scaling", None) is not None:
        raise ParameterError("a LIBSVM model file cannot hold the ranges of svm-train --scale: save the model "
                             "in svmtrain's format, or scale with svm-scale -s RANGE_FILE instead")
    from ..models.kernel import KernelModel
    if not isinstance(model, KernelModel):
        raise ParameterError("--model-format libsvm writes kernel models (-s sbp, or -s pegasos with -t 1|2|3) "
                             "only; use --model-format liblinear for linear models")
    if model.task in ("r", "o"):
        return _write_single(model, path, ONE_CLASS if model.task == "o" else _svm_type(model, "epsilon_svr"))
    k = len(model.labels)
    if k > 2 and model.decision != "ovo":
        raise ParameterError(f"--model-format libsvm: this model has {k} classes trained one-vs-rest; LIBSVM "
                             "model files hold one-vs-one classifiers only, so it cannot be written in "
                             "LIBSVM's format (use the svmtrain format)")
    labels = []
    for x in model.labels:
        if not (float(x).is_integer() and abs(x) < 2**31):
            raise ParameterError(f"--model-format libsvm: LIBSVM stores integer class labels, not {x!r}")
        labels.append(int(x))
    order, rows, nr_sv = _class_rows(model.coef, k)
    lines = [f"svm_type {_svm_type(model, 'c_svc')}"] + _kernel_lines(model.kernel)
    lines += [f"nr_class {k}", f"total_sv {len(order)}"]
    lines.append("rho" + "".join(f" {-float(b)!r}" for b in (model.b if k >= 2 else ())))
    lines.append("label " + " ".join(str(x) for x in labels))
    if model.prob_A is not None and k >= 2:
        lines += ["probA " + " ".join(repr(float(a)) for a in model.prob_A),
                  "probB " + " ".join(repr(float(b)) for b in model.prob_B)]
    lines.append("nr_sv " + " ".join(str(c) for c in nr_sv))
    lines.append("SV")
    with atomic_write(path) as f:
        f.write("\n".join(lines) + "\n")
        _write_svs(f, model.SV, rows, order, model.kernel)


def _class_rows(coef, k):
    """(the SVs in LIBSVM's order, their k - 1 coefficients each, nr_sv) of
    a classifier over k labels: one column (k = 2: positive coefficients
    vote for label[0]) or one per pair (i, j), i < j, in LIBSVM's order.
    An SV's class is its first nonzero pair's side (coefficients y alpha:
    positive for i, negative for j); the SVs go class by class, in their
    order within a class, and the row of an SV of class i holds its
    coefficient in pair (i, j) at j - 1 for j > i, at j for j < i (LIBSVM's
    sv_coef). k = 1: no SVs."""
    if k < 2:
        return np.zeros(0, np.int64), np.zeros((len(coef), 0)), [0] * k
    if k == 2:
        c = coef[:, 0]
        order = np.concatenate([np.flatnonzero(c > 0), np.flatnonzero(c < 0)])
        return order, c[:, None], [int(np.count_nonzero(c > 0)), int(np.count_nonzero(c < 0))]
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    used = np.flatnonzero(np.any(coef != 0.0, axis=1))
    first = np.argmax(coef[used] != 0.0, axis=1)
    side = np.array([pairs[p][0] if coef[s, p] > 0 else pairs[p][1] for s, p in zip(used.tolist(),
                                                                                      first.tolist())], np.int64)
    order = np.concatenate([used[side == c] for c in range(k)])
    cls = np.full(len(coef), -1, np.int64)
    cls[used] = side
    index = {pair: p for p, pair in enumerate(pairs)}
    rows = np.zeros((len(coef), k - 1))
    for s in order.tolist():
        i = int(cls[s])
        for r in range(k - 1):
            j = r if r < i else r + 1
            rows[s, r] = coef[s, index[(min(i, j), max(i, j))]]
    return order, rows, [int(np.count_nonzero(side == c)) for c in range(k)]


def _svm_type(model, plain):
    """LIBSVM's svm_type of ``model``: ``plain`` (c_svc, epsilon_svr), or its
    nu formulation (nu_svc, nu_svr) for a model of ``-s smo --nu`` (its
    header's solver and nu) or read from a LIBSVM nu_svc / nu_svr file."""
    from ..solvers import trains_nu
    info = dict(model.header)
    solver = str(info.get("solver", ""))
    nu_type = {"c_svc": "nu_svc", "epsilon_svr": "nu_svr"}[plain]
    if solver == f"libsvm-{nu_type}":
        return nu_type
    nu = info.get("nu")
    return nu_type if nu not in (None, "none") and trains_nu(solver, model.task) else plain


def _kernel_lines(kern):
    """LIBSVM's kernel header lines of ``kern``."""
    lines = [f"kernel_type {kern.name}"]
    if kern.code == POLYNOMIAL:
        lines.append(f"degree {int(kern.degree)}")
    if kern.code in (POLYNOMIAL, RBF, SIGMOID):
        lines.append(f"gamma {float(kern.gamma)!r}")
    if kern.code in (POLYNOMIAL, SIGMOID):
        lines.append(f"coef0 {float(kern.coef0)!r}")
    return lines


def _write_svs(f, SV, coef, order, kern):
    """The SV lines of rows ``order``: each row's coefficients (``coef[s]``,
    a number or a row of them), then its features (``0:ID`` with -t 4)."""
    coef = np.asarray(coef, np.float64)
    coef = coef[:, None] if coef.ndim == 1 else coef
    if kern.code == PRECOMPUTED:        # LIBSVM's "0:ID" (the SV rows hold their ID in column 0)
        ids = SV.values[SV.indptr[:-1]]
        for s in order.tolist():
            f.write(f"{_coefficients(coef[s])} 0:{int(ids[s])}\n")
        return
    for s in order.tolist():
        lo, hi = SV.indptr[s], SV.indptr[s + 1]
        pairs = " ".join(f"{i + 1}:{v!r}" for i, v in zip(SV.indices[lo:hi].tolist(), SV.values[lo:hi].tolist()))
        f.write(f"{_coefficients(coef[s])} {pairs}\n")


def _coefficients(row):
    return " ".join(repr(float(c)) for c in row)


def _write_single(model, path, svm_type):
    """A one-column KernelModel (regression, one-class) as LIBSVM's ``svm_type`` file."""
    coef = model.coef[:, 0]
    keep = np.flatnonzero(coef != 0.0)
    lines = [f"svm_type {svm_type}"] + _kernel_lines(model.kernel)
    lines += ["nr_class 2", f"total_sv {len(keep)}", f"rho {-float(model.b[0])!r}"]
    if model.laplace_sigma is not None:
        lines.append(f"probA {float(model.laplace_sigma)!r}")     # LIBSVM's SVR -b 1
    lines.append("SV")
    with atomic_write(path) as f:
        f.write("\n".join(lines) + "\n")
        _write_svs(f, model.SV, coef, keep, model.kernel)


def read_libsvm_model(path):
    """Read a LIBSVM classification (c_svc, nu_svc), regression (epsilon_svr,
    nu_svr) or one-class (one_class) model as a KernelModel.

    Raises ModelFormatError naming the file and line for truncated or
    damaged files and for models that are not classifiers.
    """
    lines = _model_lines(path)
    hdr = _read_header(path, lines)
    sv_line = hdr.sv_line
    svm_type = hdr.word("svm_type")
    if svm_type not in CLASSIFIERS + REGRESSORS + (ONE_CLASS,):
        hdr.fail("svm_type", f"svm_type {svm_type[:20]!r} is not supported (classification models "
                 f"{' and '.join(CLASSIFIERS)}, regression models {' and '.join(REGRESSORS)}, "
                 f"one-class models {ONE_CLASS})")
    kernel = _kernel(hdr)
    if svm_type in REGRESSORS + (ONE_CLASS,):
        return _single_model(path, hdr, lines, sv_line, svm_type, kernel)
    k, total, rho, labels, nr_sv = _class_header(hdr)
    body = _sv_lines(path, lines, sv_line, total)
    sv_coef, SV = _parse_svs(path, sv_line + 1, body, max(k - 1, 0), kernel)
    coef, b = _pair_columns(sv_coef, rho, nr_sv, k, total)
    from ..models.kernel import KernelModel
    header = [("solver", f"libsvm-{svm_type}")]
    model = KernelModel(labels=labels.astype(np.float64), SV=SV, coef=coef, b=b,
                        kernel=kernel, n_features=SV.n_features,
                        solver=f"libsvm-{svm_type}", header=header, decision="ovo" if k > 2 else "ovr")
    if "probA" in hdr.head and k >= 2:
        pairs = k * (k - 1) // 2
        model.prob_A, model.prob_B = hdr.numbers("probA", pairs), hdr.numbers("probB", pairs)
    return model


def _model_lines(path):
    """The file's text lines (no empty last one); ModelFormatError when unreadable or not UTF-8 text."""
    try:
        with open(path, "r", encoding="utf-8", errors="strict") as f:
            text = f.read()
    except UnicodeDecodeError:
        raise ModelFormatError(path, None, "not a model file (binary content)") from None
    except OSError as e:
        raise ModelFormatError(path, None, f"cannot open model: {e.strerror or e}") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _read_header(path, lines):
    """The _Header of the lines before 'SV' (known keys, each once); ModelFormatError otherwise or without 'SV'."""
    head = {}
    pos = 0
    while True:
        if pos >= len(lines):
            raise ModelFormatError(path, pos + 1, "truncated model: no 'SV' line")
        line = lines[pos].strip()
        if line == "SV":
            break
        key, _, value = line.partition(" ")
        if key not in HEADER_KEYS:
            raise ModelFormatError(path, pos + 1, f"unknown LIBSVM model header key {key[:30]!r}")
        if key in head:
            raise ModelFormatError(path, pos + 1, f"header key {key!r} given twice")
        head[key] = (pos + 1, value.strip())
        pos += 1
    return _Header(path, head, pos + 1)


def _kernel(hdr):
    """The header's Kernel: a supported kernel_type with the parameters it uses, LIBSVM's defaults elsewhere."""
    kname = hdr.word("kernel_type")
    if kname not in CODES:
        hdr.fail("kernel_type", f"kernel_type {kname[:20]!r} is not supported ({', '.join(CODES)})")
    code = CODES[kname]
    if code == PRECOMPUTED:
        return Kernel(code, 0.0, 3, 0.0)
    degree = int(hdr.numbers("degree", 1, integer=True)[0]) if code == POLYNOMIAL else 3
    gamma = float(hdr.numbers("gamma", 1)[0]) if code != LINEAR else (
        float(hdr.numbers("gamma", 1)[0]) if "gamma" in hdr.head else 0.0)
    coef0 = float(hdr.numbers("coef0", 1)[0]) if code in (POLYNOMIAL, SIGMOID) else 0.0
    return Kernel(code, gamma, degree, coef0)


def _total_sv(hdr):
    """The header's total_sv, an integer >= 0 (else ModelFormatError)."""
    total = int(hdr.numbers("total_sv", 1, integer=True)[0])
    if total < 0:
        hdr.fail("total_sv", f"total_sv must be >= 0 (got {total})")
    return total


def _class_header(hdr):
    """(k, total_sv, rho, labels, nr_sv) of a classifier's header, each checked as LIBSVM writes them."""
    k = int(hdr.numbers("nr_class", 1, integer=True)[0])
    if k < 1:
        hdr.fail("nr_class", f"nr_class must be >= 1 (got {k})")
    total = _total_sv(hdr)
    pairs = k * (k - 1) // 2
    rho = hdr.numbers("rho", pairs)
    labels = hdr.numbers("label", k, integer=True)
    if len(np.unique(labels)) != k:
        hdr.fail("label", "labels must be distinct")
    nr_sv = hdr.numbers("nr_sv", k, integer=True).astype(np.int64)
    if np.any(nr_sv < 0) or int(nr_sv.sum()) != total:
        hdr.fail("nr_sv", f"nr_sv must be >= 0 and sum to total_sv = {total}")
    return k, total, rho, labels, nr_sv


def _pair_columns(sv_coef, rho, nr_sv, k, total):
    """(coef, b) of the KernelModel: a constant for k = 1, one column for k = 2, else one per pair (i, j)."""
    start = np.concatenate([[0], np.cumsum(nr_sv)])
    if k == 1:
        return np.zeros((total, 1)), np.ones(1)
    if k == 2:
        return sv_coef[:, :1].copy(), -rho
    coef = np.zeros((total, k * (k - 1) // 2))
    p = 0
    for i in range(k):
        for j in range(i + 1, k):
            si, sj = slice(start[i], start[i + 1]), slice(start[j], start[j + 1])
            coef[si, p] = sv_coef[si, j - 1]
            coef[sj, p] = sv_coef[sj, i]
            p += 1
    return coef, -rho


def _single_model(path, hdr, lines, sv_line, svm_type, kernel):
    """An epsilon_svr / nu_svr / one_class model: f(x) = sum_s coef_s K(SV_s, x) - rho,
    the prediction itself, or for one_class +1 where positive, else -1. A
    regression model's probA (-b 1) is its Laplace sigma."""
    from ..models.kernel import KernelModel
    total = _total_sv(hdr)
    rho = hdr.numbers("rho", 1)
    body = _sv_lines(path, lines, sv_line, total)
    sv_coef, SV = _parse_svs(path, sv_line + 1, body, 1, kernel)
    task = "o" if svm_type == ONE_CLASS else "r"
    header = [("solver", f"libsvm-{svm_type}"), ("task", task)]
    labels = np.array([1.0, -1.0]) if task == "o" else np.empty(0)
    model = KernelModel(labels=labels, SV=SV, coef=sv_coef, b=-rho, kernel=kernel, n_features=SV.n_features,
                        solver=f"libsvm-{svm_type}", header=header, task=task)
    if task == "r" and "probA" in hdr.head:
        sigma = hdr.numbers("probA", 1)[0]
        if not sigma > 0:
            hdr.fail("probA", f"probA of a regression model is the Laplace sigma, > 0 (got {sigma!r})")
        model.laplace_sigma = sigma
    return model


def _sv_lines(path, lines, sv_line, total):
    """The ``total`` support-vector lines after the 'SV' line (line number
    ``sv_line``); ModelFormatError when fewer follow, or text after them."""
    body = lines[sv_line:]
    if len(body) < total:
        raise ModelFormatError(path, sv_line + len(body) + 1,
                               f"truncated model: {len(body)} of {total} support vectors")
    extra = [i for i, line in enumerate(body[total:]) if line.strip()]
    if extra:
        raise ModelFormatError(path, sv_line + total + extra[0] + 1, "unexpected text after the support vectors")
    return body[:total]


class _Header:
    def __init__(self, path, head, sv_line):
        self.path = path
        self.head = head
        self.sv_line = sv_line

    def fail(self, key, problem):
        raise ModelFormatError(self.path, self.head.get(key, (self.sv_line,))[0], problem)

    def word(self, key):
        if key not in self.head:
            raise ModelFormatError(self.path, self.sv_line, f"header key {key!r} missing")
        return self.head[key][1]

    def numbers(self, key, count, integer=False):
        line, text = self.head.get(key, (None, None))
        if text is None:
            raise ModelFormatError(self.path, self.sv_line, f"header key {key!r} missing")
        try:
            vals = np.array([float(t) for t in text.split()])
        except ValueError:
            raise ModelFormatError(self.path, line, f"bad number in {key}: {text[:40]!r}") from None
        if len(vals) != count:
            raise ModelFormatError(self.path, line, f"{key} needs {count} values, found {len(vals)}")
        if not np.all(np.isfinite(vals)) or (integer and not np.all(vals == np.round(vals))):
            raise ModelFormatError(self.path, line, f"{key} must be finite{' integers' if integer else ''}")
        return vals


def _parse_svs(path, first_line, body, n_coef, kernel):
    """(sv_coef float64[n, n_coef], SV Chunk) from the SV lines; first_line is
    the line number of body[0]. A precomputed kernel's lines hold ``0:ID``
    alone (ID an integer >= 1), kept in column 0."""
    n = len(body)
    precomputed = kernel.code == PRECOMPUTED
    sv_coef = np.empty((n, n_coef))
    indptr = np.zeros(n + 1, np.int64)
    idx_parts, val_parts = [], []
    for r, line in enumerate(body):
        tokens = line.split()
        lineno = first_line + r
        if len(tokens) < n_coef:
            raise ModelFormatError(path, lineno, f"support vector needs {n_coef} coefficients")
        try:
            sv_coef[r] = [float(t) for t in tokens[:n_coef]]
            pairs = [t.partition(":") for t in tokens[n_coef:]]
            if any(sep != ":" for _, sep, _ in pairs):
                raise ValueError
            idx = np.array([int(a) for a, _, _ in pairs], np.int64)
            val = np.array([float(c) for _, _, c in pairs])
        except ValueError:
            raise ModelFormatError(path, lineno, "bad support vector (expected coefficients, then index:value "
                                   "pairs)") from None
        if not np.all(np.isfinite(sv_coef[r])) or not np.all(np.isfinite(val)):
            raise ModelFormatError(path, lineno, "support vector values must be finite")
        if precomputed:
            if len(idx) != 1 or idx[0] != 0 or not (val[0] >= 1 and val[0] == np.floor(val[0])):
                raise ModelFormatError(path, lineno, "a precomputed-kernel support vector is 0:ID, its serial "
                                       "number (an integer >= 1)")
            idx_parts.append(idx)
            val_parts.append(val)
            indptr[r + 1] = indptr[r] + 1
            continue
        if len(idx) and (idx.min() < 1 or idx.max() >= 2**31 or np.any(np.diff(idx) <= 0)):
            raise ModelFormatError(path, lineno, "support vector indices must be increasing integers >= 1")
        idx_parts.append(idx - 1)
        val_parts.append(val)
        indptr[r + 1] = indptr[r] + len(idx)
    indices = np.concatenate(idx_parts).astype(np.int32) if n else np.empty(0, np.int32)
    values = np.concatenate(val_parts) if n else np.empty(0)
    return sv_coef, Chunk(labels=np.zeros(n), indptr=indptr, indices=indices, values=values,
                          qid=np.zeros(n, np.int64))
