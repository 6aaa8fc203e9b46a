"""svm-train's help, generated from the solver registry and the options' own help.

Three pages, as LIBSVM's and LIBLINEAR's tools have a short one:

* no arguments: :func:`short_usage`, about 30 lines: the solvers (one
  line each, from ``Declaration.summary``, with the tasks they train), the
  common options, and where the rest is;
* ``--help``: :func:`full_help`, every option, grouped by what it applies
  to (:func:`groups`), each group's "Applies to:" line asked of the
  registry (:mod:`svmtrain.solvers`);
* ``--help -s NAME`` (or ``-s NAME --help``): :func:`solver_help`, one
  solver's page: its Declaration (summary, tasks and losses, kernel,
  ``--stream``, Dask, sample weights, Crammer-Singer, ``-B``) and the
  groups that apply to it (never another solver's own options).

The options' sentences are their own help (``svmtrain.params.option`` and
svm-train's decorators); the lists of solvers are the registry's, so a new
solver or capability changes the help with no edit here. tests/test_help.py
holds every "Applies to:" line and every solver page to the registry.
"""
from dataclasses import dataclass

import click

from ..solvers import REGISTRY, SOLVERS, declaration, kernel_solvers, listing, names
from ..solvers.contract import PENALTY_NAMES
from ..tasks import LOSSES, NAMES

PROG = "svm-train"
PAGE = "svmtrain.help"          # ctx.meta key: which page get_help renders
SHORT = "short"                 # no arguments
FULL = "full"                   # --help


def own_options(name):
    """The click parameter names (TrainParams fields) that only ``-s name`` reads."""
    d = declaration(name)
    return tuple(field for field, _flag in d.options) + d.reads


def _cut_planes(d):
    return d.streamed is not None and d.streamed.cut_buffer


def _shuffles(d):
    return d.streamed is not None and d.streamed.shuffle_buffer


def searches_c(d):
    """-C's solvers: linear models of classification or regression (svmtrain.selection.param_search)."""
    return not d.trains_kernel_model() and any(t in d.tasks for t in ("c", "r"))


@dataclass(frozen=True)
class Group:
    """A section of ``--help``: ``options`` (click parameter names) that apply
    to ``solvers`` (None: every solver); ``kernel_note``: ' -t K' after the
    solvers that need it (:func:`svmtrain.solvers.listing`); ``note``: a
    sentence after the "Applies to:" line."""
    title: str
    solvers: tuple
    options: tuple
    kernel_note: bool = False
    note: str = ""

    def applies(self):
        """The group's "Applies to:" sentence."""
        who = "every solver" if self.solvers is None else listing(self.solvers, kernel_note=self.kernel_note)
        return f"Applies to: {who}."

    def covers(self, name):
        return self.solvers is None or name in self.solvers


def groups():
    """The sections of ``--help``, in order, from the registry."""
    own = [Group(f"Options of -s {name} alone", (name,), own_options(name)) for name in SOLVERS if own_options(name)]
    return [
        Group("General options", None, (
            "solver", "task", "loss", "penalty", "lam", "C", "eps", "epsilon", "probability", "class_weights", "nu",
            "rank_c", "multiclass", "epochs", "batch_size", "average", "unreg_bias", "max_iter", "threads", "seed",
            "precompile", "capabilities", "server", "version", "help"),
              note="Where an option's help names solvers, only they read it."),
        Group("Input", None, ("chunk_size", "cache", "scale", "scale_range")),
        Group("Linear models: LIBLINEAR's bias feature", tuple(names(lambda d: d.bias)), ("bias",)),
        Group("Kernel options", tuple(kernel_solvers()), ("kernel_type", "gamma", "degree", "coef0", "cache_mb"),
              kernel_note=True),
        Group("Cutting planes (OCAS's cut buffer)", tuple(names(_cut_planes)), ("cut_buffer", "max_time", "qp_bound")),
        *own,
        Group("Model selection: cross-validation", None, ("folds", "fold_style")),
        Group("Model selection: C of a linear model (LIBLINEAR's -C)", tuple(names(searches_c)), ("find_c",)),
        Group("Model selection: C and gamma of a kernel (LIBSVM's grid.py)", tuple(kernel_solvers()),
              ("grid", "log2c", "log2g", "grid_out", "grid_png", "jobs"), kernel_note=True),
        Group("Transduction (SVMlight's -p)", tuple(names(lambda d: d.trains_transductive())), ("transduction",)),
        Group("Out of core", tuple(names(lambda d: d.streamed is not None)), ("stream", "memory_limit")),
        Group("Out of core: shuffle buffer", tuple(names(_shuffles)), ("shuffle_buffer",)),
        Group("Dask", tuple(names(lambda d: d.dask)), ("engine", "scheduler")),
        Group("Output", None, ("model_format", "record_time", "trace", "trace_test", "trace_every", "quiet",
                               "verbose")),
    ]


# ------------------------------------------------------------------ which page

def page_asked(args, command):
    """Which help page ``args`` ask for: SHORT (no arguments), FULL
    (``--help``), a solver's name (``--help`` with ``-s NAME``, or
    LIBLINEAR's number of one), or None (no help: a training run).
    ParameterError (svmtrain.errors) for ``--help -s`` with no solver of
    that name, or with a number no peer's -s has."""
    if not args:
        return SHORT
    end = args.index("--") if "--" in args else len(args)
    if "--help" not in args[:end]:
        return None
    before = [a for a in args[:end] if a != "--help"]
    rest = before + args[end:]
    raw = _solver_word(before)
    if raw is None:
        return FULL
    if raw in REGISTRY:
        return raw
    from .foreign import translate_train
    translated = translate_train(rest, command)         # -s 3: LIBLINEAR's -s dcd ...; or its refusal
    name = _solver_word(translated)
    declaration(name if name is not None else raw)      # an unknown name: the known ones
    return name


def _solver_word(args):
    """The value of the last ``-s`` (``-s X`` or ``-sX``) in ``args``, or None."""
    found = None
    for i, a in enumerate(args):
        if a == "-s" and i + 1 < len(args):
            found = args[i + 1]
        elif a.startswith("-s") and not a.startswith("--") and len(a) > 2:
            found = a[2:]
    return found


def help_text(ctx, command):
    """The page ``ctx.meta[PAGE]`` names (``--help``'s when none)."""
    page = ctx.meta.get(PAGE) or FULL
    if page == SHORT:
        return short_usage()
    if page == FULL:
        return full_help(ctx, command)
    return solver_help(ctx, command, page)


# ------------------------------------------------------------------ the pages

def _field_default(name):
    from dataclasses import fields
    from ..params import TrainParams
    return next(f.default for f in fields(TrainParams) if f.name == name)


def _short_names(solvers, kernel_note=False):
    return ", ".join(s + (" -t K" if kernel_note and REGISTRY[s].kernel == "nonlinear" else "") for s in solvers)


def _task_letters(d):
    return " ".join(t if t in d.tasks else " " for t in NAMES)


def short_usage():
    """No arguments: the solvers and the common options, LIBLINEAR's way."""
    width = max(len(s) for s in SOLVERS)
    kernels = _short_names(kernel_solvers(), kernel_note=True)
    lines = [
        f"Usage: {PROG} [options] TRAIN_FILE [MODEL_FILE]",
        "Train an SVM on TRAIN_FILE (LIBSVM/SVMlight text) and write MODEL_FILE "
        "(default: TRAIN_FILE's base name + .model).",
        "options:",
        f"-s NAME : solver (default {_field_default('solver')}) and the tasks it trains (--task):",
        *(f"    {s:<{width}}  {_task_letters(REGISTRY[s])}  {REGISTRY[s].summary}" for s in SOLVERS),
        "--task T : " + ", ".join(f"{t} {what}" for t, what in NAMES.items())
        + f" (default {_field_default('task')})",
        "-c cost : set the parameter C (default 1; or -l lambda, lambda = 1/(n C))",
        "-e epsilon : tolerance of the stopping criterion (default: the solver's)",
        f"-B bias : add a constant feature of this value, < 0: none (default {_field_default('bias'):g}; "
        f"{_short_names(names(lambda d: d.bias))})",
        f"-t kernel : 0 linear, 1 polynomial, 2 rbf, 3 sigmoid ({kernels})",
        "-g gamma : the kernel's gamma (default 1/number of features)",
        "-v n : n-fold cross-validation: print the accuracy, write no model",
        f"-C : search C by cross-validation ({_short_names(names(searches_c))})",
        "--grid : search C and gamma by cross-validation, as LIBSVM's grid.py (the kernel solvers)",
        f"--stream : train out of core, in bounded memory ({_short_names(names(lambda d: d.streamed is not None))})",
        "-q : quiet mode (no outputs)",
        "LIBSVM's, LIBLINEAR's and SVMlight's spellings work too (README, \"Coming from LIBSVM, LIBLINEAR or "
        "SVMlight\").",
        f"All options: {PROG} --help; one solver's: {PROG} --help -s NAME",
    ]
    return "\n".join(lines)


def _records(ctx, command, wanted):
    """click's (flags, help) rows of the parameters named ``wanted``, in that order."""
    params = {("help" if p is command.get_help_option(ctx) else p.name): p for p in command.get_params(ctx)}
    records = (params[name].get_help_record(ctx) for name in wanted if name in params)
    return [r for r in records if r is not None]


def ungrouped(ctx, command):
    """The options of ``command`` that no group of :func:`groups` lists (none, as tests/test_help.py checks)."""
    grouped = {name for g in groups() for name in g.options}
    help_option = command.get_help_option(ctx)
    return [p.name for p in command.get_params(ctx)
            if isinstance(p, click.Option) and p is not help_option and p.name not in grouped]


def _write_groups(ctx, command, formatter, chosen):
    for g in chosen:
        with formatter.section(g.title):
            formatter.write_text(g.applies() + (" " + g.note if g.note else ""))
            formatter.write_dl(_records(ctx, command, g.options))
    rest = ungrouped(ctx, command)
    if rest:
        with formatter.section("Other options"):
            formatter.write_dl(_records(ctx, command, rest))


def full_help(ctx, command):
    """``--help``: every option, grouped by what it applies to."""
    formatter = ctx.make_formatter()
    command.format_usage(ctx, formatter)
    command.format_help_text(ctx, formatter)
    _write_groups(ctx, command, formatter, groups())
    formatter.write_paragraph()
    formatter.write_text(f"One solver's options: {PROG} --help -s NAME ({', '.join(SOLVERS)}).")
    return formatter.getvalue().rstrip("\n")


def _by_task(tasks):
    """'classification (--task c): hinge, log; regression (--task r): ...' of a task -> losses mapping."""
    return "; ".join(f"{NAMES[t]} (--task {t}): {', '.join(tasks[t])}" for t in NAMES if tasks.get(t))


def _kernel_sentence(d):
    if d.kernel == "always":
        return "a kernel expansion, whatever -t (the linear kernel -t 0 included)"
    if d.kernel == "nonlinear":
        return "linear; with -t 1|2|3 a kernel expansion"
    return "linear (no kernel options)"


def facts(name):
    """(label, sentence) of what ``-s name``'s Declaration says it does."""
    d = declaration(name)
    s = d.streamed
    dask = {t: tuple(loss for loss in LOSSES[t] if d.dask_module(t, loss)) for t in NAMES}
    cs_where = ["in memory"] + (["streamed"] if s is not None and s.multiclass_cs else []) \
        + (["on Dask"] if d.dask_cs else [])
    return [
        ("Trains", _by_task(d.tasks)),
        ("Model", _kernel_sentence(d)),
        ("--penalty", ", ".join(f"{p} ({PENALTY_NAMES[p]})" for p in d.penalties)),
        ("-B", "yes: LIBLINEAR's bias feature" if d.bias else "no"),
        ("--multiclass cs", f"yes: Crammer-Singer ({', '.join(cs_where)})" if d.multiclass_cs
         else "no: one-vs-rest only" if "c" in d.tasks else "no"),
        ("--stream", _by_task(s.tasks) if s is not None else "no: in memory only"),
        ("--engine dask", _by_task(dask) or "no"),
        ("Sample weights", f"(Python API) {_by_task(d.sample_weights)}" if d.sample_weights else "no"),
    ]


def solver_help(ctx, command, name):
    """``--help -s NAME``: the solver's Declaration and the options that apply to it."""
    d = declaration(name)
    formatter = ctx.make_formatter()
    formatter.write_usage(ctx.command_path, f"-s {name} [OPTIONS] TRAIN_FILE [MODEL_FILE]")
    formatter.write_paragraph()
    with formatter.indentation():
        formatter.write_text(f"-s {name}: {d.summary}.")
    with formatter.section(f"What -s {name} does"):
        formatter.write_dl(facts(name))
    _write_groups(ctx, command, formatter, [g for g in groups() if g.covers(name)])
    formatter.write_paragraph()
    formatter.write_text(f"Every option: {PROG} --help.")
    return formatter.getvalue().rstrip("\n")

