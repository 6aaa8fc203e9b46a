"""The Dask engine's parts that need no cluster: partitioned input, the
distributed line search, the worker kernels, the distributed solvers'
driver logic (run in-process through a stand-in for the Dask session,
including lost worker state), and the command-line messages. The tests
with a real Dask cluster are in test_dask.py."""
import os
import pickle
import sys

import numpy as np
import pytest
from click.testing import CliRunner

import naive as NV
import naive_distributed as ND
import naive_ocas as N
from conftest import bundled
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main
from svmtrain.distributed import _kernels as KD
from svmtrain.distributed import linesearch as L
from svmtrain.distributed import ocas as docas
from svmtrain.distributed import partitions as P
from svmtrain.distributed import pegasos as dpegasos
from svmtrain.distributed.engine import StateLost, Traffic, payload_bytes, require_dask
from svmtrain.errors import InputFormatError, ParameterError
from svmtrain.io.reader import read_libsvm
from svmtrain.params import TrainParams
from svmtrain.solvers.ocas import _ocas_kernels as K
from svmtrain.training.train import train as local_train


def run(cmd, args):
    return CliRunner().invoke(cmd, [str(a) for a in args])


# ---------------------------------------------------------------- partitions
def test_expand_directory_glob_and_list(tmp_path):
    d = tmp_path / "parts"
    d.mkdir()
    for name in ("b.txt", "a.txt", "c.gz", ".hidden", "a.txt.svmcache", "x.tmp"):
        (d / name).write_text("1 1:1\n")
    (d / "sub").mkdir()
    names = [os.path.basename(s.path) for s in P.expand(d)]
    assert names == ["a.txt", "b.txt", "c.gz"]
    specs = P.expand(str(d / "*.txt"))
    assert [s.index for s in specs] == [0, 1] and all(os.path.isabs(s.path) for s in specs)
    assert specs[0].display == str(d / "a.txt")
    lst = tmp_path / "files.list"
    lst.write_text("# training parts\nparts/c.gz\n\n" + str(d / "a.txt") + "\n")
    for spec in (str(lst), "@" + str(lst)):
        assert [os.path.basename(s.path) for s in P.expand(spec)] == ["c.gz", "a.txt"]
    assert len(P.expand(d / "b.txt")) == 1


def test_expand_errors(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputFormatError, match="no data files"):
        P.expand(tmp_path / "empty")
    with pytest.raises(InputFormatError, match="no file matches"):
        P.expand(str(tmp_path / "*.nothing"))
    lst = tmp_path / "l.list"
    lst.write_text("missing.txt\n")
    with pytest.raises(InputFormatError, match="missing.txt: cannot open"):
        P.expand(lst)
    with pytest.raises(InputFormatError, match="standard input"):
        P.expand("-")


def test_output_names():
    assert P.output_name("dir/part-1.xz") == "part-1.predictions"
    assert P.output_name("part-2.svm") == "part-2.svm.predictions"


def test_errors_survive_pickling():
    e = pickle.loads(pickle.dumps(InputFormatError("a.txt", 3, "bad label")))
    assert str(e) == "a.txt:3: bad label" and e.line == 3
    e = pickle.loads(pickle.dumps(StateLost("tcp://w", [1, 2])))
    assert e.address == "tcp://w" and e.indices == [1, 2]


def test_payload_bytes():
    assert payload_bytes((np.zeros(10), 1.0, [np.zeros(3, np.int32)], {"a": None})) == 80 + 8 + 12


# ---------------------------------------------------------------- line search
def _split_search(y, cw, ob, od, qa, qb, parts, limit):
    """The distributed search with ``parts`` workers holding one slice each."""
    cuts = np.linspace(0, len(y), parts + 1).astype(int)
    held, G, m = [], qb, 0
    for a, b in zip(cuts[:-1], cuts[1:]):
        kb, wb = np.empty(b - a), np.empty(b - a)
        g, mm = K.breakpoints(y[a:b], cw[a:b], ob[a:b], od[a:b], 0.0, 1, kb, wb)
        G, m = G + g, m + mm
        held.append([(kb, wb, mm)])
    first = [L.summarize(h, 0, L.ALL, 1, limit) for h in held]
    return L.search(first, G, m, qa, lambda pre, ps: [L.summarize(h, pre, ps, 1, limit) for h in held])


@pytest.mark.parametrize("n,ties", [(40, False), (5000, False), (5000, True), (100000, True)])
@pytest.mark.parametrize("parts,limit", [(1, L.LIMIT), (3, L.LIMIT), (4, 7), (2, 0)])
def test_distributed_line_search_is_exact(n, ties, parts, limit):
    """Same t as sorting every breakpoint, whatever the split and however
    many rounds (limit 0 forces every level; ties force the last one)."""
    rng = np.random.default_rng(n + ties)
    y, cw, ob, od = N.line_case(rng, n, ties)[:4]
    for qa, qb in ((1e-3, -5.0), (2.0, -300.0), (50.0, -1e4), (1.0, 3.0)):
        t, rounds = _split_search(y, cw, ob, od, qa, qb, parts, limit)
        assert t == pytest.approx(N.line_search(y, cw, ob, od, qa, qb), rel=1e-12, abs=1e-15)
        assert rounds <= 5


def test_line_search_answers_are_bounded():
    """No answer carries more than LIMIT breakpoints or 4096 bins."""
    rng = np.random.default_rng(7)
    y, cw, ob, od = N.line_case(rng, 200000)[:4]
    kb, wb = np.empty(len(y)), np.empty(len(y))
    _, m = K.breakpoints(y, cw, ob, od, 0.0, 2, kb, wb)
    a = L.summarize([(kb, wb, m)], 0, L.ALL, 2)
    assert a[0] == "hist" and payload_bytes(a) <= L.LEVEL1_BINS * 12
    e = int(np.median(kb[np.isfinite(kb)].view(np.int64) >> 52))
    a = L.summarize([(kb, wb, m)], e, 52, 2)
    assert a[0] == "hist" and payload_bytes(a) <= 4096 * 12
    key = int(np.median(kb[np.isfinite(kb)].view(np.int64) >> 40))
    a = L.summarize([(kb, wb, m)], key, 40, 2)
    assert a[0] == "raw" and len(a[1]) <= L.LIMIT


# ---------------------------------------------------------------- kernels
@pytest.mark.parametrize("loss", ND.LOSSES)
def test_worker_kernels_against_numpy(loss):
    """batch_slopes and loss_sum (and the Pegasos loss_value / loss_slope they
    call) against their NumPy twins, for each loss; regression losses read
    the labels as targets."""
    from svmtrain.solvers.sgd._pegasos_kernels import LOSS_CODES
    X = read_libsvm(bundled("heart_scale.xz"))
    rng = np.random.default_rng(3)
    d = X.n_features
    regression = loss.startswith(("epsilon", "squared-epsilon"))
    labels = X.labels * 0.8 + rng.normal(size=X.n_rows) * 0.5 if regression else X.labels
    p = 0.3 if regression else 0.0
    for B in (0.0, 1.5):
        Xe = np.hstack([NV.dense(X, d), np.full((X.n_rows, 1), B)])
        w = rng.normal(size=d + 1) * 0.3
        for b in (0.0, -0.4):
            rows = rng.integers(0, X.n_rows, size=60)        # with repeats
            g = np.zeros(d + 1)
            nv, gs = KD.batch_slopes(X.indptr, X.indices, X.values, labels, 1.0, regression, rows, w, B, b,
                                     LOSS_CODES[loss], p, g)
            g_n, nv_n, gs_n = ND.batch_slopes(Xe, labels, 1.0, regression, rows, w, b, loss, p)
            assert nv == nv_n and gs == pytest.approx(gs_n, rel=1e-12, abs=1e-12)
            np.testing.assert_allclose(g, g_n, rtol=1e-12, atol=1e-12)
            assert 0 < nv <= len(rows) and (loss == "log" or nv < len(rows))
            h = KD.loss_sum(X.indptr, X.indices, X.values, labels, -1.0, regression, w, B, b, LOSS_CODES[loss], p)
            assert h == pytest.approx(ND.loss_sum(Xe, labels, -1.0, regression, w, b, loss, p), rel=1e-12)


# ---------------------------------------------------------------- solvers, in-process
class InProcessSession:
    """A stand-in for engine.Session: two 'workers' holding alternate
    partitions, tasks run here. ``lose(kind, k)`` drops every kept state
    and partition of the worker holding partition 0 just before the k-th
    round of that kind (as if it had died while the round ran), so that
    round's task for it runs on the other worker."""

    def __init__(self, specs):
        self.specs = specs
        self.run_id = "in-process"
        self.notes = []
        self.notify = self.notes.append
        self.traffic = Traffic()
        self.home = {s.index: s.index % 2 for s in specs}
        self.count = {}
        self.losses = set()

    def lose(self, kind, k):
        self.losses.add((kind, k))

    def load(self):
        self.meta = [P.describe(P.partition(self.run_id, s)) for s in self.specs]
        return self.meta

    def run(self, kind, fn, *args, per_group=None, only=None, what=""):
        self.count[kind] = self.count.get(kind, 0) + 1
        groups = [[s for s in self.specs if self.home[s.index] == w and (only is None or s.index in only)]
                  for w in (0, 1)]
        if (kind, self.count[kind]) in self.losses:
            victim = self.home[0]
            for s in self.specs:
                if self.home[s.index] == victim:
                    P._PARTS.pop((self.run_id, s.index), None)
                    P.STATE.pop((self.run_id, s.index), None)
                    self.home[s.index] = 1 - victim
            self.notify(f"lost worker {victim}{what}")
        results, lost = [], None
        for specs in groups:          # one task per group, as Dask runs them
            if specs:
                extra = tuple(per_group(specs)) if per_group else ()
                try:
                    results.append(fn(self.run_id, specs, 1, *args, *extra))
                except StateLost as e:
                    lost = lost or e
        if lost is not None:
            raise lost
        return results

    def close(self):
        P.drop(self.run_id)


def _split_file(tmp_path, src, parts):
    lines = read_libsvm_lines(src)
    cuts = np.linspace(0, len(lines), parts + 1).astype(int)
    for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
        (tmp_path / f"part-{i}").write_text("".join(lines[a:b]))
    return P.expand(tmp_path)


def read_libsvm_lines(path):
    import lzma
    with lzma.open(path, "rt") as f:
        return f.readlines()


@pytest.fixture(scope="module")
def mushrooms_parts(tmp_path_factory):
    return _split_file(tmp_path_factory.mktemp("mushrooms"), bundled("mushrooms.xz"), 5)


def _fit_in_process(specs, params, losses=()):
    from svmtrain.training.train import label_order, problem_costs
    sess = InProcessSession(specs)
    for loss in losses:
        sess.lose(*loss)
    try:
        meta = sess.load()
        n = sum(m["rows"] for m in meta)
        d = max(m["n_features"] for m in meta)
        order = label_order(np.concatenate([m["labels"] for m in meta]))
        (label, cost), = problem_costs(order, params)
        mod = docas if params.solver == "ocas" else dpegasos
        return mod.fit(sess, (0, label, cost), n, d, params), sess
    finally:
        sess.close()


@pytest.mark.parametrize("losses", [(), (("direction", 3),), (("line search", 2),), (("move", 4),),
                                    (("move", 1), ("move", 6), ("line search", 5))])
def test_ocas_over_partitions_and_lost_state(mushrooms_parts, losses):
    """Distributed OCAS (in-process) reaches the local objective within
    TolRel, also when a worker's partitions and state vanish at any round
    (the partitions are parsed again and the iteration recomputed)."""
    X = read_libsvm(bundled("mushrooms.xz"))
    params = TrainParams(solver="ocas", C=1.0, threads=1, bias=1.0)
    F_local = local_train(X, params).fit_results[0].objective
    res, sess = _fit_in_process(mushrooms_parts, params, losses)
    assert res.converged and res.info["exit"] == "TolRel"
    assert abs(res.objective - F_local) <= 0.01 * F_local
    # the reduced problem's bound Q_D (from the summed cuts) stays below F
    assert res.info["Q_D"] <= res.info["Q_P"]
    assert res.info["Q_D"] / (X.n_rows * 1.0) <= F_local * (1 + 1e-9)
    if losses:
        assert any("recomputing" in s for s in sess.notes), sess.notes
        assert len(sess.notes) >= len(losses)


def test_pegasos_over_partitions_equals_local(mushrooms_parts):
    """Same draws, same steps: the distributed Pegasos is the local one up to rounding."""
    X = read_libsvm(bundled("mushrooms.xz"))
    for extra in ({}, {"unreg_bias": True}, {"bias": 1.0, "average": False}):
        params = TrainParams(solver="pegasos", lam=1e-3, batch_size=64, epochs=2, seed=5, **extra)
        loc = local_train(X, params).fit_results[0]
        res, _ = _fit_in_process(mushrooms_parts, params, losses=(("step", 30),))
        assert res.n_iter == loc.n_iter
        assert res.objective == pytest.approx(loc.objective, rel=1e-9)
        assert np.allclose(res.w, loc.w, rtol=1e-8, atol=1e-10) and res.b == pytest.approx(loc.b, abs=1e-10)


# ---------------------------------------------------------------- command line
def test_missing_dask_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "distributed", None)     # import fails
    with pytest.raises(ParameterError, match=r"pip install 'svmtrain\[dask\]'"):
        require_dask()
    r = run(train_main, ["--engine", "dask", "-s", "ocas", bundled("heart_scale.xz"), tmp_path / "m"])
    assert r.exit_code == 2 and "svmtrain[dask]" in r.output and "Traceback" not in r.output


def test_command_line_usage_errors(tmp_path):
    data = bundled("heart_scale.xz")
    cases = [
        (train_main, ["--scheduler", "tcp://x:1", data, tmp_path / "m"], "--scheduler needs --engine dask"),
        (train_main, ["--engine", "dask", "-s", "dcd", data, tmp_path / "m"], "trains classification with --loss hinge with -s ocas, -s pegasos, -s sgd, -s bmrm, not -s dcd"),
        (train_main, ["--engine", "dask", "-s", "ocas", "-v", "3", data], "cross-validation"),
        (train_main, ["--engine", "dask", "-s", "ocas", str(tmp_path / "*.txt")], "give MODEL_FILE"),
        (predict_main, ["--output-dir", tmp_path, data, "m"], "--output-dir needs --engine dask"),
        (predict_main, [data, "m"], "missing argument OUTPUT_FILE"),
    ]
    for cmd, args, message in cases:
        r = run(cmd, args)
        assert r.exit_code == 2 and message in r.output, (args, r.output)
