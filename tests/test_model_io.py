"""svmtrain model files: exact round trips, clear errors, atomic writes."""
import os

import numpy as np
import pytest

from svmtrain.errors import ModelFormatError
from svmtrain.io import model_io
from svmtrain.io.model_io import load_model, save_model
from svmtrain.models.linear import LinearModel


def _model(n_features=5, labels=(1.0, -1.0), bias=-1.0, seed=0):
    rng = np.random.default_rng(seed)
    m = 1 if len(labels) <= 2 else len(labels)
    rows = n_features + (1 if bias >= 0 else 0)
    W = rng.normal(size=(rows, m)) * 10.0 ** rng.integers(-300, 300, size=(rows, m))
    return LinearModel(labels=np.array(labels), W=W, n_features=n_features, bias=bias,
                       b=rng.normal(size=m), solver="pegasos",
                       header=[("solver", "pegasos"), ("lam", 1e-4), ("objective", [0.1 + 0.2])])


@pytest.mark.parametrize("labels,bias", [((1.0, -1.0), -1.0), ((2.0, 0.5, -7.0), 1.0), ((3.0,), 0.25)])
def test_round_trip_is_bit_exact(tmp_path, labels, bias):
    m = _model(labels=labels, bias=bias)
    save_model(m, tmp_path / "m")
    r = load_model(tmp_path / "m")
    assert r.W.tobytes() == m.W.tobytes()
    assert r.b.tobytes() == m.b.tobytes()
    assert r.labels.tolist() == list(labels)
    assert (r.n_features, r.bias, r.solver) == (m.n_features, bias, "pegasos")
    assert dict(r.header)["objective"] == repr(0.1 + 0.2)


def test_first_line_names_format_and_version(tmp_path):
    save_model(_model(), tmp_path / "m")
    assert (tmp_path / "m").read_text().splitlines()[0] == "svmtrain-model 1"


def _damage(tmp_path, edit):
    save_model(_model(), tmp_path / "m")
    text = (tmp_path / "m").read_text()
    (tmp_path / "m").write_text(edit(text))
    with pytest.raises(ModelFormatError) as e:
        load_model(tmp_path / "m")
    return str(e.value)


def test_truncated_anywhere_is_rejected(tmp_path):
    save_model(_model(), tmp_path / "m")
    full = (tmp_path / "m").read_bytes()
    for cut in range(1, len(full) - 1, 7):
        (tmp_path / "t").write_bytes(full[:cut])
        with pytest.raises(ModelFormatError) as e:
            load_model(tmp_path / "t")
        assert str(e.value).startswith(str(tmp_path / "t"))


def test_future_version_is_rejected(tmp_path):
    msg = _damage(tmp_path, lambda t: t.replace("svmtrain-model 1", "svmtrain-model 2", 1))
    assert ":1:" in msg and "newer" in msg


def test_unknown_key_names_its_line(tmp_path):
    msg = _damage(tmp_path, lambda t: t.replace("lam ", "lamda ", 1))
    assert msg.endswith(":4: unknown header key 'lamda'")
    msg = _damage(tmp_path, lambda t: t.replace("kind linear", "kind quantum", 1))
    assert msg.endswith(":2: unknown model kind 'quantum'")


def test_bad_weight_is_rejected(tmp_path):
    msg = _damage(tmp_path, lambda t: t.replace("\nend", "x\nend"))
    assert "bad number" in msg or "weights" in msg


def test_missing_row_names_the_line(tmp_path):
    def drop_row(t):
        lines = t.splitlines(keepends=True)
        i = lines.index("dense W 5 1\n")
        return "".join(lines[:i + 1] + lines[i + 2:])
    msg = _damage(tmp_path, drop_row)
    assert "truncated model: section W has 4 of 5 rows" in msg


def test_not_a_model(tmp_path):
    (tmp_path / "m").write_text("+1 1:0.5\n")
    with pytest.raises(ModelFormatError, match="not a model file in svmtrain, LIBLINEAR, LIBSVM or SVMlight format"):
        load_model(tmp_path / "m")
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ModelFormatError):
        load_model(tmp_path / "bin")


def test_failed_write_keeps_old_model_and_leaves_no_temp(tmp_path, monkeypatch):
    save_model(_model(seed=1), tmp_path / "m")
    before = (tmp_path / "m").read_bytes()

    class Boom(Exception):
        pass

    def explode(*a, **k):
        raise Boom()
    monkeypatch.setattr(model_io, "repr", explode, raising=False)
    with pytest.raises(Boom):
        save_model(_model(seed=2), tmp_path / "m")
    assert (tmp_path / "m").read_bytes() == before
    assert os.listdir(tmp_path) == ["m"]


class SparseKind:
    """A model kind with a sparse section, to exercise the csr layout."""
    KIND = "sparse-test"
    FIELDS = ("n_rows",)
    header = []

    def __init__(self, rows):
        self.rows = rows

    def file_fields(self):
        return [("n_rows", self.rows.n_rows)]

    def file_sections(self):
        return [("SV", self.rows), ("coef", np.arange(self.rows.n_rows * 2.0).reshape(-1, 2))]

    @classmethod
    def from_file(cls, fields, sections, header, path):
        assert sections["coef"].shape == (fields.int("n_rows"), 2)
        return cls(sections["SV"])


def test_sparse_section_round_trip(tmp_path, monkeypatch):
    from svmtrain.data.dataset import Chunk
    monkeypatch.setitem(model_io.KINDS, "sparse-test", f"{__name__}:SparseKind")
    rows = Chunk(labels=np.zeros(3), indptr=np.array([0, 2, 2, 5]), indices=np.array([0, 7, 1, 2, 2**31 - 3], np.int32),
                 values=np.array([0.1, -2e-300, 3.0, 0.0, 1e300]), qid=np.zeros(3, np.int64))
    save_model(SparseKind(rows), tmp_path / "m")
    text = (tmp_path / "m").read_text()
    assert "csr SV 3\n1:0.1 8:-2e-300\n\n2:3.0 3:0.0 2147483646:1e+300\n" in text
    back = load_model(tmp_path / "m").rows
    assert back.indptr.tolist() == [0, 2, 2, 5]
    assert back.indices.tolist() == rows.indices.tolist()
    assert back.values.tobytes() == rows.values.tobytes()


def test_dense_text_is_c_printf_17g_with_python_for_the_rest():
    from svmtrain.io.model_io import dense_text
    rng = np.random.default_rng(0)
    a = rng.normal(size=(300, 7)) * 10.0 ** rng.integers(-8, 8, size=(300, 7))
    a[0, 0], a[5, 3], a[7, 6], a[9, 1] = 1e-12, -2.5e-300, 0.0, 3e19      # outside the numba fast path
    want = "".join(" ".join(("%.17g" % v) if 1e-11 < abs(v) < 1e19 or v == 0 else repr(float(v)) for v in row)
                   + "\n" for row in a)
    assert dense_text(a) == want
    assert np.array_equal(np.array([[float(v) for v in line.split()] for line in want.splitlines()]), a)


def test_large_weight_sections_round_trip_exactly(tmp_path, monkeypatch):
    monkeypatch.setattr(model_io, "FAST_DENSE_VALUES", 100)          # the fast writer for this small model
    rng = np.random.default_rng(1)
    model = LinearModel(labels=np.array([1.0, 2.0, 3.0]), W=rng.normal(size=(400, 3)) / 7.0, n_features=400,
                        bias=-1.0, b=np.zeros(3), solver="dcd")
    save_model(model, tmp_path / "m")
    assert ("%.17g" % model.W[0, 0]) in (tmp_path / "m").read_text()
    np.testing.assert_array_equal(load_model(tmp_path / "m").W, model.W)
