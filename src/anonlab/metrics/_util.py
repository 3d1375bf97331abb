"""Helpers shared by the metrics: gs-factors, ARX rounding, weights and per-attribute tables.

Everything that depends only on the base classes and the hierarchies (value counts a(v), the
map from original values to their labels at a level, leaf counts under labels, per-attribute
partition bounds) is computed once per context and kept in ``MetricContext.cache``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from anonlab._typing import FloatArray, IntArray
from anonlab._validation import Param
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.stats import ClassStats
from anonlab.exceptions import HierarchyError, ParameterError
from anonlab.metrics.base import CellCounts, MetricContext

__all__: list[str] = []

_T = TypeVar("_T")
_LABEL_CACHE_SIZE = 512


# --------------------------------------------------------------------------- scalars
def gs_factors(gamma: float) -> tuple[float, float]:
    """Return ARX's ``(gFactor, sFactor)`` of the gs-factor ``gamma`` (``metric/Metric.java``).

    ``sFactor = 2*gamma if gamma < 0.5 else 1`` and
    ``gFactor = 1 if gamma <= 0.5 else 1 - 2*(gamma - 0.5)``; both are 1 at the default 0.5.
    """
    s_factor = 2.0 * gamma if gamma < 0.5 else 1.0
    g_factor = 1.0 if gamma <= 0.5 else 1.0 - 2.0 * (gamma - 0.5)
    return g_factor, s_factor


#: The constraint of ARX's gs-factor ``gamma``.
GAMMA = Param(float, low=0, high=1)


def check_gamma(gamma: object, owner: str) -> float:
    """Validate a gs-factor (:data:`GAMMA`: a number in [0, 1])."""
    value: float = GAMMA.check(gamma, "gamma", owner=owner)
    return value


def arx_round(values: npt.ArrayLike) -> FloatArray:
    """ARX's ``Metric.round``: truncation to 10 decimals, ``floor(x * 1e10) / 1e10``.

    The same IEEE operations as Java's ``Math.floor(x * 10^10) / 10^10``; ``-0.0`` becomes 0.
    """
    x = np.asarray(values, dtype=np.float64)
    out: FloatArray = np.floor(x * 1e10) / 1e10 + 0.0
    return out


# --------------------------------------------------------------------------- weights
def check_weights(weights: object, owner: str) -> dict[str, float] | None:
    """Validate attribute weights: None or a mapping of attribute name to a number >= 0."""
    if weights is None:
        return None
    if not isinstance(weights, Mapping):
        raise ParameterError(
            f"The 'weights' parameter of {owner} must be a mapping of attribute to a number "
            f">= 0. Got {weights!r} instead."
        )
    out: dict[str, float] = {}
    for attr, w in weights.items():
        if isinstance(w, bool) or not isinstance(w, int | float) or not w >= 0 or w == np.inf:
            raise ParameterError(
                f"The weight of attribute {attr!r} for {owner} must be a finite number >= 0. "
                f"Got {w!r} instead."
            )
        out[str(attr)] = float(w)
    return out


def normalized_weights(
    columns: Sequence[str], context: MetricContext, override: Mapping[str, float] | None
) -> FloatArray:
    """ARX's attribute weights: ``w_j = weight_j / max_j weight_j``; all zero -> all 1.

    The weights are ``override`` if given, else ``context.weights``; a missing attribute
    weighs 1 (ARX's own default is 0.5 for an attribute without a weight, which only matters
    when weights are set for some attributes and not others).
    """
    source = context.weights if override is None else override
    raw = np.array([float(source.get(c, 1.0)) for c in columns], dtype=np.float64)
    top = float(raw.max()) if raw.size else 0.0
    if top == 0.0:
        return np.ones(len(columns), dtype=np.float64)
    out: FloatArray = raw / top
    return out


def weighted_sum(weights: npt.ArrayLike, values: npt.ArrayLike) -> float:
    """``sum_j w_j * v_j`` in attribute order (monotone in every ``v_j``, like ARX's loops)."""
    total = 0.0
    for w, v in zip(
        np.asarray(weights, dtype=np.float64).tolist(),
        np.asarray(values, dtype=np.float64).tolist(),
    ):
        total += w * v
    return total


# --------------------------------------------------------------------------- class sums
def split_sizes(
    stats: ClassStats, suppressed: npt.NDArray[np.bool_]
) -> tuple[IntArray, npt.NDArray[np.bool_], int, int]:
    """Return ``(sizes, suppressed mask, U, S)``: class sizes, the mask as bool, and the
    unsuppressed and suppressed record counts."""
    sizes = np.asarray(stats.sizes, dtype=np.int64)
    mask = np.asarray(suppressed, dtype=bool)
    if mask.shape != sizes.shape:
        raise ParameterError(
            f"The suppression mask has shape {mask.shape}; expected one entry per class "
            f"({sizes.size})."
        )
    s_rows = int(np.dot(sizes, mask))  # (a masked sum: twice as fast as sizes[mask])
    return sizes, mask, int(sizes.sum()) - s_rows, s_rows


def require_keys(stats: ClassStats, owner: str) -> npt.NDArray[np.int32]:
    """Return ``stats.keys``, or raise if the classes were computed without keys."""
    if stats.keys is None or stats.domains is None:
        raise ParameterError(f"The metric {owner} needs class statistics with keys.")
    return stats.keys


# --------------------------------------------------------------------------- cache
def cached(context: MetricContext, key: Hashable, make: Any) -> Any:
    """Return ``context.cache[key]``, computing it with ``make()`` the first time."""
    cache = context.cache
    if key not in cache:
        cache[key] = make()
    return cache[key]


def hierarchy_of(context: MetricContext, column: str) -> Hierarchy:
    """The hierarchy of ``column``; a clear error if there is none."""
    try:
        return context.hierarchies[column]
    except KeyError:
        raise ParameterError(
            f"The metric needs a hierarchy for quasi-identifier {column!r}; none was given."
        ) from None


def base_index(context: MetricContext, column: str) -> int:
    """Position of ``column`` in the base classes."""
    cols = context.base.columns
    if column not in cols:
        raise ParameterError(
            f"Quasi-identifier {column!r} is not among the base classes' columns {cols}."
        )
    return cols.index(column)


def domain_size(context: MetricContext, column: str) -> int:
    """|dom_j|: the number of hierarchy rows (leaves, present in the data or not)."""
    result: int = cached(
        context, ("domain_size", column), lambda: int(hierarchy_of(context, column).leaves.size)
    )
    return result


def value_counts(context: MetricContext, column: str) -> FloatArray:
    """a(v): records per original value, indexed by the base domain codes of ``column``."""

    def make() -> FloatArray:
        base = context.base
        keys = require_keys(base, "needing value counts")
        j = base_index(context, column)
        assert base.domains is not None
        sizes = cached(context, ("float_sizes",), lambda: base.sizes.astype(np.float64))
        counts = np.bincount(keys[:, j], weights=sizes, minlength=len(base.domains[j]))
        return np.asarray(counts, dtype=np.float64)

    result: FloatArray = cached(context, ("value_counts", column), make)
    return result


def base_map(context: MetricContext, column: str, level: int) -> tuple[IntArray, int]:
    """Map base domain codes of ``column`` to label codes at ``level``; and the number of
    label codes (the hierarchy's labels at that level, plus one for a null)."""

    def every_level() -> tuple[IntArray, list[int]]:  # one gather for all levels
        base = context.base
        require_keys(base, "needing generalization maps")
        assert base.domains is not None
        j = base_index(context, column)
        mappings, labels = hierarchy_of(context, column).generalizations(base.domains[j])
        return mappings.astype(np.int64), [int(lab.size) for lab in labels]

    def make() -> tuple[IntArray, int]:
        mappings, sizes = cached(context, ("base_maps", column), every_level)
        hierarchy = hierarchy_of(context, column)
        if not 0 <= level <= hierarchy.height:  # the hierarchy's own error
            hierarchy.generalization(np.zeros(0, dtype=object), level)
        return mappings[level], sizes[level]

    result: tuple[IntArray, int] = cached(context, ("base_map", column, level), make)
    return result


def _label_leaf_table(context: MetricContext, column: str, level: int) -> dict[object, int]:
    def make() -> dict[object, int]:
        h = hierarchy_of(context, column)
        mapping, labels = h.leaf_generalization(level)
        counts = np.bincount(mapping, minlength=labels.size)
        return {lab: int(c) for lab, c in zip(labels.tolist(), counts.tolist())}

    result: dict[object, int] = cached(context, ("leaf_table", column, level), make)
    return result


def leaf_counts(
    context: MetricContext, column: str, level: int, labels: npt.NDArray[np.object_]
) -> IntArray:
    """For each label (at ``level`` of ``column``'s hierarchy), the number of hierarchy rows
    (leaves) whose level-``level`` label it is. A null counts as one leaf of its own.

    Results are cached per labels array (the engines and the lattice evaluator reuse theirs).
    """
    lru: OrderedDict[tuple[str, int, int], tuple[object, IntArray]] = cached(
        context, "leaf_counts_lru", OrderedDict
    )
    key = (column, level, id(labels))
    hit = lru.get(key)
    if hit is not None and hit[0] is labels:
        lru.move_to_end(key)
        return hit[1]
    table = _label_leaf_table(context, column, level)
    out = np.fromiter(
        (1 if lab is None else table.get(lab, -1) for lab in labels.tolist()),
        dtype=np.int64,
        count=len(labels),
    )
    if (out < 0).any():
        bad = labels[out < 0][0]
        raise HierarchyError(
            f"Label {bad!r} is not at level {level} of the hierarchy of attribute {column!r}."
        )
    lru[key] = (labels, out)
    while len(lru) > _LABEL_CACHE_SIZE:
        lru.popitem(last=False)
    return out


def base_leaf_counts(context: MetricContext, column: str, level: int) -> IntArray:
    """For each base domain code of ``column``, the leaf count of its label at ``level``."""

    def make() -> IntArray:
        mapping, n_labels = base_map(context, column, level)
        h = hierarchy_of(context, column)
        lab_map, labels = h.leaf_generalization(level)
        per_label = np.bincount(lab_map, minlength=n_labels).astype(np.int64)
        if n_labels > labels.size:  # the null label appended by generalization()
            per_label[labels.size :] = 1
        out: IntArray = per_label[mapping]
        return out

    result: IntArray = cached(context, ("base_leaf_counts", column, level), make)
    return result


def class_leaf_counts(stats: ClassStats, j: int, context: MetricContext) -> IntArray:
    """Per class, the leaf count of its label in column ``j`` (at ``stats.levels[j]``)."""
    keys = require_keys(stats, "needing leaf counts")
    assert stats.domains is not None
    col = stats.columns[j]
    per_label = leaf_counts(context, col, int(stats.levels[j]), stats.domains[j])
    out: IntArray = per_label[keys[:, j]]
    return out


# --------------------------------------------------------------------------- bounds
def level_cardinality(context: MetricContext, column: str, level: int) -> int:
    """Distinct labels at ``level`` among the values present in the data."""

    def present() -> npt.NDArray[np.bool_]:  # the values of the base domain in the data
        base = context.base
        keys = require_keys(base, "needing value counts")
        assert base.domains is not None
        j = base_index(context, column)
        codes = keys[:, j] if bool((base.sizes > 0).all()) else keys[base.sizes > 0, j]
        out: npt.NDArray[np.bool_] = np.bincount(codes, minlength=len(base.domains[j])) > 0
        return out

    def make() -> int:
        mapping, n_labels = base_map(context, column, level)
        values = cached(context, ("present", column), present)
        return int(np.count_nonzero(np.bincount(mapping[values], minlength=n_labels)))

    result: int = cached(context, ("level_card", column, level), make)
    return result


def max_classes(context: MetricContext, nodes: npt.NDArray[np.int64]) -> FloatArray:
    """Per node (rows of ``nodes``, levels aligned with ``context.quasi_identifiers``), an
    upper bound on its number of classes: the lesser of the base classes and the product of
    the per-attribute label counts."""
    nodes = np.atleast_2d(np.asarray(nodes, dtype=np.int64))
    n = nodes.shape[0]
    product = np.ones(n, dtype=np.float64)
    for j, col in enumerate(context.quasi_identifiers):
        levels = nodes[:, j]
        top = int(levels.max()) + 1 if n else 1
        card = np.array([level_cardinality(context, col, lv) for lv in range(top)], dtype=float)
        product *= card[levels]
    out: FloatArray = np.minimum(float(context.base.n_classes), product)
    return out


def floored_squares(sizes: npt.ArrayLike, k: int) -> float:
    """``sum_{c >= k} c^2 + k * sum_{c < k} c``: a lower bound of ``sum c^2`` over any classes
    that are unions of classes of ``sizes`` and hold at least ``k`` records each.

    Each record costs the size of its class; a record of a class of at least ``k`` keeps at
    least that size, one of a smaller class ends in a class of at least ``k``. ``k = 1``
    gives ``sum c^2``.
    """
    s = np.asarray(sizes, dtype=np.int64)
    return float(int(np.dot(s, np.maximum(s, max(int(k), 1)))))


def cell_leaf_counts(context: MetricContext, column: str, cells: CellCounts) -> FloatArray:
    """Per cell, the leaf count of its label: the original value's label at the cell's level."""
    out = np.empty(cells.value.size, dtype=np.float64)
    for level in np.unique(cells.level).tolist():
        at = cells.level == level
        out[at] = base_leaf_counts(context, column, int(level))[cells.value[at]]
    return out
