"""The support matrix: every solver against every task, loss, kernel and layer, read from the registry.

``python -m svmtrain.cli.matrix`` prints it as a Markdown page
(docs/capabilities.md is that output: ``scripts/write_capabilities.py``
rewrites it, tests/test_capabilities.py fails when it is out of date);
``--text`` prints the plain-text table that ``svm-train --capabilities``
shows. Nothing here names a solver: each cell asks :mod:`svmtrain.solvers`
(the declarations), and the ``-C`` cells ask
:func:`svmtrain.selection.param_search.check_search` itself (which, for
regression, imports the solver's module to read its ``WARM_START``; the
rest of the matrix compiles and imports no solver).

Rows are the solvers in registry order; columns:

* each (task, loss) pair of :mod:`svmtrain.tasks`, its cell the layers that
  train it: in memory, ``--stream``, ``--engine dask``, sample weights, ``-C``;
* the kernel model (``yes``: whatever ``-t``; ``with -t K``: with a
  nonlinear ``-t``; ``no``: linear models only);
* ``--multiclass cs`` (Crammer-Singer): in memory, ``--stream``, ``--engine dask``;
* ``-B`` (a constant feature on linear models);
* ``--penalty``: the regularisers of its models (l2, l1);
* ``--grid`` (C and gamma of a kernel model, classification).
"""
import sys
import textwrap
from dataclasses import dataclass

from ..errors import ParameterError
from ..tasks import CLASSIFICATION, LOSSES, NAMES
from ..solvers import REGISTRY, declaration

PAIRS = tuple((task, loss) for task, losses in LOSSES.items() for loss in losses)

MEMORY, STREAM, DASK, WEIGHTS, SEARCH_C = "memory", "stream", "dask", "weights", "-C"
LAYERS = (MEMORY, STREAM, DASK, WEIGHTS, SEARCH_C)
YES, WITH_T, NO = "yes", "with -t K", "no"

# the plain-text table's letters and the Markdown page's words for each layer
CODE = {MEMORY: "m", STREAM: "s", DASK: "d", WEIGHTS: "w", SEARCH_C: "C"}
WORD = {MEMORY: "yes", STREAM: "stream", DASK: "dask", WEIGHTS: "weights", SEARCH_C: "-C"}
LEGEND = (
    (MEMORY, "trains it in memory (svm-train, svmtrain.train, the estimators)"),
    (STREAM, "also out of core (svm-train --stream / --memory-limit)"),
    (DASK, "also on a Dask cluster (svm-train --engine dask)"),
    (WEIGHTS, "takes sample weights (svmtrain.train(X, y, sample_weight=...), the estimators' fit)"),
    (SEARCH_C, "svm-train -C searches C for it (regression: C and the tube width p)"),
)
# the plain-text header of each loss (the Markdown page spells the losses out)
SHORT = {"hinge": "hinge", "squared-hinge": "sq-hinge", "log": "log", "epsilon-insensitive": "eps",
         "squared-epsilon-insensitive": "sq-eps", "pairwise-hinge": "pw-hinge",
         "pairwise-squared-hinge": "pw-sq-hinge", "one-class": "one-class"}


@dataclass(frozen=True)
class Row:
    """One solver's row: ``pairs`` maps each (task, loss) of PAIRS to the
    layers (of LAYERS, in that order) that train it, () for none;
    ``kernel`` and ``grid`` are YES, WITH_T or NO; ``multiclass_cs`` the
    layers (MEMORY, STREAM, DASK) that train its Crammer-Singer problem."""
    solver: str
    pairs: dict
    kernel: str
    multiclass_cs: tuple
    bias: bool
    grid: str
    penalties: tuple = ("l2",)

    def layers(self, task, loss):
        return self.pairs[(task, loss)]


def searches_c(name, task, loss):
    """Whether ``svm-train -s name --task task --loss loss -C`` is accepted
    (asked of param_search.check_search, with the solver's default -t)."""
    from ..params import TrainParams
    from ..selection.param_search import check_search
    try:
        check_search(TrainParams(solver=name, task=task, loss=loss), 5)
    except ParameterError:
        return False
    return True


def pair_layers(name, task, loss):
    """The layers of LAYERS that train (task, loss) with ``-s name``."""
    d = declaration(name)
    have = {
        MEMORY: d.trains(task, loss),
        STREAM: d.streams(task, loss),
        DASK: d.dask_module(task, loss) is not None,
        WEIGHTS: d.takes_sample_weights(task, loss),
        SEARCH_C: d.trains(task, loss) and searches_c(name, task, loss),
    }
    return tuple(layer for layer in LAYERS if have[layer])


def kernel_limits():
    """One sentence per solver whose kernel model trains fewer pairs than its linear one."""
    from ..solvers import REGISTRY
    return [f"-s {name} -t K trains " + "; ".join(f"{NAMES[t]} with " + ", ".join(losses)
                                                 for t, losses in d.kernelized_tasks.items()) + " only."
            for name, d in REGISTRY.items() if d.kernelized_tasks is not None]


def kernel_cell(name):
    """YES: a kernel model whatever -t; WITH_T: with a nonlinear -t; NO: linear only."""
    d = declaration(name)
    if d.trains_kernel_model(None):
        return YES
    return WITH_T if d.trains_kernel_model(2) else NO


def grid_cell(name):
    """Whether --grid searches C and gamma of ``-s name``: it trains
    classification with a kernel model (YES, or WITH_T with a nonlinear -t)."""
    return kernel_cell(name) if declaration(name).trains(CLASSIFICATION) else NO


def cs_layers(name):
    """The layers that train ``-s name --multiclass cs``."""
    d = declaration(name)
    have = {MEMORY: d.multiclass_cs is not None,
            STREAM: d.streamed is not None and d.streamed.multiclass_cs is not None,
            DASK: d.dask_cs is not None}
    return tuple(layer for layer in (MEMORY, STREAM, DASK) if have[layer])


def row(name):
    return Row(solver=name, pairs={(t, l): pair_layers(name, t, l) for t, l in PAIRS}, kernel=kernel_cell(name),
               multiclass_cs=cs_layers(name), bias=declaration(name).bias, grid=grid_cell(name),
               penalties=declaration(name).penalties)


def matrix():
    """A Row per solver, in registry order."""
    return [row(name) for name in REGISTRY]


# ------------------------------------------------------------------ rendering

def _columns(rows, spell, blank, pair_header):
    """[(group, header, [cell per row])] of the table."""
    cols = [("", "solver", [r.solver for r in rows])]
    for task, loss in PAIRS:
        cols.append((NAMES[task], pair_header(loss),
                     [spell(r.layers(task, loss)) or blank for r in rows]))
    cols.append(("", "kernel", [r.kernel for r in rows]))
    cols.append(("", "--multiclass cs", [spell(r.multiclass_cs) or blank for r in rows]))
    cols.append(("", "-B", [YES if r.bias else NO for r in rows]))
    cols.append(("", "--penalty", [", ".join(r.penalties) for r in rows]))
    cols.append(("", "--grid", [r.grid for r in rows]))
    return cols


def text(rows=None):
    """The plain-text table with its legend (svm-train --capabilities)."""
    rows = matrix() if rows is None else rows
    cols = _columns(rows, lambda layers: "".join(CODE[x] for x in layers), ".", lambda loss: SHORT.get(loss, loss))
    cols[-4] = ("", "cs", cols[-4][2])
    widths = [max(len(h), *(len(c) for c in cells)) for _, h, cells in cols]
    groups, i = [], 0
    while i < len(cols):        # the task names above their losses' columns
        j = i
        while j < len(cols) and cols[j][0] == cols[i][0]:
            j += 1
        span = sum(widths[i:j]) + 2 * (j - i - 1)
        groups.append(cols[i][0].ljust(span)[:span] if cols[i][0] else " " * span)
        i = j
    lines = ["svm-train: each solver (-s) against each task and loss (--task, --loss), kernel and layer",
             "(from the solver registry, svmtrain/solvers; docs/capabilities.md)", "",
             "  ".join(groups).rstrip(),
             "  ".join(h.ljust(w) for (_, h, _), w in zip(cols, widths)).rstrip()]
    for k in range(len(rows)):
        lines.append("  ".join(cells[k].ljust(w) for (_, _, cells), w in zip(cols, widths)).rstrip())
    lines += ["", "A task/loss cell lists what trains that pair:"]
    lines += [f"  {CODE[layer]}  {what}" for layer, what in LEGEND]
    lines += ["  .  not trained: svm-train stops (exit 2) naming the solvers that train it",
              "kernel: yes = a kernel model whatever -t; with -t K = with a nonlinear -t (1, 2, 3);",
              "        no = linear models only (-t, -g, -d, -r are refused).",
              *("        " + line for line in kernel_limits()),
              "cs: --multiclass cs (Crammer-Singer) in memory (m), with --stream (s), on Dask (d).",
              "-B: takes -B BIAS, a constant feature, on linear models.",
              "--penalty: the regularisers of its models, l2 = 1/2 |w|^2, l1 = |w|_1 (sparse weights).",
              "--grid: svm-train --grid searches C and gamma of its kernel model (classification).",
              "Losses: " + "; ".join(f"{SHORT.get(loss, loss)} = {loss}" for _, loss in PAIRS
                                    if SHORT.get(loss, loss) != loss) + "."]
    return "\n".join(textwrap.fill(line, 100, subsequent_indent="  ") if line.startswith("Losses") else line
                     for line in lines) + "\n"


def markdown(rows=None):
    """The Markdown table (one header row: task and loss in each pair's header)."""
    rows = matrix() if rows is None else rows
    cols = _columns(rows, lambda layers: ", ".join(WORD[x] for x in layers), "", lambda loss: loss)
    header = [f"{group} `{h}`" if group else h for group, h, _ in cols]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(cols)]
    for k in range(len(rows)):
        cells = [f"`{cells[k]}`" if j == 0 else cells[k] for j, (_, _, cells) in enumerate(cols)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def page(rows=None):
    """docs/capabilities.md: the Markdown table with its legend."""
    rows = matrix() if rows is None else rows
    legend = "\n".join(f"* **{WORD[layer]}**: {what}." for layer, what in LEGEND)
    return f"""# Capabilities: every solver against every task, loss, kernel and layer

Generated from the solver registry (`svmtrain/solvers`, each family's
`Declaration`) by `python scripts/write_capabilities.py`; do not edit it by
hand: tests/test_capabilities.py fails when it differs from the registry,
and trains every combination marked here (and checks that svm-train refuses
every blank one, exit status 2, naming the solvers that do train it).
`svm-train --capabilities` prints the same matrix as plain text.
[Back to the README](../README.md#documentation).

A task/loss cell lists what trains that pair with that solver (blank: the
solver does not; svm-train stops naming the ones that do):

{legend}

**kernel**: `yes`, a kernel (support-vector) model whatever `-t`; `with -t K`, a
kernel model with a nonlinear `-t` (1, 2, 3), a linear one otherwise; `no`,
linear models only (`-t`, `-g`, `-d`, `-r` are refused). {" ".join(kernel_limits())} **--multiclass cs**:
Crammer-Singer classification (hinge, linear) in memory, with `--stream`,
on Dask. **-B**: takes `-B BIAS` (a constant feature) on linear models.
**--penalty**: the regularisers of its models (`--penalty`), `l2` = 1/2 |w|^2,
`l1` = |w|_1 (sparse weights).
**--grid**: `svm-train --grid` searches C and gamma of its kernel model
(classification).

{markdown(rows)}
Details: [tasks and losses](tasks.md), [solvers](solvers.md),
[--stream](streaming.md), [--engine dask](dask.md).
"""


def main(argv=None):
    """``python -m svmtrain.cli.matrix [--text]``: the Markdown page, or the plain-text table."""
    argv = sys.argv[1:] if argv is None else argv
    sys.stdout.write(text() if argv == ["--text"] else page())


if __name__ == "__main__":
    main()
