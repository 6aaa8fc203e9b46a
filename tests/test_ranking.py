"""Ranking (--task p): the pairwise kernels against brute force, -s ocas against
LIBLINEAR on the explicit pair differences, model files, both commands."""
import numpy as np
import pytest
from click.testing import CliRunner

import naive_ranking as N
from reference import reset_c_rand
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main
from svmtrain.data.dataset import Chunk
from svmtrain.errors import InputFormatError, ParameterError
from svmtrain.io.model_io import load_model, save_model
from svmtrain.models.linear import LinearModel
from svmtrain.params import TrainParams
from svmtrain.data.queries import QueryGroups, ranking_summary
from svmtrain.data import _query_kernels as K
from svmtrain.training.train import query_folds, train


def synthetic(n=500, d=15, queries=30, seed=0, noise=0.5, shuffle=False, sample=0):
    """Sparse rows in ``queries`` queries of varying size, graded relevance 0-3
    from a hidden linear score (drawn from ``seed``) plus noise; ``sample``
    draws other rows of the same model. ``shuffle``: queries not contiguous."""
    w = np.random.default_rng(seed).normal(size=d)
    rng = np.random.default_rng([seed, sample])
    dense = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.5)
    score = dense @ w
    noisy = score + noise * score.std() * rng.normal(size=n)
    y = np.searchsorted(np.quantile(noisy, [0.5, 0.8, 0.95]), noisy, side="right").astype(np.float64)
    qid = np.sort(rng.integers(1, queries + 1, n)).astype(np.int64)
    if shuffle:
        p = rng.permutation(n)
        dense, y, qid = dense[p], y[p], qid[p]
    return chunk_of(dense, y, qid), dense


def chunk_of(dense, y, qid):
    rows, cols = np.nonzero(dense)
    n = dense.shape[0]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))]).astype(np.int64)
    return Chunk(labels=np.asarray(y, np.float64), indptr=indptr, indices=cols.astype(np.int32),
                 values=dense[rows, cols], qid=np.asarray(qid, np.int64))


def write_text(path, chunk):
    lines = []
    for i in range(chunk.n_rows):
        lo, hi = chunk.indptr[i], chunk.indptr[i + 1]
        feats = " ".join(f"{j + 1}:{float(v)!r}" for j, v in zip(chunk.indices[lo:hi], chunk.values[lo:hi]))
        q = f" qid:{chunk.qid[i]}" if chunk.qid[i] else ""
        lines.append(f"{chunk.labels[i]:g}{q} {feats}".rstrip())
    path.write_text("\n".join(lines) + "\n")


def pair_objective(dense, y, qid, w, cost):
    """1/2 |w|^2 + cost * sum over pairs of the hinge, pair by pair."""
    i, j = N.pairs(qid, y)
    return 0.5 * w @ w + cost * np.maximum(0.0, 1.0 - (dense[i] - dense[j]) @ w).sum()


# ---------------------------------------------------------------- kernels
@pytest.mark.parametrize("seed", range(6))
def test_pair_pass_equals_pair_enumeration(seed):
    """coef, violated pairs and loss equal the brute-force twin, with ties in
    labels and scores (scores on a half-integer grid, so margins of exactly 1
    and 0 occur), several queries, graded relevance, unsorted qids."""
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n = int(rng.integers(1, 60))
        qid = rng.integers(1, 6, n)
        y = rng.integers(0, int(rng.integers(1, 6)), n).astype(float) * (1.5 if seed % 2 else 1.0)
        s = rng.integers(-6, 7, n) * 0.5
        g = QueryGroups.build(qid, y)
        assert g.n_pairs == len(N.pairs(qid, y)[0])
        for margin, strict in ((1.0, True), (1.0, False), (0.0, False), (0.0, True), (0.5, True)):
            coef, viol, loss, q_viol, _ = g.pair_pass(s, margin, strict)
            c2, v2, l2 = N.pair_pass(s, qid, y, margin, strict)
            assert viol == v2 and q_viol.sum() == v2
            np.testing.assert_array_equal(coef, c2)
            assert loss == pytest.approx(l2, abs=1e-9)


def test_pair_pass_random_scores_and_real_labels():
    """Real-valued labels (many levels) and continuous scores."""
    rng = np.random.default_rng(7)
    n = 300
    qid, y, s = rng.integers(0, 9, n), rng.normal(size=n), rng.normal(size=n) * 2
    coef, viol, loss, _, _ = QueryGroups.build(qid, y).pair_pass(s)
    c2, v2, l2 = N.pair_pass(s, qid, y)
    np.testing.assert_array_equal(coef, c2)
    assert viol == v2 and loss == pytest.approx(l2, rel=1e-12)


def test_parallel_and_serial_kernels_agree():
    rng = np.random.default_rng(3)
    n = 2000
    qid, y, s = rng.integers(1, 50, n), rng.integers(0, 4, n).astype(float), rng.normal(size=n)
    g = QueryGroups.build(qid, y)
    outs = []
    for run in (K.pair_pass_serial, K.pair_pass_parallel):
        L, Q = g.lptr[-1], g.n_queries
        out = [np.zeros(n), np.empty(n), np.empty(n, np.int64), np.zeros(L, np.int64), np.zeros(L, np.int64),
               np.zeros(L, np.int64), np.zeros(Q, np.int64), np.zeros(Q)]
        run(s, g.lev, g.order, g.qptr, g.lptr, 1.0, True, out[0], *out[1:])
        outs.append((out[0], out[6], out[7]))
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


def test_subgradient_is_the_cut_of_the_pair_problem():
    """The ocas cut at w (c sum_k coef_k x_k) is the hinge subgradient of the explicit pair problem."""
    from svmtrain.solvers.ocas.ocas_ranking import RankingData
    chunk, dense = synthetic(n=120, d=6, queries=7, seed=2)
    w = np.random.default_rng(0).normal(size=6)
    g = QueryGroups.build(chunk.qid, chunk.labels)
    data = RankingData(chunk, g, 0.3, 0.0, 7, 1)
    data.out_b[:] = dense @ w
    loss, _, nv, bsum = data.move(0.0, 0.0)
    a = data.cut()
    i, j = N.pairs(chunk.qid, chunk.labels)
    D = dense[i] - dense[j]
    viol = 1.0 - D @ w > 0
    np.testing.assert_allclose(a[:6], 0.3 * D[viol].sum(axis=0), rtol=1e-12, atol=1e-12)
    assert a[6] == 0.0 and nv == viol.sum() and bsum == pytest.approx(0.3 * viol.sum())
    assert loss == pytest.approx(0.3 * np.maximum(0, 1 - D @ w).sum(), rel=1e-12)


# ---------------------------------------------------------------- groups and measures
def test_query_groups_of_noncontiguous_queries():
    qid = np.array([3, 1, 3, 2, 1, 3])
    y = np.array([1.0, 0.0, 0.0, 5.0, 2.0, 1.0])
    g = QueryGroups.build(qid, y)
    np.testing.assert_array_equal(g.qids, [1, 2, 3])
    np.testing.assert_array_equal(g.order, [1, 4, 3, 0, 2, 5])     # stable within a query
    np.testing.assert_array_equal(g.qptr, [0, 2, 3, 6])
    np.testing.assert_array_equal(g.lev, [1, 0, 0, 0, 1, 1])
    np.testing.assert_array_equal(g.q_pairs, [1, 0, 2])


def test_ranking_summary_matches_the_twin():
    rng = np.random.default_rng(5)
    n = 400
    qid, y = rng.integers(1, 30, n), rng.integers(0, 4, n).astype(float)
    s = np.round(rng.normal(size=n), 1)                            # ties in the scores
    summary = ranking_summary(s, y, qid)
    i, j = N.pairs(qid, y)
    assert summary.pairs == len(i) and summary.correct == int(np.sum(s[i] > s[j]))
    assert summary.ndcg == pytest.approx(N.ndcg(s, y, qid), rel=1e-12)


TINY = "2 qid:1 1:1\n0 qid:1 1:2\n1 qid:1 1:3\n1 qid:2 1:1\n0 qid:2 1:1\n0 qid:3 1:5\n"


def test_svm_predict_on_a_tiny_file_by_hand(tmp_path):
    """score = x1. Query 1: pairs (2>0) wrong, (2>1) wrong, (1>0) right; query 2:
    a tie, wrong; query 3: no pair and no gain (skipped by NDCG). NDCG@10 of
    query 1: DCG = 1/log2(2) + 3/log2(4) = 2.5, ideal 3 + 1/log2(3); query 2: 1."""
    (tmp_path / "t").write_text(TINY)
    model = LinearModel(labels=[], W=np.array([[1.0]]), n_features=1, task="p", solver="ocas")
    save_model(model, tmp_path / "m")
    r = CliRunner().invoke(predict_main, [str(tmp_path / "t"), str(tmp_path / "m"), str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "o").read_text() == "1\n2\n3\n1\n1\n5\n"
    ndcg = (2.5 / (3 + 1 / np.log2(3)) + 1.0) / 2
    assert r.output == f"Pairwise accuracy = 25% (1/4)\nNDCG@10 = {ndcg:.6g} (2 of 3 queries)\n"


# ---------------------------------------------------------------- training
def liblinear_on_pairs(flags):
    """LIBLINEAR (``flags``: its solver and tolerance, no bias) on the explicit
    pair differences (label +1) of a 30-query synthetic set at C = 20:
    (chunk, dense rows, C, pair cost, LIBLINEAR's w)."""
    from liblinear import liblinearutil as util
    chunk, dense = synthetic(n=500, d=15, queries=30, seed=1)
    i, j = N.pairs(chunk.qid, chunk.labels)
    D = dense[i] - dense[j]
    C = 20.0
    cost = C / len(np.unique(chunk.qid))
    reset_c_rand()
    m = util.train([1] * len(D), [{k + 1: v for k, v in enumerate(row) if v} for row in D],
                   f"{flags} -c {cost!r} -q")
    return chunk, dense, C, cost, np.array([m.w[k] for k in range(dense.shape[1])])


@pytest.fixture(scope="module")
def liblinear_pairs():
    """LIBLINEAR -s 3 (hinge) on the pair differences."""
    return liblinear_on_pairs("-s 3 -e 1e-7")


@pytest.mark.parametrize("method", ["ocas", "cp"])
def test_ocas_ranking_reaches_the_pair_problem_optimum(liblinear_pairs, method):
    chunk, dense, C, cost, w_ll = liblinear_pairs
    eps = 1e-4
    model = train(chunk, TrainParams(solver="ocas", task="p", C=C, eps=eps, ocas_method=method))
    r = model.fit_results[0]
    ours = pair_objective(dense, chunk.labels, chunk.qid, model.W[:, 0], cost)
    theirs = pair_objective(dense, chunk.labels, chunk.qid, w_ll, cost)
    assert r.converged and r.info["exit"] == "TolRel"
    assert ours == pytest.approx(r.info["Q_P"], rel=1e-9)          # Q_P is the pair objective
    assert r.info["Q_D"] <= theirs * (1 + 1e-9)                    # a lower bound
    assert ours <= theirs * (1 + eps)                              # within TolRel of the optimum
    assert r.objective == pytest.approx(ours / (len(np.unique(chunk.qid)) * C))


def test_pair_accuracy_at_least_liblinear_on_the_pair_file(liblinear_pairs):
    """On the training pairs and on held-out queries of the same hidden model;
    the two solutions are eps-optimal for the same objective, so allow 0.5 %
    of the pairs for the difference of two near-optima."""
    chunk, dense, C, cost, w_ll = liblinear_pairs
    model = train(chunk, TrainParams(solver="ocas", task="p", C=C, eps=1e-4))
    test, tdense = synthetic(n=500, d=15, queries=30, seed=1, sample=1)
    for data, A in ((chunk, dense), (test, tdense)):
        ours = ranking_summary(A @ model.W[:, 0], data.labels, data.qid).pair_accuracy
        theirs = ranking_summary(A @ w_ll, data.labels, data.qid).pair_accuracy
        assert ours >= theirs - 0.005
        assert ours > 0.8


def test_svm_rank_and_svmlight_c_conventions_agree():
    chunk, _ = synthetic(n=200, queries=10, seed=4)
    Q = len(np.unique(chunk.qid))
    a = train(chunk, TrainParams(solver="ocas", task="p", C=5.0 * Q, eps=1e-6))
    b = train(chunk, TrainParams(solver="ocas", task="p", C=5.0, rank_c="svmlight", eps=1e-6))
    assert a.fit_results[0].info["pair_cost"] == b.fit_results[0].info["pair_cost"] == 5.0
    np.testing.assert_allclose(a.W, b.W, rtol=1e-12)


def test_noncontiguous_queries_train_the_same_model():
    chunk, dense = synthetic(n=300, queries=12, seed=6)
    p = np.random.default_rng(0).permutation(chunk.n_rows)
    shuffled = chunk_of(dense[p], chunk.labels[p], chunk.qid[p])
    a = train(chunk, TrainParams(solver="ocas", task="p", C=3.0, eps=1e-6))
    b = train(shuffled, TrainParams(solver="ocas", task="p", C=3.0, eps=1e-6))
    qa, qb = a.fit_results[0].info["Q_P"], b.fit_results[0].info["Q_P"]
    assert qa == pytest.approx(qb, rel=1e-5)


def test_bias_weight_stays_zero():
    chunk, _ = synthetic(n=200, queries=10, seed=8)
    model = train(chunk, TrainParams(solver="ocas", task="p", bias=1.0))
    assert model.W.shape == (16, 1) and model.W[-1, 0] == 0.0


def test_ranking_refusals(tmp_path):
    chunk, _ = synthetic(n=60, queries=5)
    no_qid = Chunk(chunk.labels, chunk.indptr, chunk.indices, chunk.values, np.zeros(60, np.int64))
    with pytest.raises(InputFormatError, match="rank.train: --task p .* needs qid:"):
        train(no_qid, TrainParams(solver="ocas", task="p"), source="rank.train")
    with pytest.raises(ParameterError, match="-s dcd does not train ranking"):
        train(chunk, TrainParams(solver="dcd", task="p"))
    with pytest.raises(ParameterError, match="applies to classification, not ranking"):
        train(chunk, TrainParams(solver="ocas", task="p", class_weights={1.0: 2.0}))
    with pytest.raises(ParameterError, match="more folds than the 5 queries"):
        query_folds(chunk.qid, 6, np.random.default_rng(0))


# ---------------------------------------------------------------- files and commands
def test_ranking_model_round_trip(tmp_path):
    chunk, _ = synthetic(n=200, queries=10, seed=9)
    model = train(chunk, TrainParams(solver="ocas", task="p", C=2.0))
    save_model(model, tmp_path / "m")
    back = load_model(tmp_path / "m")
    assert back.task == "p" and len(back.labels) == 0
    np.testing.assert_array_equal(back.W, model.W)
    np.testing.assert_array_equal(back.predict(chunk), model.decision_function(chunk)[:, 0])
    text = (tmp_path / "m").read_text().replace("\nlabels \n", "\nlabels 1\n")
    assert text != (tmp_path / "m").read_text()
    (tmp_path / "bad").write_text(text)
    with pytest.raises(Exception, match="ranking model has one score column"):
        load_model(tmp_path / "bad")


def test_query_folds_keep_queries_whole():
    qid = np.repeat(np.arange(1, 21), np.arange(1, 21))
    fold = query_folds(qid, 4, np.random.default_rng(1))
    for q in np.unique(qid):
        assert len(np.unique(fold[qid == q])) == 1
    assert set(fold.tolist()) == {0, 1, 2, 3}


def test_commands_train_predict_and_cross_validate(tmp_path):
    chunk, _ = synthetic(n=400, queries=20, seed=10)
    write_text(tmp_path / "train", chunk)
    r = CliRunner().invoke(train_main, ["-s", "ocas", "--task", "p", "-c", "10", str(tmp_path / "train"),
                                        str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    assert "ranking (20 queries" in r.output
    r = CliRunner().invoke(predict_main, [str(tmp_path / "train"), str(tmp_path / "m"), str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    scores = np.loadtxt(tmp_path / "out")
    summary = ranking_summary(scores, chunk.labels, chunk.qid)
    assert r.output == summary.line() + "\n"
    r = CliRunner().invoke(train_main, ["-s", "ocas", "--task", "p", "-v", "4", str(tmp_path / "train")])
    lines = r.output.strip().splitlines()
    assert r.exit_code == 0 and lines[0].startswith("Cross Validation Pairwise accuracy = ")
    assert lines[1].startswith("Cross Validation NDCG@10 = ")


def test_svmlight_z_p_line_trains_it(tmp_path):
    """SVMlight's -z p -c 1 -b 0: -s ocas --task p with SVMlight's per-pair C."""
    chunk, dense = synthetic(n=300, queries=15, seed=12)
    write_text(tmp_path / "train", chunk)
    r = CliRunner().invoke(train_main, ["-q", "-z", "p", "-c", "1", "-b", "0", "-e", "0.0001",
                                        str(tmp_path / "train"), str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    header = dict(row.split(" ", 1) for row in (tmp_path / "m").read_text().splitlines()[:60] if " " in row)
    assert header["solver"] == "ocas" and header["task"] == "p" and header["rank_c"] == "svmlight"
    Q = len(np.unique(chunk.qid))
    ref = train(chunk, TrainParams(solver="ocas", task="p", C=float(Q), eps=1e-4))
    w = load_model(tmp_path / "m").W[:, 0]
    assert pair_objective(dense, chunk.labels, chunk.qid, w, 1.0) == pytest.approx(
        pair_objective(dense, chunk.labels, chunk.qid, ref.W[:, 0], 1.0), rel=1e-4)


def test_command_line_refusals(tmp_path):
    chunk, _ = synthetic(n=60, queries=5)
    no_qid = Chunk(chunk.labels, chunk.indptr, chunk.indices, chunk.values, np.zeros(60, np.int64))
    write_text(tmp_path / "plain", no_qid)
    r = CliRunner().invoke(train_main, ["-s", "ocas", "--task", "p", str(tmp_path / "plain"), str(tmp_path / "m")])
    assert r.exit_code != 0 and "plain: --task p (ranking) needs qid:" in r.output
    write_text(tmp_path / "train", chunk)
    r = CliRunner().invoke(train_main, ["-s", "ocas", "--task", "p", "--stream", str(tmp_path / "train"),
                                        str(tmp_path / "m")])
    assert r.exit_code != 0 and "cannot be combined with --stream" in r.output
    r = CliRunner().invoke(train_main, ["--rank-c", "svmlight", str(tmp_path / "train"), str(tmp_path / "m")])
    assert r.exit_code != 0 and "--rank-c applies to ranking" in r.output


def test_gen_synthetic_ranking_mode(tmp_path):
    import importlib.util
    from conftest import ROOT
    from svmtrain.io.reader import read_libsvm
    spec = importlib.util.spec_from_file_location("gen_synthetic", ROOT / "scripts" / "gen_synthetic.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    gen.generate(tmp_path / "r", rows=3000, features=400, nnz_per_row=12, queries=50, noise=0.3)
    data = read_libsvm(tmp_path / "r")
    assert data.n_rows == 3000 and len(np.unique(data.qid)) == 50
    assert np.all(np.diff(data.qid) >= 0) and set(np.unique(data.labels)) == {0, 1, 2, 3}
    sizes = np.bincount(data.qid)[1:]
    assert sizes.min() < sizes.max()
    model = train(data, TrainParams(solver="ocas", task="p", C=10.0))
    assert ranking_summary(model.predict(data), data.labels, data.qid).pair_accuracy > 0.75


# ---------------------------------------------------------------- -s tron (L2-loss RankSVM)
@pytest.mark.parametrize("seed", range(4))
def test_pair_sums_equal_pair_enumeration(seed):
    """QueryGroups.pair_sums (serial and parallel kernels) against the
    pair-by-pair twin: ties at the margin, repeated scores, unsorted qids."""
    from svmtrain.data import _query_kernels as KR
    rng = np.random.default_rng(seed)
    n = 300
    qid = rng.integers(0, 9, n)
    y = rng.integers(0, 4, n).astype(float)
    s = np.round(rng.normal(size=n), 1)          # many ties, also at distance exactly 1
    t = rng.normal(size=n)
    g = QueryGroups.build(qid, y)
    got = [a.copy() for a in g.pair_sums(s, t)]
    for a, b in zip(got, N.pair_sums(s, t, qid, y)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    L = g.lptr[-1]
    outs = []
    for kernel in (KR.pair_sums_parallel, KR.pair_sums_serial):
        out = [np.zeros(n) for _ in range(4)]
        kernel(s, t, g.lev, g.order, g.qptr, g.lptr, 1.0, np.empty(n), np.empty(n, np.int64),
               np.zeros(L, np.int64), np.zeros(L, np.int64), np.zeros(L, np.int64), np.zeros(L), np.zeros(L),
               np.zeros(L), *out)
        outs.append(out)
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


def test_tron_minimizes_a_quadratic():
    """The generic TRON on f = 1/2 w'Aw - b'w reaches A^-1 b."""
    from svmtrain.solvers.tron import tron
    rng = np.random.default_rng(0)
    M = rng.normal(size=(20, 20))
    A = M @ M.T + np.eye(20)
    b = rng.normal(size=20)

    class Quadratic:
        def fun(self, w):
            return 0.5 * w @ A @ w - b @ w

        def grad(self, w):
            return A @ w - b

        def hess_vec(self, v):
            return A @ v

    w = np.zeros(20)
    f, it, cg, converged = tron.minimize(Quadratic(), w, 1e-6, 100)
    w_star = np.linalg.solve(A, b)
    assert converged and np.linalg.norm(A @ w - b) <= 1e-6 * np.linalg.norm(b)
    assert f == pytest.approx(-0.5 * b @ w_star, rel=1e-10)


@pytest.fixture(scope="module")
def liblinear_squared_pairs():
    """LIBLINEAR -s 2 (squared hinge) on the pair differences."""
    return liblinear_on_pairs("-s 2 -e 1e-8")


@pytest.mark.parametrize("B", [-1.0, 1.0])
def test_tron_ranking_reaches_liblinear_on_the_pair_file(liblinear_squared_pairs, B):
    """-s tron --task p: the L2-loss pair objective of LIBLINEAR -s 2 on the
    explicit pair file (to 1e-9 at -e 1e-6); its reported F is the pair-by-pair
    objective of its w; -B's weight stays 0."""
    chunk, dense, C, cost, w_ll = liblinear_squared_pairs
    model = train(chunk, TrainParams(solver="tron", task="p", C=C, eps=1e-6, bias=B))
    r = model.fit_results[0]
    w = model.W[:dense.shape[1], 0]
    ours = N.squared_pair_objective(dense, chunk.qid, chunk.labels, w, cost)
    theirs = N.squared_pair_objective(dense, chunk.qid, chunk.labels, w_ll, cost)
    assert r.converged and model.task == "p"
    assert ours == pytest.approx(r.info["primal_C_form"], rel=1e-10)
    assert theirs * (1 - 1e-12) <= ours <= theirs * (1 + 1e-9)
    if B > 0:
        assert model.W[-1, 0] == 0.0
    # it ranks as well as the pairwise hinge
    hinge = train(chunk, TrainParams(solver="ocas", task="p", C=C, eps=1e-4))
    acc = ranking_summary(dense @ w, chunk.labels, chunk.qid).pair_accuracy
    assert acc >= ranking_summary(dense @ hinge.W[:dense.shape[1], 0], chunk.labels, chunk.qid).pair_accuracy - 0.01


def test_tron_ranking_command_lines(tmp_path):
    """svm-train -s tron --task p (the loss defaults to tron's) writes a model
    whose header names the loss; svm-predict prints the ranking lines; -s tron
    refuses the hinge (its classification losses are LIBLINEAR -s 2's and -s 0's) naming the solvers that train it."""
    chunk, _ = synthetic(n=200, queries=10, seed=4)
    data = tmp_path / "r.txt"
    write_text(data, chunk)
    model = tmp_path / "r.model"
    r = CliRunner().invoke(train_main, ["-s", "tron", "--task", "p", "-c", "3", str(data), str(model)])
    assert r.exit_code == 0, r.output
    m = load_model(model)
    assert m.task == "p" and dict(m.header).get("loss") == "pairwise-squared-hinge"
    p = CliRunner().invoke(predict_main, [str(data), str(model), str(tmp_path / "out")])
    assert p.exit_code == 0 and p.output.startswith("Pairwise accuracy = "), p.output
    r = CliRunner().invoke(train_main, ["-s", "tron", "--loss", "hinge", str(data), str(model)])
    says = "-s tron does not train classification (--task c); it takes --loss squared-hinge"
    assert r.exit_code == 2 and says in r.output, r.output
    r = CliRunner().invoke(train_main, ["-s", "ocas", "--task", "p", "--loss", "pairwise-squared-hinge",
                                        str(data), str(model)])
    assert r.exit_code == 2 and "-s tron" in r.output, r.output
