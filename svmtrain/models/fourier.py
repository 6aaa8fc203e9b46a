"""A linear model on random Fourier features (``-s asset --approx fourier``):
scores = z(x) W + b, with the map z of :class:`svmtrain.mercer.feature_maps.FourierMap`."""
from dataclasses import dataclass, field

import numpy as np

from ..mercer.feature_maps import FourierMap, row_blocks
from .linear import ScoredModel


@dataclass
class FourierModel(ScoredModel):
    """A linear model on random Fourier features: scores = z(x) W + b.

    ``W`` holds one column per binary problem (1 for two labels, k for
    one-vs-rest), as :class:`svmtrain.models.linear.LinearModel`'s W does.
    """
    labels: np.ndarray          # float64[k], LIBLINEAR's label order
    omega: np.ndarray           # float64[n_features, D]
    phases: np.ndarray          # float64[D]
    W: np.ndarray               # float64[D, m]
    b: np.ndarray               # float64[m]
    n_features: int
    solver: str = "asset"
    header: list = field(default_factory=list)
    task: str = "c"             # svmtrain.tasks: "c" classification, "r" regression (no labels, one column),
                                #   "o" one-class (labels 1 -1, one column)

    def __post_init__(self):
        self.labels = np.asarray(self.labels, np.float64)
        self.W = np.ascontiguousarray(self.W, np.float64)
        if self.W.ndim == 1:
            self.W = self.W.reshape(-1, 1)
        self.b = np.asarray(self.b, np.float64).reshape(-1)
        self.map = FourierMap(self.omega, self.phases)
        self.omega, self.phases = self.map.omega, self.map.phases

    @property
    def n_models(self):
        return self.W.shape[1]

    @property
    def dim(self):
        return self.W.shape[0]

    def _scores(self, chunk):
        """float64[n, m]: z(x) W + b for each row, mapped in blocks of rows."""
        n = chunk.n_rows
        out = np.empty((n, self.n_models), np.float64)
        for lo, hi in row_blocks(n, self.dim):
            Z = self.map.transform(chunk, rows=np.arange(lo, hi, dtype=np.int64))
            np.matmul(Z, self.W, out=out[lo:hi])
        out += self.b
        return out

    # --- model files (svmtrain.io.model_io) ---
    KIND = "fourier"
    FIELDS = ("labels", "n_features", "n_models", "n_random_features", "b")

    def file_fields(self):
        from .linear import probability_fields
        return [("task", self.task), ("labels", self.labels), ("n_features", self.n_features),
                ("n_models", self.n_models), ("n_random_features", self.dim), ("b", self.b)] + probability_fields(self)

    def file_sections(self):
        return [("Omega", self.omega), ("phases", self.phases.reshape(1, -1)), ("W", self.W)]

    @classmethod
    def from_file(cls, fields, sections, header, path):
        """Build from a parsed model file; raises ModelFormatError on inconsistency."""
        from .linear import read_probability, task_of_file
        labels = fields.floats("labels")
        n_features = fields.int("n_features")
        n_models = fields.int("n_models", minimum=1)
        D = fields.int("n_random_features")
        b = fields.floats("b", n_models)
        task = task_of_file(fields, header, labels, n_models)
        omega, phases, W = sections.get("Omega"), sections.get("phases"), sections.get("W")
        rows = max(n_features, 1)
        if omega is None or omega.shape != (rows, D):
            fields.fail("n_random_features", f"section Omega must be {rows} x {D}")
        if phases is None or phases.shape != (1, D):
            fields.fail("n_random_features", f"section phases must be 1 x {D}")
        if W is None or W.shape != (D, n_models):
            fields.fail("n_random_features", f"section W must be {D} x {n_models}")
        return read_probability(cls(labels=labels, omega=omega, phases=phases.reshape(-1), W=W, b=b,
                              n_features=n_features, solver=dict(header).get("solver", "asset"), header=header,
                              task=task), fields, header)
