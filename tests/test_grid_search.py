"""--grid: grid.py's ranges, order and output (svmtrain/selection/grid_search.py) on data parsed once."""
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import bundled, needs
from svmtrain.cli.train import main as train_main
from svmtrain.data.dataset import take_rows
from svmtrain.errors import ParameterError
from svmtrain.selection.grid_search import grid_points, parse_range, permute, point_params, search_grid
from svmtrain.io.model_io import load_model
from svmtrain.io.reader import read_libsvm
from svmtrain.params import TrainParams
from svmtrain.solvers import kernel_solvers
from svmtrain.training.train import cross_val_predict

OUT_LINE = re.compile(r"^(log2c=-?\d+(\.\d+)? )?(log2g=-?\d+(\.\d+)? )?rate=\d+(\.\d+)?$")
POINT_LINE = re.compile(r"^\[local\] (-?\d+\.\d+ )+\d+(\.\d+)? \(best (c=\S+, )?(g=\S+, )?rate=\S+\)$")


@pytest.fixture(scope="module")
def small():
    """120 rows of heart_scale: small enough for a grid in a test."""
    data = read_libsvm(bundled("heart_scale.xz"))
    return take_rows(data, np.arange(120))


def test_ranges_as_grid_py():
    assert parse_range("-5,15,2", "-log2c") == [-5.0, -3.0, -1.0, 1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0]
    assert parse_range("3,-15,-2", "-log2g")[:3] == [3.0, 1.0, -1.0] and parse_range("3,-15,-2", "-g")[-1] == -15.0
    assert parse_range("1,2,0.5", "-log2c") == [1.0, 1.5, 2.0]
    assert parse_range("null", "-log2g") is None
    for bad in ("1,2", "a,b,c", "1,5,0", "1,5,-1"):
        with pytest.raises(ParameterError, match="-log2c"):
            parse_range(bad, "-log2c")


def test_order_is_grid_pys():
    """The order /usr/bin/svm-grid printed for -log2c -1,1,1 -log2g -1,1,1 (written down from a run)."""
    r = [-1.0, 0.0, 1.0]
    assert permute(r) == [0.0, -1.0, 1.0]
    assert permute([1, 2, 3, 4, 5, 6, 7]) == [4, 2, 6, 1, 5, 3, 7]
    assert grid_points(r, r) == [(0.0, 0.0), (0.0, -1.0), (-1.0, 0.0), (-1.0, -1.0), (0.0, 1.0), (-1.0, 1.0),
                                 (1.0, 0.0), (1.0, -1.0), (1.0, 1.0)]
    assert grid_points(r, None) == [(0.0, None), (-1.0, None), (1.0, None)]
    c, g = parse_range("-5,15,2", "c"), parse_range("3,-15,-2", "g")
    pts = grid_points(c, g)
    assert len(pts) == len(set(pts)) == len(c) * len(g)


def test_each_rate_is_an_independent_cross_validation(small):
    """The rate at every point = svm-train -v's accuracy (same seed, same folds) at that C and gamma."""
    params = TrainParams(solver="asset", kernel_type=2, dim=48)
    result = search_grid(small, params, [-1.0, 1.0], [-3.0, -1.0], folds=3, jobs=1)
    assert [(p.log2c, p.log2g) for p in result.points] == grid_points([-1.0, 1.0], [-3.0, -1.0])
    for p in result.points:
        pred = cross_val_predict(small, point_params(params, p.log2c, p.log2g), 3)
        assert p.rate == float("%g" % (100.0 * np.mean(pred == small.labels)))
    assert result.best.rate == max(p.rate for p in result.points)


def test_smo_rates_are_cold_cross_validations_from_the_command_line(tmp_path, monkeypatch):
    """The exact solver under --grid (the default of a LIBSVM line with
    --grid): each point's rate is svm-train -v's at that C and gamma."""
    monkeypatch.chdir(tmp_path)
    data = str(bundled("heart_scale.xz"))
    r = CliRunner().invoke(train_main, ["--grid", "-log2c", "-1,1,2", "-log2g", "-3,-1,2", "-v", "3", data])
    assert r.exit_code == 0, r.output
    points = re.findall(r"^\[local\] (\S+) (\S+) (\S+) ", r.output, re.M)
    assert len(points) == 4
    for log2c, log2g, rate in points:
        cv = CliRunner().invoke(train_main, ["-s", "smo", "-v", "3", "-c", repr(2.0 ** float(log2c)),
                                             "-g", repr(2.0 ** float(log2g)), data])
        assert cv.exit_code == 0, cv.output
        assert float(rate) == float("%g" % float(re.search(r"Accuracy = (\S+)%", cv.output).group(1)))


@pytest.mark.parametrize("solver", kernel_solvers())
def test_every_kernel_solver_of_the_registry_searches(small, solver):
    extra = {"asset": dict(dim=32), "sbp": dict(epochs=2), "norma": dict(budget=50)}.get(solver, {})
    params = TrainParams(solver=solver, kernel_type=2, **extra)
    result = search_grid(small, params, [-1.0, 1.0], [-2.0], folds=3, jobs=1)
    assert [(p.log2c, p.log2g) for p in result.points] == grid_points([-1.0, 1.0], [-2.0])
    assert all(0.0 < p.rate <= 100.0 for p in result.points)


def test_jobs_do_not_change_the_result(small):
    params = TrainParams(solver="asset", kernel_type=2, dim=32)
    one = search_grid(small, params, [-1.0, 1.0], [-2.0, 0.0], folds=3, jobs=1)
    two = search_grid(small, params, [-1.0, 1.0], [-2.0, 0.0], folds=3, jobs=2)
    assert [(p.log2c, p.log2g, p.rate) for p in one.points] == [(p.log2c, p.log2g, p.rate) for p in two.points]


FORKED_GRID = """
import os
import sys
import numpy as np
import svmtrain.selection.grid_search as grid_search
from svmtrain.data.dataset import Chunk
from svmtrain.params import TrainParams
from svmtrain.solvers import kernel_solvers
mode, pid_file = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(3)
# 3,000 rows of 50 values: each fold's 75,000 training values are above PARALLEL_MIN_NNZ (65,536)
rows, per_row, d = 3000, 50, 20000
indices = np.concatenate([np.sort(rng.choice(d, per_row, replace=False)) for _ in range(rows)]).astype(np.int32)
values = rng.integers(1, 4, rows * per_row).astype(np.float64)
indptr = np.arange(rows + 1, dtype=np.int64) * per_row
w = rng.normal(size=d)
y = np.where(np.add.reduceat(values * w[indices], indptr[:-1]) > 0, 1.0, -1.0)
data = Chunk(labels=y, indptr=indptr, indices=indices, values=values, qid=np.zeros(rows, np.int64))
task = grid_search._local


def recorded(t):            # (the forked workers inherit this module as patched here)
    with open(pid_file, "a") as f:
        f.write(f"{os.getpid()}\\n")
    return task(t)


grid_search._local = recorded
if mode == "launched":           # as the start-up server's spare does before its run
    import numba.np.ufunc.parallel as parallel
    parallel._launch_threads()
extra = {"asset": dict(dim=32), "sbp": dict(epochs=1), "norma": dict(budget=50), "cvm": dict(eps=1e-3)}
for solver in kernel_solvers():
    params = TrainParams(solver=solver, kernel_type=2, **extra.get(solver, {}))
    result = grid_search.search_grid(data, params, [0.0, 1.0], [-6.0], folds=2, jobs=1 if mode == "one" else 2)
    print(solver, [p.rate for p in result.points])
print("parent", os.getpid())
"""


@pytest.mark.slow
def test_forked_workers_run_where_the_parent_started_numbas_threading_layer(tmp_path):
    """svm-grid's workers are forked from the run, whose process may have
    started numba's threading layer (the start-up server's spare loads the
    parallel kernels before its run). With GNU OpenMP's layer a forked
    process's first parallel region kills it; the workers take only serial
    kernels, so every kernel solver's grid (two points, each fold's training
    rows above the kernels' parallel sizes) runs in forked workers, with
    the rates of one worker in its own process. (Where numba's layer is
    another, this checks the forked workers' rates alone.)"""
    def rates(mode):
        pids = tmp_path / f"{mode}.pids"
        r = subprocess.run([sys.executable, "-c", FORKED_GRID, mode, str(pids)], capture_output=True, text=True,
                           timeout=900)
        assert r.returncode == 0, r.stderr[-2000:]
        *lines, parent = r.stdout.splitlines()
        workers = set(pids.read_text().split()) - {parent.split()[1]}
        return lines, workers
    here, none = rates("one")
    assert len(here) == len(kernel_solvers()) and not none
    forked, workers = rates("launched")
    assert forked == here
    assert len(workers) >= 2          # the tasks ran in forked workers, not in the parent


def test_command_writes_grid_pys_lines_out_file_and_the_best_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "heart"
    shutil.copy(bundled("heart_scale.xz"), tmp_path / "heart.xz")
    model = tmp_path / "best.model"
    r = CliRunner().invoke(train_main, ["--grid", "-log2c", "-1,1,2", "-log2g", "-3,-1,2", "-v", "3", "--jobs", "2",
                                        str(tmp_path / "heart.xz"), str(model)])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert all(POINT_LINE.match(ln) for ln in lines[:4]), lines
    best = lines[-1].split()
    assert len(best) == 3 and float(best[0]) in (0.5, 2.0) and float(best[1]) in (0.125, 0.5)
    out = (tmp_path / "heart.xz.out").read_text().splitlines()
    assert len(out) == 4 and all(OUT_LINE.match(ln) for ln in out)
    header = dict(load_model(model).header)
    assert float(header["C_used"]) == pytest.approx(float(best[0]))
    assert not data.exists()


@needs("/usr/bin/svm-grid", "/usr/bin/svm-train", package="libsvm-tools")
def test_out_file_parses_as_grid_pys(tmp_path):
    """svm-grid's own .out lines and ours match the same pattern, point for point in the same order."""
    import lzma
    text = tmp_path / "heart"
    text.write_bytes(lzma.decompress(bundled("heart_scale.xz").read_bytes()))
    ranges = ["-log2c", "-1,1,2", "-log2g", "-3,-1,2", "-v", "3"]
    subprocess.run(["/usr/bin/svm-grid", "-svmtrain", "/usr/bin/svm-train", "-gnuplot", "null",
                    "-out", str(tmp_path / "theirs.out")] + ranges + [str(text)], check=True, capture_output=True)
    r = CliRunner().invoke(train_main, ["--grid", "-out", str(tmp_path / "ours.out")] + ranges + [str(text)])
    assert r.exit_code == 0, r.output
    theirs = (tmp_path / "theirs.out").read_text().splitlines()
    ours = (tmp_path / "ours.out").read_text().splitlines()
    assert all(OUT_LINE.match(ln) for ln in theirs + ours)
    assert [ln.rsplit(" ", 1)[0] for ln in ours] == [ln.rsplit(" ", 1)[0] for ln in theirs]


@pytest.mark.parametrize("args, says", [
    (["--grid", "-s", "dcd"], "-C searches C"),
    (["--grid", "-C"], "not both"),
    (["--grid", "-s", "asset", "--inner", "dcd", "--task", "r"], "for classification"),
    (["--grid", "-log2c", "1,2,0"], "-log2c"),
    (["-log2c", "1,2,1"], "belong to --grid"),
    (["--grid", "--stream"], "in memory"),
    (["--grid", "--engine", "dask", "--jobs", "2"], "--jobs counts local worker processes"),
])
def test_refusals(args, says, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(train_main, args + [str(bundled("heart_scale.xz"))])
    assert r.exit_code == 2 and says in r.output, r.output


def test_png_contour_or_the_extra_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["--grid", "-s", "asset", "-D", "32", "-log2c", "-1,1,2", "-log2g", "-3,-1,2", "-v", "3",
            "-png", str(tmp_path / "grid.png"), str(bundled("heart_scale.xz"))]
    r = CliRunner().invoke(train_main, args)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert r.exit_code == 2 and "pip install" in r.output
        return
    assert r.exit_code == 0, r.output
    assert (tmp_path / "grid.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
