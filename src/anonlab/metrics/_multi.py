"""The skeleton of multi-dimensional metrics: one value per attribute, then an aggregate."""

from __future__ import annotations

import sys
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._typing import FloatArray
from anonlab.data.stats import ClassStats
from anonlab.metrics._util import (
    check_gamma,
    check_weights,
    gs_factors,
    normalized_weights,
)
from anonlab.metrics.aggregate import Aggregate, aggregate, parse_aggregate
from anonlab.metrics.base import Metric, MetricContext, ReleaseCells

__all__: list[str] = []

#: Relative safety margin of lower bounds that are equal to the loss only in exact arithmetic.
MARGIN = 1.0 - 1e-12


class MultiDimensionalMetric(Metric):
    """A metric with a value ``v_j`` per quasi-identifier, combined by an aggregate function.

    Parameters
    ----------
    aggregate : {"sum", "arithmetic", "geometric", "max", "rank"}, optional
        The aggregate function (the metric's ARX default when omitted).
    weights : Mapping[str, float], optional
        Attribute weights; they replace ``MetricContext.weights`` when given. Weights are
        normalised by the largest one (all zero: all 1), like ARX.
    """

    default_aggregate: ClassVar[Aggregate] = Aggregate.SUM

    def __init__(
        self,
        *,
        aggregate: Aggregate | str | None = None,
        weights: Mapping[str, float] | None = None,
    ) -> None:
        owner = type(self).__name__
        self.aggregate = (
            self.default_aggregate if aggregate is None else parse_aggregate(aggregate, owner)
        )
        self.weights = check_weights(weights, owner)

    # ------------------------------------------------------------------ subclass hooks
    @abstractmethod
    def per_attribute(
        self,
        stats: ClassStats,
        suppressed: npt.NDArray[np.bool_],
        context: MetricContext,
    ) -> FloatArray:
        """Return ``v_j`` for each column of ``stats`` (before weighting and aggregation)."""

    def per_attribute_bound(
        self, levels: tuple[int, ...], context: MetricContext
    ) -> FloatArray | None:
        """Lower bounds of ``v_j`` for any suppression at ``levels`` (aligned with
        ``context.quasi_identifiers``); None if the metric has none."""
        return None

    def per_attribute_cells(self, release: ReleaseCells, context: MetricContext) -> FloatArray:
        """``v_j`` of a release whose cells sit on different levels (see
        :meth:`~anonlab.metrics.base.Metric.release_loss`)."""
        raise NotImplementedError(
            f"The metric {self.name!r} is defined for full-domain releases only."
        )

    def release_loss(self, release: ReleaseCells, context: MetricContext) -> float:
        """The aggregate of :meth:`per_attribute_cells`."""
        return self.combine(release.columns, self.per_attribute_cells(release, context), context)

    # ------------------------------------------------------------------ the interface
    def combine(
        self, columns: Sequence[str], values: npt.ArrayLike, context: MetricContext
    ) -> float:
        """Weight and aggregate per-attribute values of ``columns``."""
        w = normalized_weights(columns, context, self.weights)
        return aggregate(values, w, self.aggregate)

    def loss(
        self,
        stats: ClassStats,
        suppressed: npt.NDArray[np.bool_],
        context: MetricContext,
    ) -> float:
        """Return the aggregate of :meth:`per_attribute` (see the class docstring)."""
        return self.combine(stats.columns, self.per_attribute(stats, suppressed, context), context)

    def lower_bound(self, levels: tuple[int, ...], context: MetricContext) -> float | None:
        """The aggregate of :meth:`per_attribute_bound` (aggregates are monotone in each
        value, so this bounds :meth:`loss` from below), or None."""
        bound = self.per_attribute_bound(tuple(int(x) for x in levels), context)
        if bound is None:
            return None
        return self.combine(context.quasi_identifiers, bound, context)

    def lower_bounds(
        self, nodes: npt.NDArray[np.int64], context: MetricContext
    ) -> FloatArray | None:
        """Vectorised :meth:`lower_bound`: ``v_j`` bounds depend on attribute ``j``'s level
        only, so a table of them per (attribute, level) is computed once and aggregated over
        all nodes with the same operations, in the same order, as :func:`aggregate` (the
        geometric mean, whose ``np.power`` may round differently, with a relative margin of
        ``1e-12`` below)."""
        if self.aggregate is Aggregate.RANK or nodes.size == 0:
            return super().lower_bounds(nodes, context)
        nodes = np.asarray(nodes, dtype=np.int64)
        n, m = nodes.shape
        tops = nodes.max(axis=0)
        table = np.zeros((m, int(tops.max()) + 1), dtype=np.float64)
        for level in range(int(tops.max()) + 1):
            probe = tuple(int(min(level, t)) for t in tops)
            bound = self.per_attribute_bound(probe, context)
            if bound is None:
                return None
            for j in range(m):
                if level <= tops[j]:
                    table[j, level] = float(bound[j])
        values = table[np.arange(m)[None, :], nodes]
        w = normalized_weights(context.quasi_identifiers, context, self.weights)
        fn = self.aggregate
        if fn is Aggregate.SUM:
            total = np.zeros(n, dtype=np.float64)
            for j in range(m):
                total += values[:, j] * w[j]
            return np.where(np.isfinite(total), total, sys.float_info.max)
        if fn is Aggregate.ARITHMETIC:
            total = np.zeros(n, dtype=np.float64)
            for j in range(m):
                total += (values[:, j] / float(m)) * w[j]
            return total
        if fn is Aggregate.GEOMETRIC:
            prod = np.ones(n, dtype=np.float64)
            for j in range(m):
                prod *= np.power((values[:, j] + 1.0) * w[j], 1.0 / float(m))
            # np.power may differ from math.pow in the last bits: keep the bound below
            out: FloatArray = (prod - 1.0) * MARGIN
            return out
        out = (values * w[None, :]).max(axis=1)
        return out

    def _params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"aggregate": self.aggregate.value}
        if self.weights is not None:
            out["weights"] = self.weights
        return out

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({args})"


class GsMixin:
    """Stores the gs-factor ``gamma`` and ARX's generalization and suppression factors."""

    gamma: float
    g_factor: float
    s_factor: float

    def _set_gamma(self, gamma: float) -> None:
        self.gamma = check_gamma(gamma, type(self).__name__)
        self.g_factor, self.s_factor = gs_factors(self.gamma)
