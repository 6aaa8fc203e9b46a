#!/usr/bin/env python3
"""Fuzz svmtrain's reader and commands with mutated LIBSVM files.

Each case is a valid input (a slice of a bundled data set, or a small file
with comments, qid, CRLF, odd number spellings) changed by one to four
seeded mutations: flipped bits, random bytes, deleted or duplicated ranges,
cut files, binary garbage, NUL bytes, huge or non-finite numbers, very long
tokens, lines with up to 100,000 features, swapped features, and whole-file
replacements (empty, only comments, only NULs, random binary).

Every case must end in a correct parse or in one ``InputFormatError`` whose
message is one line ``NAME:LINE: problem`` with LINE a line of the input:

* ``check_parse``: ``parse_bytes`` with a random block size, rows per chunk
  and thread count must give the same outcome as with the defaults; the
  Chunk must satisfy the data contract (dtypes, CSR invariants, sorted
  unique indices, finite numbers); and, where ``tests/naive_reader.py`` is
  present, the arrays must equal its result bit for bit, or both must fail
  on the same line.
* ``check_cli``: ``svm-train`` and ``svm-predict`` run in-process (click's
  CliRunner) on the mutated file exit 0, or exit 2 with one line
  ``svm-train: ...`` on stderr; never a traceback.

A watchdog (``faulthandler``) aborts a case that runs longer than
``--hang`` seconds and prints where it hung.

Usage: ``python scripts/fuzz.py [--cases N] [--cli-cases M] [--seed S]``
(``make fuzz``). Exit status 1 when a case failed; the failing inputs are
written to ``--save-dir`` (default ``results/fuzz-failures/``) to reproduce.
"""
import argparse
import bz2
import faulthandler
import gzip
import lzma
import os
import re
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from svmtrain.errors import InputFormatError  # noqa: E402
from svmtrain.io.reader import parse_bytes  # noqa: E402

try:
    from naive_reader import NaiveError, naive_parse  # noqa: E402
except ImportError:   # pragma: no cover -- the reference is optional
    naive_parse = None
    NaiveError = None

NAME = "fuzz.svm"
MAX_INDEX = 2**31 - 1
ERROR_LINE = re.compile(r"(?P<name>[^\n]+?):(?P<line>[0-9]+): [^\n]+")

HANDMADE = (
    b"# svmtrain fuzz seed: comments, qid, CRLF, tabs, odd numbers\n"
    b"+1 qid:1 1:0.5 2:-1.25e-3 10:3 # trailing comment\n"
    b"-1 qid:1 2:1\t5:+.5 7:5.\r\n"
    b"\n"
    b"   # an indented comment\n"
    b"2 qid:2 3:1E+2 4:-0 8:0.0000001\n"
    b"-1\n"
    b"3.5e0 1:1 100:2 1000:3\n"
    b"+1 qid:7 6:1\n"
)

# tokens that parsers tend to get wrong
TOKENS = [
    b":", b"::", b"1:", b":1", b"0:1", b"-1:1", b"1:1:1", b"qid:", b"qid:-1", b"qid:1.5",
    b"qid:99999999999999999999", b"qid:3", b"1e309", b"-1e309", b"1e-400", b"4.9e-324",
    b"1.7976931348623157e308", b"1.8e308", b"inf", b"-inf", b"nan", b"NaN", b"Infinity",
    b"+", b"-", b".", b"e", b"1e", b"1e+", b"0x10", b"1_000", b"1,5", b"2147483647:1",
    b"2147483646:1", b"2147483648:1", b"99999999999999999999:1", b"00000000001:1",
    b"1:" + b"9" * 400, b"1:0." + b"0" * 500 + b"1", b"9" * 330, b"1:1e" + b"9" * 30,
    b"\0", b"#", b"\r", b"\n", b"\t", b"\x0b", b"\x0c", b" ", b"\xef\xbb\xbf",
    b"\xff\xfe", b"\xc3\xa9", b"1:\xc2\xa0", b"-0", b"+0", b"0", b"-1", b"+1", b"1.",
    b".5", b"-.5e-3", b"1:-0", b"3:1 3:2", b"5:1 4:1",
]


def load_bases():
    """The valid inputs that mutations start from."""
    bases = [HANDMADE]
    data = ROOT / "data"
    for name, n in (("heart_scale.xz", 40), ("a9a.xz", 30), ("mushrooms.xz", 12)):
        p = data / name
        if p.exists():
            with lzma.open(p) as f:
                lines = [f.readline() for _ in range(n)]
            bases.append(b"".join(lines))
    rng = np.random.default_rng(0)
    rows = []
    for i in range(25):
        idx = np.unique(rng.integers(1, 60, size=rng.integers(0, 12)))
        feats = " ".join(f"{j}:{rng.normal():.6g}" for j in idx)
        rows.append(f"{rng.integers(1, 6)} {feats}".rstrip())
    bases.append(("\n".join(rows) + "\n").encode())
    return bases


# ---------------------------------------------------------------- mutations

def _pos(rng, data, end=False):
    return int(rng.integers(0, len(data) + (1 if end else 0))) if data else 0


def m_flip_bit(rng, data):
    if not data:
        return data
    b = bytearray(data)
    i = _pos(rng, b)
    b[i] ^= 1 << int(rng.integers(0, 8))
    return bytes(b)


def m_random_byte(rng, data):
    if not data:
        return bytes([int(rng.integers(0, 256))])
    b = bytearray(data)
    b[_pos(rng, b)] = int(rng.integers(0, 256))
    return bytes(b)


def m_delete_range(rng, data):
    i = _pos(rng, data)
    return data[:i] + data[i + int(rng.integers(1, 40)):]


def m_cut(rng, data):
    return data[:_pos(rng, data, end=True)]


def m_duplicate_range(rng, data):
    i = _pos(rng, data)
    j = min(len(data), i + int(rng.integers(1, 200)))
    k = _pos(rng, data, end=True)
    return data[:k] + data[i:j] + data[k:]


def m_garbage(rng, data):
    k = _pos(rng, data, end=True)
    junk = rng.integers(0, 256, size=int(rng.integers(1, 64)), dtype=np.uint8).tobytes()
    return data[:k] + junk + data[k:]


def m_nul(rng, data):
    k = _pos(rng, data, end=True)
    return data[:k] + b"\0" * int(rng.integers(1, 4)) + data[k:]


def m_insert_token(rng, data):
    k = _pos(rng, data, end=True)
    tok = TOKENS[int(rng.integers(0, len(TOKENS)))]
    sep = [b"", b" "][int(rng.integers(0, 2))]
    return data[:k] + sep + tok + sep + data[k:]


_WORD = re.compile(rb"[^ \t\r\n]+")


def m_replace_token(rng, data):
    words = list(_WORD.finditer(data))
    if not words:
        return m_insert_token(rng, data)
    w = words[int(rng.integers(0, len(words)))]
    tok = TOKENS[int(rng.integers(0, len(TOKENS)))]
    if rng.random() < 0.5 and b":" in w.group():      # keep the index, change the value
        tok = w.group().split(b":", 1)[0] + b":" + tok
    return data[:w.start()] + tok + data[w.end():]


def m_huge_number(rng, data):
    words = list(_WORD.finditer(data))
    if not words:
        return data + b"1e400\n"
    w = words[int(rng.integers(0, len(words)))]
    big = [b"1" + b"0" * int(rng.integers(15, 400)), b"1e" + str(int(rng.integers(300, 400))).encode(),
           b"-1e" + str(int(rng.integers(300, 400))).encode(), b"1e-" + str(int(rng.integers(300, 400))).encode(),
           str(int(rng.integers(2**31 - 3, 2**31 + 3))).encode()]
    tok = big[int(rng.integers(0, len(big)))]
    if b":" in w.group():
        a, b = w.group().split(b":", 1)
        tok = (a + b":" + tok) if rng.random() < 0.6 else (tok + b":" + b)
    return data[:w.start()] + tok + data[w.end():]


def m_long_token(rng, data):
    n = int(rng.choice([1000, 10_000, 100_000]))
    body = [b"7", b"a", b"1.", b"0"][int(rng.integers(0, 4))] * n
    tok = [body, b"1:" + body, body + b":1", b"0." + body][int(rng.integers(0, 4))]
    k = _pos(rng, data, end=True)
    return data[:k] + b" " + tok + b" " + data[k:]


def m_wide_line(rng, data):
    n = int(rng.choice([1000, 20_000, 100_000], p=[0.5, 0.3, 0.2]))
    idx = np.arange(1, n + 1)
    line = b"+1 " + " ".join(f"{i}:1" for i in idx).encode() + b"\n"
    k = data.find(b"\n", _pos(rng, data)) + 1 if data else 0
    return data[:k] + line + data[k:]


def m_swap_features(rng, data):
    lines = data.split(b"\n")
    i = int(rng.integers(0, len(lines)))
    parts = lines[i].split(b" ")
    if len(parts) >= 3:
        a, b = sorted(rng.choice(np.arange(1, len(parts)), size=2, replace=False))
        parts[a], parts[b] = parts[b], parts[a]
        lines[i] = b" ".join(parts)
    return b"\n".join(lines)


def m_duplicate_index(rng, data):
    lines = data.split(b"\n")
    i = int(rng.integers(0, len(lines)))
    parts = lines[i].split(b" ")
    feats = [k for k, p in enumerate(parts) if b":" in p and not p.startswith(b"qid")]
    if feats:
        k = feats[int(rng.integers(0, len(feats)))]
        parts.insert(k + 1, parts[k])
        lines[i] = b" ".join(parts)
    return b"\n".join(lines)


def m_line_endings(rng, data):
    choice = int(rng.integers(0, 4))
    if choice == 0:
        return data.replace(b"\n", b"\r\n")
    if choice == 1:
        return data.replace(b"\n", b"\r")
    if choice == 2:
        return data.rstrip(b"\n")
    return data.replace(b" ", b"\t")


def m_shuffle_lines(rng, data):
    lines = data.split(b"\n")
    rng.shuffle(lines)
    return b"\n".join(lines)


def m_whole_file(rng, data):
    k = int(rng.integers(0, 8))
    if k == 0:
        return b""
    if k == 1:
        return b"# only a comment\n#another\n\n   # indented\n"
    if k == 2:
        return b"\0" * int(rng.integers(1, 5000))
    if k == 3:
        return rng.integers(0, 256, size=int(rng.integers(1, 5000)), dtype=np.uint8).tobytes()
    if k == 4:
        return b"\n" * int(rng.integers(1, 100))
    if k == 5:
        return b"+1 1:1"                       # no newline at all
    if k == 6:
        return b"\xef\xbb\xbf" + data          # BOM
    return b" \t\r\n\x0b\x0c" * int(rng.integers(1, 50))


MUTATIONS = [
    (m_flip_bit, 8), (m_random_byte, 8), (m_delete_range, 5), (m_cut, 4), (m_duplicate_range, 3),
    (m_garbage, 4), (m_nul, 3), (m_insert_token, 10), (m_replace_token, 10), (m_huge_number, 5),
    (m_long_token, 1), (m_wide_line, 0.15), (m_swap_features, 3), (m_duplicate_index, 3),
    (m_line_endings, 2), (m_shuffle_lines, 1), (m_whole_file, 1.5),
]
_FUNCS = [f for f, _ in MUTATIONS]
_P = np.array([w for _, w in MUTATIONS], float)
_P /= _P.sum()


def mutate(rng, data, max_mutations=4):
    """``data`` changed by 1..max_mutations random mutations; (bytes, names)."""
    names = []
    k = min(max_mutations, 1 + int(rng.geometric(0.5)) - 1)
    for _ in range(k):
        f = _FUNCS[int(rng.choice(len(_FUNCS), p=_P))]
        data = f(rng, data)
        names.append(f.__name__[2:])
    return data, names


def cases(seed, n, bases=None):
    """Yield (case number, bytes, mutation names), deterministically from ``seed``."""
    bases = load_bases() if bases is None else bases
    for i in range(n):
        rng = np.random.default_rng([seed, i])
        base = bases[int(rng.integers(0, len(bases)))]
        data, names = mutate(rng, base)
        yield i, data, names


# ---------------------------------------------------------------- checks

class CaseFailure(Exception):
    pass


def _outcome(data, **kw):
    """("ok", chunk) or ("error", InputFormatError)."""
    try:
        return "ok", parse_bytes(data, name=NAME, **kw)
    except InputFormatError as e:
        return "error", e


def _check_error(e, data, name=NAME):
    msg = str(e)
    m = ERROR_LINE.fullmatch(msg)
    if not m or m.group("name") != name:
        raise CaseFailure(f"error message is not 'NAME:LINE: problem': {msg!r}")
    line = int(m.group("line"))
    n_lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if not 1 <= line <= max(1, n_lines) or e.line != line:
        raise CaseFailure(f"error line {line} outside 1..{n_lines}: {msg!r}")


def check_chunk(c):
    """The data contract of svmtrain.data.dataset.Chunk."""
    want = {"labels": np.float64, "indptr": np.int64, "indices": np.int32,
            "values": np.float64, "qid": np.int64}
    for f, dt in want.items():
        if getattr(c, f).dtype != dt:
            raise CaseFailure(f"{f} has dtype {getattr(c, f).dtype}")
    n = len(c.labels)
    ip = c.indptr
    if len(ip) != n + 1 or ip[0] != 0 or np.any(np.diff(ip) < 0) or ip[-1] != len(c.indices) \
            or len(c.values) != len(c.indices) or len(c.qid) != n:
        raise CaseFailure("CSR arrays are inconsistent")
    if len(c.indices):
        if c.indices.min() < 0 or c.indices.max() > MAX_INDEX - 1:
            raise CaseFailure("index out of range")
        d = np.diff(c.indices.astype(np.int64))
        starts = ip[1:-1]
        inner = np.ones(len(d), bool)
        inner[starts[(starts > 0) & (starts < len(c.indices))] - 1] = False
        if np.any(d[inner] <= 0):
            raise CaseFailure("indices not strictly increasing within a row")
    if not (np.all(np.isfinite(c.labels)) and np.all(np.isfinite(c.values))):
        raise CaseFailure("a non-finite number was accepted")
    if np.any(c.qid < 0):
        raise CaseFailure("negative qid")


def _same_arrays(a, b):
    return all(x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
               for x, y in zip(a, b))


def _arrays(c):
    return (c.labels, c.indptr, c.indices, c.values, c.qid)


def check_parse(data, rng, naive=True):
    """Check one input; raises CaseFailure (or any unexpected exception)."""
    kind, got = _outcome(data)
    if kind == "error":
        _check_error(got, data)
    else:
        check_chunk(got)
    # the outcome must not depend on block size, rows per chunk or threads
    kw = {"chunk_bytes": int(rng.choice([7, 64, 1000, 1 << 16], p=[0.1, 0.3, 0.3, 0.3])),
          "chunk_rows": int(rng.choice([1, 3, 1 << 20])),
          "threads": int(rng.choice([1, 2]))}
    kind2, got2 = _outcome(data, **kw)
    if kind2 != kind:
        raise CaseFailure(f"{kw}: {kind2} ({got2}) but {kind} ({got}) with the defaults")
    if kind == "error" and (str(got2) != str(got)):
        raise CaseFailure(f"{kw}: error {got2} but {got} with the defaults")
    if kind == "ok" and not _same_arrays(_arrays(got), _arrays(got2)):
        raise CaseFailure(f"{kw}: arrays differ from the defaults")
    if naive and naive_parse is not None:
        try:
            ref = naive_parse(data)
        except NaiveError as e:
            if kind != "error":
                raise CaseFailure(f"the reference fails at line {e.line} ({e.kind}), the reader accepts")
            if e.line != got.line:
                raise CaseFailure(f"the reference fails at line {e.line} ({e.kind}), the reader at {got}")
        else:
            if kind == "error":
                raise CaseFailure(f"the reference accepts, the reader says {got}")
            if not _same_arrays(_arrays(got), ref):
                raise CaseFailure("arrays differ from the reference")
    return kind


# ---------------------------------------------------------------- the commands

def _one_line_error(r, prog):
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        tb = "".join(traceback.format_exception(*r.exc_info))
        raise CaseFailure(f"{prog} raised {r.exception!r}\n{tb}")
    if r.exit_code == 0:
        return
    if r.exit_code != 2:
        raise CaseFailure(f"{prog} exit {r.exit_code}: {r.output!r}")
    err = r.stderr
    if not (err.startswith(prog + ": ") and err.endswith("\n") and err.count("\n") == 1):
        raise CaseFailure(f"{prog}: not one line: {err!r}")
    if "Traceback" in r.output:
        raise CaseFailure(f"{prog} printed a traceback: {r.output!r}")


SOLVERS = ("pegasos", "dcd", "ocas")     # linear solvers the command fuzz trains with


def known_bug(chunk):
    """A reason when a parsed training set hits a known, reported bug of
    svm-train (each has a strict xfail test in tests/test_robustness.py;
    remove the entry once it is fixed)."""
    return None


class CliFuzzer:
    """svm-train and svm-predict in-process on mutated files."""

    def __init__(self, workdir, bases):
        from click.testing import CliRunner
        from svmtrain.cli.predict import main as predict_main
        from svmtrain.cli.train import main as train_main
        self.runner = CliRunner()
        self.train, self.predict = train_main, predict_main
        self.dir = Path(workdir)
        self.model = self.dir / "good.model"
        good = self.dir / "good.svm"
        good.write_bytes(bases[1] if len(bases) > 1 else bases[0])
        r = self.runner.invoke(self.train, ["-q", "-s", "pegasos", "-T", "2", str(good), str(self.model)])
        if r.exit_code != 0:
            raise RuntimeError(f"cannot train the reference model: {r.output}")

    def usable(self, data):
        """False for inputs whose parse gives a dimension too large for a
        dense weight vector in a test (an index near 2^31 means a 16 GB model,
        in LIBLINEAR as here), and for inputs that hit a known bug."""
        kind, c = _outcome(data)
        if kind == "error":
            return True
        return c.n_features <= 200_000 and not known_bug(c)

    def check(self, i, data, rng):
        path = self.dir / f"case{i % 4}.svm"
        path.write_bytes(data)
        model = self.dir / "out.model"
        solver = SOLVERS[int(rng.choice(len(SOLVERS), p=[0.45, 0.4, 0.15]))]
        extra = {"pegasos": ["-T", "2"], "ocas": ["--threads", "1"]}.get(solver, [])
        args = ["-q", "-s", solver] + extra + [str(path), str(model)]
        cached = rng.random() < 0.25
        cpath = self.dir / "c.svmcache"
        if cached:
            args.insert(0, f"--cache={cpath}")
        try:
            r = self.runner.invoke(self.train, args)
            _one_line_error(r, "svm-train")
            if r.exit_code == 0:
                from svmtrain.io.model_io import load_model
                load_model(model)
                if cached:       # again, from the cache: the same model, byte for byte
                    first = model.read_bytes()
                    r = self.runner.invoke(self.train, args)
                    if r.exit_code != 0 or r.stderr or model.read_bytes() != first:
                        raise CaseFailure(f"the cached run differs: {r.output!r}")
        finally:
            if cpath.exists():
                cpath.unlink()
        r = self.runner.invoke(self.predict, ["-q", str(path), str(self.model), str(self.dir / "pred")])
        _one_line_error(r, "svm-predict")


# ---------------------------------------------------------------- campaign

def run_campaign(n_cases, seed, n_cli=0, hang=60.0, save_dir=None, log=print, naive_every=1):
    """Run the campaign; returns (failures, counts)."""
    bases = load_bases()
    failures = []
    counts = {"ok": 0, "error": 0, "cli": 0}
    faulthandler.enable()
    try:
        for i, data, names in cases(seed, n_cases, bases):
            rng = np.random.default_rng([seed, i, 1])
            faulthandler.dump_traceback_later(hang, exit=True)
            try:
                counts[check_parse(data, rng, naive=(i % naive_every == 0))] += 1
            except Exception as e:
                failures.append((i, names, data, f"{type(e).__name__}: {e}"))
        if n_cli:
            with tempfile.TemporaryDirectory(prefix="svmtrain-fuzz-") as tmp:
                cli = CliFuzzer(tmp, bases)
                done = 0
                for i, data, names in cases(seed + 1_000_003, 4 * n_cli, bases):
                    if done >= n_cli:
                        break
                    if not cli.usable(data):
                        continue
                    rng = np.random.default_rng([seed, i, 2])
                    faulthandler.dump_traceback_later(hang, exit=True)
                    try:
                        cli.check(i, data, rng)
                    except Exception as e:
                        failures.append((f"cli{i}", names, data, f"{type(e).__name__}: {e}"))
                    done += 1
                counts["cli"] = done
    finally:
        faulthandler.cancel_dump_traceback_later()
    if save_dir and failures:
        os.makedirs(save_dir, exist_ok=True)
        for i, names, data, why in failures:
            Path(save_dir, f"case-{seed}-{i}.svm").write_bytes(data)
            Path(save_dir, f"case-{seed}-{i}.txt").write_text(f"{'+'.join(names)}\n{why}\n")
    return failures, counts


def compressed_variants(data):
    """(name, bytes) of ``data`` gzip/bzip2/xz-compressed, then truncated or
    corrupted in several ways (for the reader's error paths)."""
    out = []
    for kind, comp in (("gz", gzip.compress), ("bz2", bz2.compress), ("xz", lzma.compress)):
        z = comp(data)
        out.append((f"{kind}-whole", z))
        for frac in (0.1, 0.5, 0.9):
            out.append((f"{kind}-cut{frac}", z[:max(1, int(len(z) * frac))]))
        out.append((f"{kind}-cut-1", z[:-1]))
        out.append((f"{kind}-header-only", z[:6]))
        for frac in (0.3, 0.6, 0.95):
            b = bytearray(z)
            b[int(len(b) * frac)] ^= 0xFF
            out.append((f"{kind}-flip{frac}", bytes(b)))
        out.append((f"{kind}-trailing-garbage", z + b"garbage"))
        out.append((f"{kind}-twice", z + z))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=200_000, help="inputs through the reader")
    ap.add_argument("--cli-cases", type=int, default=2000, help="inputs through both commands")
    ap.add_argument("--seed", type=int, default=int(time.time()) % 100_000)
    ap.add_argument("--hang", type=float, default=60.0, help="seconds before a case counts as a hang")
    ap.add_argument("--save-dir", default="results/fuzz-failures")
    a = ap.parse_args(argv)
    print(f"fuzz: seed {a.seed}, {a.cases} reader cases, {a.cli_cases} command cases", flush=True)
    t0 = time.perf_counter()
    failures, counts = run_campaign(a.cases, a.seed, a.cli_cases, a.hang, a.save_dir)
    dt = time.perf_counter() - t0
    print(f"fuzz: {counts['ok']} parsed, {counts['error']} rejected with a one-line error, "
          f"{counts['cli']} through the commands; {len(failures)} failures; {dt:.1f} s")
    for i, names, _, why in failures[:20]:
        print(f"  case {i} ({'+'.join(names)}): {why.splitlines()[0] if why else ''}")
    if failures:
        print(f"failing inputs saved under {a.save_dir}/ (rerun with --seed {a.seed})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
