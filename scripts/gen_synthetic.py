#!/usr/bin/env python3
"""Generate a synthetic LIBSVM file, deterministically from a seed.

Default size is about 900 MB: 1,000,000 rows, 200,000 features and about 60
nonzeros per row (Poisson distributed, at least 1; duplicates within a row
are dropped). Feature indices are ``floor(features * u**skew)`` for uniform
``u`` (``--skew``, default 2: low indices are frequent, as in text data; 1
gives uniform indices), sorted within a row; values are uniform in (0, 1)
and written with six decimals (``0.123456``). Labels are ``+1``/``-1``: the
sign of ``w . x`` for a hidden ``w`` (standard normal on the 1% most
frequent features, zero elsewhere), then a fraction of the labels flipped
(``--noise``, default 5%). So the problem is learnable (LIBLINEAR reaches
about 73% cross-validation accuracy with 100,000 rows; the best possible is
95%) and can serve solver benchmarks as well as reader benchmarks.

With ``--task r`` the label is a regression target instead: ``w . x`` plus
Gaussian noise of standard deviation ``--noise`` (default then 0.1), written
with six decimals (``-1.234567``; |y| is clipped below 1000).

Ranking mode (``--queries Q``): the rows are split into Q contiguous
queries of varying size (Q - 1 distinct random cut points), each row
carries ``qid:K`` (1-based), and the label is a graded relevance 0-3: the
hidden score ``w . x`` plus Gaussian noise of ``--noise`` times the score's
standard deviation (in this mode --noise is that ratio), cut at the
score's 50 %, 80 % and 95 % quantiles (of each block of rows), so 0 is the
most frequent grade and 3 the rarest. ``svm-train -s ocas --task p`` trains
on it.

Dense mode (``--dense``, for the kernel solvers' benchmarks): every row
stores every feature (``--nnz-per-row`` and ``--skew`` are then unused), the
hidden ``w`` is standard normal on all features and a label is the sign of
``w . (x - 0.5)`` (``x`` uniform in (0, 1)^features, so both classes are
equally frequent), then ``--noise`` of them flipped. (Without ``--dense``
a file of 20 features has its hidden model on one feature, whose values
are all positive: its labels are one class but for the flipped ones.)

The same (rows, features, nnz_per_row, seed, noise, task, queries, classes, dense) always give the same
bytes. The text is assembled with vectorised NumPy, block by block (no Python
loop per row), and written to ``PATH.tmp`` first, then renamed, so a file
that exists is complete.

Other scripts import :func:`generate`.
"""
import argparse
import lzma
import os
import sys
import time

import numpy as np

BLOCK_ROWS = 50_000
PAD = 0xFF  # never appears in the output text; removed before writing


def _ndigits(x):
    return len(str(int(x)))


def _put_digits(M, rows, col, numbers, nd):
    """Write the decimal ``numbers`` (>= 1) left-aligned from column ``col``
    of rows ``rows`` of M, at most nd digits, no leading zeros (PAD there)."""
    for d in range(nd):
        p = 10 ** (nd - 1 - d)
        digit = (numbers // p) % 10
        c = (48 + digit).astype(np.uint8)
        if d < nd - 1:
            c[numbers < p] = PAD
        M[rows, col + d] = c


def _fixed6(y, width):
    """uint8[n, width]: each value as text with six decimals ('-12.345678'),
    |y| < 1000, padded on the right with PAD (vectorised, no loop per value)."""
    n = y.shape[0]
    out = np.full((n, width), PAD, np.uint8)
    micro = np.rint(np.abs(y) * 1e6).astype(np.int64)
    ipart, frac = micro // 1_000_000, micro % 1_000_000
    neg = (y < 0) & (micro > 0)
    ndig = np.where(ipart >= 100, 3, np.where(ipart >= 10, 2, 1))
    col = neg.astype(np.int64)                      # where the integer digits start
    out[neg, 0] = ord("-")
    rows = np.arange(n)
    for d in range(3):                              # integer digits, most significant first
        has = d < ndig
        digit = (ipart // 10 ** (ndig - 1 - d).clip(0)) % 10
        out[rows[has], (col + d)[has]] = (48 + digit[has]).astype(np.uint8)
    dot = col + ndig
    out[rows, dot] = ord(".")
    for d in range(6):
        out[rows, dot + 1 + d] = (48 + (frac // 10 ** (5 - d)) % 10).astype(np.uint8)
    return out


def _block_text(rng, w, rows, features, nnz_per_row, noise, skew, task="c", qid=None, nq=0, dense=False):
    """The bytes (uint8 array) of one block of ``rows`` rows; with ``qid``
    (int64[rows], 1-based) ranking rows 'REL qid:K ...' (``nq`` digits of K);
    with a 2-D ``w`` (features x K) class labels 1..K (the best-scoring class,
    a fraction ``noise`` of them replaced by a random class); ``dense``: every
    feature of every row, the margin ``w . (x - 0.5)``."""
    if dense:
        row_of = np.repeat(np.arange(rows, dtype=np.int64), features)
        idx = np.tile(np.arange(features, dtype=np.int64), rows)
    else:
        k = np.maximum(rng.poisson(nnz_per_row, size=rows), 1)
        row_of = np.repeat(np.arange(rows, dtype=np.int64), k)
        # index = floor(features * u**skew): skew 1 is uniform, larger values make
        # low indices frequent (as in text data), which keeps the hidden model
        # learnable from far fewer rows than features.
        u = rng.random(row_of.shape[0])
        idx = np.minimum((features * u ** skew).astype(np.int64), features - 1)
        key = row_of * features + idx
        key.sort()
        keep = np.ones(key.shape[0], bool)
        keep[1:] = key[1:] != key[:-1]
        key = key[keep]
        row_of = key // features
        idx = key - row_of * features            # 0-based, sorted and unique per row
    nnz = idx.shape[0]
    counts = np.bincount(row_of, minlength=rows)
    val = rng.integers(1, 1_000_000, size=nnz)  # value = val / 1e6, six decimals
    centre = 0.5 if dense else 0.0

    if w.ndim == 2:
        scores = np.column_stack([np.bincount(row_of, weights=(val * 1e-6) * w[idx, c], minlength=rows)
                                  for c in range(w.shape[1])])
        label = np.argmax(scores, axis=1) + 1
        flip = rng.random(rows) < noise
        label[flip] = rng.integers(1, w.shape[1] + 1, size=int(flip.sum()))
        margin = None
    else:
        margin = np.bincount(row_of, weights=(val * 1e-6 - centre) * w[idx], minlength=rows)  # w . (x - centre)
    if margin is None:
        pass
    elif qid is not None:
        noisy = margin + noise * (margin.std() or 1.0) * rng.standard_normal(rows)
        relevance = np.searchsorted(np.quantile(noisy, [0.5, 0.8, 0.95]), noisy, side="right")
    elif task == "r":
        target = np.clip(margin + noise * rng.standard_normal(rows), -999.0, 999.0)
    else:
        positive = margin > 0
        flip = rng.random(rows) < noise
        positive ^= flip

    # Every row becomes cells of fixed width W (padded with PAD): a label
    # cell, one cell per feature " IDX:0.DDDDDD" and a newline cell.
    nd = _ndigits(features)
    W = max(1 + nd + 1 + 8, 11)         # a feature cell; also holds a target ('-999.999999')
    if qid is not None:
        W = max(W, 7 + nq)                   # "R qid:K"
    ncells = 2 * rows + nnz
    M = np.full((ncells, W), PAD, np.uint8)
    first = np.zeros(rows, np.int64)
    first[1:] = np.cumsum(counts + 2)[:-1]   # label cell of each row
    if margin is None:
        _put_digits(M, first, 0, label, _ndigits(w.shape[1]))
    elif qid is not None:
        M[first, 0] = 48 + relevance
        for k, ch in enumerate(" qid:"):
            M[first, 1 + k] = ord(ch)
        _put_digits(M, first, 6, qid, nq)
    elif task == "r":
        M[first] = _fixed6(target, W)
    else:
        M[first, 0] = np.where(positive, ord("+"), ord("-"))
        M[first, 1] = ord("1")
    M[first + counts + 1, 0] = ord("\n")

    T = np.full((nnz, W), PAD, np.uint8)
    T[:, 0] = ord(" ")
    one_based = idx + 1
    for d in range(nd):
        p = 10 ** (nd - 1 - d)
        digit = (one_based // p) % 10
        col = (48 + digit).astype(np.uint8)
        if d < nd - 1:
            col[one_based < p] = PAD           # no leading zeros
        T[:, 1 + d] = col
    T[:, 1 + nd] = ord(":")
    T[:, 2 + nd] = ord("0")
    T[:, 3 + nd] = ord(".")
    for d in range(6):
        p = 10 ** (5 - d)
        T[:, 4 + nd + d] = 48 + (val // p) % 10
    # feature cells sit after their row's label cell
    pos_in_row = np.arange(nnz, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    M[np.repeat(first + 1, counts) + pos_in_row] = T
    flat = M.ravel()
    return flat[flat != PAD]


def query_ids(rows, queries, seed):
    """int64[rows]: the 1-based qid of each row, ``queries`` contiguous
    queries of varying size (cut at queries - 1 distinct random rows)."""
    queries = max(1, min(int(queries), rows))
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2]))
    cuts = np.sort(rng.choice(np.arange(1, rows), size=queries - 1, replace=False)) if queries > 1 else []
    q = np.zeros(rows, np.int64)
    q[np.asarray(cuts, np.int64)] = 1
    return np.cumsum(q) + 1


def generate(path, rows=1_000_000, features=200_000, nnz_per_row=60, seed=1,
             noise=None, compress=None, verbose=False, skew=2.0, first_block=0, task="c", queries=None, classes=None,
             dense=False):
    """Write the synthetic file to ``path``; return its size in bytes.

    ``queries``: ranking rows (see the module doc) in that many queries.

    ``compress`` is None or "xz" (xz compression is slow: a few MB/s).
    ``first_block`` numbers the first block of rows: a file with the same
    seed and another first_block has other rows from the same hidden model
    (a test set: ``--first-block 1000000``). ``task`` "c" writes +1/-1
    labels (``noise``: the fraction flipped, default 0.05), "r" regression
    targets (``noise``: the noise's standard deviation, default 0.1).
    ``classes`` K > 2: labels 1..K from K hidden weight vectors (the best
    scoring class; ``noise`` the fraction replaced by a random class).
    ``dense``: every row stores every feature, the hidden model is on all of
    them and the labels are the signs of ``w . (x - 0.5)`` (see the module doc).
    """
    path = os.fspath(path)
    if noise is None:
        noise = 0.1 if task == "r" else 0.05
    root = np.random.default_rng(np.random.SeedSequence([seed, 0]))
    # hidden model: standard normal weights on the 1% most frequent features
    # (the lowest indices), zero on the others
    frequent = np.arange(features) < (features if dense else max(1, features // 100))
    if classes:
        w = root.standard_normal((features, int(classes))) * frequent[:, None]
    else:
        w = root.standard_normal(features) * frequent
    qids = None if queries is None else query_ids(rows, queries, seed)
    nq = 0 if qids is None else _ndigits(qids[-1])
    tmp = path + ".tmp"
    opener = (lambda p: lzma.open(p, "wb", preset=1)) if compress == "xz" else (lambda p: open(p, "wb"))
    t0 = time.perf_counter()
    with opener(tmp) as f:
        done = 0
        b = 0
        while done < rows:
            n = min(BLOCK_ROWS, rows - done)
            rng = np.random.default_rng(np.random.SeedSequence([seed, 1, first_block + b]))
            q = None if qids is None else qids[done:done + n]
            text = _block_text(rng, w, n, features, nnz_per_row, noise, skew, task, q, nq, dense)
            f.write(memoryview(text))
            done += n
            b += 1
            if verbose:
                print(f"\r{done}/{rows} rows, {time.perf_counter() - t0:.1f} s",
                      end="", file=sys.stderr, flush=True)
    if verbose:
        print(file=sys.stderr)
    os.replace(tmp, path)
    return os.path.getsize(path)


def bag_of_words(rows=15_935, features=62_061, mean_length=90.0, topics=20, seed=1, zipf=1.1,
                 topic_share=0.02, tfidf=False, shift=30.0):
    """A text-like set (issue 33's newsgroup shape): (CSR counts or tf-idf rows, topic 0..topics-1).

    Word frequencies follow a power law (Zipf-Mandelbrot: rank r has weight
    (r + ``shift``)^-``zipf``, over the ``features`` words, in a random index
    order; the shift keeps the commonest words out of most documents, as
    stop-word lists do);
    document lengths (tokens) are log-normal with mean ``mean_length`` (sigma
    0.9); each topic shares the whole vocabulary and boosts its own
    ``topic_share`` of it (20 x more likely, drawn among all ranks), so
    topics overlap as newsgroups do. A document draws its tokens from its
    topic's distribution; stored values are the counts (or tf-idf,
    log(1 + tf) * log(n / df), each row scaled to unit length). Vectorised,
    no Python loop per document or token.
    """
    import scipy.sparse as sp
    rng = np.random.default_rng(np.random.SeedSequence([seed, 33]))
    base = 1.0 / (np.arange(1, features + 1) + shift) ** zipf
    perm = rng.permutation(features)                    # frequent words are not the low indices
    topic = rng.integers(0, topics, rows)
    sigma = 0.9
    lengths = np.maximum(1, np.rint(rng.lognormal(np.log(mean_length) - sigma * sigma / 2, sigma, rows))).astype(np.int64)
    doc_of = np.repeat(np.arange(rows), lengths)
    word = np.empty(doc_of.shape[0], np.int64)
    tok_topic = topic[doc_of]
    for t in range(topics):                              # one draw per topic (topics << documents)
        boost = np.ones(features)
        boost[rng.choice(features, max(1, int(topic_share * features)), replace=False)] = 20.0
        pt = base * boost
        cdf = np.cumsum(pt / pt.sum())
        sel = np.flatnonzero(tok_topic == t)
        word[sel] = np.minimum(np.searchsorted(cdf, rng.random(sel.shape[0])), features - 1)
    M = sp.csr_matrix((np.ones(doc_of.shape[0]), (doc_of, perm[word])), shape=(rows, features))
    M.sum_duplicates()
    M.sort_indices()
    if tfidf:
        df = np.bincount(M.indices, minlength=features)
        M.data = np.log1p(M.data) * np.log(rows / np.maximum(df, 1))[M.indices]
        norms = np.sqrt(np.asarray(M.multiply(M).sum(axis=1)).ravel())
        M = sp.diags(1.0 / np.maximum(norms, 1e-300)) @ M
        M = M.tocsr()
    return M, topic


def write_sparse_rows(path, M, labels):
    """Write the rows of M (CSR, stored entries in order) with ``labels`` as
    LIBSVM text, 1-based indices: the bytes scikit-learn's
    ``dump_svmlight_file(M, labels, path, zero_based=False)`` writes (a label
    ``%d`` when the labels are integers, else ``%.16g``; values ``%.16g``;
    an empty row is ``label `` and a newline), without needing scikit-learn."""
    M = M.tocsr()
    if not M.has_sorted_indices:            # (scikit-learn writes each row's indices ascending)
        M = M.sorted_indices()
    label_pattern = "%d" if np.asarray(labels).dtype.kind in "iu" else "%.16g"
    with open(path, "w") as f:
        for i in range(M.shape[0]):
            lo, hi = M.indptr[i], M.indptr[i + 1]
            pairs = " ".join("%d:%.16g" % (j + 1, v) for j, v in zip(M.indices[lo:hi].tolist(),
                                                                    M.data[lo:hi].tolist()))
            f.write(f"{label_pattern % labels[i]} {pairs}\n")


def write_bag_of_words(path, M, labels):
    """Write rows M (CSR) with ``labels`` as LIBSVM text (1-based indices)."""
    write_sparse_rows(path, M, labels)


def sensor_rows(rows=49_990, seed=1, flip=0.003):
    """A dense low-dimensional set of issue 33's SMO shape (ijcnn1's: 49,990
    rows, 22 features, about 10 % positives, RBF C = 32, gamma = 2 keeps a
    few thousand support vectors): (X float64[rows, 22], labels +-1).

    Features 1-10 one-hot encode a categorical reading of skewed frequency
    (20 % down to 5 %); features 11-22 are 12 correlated readings in
    (-1, 1): tanh of a random mixture of 4 latent Gaussian factors plus a
    little noise, so the rows lie near a 4-dimensional surface, as sensor
    channels do. A row is positive when a smooth nonlinear score of the
    factors (a linear, a quadratic and a periodic term whose phase depends
    on the category) is in its top 10 %; ``flip`` of the labels are then
    flipped. The same (rows, seed, flip) give the same arrays; the first k
    rows of a larger draw are not the rows of a smaller one, so draw the
    training and test rows together and split them.
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, 331]))
    share = np.array([20, 15, 12, 10, 9, 8, 8, 7, 6, 5]) / 100
    category = rng.choice(10, size=rows, p=share)
    factors = rng.standard_normal((rows, 4))
    mixing = rng.standard_normal((12, 4)) * 0.6
    readings = np.tanh(0.5 * (factors @ mixing.T + 0.03 * rng.standard_normal((rows, 12))))
    phase = rng.uniform(0, 2 * np.pi, 10)
    score = factors[:, 1] + 0.4 * factors[:, 2] ** 2 + 0.6 * np.sin(0.8 * factors[:, 0] + phase[category])
    y = np.where(score > np.quantile(score, 0.90), 1, -1)
    flipped = rng.random(rows) < flip
    y[flipped] = -y[flipped]
    X = np.zeros((rows, 22))
    X[np.arange(rows), category] = 1.0
    X[:, 10:] = readings
    return X, y


def web_rows(rows=49_749, seed=1, features=300, positives=0.03, mean_nnz=11.6, noise=0.5):
    """A sparse binary set of issue 32's dip-and-rise shape (w8a's: 49,749
    rows, 300 binary features, about 11.6 set a row, 3 % positives):
    (X float64[rows, features] of 0/1, labels +-1).

    Feature f is set independently with a probability proportional to
    1 / (rank + 3) (keyword frequencies: a few common, most rare; capped at
    one half), the ranks in a random order; 40 features carry a hidden
    Gaussian weight (standard deviation 2); a row is positive when its
    score plus Gaussian noise (``noise``) is in the top ``positives``. With
    so few positives the cross-validation accuracy of a linear model starts
    at the majority rate (97 %) at tiny C and is not unimodal in C
    (LIBLINEAR's ``-C -s 2``: 96.9989 % at 2^-14, 96.9969 % at 2^-13, then
    up to 97.72 % at 2^-5, down to 97.70 % and up again at 2^-2).
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, 328]))
    weight = (np.arange(features) + 3.0) ** -1.0
    p = np.minimum(0.5, weight * mean_nnz / weight.sum())
    X = (rng.random((rows, features)) < p[rng.permutation(features)]).astype(float)
    w = np.zeros(features)
    strong = rng.choice(features, 40, replace=False)
    w[strong] = rng.standard_normal(40) * 2.0
    score = X @ w + noise * rng.standard_normal(rows)
    y = np.where(score > np.quantile(score, 1 - positives), 1, -1)
    return X, y


def write_dense(path, X, y):
    """Write dense rows X with labels y as LIBSVM text (zeros left out,
    the bytes of scikit-learn's writer, as :func:`write_bag_of_words`)."""
    import scipy.sparse as sp
    write_sparse_rows(path, sp.csr_matrix(np.round(X, 6)), y)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--features", type=int, default=200_000)
    ap.add_argument("--nnz-per-row", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--noise", type=float, default=None,
                    help="fraction of flipped labels (default 0.05); with --task r the noise's standard deviation "
                    "(default 0.1)")
    ap.add_argument("--task", choices=["c", "r"], default="c", help="c: +1/-1 labels; r: regression targets")
    ap.add_argument("--skew", type=float, default=2.0,
                    help="index = features * u**skew, u uniform: 1 = uniform indices")
    ap.add_argument("--compress", choices=["xz"], default=None)
    ap.add_argument("--first-block", type=int, default=0,
                    help="number of the first block of rows: another value gives other rows of the same model "
                    "(a test set)")
    ap.add_argument("--queries", type=int, default=None,
                    help="ranking rows: relevance 0-3 and qid:, in this many queries of varying size "
                    "(--noise is then the noise/score standard-deviation ratio)")
    ap.add_argument("--classes", type=int, default=None,
                    help="K > 2: multi-class labels 1..K (the best of K hidden models; --noise: the fraction "
                    "given a random class)")
    ap.add_argument("--dense", action="store_true",
                    help="every feature in every row, labels the signs of w . (x - 0.5) (balanced classes)")
    ap.add_argument("--output", "-o", required=True)
    a = ap.parse_args(argv)
    if a.features < 1 or a.features > 2**31 - 1:
        ap.error("--features must be in 1..2147483647")
    if a.queries is not None and a.task != "c":
        ap.error("--queries writes ranking rows (relevance labels): leave out --task r")
    if a.classes is not None and (a.classes < 3 or a.task != "c" or a.queries is not None):
        ap.error("--classes K needs K >= 3, classification and no --queries")
    if a.dense and (a.task != "c" or a.queries is not None or a.classes is not None):
        ap.error("--dense writes two-class rows: leave out --task r, --queries and --classes")
    t0 = time.perf_counter()
    size = generate(a.output, a.rows, a.features, a.nnz_per_row, a.seed, a.noise,
                    a.compress, verbose=True, skew=a.skew, first_block=a.first_block, task=a.task,
                    queries=a.queries, classes=a.classes, dense=a.dense)
    print(f"wrote {a.output}: {size / 1e6:.1f} MB in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
