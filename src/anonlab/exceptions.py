"""Exceptions and warnings raised by anonlab.

Every error anonlab raises on purpose derives from :class:`AnonlabError`, so a caller can catch
them all in one place. Errors that concern user input also derive from :class:`ValueError`; a
parameter of the wrong type or out of its range (:class:`ParameterError`) also from
:class:`TypeError`, as Python's own functions raise either for a bad argument.
"""

from __future__ import annotations

__all__ = [
    "AnonlabError",
    "InputError",
    "ColumnNotFoundError",
    "HierarchyError",
    "ParameterError",
    "DataFormatError",
    "PrivacyCheckError",
    "OptionalDependencyError",
    "PrivacyRiskWarning",
]


class AnonlabError(Exception):
    """Base class of every error raised by anonlab."""


class InputError(AnonlabError, ValueError):
    """The input data, a file or a parameter is not usable as given."""


class ParameterError(InputError, TypeError):
    """A parameter is out of its valid range or of the wrong type.

    It is a :class:`ValueError` and a :class:`TypeError` both, so that code that catches
    either for a bad argument catches it.

    Examples
    --------
    >>> issubclass(ParameterError, ValueError) and issubclass(ParameterError, TypeError)
    True
    """


class ColumnNotFoundError(InputError, KeyError):
    """A column named by the user does not exist in the table.

    The message lists the columns that exist and suggests the closest name.
    """

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else ""


class DataFormatError(InputError):
    """A data file cannot be parsed (ragged rows, bad encoding, empty file, ...)."""


class HierarchyError(InputError):
    """A generalization hierarchy is malformed or does not cover the data."""


class PrivacyCheckError(AnonlabError):
    """An anonymized result failed the independent privacy-model re-check.

    anonlab never releases such a table; seeing this error means a bug in an algorithm.
    """


class OptionalDependencyError(AnonlabError, ImportError):
    """An optional dependency needed by the requested feature is not installed."""


class PrivacyRiskWarning(UserWarning):
    """A choice or a column that leaks privacy (diffprivlib's practice of warning on leaks).

    For example a column that identifies every row on its own (unique per row, or named like
    an identifier) and that the job does not declare: it would be released as it is.
    """
