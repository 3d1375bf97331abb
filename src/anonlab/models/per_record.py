"""The per-record model interface: each record judged against a parameter of its own.

Most privacy models judge equivalence classes (:meth:`PrivacyModel.class_ok`). A per-record
model gives every record a value (its probability of privacy leakage, say) and every record
its own bound on that value (a personal limit, one per row, held by the
:class:`~anonlab.release.problem.Problem` as ``record_parameters[model.record_parameter]``).
The release layer and ``anonlab check`` judge such a model record by record on the table they
are given (:meth:`RecordModel.judge_records`); a class fails when one of its records does.
Searches that only see class statistics use :meth:`PrivacyModel.class_ok`, which a
per-record model implements as a bound that never accepts a class the per-record judgement
rejects.

Exact comparisons
-----------------
A record's value is a fraction of whole numbers (Pleak: a sum of ``count / leaves`` terms over
the size of the record's class) and is held as such (:class:`RecordFractions`). A bound is read
as the number it was written as (:func:`decimal_fraction`: ``0.333333333`` is
333333333/1000000000, a little less than a third; ``0.1`` is one tenth, not the binary float
nearest to it; a computed float such as ``1/3`` is one third). A record is within its bound
iff its fraction is at most that number, exactly: no slack accepts a record over its bound,
and a record exactly at its bound passes. The floats reported are the fractions correctly
rounded, so a bound met exactly is reported as the bound.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from anonlab.data.table import EncodedColumn
from anonlab.models.base import PrivacyModel

__all__ = ["RecordFractions", "RecordModel", "RecordVerdict", "decimal_fraction"]

#: Whole numbers below this are exact in a float (and their quotient correctly rounded).
_EXACT = 2.0**53


#: Significant digits a decimal may have and still name its float alone: every decimal of
#: up to 15 significant digits reads back from its float (IEEE 754 double precision).
_WRITTEN_DIGITS = 15


def decimal_fraction(value: float) -> Fraction:
    """The bound ``value`` as the number it was written as, a fraction.

    * A float whose shortest decimal (``repr``) has at most 15 significant digits is that
      decimal: ``0.1`` is one tenth, ``0.333333333`` is 333333333/1000000000 (a little less
      than a third), not the binary floats nearest to them.
    * A float that needs 16 or 17 digits was computed, not typed (``1/3`` prints as
      ``0.3333333333333333``): it is the simplest fraction that rounds to it (``1/3``).

    Examples
    --------
    >>> decimal_fraction(0.1), decimal_fraction(0.333333333)
    (Fraction(1, 10), Fraction(333333333, 1000000000))
    >>> decimal_fraction(1 / 3), decimal_fraction(1 / 7)
    (Fraction(1, 3), Fraction(1, 7))
    """
    x = float(value)
    text = repr(x)
    written = Fraction(text)
    mantissa = text.lstrip("-").split("e")[0].replace(".", "").strip("0")
    if len(mantissa) <= _WRITTEN_DIGITS or not math.isfinite(x) or x == 0.0:
        return written
    exact = Fraction(x)
    below = (exact + Fraction(math.nextafter(x, -math.inf))) / 2
    above = (exact + Fraction(math.nextafter(x, math.inf))) / 2
    return _simplest_between(below, above) if x > 0 else -_simplest_between(-above, -below)


def _simplest_between(low: Fraction, high: Fraction) -> Fraction:
    """The fraction with the smallest denominator strictly between ``0 <= low < high``
    (continued fractions)."""
    whole = math.floor(low)
    if whole + 1 < high:
        return Fraction(whole + 1)
    # both ends in [whole, whole + 1]: the simplest 1 / y with y between the reciprocals
    rest_low, rest_high = low - whole, high - whole
    if rest_low == 0:  # (whole, high): 1 / y with y above 1 / (high - whole)
        return whole + 1 / Fraction(math.floor(1 / rest_high) + 1)
    return whole + 1 / _simplest_between(1 / rest_high, 1 / rest_low)


@dataclass(frozen=True)
class RecordFractions:
    """Per-record values held exactly: ``(sum_j counts[:, j] / leaves[branch, j]) / sizes``.

    Pleak (Song et al. 2015, Definition 8) is such a value: per level of the sensitive tree, the
    records of the class whose released value covers the record's own value (``counts``),
    each adding ``1 / Nleaf`` of the node of the record's branch at that level (a row of
    ``leaves``: one per value of the attribute), over the class's size.

    Attributes
    ----------
    counts : ndarray of int64, shape (records, terms)
    leaves : ndarray of int64, shape (branches, terms)
        Positive.
    branch : ndarray of int64, shape (records,)
        The row of ``leaves`` of each record.
    sizes : ndarray of int64, shape (records,)
        Positive.

    Examples
    --------
    >>> import numpy as np
    >>> third = RecordFractions(np.array([[1, 0]]), np.array([[1, 2]]), np.array([0]),
    ...                         np.array([3]))
    >>> bool(third.values()[0] == 1 / 3), bool(third.within(np.array([0.333333333]))[0])
    (True, False)
    >>> bool(third.within(np.array([1 / 3]))[0])  # a third, met exactly
    True
    """

    counts: npt.NDArray[np.int64]
    leaves: npt.NDArray[np.int64]
    branch: npt.NDArray[np.int64]
    sizes: npt.NDArray[np.int64]

    @classmethod
    def shares(cls, counts: npt.ArrayLike, sizes: npt.ArrayLike) -> RecordFractions:
        """``counts / sizes`` (one term of one leaf)."""
        c = np.asarray(counts, dtype=np.int64).reshape(-1, 1)
        one = np.ones((1, 1), dtype=np.int64)
        return cls(c, one, np.zeros(c.shape[0], np.int64), np.asarray(sizes, np.int64).reshape(-1))

    @property
    def n(self) -> int:
        """Records."""
        return int(self.sizes.size)

    def _commons(self) -> list[int]:
        """Per branch, the least common multiple of its leaves (a loop over the branches)."""
        return [math.lcm(*row) if row else 1 for row in self.leaves.tolist()]

    def exact(
        self, rows: npt.NDArray[np.integer] | None = None
    ) -> tuple[npt.NDArray[np.object_], npt.NDArray[np.object_]]:
        """Numerators and denominators of ``rows`` (every record by default) as Python ints
        (object arrays: no overflow)."""
        pick = slice(None) if rows is None else np.asarray(rows)
        commons = np.array(self._commons(), dtype=object)
        factors = np.empty(self.leaves.shape, dtype=object)
        for j in range(self.leaves.shape[1]):
            factors[:, j] = commons // self.leaves[:, j].astype(object)
        branch = self.branch[pick]
        counts = self.counts[pick].astype(object)
        num = np.zeros(branch.size, dtype=object)
        for j in range(counts.shape[1]):
            num = num + counts[:, j] * factors[branch, j]
        return num, commons[branch] * self.sizes[pick].astype(object)

    def _small(self) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Which records have a numerator and a denominator below 2^53, and those (int64;
        0 elsewhere)."""
        commons = self._commons()
        fits = np.array([c < _EXACT for c in commons], dtype=bool)
        common = np.array([c if f else 0 for c, f in zip(commons, fits)], dtype=np.int64)
        factors = common[:, None] // self.leaves
        top = np.maximum(self.sizes, self.counts.sum(axis=1)).astype(np.float64)
        small = fits[self.branch] & (common[self.branch].astype(np.float64) * top < _EXACT)
        num = np.where(small, (self.counts * factors[self.branch]).sum(axis=1), 0)
        den = np.where(small, common[self.branch] * self.sizes, 0)
        return small, num.astype(np.int64), den.astype(np.int64)

    def values(self) -> npt.NDArray[np.float64]:
        """Each value correctly rounded to a float (equal fractions give equal floats, and a
        fraction equal to a float's decimal gives that float)."""
        return self._values(*self._small())

    def _values(
        self, small: npt.NDArray[np.bool_], num: npt.NDArray[np.int64], den: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.float64]:
        out = np.empty(self.n, dtype=np.float64)
        if self.n == 0:
            return out
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:] = num.astype(np.float64) / den.astype(np.float64)  # exact operands
        large = np.flatnonzero(~small)
        if large.size:  # Python ints: int / int is correctly rounded
            big_num, big_den = self.exact(large)
            out[large] = (big_num / big_den).astype(np.float64)
        return out

    def within(self, bounds: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """Per record, whether its value is at most its bound read as written
        (:func:`decimal_fraction`), exactly.

        The floats decide where they differ (rounding keeps the order); where a value's
        float equals its bound's, the fractions are compared as whole numbers (once per
        distinct numerator, denominator and bound). A NaN bound holds nothing.
        """
        return self.judge(bounds)[1]

    def judge(self, bounds: npt.ArrayLike) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
        """:meth:`values` and :meth:`within` at once."""
        limit = np.broadcast_to(np.asarray(bounds, dtype=np.float64), (self.n,))
        small, num, den = self._small()
        value = self._values(small, num, den)
        ok: npt.NDArray[np.bool_] = value < limit
        tie = np.flatnonzero(value == limit)
        if tie.size == 0:
            return value, ok
        some = tie[small[tie]]
        if some.size:  # once per distinct (numerator, denominator, bound): a loop over few
            keys = np.stack([num[some], den[some], np.arange(some.size)], axis=1)
            keys[:, 2] = np.unique(limit[some], return_inverse=True)[1].reshape(-1)
            uniq, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
            bound = limit[some][first]
            verdict = np.array(
                [Fraction(int(a), int(b)) <= decimal_fraction(v)
                 for (a, b, _), v in zip(uniq.tolist(), bound.tolist())],
                dtype=bool,
            )  # fmt: skip
            ok[some] = verdict[inverse.reshape(-1)]
        rest = tie[~small[tie]]
        if rest.size:
            big_num, big_den = self.exact(rest)
            p = np.empty(rest.size, dtype=object)
            q = np.empty(rest.size, dtype=object)
            for v in np.unique(limit[rest]).tolist():  # the distinct bounds
                at = limit[rest] == v
                f = decimal_fraction(v)
                p[at], q[at] = f.numerator, f.denominator
            ok[rest] = (big_num * q <= p * big_den).astype(bool)
        return value, ok


@dataclass(frozen=True)
class RecordVerdict:
    """A per-record model's judgement of a table.

    Attributes
    ----------
    values : ndarray of float
        The model's measure of each record (row order of the table judged).
    parameters : ndarray of float
        Each record's own bound.
    ok : ndarray of bool
        Per record, whether its value is within its bound.
    class_ok : ndarray of bool
        Per class of the table, whether every record in it is within its bound.

    Examples
    --------
    >>> import numpy as np
    >>> from anonlab import EncodedTable, Hierarchy
    >>> from anonlab.models import PersonalizedLeakage
    >>> tree = Hierarchy([["flu", "*"], ["cold", "*"], ["hiv", "*"]])
    >>> d = EncodedTable.from_columns({"disease": ["flu", "cold", "hiv", "hiv"]})["disease"]
    >>> verdict = PersonalizedLeakage("disease", tree).judge_records(
    ...     np.array([0, 0, 1, 1]), d, d, [0.5, 0.5, 0.5, 1.0])
    >>> verdict.values.tolist(), verdict.ok.tolist(), verdict.violating.tolist()
    ([0.5, 0.5, 1.0, 1.0], [True, True, False, True], [2])
    """

    values: npt.NDArray[np.float64]
    parameters: npt.NDArray[np.float64]
    ok: npt.NDArray[np.bool_]
    class_ok: npt.NDArray[np.bool_]

    @property
    def violating(self) -> npt.NDArray[np.int64]:
        """Row positions of the records over their bound."""
        return np.flatnonzero(~self.ok).astype(np.int64)

    @property
    def highest(self) -> float:
        """The highest value (the exact highest, correctly rounded; 0 without records)."""
        return float(self.values.max()) if self.values.size else 0.0

    @property
    def average(self) -> float:
        """The average value (the floats summed exactly, then divided; 0 without records)."""
        n = int(self.values.size)
        return math.fsum(self.values.tolist()) / n if n else 0.0

    def report(self, measure: str) -> dict[str, Any]:
        """What ``anonlab check`` prints: the violating rows, the highest and the average
        value (``highest_<measure>``, ``average_<measure>``).

        Examples
        --------
        >>> import numpy as np
        >>> from anonlab import EncodedTable, Hierarchy
        >>> from anonlab.models import PersonalizedLeakage
        >>> tree = Hierarchy([["flu", "*"], ["cold", "*"], ["hiv", "*"]])
        >>> d = EncodedTable.from_columns({"disease": ["flu", "cold", "hiv", "hiv"]})["disease"]
        >>> verdict = PersonalizedLeakage("disease", tree).judge_records(
        ...     np.array([0, 0, 1, 1]), d, d, [0.5, 0.5, 0.5, 1.0])
        >>> verdict.report("Pleak")
        {'violating_records': [2], 'highest_Pleak': 1.0, 'average_Pleak': 0.75}
        """
        return {
            "violating_records": self.violating.tolist(),
            f"highest_{measure}": self.highest,
            f"average_{measure}": self.average,
        }


class RecordModel(PrivacyModel):
    """A privacy model with a bound per record (see the module docstring).

    Attributes
    ----------
    record_parameter : str
        The key of the per-record bounds in ``Problem.record_parameters``.
    measure : str
        The name of the per-record value in reports (``"pleak"``).
    attribute : str
        The sensitive attribute the model reads.

    Examples
    --------
    >>> from anonlab import Hierarchy
    >>> from anonlab.models import PersonalizedLeakage
    >>> tree = Hierarchy([["flu", "*"], ["hiv", "*"]])
    >>> isinstance(PersonalizedLeakage("disease", tree), RecordModel)
    True
    """

    record_parameter: ClassVar[str] = ""
    measure: ClassVar[str] = "value"
    attribute: str
    union_safe = (
        "the classes whose labels occur in several blocks are judged again merged, record by "
        "record, before anything is written"
    )

    @abstractmethod
    def record_fractions(
        self,
        row_class: npt.NDArray[np.integer],
        original: EncodedColumn,
        released: EncodedColumn,
    ) -> RecordFractions:
        """The model's measure of each record of a release, exactly.

        Parameters
        ----------
        row_class : ndarray of int
            The class of each row (rows with equal released quasi-identifiers).
        original : EncodedColumn
            The sensitive attribute as it was, one value per row.
        released : EncodedColumn
            The sensitive attribute as released (possibly generalized), row-aligned.
        """

    def record_values(
        self,
        row_class: npt.NDArray[np.integer],
        original: EncodedColumn,
        released: EncodedColumn,
    ) -> npt.NDArray[np.float64]:
        """The model's measure of each record of a release, correctly rounded
        (:meth:`record_fractions`)."""
        return self.record_fractions(row_class, original, released).values()

    @abstractmethod
    def bind(self, *, column: str | None, default: float | None) -> Self:
        """The model reading its bounds from ``column`` of the table (a missing cell taking
        ``default``), or ``default`` for every record: what a search that sees only class
        statistics judges with."""

    def validate(self, column: EncodedColumn) -> None:
        """Raise :class:`~anonlab.exceptions.InputError` if the model cannot judge a table
        with this sensitive column (a value it does not know, say). The default accepts."""
        del column

    def judge_records(
        self,
        row_class: npt.NDArray[np.integer],
        original: EncodedColumn,
        released: EncodedColumn,
        parameters: npt.ArrayLike,
    ) -> RecordVerdict:
        """Judge every record of a release against its own bound.

        Parameters
        ----------
        row_class : ndarray of int
            The class of each row.
        original, released : EncodedColumn
            The sensitive attribute before and after the release (row-aligned).
        parameters : array_like of float
            Each row's bound, read as a decimal (:func:`decimal_fraction`).

        Returns
        -------
        RecordVerdict
            Each record within its bound exactly (:meth:`RecordFractions.within`).
        """
        classes = np.asarray(row_class, dtype=np.int64)
        bounds = np.asarray(parameters, dtype=np.float64)
        values, ok = self.record_fractions(classes, original, released).judge(bounds)
        n_classes = int(classes.max()) + 1 if classes.size else 0
        failing = np.bincount(classes, weights=(~ok).astype(np.float64), minlength=n_classes)
        return RecordVerdict(values, bounds, ok, failing == 0)
