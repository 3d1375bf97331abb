"""Builders of generalization hierarchies: numeric intervals, masking, dates, taxonomies.

Each builder takes the distinct values of a column (a null is skipped: it stays null at every
level) and returns a :class:`~anonlab.data.hierarchy.Hierarchy` whose top level is ``"*"``.
"""

from __future__ import annotations

import datetime as _dt
import inspect
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from anonlab._resources import format_bytes, memory_budget
from anonlab._validation import did_you_mean, shown
from anonlab.data.hierarchy import Hierarchy
from anonlab.exceptions import HierarchyError, ParameterError

__all__ = [
    "interval_hierarchy",
    "masking_hierarchy",
    "date_hierarchy",
    "taxonomy_hierarchy",
    "flat_hierarchy",
    "BUILDERS",
    "build_hierarchy",
    "builder_options",
]

TOP = "*"


def _distinct(values: Iterable[object]) -> list[str]:
    seen: dict[str, None] = {}
    for v in values:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        seen.setdefault(str(v), None)
    if not seen:
        raise HierarchyError("Cannot build a hierarchy: the column has no non-null value.")
    return list(seen)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def interval_hierarchy(
    values: Iterable[object],
    *,
    widths: Sequence[float] | None = None,
    cuts: Sequence[Sequence[float]] | None = None,
    start: float | None = None,
    attribute: str | None = None,
) -> Hierarchy:
    """Build an interval hierarchy for a numeric attribute.

    Parameters
    ----------
    values : iterable
        Values of the column (numbers or numeric strings).
    widths : sequence of float, optional
        Interval width per level, e.g. ``[5, 10, 20]``; each width must divide the next so
        that intervals nest. Intervals start at ``start`` (default: the floor of the minimum
        to a multiple of the first width).
    cuts : sequence of sequence of float, optional
        Cut points per level instead of widths, e.g. ``[[20, 30, 40, 50], [30, 50]]``; each
        level's cuts must be a subset of the previous level's.
    start : float, optional
        Origin of the first interval when ``widths`` is given.
    attribute : str, optional
        Name used in messages.

    Returns
    -------
    Hierarchy
        Levels: the value, one interval label ``[lo, hi)`` per level, then ``*``.

    Examples
    --------
    >>> h = interval_hierarchy([23, 37, 41, 68], widths=[10, 20], attribute="age")
    >>> h.generalize(["37"], 1).tolist(), h.generalize(["37"], 2).tolist(), h.height
    (['[30, 40)'], ['[20, 40)'], 3)
    """
    labels = _distinct(values)
    try:
        nums = np.array([float(v) for v in labels])
    except ValueError:
        bad = next(v for v in labels if not _is_float(v))
        text = str(bad)  # "*", "[20, 30)", "<20", ">=40": a label this builder writes
        released = text == "*" or text.startswith(("<", ">=")) or text[:1] + text[-1:] == "[)"
        hint = (
            " It reads like a released label: check a release beside its original data "
            "(anonlab check DATA --job JOB --release RELEASE)."
            if released
            else ""
        )
        raise HierarchyError(
            f"Cannot build an interval hierarchy for attribute {attribute!r}: "
            f"value {shown(bad)} is not a number.{hint}"
        ) from None
    if (widths is None) == (cuts is None):
        raise ParameterError("Give exactly one of 'widths' or 'cuts' for an interval hierarchy.")
    columns: list[list[str]] = [labels]
    if widths is not None:
        if not widths or any(w <= 0 for w in widths):
            raise ParameterError(
                f"Interval widths must be positive numbers. Got {shown(list(widths))}."
            )
        origin = (
            float(start) if start is not None else math.floor(nums.min() / widths[0]) * widths[0]
        )
        for w in widths:
            lo = origin + np.floor((nums - origin) / w) * w
            columns.append([f"[{_fmt(a)}, {_fmt(a + w)})" for a in lo])
    else:
        assert cuts is not None
        for level_cuts in cuts:
            c = np.sort(np.asarray(level_cuts, dtype=float))
            pos = np.searchsorted(c, nums, side="right")
            lab = []
            for p in pos:
                if p == 0:
                    lab.append(f"<{_fmt(c[0])}")
                elif p == c.size:
                    lab.append(f">={_fmt(c[-1])}")
                else:
                    lab.append(f"[{_fmt(c[p - 1])}, {_fmt(c[p])})")
            columns.append(lab)
    columns.append([TOP] * len(labels))
    return _from_columns(columns, attribute, "interval widths must nest (each divides the next)")


def _is_float(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


def masking_hierarchy(
    values: Iterable[object],
    *,
    width: int | None = None,
    steps: Sequence[int] | None = None,
    mask_char: str = "*",
    pad_char: str = "0",
    attribute: str | None = None,
) -> Hierarchy:
    """Build a masking hierarchy for codes such as ZIP: ``4350 -> 435* -> 43** -> ****``.

    Parameters
    ----------
    values : iterable
        Values of the column.
    width : int, optional
        Code width; shorter values are left-padded with ``pad_char`` for masking.
        Default: the longest value.
    steps : sequence of int, optional
        Number of masked trailing characters per level, increasing, e.g. ``[1, 2, 4]``.
        Default: ``1, 2, ..., width``. The last level is always fully masked.
    mask_char, pad_char : str
        Characters used to mask and to pad.
    attribute : str, optional
        Name used in messages.

    Returns
    -------
    Hierarchy

    Examples
    --------
    >>> h = masking_hierarchy(["4350", "4351", "4360"], attribute="zip")
    >>> [h.generalize(["4351"], level)[0] for level in range(h.n_levels)]
    ['4351', '435*', '43**', '4***', '****']
    """
    labels = _distinct(values)
    w = width if width is not None else max(len(v) for v in labels)
    if w < 1:
        raise ParameterError(f"The 'width' parameter must be an int >= 1. Got {w} instead.")
    too_long = [v for v in labels if len(v) > w]
    if too_long:
        raise HierarchyError(
            f"Value {shown(too_long[0])} of attribute {attribute!r} is longer than the mask "
            f"width {w}."
        )
    levels = list(steps) if steps is not None else list(range(1, w + 1))
    if any(b <= a for a, b in zip(levels, levels[1:])) or levels[0] < 1 or levels[-1] > w:
        raise ParameterError(f"Masking steps must increase within 1..{w}. Got {shown(levels)}.")
    if levels[-1] != w:
        levels.append(w)
    need = (len(levels) + 1) * len(labels) * (w + 56)  # every label of every level, as str
    if need > memory_budget():
        raise ParameterError(
            f"The masking hierarchy of attribute {attribute!r} would hold {len(levels) + 1:,} "
            f"levels of {len(labels):,} labels up to {w:,} characters long: about "
            f"{format_bytes(need)}, more than this machine can spare "
            f"({format_bytes(memory_budget())}). Give fewer levels with 'steps' (e.g. "
            f"[1, 2, 4, {w}]) or a smaller 'width'."
        )
    padded = [v.rjust(w, pad_char) for v in labels]
    columns = [labels] + [[p[: w - s] + mask_char * s for p in padded] for s in levels]
    return _from_columns(columns, attribute, "masking")


_DATE_LEVELS = ("day", "month", "quarter", "year", "decade")


def date_hierarchy(
    values: Iterable[object],
    *,
    levels: Sequence[str] = ("month", "year", "decade"),
    format: str = "%Y-%m-%d",
    attribute: str | None = None,
) -> Hierarchy:
    """Build a date hierarchy: ``2024-03-15 -> 2024-03 -> 2024 -> 2020s -> *``.

    Parameters
    ----------
    values : iterable
        Dates as strings in ``format`` (or ``datetime.date`` objects).
    levels : sequence of str
        Levels to use above the value, from ``day`` (a timestamp's date), ``month``,
        ``quarter``, ``year``, ``decade``, in that order.
    format : str
        ``strptime`` format of the values.
    attribute : str, optional
        Name used in messages.

    Returns
    -------
    Hierarchy

    Examples
    --------
    >>> h = date_hierarchy(["2024-03-15", "2019-11-02"], attribute="visit")
    >>> h.generalize(["2024-03-15"], 1).tolist(), h.generalize(["2024-03-15"], 3).tolist()
    (['2024-03'], ['2020s'])
    >>> h.height
    4
    """
    labels = _distinct(values)
    unknown = [lv for lv in levels if lv not in _DATE_LEVELS]
    if unknown or list(levels) != sorted(levels, key=_DATE_LEVELS.index):
        raise ParameterError(
            f"Date levels must be taken in order from {list(_DATE_LEVELS)}. "
            f"Got {shown(list(levels))}."
        )
    dates: list[_dt.date] = []
    for v in labels:
        try:
            dates.append(_dt.datetime.strptime(v, format).date())
        except (ValueError, re.error) as exc:
            if isinstance(exc, re.error) or "directive" in str(exc):  # the format is wrong
                raise ParameterError(
                    f"The 'format' {shown(format)} of the dates hierarchy of attribute "
                    f"{attribute!r} is not a strptime format ({exc}); e.g. %Y-%m-%d."
                ) from None
            raise HierarchyError(
                f"Value {shown(v)} of attribute {attribute!r} is not a date in format "
                f"{shown(format)} (a strptime format: %Y-%m-%d is 2024-03-15, %d/%m/%Y is "
                "15/03/2024)."
            ) from None
    fmt = {
        "day": lambda d: f"{d.year:04d}-{d.month:02d}-{d.day:02d}",
        "month": lambda d: f"{d.year:04d}-{d.month:02d}",
        "quarter": lambda d: f"{d.year:04d}-Q{(d.month - 1) // 3 + 1}",
        "year": lambda d: f"{d.year:04d}",
        "decade": lambda d: f"{d.year // 10 * 10:04d}s",
    }
    columns = [labels] + [[fmt[lv](d) for d in dates] for lv in levels] + [[TOP] * len(labels)]
    return _from_columns(columns, attribute, "dates")


def taxonomy_hierarchy(
    parents: Mapping[str, Sequence[str]],
    *,
    attribute: str | None = None,
    add_top: bool = True,
) -> Hierarchy:
    """Build a hierarchy from a mapping of value to its ancestors (lowest first).

    Parameters
    ----------
    parents : Mapping[str, Sequence[str]]
        For each original value, its labels at levels 1, 2, ...
    attribute : str, optional
        Name used in messages.
    add_top : bool
        Append a ``*`` level when the last ancestors differ.

    Returns
    -------
    Hierarchy

    Examples
    --------
    >>> h = taxonomy_hierarchy({"flu": ["respiratory"], "asthma": ["respiratory"],
    ...                         "ulcer": ["digestive"]}, attribute="disease")
    >>> h.generalize(["flu", "ulcer"], 1).tolist(), h.height
    (['respiratory', 'digestive'], 2)
    """
    rows = [[str(v), *map(str, anc)] for v, anc in parents.items()]
    if add_top and rows and len({r[-1] for r in rows}) > 1:
        rows = [r + [TOP] for r in rows]
    return Hierarchy(rows, attribute=attribute)


def flat_hierarchy(values: Iterable[object], *, attribute: str | None = None) -> Hierarchy:
    """Build the one-step hierarchy ``value -> *`` (suppression of the attribute).

    Examples
    --------
    >>> h = flat_hierarchy(["F", "M"], attribute="sex")
    >>> h.height, h.generalize(["F", "M"], 1).tolist()
    (1, ['*', '*'])
    """
    return Hierarchy([[v, TOP] for v in _distinct(values)], attribute=attribute)


def _from_columns(columns: list[list[str]], attribute: str | None, what: str) -> Hierarchy:
    rows = [list(r) for r in zip(*columns)]
    # drop levels identical to the one below (e.g. masking a 1-char code twice)
    keep = [0] + [j for j in range(1, len(columns)) if columns[j] != columns[j - 1]]
    rows = [[r[j] for j in keep] for r in rows]
    try:
        return Hierarchy(rows, attribute=attribute)
    except HierarchyError as exc:
        raise HierarchyError(f"{exc} ({what})") from None


def _auto(
    values: Iterable[object],
    *,
    grouping: str = "frequency",
    counts: Sequence[float] | None = None,
    attribute: str | None = None,
) -> Hierarchy:
    """:func:`anonlab.data.auto.auto_hierarchy` (which builds on the builders here)."""
    from anonlab.data.auto import auto_hierarchy

    return auto_hierarchy(values, counts=counts, grouping=grouping, attribute=attribute)


#: The builders a job names by the key of their options (``{mask: {width: 5}}``); ``auto``
#: infers the kind and its parameters from the column (``hierarchy: auto``).
BUILDERS: dict[str, Callable[..., Hierarchy]] = {
    "mask": masking_hierarchy,
    "intervals": interval_hierarchy,
    "dates": date_hierarchy,
    "auto": _auto,
}


def builder_options(kind: str) -> list[str]:
    """The options a job may give the builder ``kind`` (its keyword parameters).

    Examples
    --------
    >>> builder_options("dates")
    ['levels', 'format']
    """
    params = inspect.signature(BUILDERS[kind]).parameters
    return [p for p in params if p not in ("values", "attribute", "counts")]


def build_hierarchy(
    kind: str,
    values: Iterable[object],
    options: Mapping[str, Any],
    *,
    attribute: str,
    counts: Sequence[float] | None = None,
) -> Hierarchy:
    """Build the hierarchy of a job's builder: ``kind`` (``mask``, ``intervals``,
    ``dates``) with ``options``, over the values of ``attribute``.

    Parameters
    ----------
    kind : str
        A key of :data:`BUILDERS`.
    values : iterable
        The column's distinct values.
    options : Mapping[str, Any]
        The builder's options as the job gives them.
    attribute : str
        The attribute, named in messages.
    counts : sequence of float, optional
        The records holding each value, for a builder that reads them (``auto``).

    Returns
    -------
    Hierarchy

    Raises
    ------
    ParameterError
        An option the builder does not take (the message lists the valid ones and the
        closest), or a value of the wrong type.

    Examples
    --------
    >>> build_hierarchy("mask", ["4350", "4351"], {"width": 4}, attribute="zip").height
    4
    >>> build_hierarchy("mask", ["4350"], {"widht": 4}, attribute="zip")
    Traceback (most recent call last):
    ...
    anonlab.exceptions.ParameterError: Unknown option 'widht' of the 'mask' hierarchy of attribute 'zip'. Did you mean 'width'? Valid options: width, steps, mask_char, pad_char.
    """
    valid = builder_options(kind)
    for key in options:
        if key not in valid:
            raise ParameterError(
                f"Unknown option {shown(key)} of the {kind!r} hierarchy of attribute "
                f"{attribute!r}.{did_you_mean(str(key), valid)} Valid options: "
                f"{', '.join(valid)}."
            )
    try:
        extra = (
            {"counts": counts} if "counts" in inspect.signature(BUILDERS[kind]).parameters else {}
        )
        return BUILDERS[kind](values, attribute=attribute, **options, **extra)
    except ParameterError:  # the builder's own message (a ParameterError is a TypeError too)
        raise
    except TypeError as exc:  # a value of the wrong type ("widths: 5" for a list)
        raise ParameterError(
            f"Bad {kind!r} options of attribute {attribute!r} ({shown(dict(options))}): {exc}."
        ) from None
