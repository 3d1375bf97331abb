"""Helpers shared by the PrivacyFrost2 modules: level conventions, checks, sensitive counts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from anonlab._typing import IntArray
from anonlab._validation import check_int
from anonlab.exceptions import ParameterError

__all__ = ["from_paper_levels", "per_attribute", "side_by_side", "to_paper_levels"]


def to_paper_levels(levels: Sequence[int], heights: Sequence[int]) -> tuple[int, ...]:
    """Convert anonlab levels to the paper's levels, counted from the root.

    anonlab counts a hierarchy's levels from the original values (0) up to the root
    (``height``); Kiyomoto and Miyake count from the root (0) down, so a larger paper level
    ``w`` is more detailed. The two are related by ``w = height - level``: the paper's
    minimum level ``w^M`` is anonlab's ``max_level``, its lowest level ``w^L`` anonlab's
    ``min_level``, and the paper's "generalization" ``w <- w - 1`` is ``level + 1`` here.
    This is the only place the conversion is written.
    """
    return tuple(int(h) - int(lv) for lv, h in zip(levels, heights))


def from_paper_levels(paper_levels: Sequence[int], heights: Sequence[int]) -> tuple[int, ...]:
    """Convert levels counted from the root (the paper's) to anonlab levels (the inverse of
    :func:`to_paper_levels`)."""
    return to_paper_levels(paper_levels, heights)


def per_attribute(
    value: Mapping[str, int] | Sequence[int],
    attributes: Sequence[str],
    name: str,
    *,
    low: int,
    default: int | None = None,
    owner: str = "privacyfrost2",
) -> list[int]:
    """One validated int per attribute from a mapping (by name) or a sequence (table order).

    A mapping may omit attributes when ``default`` is given; it may not name unknown ones.
    """
    if isinstance(value, Mapping):
        unknown = [a for a in value if a not in attributes]
        if unknown:
            raise ParameterError(
                f"The {name!r} parameter of {owner} names {unknown[0]!r}, which is not a "
                f"quasi-identifier. Quasi-identifiers: {', '.join(map(repr, attributes))}."
            )
        missing = [a for a in attributes if a not in value]
        if missing and default is None:
            raise ParameterError(
                f"The {name!r} parameter of {owner} needs a value for every quasi-identifier; "
                f"missing: {', '.join(map(repr, missing))}."
            )
        raw: list[object] = [value.get(a, default) for a in attributes]
    elif isinstance(value, (str, bytes)) or not isinstance(value, Sequence | np.ndarray):
        raise ParameterError(
            f"The {name!r} parameter of {owner} must be a mapping from quasi-identifier to int "
            f"or a sequence of {len(attributes)} ints. Got {value!r} instead."
        )
    else:
        raw = list(value)
        if len(raw) != len(attributes):
            raise ParameterError(
                f"The {name!r} parameter of {owner} must have one value per quasi-identifier "
                f"({len(attributes)}: {', '.join(map(repr, attributes))}). Got {len(raw)}."
            )
    return [check_int(v, f"{name}[{a}]", low=low, owner=owner) for v, a in zip(raw, attributes)]


def side_by_side(
    sparse: Mapping[str, tuple[IntArray, IntArray, npt.NDArray[np.floating], int]],
) -> tuple[dict[str, tuple[int, int]], IntArray, IntArray, IntArray, int, IntArray]:
    """The base classes' sensitive counts of every attribute side by side, as the compiled
    kernels read them, from :meth:`LatticeEvaluator.sparse_histograms` (per attribute: base
    class, value and count of each non-zero count, and the number of values).

    Returns ``(layout, cls, val, cnt, n_columns, total)``: per attribute its first column and
    number of columns; the non-zero counts (base class, column, count); the number of
    columns; the whole table's count in each column.
    """
    layout: dict[str, tuple[int, int]] = {}
    nv = 0
    for name, (_, _, _, nvals) in sparse.items():
        layout[name] = (nv, nvals)
        nv += nvals
    if sparse:
        cls = np.concatenate([t[0] for t in sparse.values()]).astype(np.int64, copy=False)
        val = np.concatenate([t[1] + layout[name][0] for name, t in sparse.items()])
        cnt = np.concatenate([t[2] for t in sparse.values()]).astype(np.int64)
    else:
        cls = val = cnt = np.zeros(0, dtype=np.int64)
    total = np.bincount(val, weights=cnt, minlength=nv).astype(np.int64)
    return layout, cls, val.astype(np.int64, copy=False), cnt, nv, total
