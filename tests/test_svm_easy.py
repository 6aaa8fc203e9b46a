"""svm-easy: LIBSVM's easy.py steps, files and lines in one process (svmtrain/cli/easy.py).

The grid is cut to 2 x 2 points here (the default grid's 110 points take
seconds); the files are checked against LIBSVM's own svm-scale and
svm-predict when libsvm-tools is installed."""
import lzma
import os
import re
import subprocess

import pytest
from click.testing import CliRunner

from conftest import bundled, needs
from svmtrain.cli.easy import main as easy_main
from svmtrain.io.model_io import load_model

# the lines /usr/bin/svm-easy printed on a train and a test file (written down from a run)
EASY_PY_LINES = [
    "Scaling training data...",
    "Cross validation...",
    re.compile(r"Best c=\d+\.\d+(e-?\d+)?, g=\d+\.\d+(e-?\d+)? CV rate=\d+\.\d+"),
    "Training...",
    "Output model: heart.tr.model",
    "Scaling testing data...",
    "Testing...",
    re.compile(r"Accuracy = \d+(\.\d+)?% \(\d+/70\)"),
    "Output prediction: heart.te.predict",
]


def runner():
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:
        return CliRunner()


@pytest.fixture
def files(tmp_path, monkeypatch):
    """heart_scale split 200 / 70 in tmp/data; the current directory is tmp/run; a 2 x 2 grid."""
    lines = lzma.decompress(bundled("heart_scale.xz").read_bytes()).decode().splitlines(keepends=True)
    (tmp_path / "data").mkdir()
    (tmp_path / "run").mkdir()
    train, test = tmp_path / "data" / "heart.tr", tmp_path / "data" / "heart.te"
    train.write_text("".join(lines[:200]))
    test.write_text("".join(lines[200:]))
    monkeypatch.chdir(tmp_path / "run")
    monkeypatch.setattr("svmtrain.selection.grid_search.DEFAULT_LOG2C", "-1,1,2")
    monkeypatch.setattr("svmtrain.selection.grid_search.DEFAULT_LOG2G", "-3,-1,2")
    return train, test


def test_steps_files_and_lines_as_easy_pys(files):
    train, test = files
    r = runner().invoke(easy_main, ["--jobs", "1", str(train), str(test)])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert len(lines) == len(EASY_PY_LINES), lines
    for got, want in zip(lines, EASY_PY_LINES):
        assert want.fullmatch(got) if isinstance(want, re.Pattern) else got == want, (got, want)
    assert sorted(os.listdir(".")) == ["heart.te.predict", "heart.te.scale", "heart.tr.model", "heart.tr.range",
                                       "heart.tr.scale", "heart.tr.scale.out"]
    out = [dict(kv.split("=") for kv in ln.split()) for ln in open("heart.tr.scale.out").read().splitlines()]
    assert [(o["log2c"], o["log2g"]) for o in out] == [("1", "-1"), ("1", "-3"), ("-1", "-1"), ("-1", "-3")]
    c, g, rate = re.findall(r"=([0-9.e-]+)", lines[2])
    assert float(rate) == max(float(o["rate"]) for o in out)
    header = open("heart.tr.model").read().split("SV\n")[0]
    assert "svm_type c_svc\nkernel_type rbf\n" in header and f"gamma {g}\n" in header
    assert len(open("heart.te.predict").read().splitlines()) == 70
    assert load_model("heart.tr.model").labels.tolist() == [1.0, -1.0]


@needs("/usr/bin/svm-scale", "/usr/bin/svm-predict", package="libsvm-tools")
def test_files_are_libsvms(files):
    """TRAIN.scale and TRAIN.range are svm-scale -s's bytes, TEST.scale svm-scale -r's with our
    range file, and LIBSVM's svm-predict reads the model and predicts as TEST.predict says."""
    train, test = files
    r = runner().invoke(easy_main, ["--jobs", "1", "-q", str(train), str(test)])
    assert r.exit_code == 0, r.output

    def run(*cmd):
        return subprocess.run(cmd, capture_output=True, check=True).stdout
    assert run("/usr/bin/svm-scale", "-s", "libsvm.range", str(train)) == open("heart.tr.scale", "rb").read()
    assert open("libsvm.range", "rb").read() == open("heart.tr.range", "rb").read()
    assert run("/usr/bin/svm-scale", "-r", "heart.tr.range", str(test)) == open("heart.te.scale", "rb").read()
    said = run("/usr/bin/svm-predict", "heart.te.scale", "heart.tr.model", "libsvm.predict").decode()
    ours = [float(x) for x in open("heart.te.predict").read().split()]
    assert [float(x) for x in open("libsvm.predict").read().split()] == ours
    assert said.split(" (classification)")[0].strip() == r.stdout.splitlines()[7]


def test_training_file_only(files):
    train, _ = files
    r = runner().invoke(easy_main, ["--jobs", "1", str(train)])
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[-1] == "Output model: heart.tr.model"
    assert not os.path.exists("heart.te.scale")


@pytest.mark.parametrize("which, says", [("train", "training file not found"), ("test", "testing file not found")])
def test_a_missing_file_stops_before_any_file_is_written(files, which, says):
    train, test = files
    args = [str(train) + ".none", str(test)] if which == "train" else [str(train), str(test) + ".none"]
    r = runner().invoke(easy_main, args)
    assert r.exit_code == 2 and r.stdout == "" and r.stderr.count("\n") == 1 and says in r.stderr, r.output
    assert os.listdir(".") == []


def test_three_classes_in_libsvms_format_and_what_it_cannot_hold(tmp_path, monkeypatch):
    """Three classes: the one-vs-one model in LIBSVM's format, as easy.py's;
    labels LIBSVM cannot store (not integers): svmtrain's format, with a warning saying why."""
    import numpy as np
    rng = np.random.default_rng(0)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("svmtrain.selection.grid_search.DEFAULT_LOG2C", "1,1,1")
    monkeypatch.setattr("svmtrain.selection.grid_search.DEFAULT_LOG2G", "-1,-1,1")
    for name, offset in (("three", 1), ("halves", 1.5)):
        rows = [f"{k % 3 + offset:g} 1:{k % 3 + rng.random():.3f} 2:{rng.random():.3f}\n" for k in range(60)]
        (tmp_path / name).write_text("".join(rows))
        r = runner().invoke(easy_main, ["--jobs", "1", name])
        assert r.exit_code == 0, r.output
        model = load_model(f"{name}.model")
        assert sorted(model.labels.tolist()) == [offset, offset + 1, offset + 2]
        text = (tmp_path / f"{name}.model").read_text()
        if offset == 1:
            assert text.startswith("svm_type c_svc\n") and "nr_class 3\n" in text
            assert "svmtrain's format" not in r.stderr
        else:
            assert "halves.model is in svmtrain's format" in r.stderr