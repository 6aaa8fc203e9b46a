"""Training on a Dask cluster: the counterpart of ``svmtrain.training.train``.

The partitions are parsed on the workers and stay there; the driver learns
their sizes and labels, orders the labels as LIBLINEAR does (first
appearance over the partitions in order, +1 before -1), and trains one
binary problem per weight column with the distributed OCAS or Pegasos.
The model (file, header, predictions) is the one a local run writes.
"""
import time

import numpy as np

from ..errors import InputFormatError, ParameterError
from ..params import check_params
from ..solvers.base import split_progress, with_defaults
from ..training import check_class_weights, finish_model, label_order, linear_model, problem_costs
from . import ocas, pegasos
from .engine import Session

SOLVERS = {"ocas": ocas, "pegasos": pegasos}


def check_supported(params):
    """ParameterError unless the Dask engine can train ``params``."""
    if params.task != "c" or params.loss != "hinge":
        from ..tasks import NAMES
        what = NAMES.get(params.task, params.task) if params.task != "c" else f"--loss {params.loss}"
        raise ParameterError(f"--engine dask trains classification with the hinge loss; {what} trains in memory "
                             "(drop --engine dask)")
    if params.solver not in SOLVERS:
        raise ParameterError(f"--engine dask trains -s ocas and -s pegasos (got -s {params.solver})")
    if params.kernel_type not in (None, 0):
        raise ParameterError("--engine dask trains linear models only (no -t with -s pegasos)")


def train(specs, params, client, progress=None, log=None, notify=None, cache=False, source=None,
          driver_threads=1):
    """Train on the partitions ``specs`` (``partitions.expand``) over ``client``.

    Returns (model, n_rows, session traffic). ``notify(message)`` reports
    worker losses and cache messages; ``log`` the solvers' lines; ``cache``
    makes each worker keep a binary cache beside each partition file.
    """
    check_params(params)
    check_supported(params)
    module = SOLVERS[params.solver]
    source = source or (specs[0].display if specs else "<data>")
    session = Session(client, specs, notify=notify, threads=params.threads)
    try:
        meta = session.load(cache=cache)
        n = sum(m["rows"] for m in meta)
        if n == 0:
            raise InputFormatError(source, None, "the training set is empty (no data lines)")
        d = max(m["n_features"] for m in meta)
        order = label_order(np.concatenate([m["labels"] for m in meta]))
        check_class_weights(params, order)
        params = with_defaults(params, getattr(module.local, "DEFAULTS", {}))
        problems = problem_costs(order, params)
        start = time.perf_counter()
        results = []
        for j, (label, cost) in enumerate(problems):
            if log is not None and len(problems) > 1:
                log(f"class {label:g} vs rest")
            kw = {"driver_threads": driver_threads} if module is ocas else {}
            results.append(module.fit(session, (j, label, cost), n, d, params,
                                      progress=split_progress(progress, j, len(problems)), log=log, **kw))
        model = linear_model(order, results, d, params)
        model = finish_model(model, params, n, start)
        return model, n, session.traffic
    finally:
        session.close()
