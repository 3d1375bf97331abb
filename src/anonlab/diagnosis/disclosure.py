"""Attribute disclosure: classes whose records share one sensitive value.

k-anonymity hides who a record is, not what it says: when every record of a class holds the
same sensitive value (a homogeneous class), an attacker who places a person in the class
learns that value without telling the records apart (the homogeneity attack of
Machanavajjhala et al., "l-Diversity: Privacy Beyond k-Anonymity", ICDE 2006, section 3.1).
:func:`attribute_disclosure` lists those classes, and the classes where one value's share
exceeds a threshold the user sets, with the records they cover, whatever models the job asks
for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._validation import Param, check_int
from anonlab.data.stats import ClassStats
from anonlab.exceptions import ParameterError

__all__ = ["AttributeDisclosure", "attribute_disclosure", "disclosures"]

_SHARE = Param(float, low=0, high=1, low_open=True, none=True)


@dataclass(frozen=True)
class AttributeDisclosure:
    """The classes of a table that give away a sensitive attribute's value.

    Attributes
    ----------
    attribute : str
        The sensitive attribute.
    classes, records : int
        The classes judged (released ones, with a suppression mask) and their records.
    homogeneous_classes, homogeneous_records : int
        Classes in which every record holds the same value, and their records.
    share : float or None
        The threshold of a dominant value, when one was set.
    dominated_classes, dominated_records : int
        Classes in which one value's share of the records is above ``share`` (homogeneous
        ones included), and their records; 0 without ``share``.
    worst : list of dict
        The largest of those classes, most exposed first: ``labels`` (the class's value of
        each quasi-identifier, when the statistics carry them), ``size``, ``value``,
        ``share``.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["4350"] * 3 + ["4351"] * 3,
    ...                                "disease": ["flu"] * 3 + ["flu", "hiv", "flu"]})
    >>> stats = open_engine(t).class_stats(["zip"], sensitive=["disease"])
    >>> d = attribute_disclosure(stats, "disease", share=0.6)
    >>> d.homogeneous_classes, d.homogeneous_records, d.dominated_classes
    (1, 3, 2)
    >>> d.worst[0]
    {'labels': ['4350'], 'size': 3, 'value': 'flu', 'share': 1.0}
    """

    attribute: str
    classes: int
    records: int
    homogeneous_classes: int
    homogeneous_records: int
    share: float | None = None
    dominated_classes: int = 0
    dominated_records: int = 0
    worst: list[dict[str, Any]] = field(default_factory=list)

    @property
    def exposed(self) -> bool:
        """Whether some class gives the value away (homogeneous, or above ``share``)."""
        return self.homogeneous_classes > 0 or self.dominated_classes > 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON form.

        Examples
        --------
        >>> AttributeDisclosure("income", 2, 10, 0, 0).to_dict()["homogeneous_classes"]
        0
        """
        return {
            "attribute": self.attribute,
            "classes": self.classes,
            "records": self.records,
            "homogeneous_classes": self.homogeneous_classes,
            "homogeneous_records": self.homogeneous_records,
            "share": self.share,
            "dominated_classes": self.dominated_classes,
            "dominated_records": self.dominated_records,
            "worst": self.worst,
        }

    def sentence(self) -> str:
        """What it means, in one sentence for a steward.

        Examples
        --------
        >>> AttributeDisclosure("income", 2, 10, 1, 5).sentence()
        "1 class of 5 records (50.0% of the records) share one value of 'income': whoever places a person in it learns their income."
        """
        if not self.exposed:
            return (
                f"No class gives away '{self.attribute}': every class holds more than one of "
                "its values" + (f", none above {self.share:.0%}" if self.share else "") + "."
            )
        parts = []
        if self.homogeneous_classes:
            n = self.homogeneous_classes
            parts.append(
                f"{n:,} class{'es' if n != 1 else ''} of {self.homogeneous_records:,} records "
                f"({self.homogeneous_records / max(self.records, 1):.1%} of the records) share "
                f"one value of '{self.attribute}'"
            )
        if self.share is not None and self.dominated_classes > self.homogeneous_classes:
            n = self.dominated_classes
            parts.append(
                f"in {n:,} class{'es' if n != 1 else ''} ({self.dominated_records:,} records) "
                f"one value holds more than {self.share:.0%} of the records"
            )
        return (
            "; ".join(parts)
            + f": whoever places a person in {'it' if self._one() else 'one'} learns "
            + ("their" if self.homogeneous_classes else "most likely their")
            + f" {self.attribute}."
        )

    def _one(self) -> bool:
        return max(self.homogeneous_classes, self.dominated_classes) == 1


def attribute_disclosure(
    stats: ClassStats,
    attribute: str,
    *,
    share: float | None = None,
    kept: npt.NDArray[np.bool_] | None = None,
    shown: int = 10,
) -> AttributeDisclosure:
    """The classes of ``stats`` that give away ``attribute``'s value.

    Parameters
    ----------
    stats : ClassStats
        Classes with the sensitive counts of ``attribute`` (``class_stats(...,
        sensitive=[attribute])``).
    attribute : str
        The sensitive attribute.
    share : float in (0, 1], optional
        Also list the classes where one value's share of the records is above this.
    kept : ndarray of bool, optional
        Per class, whether it is released (suppressed classes give nothing away).
    shown : int
        How many of the most exposed classes :attr:`AttributeDisclosure.worst` lists.

    Returns
    -------
    AttributeDisclosure

    Raises
    ------
    ParameterError
        ``attribute`` has no sensitive counts in ``stats``, or ``share`` outside (0, 1].

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351", "4351"],
    ...                                "income": ["<=50K", "<=50K", "<=50K", ">50K"]})
    >>> stats = open_engine(t).class_stats(["zip"], sensitive=["income"])
    >>> attribute_disclosure(stats, "income").sentence()
    "1 class of 2 records (50.0% of the records) share one value of 'income': whoever places a person in it learns their income."
    """
    share = _SHARE.check(share, "share", owner="attribute_disclosure")
    shown = check_int(shown, "shown", low=0, owner="attribute_disclosure")
    if attribute not in stats.sensitive:
        raise ParameterError(
            f"No sensitive counts of {attribute!r} in these classes; count them with "
            f"class_stats(..., sensitive=[{attribute!r}])."
        )
    hist = stats.sensitive[attribute]
    sizes = np.asarray(stats.sizes, dtype=np.int64)
    released = np.ones(sizes.size, dtype=bool) if kept is None else np.asarray(kept, dtype=bool)
    rows, values, counts = hist.rows, hist.indices, hist.data
    order = np.lexsort((-counts, rows))  # per class, its most frequent value first
    first = np.ones(order.size, dtype=bool)
    first[1:] = rows[order][1:] != rows[order][:-1]
    top = order[first]
    top_class, top_value, top_count = rows[top], values[top], counts[top]
    top_share = top_count / np.maximum(sizes[top_class], 1)
    live = released[top_class]
    homogeneous = live & (top_count == sizes[top_class])
    dominated = live & (top_share > share) if share is not None else np.zeros_like(live)
    exposed = homogeneous | dominated
    ranked = np.lexsort((-sizes[top_class][exposed], -top_share[exposed]))[:shown]
    picked = np.flatnonzero(exposed)[ranked]
    return AttributeDisclosure(
        attribute=attribute,
        classes=int(released.sum()),
        records=int(sizes[released].sum()),
        homogeneous_classes=int(homogeneous.sum()),
        homogeneous_records=int(sizes[top_class[homogeneous]].sum()),
        share=share,
        dominated_classes=int(dominated.sum()),
        dominated_records=int(sizes[top_class[dominated]].sum()),
        worst=[
            {
                "labels": _labels(stats, int(top_class[i])),
                "size": int(sizes[top_class[i]]),
                "value": _value(hist.values[top_value[i]]),
                "share": round(float(top_share[i]), 4),
            }
            for i in picked
        ],
    )


def _labels(stats: ClassStats, c: int) -> list[Any]:
    if stats.keys is None or stats.domains is None:
        return []
    return [_value(domain[stats.keys[c, j]]) for j, domain in enumerate(stats.domains)]


def _value(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def disclosures(
    stats: ClassStats,
    attributes: Sequence[str],
    *,
    share: float | None = None,
    kept: npt.NDArray[np.bool_] | None = None,
) -> list[AttributeDisclosure]:
    """:func:`attribute_disclosure` of each of ``attributes``.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350"], "income": ["<=50K"] * 2})
    >>> stats = open_engine(t).class_stats(["zip"], sensitive=["income"])
    >>> [d.homogeneous_records for d in disclosures(stats, ["income"])]
    [2]
    """
    return [attribute_disclosure(stats, a, share=share, kept=kept) for a in attributes]
