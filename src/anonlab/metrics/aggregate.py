"""Aggregate functions of multi-dimensional metrics (ARX ``metric/v2/ILMultiDimensional*``).

A multi-dimensional metric computes one value ``v_j`` per quasi-identifier; an aggregate
function turns them and the normalised attribute weights ``w_j`` into one number:

* ``sum``: ``sum_j v_j * w_j`` (Inf or NaN becomes the largest float, like ARX);
* ``arithmetic``: ``sum_j (v_j / m) * w_j``;
* ``geometric``: ``prod_j ((v_j + 1) * w_j) ** (1/m) - 1``;
* ``max``: ``max_j v_j * w_j``;
* ``rank``: the vector ``v_j * w_j`` sorted in descending order, compared lexicographically
  (a :class:`RankedLoss`).

Notes
-----
``geometric`` follows ARX's source (``ILMultiDimensionalGeometricMean.getAggregate``:
``result *= Math.pow((values[i] + 1d) * weights[i], 1d / m)``), in which the weight multiplies
``v_j + 1``. ``docs/concepts/metrics-reference.md`` writes ``(v_j * w_j + 1)``; the two agree whenever
all weights are equal (the default) and differ otherwise.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from enum import Enum

import numpy as np
import numpy.typing as npt

from anonlab._validation import did_you_mean
from anonlab.exceptions import ParameterError

__all__ = ["Aggregate", "RankedLoss", "aggregate", "parse_aggregate"]


class Aggregate(str, Enum):
    """The aggregate functions of ARX's multi-dimensional metrics.

    Examples
    --------
    >>> parse_aggregate("Geometric")
    <Aggregate.GEOMETRIC: 'geometric'>
    >>> Aggregate.SUM.value
    'sum'
    """

    SUM = "sum"
    ARITHMETIC = "arithmetic"
    GEOMETRIC = "geometric"
    MAX = "max"
    RANK = "rank"


_ALIASES = {
    "sum": Aggregate.SUM,
    "arithmetic": Aggregate.ARITHMETIC,
    "arithmetic_mean": Aggregate.ARITHMETIC,
    "mean": Aggregate.ARITHMETIC,
    "geometric": Aggregate.GEOMETRIC,
    "geometric_mean": Aggregate.GEOMETRIC,
    "max": Aggregate.MAX,
    "maximum": Aggregate.MAX,
    "rank": Aggregate.RANK,
}


def parse_aggregate(value: object, owner: str = "the metric") -> Aggregate:
    """Return the :class:`Aggregate` named by ``value`` (case-insensitive, ARX names too).

    Raises
    ------
    ParameterError
        If ``value`` names no aggregate function; the message lists the valid names.

    Examples
    --------
    >>> parse_aggregate("rank")
    <Aggregate.RANK: 'rank'>
    >>> parse_aggregate("median")
    Traceback (most recent call last):
    ...
    anonlab.exceptions.ParameterError: The 'aggregate' parameter of the metric must be one of sum, arithmetic, geometric, max, rank. Got 'median' instead.
    """
    if isinstance(value, Aggregate):
        return value
    if isinstance(value, str):
        hit = _ALIASES.get(value.strip().lower().replace("-", "_").replace(" ", "_"))
        if hit is not None:
            return hit
    names = [a.value for a in Aggregate]
    hint = did_you_mean(str(value), names) if isinstance(value, str) else ""
    raise ParameterError(
        f"The 'aggregate' parameter of {owner} must be one of {', '.join(names)}. "
        f"Got {value!r} instead.{hint}"
    )


class RankedLoss(float):
    """The loss of the RANK aggregate: a float that orders lexicographically.

    Its float value is the leading (largest) weighted value, so code that only needs a
    number sees ``max_j v_j w_j``; comparisons between two ``RankedLoss`` use the whole
    descending vector, like ARX's ``ILMultiDimensionalRank.compareTo``.

    Parameters
    ----------
    ranks : sequence of float
        The weighted per-attribute values, in any order (they are sorted, descending).

    Attributes
    ----------
    ranks : tuple of float
        The values, descending.

    Examples
    --------
    >>> a, b = RankedLoss([0.5, 0.1]), RankedLoss([0.5, 0.2])
    >>> float(a), a < b
    (0.5, True)
    """

    ranks: tuple[float, ...]

    def __new__(cls, ranks: Sequence[float]) -> RankedLoss:
        """Create the loss from the per-attribute weighted values."""
        ordered = tuple(sorted((float(r) for r in ranks), reverse=True))
        obj = super().__new__(cls, ordered[0] if ordered else 0.0)
        obj.ranks = ordered
        return obj

    def _key(self, other: object) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
        if isinstance(other, RankedLoss):
            return self.ranks, other.ranks
        return None

    def __lt__(self, other: float) -> bool:
        keys = self._key(other)
        return keys[0] < keys[1] if keys is not None else float(self) < other

    def __le__(self, other: float) -> bool:
        keys = self._key(other)
        return keys[0] <= keys[1] if keys is not None else float(self) <= other

    def __gt__(self, other: float) -> bool:
        keys = self._key(other)
        return keys[0] > keys[1] if keys is not None else float(self) > other

    def __ge__(self, other: float) -> bool:
        keys = self._key(other)
        return keys[0] >= keys[1] if keys is not None else float(self) >= other

    def __eq__(self, other: object) -> bool:
        keys = self._key(other)
        if keys is not None:
            return keys[0] == keys[1]
        return float(self) == other

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self.ranks)

    def __repr__(self) -> str:
        return "[" + ", ".join(repr(r) for r in self.ranks) + "]"

    __str__ = __repr__

    def __reduce__(self) -> tuple[type[RankedLoss], tuple[tuple[float, ...]]]:
        return (RankedLoss, (self.ranks,))


def aggregate(values: npt.ArrayLike, weights: npt.ArrayLike, function: Aggregate | str) -> float:
    """Aggregate per-attribute values with normalised weights (see the module docstring).

    Parameters
    ----------
    values : array_like of float
        ``v_j`` per quasi-identifier.
    weights : array_like of float
        ``w_j`` per quasi-identifier (already normalised by the largest weight).
    function : Aggregate or str
        The aggregate function.

    Returns
    -------
    float
        The aggregate; a :class:`RankedLoss` for ``rank``. The sums run in attribute order,
        like ARX's loops, so the results agree with ARX's doubles.

    Examples
    --------
    >>> aggregate([0.5, 0.25], [1.0, 1.0], "sum"), aggregate([0.5, 0.25], [1.0, 1.0], "max")
    (0.75, 0.5)
    """
    fn = parse_aggregate(function)
    v = [float(x) for x in np.asarray(values, dtype=np.float64).reshape(-1)]
    w = [float(x) for x in np.asarray(weights, dtype=np.float64).reshape(-1)]
    m = len(v)
    if fn is Aggregate.RANK:
        return RankedLoss([vi * wi for vi, wi in zip(v, w)])
    if m == 0:
        return 0.0
    if fn is Aggregate.SUM:
        total = 0.0
        for vi, wi in zip(v, w):
            total += vi * wi
        return sys.float_info.max if math.isinf(total) or math.isnan(total) else total
    if fn is Aggregate.ARITHMETIC:
        total = 0.0
        for vi, wi in zip(v, w):
            total += (vi / float(m)) * wi
        return total
    if fn is Aggregate.GEOMETRIC:
        prod = 1.0
        for vi, wi in zip(v, w):
            prod *= math.pow((vi + 1.0) * wi, 1.0 / float(m))
        return prod - 1.0
    return max(vi * wi for vi, wi in zip(v, w))
