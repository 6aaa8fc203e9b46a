"""The experiments' output (scripts/exp_*.py, `make experiments`): the CSV always, the PNG
only with matplotlib, and without it a message that says why there is none.

Runs the smallest exp-asset there is (one dimension per approximation, one seed, no
LIBSVM) on the bundled a9a; the full experiments are `make experiments`, not tests.
"""
import csv
import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))


def run_exp_asset(monkeypatch, tmp_path):
    """(rows of exp-asset.csv, stdout lines) of a tiny run writing into tmp_path."""
    E = importlib.import_module("exp_common")
    exp_asset = importlib.import_module("exp_asset")
    monkeypatch.setattr(E, "RESULTS", str(tmp_path))
    monkeypatch.setattr(sys, "argv", ["exp_asset.py", "--nystrom", "64", "--fourier", "64", "--seeds", "1",
                                      "--no-libsvm"])
    exp_asset.main()
    with open(tmp_path / "exp-asset.csv") as f:
        return list(csv.DictReader(f))


def check_rows(rows):
    assert [(r["approx"], r["dim"]) for r in rows] == [("nystrom", "64"), ("fourier", "64")]
    # 64 landmarks / features already come within about a point of the exact kernel's 15.1 %
    for r in rows:
        assert 0.0 < float(r["test_error"]) < 0.18, r


def test_without_matplotlib_csv_and_a_message(monkeypatch, tmp_path, capsys):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)    # import matplotlib raises ImportError
    check_rows(run_exp_asset(monkeypatch, tmp_path))
    out = capsys.readouterr().out
    assert "matplotlib is not installed" in out and "exp-asset.png" in out
    assert not (tmp_path / "exp-asset.png").exists()


def test_with_matplotlib_a_small_png(monkeypatch, tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib not installed (pip install -e '.[plot]')")
    check_rows(run_exp_asset(monkeypatch, tmp_path))
    png = tmp_path / "exp-asset.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size < 200 * 1024


def test_exp_survey_rows_per_size_and_solver(monkeypatch, tmp_path):
    """A tiny exp-survey on the bundled a9a: one CSV row per (n, solver), sensible test errors,
    kernel solvers skipped above --kernel-max-n."""
    E = importlib.import_module("exp_common")
    exp_survey = importlib.import_module("exp_survey")
    monkeypatch.setattr(E, "RESULTS", str(tmp_path))
    monkeypatch.setattr(sys, "argv", ["exp_survey.py", "--datasets", "a9a", "--sizes-a9a", "500,1000",
                                      "--kernel-max-n", "500", "--solvers", "dcd,sgd-sgdqn,bmrm,smo"])
    exp_survey.main()
    with open(tmp_path / "exp-survey.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["n"], r["key"]) for r in rows] == [("500", "smo"), ("500", "bmrm"), ("500", "dcd"),
                                                  ("500", "sgd-sgdqn"), ("1000", "bmrm"), ("1000", "dcd"),
                                                  ("1000", "sgd-sgdqn")]
    for r in rows:
        assert 0.0 < float(r["test_error"]) < 0.2 and float(r["train_s"]) > 0.0, r
