"""Helpers on value labels: natural ordering and vectorised factorization (numpy only)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = [
    "natural_order",
    "factorize",
    "as_text",
    "clock_labels",
    "float_labels",
    "NULL_LABEL",
    "UTC_SUFFIX",
]

#: How a null is shown in reports and error messages. Internally a null is ``None``.
NULL_LABEL = "<null>"


_STR = np.frompyfunc(str, 1, 1)


def as_text(values: npt.NDArray[np.object_]) -> npt.NDArray[np.object_]:
    """Each value as a Python ``str``, in an object array.

    Unlike ``astype(str)``, the result holds each string at its own length: no fixed-width
    array sized by the longest value (one 100,000-character label would otherwise make every
    element 400 KB).
    """
    out: npt.NDArray[np.object_] = np.asarray(_STR(values), dtype=object).reshape(-1)
    return out


#: Whole floats below this magnitude are written as integers (every such float is one).
_WHOLE_BELOW = 2.0**53


def float_labels(values: npt.NDArray[np.floating]) -> npt.NDArray[np.object_]:
    """The label of each float: a whole number below ``2**53`` as an integer (``1.0`` is
    ``"1"``, ``-0.0`` is ``"0"``), NaN a null (``None``), any other value its shortest
    round-trip text in its own precision (``"2.5"``, ``"1e-05"``, ``"1e+16"``, ``"inf"``:
    Python's ``repr`` for 64-bit floats), in scientific notation below ``1e-4`` and from
    ``1e16`` on whatever the precision (numpy writes a 32-bit ``1000000.5`` as
    ``1.0000005e+06``; DuckDB and Spark, as this function, ``1000000.5``).

    Every engine writes a float column's values this way, so that a value has one label
    whichever engine reads it (DuckDB's cast of a double to text is the same ``repr``).

    Parameters
    ----------
    values : ndarray of float
        Distinct values of a column (the loop is over those that are not whole numbers).
    """
    values = np.asarray(values)
    out = np.empty(values.size, dtype=object)
    nan = np.isnan(values)
    with np.errstate(invalid="ignore"):
        whole = ~nan & (np.abs(values) < _WHOLE_BELOW) & (values == np.floor(values))
    out[whole] = as_text(values[whole].astype(np.int64))
    rest = ~nan & ~whole
    out[rest] = [_shortest(v) for v in values[rest]]
    out[nan] = None
    return out


#: The trailing zeros of a time's fraction of a second (and the point, if only zeros follow).
_FRACTION_ZEROS = re.compile(r"(\.\d*?)0+$")

#: What follows a timestamp with a time zone, written as its instant in UTC.
UTC_SUFFIX = "+00:00"


def clock_labels(texts: Sequence[str | None], *, zoned: bool) -> list[str | None]:
    """The labels of times and timestamps from their text as Arrow writes them: the fraction
    of a second with the digits it needs (``03:04:05.120000`` is ``03:04:05.12``,
    ``03:04:05.000`` is ``03:04:05``), and a timestamp with a time zone as its instant in
    UTC followed by ``+00:00`` (``2020-01-01 12:30:05.12+00:00``) whatever its zone.

    Every engine writes time columns this way, so that a value has one label whichever
    engine (and whichever machine's time zone) reads it.

    Parameters
    ----------
    texts : sequence of str or None
        Arrow's text of the values, a timestamp with a time zone cast to one without first
        (its UTC wall clock); None stays None.
    zoned : bool
        Whether the values are timestamps with a time zone.
    """
    suffix = UTC_SUFFIX if zoned else ""
    return [
        None if v is None else _FRACTION_ZEROS.sub(r"\1", v).rstrip(".") + suffix for v in texts
    ]


def _shortest(value: np.floating) -> str:
    """The shortest round-trip text of a float in its own precision, positional from
    ``1e-4`` to below ``1e16`` (numpy's ``str``, but for a 32-bit float from ``1e6`` on)."""
    if value.dtype != np.float64 and 1e-4 <= abs(value) < 1e16:
        return np.format_float_positional(value, unique=True, trim="0")
    return str(value)


def _as_numbers(labels: npt.NDArray[np.object_]) -> npt.NDArray[np.float64] | None:
    try:
        return np.fromiter(map(float, labels), dtype=np.float64, count=len(labels))
    except (TypeError, ValueError):
        return None


def natural_order(labels: npt.NDArray[np.object_]) -> npt.NDArray[np.intp]:
    """Return the permutation that sorts ``labels`` naturally.

    Numbers are sorted by value when every non-null label parses as a number, other labels
    lexicographically; a null (``None``) comes last.

    Parameters
    ----------
    labels : ndarray of object
        Distinct labels (str or None). The loop is over distinct values, not rows.

    Returns
    -------
    ndarray of intp
        Indices into ``labels``.
    """
    labels = np.asarray(labels, dtype=object)
    is_null = np.asarray(labels == None, dtype=bool).reshape(-1)  # noqa: E711 - elementwise
    idx = np.flatnonzero(~is_null)
    present = labels[idx]
    nums = _as_numbers(present)
    if nums is not None and not np.isnan(nums).any():
        order = idx[np.lexsort((as_text(present), nums))]
    else:
        order = idx[np.argsort(as_text(present), kind="stable")]
    return np.concatenate([order, np.flatnonzero(is_null)]).astype(np.intp)


def factorize(
    values: npt.ArrayLike,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.object_]]:
    """Encode ``values`` as integer codes into naturally ordered distinct labels.

    ``None`` and float NaN become one null label (``None``), a value of its own.

    Parameters
    ----------
    values : array_like
        Values of one column.

    Returns
    -------
    codes : ndarray of int32
        One code per value.
    categories : ndarray of object
        Distinct labels as str, a null as ``None`` (last).
    """
    arr = np.asarray(values, dtype=object)
    if arr.ndim != 1:
        arr = arr.reshape(-1)
    null = np.asarray((arr == None) | (arr != arr), dtype=bool)  # noqa: E711 - elementwise
    if arr.size:
        uniq, inv = np.unique(as_text(arr[~null]), return_inverse=True)
    else:
        uniq, inv = np.array([], dtype=object), np.array([], dtype=np.intp)
    cats = uniq.astype(object)
    codes = np.empty(arr.size, dtype=np.int32)
    codes[~null] = inv
    if null.any():
        cats = np.append(cats, np.array([None], dtype=object))
        codes[null] = cats.size - 1
    order = natural_order(cats)
    remap = np.empty(order.size, dtype=np.int32)
    remap[order] = np.arange(order.size, dtype=np.int32)
    return remap[codes] if codes.size else codes, cats[order]
