"""Parameter validation shared by every layer (stdlib and numpy only)."""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Iterable, Sequence

from anonlab.exceptions import ColumnNotFoundError, ParameterError

__all__ = ["check_int", "check_fraction", "check_columns", "did_you_mean"]


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


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Return ``" Did you mean 'x'?"`` for the closest choice, or an empty string: a
    choice that differs only in case or in spaces around it first ('AGE', ' age ' for
    'age'), else the closest by :func:`difflib.get_close_matches`."""
    options = list(choices)
    same = [c for c in options if c.strip().casefold() == name.strip().casefold()]
    close = same or difflib.get_close_matches(name, options, n=1, cutoff=0.5)
    return f" Did you mean {close[0]!r}?" if close else ""


def check_columns(names: Sequence[str], available: Sequence[str], *, what: str = "column") -> None:
    """Raise :class:`ColumnNotFoundError` if any of ``names`` is not in ``available``.

    The message names the missing column, lists the columns that exist and suggests the
    closest one.
    """
    avail = list(available)
    for name in names:
        if name not in avail:
            raise ColumnNotFoundError(
                f"Unknown {what} {name!r}.{did_you_mean(name, avail)} "
                f"Available: {', '.join(map(repr, avail))}."
            )
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ParameterError(f"The {what} {name!r} is named twice.")
        seen.add(name)


def _range(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f" in [{low}, {high}]"
    if low is not None:
        return f" >= {low}"
    if high is not None:
        return f" <= {high}"
    return ""
