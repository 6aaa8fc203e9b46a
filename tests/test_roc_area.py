"""--loss roc-area (SVMperf's -l 10): the pairwise hinge over every
positive-negative pair, against LIBLINEAR on the pairs written out, and the
area under the ROC curve it buys on an imbalanced set."""
import numpy as np
import pytest
import scipy.sparse as sp

from conftest import bundled
from reference import reset_c_rand
from svmtrain.data.dataset import take_rows
from svmtrain.errors import ParameterError
from svmtrain.io.reader import read_libsvm
from svmtrain.params import TrainParams
from svmtrain.solvers.ocas import ocas_roc
from svmtrain.training.train import train


def _dense(chunk, d):
    return sp.csr_matrix((chunk.values, chunk.indices, chunk.indptr), shape=(chunk.n_rows, d)).toarray()


def _auc(scores, positive):
    """The area under the ROC curve by counting pairs (ties count one half)."""
    s_pos, s_neg = scores[positive], scores[~positive]
    diff = s_pos[:, None] - s_neg[None, :]
    return float((np.sum(diff > 0) + 0.5 * np.sum(diff == 0)) / diff.size)


def _objective(w, X, positive, C):
    """F(w) of ocas_roc's module doc, pair by pair."""
    s = X @ w
    margins = s[positive][:, None] - s[~positive][None, :]
    n, pairs = len(s), margins.size
    return 0.5 * w @ w + C * n / pairs * float(np.sum(np.maximum(0.0, 1.0 - margins)))


def test_optimum_is_liblinears_on_the_pairs_written_out():
    """On 150 rows of heart_scale (3,000+ pairs), the optimum of F equals
    LIBLINEAR -s 3's (the hinge without bias) on the difference vectors
    x_i - x_j of every pair, each with cost C n / (P N), computed independently;
    ocas stops within its -e of it."""
    from liblinear import liblinearutil
    data = take_rows(read_libsvm(bundled("heart_scale.xz")), np.arange(150))
    d = data.n_features
    X = _dense(data, d)
    positive = data.labels == data.labels[0]
    C = 0.5
    model = train(data, TrainParams(solver="ocas", loss="roc-area", C=C, eps=1e-4))
    w = model.W[:d, 0] if model.labels[0] == data.labels[0] else -model.W[:d, 0]
    assert np.all(model.b == 0.0)                       # the bias cancels in every pair
    diffs = (X[positive][:, None, :] - X[~positive][None, :, :]).reshape(-1, d)
    signs = np.where(np.arange(len(diffs)) % 2 == 0, 1.0, -1.0)   # LIBLINEAR needs two labels
    pair_cost = C * len(X) / len(diffs)
    reset_c_rand()
    ref = liblinearutil.train(signs.tolist(), sp.csr_matrix(diffs * signs[:, None]),
                              f"-s 3 -c {pair_cost!r} -e 1e-8 -q")
    w_ref, _ = ref.get_decfun(ref.get_labels().index(1))
    F_ref = _objective(np.asarray(w_ref), X, positive, C)
    F = _objective(w, X, positive, C)
    assert F_ref * (1 - 1e-6) <= F <= F_ref * (1 + 1e-4)
    assert model.fit_results[0].info["Q_P"] == pytest.approx(F, rel=1e-9)


def test_roc_area_beats_the_hinge_at_its_best_c_on_an_imbalanced_set():
    """8,000 rows of a9a (24 % positive): the ROC-area model's test AUC on
    a9a.t is at least the hinge SVM's at the best C of a small grid."""
    tr = take_rows(read_libsvm(bundled("a9a.xz")), np.arange(8000))
    te = read_libsvm(bundled("a9a.t.xz"))
    positive = te.labels == 1.0

    def auc(model):
        s = model.decision_function(te)[:, 0]
        return _auc(s if model.labels[0] == 1.0 else -s, positive)
    hinge = max(auc(train(tr, TrainParams(solver="ocas", C=C))) for C in (0.01, 0.1, 1.0))
    roc = auc(train(tr, TrainParams(solver="ocas", loss="roc-area", C=0.1)))
    assert roc >= hinge, (roc, hinge)


def test_roc_pass_is_the_general_pair_pass_of_one_query():
    """The two-level pass (sorts and binary searches) gives the general
    ranking pass's numbers, ties included (a tie s_j + 1 == s_i is not violated)."""
    from svmtrain.data.queries import QueryGroups
    rng = np.random.default_rng(4)
    scores = np.round(rng.normal(size=500), 1)          # many ties, and s_j + 1 == s_i exactly
    positive = rng.random(500) < 0.3
    coef = np.zeros(500)
    nv, loss = ocas_roc.roc_pass(scores, positive, coef)
    groups = QueryGroups.build(np.zeros(500, np.int64), positive.astype(float))
    g_coef, g_nv, g_loss, _, _ = groups.pair_pass(scores)
    assert nv == g_nv and np.array_equal(coef, g_coef) and loss == pytest.approx(g_loss, rel=1e-12)
    violated = scores[~positive][None, :] + 1.0 > scores[positive][:, None]          # pair by pair
    hinge = 1.0 - scores[positive][:, None] + scores[~positive][None, :]
    assert nv == int(np.sum(violated)) and loss == pytest.approx(float(np.sum(hinge[violated])), rel=1e-12)


def test_pair_cost_and_refusals():
    assert ocas_roc.pair_cost(TrainParams(C=2.0), 10, 21) == pytest.approx(2.0 * 10 / 21)
    data = read_libsvm(bundled("heart_scale.xz"))
    with pytest.raises(ParameterError, match="does not change a ROC-area model"):
        train(data, TrainParams(solver="ocas", loss="roc-area", class_weights={1.0: 2.0}))
    with pytest.raises(ParameterError, match="-s dcd does not train .*roc-area.*-s ocas"):
        train(data, TrainParams(solver="dcd", loss="roc-area"))
