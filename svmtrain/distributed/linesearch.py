"""OCAS's exact line search over partitions, with O(1) traffic per worker and round.

The local search (``_ocas_kernels.line_search``) finds the minimiser of the
piecewise quadratic phi(t) = 1/2 |w_b + t d|^2 + sum_i c_i max(0, p_i - t r_i)
by narrowing the range of breakpoints t_i = p_i / r_i where phi' changes sign
with histograms of their IEEE bit patterns (which order positive doubles
exactly), then sorting the few that remain. Here the same narrowing runs as
a conversation between the driver and the workers, each worker holding the
breakpoints of its partitions (``breakpoints`` kernel, kept in worker
memory):

1. with the outputs pass, every worker sends phi'(0+) of its loss, its
   breakpoint count, and ``summarize(prefix=all)``: its breakpoints
   themselves when it has at most LIMIT of them, otherwise a histogram of
   their weights c_i |r_i| over the 2048 exponent values (bits 63..52);
2. the driver adds the histograms (and bins the raw breakpoints the same
   way), walks the bins from phi'(0+) until phi' at a bin's upper end
   turns >= 0 (``_select_bin``), and asks every worker for the breakpoints
   inside that bin: each answers with them (<= LIMIT, or at the last
   level) or with a histogram of the next 12 bits (4096 bins);
3. when every worker answered with breakpoints, the driver sorts them and
   walks to the exact minimiser (``_walk``), as the local search does.

Bins narrow 12 bits per round (bits 52, 40, 28, 16, 4), so a search takes
at most 6 rounds, usually 2-3 (one of them shared with the outputs pass).
A worker's answer is at most LIMIT breakpoints (16 bytes each, after
merging equal values) or 4096 bins (sent as (bin, weight) pairs when
sparser), i.e. at most 48 KiB whatever the number of examples; no O(n)
data leaves a worker. The result is the exact minimiser, as locally (up to
the rounding of sums taken in another order).
"""
import numpy as np

from ..solvers.ocas import _ocas_kernels as K

LIMIT = 2048            # a worker sends its breakpoints in the bin when it has at most this many
LEVEL1_BINS = 2048      # exponent values of positive doubles (bits 62..52)
LEVEL_BITS = 12         # bits per later level
LAST_SHIFT = 4          # a bin of the last level spans 16 doubles: always answered raw
ALL = 64                # ``pshift`` of the first round: no prefix


def next_shift(pshift):
    """The bit position the histogram after a bin at ``pshift`` starts at."""
    return 52 if pshift == ALL else pshift - LEVEL_BITS


def n_bins(pshift):
    return LEVEL1_BINS if pshift == ALL else 1 << LEVEL_BITS


def _merge_equal(vals, wts):
    """Sorted distinct values with the summed weights of equal ones."""
    if len(vals) == 0:
        return vals, wts
    order = np.argsort(vals, kind="stable")
    vals, wts = vals[order], wts[order]
    first = np.flatnonzero(np.r_[True, vals[1:] != vals[:-1]])
    return vals[first], np.add.reduceat(wts, first)


def summarize(parts, prefix, pshift, nb, limit=LIMIT):
    """One worker's answer for the breakpoints of its partitions whose bit
    patterns have ``bits >> pshift == prefix`` (all of them when pshift is
    ALL). ``parts``: (kb, wb, m) per partition, from the ``breakpoints``
    kernel (m = its breakpoint count).

    Returns ("raw", values, weights) (distinct sorted values, summed
    weights) or ("hist", bins or None, weights) (the weights per bin of the
    next level; ``bins`` None means dense).
    """
    if pshift == ALL:
        count = sum(m for _, _, m in parts)
    else:
        count = sum(K.count_prefix(kb.view(np.int64), prefix, pshift, nb) for kb, _, _ in parts)
    if count <= limit or pshift <= LAST_SHIFT:
        vals, wts = [], []
        for kb, wb, _ in parts:
            if pshift == ALL:
                sel = np.flatnonzero(kb < np.inf)
                vals.append(kb[sel])
                wts.append(wb[sel])
            else:
                sk, sw = K.gather_prefix(kb, wb, prefix, pshift, nb)
                vals.append(sk)
                wts.append(sw)
        v, w = _merge_equal(np.concatenate(vals), np.concatenate(wts))
        return ("raw", v, w)
    shift = next_shift(pshift)
    nbins = n_bins(pshift)
    h = np.zeros(nbins)
    for kb, wb, _ in parts:
        h += K._prefix_hist(kb.view(np.int64), wb, prefix, pshift, shift, nbins, nb)
    nz = np.flatnonzero(h)
    if 12 * len(nz) < 8 * nbins:
        return ("hist", nz.astype(np.int32), h[nz])
    return ("hist", None, h)


def select(answers, prefix, pshift, G, lo, qa):
    """The driver's step: from every worker's answer for the bin (prefix,
    pshift), starting at its lower end ``lo`` where phi' = qa lo + G.

    Returns ("done", t) or ("next", prefix, pshift, G, lo) for the next round.
    """
    if all(a[0] == "raw" for a in answers):
        vals = np.concatenate([a[1] for a in answers])
        wts = np.concatenate([a[2] for a in answers])
        order = np.argsort(vals, kind="stable")
        return ("done", K._walk(vals, wts, order, lo, G, qa))
    shift = next_shift(pshift)
    nbins = n_bins(pshift)
    H = np.zeros(nbins)
    for a in answers:
        if a[0] == "hist":
            if a[1] is None:
                H += a[2]
            else:
                np.add.at(H, a[1], a[2])
        else:
            np.add.at(H, (a[1].view(np.int64) >> shift) & (nbins - 1), a[2])
    key0 = 0 if pshift == ALL else prefix << (pshift - shift)
    j, G = K._select_bin(H, key0, shift, G, qa)
    if pshift == ALL and j == LEVEL1_BINS - 1:     # phi' < 0 past every breakpoint
        return ("done", -G / qa)
    key = key0 + int(j)
    return ("next", key, shift, G, float(K._as_float(key << shift)))


def search(first, G, m, qa, ask):
    """The exact minimiser t >= 0 of phi, from the first round's answers
    ``first`` (one per worker, ``summarize(.., ALL, ..)``), G = qb + phi'(0+)
    of the loss, m = the number of breakpoints, and ``ask(prefix, pshift)``
    which returns every worker's answer for a bin. Returns (t, rounds asked)."""
    if G >= 0.0:
        return 0.0, 0
    if m == 0:
        return -G / qa, 0
    answers, prefix, pshift, lo = first, 0, ALL, 0.0
    rounds = 0
    while True:
        step = select(answers, prefix, pshift, G, lo, qa)
        if step[0] == "done":
            return float(step[1]), rounds
        _, prefix, pshift, G, lo = step
        answers = ask(prefix, pshift)
        rounds += 1
