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

__all__ = ["CellCounts", "Metric", "MetricContext", "ReleaseCells"]


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
    min_class_size : int
        The smallest class a release keeps unsuppressed (the largest ``k`` of the models:
        k, ceil(l), ...). Bounds used to prune a search hold for every release whose
        unsuppressed classes are at least this large (default 1: any release).
    cache : dict
        Per-attribute, per-level precomputations shared by the metrics that use this context
        (value counts, generalization maps, leaf counts, entropies, partition bounds). Filled
        lazily; it depends only on the fields above, so never share a cache between contexts.

    Examples
    --------
    >>> import anonlab
    >>> from anonlab.release.measure import metric_context
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 4}}]}
    >>> context = metric_context(anonlab.anonymize(t, job).problem)
    >>> context.quasi_identifiers, context.n_rows, context.base.sizes.tolist()
    (('zip',), 8, [2, 2, 2, 2])
    """

    quasi_identifiers: tuple[str, ...]
    hierarchies: Mapping[str, Hierarchy]
    base: ClassStats
    n_rows: int
    weights: Mapping[str, float] = field(default_factory=dict)
    min_class_size: int = 1
    cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class CellCounts:
    """The released cells of one quasi-identifier, counted per (original value, level, label).

    Parameters
    ----------
    value : ndarray of int64
        The original value: a code of the base classes' domain of the column.
    level : ndarray of int64
        The level the value was released at.
    label : ndarray of int64
        The released label (cells whose labels read the same share an id).
    kept : ndarray of int64
        Records with that cell that are released.
    suppressed : ndarray of int64
        Records with that cell whose class is suppressed.
    """

    value: npt.NDArray[np.int64]
    level: npt.NDArray[np.int64]
    label: npt.NDArray[np.int64]
    kept: npt.NDArray[np.int64]
    suppressed: npt.NDArray[np.int64]


@dataclass(frozen=True)
class ReleaseCells:
    """A release whose cells sit on different levels, as the metrics measure it.

    A full-domain release is measured from its classes (:meth:`Metric.loss`); a release
    whose rows sit at different levels (a partial-domain or local recoding) from its cells
    per quasi-identifier and its classes (:meth:`Metric.release_loss`).

    Parameters
    ----------
    columns : tuple of str
        The quasi-identifiers, aligned with ``context.quasi_identifiers``.
    cells : tuple of CellCounts
        Per quasi-identifier.
    class_sizes : ndarray of int64
        The sizes of the released classes.
    class_suppressed : ndarray of bool
        Per class, whether it is suppressed.
    """

    columns: tuple[str, ...]
    cells: tuple[CellCounts, ...]
    class_sizes: npt.NDArray[np.int64]
    class_suppressed: npt.NDArray[np.bool_]

    @property
    def suppressed_rows(self) -> int:
        """S: the records suppressed."""
        return int(self.class_sizes[self.class_suppressed].sum())


class Metric(ABC):
    """A utility metric (information loss; lower is better).

    Attributes
    ----------
    name : str
        The metric's name in job files.
    monotonic : bool
        Loss never decreases under generalization, with suppression (pruning-safe).
    needs_keys : bool
        Whether the loss reads the classes' keys (labels), not only their sizes and levels.

    Examples
    --------
    >>> from anonlab.metrics import Height
    >>> isinstance(Height(), Metric), Height().name
    (True, 'height')
    """

    name: ClassVar[str] = ""
    monotonic: ClassVar[bool] = False
    #: Whether :meth:`loss` reads the classes' keys (their labels); a search computes keys
    #: only for the metrics that need them.
    needs_keys: ClassVar[bool] = True

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

        Examples
        --------
        >>> import numpy as np
        >>> import anonlab
        >>> from anonlab.api import open_engine
        >>> from anonlab.metrics import Height
        >>> from anonlab.release.measure import metric_context
        >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
        >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
        ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "height"}
        >>> r = anonlab.anonymize(t, job)
        >>> stats = open_engine(t, hierarchies=r.problem.hierarchies).class_stats(["zip"], {"zip": 1})
        >>> Height().loss(stats, np.zeros(stats.n_classes, bool), metric_context(r.problem)), r.loss
        (1.0, 1.0)
        """

    def release_loss(self, release: ReleaseCells, context: MetricContext) -> float:
        """Return the information loss of a release whose cells sit on different levels.

        Each metric generalizes its full-domain formula cell by cell (or class by class): on
        a release with every cell of a column at one level it gives :meth:`loss`.

        Raises
        ------
        NotImplementedError
            If the metric is only defined for full-domain releases.
        """
        raise NotImplementedError(
            f"The metric {self.name!r} is defined for full-domain releases only."
        )

    def lower_bound(self, levels: tuple[int, ...], context: MetricContext) -> float | None:
        """A lower bound of :meth:`loss` for any suppression at ``levels`` that needs no
        classes (from per-attribute precomputation), monotone in the levels; None if unknown.

        ``levels`` are aligned with ``context.quasi_identifiers``; the bound holds for every
        suppression mask of the node's classes (whose sizes sum to ``context.n_rows``).
        """
        return None

    def successor_bound(self, sizes: npt.NDArray[np.int64], context: MetricContext) -> float | None:
        """A lower bound of :meth:`loss` of every release more general than (or equal to) a
        node whose class sizes are ``sizes``; None if the metric has none.

        The bound holds for any suppression that leaves every unsuppressed class at least
        ``context.min_class_size`` records. A search that computes a node's classes (for a
        privacy check, say) raises the bounds of all its generalizations with it. Metrics
        whose :meth:`lower_bounds` are already tight per node return None.
        """
        del sizes, context
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
