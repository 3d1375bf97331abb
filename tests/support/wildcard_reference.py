"""Test-only reference of wildcard frequencies: every pair of records compared, one by one.

A record's frequency under wildcard semantics (sdcMicro's ``freqCalc`` with missing values,
ARX's wildcard risk model) is the number of records compatible with it: on every attribute the
two hold the same value or either is blank. The production count
(:func:`anonlab.release.blanks.compatible_counts`) groups by blank pattern; this one loops.
"""

from __future__ import annotations

from collections.abc import Sequence

BLANK = "*"


def compatible(a: Sequence[object], b: Sequence[object]) -> bool:
    """Whether two released records match on every attribute (a ``*`` matches anything)."""
    return all(x == y or x == BLANK or y == BLANK for x, y in zip(a, b))


def pairwise_frequencies(rows: Sequence[Sequence[object]]) -> list[int]:
    """Each record's count of compatible records (itself included), pair by pair."""
    return [sum(compatible(r, s) for s in rows) for r in rows]
