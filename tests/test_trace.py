"""svm-train --trace: columns, one row per epoch / iteration / check, objectives and accuracies
checked against values recomputed here from the model files (plain NumPy, own parser)."""
import csv
import lzma
import math

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import bundled
from naive_asset import fourier_features
from naive_sbp import kernel_dense
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main
from svmtrain.io.model_io import load_model
from svmtrain.training.trace import COLUMNS

N_TRAIN = 200   # heart_scale: 270 rows, 13 features; the rest is the test file


def run(cmd, args):
    return CliRunner().invoke(cmd, [str(a) for a in args])


@pytest.fixture(scope="module")
def heart(tmp_path_factory):
    """(train path, test path) of heart_scale split 200 / 70."""
    d = tmp_path_factory.mktemp("heart")
    lines = lzma.open(bundled("heart_scale.xz"), "rt").read().splitlines()
    (d / "train").write_text("\n".join(lines[:N_TRAIN]) + "\n")
    (d / "test").write_text("\n".join(lines[N_TRAIN:]) + "\n")
    return d / "train", d / "test"


def dense(path, d=13):
    """(labels, dense rows) of a LIBSVM file, parsed here without svmtrain's reader."""
    labels, rows = [], []
    for line in open(path):
        parts = line.split()
        labels.append(float(parts[0]))
        row = np.zeros(d)
        for tok in parts[1:]:
            j, v = tok.split(":")
            row[int(j) - 1] = float(v)
        rows.append(row)
    return np.array(labels), np.array(rows)


def read_trace(path):
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        assert r.fieldnames == COLUMNS
        return list(r)


def svm_predict_accuracy(test, model, tmp_path):
    r = run(predict_main, [test, model, tmp_path / "out"])
    assert r.exit_code == 0, r.output
    correct, total = map(int, r.stdout.split("(")[1].rstrip(")\n").split("/"))
    return correct / total


def independent_objective(model, X, labels):
    """(lambda/2 |w|^2 + 1/n sum cost_i loss_i) of a model file, from dense NumPy algebra."""
    h = {k: v for k, v in model.header}
    lam = float(h["lambda_used"])
    y = np.where(labels == model.labels[0], 1.0, -1.0)
    kind = type(model).__name__
    if kind == "LinearModel":
        W = model.W[:, 0]
        w = W[:X.shape[1]]
        scores = X @ w + model.b[0] + (model.bias * W[-1] if model.bias >= 0 else 0.0)
        norm2 = float(W @ W)
    elif kind == "KernelModel":
        SV = np.zeros((model.SV.n_rows, X.shape[1]))
        for i in range(model.SV.n_rows):
            lo, hi = model.SV.indptr[i], model.SV.indptr[i + 1]
            SV[i, model.SV.indices[lo:hi]] = model.SV.values[lo:hi]
        k = model.kernel
        a = model.coef[:, 0]
        norm2 = float(a @ kernel_dense(k.code, SV, SV, k.gamma, k.degree, k.coef0) @ a)
        scores = kernel_dense(k.code, X, SV, k.gamma, k.degree, k.coef0) @ a + model.b[0]
    else:   # FourierModel
        Z = fourier_features(X, model.omega, model.phases)
        norm2 = float(model.W[:, 0] @ model.W[:, 0])
        scores = Z @ model.W[:, 0] + model.b[0]
    loss = np.maximum(0.0, 1.0 - y * scores)
    if str(h.get("loss")) == "squared-hinge":
        loss = loss * loss
    weights = {float(a): float(b) for a, b in zip(*[iter(str(h.get("class_weights") or "").split())] * 2)}
    cost = np.array([weights.get(float(lab), 1.0) for lab in labels])
    return 0.5 * lam * norm2 + float((cost * loss).mean()), scores


# (name, flags, rows expected: an int, or a key of the model header, or "log" to count SBP's check lines)
CASES = [
    ("pegasos", ["-s", "pegasos", "-T", "5"], 5),
    ("pegasos-every", ["-s", "pegasos", "-T", "3", "--trace-every", "64", "-R"], 3 * math.ceil(N_TRAIN / 64)),
    ("dcd", ["-s", "dcd", "-e", "0.01"], "n_iter"),
    ("dcd-sq-weights", ["-s", "dcd", "--loss", "squared-hinge", "-w", "1", "2", "-B", "1"], "n_iter"),
    ("ocas", ["-s", "ocas", "-B", "1", "-e", "0.001"], "n_iter"),
    ("sbp", ["-s", "sbp", "-g", "0.1", "-c", "10", "--verbose"], "log"),
    ("kernel-pegasos", ["-s", "pegasos", "-t", "2", "-g", "0.1", "-T", "4", "-R"], 4),
    ("asset-nystrom", ["-s", "asset", "-D", "40", "-T", "3", "-g", "0.1"], 3),
    ("asset-fourier", ["-s", "asset", "--approx", "fourier", "-D", "64", "-T", "3", "-g", "0.1"], 3),
    ("asset-inner-dcd", ["-s", "asset", "-D", "40", "--inner", "dcd", "-g", "0.1"], "n_iter"),
]


@pytest.mark.parametrize("name,flags,expect", CASES, ids=[c[0] for c in CASES])
def test_trace_rows_objective_and_accuracy(heart, tmp_path, name, flags, expect):
    train, test = heart
    r = run(train_main, flags + ["--trace", tmp_path / "t.csv", "--trace-test", test, train, tmp_path / "m"])
    assert r.exit_code == 0, r.output
    rows = read_trace(tmp_path / "t.csv")
    model = load_model(tmp_path / "m")
    header = dict(model.header)
    if expect == "log":
        expect = sum(line.startswith("rows/n ") for line in r.output.splitlines())
    elif isinstance(expect, str):
        expect = int(header[expect])
    assert len(rows) == expect >= 1

    t = [float(row["elapsed_s"]) for row in rows]
    u = [int(row["updates"]) for row in rows]
    assert all(b >= a for a, b in zip(t, t[1:])) and t[0] >= 0
    assert all(b > a for a, b in zip(u, u[1:]))
    for row in rows:
        assert 0.0 <= float(row["train_error"]) <= 1.0 and 0.0 <= float(row["test_accuracy"]) <= 1.0
        assert math.isfinite(float(row["primal"]))
        if row["dual"]:
            # weak duality: the dual value never exceeds the primal one
            assert float(row["dual"]) <= float(row["primal"]) * (1 + 1e-12)
            assert float(row["gap"]) == pytest.approx(float(row["primal"]) - float(row["dual"]), abs=1e-12)
        if name in ("sbp", "kernel-pegasos"):
            assert int(row["kernel_evals"]) >= N_TRAIN
        else:
            assert row["kernel_evals"] == ""

    last = rows[-1]
    labels, X = dense(train)
    obj, scores = independent_objective(model, X, labels)
    assert float(last["primal"]) == pytest.approx(obj, rel=1e-7)
    assert float(last["primal"]) == pytest.approx(float(header["objective"]), rel=1e-9)
    y = np.where(labels == model.labels[0], 1.0, -1.0)
    assert float(last["train_error"]) == pytest.approx(np.mean((scores > 0) != (y > 0)), abs=1e-12)
    assert float(last["test_accuracy"]) == svm_predict_accuracy(test, tmp_path / "m", tmp_path)
    assert {row["class"] for row in rows} == {"1"}

    # the trace changes nothing: the same model, byte for byte, without it (and --trace-every)
    plain = [f for i, f in enumerate(flags) if "--trace-every" not in flags[max(i - 1, 0):i + 1]]
    r = run(train_main, plain + ["-q", train, tmp_path / "plain"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "plain").read_bytes() == (tmp_path / "m").read_bytes()


@pytest.mark.parametrize("solver", ["dcd", "ocas"])
def test_intermediate_row_is_the_model_stopped_there(heart, tmp_path, solver):
    """Row k of a run is the model a run stopped after k iterations writes (same steps, same seed)."""
    train, test = heart
    flags = ["-s", solver, "-c", "10", "-e", "1e-4" if solver == "dcd" else "1e-5"]
    r = run(train_main, flags + ["--trace", tmp_path / "t.csv", train, tmp_path / "m"])
    assert r.exit_code == 0, r.output
    rows = read_trace(tmp_path / "t.csv")
    assert len(rows) > 4
    labels, X = dense(train)
    for k in (1, 3):
        r = run(train_main, flags + ["-q", "--max-iter", k, train, tmp_path / "mk"])
        assert r.exit_code == 0, r.output
        obj, _ = independent_objective(load_model(tmp_path / "mk"), X, labels)
        assert float(rows[k - 1]["primal"]) == pytest.approx(obj, rel=1e-9)


def test_one_vs_rest_rows_per_class(tmp_path):
    from test_cli import write_blobs
    write_blobs(tmp_path / "train", ["2", "3", "7"], n_per_class=60)
    write_blobs(tmp_path / "test", ["2", "3", "7"], n_per_class=20, seed=0)
    r = run(train_main, ["-s", "dcd", "--trace", tmp_path / "t.csv", "--trace-test", tmp_path / "test",
                         tmp_path / "train", tmp_path / "m"])
    assert r.exit_code == 0, r.output
    rows = read_trace(tmp_path / "t.csv")
    model = load_model(tmp_path / "m")
    classes = [row["class"] for row in rows]
    assert sorted(set(classes)) == ["2", "3", "7"]
    assert classes == sorted(classes, key=classes.index)    # one problem after the other
    n_iter = [int(v) for v in str(dict(model.header)["n_iter"]).split()]
    labels, X = dense(tmp_path / "test", d=5)
    for j, c in enumerate(model.labels):
        mine = [row for row in rows if row["class"] == f"{c:g}"]
        assert len(mine) == n_iter[j]
        scores = X @ model.W[:5, j] + model.b[j]
        assert float(mine[-1]["test_accuracy"]) == pytest.approx(np.mean((scores > 0) == (labels == c)), abs=1e-12)


@pytest.mark.parametrize("args,message", [
    (["--trace-test", "x"], "need --trace FILE"),
    (["--trace-every", "5"], "need --trace FILE"),
    (["--trace", "t.csv", "-v", "3"], "does not combine with -v"),
    (["--trace", "t.csv", "--trace-every", "0"], "--trace-every must be > 0"),
    (["--trace", "t.csv", "--stream"], "cannot be combined with --stream or --engine dask"),
    (["--trace", "t.csv", "-s", "ocas", "--engine", "dask"], "cannot be combined with --stream or --engine dask"),
])
def test_bad_trace_flags_one_line(heart, tmp_path, args, message):
    r = run(train_main, args + [heart[0], tmp_path / "m"])
    assert r.exit_code == 2
    assert message in r.output and len(r.output.strip().splitlines()) == 1


def test_bad_trace_test_file_names_file_and_line(heart, tmp_path):
    (tmp_path / "bad").write_text("1 1:0.5\n1 0:3\n")
    r = run(train_main, ["--trace", tmp_path / "t.csv", "--trace-test", tmp_path / "bad", heart[0], tmp_path / "m"])
    assert r.exit_code == 2
    assert f"{tmp_path / 'bad'}:2:" in r.output and len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "t.csv").exists() and not (tmp_path / "m").exists()
