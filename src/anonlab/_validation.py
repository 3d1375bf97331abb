"""Parameter validation shared by every layer (stdlib and numpy only)."""

from __future__ import annotations

import difflib
import math
import numbers
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from anonlab.exceptions import ColumnNotFoundError, ParameterError

__all__ = [
    "Param",
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


@dataclass(frozen=True)
class Param:
    """The declared constraint of one parameter, and its one error wording.

    Algorithms (``_parameter_constraints``), privacy models, metrics and the job's own keys
    declare their parameters with it; :meth:`check` refuses a value with one sentence:
    ``The 'k' parameter of KAnonymity must be an int >= 1. Got 0 instead.``

    Parameters
    ----------
    kind : type or tuple of types
        ``int``, ``float`` (an int is accepted), ``bool``, ``str``, ``dict``, ``list``.
    low, high : float, optional
        Inclusive bounds of a number.
    choices : tuple, optional
        The values allowed.
    none : bool
        Whether None is allowed (a default decided by the owner).
    low_open : bool
        Whether ``low`` itself is excluded (``> 0``, ``(0, 1]``).
    finite : bool
        Whether the number must be finite (said in the message: ``a finite number``).
    empty : bool
        Whether an empty string is accepted.
    text : str, optional
        The whole constraint in words when its kind does not say it (``the name of a
        sensitive column (str)``); neither the bounds nor None are added to it.

    Examples
    --------
    >>> Param(int, low=1).describe()
    'an int >= 1'
    >>> Param(float, low=0, high=1, low_open=True).describe()
    'a number in (0, 1]'
    >>> Param(int, low=1).check(3, "k", owner="KAnonymity")
    3
    >>> Param(int, low=1).check(0, "k", owner="KAnonymity")
    Traceback (most recent call last):
    ...
    anonlab.exceptions.ParameterError: The 'k' parameter of KAnonymity must be an int >= 1. Got 0 instead.
    """

    kind: type | tuple[type, ...]
    low: float | None = None
    high: float | None = None
    choices: tuple[Any, ...] | None = None
    none: bool = False
    low_open: bool = False
    finite: bool = False
    empty: bool = True
    text: str | None = None

    def describe(self) -> str:
        """The constraint in words: ``an int >= 0``, ``one of 'basic', 'log'``."""
        if self.text is not None:
            return self.text
        if self.choices is not None:
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        else:
            kinds = self.kind if isinstance(self.kind, tuple) else (self.kind,)
            text = " or ".join(_KIND_NAMES.get(k, k.__name__) for k in kinds)
            if self.finite:
                text = text.replace("a number", "a finite number")
            low_mark = "(" if self.low_open else "["
            if self.low is not None and self.high is not None:
                text += f" in {low_mark}{_bound(self.low)}, {_bound(self.high)}]"
            elif self.low is not None:
                text += f" {'>' if self.low_open else '>='} {_bound(self.low)}"
            elif self.high is not None:
                text += f" <= {_bound(self.high)}"
        return text + (" (or None)" if self.none else "")

    def accepts(self, value: Any) -> bool:
        """Whether ``value`` satisfies the constraint.

        Examples
        --------
        >>> Param(float, low=0).accepts(2), Param(float, low=0).accepts(True)
        (True, False)
        """
        if value is None:
            return self.none
        if self.choices is not None:
            return any(value == c and type(value) is type(c) for c in self.choices)
        if not self._of_kind(value):
            return False
        if isinstance(value, str) and not value and not self.empty:
            return False
        if _is_number(value):
            x = float(value)
            if math.isnan(x) or (self.finite and math.isinf(x)):
                return False
            if self.low is not None and (x < self.low or (self.low_open and x == self.low)):
                return False
            if self.high is not None and x > self.high:
                return False
        return True

    def check(
        self,
        value: Any,
        name: str,
        *,
        owner: str | None = None,
        subject: str | None = None,
    ) -> Any:
        """Return ``value`` (an int as ``int``, a number as ``float``) or raise the one wording.

        Parameters
        ----------
        value : object
            The value to check.
        name : str
            The parameter's name.
        owner : str, optional
            What the parameter belongs to, named in the message (``of KAnonymity``).
        subject : str, optional
            The message's subject in place of ``The 'name' parameter of owner`` (a job's
            own key: ``The 'weight' of quasi-identifier 'age'``).

        Returns
        -------
        object
            The value; an int of kind ``int`` as ``int``, a number of kind ``float`` as
            ``float``.

        Raises
        ------
        ParameterError
            ``<subject> must be <constraint>. Got <value> instead.``

        Examples
        --------
        >>> Param(float, low=0, high=1).check(1.5, "delta")
        Traceback (most recent call last):
        ...
        anonlab.exceptions.ParameterError: The 'delta' parameter must be a number in [0, 1]. Got 1.5 instead.
        """
        if not self.accepts(value):
            if subject is None:
                subject = f"The {name!r} parameter{f' of {owner}' if owner else ''}"
            raise ParameterError(
                f"{subject} must be {self.describe()}. Got {self._shown(value)} instead."
            )
        if value is None or self.choices is not None or not _is_number(value):
            return value
        kinds = self.kind if isinstance(self.kind, tuple) else (self.kind,)
        if kinds == (int,):
            return int(value)
        if kinds == (float,):
            return float(value)
        return value

    def _of_kind(self, value: Any) -> bool:
        kinds = self.kind if isinstance(self.kind, tuple) else (self.kind,)
        for k in kinds:
            if k is bool:
                ok = isinstance(value, bool)
            elif k is int:
                ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
            elif k is float:
                ok = _is_number(value)
            else:
                ok = isinstance(value, k)
            if ok:
                return True
        return False

    def _shown(self, value: Any) -> str:
        """The refused value as the message shows it: a number of the right kind by its
        value (``3``, ``1.5``, ``nan``), anything else by its ``repr``."""
        if self.choices is None and _is_number(value) and self._of_kind(value):
            if isinstance(value, numbers.Integral):
                return str(int(value))
            return f"{float(value):g}"
        return repr(value)


_KIND_NAMES: dict[type, str] = {
    int: "an int",
    float: "a number",
    bool: "true or false",
    str: "a string",
    dict: "a mapping",
    list: "a list",
}


def _bound(value: float) -> str:
    """A bound as the message shows it: an int whole (``32561``), a fraction by ``:g``."""
    if isinstance(value, numbers.Integral):
        return str(int(value))
    return f"{value:g}"


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_int(
    value: object,
    name: str,
    *,
    low: int | None = None,
    high: int | None = None,
    owner: str | None = None,
) -> int:
    """Return ``value`` as an int, or raise :class:`ParameterError` with the one wording
    (:class:`Param` ``(int, low=low, high=high)``).

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

    Examples
    --------
    >>> check_int(3, "k", low=1)
    3
    """
    result: int = Param(int, low=low, high=high).check(value, name, owner=owner)
    return result


def check_fraction(
    value: object,
    name: str,
    *,
    low: float = 0.0,
    high: float = 1.0,
    low_open: bool = False,
    owner: str | None = None,
) -> float:
    """Return ``value`` as a float in ``[low, high]`` (or ``(low, high]``), else raise the
    one wording (:class:`Param` ``(float, low=low, high=high, low_open=low_open)``).

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

    Examples
    --------
    >>> check_fraction(1, "delta")
    1.0
    """
    rule = Param(float, low=low, high=high, low_open=low_open)
    result: float = rule.check(value, name, owner=owner)
    return result


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
    'age'), else the closest by :func:`difflib.get_close_matches`.

    Examples
    --------
    >>> did_you_mean("AGE", ["age", "sex"])
    " Did you mean 'age'?"
    >>> did_you_mean("xyz", ["age"])
    ''
    """
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
