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

The functions :func:`info_left_by_level`, :func:`info_left_cells`, :func:`info_left_tuples`
and :func:`info_left_table` compute Definitions 9-11 on any release, the sensitive attribute's
generalized values included (personalized privacy generalizes them, section 6);
:func:`release_info_left` is the degree of each released tuple.

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

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._typing import FloatArray
from anonlab._validation import Param
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.stats import ClassStats
from anonlab.data.table import EncodedTable
from anonlab.metrics._util import (
    check_weights,
    class_leaf_counts,
    domain_size,
    normalized_weights,
    split_sizes,
    weighted_sum,
)
from anonlab.metrics.base import Metric, MetricContext, ReleaseCells
from anonlab.metrics.certainty import lost_leaves, lost_leaves_bound, lost_leaves_cells

__all__ = [
    "InformationLeft",
    "info_left_by_level",
    "info_left_cells",
    "info_left_table",
    "info_left_tuples",
    "info_left_value",
    "info_left_values",
    "release_info_left",
]


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

    Examples
    --------
    >>> from anonlab.data.builders import masking_hierarchy
    >>> h = masking_hierarchy(["4350", "4351", "4360", "4361"])
    >>> h.level_labels(1).tolist(), info_left_values(h, 1).tolist()
    (['435*', '436*'], [0.75, 0.75])
    """
    mapping, labels = hierarchy.leaf_generalization(level)
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

    Examples
    --------
    >>> from anonlab.data.builders import masking_hierarchy
    >>> h = masking_hierarchy(["4350", "4351", "4360", "4361"])
    >>> info_left_value(h, "4350", 0), info_left_value(h, "435*", 1), info_left_value(h, "****", 4)
    (1.0, 0.75, 0.25)
    """
    labels = hierarchy.level_labels(level).tolist()
    if label not in labels:
        raise KeyError(f"{label!r} is not a label at level {level} of {hierarchy!r}.")
    return float(info_left_values(hierarchy, level)[labels.index(label)])


def info_left_by_level(hierarchy: Hierarchy, categories: npt.ArrayLike) -> FloatArray:
    """ILeft_value (Definition 9) of every category generalized to every level.

    Parameters
    ----------
    hierarchy : Hierarchy
    categories : array_like
        The distinct values of a column (a null as ``None``: a leaf of its own below the
        root, which it joins at a one-label top).

    Returns
    -------
    ndarray of float, shape (height + 1, categories)
    """
    mappings, labels = hierarchy.generalizations(categories)
    out = np.empty(mappings.shape, dtype=np.float64)
    for level in range(hierarchy.height + 1):
        per_label = info_left_values(hierarchy, level)
        if labels[level].size > per_label.size:  # the null's own label: one leaf
            per_label = np.append(per_label, 1.0)
        out[level] = per_label[mappings[level]]
    return out


def info_left_cells(
    hierarchy: Hierarchy, categories: npt.ArrayLike, codes: npt.ArrayLike, levels: npt.ArrayLike
) -> FloatArray:
    """ILeft_value (Definition 9) of cells: value ``categories[codes[i]]`` released at
    ``levels[i]``."""
    table = info_left_by_level(hierarchy, categories)
    out: FloatArray = table[np.asarray(levels, dtype=np.int64), np.asarray(codes, dtype=np.int64)]
    return out


def info_left_tuples(
    values: Sequence[npt.ArrayLike], weights: Sequence[float] | None = None
) -> FloatArray:
    """ILeft_tuple (Definition 10): per tuple, the mean of its ``d`` attributes' ILeft_value
    (weighted when ``weights`` are given, one per attribute).

    Parameters
    ----------
    values : sequence of array_like of float
        One array per attribute (quasi-identifiers and sensitive), one value per tuple.
    weights : sequence of float, optional
        The attributes' weights (default: equal, the paper's mean).
    """
    arr = np.asarray([np.asarray(v, dtype=np.float64) for v in values], dtype=np.float64)
    w = np.ones(arr.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    out: FloatArray = (w @ arr) / float(w.sum())
    return out


def info_left_table(tuples: npt.ArrayLike) -> float:
    """ILeft_table (Definition 11): the mean ILeft_tuple of the released tuples."""
    t = np.asarray(tuples, dtype=np.float64)
    return float(t.mean()) if t.size else 1.0


def release_info_left(
    table: EncodedTable,
    levels: Mapping[str, npt.ArrayLike],
    hierarchies: Mapping[str, Hierarchy],
) -> FloatArray:
    """ILeft_tuple (Definition 10) of every tuple of a release.

    Parameters
    ----------
    table : EncodedTable
        The original rows of the release.
    levels : Mapping[str, array_like of int]
        For each attribute that counts (quasi-identifiers and sensitive ones), the level of
        each row's released value (one level broadcasts to every row; a suppressed cell is
        at its tree's top).
    hierarchies : Mapping[str, Hierarchy]
        The tree of every attribute of ``levels``.
    """
    per = []
    for name, lv in levels.items():
        col = table[name]
        at = np.broadcast_to(np.asarray(lv, dtype=np.int64), (table.n_rows,))
        per.append(info_left_cells(hierarchies[name], col.categories, col.codes, at))
    return info_left_tuples(per)


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

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "sex": ["F", "M"] * 4})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "info_left"}
    >>> result = anonlab.anonymize(t, job)
    >>> InformationLeft().name, result.loss, result.transformation
    ('info_left', 0.375, {'zip': 1, 'sex': 1})
    """

    name: ClassVar[str] = "info_left"
    monotonic: ClassVar[bool] = False
    _parameter_constraints: ClassVar[dict[str, Param]] = {"n_sensitive": Param(int, low=0)}

    def __init__(self, *, weights: Mapping[str, float] | None = None, n_sensitive: int = 0) -> None:
        self.weights = check_weights(weights, type(self).__name__)
        self.n_sensitive: int = self._parameter_constraints["n_sensitive"].check(
            n_sensitive, "n_sensitive", owner="InformationLeft"
        )

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
