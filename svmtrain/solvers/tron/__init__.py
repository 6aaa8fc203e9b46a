"""Newton methods on the primal: LIBLINEAR's -s 2 / -s 0 solver (truncated Newton with a line search)
and the trust-region Newton ranking solver."""
from ..contract import Declaration

M = "svmtrain.solvers.tron."
DECLARATIONS = (
    Declaration(
        name="tron", summary="primal Newton: LIBLINEAR's -s 2 / -s 0 solver (squared hinge, log); "
                             "the pairwise squared hinge for ranking (Lee and Lin 2014)",
        module=M + "tron_primal", tasks={"c": ("squared-hinge", "log"), "p": ("pairwise-squared-hinge",)},
        variants={("p",): M + "tron_ranking"},
        # each row's cost scaled (C_i = C s_i)
        sample_weights={"c": ("squared-hinge", "log")},
        bias=True,
        warm_up=({"ranking": True, "task": "p"}, {"task": "c"}, {"task": "c", "loss": "log", "bias": 1.0},
                 {"task": "c", "classes": 3, "class_weights": {1.0: 2.0}}),
    ),
)
