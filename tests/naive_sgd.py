"""Plain NumPy twins of -s sgd's three update rules (dense w, every step written out)."""
import numpy as np

from naive import loss_slope


def sgd(X, y, rows, rule, eta0, decay, lam, B=0.0, unreg_bias=False, loss="hinge", p=0.0, l1=0.0, skip=16):
    """The steps of ``rule`` ("bottou", "sgdqn", "fobos") on the rows of the
    dense X in the order ``rows``, eta_t = eta0 / (1 + decay t); returns
    (w_ext, b) with the constant feature's weight last.

    bottou: w <- (1 - eta lambda) w + eta g x (g at the old w).
    sgdqn: Bordes et al. (2009), Fig. 2, with D = lambda B: w += eta g D x;
      after the step that follows a regularisation, D_j moves 2/r of the way
      to lambda dw_j / dgrad_j (dgrad = lambda dw - (g_new - g) x) on the
      features the step moved, floored at 1e-2; every skip steps
      w_j *= max(0, 1 - skip eta lambda D_j).
    fobos: w_half = w + eta g x, then for every feature
      w = sign(w_half) max(|w_half| - eta l1, 0) / (1 + eta lambda).
    """
    Xe = np.hstack([X, np.full((X.shape[0], 1), B)])
    w = np.zeros(Xe.shape[1])
    D = np.ones_like(w)
    b, r, count, update = 0.0, 2.0, skip, False
    for t, i in enumerate(rows):
        eta = eta0 / (1.0 + decay * t)
        x = Xe[i]
        g = float(loss_slope(loss, w @ x + b, y[i], p))
        if rule == "bottou":
            w = max(0.0, 1.0 - eta * lam) * w + eta * g * x
            b += eta * g if unreg_bias else 0.0
        elif rule == "fobos":
            half = w + eta * g * x
            w = np.sign(half) * np.maximum(np.abs(half) - eta * l1, 0.0) / (1.0 + eta * lam)
            b += eta * g if unreg_bias else 0.0
        else:
            if g != 0.0:
                dw = eta * g * D * x
                w = w + dw
                b += eta * g if unreg_bias else 0.0
                if update:
                    change = float(loss_slope(loss, w @ x + b, y[i], p)) - g
                    dgrad = lam * dw - change * x
                    moved = (dw != 0) & (dgrad != 0)
                    D[moved] += 2.0 / r * (lam * dw[moved] / dgrad[moved] - D[moved])
                    D = np.maximum(D, 1e-2)
                    r += 1.0
                    update = False
            count -= 1
            if count <= 0:
                w = w * np.maximum(0.0, 1.0 - skip * eta * lam * D)
                count, update = skip, True
    return w, b
