"""The task axis: the registry of which solver trains which task with which loss."""
import numpy as np
import pytest

from svmtrain import tasks
from svmtrain.data.dataset import Chunk
from svmtrain.errors import ParameterError
from svmtrain.params import TrainParams, check_params
from svmtrain.solvers import REGISTRY, SOLVERS, solvers_for


def test_every_solver_is_in_the_table_with_losses_of_its_tasks():
    assert list(REGISTRY) == list(SOLVERS) and len(SOLVERS) == 12
    for solver, d in REGISTRY.items():
        by_task = d.tasks
        assert d.name == solver and by_task, solver
        for task, losses in by_task.items():
            assert set(losses) <= set(tasks.LOSSES[task]), (solver, task)


def test_default_loss_follows_the_task():
    assert TrainParams().loss == "hinge" and TrainParams().epsilon is None
    r = TrainParams(task="r")
    assert r.loss == "epsilon-insensitive" and r.epsilon == 0.1
    assert TrainParams(task="r", loss="squared-epsilon-insensitive", epsilon=0.5).epsilon == 0.5


@pytest.mark.parametrize("kw, says", [
    ({"solver": "ocas", "loss": "squared-hinge"}, "solvers that do: -s dcd, -s tron, "),
    ({"solver": "pegasos", "task": "p"}, "solvers that do: -s ocas"),
    ({"solver": "ocas", "task": "o"}, "solvers that do: -s dcd, -s smo, -s asset"),
    ({"solver": "ocas", "rank_c": "svmlight"}, "--rank-c applies to ranking"),
    ({"task": "c", "loss": "epsilon-insensitive"}, "is not a classification loss"),
    ({"task": "x"}, "-z must be one of c, r, p, o"),
    ({"epsilon": 0.1}, "-p (epsilon) applies to regression"),
])
def test_unsupported_pairs_are_refused_with_the_alternatives(kw, says):
    with pytest.raises(ParameterError) as e:
        check_params(TrainParams(**kw))
    assert says in str(e.value)


def test_supported_pairs_pass():
    for solver, d in REGISTRY.items():
        for task, losses in d.tasks.items():
            for loss in losses:
                check_params(TrainParams(solver=solver, task=task, loss=loss))


def test_solvers_for_lists_in_table_order():
    assert solvers_for("c", "squared-hinge") == ["dcd", "tron", "cdn", "asset", "cvm"]
    assert solvers_for("o") == ["dcd", "smo", "asset"]
    assert solvers_for("p") == ["ocas", "tron"]
    assert solvers_for("p", "pairwise-squared-hinge") == ["tron"]


def test_one_class_nu_defaults_and_range():
    assert TrainParams(task="o").nu == 0.5 and TrainParams(task="o").loss == "one-class"
    assert TrainParams().nu is None             # sbp derives its own
    check_params(TrainParams(task="o", nu=1.0))     # LIBSVM's and LIBLINEAR's range (0, 1]
    with pytest.raises(ParameterError, match=r"--nu must be in \(0, 1\)"):
        check_params(TrainParams(solver="sbp", nu=1.0))


def test_registry_gives_each_supported_pair_a_module_that_trains_it():
    """get_solver picks the variant module by task and loss; a base module's
    fit refuses a pair that a variant trains (never a silently other problem)."""
    from svmtrain.solvers import get_solver
    from svmtrain.solvers.dcd import dcd
    from svmtrain.solvers.ocas import ocas
    assert get_solver("dcd", task="r").__name__ == "svmtrain.solvers.dcd.dcd_regression"
    assert get_solver("dcd", task="o").__name__ == "svmtrain.solvers.dcd.dcd_oneclass"
    assert get_solver("dcd", task="c", loss="log").__name__ == "svmtrain.solvers.dcd.dcd_logistic"
    assert get_solver("dcd", task="c", loss="squared-hinge") is dcd
    assert get_solver("ocas", task="p").__name__ == "svmtrain.solvers.ocas.ocas_ranking"
    assert get_solver("pegasos", kernel_type=2).__name__ == "svmtrain.solvers.kernel.kernel_pegasos"
    for solver, d in REGISTRY.items():
        for task, losses in d.tasks.items():
            for loss in losses:
                module = get_solver(solver, task=task, loss=loss)
                assert hasattr(module, "fit") or hasattr(module, "train_model"), (solver, task, loss)
    X = Chunk(labels=np.ones(2), indptr=np.array([0, 1, 2]), indices=np.array([0, 0], np.int32),
              values=np.ones(2), qid=None)
    with pytest.raises(ParameterError, match="dcd_regression"):
        dcd.fit(X, X.labels, 1, TrainParams(task="r"))
    with pytest.raises(ParameterError, match="ocas_ranking"):
        ocas.fit(X, X.labels, 1, TrainParams(solver="ocas", task="p"))
