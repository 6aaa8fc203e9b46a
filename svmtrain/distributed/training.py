"""Training on a Dask cluster: the counterpart of ``svmtrain.training.train.train``.

The partitions are parsed on the workers and stay there; the driver learns
their sizes and labels, orders the labels as LIBLINEAR does (first
appearance over the partitions in order, +1 before -1), and trains one
binary problem per weight column (classification) or one problem on the
targets (regression) with the distributed OCAS (and BMRM, its cp method),
Pegasos or SGD (``SUPPORT``), or one Crammer-Singer problem over all classes
(``-s ocas --multiclass cs``, :mod:`svmtrain.distributed.ocas_cs`). The model
(file, header, predictions) is the one a local run writes.
"""
import time

import numpy as np

from ..errors import InputFormatError, ParameterError
from ..params import check_params
from ..solvers.base import split_progress, with_defaults
from ..training.train import check_class_weights, finish_model, label_order, linear_model, problem_costs
from ..tasks import CLASSIFICATION, NAMES, REGRESSION
from . import bmrm, ocas, ocas_cs, ocas_scores, pegasos, sgd
from .engine import Session

_REGRESSION_LOSSES = ("epsilon-insensitive", "squared-epsilon-insensitive")
# solver -> task -> loss -> the module whose fit trains it on a cluster (a subset of tasks.SUPPORT)
SUPPORT = {
    "ocas": {CLASSIFICATION: {"hinge": ocas, "log": ocas_scores},
             REGRESSION: dict.fromkeys(_REGRESSION_LOSSES, ocas_scores)},
    "bmrm": {CLASSIFICATION: {"hinge": bmrm}},
    "pegasos": {CLASSIFICATION: {"hinge": pegasos, "log": pegasos},
                REGRESSION: dict.fromkeys(_REGRESSION_LOSSES, pegasos)},
    "sgd": {CLASSIFICATION: {"hinge": sgd, "log": sgd},
            REGRESSION: dict.fromkeys(_REGRESSION_LOSSES, sgd)},
}
# the modules whose fit runs OCAS's master loop and takes driver_threads (its QP's threads)
_DRIVER_THREADS = (ocas, ocas_scores, bmrm)


def check_supported(params):
    """The module that trains ``params`` on a cluster; ParameterError if none does."""
    if params.solver not in SUPPORT:
        raise ParameterError(f"--engine dask trains -s ocas, -s bmrm, -s pegasos and -s sgd (got -s {params.solver})")
    if params.kernel_type not in (None, 0):
        raise ParameterError("--engine dask trains linear models only (no -t with -s pegasos)")
    if params.multiclass != "ovr":
        if params.solver != "ocas":
            raise ParameterError(f"--engine dask trains --multiclass cs (Crammer-Singer) with -s ocas, not "
                                 f"-s {params.solver}")
        return ocas_cs
    module = SUPPORT[params.solver].get(params.task, {}).get(params.loss)
    if module is None:
        what = NAMES.get(params.task, params.task) + ("" if params.task != CLASSIFICATION else
                                                      f" with --loss {params.loss}")
        raise ParameterError(f"--engine dask does not train {what}; it trains in memory or with --stream "
                             "(drop --engine dask)")
    return module


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
                kw = {"driver_threads": driver_threads} if module in _DRIVER_THREADS else {}
                results.append(module.fit(session, (j, label, cost), n, d, params,
                                          progress=split_progress(progress, j, len(problems)), log=log, **kw))
            model = linear_model(order, results, d, params)
        model = finish_model(model, params, n, start)
        return model, n, session.traffic
    finally:
        session.close()
