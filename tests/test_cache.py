"""The binary cache of parsed training data (svmtrain.io.cache, svm-train --cache)."""
import os
import struct
import time

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import bundled
from svmtrain.cli.train import main as train_main
from svmtrain.errors import ParameterError
from svmtrain.io import atomic, cache
from svmtrain.io.reader import parse_bytes, read_libsvm

FIELDS = ("labels", "indptr", "indices", "values", "qid")

TEXT = (b"# a comment line first\n"
        b"+1 qid:3 1:0.5 7:-2.25e-3 100:1e300\n"
        b"-1 qid:3 2:1 3:-0\n"
        b"\n"
        b"2.5 # a row with no features\n"
        b"-1 qid:9 5:0.1 1000:3\n")
# what svm-train can train on: the same rows without the value whose square overflows
TRAINABLE = TEXT.replace(b"100:1e300", b"100:300")


@pytest.fixture(autouse=True, params=[False, True], ids=["read", "mmap"])
def load_mode(request, monkeypatch):
    """Every test runs with the arrays read into memory and with them mapped."""
    monkeypatch.setattr(cache, "MMAP_DEFAULT", request.param)
    return request.param


def same(a, b):
    """Equal bit for bit, same dtypes, same first_line."""
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert x.dtype == y.dtype, f
        assert x.shape == y.shape, f
        assert x.tobytes() == y.tobytes(), f
    assert a.first_line == b.first_line


def fail_read(path):
    raise AssertionError("the source was parsed although the cache is valid")


class Log(list):
    def __call__(self, msg):
        assert "\n" not in msg
        self.append(msg)


@pytest.fixture
def src(tmp_path):
    p = tmp_path / "train.svm"
    p.write_bytes(TEXT)
    return p


def build(src, cpath, log=None):
    return cache.load_or_build(str(src), str(cpath), read_libsvm, log=log)


def test_round_trip_exact_and_mapped(src, tmp_path):
    cpath = tmp_path / "c.svmcache"
    log = Log()
    first = build(src, cpath, log)
    assert log == [] and cpath.exists()
    again = cache.load_or_build(str(src), str(cpath), fail_read, log=log)
    assert log == []
    same(first, read_libsvm(src))
    same(again, first)
    assert again.first_line == 2 and again.n_rows == 4
    # plain, writable ndarrays (over a private mapping with mmap): writes never reach the file
    for f in FIELDS:
        a = getattr(again, f)
        assert type(a) is np.ndarray and a.flags.writeable and a.flags.c_contiguous and a.flags.aligned
        base = a.base.obj if isinstance(a.base, memoryview) else a.base
        assert isinstance(base, cache.mmap.mmap) == cache.MMAP_DEFAULT
    before = cpath.read_bytes()
    again.values[:] = 42.0
    del again
    assert cpath.read_bytes() == before
    same(cache.load_or_build(str(src), str(cpath), fail_read), first)


def test_round_trip_largest_index(tmp_path):
    src = tmp_path / "big.svm"
    src.write_bytes(b"1 2147483647:1.5\n-1 1:2\n")
    first = build(src, tmp_path / "c")
    assert first.indices[0] == 2**31 - 2
    same(cache.load_or_build(str(src), str(tmp_path / "c"), fail_read), first)


def test_round_trip_bundled_compressed(tmp_path):
    src = bundled("heart_scale.xz")
    cpath = tmp_path / "h.svmcache"
    first = build(src, cpath)
    same(cache.load_or_build(str(src), str(cpath), fail_read), first)
    with open(cpath, "rb") as f:
        head = f.read(cache._FIXED.size)
    magic, version, header_len = struct.unpack_from("<8sII", head)
    assert magic == b"SVMCACHE" and version == cache.FORMAT_VERSION
    assert header_len % cache.ALIGN == 0
    spans = cache._FIXED.unpack_from(head)[11:21]
    assert all(off % cache.ALIGN == 0 for off in spans[0::2])


def test_round_trip_empty_and_multi_block(tmp_path, monkeypatch):
    empty = tmp_path / "empty.svm"
    empty.write_bytes(b"# nothing\n\n")
    c = build(empty, tmp_path / "e.c")
    assert c.n_rows == 0
    same(cache.load_or_build(str(empty), str(tmp_path / "e.c"), fail_read), c)
    # several checksum blocks per array
    monkeypatch.setattr(cache, "BLOCK", 64)
    src = tmp_path / "many.svm"
    rows = [f"{i % 3} " + " ".join(f"{j}:{i * j}" for j in range(1, 20)) for i in range(200)]
    src.write_text("\n".join(rows) + "\n")
    c = build(src, tmp_path / "m.c")
    same(cache.load_or_build(str(src), str(tmp_path / "m.c"), fail_read), c)
    raw = bytearray((tmp_path / "m.c").read_bytes())
    spans = cache._FIXED.unpack_from(raw)[11:21]
    raw[spans[6] + 3 * 64 + 5] ^= 0x10       # a byte of the 4th block of `values`
    (tmp_path / "m.c").write_bytes(bytes(raw))
    log = Log()
    same(build(src, tmp_path / "m.c", log), c)
    block = sum(-(-n // 64) for n in spans[1:6:2]) + 3
    assert log == [f"cache {tmp_path / 'm.c'} is damaged (checksum mismatch in block {block}); rebuilding"]


def test_stale_on_touch_and_append(src, tmp_path):
    cpath = tmp_path / "c.svmcache"
    build(src, cpath)
    st = os.stat(src)
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 1))     # touch: 1 ns later
    log = Log()
    same(build(src, cpath, log), read_libsvm(src))
    assert log == [f"cache {cpath} is stale (the training file changed); rebuilding"]
    log.clear()
    same(cache.load_or_build(str(src), str(cpath), fail_read, log), read_libsvm(src))
    assert log == []
    # append a row, keep the old mtime: the size gives it away
    st = os.stat(src)
    with open(src, "ab") as f:
        f.write(b"+1 4:4\n")
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))
    got = build(src, cpath, log)
    assert log and "stale" in log[0]
    assert got.n_rows == 5 and got.labels[-1] == 1.0
    same(got, read_libsvm(src))


def test_stale_when_built_from_another_file(src, tmp_path):
    other = tmp_path / "other.svm"
    other.write_bytes(TEXT)
    st = os.stat(src)
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))     # same size and mtime
    cpath = tmp_path / "c.svmcache"
    build(src, cpath)
    log = Log()
    build(other, cpath, log)
    assert log == [f"cache {cpath} is stale (built from {os.path.realpath(src)}); rebuilding"]


def test_stale_when_written_by_another_svmtrain_version(src, tmp_path, monkeypatch):
    cpath = tmp_path / "c.svmcache"
    monkeypatch.setattr(cache, "_version", lambda: "0.0.1")
    build(src, cpath)
    monkeypatch.undo()
    log = Log()
    same(build(src, cpath, log), read_libsvm(src))
    assert log == [f"cache {cpath} is stale (written by svmtrain 0.0.1); rebuilding"]


def test_other_format_version_is_rebuilt(src, tmp_path, monkeypatch):
    cpath = tmp_path / "c.svmcache"
    monkeypatch.setattr(cache, "FORMAT_VERSION", cache.FORMAT_VERSION + 1)
    build(src, cpath)
    monkeypatch.undo()
    log = Log()
    same(build(src, cpath, log), read_libsvm(src))
    assert log == [f"cache {cpath} has another format (format version {cache.FORMAT_VERSION + 1}, "
                   f"expected {cache.FORMAT_VERSION}); rebuilding"]
    log.clear()
    cache.load_or_build(str(src), str(cpath), fail_read, log)
    assert log == []


def _regions(raw):
    """Byte positions in every region of a cache file."""
    spans = cache._FIXED.unpack_from(raw)[11:21]
    header_len = struct.unpack_from("<I", raw, 12)[0]
    pos = {"magic": 2, "version": 9, "header_len": 13, "header_crc": 17, "block": 21,
           "src_size": 25, "n_rows": 41, "total": 65, "path": cache._FIXED.size + 1,
           "header_padding": header_len - 1, "last_byte": len(raw) - 1}
    path_len, ver_len = struct.unpack_from("<II", raw, 152)
    pos["crc_table"] = cache._FIXED.size + path_len + ver_len
    for name, off, n in zip(("labels", "indptr", "indices", "values", "qid"), spans[0::2], spans[1::2]):
        pos[name] = off + n // 2
    pos["array_padding"] = spans[0] + spans[1]        # just after `labels`
    return pos


@pytest.mark.parametrize("region", ["magic", "version", "header_len", "header_crc", "block",
                                    "src_size", "n_rows", "total", "path", "crc_table",
                                    "header_padding", "labels", "indptr", "indices", "values",
                                    "qid", "array_padding", "last_byte"])
def test_byte_flip_anywhere_is_detected_and_rebuilt(src, tmp_path, region):
    cpath = tmp_path / "c.svmcache"
    good = build(src, cpath)
    raw = bytearray(cpath.read_bytes())
    at = _regions(raw)[region]
    assert 0 <= at < len(raw)
    raw[at] ^= 0x04
    cpath.write_bytes(bytes(raw))
    log = Log()
    same(build(src, cpath, log), good)
    assert len(log) == 1 and log[0].startswith(f"cache {cpath} ") and log[0].endswith("; rebuilding")
    assert ("damaged" in log[0]) or (region == "version" and "another format" in log[0])
    cache.load_or_build(str(src), str(cpath), fail_read)     # the rebuilt cache is good


@pytest.mark.parametrize("keep", [0, 3, 12, 100, "header-1", "header", "half", "total-1"])
def test_truncated_cache_is_rebuilt(src, tmp_path, keep):
    cpath = tmp_path / "c.svmcache"
    good = build(src, cpath)
    raw = cpath.read_bytes()
    header_len = struct.unpack_from("<I", raw, 12)[0]
    n = {"header-1": header_len - 1, "header": header_len, "half": len(raw) // 2,
         "total-1": len(raw) - 1}.get(keep, keep)
    cpath.write_bytes(raw[:n])
    log = Log()
    same(build(src, cpath, log), good)
    assert len(log) == 1 and "damaged" in log[0], log
    assert cpath.read_bytes() == raw


def test_trailing_bytes_are_damage(src, tmp_path):
    cpath = tmp_path / "c.svmcache"
    build(src, cpath)
    with open(cpath, "ab") as f:
        f.write(b"\0")
    log = Log()
    build(src, cpath, log)
    assert log == [f"cache {cpath} is damaged (1 unexpected bytes at the end); rebuilding"]


def test_never_overwrites_a_file_that_is_not_a_cache(src, tmp_path):
    precious = tmp_path / "notes.txt"
    precious.write_bytes(b"my thesis, chapter 1\n")
    with pytest.raises(ParameterError, match="exists and is not an svmtrain cache; refusing"):
        build(src, precious)
    assert precious.read_bytes() == b"my thesis, chapter 1\n"
    with pytest.raises(ParameterError, match="is the training file itself"):
        build(src, src)
    assert src.read_bytes() == TEXT
    os.link(src, tmp_path / "hard")
    with pytest.raises(ParameterError, match="is the training file itself"):
        build(src, tmp_path / "hard")
    with pytest.raises(ParameterError, match="not an svmtrain cache"):
        build(tmp_path / "missing.svm", precious)


def test_a_cache_that_cannot_be_written_is_only_a_warning(src, tmp_path):
    cpath = tmp_path / "no" / "such" / "dir" / "c.svmcache"
    log = Log()
    same(build(src, cpath, log), read_libsvm(src))
    assert len(log) == 1 and log[0].startswith(f"cannot write cache {cpath}: ")
    assert log[0].endswith("; continuing without it")


def test_full_disk_while_writing_the_cache(src, tmp_path, monkeypatch):
    import errno

    import svmtrain.io.atomic as atomic
    real_fsync = atomic.os.fsync

    def fsync(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(atomic.os, "fsync", fsync)
    cpath = tmp_path / "c.svmcache"
    log = Log()
    same(build(src, cpath, log), read_libsvm(src))
    assert log == [f"cannot write cache {cpath}: No space left on device; continuing without it"]
    monkeypatch.setattr(atomic.os, "fsync", real_fsync)
    assert sorted(os.listdir(tmp_path)) == ["train.svm"]


def test_source_changing_while_read_is_not_cached(src, tmp_path):
    cpath = tmp_path / "c.svmcache"

    def read_and_modify(path):
        data = read_libsvm(path)
        with open(path, "ab") as f:
            f.write(b"1 1:1\n")
        return data
    log = Log()
    cache.load_or_build(str(src), str(cpath), read_and_modify, log)
    assert not cpath.exists()
    assert log == [f"the training file changed while it was read; cache {cpath} not written"]


def test_default_cache_path(tmp_path, monkeypatch):
    assert cache.default_cache_path(str(tmp_path / "a.svm")) == str(tmp_path / "a.svm") + ".svmcache"
    monkeypatch.setattr(cache.os, "access", lambda p, mode: False)
    monkeypatch.chdir(tmp_path)
    assert cache.default_cache_path("/some/where/b.svm.xz") == "b.svm.xz.svmcache"
    with pytest.raises(ParameterError, match="needs a PATH"):
        cache.default_cache_path("-")


def test_remove_stale_temps(tmp_path):
    target = tmp_path / "m.model"
    old = tmp_path / ".m.model.abc123.tmp"
    fresh = tmp_path / ".m.model.def456.tmp"
    other = tmp_path / ".other.model.abc123.tmp"
    for p in (old, fresh, other):
        p.write_text("x")
    past = time.time() - 3600
    os.utime(old, (past, past))
    os.utime(other, (past, past))
    assert atomic.remove_stale_temps(target) == [str(old)]
    assert sorted(os.listdir(tmp_path)) == sorted([fresh.name, other.name])


# ---------------------------------------------------------------- through svm-train

def run(args, input=None):
    return CliRunner().invoke(train_main, [str(a) for a in args], input=input)


@pytest.fixture
def train_src(tmp_path):
    p = tmp_path / "train.svm"
    p.write_bytes(TRAINABLE)
    return p


def test_cli_cache_flag_default_path_and_identical_models(train_src, tmp_path):
    src = train_src
    r = run(["-q", "-s", "pegasos", "-T", "3", "--cache", src, tmp_path / "m1"])   # --cache takes no word
    assert r.exit_code == 0, r.output
    cpath = tmp_path / "train.svm.svmcache"
    assert cpath.exists()
    stamp = os.stat(cpath).st_mtime_ns
    r = run(["-q", "-s", "pegasos", "-T", "3", src, tmp_path / "m2", "--cache"])
    assert r.exit_code == 0 and r.output == ""
    assert os.stat(cpath).st_mtime_ns == stamp                 # mapped, not rewritten
    r = run(["-q", "-s", "pegasos", "-T", "3", src, tmp_path / "m3"])
    assert (tmp_path / "m1").read_bytes() == (tmp_path / "m2").read_bytes() == (tmp_path / "m3").read_bytes()


def test_cli_stale_and_damaged_messages(train_src, tmp_path):
    src = train_src
    cpath = tmp_path / "c"
    assert run(["-q", "-s", "pegasos", "-T", "1", f"--cache={cpath}", src, tmp_path / "m"]).exit_code == 0
    raw = bytearray(cpath.read_bytes())
    raw[-1] ^= 1
    cpath.write_bytes(bytes(raw))
    r = run(["-q", "-s", "pegasos", "-T", "1", f"--cache={cpath}", src, tmp_path / "m"])
    assert r.exit_code == 0
    assert r.stderr == f"svm-train: cache {cpath} is damaged (checksum mismatch in block 4); rebuilding\n"
    src.write_bytes(TRAINABLE + b"1 1:1\n")
    r = run(["-q", "-s", "pegasos", "-T", "1", f"--cache={cpath}", src, tmp_path / "m"])
    assert r.stderr == f"svm-train: cache {cpath} is stale (the training file changed); rebuilding\n"


def test_cli_stdin_needs_a_path_and_uses_the_cache(tmp_path):
    r = run(["-q", "--cache", "-", tmp_path / "m"], input=TEXT)
    assert r.exit_code == 2
    assert r.stderr == ("svm-train: --cache needs a PATH when TRAIN_FILE is standard input "
                        "(write --cache=PATH)\n")
    cpath = tmp_path / "stdin.svmcache"
    r = run(["-q", "-s", "pegasos", "-T", "2", f"--cache={cpath}", "-", tmp_path / "m1"], input=TRAINABLE)
    assert r.exit_code == 0 and cpath.exists()
    r = run(["-q", "-s", "pegasos", "-T", "2", f"--cache={cpath}", "-", tmp_path / "m2"], input=b"garbage\n")
    assert r.exit_code == 0, r.output
    assert r.stderr == (f"svm-train: using cache {cpath} built from standard input; "
                        "standard input is not read\n")
    assert (tmp_path / "m1").read_bytes() == (tmp_path / "m2").read_bytes()


def test_cli_refuses_to_overwrite_a_data_file_as_cache(src, tmp_path):
    other = tmp_path / "test.svm"
    other.write_bytes(TEXT)
    r = run(["-q", f"--cache={other}", src, tmp_path / "m"])
    assert r.exit_code == 2 and other.read_bytes() == TEXT
    assert r.stderr.startswith(f"svm-train: {other} exists and is not an svmtrain cache")


def test_cached_data_matches_parse_bytes(tmp_path):
    data = bundled("mushrooms.xz")
    cpath = tmp_path / "m.c"
    build(data, cpath)
    import lzma
    same(cache.load_or_build(str(data), str(cpath), fail_read), parse_bytes(lzma.open(data).read()))
