"""Plain-Python twin of the numba reader kernel (the reference in the tests).

Slow and simple on purpose: split into physical lines, cut comments, split
on whitespace, check every token with a regular expression and convert
numbers with ``float()``. It implements the same grammar as
``svmtrain/io/_reader_kernels.py`` independently, so the tests can compare
arrays (bit for bit) and the line of the first error.
"""
import re

import numpy as np

MAX_INDEX = 2**31 - 1
_NUM = re.compile(rb"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NONFINITE = re.compile(rb"[+-]?(?:inf|infinity|nan)", re.IGNORECASE)
_FEATURE = re.compile(rb"(-?)([0-9]+):(.*)", re.DOTALL)
_QID = re.compile(rb"qid:([0-9]+)")


class NaiveError(Exception):
    """``line`` is the 1-based physical line, ``kind`` a short name."""

    def __init__(self, line, kind):
        super().__init__(f"line {line}: {kind}")
        self.line = line
        self.kind = kind


def _number(tok, line, what):
    if _NUM.fullmatch(tok):
        v = float(tok)
        if v in (float("inf"), float("-inf")):
            raise NaiveError(line, "overflow")
        return v
    if _NONFINITE.fullmatch(tok):
        raise NaiveError(line, what + "_nonfinite")
    raise NaiveError(line, what)


def naive_parse(data, base=1):
    """bytes -> (labels, indptr, indices, values, qid) with the dtypes of a
    Chunk; raises NaiveError at the first bad line. ``base``: the smallest
    index (0: LIBSVM's precomputed kernels, index i in column i)."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    labels, indptr, indices, values, qids = [], [0], [], [], []
    for lineno, line in enumerate(data.split(b"\n"), 1):
        toks = line.split(b"#", 1)[0].split()
        if not toks:
            continue
        if b":" in toks[0]:
            raise NaiveError(lineno, "label")
        label = _number(toks[0], lineno, "label")
        q = 0
        row = {}
        for k, tok in enumerate(toks[1:]):
            if tok.startswith(b"qid:"):
                if k != 0:
                    raise NaiveError(lineno, "qid_position")
                m = _QID.fullmatch(tok)
                if not m or int(m.group(1)) >= 10**18:
                    raise NaiveError(lineno, "qid")
                q = int(m.group(1))
                continue
            m = _FEATURE.fullmatch(tok)
            if not m:
                raise NaiveError(lineno, "feature")
            digits = m.group(2).lstrip(b"0") or b"0"
            if m.group(1) or int(digits[:11]) < base:
                raise NaiveError(lineno, "index_nonpositive")
            if len(digits) > 10 or int(digits) > MAX_INDEX:
                raise NaiveError(lineno, "index_too_big")
            idx = int(digits)
            if not m.group(3):
                raise NaiveError(lineno, "no_value")
            v = _number(m.group(3), lineno, "value")
            if idx in row:
                raise NaiveError(lineno, "duplicate")
            row[idx] = v
        for idx in sorted(row):
            indices.append(idx - base)
            values.append(row[idx])
        labels.append(label)
        qids.append(q)
        indptr.append(len(indices))
    return (np.array(labels, np.float64), np.array(indptr, np.int64),
            np.array(indices, np.int32), np.array(values, np.float64),
            np.array(qids, np.int64))
