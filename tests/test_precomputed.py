"""LIBSVM's precomputed kernels (-t 4) in -s smo: the reader's index base 0,
the numba kernels against NumPy twins, -t 4 on heart_scale's linear kernel
matrix K = X X' against -t 0 on X (the same decision values) and against
LIBSVM's svm-train -t 4 / svm-predict, the checks of the format, the model
files both ways."""
import subprocess

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import bundled, needs
from naive_reader import NaiveError, naive_parse
from svmtrain.cli.predict import main as predict_main
from svmtrain.cli.train import main as train_main
from svmtrain.errors import InputFormatError, ModelFormatError
from svmtrain.io.model_io import load_model, save_model
from svmtrain.io.libsvm_format import write_libsvm_model
from svmtrain.io.reader import parse_bytes, read_libsvm
from svmtrain.mercer import _precomputed_kernels as KP
from svmtrain.mercer.precomputed import training_matrix
from svmtrain.params import TrainParams
from svmtrain.training.train import train

LIBSVM_TRAIN, LIBSVM_PREDICT = "/usr/bin/svm-train", "/usr/bin/svm-predict"
N_TRAIN = 200       # heart_scale's first 200 rows train, all 270 are the test rows


def dense(chunk, d):
    X = np.zeros((chunk.n_rows, d))
    rows = np.repeat(np.arange(chunk.n_rows), np.diff(chunk.indptr))
    X[rows, chunk.indices] = chunk.values
    return X


def kernel_text(y, K, ids):
    """LIBSVM's precomputed rows: label 0:ID 1:K(x,x1) ... L:K(x,xL)."""
    return "".join(f"{y[i]:g} 0:{ids[i]} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(K[i])) + "\n"
                   for i in range(len(y)))


@pytest.fixture(scope="module")
def heart(tmp_path_factory):
    """heart_scale as X (dense), its train/test kernel files (K = X X'), their chunks, and the plain files."""
    root = tmp_path_factory.mktemp("precomputed")
    data = read_libsvm(bundled("heart_scale.xz"))
    X, y = dense(data, 13), data.labels
    Xtr = X[:N_TRAIN]
    paths = {}
    for name, rows, K in (("train.k", N_TRAIN, Xtr @ Xtr.T), ("test.k", len(y), X @ Xtr.T)):
        paths[name] = root / name
        paths[name].write_text(kernel_text(y[:rows], K, np.arange(1, rows + 1)))
    for name, rows in (("train", N_TRAIN), ("test", len(y))):
        paths[name] = root / name
        paths[name].write_text("".join(f"{y[i]:g} " + " ".join(f"{j + 1}:{float(X[i, j])!r}" for j in range(13)) + "\n"
                                       for i in range(rows)))
    chunks = {k: read_libsvm(p, index_base=0 if k.endswith(".k") else 1) for k, p in paths.items()}
    return {"X": X, "y": y, "paths": paths, "chunks": chunks, "root": root}


def run(main, args, code=0):
    r = CliRunner().invoke(main, [str(a) for a in args])
    assert r.exit_code == code, r.output
    return r.output


# ------------------------------------------------------------------ the reader

def test_reader_index_base_zero_keeps_index_zero_as_column_zero():
    text = b"1 0:3 1:0.5 2:-1\n# c\n-1 2:4 0:1 1:2.5e-1\n"
    c = parse_bytes(text, index_base=0)
    assert c.indices.tolist() == [0, 1, 2, 0, 1, 2]
    assert c.values.tolist() == [3, 0.5, -1, 1, 0.25, 4]
    assert parse_bytes(b"1 1:0.5 3:2\n").indices.tolist() == [0, 2]       # base 1 unchanged
    with pytest.raises(InputFormatError, match="index 0 is invalid: indices are 1-based"):
        parse_bytes(b"1 0:1 1:2\n")
    for bad, message in ((b"1 -1:1\n", "indices are >= 0"), (b"1 0:1 0:2\n", "duplicate feature index 0"),
                         (b"1 1:1 0:2 1:3\n", "duplicate feature index 1")):
        with pytest.raises(InputFormatError, match=message):
            parse_bytes(bad, index_base=0)


# ------------------------------------------------------------ numba against NumPy

def numpy_check_rows(indptr, indices, values, training, need):
    """The twin of KP.check_rows, row by row in NumPy."""
    n = len(indptr) - 1
    for i in range(n):
        idx = indices[indptr[i]:indptr[i + 1]]
        if len(idx) == 0 or idx[0] != 0:
            return i, KP.NO_ID, 0
        gap = np.flatnonzero(idx != np.arange(len(idx)))
        if len(gap):
            return i, KP.GAP, int(gap[0])
        v = values[indptr[i]]
        if training and not (1 <= v <= len(idx) - 1 and v == int(v)):
            return i, KP.BAD_ID, len(idx) - 1
    if training:
        need = int(values[indptr[:-1]].max()) if n else 0
    last = np.diff(indptr) - 1
    short = np.flatnonzero(last < need)
    if len(short):
        return int(short[0]), KP.SHORT, int(last[short[0]])
    return -1, KP.OK, need


def random_rows(rng, n):
    """Precomputed-looking rows with random defects: dropped 0:, gaps, bad IDs, short rows."""
    lines = []
    for i in range(n):
        width = int(rng.integers(1, n + 2))
        cols = list(range(width + 1))
        if rng.random() < 0.1:
            cols.remove(int(rng.integers(0, width + 1)))
        vals = rng.normal(size=len(cols))
        if cols and cols[0] == 0:
            vals[0] = float(rng.choice([i % n + 1, 0.5, n + 5, 1]))
        lines.append("1 " + " ".join(f"{c}:{float(v)!r}" for c, v in zip(cols, vals)))
    return parse_bytes(("\n".join(lines) + "\n").encode(), index_base=0)


@pytest.mark.parametrize("seed", range(40))
def test_check_rows_matches_its_numpy_twin(seed):
    rng = np.random.default_rng(seed)
    c = random_rows(rng, int(rng.integers(1, 8)))
    for training, need in ((True, 0), (False, int(rng.integers(0, 6)))):
        got = KP.check_rows(c.indptr, c.indices, c.values, training, need)
        assert tuple(int(v) for v in got) == numpy_check_rows(c.indptr, c.indices, c.values, training, need)


def test_gather_matches_numpy_indexing(heart):
    c = heart["chunks"]["test.k"]
    rng = np.random.default_rng(0)
    rows = rng.permutation(c.n_rows)[:50].astype(np.int64)
    ids = rng.integers(0, N_TRAIN + 1, size=30).astype(np.int64)
    for dtype in (np.float64, np.float32):
        out = KP.gather_serial(c.indptr, c.values, rows, ids, np.empty((50, 30), dtype))
        assert np.array_equal(out, c.values[c.indptr[rows][:, None] + ids[None, :]].astype(dtype))
    M, diag = training_matrix(heart["chunks"]["train.k"])
    Xtr = heart["X"][:N_TRAIN]
    assert np.array_equal(M, (Xtr @ Xtr.T).astype(np.float32)) and np.allclose(diag, (Xtr * Xtr).sum(1))


# --------------------------------------------------- -t 4 against -t 0 on X

def three_classes(y, X):
    return np.where(X[:, 0] > 0.3, 2.0, y)


@pytest.mark.parametrize("case", ["binary", "weights", "multiclass", "regression", "one-class", "batched"])
def test_precomputed_linear_kernel_is_the_linear_kernel(heart, case):
    """-t 4 on K = X X' trains the -t 0 model of X: the same decision values on every test row."""
    ch = heart["chunks"]
    kw = {"solver": "smo", "eps": 1e-6}
    kw.update({"binary": {"C": 1.0}, "weights": {"C": 0.5, "class_weights": {1.0: 3.0}},
               "multiclass": {"C": 2.0}, "regression": {"task": "r", "C": 1.0, "epsilon": 0.2},
               "one-class": {"task": "o", "nu": 0.3}, "batched": {"C": 1.0, "working_set": 16}}[case])
    pairs = {}
    for t, train_name, test_name in ((0, "train", "test"), (4, "train.k", "test.k")):
        tr, te = ch[train_name], ch[test_name]
        if case == "multiclass":
            tr = type(tr)(**{**tr.__dict__, "labels": three_classes(tr.labels, heart["X"][:N_TRAIN])})
        model = train(tr, TrainParams(kernel_type=t, **kw))
        pairs[t] = (model, model.decision_function(te))
    (m0, d0), (m4, d4) = pairs[0], pairs[4]
    assert m4.n_sv == m0.n_sv and d4.shape == d0.shape
    np.testing.assert_allclose(d4, d0, rtol=0, atol=1e-6 * max(1.0, np.abs(d0).max()))
    assert m4.SV.indices.tolist() == [0] * m4.n_sv        # support vectors are their IDs, 0:ID
    if case == "multiclass":
        assert len(m4.labels) == 3 and m4.decision == "ovo"


def test_cross_validation_and_grid(heart):
    """-v as -t 0's (the same folds, the same models: at most a row whose
    decision value is within the tolerance of 0 may differ); --grid searches C alone."""
    p = heart["paths"]
    rates = [float(run(train_main, ["-s", "smo", "-t", t, "-v", "5", p[f]]).split("= ")[1].rstrip("%\n"))
             for t, f in (("4", "train.k"), ("0", "train"))]
    assert abs(rates[0] - rates[1]) <= 100.0 / N_TRAIN + 1e-9, rates
    out = run(train_main, ["--grid", "-v", "3", "-t", "4", "-log2c", "-1,1,2", "-out", "null", "-q",
                           p["train.k"], heart["root"] / "grid.model"])
    assert len(out.split()) == 2          # grid.py's last line: the best C and its rate, no gamma
    assert load_model(heart["root"] / "grid.model").kernel.name == "precomputed"


# --------------------------------------------------------------- model files

@pytest.mark.parametrize("fmt", ["svmtrain", "libsvm"])
def test_model_round_trip(heart, tmp_path, fmt):
    model = train(heart["chunks"]["train.k"], TrainParams(solver="smo", kernel_type=4, C=1.0))
    path = tmp_path / "m"
    (save_model if fmt == "svmtrain" else write_libsvm_model)(model, path)
    back = load_model(path)
    te = heart["chunks"]["test.k"]
    assert back.kernel.name == "precomputed"
    assert np.array_equal(back.SV.values, model.SV.values) if fmt == "svmtrain" else True
    np.testing.assert_allclose(back.decision_function(te), model.decision_function(te), rtol=0, atol=1e-12)
    if fmt == "libsvm":
        text = path.read_text()
        assert "kernel_type precomputed\n" in text and "gamma" not in text
        sv = text.split("SV\n", 1)[1].splitlines()
        assert all(line.split()[1].startswith("0:") and len(line.split()) == 2 for line in sv)


def test_libsvm_model_file_with_bad_support_vector(heart, tmp_path):
    path = tmp_path / "m"
    write_libsvm_model(train(heart["chunks"]["train.k"], TrainParams(solver="smo", kernel_type=4)), path)
    lines = path.read_text().splitlines()
    sv = lines.index("SV") + 1
    lines[sv] = lines[sv].split()[0] + " 1:3"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ModelFormatError, match="0:ID") as e:
        load_model(path)
    assert e.value.line == sv + 1


# --------------------------------------------------------------- the checks

@pytest.mark.parametrize("text, line, message", [
    ("1 0:1 1:1 2:0.5\n-1 1:0.5 2:1\n", 2, "does not start with 0:ID"),
    ("1 0:1 1:1 2:0.5\n-1 0:2 1:0.5 3:1\n", 2, "has no index 2"),
    ("# c\n1 0:1 1:1 2:0.5\n\n-1 0:3 1:0.5 2:1\n", 4, "sample serial number 3 out of range"),
    ("1 0:1.5 1:1 2:0.5\n-1 0:2 1:0.5 2:1\n", 1, "sample serial number 1.5 out of range"),
    ("1 0:1 1:1 2:0.5 3:2\n-1 0:3 1:0.5 2:1 3:1\n1 0:2 1:1 2:2\n", 3, "not square"),
])
def test_bad_training_files_name_the_line(tmp_path, text, line, message):
    path = tmp_path / "k"
    path.write_text(text)
    out = run(train_main, ["-s", "smo", "-t", "4", path, tmp_path / "m"], code=2)
    assert f"{path}:{line}: -t 4 (precomputed kernel)" in out and message in out
    assert len(out.strip().splitlines()) == 1


def test_bad_test_rows_name_the_line(heart, tmp_path):
    model = tmp_path / "m"
    run(train_main, ["-q", "-t", "4", heart["paths"]["train.k"], model])
    for text, message in (("1 1:1 2:3\n", "does not start with 0:ID"),
                          ("1 0:0 1:1 2:3\n", "but the model has a support vector with ID")):
        path = tmp_path / "t"
        path.write_text("# comment\n" + text)
        out = run(predict_main, [path, model, tmp_path / "o"], code=2)
        assert f"{path}:2: -t 4 (precomputed kernel)" in out and message in out


@pytest.mark.parametrize("args, message", [
    (["-s", "dcd", "-t", "4"], "-t 4 (precomputed kernel) is trained by -s smo, not -s dcd"),
    (["-s", "sbp", "-t", "4"], "is trained by -s smo, not -s sbp"),
    (["-s", "smo", "-t", "4", "--scale"], "--scale does not apply to -t 4"),
    (["-z", "c", "-c", "1", "-t", "4"], "SVMlight line is its user-defined kernel"),
])
def test_refusals(heart, args, message):
    out = run(train_main, args + [heart["paths"]["train.k"]], code=2)
    assert message in out


def test_without_t4_index_zero_is_still_an_error(heart):
    out = run(train_main, ["-s", "smo", heart["paths"]["train.k"]], code=2)
    assert "train.k:1: feature index 0 is invalid: indices are 1-based" in out


# --------------------------------------------------------------- LIBSVM itself

@needs(LIBSVM_TRAIN, LIBSVM_PREDICT, package="libsvm-tools")
def test_predictions_agree_with_libsvm(heart, tmp_path):
    """LIBSVM's own svm-train -t 4 / svm-predict line against ours, and each
    program's model file read by the other's svm-predict."""
    p = heart["paths"]
    subprocess.run([LIBSVM_TRAIN, "-t", "4", "-c", "1", str(p["train.k"]), str(tmp_path / "lib.model")],
                   check=True, capture_output=True)
    subprocess.run([LIBSVM_PREDICT, str(p["test.k"]), str(tmp_path / "lib.model"), str(tmp_path / "lib.out")],
                   check=True, capture_output=True)
    run(train_main, ["-q", "-t", "4", "-c", "1", p["train.k"], tmp_path / "our.model"])
    run(train_main, ["-q", "-t", "4", "-c", "1", "--model-format", "libsvm", p["train.k"], tmp_path / "ourl.model"])
    run(predict_main, [p["test.k"], tmp_path / "our.model", tmp_path / "our.out"])
    run(predict_main, [p["test.k"], tmp_path / "lib.model", tmp_path / "ours_of_lib.out"])
    subprocess.run([LIBSVM_PREDICT, str(p["test.k"]), str(tmp_path / "ourl.model"), str(tmp_path / "lib_of_ours.out")],
                   check=True, capture_output=True)
    lib = np.loadtxt(tmp_path / "lib.out")
    ours = np.loadtxt(tmp_path / "our.out")
    assert np.mean(lib == ours) >= 0.99
    assert np.array_equal(np.loadtxt(tmp_path / "ours_of_lib.out"), lib)
    assert np.array_equal(np.loadtxt(tmp_path / "lib_of_ours.out"), ours)


def header_value(path, key):
    for line in open(path):
        if line.startswith(key + " "):
            return line.split()[1:]
    return None


@needs(LIBSVM_TRAIN, package="libsvm-tools")
@pytest.mark.parametrize("line", ["-t 4", "-s 0 -t 4 -c 2 -w1 2", "-s 3 -t 4 -p 0.2", "-s 2 -t 4 -n 0.3",
                                  "-s 1 -t 4 -n 0.5", "-s 4 -t 4 -n 0.5"])
def test_libsvm_lines_train_libsvms_model(heart, tmp_path, line):
    """LIBSVM's own -t 4 lines (C-SVC, weights, epsilon-SVR, one-class, nu-SVC,
    nu-SVR): the same rho and support vectors."""
    train_k = heart["paths"]["train.k"]
    subprocess.run([LIBSVM_TRAIN, *line.split(), str(train_k), str(tmp_path / "lib.model")], check=True,
                   capture_output=True)
    run(train_main, ["-q", *line.split(), "--model-format", "libsvm", train_k, tmp_path / "our.model"])
    for key in ("svm_type", "kernel_type", "total_sv", "nr_sv"):
        assert header_value(tmp_path / "our.model", key) == header_value(tmp_path / "lib.model", key), key
    ours, theirs = (float(header_value(tmp_path / m, "rho")[0]) for m in ("our.model", "lib.model"))
    assert abs(ours - theirs) <= 1e-3 * max(1.0, abs(theirs))


def test_probability_estimates(heart, tmp_path):
    """-b 1 with -t 4: Platt's sigmoids from internal folds of the kernel rows, printed by svm-predict -b 1."""
    run(train_main, ["-q", "-b", "1", "-t", "4", heart["paths"]["train.k"], tmp_path / "m"])
    run(predict_main, ["-b", "1", heart["paths"]["test.k"], tmp_path / "m", tmp_path / "o"])
    lines = (tmp_path / "o").read_text().splitlines()
    assert lines[0] == "labels 1 -1" and len(lines) == 271
    p = np.array([[float(v) for v in ln.split()[1:]] for ln in lines[1:]])
    assert np.allclose(p.sum(1), 1.0) and 0.5 < float(np.mean((p[:, 0] > 0.5) == (heart["y"] == 1))) < 1.0


# ------------------------------------------------ the reader's base 0 against its twin

_TOKEN = st.sampled_from(["1", "-1", ".5", "abc", "0:1", "0:0", "1:1", "2:0.5", "3:-1e-3", "-1:2", "00:3",
                          "5:", "1:2:3", "qid:1", "4:1e400", "2147483647:1", "2147483648:1", "0:1#x", "#",
                          "1:0.12345678901234567", "\t"])


@settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(_TOKEN, max_size=6).map(" ".join), max_size=10), st.sampled_from([None, (64, 3)]))
def test_index_base_zero_matches_the_naive_twin(lines, chunking):
    data = "\n".join(lines).encode()
    kw = {} if chunking is None else dict(chunk_bytes=chunking[0], chunk_rows=chunking[1])
    try:
        ref = naive_parse(data, base=0)
    except NaiveError as e:
        with pytest.raises(InputFormatError) as ei:
            parse_bytes(data, index_base=0, **kw)
        assert ei.value.line == e.line
    else:
        c = parse_bytes(data, index_base=0, **kw)
        for got, want in zip((c.labels, c.indptr, c.indices, c.values, c.qid), ref):
            assert np.array_equal(got, want) and got.dtype == want.dtype
