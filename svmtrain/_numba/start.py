"""A faster numba start for the command-line programs.

When numba's CPU target first loads (at the first compile or cache load),
it imports ``numba.np.arraymath``, whose module body asks whether scipy's
BLAS can be imported -- by importing ``scipy.linalg`` (about 0.2 s, a third
of a small svm-train run). svmtrain's kernels call no BLAS, and scipy is a
dependency of svmtrain, so the answer is known: :func:`skip_blas_probe`
imports arraymath with the probe answered "yes" without the import. A
kernel that does call BLAS or LAPACK still gets it: numba imports
``scipy.linalg.cython_blas`` when it compiles such a function, and its
compiled code finds the routines at run time.
"""
import sys


def skip_blas_probe():
    """Import ``numba.np.arraymath`` without its scipy.linalg import.

    Guarantees: afterwards numba behaves as if the probe had succeeded (it
    would have: scipy is installed with svmtrain); numba's own probe function
    is restored; nothing happens if arraymath is already imported or numba's
    layout differs from the one this knows (then numba probes as usual).
    """
    if "numba.np.arraymath" in sys.modules:
        return
    try:
        import numba.np.linalg as linalg
        probe = linalg.ensure_blas
    except (ImportError, AttributeError):
        return
    linalg.ensure_blas = _assume_blas
    try:
        import numba.np.arraymath  # noqa: F401  (imported for its registrations)
    finally:
        linalg.ensure_blas = probe


def _assume_blas():
    """The probe's answer when scipy is installed: BLAS is there."""
