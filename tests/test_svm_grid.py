"""svm-grid: LIBSVM's grid.py command line, lines and .out file, in one process (svmtrain/cli/grid.py)."""
import re
import subprocess

import pytest
from click.testing import CliRunner

from conftest import bundled, needs
from svmtrain.cli.grid import main as grid_main
from svmtrain.cli.grid import parse_grid_line, train_line
from svmtrain.params import TrainParams
from svmtrain.run import RunOptions, grid_axes
from svmtrain.selection.grid_search import GridPoint, GridResult

# grid.py's lines, field by field: [worker] log2c log2g rate (best c=C, g=G, rate=R); .out: log2c=.. log2g=.. rate=..
NUM = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"
POINT = re.compile(rf"^\[(local|resumed)\] ({NUM}) ({NUM}) ({NUM}) \(best c=({NUM}), g=({NUM}), rate=({NUM})\)$")
OUT = re.compile(rf"^log2c=({NUM}) log2g=({NUM}) rate=({NUM})$")
LAST = re.compile(rf"^({NUM}) ({NUM}) ({NUM})$")
TINY = ["-log2c", "-1,1,2", "-log2g", "-3,-1,2", "-v", "3"]
GRID_PY = "/usr/bin/svm-grid"


@pytest.fixture(scope="module")
def heart(tmp_path_factory):
    """heart_scale as plain text (grid.py's svm-train reads no xz), named heart."""
    import lzma
    path = tmp_path_factory.mktemp("grid") / "heart"
    path.write_bytes(lzma.decompress(bundled("heart_scale.xz").read_bytes()))
    return path


def _ours(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return runner().invoke(grid_main, args)


def runner():
    """A CliRunner that keeps standard error apart (click 8.2 does by default, older ones on request)."""
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:
        return CliRunner()


def _fields(lines):
    """(log2c, log2g) of each point line, and each line's shape (the types of its fields)."""
    points, shapes = [], []
    for ln in lines:
        m = POINT.match(ln)
        assert m, ln
        points.append((float(m.group(2)), float(m.group(3))))
        shapes.append(tuple("." in m.group(k) for k in range(2, 8)))
    return points, shapes


@needs(GRID_PY, "/usr/bin/svm-train", package="libsvm-tools")
def test_lines_and_out_file_as_grid_pys(heart, tmp_path, monkeypatch):
    """The same points in the same order, each line and .out line of the same
    shape as /usr/bin/svm-grid's, the last line 'C gamma rate' (the rates
    differ: LIBSVM's folds are its own)."""
    theirs = subprocess.run([GRID_PY, "-svmtrain", "/usr/bin/svm-train", "-gnuplot", "null", "-out",
                             str(tmp_path / "theirs.out")] + TINY + [str(heart)],
                            capture_output=True, text=True, check=True).stdout.splitlines()
    r = _ours(["-gnuplot", "null", "--jobs", "1"] + TINY + [str(heart)], tmp_path, monkeypatch)
    assert r.exit_code == 0, r.output + r.stderr
    ours = r.stdout.splitlines()
    assert len(ours) == len(theirs) == 5
    assert _fields(ours[:-1]) == _fields(theirs[:-1])
    assert all(LAST.match(ln) for ln in (ours[-1], theirs[-1]))
    best = POINT.match(ours[-2])
    assert ours[-1].split() == [best.group(5), best.group(6), best.group(7)]
    their_out = (tmp_path / "theirs.out").read_text().splitlines()
    our_out = (tmp_path / "heart.out").read_text().splitlines()       # grid.py's default name
    assert [OUT.match(ln).groups()[:2] for ln in our_out] == [OUT.match(ln).groups()[:2] for ln in their_out]


def test_default_ranges_print_as_grid_pys():
    """grid.py's default ranges are ints: '[local] 5 -7 ...' (written down from /usr/bin/svm-grid on
    heart_scale), given ranges floats ('5.0')."""
    c, g = grid_axes(TrainParams(solver="smo", kernel_type=2), RunOptions(grid=True))
    assert c[:3] == [-5, -3, -1] and g[:3] == [3, 1, -1] and all(type(x) is int for x in c + g)
    result = GridResult()
    result.add(GridPoint(c[5], g[5], 83.3333))
    assert result.progress_line(result.best) == "[local] 5 -7 83.3333 (best c=32.0, g=0.0078125, rate=83.3333)"
    assert result.best.out_line() == "log2c=5 log2g=-7 rate=83.3333"
    c, g = grid_axes(TrainParams(solver="smo", kernel_type=2), RunOptions(grid=True, log2c="5,5,1"))
    assert c == [5.0] and type(c[0]) is float and type(g[0]) is int


def test_svm_train_options_pass_through():
    """grid.py hands every option it does not know to svm-train: LIBSVM's spellings included; no -s is smo."""
    line = parse_grid_line(["-log2c", "1,2,1", "-t", "2", "-w1", "5", "-m", "100", "-h", "0", "-e", "0.01",
                            "-q", "data"])
    assert (line.log2c, line.log2g, line.dataset) == ("1,2,1", None, "data")
    params, given, dataset, quiet = train_line("svm-grid", line.passed + ["--grid", line.dataset])
    assert params.solver == "smo" and params.kernel_type == 2 and params.class_weights == {1.0: 5.0}
    assert params.shrinking == 0 and params.cache_mb == 100.0 and params.eps == 0.01 and quiet
    assert dataset == "data"
    line = parse_grid_line(["-resume", "-out", "x.out", "dir/data"])
    assert line.resume == "data.out" and line.out == "x.out"


def test_svmtrain_and_gnuplot_are_noted_and_ignored(heart, tmp_path, monkeypatch):
    r = _ours(["-svmtrain", "/no/such/svm-train", "-gnuplot", "/no/such/gnuplot", "-out", "null", "--jobs", "1",
               "-log2c", "0,0,1", "-log2g", "-2,-2,1", "-v", "2", str(heart)], tmp_path, monkeypatch)
    assert r.exit_code == 0, r.stderr
    notes = r.stderr.splitlines()
    assert any(n.startswith("svm-grid: -svmtrain /no/such/svm-train ignored") for n in notes), notes
    assert any(n.startswith("svm-grid: -gnuplot /no/such/gnuplot ignored") for n in notes), notes
    assert len(r.stdout.splitlines()) == 2 and not (tmp_path / "null").exists()


def test_png_needs_matplotlib_or_draws(heart, tmp_path, monkeypatch):
    try:
        import matplotlib  # noqa: F401
        have = True
    except ImportError:
        have = False
    r = _ours(["-png", "g.png", "-out", "null", "--jobs", "1", "-log2c", "-1,1,2", "-log2g", "-3,-1,2", "-v", "2",
               str(heart)], tmp_path, monkeypatch)
    if not have:
        assert r.exit_code == 2 and "pip install" in r.stderr and r.stdout == ""
        return
    assert r.exit_code == 0 and (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"


def test_resume_skips_the_points_of_the_out_file(heart, tmp_path, monkeypatch):
    """-resume: the file's points are shown as [resumed] and not trained again; the rest are appended."""
    args = ["-gnuplot", "null", "--jobs", "1"] + TINY + [str(heart)]
    full = _ours(args, tmp_path, monkeypatch)
    assert full.exit_code == 0, full.stderr
    every = (tmp_path / "heart.out").read_text().splitlines()
    (tmp_path / "heart.out").write_text("\n".join(every[:2]) + "\n")
    r = _ours(["-resume"] + args, tmp_path, monkeypatch)
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert [ln.split()[0] for ln in lines[:-1]] == ["[resumed]"] * 2 + ["[local]"] * 2
    assert sorted((tmp_path / "heart.out").read_text().splitlines()) == sorted(every)
    assert lines[-1] == full.stdout.splitlines()[-1]           # the same folds: the same best point


@pytest.mark.parametrize("args, says", [
    (["-c", "1"], "Use -log2c and -log2g."),
    (["-log2c", "1,2"], "-log2c takes begin,end,step"),
    (["-log2c", "null", "-log2g", "null"], "should not be null simultaneously"),
    (["-v", "x"], "-v takes the number of folds"),
    (["-s", "dcd"], "-C searches C"),
    (["-resume", "no.out"], "file for resumption not found"),
    (["--no-such-option"], "No such option"),
])
def test_bad_lines_one_line_exit_2(args, says, heart, tmp_path, monkeypatch):
    r = _ours(args + [str(heart)], tmp_path, monkeypatch)
    assert r.exit_code == 2 and r.stdout == "", r.stdout
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("svm-grid: ") and says in r.stderr, r.stderr


def test_missing_dataset_and_usage(tmp_path, monkeypatch):
    r = _ours([str(tmp_path / "nope")], tmp_path, monkeypatch)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "cannot open" in r.stderr
    r = _ours([], tmp_path, monkeypatch)
    assert r.exit_code == 1 and r.stdout.startswith("Usage: svm-grid [grid_options] [svm_options] dataset")


def test_a_bar_set_by_set_to_is_cleared_when_closed(monkeypatch):
    """The bars of svm-grid and svm-easy (set_to, as the searches drive them) are shown after
    DELAY_S and wiped on close, not left on the terminal above the last line."""
    import io
    from svmtrain.cli import _progress
    err = io.StringIO()
    monkeypatch.setattr(_progress.sys, "stderr", err)
    import time
    monkeypatch.setattr(_progress, "DELAY_S", 0.01)
    bar = _progress.Progress(True, "grid")
    bar.set_to(0, 2)                           # before DELAY_S: not shown
    assert err.getvalue() == ""
    time.sleep(0.02)
    bar.set_to(1, 2, "best c=1.0, rate=80.0")
    shown = err.getvalue()
    bar.close()
    assert "1/2" in shown and "best c=1.0" in shown
    assert err.getvalue()[len(shown):].endswith("\r") and err.getvalue()[len(shown):].strip() == ""
