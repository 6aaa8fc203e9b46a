"""Training parameters: one dataclass, one validation routine.

``lam`` and ``C`` are two spellings of the same regularisation,
lambda = 1 / (n C) for n training rows (the survey's convention). Give at
most one; with neither, C = 1 as in LIBLINEAR. Solvers read
``resolved_lambda(n)`` or ``resolved_C(n)`` and never the raw fields.
"""
from dataclasses import MISSING, dataclass, field, fields
import math

from .errors import ParameterError
from .solvers import (REGISTRY, SOLVERS, check_penalty, check_supported, declaration, default_loss, kernel_solvers,
                      listing, names, trains_nu)
from .solvers.contract import PENALTIES
from .tasks import ALL_LOSSES, DEFAULT_EPSILON, DEFAULT_NU, NAMES, ONE_CLASS, RANKING, REGRESSION


def option(default, *flags, help, factory=None, recorded_when_set=False, **spelling):
    """A TrainParams field with its command-line spelling: ``flags`` (click's
    declarations, e.g. "-c" or "-R/--no-bias"), ``help`` and ``spelling``
    (``type``: float, int; ``choices``: a tuple; ``int_range``: (lo, hi);
    ``flag``: an on/off switch; ``pair``: a repeatable (float, float);
    ``as_bool``: an int 0/1 given as a bool; ``metavar``). This is the one
    description of a training parameter: svm-train builds its options from
    it (svmtrain.cli.train) and :func:`describe` documents the Python API
    with it. ``factory`` makes the default ``factory()`` per instance.
    ``recorded_when_set``: the model file's header names the field only
    when it differs from its default (fields added after format version 1,
    so that models trained without them stay byte for byte as before)."""
    meta = {"flags": flags, "help": help, "spelling": spelling, "recorded_when_set": recorded_when_set}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class TrainParams:
    """What a training run is given: the fields below, each with its
    svm-train spelling (the same description serves ``svm-train --help``,
    ``svmtrain.train(X, y, **fields)`` and the estimators' ``options``)."""

    solver: str = option("dcd", "-s", metavar="SOLVER", help=(
        f"Solver: {', '.join(SOLVERS)}; or LIBLINEAR's numbers 0-7, 11-13, 21 (LIBSVM's 0, 2, 3 "
        "on a line with kernel options). Kernel options (-t 1|2|3, -g, -d, -r) "
        "without -s choose smo (LIBSVM's solver)."))
    lam: float = option(None, "-l", type=float, help="Regularisation lambda (instead of -c).")
    C: float = option(None, "-c", type=float,
                      help="Cost C (lambda = 1/(n C)). Default C = 1 when neither -c nor -l.")
    bias: float = option(-1.0, "-B", type=float,
                         help="Add a constant feature of this value (regularised bias, LIBLINEAR's -B); < 0: none.")
    unreg_bias: bool = option(None, "-R/--no-bias", help=(
        "Learn an unregularised bias b (pegasos, sgd; sbp, asset and norma learn one unless --no-bias)."))
    eps: float = option(None, "-e", type=float,
                        help="Stopping tolerance (solver default: pegasos, sgd, norma none, dcd 0.1, cdn and ocas "
                             "0.01, smo and bmrm 0.001, cvm 1e-6).")
    epochs: int = option(None, "-T", "--epochs", type=int,
                         help="Passes over the data (pegasos and sgd default 30, norma and asset 5; sbp: "
                              "its kernel rows at most -T times the rows).")
    batch_size: int = option(1, "-k", type=int, help="Mini-batch size (pegasos, asset).")
    seed: int = option(1, "--seed", type=int, help="Seed of every random choice.")
    fold_style: str = option("seed", "--folds", choices=("seed", "libsvm", "liblinear"), recorded_when_set=True,
                             help=(
        "Cross-validation folds (-v, -C, --grid, -b 1's internal ones): seed: stratified, drawn from --seed; "
        "libsvm: LIBSVM's svm-train folds row for row (glibc's rand(), seed 1), the default of svm-grid, svm-easy "
        "and LIBSVM command lines; liblinear: LIBLINEAR's train folds (its unstratified shuffle by the same "
        "rand()), the default of LIBLINEAR command lines with -v or -C."))
    average: bool = option(None, "--average/--no-average", help=(
        "Average the iterates of the last half of the run (pegasos, asset; default on)."))
    task: str = option("c", "--task", choices=tuple(NAMES), help=(
        "c classification, r regression, p preference ranking, o one-class (SVMlight's -z; "
        f"p: relevance labels and qid, {listing(names(lambda d: d.trains(RANKING)))}; "
        f"o: labels ignored, --nu, {listing(names(lambda d: d.trains(ONE_CLASS)))})."))
    loss: str = option(None, "--loss", choices=ALL_LOSSES, metavar="LOSS", help=(
        "Classification: hinge (default), squared-hinge, log; regression: epsilon-insensitive (default), "
        "squared-epsilon-insensitive; ranking: "
        + ", ".join(f"{loss} ({', '.join(names(lambda d, loss=loss: d.trains(RANKING, loss)))})"
                    for loss in ("pairwise-hinge", "pairwise-squared-hinge"))
        + "; one-class: one-class. Which solver takes which: svm-train --help -s NAME."))
    penalty: str = option(None, "--penalty", choices=PENALTIES, recorded_when_set=True, help=(
        "The regulariser: l2, 1/2 |w|^2 (every solver but "
        + ", ".join(names(lambda d: "l2" not in d.penalties)) + "), or l1, |w|_1, for sparse weights ("
        + ", ".join(names(lambda d: "l1" in d.penalties)) + ": LIBLINEAR's -s 5 and -s 6). Default: the solver's."))
    epsilon: float = option(None, "-p", type=float,
                            help="Regression: width of the epsilon-insensitive tube (default 0.1).")
    probability: bool = option(False, "-b", int_range=(0, 1), as_bool=True, help=(
        "1: fit Platt's sigmoids (internal 5-fold CV) so svm-predict -b 1 gives probabilities "
        "(LIBSVM's -b); logistic models (--loss log) have them anyway. Regression: the Laplace noise's "
        "sigma, as LIBSVM's -s 3 -b 1."))
    class_weights: dict = option(None, "-w", factory=dict, pair=True, metavar="LABEL WEIGHT", help=(
        "Multiply C of class LABEL by WEIGHT (dcd, cdn, ocas, asset, pegasos in memory; LIBLINEAR's -wi). "
        "Repeatable."))
    max_iter: int = option(None, "--max-iter", type=int, help=(
        "Outer-iteration cap (dcd, tron and cdn default 1000, cdn --loss log 100, ocas and bmrm 100000, "
        "smo max(10^7, 100 n); cvm: core-set size, 20000)."))
    threads: int = option(None, "--threads", type=int, help=(
        "Threads for parallel passes (ocas, sbp), and one-vs-rest classes trained at once (dcd, ocas, bmrm, "
        "pegasos, sgd); default all cores."))
    max_time: float = option(None, "--max-time", type=float, help="Time limit in seconds (ocas, bmrm).")
    cut_buffer: int = option(2000, "--cut-buffer", type=int, help="Cutting planes kept (ocas, bmrm).")
    ocas_method: str = option("ocas", "--ocas-method", choices=("ocas", "cp"),
                              help="ocas, or the plain cutting-plane method cp (ocas; -s bmrm runs cp).")
    tol_abs: float = option(0.0, "--tol-abs", type=float,
                            help=(
        "Stop when Q_P - Q_D <= this absolute gap (ocas, svmocas's -a; -s bmrm's comes from -e)."))
    qp_bound: float = option(0.0, "--qp-bound", type=float,
                             help="Stop when the primal objective Q_P <= this (ocas, bmrm; svmocas's -q).")
    # kernels (LIBSVM's flags) -- sbp, kernel pegasos, asset
    kernel_type: int = option(None, "-t", int_range=(0, 4), help=(
        "Kernel: 0 linear, 1 polynomial, 2 rbf, 3 sigmoid, 4 precomputed (LIBSVM's -t; 4: the data are "
        "kernel values, 0:ID then K against every training row; -s smo)."))
    gamma: float = option(None, "-g", type=float, help="Kernel gamma (default 1/number of features).")
    degree: int = option(None, "-d", type=int, help="Polynomial kernel degree (default 3).")
    coef0: float = option(None, "-r", type=float, help="Kernel coef0 (default 0).")
    cache_mb: float = option(200.0, "-m", type=float, help=(
        "Kernel row cache in MB (sbp, smo, pegasos -t K; norma: its dense copy of the kept rows)."))
    shrinking: int = option(1, "--shrinking", int_range=(0, 1), help=(
        "smo: LIBSVM's shrinking heuristic, 1 on, 0 off (the same solution; LIBSVM's -h 0|1 sets it)."))
    working_set: int = option(None, "--working-set", type=int, metavar="Q", help=(
        "smo: variables per working set: 2 LIBSVM's pair steps (LIBSVM's steps exactly); Q >= 8 "
        "the batched decomposition of ThunderSVM/oneDAL (Q variables per round, an inner SMO on them, "
        "one gradient pass; at most the rows the -m cache holds; the same solution within -e). Default: 2 below "
        "5000 variables, else 1536."))
    nu: float = option(None, "--nu", type=float, help=(
        "One-class SVM (--task o): the nu of LIBSVM/LIBLINEAR's -n, an upper bound "
        "on the fraction of training rows outside and a lower one on the support vectors (default 0.5). "
        "-s smo: nu-SVC (no -c) and with --task r nu-SVR (-c C; the tube width found), LIBSVM's -s 1 / -s 4 -n. "
        "sbp: its nu (default: derived from -c/-l by a pilot solution)."))
    holdout: float = option(None, "--holdout", type=float, metavar="FRACTION",
                            help="Stop when the error on this held-out fraction stops improving (sbp).")
    # kernel approximations -- asset
    approx: str = option(None, "--approx", choices=("nystrom", "fourier"), help="Kernel approximation (asset).")
    dim: int = option(None, "-D", type=int, help="Landmarks (nystrom) or random features (fourier) (asset).")
    eig_threshold: float = option(None, "--eig-threshold", type=float,
                                  help="Drop Nystrom eigenvalues below this (asset).")
    inner: str = option(None, "--inner", choices=("pegasos", "dcd"), help="Linear solver on the features (asset).")
    # the survey's other solvers -- sgd, norma, cvm
    update: str = option(None, "--update", choices=("bottou", "sgdqn", "fobos"), help=(
        "sgd: the update rule, bottou (SVM-SGD, default), sgdqn (SGD-QN's diagonal scaling) or "
        "fobos (forward-backward splitting, FOLOS)."))
    l1: float = option(None, "--l1", type=float, help=(
        "sgd --update fobos: weight of an L1 term l1 |w|_1 added to the objective (default 0)."))
    budget: int = option(None, "--budget", type=int, help=(
        "norma: terms kept in the kernel expansion (the oldest are dropped; default 2000)."))
    strongly_convex: bool = option(False, "--strongly-convex", flag=True,
                                   help="ASSET*: step 1/(lambda j), no bias, no averaging (asset).")
    multiclass: str = option("ovr", "--multiclass", choices=("ovr", "cs"), help=(
        "More than two classes: ovr one-vs-rest (LIBLINEAR's -s 1/2/3), or cs one Crammer-Singer problem "
        "over all classes (-s dcd: LIBLINEAR's -s 4, in memory; -s ocas: msvmocas's problem, also with --stream "
        "and --engine dask)."))
    rank_c: str = option(None, "--rank-c", choices=("svm_rank", "svmlight"), help=(
        "Ranking: -c is svm_rank's C (pair cost C/number of queries; the default) or "
        "SVMlight's -z p C (pair cost C)."))
    transduction: str = option(None, "--transduction", metavar="FRACTION|auto", recorded_when_set=True, help=(
        "Transductive SVM (SVMlight's -p; Joachims 1999): rows labelled 0 are unlabelled, and this "
        "fraction of them is labelled +1 (auto: the labelled rows' fraction of +1). Linear, with row "
        "costs: -s dcd."))

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

    @staticmethod
    def describe():
        """(name, command-line flags, default, help) of every field, in order."""
        return [(f.name, " ".join(f.metadata["flags"]),
                 f.default_factory() if f.default is MISSING else f.default, f.metadata["help"])
                for f in fields(TrainParams)]

    def header(self):
        """The parameters as ordered (key, value) pairs for a model file."""
        out = []
        for f in fields(self):
            v = getattr(self, f.name)
            if f.metadata.get("recorded_when_set") and v == f.default:
                continue
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
    declaration(p.solver)


def _check_task(p):
    check_supported(p.solver, p.task, p.loss, p.kernel_type)
    check_penalty(p.solver, p.penalty)
    if p.probability and p.task not in ("c", REGRESSION):
        raise ParameterError(f"-b 1 (probability estimates) applies to classification and regression, "
                             f"not {NAMES.get(p.task, p.task)}")
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


def _check_multiclass(p):
    """--multiclass cs: Crammer-Singer classification with the hinge, by the solvers that have it."""
    if p.multiclass not in ("ovr", "cs"):
        raise ParameterError(f"--multiclass must be ovr or cs (got {p.multiclass})")
    if p.multiclass == "ovr":
        return
    if not declaration(p.solver).multiclass_cs:
        raise ParameterError(f"--multiclass cs (Crammer-Singer) is trained by "
                             f"{listing(names(lambda d: d.multiclass_cs))}, not -s {p.solver}")
    if p.task != "c" or p.loss != "hinge" or p.kernel_type not in (None, 0) or p.probability:
        raise ParameterError("--multiclass cs is linear classification with the hinge loss (LIBLINEAR's -s 4): "
                             "no --task other than c, --loss other than hinge, kernel or -b 1")


def _check_nu(p):
    """--nu in (0, 1); the one-class SVM, nu-SVC and nu-SVR also take nu = 1
    (LIBSVM's and LIBLINEAR's range). nu-SVC has no C and no class weights:
    -c, -l and -w are refused there (LIBSVM's -s 1 ignores them)."""
    if p.nu is None:
        return
    if p.task == ONE_CLASS or trains_nu(p.solver, p.task):
        if not 0.0 < p.nu <= 1.0:
            raise ParameterError(f"--nu must be in (0, 1] (got {p.nu})")
    elif not 0.0 < p.nu < 1.0:
        raise ParameterError(f"--nu must be in (0, 1) (got {p.nu})")
    if p.task == "c" and trains_nu(p.solver, p.task):
        given = [flag for flag, v in (("-c", p.C), ("-l", p.lam)) if v is not None]
        if p.class_weights:
            given.append("-w")
        if given:
            raise ParameterError(f"{'/'.join(given)} does not apply to nu-SVC (-s {p.solver} --nu): nu sets its "
                                 "trade-off and there is no C to weight (LIBSVM's -s 1 ignores -c and -w); "
                                 "C-SVC is -s smo without --nu")


def _nonnegative(name, flag):
    def check(p):
        v = getattr(p, name)
        if v is not None and not (v >= 0 and math.isfinite(v)):
            raise ParameterError(f"{flag} must be >= 0 (got {v})")
    return check


def _check_kernel_options(p):
    """Kernel options with a solver that trains linear models only would be ignored: refuse them."""
    given = [flag for flag, v in (("-t", p.kernel_type not in (None, 0)), ("-g", p.gamma is not None),
                                  ("-d", p.degree is not None), ("-r", p.coef0 is not None)) if v]
    if given and not declaration(p.solver).takes_kernel_options():
        raise ParameterError(f"{'/'.join(given)} {'is a kernel option' if len(given) == 1 else 'are kernel options'}"
                             f"; -s {p.solver} trains linear models only: use "
                             f"{listing(kernel_solvers(), kernel_note=True)} for a kernel model")


def _check_precomputed(p):
    """-t 4 (LIBSVM's precomputed kernels) with a solver that takes it (-g, -d
    and -r have no role there and are ignored, as by LIBSVM)."""
    if p.kernel_type != 4:
        return
    from .solvers import precomputed_solvers
    able = precomputed_solvers()
    if p.solver not in able:
        raise ParameterError(f"-t 4 (precomputed kernel) is trained by {listing(able)}, not -s {p.solver}")


def _check_survey_options(p):
    """An option of one solver given to another would be ignored: refuse it,
    naming the solver that reads it; --l1 needs --update fobos."""
    own = declaration(p.solver).options
    for name, d in REGISTRY.items():
        for field_name, flag in d.options:
            if getattr(p, field_name) is not None and (field_name, flag) not in own:
                raise ParameterError(f"{flag} applies to -s {name}, not -s {p.solver}")
    if p.l1 and p.update != "fobos":
        raise ParameterError("--l1 is the L1 term of forward-backward splitting: give it with --update fobos")


def _check_transduction(p):
    from .training.transductive import check_transduction
    check_transduction(p)


def _check_working_set(p):
    if p.working_set is not None and p.working_set < 2:
        raise ParameterError(f"--working-set must be 2 (pair steps) or more (got {p.working_set})")


CONSTRAINTS = [
    _check_solver,
    _check_precomputed,
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
    _check_multiclass,
    _check_unit_interval("holdout", "--holdout"),
    _positive("degree", "-d"),
    _positive("eig_threshold", "--eig-threshold"),
    _check_task,
    _nonnegative("epsilon", "-p"),
    _check_choice("ocas_method", "--ocas-method", ("ocas", "cp")),
    _check_choice("kernel_type", "-t", (None, 0, 1, 2, 3, 4)),
    _positive("gamma", "-g"),
    _positive("cache_mb", "-m"),
    _positive("dim", "-D"),
    _check_choice("approx", "--approx", (None, "nystrom", "fourier")),
    _check_choice("inner", "--inner", (None, "pegasos", "dcd")),
    _check_choice("update", "--update", (None, "bottou", "sgdqn", "fobos")),
    _nonnegative("l1", "--l1"),
    _positive("budget", "--budget"),
    _check_working_set,
    _check_transduction,
    _check_survey_options,
]


def check_params(params):
    """Raise ParameterError naming the flag of the first invalid parameter."""
    for check in CONSTRAINTS:
        check(params)
    return params
