"""ASSET: linear SVMs on approximate feature maps (Nystrom, random Fourier), in memory and streamed."""
from ..contract import Declaration, Streamed

M = "svmtrain.solvers.asset."
DECLARATIONS = (
    Declaration(
        name="asset", summary="ASSET: SGD on approximate kernel feature maps (Nystrom, random Fourier)",
        module=M + "asset",
        # every loss but the hinge through --inner dcd (dcd on the mapped features)
        tasks={"c": ("hinge", "squared-hinge"),
               "r": ("epsilon-insensitive", "squared-epsilon-insensitive"), "o": ("one-class",)},
        kernel="always", reads=("approx", "dim", "eig_threshold", "inner", "strongly_convex"),
        warm_up=tuple(dict(kw, dim=8, epochs=2) for kw in (
            {"approx": "nystrom"}, {"approx": "fourier"}, {"strongly_convex": True}, {"inner": "pegasos"},
            {"inner": "dcd"}, {"approx": "fourier", "inner": "dcd"}, {"inner": "dcd", "task": "r"},
            {"approx": "fourier", "inner": "dcd", "task": "r"}, {"inner": "dcd", "task": "o"},
            {"approx": "fourier", "inner": "dcd", "task": "o"})),
        streamed=Streamed(tasks={"c": ("hinge",)}, module=M + "stream_asset",
                          memory=M + "stream_asset:plan_memory", shuffle_buffer=True,
                          check=M + "stream_asset:check_streamable",
                          warm_up=({"dim": 8, "epochs": 2}, {"approx": "fourier", "dim": 8, "epochs": 2})),
    ),
)
