"""LIBSVM model files: read LIBSVM's models, write ours, round trips through libsvm-official."""
import subprocess

import numpy as np
import pytest
from libsvm import svmutil

from conftest import bundled, needs, heart_scale as heart
from reference import csr
from svmtrain.errors import ModelFormatError, ParameterError
from svmtrain.io.libsvm_format import read_libsvm_model, write_libsvm_model
from svmtrain.io.model_io import load_model
from svmtrain.io.reader import read_libsvm
from svmtrain.models.kernel import KernelModel
from svmtrain.params import TrainParams
from svmtrain.training.train import train

LIBSVM_PREDICT = "/usr/bin/svm-predict"


def libsvm_predict(model_path, X):
    m = svmutil.svm_load_model(str(model_path))
    p, _, _ = svmutil.svm_predict(X.labels.tolist(), csr(X, X.n_features), m, "-q")
    return np.array(p)


@pytest.mark.parametrize("options, classes", [
    ("-c 1", 2),
    ("-c 2 -t 1 -g 0.1 -r 1 -d 2", 2),
    ("-c 1 -t 3 -g 0.05 -r -0.5", 2),
    ("-c 1 -t 0", 2),
    ("-s 1 -n 0.3", 2),
    ("-c 3", 3),
    ("-c 3 -t 1 -g 0.2 -r 1", 4),
])
def test_libsvm_model_read_predicts_identically(tmp_path, options, classes):
    X = heart()
    labels = X.labels if classes == 2 else np.arange(X.n_rows) % classes * 10.0 - 7.0
    X.labels = labels
    m = svmutil.svm_train(labels.tolist(), csr(X, 13), options + " -q")
    path = tmp_path / "lib.model"
    svmutil.svm_save_model(str(path), m)
    model = load_model(path)                     # sniffed by its first line
    assert isinstance(model, KernelModel)
    assert model.decision == ("ovo" if classes > 2 else "ovr")
    assert sorted(model.labels.tolist()) == sorted(set(labels.tolist()))
    np.testing.assert_array_equal(model.predict(X), libsvm_predict(path, X))
    if classes == 2:
        _, _, dec = svmutil.svm_predict(labels.tolist(), csr(X, 13), m, "-q")
        np.testing.assert_allclose(model.decision_function(X)[:, 0], np.array(dec)[:, 0], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("params", [
    TrainParams(solver="sbp", C=1.0),
    TrainParams(solver="sbp", C=1.0, kernel_type=1, gamma=0.1, coef0=1.0, degree=2),
    TrainParams(solver="pegasos", kernel_type=2, C=1.0, unreg_bias=True, epochs=5),
    TrainParams(solver="pegasos", kernel_type=3, gamma=0.01, coef0=-0.2, epochs=3),
])
def test_our_models_written_for_libsvm_predict_identically(tmp_path, params):
    X = heart()
    model = train(X, params)
    path = tmp_path / "ours.model"
    write_libsvm_model(model, path)
    assert path.read_text().startswith("svm_type c_svc\n")
    ours = model.predict(X)
    np.testing.assert_array_equal(libsvm_predict(path, X), ours)
    # and back: reading our LIBSVM file gives the same model
    back = read_libsvm_model(path)
    np.testing.assert_array_equal(back.predict(X), ours)
    np.testing.assert_allclose(back.decision_function(X), model.decision_function(X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("classes, options", [(3, {}), (4, {"kernel_type": 1, "gamma": 0.2, "coef0": 1.0}),
                                              (3, {"nu": 0.3})])
def test_one_vs_one_models_written_as_libsvm_writes_them(tmp_path, classes, options):
    """-s smo's one-vs-one model of 3-4 classes in LIBSVM's format: the
    header and the support vectors' class-by-class layout of LIBSVM's own
    model of the same problem (svm_train; the coefficients to its
    tolerance), LIBSVM's predictions, and back the same model."""
    X = heart()
    X.labels = np.arange(X.n_rows) % classes * 10.0 - 7.0
    model = train(X, TrainParams(solver="smo", C=None if "nu" in options else 3.0, **options))
    path = tmp_path / "ours.model"
    write_libsvm_model(model, path)
    ours = path.read_text().split("\nSV\n")
    lib_opts = "-s 1 -n 0.3" if "nu" in options else "-c 3"
    if options.get("kernel_type") == 1:
        lib_opts += " -t 1 -g 0.2 -r 1"
    m = svmutil.svm_train(X.labels.tolist(), csr(X, 13), lib_opts + " -q")
    svmutil.svm_save_model(str(tmp_path / "lib.model"), m)
    theirs = (tmp_path / "lib.model").read_text().split("\nSV\n")
    head = dict(line.split(" ", 1) for line in ours[0].splitlines())
    lib_head = dict(line.split(" ", 1) for line in theirs[0].splitlines())
    for key in ("svm_type", "nr_class", "total_sv", "label", "nr_sv"):
        assert head[key] == lib_head[key], key
    np.testing.assert_allclose(np.array(head["rho"].split(), float), np.array(lib_head["rho"].split(), float),
                               rtol=1e-2, atol=1e-2)
    rows = [line.split() for line in ours[1].splitlines()]
    lib_rows = [line.split() for line in theirs[1].splitlines()]

    def features(r):
        return [(int(i), float(v)) for i, v in (f.split(":") for f in r[classes - 1:])]
    assert [features(r) for r in rows] == [features(r) for r in lib_rows]     # the same SVs, in order
    np.testing.assert_allclose(np.array([r[:classes - 1] for r in rows], float),
                               np.array([r[:classes - 1] for r in lib_rows], float), rtol=0.05, atol=0.05)
    if "nu" not in options:     # (libsvm-official's Python svm_predict crashes on multi-class nu_svc models)
        np.testing.assert_array_equal(libsvm_predict(path, X), model.predict(X))
    back = read_libsvm_model(path)
    np.testing.assert_allclose(back.decision_function(X), model.decision_function(X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("pos, neg", [(3.0, 8.0), (8.0, 3.0), (-1.0, 1.0)])
def test_label_order_and_sign_convention(tmp_path, pos, neg):
    """Whatever label comes first, LIBSVM predicts what we predict."""
    X = heart()
    X.labels = np.where(X.labels > 0, pos, neg)
    model = train(X, TrainParams(solver="sbp", C=1.0))
    path = tmp_path / "m.model"
    write_libsvm_model(model, path)
    assert f"label {int(model.labels[0])} {int(model.labels[1])}" in path.read_text()
    np.testing.assert_array_equal(libsvm_predict(path, X), model.predict(X))
    assert (model.predict(X) == X.labels).mean() > 0.8


@needs(LIBSVM_PREDICT, package="libsvm-tools")
def test_debian_svm_predict_reads_our_file(tmp_path):
    import lzma
    data = tmp_path / "heart"
    data.write_bytes(lzma.open(bundled("heart_scale.xz")).read())
    X = heart()
    model = train(X, TrainParams(solver="sbp", C=1.0))
    path = tmp_path / "ours.model"
    write_libsvm_model(model, path)
    out = tmp_path / "out"
    subprocess.run([LIBSVM_PREDICT, str(data), str(path), str(out)], check=True, capture_output=True)
    np.testing.assert_array_equal(np.loadtxt(out), model.predict(X))


def test_single_label_model_round_trip(tmp_path):
    X = heart()
    keep = np.flatnonzero(X.labels > 0)
    from svmtrain.data.dataset import take_rows
    one = take_rows(X, keep)
    model = train(one, TrainParams(solver="sbp"))
    path = tmp_path / "one.model"
    write_libsvm_model(model, path)
    np.testing.assert_array_equal(libsvm_predict(path, X), np.ones(X.n_rows))
    np.testing.assert_array_equal(read_libsvm_model(path).predict(X), np.ones(X.n_rows))


def test_refusals(tmp_path):
    X = heart()
    three = read_libsvm(bundled("heart_scale.xz"))
    three.labels = np.arange(X.n_rows) % 3 * 1.0
    ovr = train(three, TrainParams(solver="sbp", C=1.0, epochs=2))
    with pytest.raises(ParameterError, match="one-vs-rest"):
        write_libsvm_model(ovr, tmp_path / "x.model")
    lin = train(X, TrainParams(solver="pegasos", epochs=1))
    with pytest.raises(ParameterError, match="kernel models"):
        write_libsvm_model(lin, tmp_path / "x.model")
    half = read_libsvm(bundled("heart_scale.xz"))
    half.labels = np.where(X.labels > 0, 0.5, -1.0)
    m = train(half, TrainParams(solver="sbp", epochs=1))
    with pytest.raises(ParameterError, match="integer"):
        write_libsvm_model(m, tmp_path / "x.model")
    assert not (tmp_path / "x.model").exists()


GOOD = """svm_type c_svc
kernel_type rbf
gamma 0.5
nr_class 2
total_sv 3
rho 0.25
label 1 -1
nr_sv 2 1
SV
1.5 1:0.5 3:1
0.5 2:-1
-2 1:1 2:1 3:1
"""


@pytest.mark.parametrize("old, new, line, message", [
    ("svm_type c_svc", "svm_type two_class", 1, "not supported"),
    ("kernel_type rbf", "kernel_type custom", 2, "not supported"),
    ("kernel_type rbf", "kernel_type precomputed", 10, "0:ID"),
    ("gamma 0.5\n", "", 8, "gamma"),
    ("rho 0.25", "rho x", 6, "bad number"),
    ("rho 0.25", "rho 0.25 1", 6, "needs 1"),
    ("nr_sv 2 1", "nr_sv 2 2", 8, "nr_sv"),
    ("label 1 -1", "label 1 1", 7, "distinct"),
    ("total_sv 3\nrho 0.25\nlabel 1 -1\nnr_sv 2 1", "total_sv 4\nrho 0.25\nlabel 1 -1\nnr_sv 2 2", 13,
     "truncated"),
    ("SV\n", "", 9, "unknown LIBSVM model header key '1.5'"),
    ("SV\n1.5 1:0.5 3:1\n0.5 2:-1\n-2 1:1 2:1 3:1\n", "", 9, "no 'SV'"),
    ("0.5 2:-1", "0.5 2-1", 11, "bad support vector"),
    ("0.5 2:-1", "0.5 2:-1 1:3", 11, "increasing"),
    ("0.5 2:-1", "0.5 0:-1", 11, "increasing"),
    ("-2 1:1 2:1 3:1\n", "-2 1:1 2:1 3:1\n7 1:1\n", 13, "unexpected text"),
    ("nr_class 2", "nr_klass 2", 4, "unknown"),
    ("gamma 0.5", "gamma nan", 3, "finite"),
])
def test_damaged_files_name_the_line(tmp_path, old, new, line, message):
    assert old in GOOD
    path = tmp_path / "bad.model"
    path.write_text(GOOD.replace(old, new, 1))
    with pytest.raises(ModelFormatError, match=message) as e:
        load_model(path)
    assert e.value.line == line, str(e.value)


def test_good_file_reads_and_binary_content_is_refused(tmp_path):
    path = tmp_path / "good.model"
    path.write_text(GOOD)
    m = load_model(path)
    assert m.n_sv == 3 and m.b[0] == -0.25 and m.kernel.gamma == 0.5
    np.testing.assert_array_equal(m.labels, [1.0, -1.0])
    path.write_bytes(b"svm_type c_svc\n\xff\xfe\x00")
    with pytest.raises(ModelFormatError):
        read_libsvm_model(path)


def test_cli_model_format_libsvm(tmp_path):
    import lzma
    from click.testing import CliRunner
    from svmtrain.cli.train import main
    data = tmp_path / "heart"
    data.write_bytes(lzma.open(bundled("heart_scale.xz")).read())
    model = tmp_path / "heart.model"
    res = CliRunner().invoke(main, ["-s", "sbp", "-q", "--model-format", "libsvm", str(data), str(model)])
    assert res.exit_code == 0, res.output
    assert model.read_text().startswith("svm_type c_svc")
    X = heart()
    np.testing.assert_array_equal(libsvm_predict(model, X), load_model(model).predict(X))
