"""--engine dask on a real Dask cluster: a LocalCluster of 2 single-threaded
worker processes on 127.0.0.1, shared by the module (skipped without
dask[distributed]). a9a is split into 4 partition files (one of them xz
compressed), a9a.t into 3, heart_scale into 3 and into 1. The worker-kill
test comes last: it leaves the cluster with a restarted worker."""
import dataclasses
import logging
import lzma
import os
import signal

import numpy as np
import pytest
import distributed
from click.testing import CliRunner

from conftest import bundled
from reference import liblinear_optimum
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main
from svmtrain.distributed.partitions import expand
from svmtrain.distributed.training import train as dask_train
from svmtrain.io.model_io import load_model
from svmtrain.io.reader import read_libsvm
from svmtrain.data.dataset import take_rows
from svmtrain.params import TrainParams
from svmtrain.training.train import train as local_train

TOLREL = 0.01


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None, silence_logs=logging.CRITICAL)
    c = distributed.Client(cluster, set_as_default=False)
    yield c
    c.close()
    cluster.close()


def _split(src, directory, parts, compress_first=False):
    with lzma.open(src, "rb") as f:
        lines = f.readlines()
    directory.mkdir()
    cuts = np.linspace(0, len(lines), parts + 1).astype(int)
    for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
        data = b"".join(lines[a:b])
        if i == 0 and compress_first:
            with lzma.open(directory / f"part-{i}.xz", "wb") as f:
                f.write(data)
        else:
            (directory / f"part-{i}").write_bytes(data)
    return directory


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("dask")
    return {"train": _split(bundled("a9a.xz"), root / "train", 4, compress_first=True),
            "test": _split(bundled("a9a.t.xz"), root / "test", 3), "root": root}


@pytest.fixture(scope="module")
def a9a():
    X = read_libsvm(bundled("a9a.xz"))
    return X, read_libsvm(bundled("a9a.t.xz"))


@pytest.fixture(scope="module")
def optimum(a9a):
    """f* of lambda/2 |w|^2 + mean hinge at C = 1, by LIBLINEAR at eps 1e-6."""
    X, _ = a9a
    y = np.where(X.labels > 0, 1.0, -1.0)
    return liblinear_optimum(X, y, 1.0 / X.n_rows, 123)[1]


def _accuracy(model, T):
    return 100.0 * np.mean(model.predict(T) == T.labels)


def test_ocas_on_four_partitions(client, files, a9a, optimum):
    """Same objective as the local run within TolRel (and within TolRel of
    LIBLINEAR's optimum); the dual bound from the summed cuts is valid."""
    X, T = a9a
    params = TrainParams(solver="ocas", C=1.0, threads=1)
    local = local_train(X, params)
    notes = []
    model, n, traffic = dask_train(expand(files["train"]), params, client, notify=notes.append)
    r, r_local = model.fit_results[0], local.fit_results[0]
    assert n == X.n_rows and model.n_features == 123 and list(model.labels) == [1.0, -1.0]
    assert r.converged and r.info["exit"] == "TolRel"
    assert abs(r.objective - r_local.objective) <= TOLREL * r_local.objective
    assert r.objective * (1 - TOLREL) <= optimum * (1 + 1e-12)
    assert r.info["Q_D"] / X.n_rows <= optimum * (1 + 1e-9)
    assert abs(_accuracy(model, T) - _accuracy(local, T)) <= 0.2
    # traffic per task (= per worker and round): at most O(dim) numbers plus
    # a line-search answer of at most 48 KiB, never the n-vectors (8 n / 2 bytes)
    for kind in ("direction", "line search", "move"):
        per_task = (traffic.up[kind] + traffic.down[kind]) / traffic.tasks[kind]
        assert per_task <= 2 * 8 * 124 + 48 * 1024 + 512 < 8 * n / 2, (kind, per_task)
    assert not notes


def test_pegasos_accuracy_matches_local(client, files, a9a):
    """Fixed seed and k: the same draws, so the test accuracy is within 0.2
    points of the local run (in fact the same model up to rounding)."""
    X, T = a9a
    params = TrainParams(solver="pegasos", lam=1e-3, batch_size=1000, epochs=3, seed=7)
    local = local_train(X, params)
    model, _, traffic = dask_train(expand(files["train"]), params, client)
    acc, acc_local = _accuracy(model, T), _accuracy(local, T)
    assert acc_local > 84.0
    assert abs(acc - acc_local) <= 0.2
    assert model.fit_results[0].objective == pytest.approx(local.fit_results[0].objective, rel=1e-6)
    assert traffic.rounds["step"] == 3 * 33


def test_command_line_train_and_predict(client, files, a9a, tmp_path):
    """svm-train/svm-predict --engine dask --scheduler: the predictions (and
    decision values) are exactly those of the local svm-predict, in one file
    or one file per partition."""
    addr = client.scheduler.address
    model_path = tmp_path / "a9a.model"
    r = CliRunner().invoke(train_main, ["--engine", "dask", "--scheduler", addr, "-s", "ocas", "-B", "1",
                                        str(files["train"]), str(model_path)])
    assert r.exit_code == 0, r.output
    assert "#iter = " in r.output and "Objective value" in r.output
    model = load_model(model_path)
    assert _accuracy(model, a9a[1]) > 84.5
    for extra in ([], ["-d"]):
        local_out, dask_out = tmp_path / "local.out", tmp_path / "dask.out"
        rl = CliRunner().invoke(predict_main, extra + [str(bundled("a9a.t.xz")), str(model_path), str(local_out)])
        rd = CliRunner().invoke(predict_main, extra + ["--engine", "dask", "--scheduler", addr,
                                                       str(files["test"]), str(model_path), str(dask_out)])
        assert rl.exit_code == 0 and rd.exit_code == 0, rd.output
        assert dask_out.read_bytes() == local_out.read_bytes()
        assert rd.output == rl.output          # the accuracy line
    out_dir = tmp_path / "per-part"
    rd = CliRunner().invoke(predict_main, ["--engine", "dask", "--scheduler", addr, "--output-dir", str(out_dir),
                                           str(files["test"]), str(model_path)])
    assert rd.exit_code == 0, rd.output
    names = sorted(os.listdir(out_dir))
    assert names == ["part-0.predictions", "part-1.predictions", "part-2.predictions"]
    joined = b"".join((out_dir / n).read_bytes() for n in names)
    rl = CliRunner().invoke(predict_main, [str(bundled("a9a.t.xz")), str(model_path), str(tmp_path / "plain")])
    assert joined == (tmp_path / "plain").read_bytes()


def test_bad_partition_is_one_line(client, files, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "a").write_text("1 1:1 2:0.5\n-1 3:1\n")
    (bad / "b").write_text("1 1:1\n+1 2:x\n")
    r = CliRunner().invoke(train_main, ["--engine", "dask", "--scheduler", client.scheduler.address, "-s", "ocas",
                                        str(bad), str(tmp_path / "m")])
    assert r.exit_code == 2
    assert r.output.startswith(f"svm-train: {bad / 'b'}:2: ") and r.output.count("\n") == 1, r.output


def _clear_states():
    from svmtrain.distributed.partitions import STATE
    STATE.clear()


@pytest.fixture(scope="module")
def regression_parts(tmp_path_factory):
    """A synthetic regression set (sparse rows, real targets) in 3 partition files."""
    from test_regression import synthetic, write_text
    root = tmp_path_factory.mktemp("dask-r")
    X, _ = synthetic(n=3000, d=30, seed=3)
    parts = root / "train"
    parts.mkdir()
    cuts = [0, 1000, 2200, 3000]
    for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
        write_text(parts / f"part-{i}", take_rows(X, np.arange(a, b)))
    return parts, X


def test_ocas_logistic_on_partitions_is_the_local_run(client, files, a9a):
    """-s ocas --loss log on 4 partitions: the local run's iterations and
    objective (to rounding), which is LIBLINEAR -s 7's optimum within
    TolRel; a lost partition state mid-run (the workers' states cleared after
    iteration 3) is rebuilt from w_b and the run ends at the same optimum."""
    X, T = a9a
    params = TrainParams(solver="ocas", loss="log", C=1.0, threads=1)
    local = local_train(X, params)
    model, _, traffic = dask_train(expand(files["train"]), params, client)
    r, r_local = model.fit_results[0], local.fit_results[0]
    assert r.converged and r.n_iter == r_local.n_iter
    assert r.objective == pytest.approx(r_local.objective, rel=1e-9)
    dcd = local_train(X, TrainParams(solver="dcd", loss="log", C=1.0, eps=1e-6)).fit_results[0]
    assert dcd.objective <= r.objective <= dcd.objective * (1 + TOLREL)
    assert _accuracy(model, T) > 84.5
    per_task = (traffic.up["line search"] + traffic.down["line search"]) / traffic.tasks["line search"]
    assert per_task < 2048, per_task          # a line-search round moves O(1) numbers
    notes, cleared = [], []

    def log(line):
        if line.startswith("   3:") and not cleared:
            client.run(_clear_states)
            cleared.append(line)

    again, _, _ = dask_train(expand(files["train"]), params, client, log=log, notify=notes.append)
    assert cleared and any("recomputing" in s for s in notes), notes
    assert again.fit_results[0].objective == pytest.approx(r_local.objective, rel=1e-6)


def test_pegasos_logistic_on_partitions_is_the_local_run(client, files, a9a):
    X, T = a9a
    params = TrainParams(solver="pegasos", loss="log", lam=1e-3, batch_size=200, epochs=3, seed=3)
    local = local_train(X, params)
    model, _, _ = dask_train(expand(files["train"]), params, client)
    assert model.fit_results[0].objective == pytest.approx(local.fit_results[0].objective, rel=1e-6)
    assert _accuracy(local, T) > 84.0
    assert abs(_accuracy(model, T) - _accuracy(local, T)) <= 0.1


@pytest.mark.parametrize("solver", ["ocas", "pegasos"])
@pytest.mark.parametrize("loss", ["epsilon-insensitive", "squared-epsilon-insensitive"])
def test_regression_on_partitions_is_the_local_run(client, regression_parts, solver, loss):
    """--task r on 3 partitions: the local run's objective (ocas: the
    dcd optimum within TolRel)."""
    parts, X = regression_parts
    kw = {"C": 1.0, "threads": 1} if solver == "ocas" else {"lam": 1e-3, "batch_size": 50, "epochs": 4, "seed": 5}
    params = TrainParams(solver=solver, task="r", loss=loss, epsilon=0.2, **kw)
    local = local_train(X, params)
    model, n, _ = dask_train(expand(parts), params, client)
    r = model.fit_results[0]
    assert n == 3000 and model.task == "r" and len(model.labels) == 0
    assert r.objective == pytest.approx(local.fit_results[0].objective, rel=1e-6)
    if solver == "ocas":
        dcd = local_train(X, TrainParams(solver="dcd", task="r", loss=loss, epsilon=0.2, C=1.0, eps=1e-6))
        assert r.objective <= dcd.fit_results[0].objective * (1 + TOLREL)


def test_regression_command_lines_on_the_cluster(client, regression_parts, tmp_path):
    """svm-train/svm-predict --engine dask --task r: the model file of the
    local run; the predictions and LIBSVM's two regression lines of the
    local svm-predict."""
    parts, X = regression_parts
    addr = client.scheduler.address
    from test_regression import write_text
    whole = tmp_path / "whole"
    write_text(whole, X)
    m_dask, m_local = tmp_path / "dask.model", tmp_path / "local.model"
    args = ["-s", "ocas", "--task", "r", "-p", "0.2", "-c", "1", "--threads", "1"]
    rd = CliRunner().invoke(train_main, ["--engine", "dask", "--scheduler", addr] + args + [str(parts), str(m_dask)])
    rl = CliRunner().invoke(train_main, args + [str(whole), str(m_local)])
    assert rd.exit_code == 0 and rl.exit_code == 0, rd.output + rl.output
    np.testing.assert_allclose(load_model(m_dask).W, load_model(m_local).W, rtol=1e-6, atol=1e-9)
    out_d, out_l = tmp_path / "d.out", tmp_path / "l.out"
    pd = CliRunner().invoke(predict_main, ["--engine", "dask", "--scheduler", addr, str(parts), str(m_local), str(out_d)])
    pl = CliRunner().invoke(predict_main, [str(whole), str(m_local), str(out_l)])
    assert pd.exit_code == 0 and pl.exit_code == 0, pd.output
    assert out_d.read_bytes() == out_l.read_bytes()
    assert "Mean squared error = " in pl.output and pd.output == pl.output


@pytest.mark.parametrize("kw, names", [
    ({"solver": "dcd"}, "trains classification with --loss hinge with -s ocas, -s pegasos, -s sgd, -s bmrm, "
                        "not -s dcd"),
    ({"solver": "ocas", "task": "p"}, "does not train ranking; it trains in memory"),
    ({"solver": "dcd", "loss": "squared-hinge"}, "does not train classification with --loss squared-hinge; it trains"),
    ({"solver": "bmrm", "task": "r"}, "trains regression with -s ocas, -s pegasos, -s sgd, not -s bmrm"),
    ({"solver": "sgd", "task": "o"}, "does not train one-class"),
    ({"solver": "bmrm", "multiclass": "cs"}, r"--multiclass cs \(Crammer-Singer\) with -s ocas, not -s bmrm"),
])
def test_dask_refusals_name_the_alternative(kw, names):
    from svmtrain.distributed.training import check_supported
    from svmtrain.errors import ParameterError
    with pytest.raises(ParameterError, match=names):
        check_supported(TrainParams(**kw))


@pytest.fixture(scope="module")
def heart_parts(tmp_path_factory):
    """heart_scale (270 rows) in 3 partition files, and in 1."""
    root = tmp_path_factory.mktemp("dask-heart")
    return {"three": _split(bundled("heart_scale.xz"), root / "three", 3),
            "one": _split(bundled("heart_scale.xz"), root / "one", 1)}


def test_bmrm_on_partitions_is_the_local_run(client, heart_parts, heart):
    """-s bmrm on 3 partitions: the distributed cp loop with BMRM's stopping
    rule makes the local run's iterations, with its w to rounding, its
    objective and its gap (at most eps, on the absolute lambda form)."""
    params = TrainParams(solver="bmrm", C=2.0, eps=1e-3, threads=1)
    local = local_train(heart, params).fit_results[0]
    model, n, traffic = dask_train(expand(heart_parts["three"]), params, client)
    r = model.fit_results[0]
    assert n == 270 and r.converged and r.info["exit"] == local.info["exit"] == "TolAbs"
    assert r.n_iter == local.n_iter > 10
    np.testing.assert_allclose(r.w, local.w, rtol=1e-8, atol=1e-10)
    assert r.objective == pytest.approx(local.objective, rel=1e-10)
    assert 0.0 <= r.info["bmrm_gap"] <= 1e-3
    assert r.info["bmrm_gap"] == pytest.approx(local.info["bmrm_gap"], rel=1e-6, abs=1e-12)
    # the cp method has no line search: a direction round (the loss at w_c) and a move round per iteration
    assert traffic.rounds["line search"] == 0 and traffic.rounds["move"] == r.n_iter + 1


@pytest.fixture(scope="module")
def a9a_optimum_c01(a9a):
    """f* of lambda/2 |w|^2 + mean hinge at C = 0.1 (dcd at eps 1e-6)."""
    return local_train(a9a[0], TrainParams(solver="dcd", C=0.1, eps=1e-6)).fit_results[0].objective


@pytest.mark.parametrize("update", ["bottou", "sgdqn", "fobos"])
def test_sgd_parameter_mixing_reaches_the_optimum(client, files, a9a, a9a_optimum_c01, update):
    """-s sgd on a9a in 4 partitions (consecutive parts of the file), one
    mixing round per epoch: the in-memory pilot's eta0 (the same sample),
    an objective within 2 % of dcd's optimum (measured 0.35-0.5 %; the
    in-memory run's last iterate 1.6-2.1 %) and within 3 % of the in-memory
    run's; the same seed gives the same model, bit for bit; O(dim) traffic."""
    X, T = a9a
    params = TrainParams(solver="sgd", update=update, C=0.1, epochs=10, seed=1)
    local = local_train(X, params).fit_results[0]
    model, _, traffic = dask_train(expand(files["train"]), params, client)
    r = model.fit_results[0]
    assert r.info["mixing"] == "iterative" and r.info["update"] == update
    assert r.info["eta0"] == local.info["eta0"] and r.n_iter == local.n_iter == 10 * X.n_rows
    assert a9a_optimum_c01 <= r.objective <= a9a_optimum_c01 * 1.02
    assert abs(r.objective - local.objective) <= 0.03 * local.objective
    assert _accuracy(model, T) > 84.0
    assert traffic.rounds["epoch"] == 10 and traffic.rounds["sample"] == 1 and traffic.rounds["objective"] == 1
    vectors = 2 if update == "sgdqn" else 1        # w (and D) down and up, per task
    per_task = (traffic.up["epoch"] + traffic.down["epoch"]) / traffic.tasks["epoch"]
    assert per_task <= 2 * vectors * 8 * 124 + 512, per_task
    again, _, _ = dask_train(expand(files["train"]), params, client)
    assert np.array_equal(again.fit_results[0].w, r.w) and again.fit_results[0].b == r.b
    if update == "bottou":
        other, _, _ = dask_train(expand(files["train"]), dataclasses.replace(params, seed=2), client)
        assert not np.array_equal(other.fit_results[0].w, r.w)


@pytest.mark.parametrize("update, extra", [("bottou", {}), ("bottou", {"bias": 1.0}), ("fobos", {"unreg_bias": True}),
                                           ("fobos", {"l1": 0.01}), ("sgdqn", {})])
def test_sgd_on_one_partition_is_the_in_memory_algorithm(client, heart_parts, heart, update, extra):
    """One partition: the in-memory algorithm (sgd.Run, the same eta0 and
    step sizes) run on the orders the worker drew gives the same w to
    rounding (bottou, fobos); SGD-QN applies its pending regularisation at
    each epoch's end, which moves w by a few percent and the objective by
    less than 0.5 %. Against the in-memory run with its own orders: the
    seed-to-seed spread (within 2 % here)."""
    from svmtrain.distributed.sgd import draws, epoch_order
    from svmtrain.solvers.sgd import sgd
    from svmtrain.solvers.base import with_defaults
    params = with_defaults(TrainParams(solver="sgd", update=update, C=1.0, epochs=5, seed=3, **extra), sgd.DEFAULTS)
    model, n, _ = dask_train(expand(heart_parts["one"]), params, client)
    r = model.fit_results[0]
    y = np.where(heart.labels == model.labels[0], 1.0, -1.0)
    lam = params.resolved_lambda(n)
    run = sgd.Run(heart, y, heart.n_features, params, lam, np.random.default_rng(params.seed))
    _, key = draws(params.seed, n)
    for epoch in range(params.epochs):
        run.steps(epoch_order(key, epoch, 0, n))
    w, b = run.current()
    w = w if params.bias >= 0 else w[:-1]
    assert r.info["eta0"] == run.eta0
    if update == "sgdqn":
        assert np.abs(r.w - w).max() <= 0.05 * np.abs(w).max()
        assert r.objective == pytest.approx(run.objective(*run.current()), rel=5e-3)
    else:
        np.testing.assert_allclose(r.w, w, rtol=1e-10, atol=1e-12 * np.abs(w).max())
        assert r.b == pytest.approx(b, rel=1e-10, abs=1e-14)
        assert r.objective == pytest.approx(run.objective(*run.current()), rel=1e-10)
    assert r.objective == pytest.approx(local_train(heart, params).fit_results[0].objective, rel=0.02)


@pytest.mark.parametrize("task, loss", [("c", "log"), ("r", "epsilon-insensitive"),
                                        ("r", "squared-epsilon-insensitive")])
def test_sgd_other_losses_on_partitions(client, files, a9a, regression_parts, task, loss):
    """-s sgd --loss log on a9a (4 partitions) and --task r on the synthetic
    regression set (3 partitions, unequal): within 2 % of dcd's optimum
    and 3 % of the in-memory run's objective."""
    if task == "c":
        X, parts, kw = a9a[0], files["train"], {"C": 0.1}
    else:
        parts, X = regression_parts
        kw = {"C": 1.0, "epsilon": 0.2}
    params = TrainParams(solver="sgd", task=task, loss=loss, epochs=10, seed=1, **kw)
    local = local_train(X, params).fit_results[0]
    model, _, _ = dask_train(expand(parts), params, client)
    r = model.fit_results[0]
    best = local_train(X, TrainParams(solver="dcd", task=task, loss=loss, eps=1e-6, **kw)).fit_results[0].objective
    assert best <= r.objective * (1 + 1e-9) and r.objective <= best * 1.02
    assert abs(r.objective - local.objective) <= 0.03 * local.objective


def test_sgd_survives_a_lost_worker_in_process(heart_parts):
    """Epoch tasks are pure: a worker's partitions dropped before the 3rd
    epoch round (parsed again by the other worker) give the same model
    up to the rounding of the per-worker sums."""
    from test_distributed_parts import InProcessSession
    from svmtrain.distributed import sgd as dsgd
    from svmtrain.solvers.sgd import sgd
    from svmtrain.solvers.base import with_defaults
    specs = expand(heart_parts["three"])
    params = with_defaults(TrainParams(solver="sgd", update="fobos", l1=0.01, C=1.0, epochs=5, seed=4), sgd.DEFAULTS)
    out = []
    for losses in ((), (("epoch", 3),)):
        sess = InProcessSession(specs)
        for loss in losses:
            sess.lose(*loss)
        try:
            meta = sess.load()
            n, d = sum(m["rows"] for m in meta), max(m["n_features"] for m in meta)
            out.append((dsgd.fit(sess, (0, 1.0, (1.0, 1.0)), n, d, params), sess.notes))
        finally:
            sess.close()
    (plain, _), (lost, notes) = out
    assert notes and not out[0][1]
    np.testing.assert_allclose(lost.w, plain.w, rtol=1e-12, atol=1e-14)
    assert lost.objective == pytest.approx(plain.objective, rel=1e-12)


def test_sgd_command_line_on_the_cluster(client, files, a9a, tmp_path):
    """svm-train --engine dask -s sgd: the per-epoch objective lines with -e
    and --verbose (one mixing round each), a model file above 84 % on a9a.t."""
    addr = client.scheduler.address
    m_dask = tmp_path / "dask.model"
    args = ["-s", "sgd", "--update", "sgdqn", "-c", "0.1", "-T", "6", "-e", "1e-6", "--verbose"]
    rd = CliRunner().invoke(train_main, ["--engine", "dask", "--scheduler", addr] + args
                            + [str(files["train"]), str(m_dask)])
    assert rd.exit_code == 0, rd.output
    # -e stops after the first epoch that does not improve the objective by 1e-6 relative
    epochs = rd.output.count(": objective ")
    assert 1 <= epochs <= 6 and f"#iter = {epochs * 32561}," in rd.output, rd.output
    model = load_model(m_dask)
    assert model.solver == "sgd"
    assert _accuracy(model, a9a[1]) > 84.0


@pytest.fixture(scope="module")
def cs_parts(tmp_path_factory):
    """3 overlapping classes, 4 features: 300 training rows in 3 partition
    files (and whole, as a Chunk), 150 held-out test rows."""
    from svmtrain.data.arrays import as_chunk
    from test_crammer_singer import libsvm_text, multiclass_data
    X, y = multiclass_data(n=450, d=4, k=3, seed=1)
    root = tmp_path_factory.mktemp("dask-cs")
    (root / "parts").mkdir()
    for i, (a, b) in enumerate(((0, 120), (120, 121), (121, 300))):
        (root / "parts" / f"part-{i}").write_text(libsvm_text(X[a:b], y[a:b]))
    (root / "whole").write_text(libsvm_text(X[:300], y[:300]))
    return root, read_libsvm(root / "whole"), as_chunk(X[300:], y[300:].astype(np.float64))


@pytest.mark.parametrize("params", [{}, {"bias": 1.0, "C": 0.3, "class_weights": {2.0: 3.0, 3.0: 0.5}},
                                    {"ocas_method": "cp", "max_iter": 40}])
def test_ocas_cs_on_partitions_is_the_local_run(client, cs_parts, params):
    """-s ocas --multiclass cs on 3 partitions (one of a single row): the
    local run's problem and loop (its reduced QP too), its objective to 1e-6 (the iterates
    agree up to the rounding of the per-worker sums; the reduced QP's
    tolerance lets that move a late iterate, so -e 1e-6 brings both to the
    optimum) and its predictions on held-out rows; no per-row data travels."""
    root, whole, test = cs_parts
    p = TrainParams(solver="ocas", multiclass="cs", eps=1e-6, **params)
    local = local_train(whole, p)
    notes = []
    model, n, traffic = dask_train(expand(root / "parts"), p, client, notify=notes.append)
    r, r_local = model.fit_results[0], local.fit_results[0]
    assert n == 300 and model.W.shape == local.W.shape and list(model.labels) == list(local.labels)
    assert r.info["exit"] == r_local.info["exit"] and abs(r.n_iter - r_local.n_iter) <= 5
    from svmtrain.distributed.ocas_cs import DaskCrammerSinger
    from svmtrain.solvers.ocas.ocas_cs import CrammerSingerForm
    assert DaskCrammerSinger.reduced_qp == CrammerSingerForm.reduced_qp
    assert (r.info["qp_steps"] > 0) == (r_local.info["qp_steps"] > 0)     # pair steps both, or neither
    assert r.objective == pytest.approx(r_local.objective, rel=1e-6)
    assert r.info["Q_D"] <= r_local.info["Q_P"] * (1 + 1e-9)
    np.testing.assert_array_equal(model.predict(test), local.predict(test))
    # per task at most the (d+1) x M weights, alpha or a Gram row (k cuts) and a
    # line-search answer (at most 48 KiB whatever n): never the n x M scores
    k = r.info["n_cuts"]
    for kind, answer in (("move", 0), ("scatter", 0), ("scores", 48 * 1024)):
        per_task = (traffic.up[kind] + traffic.down[kind]) / traffic.tasks[kind]
        assert per_task <= 8 * 5 * 3 + 8 * k + answer + 512, (kind, per_task)
    assert traffic.rounds["move"] == r.n_iter + 1 and not notes


def _cs_primal(model, chunk):
    """1/2 |W|^2 + sum_i max_m ([m != y_i] + s_im - s_iy_i) (C = 1), from the model's scores."""
    S = model.decision_function(chunk)
    yi = np.searchsorted(np.sort(model.labels), chunk.labels)
    S = S[:, np.argsort(model.labels)]
    own = S[np.arange(len(yi)), yi]
    margin = 1.0 + S - own[:, None]
    margin[np.arange(len(yi)), yi] = 0.0
    return 0.5 * float(np.sum(model.W * model.W)) + float(margin.max(axis=1).sum())


def test_ocas_cs_command_line_on_the_cluster(client, cs_parts, tmp_path):
    """svm-train --engine dask -s ocas --multiclass cs: the model file of the
    local run: its held-out predictions, its objective to -e 1e-6, and W as
    close as that objective gap allows (F is 1-strongly convex, so each W is
    within sqrt(2 gap) of the optimum)."""
    root, whole, test = cs_parts
    addr = client.scheduler.address
    args = ["-q", "-s", "ocas", "--multiclass", "cs", "-e", "1e-6", "-B", "1"]
    rd = CliRunner().invoke(train_main, ["--engine", "dask", "--scheduler", addr] + args
                            + [str(root / "parts"), str(tmp_path / "d")])
    rl = CliRunner().invoke(train_main, args + [str(root / "whole"), str(tmp_path / "l")])
    assert rd.exit_code == 0 and rl.exit_code == 0, rd.output + rl.output
    md, ml = load_model(tmp_path / "d"), load_model(tmp_path / "l")
    np.testing.assert_array_equal(md.predict(test), ml.predict(test))
    F_d, F_l = _cs_primal(md, whole), _cs_primal(ml, whole)
    assert F_d == pytest.approx(F_l, rel=1e-6)
    assert np.abs(md.W - ml.W).max() <= 2 * np.sqrt(2e-6 * F_l)


def test_ocas_cs_lost_worker_stops_with_one_line(cs_parts):
    """A worker lost mid-run takes its partitions' scores and cuts: the run
    stops with a one-line SvmtrainError (in process: no cluster needed)."""
    from test_distributed_parts import InProcessSession
    from svmtrain.distributed import ocas_cs
    from svmtrain.errors import SvmtrainError
    from svmtrain.training.train import label_order
    root, _, _ = cs_parts
    sess = InProcessSession(expand(root / "parts"))
    sess.lose("scores", 4)
    try:
        meta = sess.load()
        order = label_order(np.concatenate([m["labels"] for m in meta]))
        with pytest.raises(SvmtrainError, match=r"worker lost\): -s ocas --multiclass cs keeps its per-row"):
            ocas_cs.train_model(sess, order, 300, 4, TrainParams(solver="ocas", multiclass="cs"))
    finally:
        sess.close()


def test_worker_killed_during_ocas(client, files, a9a, optimum):
    """A worker process dies during training (SIGKILL after iteration 3):
    the run goes on, says so, and ends with the right objective."""
    X, _ = a9a
    params = TrainParams(solver="ocas", C=1.0, threads=1)
    pids = client.run(os.getpid)
    victim = sorted(pids)[0]
    killed, notes = [], []

    def log(line):
        if line.startswith("   3:") and not killed:
            os.kill(pids[victim], signal.SIGKILL)
            killed.append(victim)

    model, _, _ = dask_train(expand(files["train"]), params, client, log=log, notify=notes.append)
    r = model.fit_results[0]
    assert killed
    assert any(victim in s and "lost worker" in s for s in notes), notes
    assert any("recomputing" in s for s in notes), notes
    assert r.converged and r.objective * (1 - TOLREL) <= optimum * (1 + 1e-12)
    assert r.info["Q_D"] / X.n_rows <= optimum * (1 + 1e-9)
