"""svm-train --scale: svm-scale's ranges kept in the model, applied by svm-predict."""
import lzma

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import bundled, shared
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.scale import main as scale_main
from svmtrain.cli.train import main as train_main
from svmtrain.errors import ModelFormatError
from svmtrain.io.model_io import load_model, save_model
from svmtrain.io.reader import read_libsvm
from svmtrain.preprocess.scaling import Ranges, compute_stats, scale_rows


@pytest.fixture
def guide(tmp_path):
    """svmguide1 (unscaled, from ../shared/data: skipped when absent, an error when unreadable), split 3:1."""
    text = lzma.decompress(shared("svmguide1.xz").read_bytes()).decode()
    lines = text.splitlines()
    train, test = tmp_path / "tr", tmp_path / "te"
    train.write_text("\n".join(ln for k, ln in enumerate(lines) if k % 4) + "\n")
    test.write_text("\n".join(ln for k, ln in enumerate(lines) if k % 4 == 0) + "\n")
    return train, test


def run(main, args):
    r = CliRunner().invoke(main, [str(a) for a in args])
    assert r.exit_code == 0, r.output
    return r.output


def test_scaled_values_are_svm_scales(guide, tmp_path):
    """The rows --scale trains on are svm-scale's output, value for value (svm-scale prints %g)."""
    train, _ = guide
    run(scale_main, ["-s", tmp_path / "range", train])
    text = CliRunner().invoke(scale_main, ["-r", str(tmp_path / "range"), str(train)]).output
    (tmp_path / "scaled").write_text(text)
    theirs = read_libsvm(tmp_path / "scaled")
    data = read_libsvm(train)
    ranges = Ranges.from_stats(compute_stats([data]), -1.0, 1.0)
    ours = scale_rows(ranges, data)
    assert np.array_equal(ours.indptr, theirs.indptr) and np.array_equal(ours.indices, theirs.indices)
    np.testing.assert_allclose(ours.values, theirs.values, rtol=5e-6, atol=5e-7)
    file_ranges = Ranges.read(tmp_path / "range")
    assert np.array_equal(file_ranges.index, ranges.index)
    assert np.array_equal(file_ranges.feature_min, ranges.feature_min)


def test_densifying_scale_matches_svm_scale(tmp_path):
    """-l -1 on sparse nonnegative data: absent features get their scaled 0, as svm-scale writes them."""
    (tmp_path / "d").write_text("1 1:1 3:2\n-1 2:4\n1 1:3 2:1 3:1\n")
    data = read_libsvm(tmp_path / "d")
    ranges = Ranges.from_stats(compute_stats([data]), -1.0, 1.0)
    scaled = scale_rows(ranges, data)
    dense = np.zeros((3, 3))
    for i in range(3):
        dense[i, scaled.indices[scaled.indptr[i]:scaled.indptr[i + 1]]] = scaled.values[scaled.indptr[i]:scaled.indptr[i + 1]]
    # by hand: feature 1 in [0, 3], feature 2 in [0, 4], feature 3 in [0, 2]; 2 x / max - 1
    expect = np.array([[-1 / 3, -1.0, 1.0], [-1.0, 1.0, -1.0], [1.0, -0.5, 0.0]])
    np.testing.assert_allclose(dense, expect, rtol=1e-15)
    assert scaled.nnz == 8           # the 0 of feature 3 in row 3 is dropped, as svm-scale drops it


@pytest.mark.parametrize("solver", ["dcd", "sbp"])
def test_train_scale_predicts_as_the_svm_scale_pipeline(guide, tmp_path, solver):
    train, test = guide
    run(train_main, ["-q", "-s", solver, "--scale", "-c", "4", train, tmp_path / "ours.model"])
    run(predict_main, ["-q", test, tmp_path / "ours.model", tmp_path / "ours.out"])
    run(scale_main, ["-s", tmp_path / "range", train])
    (tmp_path / "tr.s").write_text(CliRunner().invoke(scale_main, ["-r", str(tmp_path / "range"), str(train)]).output)
    (tmp_path / "te.s").write_text(CliRunner().invoke(scale_main, ["-r", str(tmp_path / "range"), str(test)]).output)
    run(train_main, ["-q", "-s", solver, "-c", "4", tmp_path / "tr.s", tmp_path / "pipe.model"])
    run(predict_main, ["-q", tmp_path / "te.s", tmp_path / "pipe.model", tmp_path / "pipe.out"])
    ours = np.loadtxt(tmp_path / "ours.out")
    pipe = np.loadtxt(tmp_path / "pipe.out")
    assert np.mean(ours == pipe) >= 0.995          # svm-scale's %g rounding moves a few borderline rows at most
    truth = read_libsvm(test).labels
    assert np.mean(ours == truth) > 0.8 and abs(np.mean(ours == truth) - np.mean(pipe == truth)) < 0.01
    model = load_model(tmp_path / "ours.model")
    assert model.scaling is not None and model.scaling.lower == -1.0
    assert np.array_equal(model.scaling.index, Ranges.read(tmp_path / "range").index)


def test_model_round_trip_and_old_files(tmp_path):
    data = str(bundled("heart_scale.xz"))
    run(train_main, ["-q", "--scale", "--scale-range", "0", "1", data, tmp_path / "m"])
    model = load_model(tmp_path / "m")
    save_model(model, tmp_path / "m2")
    assert (tmp_path / "m").read_bytes() == (tmp_path / "m2").read_bytes()
    assert (model.scaling.lower, model.scaling.upper) == (0.0, 1.0)
    run(train_main, ["-q", data, tmp_path / "plain"])
    assert load_model(tmp_path / "plain").scaling is None
    broken = (tmp_path / "m").read_text().replace("scale_upper 1.0\n", "")
    (tmp_path / "b").write_text(broken)
    with pytest.raises(ModelFormatError, match="--scale model"):
        load_model(tmp_path / "b")


@pytest.mark.parametrize("args, says", [
    (["--scale", "--model-format", "liblinear"], "cannot hold"),
    (["--scale", "--stream"], "svm-scale first"),
    (["--scale", "--scale-range", "1", "0"], "LOWER < UPPER"),
    (["--scale-range", "0", "1"], "belongs to --scale"),
])
def test_refusals(args, says, tmp_path):
    r = CliRunner().invoke(train_main, args + [str(bundled("heart_scale.xz")), str(tmp_path / "m")])
    assert r.exit_code == 2 and says in r.output, r.output
    assert not (tmp_path / "m").exists()
