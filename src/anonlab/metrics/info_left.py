"""Information-left degree of a value, a tuple and a table (Song et al. 2015, §5).

Definition 9 (value): after ``v`` is generalized to ``v*``,

    ILeft_value(v*) = 1 - (number of leaves of SubT(v*) - 1) / (number of leaves of GTree)

where ``SubT(v*)`` is the subtree rooted at ``v*``. An original value keeps 1; the root keeps
``1 / |leaves|``. (The extracted text reads "The number of leaf nodes in SubT(v*) - 1" over
"The number of all leaf nodes in GTree", with no "- 1" in the denominator; we follow it.)

Definition 10 (tuple): ``ILeft_tuple(t*) = (sum of ILeft_value over the d attributes of
A_QI and A_S) / d``. Sensitive attributes are not generalized here, so each keeps 1; the
metric counts ``n_sensitive`` of them (default 0: the tuple is its quasi-identifiers).

Definition 11 (table): ``ILeft_table(T*) = sum_i ILeft_tuple(t*_i) / |T*|``.

As a loss (lower is better) the metric reports ``1 - ILeft_table``, in ``[0, 1)``. Choices:
leaves are hierarchy rows (as for ARX's domain size); a null is a leaf of its own; a
suppressed record's values become ``*``, the root, so each keeps ``1 / |leaves|``; attribute
weights (normalised by the largest, default equal) turn the tuple mean into a weighted mean
(sensitive attributes weigh 1).

References
----------
.. [1] J. Song, L. Huang, G. Wang, Y. Kang and H. Liu, "The k-anonymization method satisfying
   personalized privacy preservation", Chemical Engineering Transactions 46 (2015), §5,
   Definitions 9-11.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._validation import check_int
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.stats import ClassStats
from anonlab.metrics._util import (
    FloatArray,
    check_weights,
    class_leaf_counts,
    domain_size,
    normalized_weights,
    split_sizes,
    weighted_sum,
)
from anonlab.metrics.base import Metric, MetricContext, ReleaseCells
from anonlab.metrics.certainty import lost_leaves, lost_leaves_bound, lost_leaves_cells

__all__ = ["InformationLeft", "info_left_value", "info_left_values"]


def info_left_values(hierarchy: Hierarchy, level: int) -> FloatArray:
    """ILeft_value of every label at ``level``, aligned with ``hierarchy.level_labels(level)``.

    Parameters
    ----------
    hierarchy : Hierarchy
        The generalization tree (its rows are the leaves).
    level : int
        The level of the generalized values.

    Returns
    -------
    ndarray of float
        ``1 - (leaves under the label - 1) / leaves of the hierarchy`` (Definition 9).
    """
    mapping, labels = hierarchy.generalization(hierarchy.leaves, level)
    counts = np.bincount(mapping, minlength=labels.size).astype(np.float64)
    total = float(hierarchy.leaves.size)
    out: FloatArray = 1.0 - (counts - 1.0) / total
    return out


def info_left_value(hierarchy: Hierarchy, label: str, level: int) -> float:
    """ILeft_value of the generalized value ``label`` at ``level`` (Definition 9).

    Raises
    ------
    KeyError
        If ``label`` is not a label at ``level``.
    """
    labels = hierarchy.level_labels(level).tolist()
    if label not in labels:
        raise KeyError(f"{label!r} is not a label at level {level} of {hierarchy!r}.")
    return float(info_left_values(hierarchy, level)[labels.index(label)])


class InformationLeft(Metric):
    """Information-left degree of the table (Definitions 9-11), reported as a loss.

    ``loss = 1 - ILeft_table = sum_q w_q * sum_r (|leaves(v*_{r,q})| - 1) / |leaves_q|
    / (|T| * (sum_q w_q + n_sensitive))``; a suppressed record counts as generalized to the
    root. See the module docstring for the definitions and choices. Non-monotonic with
    suppression; :meth:`lower_bound` charges every record its generalized value only.

    Parameters
    ----------
    weights : Mapping[str, float], optional
        Attribute weights (default: the context's), normalised by the largest.
    n_sensitive : int
        Ungeneralized sensitive attributes counted in a tuple's dimension ``d`` (each keeps
        information 1). Default 0.
    """

    name: ClassVar[str] = "info_left"
    monotonic: ClassVar[bool] = False

    def __init__(self, *, weights: Mapping[str, float] | None = None, n_sensitive: int = 0) -> None:
        self.weights = check_weights(weights, type(self).__name__)
        self.n_sensitive = check_int(n_sensitive, "n_sensitive", low=0, owner="InformationLeft")

    def _loss(
        self,
        columns: tuple[str, ...],
        lost: FloatArray,
        doms: FloatArray,
        context: MetricContext,
    ) -> float:
        w = normalized_weights(columns, context, self.weights)
        den = float(context.n_rows) * (weighted_sum(w, np.ones_like(w)) + self.n_sensitive)
        return weighted_sum(w, lost / doms) / den if den > 0 else 0.0

    def loss(
        self, stats: ClassStats, suppressed: npt.NDArray[np.bool_], context: MetricContext
    ) -> float:
        """Return ``1 - ILeft_table`` (see the class docstring)."""
        lost, doms = lost_leaves(stats, suppressed, context)
        return self._loss(stats.columns, lost, doms, context)

    def release_loss(self, release: ReleaseCells, context: MetricContext) -> float:
        """``1 - ILeft_table`` of a release whose cells sit on different levels (Definition 9
        per cell)."""
        lost, doms = lost_leaves_cells(release, context)
        return self._loss(release.columns, lost, doms, context)

    def table(
        self, stats: ClassStats, suppressed: npt.NDArray[np.bool_], context: MetricContext
    ) -> float:
        """Return ``ILeft_table(T*)`` (Definition 11), ``1 - loss``."""
        return 1.0 - self.loss(stats, suppressed, context)

    def tuples(
        self, stats: ClassStats, suppressed: npt.NDArray[np.bool_], context: MetricContext
    ) -> FloatArray:
        """Return ``ILeft_tuple`` (Definition 10) of the records of each class."""
        _, mask, _, _ = split_sizes(stats, suppressed)
        w = normalized_weights(stats.columns, context, self.weights)
        total = np.full(stats.n_classes, float(self.n_sensitive))
        for j, col in enumerate(stats.columns):
            dom = float(domain_size(context, col))
            lc = class_leaf_counts(stats, j, context).astype(np.float64)
            lc[mask] = dom
            total += w[j] * (1.0 - (lc - 1.0) / dom)
        d = float(w.sum()) + self.n_sensitive
        out: FloatArray = total / d if d > 0 else np.ones(stats.n_classes)
        return out

    def lower_bound(self, levels: tuple[int, ...], context: MetricContext) -> float | None:
        """``1 - ILeft_table`` with every record generalized and none suppressed."""
        lost, doms = lost_leaves_bound(tuple(int(x) for x in levels), context)
        return self._loss(context.quasi_identifiers, lost, doms, context)

    def _params(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.weights is not None:
            out["weights"] = self.weights
        if self.n_sensitive:
            out["n_sensitive"] = self.n_sensitive
        return out

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({args})"
