"""Helpers shared by the privacy models: parameter checks and sensitive-value counts."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from anonlab._validation import Param
from anonlab.data.stats import ClassStats, SensitiveHistogram
from anonlab.exceptions import InputError
from anonlab.models.base import PrivacyModel

__all__ = [
    "ATTRIBUTE",
    "Counts",
    "SensitiveModel",
    "ceil_tolerant",
    "distinct_in_table",
]

#: The constraint of a model's sensitive ``attribute`` parameter.
ATTRIBUTE = Param(str, empty=False, text="the name of a sensitive column (str)")


def ceil_tolerant(x: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """``ceil(x)``, treating values within 1e-9 (relative) of an integer as that integer.

    ``0.1 * 30`` is ``3.0000000000000004`` in binary floating point; the user meant 3.
    """
    r = np.rint(x)
    near = np.abs(x - r) <= 1e-9 * np.maximum(1.0, np.abs(x))
    return np.where(near, r, np.ceil(x)).astype(np.int64)


@dataclass(frozen=True)
class Counts:
    """Per-class counts of one sensitive attribute, as exact integer-valued arrays.

    The counts are read sparsely (:attr:`rows`, :attr:`indices`, :attr:`data`: one entry per
    non-zero count) or densely (:attr:`f`, made on first use; it raises
    :class:`~anonlab.exceptions.InputError` when it would not fit the memory budget).

    Attributes
    ----------
    values : ndarray of object
        The distinct values of the column (a null as ``None``).
    hist : SensitiveHistogram
        The counts of each class.
    p_count : ndarray of int64, shape (n_values,)
        Count of each value in the whole table (column sums of ``f``).
    n_total : int
        Rows in the whole table.
    attribute, model : str
        The sensitive attribute and the model reading the counts (named in errors).
    """

    values: npt.NDArray[np.object_]
    hist: SensitiveHistogram
    p_count: npt.NDArray[np.int64]
    n_total: int
    attribute: str = ""
    model: str = ""

    @cached_property
    def f(self) -> npt.NDArray[np.int64]:
        """Dense counts, shape (n_classes, n_values): ``f[c, v]`` rows of class ``c`` with
        value ``v``.

        Raises
        ------
        InputError
            If they would not fit the memory budget (see
            :attr:`~anonlab.data.stats.SensitiveHistogram.counts`).
        """
        try:
            return self.hist.counts
        except InputError as exc:
            raise InputError(
                f"Model {self.model!r} cannot judge sensitive attribute {self.attribute!r}. {exc}"
            ) from None

    @cached_property
    def n(self) -> npt.NDArray[np.int64]:
        """Class sizes: the row sums of ``f`` (summed on first use: the whole table's
        checks, such as :meth:`PrivacyModel.check_feasible`, read only ``p_count``)."""
        return self.hist.class_totals()

    @property
    def rows(self) -> npt.NDArray[np.int64]:
        """The class of each non-zero count (non-decreasing)."""
        return self.hist.rows

    @property
    def indices(self) -> npt.NDArray[np.int64]:
        """The value of each non-zero count."""
        return self.hist.indices

    @property
    def data(self) -> npt.NDArray[np.int64]:
        """The non-zero counts."""
        return self.hist.data

    @property
    def q(self) -> npt.NDArray[np.float64]:
        """Relative frequencies ``f / n`` per class (0 for an empty class)."""
        n = np.maximum(self.n, 1).astype(np.float64)
        return np.asarray(self.f / n[:, None], dtype=np.float64)

    def gain_parts(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Numerator and denominator of ``q/p``: ``f * N`` and ``p_count * n`` (exact)."""
        num = self.f.astype(np.float64) * float(self.n_total)
        den = self.p_count.astype(np.float64)[None, :] * self.n.astype(np.float64)[:, None]
        return num, den


def distinct_in_table(counts: Counts) -> int:
    """Number of distinct values of the attribute present in the whole table."""
    return int(np.count_nonzero(counts.p_count))


#: Why a model that compares each class with the whole table's distribution does not survive
#: a union of verified blocks (:attr:`PrivacyModel.union_unsafe`).
GLOBAL_REFERENCE = (
    "it compares each class with the whole table's distribution, which a block does not see"
)


class SensitiveModel(PrivacyModel):
    """A model about one sensitive attribute (l-diversity, t-closeness, beta-likeness, ...).

    Subclasses set ``self.attribute`` in ``__init__``.
    """

    attribute: str

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        """The sensitive attribute, as a one-element tuple."""
        return (self.attribute,)

    def counts(self, stats: ClassStats, attribute: str | None = None) -> Counts:
        """Return the counts of ``attribute`` (default: the model's) in ``stats``.

        Raises
        ------
        InputError
            If ``stats`` were computed without that sensitive attribute.
        """
        attr = self.attribute if attribute is None else attribute
        return counts_of(stats, attr, self.name)


def counts_of(stats: ClassStats, attribute: str, model: str) -> Counts:
    """Return the :class:`Counts` of ``attribute`` in ``stats`` (see SensitiveModel.counts)."""
    hist = stats.sensitive.get(attribute)
    if hist is None:
        have = ", ".join(map(repr, stats.sensitive)) or "none"
        raise InputError(
            f"The class statistics have no counts of sensitive attribute {attribute!r}, "
            f"which model {model!r} needs; compute them with sensitive=[{attribute!r}] "
            f"(they have: {have})."
        )
    p_count = hist.value_totals()
    return Counts(
        values=hist.values,
        hist=hist,
        p_count=p_count,
        n_total=int(p_count.sum()),
        attribute=attribute,
        model=model,
    )


def max_or_zero(x: npt.NDArray[np.float64]) -> float:
    """``max(x)``, or 0.0 for an empty array."""
    return float(x.max()) if x.size else 0.0


def min_or_zero(x: npt.NDArray[np.float64] | npt.NDArray[np.int64]) -> float:
    """``min(x)``, or 0.0 for an empty array."""
    return float(x.min()) if x.size else 0.0
