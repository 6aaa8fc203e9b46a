"""``-b 1`` of ``-s smo`` on LIBSVM's folds (``--folds libsvm``, the default
of LIBSVM's own command lines): the Platt sigmoid of each one-vs-one pair
fitted as LIBSVM 3.24's svm_binary_svc_probability fits it, so that the
model's probA / probB (and ``svm-predict -b 1``'s probabilities) are
LIBSVM's.

For each pair of classes (a, c), in LIBSVM's order, before the pair's own
model: its rows (class a's in file order, then class c's; y = +1, -1) are
shuffled with glibc's ``rand()`` (seed 1, one stream over all the pairs,
as one svm-train process draws it: ``j = i + rand() % (l - i)``), cut into
5 consecutive folds, and each fold's decision values come from a C-SVC
(or nu-SVC) trained on the other rows, in LIBSVM's order (``perm[:begin]``,
then ``perm[end:]``, grouped by class, +1 first) with bounds C w_a for
+1 and C w_c for -1; a fold whose other rows hold one class only gets
+1 / -1 (none: 0). The sigmoid is fitted to those values
(:func:`svmtrain.models.probability.platt_fit`, LIBSVM's sigmoid_train).
The decision values are this package's sums, so probA / probB agree with
LIBSVM's to the solver's tolerance, not to the last bit.
"""
import numpy as np

from ...data.dataset import take_rows
from ...models.kernel import KernelModel
from ...models.probability import platt_fit
from ...training.libsvm_folds import LIBSVM_SEED, plain_perm
from ..._numba._crand_kernels import rand_state
from .smo import kernel_of, solve_binary

FOLDS = 5


def libsvm_platt(data, params, model, n_features):
    """Set ``model.prob_A``, ``model.prob_B`` (one per one-vs-one pair of
    ``model.labels``) as LIBSVM's -b 1 does (module doc). ``data``: the
    training rows of ``model``."""
    order = np.asarray(model.labels)
    kernel = kernel_of(params, n_features)
    C = params.resolved_C(data.n_rows)
    weight = {c: params.class_weights.get(float(c), 1.0) for c in order}
    state = rand_state(LIBSVM_SEED)
    A, B = [], []
    for a in range(len(order)):
        for c in range(a + 1, len(order)):
            rows = np.concatenate([np.flatnonzero(data.labels == order[a]), np.flatnonzero(data.labels == order[c])])
            y = np.where(data.labels[rows] == order[a], 1.0, -1.0)
            scores = _pair_scores(take_rows(data, rows), y, C * weight[order[a]], C * weight[order[c]], kernel,
                                  params, n_features, state)
            pa, pb = platt_fit(scores, y > 0)
            A.append(pa)
            B.append(pb)
    model.prob_A, model.prob_B = np.array(A), np.array(B)
    return model


def _pair_scores(pair, y, Cp, Cn, kernel, params, n_features, state):
    """The held-out decision values of one pair's rows (LIBSVM's dec_values)."""
    l = len(y)
    perm, fold_start = plain_perm(np.int64(l), np.int64(FOLDS), state)
    scores = np.zeros(l)
    for k in range(FOLDS):
        begin, end = fold_start[k], fold_start[k + 1]
        rest = np.concatenate([perm[:begin], perm[end:]])
        held = perm[begin:end]
        positives = int(np.count_nonzero(y[rest] > 0))
        if positives == 0 or positives == len(rest):
            scores[held] = 0.0 if len(rest) == 0 else (1.0 if positives else -1.0)
            continue
        rest = np.concatenate([rest[y[rest] > 0], rest[y[rest] < 0]])    # svm_train's grouping, +1 first
        sub = take_rows(pair, rest)
        coef = _train(sub, y[rest], Cp, Cn, kernel, params, n_features)
        fold_model = KernelModel(labels=np.array([1.0, -1.0]), SV=sub, coef=coef[0][:, None], b=[coef[1]],
                                 kernel=kernel, n_features=n_features, solver="smo", decision="ovr")
        scores[held] = fold_model.decision_function(take_rows(pair, held))[:, 0]
    return scores


def _train(sub, y, Cp, Cn, kernel, params, n_features):
    """(coefficients y alpha over ``sub``'s rows, intercept -rho) of the
    fold's C-SVC, or nu-SVC with ``--nu``."""
    if params.nu is not None:
        from .smo_nu import solve_nu_svc
        coef, rho, _ = solve_nu_svc(sub, y, float(params.nu), kernel, params, None, n_features)
        return coef, -rho
    alpha, rho, _ = solve_binary(sub, y, np.where(y > 0, Cp, Cn), kernel, params, None, n_features)
    return y * alpha, -rho
