"""Out-of-core training (``--stream``, ``--memory-limit``, ``--shuffle-buffer``):
svmtrain/training/streamed.py, the block reader and spool, and the streamed solvers.

The streamed runs read a9a (bundled) under a memory limit small enough to
split it into several blocks, and are compared with independent references:
LIBLINEAR -s 3 -e 1e-6 (liblinear-official) for the optimum of the hinge
problem, in-memory training of the same solver for accuracy on a9a.t.
Peak memory is measured by scripts/bench_stream.py, not here.
"""
import dataclasses
import lzma
import math
import os

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import bundled
from reference import csr, hinge_objective, liblinear_optimum
from svmtrain.cli.train import main as train_main
from svmtrain.errors import ParameterError
from svmtrain.io.model_io import load_model
from svmtrain.io.reader import read_libsvm
from svmtrain.params import TrainParams
from svmtrain.solvers.dcd import _dcd_kernels as K
from svmtrain.solvers.sgd import sgd
from svmtrain.solvers.sgd import stream_sgd
from svmtrain.solvers.base import with_defaults
from svmtrain.data.chunk_source import InMemorySource
from svmtrain.training.streamed import MIB, plan_memory, train_streamed
from svmtrain.training.train import train
from test_cli import write_blobs

A9A = bundled("a9a.xz")
LIMIT_MB = 6          # a9a (32561 rows, 451592 nonzeros) then streams in 4 to 9 blocks


@pytest.fixture(scope="module")
def a9a():
    X = read_libsvm(A9A)
    return X, np.where(X.labels > 0, 1.0, -1.0)


@pytest.fixture(scope="module")
def a9a_test():
    return read_libsvm(bundled("a9a.t.xz"))


def accuracy(model, T):
    return 100.0 * float(np.mean(model.predict(T) == T.labels))


def streamed(params, **kw):
    kw.setdefault("memory_limit_mb", LIMIT_MB)
    model = train_streamed(A9A, params, **kw)
    assert dict(model.header)["stream_blocks"] >= 3      # really out of core
    return model


def run(args):
    return CliRunner().invoke(train_main, [str(a) for a in args])


# ---------------------------------------------------------------- solvers


def test_dcd_block_minimization_reaches_the_optimum(a9a, a9a_test):
    X, y = a9a
    C = 0.1
    lam = 1.0 / (C * X.n_rows)
    _, f_star = liblinear_optimum(X, y, lam, 123)
    m = streamed(TrainParams(solver="dcd", C=C, eps=0.1, threads=1))
    r = m.fit_results[0]
    assert r.converged
    w = m.W[:, 0]
    f = hinge_objective(csr(X, 123), np.where(X.labels == m.labels[0], 1.0, -1.0), w, lam)
    assert f == pytest.approx(r.objective, rel=1e-9)
    assert f >= f_star * (1 - 1e-9)
    assert (f - f_star) / f_star < 1e-3, (f, f_star)
    # weak duality: the dual value (C form) bounds the optimum from below
    assert r.info["dual_objective"] <= f_star * X.n_rows * C * (1 + 1e-9)
    mem = train(X, TrainParams(solver="dcd", C=C, eps=0.1, threads=1))
    assert abs(accuracy(m, a9a_test) - accuracy(mem, a9a_test)) <= 0.2


def test_ocas_streamed_is_the_in_memory_run(a9a, a9a_test):
    """One thread: the cut is summed row by row in file order, so reading it
    block by block changes nothing, bit for bit; and the result keeps
    svmocas's TolRel guarantee against LIBLINEAR's optimum."""
    X, y = a9a
    params = TrainParams(solver="ocas", C=1.0, threads=1)
    m = streamed(params)
    mem = train(X, params)
    np.testing.assert_array_equal(m.W, mem.W)
    assert m.fit_results[0].n_iter == mem.fit_results[0].n_iter
    _, f_star = liblinear_optimum(X, y, 1.0 / X.n_rows, 123)
    F = m.fit_results[0].objective
    assert F * (1 - 0.01) <= f_star * (1 + 1e-9)


def test_pegasos_shuffle_buffer_accuracy_and_seed(a9a, a9a_test):
    X, y = a9a
    params = TrainParams(solver="pegasos", lam=1e-4, seed=3, threads=1)
    m = streamed(params, shuffle_buffer=2000)
    assert dict(m.header)["shuffle_buffer"] == 2000
    mem = train(X, params)
    assert abs(accuracy(m, a9a_test) - accuracy(mem, a9a_test)) <= 0.5
    _, f_star = liblinear_optimum(X, y, 1e-4, 123)
    assert m.fit_results[0].objective <= 1.01 * f_star
    again = streamed(params, shuffle_buffer=2000)
    np.testing.assert_array_equal(m.W, again.W)            # every random choice from --seed
    other = streamed(TrainParams(solver="pegasos", lam=1e-4, seed=4, threads=1), shuffle_buffer=2000)
    assert not np.array_equal(m.W, other.W)


def test_pegasos_default_buffer_fills_the_limit():
    m = streamed(TrainParams(solver="pegasos", lam=1e-4, epochs=2, threads=1))
    plan = m.stream_plan
    assert 1 <= plan.shuffle_rows < 32561
    assert plan.state + plan.shuffle_bytes <= plan.limit


def asset_params(approx, dim, **kw):
    return TrainParams(solver="asset", kernel_type=2, approx=approx, dim=dim, gamma=0.01, C=100.0, **kw)


@pytest.mark.parametrize("approx, dim", [("nystrom", 128), ("fourier", 256)])
def test_asset_streamed_accuracy_and_map(a9a, a9a_test, approx, dim):
    """Algorithm 1 fed by the shuffle buffer, rows mapped as drawn: test
    accuracy within 0.5 points of in-memory ASSET; the same seed builds
    the same map (the same landmark rows, the same Omega) and the same D_G
    estimate; the plan (map, D_G sample, buffers, mapped rows) fits the limit."""
    X, _ = a9a
    params = asset_params(approx, dim)
    m = streamed(params)
    mem = train(X, params)
    acc_s, acc_m = accuracy(m, a9a_test), accuracy(mem, a9a_test)
    assert abs(acc_s - acc_m) <= 0.5, (acc_s, acc_m)
    assert acc_s >= 84.0
    if approx == "nystrom":
        for a in ("indptr", "indices", "values"):
            np.testing.assert_array_equal(getattr(m.SV, a), getattr(mem.SV, a))
    else:
        np.testing.assert_array_equal(m.omega, mem.omega)
    r, rm = m.fit_results[0], mem.fit_results[0]
    assert r.info["D_G"] == pytest.approx(rm.info["D_G"], rel=1e-5)
    assert r.info["averaged"] and not r.info["cached"]
    assert r.n_iter == (5 * X.n_rows) // params.batch_size     # every row once per epoch
    plan = m.stream_plan
    assert plan.map_rows >= 1 and plan.shuffle_rows < X.n_rows
    assert plan.state + 2 * plan.block_bytes + plan.shuffle_bytes + plan.map_bytes <= plan.limit


def test_asset_streamed_seed_and_shuffle_buffer(a9a_test):
    params = asset_params("fourier", 128, epochs=2, seed=5)
    m = streamed(params, shuffle_buffer=1000)
    assert dict(m.header)["shuffle_buffer"] == 1000
    assert accuracy(m, a9a_test) >= 83.0
    again = streamed(params, shuffle_buffer=1000)
    np.testing.assert_array_equal(m.W, again.W)                # every random choice from --seed
    np.testing.assert_array_equal(m.b, again.b)
    other = streamed(asset_params("fourier", 128, epochs=2, seed=6), shuffle_buffer=1000)
    assert not np.array_equal(m.W, other.W)


def test_cli_asset_streams_multiclass_and_asset_star(tmp_path):
    """Through the command line: one-vs-rest Nystrom ASSET on three blobs
    (the problems share the map and the shuffle buffer's draws), and ASSET*
    (--strongly-convex) on heart_scale, each in many blocks; the model
    files load and predict."""
    write_blobs(tmp_path / "blobs", ["2", "3", "7"], n_per_class=300)
    r = run(["-q", "-s", "asset", "-D", "32", "-g", "0.05", "--stream", "--chunk-size", "100",
             tmp_path / "blobs", tmp_path / "mb"])
    assert r.exit_code == 0, r.output
    model = load_model(tmp_path / "mb")
    assert int(dict(model.header)["stream_blocks"]) >= 9
    X = read_libsvm(tmp_path / "blobs")
    assert np.mean(model.predict(X) == X.labels) > 0.95

    train_file = tmp_path / "heart.svm"
    train_file.write_bytes(lzma.decompress(bundled("heart_scale.xz").read_bytes()))
    r = run(["-q", "-s", "asset", "--strongly-convex", "--approx", "fourier", "-D", "64", "-g", "0.3",
             "-c", "10", "--stream", "--chunk-size", "40", train_file, tmp_path / "m"])
    assert r.exit_code == 0, r.output
    model = load_model(tmp_path / "m")
    assert int(dict(model.header)["stream_blocks"]) >= 6
    assert dict(model.header)["strongly_convex"] == "true"
    X = read_libsvm(train_file)
    assert np.mean(model.predict(X) == X.labels) > 0.8


# ---------------------------------------------------------------- sgd and bmrm

SGD_RULES = [("bottou", None), ("sgdqn", None), ("fobos", None), ("fobos", 1e-4)]


def heart_file(tmp_path):
    path = tmp_path / "heart.svm"
    path.write_bytes(lzma.decompress(bundled("heart_scale.xz").read_bytes()))
    return path


@pytest.mark.parametrize("update, l1", SGD_RULES)
def test_sgd_streamed_objective_and_seed(a9a, a9a_test, update, l1):
    """Each rule fed by a shuffle buffer of 2000 rows over 9 blocks: every row
    once per epoch (T n steps, as in memory); the objective, f(w, b) of the
    model (+ l1 |w|_1), within 3 % of in-memory training's and, for the
    hinge problem, of LIBLINEAR's optimum (over seeds 1-10 at most 1.5 %
    here: SGD's last iterate is noisy); the same seed gives the same w."""
    X, y = a9a
    lam = 1e-3
    params = TrainParams(solver="sgd", update=update, l1=l1, lam=lam, seed=3, threads=1)
    m = streamed(params, shuffle_buffer=2000)
    assert dict(m.header)["shuffle_buffer"] == 2000
    r = m.fit_results[0]
    mem = train(X, params)
    rm = mem.fit_results[0]
    assert set(rm.info) <= set(r.info) and r.info["update"] == update
    assert r.n_iter == rm.n_iter == 30 * X.n_rows and r.info["epochs"] == 30
    assert r.info["t0"] == 1.0 / (lam * r.info["eta0"])
    yy = np.where(X.labels == m.labels[0], 1.0, -1.0)
    w = m.W[:, 0]
    f = hinge_objective(csr(X, 123), yy, w, lam, b=m.b[0]) + (l1 or 0.0) * float(np.abs(w).sum())
    assert r.objective == pytest.approx(f, rel=1e-9)
    assert r.objective == pytest.approx(rm.objective, rel=0.03), (r.objective, rm.objective)
    if not l1:
        _, f_star = liblinear_optimum(X, y, lam, 123)
        assert f_star * (1 - 1e-9) <= r.objective <= 1.03 * f_star
    else:
        assert np.count_nonzero(w == 0.0) > 0                   # FOLOS's exact zeros
    assert abs(accuracy(m, a9a_test) - accuracy(mem, a9a_test)) <= 0.5
    again = streamed(params, shuffle_buffer=2000)
    np.testing.assert_array_equal(m.W, again.W)                # every random choice from --seed
    np.testing.assert_array_equal(m.b, again.b)
    other = streamed(dataclasses.replace(params, seed=4), shuffle_buffer=2000)
    assert not np.array_equal(m.W, other.W)


@pytest.mark.parametrize("update", ["bottou", "sgdqn", "fobos"])
def test_sgd_one_block_full_buffer_is_the_in_memory_algorithm(update):
    """One block and a shuffle buffer of all rows: every epoch a uniformly
    random permutation of all rows, as in memory, and on heart_scale (270
    rows < 1000) the pilot sees every row both ways, so eta0 is the same;
    only the random numbers differ. Objectives within 1 % of each other and
    of the optimum (-s dcd at -e 1e-9)."""
    X = read_libsvm(bundled("heart_scale.xz"))
    y = np.where(X.labels > 0, 1.0, -1.0)
    d = X.n_features
    optimum = train(X, TrainParams(solver="dcd", eps=1e-9, max_iter=100000)).fit_results[0].objective
    for seed in (1, 2, 3):
        params = with_defaults(TrainParams(solver="sgd", update=update, seed=seed), sgd.DEFAULTS)
        mem = sgd.fit(X, y, d, params)
        s = stream_sgd.fit(InMemorySource(X), y, d, params)
        assert s.info["eta0"] == mem.info["eta0"]
        assert s.info["shuffle_rows"] == X.n_rows and s.info["blocks"] == 1
        assert s.n_iter == mem.n_iter == 30 * X.n_rows
        assert not np.array_equal(s.w, mem.w)                  # not the same bits
        assert s.objective == pytest.approx(mem.objective, rel=0.01)
        assert optimum * (1 - 1e-9) <= s.objective <= 1.01 * optimum


def test_sgd_streamed_eps_regression_and_log(tmp_path, a9a):
    """-e stops on the streamed objective (the last one is the result's);
    --loss log and --task r stream too, close to in-memory training (and,
    for the epsilon-insensitive loss, to ocas's optimum)."""
    X, _ = a9a
    params = TrainParams(solver="sgd", update="sgdqn", lam=1e-3, eps=1e-3, threads=1)
    m = streamed(params, shuffle_buffer=5000)
    r = m.fit_results[0]
    assert r.converged and r.info["epochs"] < 30 and r.n_iter == r.info["epochs"] * X.n_rows
    yy = np.where(X.labels == m.labels[0], 1.0, -1.0)
    assert r.objective == pytest.approx(hinge_objective(csr(X, 123), yy, m.W[:, 0], 1e-3, b=m.b[0]), rel=1e-9)

    logistic = TrainParams(solver="sgd", loss="log", lam=1e-3, threads=1)
    m, mem = streamed(logistic), train(X, logistic)
    assert m.fit_results[0].objective == pytest.approx(mem.fit_results[0].objective, rel=0.02)

    rng = np.random.default_rng(0)
    A = rng.normal(size=(3000, 8))
    t = A @ rng.normal(size=8) + 0.1 * rng.normal(size=3000)
    path = tmp_path / "reg.svm"
    path.write_text("".join(f"{float(v)!r} " + " ".join(f"{j + 1}:{float(a)!r}" for j, a in enumerate(row)) + "\n"
                            for v, row in zip(t, A)))
    reg = TrainParams(solver="sgd", task="r", loss="epsilon-insensitive", epsilon=0.1, lam=1e-2, threads=1)
    m = train_streamed(path, reg, chunk_rows=400, shuffle_buffer=500)
    assert dict(m.header)["stream_blocks"] == 8
    R = read_libsvm(path)
    mem = train(R, reg)
    optimum = train(R, dataclasses.replace(reg, solver="ocas", eps=1e-10)).fit_results[0].objective
    f = m.fit_results[0].objective
    assert f == pytest.approx(mem.fit_results[0].objective, rel=0.03)
    assert optimum * (1 - 1e-9) <= f <= 1.03 * optimum


def test_sgd_memory_plan_counts_its_vectors_and_refuses_a_small_limit(tmp_path):
    """State: labels and y (16 bytes per row) and 3 (bottou), 4 (sgdqn) or 6
    (fobos) weight vectors (kept and transient); a limit below that plus two
    minimal blocks stops with the numbers. On a9a the shuffle buffer, the
    blocks and the pilot's sample fit the limit."""
    n, d = 40, 2_000_000
    for update, vectors in (("bottou", 3), ("sgdqn", 4), ("fobos", 6)):
        plan = plan_memory("sgd", n, d, TrainParams(solver="sgd", update=update), 1 << 30)
        assert plan.state == 16 * n + vectors * 8 * (d + 1)
    rng = np.random.default_rng(1)
    lines = [f"{'+1' if i % 2 else '-1'} {i + 1}:{rng.normal()!r}" for i in range(n - 1)]
    path = tmp_path / "wide.svm"
    path.write_text("\n".join(lines + [f"+1 {d}:1.5"]) + "\n")
    state = 16 * n + 6 * 8 * (d + 1)
    r = run(["-s", "sgd", "--update", "fobos", "--memory-limit", "60", path, tmp_path / "model"])
    assert r.exit_code == 2, r.output
    assert r.output.strip() == (f"svm-train: --memory-limit 60 MB is too small: -s sgd keeps {state / MIB:.1f} MB "
                                f"of state for {n} rows and {d} features; give at least "
                                f"{math.ceil((state + 4 * (64 << 10)) / MIB)} MB")
    assert not (tmp_path / "model").exists()
    m = streamed(TrainParams(solver="sgd", update="fobos", epochs=2, threads=1))
    plan = m.stream_plan
    assert 1 <= plan.shuffle_rows < 32561 and plan.pilot > 0
    assert plan.state + 2 * plan.block_bytes + plan.shuffle_bytes + plan.pilot <= plan.limit


def test_ocas_cs_memory_plan_counts_its_state_and_cut_buffer():
    """-s ocas --multiclass cs: labels (16 bytes per row), 24 bytes per row,
    six n x M arrays, n (M - 1) breakpoints and weights, four (d+1) x M
    weight arrays; the cut buffer (2 bytes per row and cut, Gram matrix)
    the largest that fits in half of what that leaves; a limit below the
    state and two minimal blocks stops with the numbers."""
    n, d, M = 20000, 50, 5
    params = TrainParams(solver="ocas", multiclass="cs")
    state = 16 * n + 24 * n + 48 * n * M + 16 * n * (M - 1) + 4 * 8 * (d + 1) * M

    def cut(cap):
        return cap * 2 * n + 8 * cap * cap + 48 * cap
    plan = plan_memory("ocas", n, d, params, 64 * MIB, n_problems=M)
    cap = plan.cut_buffer
    assert plan.state == state + cut(cap)
    assert 2 < cap < 2000 and cut(cap) <= (64 * MIB - state) / 2 < cut(cap + 1)
    assert plan.state + 2 * plan.block_bytes <= plan.limit
    assert plan_memory("ocas", n, d, params, 1 << 30, n_problems=M).cut_buffer == 2000
    with pytest.raises(ParameterError, match=r"too small: -s ocas keeps 6\.6 MB of state for 20000 rows"):
        plan_memory("ocas", n, d, params, 6.6 * MIB, n_problems=M)


def test_streamed_declarations_name_their_hooks():
    """Every streamed solver's declaration names a memory plan that plans
    (and one for Crammer-Singer where it streams it); a shuffle-buffer
    solver's module prices its buffer; each plan holds the limit."""
    import importlib

    from svmtrain.solvers import REGISTRY, get_solver, load
    n, d = 1000, 50
    for name, decl in REGISTRY.items():
        s = decl.streamed
        if s is None:
            continue
        assert s.memory is not None, name
        params = with_defaults(TrainParams(solver=name), getattr(get_solver(name), "DEFAULTS", {}))
        plan = load(s.memory)(name, n, d, params, 64 * MIB, 10 * n, 1)
        assert plan.state + 2 * plan.block_bytes <= plan.limit, name
        assert (plan.cut_buffer is not None) == s.cut_buffer, name
        assert (s.multiclass_cs is None) == (s.multiclass_cs_memory is None), name
        if s.multiclass_cs_memory is not None:
            cs = load(s.multiclass_cs_memory)(name, n, d, dataclasses.replace(params, multiclass="cs"),
                                               64 * MIB, 10 * n, 3)
            assert cs.cut_buffer is not None and cs.state + 2 * cs.block_bytes <= cs.limit, name
        if s.shuffle_buffer:
            assert callable(importlib.import_module(s.module).shuffle_cost), name


def test_stream_refusals_name_the_solvers_that_can():
    """The refusals of check_streamable come from the registry's Streamed declarations."""
    from svmtrain.solvers import listing, names
    from svmtrain.training.streamed import check_streamable
    streamers = names(lambda x: x.streamed is not None)
    with pytest.raises(ParameterError, match=f"--stream works with {listing(streamers)}$"):
        check_streamable(TrainParams(solver="sbp"))
    with pytest.raises(ParameterError, match="-s ocas, -s pegasos or -s sgd --loss log trains it"):
        check_streamable(TrainParams(solver="dcd", loss="log"))
    with pytest.raises(ParameterError, match="-s ocas --multiclass cs streams"):
        check_streamable(TrainParams(solver="dcd", multiclass="cs"))
    for task in ("p", "o"):
        with pytest.raises(ParameterError, match=f"--task {task} .* trains in memory only"):
            check_streamable(TrainParams(solver="dcd", task=task))
    with pytest.raises(ParameterError, match=r"kernel -s pegasos \(-t 2\) trains in memory only"):
        check_streamable(TrainParams(solver="pegasos", kernel_type=2))
    with pytest.raises(ParameterError, match="--inner dcd trains ASSET in memory only"):
        check_streamable(TrainParams(solver="asset", inner="dcd"))
    for name in streamers:
        check_streamable(TrainParams(solver=name))


def test_bmrm_streamed_is_the_in_memory_run(a9a, tmp_path):
    """bmrm streams through ocas's loop, which is exact with one thread: on
    heart_scale in 9 blocks the in-memory w bit for bit; on a9a the memory
    limit leaves room for fewer cuts than --cut-buffer's 2000 (svm-train
    says so), and the in-memory run with that cut buffer gives the same w."""
    path = heart_file(tmp_path)
    params = TrainParams(solver="bmrm", C=2.0, eps=1e-5, threads=1)
    m = train_streamed(path, params, chunk_rows=30)
    assert dict(m.header)["stream_blocks"] == 9
    mem = train(read_libsvm(path), params)
    np.testing.assert_array_equal(m.W, mem.W)
    assert m.fit_results[0].n_iter == mem.fit_results[0].n_iter
    assert m.fit_results[0].info["bmrm_gap"] == mem.fit_results[0].info["bmrm_gap"] <= 1e-5

    X, _ = a9a
    notes = []
    params = TrainParams(solver="bmrm", C=1.0, threads=1)
    m = streamed(params, say=notes.append)
    cuts = m.stream_plan.cut_buffer
    assert 2 <= cuts < 2000 and any(f"room for {cuts} cuts" in s for s in notes)
    mem = train(X, dataclasses.replace(params, cut_buffer=cuts))
    np.testing.assert_array_equal(m.W, mem.W)
    r = m.fit_results[0]
    assert r.converged and r.n_iter == mem.fit_results[0].n_iter
    assert 0.0 <= r.info["bmrm_gap"] <= 1e-3


def test_cli_sgd_and_bmrm_stream(tmp_path):
    """Through the command line: -s sgd --stream with --shuffle-buffer in
    many blocks (the same model twice, close to in-memory training), and
    -s bmrm --stream (the in-memory weights)."""
    train_file = heart_file(tmp_path)
    X = read_libsvm(train_file)
    args = ["-q", "-s", "sgd", "--update", "sgdqn", "--stream", "--chunk-size", "40", "--shuffle-buffer", "100",
            train_file]
    for name in ("m1", "m2"):
        r = run(args + [tmp_path / name])
        assert r.exit_code == 0, r.output
    assert (tmp_path / "m1").read_bytes() == (tmp_path / "m2").read_bytes()
    model = load_model(tmp_path / "m1")
    header = dict(model.header)
    assert int(header["stream_blocks"]) == 7 and int(header["shuffle_buffer"]) == 100
    r = run(["-q", "-s", "sgd", "--update", "sgdqn", train_file, tmp_path / "mem"])
    assert r.exit_code == 0, r.output
    mem = load_model(tmp_path / "mem")
    assert abs(np.mean(model.predict(X) == X.labels) - np.mean(mem.predict(X) == X.labels)) <= 0.03
    assert np.mean(model.predict(X) == X.labels) > 0.8

    r = run(["-q", "-s", "bmrm", "--threads", "1", "--stream", "--chunk-size", "50", train_file, tmp_path / "b1"])
    assert r.exit_code == 0, r.output
    r = run(["-q", "-s", "bmrm", "--threads", "1", train_file, tmp_path / "b2"])
    assert r.exit_code == 0, r.output
    np.testing.assert_array_equal(load_model(tmp_path / "b1").W, load_model(tmp_path / "b2").W)


# ---------------------------------------------------------------- the dcd kernel's new slots


def test_dcd_first_iteration_extremes_against_numpy():
    """FIRST_PGMAX / FIRST_PGMIN: the projected-gradient extremes of the
    call's first iteration. Rows with disjoint features do not interact, so
    each row's PG in that iteration is its PG at the start, which NumPy
    computes directly."""
    rng = np.random.default_rng(0)
    n = 200
    values = rng.normal(size=n)
    indptr = np.arange(n + 1, dtype=np.int64)
    indices = np.arange(n, dtype=np.int32)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    U = 0.5
    alpha = rng.choice([0.0, U, 0.2], size=n)
    w = np.r_[alpha * y * values, 0.0]
    QD = values ** 2
    G = y * values * w[:n] - 1.0
    PG = np.where(alpha == 0.0, np.minimum(G, 0.0), np.where(alpha == U, np.maximum(G, 0.0), G))
    fstate = np.array([np.inf, -np.inf, 0.0, 0.0])
    istate = np.array([n, 0], np.int64)
    state = K.new_state(y, QD)
    state[:, 0] = alpha
    K.dcd_run(indptr, indices, values, 0.0, U, U, 0.0, 0.0, state, np.empty(0), -1.0, 3, 3, w,
              np.arange(n, dtype=np.int64), istate, fstate, np.array([7], np.uint64))
    assert istate[K.ITER] == 3
    assert fstate[K.FIRST_PGMAX] == PG.max()
    assert fstate[K.FIRST_PGMIN] == PG.min()


# ---------------------------------------------------------------- the command line


def test_cli_stream_multiclass_and_cache(tmp_path):
    write_blobs(tmp_path / "train", ["2", "3", "7"], n_per_class=400)
    cache = tmp_path / "train.svmcache"
    args = ["-s", "dcd", "--memory-limit", "1", "--chunk-size", "100", f"--cache={cache}", "-q",
            tmp_path / "train"]
    r = run(args + [tmp_path / "m1"])
    assert r.exit_code == 0, r.output
    assert cache.exists()
    r = run(args + [tmp_path / "m2"])                         # from the cache, no parsing
    assert r.exit_code == 0, r.output
    m1, m2 = load_model(tmp_path / "m1"), load_model(tmp_path / "m2")
    np.testing.assert_array_equal(m1.W, m2.W)
    assert int(dict(m1.header)["stream_blocks"]) >= 3
    X = read_libsvm(tmp_path / "train")
    assert np.mean(m1.predict(X) == X.labels) > 0.95
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]   # spool removed


@pytest.mark.parametrize("args, words", [
    (["--memory-limit", "0.05"], "--memory-limit 0.05 MB is too small"),
    (["-s", "sbp", "--stream"], "-s sbp trains in memory only"),
    (["-s", "asset", "--inner", "dcd", "--stream"], "--inner dcd trains ASSET in memory only"),
    (["-s", "asset", "-D", "512", "--memory-limit", "4"], "--memory-limit 4 MB is too small: -s asset keeps"),
    (["--shuffle-buffer", "100"], "--shuffle-buffer applies to --stream"),
    (["-s", "dcd", "--stream", "--shuffle-buffer", "100"], "--shuffle-buffer applies to -s pegasos, -s asset and -s sgd"),
    (["-s", "bmrm", "--stream", "--shuffle-buffer", "100"], "--shuffle-buffer applies to -s pegasos, -s asset and -s sgd"),
    (["-s", "sgd", "--memory-limit", "2", "--shuffle-buffer", "30000"], "--shuffle-buffer 30000 needs"),
    (["-s", "pegasos", "--memory-limit", "2", "--shuffle-buffer", "30000"], "--shuffle-buffer 30000 needs"),
    (["--stream", "-v", "3"], "cannot be combined with --stream"),
])
def test_cli_errors_are_one_line(tmp_path, args, words):
    r = run(args + [A9A, tmp_path / "model"])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("svm-train: ") and words in lines[0], r.output
    assert not (tmp_path / "model").exists()


def test_help_says_what_stays_in_memory():
    text = " ".join(run(["--help"]).output.split())
    assert "sbp and asset --inner train in memory only" in text


def test_shuffle_buffer_must_be_positive():
    with pytest.raises(ParameterError):
        train_streamed(A9A, TrainParams(solver="pegasos"), shuffle_buffer=0)


def test_cli_bad_input_stdin_and_stale_cache(tmp_path):
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:0.5 2:1\n-1 1:0.2 3:x\n")
    r = run(["--stream", bad, tmp_path / "m0"])
    assert r.exit_code == 2
    assert r.output.strip() == f"svm-train: {bad}:2: invalid value in feature '3:x'"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]   # the spool is removed

    train = tmp_path / "heart.svm"
    train.write_bytes(lzma.decompress(bundled("heart_scale.xz").read_bytes()))
    r = run(["-q", "--stream", "--cache", train, tmp_path / "m1"])
    assert r.exit_code == 0, r.output
    # the streamed run's cache serves an in-memory run as it is (no message, same model)
    r = run(["-q", "--cache", train, tmp_path / "m2"])
    assert r.exit_code == 0 and r.output == "", r.output
    r = run(["-q", train, tmp_path / "m3"])
    assert (tmp_path / "m2").read_bytes() == (tmp_path / "m3").read_bytes()
    # a changed source: the streamed run says so and rebuilds
    os.utime(train, ns=(1, 1))
    r = run(["-q", "--stream", "--cache", train, tmp_path / "m4"])
    assert r.exit_code == 0 and "is stale (the training file changed); rebuilding" in r.output
    # standard input streams too, to the same model
    r = CliRunner().invoke(train_main, ["-q", "--stream", "-", str(tmp_path / "m5")],
                           input=train.read_bytes())
    assert r.exit_code == 0, r.output
    assert (tmp_path / "m1").read_bytes() == (tmp_path / "m4").read_bytes() == (tmp_path / "m5").read_bytes()
