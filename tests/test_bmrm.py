"""-s bmrm: the cutting-plane method with BMRM's stopping rule (absolute gap of J = lambda/2 |w|^2 + mean hinge)."""
import numpy as np
import pytest

from conftest import heart_scale as heart
from svmtrain.errors import ParameterError
from svmtrain.params import TrainParams
from svmtrain.training.train import train


@pytest.mark.parametrize("eps", [1e-2, 1e-3, 1e-5])
def test_gap_to_the_optimum_is_at_most_eps(eps):
    X = heart()
    optimum = train(X, TrainParams(solver="dcd", C=2.0, eps=1e-9, max_iter=100000)).fit_results[0].objective
    res = train(X, TrainParams(solver="bmrm", C=2.0, eps=eps)).fit_results[0]
    assert res.converged and res.info["exit"] == "TolAbs"
    assert 0.0 <= res.info["bmrm_gap"] <= eps
    assert optimum - 1e-9 <= res.objective <= optimum + eps


def test_tighter_eps_takes_more_cuts_and_is_the_cp_loop():
    X = heart()
    loose, tight = (train(X, TrainParams(solver="bmrm", C=2.0, eps=e)).fit_results[0] for e in (1e-2, 1e-5))
    assert loose.n_iter < tight.n_iter
    # the same iterates as ocas's cp method stopped by the same absolute tolerance (C-form: n C eps)
    n = X.n_rows
    cp = train(X, TrainParams(solver="ocas", ocas_method="cp", C=2.0, eps=1e-12, tol_abs=1e-5 * n * 2.0))
    assert cp.fit_results[0].n_iter == tight.n_iter
    np.testing.assert_allclose(cp.fit_results[0].w, tight.w, rtol=1e-9, atol=1e-12)


def test_refuses_unregularised_bias():
    with pytest.raises(ParameterError, match="-B"):
        train(heart(), TrainParams(solver="bmrm", unreg_bias=True))
