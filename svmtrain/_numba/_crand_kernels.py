"""glibc's rand(), exactly: the generator LIBSVM's and LIBLINEAR's shuffles draw from.

TYPE_3 additive feedback, r_i = r_{i-31} + r_{i-3} mod 2^32, output r_i >> 1;
:func:`rand_state` is the state after ``srand(seed)`` (seed 1: a program
that never calls srand, as LIBSVM's svm-train and LIBLINEAR's train),
:func:`c_rand` the next output. Shared by the L1 solvers (LIBLINEAR's
coordinate order) and LIBSVM's cross-validation folds
(:mod:`svmtrain.training.libsvm_folds`).
"""
import numpy as np
from numba import njit

# glibc's rand() (TYPE_3: r_i = r_{i-31} + r_{i-3} mod 2^32, output r_i >> 1), the generator
# LIBSVM's and LIBLINEAR's shuffles draw from: its state is RAND_WORDS words and the two positions
RAND_WORDS = 31
RAND_SEP = 3
RAND_STATE = RAND_WORDS + 2
_LOW32 = np.uint64(0xFFFFFFFF)


def rand_state(seed):
    """The state of :func:`c_rand` after glibc's ``srand(seed)`` (seed 0 is
    1 there; 1 is the state of a program that never calls srand, as
    LIBLINEAR's train): the words r_0 = seed, r_i = 16807 r_{i-1} mod
    (2^31 - 1), then 310 outputs discarded."""
    seed = int(seed) & 0xFFFFFFFF
    if seed == 0:
        seed = 1
    state = np.zeros(RAND_STATE, np.uint64)
    state[0] = seed
    word = seed if seed < 2**31 else seed - 2**32      # glibc keeps r_0 in an int32
    for i in range(1, RAND_WORDS):
        hi, lo = int(word / 127773), word - int(word / 127773) * 127773     # C's truncating division
        word = 16807 * lo - 2836 * hi
        if word < 0:
            word += 2147483647
        state[i] = word & 0xFFFFFFFF
    state[RAND_WORDS] = RAND_SEP        # the front position
    state[RAND_WORDS + 1] = 0           # the rear position
    for _ in range(10 * RAND_WORDS):
        c_rand(state)
    return state


@njit(cache=True, nogil=True)
def c_rand(state):
    """The next output of glibc's rand() (0 .. 2^31 - 1) from ``state`` (:func:`rand_state`)."""
    f = np.int64(state[RAND_WORDS])
    r = np.int64(state[RAND_WORDS + 1])
    val = (state[f] + state[r]) & _LOW32
    state[f] = val
    f += 1
    r += 1
    if f >= RAND_WORDS:
        f = 0
    elif r >= RAND_WORDS:
        r = 0
    state[RAND_WORDS] = f
    state[RAND_WORDS + 1] = r
    return np.int64(val >> np.uint64(1))
