"""l-diversity: distinct, entropy and recursive (c,l) (Machanavajjhala et al.; ARX's checks)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._validation import Param
from anonlab.data.stats import ClassStats
from anonlab.exceptions import ParameterError
from anonlab.models._common import (
    ATTRIBUTE,
    Counts,
    SensitiveModel,
    distinct_in_table,
    max_or_zero,
    min_or_zero,
)
from anonlab.models.base import ClassRule, RuleArray, RuleParams

__all__ = [
    "DistinctLDiversity",
    "EntropyLDiversity",
    "RecursiveCLDiversity",
    "distinct_l_rule",
    "recursive_cl_rule",
]

#: Absolute tolerance (in nats) of the entropy comparison: a class with exactly ``l``
#: equally frequent values has entropy ``ln l`` but rounding can put it a few ulps below.
ENTROPY_TOLERANCE = 1e-10


def _distinct(c: Counts) -> npt.NDArray[np.int64]:
    present = (c.f > 0).astype(np.int64)
    # einsum rather than count_nonzero: benchmarks/README.md, "Measurements behind choices ..."
    return np.asarray(np.einsum("ij->i", present), dtype=np.int64)


def _entropy(c: Counts) -> npt.NDArray[np.float64]:
    """``ln n - sum f ln f / n`` per class (the Shannon entropy in nats, ``0 ln 0 = 0``)."""
    f = c.f.astype(np.float64)
    n = np.maximum(c.n, 1).astype(np.float64)
    flogf = np.where(f > 0, f * np.log(np.where(f > 0, f, 1.0)), 0.0).sum(axis=1)
    return np.asarray(np.log(n) - flogf / n, dtype=np.float64)


def distinct_l_rule(
    size: int, counts: RuleArray, table_counts: RuleArray, n_total: int, params: RuleParams
) -> bool:
    """:meth:`DistinctLDiversity.class_ok` of one class (a
    :class:`~anonlab.models.base.ClassRule`): at least ``l`` values have a count, with
    ``params = (l,)``."""
    distinct = 0  # a loop rather than numba's np.count_nonzero (benchmarks/README.md)
    for v in range(counts.size):
        if counts[v] > 0:
            distinct += 1
    return distinct >= int(params[0])


def recursive_cl_rule(
    size: int, counts: RuleArray, table_counts: RuleArray, n_total: int, params: RuleParams
) -> bool:
    """:meth:`RecursiveCLDiversity.class_ok` of one class (a
    :class:`~anonlab.models.base.ClassRule`): at least ``l`` values and
    ``r_1 < c (r_l + ... + r_m)``, the counts sorted descending, with ``params = (c, l)``."""
    c, l = params[0], int(params[1])  # noqa: E741 - the paper's name
    distinct = 0
    for v in range(counts.size):
        if counts[v] > 0:
            distinct += 1
    desc = -np.sort(-counts)
    head = desc[0] if desc.size else 0
    tail = desc[l - 1 :].sum() if l <= desc.size else 0
    return bool(distinct >= l and head < c * tail)


def _too_few_values(model: SensitiveModel, l_needed: int, c: Counts, shown: str) -> None:
    have = distinct_in_table(c)
    if l_needed > have:
        present = [("<null>" if v is None else str(v)) for v in c.values[c.p_count > 0]]
        listed = ", ".join(map(repr, present[:10])) + (", ..." if len(present) > 10 else "")
        raise ParameterError(
            f"The 'l' parameter of {type(model).__name__} ({shown}) is larger than the number "
            f"of distinct values of sensitive attribute {model.attribute!r} in the whole table "
            f"({have}: {listed}); no class can hold {l_needed} distinct values. "
            f"Choose l <= {have}."
        )


class DistinctLDiversity(SensitiveModel):
    """Distinct l-diversity: every class holds at least ``l`` distinct sensitive values.

    A class ``E`` passes iff ``|{s : f_E(s) > 0}| >= l`` (ARX ``DistinctLDiversity``).
    A null sensitive value counts as a value of its own.

    Parameters
    ----------
    attribute : str
        The sensitive attribute.
    l : int
        Distinct values needed per class, ``l >= 1``.

    Raises
    ------
    ParameterError
        If ``l`` is not an int >= 1 or ``attribute`` is not a column name.

    Notes
    -----
    *Monotonicity.* Under generalization: yes (a union keeps every value of its parts).
    Under suppression: yes (a generalized class containing a passing class passes).

    *Value.* :meth:`value` is the smallest number of distinct values in a class: the model
    holds iff ``l <= value``. It equals pycanon's ``l_diversity``.

    *Feasibility.* :meth:`check_feasible` raises when ``l`` exceeds the number of distinct
    values in the whole table: neither generalization nor suppression can add values.

    References
    ----------
    .. [1] A. Machanavajjhala, J. Gehrke, D. Kifer, M. Venkitasubramaniam, "l-diversity:
       privacy beyond k-anonymity", ICDE 2006 / TKDD 2007, Section 4.1 (distinct
       l-diversity as the simplest instantiation).
    .. [2] ARX ``criteria/DistinctLDiversity`` (docs/concepts/metrics-reference.md, section 2).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351", "4351"],
    ...                                "disease": ["flu", "hiv", "flu", "flu"]})
    >>> stats = open_engine(t).class_stats(["zip"], sensitive=["disease"])
    >>> model = DistinctLDiversity("disease", 2)
    >>> model.class_ok(stats).tolist(), model.value(stats)
    ([True, False], 1)
    """

    name = "distinct_l_diversity"
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "attribute": ATTRIBUTE,
        "l": Param(int, low=1),
    }
    monotonic_generalization = True
    union_safe = "a union holds every sensitive value of its parts"
    monotonic_suppression = True

    def __init__(self, attribute: str, l: int) -> None:  # noqa: E741 - the paper's name
        self.attribute: str = self._checked("attribute", attribute)
        self.l: int = self._checked("l", l)

    @property
    def min_class_size(self) -> int:
        """``l``."""
        return self.l

    def class_ok(self, stats: ClassStats) -> npt.NDArray[np.bool_]:
        """Return, per class, whether it holds at least ``l`` distinct values."""
        return np.asarray(_distinct(self.counts(stats)) >= self.l, dtype=bool)

    def class_rule(self) -> ClassRule | None:
        """:func:`distinct_l_rule` with ``(l,)`` (None for a subclass: it may judge
        otherwise)."""
        own = type(self) is DistinctLDiversity
        return ClassRule(distinct_l_rule, (float(self.l),)) if own else None

    def class_values(self, stats: ClassStats) -> npt.NDArray[np.int64]:
        """Number of distinct sensitive values per class."""
        return _distinct(self.counts(stats))

    def value(self, stats: ClassStats) -> int:
        """Return the smallest number of distinct values in a class (0 for no class)."""
        return int(min_or_zero(self.class_values(stats)))

    def check_feasible(self, stats: ClassStats) -> None:
        """Raise ParameterError if ``l`` exceeds the distinct values of the whole table."""
        _too_few_values(self, self.l, self.counts(stats), f"l={self.l}")

    def params(self) -> dict[str, Any]:
        """``{"attribute": ..., "l": ...}``."""
        return {"attribute": self.attribute, "l": self.l}


class EntropyLDiversity(SensitiveModel):
    """Entropy l-diversity (Shannon): the entropy of every class is at least ``ln l``.

    A class ``E`` of ``n_E`` rows with value counts ``f(s)`` passes iff it holds at least
    ``ceil(l)`` distinct values and

    .. math:: H(E) = -\\sum_s \\frac{f(s)}{n_E} \\ln \\frac{f(s)}{n_E} \\ge \\ln l,

    equality allowed. This is ARX's check ``sum_s f(s) ln f(s) <= n_E (ln n_E - ln l)``
    rearranged (both sides use the natural log, so the base is irrelevant). A tolerance of
    1e-10 nats absorbs rounding so that a class of exactly ``l`` equally frequent values
    passes.

    Parameters
    ----------
    attribute : str
        The sensitive attribute.
    l : float
        ``l >= 1`` (need not be an integer).

    Raises
    ------
    ParameterError
        If ``l`` is not a finite number >= 1.

    Notes
    -----
    *Monotonicity.* Under generalization: yes (entropy is concave: the entropy of a union is
    at least the weighted mean of its parts' entropies, and distinct values only grow).
    Under suppression: no (a passing class merged with a failing one may fail, so more rows
    can need suppression; ARX declares it non-monotonic).

    *Value.* :meth:`value` is ``min_E exp(H(E))``: the model holds iff ``l <= value`` (the
    ``ceil(l)`` distinct values are then implied, since ``exp(H) <=`` distinct values).
    pycanon's ``entropy_l_diversity`` returns ``int(min exp(H))``, a truncation, computed
    as ``e ** H``, which can land just below an integer (``1.9999999999999996`` for two
    equally frequent values gives 1); compare with ``floor``.

    References
    ----------
    .. [1] A. Machanavajjhala et al., "l-diversity: privacy beyond k-anonymity", ICDE 2006,
       Definition 4.1 (entropy l-diversity).
    .. [2] ARX ``criteria/EntropyLDiversity`` with the SHANNON estimator (anonlab
       docs/concepts/metrics-reference.md, section 2).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351", "4351", "4351"],
    ...                                "disease": ["flu", "hiv", "flu", "flu", "hiv"]})
    >>> stats = open_engine(t).class_stats(["zip"], sensitive=["disease"])
    >>> model = EntropyLDiversity("disease", 2)
    >>> model.class_ok(stats).tolist(), round(model.value(stats), 4)
    ([True, False], 1.8899)
    """

    name = "entropy_l_diversity"
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "attribute": ATTRIBUTE,
        "l": Param(float, low=1, finite=True),
    }
    monotonic_generalization = True
    union_safe = "entropy is concave in the class distribution"
    monotonic_suppression = False

    def __init__(self, attribute: str, l: float) -> None:  # noqa: E741
        self.attribute: str = self._checked("attribute", attribute)
        self.l: float = self._checked("l", l)

    @property
    def min_class_size(self) -> int:
        """``ceil(l)``."""
        return math.ceil(self.l)

    def class_entropy(self, stats: ClassStats) -> npt.NDArray[np.float64]:
        """Shannon entropy (natural log) of the sensitive values of each class."""
        return _entropy(self.counts(stats))

    def class_ok(self, stats: ClassStats) -> npt.NDArray[np.bool_]:
        """Return, per class, ``distinct >= ceil(l)`` and ``H >= ln l`` (equality allowed)."""
        c = self.counts(stats)
        h = _entropy(c)
        ok = (_distinct(c) >= math.ceil(self.l)) & (h >= math.log(self.l) - ENTROPY_TOLERANCE)
        return np.asarray(ok, dtype=bool)

    def class_values(self, stats: ClassStats) -> npt.NDArray[np.float64]:
        """``exp(H(E))`` per class: the largest l each class satisfies.

        ``exp(H)`` is an integer ``l`` exactly when the class holds ``l`` equally frequent
        values; rounding in ``ln n - sum f ln f / n`` lands a few ulps off (0.9999999999999991
        for a class of one value), so values within 1e-9 of an integer are that integer.
        """
        v = np.exp(np.maximum(self.class_entropy(stats), 0.0))  # entropy is never negative
        r = np.rint(v)
        return np.asarray(np.where(np.abs(v - r) <= 1e-9 * v, r, v), dtype=np.float64)

    def value(self, stats: ClassStats) -> float:
        """Return ``min_E exp(H(E))`` (0 for no class)."""
        return min_or_zero(self.class_values(stats))

    def check_feasible(self, stats: ClassStats) -> None:
        """Raise ParameterError if ``ceil(l)`` exceeds the distinct values of the table."""
        _too_few_values(self, math.ceil(self.l), self.counts(stats), f"l={self.l:g}")

    def params(self) -> dict[str, Any]:
        """``{"attribute": ..., "l": ...}``."""
        return {"attribute": self.attribute, "l": self.l}


class RecursiveCLDiversity(SensitiveModel):
    """Recursive (c,l)-diversity: the most frequent value is not too frequent.

    Let ``r_1 >= r_2 >= ... >= r_m`` be the value counts of a class, sorted in *descending*
    order. The class passes iff it holds at least ``l`` distinct values and

    .. math:: r_1 < c \\, (r_l + r_{l+1} + \\dots + r_m),

    a **strict** inequality (ARX ``RecursiveCLDiversity``: with counts ascending as
    ``fr[0..m-1]``, ``fr[m-1] < c * sum(fr[0..m-l])``).

    Parameters
    ----------
    attribute : str
        The sensitive attribute.
    c : float
        ``c > 0``.
    l : int
        ``l >= 1``.

    Raises
    ------
    ParameterError
        If ``c`` is not a number > 0 or ``l`` not an int >= 1.

    Notes
    -----
    *Monotonicity.* Under generalization: yes (Machanavajjhala et al. show every
    instantiation of l-diversity in the paper is monotonic when classes are merged).
    Under suppression: no (ARX declares it non-monotonic).

    *Value.* :meth:`value` is ``c* = max_E r_1 / (r_l + ... + r_m)`` for the model's ``l``
    (``inf`` if a class has fewer than ``l`` distinct values). Because the inequality is
    strict, the model holds iff ``c > c*``; the smallest integer c that holds is
    ``floor(c*) + 1``.

    pycanon's ``recursive_c_l_diversity`` differs on purpose: it takes ``l`` from its
    distinct l-diversity, sorts the counts *ascending* and uses ``r_ec[0]`` (the least
    frequent value) as ``r_1`` and ``sum(r_ec[l-1:])`` (the most frequent ones) as the tail,
    returning ``floor(ratio + 1)``. That is not the definition; anonlab sorts descending.

    References
    ----------
    .. [1] A. Machanavajjhala et al., "l-diversity: privacy beyond k-anonymity", ICDE 2006,
       Definition 4.3 (recursive (c,l)-diversity).
    .. [2] ARX ``criteria/RecursiveCLDiversity`` (docs/concepts/metrics-reference.md,
       section 2).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["4350"] * 3 + ["4351"] * 3,
    ...                                "disease": ["flu", "hiv", "cold", "flu", "flu", "hiv"]})
    >>> stats = open_engine(t).class_stats(["zip"], sensitive=["disease"])
    >>> RecursiveCLDiversity("disease", c=1.5, l=2).class_ok(stats).tolist()
    [True, False]
    """

    name = "recursive_cl_diversity"
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "attribute": ATTRIBUTE,
        "c": Param(float, low=0, low_open=True, finite=True),
        "l": Param(int, low=1),
    }
    monotonic_generalization = True
    union_safe = "the largest count is subadditive, the tail superadditive"
    monotonic_suppression = False

    def __init__(self, attribute: str, c: float, l: int) -> None:  # noqa: E741
        self.attribute: str = self._checked("attribute", attribute)
        self.c: float = self._checked("c", c)
        self.l: int = self._checked("l", l)

    @property
    def min_class_size(self) -> int:
        """``l``."""
        return self.l

    def _head_tail(
        self, stats: ClassStats
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        c = self.counts(stats)
        desc = -np.sort(-c.f, axis=1)  # each row sorted descending
        n_values = desc.shape[1]
        head = desc[:, 0] if n_values else np.zeros(desc.shape[0], dtype=np.int64)
        tail = desc[:, self.l - 1 :].sum(axis=1) if self.l <= n_values else np.zeros_like(head)
        return head, tail, _distinct(c)

    def class_ok(self, stats: ClassStats) -> npt.NDArray[np.bool_]:
        """Return, per class, ``distinct >= l`` and ``r_1 < c (r_l + ... + r_m)``."""
        head, tail, distinct = self._head_tail(stats)
        return np.asarray((distinct >= self.l) & (head < self.c * tail), dtype=bool)

    def class_rule(self) -> ClassRule | None:
        """:func:`recursive_cl_rule` with ``(c, l)`` (None for a subclass: it may judge
        otherwise)."""
        own = type(self) is RecursiveCLDiversity
        return ClassRule(recursive_cl_rule, (self.c, float(self.l))) if own else None

    def class_values(self, stats: ClassStats) -> npt.NDArray[np.float64]:
        """``r_1 / (r_l + ... + r_m)`` per class (``inf`` with fewer than ``l`` values)."""
        head, tail, _ = self._head_tail(stats)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(tail > 0, head / np.maximum(tail, 1), np.inf)
        return np.asarray(ratio, dtype=np.float64)

    def value(self, stats: ClassStats) -> float:
        """Return ``c* = max_E r_1 / (r_l + ... + r_m)``; the model holds iff ``c > c*``."""
        return max_or_zero(self.class_values(stats))

    def check_feasible(self, stats: ClassStats) -> None:
        """Raise ParameterError if ``l`` exceeds the distinct values of the whole table."""
        _too_few_values(self, self.l, self.counts(stats), f"l={self.l}")

    def params(self) -> dict[str, Any]:
        """``{"attribute": ..., "c": ..., "l": ...}``."""
        return {"attribute": self.attribute, "c": self.c, "l": self.l}
