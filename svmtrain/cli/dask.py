"""The command-line side of svm-predict ``--engine dask`` (svm-train's runs on a cluster
through :func:`svmtrain.run.run`)."""
import contextlib
import sys

import click

from ..errors import ParameterError


def predict_on_cluster(test_file, model_file, output_file, output_dir, decision_values, chunk_size,
                       scheduler, quiet):
    """svm-predict --engine dask: predictions per partition on the workers,
    written in input order to ``output_file`` or one file per partition
    into ``output_dir``; prints the accuracy line unless ``quiet``."""
    from ..distributed.engine import connect
    from ..distributed.partitions import expand
    from ..distributed.predict import output_paths, predict
    from ..io.atomic import atomic_write, same_file
    from ..io.model_io import load_model

    if (output_file is None) == (output_dir is None):
        raise ParameterError("give either OUTPUT_FILE or --output-dir DIR")
    if chunk_size is not None and chunk_size <= 0:
        raise ParameterError(f"--chunk-size must be > 0 (got {chunk_size})")
    specs = expand(test_file)
    outputs = [output_file] if output_dir is None else output_paths(specs, output_dir, create=False)
    for out_path in outputs:
        for other in [model_file] + [s.path for s in specs]:
            if out_path != "-" and same_file(out_path, other):
                raise ParameterError(f"output {out_path} is the same file as {other}; refusing to overwrite it")
    model = load_model(model_file)
    if getattr(model, "task", "c") == "p":
        raise ParameterError("a ranking model's measures need whole queries: predict without --engine dask")
    from ..mercer.precomputed import of_model
    if of_model(model):
        raise ParameterError("a precomputed-kernel model (-t 4) predicts here only: drop --engine dask")
    with connect(scheduler) as client:
        if output_dir is not None:
            summary = predict(specs, model, client, output_dir=output_dir, decision_values=decision_values,
                              chunk_rows=chunk_size)
        else:
            if output_file == "-":
                out = contextlib.nullcontext(sys.stdout)
            else:
                out = atomic_write(output_file)
            with out as f:
                summary = predict(specs, model, client, out=f, decision_values=decision_values,
                                  chunk_rows=chunk_size)
    if not quiet:
        click.echo(summary.line(), err=(output_file == "-"))
