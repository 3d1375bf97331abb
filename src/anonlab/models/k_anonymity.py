"""k-anonymity: every equivalence class has at least k rows."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._validation import Param
from anonlab.data.stats import ClassStats
from anonlab.models.base import ClassRule, PrivacyModel, RuleArray, RuleParams

__all__ = ["KAnonymity", "k_anonymity_rule"]


def k_anonymity_rule(
    size: int, counts: RuleArray, table_counts: RuleArray, n_total: int, params: RuleParams
) -> bool:
    """:meth:`KAnonymity.class_ok` of one class (a :class:`~anonlab.models.base.ClassRule`):
    ``size >= k``, with ``params = (k,)``."""
    return bool(size >= int(params[0]))


class KAnonymity(PrivacyModel):
    """k-anonymity: each class holds at least ``k`` rows.

    A class ``E`` passes iff ``|E| >= k`` (ARX ``KAnonymity``, through the minimal class
    size).

    Parameters
    ----------
    k : int
        The smallest allowed class size, ``k >= 1`` (``k = 1`` always holds).

    Raises
    ------
    ParameterError
        If ``k`` is not an int >= 1.

    Notes
    -----
    *Monotonicity.* Under generalization: yes (a union of classes of size >= k has size
    >= k). Under suppression: yes (a generalized class that contains a passing class passes,
    so the suppressed rows can only decrease).

    *Value.* :meth:`value` is the size of the smallest class, the largest k for which the
    table is k-anonymous. pycanon's ``k_anonymity`` agrees except that pandas ``groupby``
    silently drops every row with a null quasi-identifier; anonlab keeps a null as a value
    of its own.

    References
    ----------
    .. [1] L. Sweeney, "k-anonymity: a model for protecting privacy", IJUFKS 10(5), 2002.
    .. [2] R. C.-W. Wong, J. Li, A. W.-C. Fu, K. Wang, "(alpha, k)-anonymous data
       publishing", J. Intell. Inf. Syst., 2009, Definition 3 (k-anonymity property).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> stats = open_engine(EncodedTable.from_columns({"sex": ["F", "F", "M"]})).class_stats(["sex"])
    >>> KAnonymity(2).class_ok(stats).tolist(), KAnonymity(2).value(stats)
    ([True, False], 1)
    >>> KAnonymity(2).params()
    {'k': 2}
    """

    name = "k_anonymity"
    _parameter_constraints: ClassVar[dict[str, Param]] = {"k": Param(int, low=1)}
    monotonic_generalization = True
    union_safe = "class sizes add up"
    monotonic_suppression = True

    def __init__(self, k: int) -> None:
        self.k: int = self._checked("k", k)

    @property
    def min_class_size(self) -> int:
        """``k``."""
        return self.k

    def class_ok(self, stats: ClassStats) -> npt.NDArray[np.bool_]:
        """Return ``sizes >= k`` per class."""
        return np.asarray(stats.sizes >= self.k, dtype=bool)

    def class_rule(self) -> ClassRule | None:
        """:func:`k_anonymity_rule` with ``(k,)`` (None for a subclass: it may judge
        otherwise)."""
        return ClassRule(k_anonymity_rule, (float(self.k),)) if type(self) is KAnonymity else None

    def value(self, stats: ClassStats) -> int:
        """Return the smallest class size (0 for an empty table)."""
        return stats.min_size

    def params(self) -> dict[str, Any]:
        """``{"k": k}``."""
        return {"k": self.k}
