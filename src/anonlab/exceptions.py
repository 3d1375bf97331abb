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
    """Base class of every error raised by anonlab.

    Examples
    --------
    >>> from anonlab import EncodedTable, anonymize
    >>> t = EncodedTable.from_columns({"sex": ["F", "M"]})
    >>> try:
    ...     anonymize(t, {"quasi_identifiers": {"age": {}}, "models": [{"k_anonymity": {"k": 2}}]})
    ... except AnonlabError as exc:
    ...     print(type(exc).__name__)
    ColumnNotFoundError
    """


class InputError(AnonlabError, ValueError):
    """The input data, a file or a parameter is not usable as given.

    Examples
    --------
    >>> from anonlab import read_table
    >>> read_table("no-such-file.csv")
    Traceback (most recent call last):
    ...
    anonlab.exceptions.InputError: The data file 'no-such-file.csv' does not exist.
    """


class ParameterError(InputError, TypeError):
    """A parameter is out of its valid range or of the wrong type.

    It is a :class:`ValueError` and a :class:`TypeError` both, so that code that catches
    either for a bad argument catches it.

    Examples
    --------
    >>> from anonlab.models import KAnonymity
    >>> KAnonymity(0)
    Traceback (most recent call last):
    ...
    anonlab.exceptions.ParameterError: The 'k' parameter of KAnonymity must be an int >= 1. Got 0 instead.
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

    Examples
    --------
    >>> import warnings
    >>> from anonlab import load_adult
    >>> from anonlab.api import risk
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = risk(load_adult(), ["age", "sex"])
    >>> caught[0].category.__name__, str(caught[0].message)[:40]
    ('PrivacyRiskWarning', "Column 'fnlwgt' may identify people (47.")
    """
