"""The memory plan of an out-of-core run: what the streamed solvers' plans share.

Each streamable solver states its own plan next to its code, as the
function its declaration names in ``Streamed.memory`` (and, for its
Crammer-Singer problem, ``Streamed.multiclass_cs_memory``)::

    plan(name, n, d, params, limit, nnz=0, n_problems=1) -> MemoryPlan

for ``-s name`` on n rows, d features and ``nnz`` nonzeros, ``n_problems``
binary problems (with ``--multiclass cs``: the number of classes), within
``limit`` bytes: its state (labels, weights, per-row arrays, cut buffer),
the least limit it takes (:func:`check_limit`), and how the rest is split
between the two block buffers and its own buffers.
:func:`svmtrain.training.streamed.plan_memory` calls it; the shuffle
buffer is sized later, once the block layout is known
(:func:`svmtrain.training.streamed.plan_shuffle`). No numba here.
"""
import dataclasses
import math

from ..errors import ParameterError

MIB = 1 << 20
MIN_BLOCK_BYTES = 64 << 10
LABEL_BYTES = 16        # per row: the labels, and y of the current problem


@dataclasses.dataclass
class MemoryPlan:
    """How a run spends ``limit`` bytes: ``state`` (solver and labels),
    ``block_bytes`` per block (two are held), and the solver's share."""
    limit: int
    state: int
    block_bytes: int
    cut_buffer: int = None          # cut-buffer solvers (ocas, bmrm)
    shuffle_rows: int = None        # shuffle-buffer solvers (pegasos, sgd, asset)
    shuffle_bytes: int = 0
    map_rows: int = None            # asset: rows mapped to features at a time
    map_bytes: int = 0
    setup: int = 0                  # asset: held before the first epoch only (map build, D_G sample)
    pilot: int = 0                  # sgd: the pilot's sample, held beside the full shuffle buffer
    want_cuts: int = None           # cut-buffer solvers: the cuts --cut-buffer asks for

    def describe(self):
        parts = [f"limit {self.limit / MIB:.0f} MB", f"state {self.state / MIB:.1f} MB",
                 f"blocks of {self.block_bytes / MIB:.1f} MB"]
        if self.cut_buffer is not None:
            parts.append(f"{self.cut_buffer} cuts")
        if self.shuffle_rows is not None:
            parts.append(f"shuffle buffer {self.shuffle_rows} rows ({self.shuffle_bytes / MIB:.1f} MB)")
        if self.map_rows is not None:
            parts.append(f"{self.map_rows} feature rows at a time ({self.map_bytes / MIB:.1f} MB)")
        return ", ".join(parts)


def too_small(limit, need, what):
    """The ParameterError of a limit below ``need`` bytes, saying ``what`` does not fit."""
    return ParameterError(f"--memory-limit {round(limit / MIB, 4):g} MB is too small: {what}; "
                          f"give at least {math.ceil(need / MIB)} MB")


def check_limit(name, n, d, limit, state, extra=0):
    """What ``limit`` leaves beside ``state`` (``limit - state`` bytes);
    ParameterError, naming the least limit, unless it holds the state, two
    minimal blocks (and their temporaries: 4 x MIN_BLOCK_BYTES) and
    ``extra`` (the solver's least buffers)."""
    free = limit - state
    minimum = state + 4 * MIN_BLOCK_BYTES + extra
    if free < minimum - state:
        raise too_small(limit, minimum, f"-s {name} keeps {state / MIB:.1f} MB of state for "
                        f"{n} rows and {d} features")
    return free
