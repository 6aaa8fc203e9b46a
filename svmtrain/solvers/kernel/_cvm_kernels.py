"""numba kernels of the Core Vector Machine (Tsang, Kwok, Cheung, JMLR 6, 2005).

The points are phi~(z_i) of the transformed kernel of the paper's two-class L2-SVM

    K~_ij = y_i y_j (k(x_i, x_j) + 1) + delta_ij / C,   K~_ii = eta = kappa + 1 + 1/C,

and a ball is given by the weights alpha >= 0, sum alpha = 1, of its centre
c = sum_{j in core} alpha_j phi~(z_j) over the core set. With G = K~ alpha
(over the core set) and rho = alpha' G = |c|^2, its radius is
R^2 = eta - rho, and a point z outside the core set lies at

    |c - phi~(z)|^2 = eta + rho - 2 y_z u_z,
    u_z = sum_{j in core} alpha_j y_j (k(x_j, x_z) + 1)      (the "score" of z).

State of a run (one binary problem), all NumPy arrays:

* ``core[a]``: data row of core point a (a < ncore); ``Kt[a, b]`` = K~ among
  the core points (float64[cap, cap], grown by one row and column per
  iteration); ``alpha``, ``G`` over the core points;
* ``out_list[:n_out]``: the rows not in the core set (any order),
  ``out_pos[i]`` the position of row i in it, -1 for a core row;
* ``istate`` (int64): ncore, n_out, iterations, SMO steps, kernel values
  computed; ``fstate`` (float64): rho.

Kernel values come straight from the CSR rows and their squared norms
(RBF with :func:`svmtrain.mercer.cache.exp_neg`, accurate to about 1e-13).
"""
import numpy as np
from numba import njit, prange

from ..._numba import options as _opts
from ..._numba.options import PRANGE, arg_index, by_size, serial_twin
from ...mercer.cache import NO_REASSOC, _kval, exp_poly, partial_row_serial
from ...mercer.functions import RBF, densify_rows

# integer state
I_NCORE, I_NOUT, I_ITER, I_SMO, I_KEVALS = range(5)
ISTATE_SIZE = 5
# float state
F_RHO = 0
FSTATE_SIZE = 1
# return codes of cvm_steps
RUNNING, CONVERGED, FULL = 0, 1, 2
BLOCK = 64          # candidate rows densified together (columns of D)
SV_BLOCK = 512      # core points per parallel task when few candidates are scored
TAU = 1e-12         # the curvature of a pair when K~ gives none (LIBSVM's TAU)


@njit(cache=True, nogil=True, fastmath=NO_REASSOC)
def _accumulate(indptr, indices, values, sq, cand, m, D, sv_rows, sv_w, lo, hi,
                code, gamma, degree, coef0, squarings, acc):
    """acc[b] += sum_{lo <= s < hi} sv_w[s] (k(x_{cand[b]}, x_{sv_rows[s]}) + 1) for b < m.

    Column b of ``D`` (float64[d, >= m]) holds row cand[b] densified. Per
    core point: the m dot products (one pass over its stored values), then
    the kernel function over the m columns (RBF: the exp_neg of
    :func:`_kval`, step by step over all columns so that it vectorises).
    """
    d = D.shape[0]
    dots = np.empty(m)
    sqc = np.empty(m)
    for b in range(m):
        sqc[b] = sq[cand[b]]
    g = gamma * 0.5 ** squarings
    for s in range(lo, hi):
        j = sv_rows[s]
        dots[:] = 0.0
        for p in range(indptr[j], indptr[j + 1]):
            f = indices[p]
            if f < d:
                v = values[p]
                for b in range(m):
                    dots[b] += v * D[f, b]
        w = sv_w[s]
        sqj = sq[j]
        if code == RBF:
            for b in range(m):
                dots[b] = exp_poly(-g * max(sqc[b] + sqj - 2.0 * dots[b], 0.0))
            for _ in range(squarings):
                for b in range(m):
                    dots[b] = dots[b] * dots[b]
        else:
            for b in range(m):
                dots[b] = _kval(dots[b], sqc[b], sqj, code, gamma, degree, coef0, squarings)
        for b in range(m):
            acc[b] += w * (dots[b] + 1.0)


@njit(cache=True, nogil=True, parallel=PRANGE)
def scores_few(indptr, indices, values, sq, cand, m, sv_rows, sv_w, n_sv,
               code, gamma, degree, coef0, squarings, D, out):
    """out[b] = sum_s sv_w[s] (k(x_{cand[b]}, x_{sv_rows[s]}) + 1) for b < m <= D.shape[1]
    (s < n_sv), in parallel over blocks of SV_BLOCK core points (a sample of candidates)."""
    densify_rows(indptr, indices, values, cand, m, D.shape[0], D)
    nb = (n_sv + SV_BLOCK - 1) // SV_BLOCK
    part = np.zeros((max(nb, 1), m))
    for t in prange(nb):
        _accumulate(indptr, indices, values, sq, cand, m, D, sv_rows, sv_w, t * SV_BLOCK,
                    min(n_sv, (t + 1) * SV_BLOCK), code, gamma, degree, coef0, squarings, part[t])
    for b in range(m):
        acc = 0.0
        for t in range(nb):
            acc += part[t, b]
        out[b] = acc


@njit(cache=True, nogil=True, parallel=PRANGE)
def scores_many(indptr, indices, values, sq, cand, m, sv_rows, sv_w, n_sv,
                code, gamma, degree, coef0, squarings, d, out):
    """out[b] as :func:`scores_few` for every b < m, in parallel over blocks of BLOCK candidates
    (each densified into its own float64[d, BLOCK] scratch)."""
    nb = (m + BLOCK - 1) // BLOCK
    for t in prange(nb):
        lo = t * BLOCK
        mb = min(m, lo + BLOCK) - lo
        rows = cand[lo:lo + mb]
        D = np.empty((d, mb))
        densify_rows(indptr, indices, values, rows, mb, d, D)
        acc = np.zeros(mb)
        _accumulate(indptr, indices, values, sq, rows, mb, D, sv_rows, sv_w, 0, n_sv,
                    code, gamma, degree, coef0, squarings, acc)
        out[lo:lo + mb] = acc


@njit(cache=True, nogil=True)
def _pick_j(ri, G, alpha, gi, quad0, tol, n):
    """(k, gain) of the largest second-order gain (G_k - gi)^2 / (quad0 - 2 ri[k]) over
    k < n with alpha_k > 0 and G_k - gi > tol (the first such k on ties); (-1, 0) if none."""
    j = -1
    best = 0.0
    for k in range(n):
        diff = G[k] - gi
        if alpha[k] > 0.0 and diff > tol:
            quad = quad0 - 2.0 * ri[k]
            if quad <= 0.0:
                quad = TAU
            gain = diff * diff / quad
            if gain > best:
                best = gain
                j = k
    return j, best


@njit(cache=True, nogil=True)
def _move(ri, rj, G, t, n):
    """G_k += t (ri[k] - rj[k]) for k < n; returns the first argmin of the new G."""
    i = 0
    gmin = np.inf
    for k in range(n):
        g = G[k] + t * (ri[k] - rj[k])
        G[k] = g
        if g < gmin:
            gmin = g
            i = k
    return i


@njit(cache=True, nogil=True)
def smo(Kt, eta, alpha, G, n, tol, max_steps):
    """Minimise 1/2 alpha' Kt alpha over the simplex of the first n core points (Kt symmetric
    with constant diagonal eta), from alpha (feasible) with G = Kt alpha; returns the number of
    pair steps.

    A step moves weight t from j to i: i = argmin G (first order), j the
    point with alpha_j > 0 of the largest second-order gain
    (G_j - G_i)^2 / (2 eta - 2 Kt_ij) (the working-set choice of LibCVM's
    solver), t the exact line minimum clipped to alpha_j; two passes over
    the core points (the choice of j; the update of G with the next
    argmin). It stops when max_{alpha_j > 0} G_j - min_i G_i <= tol (the
    KKT conditions of the simplex to tol) or after max_steps steps. G stays
    equal to Kt alpha (to rounding). (Steps are too short to share among
    threads: a parallel region per pass made them slower.)
    """
    i = 0
    for k in range(1, n):
        if G[k] < G[i]:
            i = k
    steps = 0
    while steps < max_steps:
        gi = G[i]
        ri = Kt[i]
        quad0 = ri[i] + eta
        j, _ = _pick_j(ri, G, alpha, gi, quad0, tol, n)
        if j < 0:
            break
        rj = Kt[j]
        quad = quad0 - 2.0 * ri[j]
        if quad <= 0.0:
            quad = TAU
        t = (G[j] - gi) / quad
        if t >= alpha[j]:
            t = alpha[j]
            alpha[j] = 0.0
        else:
            alpha[j] -= t
        alpha[i] += t
        i = _move(ri, rj, G, t, n)
        steps += 1
    return steps


@njit(cache=True, nogil=True, inline="always")
def _farthest(rows, m, u, y, eta, rho, best, bestd):
    """(row, d2) of the row of rows[:m] farthest from the centre, d2 = eta +
    rho - 2 y u[b] (u[b] the centre's score of rows[b]), if beyond
    ``bestd``; else (best, bestd) unchanged."""
    for b in range(m):
        r = rows[b]
        d2 = eta + rho - 2.0 * y[r] * u[b]
        if d2 > bestd:
            bestd = d2
            best = r
    return best, bestd


@njit(cache=True, nogil=True)
def centre_norm(alpha, G, n):
    """rho = alpha' G = |c|^2 over the first n core points."""
    rho = 0.0
    for a in range(n):
        rho += alpha[a] * G[a]
    return rho


@njit(cache=True, nogil=True)
def support(core, alpha, y, n, sv_rows, sv_w):
    """The core points of the centre (alpha > 0): their rows into sv_rows, alpha y into sv_w; returns their count."""
    k = 0
    for a in range(n):
        if alpha[a] > 0.0:
            sv_rows[k] = core[a]
            sv_w[k] = alpha[a] * y[core[a]]
            k += 1
    return k


@njit(cache=True, nogil=True)
def add_point(r, y, eta, core, Kt, alpha, G, out_list, out_pos, istate,
              indptr, indices, values, sq, code, gamma, degree, coef0, squarings, dense, krow):
    """Move row r from the outside list into the core set with alpha = 0: one new row and
    column of Kt (k(x_r, x_core) computed here) and G_r = sum_a alpha_a Kt[r, a]."""
    a = istate[I_NCORE]
    n_out = istate[I_NOUT]
    p = out_pos[r]
    last = out_list[n_out - 1]
    out_list[p] = last
    out_pos[last] = p
    out_pos[r] = -1
    istate[I_NOUT] = n_out - 1
    partial_row_serial(r, core, a, krow, dense, indptr, indices, values, sq, code, gamma, degree, coef0, squarings)
    istate[I_KEVALS] += a
    yr = y[r]
    g = 0.0
    for b in range(a):
        v = yr * y[core[b]] * (krow[b] + 1.0)
        Kt[a, b] = v
        Kt[b, a] = v
        g += alpha[b] * v
    Kt[a, a] = eta
    core[a] = r
    alpha[a] = 0.0
    G[a] = g
    istate[I_NCORE] = a + 1


@njit(cache=True, nogil=True)
def farthest(uniforms_t, y, eta, rho, thresh, sv_rows, sv_w, n_sv, out_list, n_out, cand, u, istate,
             indptr, indices, values, sq, code, gamma, degree, coef0, squarings, D):
    """The outside row farthest from the centre among those beyond distance^2 ``thresh``, or -1.

    ``uniforms_t`` (float64[rounds, S]): with S > 0, each round scores a
    sample of S outside rows (row out_list[floor(u * n_out)] per uniform u,
    with replacement) and the search stops at the first round with a row
    beyond thresh (the farthest of that round); with S == 0 every outside
    row is scored (the exact farthest point).
    """
    rounds, S = uniforms_t.shape
    best = -1
    bestd = thresh
    if S == 0:
        scores_many(indptr, indices, values, sq, out_list, n_out, sv_rows, sv_w, n_sv,
                    code, gamma, degree, coef0, squarings, D.shape[0], u)
        istate[I_KEVALS] += n_out * n_sv
        return _farthest(out_list, n_out, u, y, eta, rho, best, bestd)[0]
    for rnd in range(rounds):
        for b in range(S):
            q = int(uniforms_t[rnd, b] * n_out)
            cand[b] = out_list[min(q, n_out - 1)]
        scores_few(indptr, indices, values, sq, cand, S, sv_rows, sv_w, n_sv,
                   code, gamma, degree, coef0, squarings, D, u)
        istate[I_KEVALS] += S * n_sv
        best, bestd = _farthest(cand, S, u, y, eta, rho, best, bestd)
        if best >= 0:
            break
    return best


@njit(cache=True, nogil=True)
def cvm_steps_kernel(steps, uniforms, eps, smo_frac, max_smo, y, eta, core, Kt, alpha, G, out_list, out_pos,
                     sv_rows, sv_w, istate, fstate, indptr, indices, values, sq, code, gamma, degree, coef0,
                     squarings, D, dense, cand, u, krow):
    """At most ``steps`` core-set iterations (steps 2-3 of cvm.py's docstring); returns
    CONVERGED (no scored outside row beyond (1 + eps) R, or none left), FULL
    (the core set fills Kt: grow it and call again) or RUNNING.

    Iteration t uses uniforms[t] (float64[steps, rounds, S], see
    :func:`farthest`): a run is the same whatever the ``steps`` of each
    call. After adding the farthest row, the core-set problem is solved
    again by :func:`smo` from the previous alpha, to
    max G - min G <= smo_frac * eps * R^2, so every core point lies within
    R^2 (1 + 2 smo_frac eps) of the centre.
    """
    cap = Kt.shape[0]
    factor = (1.0 + eps) * (1.0 + eps)
    for t in range(steps):
        ncore = istate[I_NCORE]
        n_out = istate[I_NOUT]
        if n_out == 0:
            return CONVERGED
        if ncore >= cap:
            return FULL
        rho = fstate[F_RHO]
        r2 = eta - rho
        n_sv = support(core, alpha, y, ncore, sv_rows, sv_w)
        r = farthest(uniforms[t], y, eta, rho, factor * r2, sv_rows, sv_w, n_sv, out_list, n_out, cand, u,
                     istate, indptr, indices, values, sq, code, gamma, degree, coef0, squarings, D)
        if r < 0:
            return CONVERGED
        add_point(r, y, eta, core, Kt, alpha, G, out_list, out_pos, istate,
                  indptr, indices, values, sq, code, gamma, degree, coef0, squarings, dense, krow)
        istate[I_SMO] += smo(Kt, eta, alpha, G, istate[I_NCORE], smo_frac * eps * r2, max_smo)
        fstate[F_RHO] = centre_norm(alpha, G, istate[I_NCORE])
        istate[I_ITER] += 1
    return RUNNING


@njit(cache=True, nogil=True)
def all_scores_kernel(indptr, indices, values, sq, sv_rows, sv_w, n_sv, code, gamma, degree, coef0, squarings,
                      d, out):
    """out[i] = sum_s sv_w[s] (k(x_i, x_{sv_rows[s]}) + 1) for every row i (the centre's scores)."""
    n = indptr.shape[0] - 1
    rows = np.arange(n)
    scores_many(indptr, indices, values, sq, rows, n, sv_rows, sv_w, n_sv,
                code, gamma, degree, coef0, squarings, d, out)


# Serial twins (svmtrain._numba.options.serial_twin) for data of fewer than
# PARALLEL_MIN_NNZ stored values: no parallel code is compiled for small
# problems; the same numbers either way.
scores_few_serial = serial_twin(scores_few)
scores_many_serial = serial_twin(scores_many)
farthest_serial = serial_twin(farthest, {"scores_few": scores_few_serial, "scores_many": scores_many_serial})
cvm_steps_serial = serial_twin(cvm_steps_kernel, {"farthest": farthest_serial})
all_scores_serial = serial_twin(all_scores_kernel, {"scores_many": scores_many_serial})


_STEPS_INDPTR = arg_index(cvm_steps_kernel, "indptr")
cvm_steps = by_size(cvm_steps_kernel, cvm_steps_serial,
                    lambda args: args[_STEPS_INDPTR][-1] >= _opts.PARALLEL_MIN_NNZ)
all_scores = by_size(all_scores_kernel, all_scores_serial, lambda args: args[0][-1] >= _opts.PARALLEL_MIN_NNZ)
