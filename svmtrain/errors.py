"""Exceptions raised by svmtrain's library code.

The library never prints and never exits; the command-line layer turns these
into one-line messages and exit codes in one place (``svmtrain.cli._errors``).
"""


class SvmtrainError(Exception):
    """Base class of every error svmtrain raises on purpose."""


class InputFormatError(SvmtrainError):
    """A data file is malformed. ``str()`` is ``FILE:LINE: problem``."""

    def __init__(self, path, line, problem):
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {problem}")

    def __reduce__(self):  # picklable, so an error on a Dask worker reaches the driver intact
        return type(self), (self.path, self.line, self.problem)


class ModelFormatError(SvmtrainError):
    """A model file is truncated, damaged, or of an unknown format or version."""

    def __init__(self, path, line, problem):
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {problem}")

    def __reduce__(self):
        return type(self), (self.path, self.line, self.problem)


class ParameterError(SvmtrainError):
    """A training or prediction parameter is out of range or inconsistent."""
