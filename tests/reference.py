"""Independent reference optima from the official LIBLINEAR / LIBSVM packages."""
import ctypes

import numpy as np


def reset_c_rand():
    """srand(1): LIBLINEAR and LIBSVM draw their permutations from the C
    library's rand(), shared by the whole process, so a reference computed
    after other tests' calls would depend on them (on a9a, test accuracy of
    LIBLINEAR -s 3 -e 1e-6 moved by 0.13 points). Call before each train."""
    try:
        ctypes.CDLL(None).srand(1)
    except (OSError, AttributeError):     # no C library symbols to reach: nothing to reset
        pass


def csr(chunk, n_features):
    from scipy import sparse as sp
    return sp.csr_matrix((chunk.values, chunk.indices, chunk.indptr), shape=(chunk.n_rows, n_features))


def hinge_objective(A, y, w, lam, b=0.0, B=-1.0):
    """lambda/2 |w|^2 + mean hinge; w carries the -B weight last when B >= 0."""
    scores = A @ w[:A.shape[1]] + b
    if B >= 0:
        scores = scores + B * w[-1]
    return 0.5 * lam * float(w @ w) + float(np.maximum(0.0, 1.0 - y * scores).mean())


def liblinear_optimum(chunk, y, lam, n_features, B=-1.0):
    """(w, f*) of  lambda/2|w|^2 + mean hinge  by LIBLINEAR -s 3 at eps 1e-6 (C = 1/(lambda n))."""
    from liblinear import liblinearutil
    A = csr(chunk, n_features)
    C = 1.0 / (lam * chunk.n_rows)
    reset_c_rand()
    m = liblinearutil.train(y, A, f"-s 3 -c {C!r} -e 1e-6 -B {B!r} -q")
    d = n_features + (1 if B >= 0 else 0)
    w = np.array([m.w[i] for i in range(d)])
    if m.get_labels()[0] == -1:
        w = -w
    return w, hinge_objective(A, y, w, lam, B=B)


def libsvm_linear_optimum(chunk, y, lam, n_features):
    """(w, b, f*) with an unregularised bias, by LIBSVM's linear C-SVC at eps 1e-6."""
    from libsvm import svmutil
    A = csr(chunk, n_features)
    C = 1.0 / (lam * chunk.n_rows)
    m = svmutil.svm_train(y.tolist(), A, f"-t 0 -c {C!r} -e 1e-6 -q")
    coef = np.array(m.get_sv_coef())[:, 0]
    w = np.zeros(n_features)
    for c, sv in zip(coef, m.get_SV()):
        for j, v in sv.items():
            if j > 0:
                w[j - 1] += c * v
    b = -m.rho[0]
    if m.get_labels()[0] == -1:
        w, b = -w, -b
    return w, b, hinge_objective(A, y, w, lam, b=b)
