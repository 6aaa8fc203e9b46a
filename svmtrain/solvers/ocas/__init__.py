"""Cutting-plane solvers: OCAS (classification, logistic, regression, ranking, Crammer-Singer, streamed,
on Dask) and BMRM."""
from ..contract import Declaration, Streamed

M = "svmtrain.solvers.ocas."
D = "svmtrain.distributed."
_REGRESSION = ("epsilon-insensitive", "squared-epsilon-insensitive")
DECLARATIONS = (
    Declaration(
        name="ocas", summary="optimized cutting planes, svmocas' solver (Franc and Sonnenburg 2009)",
        module=M + "ocas",
        tasks={"c": ("hinge", "log", "roc-area"), "p": ("pairwise-hinge",), "r": _REGRESSION},
        variants={("c", "log"): M + "ocas_logistic", ("c", "roc-area"): M + "ocas_roc", ("p",): M + "ocas_ranking",
                  ("r",): M + "ocas_regression"},
        multiclass_cs=M + "ocas_cs", reads=("ocas_method", "tol_abs"),
        warm_up=({}, {"ocas_method": "cp"}, {"bias": 1.0}, {"classes": 3},
                 {"rows": 12, "features": 40},                          # wide: cuts as rows
                 {"classes": 3, "multiclass": "cs"}, {"task": "r"},
                 {"task": "r", "loss": "squared-epsilon-insensitive", "bias": 1.0}, {"loss": "log"},
                 {"ranking": True, "task": "p"}, {"ranking": True, "task": "p", "ocas_method": "cp"},
                 {"loss": "roc-area"},
                 # word counts: float32 copies of the values, float32 sparse cuts (after the row form)
                 {"counts": True, "rows": 12, "features": 40}),
        bias=True,
        streamed=Streamed(tasks={"c": ("hinge", "log"), "r": _REGRESSION}, cut_buffer=True,
                          memory=M + "stream_memory:plan_memory", multiclass_cs=M + "stream_ocas_cs",
                          multiclass_cs_memory=M + "stream_ocas_cs:plan_memory", warm_up=({}, {"multiclass": "cs"})),
        dask={"c": {"hinge": D + "ocas", "log": D + "ocas_scores"}, "r": dict.fromkeys(_REGRESSION, D + "ocas_scores")},
        dask_cs=D + "ocas_cs",
    ),
    Declaration(
        name="bmrm", summary="bundle method (BMRM / SVMperf): OCAS's cutting planes without its line search",
        module=M + "bmrm",
        tasks={"c": ("hinge",)},
        warm_up=({},),
        streamed=Streamed(tasks={"c": ("hinge",)}, cut_buffer=True, memory=M + "stream_memory:plan_memory",
                          warm_up=({},)),
        dask={"c": {"hinge": D + "bmrm"}},
    ),
)
