"""Kernel (support-vector expansion) solvers: SMO, SBP, CVM, NORMA and kernel Pegasos."""
from ..contract import Declaration

M = "svmtrain.solvers.kernel."
DECLARATIONS = (
    Declaration(
        name="sbp", summary="stochastic batch perceptron, a kernel SVM by its water level (Cotter et al. 2012)",
        module=M + "sbp", tasks={"c": ("hinge",)}, kernel="always", reads=("holdout",),
        # (a short run compiles the same kernels; the kernel type is a run-time argument)
        warm_up=tuple(dict(kw, epochs=2) for kw in ({}, {"unreg_bias": False}, {"holdout": 0.2}, {"classes": 3})),
    ),
    Declaration(
        name="smo", summary="sequential minimal optimisation, LIBSVM's exact solver (Fan et al. 2005)",
        module=M + "smo",
        tasks={"c": ("hinge",), "r": ("epsilon-insensitive",), "o": ("one-class",)}, kernel="always",
        options=(("working_set", "--working-set"),), reads=("shrinking",), libsvm_summary=True, precomputed=True,
        nu_tasks=("c", "r"),    # --nu: nu-SVC, nu-SVR (LIBSVM's -s 1, -s 4; smo_nu)
        warm_up=({}, {"classes": 3, "kernel_type": 0}, {"task": "r"}, {"task": "o", "nu": 0.3},
                 {"nu": 0.3}, {"task": "r", "nu": 0.3},
                 # the batched working sets (--working-set)
                 {"working_set": 16}, {"working_set": 16, "task": "r"}, {"working_set": 16, "task": "o", "nu": 0.3},
                 {"kernel_type": 4, "precomputed": True}),       # LIBSVM's precomputed kernels (-t 4)
    ),
    Declaration(
        name="norma", summary="NORMA, kernel online SGD with a truncated expansion (Kivinen et al. 2004)",
        module=M + "norma", tasks={"c": ("hinge",)}, kernel="always",
        options=(("budget", "--budget"),),
        warm_up=({"epochs": 2}, {"classes": 3, "epochs": 2, "budget": 10, "cache_mb": 1e-6}),   # sparse rows
    ),
    Declaration(
        # the CVM's minimum enclosing ball is the L2-SVM's dual (squared hinge, Tsang et al. 2005)
        name="cvm", summary="Core Vector Machine: a minimum enclosing ball by core sets (Tsang et al. 2005)",
        module=M + "cvm", tasks={"c": ("squared-hinge",)}, kernel="always",
        warm_up=({},),
    ),
)
