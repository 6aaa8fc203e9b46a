"""The one orchestration (svmtrain.run): svmtrain.train() runs
streamed and on Dask through it and writes the model svm-train writes,
byte for byte; its hooks carry everything a run says."""
import logging
import lzma

import numpy as np
import pytest
from click.testing import CliRunner

import svmtrain
from conftest import bundled
from svmtrain.cli.train import main as train_main
from svmtrain.errors import ParameterError
from svmtrain.io.reader import read_libsvm
from svmtrain.params import TrainParams
from svmtrain.run import Hooks, RunOptions, check_run, run


@pytest.fixture(scope="module")
def heart(tmp_path_factory):
    path = tmp_path_factory.mktemp("run") / "heart_scale"
    path.write_bytes(lzma.decompress(bundled("heart_scale.xz").read_bytes()))
    return path


def _cli_model(args, data, path):
    r = CliRunner().invoke(train_main, args + [str(data), str(path)])
    assert r.exit_code == 0, r.output
    return path.read_bytes()


def _api_model(path, **kw):
    model = svmtrain.train(**kw)
    svmtrain.save_model(model, path)
    return path.read_bytes()


@pytest.mark.parametrize("kw", [{"stream": True, "memory_limit": 64}, {"memory_limit": 64}])
def test_streamed_api_writes_the_cli_model(heart, tmp_path, kw):
    """svmtrain.train(path, stream=True, memory_limit=64) is svm-train -s pegasos --stream --memory-limit 64."""
    cli = _cli_model(["-s", "pegasos", "--stream", "--memory-limit", "64"], heart, tmp_path / "cli.model")
    api = _api_model(tmp_path / "api.model", data=str(heart), solver="pegasos", **kw)
    assert api == cli
    assert b"stream" in api


def test_dask_api_writes_the_cli_model(heart, tmp_path):
    """svmtrain.train(path, engine="dask", scheduler=ADDRESS) is svm-train -s ocas --engine dask --scheduler ADDRESS."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None, silence_logs=logging.CRITICAL)
    try:
        address = cluster.scheduler_address
        cli = _cli_model(["-s", "ocas", "--engine", "dask", "--scheduler", address], heart, tmp_path / "cli.model")
        notes = []
        api = _api_model(tmp_path / "api.model", data=heart, solver="ocas", engine="dask", scheduler=address,
                         log=notes.append)
    finally:
        cluster.close()
    assert api == cli


def test_in_memory_api_is_the_cli_model(heart, tmp_path):
    cli = _cli_model(["-s", "dcd", "-c", "2"], heart, tmp_path / "cli.model")
    assert _api_model(tmp_path / "api.model", data=heart, solver="dcd", C=2.0) == cli
    X = read_libsvm(heart)
    from_chunk = svmtrain.train(X, params=TrainParams(solver="dcd", C=2.0))
    svmtrain.save_model(from_chunk, tmp_path / "chunk.model")
    assert (tmp_path / "chunk.model").read_bytes() == cli


@pytest.mark.parametrize("kw, message", [
    ({"stream": True, "engine": "dask"}, "--stream trains on this machine; it cannot be combined with --engine dask"),
    ({"scheduler": "tcp://127.0.0.1:1"}, "--scheduler needs --engine dask"),
    ({"shuffle_buffer": 10}, "--shuffle-buffer applies to --stream"),
    ({"engine": "spark"}, "--engine must be local or dask"),
    ({"stream": True, "solver": "smo"}, "trains in memory only"),
])
def test_api_refuses_as_the_cli(heart, kw, message):
    with pytest.raises(ParameterError, match=message):
        svmtrain.train(heart, **kw)


def test_out_of_core_needs_a_file(heart):
    X = read_libsvm(heart)
    with pytest.raises(ParameterError, match="train from files: give a path"):
        svmtrain.train(X, stream=True)
    with pytest.raises(ParameterError, match="a monitor traces in-memory training"):
        svmtrain.train(heart, stream=True, monitor=object())


def test_hooks_carry_the_output(heart):
    """-v's line and -C's lines go through the hooks; the searched model to hooks.model."""
    said = {"echo": [], "result": [], "model": []}
    hooks = Hooks(echo=said["echo"].append, result=said["result"].append,
                  model=lambda m, p: said["model"].append(p))
    params = TrainParams(solver="dcd")
    cv = run(heart, params, RunOptions(folds=3), hooks)
    assert cv.model is None and cv.lines == said["result"] and cv.lines[0].startswith("Cross Validation Accuracy = ")
    said["result"].clear()
    found = run(read_libsvm(heart), params, RunOptions(find_c=True, folds=3), hooks)
    assert said["echo"][0] == "Doing parameter search with 3-fold cross validation."
    assert said["result"] == found.lines and found.lines[0].startswith("Best C = ")
    assert said["model"] == [found.params] and found.params.C == found.search.best.C
    assert np.all(np.isfinite(found.model.W))


def test_check_run_refuses_combinations():
    params = TrainParams(solver="dcd")
    with pytest.raises(ParameterError, match="-C searches in memory"):
        check_run(params, RunOptions(find_c=True, stream=True))
    with pytest.raises(ParameterError, match="give -C .* not both"):
        check_run(params, RunOptions(find_c=True, grid=True))
    with pytest.raises(ParameterError, match="--scale keeps the ranges in the model"):
        check_run(params, RunOptions(scale=True), model_format="liblinear")
    check_run(params, RunOptions(scale=True))


class _RecordingBar:
    """A progress bar that keeps every (done, total, status) it is shown."""

    def __init__(self, shown, desc, **_kw):
        self.desc, self.shown = desc, shown

    def set_to(self, done, total, status=None):
        self.shown.append((self.desc, done, total, status))

    def advance(self, n):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


def test_search_bars_show_points_done_and_the_best_so_far(heart):
    """-C's and --grid's bars count the points and show the best one so far,
    the same best the search reports at its end."""
    shown = []
    hooks = Hooks(bar=lambda desc, **kw: _RecordingBar(shown, desc, **kw))
    data = read_libsvm(heart)
    found = run(data, TrainParams(solver="dcd"), RunOptions(find_c=True, folds=3, best_model=False), hooks)
    path = [s for s in shown if s[0] == "C path"]
    assert [s[1] for s in path] == sorted(s[1] for s in path) and path[-1][1] == 3 * len(found.search.points)
    b = found.search.best
    assert path[-1][3] == f"best C = {b.C:g}, CV accuracy {100.0 * b.accuracy:g}%"
    shown.clear()
    grid = run(data, TrainParams(solver="smo", kernel_type=2),
               RunOptions(grid=True, folds=3, log2c="-1,1,2", log2g="-2,0,2", grid_out="null", best_model=False),
               hooks)
    bars = [s for s in shown if s[0] == "grid"]
    assert bars[-1][1:3] == (4, 4)
    g = grid.search.best
    assert bars[-1][3] == f"best c={2.0 ** g.log2c}, g={2.0 ** g.log2g}, rate={g.rate}"
