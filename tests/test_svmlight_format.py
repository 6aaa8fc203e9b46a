"""SVMlight model files (svm_learn's write_model): read them, predict as svm_classify does.

There is no SVMlight binary here, so the expected decision values are
computed in the tests from SVMlight's formula, f(x) = sum_i alpha_i y_i
K(sv_i, x) - b, with plain NumPy on dense vectors; and models trained by
LIBSVM / svmtrain are rewritten in SVMlight's layout and must predict as
the originals do.
"""
import numpy as np
import pytest
from click.testing import CliRunner

from conftest import bundled, heart_scale as heart
from svmtrain.cli.predict import main as predict_main
from svmtrain.errors import ModelFormatError
from svmtrain.io.model_io import load_model
from svmtrain.io.reader import parse_bytes
from svmtrain.io.svmlight_format import read_svmlight_model
from svmtrain.models.kernel import KernelModel
from svmtrain.models.linear import LinearModel
from svmtrain.params import TrainParams
from svmtrain.training.train import train


def svmlight_text(svs, threshold, kernel=0, d=3, g=1.0, s=1.0, r=1.0, totwords=None, totdoc=100,
                  version="V6.02", comments=None):
    """A model file laid out as SVMlight V6.02's write_model writes it.

    ``svs``: (alpha*y, [(index, value), ...]) pairs. Numbers are written
    with repr (exact) rather than svm_learn's %.8g / %.32g.
    """
    if totwords is None:
        totwords = max([i for _, pairs in svs for i, _ in pairs] or [0])
    lines = [f"SVM-light Version {version}",
             f"{kernel} # kernel type",
             f"{d} # kernel parameter -d ",
             f"{g!r} # kernel parameter -g ",
             f"{s!r} # kernel parameter -s ",
             f"{r!r} # kernel parameter -r ",
             "empty# kernel parameter -u ",
             f"{totwords} # highest feature index ",
             f"{totdoc} # number of training documents ",
             f"{len(svs) + 1} # number of support vectors plus 1 ",
             f"{threshold!r} # threshold b, each following line is a SV (starting with alpha*y)"]
    for k, (ay, pairs) in enumerate(svs):
        comment = comments[k] if comments else ""
        lines.append(f"{ay!r} " + "".join(f"{i}:{v!r} " for i, v in pairs) + f"#{comment}")
    return "\n".join(lines) + "\n"


def dense(pairs, d):
    x = np.zeros(d)
    for i, v in pairs:
        x[i - 1] = v
    return x


# three support vectors and test rows; test row 3 has a feature (5) that no SV has
SVS = [(0.75, [(1, 0.5), (3, -1.0)]), (-0.5, [(2, 1.0), (3, 0.25)]), (-0.25, [(1, -2.0), (4, 1.5)])]
ROWS = [[(1, 1.0), (2, -0.5)], [(3, 2.0), (4, -1.0)], [(1, 0.3), (2, 0.1), (5, 4.0)], []]
THRESHOLD = 0.125


def svmlight_f(kernel, x, d=3, g=1.0, s=1.0, r=1.0):
    """SVMlight's decision value of dense x, from the formula."""
    width = len(x)
    value = -THRESHOLD
    for ay, pairs in SVS:
        v = dense(pairs, width)
        if kernel == 0:
            k = v @ x
        elif kernel == 1:
            k = (s * (v @ x) + r) ** d
        elif kernel == 2:
            k = np.exp(-g * np.sum((v - x) ** 2))
        else:
            k = np.tanh(s * (v @ x) + r)
        value += ay * k
    return value


def rows_chunk():
    text = "".join(("+1 " if k % 2 == 0 else "-1 ") + " ".join(f"{i}:{v!r}" for i, v in row) + "\n"
                   for k, row in enumerate(ROWS))
    return parse_bytes(text.encode())


@pytest.mark.parametrize("kernel, params, cls", [
    (0, {}, LinearModel),
    (1, {"d": 2, "s": 0.5, "r": 1.5}, KernelModel),
    (1, {"d": 3, "s": 2.0, "r": -0.25}, KernelModel),
    (2, {"g": 0.3}, KernelModel),
    (3, {"s": 0.2, "r": -0.1}, KernelModel),
])
def test_hand_written_models_predict_by_the_formula(tmp_path, kernel, params, cls):
    path = tmp_path / "svmlight.model"
    path.write_text(svmlight_text(SVS, THRESHOLD, kernel=kernel, **params))
    model = load_model(path)
    assert isinstance(model, cls)
    np.testing.assert_array_equal(model.labels, [1.0, -1.0])
    X = rows_chunk()
    expected = np.array([svmlight_f(kernel, dense(row, 5), **params) for row in ROWS])
    got = model.decision_function(X)
    assert got.shape == (len(ROWS), 1)
    np.testing.assert_allclose(got[:, 0], expected, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(model.predict(X), np.where(expected > 0, 1.0, -1.0))
    # the threshold is subtracted: an empty row scores -b (+ the kernel's constant part)
    if kernel == 0:
        assert got[3, 0] == -THRESHOLD


def test_kernel_parameters_map_to_libsvm_terms(tmp_path):
    path = tmp_path / "m"
    path.write_text(svmlight_text(SVS, THRESHOLD, kernel=1, d=4, g=9.0, s=0.5, r=2.0))
    k = load_model(path).kernel
    assert (k.code, k.gamma, k.degree, k.coef0) == (1, 0.5, 4, 2.0)       # -s is gamma, -r is coef0
    path.write_text(svmlight_text(SVS, THRESHOLD, kernel=2, g=0.7, s=5.0, r=3.0))
    k = load_model(path).kernel
    assert (k.code, k.gamma) == (2, 0.7)
    path.write_text(svmlight_text(SVS, THRESHOLD, kernel=3, g=9.0, s=0.25, r=-1.0))
    k = load_model(path).kernel
    assert (k.code, k.gamma, k.coef0) == (3, 0.25, -1.0)


def test_linear_model_collapses_to_the_weight_vector(tmp_path):
    path = tmp_path / "m"
    path.write_text(svmlight_text(SVS, THRESHOLD, kernel=0, totwords=6))
    model = read_svmlight_model(path)
    w = sum(ay * dense(pairs, 6) for ay, pairs in SVS)
    np.testing.assert_array_equal(model.W[:, 0], w)
    assert model.n_features == 6 and model.bias < 0 and model.b[0] == -THRESHOLD
    # the variant with one "support vector" that is w itself, alpha 1
    one = [(1.0, [(j + 1, float(v)) for j, v in enumerate(w) if v != 0.0])]
    path.write_text(svmlight_text(one, THRESHOLD, kernel=0, totwords=6))
    X = rows_chunk()
    np.testing.assert_allclose(read_svmlight_model(path).decision_function(X),
                               model.decision_function(X), rtol=0, atol=1e-12)


def test_qid_comments_crlf_and_versions_are_accepted(tmp_path):
    base = svmlight_text(SVS, THRESHOLD, kernel=2, g=0.3, comments=["", "doc 17", " x:1 # y"])
    text = base.replace("-0.5 2:", "-0.5 qid:3 2:")
    path = tmp_path / "m"
    X = rows_chunk()
    expected = load_model_from(path, base).decision_function(X)
    for variant in (text, text.replace("\n", "\r\n"), text.replace("V6.02", "V5.00"),
                    text.replace("V6.02", "V6.01"), text[:-1]):      # no final newline
        np.testing.assert_array_equal(load_model_from(path, variant).decision_function(X), expected)


def load_model_from(path, text):
    path.write_bytes(text.encode())
    return load_model(path)


def test_no_support_vectors_predicts_by_the_threshold(tmp_path):
    for kernel in (0, 2):
        model = load_model_from(tmp_path / "m", svmlight_text([], -0.5, kernel=kernel, totwords=3))
        np.testing.assert_array_equal(model.decision_function(rows_chunk())[:, 0], [0.5] * len(ROWS))
        np.testing.assert_array_equal(model.predict(rows_chunk()), [1.0] * len(ROWS))


def test_zero_decision_value_predicts_minus_one(tmp_path):
    model = load_model_from(tmp_path / "m", svmlight_text([(1.0, [(1, 1.0)])], 1.0, kernel=0))
    X = parse_bytes(b"1 1:1\n1 1:1.5\n")
    np.testing.assert_array_equal(model.decision_function(X)[:, 0], [0.0, 0.5])
    np.testing.assert_array_equal(model.predict(X), [-1.0, 1.0])      # svm_classify: +1 only when f > 0


# ---------------------------------------------------------------- models converted from LIBSVM / svmtrain

def as_svmlight(model, path):
    """Write a binary KernelModel in SVMlight's layout: alpha*y = coef, threshold = -b,
    signs flipped when the model's first label is not the positive class +1."""
    assert sorted(model.labels.tolist()) == [-1.0, 1.0]
    sign = 1.0 if model.labels[0] == 1.0 else -1.0
    SV, k = model.SV, model.kernel
    svs = []
    for i in range(SV.n_rows):
        lo, hi = SV.indptr[i], SV.indptr[i + 1]
        svs.append((sign * float(model.coef[i, 0]),
                    [(int(j) + 1, float(v)) for j, v in zip(SV.indices[lo:hi], SV.values[lo:hi])]))
    params = {"d": int(k.degree), "g": float(k.gamma), "s": float(k.gamma), "r": float(k.coef0)}
    path.write_text(svmlight_text(svs, -sign * float(model.b[0]), kernel=k.code,
                                  totwords=max(model.n_features, 1), **params))
    return sign


@pytest.mark.parametrize("options", ["-c 1", "-c 2 -t 1 -g 0.1 -r 1 -d 2", "-c 1 -t 3 -g 0.05 -r -0.5", "-c 1 -t 0"])
def test_libsvm_models_converted_predict_as_libsvm(tmp_path, options):
    from libsvm import svmutil
    from reference import csr
    X = heart()
    m = svmutil.svm_train(X.labels.tolist(), csr(X, 13), options + " -q")
    svmutil.svm_save_model(str(tmp_path / "libsvm.model"), m)
    original = load_model(tmp_path / "libsvm.model")
    sign = as_svmlight(original, tmp_path / "svmlight.model")
    model = load_model(tmp_path / "svmlight.model")
    assert isinstance(model, LinearModel if "-t 0" in options else KernelModel)
    p, _, dec = svmutil.svm_predict(X.labels.tolist(), csr(X, 13), m, "-q")
    np.testing.assert_array_equal(model.predict(X), np.array(p))
    np.testing.assert_allclose(model.decision_function(X)[:, 0], sign * np.array(dec)[:, 0], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("params", [
    TrainParams(solver="sbp", C=1.0),
    TrainParams(solver="sbp", C=1.0, kernel_type=1, gamma=0.1, coef0=1.0, degree=2),
])
def test_svmtrain_model_converted_predicts_identically(tmp_path, params):
    X = heart()
    original = train(X, params)
    sign = as_svmlight(original, tmp_path / "svmlight.model")
    model = load_model(tmp_path / "svmlight.model")
    np.testing.assert_array_equal(model.predict(X), original.predict(X))
    np.testing.assert_allclose(model.decision_function(X), sign * original.decision_function(X),
                               rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- damaged files

GOOD = svmlight_text(SVS, THRESHOLD, kernel=2, g=0.3)


@pytest.mark.parametrize("old, new, line, message", [
    ("V6.02", "V4.00", 1, "version V4.00 is not supported"),
    ("V6.02", "V3.50", 1, "version V3.50 is not supported"),
    ("V6.02", "six", 1, "unrecognised SVM-light version 'six'"),
    ("Version V6.02", "Version", 1, "not an SVM-light model"),
    ("2 # kernel type", "4 # kernel type", 2, "user-defined kernel"),
    ("2 # kernel type", "5 # kernel type", 2, "unknown kernel type 5"),
    ("2 # kernel type", "-1 # kernel type", 2, "unknown kernel type -1"),
    ("2 # kernel type", "rbf # kernel type", 2, "bad integer 'rbf' in kernel type"),
    ("3 # kernel parameter -d", "3.5 # kernel parameter -d", 3, "bad integer"),
    ("0.3 # kernel parameter -g", "0,3 # kernel parameter -g", 4, "bad number '0,3'"),
    ("0.3 # kernel parameter -g", "nan # kernel parameter -g", 4, "bad number"),
    ("0.3 # kernel parameter -g", "1e999 # kernel parameter -g", 4, "finite"),
    ("1.0 # kernel parameter -s", "# kernel parameter -s", 5, "missing value"),
    ("1.0 # kernel parameter -r", "1e999x # kernel parameter -r", 6, "bad number"),
    ("4 # highest feature index", "-4 # highest feature index", 8, "must be >= 0"),
    ("100 # number of training", "many # number of training", 9, "bad integer"),
    ("4 # number of support vectors", "0 # number of support vectors", 10, "must be >= 1"),
    ("4 # number of support vectors", "5 # number of support vectors", 15, "truncated model: 3 of 4"),
    ("0.125 # threshold", "0.125.5 # threshold", 11, "bad number"),
    ("-0.5 2:1.0", "-0.5 2:x", 13, "bad support vector"),
    ("-0.5 2:1.0", "minus 2:1.0", 13, "bad support vector"),
    ("-0.5 2:1.0", "-0.5 2:1.0 2:3", 13, "duplicate feature index"),
    ("-0.5 2:1.0", "-0.5 0:1.0", 13, "indices are 1-based"),
    ("-0.5 2:1.0 3:0.25 #\n", "\n", 13, "empty support vector line"),
    ("-0.5 2:1.0 3:0.25 #\n", "# a comment\n", 13, "empty support vector line"),
    ("-0.25 1:-2.0 4:1.5 #\n", "-0.25 1:-2.0 4:1.5 #\n\n7 1:1 #\n", 16, "unexpected text after the 3"),
])
def test_damaged_files_name_the_line(tmp_path, old, new, line, message):
    assert old in GOOD
    path = tmp_path / "bad.model"
    path.write_text(GOOD.replace(old, new, 1))
    with pytest.raises(ModelFormatError, match=message) as e:
        load_model(path)
    assert e.value.line == line, str(e.value)
    assert str(e.value).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize("keep, line", [(1, 2), (6, 7), (10, 11), (11, 12), (12, 13), (13, 14)])
def test_truncated_files_name_the_first_missing_line(tmp_path, keep, line):
    path = tmp_path / "cut.model"
    path.write_text("".join(GOOD.splitlines(keepends=True)[:keep]))
    with pytest.raises(ModelFormatError, match="truncated") as e:
        load_model(path)
    assert e.value.line == line, str(e.value)


def test_trailing_blank_lines_and_non_ascii_header(tmp_path):
    path = tmp_path / "m"
    np.testing.assert_array_equal(load_model_from(path, GOOD + "\n \n").b, [-THRESHOLD])
    path.write_bytes(GOOD.encode().replace(b"empty#", b"\xe9t\xe9#"))
    with pytest.raises(ModelFormatError, match="non-ASCII") as e:
        read_svmlight_model(path)
    assert e.value.line == 7


def test_unknown_format_names_all_four(tmp_path):
    path = tmp_path / "m"
    path.write_text("SVMlight model\n1 # kernel type\n")
    with pytest.raises(ModelFormatError) as e:
        load_model(path)
    assert e.value.line == 1
    assert "svmtrain, LIBLINEAR, LIBSVM or SVMlight" in str(e.value)


# ---------------------------------------------------------------- svm-predict

def test_svm_predict_reads_an_svmlight_model(tmp_path):
    X = heart()
    original = train(X, TrainParams(solver="sbp", C=1.0))
    sign = as_svmlight(original, tmp_path / "svmlight.model")
    out = tmp_path / "out"
    r = CliRunner().invoke(predict_main, [str(bundled("heart_scale.xz")), str(tmp_path / "svmlight.model"), str(out)])
    assert r.exit_code == 0, r.output
    correct = int(np.count_nonzero(original.predict(X) == X.labels))
    assert r.stdout == "Accuracy = %g%% (%d/270)\n" % (100.0 * correct / 270, correct)
    np.testing.assert_array_equal(np.loadtxt(out), original.predict(X))


def test_svm_predict_decision_values_are_svmlight_f(tmp_path):
    path = tmp_path / "svmlight.model"
    path.write_text(svmlight_text(SVS, THRESHOLD, kernel=1, d=2, s=0.5, r=1.5))
    data = tmp_path / "rows"
    data.write_text("".join("+1 " + " ".join(f"{i}:{v!r}" for i, v in row) + "\n" for row in ROWS))
    r = CliRunner().invoke(predict_main, ["-d", str(data), str(path), "-"])
    assert r.exit_code == 0, r.output
    assert r.stderr.startswith("Accuracy = ")
    lines = r.stdout.splitlines()
    f = [svmlight_f(1, dense(row, 5), d=2, s=0.5, r=1.5) for row in ROWS]
    assert lines == [("1 " if v > 0 else "-1 ") + "%.10g" % v for v in f]
