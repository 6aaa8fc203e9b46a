"""An LRU cache of kernel rows K(x_j, .) over all rows of a data set.

The kernel solvers (``-s sbp``, kernel ``-s pegasos``) update every
response after each step with one kernel row K(x_j, x_i), i = 1..n, and
they keep coming back to the same few thousand violators, so rows are
worth keeping. A :class:`KernelCache` holds up to ``cache_mb`` MB of rows
(at least one batch) as float32 in one matrix ``M[slot, i]``; ``slot_of[j]``
is the slot of row j or -1, and the least recently used slot is evicted.
The state lives in NumPy arrays so that the numba step loops can fetch
rows without returning to Python (:func:`fetch`).

Missing rows of a batch are computed together: the batch is densified
into ``D[feature, b]`` once and each data row is streamed once for all b,
which costs far less per row than one row at a time. The RBF exponential
uses :func:`exp_neg`, a polynomial-and-squaring exp accurate to about
1e-13 relative (it vectorises; ``math.exp`` does not). Rows are kept in
float32 (7 digits): the solvers add many of them into float64 responses.
"""
import math

import numpy as np
from numba import njit, prange

from .._numba import options as opts
from .._numba.options import PRANGE, serial_twin
from .functions import PRECOMPUTED, RBF, densify_rows, kernel_from_dot, sq_norms

# rows of the data are processed in blocks of this many per thread task
ROW_BLOCK = 256
# the state vector: clock (LRU time), hits, misses
CLOCK, HITS, MISSES = 0, 1, 2


@njit(cache=True, nogil=True, inline="always")
def exp_poly(u):
    """exp(u) for -0.5 <= u <= 0: Taylor polynomial of degree 13 (error below 1e-16 relative)."""
    r = 1.0 / 6227020800.0
    r = r * u + 1.0 / 479001600.0
    r = r * u + 1.0 / 39916800.0
    r = r * u + 1.0 / 3628800.0
    r = r * u + 1.0 / 362880.0
    r = r * u + 1.0 / 40320.0
    r = r * u + 1.0 / 5040.0
    r = r * u + 1.0 / 720.0
    r = r * u + 1.0 / 120.0
    r = r * u + 1.0 / 24.0
    r = r * u + 1.0 / 6.0
    r = r * u + 0.5
    r = r * u + 1.0
    r = r * u + 1.0
    return r


@njit(cache=True, nogil=True, inline="always")
def exp_neg(x, squarings):
    """exp(x) for x <= 0 with |x| <= 0.5 * 2**squarings: exp_poly(x / 2**s) squared s times.

    Each squaring doubles the relative error: below 2**s * 2e-15.
    """
    r = exp_poly(x * 0.5 ** squarings)
    for _ in range(squarings):
        r = r * r
    return r


def squarings_for(kernel, max_sq):
    """How many squarings exp_neg needs for RBF arguments down to -gamma * 4 max|x|^2."""
    if kernel.code != RBF:
        return 0
    worst = float(kernel.gamma) * 4.0 * float(max_sq)
    if not worst > 0.5:
        return 0
    return min(1100, int(math.ceil(math.log2(worst / 0.5))))


@njit(cache=True, nogil=True, inline="always")
def _kval(dot, sq_i, sq_j, code, gamma, degree, coef0, squarings):
    if code == RBF:
        d2 = sq_i + sq_j - 2.0 * dot
        if d2 < 0.0:
            d2 = 0.0
        return exp_neg(-gamma * d2, squarings)
    return kernel_from_dot(dot, sq_i, sq_j, code, gamma, degree, coef0)


# fastmath without "reassoc": the element-wise loops still vectorise, but the
# sparse dot products stay sequential sums (a reassociated sum vectorises into
# gathers, which took 1.5x the time on the 2-core AMD EPYC machine)
NO_REASSOC = {"nnan", "ninf", "nsz", "arcp", "contract", "afn"}


@njit(cache=True, nogil=True, parallel=PRANGE, fastmath=NO_REASSOC)
def rows_into(indptr, indices, values, sq, D, sq_b, m, code, gamma, degree, coef0, squarings, M, slots, rows):
    """M[slots[b], c] = K(x_r, column b of D) for b < m and every c, where
    r = rows[c], or (``rows`` empty: never an empty subset) every data row
    r = c (in parallel over blocks of c).

    Per block: the dot products of each row with all m columns (one gather
    of D[f, :] per stored entry), then the kernel function column by column
    in float64, stored as M's type (float32). A value depends only on the
    two rows, never on the block or on m's other columns: the cache's rows
    and a -s smo working set's block (``rows`` its members) hold the same bits.
    """
    subset = rows.shape[0] > 0
    n = rows.shape[0] if subset else indptr.shape[0] - 1
    d = D.shape[0]
    n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    g = gamma * 0.5 ** squarings
    for blk in prange(n_blocks):
        lo = blk * ROW_BLOCK
        h = min(n, lo + ROW_BLOCK) - lo
        dots = np.zeros((h, m))
        tmp = np.empty(h)
        sq_r = np.empty(h)
        for i in range(h):
            sq_r[i] = sq[rows[lo + i] if subset else lo + i]
        if m == 1:          # one row (the SMO steps): a plain dot product per data row
            for i in range(h):
                r = rows[lo + i] if subset else lo + i
                acc = 0.0
                for p in range(indptr[r], indptr[r + 1]):
                    f = indices[p]
                    if f < d:
                        acc += values[p] * D[f, 0]
                dots[i, 0] = acc
        else:
            for i in range(h):
                r = rows[lo + i] if subset else lo + i
                for p in range(indptr[r], indptr[r + 1]):
                    f = indices[p]
                    if f < d:
                        x = values[p]
                        for b in range(m):
                            dots[i, b] += x * D[f, b]
        for b in range(m):
            sqb = sq_b[b]
            if code == RBF:
                for i in range(h):
                    tmp[i] = -g * max(sq_r[i] + sqb - 2.0 * dots[i, b], 0.0)
                for i in range(h):
                    tmp[i] = exp_poly(tmp[i])
                for _ in range(squarings):
                    for i in range(h):
                        tmp[i] = tmp[i] * tmp[i]
            else:
                for i in range(h):      # (code is not RBF here: _kval would call just this)
                    tmp[i] = kernel_from_dot(dots[i, b], sq_r[i], sqb, code, gamma, degree, coef0)
            row = slots[b]
            for i in range(h):
                M[row, lo + i] = tmp[i]


@njit(cache=True, nogil=True)
def _evict(owner, stamp, slot_of, clock):
    """The least recently used slot not touched at ``clock`` (the current batch).
    (Not inlined into fetch: numba's inlined copy scanned the slots half as
    fast, measured on a9a with a full cache.)"""
    best = -1
    best_stamp = clock
    for s in range(owner.shape[0]):
        if owner[s] < 0:
            return s
        if stamp[s] < best_stamp:
            best_stamp = stamp[s]
            best = s
    if best >= 0:
        slot_of[owner[best]] = -1
        owner[best] = -1
    return best


@njit(cache=True, nogil=True)
def fetch(js, indptr, indices, values, sq, code, gamma, degree, coef0, squarings,
          M, slot_of, owner, stamp, state, D, miss_rows, miss_slots, out_slots):
    """out_slots[b] = the slot of M holding K(x_{js[b]}, .), computing the
    missing rows together, D.shape[1] at a time.

    ``D`` (float64[d, >= 1]), ``miss_rows`` and ``miss_slots`` (int64[>= len(js)])
    are scratch. The rows of js that are cached are marked used first, so
    that a missing row never evicts one that js asks for; the cache must
    have at least len(js) slots.
    """
    state[CLOCK] += 1
    clock = state[CLOCK]
    for b in range(js.shape[0]):
        s = slot_of[js[b]]
        out_slots[b] = s
        if s >= 0:
            stamp[s] = clock
            state[HITS] += 1
    n_miss = np.int64(0)  # (a literal 0 would make numba compile rows_into twice)
    for b in range(js.shape[0]):
        if out_slots[b] >= 0:
            continue
        j = js[b]
        s = slot_of[j]
        if s >= 0:          # a row repeated within js: computed once
            out_slots[b] = s
            state[HITS] += 1
            continue
        s = _evict(owner, stamp, slot_of, clock)
        owner[s] = j
        slot_of[j] = s
        stamp[s] = clock
        miss_rows[n_miss] = j
        miss_slots[n_miss] = s
        out_slots[b] = s
        n_miss += 1
    if n_miss > 0:
        state[MISSES] += n_miss
        step = D.shape[1]
        sq_b = np.empty(min(n_miss, step))
        for lo in range(0, n_miss, step):
            m = min(step, n_miss - lo)
            for q in range(m):
                sq_b[q] = sq[miss_rows[lo + q]]
            densify_rows(indptr, indices, values, miss_rows[lo:], m, D.shape[0], D)
            rows_into(indptr, indices, values, sq, D, sq_b, m, code, gamma, degree, coef0, squarings,
                      M, miss_slots[lo:lo + m], miss_rows[:0])
    return n_miss


@njit(cache=True, nogil=True, parallel=PRANGE)
def partial_row(r, rowc, m, out, dense, indptr, indices, values, sq, code, gamma, degree, coef0, squarings):
    """out[q] = K(x_r, x_rowc[q]) for q < m (in out's dtype: -s smo's
    float32 rows, -s cvm's float64), in parallel over blocks of q; ``dense``
    (float64[d], zero) is scratch, zero again after; features >= d are
    ignored. The serial twin ``partial_row_serial`` computes the same numbers."""
    d = dense.shape[0]
    for p in range(indptr[r], indptr[r + 1]):
        if indices[p] < d:
            dense[indices[p]] = values[p]
    sq_r = sq[r]
    n_blocks = (m + ROW_BLOCK - 1) // ROW_BLOCK
    for blk in prange(n_blocks):
        for q in range(blk * ROW_BLOCK, min(m, (blk + 1) * ROW_BLOCK)):
            t = rowc[q]
            dot = 0.0
            for p in range(indptr[t], indptr[t + 1]):
                f = indices[p]
                if f < d:
                    dot += values[p] * dense[f]
            out[q] = _kval(dot, sq[t], sq_r, code, gamma, degree, coef0, squarings)
    for p in range(indptr[r], indptr[r + 1]):
        if indices[p] < d:
            dense[indices[p]] = 0.0


# Serial twins (svmtrain._numba.options.serial_twin): the solvers' step loops
# run them on data of fewer than PARALLEL_MIN_NNZ stored values, where the
# row blocks of rows_into are few and small; the same numbers either way.
rows_into_serial = serial_twin(rows_into)
fetch_serial = serial_twin(fetch, {"rows_into": rows_into_serial})
partial_row_serial = serial_twin(partial_row)


class KernelCache:
    """Kernel rows K(x_j, x_i) over every row i of ``X`` (a Chunk), at most ``cache_mb`` MB.

    ``kernel`` must be resolved (gamma set). ``max_batch`` is the most rows
    one :meth:`rows` call (or one numba :func:`fetch`) asks for; the cache
    always has room for one batch even when ``cache_mb`` is smaller.
    A precomputed kernel (-t 4; X checked by
    :func:`svmtrain.mercer.precomputed.check_training`) holds every row
    from the start, whatever ``cache_mb`` (its kernel values are the data):
    filled, no fetch ever misses; ``sq`` is its diagonal.
    """

    def __init__(self, X, kernel, cache_mb, max_batch=1, n_features=None):
        if kernel.code == PRECOMPUTED:
            self._precomputed(X, kernel, max_batch, n_features)
            return
        self.X = X
        self.kernel = kernel
        self.n = X.n_rows
        d = max(X.n_features if n_features is None else int(n_features), 1)
        self.sq = sq_norms(X.indptr, X.values)
        per_row = 4 * max(self.n, 1)
        slots = int(cache_mb * (1 << 20)) // per_row
        self.slots = int(max(min(slots, self.n), max_batch, 1))
        self.M = np.empty((self.slots, max(self.n, 1)), np.float32)
        self.slot_of = np.full(max(self.n, 1), -1, np.int64)
        self.owner = np.full(self.slots, -1, np.int64)
        self.stamp = np.zeros(self.slots, np.int64)
        self.state = np.zeros(3, np.int64)
        self.max_batch = int(max(max_batch, 1))
        self.D = np.zeros((d, self.max_batch))
        self.miss_rows = np.empty(self.max_batch, np.int64)
        self.miss_slots = np.empty(self.max_batch, np.int64)
        self.squarings = squarings_for(kernel, self.sq.max() if self.n else 0.0)
        code, gamma, degree, coef0 = kernel.params()
        self.kparams = (code, gamma, degree, coef0, self.squarings)
        self.scratch = {}       # buffers that runs sharing this cache reuse (their own keys)
        self.filled = False     # every row computed by fill() (none is ever evicted then)

    def _precomputed(self, X, kernel, max_batch, n_features):
        """The cache of a precomputed kernel: the whole matrix, resident."""
        from .precomputed import training_matrix
        self.X = X
        self.kernel = kernel
        self.n = X.n_rows
        M, self.sq = training_matrix(X)
        self.slots = max(self.n, 1)
        self.M = M if self.n else np.zeros((1, 1), np.float32)
        self.slot_of = np.arange(max(self.n, 1), dtype=np.int64)
        self.owner = np.arange(self.slots, dtype=np.int64)
        self.stamp = np.zeros(self.slots, np.int64)
        self.state = np.zeros(3, np.int64)
        self.max_batch = int(max(max_batch, 1))
        self.D = np.zeros((1, self.max_batch))      # (never used: no row is computed)
        self.miss_rows = np.empty(self.max_batch, np.int64)
        self.miss_slots = np.empty(self.max_batch, np.int64)
        self.squarings = 0
        code, gamma, degree, coef0 = kernel.params()
        self.kparams = (code, gamma, degree, coef0, self.squarings)
        self.scratch = {}
        self.filled = True

    @property
    def hits(self):
        return int(self.state[HITS])

    @property
    def misses(self):
        return int(self.state[MISSES])

    def args(self):
        """The arguments of :func:`fetch` after ``js``, in order (for numba callers)."""
        code, gamma, degree, coef0, squarings = self.kparams
        X = self.X
        return (X.indptr, X.indices, X.values, self.sq, code, gamma, degree, coef0, squarings,
                self.M, self.slot_of, self.owner, self.stamp, self.state, self.D,
                self.miss_rows, self.miss_slots)

    @property
    def full(self):
        """Whether every row fits (then :meth:`fill` computes them all once)."""
        return self.slots >= self.n

    def fill(self):
        """Compute every row now, ``max_batch`` at a time (when they all fit;
        otherwise nothing): the cache then holds the whole kernel matrix, in
        the same numbers as rows fetched one by one, and no later fetch
        misses. (A precomputed kernel's cache is filled from the start.)"""
        if not self.full or self.kernel.code == PRECOMPUTED:
            return
        slots = np.empty(self.max_batch, np.int64)
        get = fetch if self.X.nnz >= opts.PARALLEL_MIN_NNZ else fetch_serial
        for lo in range(0, self.n, self.max_batch):
            js = np.arange(lo, min(self.n, lo + self.max_batch), dtype=np.int64)
            get(js, *self.args(), slots[:len(js)])
        self.filled = True

    def demote(self, js):
        """Mark the cached rows of js least recently used: the next missing
        rows evict them before any other. (Only which rows are kept changes,
        never a value: for a solver that knows a row will not be needed soon.)"""
        slots = self.slot_of[np.asarray(js, np.int64)]
        self.stamp[slots[slots >= 0]] = 0

    def rows(self, js):
        """float32[len(js), n]: K(x_j, x_i) for each j in js (a copy of the cached rows)."""
        js = np.ascontiguousarray(js, np.int64)
        if len(js) > self.max_batch:
            raise ValueError(f"at most {self.max_batch} rows per call")
        slots = np.empty(len(js), np.int64)
        fetch(js, *self.args(), slots)
        return self.M[slots]
