"""``svm-train --trace FILE``: how a run converges, one CSV row per solver step.

The solvers know nothing of this module's CSV. A solver given a *monitor*
(``fit(..., monitor=M)``, ``train_model(..., monitor=M)``) calls
``M(snapshot)`` at its epoch / outer-iteration / check boundaries, where
``snapshot`` is a function of no arguments returning a :class:`svmtrain.solvers.snapshots.Snapshot`
of the model it would return were it stopped there. Solvers that run the
binary problems of one-vs-rest themselves (``train_model``) call
``M(snapshot, problem=j)``; ``training.train`` hands ``fit`` solvers a
monitor bound to their problem (``solvers.base.for_problem``). ``M.steps`` (None or an
int) asks the stochastic solvers that honour it (pegasos, linear and
kernel) for a call every that many steps as well as at each epoch end.
With no monitor the solvers do exactly what they did before: no extra
call, no extra pass, bit-identical models.

:class:`Trace` is the monitor of ``--trace``. Its clock starts when the
solver starts (``training.train`` calls ``begin()``, where the model's
training time starts too); ``elapsed_s`` of a row is the time since then
minus the time spent in every evaluation so far (building the snapshot
included), so it is the solver's own time. Each row holds:

* ``class``: the label scored positive (labels[0] for a binary problem,
  the class of a one-vs-rest problem);
* ``iter``: the solver's progress in its own unit: epochs (pegasos, asset;
  fractional with ``--trace-every``), outer iterations (dcd, ocas),
  kernel rows / n (sbp);
* ``updates``: steps (pegasos, asset, sbp), coordinate visits (dcd), cuts
  (ocas); ``kernel_evals``: kernel values used by the steps (sbp, kernel
  pegasos; cached ones counted);
* ``primal``: lambda/2 |w|^2 + 1/n sum_i cost_i loss(y_i f(x_i)), the
  objective of the model file, computed here from the snapshot's training
  scores and |w|^2;
* ``dual``: the solver's dual value in the same (lambda) form (dcd: the
  dual objective; ocas: Q_D, the cutting-plane lower bound), ``gap`` =
  primal - dual; empty for solvers without one;
* ``train_error``: fraction of training rows on the wrong side;
* ``test_accuracy``: with a test set, the accuracy svm-predict would print
  for this model; for one-vs-rest, of the binary problem "class vs rest".
"""
import csv
import time

import numpy as np

COLUMNS = ["class", "iter", "elapsed_s", "updates", "kernel_evals", "primal", "dual", "gap",
           "train_error", "test_accuracy"]


def objective(s):
    """lambda/2 norm2 + 1/n sum_i cost_i loss(y_i score_i) of a Snapshot."""
    m = np.maximum(0.0, 1.0 - s.y * s.scores)
    if s.loss == "squared-hinge":
        m = m * m
    if s.cost is not None:
        m = m * s.cost
    return 0.5 * s.lam * s.norm2 + float(m.sum()) / max(len(s.y), 1)


class Trace:
    """The ``--trace`` monitor: evaluates each snapshot and keeps the rows (``rows``).

    ``labels``: the training labels (for the label order, as training
    orders them); ``test``: a Chunk for the test_accuracy column, or None;
    ``steps``: see the module docstring.
    """

    def __init__(self, labels, test=None, steps=None):
        from .train import label_order
        self.order = label_order(np.asarray(labels, np.float64))
        self.test = test
        self.steps = None if steps is None else int(steps)
        self.rows = []
        self.begin()

    def begin(self):
        """Start the clock (again): training.train calls it when the solver starts."""
        self.eval_s = 0.0
        self.start = time.perf_counter()

    def __call__(self, snapshot, problem=0):
        import numba
        t_in = time.perf_counter()
        threads = numba.get_num_threads()     # solvers may run on fewer; the evaluation uses all cores
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        try:
            self._evaluate(snapshot(), problem, t_in)
        finally:
            numba.set_num_threads(threads)
            self.eval_s += time.perf_counter() - t_in

    def _evaluate(self, s, problem, t_in):
        row = {"class": _label(self.order[problem]) if len(self.order) else "",
               "iter": s.iter, "elapsed_s": round(t_in - self.start - self.eval_s, 6),
               "updates": int(s.updates), "kernel_evals": "" if s.kernel_evals is None else int(s.kernel_evals),
               "primal": objective(s), "dual": "", "gap": "",
               "train_error": float(np.mean((s.scores > 0) != (s.y > 0))) if len(s.y) else 0.0,
               "test_accuracy": ""}
        if s.dual is not None:
            row["dual"] = float(s.dual)
            row["gap"] = row["primal"] - row["dual"]
        if self.test is not None and self.test.n_rows:
            row["test_accuracy"] = self._accuracy(s.model.decision_function(self.test)[:, 0], problem)
        self.rows.append(row)

    def _accuracy(self, scores, problem):
        """What svm-predict counts: labels[0] predicted where score > 0, labels[1] elsewhere
        (one-vs-rest: the class against all others)."""
        labels = self.test.labels
        pos = labels == self.order[problem]
        neg = (labels == self.order[1]) if len(self.order) == 2 else ~pos
        return float(np.mean((scores > 0) & pos | (scores <= 0) & neg))

    def write(self, path):
        """Write the rows as CSV (atomically: a temporary file renamed over ``path``)."""
        from ..io.atomic import atomic_write
        with atomic_write(path, "w") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
            w.writeheader()
            for row in self.rows:
                w.writerow({k: _num(v) for k, v in row.items()})


def _num(v):
    """Floats as repr (exact, short); ints and text unchanged."""
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    if isinstance(v, np.integer):
        return int(v)
    return v


def _label(x):
    from ..prediction import format_label
    return format_label(x)
