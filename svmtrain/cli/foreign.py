"""Foreign command lines: LIBSVM's, LIBLINEAR's and SVMlight's spellings.

A command line written for LIBSVM's ``svm-train``/``svm-predict``,
LIBLINEAR's ``train``/``predict`` or SVMlight's ``svm_learn``/
``svm_classify`` either does here what it did there (the same kind of
model) or stops with a one-line :class:`~svmtrain.errors.ParameterError`
that names the svmtrain equivalent. :func:`translate_train` and
:func:`translate_predict` rewrite such a line into svm-train's /
svm-predict's own options before click parses it, so the rest of the
command-line layer speaks one language.

The rules (README, "Coming from LIBSVM, LIBLINEAR or SVMlight"):

* a LIBSVM line is one with a kernel option (``-t``, ``-g``, ``-d``, ``-r``),
  or one without a named solver (no ``-s NAME``) and without a flag LIBSVM
  lacks (``LIBLINEAR_ONLY``: ``-C``, ``-B``, ``-R``, ``-W``) that uses a flag
  only LIBSVM's ``svm-train`` has among the two (``LIBSVM_ONLY``: ``-b 0|1``,
  ``-m MB``, ``-h 0|1``; LIBLINEAR's ``train`` has none of them), see
  :func:`_libsvm_flags`; SVMlight lines (below) are never LIBSVM lines;
* ``--penalty l1`` without ``-s`` trains the L1 solver (``-s cdn``), as a
  kernel option without ``-s`` trains the kernel solver;
* numeric ``-s`` values are LIBLINEAR's (``LIBLINEAR_S``), except on a
  LIBSVM line, where they are LIBSVM's svm_type (``LIBSVM_S``); ``-n`` with
  ``-s 1``, ``-s 2`` or ``-s 4`` on a line that could be either peer's
  (LIBSVM's nu-SVC, one-class SVM, nu-SVR, or LIBLINEAR's solver, which
  ignores ``-n``) is refused naming both readings (:func:`_ambiguous_nu`);
* a LIBSVM line without ``-s`` (or with ``-s 0``) trains LIBSVM's C-SVC with
  its own solver (``-s smo``: LIBSVM's default kernel, RBF with gamma
  1/number of features, unless ``-t`` says otherwise; LIBSVM's working
  sets, shrinking and bias, so LIBSVM's solution; ``-t 0`` is its linear
  kernel; ``-b 1`` fits Platt's probabilities as LIBSVM's does), under
  ``--grid`` too (grid.py drives LIBSVM's svm-train); kernel options (``-t 1|2|3``,
  ``-g``, ``-d``, ``-r``) with a linear solver are refused by
  :func:`svmtrain.params.check_params`;
* ``-b 1`` is svm-train's own probability switch on every line but
  SVMlight's; ``-b 0`` is refused where it could also be SVMlight's "no bias"
  and the two readings differ (a kernel model, including LIBSVM's C-SVC of a
  line that is LIBSVM's by its ``-b 0`` alone, or ``-B``/``-R``), see
  :func:`_probability_or_bias`;
* a line that uses SVMlight-only flags (``SVMLIGHT_ONLY``) is read with
  SVMlight's defaults: its biased hyperplane (``-b 1``, smo) or unbiased one
  (``-b 0``: dcd, or sbp ``--no-bias`` with a kernel), and a refusal where its defaults differ from svm-train's
  (C = 1/avg(x.x), kernel parameters 1) and the value is not given;
* the one-class SVM: LIBLINEAR's ``-s 21`` and LIBSVM's linear ``-s 2 -t 0``
  train ``-s dcd --task o``, their ``-n`` is ``--nu`` (:func:`_one_class`);
  LIBSVM's ``-s 2`` with a nonlinear kernel trains ``-s smo --task o``, its
  ``-s 3`` (epsilon-SVR) ``-s smo --task r``, its ``-s 1`` (nu-SVC) and ``-s 4``
  (nu-SVR) ``-s smo --nu NU`` and ``-s smo --task r --nu NU``, ``-n`` their
  ``--nu`` (default 0.5, :func:`_nu_svm`); SVMlight, which has no
  one-class SVM, has its ``-z o`` refused;
* options that only steer an optimiser (LIBSVM's ``-h`` shrinking and ``-m``
  cache, SVMlight's ``-h``, ``-n``, ``-o``, ``-f``, ``-x 0``, ``-i 0``) are
  accepted and change no solution (with ``-s smo``, LIBSVM's ``-h 0|1`` is its
  ``--shrinking``), though LIBSVM's ``-h 0|1`` and ``-m`` make a line LIBSVM's
  (above); the ones that would change the model here are refused.
"""
import re

from ..errors import ParameterError
from ..solvers import declaration, names, solvers_for

# LIBLINEAR's -s numbers (linear default): number -> svm-train options, or the refusal
LIBLINEAR_S = {
    "0": ["-s", "dcd", "--task", "c", "--loss", "log"],    # primal Newton in LIBLINEAR; same optimum
    "1": ["-s", "dcd", "--task", "c", "--loss", "squared-hinge"],
    "2": ["-s", "dcd", "--task", "c", "--loss", "squared-hinge"],   # LIBLINEAR trains it primal; same optimum
    "3": ["-s", "dcd", "--task", "c", "--loss", "hinge"],
    "4": ["-s", "dcd", "--multiclass", "cs"],
    "5": ["-s", "cdn", "--task", "c", "--loss", "squared-hinge"],   # L1-regularised: CDN, LIBLINEAR's method
    "6": ["-s", "cdn", "--task", "c", "--loss", "log"],             # L1-regularised: newGLMNET, LIBLINEAR's
    "7": ["-s", "dcd", "--task", "c", "--loss", "log"],
    "11": ["-s", "dcd", "--task", "r", "--loss", "squared-epsilon-insensitive"],   # primal; same optimum
    "12": ["-s", "dcd", "--task", "r", "--loss", "squared-epsilon-insensitive"],
    "13": ["-s", "dcd", "--task", "r", "--loss", "epsilon-insensitive"],
    "21": ["-s", "dcd", "--task", "o"],     # -n NU becomes --nu (see _one_class)
}
# LIBSVM's -s numbers (svm_type), read on a line with kernel options
LIBSVM_S = {
    "0": None,  # C-SVC: the kernel solver, see _solver_of
    "1": ["-s", "smo", "--task", "c"],     # nu-SVC: -n NU becomes --nu, -c is dropped (see _nu_svm)
    "2": ["-s", "dcd", "--task", "o"],      # -t 0 only: _one_class sends a kernel to -s smo
    "3": ["-s", "smo", "--task", "r"],     # epsilon-SVR: LIBSVM's solver, -p its epsilon
    "4": ["-s", "smo", "--task", "r"],     # nu-SVR: -n NU becomes --nu (see _nu_svm)
}
KERNEL_SOLVER = "smo"      # what LIBSVM's C-SVC (and SVMlight's biased hyperplane) trains here
DEFAULT_SOLVER = "dcd"     # svm-train's -s without -s (TrainParams.solver's default)
UNBIASED_KERNEL_SOLVER = "sbp"     # SVMlight's -b 0 with a kernel: sbp --no-bias
KERNEL_FLAGS = ("-g", "-d", "-r")
# flags only SVMlight's svm_learn has: a line with one of them is SVMlight's
SVMLIGHT_ONLY = ("-z", "-j", "-x", "-i", "-o", "-f")
# flags LIBSVM's svm-train has and LIBLINEAR's train does not (-b 0|1 probability
# estimates, -m cache MB, -h 0|1 shrinking): without -s NAME they make a line LIBSVM's
LIBSVM_ONLY = ("-b", "-m", "-h")
# flags LIBLINEAR's train has and LIBSVM's svm-train does not: a line with one is not LIBSVM's
LIBLINEAR_ONLY = ("-C", "-B", "-R", "-W")
# -s numbers whose LIBSVM svm_type takes -n (nu-SVC, one-class, nu-SVR) where LIBLINEAR's
# solver of that number ignores it: the refusal of a line that could be either peer's
AMBIGUOUS_NU = {
    "1": "LIBSVM's nu-SVC (-s smo --nu NU; give -t 2, its default RBF kernel, to make the line LIBSVM's) "
         "or LIBLINEAR's -s 1 (drop -n, which it ignores)?",
    "2": "LIBSVM's one-class SVM (its default kernel is RBF: give -t 2, or -t 0 for the linear one) or "
         "LIBLINEAR's -s 2 (drop -n, which it ignores)?",
    "4": "LIBSVM's nu-SVR (-s smo --task r --nu NU; give -t 2, its default RBF kernel, to make the line "
         "LIBSVM's) or LIBLINEAR's -s 4 (drop -n, which it ignores)?",
}

# flags of the peers that svm-train does not have: number of values, and the
# message when the value would change the model (None: accepted, no effect)
TRAIN_FOREIGN = {
    "-h": 1,   # shrinking (LIBSVM 0|1, SVMlight iterations before shrinking)
    "-z": 1, "-j": 1, "-n": 1, "-x": 1, "-i": 1, "-o": 1, "-f": 1,
    "-y": 1, "-u": 1, "-a": 1, "-#": 1, "-W": 1,
}
PREDICT_FOREIGN = {"-v": 1, "-f": 1, "-h": 0}
NO_EFFECT = {
    "-n": "LIBSVM's and LIBLINEAR's nu, unused but by their one-class SVM (where it is --nu, see "
          "_one_class) and LIBSVM's nu-SVC / nu-SVR (--nu, see _nu_svm); SVMlight's working-set size",
    "-o": "SVMlight's rho of the XiAlpha estimate",
    "-f": "SVMlight's final optimality check",
}
REFUSED = {
    "-y": "-y (SVMlight's restart from alphas) has no equivalent",
    "-u": "-u (SVMlight's user-defined kernel) has no equivalent; kernels are -t 0|1|2|3",
    "-a": "-a (SVMlight's alphas file) has no equivalent; the model file holds the coefficients",
    "-#": "-# (SVMlight's iteration limit) is --max-iter here (outer iterations of the solver)",
    "-W": "-W (instance weights) is not available; -w LABEL WEIGHT weights whole classes",
}
_INT = re.compile(r"[+-]?\d+$")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


class Line:
    """A command line split into options (flag, values) and positional words."""

    def __init__(self, args, arity):
        self.options = []       # [flag, [values]] in order
        self.positional = []
        i = 0
        while i < len(args):
            a = args[i]
            if a == "--":
                self.positional += args[i:]
                break
            flag, attached = _split_flag(a, arity)
            if flag is None:
                self.positional.append(a)
                i += 1
                continue
            n = arity[flag]
            values = [] if attached is None else [attached]
            need = n - len(values)
            values += args[i + 1:i + 1 + need]
            if len(values) < n and flag not in ("-h", "-q"):
                break_msg = f"option {flag} needs {n} value{'s' if n > 1 else ''}"
                if flag == "-w":
                    break_msg += " (LABEL WEIGHT, as LIBSVM's -wLABEL WEIGHT)"
                raise ParameterError(break_msg)
            self.options.append([flag, values])
            i += 1 + max(need, 0)

    def has(self, flag):
        return any(f == flag for f, _ in self.options)

    def value(self, flag):
        """The last value given to ``flag`` (None when absent)."""
        found = [v for f, v in self.options if f == flag]
        return found[-1][0] if found and found[-1] else None

    def drop(self, flag):
        self.options = [o for o in self.options if o[0] != flag]

    def args(self):
        out = []
        for flag, values in self.options:
            out += [flag] + values
        return out + self.positional


def _split_flag(token, arity):
    """(flag, attached value) for an option token, (None, None) for a positional word."""
    if not token.startswith("-") or token == "-" or _NUMBER.match(token):
        return None, None
    if token.startswith("--"):
        name, eq, value = token.partition("=")
        return (name, value if eq else None) if name in arity else (None, None)
    if token in arity:
        return token, None
    if token[:2] in arity and arity[token[:2]] > 0:     # -c10, -w1 (LIBSVM's -wLABEL)
        return token[:2], token[2:]
    return None, None


def arity_of(command, foreign):
    """Flag -> number of values, for click ``command``'s options and the ``foreign`` ones."""
    arity = dict(foreign)
    for p in command.params:
        if getattr(p, "opts", None) and p.param_type_name == "option":
            n = 0 if (p.is_flag or p.count) else p.nargs
            for name in p.opts + p.secondary_opts:
                arity[name] = n
    return arity


def translate_train(args, command):
    """svm-train's own argument list for ``args``, which may be written for
    LIBSVM, LIBLINEAR or SVMlight; ParameterError names the equivalent of
    anything that would train a different model here."""
    arity = arity_of(command, TRAIN_FOREIGN)
    svmlight = any(a in SVMLIGHT_ONLY for a in args)
    if svmlight:
        arity["-w"] = 1         # SVMlight's -w EPS (regression tube), not LIBSVM's -wLABEL WEIGHT
    line = Line(list(args), arity)
    _check_quiet(line)
    libsvm_flags = [] if svmlight else _libsvm_flags(line)
    libsvm_line = bool(not svmlight and _is_libsvm(line, libsvm_flags) and _INT.match(line.value("-s") or "0")
                       and not any(line.has(f) for f in LIBLINEAR_ONLY))     # no named solver, no LIBLINEAR flag
    liblinear_line = not svmlight and not libsvm_line and (any(line.has(f) for f in LIBLINEAR_ONLY)
                                                           or bool(_INT.match(line.value("-s") or "")))
    shrinking = _check_help(line)
    if not svmlight:
        _ambiguous_nu(line, libsvm_flags)
        _one_class(line, libsvm_flags)
    _nu_svm(line, libsvm_flags, svmlight)
    _optimiser_only(line)
    _refused(line)
    if svmlight:
        _svmlight_task(line)
    _svmlight_cost_factor(line)
    _check_folds(line)
    _check_lambda(line)
    _check_class_weights(line)
    if svmlight:
        _svmlight_defaults(line)
    elif line.has("-p") and not line.has("--task") and not line.has("-s"):
        raise ParameterError("-p (epsilon) is LIBSVM/LIBLINEAR's regression tube width: give --task r "
                             "(or LIBLINEAR's -s 11|12|13); SVMlight's -p (transduction) is --transduction FRACTION")
    _solver_of(line, libsvm_flags)
    _probability_or_bias(line, libsvm_flags)
    if libsvm_line and (line.has("-v") or line.value("-b") == "1") and not line.has("--folds"):
        line.options.append(["--folds", ["libsvm"]])         # LIBSVM's -v and -b 1: its folds, row for row
    if liblinear_line and (line.has("-v") or line.has("-C")) and not line.has("--folds"):
        line.options.append(["--folds", ["liblinear"]])      # LIBLINEAR's -v and -C: its folds, row for row
    if shrinking in ("0", "1") and line.value("-s") == "smo" and not line.has("--shrinking"):
        line.options.append(["--shrinking", [shrinking]])     # LIBSVM's shrinking, which -s smo follows
    return line.args()


def translate_predict(args, command):
    """svm-predict's own argument list for ``args`` (LIBSVM/LIBLINEAR's
    ``-b`` and ``-q`` are svm-predict's own; SVMlight's ``svm_classify``
    flags are refused with the equivalent)."""
    line = Line(list(args), arity_of(command, PREDICT_FOREIGN))
    if line.has("-h"):
        raise ParameterError("-h is not an svm-predict option; help is --help")
    if line.has("-v"):
        raise ParameterError("-v (SVMlight's verbosity) is not an svm-predict option; -q silences the "
                             "accuracy line")
    if line.has("-f"):
        raise ParameterError("-f (svm_classify's output format) is not an svm-predict option; -d adds "
                             "the decision values after each label")
    return line.args()


def _check_quiet(line):
    """SVMlight's -q N (QP subproblem size) against svm-train's flag -q."""
    for i, word in enumerate(line.positional):
        if _INT.match(word) and i + 1 < len(line.positional) and _follows_quiet(line, word):
            raise ParameterError(f"-q {word}: -q is 'quiet' here and takes no value; SVMlight's -q "
                                 "(QP subproblem size) does not change the model: drop it")


def _follows_quiet(line, word):
    # the scanner put the -q flag's would-be value among the positional words;
    # the only reliable sign is a bare integer where a file name is expected
    import os
    return line.has("-q") and not os.path.exists(word)


def _check_help(line):
    """Refuse -h as a request for help; drop LIBSVM's / SVMlight's -h N and return N (or None)."""
    for flag, values in line.options:
        if flag == "-h" and (not values or not _INT.match(values[0]) or int(values[0]) < 0):
            raise ParameterError("-h takes 0 or 1 (LIBSVM's shrinking; SVMlight's -h N); help is --help")
    shrinking = line.value("-h")
    line.drop("-h")     # shrinking only speeds an optimiser up: same solution
    return shrinking


LIBSVM_ONE_CLASS_EPS = "0.001"     # LIBSVM's default -e; its stopping rule is dcd --task o's


def _libsvm_flags(line):
    """The flags of ``LIBSVM_ONLY`` that make ``line`` LIBSVM's (-b 0|1, -m,
    -h 0|1; LIBLINEAR's train has none of them), in that order; [] on a line
    with a named solver (-s NAME: svmtrain's own line, where they are
    svm-train's -b, -m and -h) or with a flag LIBSVM's svm-train lacks
    (``LIBLINEAR_ONLY``). Called before -h is dropped; not on SVMlight lines."""
    s = line.value("-s")
    if (line.has("-s") and not _INT.match(s or "")) or any(line.has(f) for f in LIBLINEAR_ONLY):
        return []
    return [f for f in LIBSVM_ONLY if line.has(f) and (f == "-m" or line.value(f) in ("0", "1"))]


def _is_libsvm(line, libsvm_flags):
    """A LIBSVM line: a kernel option, or a flag only LIBSVM has (:func:`_libsvm_flags`)."""
    return bool(libsvm_flags) or any(line.has(f) for f in ("-t",) + KERNEL_FLAGS)


def _libsvm_by_flags_alone(line, libsvm_flags):
    """LIBSVM's line only by ``libsvm_flags`` (no kernel option, no --grid)."""
    return bool(libsvm_flags) and not any(line.has(f) for f in ("-t", "--grid") + KERNEL_FLAGS)


def _ambiguous_nu(line, libsvm_flags):
    """-n with -s 1, 2 or 4 on a line that could be LIBSVM's or LIBLINEAR's:
    LIBSVM's nu-SVC, one-class SVM or nu-SVR (which use -n) against LIBLINEAR's
    solver of that number (which ignores it). Refused, naming both readings."""
    s = line.value("-s")
    if s is None or not _INT.match(s) or not line.has("-n"):
        return
    s = str(int(s))
    liblinear = any(line.has(f) for f in LIBLINEAR_ONLY)
    if s in AMBIGUOUS_NU and not liblinear and not _is_libsvm(line, libsvm_flags):
        raise ParameterError(f"-s {s} -n: {AMBIGUOUS_NU[s]}")


def _one_class(line, libsvm_flags):
    """LIBLINEAR's -s 21 and LIBSVM's -s 2 (on a LIBSVM line): the one-class
    SVM, -n NU its --nu; -c, unused there, is dropped. LIBSVM's linear one-class
    (-t 0) solves the dual of LIBLINEAR's -s 21 (with LIBSVM's -e 0.001 unless -e
    is given); with a nonlinear kernel (its default is RBF) it is LIBSVM's own
    solver, -s smo --task o. (-s 2 -n on a line that could be LIBLINEAR's is
    refused by :func:`_ambiguous_nu`.)"""
    s = line.value("-s")
    if s is None or not _INT.match(s):
        return
    s = str(int(s))
    libsvm = _is_libsvm(line, libsvm_flags)
    if (s, libsvm) not in (("21", False), ("2", True)):
        return
    nu = line.value("-n")
    if libsvm and line.value("-t") != "0":
        if line.has("--task") and line.value("--task") != "o":
            raise ParameterError(f"-s 2 is LIBSVM's one-class SVM (--task o); it contradicts --task "
                                 f"{line.value('--task')}")
        line.drop("-s")
        line.drop("--task")
        line.options = [["-s", [KERNEL_SOLVER]], ["--task", ["o"]]] + line.options
    line.drop("-n")
    line.drop("-c")
    if nu is not None:
        line.options.append(["--nu", [nu]])
    if libsvm and not line.has("-e"):
        line.options.append(["-e", [LIBSVM_ONE_CLASS_EPS]])


LIBSVM_DEFAULT_NU = "0.5"      # svm-train's -n default


def _nu_svm(line, libsvm_flags, svmlight):
    """LIBSVM's nu-SVC (-s 1) and nu-SVR (-s 4) on a LIBSVM line: -n NU is
    --nu (LIBSVM's default 0.5 when absent); nu-SVC's -c, which LIBSVM
    ignores, is dropped (nu-SVR's is its C). _solver_of then sends -s 1|4 to
    -s smo --task c|r. (-s 1|4 -n on a line that could be LIBLINEAR's is
    refused by :func:`_ambiguous_nu`.) On an SVMlight line ``-s`` is its
    kernel scale: refused, naming -g."""
    s = line.value("-s")
    if s is None or not _INT.match(s) or str(int(s)) not in ("1", "4"):
        return
    if svmlight:
        raise ParameterError(f"-s {int(s)}: SVMlight's kernel scale s is -g here (on a LIBSVM line -s {int(s)} is "
                             f"its nu-{'SVC' if int(s) == 1 else 'SVR'}, -s smo --nu NU)")
    if not (_is_libsvm(line, libsvm_flags) or line.has("--grid")):     # (as _solver_of reads the line)
        return
    nu = line.value("-n") if line.has("-n") else LIBSVM_DEFAULT_NU
    line.drop("-n")
    if str(int(s)) == "1":
        line.drop("-c")
    if not line.has("--nu"):
        line.options.append(["--nu", [nu]])


def _optimiser_only(line):
    for flag in NO_EFFECT:
        line.drop(flag)
    for flag, accepted in (("-x", "0"), ("-i", "0")):
        v = line.value(flag)
        if line.has(flag) and v != accepted:
            what = {"-x": "-x 1 (SVMlight's leave-one-out estimate) is -v N here, with N the number of rows",
                    "-i": f"-i {v} (SVMlight's removal of inconsistent examples) has no equivalent"}[flag]
            raise ParameterError(what)
        line.drop(flag)


def _refused(line):
    for flag, message in REFUSED.items():
        if line.has(flag):
            raise ParameterError(message)


def _svmlight_task(line):
    """SVMlight's -z becomes --task (svmtrain's own spelling); its -w EPS becomes -p EPS."""
    if line.has("-p"):
        _svmlight_transduction(line)
    if line.has("-z"):
        z = line.value("-z")
        if z == "o":
            raise ParameterError("-z o: SVMlight has no one-class SVM (its -z is c, r or p); svmtrain's is "
                                 "--task o -s dcd --nu NU (LIBLINEAR's -s 21 -n NU)")
        line.drop("-z")
        line.options.append(["--task", [z]])
    for flag, values in line.options:
        if flag == "-w" and len(values) == 1:           # SVMlight's tube width (regression)
            flag_values = ["-p", values]
            line.options[line.options.index([flag, values])] = flag_values
            break


def _svmlight_transduction(line):
    """SVMlight's -p FRACTION: --transduction FRACTION, on its unbiased
    linear problem (-b 0); with SVMlight's unregularised bias it is refused."""
    fraction = line.value("-p")
    if not _NUMBER.match(fraction or ""):
        raise ParameterError(f"-p takes a number, SVMlight's fraction of unlabelled rows labelled +1 (got {fraction})")
    if line.value("-b") != "0":
        raise ParameterError("-p (SVMlight's transduction) with its unregularised bias has no exact equivalent: "
                             "svmtrain's transductive SVM (--transduction) trains -s dcd, whose bias is a "
                             "regularised constant feature; give -b 0 (no bias), or svm-train --transduction "
                             f"{fraction} -B 1")
    line.drop("-p")
    line.options.append(["--transduction", [fraction]])


def _svmlight_cost_factor(line):
    j = line.value("-j")
    if not line.has("-j"):
        return
    if not _NUMBER.match(j or ""):
        raise ParameterError(f"-j takes a number, the cost factor of positive examples (got {j})")
    if any(f == "-w" and v and v[0] in ("1", "+1", "1.0") for f, v in line.options):
        raise ParameterError("give either -j (SVMlight) or -w1 (LIBSVM) for the positive class, not both")
    line.drop("-j")
    line.options.append(["-w", ["1", j]])


def _check_folds(line):
    v = line.value("-v")
    if line.has("-v") and _INT.match(v or "") and int(v) < 2:
        raise ParameterError(f"-v {v}: -v is N-fold cross-validation (LIBSVM, LIBLINEAR) and needs N >= 2; "
                             "SVMlight's verbosity is --verbose here (and -q for none)")


def _check_lambda(line):
    v = line.value("-l")
    if line.has("-l") and not _NUMBER.match(v or ""):
        raise ParameterError(f"-l {v}: -l is the regularisation lambda here; SVMlight's -l (transductive "
                             "labels file) has no equivalent")


def _check_class_weights(line):
    for flag, values in line.options:
        if flag == "-w" and len(values) == 2 and not _NUMBER.match(values[1]):
            raise ParameterError(f"-w {' '.join(values)}: -w takes LABEL WEIGHT (LIBSVM's -wLABEL WEIGHT); "
                                 "SVMlight's -w (regression tube width) has no equivalent yet")


def _svmlight_defaults(line):
    """SVMlight's meaning of -b and of omitted -c / kernel parameters."""
    if line.value("-t") == "4":
        raise ParameterError("-t 4 on an SVMlight line is its user-defined kernel, which has no equivalent "
                             "(LIBSVM's -t 4, a precomputed kernel, is -s smo -t 4 on a line without SVMlight's flags)")
    if not (line.has("-c") or line.has("-l")):
        raise ParameterError("SVMlight's default C is 1/avg(x.x), svm-train's is 1: give -c C")
    t = line.value("-t") or "0"
    # SVMlight's kernel defaults (s = 1, c = 1, gamma = 1) against LIBSVM's (1/d, 0, 1/d)
    differ = {"1": ("-g", "-r"), "2": ("-g",), "3": ("-g", "-r")}.get(t, ())
    for flag in differ:
        if not line.has(flag):
            theirs = {"-g": "-g (SVMlight's gamma)" if t == "2" else "-s", "-r": "-r"}[flag]
            raise ParameterError(f"-t {t}: SVMlight's default {theirs} is 1, svm-train's (LIBSVM's) "
                                 f"{'is 0' if flag == '-r' else 'is 1/number of features'}: give {flag}")
    b = line.value("-b") if line.has("-b") else "1"
    if b not in ("0", "1"):
        raise ParameterError(f"-b takes 0 or 1 (got {b})")
    line.drop("-b")
    task = line.value("--task") or "c"
    # SVMlight's biased regression is LIBSVM's epsilon-SVR: trained below as the biased classifier is
    biased_regression = task == "r" and b == "1" and not line.has("-s")
    if (line.has("-s") or task != "c") and not biased_regression:
        # ranking: the bias cancels in every pair difference, so -b 1 and -b 0 are the same problem
        if task not in ("c", "p") and b == "1" and solvers_for(task):
            equivalent = "is -s smo (drop -s)" if task == "r" else "has no equivalent yet"
            raise ParameterError(f"-z {task} with SVMlight's biased hyperplane (-b 1, its default) {equivalent}; "
                                 f"-b 0 trains it without a bias (-s {solvers_for(task)[0]})")
        if task != "c" and not line.has("-s") and solvers_for(task):
            line.options.insert(0, ["-s", [solvers_for(task)[0]]])
        if task == "p" and not line.has("--rank-c"):
            line.options.append(["--rank-c", ["svmlight"]])     # SVMlight's C is per pair
        return
    if b == "1":            # the biased hyperplane (or tube): smo's unregularised bias, linear unless -t
        line.options.insert(0, ["-s", [KERNEL_SOLVER]])
        if not line.has("-t"):
            line.options.append(["-t", ["0"]])
    elif line.value("-t") in (None, "0"):
        line.drop("-t")
        line.options.insert(0, ["-s", ["dcd"]])     # unbiased linear: dcd's hinge-loss problem exactly
    else:
        line.options.insert(0, ["-s", [UNBIASED_KERNEL_SOLVER]])
        line.options.append(["--no-bias", []])


def _solver_of(line, libsvm_flags):
    """Resolve numeric -s and LIBSVM lines into svm-train's -s NAME."""
    s = line.value("-s")
    libsvm_line = _is_libsvm(line, libsvm_flags) or line.has("--grid")     # --grid: grid.py drives LIBSVM
    if s is None:
        if libsvm_line:
            line.options.insert(0, ["-s", [KERNEL_SOLVER]])
        else:
            _penalty_solver(line)
        return
    if _INT.match(s):
        s = str(int(s))
        table, peer = (LIBSVM_S, "LIBSVM") if libsvm_line else (LIBLINEAR_S, "LIBLINEAR")
        if s not in table:
            known = ", ".join(k for k in table)
            why = ""
            if peer == "LIBSVM" and _libsvm_by_flags_alone(line, libsvm_flags):
                why = f" (the line is LIBSVM's: LIBLINEAR's train has no {libsvm_flags[0]})"
            raise ParameterError(f"-s {s}: not a {peer} solver number ({known}){why}; svmtrain's solvers are "
                                 "named: -s dcd|ocas|pegasos|sbp|asset|smo")
        target = table[s]
        if isinstance(target, str):
            hint = " (SVMlight's kernel scale s is -g here)" if peer == "LIBSVM" else ""
            if peer == "LIBSVM" and _libsvm_by_flags_alone(line, libsvm_flags):
                hint = f" (the line is LIBSVM's: LIBLINEAR's train has no {libsvm_flags[0]})"
            raise ParameterError(f"-s {s}: {target}{hint}")
        line.drop("-s")
        if target is None:              # LIBSVM's C-SVC
            line.options.insert(0, ["-s", [KERNEL_SOLVER]])
            return
        for flag, value in zip(target[::2], target[1::2]):
            given = line.value(flag)
            if given is not None and given != value:
                raise ParameterError(f"-s {s} is {peer}'s {flag} {value}; it contradicts {flag} {given}")
            line.drop(flag)
        line.options = [[flag, [value]] for flag, value in zip(target[::2], target[1::2])] + line.options
    elif _NUMBER.match(s):
        raise ParameterError(f"-s {s}: -s names the solver here (dcd, ocas, pegasos, sbp, asset, smo); "
                             "SVMlight's kernel scale s is -g")


def _penalty_solver(line):
    """``--penalty P`` without ``-s``: the first solver of the registry that
    trains P when the default solver does not (``--penalty l1``: ``-s cdn``),
    as kernel options choose the kernel solver."""
    penalty = line.value("--penalty")
    if penalty is None or penalty in declaration(DEFAULT_SOLVER).penalties:
        return
    able = names(lambda d: penalty in d.penalties)
    if able:
        line.options.insert(0, ["-s", [able[0]]])


def _probability_or_bias(line, libsvm_flags):
    """-b: LIBSVM's probability switch (svm-train's own -b), SVMlight's biased
    hyperplane. -b 0 where the two readings differ (a kernel model, which is
    also what a line that is LIBSVM's by its -b alone trains; or -B, -R) is
    refused, naming both."""
    if not line.has("-b"):
        return
    b = line.value("-b")
    if b == "1":
        return                          # LIBSVM's probability estimates: svm-train's own -b 1
    if b != "0":
        raise ParameterError(f"-b takes 0 or 1 (got {b})")
    kernel_solver = line.value("-s") in ("sbp", "asset", "smo") or line.value("-t") not in (None, "0")
    if libsvm_flags == ["-b"] and _libsvm_by_flags_alone(line, libsvm_flags):
        # without -b the line would not be LIBSVM's: say how to keep LIBSVM's kernel
        raise ParameterError("-b 0 is ambiguous here: LIBSVM's 'no probability estimates' is its default "
                             "(drop -b and give -t 2 for its RBF C-SVC), SVMlight's 'no bias' is -s dcd "
                             "(a linear model without a bias)")
    if kernel_solver or line.has("-B") or line.has("-R"):
        raise ParameterError("-b 0 is ambiguous here: LIBSVM's 'no probability estimates' is the default "
                             "(drop -b), SVMlight's 'no bias' is --no-bias")
    line.drop("-b")     # linear, no bias: both readings agree with the default
