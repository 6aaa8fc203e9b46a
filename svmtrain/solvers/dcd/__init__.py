"""Dual coordinate descent (LIBLINEAR's solvers): hinge and squared hinge, logistic, SVR, one-class,
Crammer-Singer, streamed (block minimization)."""
from ..contract import Declaration, Streamed

M = "svmtrain.solvers.dcd."
DECLARATIONS = (
    Declaration(
        name="dcd", summary="dual coordinate descent, LIBLINEAR's exact solver (Hsieh et al. 2008)",
        module=M + "dcd",
        tasks={"c": ("hinge", "squared-hinge", "log"),
               "r": ("epsilon-insensitive", "squared-epsilon-insensitive"), "o": ("one-class",)},
        variants={("r",): M + "dcd_regression", ("o",): M + "dcd_oneclass", ("c", "log"): M + "dcd_logistic"},
        multiclass_cs=M + "dcd_cs",
        warm_up=({}, {"loss": "squared-hinge"}, {"bias": 1.0, "C": 2.0}, {"class_weights": {1.0: 2.0}},
                 {"loss": "log"}, {"classes": 3}, {"classes": 3, "multiclass": "cs"}, {"task": "r"},
                 {"task": "r", "loss": "squared-epsilon-insensitive", "bias": 1.0}, {"task": "o", "nu": 0.3}),
        # each row's dual bound scaled (C_i = C s_i, LIBLINEAR's instance-weight variant)
        sample_weights={"c": ("hinge", "squared-hinge")},
        bias=True,
        streamed=Streamed(tasks={"c": ("hinge", "squared-hinge"),
                                 "r": ("epsilon-insensitive", "squared-epsilon-insensitive")},
                          module=M + "stream_dcd", memory=M + "stream_dcd:plan_memory", warm_up=({},)),
    ),
)
