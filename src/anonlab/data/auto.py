"""Hierarchies inferred from a column: intervals, dates, masking or grouping, chosen by its values.

A steward who has no hierarchy files gets, for each quasi-identifier, a hierarchy with
several useful levels instead of the one step ``value -> *``:

- numbers (but whole numbers with at most :data:`FEW_CODES` values: codes): intervals of nice widths (1, 2 or 5 times a power of ten), each width dividing the
  next, from about :data:`MAX_INTERVALS` intervals over the bulk of the values up to one;
  the sparse tails (below the :data:`TAIL` quantile and above the ``1 - TAIL`` quantile of
  the records) are bottom- and top-coded (``<20``, ``>=90``) at every level;
- dates and timestamps: month, quarter, year, decade (a timestamp's day first);
- codes of equal length with digits (ZIP, ICD, NAICS): masking from the right;
- any other column: its rare values (held by fewer than :data:`RARE_SHARE` of the records)
  grouped into ``other`` first (``grouping="frequency"``, the default), then ``*``; with
  ``grouping="none"`` only ``*``.

The choice is the column's, never the name's alone: a name that says "code" (``zip``,
``postcode``, ``icd``, ``naics``) only makes equal-length numbers masked rather than cut into
intervals. ARX's hierarchy wizard and sdcMicro's ``globalRecode`` build the same kinds of
hierarchy from parameters the user gives; here the parameters are fitted to the data.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from anonlab._validation import Param, shown
from anonlab.data.builders import (
    TOP,
    date_hierarchy,
    flat_hierarchy,
    interval_hierarchy,
    masking_hierarchy,
)
from anonlab.data.hierarchy import Hierarchy
from anonlab.exceptions import HierarchyError

__all__ = [
    "AutoHierarchy",
    "FEW_CODES",
    "GROUPINGS",
    "MAX_INTERVALS",
    "RARE_SHARE",
    "TAIL",
    "auto_hierarchy",
    "infer_hierarchy",
]

#: About how many intervals the finest interval level has over the bulk of the values.
MAX_INTERVALS = 20
#: Whole numbers with at most this many distinct values are category codes (race 1-6, a
#: marital status 1-9): they are not cut into intervals.
FEW_CODES = 10
#: The share of the records in each tail that is bottom- or top-coded.
TAIL = 0.01
#: A value held by fewer than this share of the records is rare (``grouping="frequency"``).
RARE_SHARE = 0.01
#: What a categorical column's first level does: group the rare values (``"frequency"``, the
#: default) or nothing (``"none"``: ``value -> *``).
GROUPINGS = ("none", "frequency")
_GROUPING = Param(str, choices=GROUPINGS)
#: The date and timestamp formats recognised, tried in this order.
DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%d.%m.%Y", "%m/%d/%Y", "%d/%m/%Y")
TIMESTAMP_FORMATS = ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M")
#: Words of a column name that say its equal-length numbers are codes (masked, not cut).
_CODE_WORDS = re.compile(r"zip|postal|postcode|plz|icd|naics|nace|isco|fips|code")
_CODE = re.compile(r"[0-9A-Za-z]+")


@dataclass(frozen=True)
class AutoHierarchy:
    """A hierarchy inferred from a column, and why it has the levels it has.

    Attributes
    ----------
    hierarchy : Hierarchy
    kind : str
        ``"intervals"``, ``"dates"``, ``"mask"``, ``"frequency"`` or ``"flat"``.
    description : str
        The levels in words, for a steward (``"intervals of width 5, 10, 20, 100 ..."``).

    Examples
    --------
    >>> auto = infer_hierarchy([str(a) for a in range(17, 91)], attribute="age")
    >>> auto.kind, auto.hierarchy.height
    ('intervals', 5)
    """

    hierarchy: Hierarchy
    kind: str
    description: str


def infer_hierarchy(
    values: Iterable[object],
    counts: Sequence[int] | npt.ArrayLike | None = None,
    *,
    attribute: str | None = None,
    grouping: str = "frequency",
) -> AutoHierarchy:
    """Infer a hierarchy for a column from its values (see the module's rules).

    Parameters
    ----------
    values : iterable
        The column's distinct values (a null is skipped: it stays null below the top).
    counts : array_like of int, optional
        The records holding each value (default: one each). The tails of a numeric column
        and the rare values are shares of the records.
    attribute : str, optional
        The column's name: named in messages, and a name that says "code" makes equal-length
        numbers masked.
    grouping : {"frequency", "none"}
        For a categorical column: the rare values grouped first (the default), or only
        ``value -> *``.

    Returns
    -------
    AutoHierarchy

    Raises
    ------
    HierarchyError
        ``counts`` not one per value.
    ParameterError
        An unknown ``grouping``.

    Warns
    -----
    UserWarning
        The column has one value, or none (every row missing): it gets ``value -> *``.

    Examples
    --------
    >>> h = infer_hierarchy(["4350", "4351", "4360", "0435"], attribute="zip").hierarchy
    >>> [h.generalize(["4351"], level)[0] for level in range(h.n_levels)]
    ['4351', '435*', '43**', '4***', '****']
    >>> infer_hierarchy(["2024-03-15", "2019-11-02"]).description
    'dates: month, quarter, year, decade, then *'
    >>> infer_hierarchy(["F", "M"]).description
    'no order or pattern found: value -> *'
    """
    grouping = _GROUPING.check(grouping, "grouping", owner="the automatic hierarchy")
    labels, weights = _distinct_counts(values, counts, attribute)
    if len(labels) < 2:  # nothing to infer from: every row missing, or one value
        what = "no value (every row is missing)" if not labels else f"one value ({labels[0]!r})"
        warnings.warn(
            f"Column {attribute!r} has {what}: its automatic hierarchy is value -> *.",
            UserWarning,
            stacklevel=2,
        )
        rows = [[v, TOP] for v in labels] or [[TOP, TOP]]
        return AutoHierarchy(Hierarchy(rows, attribute=attribute), "flat", f"{what}: value -> *")
    for infer in (_dates, _codes, _numbers):
        found = infer(labels, weights, attribute)
        if found is not None:
            return found
    return _categorical(labels, weights, attribute, grouping)


def auto_hierarchy(
    values: Iterable[object],
    *,
    counts: Sequence[int] | npt.ArrayLike | None = None,
    grouping: str = "frequency",
    attribute: str | None = None,
) -> Hierarchy:
    """The hierarchy :func:`infer_hierarchy` infers (a job's ``hierarchy: auto``).

    Examples
    --------
    >>> ages = [str(a) for a in range(17, 91)]
    >>> auto_hierarchy(ages, attribute="age").generalize(["38"], 1).tolist()
    ['[35, 40)']
    """
    return infer_hierarchy(values, counts, attribute=attribute, grouping=grouping).hierarchy


def _distinct_counts(
    values: Iterable[object], counts: Sequence[int] | npt.ArrayLike | None, attribute: str | None
) -> tuple[list[str], npt.NDArray[np.float64]]:
    raw = list(values)
    weights = np.ones(len(raw)) if counts is None else np.asarray(counts, dtype=np.float64)
    if weights.shape != (len(raw),):
        raise HierarchyError(
            f"The counts of attribute {attribute!r} must be one per value: {len(raw)} values, "
            f"{weights.size} counts."
        )
    merged: dict[str, float] = {}
    for v, w in zip(raw, weights.tolist()):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        merged[str(v)] = merged.get(str(v), 0.0) + w
    return list(merged), np.fromiter(merged.values(), dtype=np.float64, count=len(merged))


def _dates(
    labels: list[str], weights: npt.NDArray[np.float64], attribute: str | None
) -> AutoHierarchy | None:
    for fmt, levels in [(f, ("month", "quarter", "year", "decade")) for f in DATE_FORMATS] + [
        (f, ("day", "month", "quarter", "year", "decade")) for f in TIMESTAMP_FORMATS
    ]:
        if all(_parses(v, fmt) for v in labels):
            h = date_hierarchy(labels, levels=levels, format=fmt, attribute=attribute)
            return AutoHierarchy(h, "dates", f"dates: {', '.join(levels)}, then *")
    return None


def _parses(value: str, fmt: str) -> bool:
    try:
        _dt.datetime.strptime(value, fmt)
    except ValueError:
        return False
    return True


def _codes(
    labels: list[str], weights: npt.NDArray[np.float64], attribute: str | None
) -> AutoHierarchy | None:
    width = len(labels[0])
    if len(labels) < 2 or width < 2 or any(len(v) != width for v in labels):
        return None
    if not all(_CODE.fullmatch(v) and any(c.isdigit() for c in v) for v in labels):
        return None
    numbers = all(v.isdigit() for v in labels)
    leading_zero = any(v[0] == "0" for v in labels)
    named = attribute is not None and _CODE_WORDS.search(attribute.lower()) is not None
    if numbers and not (leading_zero or named):
        return None  # plain numbers of one length (ages 17-90, years): intervals
    h = masking_hierarchy(labels, attribute=attribute)
    return AutoHierarchy(
        h, "mask", f"codes of {width} characters: masked from the right, one character a level"
    )


def _numbers(
    labels: list[str], weights: npt.NDArray[np.float64], attribute: str | None
) -> AutoHierarchy | None:
    try:
        nums = np.array([float(v) for v in labels])
    except ValueError:
        return None
    if not np.all(np.isfinite(nums)) or len(labels) < 3:
        return None
    order = np.argsort(nums, kind="stable")
    x, w = nums[order], weights[order]
    share = np.cumsum(w) / w.sum()
    low = float(x[np.searchsorted(share, TAIL, side="left")])
    high = float(x[min(int(np.searchsorted(share, 1 - TAIL, side="left")), x.size - 1)])
    if high <= low:
        low, high = float(x[0]), float(x[-1])
    integral = bool(np.all(x == np.round(x)))
    if integral and x.size <= FEW_CODES:
        return None
    widths = _nice_widths(high - low, integral)
    if not widths:  # a handful of close values: no interval between a value and the whole
        return None
    first = widths[0]
    bottom = math.floor(low / first) * first
    top = math.floor(high / first) * first + first  # the bulk ends below ``top``
    # A coarser level's bulk is the finer one's rounded inwards to its width, so that its
    # tails hold the finer tails and every cut is a cut of the level below (the levels nest).
    cuts: list[list[float]] = []
    used: list[float] = []
    lo, hi = bottom, top
    for width in widths:
        a = math.ceil(round(lo / width, 9)) * width
        b = math.floor(round(hi / width, 9)) * width
        if b <= a:
            break
        lo, hi = round(a, 10), round(b, 10)
        steps = np.arange(round(lo / width) + 1, round(hi / width))
        cuts.append([lo, *np.round(steps * width, 10).tolist(), hi])
        used.append(width)
    # then two halves, split at the cut below which about half of the records lie (each
    # tail merges with its half, so a small tail never forces the whole column to *)
    halves = np.array([share[x < c][-1] if np.any(x < c) else 0.0 for c in cuts[-1]])
    middle = float(cuts[-1][int(np.argmin(np.abs(halves - 0.5)))])
    cuts.append([middle])
    coded = []
    if x[0] < bottom:
        below = float(share[x < bottom][-1])
        coded.append(f"below {_fmt(bottom)} bottom-coded ({below:.1%} of the records)")
    if x[-1] >= top:
        above = 1 - float(share[x < top][-1])
        coded.append(f"{_fmt(top)} and above top-coded ({above:.1%} of the records)")
    h = _merging(interval_hierarchy(labels, cuts=cuts, attribute=attribute))
    text = (
        f"intervals of width {', '.join(_fmt(v) for v in used)} (the tails widening with the "
        f"width), then below and from {_fmt(middle)}"
        + "".join(f"; {c}" for c in coded)
        + "; then *"
    )
    return AutoHierarchy(h, "intervals", text)


def _merging(h: Hierarchy) -> Hierarchy:
    """``h`` without the levels that merge no group of the level kept below them (nested
    levels with as many labels: the same partition under other names)."""
    rows = h.rows()
    keep = [0]
    for level in range(1, h.n_levels):
        if len(set(h.level_labels(level))) < len(set(h.level_labels(keep[-1]))):
            keep.append(level)
    if len(keep) == h.n_levels:
        return h
    return Hierarchy([[row[j] for j in keep] for row in rows], attribute=h.attribute)


def _nice_widths(span: float, integral: bool) -> list[float]:
    """Nice widths (1, 2, 5 x 10^n), each dividing the next, from about
    ``span / MAX_INTERVALS`` up to below half of ``span``."""
    if span <= 0:
        return []
    exp = math.floor(math.log10(span / MAX_INTERVALS))
    width = 10.0**exp
    for step in (1, 2, 5, 10):
        if span / (step * 10.0**exp) <= MAX_INTERVALS:
            width = step * 10.0**exp
            break
    if integral and width <= 1:
        width = 2.0  # width 1 on integers would repeat the values themselves
    widths = []
    while width < span / 2:  # (at half the span, the bulk is at most three intervals)
        widths.append(float(round(width, 12)))
        mantissa = round(width / 10.0 ** math.floor(math.log10(width) + 1e-9))
        width *= 5 if mantissa == 2 else 2
    return widths


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _categorical(
    labels: list[str], weights: npt.NDArray[np.float64], attribute: str | None, grouping: str
) -> AutoHierarchy:
    rare = weights < RARE_SHARE * weights.sum()
    if grouping == "frequency" and 1 < rare.sum() < len(labels):
        other = "other"
        while other in labels:
            other += "*"
        rows = [[v, other if r else v, TOP] for v, r in zip(labels, rare.tolist())]
        h = Hierarchy(rows, attribute=attribute)
        return AutoHierarchy(
            h,
            "frequency",
            f"{int(rare.sum())} rare values (each under {RARE_SHARE:.0%} of the records) "
            f"grouped into {shown(other)}, then *",
        )
    return AutoHierarchy(
        flat_hierarchy(labels, attribute=attribute), "flat", "no order or pattern found: value -> *"
    )
