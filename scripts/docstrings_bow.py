#!/usr/bin/env python3
"""A real sparse text set: the docstrings of installed Python packages as a labelled bag of words.

    python scripts/docstrings_bow.py OUT_PREFIX [--root SITE_PACKAGES] [--min-df 2] [--counts] [--classes K]

Walks ``--root`` (default: this interpreter's site-packages) in sorted order,
parses every ``.py`` file with ``ast`` (nothing is imported) and takes the
docstring of every module, class and function longer than 40 characters:
one document each. The label is +1 for the scientific packages (numpy,
scipy, sklearn, pandas) and -1 for every other package, a text
classification task of the kind L1-regularised models are used for (a
few thousand words decide it). The features are the documents' lower-case
words (``[a-z_][a-z0-9_]+``) and pairs of consecutive words, kept when they
occur in at least ``--min-df`` documents; a value is (1 + log tf) idf, and
each row is scaled to unit length, as LIBSVM's text sets (rcv1, news20).
Every fifth document goes to ``OUT_PREFIX.t`` (the test set), the others to
``OUT_PREFIX`` (LIBSVM format, values with 6 significant digits). The same
packages always give the same bytes.

``--counts`` writes the raw counts of the words alone (no pairs, no idf,
no scaling), as LIBSVM's news20: a few long docstrings then hold counts in
the hundreds and |x|^2 up to 1e5, the shape that makes Crammer-Singer's
dual slow on real text. ``--classes K`` labels each document 1..K by its
package, the K packages with the most docstrings (more first), and drops
the others: a K-class topic task.
"""
import argparse
import ast
import math
import os
import re
import sys
import sysconfig
from collections import Counter

POSITIVE = ("numpy", "scipy", "sklearn", "pandas")
WORD = re.compile(r"[a-z_][a-z0-9_]+")
MIN_CHARS = 40


def docstrings(root):
    """(top-level package, docstring) of every module, class and function under ``root``, in sorted order."""
    for dirpath, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = os.path.join(dirpath, name)
            top = os.path.relpath(path, root).split(os.sep)[0].removesuffix(".py")
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    tree = ast.parse(f.read())
            except (SyntaxError, ValueError, RecursionError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    text = ast.get_docstring(node)
                    if text and len(text) > MIN_CHARS:
                        yield top, text


def terms(text, pairs=True):
    """The words (and, with ``pairs``, consecutive word pairs) of ``text``, with their counts."""
    words = WORD.findall(text.lower())
    if not pairs:
        return Counter(words)
    return Counter(words + [a + " " + b for a, b in zip(words, words[1:])])


def value(count, idf, counts):
    """A stored value before row scaling: the count, or (1 + log count) idf."""
    return float(count) if counts else (1.0 + math.log(count)) * idf


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--root", default=sysconfig.get_paths()["purelib"])
    ap.add_argument("--min-df", type=int, default=2)
    ap.add_argument("--counts", action="store_true", help="raw word counts (no pairs, no idf, no scaling)")
    ap.add_argument("--classes", type=int, default=0, help="label by the K packages with the most docstrings")
    args = ap.parse_args(argv)
    found = [(top, terms(text, pairs=not args.counts)) for top, text in docstrings(args.root)]
    if args.classes:
        sizes = Counter(top for top, _ in found)
        ranked = sorted(sizes, key=lambda top: (-sizes[top], top))[:args.classes]
        label_of = {top: k + 1 for k, top in enumerate(ranked)}
        found = [(top, doc) for top, doc in found if top in label_of]
    else:
        label_of = {top: 1 if top in POSITIVE else -1 for top, _ in found}
    labels = [label_of[top] for top, _ in found]
    label_text = str if args.classes else "{:+d}".format
    docs = [doc for _, doc in found]
    df = Counter(t for doc in docs for t in doc)
    vocab = sorted(t for t, c in df.items() if c >= args.min_df)
    index = {t: k + 1 for k, t in enumerate(vocab)}
    n = len(docs)
    idf = {t: math.log(n / df[t]) for t in vocab}
    with open(args.out, "w") as train, open(args.out + ".t", "w") as test:
        for i, (label, doc) in enumerate(zip(labels, docs)):
            feats = sorted((index[t], value(c, idf[t], args.counts)) for t, c in doc.items() if t in index)
            norm = 1.0 if args.counts else math.sqrt(sum(v * v for _, v in feats)) or 1.0
            line = " ".join(f"{j}:{v / norm:.6g}" for j, v in feats if v > 0)
            (test if i % 5 == 0 else train).write(f"{label_text(label)} {line}\n")
    sizes = Counter(labels)
    print(f"{n} documents ({', '.join(f'{sizes[c]} {label_text(c)}' for c in sorted(sizes))}), {len(vocab)} features "
          f"-> {args.out}, {args.out}.t", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
