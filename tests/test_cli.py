"""svm-train and svm-predict end to end, in-process through click."""
import re

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import bundled
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main
from svmtrain.io.model_io import load_model


def run(cmd, args, input=None):
    return CliRunner().invoke(cmd, [str(a) for a in args], input=input)


def write_blobs(path, labels, n_per_class=150, seed=0, d=5):
    rng = np.random.default_rng(seed)
    lines = []
    for c, label in zip(rng.normal(scale=4.0, size=(len(labels), d)), labels):
        for row in c + rng.normal(size=(n_per_class, d)):
            lines.append(label + " " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row)))
    rng.shuffle(lines)
    path.write_text("\n".join(lines) + "\n")


def test_three_classes_through_both_commands(tmp_path):
    write_blobs(tmp_path / "train", ["2", "3", "7"])
    r = run(train_main, ["-q", "-B", "1", tmp_path / "train", tmp_path / "model"])
    assert r.exit_code == 0, r.output
    assert load_model(tmp_path / "model").n_models == 3
    r = run(predict_main, [tmp_path / "train", tmp_path / "model", tmp_path / "out"])
    assert r.exit_code == 0, r.output
    pred = (tmp_path / "out").read_text().split()
    truth = [line.split()[0] for line in (tmp_path / "train").read_text().splitlines()]
    assert set(pred) <= {"2", "3", "7"}
    acc = np.mean(np.array(pred) == np.array(truth))
    assert acc > 0.95
    assert r.stdout.startswith("Accuracy = ")


def test_mushrooms_labels_1_2_through_both_commands(tmp_path):
    r = run(train_main, ["-q", bundled("mushrooms.xz"), tmp_path / "model"])
    assert r.exit_code == 0, r.output
    r = run(predict_main, [bundled("mushrooms.xz"), tmp_path / "model", tmp_path / "out"])
    assert r.exit_code == 0, r.output
    pred = (tmp_path / "out").read_text().split()
    assert set(pred) == {"1", "2"}
    correct, total = map(int, r.stdout.split("(")[1].rstrip(")\n").split("/"))
    assert total == 8124 and correct / total > 0.99


def test_accuracy_line_format_and_default_model_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run(train_main, ["-q", "-l", "1e-4", bundled("a9a.xz")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "a9a.xz.model").exists()
    r = run(predict_main, [bundled("a9a.t.xz"), "a9a.xz.model", "out"])
    assert r.exit_code == 0, r.output
    line = r.stdout.strip()
    assert line.startswith("Accuracy = ") and line.endswith("/16281)")
    pct = float(line.split()[2].rstrip("%"))
    correct = int(line.split("(")[1].split("/")[0])
    assert pct == pytest.approx(100 * correct / 16281, abs=5e-5)
    assert len((tmp_path / "out").read_text().splitlines()) == 16281


def test_predict_to_stdout_puts_accuracy_on_stderr(tmp_path):
    assert run(train_main, ["-q", bundled("heart_scale.xz"), tmp_path / "m"]).exit_code == 0
    r = run(predict_main, ["-d", bundled("heart_scale.xz"), tmp_path / "m", "-"])
    assert r.exit_code == 0, r.output
    r_file = run(predict_main, ["-d", bundled("heart_scale.xz"), tmp_path / "m", tmp_path / "out"])
    assert r_file.exit_code == 0, r_file.output
    assert r.stdout == (tmp_path / "out").read_text()      # the same lines as the file gets
    lines = r.stdout.splitlines()
    assert len(lines) == 270
    for line in lines:
        label, score = line.split()
        assert (float(score) > 0) == (label == "1")
    assert r.stderr == r_file.stdout and r.stderr.startswith("Accuracy = ")


def test_predict_reads_standard_input_and_ignores_unknown_features(tmp_path):
    assert run(train_main, ["-q", bundled("heart_scale.xz"), tmp_path / "m"]).exit_code == 0
    r = run(predict_main, ["-d", "-", tmp_path / "m", "-"], input="+1 1:0.5 9999:3\n-1 2:-1\n")
    assert r.exit_code == 0, r.output
    (tmp_path / "known").write_text("+1 1:0.5\n-1 2:-1\n")     # the same rows without feature 9999
    r_known = run(predict_main, ["-d", tmp_path / "known", tmp_path / "m", "-"])
    assert r_known.exit_code == 0, r_known.output
    assert len(r.stdout.splitlines()) == 2 and r.stdout == r_known.stdout
    assert r.stderr == r_known.stderr


def test_bad_data_line_gives_one_line_error(tmp_path):
    (tmp_path / "bad").write_text("+1 1:0.5\n-1 2:1\n+1 0:3\n")
    r = run(train_main, [tmp_path / "bad", tmp_path / "m"])
    assert r.exit_code == 2
    assert r.stderr == f"svm-train: {tmp_path / 'bad'}:3: feature index 0 is invalid: indices are 1-based\n"
    assert r.stdout == ""
    assert not (tmp_path / "m").exists()


def test_damaged_model_gives_one_line_error(tmp_path):
    assert run(train_main, ["-q", bundled("heart_scale.xz"), tmp_path / "m"]).exit_code == 0
    lines = (tmp_path / "m").read_text().splitlines(keepends=True)
    cut = next(k for k, line in enumerate(lines) if line.startswith("labels "))
    (tmp_path / "m").write_text("".join(lines[:cut]))     # cut off before the labels line
    r = run(predict_main, [bundled("heart_scale.xz"), tmp_path / "m", tmp_path / "out"])
    assert r.exit_code == 2
    assert r.stderr == (f"svm-predict: {tmp_path / 'm'}:{cut + 1}: truncated or damaged model: "
                        "header key 'labels' missing\n")
    assert r.stdout == ""
    assert not (tmp_path / "out").exists()


def test_output_may_not_overwrite_model_or_test(tmp_path):
    run(train_main, ["-q", bundled("heart_scale.xz"), tmp_path / "m"])
    before = (tmp_path / "m").read_bytes()
    r = run(predict_main, [bundled("heart_scale.xz"), tmp_path / "m", tmp_path / "m"])
    assert r.exit_code == 2 and "same file" in r.stderr
    assert (tmp_path / "m").read_bytes() == before


@pytest.mark.parametrize("args,message", [
    (["-c", "1", "-l", "1"], "give either -l LAMBDA or -c C, not both (lambda = 1/(n C))"),
    (["-c", "0"], "-c must be > 0 (got 0.0)"),
    (["-s", "svmlight"], "unknown solver 'svmlight'; known solvers: dcd, ocas, pegasos, tron, cdn, smo, sbp, "
                         "asset, sgd, bmrm, norma, cvm"),
    (["-k", "0"], "-k must be > 0 (got 0)"),
])
def test_bad_parameters(tmp_path, args, message):
    r = run(train_main, args + [bundled("heart_scale.xz"), tmp_path / "m"])
    assert r.exit_code == 2
    assert r.stderr == f"svm-train: {message}\n" and r.stdout == ""
    assert not (tmp_path / "m").exists()


def test_cross_validation_line(tmp_path):
    r = run(train_main, ["-v", "5", bundled("heart_scale.xz")])
    assert r.exit_code == 0, r.output
    line = r.stdout.strip().splitlines()[-1]
    assert line.startswith("Cross Validation Accuracy = ")
    assert 70 < float(line.split("=")[1].rstrip("%")) <= 100


def test_summary_prints_objective_and_time(tmp_path):
    r = run(train_main, ["-l", "1e-2", bundled("heart_scale.xz"), tmp_path / "m"])
    assert r.exit_code == 0, r.output
    assert re.fullmatch(r"dcd: 270 examples, 13 features, 2 classes, lambda = 0\.01 \(C = 0\.37037\): "
                        r"#iter = \d+, Objective value = 0\.366078\d+ \(lambda form; C form 36\.6078\d+\), "
                        r"nSV = \d+, Training time = \d+\.\d{3} s\n", r.stdout), r.stdout
    assert r.stderr == ""


@pytest.mark.parametrize("solver_args", [
    ["-s", "dcd"], ["-s", "ocas"], ["-s", "ocas", "--threads", "2"], ["-s", "pegasos"], ["-s", "sgd"],
    ["-s", "bmrm"], ["-s", "sbp", "-T", "3"], ["-s", "asset", "-D", "64"], ["-s", "dcd", "--task", "r"],
    ["-s", "smo"], ["-s", "norma"], ["-s", "cvm"], ["-s", "ocas", "--multiclass", "cs"],
], ids=lambda a: " ".join(a))
def test_same_seed_gives_a_byte_identical_model_for_every_solver(tmp_path, solver_args):
    """The README's promise (--seed): two runs, the same file to the byte; for
    a randomised solver another seed gives another model."""
    data = bundled("heart_scale.xz")
    models = [tmp_path / "m1", tmp_path / "m2", tmp_path / "m3"]
    for model, seed in zip(models, ["7", "7", "8"]):
        r = run(train_main, ["-q", "--seed", seed] + solver_args + [data, model])
        assert r.exit_code == 0, r.output
    assert models[0].read_bytes() == models[1].read_bytes()
    if solver_args[1] in ("pegasos", "sgd", "sbp", "asset", "norma", "cvm"):
        assert models[0].read_bytes() != models[2].read_bytes()
