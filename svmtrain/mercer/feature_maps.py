"""Low-dimensional approximations of kernel feature maps (ASSET, section 2.3).

Two maps turn a kernel SVM into a linear one on d-dimensional feature
vectors ``V_i = phi(x_i)`` with ``phi(s).phi(t) ~ K(s, t)``:

* :class:`FourierMap` -- random Fourier features for the RBF kernel
  ``exp(-gamma |u - v|^2)`` (Rahimi and Recht 2008; the paper's eq. 8 with
  sigma = gamma): ``z(x) = sqrt(2/D) cos(Omega^T x + b)`` with the columns of
  Omega drawn from N(0, 2 gamma I) and b from U[0, 2 pi). Computed from the
  sparse rows directly (sparse row times dense Omega).
* :class:`NystromMap` -- the kernel-matrix approximation of eqs. 6-7: s
  landmarks S drawn from the training rows without replacement, the
  eigendecomposition K_SS = Q D Q^T, eigenvalues below ``eig_threshold``
  dropped, and ``V = K(., S) Q_d D_d^{-1/2}``. Works for every LIBSVM kernel.
  A linear model gamma on these features is the kernel expansion
  ``alpha_S = Q_d D_d^{-1/2} gamma`` over the landmarks (section 2.4), so a
  Nystrom model is an ordinary :class:`svmtrain.models.kernel.KernelModel`.

:class:`svmtrain.models.fourier.FourierModel` is the trained model of the Fourier map: Omega, the
phases, one weight column per binary problem and the biases; it predicts
chunk by chunk and reads/writes svmtrain model files (kind ``fourier``).
"""
import math

import numpy as np

from ._feature_map_kernels import fourier_rows, landmark_kernel_rows
from ..data.chunk_source import take_source_rows
from ..data.dataset import take_rows
from ..errors import ParameterError
from .functions import RBF, Kernel, kernel_matrix, sq_norms

# dense scratch of a block of mapped rows is kept under this many bytes
BLOCK_BYTES = 32 << 20


def row_blocks(n, width, itemsize=8):
    """[lo, hi) blocks of rows whose n x width scratch fits in BLOCK_BYTES."""
    step = max(1, BLOCK_BYTES // (itemsize * max(width, 1)))
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]


class FourierMap:
    """Random Fourier features for exp(-gamma |u - v|^2); see the module docstring."""

    def __init__(self, omega, phases):
        self.omega = np.ascontiguousarray(omega, np.float64)      # n_features x D
        self.phases = np.ascontiguousarray(phases, np.float64).reshape(-1)  # D
        if self.omega.shape[1] != self.phases.shape[0]:
            raise ValueError("omega and phases disagree on D")
        self.scale = math.sqrt(2.0 / self.dim) if self.dim else 0.0

    @classmethod
    def draw(cls, n_features, D, gamma, rng):
        """Omega ~ N(0, 2 gamma) entrywise (n_features x D), phases ~ U[0, 2 pi)."""
        omega = rng.normal(0.0, math.sqrt(2.0 * gamma), size=(max(int(n_features), 1), int(D)))
        phases = rng.uniform(0.0, 2.0 * math.pi, size=int(D))
        return cls(omega, phases)

    @property
    def dim(self):
        return self.omega.shape[1]

    @property
    def n_features(self):
        return self.omega.shape[0]

    def transform_rows(self, chunk, rows, out):
        """out[:] = z(x) of ``rows`` of ``chunk`` (as :meth:`transform`; no temporaries)."""
        return self.transform(chunk, rows=rows, out=out)

    def transform(self, chunk, rows=None, out=None, dtype=np.float64):
        """float[len(rows), D]: z(x) of ``rows`` (default all) of ``chunk``."""
        rows = np.arange(chunk.n_rows, dtype=np.int64) if rows is None else np.ascontiguousarray(rows, np.int64)
        if out is None:
            out = np.empty((len(rows), self.dim), dtype)
        if len(rows):
            fourier_rows(chunk.indptr, chunk.indices, chunk.values, rows, self.omega, self.phases,
                         self.scale, out)
        return out


class NystromMap:
    """V = K(., S) Q_d D_d^{-1/2} over landmark rows S; see the module docstring."""

    def __init__(self, landmarks, kernel, eig_threshold):
        self.landmarks = landmarks
        self.kernel = kernel
        self.landmark_sq = sq_norms(landmarks.indptr, landmarks.values)
        self._by_feature = None
        # K_SS from the landmarks stored by feature (no dense copy of them,
        # which for many features would be a 32 MB block)
        s = landmarks.n_rows
        K = np.empty((s, s))
        if s:
            code, gamma, degree, coef0 = kernel.params()
            landmark_kernel_rows(landmarks.indptr, landmarks.indices, landmarks.values,
                                 np.arange(s, dtype=np.int64), *self.by_feature(), self.landmark_sq,
                                 code, gamma, degree, coef0, K)
        K = 0.5 * (K + K.T)
        evals, Q = np.linalg.eigh(K)
        keep = evals >= eig_threshold
        self.eigenvalues = evals[keep][::-1].copy()           # descending
        self.n_dropped = int(len(evals) - keep.sum())
        # projection P = Q_d D_d^{-1/2} (s x d), largest eigenvalue first
        self.projection = np.ascontiguousarray(Q[:, keep][:, ::-1] / np.sqrt(self.eigenvalues))

    @classmethod
    def draw(cls, data, s, kernel, eig_threshold, rng):
        """s landmarks drawn uniformly without replacement from the rows of
        ``data`` (a Chunk, or a chunk source: then read from its blocks)."""
        s = min(int(s), data.n_rows)
        rows = np.sort(rng.choice(data.n_rows, size=s, replace=False))
        return cls(take_source_rows(data, rows), kernel, eig_threshold)

    @property
    def dim(self):
        return self.projection.shape[1]

    @property
    def n_landmarks(self):
        return self.landmarks.n_rows

    def transform(self, chunk, rows=None, out=None, dtype=np.float64):
        """float[len(rows), d]: the rows of V for ``rows`` (default all) of ``chunk``."""
        if rows is not None:
            chunk = take_rows(chunk, rows)
        n = chunk.n_rows
        if out is None:
            out = np.empty((n, self.dim), dtype)
        if n == 0 or self.dim == 0:
            out[:] = 0.0
            return out
        sq = sq_norms(chunk.indptr, chunk.values)
        for lo, hi in row_blocks(n, self.n_landmarks):
            part = take_rows(chunk, np.arange(lo, hi)) if (lo, hi) != (0, n) else chunk
            Kx = kernel_matrix(self.kernel, part, sq[lo:hi], self.landmarks, self.landmark_sq)
            if out.dtype == np.float64:
                np.matmul(Kx, self.projection, out=out[lo:hi])
            else:
                out[lo:hi] = Kx @ self.projection
        return out

    def transform_rows(self, chunk, rows, out):
        """out[:] = the rows of V for ``rows`` of ``chunk``, for a few rows at
        a time: kernel rows from the landmarks stored by feature (no dense
        copy of them, no row copy), then the projection. Temporaries:
        len(rows) x (s + d) float64. Equal to :meth:`transform` up to rounding."""
        rows = np.ascontiguousarray(rows, np.int64)
        Kx = np.empty((len(rows), self.n_landmarks))
        if len(rows) and self.n_landmarks:
            code, gamma, degree, coef0 = self.kernel.params()
            landmark_kernel_rows(chunk.indptr, chunk.indices, chunk.values, rows, *self.by_feature(),
                                 self.landmark_sq, code, gamma, degree, coef0, Kx)
        if out.dtype == np.float64:
            np.matmul(Kx, self.projection, out=out)
        else:
            out[:] = Kx @ self.projection
        return out

    def by_feature(self):
        """(F_ptr, F_landmark, F_values): the landmarks as CSC, built once
        (12 bytes per stored entry + 8 per feature)."""
        if self._by_feature is None:
            L = self.landmarks
            order = np.argsort(L.indices, kind="stable")
            ptr = np.zeros(L.n_features + 1, np.int64)
            np.cumsum(np.bincount(L.indices, minlength=L.n_features), out=ptr[1:])
            owner = np.repeat(np.arange(L.n_rows, dtype=np.int32), np.diff(L.indptr))
            self._by_feature = (ptr, owner[order], np.ascontiguousarray(L.values[order]))
        return self._by_feature

    def expansion(self, gamma):
        """alpha_S = Q_d D_d^{-1/2} gamma: landmark coefficients of linear weights (d x m)."""
        return self.projection @ np.asarray(gamma, np.float64)


def build_map(data, params, n_features, rng):
    """The feature map of ``params`` (approx, dim, kernel, eig_threshold)
    fitted on ``data`` (a Chunk or a chunk source)."""
    kernel = Kernel(2 if params.kernel_type is None else params.kernel_type,
                    params.gamma, params.degree, params.coef0).resolved(n_features)
    if params.approx == "fourier":
        if kernel.code != RBF:
            raise ParameterError(f"--approx fourier needs the RBF kernel (-t 2); got -t {kernel.code} "
                                 f"({kernel.name}); use --approx nystrom")
        return FourierMap.draw(n_features, params.dim, kernel.gamma, rng), kernel
    if params.approx == "nystrom":
        return NystromMap.draw(data, params.dim, kernel, params.eig_threshold, rng), kernel
    raise ParameterError(f"--approx must be nystrom or fourier (got {params.approx})")
