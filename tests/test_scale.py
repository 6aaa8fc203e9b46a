"""svm-scale: the exact formatter, LIBSVM's semantics (hand-written
expectations and a plain-Python twin, so they run without LIBSVM), range
files, errors, and byte-identity with /usr/bin/svm-scale when installed."""
import ctypes
import ctypes.util
import lzma
import os
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import ROOT, bundled, needs, shared
from svmtrain._numba._gformat_kernels import format_array
from svmtrain.cli.scale import main as scale_main
from svmtrain.errors import InputFormatError
from svmtrain.io.reader import parse_bytes
from svmtrain.preprocess.scaling import Ranges, Scaler, compute_stats, format_c

LIBSVM_SCALE = "/usr/bin/svm-scale"
needs_libsvm = needs(LIBSVM_SCALE, package="libsvm-tools")


def run(args, input=None):
    return CliRunner().invoke(scale_main, [str(a) for a in args], input=input)


# --------------------------------------------------------------- formatter

def _libc():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


LIBC = _libc()


def c_printf(x, P):
    """C's snprintf("%.*g") itself (the reference), else Python's %."""
    if LIBC is None:
        return format_c(x, P)
    b = ctypes.create_string_buffer(64)
    LIBC.snprintf(b, 64, b"%.*g", ctypes.c_int(P), ctypes.c_double(x))
    return b.value.decode()


def _doubles():
    rng = np.random.default_rng(7)
    special = [0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 1.5, 2.5, 1.125, 1e-4, 1e-5, 0.0001, 9.5, 99999.5,
               999999.5, 123456.5, 1234565.0, 9999995.0, 1e16, 1e17, 9.9999999999999999e16, 1e19,
               2.0 ** 63, 2.0 ** 64, 2.0 ** 53, 2.0 ** 53 + 2, 123456789012.0, 0.000123456789,
               5e-324, 1e-310, 2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308,
               1.0 / 3, 2.0 / 3, 0.66666666666666663, 1e-22, 1e-23, 1e-11, 1e-12, 1e22, 1e23]
    special += [10.0 ** k for k in range(-30, 31)]
    x = np.concatenate([
        np.array(special),
        rng.standard_normal(4000) * 10.0 ** rng.integers(-30, 30, 4000),
        rng.random(4000),
        np.round(rng.random(2000), 6),
        (rng.integers(0, 2 ** 20, 2000) + 0.5) / 2.0 ** rng.integers(0, 20, 2000),   # exact ties
        rng.integers(-10 ** 7, 10 ** 7, 1000).astype(np.float64),
    ])
    with np.errstate(over="ignore"):
        x = np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf), -x])
    return x[np.isfinite(x)]


@pytest.mark.parametrize("P", [6, 17, 1, 3, 16])
def test_formatter_equals_printf(P):
    """write_g is exact where it answers, and it answers on the range that
    matters (scaled values, labels); format_c (the fallback) is exact on the rest."""
    x = _doubles()
    buf, ends = format_array(x, P)
    text = bytes(buf)
    start = 0
    answered = 0
    for v, e in zip(x.tolist(), ends.tolist()):
        ref = c_printf(v, P)
        assert format_c(v, P) == ref, v
        if e < 0:
            a = abs(v)
            assert not (1.000001 * 10.0 ** (P - 28) <= a < 1e19), f"fast path refused {v!r}"
            continue
        assert text[start:e].decode() == ref, (v, P)
        start = e
        answered += 1
    assert answered > 0.8 * len(x)


def test_formatter_zero_and_nan():
    buf, ends = format_array(np.array([0.0, -0.0, np.inf, np.nan]), 6)
    assert bytes(buf) == b"0-0" and ends[2] == ends[3] == -1
    assert format_c(float("nan"), 6) == "nan" and format_c(-float("nan"), 6) == "-nan"
    assert format_c(float("-inf"), 17) == "-inf"


# ------------------------------------------------------ a plain-Python twin

def naive_scale(text, lower=-1.0, upper=1.0, y=None, restore=None):
    """LIBSVM svm-scale's passes transcribed row by row (the twin, slow):
    (output text, range-file text or None, warned feature indices)."""
    rows = []
    for line in text.splitlines():
        tok = line.split()
        rows.append((float(tok[0]), [(int(t.split(":")[0]), float(t.split(":")[1])) for t in tok[1:]]))
    max_index = max([i for _, f in rows for i, _ in f] + [0])
    if restore is not None:
        max_index = max([max_index] + [i for i, _, _ in restore["features"]])
    big = sys.float_info.max
    fmin = [big] * (max_index + 1)
    fmax = [-big] * (max_index + 1)
    y_min, y_max = big, -big
    for label, feats in rows:
        y_max = y_max if y_max > label else label
        y_min = y_min if y_min < label else label
        nxt = 1
        for i, v in feats + [(max_index + 1, None)]:
            for k in range(nxt, i):
                fmax[k] = fmax[k] if fmax[k] > 0 else 0.0
                fmin[k] = fmin[k] if fmin[k] < 0 else 0.0
            if v is not None:
                fmax[i] = fmax[i] if fmax[i] > v else v
                fmin[i] = fmin[i] if fmin[i] < v else v
            nxt = i + 1
    warned = []
    if restore is not None:
        lower, upper = restore["x"]
        if restore.get("y"):
            y = restore["y"][:2]
            y_min, y_max = restore["y"][2:]
        nxt = 1
        for i, lo, hi in restore["features"] + [(max_index + 1, None, None)]:
            for k in range(nxt, i):
                if fmin[k] != fmax[k]:
                    warned.append(k)
                    fmin[k] = fmax[k] = 0.0
            if lo is not None:
                fmin[i], fmax[i] = lo, hi
            nxt = i + 1
    saved = None
    if restore is None:
        g = lambda v: "%.17g" % v  # noqa: E731
        saved = ""
        if y is not None:
            saved += f"y\n{g(y[0])} {g(y[1])}\n{g(y_min)} {g(y_max)}\n"
        saved += f"x\n{g(lower)} {g(upper)}\n"
        saved += "".join(f"{i} {g(fmin[i])} {g(fmax[i])}\n" for i in range(1, max_index + 1) if fmin[i] != fmax[i])

    def sc(v, lo, hi, a, b):
        if v == lo:
            return a
        if v == hi:
            return b
        return a + (b - a) * (v - lo) / (hi - lo)

    out = []
    for label, feats in rows:
        if y is not None:
            label = sc(label, y_min, y_max, y[0], y[1])
        s = "%.17g " % label
        vals = dict(feats)
        for i in range(1, max_index + 1):
            if fmin[i] == fmax[i]:
                continue
            v = sc(vals.get(i, 0.0), fmin[i], fmax[i], lower, upper)
            if v != 0:
                s += "%d:%g " % (i, v)
        out.append(s + "\n")
    return "".join(out), saved, sorted(set(k for k in warned if fmin[k] == fmax[k]))


def _ours(text, lower=-1.0, upper=1.0, y=None, ranges=None, chunk_rows=None):
    """svmtrain.preprocess.scaling over the text: (output, range-file text or None, warned)."""
    import io
    data = text.encode()
    stats = compute_stats([parse_bytes(data)])
    if ranges is not None:
        scaler, warned = Scaler.restore(stats, ranges, y)
        saved = None
    else:
        scaler, warned = Scaler.from_stats(stats, lower, upper, y), []
        saved = Ranges.from_stats(stats, lower, upper, y).to_bytes().decode()
    c = parse_bytes(data)
    step = chunk_rows or max(c.n_rows, 1)
    from svmtrain.data.dataset import Chunk
    chunks = [Chunk(c.labels[a:a + step], c.indptr[a:a + step + 1] - c.indptr[a],
                    c.indices[c.indptr[a]:c.indptr[min(a + step, c.n_rows)]],
                    c.values[c.indptr[a]:c.indptr[min(a + step, c.n_rows)]], c.qid[a:a + step])
              for a in range(0, c.n_rows, step)]
    out = io.BytesIO()
    scaler.write(chunks, out)
    return out.getvalue().decode(), saved, list(warned)


def _random_text(seed, n=60, d=12):
    rng = np.random.default_rng(seed)
    lines = []
    choices = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-30, -3e25, 0.1, 7.0])
    for _ in range(n):
        label = rng.choice([1.0, -1.0, 2.0, 0.25, -0.0, 3e-12])
        keep = np.flatnonzero(rng.random(d) < rng.choice([0.1, 0.5, 0.9]))
        vals = np.where(rng.random(len(keep)) < 0.5, rng.choice(choices, len(keep)),
                        np.round(rng.standard_normal(len(keep)) * 10, rng.integers(0, 8)))
        lines.append(repr(float(label)) + "".join(f" {j + 1}:{float(v)!r}" for j, v in zip(keep, vals)))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("flags", [dict(), dict(lower=0.0, upper=1.0), dict(lower=-2.0, upper=5.0, y=(0.0, 1.0))])
def test_matches_python_twin(seed, flags):
    text = _random_text(seed)
    got, saved, _ = _ours(text, chunk_rows=[None, 1, 7][seed % 3], **flags)
    want, want_saved, _ = naive_scale(text, **flags)
    assert got == want
    assert saved == want_saved
    # and -r with that range file gives the same output again
    again, _, warned = _ours(text, ranges=Ranges.parse(saved.encode()), y=flags.get("y"))
    assert again == want and warned == []


def test_restore_matches_twin_with_odd_range_files():
    """Lines out of order, repeated, missing and beyond the data: LIBSVM's
    sequential semantics."""
    text = _random_text(3)
    for feats in ([(2, 0.0, 10.0), (1, 0.0, 4.0), (5, 0.0, 1.0)], [(1, -1.0, 4.0), (3, 0.0, 1.0), (3, 0.0, 2.0)],
                  [(4, -3.0, 3.0)], [(15, 1.0, 2.0), (20, -1.0, 1.0)], []):
        r = Ranges(0.0, 1.0, np.array([f[0] for f in feats], np.int64), np.array([f[1] for f in feats]),
                   np.array([f[2] for f in feats]))
        got, _, warned = _ours(text, ranges=r)
        want, _, want_warned = naive_scale(text, restore={"x": (0.0, 1.0), "features": feats})
        assert got == want
        assert want_warned == list(warned)


# ------------------------------------------------ hand-written expectations

TINY = "1 1:2 3:-4\n-1 1:4 2:0.5\n2 2:1 3:-0\n"


def test_tiny_default(tmp_path):
    (tmp_path / "d").write_text(TINY)
    r = run(["-s", tmp_path / "range", tmp_path / "d"])
    assert r.exit_code == 0, r.output
    assert r.stdout_bytes == b"1 2:-1 3:-1 \n-1 1:1 3:1 \n2 1:-1 2:1 3:1 \n"
    assert (tmp_path / "range").read_bytes() == b"x\n-1 1\n1 0 4\n2 0 1\n3 -4 -0\n"
    assert "original #nonzeros 6 > new #nonzeros 7" in r.stderr
    assert len(r.stderr.splitlines()) == 1


def test_tiny_y_scaling_and_l0(tmp_path):
    (tmp_path / "d").write_text(TINY)
    r = run(["-l", "0", "-u", "1", "-y", "0", "1", "-s", tmp_path / "range", tmp_path / "d"])
    assert r.exit_code == 0, r.output
    assert r.stdout_bytes == b"0.66666666666666663 1:0.5 \n0 1:1 2:0.5 3:1 \n1 2:1 3:1 \n"
    assert (tmp_path / "range").read_bytes() == b"y\n0 1\n-1 2\nx\n0 1\n1 0 4\n2 0 1\n3 -4 -0\n"
    assert r.stderr == ""


def test_tiny_restore_fewer_and_more_features(tmp_path):
    (tmp_path / "d").write_text(TINY)
    (tmp_path / "few").write_text("x\n0 1\n1 0 4\n")
    r = run(["-r", tmp_path / "few", tmp_path / "d"])
    assert r.exit_code == 0
    assert r.stdout_bytes == b"1 1:0.5 \n-1 1:1 \n2 \n"
    assert r.stderr.count("\n") == 1 and "2 feature(s)" in r.stderr and "index 2, 3" in r.stderr
    (tmp_path / "more").write_text("x\n-1 1\n1 0 4\n5 0 2\n")
    r = run(["-r", tmp_path / "more", tmp_path / "d"])
    assert r.stdout_bytes == b"1 5:-1 \n-1 1:1 5:-1 \n2 1:-1 5:-1 \n"


def test_restore_y_section_wins_over_command_line(tmp_path):
    (tmp_path / "d").write_text(TINY)
    (tmp_path / "r").write_text("y\n0 10\n-1 2\nx\n0 1\n1 0 4\n")
    r = run(["-y", "-5", "5", "-r", tmp_path / "r", tmp_path / "d"])
    first = ("%.17g" % (0.0 + (10.0 - 0.0) * (1.0 - -1.0) / (2.0 - -1.0))).encode()
    assert r.stdout_bytes == first + b" 1:0.5 \n0 1:1 \n10 \n"


def test_stdin_and_compressed(tmp_path):
    (tmp_path / "d.xz").write_bytes(lzma.compress(TINY.encode()))
    want = b"1 2:-1 3:-1 \n-1 1:1 3:1 \n2 1:-1 2:1 3:1 \n"
    assert run([tmp_path / "d.xz"]).stdout_bytes == want
    r = run(["-"], input=lzma.compress(TINY.encode()))
    assert r.exit_code == 0 and r.stdout_bytes == want


def test_qid_is_kept(tmp_path):
    """LIBSVM's svm-scale drops every feature of a line with qid:; ours keeps the qid."""
    (tmp_path / "d").write_text("1 qid:1 1:2 3:-4\n-1 qid:1 1:4 2:0.5\n2 qid:3 2:1 3:-0\n")
    r = run([tmp_path / "d"])
    assert r.stdout_bytes == b"1 qid:1 2:-1 3:-1 \n-1 qid:1 1:1 3:1 \n2 qid:3 1:-1 2:1 3:1 \n"


def test_chunk_size_does_not_change_output(tmp_path):
    (tmp_path / "d").write_text(_random_text(11, n=200))
    a = run(["--chunk-size", "1", tmp_path / "d"]).stdout_bytes
    b = run(["--chunk-size", "13", tmp_path / "d"]).stdout_bytes
    c = run([tmp_path / "d"]).stdout_bytes
    assert a == b == c and len(a) > 1000


# -------------------------------------------------------------- range files

def test_range_file_round_trip():
    r = Ranges(-1.0, 1.0, np.array([1, 3, 7]), np.array([0.1, -0.0, 1e-300]), np.array([2.5, 1e30, 1.0]),
               y=(0.0, 1.0, -1.0, 0.3))
    text = r.to_bytes()
    assert text == (b"y\n0 1\n-1 0.29999999999999999\nx\n-1 1\n1 0.10000000000000001 2.5\n3 -0 1e+30\n"
                    b"7 1e-300 1\n")
    back = Ranges.parse(text)
    assert back.to_bytes() == text
    assert np.array_equal(back.index, r.index) and back.y == r.y
    assert np.signbit(back.feature_min[1])
    # CRLF and extra blanks are tolerated
    assert Ranges.parse(b"x\r\n -1  1 \r\n1 0 4\r\n\n").to_bytes() == b"x\n-1 1\n1 0 4\n"


@pytest.mark.parametrize("content, line, needle", [
    (b"x\n-1 1\n1 0 4\n2 0 zz\n3 0 2\n", 4, "INDEX MIN MAX"),
    (b"x\n-1 1\n1 0 4\n2 0\n", 4, "INDEX MIN MAX"),
    (b"x\n0\n", 2, "lower upper"),
    (b"x\n", 2, "lower upper"),
    (b"", 1, "first line"),
    (b"q\n-1 1\n", 1, "first line"),
    (b"y\n0 1\nx\n-1 1\n", 3, "y_min y_max"),
    (b"x\n-1 1\n0 0 4\n", 3, "index out of range"),
    (b"x\n-1 1\n1 0 1e999\n", 3, "out of range"),
    (b"x\n-1 1\n1 0 1_0\n", 3, "INDEX MIN MAX"),
])
def test_bad_range_files(tmp_path, content, line, needle):
    (tmp_path / "d").write_text(TINY)
    (tmp_path / "r").write_bytes(content)
    with pytest.raises(InputFormatError) as e:
        Ranges.parse(content, "r")
    assert e.value.line == line and needle in str(e.value)
    res = run(["-r", tmp_path / "r", tmp_path / "d"])
    assert res.exit_code == 2 and res.stdout_bytes == b""
    assert res.stderr.startswith(f"svm-scale: {tmp_path / 'r'}:{line}: ") and res.stderr.count("\n") == 1


def test_out_of_order_range_file_warns_once(tmp_path):
    (tmp_path / "d").write_text("1 1:1 2:5 3:1\n2 1:2 3:7\n")
    (tmp_path / "r").write_text("x\n0 1\n2 0 10\n1 0 4\n5 0 1\n")
    r = run(["-r", tmp_path / "r", tmp_path / "d"])
    assert r.exit_code == 0
    assert r.stdout_bytes == b"1 1:0.25 \n2 1:0.5 \n"      # LIBSVM 3.24's bytes
    assert "not in increasing index order" in r.stderr and "index 2, 3)" in r.stderr


# ----------------------------------------------------------- errors, options

def test_bad_data_line(tmp_path):
    (tmp_path / "d").write_text("1 1:2\n-1 1:4 x:3\n")
    r = run([tmp_path / "d"])
    assert r.exit_code == 2 and r.stderr.startswith(f"svm-scale: {tmp_path / 'd'}:2: ")
    assert "Traceback" not in r.output and r.stderr.count("\n") == 1
    r = run(["-"], input=b"1 1:2\n\n-1 1:nope\n")
    assert r.exit_code == 2 and r.stderr.startswith("svm-scale: <stdin>:3: ")
    r = run([tmp_path / "missing"])
    assert r.exit_code == 2 and "cannot open" in r.stderr


@pytest.mark.parametrize("args, needle", [
    (["-l", "1", "-u", "0"], "inconsistent lower/upper"),
    (["-y", "1", "1"], "inconsistent lower/upper"),
    (["-s", "a", "-r", "b"], "cannot use -r and -s"),
])
def test_bad_options(tmp_path, args, needle):
    (tmp_path / "d").write_text(TINY)
    r = run(args + [tmp_path / "d"])
    assert r.exit_code == 2 and needle in r.stderr


def test_help_and_version():
    r = run([])
    assert "Usage:" in r.output and "-s SAVE_FILENAME" in r.output
    assert run(["--help"]).exit_code == 0
    r = run(["--version"])
    assert r.exit_code == 0 and r.output.startswith("svm-scale (svmtrain) ")


def test_console_script_declared():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'svm-scale = "svmtrain.cli.client:svm_scale"' in text      # the thin client of the start-up server
    from svmtrain.cli.client import COMMANDS
    assert COMMANDS["svm-scale"] == "svmtrain.cli.scale:console_main"


def test_console_main_flushes_exit_codes_and_closed_pipe(tmp_path):
    code = "from svmtrain.cli.scale import console_main; console_main()"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    (tmp_path / "d").write_text(TINY)
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "d")], capture_output=True, env=env)
    assert r.returncode == 0 and r.stdout == b"1 2:-1 3:-1 \n-1 1:1 3:1 \n2 1:-1 2:1 3:1 \n"
    (tmp_path / "bad").write_text("1 1:2\n1 2:3 2:4\n")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "bad")], capture_output=True, env=env)
    assert r.returncode == 2 and r.stderr.decode().startswith(f"svm-scale: {tmp_path / 'bad'}:2: ")
    assert r.stderr.count(b"\n") == 1 and r.stdout == b""
    # the reader goes away (svm-scale data | head -c 10): quiet, exit 1
    p = subprocess.Popen([sys.executable, "-c", code, str(bundled("a9a.xz"))], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    assert len(p.stdout.read(10)) == 10
    p.stdout.close()
    err = p.stderr.read()
    assert p.wait() == 1 and err == b""


# ----------------------------------------------- LIBSVM byte-identity (cmp)

def _plain(path, tmp_path):
    if str(path).endswith(".xz"):
        out = tmp_path / (os.path.basename(str(path))[:-3])
        out.write_bytes(lzma.decompress(path.read_bytes()))
        return out
    return path


def _both(args, data, tmp_path):
    ours = subprocess.run([sys.executable, "-m", "svmtrain.cli.scale", *map(str, args), str(data)],
                          capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    theirs = subprocess.run([LIBSVM_SCALE, *map(str, args), str(data)], capture_output=True)
    assert ours.returncode == 0, ours.stderr
    return ours.stdout, theirs.stdout


def _scaled_by_ours(args, data):
    """svm-scale's bytes on standard output, in process (test_cmp_identical_train_range_on_test
    compares a whole ``python -m svmtrain.cli.scale`` process's)."""
    r = CliRunner().invoke(scale_main, [*map(str, args), str(data)])
    assert r.exit_code == 0, r.output
    return r.stdout_bytes


def _theirs(args, data):
    return subprocess.run([LIBSVM_SCALE, *map(str, args), str(data)], capture_output=True).stdout


CASES = [[], ["-l", "0", "-u", "1"], ["-l", "-1", "-u", "1"], ["-y", "-1", "1"]]


@needs_libsvm
@pytest.mark.parametrize("name", ["heart_scale.xz", "a9a.xz", "svmguide1.xz"])
def test_cmp_identical_with_libsvm(tmp_path, name):
    src = shared(name) if name == "svmguide1.xz" else bundled(name)
    data = _plain(src, tmp_path)
    for flags in CASES if name != "a9a.xz" else CASES[:2]:
        ours = _scaled_by_ours(flags + ["-s", tmp_path / "ours.range"], data)
        theirs = _theirs(flags + ["-s", tmp_path / "libsvm.range"], data)
        assert ours == theirs, flags
        assert (tmp_path / "ours.range").read_bytes() == (tmp_path / "libsvm.range").read_bytes()
        # each reads the other's range file
        assert _scaled_by_ours(["-r", tmp_path / "libsvm.range"], data) == theirs
        assert _theirs(["-r", tmp_path / "ours.range"], data) == theirs


@needs_libsvm
def test_cmp_identical_train_range_on_test(tmp_path):
    train = _plain(bundled("a9a.xz"), tmp_path)
    test = _plain(bundled("a9a.t.xz"), tmp_path)
    subprocess.run([LIBSVM_SCALE, "-l", "0", "-s", tmp_path / "range", train], capture_output=True, check=True)
    ours, theirs = _both(["-r", tmp_path / "range"], test, tmp_path)
    assert ours == theirs


@needs_libsvm
@pytest.mark.parametrize("seed", range(3))
def test_cmp_identical_on_odd_values(tmp_path, seed):
    """Tiny and huge values, -0, zeros, labels needing the fallback formatter."""
    (tmp_path / "d").write_text(_random_text(seed + 100) + "3e-12 1:1e-300 4:1e300\n")
    for flags in CASES:
        assert _scaled_by_ours(flags, tmp_path / "d") == _theirs(flags, tmp_path / "d"), flags
