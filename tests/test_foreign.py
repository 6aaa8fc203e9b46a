"""Foreign command lines (LIBSVM, LIBLINEAR, SVMlight) through svm-train and svm-predict.

Each line either trains the model its peer would -- the same kind of model
(solver, loss, kernel, bias in the model header) with test accuracy within
0.5 points of the peer's, run on the same files with the same options through
the official LIBLINEAR / LIBSVM Python packages -- or exits 2 with one line
that names the svmtrain equivalent. SVMlight has no installable peer; its
lines are checked against the LIBSVM / LIBLINEAR problem that SVMlight solves
for them (the equivalent peer options are in the table).
"""
import lzma
import subprocess
from importlib.metadata import version

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import bundled, needs, shared
from reference import reset_c_rand
from svmtrain.cli.foreign import translate_train
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main

# (peer, line, data, expected model header fields, peer's options for the same problem)
# data: "a9a" trains on a9a and tests on a9a.t; "heart" trains and tests on heart_scale
TRAINS = [
    ("LIBLINEAR", "", "a9a", {"solver": "dcd"}, "liblinear:"),
    ("LIBLINEAR", "-s 1", "a9a", {"solver": "dcd", "loss": "squared-hinge"}, "liblinear:-s 1"),
    ("LIBLINEAR", "-s 2", "a9a", {"solver": "dcd", "loss": "squared-hinge"}, "liblinear:-s 2"),
    ("LIBLINEAR", "-s 3", "a9a", {"solver": "dcd", "loss": "hinge"}, "liblinear:-s 3"),
    ("LIBLINEAR", "-s 3 -B 1", "a9a", {"solver": "dcd", "loss": "hinge", "bias": "1.0"}, "liblinear:-s 3 -B 1"),
    ("LIBLINEAR", "-s 1 -c 0.1 -w1 3", "a9a", {"solver": "dcd", "class_weights": "1.0 3.0"},
     "liblinear:-s 1 -c 0.1 -w1 3"),
    ("LIBLINEAR", "-s 2 -c 0.5 -w-1 2", "a9a", {"solver": "dcd", "class_weights": "-1.0 2.0"},
     "liblinear:-s 2 -c 0.5 -w-1 2"),
    ("LIBLINEAR", "-s 3 -c 4 -e 0.01 -q", "a9a", {"solver": "dcd", "C": "4.0", "eps": "0.01"},
     "liblinear:-s 3 -c 4 -e 0.01"),
    ("LIBLINEAR", "-s 0", "a9a", {"solver": "dcd", "loss": "log"}, "liblinear:-s 0"),
    ("LIBLINEAR", "-s 4", "a9a", {"solver": "dcd", "multiclass": "cs"}, "liblinear:-s 4"),
    ("LIBLINEAR", "-s 7 -c 0.5 -B 1", "a9a", {"solver": "dcd", "loss": "log", "bias": "1.0"},
     "liblinear:-s 7 -c 0.5 -B 1"),
    # L1-regularised: LIBLINEAR's CDN and newGLMNET, with its random orders (the same steps)
    ("LIBLINEAR", "-s 5", "a9a", {"solver": "cdn", "loss": "squared-hinge", "penalty": "l1"}, "liblinear:-s 5"),
    ("LIBLINEAR", "-s 6 -c 0.5 -B 1 -w-1 2", "a9a",
     {"solver": "cdn", "loss": "log", "penalty": "l1", "bias": "1.0", "class_weights": "-1.0 2.0"},
     "liblinear:-s 6 -c 0.5 -B 1 -w-1 2"),
    ("LIBSVM", "-t 2 -g 0.5 -c 10", "heart", {"solver": "smo", "kernel_type": "rbf", "gamma": "0.5"},
     "libsvm:-t 2 -g 0.5 -c 10"),
    ("LIBSVM", "-g 0.5 -c 10", "heart", {"solver": "smo", "kernel_type": "rbf"}, "libsvm:-g 0.5 -c 10"),
    ("LIBSVM", "-s 0 -t 2 -c 1", "heart", {"solver": "smo", "kernel_type": "rbf"}, "libsvm:-s 0 -t 2 -c 1"),
    ("LIBSVM", "-s 0 -c 2 -d 3", "heart", {"solver": "smo", "kernel_type": "rbf"}, "libsvm:-s 0 -c 2 -d 3"),
    ("LIBSVM", "-t 1 -d 2 -g 0.1 -r 1", "heart", {"solver": "smo", "kernel_type": "polynomial", "degree": "2"},
     "libsvm:-t 1 -d 2 -g 0.1 -r 1"),
    ("LIBSVM", "-t 3 -g 0.01 -r 0", "heart", {"solver": "smo", "kernel_type": "sigmoid"},
     "libsvm:-t 3 -g 0.01 -r 0"),
    ("LIBSVM", "-t 0 -c 1", "heart", {"solver": "smo", "kernel_type": "linear"}, "libsvm:-t 0 -c 1"),
    ("LIBSVM", "-s 0 -t 2 -g 0.5 -h 0 -m 100", "heart", {"solver": "smo", "cache_mb": "100.0"},
     "libsvm:-s 0 -t 2 -g 0.5 -h 0 -m 100"),
    ("LIBSVM", "-t 2 -g 0.5 -c 10 -b 1", "heart", {"solver": "smo", "probability": "true"},
     "libsvm:-t 2 -g 0.5 -c 10 -b 1"),
    ("LIBSVM", "-t 2 -g 0.5 -c 2 -w1 2", "heart", {"solver": "smo", "class_weights": "1.0 2.0"},
     "libsvm:-t 2 -g 0.5 -c 2 -w1 2"),
    ("LIBSVM", "-s 0 -t 2 -g 0.5 -h 1 -e 0.01", "heart", {"solver": "smo", "shrinking": "1", "eps": "0.01"},
     "libsvm:-s 0 -t 2 -g 0.5 -h 1 -e 0.01"),
    # -b, -m, -h 0|1 only LIBSVM's svm-train has (LIBLINEAR's train has none): LIBSVM's RBF C-SVC (issue 31)
    ("LIBSVM", "-b 1 -c 1", "heart", {"solver": "smo", "kernel_type": "rbf", "probability": "true"},
     "libsvm:-b 1 -c 1"),
    ("LIBSVM", "-m 100 -c 1", "heart", {"solver": "smo", "kernel_type": "rbf", "cache_mb": "100.0"},
     "libsvm:-m 100 -c 1"),
    ("LIBSVM", "-h 0", "heart", {"solver": "smo", "kernel_type": "rbf", "shrinking": "0"}, "libsvm:-h 0"),
    ("LIBSVM", "-s 2 -n 0.1 -h 0", "heart", {"solver": "smo", "task": "o", "kernel_type": "rbf", "nu": "0.1"},
     "libsvm:-s 2 -n 0.1 -h 0"),
    # nu-SVC (LIBSVM -s 1): -s smo --nu; -n absent is LIBSVM's 0.5, -c (which LIBSVM ignores) dropped
    ("LIBSVM", "-s 1 -n 0.3 -t 2 -g 0.5", "heart", {"solver": "smo", "task": "c", "nu": "0.3"},
     "libsvm:-s 1 -n 0.3 -t 2 -g 0.5"),
    ("LIBSVM", "-s 1 -g 0.1 -c 10 -h 0", "heart", {"solver": "smo", "nu": "0.5", "shrinking": "0"},
     "libsvm:-s 1 -g 0.1 -c 10 -h 0"),
    ("svmtrain", "-s dcd -b 1 -c 1", "a9a", {"solver": "dcd", "probability": "true"}, "liblinear:-s 3 -c 1"),
    ("LIBLINEAR", "-s 21 -n 0.2", "heart", {"solver": "dcd", "task": "o", "nu": "0.2", "eps": "none"},
     "liblinear:-s 21 -n 0.2"),
    ("LIBLINEAR", "-s 21 -n 0.1 -c 4 -e 0.001", "heart", {"solver": "dcd", "task": "o", "nu": "0.1"},
     "liblinear:-s 21 -n 0.1 -c 4 -e 0.001"),
    ("LIBSVM", "-s 2 -t 2 -g 0.5 -n 0.1", "heart", {"solver": "smo", "task": "o", "nu": "0.1"},
     "libsvm:-s 2 -t 2 -g 0.5 -n 0.1"),
    ("LIBSVM", "-s 2 -g 0.05 -n 0.5 -h 0", "heart", {"solver": "smo", "task": "o", "shrinking": "0"},
     "libsvm:-s 2 -g 0.05 -n 0.5 -h 0"),
    ("LIBSVM", "-s 2 -t 0 -n 0.1", "heart", {"solver": "dcd", "task": "o", "nu": "0.1", "eps": "0.001"},
     "libsvm:-s 2 -t 0 -n 0.1"),
    ("SVMlight", "-z c -c 1", "heart", {"solver": "smo", "kernel_type": "linear"}, "libsvm:-t 0 -c 1"),
    ("SVMlight", "-z c -c 1 -b 0", "a9a", {"solver": "dcd", "loss": "hinge", "bias": "-1.0"},
     "liblinear:-s 3 -c 1"),
    ("SVMlight", "-c 0.5 -j 2 -b 0 -x 0", "a9a", {"solver": "dcd", "class_weights": "1.0 2.0"},
     "liblinear:-s 3 -c 0.5 -w1 2"),
    ("SVMlight", "-z c -t 2 -g 0.5 -c 10", "heart", {"solver": "smo", "kernel_type": "rbf"},
     "libsvm:-t 2 -g 0.5 -c 10"),
    ("SVMlight", "-z c -c 0.1 -t 2 -g 0.1 -m 40 -e 0.01 -h 100 -n 5 -o 1.0 -i 0", "heart",
     {"solver": "smo", "kernel_type": "rbf"}, "libsvm:-t 2 -g 0.1 -c 0.1"),
    ("SVMlight", "-z c -c 1 -t 1 -g 1 -r 1 -d 2", "heart", {"solver": "smo", "kernel_type": "polynomial"},
     "libsvm:-t 1 -g 1 -r 1 -d 2 -c 1"),
]

# (peer, line, a part of the one-line refusal that names the svmtrain equivalent or the reason)
REFUSES = [
    ("LIBLINEAR", "-s 5 --loss log", "contradicts --loss log"),
    ("svmtrain", "-s dcd --penalty l1", "solvers that do: -s cdn"),
    ("LIBLINEAR", "-s 12 --task c", "contradicts --task c"),
    ("LIBLINEAR", "-s 21 -B 1", "-B does not apply to the one-class SVM"),
    ("LIBLINEAR", "-s 9", "svmtrain's solvers are named"),
    ("LIBLINEAR", "-s 1 -W weights", "-w LABEL WEIGHT"),
    ("LIBSVM", "-s 1 -t 2 -w1 2", "-w does not apply to nu-SVC"),
    ("LIBSVM", "-s 2 -t 2 -g 0.5 -n 0.1 --task r", "contradicts --task r"),
    ("LIBSVM", "-s 2 -n 0.1", "or LIBLINEAR's -s 2 (drop -n"),
    ("LIBSVM", "-s 1 -n 0.5", "or LIBLINEAR's -s 1 (drop -n"),
    ("LIBSVM", "-s 4 -n 0.5", "or LIBLINEAR's -s 4 (drop -n"),
    ("LIBSVM", "-s 5 -b 1", "LIBLINEAR's train has no -b"),
    ("LIBSVM", "-s 21 -h 0", "LIBLINEAR's train has no -h"),
    ("LIBSVM", "-b 0 -c 1", "give -t 2 for its RBF C-SVC"),
    ("SVMlight", "-z o -c 1", "SVMlight has no one-class SVM"),
    ("LIBSVM", "-s 1 -n 1.5 -g 1", "--nu must be in (0, 1]"),
    ("LIBSVM", "-t 2 -g 0.2 -b 0", "--no-bias"),
    ("LIBSVM", "-t 2 -g 0.2 -e 0.01 -h 1 -b 0", "--no-bias"),
    ("LIBSVM", "-h", "help is --help"),
    ("svmtrain", "-s sbp -t 2 -g 0.5 -w1 2", "-s asset"),
    ("LIBSVM", "-v 1 -t 2", "--verbose"),
    ("svmtrain", "-s dcd -t 2", "use -s smo, -s sbp, -s asset, -s norma, -s cvm, -s pegasos -t K for a kernel model"),
    ("svmtrain", "-s ocas -g 0.5", "use -s smo, -s sbp, -s asset, -s norma, -s cvm, -s pegasos -t K for a kernel model"),
    ("svmtrain", "-s smo --no-bias", "-s sbp --no-bias"),
    ("svmtrain", "-s 3 --loss squared-hinge", "contradicts --loss"),
    ("SVMlight", "-z c -c 1 -p 0.5", "give -b 0 (no bias), or svm-train --transduction 0.5 -B 1"),
    ("LIBSVM", "-s 0 -t 2 -p 0.1", "-p (epsilon) applies to regression"),
    ("SVMlight", "-z c -j 2", "give -c C"),
    ("SVMlight", "-z c -c 1 -t 2", "give -g"),
    ("SVMlight", "-z c -c 1 -t 1 -g 1", "give -r"),
    ("SVMlight", "-q 10", "-q is 'quiet' here"),
    ("SVMlight", "-x 1 -c 1", "-v N"),
    ("SVMlight", "-l labels.out", "-l is the regularisation lambda"),
    ("SVMlight", "-t 1 -s 0.5 -r 1", "kernel scale s is -g"),
    ("SVMlight", "-z c -t 1 -d 2 -s 1 -r 1 -c 1", "kernel scale s is -g"),
    ("SVMlight", "-# 1000", "--max-iter"),
    ("SVMlight", "-w 0.1", "-w takes LABEL WEIGHT"),
    ("SVMlight", "-z c -c 1 -i 1", "no equivalent"),
    ("SVMlight", "-a alphas.txt", "no equivalent"),
    ("SVMlight", "-t 4 -u x", "kernels are -t 0|1|2|3"),
]
PREDICT_WORKS = ["-b 0", "-q", "-b 0 -q"]
PREDICT_REFUSES = [("-b 1", "no probability information"), ("-v 1", "-q silences"),
                   ("-f 1", "-d adds the decision values"), ("-h", "help is --help")]


def run(cmd, args):
    return CliRunner().invoke(cmd, [str(a) for a in args])


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Plain-text copies of the bundled files (the peers' readers take plain text)."""
    d = tmp_path_factory.mktemp("foreign")
    out = {}
    for name, src in (("a9a", "a9a.xz"), ("a9a.t", "a9a.t.xz"), ("heart", "heart_scale.xz")):
        out[name] = d / name
        out[name].write_bytes(lzma.decompress(bundled(src).read_bytes()))
    return out


def ours(files, line, data, tmp_path):
    """(model header dict, predicted labels, true labels) of svm-train LINE on ``data``."""
    train, test = (files["a9a"], files["a9a.t"]) if data == "a9a" else (files["heart"], files["heart"])
    model, out = tmp_path / "model", tmp_path / "out"
    r = run(train_main, ["-q"] + line.split() + [train, model])
    assert r.exit_code == 0, r.output
    r = run(predict_main, ["-q", test, model, out])
    assert r.exit_code == 0, r.output
    header = dict(line.split(" ", 1) for line in model.read_text().splitlines()[:60] if " " in line)
    truth = np.array([float(row.split()[0]) for row in test.read_text().splitlines()])
    return header, np.loadtxt(out), truth


_PROBLEMS = {}


def read_problem(util, path):
    """``util.svm_read_problem(path)``, read once per module (a9a: tenths of a second in
    Python) and shared by the rows of TRAINS; the peers copy it into their own structures."""
    key = (util.__name__, str(path))
    if key not in _PROBLEMS:
        _PROBLEMS[key] = util.svm_read_problem(str(path))
    return _PROBLEMS[key]


def peer(files, spec, data):
    """Predicted and true labels of the official LIBLINEAR / LIBSVM trained with ``spec``."""
    name, options = spec.split(":", 1)
    train, test = (files["a9a"], files["a9a.t"]) if data == "a9a" else (files["heart"], files["heart"])
    reset_c_rand()
    if name == "liblinear":
        from liblinear import liblinearutil as util
        y, x = read_problem(util, train)
        m = util.train(y, x, options + " -q")
        yt, xt = read_problem(util, test)
        pred, _, _ = util.predict(yt, xt, m, "-q")
    else:
        from libsvm import svmutil as util
        y, x = read_problem(util, train)
        m = util.svm_train(y, x, options + " -q")
        yt, xt = read_problem(util, test)
        pred, _, _ = util.svm_predict(yt, xt, m, "-q")
    return np.array(pred), np.array(yt)


@pytest.mark.parametrize("tool, line, data, expected, peer_spec", TRAINS, ids=[f"{t[0]}:{t[1]}" for t in TRAINS])
def test_foreign_line_trains_the_peers_model(files, tmp_path, tool, line, data, expected, peer_spec):
    header, pred, truth = ours(files, line, data, tmp_path)
    for key, value in expected.items():
        shown = header.get("C_used" if key == "C" else key)
        assert shown == value, f"{key}: {shown} != {value}"
    peer_pred, peer_truth = peer(files, peer_spec, data)
    assert np.array_equal(peer_truth, truth)
    acc, peer_acc = np.mean(pred == truth), np.mean(peer_pred == truth)
    assert abs(acc - peer_acc) <= 0.005, f"{line}: accuracy {acc:.4f}, {tool} peer {peer_acc:.4f}"
    if expected.get("kernel_type", "linear") != "linear" or data == "heart":
        assert np.mean(pred == peer_pred) >= 0.97      # the same decisions, row by row
    if expected.get("solver") == "smo" and expected.get("probability") != "true":
        assert np.mean(pred == peer_pred) >= 0.995     # LIBSVM's own solver: LIBSVM's model


@pytest.mark.parametrize("tool, line, says", REFUSES, ids=[f"{t[0]}:{t[1]}" for t in REFUSES])
def test_foreign_line_refused_with_the_equivalent(files, tmp_path, tool, line, says):
    model = tmp_path / "model"
    r = run(train_main, line.split() + [files["heart"], model])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("svm-train: "), r.output
    assert says in lines[0]
    assert not model.exists()


@pytest.mark.parametrize("tool, line, data, expected, peer_spec", TRAINS, ids=[f"{t[0]}:{t[1]}" for t in TRAINS])
def test_foreign_line_is_read_with_the_solver_of_its_row(tool, line, data, expected, peer_spec):
    """Every row of TRAINS, through the translation alone: the line is
    accepted and names the solver its model header shows."""
    args = translate_train(line.split() + ["TRAIN"], train_main)
    solver = args[args.index("-s") + 1] if "-s" in args else "dcd"      # svm-train's default
    assert solver == expected["solver"], args


# (line, svm-train's own arguments it is read as): LIBSVM-only flags (-b, -m, -h 0|1)
# without a named solver make the line LIBSVM's; with -s NAME, a flag LIBSVM lacks
# (-C, -B) or on an SVMlight line they keep their meaning there
TRANSLATES = [
    ("-b 1 -c 1", "-s smo -b 1 -c 1 --folds libsvm"),
    ("-m 100", "-s smo -m 100"),
    ("-h 0", "-s smo --shrinking 0"),
    ("-h 1 -c 2", "-s smo -c 2 --shrinking 1"),
    ("-s 0 -b 1", "-s smo -b 1 --folds libsvm"),
    ("-s 2 -n 0.1 -h 0", "-s smo --task o --nu 0.1 -e 0.001 --shrinking 0"),
    ("-s 3 -p 0.2 -m 50", "-s smo --task r -p 0.2 -m 50"),
    ("-s 1 -n 0.5 -B 1", "-s dcd --task c --loss squared-hinge -B 1"),
    ("-n 0.5", ""),
    ("-h 5", ""),                       # SVMlight's -h N: no LIBSVM line, no effect
    ("-s dcd -b 1", "-s dcd -b 1"),
    ("-s smo -m 100", "-s smo -m 100"),
    ("-s pegasos -h 0", "-s pegasos"),
    ("-s dcd -b 0", "-s dcd"),
    ("-C -s 2 -b 1", "-s dcd --task c --loss squared-hinge -C -b 1 --folds liblinear"),
    ("-s 3 -B 1 -b 1", "-s dcd --task c --loss hinge -B 1 -b 1"),
    ("-z c -c 1 -b 1", "-s smo -c 1 --task c -t 0"),
    ("-z c -c 1 -b 0", "-s dcd -c 1 --task c"),
    ("-c 1 -b 1 -m 40 -h 100 -x 0", "-s smo -c 1 -m 40 -t 0"),
    ("--grid -b 1", "-s smo --grid -b 1 --folds libsvm"),
    ("--penalty l1 -c 2", "-s cdn --penalty l1 -c 2"),       # as kernel options choose smo
    ("-s 6 -B 1", "-s cdn --task c --loss log -B 1"),
]


@pytest.mark.parametrize("line, own", TRANSLATES)
def test_foreign_line_translation(line, own):
    assert translate_train(line.split() + ["TRAIN"], train_main) == own.split() + ["TRAIN"]


LIBSVM_TRAIN, LIBSVM_PREDICT = "/usr/bin/svm-train", "/usr/bin/svm-predict"


@needs(LIBSVM_TRAIN, LIBSVM_PREDICT, package="libsvm-tools")
def test_b1_line_trains_libsvms_rbf_model(files, tmp_path):
    """Issue 31 item 5: `svm-train -b 1 -c 1 heart_scale` is LIBSVM's line (LIBLINEAR's
    train has no -b): LIBSVM's own svm-train and svm-predict against ours."""
    theirs = tmp_path / "theirs"
    subprocess.run([LIBSVM_TRAIN, "-b", "1", "-c", "1", str(files["heart"]), str(theirs)],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([LIBSVM_PREDICT, str(files["heart"]), str(theirs), str(tmp_path / "theirs.out")],
                   check=True, stdout=subprocess.DEVNULL)
    text = theirs.read_text()
    assert "kernel_type rbf" in text and "probA" in text      # LIBSVM trained its RBF C-SVC, with -b 1
    header, pred, truth = ours(files, "-b 1 -c 1", "heart", tmp_path)
    assert (header["solver"], header["kind"], header["kernel_type"], header["probability"]) == \
        ("smo", "kernel", "rbf", "true")
    assert float(header["gamma"]) == pytest.approx(1 / 13)   # LIBSVM's default: 1/number of features
    agree = np.mean(pred == np.loadtxt(tmp_path / "theirs.out"))
    assert agree >= 0.97, f"{agree:.2%} of heart_scale's rows predicted as LIBSVM predicts them"


def test_nu_with_a_number_both_peers_read_is_refused_naming_both(files, tmp_path):
    """-s 1 -n 0.5: LIBSVM's nu-SVC or LIBLINEAR's -s 1 (which ignores -n)."""
    r = run(train_main, ["-s", "1", "-n", "0.5", files["heart"], tmp_path / "model"])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    for says in ("LIBSVM's nu-SVC", "-s smo --nu NU", "LIBLINEAR's -s 1", "drop -n"):
        assert says in lines[0]
    assert not (tmp_path / "model").exists()


@pytest.fixture(scope="module")
def heart_model(files, tmp_path_factory):
    model = tmp_path_factory.mktemp("heart_model") / "m"
    assert run(train_main, ["-q", files["heart"], model]).exit_code == 0
    return model


@pytest.mark.parametrize("line", PREDICT_WORKS)
def test_foreign_predict_line_works_as_there(files, heart_model, tmp_path, line):
    plain, foreign = tmp_path / "plain", tmp_path / "foreign"
    assert run(predict_main, [files["heart"], heart_model, plain]).exit_code == 0
    r = run(predict_main, line.split() + [files["heart"], heart_model, foreign])
    assert r.exit_code == 0, r.output
    assert foreign.read_text() == plain.read_text()
    assert ("Accuracy = " in r.output) == ("-q" not in line)


@pytest.mark.parametrize("line, says", PREDICT_REFUSES)
def test_foreign_predict_line_refused(files, heart_model, tmp_path, line, says):
    r = run(predict_main, line.split() + [files["heart"], heart_model, tmp_path / "out"])
    assert r.exit_code == 2, r.output
    assert r.output.count("\n") == 1 and says in r.output
    assert not (tmp_path / "out").exists()


def test_shrinking_flag_leaves_the_model_unchanged(files, tmp_path):
    """-h 0|1 alone is LIBSVM's line (its RBF C-SVC by -s smo, shrinking on or
    off: the same predictions); with a named solver that does not shrink it changes nothing."""
    for name, extra in (("h0", ["-h", "0"]), ("h1", ["-h", "1"]), ("dcd", ["-s", "dcd"]),
                        ("dcd_h0", ["-s", "dcd", "-h", "0"]), ("dcd_h1", ["-s", "dcd", "-h", "1"])):
        r = run(train_main, ["-q"] + extra + [files["heart"], tmp_path / name])
        assert r.exit_code == 0, r.output
    for name in ("h0", "h1"):
        r = run(predict_main, ["-q", files["heart"], tmp_path / name, tmp_path / f"{name}.out"])
        assert r.exit_code == 0, r.output
        assert "solver smo\n" in (tmp_path / name).read_text() and "kernel_type rbf\n" in (tmp_path / name).read_text()
    assert (tmp_path / "h0.out").read_text() == (tmp_path / "h1.out").read_text()
    assert (tmp_path / "dcd_h0").read_text() == (tmp_path / "dcd").read_text() == (tmp_path / "dcd_h1").read_text()


def test_help_on_no_arguments_and_on_help_only(files):
    no_args_status = 2 if tuple(int(p) for p in version("click").split(".")[:2]) >= (8, 2) else 0   # click's own
    for cmd in (train_main, predict_main):
        r = run(cmd, [])
        assert r.exit_code == no_args_status and "Usage:" in r.output and "--help" in r.output
        r = run(cmd, ["--help"])
        assert r.exit_code == 0 and "Usage:" in r.output


def test_version_on_both_commands():
    import svmtrain
    for cmd, name in ((train_main, "svm-train"), (predict_main, "svm-predict")):
        r = run(cmd, ["--version"])
        assert r.exit_code == 0 and r.output.strip() == f"{name} (svmtrain) {svmtrain.__version__}"


def test_predict_usage_shows_output_file_as_required():
    r = run(predict_main, ["--help"])
    assert r.exit_code == 0 and "TEST_FILE MODEL_FILE OUTPUT_FILE" in r.output.splitlines()[0]


def test_qid_warned_once_for_classification(tmp_path):
    rows = [f"{1 if i % 2 else -1} qid:{i // 4} 1:{i % 3} 2:{(i * 7) % 5}" for i in range(40)]
    (tmp_path / "rank").write_text("\n".join(rows) + "\n")
    r = CliRunner().invoke(train_main, [str(tmp_path / "rank"), str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    assert r.stderr.count("warning:") == 1 and "ignored for classification" in r.stderr
    (tmp_path / "plain").write_text("\n".join(row.replace(f" qid:{i // 4}", "") for i, row in enumerate(rows)) + "\n")
    r = CliRunner().invoke(train_main, [str(tmp_path / "plain"), str(tmp_path / "m2")])
    assert r.exit_code == 0 and "warning:" not in r.stderr
    r = CliRunner().invoke(train_main, ["-q", str(tmp_path / "rank"), str(tmp_path / "m3")])
    assert r.exit_code == 0 and r.stderr == ""


def test_kernel_options_through_the_api_are_refused_for_linear_solvers():
    from svmtrain.errors import ParameterError
    from svmtrain.params import TrainParams, check_params
    for kw in ({"kernel_type": 2}, {"gamma": 0.5}, {"degree": 2}, {"coef0": 1.0}):
        with pytest.raises(ParameterError, match="-s smo, -s sbp, -s asset, -s norma, -s cvm, -s pegasos -t K"):
            check_params(TrainParams(solver="ocas", **kw))
    check_params(TrainParams(solver="dcd", kernel_type=0))
    check_params(TrainParams(solver="pegasos", kernel_type=2, gamma=0.5))


@pytest.mark.parametrize("line", ["-t 2 -g 0.5 -c 10", "-g 0.5 -c 10"])
def test_svmguide1_predictions_agree_with_libsvm(tmp_path, line):
    """Issue 15's acceptance: at least 97 % of svmguide1's rows predicted as LIBSVM predicts them."""
    text = tmp_path / "svmguide1"
    text.write_bytes(lzma.decompress(shared("svmguide1.xz").read_bytes()))
    header, pred, truth = ours({"heart": text}, line, "heart", tmp_path)
    assert header["solver"] == "smo"
    peer_pred, _ = peer({"heart": text}, "libsvm:" + line, "heart")
    assert np.mean(pred == peer_pred) >= 0.995


def _liblinear_official(tmp_path, options):
    """(heart_scale's plain file, liblinear-official's train(options) on it, rand() at seed 1)."""
    util = pytest.importorskip("liblinear.liblinearutil")
    from reference import reset_c_rand
    data = tmp_path / "heart"
    with lzma.open(bundled("heart_scale.xz"), "rb") as f:
        data.write_bytes(f.read())
    y, x = util.svm_read_problem(str(data))
    reset_c_rand()
    return data, util.train(y, x, options + " -q")


def _ours(args):
    from svmtrain.cli.train import main as train_main
    r = CliRunner().invoke(train_main, args)
    assert r.exit_code == 0, r.output
    return r.output


@pytest.mark.parametrize("options", ["-s 2 -v 5 -e 0.0001", "-s 0 -v 5 -e 0.0001", "-s 3 -v 5 -e 0.0001",
                                     "-s 1 -v 5", "-s 2 -v 3 -B 1 -e 0.0001"])
def test_liblinear_v_lines_print_liblinears_rate(tmp_path, options):
    """A LIBLINEAR -v line cross-validates on LIBLINEAR's folds (--folds
    liblinear: its unstratified shuffle by glibc's rand(), seed 1, training
    rows in its order): heart_scale's rate is liblinear-official's, digit
    for digit."""
    data, theirs = _liblinear_official(tmp_path, options)
    assert f"Cross Validation Accuracy = {theirs:g}%" in _ours([*options.split(), str(data)])


def test_liblinear_c_line_walks_liblinears_folds(tmp_path):
    """-C on a LIBLINEAR line: LIBLINEAR's folds, so heart_scale's best C and
    rate are liblinear-official's."""
    data, found = _liblinear_official(tmp_path, "-C -s 2")    # (best C, best p: -1 for classification, best rate)
    best_c, best_rate = found[0], found[-1]
    assert f"Best C = {best_c:g}  CV accuracy = {100 * best_rate:g}%" in _ours(["-C", "-s", "2", str(data)])
