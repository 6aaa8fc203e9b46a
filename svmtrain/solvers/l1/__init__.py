"""L1-regularised linear models by primal coordinate descent (LIBLINEAR's -s 5 and -s 6): sparse weights."""
from ..contract import Declaration

M = "svmtrain.solvers.l1."
DECLARATIONS = (
    Declaration(
        name="cdn", summary="L1-regularised (sparse) models by coordinate descent: CDN for the squared hinge "
                            "(LIBLINEAR -s 5), newGLMNET for log (-s 6)",
        module=M + "cdn", tasks={"c": ("squared-hinge", "log")},
        variants={("c", "log"): M + "newglmnet"},
        penalties=("l1",),
        # each row's cost scaled (C_i = C s_i)
        sample_weights={"c": ("squared-hinge", "log")},
        bias=True,
        warm_up=({}, {"loss": "log"}, {"bias": 1.0, "class_weights": {1.0: 2.0}},
                 {"loss": "log", "bias": 1.0, "unreg_bias": True}, {"unreg_bias": True},
                 {"loss": "log", "classes": 3}),
    ),
)
