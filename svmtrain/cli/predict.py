"""svm-predict: stream a data file through a model; write one label per line."""
import contextlib
import os
import sys

import click

from .._version import __version__
from ..errors import ParameterError
from ._errors import handle_errors, parse_foreign, run_and_exit
from .foreign import translate_predict

HELP = """Predict TEST_FILE (LIBSVM/SVMlight text; .gz/.bz2/.xz; - for standard
input) with MODEL_FILE (svmtrain, LIBLINEAR, LIBSVM or SVMlight format) and
write one predicted label per line to OUTPUT_FILE (- for standard output;
with --engine dask, --output-dir DIR instead)."""


class _Command(click.Command):
    """LIBSVM/LIBLINEAR's ``-b 0`` is accepted; other foreign flags stop with
    the svm-predict equivalent (svmtrain.cli.foreign)."""

    def parse_args(self, ctx, args):
        if args and not ctx.resilient_parsing:
            args = parse_foreign("svm-predict", translate_predict, args, self)
        return super().parse_args(ctx, args)


@click.command(cls=_Command, help=HELP, no_args_is_help=True,
               context_settings={"help_option_names": ["--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name="svm-predict", message="%(prog)s (svmtrain) %(version)s")
@click.option("-d", "--decision-values", is_flag=True,
              help="Follow each label with the decision values, in the model's label order.")
@click.option("-b", "probability", type=click.IntRange(0, 1), default=0, show_default=True,
              help="1: probability estimates (logistic models, models trained with -b 1), as LIBLINEAR's and "
              "LIBSVM's -b 1; a regression model's line of its Laplace noise.")
@click.option("--chunk-size", type=int, default=None, help="Rows per chunk when reading.")
@click.option("-q", "quiet", is_flag=True, help="Quiet: do not print the accuracy.")
@click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="Predict here, or on a Dask cluster (TEST_FILE may then be a glob, a directory or a "
              "list file of partitions).")
@click.option("--scheduler", metavar="ADDRESS",
              help="Dask scheduler address (--engine dask; default: a local cluster, one worker per core).")
@click.option("--output-dir", metavar="DIR",
              help="With --engine dask: one prediction file per partition in DIR, instead of OUTPUT_FILE.")
@click.argument("test_file")
@click.argument("model_file")
@click.argument("output_file", required=False, metavar="OUTPUT_FILE")
def main(test_file, model_file, output_file, decision_values, probability, chunk_size, quiet, engine, scheduler,
         output_dir):
    with handle_errors("svm-predict"):
        from .._numba.start import skip_blas_probe
        skip_blas_probe()
        if engine == "dask":
            if probability:
                raise ParameterError("-b 1 predicts here only; it cannot be combined with --engine dask")
            from .dask import predict_on_cluster
            return predict_on_cluster(test_file, model_file, output_file, output_dir, decision_values,
                                      chunk_size, scheduler, quiet)
        if scheduler or output_dir:
            raise ParameterError(f"{'--scheduler' if scheduler else '--output-dir'} needs --engine dask")
        if output_file is None:
            raise ParameterError("missing argument OUTPUT_FILE")
        if probability and decision_values:
            raise ParameterError("-b 1 prints probabilities in LIBLINEAR's format; it does not combine with -d")
        _run(test_file, model_file, output_file, decision_values, chunk_size, quiet, bool(probability))


def _run(test_file, model_file, output_file, decision_values, chunk_size, quiet, probabilities=False):
    from ..io.atomic import atomic_write, same_file
    from ..io.model_io import load_model
    from ..io.reader import iter_chunks
    from ..prediction import predict_stream

    if chunk_size is not None and chunk_size <= 0:
        raise ParameterError(f"--chunk-size must be > 0 (got {chunk_size})")
    for other in (test_file, model_file):
        if output_file != "-" and other != "-" and same_file(output_file, other):
            raise ParameterError(f"OUTPUT_FILE {output_file} is the same file as {other}; refusing to overwrite it")
    model = load_model(model_file)
    from ..mercer import precomputed
    chunks = iter_chunks(test_file, chunk_rows=chunk_size, index_base=precomputed.index_base(model))
    if precomputed.of_model(model):         # -t 4: 0:ID, then the kernel values against the training rows
        from ..io.reader import display_name
        chunks = precomputed.checked_chunks(chunks, precomputed.model_need(model), display_name(test_file))
    if output_file == "-":
        out = contextlib.nullcontext(sys.stdout)
    else:
        out = atomic_write(output_file)
    with out as f:
        summary = predict_stream(chunks, model, f, decision_values=decision_values, probabilities=probabilities)
    if not quiet:
        click.echo(summary.line(), err=(output_file == "-"))


def console_main():
    """The ``svm-predict`` console script: :func:`main`, then a fast exit."""
    run_and_exit(main)


if __name__ == "__main__":
    console_main()
