"""Tests of the LIBSVM/SVMlight reader (svmtrain/io/reader.py and its numba
kernel), with tests/naive_reader.py as the plain-Python reference."""
import bz2
import gzip
import io
import lzma
import struct
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svmtrain.data.dataset import Chunk
from svmtrain.errors import InputFormatError
from svmtrain.io import _reader_kernels as K
from svmtrain.io.reader import (iter_chunks, open_source, parse_bytes,
                                read_libsvm)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import bundled  # noqa: E402
from naive_reader import NaiveError, naive_parse  # noqa: E402

HYP = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def arrays(c):
    return c.labels, c.indptr, c.indices, c.values, c.qid


def bits(a):
    return np.asarray(a, np.float64).view(np.int64)


def assert_same(c, ref):
    """Chunk c equals the 5-tuple ref exactly (floats bit for bit)."""
    labels, indptr, indices, values, qid = ref
    assert c.labels.dtype == np.float64 and c.indptr.dtype == np.int64
    assert c.indices.dtype == np.int32 and c.values.dtype == np.float64
    assert c.qid.dtype == np.int64
    np.testing.assert_array_equal(bits(c.labels), bits(labels))
    np.testing.assert_array_equal(c.indptr, indptr)
    np.testing.assert_array_equal(c.indices, indices)
    np.testing.assert_array_equal(bits(c.values), bits(values))
    np.testing.assert_array_equal(c.qid, qid)


def expect(labels, rows, qid=None):
    """Expected arrays from labels and rows given as lists of (idx0, value)."""
    indptr = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
    indices = np.array([i for r in rows for i, _ in r], np.int32)
    values = np.array([v for r in rows for _, v in r], np.float64)
    qid = np.zeros(len(labels), np.int64) if qid is None else np.array(qid, np.int64)
    return np.array(labels, np.float64), indptr, indices, values, qid


def write(tmp_path, data, name="data.svm"):
    p = tmp_path / name
    p.write_bytes(data)
    return p


# --------------------------------------------------------------- accepted input

def test_basic(tmp_path):
    p = write(tmp_path, b"+1 1:0.5 3:2\n-1 2:1\n")
    c = read_libsvm(p)
    assert isinstance(c, Chunk)
    assert_same(c, expect([1, -1], [[(0, 0.5), (2, 2.0)], [(1, 1.0)]]))
    assert c.first_line == 1
    assert (c.n_rows, c.nnz, c.n_features) == (2, 3, 3)


def test_comments_whole_line_and_trailing():
    c = parse_bytes(b"# header comment\n1 1:1 # trailing: 5:5\n  # indented\n2 2:2#tight\n3 # only\n")
    assert_same(c, expect([1, 2, 3], [[(0, 1.0)], [(1, 2.0)], []]))
    assert c.first_line == 2


def test_qid():
    c = parse_bytes(b"3 qid:1 1:1 2:2\n2 qid:1 1:0.5\n1 qid:27 3:1\n0 1:1\n")
    assert_same(c, expect([3, 2, 1, 0], [[(0, 1.0), (1, 2.0)], [(0, 0.5)], [(2, 1.0)], [(0, 1.0)]],
                          qid=[1, 1, 27, 0]))


def test_label_forms():
    c = parse_bytes(b"+1\n-1\n1.0\n0\n2\n1e0\n.5\n-.25\n1E+1\n7.\n")
    assert_same(c, expect([1, -1, 1, 0, 2, 1, 0.5, -0.25, 10, 7], [[]] * 10))


def test_value_forms():
    c = parse_bytes(b"1 1:1e-3 2:2.5E+2 3:.5 4:-.5 5:+3 6:-0 7:1.5e300 8:4.9e-324 9:0.1\n")
    want = [1e-3, 250.0, 0.5, -0.5, 3.0, -0.0, 1.5e300, 4.9e-324, 0.1]
    assert_same(c, expect([1], [list(enumerate(want))]))
    assert np.signbit(c.values[5])


def test_crlf_line_endings():
    c = parse_bytes(b"1 1:1\r\n-1 2:2\r\n\r\n# c\r\n3 3:3\r\n")
    assert_same(c, expect([1, -1, 3], [[(0, 1.0)], [(1, 2.0)], [(2, 3.0)]]))


def test_trailing_spaces_and_tabs():
    c = parse_bytes(b"1 1:1   \t\n2 2:2\t \n3\t\n")
    assert_same(c, expect([1, 2, 3], [[(0, 1.0)], [(1, 2.0)], []]))


def test_tabs_as_separators():
    c = parse_bytes(b"1\t1:1\t\t2:2\n\t-1 \t 3:3\n")
    assert_same(c, expect([1, -1], [[(0, 1.0), (1, 2.0)], [(2, 3.0)]]))


def test_blank_and_whitespace_lines_skipped():
    c = parse_bytes(b"\n1 1:1\n\n   \n\t\n \r\n2 2:2\n\n")
    assert_same(c, expect([1, 2], [[(0, 1.0)], [(1, 2.0)]]))
    assert c.first_line == 2


def test_unsorted_indices_are_sorted():
    c = parse_bytes(b"1 5:5 1:1 3:3\n2 9:9 2:2\n")
    assert_same(c, expect([1, 2], [[(0, 1.0), (2, 3.0), (4, 5.0)], [(1, 2.0), (8, 9.0)]]))


def test_unsorted_row_with_slow_path_values():
    # values needing the exact (slow) conversion must follow their index
    c = parse_bytes(b"1 3:0.30000000000000004441 1:1e-320 2:2\n"
                    b"1.00000000000000000001 2:7 1:123456789012345678901\n")
    assert_same(c, expect([1, 1.0], [[(0, 1e-320), (1, 2.0), (2, 0.30000000000000004)],
                                     [(0, 123456789012345678901.0), (1, 7.0)]]))


def test_explicit_zeros_kept():
    c = parse_bytes(b"1 1:0 2:0.0 3:1 4:-0.0\n")
    assert_same(c, expect([1], [[(0, 0.0), (1, 0.0), (2, 1.0), (3, -0.0)]]))
    assert c.nnz == 4


def test_last_line_without_newline(tmp_path):
    p = write(tmp_path, b"1 1:1\n2 2:2")
    assert_same(read_libsvm(p), expect([1, 2], [[(0, 1.0)], [(1, 2.0)]]))
    assert_same(parse_bytes(b"1 1:1\n2 2:2 # c"), expect([1, 2], [[(0, 1.0)], [(1, 2.0)]]))


def test_label_only_rows():
    c = parse_bytes(b"1\n-1\n")
    assert_same(c, expect([1, -1], [[], []]))


def test_utf8_byte_order_mark_ignored():
    for kw in ({}, dict(chunk_bytes=1), dict(chunk_bytes=2)):
        assert_same(parse_bytes(b"\xef\xbb\xbf1 1:1\n2", **kw), expect([1, 2], [[(0, 1.0)], []]))


def test_max_index_accepted():
    c = parse_bytes(b"1 2147483647:1 0002:2\n")
    assert_same(c, expect([1], [[(1, 2.0), (2147483646, 1.0)]]))


def test_empty_inputs(tmp_path):
    for data in (b"", b"\n\n", b"# nothing\n  \n"):
        c = read_libsvm(write(tmp_path, data))
        assert c.n_rows == 0 and c.nnz == 0
        assert list(iter_chunks(write(tmp_path, data))) == []


def test_first_line_of_chunks():
    data = b"# c\n1 1:1\n\n2 2:2\n3 3:3\n# x\n4 4:4\n"
    chunks = list(_iter_bytes(data, chunk_rows=2))
    assert [c.n_rows for c in chunks] == [2, 2]
    assert [c.first_line for c in chunks] == [2, 5]


def _iter_bytes(data, **kw):
    from svmtrain.io import reader
    return reader._iter_stream(io.BytesIO(data), None, "<bytes>", kw.get("chunk_rows"),
                               kw.get("chunk_bytes"), None, kw.get("threads"))


# --------------------------------------------------------------- rejected input

BAD_LINES = [
    (b"1 0:1", "feature index 0 is invalid: indices are 1-based"),
    (b"1 -3:1", "feature index -3 is invalid: indices are 1-based"),
    (b"1 -0:1", "feature index -0 is invalid: indices are 1-based"),
    (b"1 000:1", "feature index 0 is invalid: indices are 1-based"),
    (b"1 2:1 2:3", "duplicate feature index 2"),
    (b"1 5:1 2:3 5:2", "duplicate feature index 5"),
    (b"abc 1:1", "invalid label 'abc'"),
    (b"1x 1:1", "invalid label '1x'"),
    (b"1 1:abc", "invalid value in feature '1:abc'"),
    (b"1 1:1e", "invalid value in feature '1:1e'"),
    (b"1 1:0x10", "invalid value in feature '1:0x10'"),
    (b"nan 1:1", "label 'nan' is not a finite number"),
    (b"-inf 1:1", "label '-inf' is not a finite number"),
    (b"1 1:NaN", "value in feature '1:NaN' is not a finite number"),
    (b"1 1:infinity", "value in feature '1:infinity' is not a finite number"),
    (b"1 1:1e400", "value '1e400' is out of range (overflows to infinity)"),
    (b"-1e999 1:1", "label '-1e999' is out of range (overflows to infinity)"),
    (b"1 3:", "feature '3:' has no value"),
    (b"1 3: 4:1", "feature '3:' has no value"),
    (b"1 2147483648:1", "feature index 2147483648 is too large (max 2147483647)"),
    (b"1 99999999999999999999999:1", "feature index 99999999999999999999999 is too large"),
    (b"1 " + b"9" * 5000 + b":1", "feature index " + "9" * 30 + "... is too large"),
    (b"1:0.5 2:1", "missing label: the line starts with '1:0.5'"),
    (b"qid:3 1:1", "missing label: the line starts with 'qid:3'"),
    (b"1 abc", "invalid feature 'abc': expected index:value"),
    (b"1 1:1 7", "invalid feature '7': expected index:value"),
    (b"1 1:2:3", "invalid value in feature '1:2:3'"),
    (b"1 1.5:2", "invalid feature '1.5:2': expected index:value"),
    (b"1 :2", "invalid feature ':2': expected index:value"),
    (b"1 1:1 qid:2", "'qid:2': qid must come right after the label"),
    (b"1 qid:x 1:1", "invalid qid 'qid:x'"),
    (b"1 qid:-1 1:1", "invalid qid 'qid:-1'"),
    (b"1 1:1 \x00", "invalid feature '\\x00': expected index:value"),
]


@pytest.mark.parametrize("bad,problem", BAD_LINES, ids=[b[:30].decode("latin1") for b, _ in BAD_LINES])
def test_rejected_line_names_file_and_line(tmp_path, bad, problem):
    p = write(tmp_path, b"1 1:1\n# comment\n" + bad + b"\n-1 2:1\n")
    with pytest.raises(InputFormatError) as ei:
        read_libsvm(p)
    e = ei.value
    assert e.path == str(p) and e.line == 3
    assert e.problem.startswith(problem), e.problem
    assert str(e).startswith(f"{p}:3: ")
    assert "\n" not in str(e)
    with pytest.raises(NaiveError) as ni:
        naive_parse(p.read_bytes())
    assert ni.value.line == 3


@pytest.mark.parametrize("bad,problem", BAD_LINES, ids=[b[:30].decode("latin1") for b, _ in BAD_LINES])
def test_rejected_line_in_later_chunk(tmp_path, bad, problem):
    good = b"".join(b"%d 1:0.5 %d:1.25\n" % (i % 2, 2 + i % 7) for i in range(40))
    data = good + b"\n# comment\r\n" + good + bad + b"\n1 1:1\n"
    line = 2 * 40 + 3
    p = write(tmp_path, data)
    for kw in (dict(chunk_bytes=64, chunk_rows=3), dict(chunk_bytes=200, chunk_rows=1000)):
        got = []
        with pytest.raises(InputFormatError) as ei:
            for c in iter_chunks(p, **kw):
                got.append(c)
        assert ei.value.line == line and ei.value.path == str(p)
        assert ei.value.problem.startswith(problem)
        assert 0 < sum(c.n_rows for c in got) <= 80


def test_rejected_line_numbers_count_blank_and_comment_lines():
    data = b"\n\n# a\n\r\n1 1:1\n \t\n2 0:1\n"
    with pytest.raises(InputFormatError) as ei:
        parse_bytes(data, name="x.svm")
    assert str(ei.value) == "x.svm:7: feature index 0 is invalid: indices are 1-based"


def test_long_bad_token_is_shortened():
    with pytest.raises(InputFormatError) as ei:
        parse_bytes(b"1 " + b"z" * 500 + b"\n")
    assert len(str(ei.value)) < 120


# --------------------------------------------------------------- opening, compression, stdin

@pytest.mark.parametrize("opener,magic", [(gzip.compress, "gz"), (bz2.compress, "bz2"), (lzma.compress, "xz")])
@pytest.mark.parametrize("suffix", ["right", ".svm", ".txt", ""])
def test_compressed_detected_by_magic(tmp_path, opener, magic, suffix):
    data = b"# c\n1 1:0.5 3:2\n-1 2:1\n"
    name = "data." + magic if suffix == "right" else "data" + suffix
    p = write(tmp_path, opener(data), name)
    assert_same(read_libsvm(p), expect([1, -1], [[(0, 0.5), (2, 2.0)], [(1, 1.0)]]))
    with open_source(p) as f:
        assert f.read() == data


def test_plain_file_with_compressed_extension(tmp_path):
    p = write(tmp_path, b"1 1:1\n", "data.xz")
    assert_same(read_libsvm(p), expect([1], [[(0, 1.0)]]))


class _FakeStdin:
    def __init__(self, data):
        self.buffer = io.BytesIO(data)


@pytest.mark.parametrize("opener", [lambda d: d, gzip.compress, bz2.compress, lzma.compress])
def test_stdin(monkeypatch, opener):
    data = b"1 1:1\n-1 2:2\n"
    monkeypatch.setattr(sys, "stdin", _FakeStdin(opener(data)))
    assert_same(read_libsvm("-"), expect([1, -1], [[(0, 1.0)], [(1, 2.0)]]))


def test_stdin_name_in_messages(monkeypatch):
    monkeypatch.setattr(sys, "stdin", _FakeStdin(b"1 1:1\n\n1 0:1\n"))
    with pytest.raises(InputFormatError) as ei:
        read_libsvm("-")
    assert str(ei.value).startswith("<stdin>:3: feature index 0")


def test_real_stdin_pipe_gzip(tmp_path):
    import subprocess
    data = b"".join(b"%d 1:%d 2:0.5\n" % (i % 2, i) for i in range(1000))
    code = ("from svmtrain.io.reader import read_libsvm; c = read_libsvm('-'); "
            "print(c.n_rows, c.nnz, int(c.values.sum()))")
    out = subprocess.run([sys.executable, "-c", code], input=gzip.compress(data),
                         capture_output=True, check=True).stdout.split()
    assert out == [b"1000", b"2000", str(sum(range(1000)) + 500).encode()]


def test_stdin_tiny_inputs(monkeypatch):
    for data in (b"", b"1", b"1 1:2"):
        monkeypatch.setattr(sys, "stdin", _FakeStdin(data))
        assert read_libsvm("-").n_rows == (1 if data else 0)


@pytest.mark.parametrize("opener,name", [(gzip.compress, "t.gz"), (lzma.compress, "t.xz"),
                                         (bz2.compress, "t.bz2")])
def test_truncated_or_corrupt_compressed(tmp_path, opener, name):
    blob = opener(b"".join(b"1 %d:1\n" % (i + 1) for i in range(5000)))
    p = write(tmp_path, blob[: len(blob) // 2], name)
    with pytest.raises(InputFormatError) as ei:
        read_libsvm(p)
    assert ei.value.path == str(p) and ei.value.line is None
    assert str(ei.value).startswith(f"{p}: cannot read")
    bad = bytearray(blob)
    bad[len(bad) // 2: len(bad) // 2 + 50] = b"\x55" * 50
    p2 = write(tmp_path, bytes(bad), "corrupt-" + name)
    with pytest.raises(InputFormatError):
        read_libsvm(p2)


def test_magic_only_file(tmp_path):
    with pytest.raises(InputFormatError):
        read_libsvm(write(tmp_path, b"\x1f\x8b"))
    with pytest.raises(InputFormatError):
        read_libsvm(write(tmp_path, b"\xfd7zXZ\x00garbage"))


def test_cannot_open(tmp_path):
    with pytest.raises(InputFormatError) as ei:
        read_libsvm(tmp_path / "missing.svm")
    assert ei.value.line is None
    assert str(ei.value) == f"{tmp_path / 'missing.svm'}: cannot open: No such file or directory"
    with pytest.raises(InputFormatError) as ei:
        open_source(tmp_path)
    assert "cannot open" in str(ei.value)


def test_open_source_closes_file(tmp_path):
    p = write(tmp_path, gzip.compress(b"1 1:1\n"), "a.gz")
    f = open_source(p)
    raw = f._raw
    f.close()
    assert raw.closed and raw._f.closed


def test_progress_counts_bytes_of_the_file(tmp_path):
    data = b"".join(b"%d 1:%d 5:0.5\n" % (i % 3, i) for i in range(3000))
    for blob, name in ((data, "p.svm"), (gzip.compress(data), "p.gz"), (lzma.compress(data), "p.xz")):
        p = write(tmp_path, blob, name)
        seen = []
        n = sum(c.n_rows for c in iter_chunks(p, chunk_bytes=1000, progress=seen.append))
        assert n == 3000
        assert sum(seen) == len(blob) and min(seen) > 0
        if blob is data:
            assert len(seen) > 1


def test_line_longer_than_block():
    line = b"1 " + b" ".join(b"%d:1" % (i + 1) for i in range(2000)) + b"\n"
    chunks = list(_iter_bytes(line * 3 + b"2 1:1", chunk_bytes=100, chunk_rows=2))
    assert all(1 <= c.n_rows <= 2 for c in chunks)
    assert sum(c.n_rows for c in chunks) == 4
    assert [n for c in chunks for n in np.diff(c.indptr)] == [2000, 2000, 2000, 1]


def test_kernel_array_growth():
    # many rows, many short features and many slow numbers in one range
    many_rows = b"1\n" * 20000
    c = parse_bytes(many_rows)
    assert c.n_rows == 20000 and c.nnz == 0
    feats = b"1 " + b" ".join(b"%d:1" % (i + 1) for i in range(30000)) + b"\n"
    c = parse_bytes(feats)
    assert c.nnz == 30000 and np.array_equal(c.indices, np.arange(30000))
    slow = b"".join(b"0.1000000000000000055511151231257827 %d:%r\n" % (i + 1, 1 / (i + 3))
                    for i in range(3000))
    assert_same(parse_bytes(slow), naive_parse(slow))


def test_kernel_refuses_range_without_final_newline():
    from svmtrain.io.reader import parse_range
    r = parse_range(bytearray(b"1 1:1"), 0, 5)
    assert r.err == K.E_INTERNAL and r.n_rows == 0


# --------------------------------------------------------------- real data

def test_a9a():
    c = read_libsvm(bundled("a9a.xz"))
    assert (c.n_rows, c.nnz, c.n_features) == (32561, 451592, 123)
    assert int((c.labels == 1).sum()) == 7841
    assert set(np.unique(c.labels)) == {-1.0, 1.0}
    assert_same(c, naive_parse(lzma.decompress(bundled("a9a.xz").read_bytes())))


def test_mushrooms():
    c = read_libsvm(bundled("mushrooms.xz"))
    assert c.n_rows == 8124
    assert set(np.unique(c.labels)) == {1.0, 2.0}
    assert_same(c, naive_parse(lzma.decompress(bundled("mushrooms.xz").read_bytes())))


def test_a9a_tiny_chunks_equal_one_chunk():
    whole = read_libsvm(bundled("a9a.xz"))
    chunks = list(iter_chunks(bundled("a9a.xz"), chunk_bytes=64, chunk_rows=3))
    assert all(1 <= c.n_rows <= 3 for c in chunks)
    assert sum(c.n_rows for c in chunks) == 32561
    assert chunks[-1].first_line == 32561 - chunks[-1].n_rows + 1
    from svmtrain.data.dataset import concat_chunks
    assert_same(concat_chunks(chunks), arrays(whole))
    mid = list(iter_chunks(bundled("a9a.xz"), chunk_bytes=5000, chunk_rows=7))
    assert all(c.n_rows <= 7 for c in mid)
    assert_same(concat_chunks(mid), arrays(whole))


def test_messy_file_tiny_chunks(tmp_path):
    lines = []
    for i in range(300):
        kind = i % 6
        if kind == 0:
            lines.append(b"# comment %d: 1:2" % i)
        elif kind == 1:
            lines.append(b"")
        elif kind == 2:
            lines.append(b"%+d qid:%d 3:%d 1:1e-3\t7:.5 \r" % (i % 3 - 1, i, i))
        elif kind == 3:
            lines.append(b" \t")
        else:
            lines.append(b"%.3f %d:-%d.25 # t" % (i / 7, i + 1, i))
    data = b"\n".join(lines)
    p = write(tmp_path, data)
    ref = naive_parse(data)
    whole = read_libsvm(p)
    assert_same(whole, ref)
    from svmtrain.data.dataset import concat_chunks
    chunks = list(iter_chunks(p, chunk_bytes=64, chunk_rows=3))
    assert all(1 <= c.n_rows <= 3 for c in chunks)
    assert_same(concat_chunks(chunks), ref)


def test_threads_split_block_same_result():
    data = lzma.decompress(bundled("a9a.xz").read_bytes())
    assert len(data) > 2 << 20   # large enough to be split over threads
    one = parse_bytes(data, threads=1)
    two = parse_bytes(data, threads=2)
    four = parse_bytes(data, threads=4)
    assert_same(two, arrays(one))
    assert_same(four, arrays(one))
    from svmtrain.data.dataset import concat_chunks
    chunks = list(_iter_bytes(data, threads=2, chunk_rows=5000))
    assert len(chunks) > 7 and all(c.n_rows <= 5000 for c in chunks)
    assert_same(concat_chunks(chunks), arrays(one))
    lines = data.split(b"\n")
    lines[30000] = b"+1 3:1 3:2"
    with pytest.raises(InputFormatError) as ei:
        parse_bytes(b"\n".join(lines), threads=2)
    assert ei.value.line == 30001


# --------------------------------------------------------------- number parsing

def _kernel_number(text):
    """(value, converted_by_the_kernel) for the number ``text`` as a value."""
    from svmtrain.io.reader import parse_range
    data = b"0 1:" + text + b"\n"
    r = parse_range(bytearray(data), 0, len(data))
    assert r.err == 0 and r.nnz == 1
    return r.out.values[0], r.n_slow == 0


_num_text = st.from_regex(
    rb"\A[+-]?(?:[0-9]{1,25}(?:\.[0-9]{0,25})?|\.[0-9]{1,25})(?:[eE][+-]?[0-9]{1,4})?\Z")


@settings(HYP, max_examples=400)
@given(_num_text)
def test_fast_path_matches_float_random_text(text):
    v, fast = _kernel_number(text)
    if fast:
        assert struct.pack("<d", v) == struct.pack("<d", float(text))
    f = float(text)
    if np.isfinite(f):
        c = parse_bytes(b"1 1:" + text + b"\n")
        assert struct.pack("<d", c.values[0]) == struct.pack("<d", f)
    else:
        with pytest.raises(InputFormatError, match="overflows to infinity"):
            parse_bytes(b"1 1:" + text + b"\n")


_fmt = st.sampled_from(["%r", "%.17g", "%.15g", "%.6f", "%.3e", "%.1e", "%.20g", "%g", "%.10f"])


@HYP
@given(st.floats(allow_nan=False, allow_infinity=False), _fmt)
def test_formatted_floats_parse_exactly(x, fmt):
    text = (fmt % x).encode()
    if not np.isfinite(float(text)):     # e.g. rounded up past the largest double
        with pytest.raises(InputFormatError, match="overflows to infinity"):
            parse_bytes(b"%s 1:%s\n" % (text, text))
        return
    c = parse_bytes(b"%s 1:%s\n" % (text, text))
    assert struct.pack("<d", c.labels[0]) == struct.pack("<d", float(text))
    assert struct.pack("<d", c.values[0]) == struct.pack("<d", float(text))


def test_fast_path_edge_cases():
    for text in [b"9007199254740991", b"9007199254740993", b"1e22", b"1e23", b"123e30",
                 b"9007199254740991e22", b"1e-22", b"3e-23", b"0.000000000000000000001",
                 b"4.9406564584124654e-324", b"2.2250738585072014e-308", b"1.7976931348623157e308",
                 b"1e-400", b"-0.0", b"000000000000000000000001", b"1.0000000000000000000000",
                 b"123456789012345678", b"1234567890123456789", b"0.1", b"0.3", b"1e0", b"5e-324",
                 b"-0", b"+0", b"-0e5", b"0.5", b"-.5e1", b"123.456e-3", b"1e37", b"12345e33"]:
        v, fast = _kernel_number(text)
        if fast:
            assert struct.pack("<d", v) == struct.pack("<d", float(text)), text
        c = parse_bytes(b"1 1:" + text + b"\n")
        assert struct.pack("<d", c.values[0]) == struct.pack("<d", float(text)), text


def test_common_numbers_take_the_fast_path():
    for text in [b"0.123456", b"1", b"-1", b"+1", b".5", b"1e-3", b"2.5E+2", b"1e23", b"-0",
                 b"123456789012345", b"0.000001", b"3.14159265358979",
                 # beyond Clinger's path: Eisel-Lemire (17-digit repr, large exponents, many leading zeros)
                 b"0.12345678901234567", b"1e300", b"9007199254740993", b"-2.2250738585072014e-308",
                 b"0.000000000000000000001234", b"1.7976931348623157e308"]:
        v, fast = _kernel_number(text)
        assert fast, text
        assert struct.pack("<d", v) == struct.pack("<d", float(text)), text
    # more than 18 significant digits, subnormal, overflowing: Python's float
    for text in [b"0.1234567890123456789", b"4.9e-324", b"1e-310", b"1e400"]:
        assert not _kernel_number(text)[1], text


# --------------------------------------------------------------- round trip and twin

_label = st.one_of(st.integers(-3, 3).map(float), st.floats(allow_nan=False, allow_infinity=False))
_value = st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                   st.floats(-1, 1, allow_nan=False),
                   st.integers(-5, 5).map(float))


@st.composite
def _matrix(draw):
    n = draw(st.integers(0, 12))
    rows = []
    for _ in range(n):
        idx = sorted(draw(st.sets(st.integers(1, 2**31 - 1), max_size=8)))
        vals = [draw(_value) for _ in idx]
        rows.append((draw(_label), draw(st.integers(0, 5)), idx, vals))
    return rows


@HYP
@given(_matrix(), st.randoms(use_true_random=False), st.sampled_from([None, (64, 3), (200, 2)]))
def test_round_trip(rows, rnd, chunking):
    lines = []
    for label, q, idx, vals in rows:
        toks = [repr(label)]
        if q:
            toks.append(f"qid:{q}")
        feats = [f"{i}:{v!r}" for i, v in zip(idx, vals)]
        if rnd.random() < 0.3:
            rnd.shuffle(feats)
        toks += feats
        sep = rnd.choice([" ", "\t", "  ", " \t"])
        line = sep.join(toks) + rnd.choice(["", " ", "\t", " # c 1:2", "\r"])
        lines.append(line)
        if rnd.random() < 0.2:
            lines.append(rnd.choice(["", "# comment", "   "]))
    data = "\n".join(lines).encode() + rnd.choice([b"", b"\n"])
    labels = [r[0] for r in rows]
    want = expect(labels, [[(i - 1, v) for i, v in zip(idx, vals)] for _, _, idx, vals in rows],
                  qid=[r[1] for r in rows])
    kw = {} if chunking is None else dict(chunk_bytes=chunking[0], chunk_rows=chunking[1])
    assert_same(parse_bytes(data, **kw), want)
    assert_same(parse_bytes(data, **kw), naive_parse(data))


_token = st.sampled_from([
    "1", "-1", "+1", ".5", "1e3", "abc", "nan", "inf", "1:1", "2:0.5", "3:-1e-3", "0:1", "-2:1",
    "5:", "1:2:3", "qid:1", "qid:x", "4:1e400", "1e999", "2147483648:1", "2147483647:1",
    "1:1#x", "#", "7", ":", "1:0x1", "9:.", "6:1e", "\t", " ", "\r", "8:infinity"])


@HYP
@given(st.lists(st.lists(_token, max_size=6).map(" ".join), max_size=12),
       st.sampled_from([None, (64, 3)]))
def test_matches_naive_twin_on_junk(lines, chunking):
    data = "\n".join(lines).encode()
    kw = {} if chunking is None else dict(chunk_bytes=chunking[0], chunk_rows=chunking[1])
    try:
        ref = naive_parse(data)
    except NaiveError as e:
        with pytest.raises(InputFormatError) as ei:
            parse_bytes(data, **kw)
        assert ei.value.line == e.line
    else:
        assert_same(parse_bytes(data, **kw), ref)


# --------------------------------------------------------------- the plain-line fast path

_PLAIN = (b"+1 1:0.708333 2:1 3:-0.320755 # a comment\n"
          b"\n"
          b"# a comment line\n"
          b"-1\t4:1e-3 9:2.5E+2\r\n"
          b"   \n"
          b"2 1:.5 10:-0 2147483647:123456789012345\n"
          b"3#label only\n"
          b"-0.25 5:1.\n")


def _plain_kernel(data):
    """(status, i, line, row, z) and the rows of parse_plain_lines on ``data``."""
    from svmtrain.io import _plain_reader_kernels as KP
    arr = np.frombuffer(data, np.uint8)
    rows, nnz = 64, 256
    labels, qid, rowline = np.zeros(rows), np.full(rows, -1, np.int64), np.zeros(rows, np.int64)
    indptr, indices, values = np.zeros(rows + 1, np.int64), np.zeros(nnz, np.int32), np.zeros(nnz)
    st_ = KP.parse_plain_lines(arr, 0, len(data), 0, 0, 0, labels, qid, rowline, indptr, indices, values)
    n, z = st_[3], st_[4]
    return st_, Chunk(labels=labels[:n], indptr=indptr[:n + 1], indices=indices[:z], values=values[:z],
                      qid=qid[:n])


def test_plain_kernel_parses_plain_lines_alone_as_the_twin():
    from svmtrain.io import _plain_reader_kernels as KP
    (status, i, line, row, z), c = _plain_kernel(_PLAIN)
    assert (status, i, line, row, z) == (K.DONE, len(_PLAIN), 8, 5, 9)
    assert_same(c, naive_parse(_PLAIN))
    assert KP.NEED_FULL not in (K.DONE, K.NEED_ROWS, K.NEED_NNZ, K.NEED_SLOW, K.NEED_SORT)


@pytest.mark.parametrize("other", [
    b"1 qid:3 1:1", b"1 2:1 1:1", b"1 1:1 1:2", b"1 1:0.1234567890123456789", b"1 1:1e23",
    b"1 1:9007199254740993", b"nan 1:1", b"1 1:inf", b"1 0:1", b"1 -1:2", b"1 5:", b"1 1:1e",
    b"1 2147483648:1", b"1 1:2:3", b"1 1:0x1", b"x", b"1 1:1e-23", b"1 01234567890:1"])
def test_plain_kernel_leaves_other_lines_to_the_full_parser(other):
    """At a line that is not plain the kernel stops at its start with nothing
    of it stored; the reader's result (or error) is then the twin's."""
    from svmtrain.io import _plain_reader_kernels as KP
    first, last = b"1 1:0.5 3:2\n# c\n", b"-1 2:1\n"
    data = first + other + b"\n" + last
    (status, i, line, row, z), _ = _plain_kernel(data)
    assert (status, i, line, row, z) == (KP.NEED_FULL, len(first), 2, 1, 2)
    try:
        ref = naive_parse(data)
    except NaiveError as e:
        with pytest.raises(InputFormatError) as ei:
            parse_bytes(data)
        assert ei.value.line == e.line == 3
        return
    assert_same(parse_bytes(data), ref)
