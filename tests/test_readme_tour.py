"""The README's one-minute tour is a real run's output: ``scripts/readme_tour.py
--check`` passes on this checkout, and fails on a README whose tour differs."""
import importlib.util

import pytest

from conftest import ROOT


@pytest.fixture(scope="module")
def tour():
    """scripts/readme_tour.py as a module, and the tour block of one fresh run."""
    spec = importlib.util.spec_from_file_location("readme_tour", ROOT / "scripts" / "readme_tour.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, module.fresh_block(verbose=False)


def test_readme_tour_matches_a_fresh_run(tour, monkeypatch, capsys):
    module, fresh = tour
    monkeypatch.setattr(module, "fresh_block", lambda verbose=True: fresh)
    assert module.main(["--check", "-q"]) == 0, capsys.readouterr().err
    # times are masked, every other figure is compared
    _, block, _ = module.split_readme(module.README.read_text(encoding="utf-8"))
    assert "Accuracy = " in block and module.mask(block) == module.mask(fresh)


@pytest.mark.parametrize("old, new", [
    ("Accuracy = 85.0255% (13843/16281)", "Accuracy = 85.0256% (13844/16281)"),
    ("nSV = 109", "nSV = 110"),
    ("$ echo $?\n2", "$ echo $?\n1"),
])
def test_check_fails_on_a_readme_whose_tour_differs(tour, monkeypatch, tmp_path, capsys, old, new):
    module, fresh = tour
    monkeypatch.setattr(module, "fresh_block", lambda verbose=True: fresh)
    text = module.README.read_text(encoding="utf-8")
    assert old in text
    edited = tmp_path / "README.md"
    edited.write_text(text.replace(old, new), encoding="utf-8")
    assert module.main(["--check", "-q", "--readme", str(edited)]) == 1
    assert "tour is out of date" in capsys.readouterr().err
