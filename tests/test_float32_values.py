"""Float32 copies of values that are float32 exactly (svmtrain.data.dataset.
float32_copy, chunk_source.with_float32_values) and OCAS's use of them:
the same models, bit for bit, from fewer bytes read."""
import sys

import numba
import numpy as np
import pytest

from svmtrain.data.chunk_source import InMemorySource, with_float32_values
from svmtrain.data.dataset import Chunk, float32_copy
from svmtrain.params import TrainParams
from svmtrain.solvers.ocas import ocas

from conftest import ROOT


def _numpy_twin(values):
    """float32_copy by NumPy expressions."""
    narrow = values.astype(np.float32)
    return narrow if np.array_equal(narrow.astype(np.float64), values) else None


@pytest.mark.parametrize("values, exact", [
    ([1.0, 2.0, 0.5, 3.0, 255.0, -4.0, 0.0], True),      # counts, halves, signs
    ([2.0 ** 24, 2.0 ** -149, 2.0 ** 100], True),         # 2^24, float32's least subnormal, a power of 2
    ([1.0, 0.1], False),                                   # 0.1 is no float32
    ([1.0, np.nan], False),                                # NaN is never equal
    ([1e300], False),                                      # beyond float32's range
    ([1e-310], False),                                     # a float64 subnormal
    ([2.0 ** 24 + 1.0], False),                            # an integer float32 rounds
    ([], True),
])
def test_float32_copy_by_hand(values, exact):
    values = np.array(values, np.float64)
    got = float32_copy(values)
    if not exact:
        assert got is None
        return
    assert got.dtype == np.float32 and got.shape == values.shape
    assert np.array_equal(got.astype(np.float64), values)


def test_float32_copy_against_numpy():
    rng = np.random.default_rng(0)
    for trial in range(40):
        values = rng.integers(-5, 60, size=int(rng.integers(1, 500))).astype(np.float64)
        if trial % 2:       # one value that is no float32, anywhere
            values[rng.integers(len(values))] = 1.0 / 3.0
        got, want = float32_copy(values), _numpy_twin(values)
        assert (got is None) == (want is None)
        if want is not None:
            assert np.array_equal(got, want)


def _chunk(values):
    n = len(values)
    return Chunk(labels=np.ones(n), indptr=np.arange(n + 1, dtype=np.int64), indices=np.zeros(n, np.int32),
                 values=np.asarray(values, np.float64), qid=np.zeros(n, np.int64))


def test_with_float32_values_copies_exact_chunks_of_enough_values():
    counts = InMemorySource(_chunk([1.0, 2.0, 3.0, 7.0]))
    narrowed = with_float32_values(counts, 4)
    assert narrowed is not counts and narrowed.chunk.values.dtype == np.float32
    assert np.array_equal(narrowed.chunk.values, [1, 2, 3, 7])
    assert narrowed.chunk.indptr is counts.chunk.indptr and narrowed.n_rows == 4 and narrowed.nnz == 4
    assert counts.chunk.values.dtype == np.float64          # the caller's chunk is left as it was
    assert with_float32_values(counts, 5) is counts          # too few values to pay
    assert with_float32_values(counts, 4, max_bytes=15) is counts      # a copy of 16 bytes would not fit
    assert with_float32_values(counts, 4, max_bytes=16) is not counts
    tfidf = InMemorySource(_chunk([0.1, 0.2, 0.3, 0.4]))
    assert with_float32_values(tfidf, 0) is tfidf

    class Streamed:           # any other source (a --stream run's blocks) is left alone
        n_blocks = 1
        nnz = 4
    s = Streamed()
    assert with_float32_values(s, 0) is s


def _parallel_kernels(monkeypatch, kw):
    """With ``threads`` above 1, the kernels real runs take on large data:
    the parallel twins, on more than one block (as svm-train --precompile's
    second pass; the fixture's 27,000 values would take one block and the
    serial twins)."""
    if kw.get("threads", 1) > 1:
        from svmtrain._numba import options
        for name in ("PARALLEL_MIN_NNZ", "PARALLEL_MIN_PASS", "PARALLEL_MIN_WORK"):
            monkeypatch.setattr(options, name, 0)
        monkeypatch.setattr(ocas, "MIN_NNZ_PER_THREAD", 1)


def _with_and_without_copies(monkeypatch, module, train):
    """(``train()`` with ``module``'s with_float32_values copying whatever the
    size, ``train()`` with it copying nothing); the first made one copy."""
    real = module.with_float32_values
    seen = []

    def narrowing(source, min_nnz):
        out = real(source, 0)
        seen.append(out.chunk.values.dtype)
        return out
    monkeypatch.setattr(module, "with_float32_values", narrowing)
    narrow = train()
    monkeypatch.setattr(module, "with_float32_values", lambda source, min_nnz: source)
    wide = train()
    assert seen == [np.float32]
    return narrow, wide


@pytest.fixture(scope="module")
def counts():
    """Word counts (gen_synthetic.bag_of_words): 2,000 rows, 6 topics, wider than twice the rows."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import gen_synthetic
    M, topic = gen_synthetic.bag_of_words(rows=2000, features=5000, mean_length=15.0, topics=6, seed=4)
    M = M.tocsr()
    assert np.array_equal(M.data, np.round(M.data)) and M.data.max() > 1    # counts, not only ones
    y = np.where(topic < 3, 1.0, -1.0)
    chunk = Chunk(labels=y, indptr=M.indptr.astype(np.int64), indices=M.indices.astype(np.int32),
                  values=M.data.astype(np.float64), qid=np.zeros(len(y), np.int64))
    return chunk, y, M.shape[1]


@pytest.mark.parametrize("kw", [{"threads": 1}, {"threads": 2}, {"threads": 2, "bias": 1.0, "eps": 1e-3},
                                {"threads": 1, "ocas_method": "cp"}])
@pytest.mark.parametrize("form", [None, "dense"])
def test_ocas_on_float32_counts_gives_the_same_model(counts, monkeypatch, kw, form):
    """The run on float32 copies (at any size here) against the run on the
    float64 values: the same iterations, bounds and weights, bit for bit."""
    chunk, y, d = counts
    _parallel_kernels(monkeypatch, kw)
    params = TrainParams(solver="ocas", C=1.0, **kw)
    narrow, wide = _with_and_without_copies(monkeypatch, ocas, lambda: ocas.fit(chunk, y, d, params, cut_form=form))
    assert narrow.info["threads"] == min(kw["threads"], numba.config.NUMBA_NUM_THREADS)
    assert narrow.n_iter == wide.n_iter > 5
    assert [h[2:] for h in narrow.info["history"]] == [h[2:] for h in wide.info["history"]]
    assert np.array_equal(narrow.w, wide.w)
    assert narrow.info["cut_form"] == wide.info["cut_form"]


def test_ocas_local_data_narrows_counts_only(monkeypatch):
    monkeypatch.setattr(ocas, "FLOAT32_MIN_NNZ", 0)
    rng = np.random.default_rng(1)
    for values, narrowed in ((rng.random(100) + 0.05, False), (rng.integers(1, 9, 100).astype(np.float64), True)):
        chunk = _chunk(values)
        data = ocas.LocalData(chunk, chunk.labels, np.ones(100), 1.0, 2, 1)
        assert (data.X.chunk is not chunk) == narrowed
        assert data.X.chunk.values.dtype == (np.float32 if narrowed else np.float64)
    monkeypatch.setattr(ocas, "FLOAT32_MIN_NNZ", 101)           # fewer values than that: no copy
    data = ocas.LocalData(chunk, chunk.labels, np.ones(100), 1.0, 2, 1)
    assert data.X.chunk is chunk


@pytest.mark.parametrize("variant, kw", [("ocas_logistic", {"loss": "log"}), ("ocas_regression", {"task": "r"}),
                                         ("ocas_roc", {"loss": "roc-area"})])
def test_ocas_score_losses_on_float32_counts_give_the_same_model(counts, monkeypatch, variant, kw):
    """The losses of the scores (ocas_scores.ScoreData) take the same copies, with the same numbers."""
    import importlib
    from svmtrain.solvers.ocas import ocas_scores
    module = importlib.import_module(f"svmtrain.solvers.ocas.{variant}")
    chunk, y, d = counts
    targets = y * 3.0 + 10.0 if kw.get("task") == "r" else y       # regression: targets far from 0
    _parallel_kernels(monkeypatch, {"threads": 2})
    params = TrainParams(solver="ocas", C=1.0, threads=2, **kw)
    narrow, wide = _with_and_without_copies(monkeypatch, ocas_scores, lambda: module.fit(chunk, targets, d, params))
    assert narrow.n_iter == wide.n_iter > 3
    assert [h[2:] for h in narrow.info["history"]] == [h[2:] for h in wide.info["history"]]
    assert np.array_equal(narrow.w, wide.w)


def test_sparsify_into_a_float32_pool():
    """sparsify writes the nonzeros (indices ascending) into either pool; a
    float32 pool refuses a value that is no float32 (-1), a float64 one
    takes every value."""
    from svmtrain.solvers.ocas import _ocas_kernels as K
    a = np.array([0.0, 3.0, 0.0, -2.5, 0.0, 7.0])
    pidx, p32, p64 = np.full(9, -9, np.int32), np.full(9, np.nan, np.float32), np.full(9, np.nan)
    assert K.sparsify(a, pidx, p32, 2) == 3
    assert pidx[2:5].tolist() == [1, 3, 5] and p32[2:5].tolist() == [3.0, -2.5, 7.0]
    a[3] = 0.1
    assert K.sparsify(a, pidx, p32, 2) == -1
    assert K.sparsify(a, pidx, p64, 2) == 3 and p64[2:5].tolist() == [3.0, 0.1, 7.0]
    a[3] = 1e300                    # beyond float32's range
    assert K.sparsify(a, pidx, p32, 0) == -1


def test_cut_pool_is_float32_until_a_value_is_not():
    d = 40
    cuts = ocas._Cuts((d,), 10, 1)
    whole = np.zeros(d)
    whole[[2, 9, 30]] = [4.0, -1.0, 12.0]
    cuts.k = 3
    cuts.put(0, whole, 3)
    dense = np.arange(d, dtype=np.float64) + 0.5          # touches every feature: a dense row
    cuts.put(1, dense, d)
    assert cuts.pval.dtype == np.float32 and cuts.sp_len[0] == 3 and cuts.sp_len[1] == -1
    third = np.zeros(d)
    third[[5, 6]] = [1.0 / 3.0, 2.0]
    cuts.put(2, third, 2)
    assert cuts.pval.dtype == np.float64                   # widened, the first cut kept
    for j, want in enumerate((whole, dense, third)):
        assert np.array_equal(cuts.dense(j), want)


@pytest.mark.parametrize("kw", [{"threads": 1}, {"threads": 2}, {"threads": 2, "cut_buffer": 12}])
def test_ocas_float32_cut_pool_gives_the_same_model(counts, monkeypatch, kw):
    """A run whose sparse cuts are kept in float32 (counts at C = 1) against
    the same run with a float64 pool: bit for bit; at C = 0.3 the cuts are
    no float32 and the pool widens."""
    chunk, y, d = counts
    _parallel_kernels(monkeypatch, kw)
    params = TrainParams(solver="ocas", C=1.0, **kw)
    real = ocas._Cuts.__init__
    pools = []

    def spy(self, *a, **k):
        real(self, *a, **k)
        pools.append(self)
    monkeypatch.setattr(ocas._Cuts, "__init__", spy)
    narrow = ocas.fit(chunk, y, d, params, cut_form="dense")
    # (a small buffer merges cuts, whose averages are no float32: the pool widens part way)
    assert pools[-1].pval.dtype == (np.float64 if "cut_buffer" in kw else np.float32) and pools[-1].has_sparse()

    def wide_pool(self, *a, **k):
        real(self, *a, **k)
        self.pval = np.empty(0)
        pools.append(self)
    monkeypatch.setattr(ocas._Cuts, "__init__", wide_pool)
    wide = ocas.fit(chunk, y, d, params, cut_form="dense")
    assert pools[-1].pval.dtype == np.float64 and pools[-1].has_sparse()
    assert narrow.info["threads"] == min(kw["threads"], numba.config.NUMBA_NUM_THREADS)
    assert narrow.n_iter == wide.n_iter > 5
    assert [h[2:] for h in narrow.info["history"]] == [h[2:] for h in wide.info["history"]]
    assert np.array_equal(narrow.w, wide.w)
    if "cut_buffer" in kw:
        assert narrow.info["cuts_merged"] > 0
    monkeypatch.setattr(ocas._Cuts, "__init__", spy)
    ocas.fit(chunk, y, d, TrainParams(solver="ocas", C=0.3, **kw), cut_form="dense")
    assert pools[-1].pval.dtype == np.float64 and pools[-1].has_sparse()


def test_available_bytes_reads_the_kernels_estimate(monkeypatch):
    from svmtrain.data import memory
    got = memory.available_bytes()
    assert 1 << 20 < got < 1 << 50
    monkeypatch.setattr("builtins.open", lambda *a, **k: (_ for _ in ()).throw(OSError("no /proc")))
    assert memory.available_bytes() > 0                     # the free pages, or 1 GiB
