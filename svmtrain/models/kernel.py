"""Trained kernel expansions: f_c(x) = sum_s coef[s, c] K(SV_s, x) + b[c].

A :class:`KernelModel` mirrors :class:`svmtrain.models.linear.LinearModel`: one
score column for a binary problem (positive scores predict ``labels[0]``),
one per class for one-vs-rest (``decision = "ovr"``, the highest score
wins). Models read from LIBSVM files with three or more classes use
LIBSVM's one-vs-one rule instead (``decision = "ovo"``): one column per
pair (i, j), i < j, in LIBSVM's order (0,1), (0,2), ..., (1,2), ...; a
positive score is a vote for class i, and the class with the most votes
wins (the first such class on ties), as in LIBSVM's svm_predict.

Scores are computed in blocks of test rows against all support vectors
with :func:`svmtrain.mercer.functions.kernel_matrix`, so memory stays bounded by
``SCORE_BYTES`` whatever the test set.
"""
from dataclasses import dataclass, field

import numpy as np

from ..data.dataset import Chunk, take_rows
from ..mercer.functions import CODES, NAMES, Kernel, kernel_matrix, sq_norms
from .linear import ScoredModel, probability_fields, read_probability, task_of_file

# kernel values of one block of test rows against all SVs stay under this
SCORE_BYTES = 64 << 20


@dataclass
class KernelModel(ScoredModel):
    labels: np.ndarray          # float64[k]
    SV: Chunk                   # support vectors (CSR rows; labels unused)
    coef: np.ndarray            # float64[n_sv, m]
    b: np.ndarray               # float64[m]
    kernel: Kernel              # resolved (gamma set)
    n_features: int
    solver: str = ""
    header: list = field(default_factory=list)
    decision: str = "ovr"       # "ovr" (svmtrain's one-vs-rest / binary) or "ovo" (LIBSVM's one-vs-one)
    nu_used: list = None        # sbp: the nu of each binary problem
    task: str = "c"             # svmtrain.tasks: "c" classification, "r" regression (no labels, one column),
                                #   "o" one-class (labels 1 -1, one column)

    def __post_init__(self):
        self.labels = np.asarray(self.labels, np.float64)
        self.coef = np.ascontiguousarray(self.coef, np.float64)
        if self.coef.ndim == 1:
            self.coef = self.coef.reshape(-1, 1)
        self.b = np.asarray(self.b, np.float64).reshape(-1)
        if self.decision not in ("ovr", "ovo"):
            raise ValueError(f"decision must be 'ovr' or 'ovo', not {self.decision!r}")

    @property
    def n_models(self):
        return self.coef.shape[1]

    @property
    def n_sv(self):
        return self.SV.n_rows

    def _scores(self, chunk):
        """float64[n, m]: the scores of each row of ``chunk``."""
        n = chunk.n_rows
        out = np.empty((n, self.n_models), np.float64)
        out[:] = self.b
        if self.n_sv == 0 or n == 0:
            return out
        sv_sq = sq_norms(self.SV.indptr, self.SV.values)
        step = max(1, SCORE_BYTES // (8 * self.n_sv))
        for lo in range(0, n, step):
            block = chunk if (lo == 0 and step >= n) else take_rows(chunk, np.arange(lo, min(n, lo + step)))
            x_sq = sq_norms(block.indptr, block.values)
            K = kernel_matrix(self.kernel, block, x_sq, self.SV, sv_sq)
            out[lo:lo + block.n_rows] += K @ self.coef
        return out

    def predict_index(self, scores):
        """Index into ``labels`` of each row's prediction (one-vs-one: LIBSVM's vote)."""
        k = len(self.labels)
        if k <= 2 or self.decision == "ovr":
            return super().predict_index(scores)
        votes = np.zeros((scores.shape[0], k), np.int64)
        rows = np.arange(scores.shape[0])
        col = 0
        for i in range(k):
            for j in range(i + 1, k):
                win = np.where(scores[:, col] > 0, i, j)
                np.add.at(votes, (rows, win), 1)
                col += 1
        return np.argmax(votes, axis=1)     # first maximum, as LIBSVM

    # --- model files (svmtrain.io.model_io) ---
    KIND = "kernel"
    FIELDS = ("labels", "n_features", "n_models", "decision", "kernel_type", "gamma", "degree", "coef0", "b")
    INFO_KEYS = ("nu_used", "n_sv")

    def file_fields(self):
        out = [("task", self.task), ("labels", self.labels), ("n_features", self.n_features),
               ("n_models", self.n_models),
               ("decision", self.decision), ("kernel_type", NAMES[self.kernel.code]),
               ("gamma", float(self.kernel.gamma)), ("degree", int(self.kernel.degree)),
               ("coef0", float(self.kernel.coef0)), ("b", self.b), ("n_sv", self.n_sv)]
        if self.nu_used is not None:
            out.append(("nu_used", [float(v) for v in self.nu_used]))
        return out + probability_fields(self)

    def file_sections(self):
        return [("coef", self.coef), ("SV", self.SV)]

    @classmethod
    def from_file(cls, fields, sections, header, path):
        """Build from a parsed model file; raises ModelFormatError on inconsistency."""
        labels = fields.floats("labels")
        n_features = fields.int("n_features")
        n_models = fields.int("n_models", minimum=1)
        decision = fields.text("decision")[1].strip()
        if decision not in ("ovr", "ovo"):
            fields.fail("decision", f"decision must be ovr or ovo (got {decision[:20]!r})")
        task = task_of_file(fields, header, labels, n_models, one_vs_one=decision == "ovo")
        if decision == "ovo" and (len(labels) < 2 or n_models != len(labels) * (len(labels) - 1) // 2):
            fields.fail("n_models", f"a one-vs-one model of {len(labels)} labels needs "
                        f"{len(labels) * (len(labels) - 1) // 2} score columns, header says {n_models}")
        name = fields.text("kernel_type")[1].strip()
        if name not in CODES:
            fields.fail("kernel_type", f"unknown kernel_type {name[:20]!r} (expected {', '.join(CODES)})")
        gamma = fields.floats("gamma", 1)[0]
        degree = fields.int("degree", minimum=0)
        coef0 = fields.floats("coef0", 1)[0]
        b = fields.floats("b", n_models)
        coef = sections.get("coef")
        SV = sections.get("SV")
        if not isinstance(SV, Chunk):
            fields.fail("n_models", "section SV (csr) missing")
        if coef is None or isinstance(coef, Chunk) or coef.shape != (SV.n_rows, n_models):
            fields.fail("n_models", f"section coef must be {SV.n_rows} x {n_models}")
        info = dict(header)
        nu_used = None
        if "nu_used" in info:
            try:
                nu_used = [float(t) for t in str(info["nu_used"]).split()]
            except ValueError:
                nu_used = None
        return read_probability(cls(labels=labels, SV=SV, coef=coef, b=b,
                              kernel=Kernel(CODES[name], gamma, degree, coef0), n_features=n_features,
                              solver=info.get("solver", ""), header=header, decision=decision,
                              nu_used=nu_used, task=task), fields, header)


def expansion_model(data, order, coefs, results, kernel, n_features, solver):
    """The KernelModel of one kernel expansion per binary problem (one-vs-rest,
    or one problem for two classes): ``coefs[j]`` holds problem j's
    coefficient of every row of ``data``, ``results[j]`` its FitResult (b);
    the support vectors are the rows with a nonzero coefficient in any
    problem, in row order. A training set of one class gives the all-zero
    expansion with b = 1 (every row predicted as that class). The model's
    ``fit_results`` are ``results``."""
    A = np.stack(coefs, axis=1)
    if len(order) == 1:
        A[:] = 0.0
    used = np.flatnonzero(np.any(A != 0.0, axis=1))
    b = np.array([r.b for r in results]) if len(order) > 1 else np.ones(1)
    model = KernelModel(labels=order, SV=take_rows(data, used), coef=A[used], b=b, kernel=kernel,
                        n_features=n_features, solver=solver)
    model.fit_results = results
    return model
