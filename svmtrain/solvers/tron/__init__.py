"""Trust-region Newton (TRON) and its ranking solver."""
from ..contract import Declaration

DECLARATIONS = (
    Declaration(
        name="tron", summary="trust-region Newton on the pairwise squared hinge (Lee and Lin 2014): ranking only",
        module="svmtrain.solvers.tron.tron_ranking", tasks={"p": ("pairwise-squared-hinge",)},
        warm_up=({"ranking": True, "task": "p"},),
    ),
)
