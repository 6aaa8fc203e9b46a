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


class ModelFormatError(SvmtrainError):
    """A model file is truncated, damaged, or of an unknown format or version."""

    def __init__(self, path, line, problem):
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {problem}")


class ParameterError(SvmtrainError):
    """A training or prediction parameter is out of range or inconsistent."""
