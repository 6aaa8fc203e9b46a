"""``-s bmrm`` on a Dask cluster: the distributed OCAS loop with method cp and BMRM's stopping rule.

What :func:`svmtrain.solvers.ocas.bmrm.fit` is to :func:`svmtrain.solvers.ocas.ocas.fit`,
this is to :func:`svmtrain.distributed.ocas.fit`: the same parameters
(``--ocas-method cp``, the relative tolerance off, BMRM's absolute gap eps
of the lambda form passed as ocas's absolute tolerance n C eps of the
C form), the same cuts and iterates. So a run makes the local run's
iterations with its w up to the rounding of sums taken in another order.
An iteration is two rounds: ``direction`` with the loss at the reduced
problem's minimiser w_c (no line search: the cp method moves to w_c when
it is better), then ``move``.
"""
import dataclasses

from ..solvers.ocas import bmrm as local
from . import ocas

DEFAULT_EPS = local.DEFAULT_EPS


DRIVER_THREADS = True      # fit takes driver_threads, the threads of its master QP


def fit(session, problem, n, n_features, params, progress=None, log=None, driver_threads=1):
    """Train one binary problem (the hinge loss) by BMRM over the session's
    partitions; ``problem`` as ``ocas.fit``'s. The FitResult of
    ``solvers.bmrm.fit`` (with ``info["bmrm_gap"]``) and the line-search
    rounds (0) in ``info``."""
    eps = DEFAULT_EPS if params.eps is None else float(params.eps)
    C = params.resolved_C(n)
    run = dataclasses.replace(params, ocas_method="cp", eps=0.0, tol_abs=eps * n * C)
    result = ocas.fit(session, problem, n, n_features, run, progress=progress, log=log,
                      driver_threads=driver_threads)
    result.info["bmrm_gap"] = (result.info["Q_P"] - result.info["Q_D"]) / (n * C)
    return result
