"""Stochastic (sub)gradient solvers: Pegasos and SVM-SGD / SGD-QN / FOBOS, in memory, streamed and on Dask."""
from ..contract import Declaration, Streamed

M = "svmtrain.solvers.sgd."
D = "svmtrain.distributed."
_REGRESSION = ("epsilon-insensitive", "squared-epsilon-insensitive")
_TASKS = {"c": ("hinge", "log"), "r": _REGRESSION}
DECLARATIONS = (
    Declaration(
        name="pegasos", summary="Pegasos, primal stochastic sub-gradient (Shalev-Shwartz et al. 2007); "
                                "-t K: its kernelized form",
        module=M + "pegasos", tasks=_TASKS,
        kernel="nonlinear", kernelized="svmtrain.solvers.kernel.kernel_pegasos", kernelized_tasks={"c": ("hinge",)},
        warm_up=tuple(dict(kw, epochs=2) for kw in (
            {}, {"batch_size": 4, "average": True}, {"unreg_bias": True, "bias": 1.0}, {"loss": "log"},
            {"task": "r"}, {"kernel_type": 2}, {"kernel_type": 2, "unreg_bias": True}, {"kernel_type": 3})),
        # rows drawn with probability proportional to their weight
        sample_weights=_TASKS,
        bias=True, online=True,
        streamed=Streamed(tasks=_TASKS, module=M + "stream_pegasos", shuffle_buffer=True,
                          memory=M + "stream_pegasos:plan_memory", warm_up=({"epochs": 2},)),
        dask={task: dict.fromkeys(losses, D + "pegasos") for task, losses in _TASKS.items()},
    ),
    Declaration(
        name="sgd", summary="SVM-SGD, SGD-QN and FOBOS (--update; Bottou 2010, Bordes et al. 2009, Duchi and Singer 2009)",
        module=M + "sgd", tasks=_TASKS,
        options=(("update", "--update"), ("l1", "--l1")),
        warm_up=tuple(dict(kw, update=update, epochs=2) for update in ("bottou", "sgdqn", "fobos")
                      for kw in ({}, {"bias": 1.0}, {"unreg_bias": True, "loss": "log"}, {"task": "r"}))
        + ({"update": "fobos", "l1": 0.01, "epochs": 2},),
        streamed=Streamed(tasks=_TASKS, module=M + "stream_sgd", shuffle_buffer=True,
                          memory=M + "stream_sgd:plan_memory", warm_up=({"epochs": 2},)),
        dask={task: dict.fromkeys(losses, D + "sgd") for task, losses in _TASKS.items()},
    ),
)
