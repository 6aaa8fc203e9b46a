"""The contour plot of a grid search (``svm-train --grid -png FILE``), as
grid.py draws with gnuplot: the CV rate over log2(C) and log2(gamma).
matplotlib is an optional extra (``pip install svmtrain[plot]``)."""
from ..errors import ParameterError


def require_matplotlib():
    """matplotlib.pyplot (the Agg backend), or ParameterError naming the extra."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ParameterError("-png needs matplotlib: pip install 'svmtrain[plot]' (or matplotlib)") from None
    return plt


def contour_png(result, path, title):
    """Write a contour plot of ``result``'s rates (a GridResult with both
    axes) to ``path`` (PNG), the best point marked."""
    plt = require_matplotlib()
    import numpy as np
    pts = [p for p in result.points if p.log2c is not None and p.log2g is not None]
    if not pts:
        raise ParameterError("-png draws C against gamma: give both -log2c and -log2g ranges")
    cs = sorted({p.log2c for p in pts})
    gs = sorted({p.log2g for p in pts})
    Z = np.full((len(gs), len(cs)), np.nan)
    for p in pts:
        Z[gs.index(p.log2g), cs.index(p.log2c)] = p.rate
    fig, ax = plt.subplots(figsize=(6, 5))
    cf = ax.contourf(cs, gs, Z, levels=20, cmap="viridis")
    fig.colorbar(cf, ax=ax, label="CV accuracy (%)")
    b = result.best
    ax.plot([b.log2c], [b.log2g], "r*", markersize=12, label=f"best: {b.rate}%")
    ax.set_xlabel("log2(C)")
    ax.set_ylabel("log2(gamma)")
    ax.set_title(title)
    ax.legend(loc="lower right")
    fig.savefig(path, dpi=100)
    plt.close(fig)
