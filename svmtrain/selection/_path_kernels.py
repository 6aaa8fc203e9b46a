"""Numba kernel of the -C path (:mod:`svmtrain.selection.param_search`):
a fold's binary score in one pass over its test rows, without building a model.

``tests/test_param_search.py`` checks it against ``LinearModel.predict``.
"""
from numba import njit

from ..solvers._common import _U


@njit(cache=True, nogil=True)
def binary_correct(indptr, indices, values, w, n_features, B, has_bias, positive):
    """How many rows i predict their own side: (score_i > 0) == positive[i],
    with score_i = x_i . w[:n_features] (the features in row order, those >=
    n_features left out), then + B w[n_features] when ``has_bias``: the sum of
    a one-column LinearModel's scores (``_score_row``) and its predict's
    sign rule (the first label when the score is > 0), bit for bit."""
    right = 0
    for i in range(indptr.shape[0] - 1):
        s = 0.0
        for p in range(_U(indptr[i]), _U(indptr[i + 1])):
            j = _U(indices[p])
            if j < n_features:
                s += values[p] * w[j]
        if has_bias:
            s += B * w[n_features]
        s += 0.0                # the model's b (0): as _score_row, -0.0 becomes 0.0
        if (s > 0.0) == positive[i]:
            right += 1
    return right
