"""--engine dask on a real Dask cluster: a LocalCluster of 2 single-threaded
worker processes on 127.0.0.1, shared by the module (skipped without
dask[distributed]). a9a is split into 4 partition files (one of them xz
compressed), a9a.t into 3. The worker-kill test comes last: it leaves the
cluster with a restarted worker."""
import logging
import lzma
import os
import signal

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import bundled
from reference import liblinear_optimum
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main
from svmtrain.distributed.partitions import expand
from svmtrain.distributed.training import train as dask_train
from svmtrain.io.model_io import load_model
from svmtrain.io.reader import read_libsvm
from svmtrain.params import TrainParams
from svmtrain.training import train as local_train

distributed = pytest.importorskip("distributed")

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
