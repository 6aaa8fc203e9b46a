"""svm-train's output: where a run's hooks go, the summary line, the model file."""
import click

from ..solvers import declaration
from ._progress import Progress, bars_wanted


def solver_log(quiet, verbose):
    """Where the solvers' ``log`` lines go: per-iteration detail to stdout with
    --verbose only; lines starting with WARNING always, unless -q."""
    def log(line):
        if not quiet and (verbose or line.startswith("WARNING")):
            click.echo(line)
    return log


def say(text):
    """A note to stderr (the cache, the memory plan, the cluster), even with -q."""
    click.echo(f"svm-train: {text}", err=True)


def hooks(quiet, verbose, on_model):
    """The :class:`svmtrain.run.Hooks` of svm-train: bars on a
    terminal, result lines always, search lines, summaries and warnings
    unless -q; ``on_model(model, params, echo, log)`` for each model."""
    from ..run import Hooks
    show = bars_wanted(quiet)
    echo = (lambda s: None) if quiet else click.echo
    log = solver_log(quiet, verbose)

    def warn(text):
        if not quiet:
            click.echo(f"svm-train: warning: {text}", err=True)

    return Hooks(bar=lambda desc, **kw: Progress(show, desc, **kw), log=log, echo=echo, result=click.echo,
                 say=say, warn=warn, model=lambda model, params: on_model(model, params, echo, log))


def finish(model, params, echo, log, record_time, model_file, model_format):
    """The summary line, then the model file in the format asked for."""
    summary(model, params, echo, log)
    if record_time:
        model.header.append(("train_time", round(model.train_time, 6)))

    from ..io.atomic import remove_stale_temps
    remove_stale_temps(model_file)   # left by a run that was killed while writing it
    if model_format == "liblinear":
        from ..io.liblinear_format import write_liblinear_model
        write_liblinear_model(model, model_file)
    elif model_format == "libsvm":
        from ..io.libsvm_format import write_libsvm_model
        write_libsvm_model(model, model_file)
    else:
        from ..io.model_io import save_model
        save_model(model, model_file)


def summary(model, params, echo, log):
    """One line at the end: data, parameters, iterations, objective, support
    vectors, training time (LIBLINEAR's field names); with several binary
    problems (one-vs-rest) their totals and mean objective, and each
    problem's own line to ``log`` (shown with --verbose).

    Warnings (an iteration cap reached) come from the solvers through ``log``.
    """
    header = dict(model.header)
    if params.task == "o":
        return _one_class_summary(model, params, echo, header)
    if declaration(params.solver).libsvm_summary:
        return _dual_summary(model, params, echo, log, header)
    lam = header["lambda_used"]
    results = model.fit_results
    k = len(results)
    objective = sum(r.objective for r in results) / k
    fields = [f"#iter = {sum(r.n_iter for r in results)}" + (f" ({k} one-vs-rest problems)" if k > 1 else ""),
              f"Objective value = {objective:.10g} (lambda form{', mean' if k > 1 else ''}; "
              f"C form {objective / lam:.10g})"]
    n_sv = getattr(model, "n_sv", None)
    if n_sv is None and all("n_sv" in r.info for r in results):
        n_sv = sum(r.info["n_sv"] for r in results)
    if n_sv is not None:
        fields.append(f"nSV = {n_sv}")
    if all("nnz" in r.info for r in results):         # sparse (L1) models: LIBLINEAR's #nonzeros/#features
        fields.append(f"#nonzeros/#features = {sum(r.info['nnz'] for r in results)}/{k * model.n_features}")
    fields.append(f"Training time = {model.train_time:.3f} s")
    if k > 1:
        for label, r in zip(model.labels, results):
            sv = f", nSV = {r.info['n_sv']}" if "n_sv" in r.info else ""
            log(f"class {label:g}: #iter = {r.n_iter}, Objective value = {r.objective:.10g}{sv}")
    what = "regression" if params.task == "r" else f"{len(model.labels)} classes"
    if params.task == "p":
        info = results[0].info
        what = f"ranking ({info.get('n_queries', 0)} queries, {info.get('n_pairs', 0)} pairs)"
    echo(f"{params.solver}: {header['n_train']} examples, {model.n_features} features, {what}, "
         f"lambda = {lam:.6g} (C = {header['C_used']:.6g}): " + ", ".join(fields))


def _dual_summary(model, params, echo, log, header):
    """The line of -s smo, in LIBSVM's terms: iterations, the dual objective
    ``obj`` and ``rho`` (of each one-vs-one problem to ``log`` when there
    are several), support vectors, training time."""
    results = model.fit_results
    k = len(results)
    fields = [f"#iter = {sum(r.n_iter for r in results)}" + (f" ({k} one-vs-one problems)" if k > 1 else "")]
    if k == 1:
        fields.append(f"obj = {results[0].info['obj']:.6f}, rho = {results[0].info['rho']:.6f}")
    for r in results if k > 1 else ():
        log(f"#iter = {r.n_iter}, obj = {r.info['obj']:.6f}, rho = {r.info['rho']:.6f}, nSV = {r.info['n_sv']}")
    fields += [f"nSV = {model.n_sv}", f"Training time = {model.train_time:.3f} s"]
    what = "regression" if params.task == "r" else f"{len(model.labels)} classes"
    echo(f"{params.solver}: {header['n_train']} examples, {model.n_features} features, "
         f"{what} ({_trade_off(params, header, results)}): " + ", ".join(fields))


def _trade_off(params, header, results):
    """C, or for the nu-SVMs (--nu) nu with LIBSVM's derived C = 1/r of
    nu-SVC or tube width of nu-SVR (one problem)."""
    from ..solvers import trains_nu
    if params.nu is None or not trains_nu(params.solver, params.task):
        return f"C = {header['C_used']:.6g}"
    if params.task == "r":
        return f"nu = {params.nu:g}, C = {header['C_used']:.6g}, epsilon = {results[0].info['epsilon']:.6g}"
    return f"nu = {params.nu:g}" + (f", C = {results[0].info['C']:.6g}" if len(results) == 1 else "")


def _one_class_summary(model, params, echo, header):
    """The one-class line: nu, iterations, LIBLINEAR's objective 1/2 |w|^2
    (LIBSVM's 1/2 alpha^T Q alpha; for asset, on the mapped rows), rho, support
    vectors (a kernel model's expansion terms), training time."""
    r = model.fit_results[0]
    rho = -float(model.b[0])
    fields = [f"#iter = {r.n_iter}", f"Objective value = {r.objective:.10g} (1/2 alpha^T Q alpha)",
              f"rho = {rho:.10g}"]
    n_sv = getattr(model, "n_sv", None)
    if n_sv is None:
        n_sv = r.info.get("n_sv")
    if n_sv is not None:
        fields.append(f"nSV = {n_sv}")
    fields.append(f"Training time = {model.train_time:.3f} s")
    echo(f"{params.solver}: {header['n_train']} examples, {model.n_features} features, one-class, "
         f"nu = {params.nu:g}: " + ", ".join(fields))
