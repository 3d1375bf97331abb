"""Parameter validation shared by every layer (stdlib and numpy only)."""

from __future__ import annotations

import difflib
import math
import numbers
import unicodedata
from collections.abc import Iterable, Sequence

from anonlab.exceptions import ColumnNotFoundError, ParameterError

__all__ = [
    "check_int",
    "check_fraction",
    "check_columns",
    "column_name",
    "did_you_mean",
    "separator_hint",
    "shown",
]

#: The longest value an error message shows whole (:func:`shown`).
SHOWN_CHARS = 80


def check_int(
    value: object,
    name: str,
    *,
    low: int | None = None,
    high: int | None = None,
    owner: str | None = None,
) -> int:
    """Return ``value`` as an int, or raise :class:`ParameterError` with a uniform message.

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        Parameter name used in the message.
    low, high : int, optional
        Inclusive bounds.
    owner : str, optional
        The function or class the parameter belongs to, named in the message.

    Returns
    -------
    int
        The validated value.
    """
    where = f" of {owner}" if owner else ""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(
            f"The {name!r} parameter{where} must be an int{_range(low, high)}. Got {value!r} instead."
        )
    ivalue = int(value)
    if (low is not None and ivalue < low) or (high is not None and ivalue > high):
        raise ParameterError(
            f"The {name!r} parameter{where} must be an int{_range(low, high)}. Got {ivalue} instead."
        )
    return ivalue


def check_fraction(
    value: object,
    name: str,
    *,
    low: float = 0.0,
    high: float = 1.0,
    low_open: bool = False,
    owner: str | None = None,
) -> float:
    """Return ``value`` as a float in ``[low, high]`` (or ``(low, high]``), else raise.

    Parameters
    ----------
    value : object
        The value to check.
    name : str
        Parameter name used in the message.
    low, high : float
        Bounds of the interval.
    low_open : bool
        Whether the lower bound is excluded.
    owner : str, optional
        The function or class the parameter belongs to.

    Returns
    -------
    float
        The validated value.
    """
    where = f" of {owner}" if owner else ""
    interval = f"{'(' if low_open else '['}{low:g}, {high:g}]"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(
            f"The {name!r} parameter{where} must be a number in {interval}. Got {value!r} instead."
        )
    fvalue = float(value)
    if math.isnan(fvalue) or fvalue > high or fvalue < low or (low_open and fvalue == low):
        raise ParameterError(
            f"The {name!r} parameter{where} must be a number in {interval}. Got {fvalue:g} instead."
        )
    return fvalue


def column_name(name: object) -> str:
    """A column name as anonlab compares it: its text in Unicode normal form NFC.

    The same letter may be one code point or a letter and a combining accent (a header
    written on macOS is often the latter); the data's names and the names a user or job
    gives are both read through this function, so ``'âge'`` finds ``'âge'`` whichever way
    each was typed.

    Examples
    --------
    >>> column_name("a\u0302ge") == "\u00e2ge"
    True
    """
    return unicodedata.normalize("NFC", str(name))


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)`` for a message, cut in the middle when longer than ``limit``
    characters, with the length of the whole said (a value of 100 kB is not printed).

    Examples
    --------
    >>> shown("age")
    "'age'"
    >>> shown("x" * 100_000, limit=20)
    "'xxxxxxx...xxxxxxxx' (100,000 characters)"
    """
    text = repr(value)
    if len(text) <= limit:
        return text
    half = max((limit - 3) // 2, 1)
    size = len(value) if isinstance(value, str) else len(text)
    return f"{text[:half]}...{text[-(limit - 3 - half) :]} ({size:,} characters)"


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Return ``" Did you mean 'x'?"`` for the closest choice, or an empty string: a
    choice that differs only in case or in spaces around it first ('AGE', ' age ' for
    'age'), else the closest by :func:`difflib.get_close_matches`."""
    options = list(choices)
    key = column_name(name).strip().casefold()
    same = [c for c in options if column_name(c).strip().casefold() == key]
    close = same or difflib.get_close_matches(name, options, n=1, cutoff=0.5)
    return f" Did you mean {shown(close[0])}?" if close else ""


def check_columns(names: Sequence[str], available: Sequence[str], *, what: str = "column") -> None:
    """Raise :class:`ColumnNotFoundError` if any of ``names`` is not in ``available``.

    The message names the missing column, lists the columns that exist and suggests the
    closest one.
    """
    avail = list(available)
    for name in names:
        if name not in avail:
            raise ColumnNotFoundError(
                f"Unknown {what} {shown(name)}.{did_you_mean(name, avail)} "
                f"Available: {', '.join(map(shown, avail))}.{separator_hint(avail)}"
            )
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ParameterError(f"The {what} {name!r} is named twice.")
        seen.add(name)


#: Field separators a header read with another one shows inside its single name: the
#: separator, how to name it, how to give it on the command line and in a job file.
_SEPARATORS = (
    ("\t", "tabs", "tab", "'\\t'"),
    (";", "';'", "';'", "';'"),
    ("|", "'|'", "'|'", "'|'"),
    (",", "commas", ",", "','"),
)


def separator_hint(names: Sequence[str]) -> str:
    r"""A hint when a CSV header was read as one column that holds another separator (a
    tab-separated file read with ``,``), else an empty string.

    Examples
    --------
    >>> separator_hint(["age\tzip\tsex"])[:62]
    ' The header reads as one column holding tabs: is the file sepa'
    >>> separator_hint(["age", "zip"])
    ''
    """
    if len(names) != 1:
        return ""
    for sep, said, cli, job in _SEPARATORS:
        if sep in names[0]:
            return (
                f" The header reads as one column holding {said}: is the file separated by "
                f"them? Give the separator (--separator {cli}; in a job, separator: {job})."
            )
    return ""


def _range(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f" in [{low}, {high}]"
    if low is not None:
        return f" >= {low}"
    if high is not None:
        return f" <= {high}"
    return ""
