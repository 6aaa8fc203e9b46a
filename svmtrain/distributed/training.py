"""Training on a Dask cluster: the counterpart of ``svmtrain.training.train.train``.

The partitions are parsed on the workers and stay there; the driver learns
their sizes and labels, orders the labels as LIBLINEAR does (first
appearance over the partitions in order, +1 before -1), and trains one
binary problem per weight column (classification) or one problem on the
targets (regression) with the distributed OCAS (and BMRM, its cp method),
Pegasos or SGD (the modules each solver declares, ``Declaration.dask``), or one Crammer-Singer problem over all classes
(``-s ocas --multiclass cs``, :mod:`svmtrain.distributed.ocas_cs`). The model
(file, header, predictions) is the one a local run writes.
"""
import importlib
import time

import numpy as np

from ..errors import InputFormatError, ParameterError
from ..params import check_params
from ..solvers import declaration, listing, names
from ..solvers.base import split_progress, with_defaults
from ..training.train import check_class_weights, finish_model, label_order, linear_model, problem_costs
from ..tasks import CLASSIFICATION, NAMES, REGRESSION
from . import ocas_cs
from .engine import Session


def _what(params):
    """The task (and classification's loss) of ``params`` in words."""
    return NAMES.get(params.task, params.task) + ("" if params.task != CLASSIFICATION else
                                                  f" with --loss {params.loss}")


def check_supported(params):
    """The module that trains ``params`` on a cluster (the solver's declared
    ``dask`` modules); ParameterError naming the solvers that can if none does."""
    d = declaration(params.solver)
    if params.kernel_type not in (None, 0):
        raise ParameterError("--engine dask trains linear models only (drop -t)")
    if params.multiclass != "ovr":
        if not d.dask_cs:
            raise ParameterError(f"--engine dask trains --multiclass cs (Crammer-Singer) with "
                                 f"{listing(names(lambda x: x.dask_cs))}, not -s {params.solver}")
        return importlib.import_module(d.dask_cs)
    module = d.dask_module(params.task, params.loss)
    if module is None:
        able = names(lambda x: x.dask_module(params.task, params.loss))
        if able:
            raise ParameterError(f"--engine dask trains {_what(params)} with {listing(able)}, not -s {params.solver}")
        raise ParameterError(f"--engine dask does not train {_what(params)}; it trains in memory or with --stream "
                             "(drop --engine dask)")
    return importlib.import_module(module)


def dask_problems(meta, params):
    """(label order, [(positive label or None, class costs)]) of the partitions'
    ``meta``: one problem per weight column for classification (as
    ``training.task_problems``), one on the targets for regression."""
    if params.task == REGRESSION:
        if params.class_weights:
            raise ParameterError("-w (class weights) applies to classification, not regression")
        return np.empty(0, np.float64), [(None, (1.0, 1.0))]
    order = label_order(np.concatenate([m["labels"] for m in meta]))
    check_class_weights(params, order)
    return order, problem_costs(order, params)


def train(specs, params, client, progress=None, log=None, notify=None, cache=False, source=None,
          driver_threads=1):
    """Train on the partitions ``specs`` (``partitions.expand``) over ``client``.

    Returns (model, n_rows, session traffic). ``notify(message)`` reports
    worker losses and cache messages; ``log`` the solvers' lines; ``cache``
    makes each worker keep a binary cache beside each partition file.
    """
    check_params(params)
    module = check_supported(params)
    source = source or (specs[0].display if specs else "<data>")
    session = Session(client, specs, notify=notify, threads=params.threads)
    try:
        meta = session.load(cache=cache)
        n = sum(m["rows"] for m in meta)
        if n == 0:
            raise InputFormatError(source, None, "the training set is empty (no data lines)")
        d = max(m["n_features"] for m in meta)
        params = with_defaults(params, getattr(module, "DEFAULTS", {}))
        order, problems = dask_problems(meta, params)
        start = time.perf_counter()
        if module is ocas_cs:
            model = ocas_cs.train_model(session, order, n, d, params, progress, log, driver_threads)
        else:
            results = []
            for j, (label, cost) in enumerate(problems):
                if log is not None and len(problems) > 1:
                    log(f"class {label:g} vs rest")
                kw = {"driver_threads": driver_threads} if getattr(module, "DRIVER_THREADS", False) else {}
                results.append(module.fit(session, (j, label, cost), n, d, params,
                                          progress=split_progress(progress, j, len(problems)), log=log, **kw))
            model = linear_model(order, results, d, params)
        model = finish_model(model, params, n, start)
        return model, n, session.traffic
    finally:
        session.close()
