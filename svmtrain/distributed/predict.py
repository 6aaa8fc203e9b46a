"""svm-predict on a Dask cluster: one task per partition.

The model is sent once to every worker (``scatter(broadcast=True)``). Each
task streams its partition through the reader and the model exactly as
the local ``svm-predict`` does (``predict.predict_stream``), and either
returns the prediction text, which the driver writes in partition order
as soon as the partitions before it are written, or writes it into
``--output-dir`` itself (atomically, one file per partition) and returns
only its counts. Tasks are pure: a lost worker's partitions are simply
predicted again elsewhere by Dask.
"""
import io
import os

from ..errors import ParameterError
from ..prediction import PredictionSummary, RegressionSummary, predict_stream
from .partitions import output_name, renamed


def _predict_partition(spec, model, decision_values, out_path, chunk_rows):
    from ..errors import InputFormatError
    from ..io.atomic import atomic_write
    from ..io.reader import iter_chunks
    try:
        chunks = iter_chunks(spec.path, chunk_rows=chunk_rows)
        if out_path is None:
            buf = io.StringIO()
            summary = predict_stream(chunks, model, buf, decision_values=decision_values)
            return buf.getvalue(), summary
        with atomic_write(out_path) as f:
            summary = predict_stream(chunks, model, f, decision_values=decision_values)
        return None, summary
    except InputFormatError as e:
        raise renamed(e, spec) from None


def output_paths(specs, output_dir, create=True):
    """One prediction file per partition in ``output_dir`` (created when
    missing, if ``create``); ParameterError when two partitions would share
    a name."""
    names = [output_name(s.display) for s in specs]
    seen = {}
    for s, name in zip(specs, names):
        if name in seen:
            raise ParameterError(f"--output-dir: {seen[name]} and {s.display} would both write {name}")
        seen[name] = s.display
    if create:
        os.makedirs(output_dir, exist_ok=True)
    return [os.path.abspath(os.path.join(output_dir, name)) for name in names]


def predict(specs, model, client, out=None, output_dir=None, decision_values=False, chunk_rows=None):
    """Predict every partition on the cluster; write the lines to ``out`` in
    input order, or one file per partition into ``output_dir``. Returns the
    PredictionSummary (a RegressionSummary for a regression model) over all
    partitions. ``chunk_rows``: rows per chunk while the workers read."""
    paths = output_paths(specs, output_dir) if output_dir is not None else [None] * len(specs)
    [model_f] = client.scatter([model], broadcast=True, hash=False)
    futures = [client.submit(_predict_partition, s, model_f, decision_values, p, chunk_rows, pure=False)
               for s, p in zip(specs, paths)]
    summary = RegressionSummary() if getattr(model, "task", "c") == "r" else PredictionSummary()
    try:
        for i in range(len(futures)):
            text, part = futures[i].result()
            futures[i] = None          # let Dask free the text
            if text is not None:
                out.write(text)
            summary.merge(part)
    finally:
        client.cancel([f for f in futures if f is not None] + [model_f])
    return summary
