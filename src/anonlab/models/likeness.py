"""beta-likeness (basic and enhanced) and delta-disclosure privacy: relative-gain models."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._validation import Param
from anonlab.data.stats import ClassStats
from anonlab.models._common import (
    ATTRIBUTE,
    GLOBAL_REFERENCE,
    Counts,
    SensitiveModel,
    max_or_zero,
)

__all__ = ["BasicBetaLikeness", "EnhancedBetaLikeness", "DeltaDisclosure"]


def _gain(c: Counts) -> npt.NDArray[np.float64]:
    """``(q - p) / p`` per class and value, ``-inf`` where the value is absent from the class.

    Computed as ``(f N - p_count n) / (p_count n)`` from exact integer-valued parts.
    """
    num, den = c.gain_parts()
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = (num - den) / den
    return np.asarray(np.where(c.f > 0, gain, -np.inf), dtype=np.float64)


def _row_max(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    if x.shape[1] == 0:
        return np.zeros(x.shape[0], dtype=np.float64)
    return np.asarray(np.max(x, axis=1), dtype=np.float64)


class BasicBetaLikeness(SensitiveModel):
    """Basic beta-likeness: no value gains more than ``beta`` in relative frequency.

    With ``p(s)`` the frequency of value ``s`` in the whole table and ``q(s)`` in class
    ``E``, a class passes iff for every ``s`` in ``E``

    .. math:: \\frac{q(s) - p(s)}{p(s)} \\le \\beta

    (ARX basic ``BetaLikeness``). Values absent from the class (a negative gain) never fail.

    Parameters
    ----------
    attribute : str
        The sensitive attribute.
    beta : float
        ``beta > 0``.

    Raises
    ------
    ParameterError
        If ``beta`` is not a finite number > 0.

    Notes
    -----
    *Monotonicity.* Under generalization: yes (each condition ``q(s) <= (1 + beta) p(s)`` is
    linear in the class distribution, and a merged class's distribution is the weighted
    mean of its parts'). Under suppression: no (ARX declares it non-monotonic).

    *Value.* :meth:`value` is the largest relative gain; the model holds iff
    ``beta >= value``. It equals pycanon's ``basic_beta_likeness``.

    References
    ----------
    .. [1] J. Cao, P. Karras, "Publishing microdata with a robust privacy guarantee",
       PVLDB 5(11), 2012, Definition 2 (basic beta-likeness).
    .. [2] ARX ``criteria/BasicBLikeness`` (docs/concepts/metrics-reference.md, section 2).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["4350"] * 2 + ["4351"] * 2,
    ...                                "disease": ["flu", "hiv", "flu", "flu"]})
    >>> stats = open_engine(t).class_stats(["zip"], sensitive=["disease"])
    >>> model = BasicBetaLikeness("disease", beta=1.0)
    >>> model.class_ok(stats).tolist(), model.value(stats)
    ([True, True], 1.0)
    """

    name = "basic_beta_likeness"
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "attribute": ATTRIBUTE,
        "beta": Param(float, low=0, low_open=True, finite=True),
    }
    monotonic_generalization = True
    monotonic_suppression = False
    union_unsafe = GLOBAL_REFERENCE

    def __init__(self, attribute: str, beta: float) -> None:
        self.attribute: str = self._checked("attribute", attribute)
        self.beta: float = self._checked("beta", beta)

    def class_values(self, stats: ClassStats) -> npt.NDArray[np.float64]:
        """The largest relative gain ``(q - p) / p`` of each class."""
        return _row_max(_gain(self.counts(stats)))

    def class_ok(self, stats: ClassStats) -> npt.NDArray[np.bool_]:
        """Return, per class, whether every gain is at most ``beta``."""
        return np.asarray(self.class_values(stats) <= self.beta, dtype=bool)

    def value(self, stats: ClassStats) -> float:
        """Return the largest relative gain over all classes (0 for no class)."""
        return max_or_zero(self.class_values(stats))

    def params(self) -> dict[str, Any]:
        """``{"attribute": ..., "beta": ...}``."""
        return {"attribute": self.attribute, "beta": self.beta}


class EnhancedBetaLikeness(SensitiveModel):
    """Enhanced beta-likeness: the gain of a value is capped by ``min(beta, -ln p)``.

    A class passes iff for every value ``s`` in it

    .. math:: \\frac{q(s) - p(s)}{p(s)} \\le \\min(\\beta, -\\ln p(s)),

    which protects frequent values more than the basic model (ARX enhanced
    ``BetaLikeness``).

    Parameters
    ----------
    attribute : str
        The sensitive attribute.
    beta : float
        ``beta > 0``.

    Raises
    ------
    ParameterError
        If ``beta`` is not a finite number > 0.

    Notes
    -----
    *Monotonicity.* Under generalization: yes (the bound of each value depends on the table
    only, so the conditions stay linear in the class distribution). Under suppression: no.

    *Value.* :meth:`value` is the largest relative gain when every gain is within its
    ``-ln p`` cap, and ``inf`` otherwise (then no beta satisfies the model); the model holds
    iff ``beta >= value``. pycanon's ``enhanced_beta_likeness`` returns instead
    ``max_s min(max gain, -ln p(s))`` over all values of the table, which is neither the
    achieved beta nor a pass/fail criterion; the two are not compared.

    References
    ----------
    .. [1] J. Cao, P. Karras, "Publishing microdata with a robust privacy guarantee",
       PVLDB 5(11), 2012, Definition 3 (enhanced beta-likeness).
    .. [2] ARX ``criteria/EnhancedBLikeness`` (docs/concepts/metrics-reference.md, section 2).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["4350"] * 2 + ["4351"] * 2,
    ...                                "disease": ["flu", "hiv", "flu", "flu"]})
    >>> stats = open_engine(t).class_stats(["zip"], sensitive=["disease"])
    >>> EnhancedBetaLikeness("disease", beta=1.0).class_ok(stats).tolist()
    [True, False]
    """

    name = "enhanced_beta_likeness"
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "attribute": ATTRIBUTE,
        "beta": Param(float, low=0, low_open=True, finite=True),
    }
    monotonic_generalization = True
    monotonic_suppression = False
    union_unsafe = GLOBAL_REFERENCE

    def __init__(self, attribute: str, beta: float) -> None:
        self.attribute: str = self._checked("attribute", attribute)
        self.beta: float = self._checked("beta", beta)

    def _gain_and_cap(self, stats: ClassStats) -> tuple[npt.NDArray[np.float64], ...]:
        c = self.counts(stats)
        gain = _gain(c)
        with np.errstate(divide="ignore"):
            cap = -np.log(c.p_count / max(c.n_total, 1))
        return gain, np.asarray(cap, dtype=np.float64)

    def class_ok(self, stats: ClassStats) -> npt.NDArray[np.bool_]:
        """Return, per class, whether every gain is at most ``min(beta, -ln p)``."""
        gain, cap = self._gain_and_cap(stats)
        bad = gain > np.minimum(self.beta, cap)[None, :]
        return np.asarray(~bad.any(axis=1), dtype=bool)

    def class_values(self, stats: ClassStats) -> npt.NDArray[np.float64]:
        """Largest gain of each class, ``inf`` if a gain exceeds its ``-ln p`` cap."""
        gain, cap = self._gain_and_cap(stats)
        over = (gain > cap[None, :]).any(axis=1)
        return np.asarray(np.where(over, np.inf, _row_max(gain)), dtype=np.float64)

    def value(self, stats: ClassStats) -> float:
        """Return the smallest beta satisfied (``inf`` if none; 0 for no class)."""
        return max_or_zero(self.class_values(stats))

    def params(self) -> dict[str, Any]:
        """``{"attribute": ..., "beta": ...}``."""
        return {"attribute": self.attribute, "beta": self.beta}


class DeltaDisclosure(SensitiveModel):
    """delta-disclosure privacy: no value's frequency ratio moves by a factor ``2**delta``.

    A class passes iff for every value ``s`` present in it (``f(s) > 0``)

    .. math:: \\Big| \\log_2 \\frac{q(s)}{p(s)} \\Big| < \\delta,

    a **strict** inequality. This is ARX's ``DDisclosurePrivacy`` (base-2 logarithm; values
    absent from the class are not checked).

    Parameters
    ----------
    attribute : str
        The sensitive attribute.
    delta : float
        ``delta > 0``.

    Raises
    ------
    ParameterError
        If ``delta`` is not a finite number > 0.

    Notes
    -----
    *Monotonicity.* Under generalization: no (merging can make a value present with a tiny
    frequency, breaking the lower bound; ARX declares it non-monotonic even without
    suppression). Under suppression: no.

    *Value.* :meth:`value` is the largest ``|log2(q/p)|``; the model holds iff
    ``delta > value``. Brickell and Shmatikov, and pycanon's ``delta_disclosure``, use the
    natural logarithm: pycanon's delta equals ``value * ln 2``.

    References
    ----------
    .. [1] J. Brickell, V. Shmatikov, "The cost of privacy: destruction of data-mining
       utility in anonymized data publishing", KDD 2008, Definition 4 (delta-disclosure).
    .. [2] ARX ``criteria/DDisclosurePrivacy`` (docs/concepts/metrics-reference.md,
       section 2).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["4350"] * 2 + ["4351"] * 2,
    ...                                "disease": ["flu", "hiv", "flu", "flu"]})
    >>> stats = open_engine(t).class_stats(["zip"], sensitive=["disease"])
    >>> model = DeltaDisclosure("disease", delta=1.0)
    >>> model.class_ok(stats).tolist(), round(model.value(stats), 4)
    ([False, True], 1.0)
    """

    name = "delta_disclosure"
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "attribute": ATTRIBUTE,
        "delta": Param(float, low=0, low_open=True, finite=True),
    }
    monotonic_generalization = False
    monotonic_suppression = False
    union_unsafe = GLOBAL_REFERENCE

    def __init__(self, attribute: str, delta: float) -> None:
        self.attribute: str = self._checked("attribute", attribute)
        self.delta: float = self._checked("delta", delta)

    def class_values(self, stats: ClassStats) -> npt.NDArray[np.float64]:
        """Largest ``|log2(q/p)|`` over the values present in each class."""
        c = self.counts(stats)
        num, den = c.gain_parts()
        with np.errstate(divide="ignore", invalid="ignore"):
            dist = np.abs(np.log2(num / den))
        return _row_max(np.where(c.f > 0, dist, -np.inf))

    def class_ok(self, stats: ClassStats) -> npt.NDArray[np.bool_]:
        """Return, per class, whether every present value has ``|log2(q/p)| < delta``."""
        return np.asarray(self.class_values(stats) < self.delta, dtype=bool)

    def value(self, stats: ClassStats) -> float:
        """Return the largest ``|log2(q/p)|`` over all classes (0 for no class)."""
        return max_or_zero(self.class_values(stats))

    def params(self) -> dict[str, Any]:
        """``{"attribute": ..., "delta": ...}``."""
        return {"attribute": self.attribute, "delta": self.delta}
