"""The utility-metric interface: information loss of one transformation, from class statistics."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab.data.hierarchy import Hierarchy
from anonlab.data.stats import ClassStats

__all__ = ["Metric", "MetricContext"]


@dataclass
class MetricContext:
    """What metrics may need besides the classes of a transformation.

    Parameters
    ----------
    quasi_identifiers : tuple of str
        The QIs, in the order of ``ClassStats.columns``.
    hierarchies : Mapping[str, Hierarchy]
        Hierarchy of each QI (its full height, all rows count as the domain).
    base : ClassStats
        Classes of the original table at level 0 of every QI (keys are category codes; the
        per-value counts a(v) are sums of sizes over classes).
    n_rows : int
        Records in scope, N.
    weights : Mapping[str, float]
        Attribute weights (default 1).
    cache : dict
        Per-attribute, per-level precomputations shared by the metrics that use this context
        (value counts, generalization maps, leaf counts, entropies, partition bounds). Filled
        lazily; it depends only on the fields above, so never share a cache between contexts.
    """

    quasi_identifiers: tuple[str, ...]
    hierarchies: Mapping[str, Hierarchy]
    base: ClassStats
    n_rows: int
    weights: Mapping[str, float] = field(default_factory=dict)
    cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)


class Metric(ABC):
    """A utility metric (information loss; lower is better).

    Attributes
    ----------
    name : str
        The metric's name in job files.
    monotonic : bool
        Loss never decreases under generalization, with suppression (pruning-safe).
    """

    name: ClassVar[str] = ""
    monotonic: ClassVar[bool] = False

    @abstractmethod
    def loss(
        self,
        stats: ClassStats,
        suppressed: npt.NDArray[np.bool_],
        context: MetricContext,
    ) -> float:
        """Return the information loss of the transformation whose classes are ``stats``.

        Parameters
        ----------
        stats : ClassStats
            Classes at the transformation's levels (``stats.levels``), with keys.
        suppressed : ndarray of bool
            Per class, whether it is suppressed.
        context : MetricContext
            Hierarchies, the base classes, N and weights.
        """

    def lower_bound(self, levels: tuple[int, ...], context: MetricContext) -> float | None:
        """A lower bound of :meth:`loss` for any suppression at ``levels`` that needs no
        classes (from per-attribute precomputation), monotone in the levels; None if unknown.

        ``levels`` are aligned with ``context.quasi_identifiers``; the bound holds for every
        suppression mask of the node's classes (whose sizes sum to ``context.n_rows``).
        """
        return None

    def lower_bounds(
        self, nodes: npt.NDArray[np.int64], context: MetricContext
    ) -> npt.NDArray[np.float64] | None:
        """:meth:`lower_bound` of many nodes at once (rows of ``nodes``); None if unknown.

        The default calls :meth:`lower_bound` per node; metrics whose bound is a function of
        per-attribute, per-level terms override it with a vectorised form that gives the same
        numbers.
        """
        out = np.empty(nodes.shape[0], dtype=np.float64)
        for i, v in enumerate(nodes):
            b = self.lower_bound(tuple(int(x) for x in v), context)
            if b is None or type(b) not in (int, float):
                return None
            out[i] = b
        return out
