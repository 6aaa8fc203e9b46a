"""Probabilities from decision values: Platt's sigmoid and pairwise coupling.

* :func:`platt_fit` fits P(y = 1 | f) = 1 / (1 + exp(A f + B)) to decision
  values ``f`` by the algorithm of H.-T. Lin, C.-J. Lin, R. C. Weng, "A
  note on Platt's probabilistic outputs for support vector machines",
  Machine Learning 68, 2007 (Newton's method with a backtracking line
  search on the regularised targets of Platt's paper), as LIBSVM's
  sigmoid_train.
* :func:`sigmoid` evaluates that model without overflow, as LIBSVM's
  sigmoid_predict.
* :func:`pairwise_coupling` turns pairwise probabilities r_ij = P(i | i or
  j) into class probabilities by the second method of T.-F. Wu, C.-J. Lin,
  R. C. Weng, "Probability estimates for multi-class classification by
  pairwise coupling", JMLR 5, 2004, as LIBSVM's multiclass_probability.

Everything works on whole arrays (rows at once); the only loops are the
solvers' iterations.
"""
import numpy as np

from ..errors import ParameterError

MIN_PROB = 1e-7             # LIBSVM's clip of pairwise probabilities


def sigmoid(f, A, B):
    """1 / (1 + exp(A f + B)), evaluated without overflow (float64 array)."""
    z = np.asarray(f, np.float64) * A + B
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, e / (1.0 + e), 1.0 / (1.0 + e))


def platt_fit(f, positive, max_iter=100, min_step=1e-10, sigma=1e-12, eps=1e-5):
    """(A, B) of the sigmoid that best predicts ``positive`` (bool) from the
    decision values ``f``: the regularised maximum likelihood of Lin, Lin and
    Weng (2007); the same A, B as LIBSVM's sigmoid_train for the same input."""
    f = np.asarray(f, np.float64)
    positive = np.asarray(positive, bool)
    n_pos = int(positive.sum())
    n_neg = len(f) - n_pos
    t = np.where(positive, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    A, B = 0.0, float(np.log((n_neg + 1.0) / (n_pos + 1.0)))

    def value(A, B):
        z = f * A + B
        return float(np.sum(np.where(z >= 0, t * z + np.log1p(np.exp(-z)), (t - 1.0) * z + np.log1p(np.exp(z)))))

    fval = value(A, B)
    for _ in range(max_iter):
        z = f * A + B
        e = np.exp(-np.abs(z))
        p = np.where(z >= 0, e / (1.0 + e), 1.0 / (1.0 + e))
        q = np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
        d2 = p * q
        h11 = sigma + float(np.sum(f * f * d2))
        h22 = sigma + float(np.sum(d2))
        h21 = float(np.sum(f * d2))
        d1 = t - p
        g1 = float(np.sum(f * d1))
        g2 = float(np.sum(d1))
        if abs(g1) < eps and abs(g2) < eps:
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= min_step:
            newA, newB = A + step * dA, B + step * dB
            newf = value(newA, newB)
            if newf < fval + 0.0001 * step * gd:
                A, B, fval = newA, newB, newf
                break
            step /= 2.0
        if step < min_step:
            break
    return A, B


def pairwise_coupling(r, max_iter=None, eps=0.005):
    """Class probabilities float64[n, k] from pairwise ones ``r`` (float64[n, k, k],
    r[:, i, j] = P(i | i or j), r[:, j, i] = 1 - r[:, i, j]): Wu, Lin and Weng's
    second method with LIBSVM's iteration (multiclass_probability: at most
    max(100, k) sweeps, a row stops once max_t |(Qp)_t - p'Qp| < eps / k),
    done for all rows at once; each row gets LIBSVM's numbers."""
    n, k, _ = r.shape
    max_iter = max(100, k) if max_iter is None else max_iter
    Q = -r.transpose(0, 2, 1) * r                       # Q[t, j] = -r_jt r_tj off the diagonal
    diag = np.arange(k)
    Q[:, diag, diag] = np.sum(r ** 2, axis=1) - r[:, diag, diag] ** 2   # Q[t, t] = sum_{j != t} r_jt^2
    p = np.full((n, k), 1.0 / k)
    rows = np.arange(n)
    for _ in range(max_iter):
        Qr, pr = Q[rows], p[rows]
        Qp = np.einsum("nij,nj->ni", Qr, pr)
        pQp = np.einsum("ni,ni->n", pr, Qp)
        going = np.max(np.abs(Qp - pQp[:, None]), axis=1) >= eps / k
        rows, Qr, pr, Qp, pQp = rows[going], Qr[going], pr[going], Qp[going], pQp[going]
        if len(rows) == 0:
            break
        for t in range(k):
            qtt = Qr[:, t, t]
            diff = (pQp - Qp[:, t]) / qtt
            pr[:, t] += diff
            pQp = (pQp + diff * (diff * qtt + 2 * Qp[:, t])) / (1 + diff) / (1 + diff)
            Qp = (Qp + diff[:, None] * Qr[:, t, :]) / (1 + diff)[:, None]
            pr /= (1 + diff)[:, None]
        p[rows] = pr
    return p


def pairwise_probabilities(dec, A, B, k):
    """float64[n, k, k]: LIBSVM's clipped pairwise probabilities from one-vs-one
    decision values ``dec`` (float64[n, k(k-1)/2], pairs (0,1), (0,2), ..., (1,2), ...)."""
    n = dec.shape[0]
    r = np.zeros((n, k, k))
    col = 0
    for i in range(k):
        for j in range(i + 1, k):
            pij = np.clip(sigmoid(dec[:, col], A[col], B[col]), MIN_PROB, 1 - MIN_PROB)
            r[:, i, j], r[:, j, i] = pij, 1 - pij
            col += 1
    return r


PLATT_FOLDS = 5             # LIBSVM's internal cross-validation for -b 1
LAPLACE_LINE = ("Prob. model for test data: target value = predicted value + z,\n"
                "z: Laplace distribution e^(-|z|/sigma)/(2sigma),sigma=")


def fit_probability(data, params, model, train, source=None, log=None, solver=None):
    """-b 1 after training ``model`` on ``data``: a regression model's
    Laplace sigma (:func:`fit_laplace`), a classifier's Platt sigmoids
    (:func:`fit_platt`; on LIBSVM's folds, ``--folds libsvm``, by the
    ``solver`` module's own LIBSVM procedure when it has one: its
    ``PROBABILITY``, "module:function")."""
    if getattr(model, "task", "c") == "r":
        return fit_laplace(data, params, model, train, source, log)
    hook = getattr(solver, "PROBABILITY", None) if params.fold_style == "libsvm" else None
    if hook is not None and not getattr(model, "logistic", False):
        from ..solvers import load
        return load(hook)(data, params, model, data.n_features)
    return fit_platt(data, params, model, train, source)


def held_out_scores(data, params, n_columns, train, source=None, n_labels=None):
    """float64[n, n_columns]: each row's decision values from the model
    ``train`` fits on the other PLATT_FOLDS - 1 folds (folds drawn from
    params.seed, as LIBSVM's internal cross-validation of -b 1). With
    ``n_labels``, a fold whose other rows hold fewer labels is not trained
    and its rows keep 0."""
    import dataclasses
    from ..data.dataset import take_rows
    n = data.n_rows
    inner = dataclasses.replace(params, probability=False)
    scores = np.zeros((n, n_columns))
    for rows, held in _platt_splits(data, params):
        if len(rows) == 0 or (n_labels is not None and len(np.unique(data.labels[rows])) < n_labels):
            continue
        fold_model = train(take_rows(data, rows), inner, n_features=data.n_features, source=source)
        scores[held] = fold_model.decision_function(take_rows(data, held))
    return scores


def _platt_splits(data, params):
    """[(training rows, held-out rows)] of the PLATT_FOLDS internal folds:
    drawn from params.seed, or with ``--folds libsvm`` LIBSVM's (its plain
    shuffle by glibc's rand(), as svm_svr_probability's cross-validation:
    training rows in LIBSVM's order)."""
    n = data.n_rows
    folds = min(PLATT_FOLDS, n)
    if params.fold_style == "libsvm":
        from ..training.libsvm_folds import libsvm_splits
        return libsvm_splits(data.labels, folds, stratified=False)
    fold_of = np.random.default_rng([params.seed, 1]).permutation(n) % folds
    return [(np.flatnonzero(fold_of != k), np.flatnonzero(fold_of == k)) for k in range(folds)]


def fit_platt(data, params, model, train, source=None):
    """Set ``model.prob_A``, ``model.prob_B``: Platt's sigmoid of each score
    column, fitted (:func:`platt_fit`) on the held-out decision values of
    ``data``'s rows (:func:`held_out_scores`, as LIBSVM's
    svm_binary_svc_probability). Column c's positive rows are those of label
    c (binary: of labels[0]). A logistic model needs none and is left alone."""
    if getattr(model, "logistic", False):
        return model
    scores = held_out_scores(data, params, model.n_models, train, source, n_labels=len(model.labels))
    A, B = np.empty(model.n_models), np.empty(model.n_models)
    for c in range(model.n_models):
        A[c], B[c] = platt_fit(scores[:, c], data.labels == model.labels[c])
    model.prob_A, model.prob_B = A, B
    return model


def laplace_sigma(residuals):
    """LIBSVM's svm_svr_probability on held-out residuals y - f(x): the mean
    absolute residual, again over the residuals within 5 std of a Laplace
    distribution of that mean (std = sqrt(2) mae): the maximum-likelihood
    scale of the Laplace noise without its outliers."""
    r = np.abs(np.asarray(residuals, np.float64))
    if len(r) == 0:
        return 0.0
    inside = r <= 5.0 * np.sqrt(2.0) * float(np.mean(r))
    return float(np.mean(r[inside]))


def fit_laplace(data, params, model, train, source=None, log=None):
    """Set ``model.laplace_sigma`` from held-out predictions
    (:func:`held_out_scores`) as LIBSVM's -s 3 -b 1, and say LIBSVM's line."""
    predictions = held_out_scores(data, params, 1, train, source)[:, 0]
    sigma = laplace_sigma(data.labels - predictions)
    if not sigma > 0:
        raise ParameterError("-b 1: the held-out predictions fit the targets exactly (sigma 0); "
                             "there is no noise to model")
    model.laplace_sigma = sigma
    if log is not None:
        log(f"{LAPLACE_LINE} {sigma:g}")
    return model
