"""Training parameters: one dataclass, one validation routine.

``lam`` and ``C`` are two spellings of the same regularisation,
lambda = 1 / (n C) for n training rows (the survey's convention). Give at
most one; with neither, C = 1 as in LIBLINEAR. Solvers read
``resolved_lambda(n)`` or ``resolved_C(n)`` and never the raw fields.
"""
from dataclasses import dataclass, field, fields
import math

from .errors import ParameterError
from .tasks import DEFAULT_EPSILON, DEFAULT_NU, NAMES, ONE_CLASS, RANKING, REGRESSION, check_supported, default_loss


@dataclass
class TrainParams:
    solver: str = "dcd"
    lam: float = None           # -l
    C: float = None             # -c
    bias: float = -1.0          # -B: constant feature value; < 0 means none
    unreg_bias: bool = None     # -R / --no-bias: unregularised bias (None: the solver's default,
                                #   on for sbp and asset, off for the others)
    eps: float = None           # -e: stopping tolerance (solver default when None)
    epochs: int = None          # -T: passes over the data (solver default when None)
    batch_size: int = 1         # -k: examples per stochastic step
    seed: int = 1               # --seed: every random choice flows from it
    average: bool = None        # --average: average the late iterates (solver default when None)
    task: str = "c"             # -z: c classification, r regression, p ranking, o one-class (svmtrain.tasks)
    loss: str = None            # --loss (the task's default when None: hinge, epsilon-insensitive, ...)
    epsilon: float = None       # -p: width of the epsilon-insensitive tube (regression; 0.1 when None)
    probability: bool = False   # -b 1: fit Platt's sigmoids on internal 5-fold CV decision values
    class_weights: dict = field(default_factory=dict)  # -w LABEL WEIGHT
    max_iter: int = None        # outer-iteration cap (solver default when None)
    threads: int = None         # --threads (all cores when None)
    max_time: float = None      # --max-time seconds (ocas)
    cut_buffer: int = 2000      # --cut-buffer (ocas)
    ocas_method: str = "ocas"   # --ocas-method ocas | cp
    tol_abs: float = 0.0        # --tol-abs: stop when Q_P - Q_D <= this (ocas)
    qp_bound: float = 0.0       # --qp-bound: stop when Q_P <= this (ocas)
    # kernels (LIBSVM's flags) -- sbp, kernel pegasos, asset
    kernel_type: int = None     # -t: 0 linear, 1 polynomial, 2 rbf, 3 sigmoid (solver default when None)
    gamma: float = None         # -g (1/n_features when None)
    degree: int = None          # -d (3 when None, as LIBSVM)
    coef0: float = None         # -r (0 when None)
    cache_mb: float = 200.0     # -m: kernel row cache, MB
    nu: float = None            # --nu: sbp's (derived from C or lambda when None); the one-class
                                #   SVM's (-z o; 0.5 when None, LIBSVM/LIBLINEAR's -n)
    holdout: float = None       # --holdout FRACTION (sbp: stop when held-out error stops improving)
    # kernel approximations -- asset
    approx: str = None          # --approx nystrom | fourier
    dim: int = None             # -D: landmarks (nystrom) or random features (fourier)
    eig_threshold: float = None  # --eig-threshold (nystrom)
    inner: str = None           # --inner pegasos | dcd
    strongly_convex: bool = False  # --strongly-convex (ASSET*)
    rank_c: str = None          # --rank-c svm_rank | svmlight: C per query (C/Q per pair) or per pair (ranking)

    def __post_init__(self):
        if self.loss is None:
            self.loss = default_loss(self.task, self.solver)
        if self.epsilon is None and self.task == REGRESSION:
            self.epsilon = DEFAULT_EPSILON
        if self.nu is None and self.task == ONE_CLASS:
            self.nu = DEFAULT_NU

    def resolved_lambda(self, n):
        """lambda for a training set of n rows."""
        if self.lam is not None:
            return float(self.lam)
        C = 1.0 if self.C is None else float(self.C)
        return 1.0 / (max(n, 1) * C)

    def resolved_C(self, n):
        """C for a training set of n rows."""
        if self.C is not None:
            return float(self.C)
        if self.lam is not None:
            return 1.0 / (max(n, 1) * float(self.lam))
        return 1.0

    def header(self):
        """The parameters as ordered (key, value) pairs for a model file."""
        out = []
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "class_weights":
                v = " ".join(f"{k!r} {w!r}" for k, w in sorted(v.items())) or None
            out.append((f.name, v))
        return out


def _positive(name, flag):
    def check(p):
        v = getattr(p, name)
        if v is not None and not (v > 0 and math.isfinite(v)):
            raise ParameterError(f"{flag} must be > 0 (got {v})")
    return check


def _check_exclusive(p):
    if p.lam is not None and p.C is not None:
        raise ParameterError("give either -l LAMBDA or -c C, not both (lambda = 1/(n C))")


def _check_choice(name, flag, choices):
    def check(p):
        if getattr(p, name) not in choices:
            shown = ", ".join(str(c) for c in choices if c is not None)
            raise ParameterError(f"{flag} must be one of {shown} (got {getattr(p, name)})")
    return check


def _check_unit_interval(name, flag):
    def check(p):
        v = getattr(p, name)
        if v is not None and not 0.0 < v < 1.0:
            raise ParameterError(f"{flag} must be in (0, 1) (got {v})")
    return check


def _check_bias(p):
    if not math.isfinite(p.bias):
        raise ParameterError(f"-B must be a finite number (got {p.bias})")


def _check_weights(p):
    for label, w in p.class_weights.items():
        if not (w > 0 and math.isfinite(w)):
            raise ParameterError(f"-w weight for label {label:g} must be > 0 (got {w})")


def _check_solver(p):
    from .solvers import SOLVERS
    if p.solver not in SOLVERS:
        raise ParameterError(f"unknown solver '{p.solver}'; known solvers: {', '.join(SOLVERS)}")


def _check_task(p):
    check_supported(p.solver, p.task, p.loss)
    if p.probability and p.task != "c":
        raise ParameterError(f"-b 1 (probability estimates) applies to classification, not {NAMES.get(p.task, p.task)}")
    if p.epsilon is not None and p.task != REGRESSION:
        raise ParameterError(f"-p (epsilon) applies to regression (-z r), not {NAMES.get(p.task, p.task)}")
    if p.task == ONE_CLASS and (p.C is not None or p.lam is not None):
        raise ParameterError(f"{'-c' if p.C is not None else '-l'} does not apply to the one-class SVM "
                             "(--task o): --nu sets its trade-off")
    if p.rank_c is not None:
        if p.task != RANKING:
            raise ParameterError(f"--rank-c applies to ranking (-z p), not {NAMES.get(p.task, p.task)}")
        if p.rank_c not in ("svm_rank", "svmlight"):
            raise ParameterError(f"--rank-c must be svm_rank or svmlight (got {p.rank_c})")


def _check_nu(p):
    """--nu in (0, 1); the one-class SVM also takes nu = 1 (LIBSVM's and LIBLINEAR's range)."""
    if p.nu is None:
        return
    if p.task == ONE_CLASS:
        if not 0.0 < p.nu <= 1.0:
            raise ParameterError(f"--nu must be in (0, 1] (got {p.nu})")
    elif not 0.0 < p.nu < 1.0:
        raise ParameterError(f"--nu must be in (0, 1) (got {p.nu})")


def _nonnegative(name, flag):
    def check(p):
        v = getattr(p, name)
        if v is not None and not (v >= 0 and math.isfinite(v)):
            raise ParameterError(f"{flag} must be >= 0 (got {v})")
    return check


def _check_kernel_options(p):
    """Kernel options with a solver that trains linear models only would be ignored: refuse them."""
    from .solvers import KERNEL_SOLVERS
    given = [flag for flag, v in (("-t", p.kernel_type not in (None, 0)), ("-g", p.gamma is not None),
                                  ("-d", p.degree is not None), ("-r", p.coef0 is not None)) if v]
    if given and p.solver not in KERNEL_SOLVERS:
        raise ParameterError(f"{'/'.join(given)} {'is a kernel option' if len(given) == 1 else 'are kernel options'}"
                             f"; -s {p.solver} trains linear models only: use -s sbp or -s asset "
                             "(or -s pegasos -t 2) for a kernel model")


CONSTRAINTS = [
    _check_solver,
    _check_kernel_options,
    _check_exclusive,
    _positive("lam", "-l"),
    _positive("C", "-c"),
    _positive("eps", "-e"),
    _positive("epochs", "-T/--epochs"),
    _positive("batch_size", "-k"),
    _positive("max_iter", "--max-iter"),
    _positive("threads", "--threads"),
    _positive("max_time", "--max-time"),
    _positive("cut_buffer", "--cut-buffer"),
    _check_bias,
    _check_weights,
    _check_nu,
    _check_unit_interval("holdout", "--holdout"),
    _positive("degree", "-d"),
    _positive("eig_threshold", "--eig-threshold"),
    _check_task,
    _nonnegative("epsilon", "-p"),
    _check_choice("ocas_method", "--ocas-method", ("ocas", "cp")),
    _check_choice("kernel_type", "-t", (None, 0, 1, 2, 3)),
    _positive("gamma", "-g"),
    _positive("cache_mb", "-m"),
    _positive("dim", "-D"),
    _check_choice("approx", "--approx", (None, "nystrom", "fourier")),
    _check_choice("inner", "--inner", (None, "pegasos", "dcd")),
]


def check_params(params):
    """Raise ParameterError naming the flag of the first invalid parameter."""
    for check in CONSTRAINTS:
        check(params)
    return params
