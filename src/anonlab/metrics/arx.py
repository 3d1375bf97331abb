"""The utility metrics of ARX, with ARX's exact definitions (``docs/concepts/metrics-reference.md`` §1).

Notation: a transformation puts quasi-identifier ``j`` at level ``t_j`` of a hierarchy of
height ``h_j``; ``N`` records are in scope (``MetricContext.n_rows``); a class ``E`` has
``count(E)`` records; ``S`` records are suppressed (all records of the suppressed classes) and
``U = N - S`` are not. The gs-factor ``gamma`` (default 0.5) gives
``sFactor = 2*gamma if gamma < 0.5 else 1`` and ``gFactor = 1 if gamma <= 0.5 else
1 - 2*(gamma - 0.5)``; ``round`` truncates to 10 decimals. Per-attribute values are combined
by an aggregate function with weights normalised by the largest weight
(:mod:`anonlab.metrics.aggregate`).

References
----------
.. [1] ARX Data Anonymization Tool, ``org.deidentifier.arx.metric.v2`` (Apache-2.0),
   re-specified in ``docs/concepts/metrics-reference.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._typing import FloatArray
from anonlab.data.stats import ClassStats
from anonlab.metrics._multi import MARGIN, GsMixin, MultiDimensionalMetric
from anonlab.metrics._util import (
    arx_round,
    base_leaf_counts,
    base_map,
    cell_leaf_counts,
    check_gamma,
    class_leaf_counts,
    domain_size,
    floored_squares,
    gs_factors,
    hierarchy_of,
    max_classes,
    require_keys,
    split_sizes,
    value_counts,
)
from anonlab.metrics.aggregate import Aggregate
from anonlab.metrics.base import Metric, MetricContext, ReleaseCells

__all__ = [
    "AverageClassSize",
    "Discernibility",
    "Height",
    "Loss",
    "MonotonicDiscernibility",
    "MonotonicNonUniformEntropy",
    "MonotonicPrecision",
    "NonUniformEntropy",
    "Precision",
]

_LN2 = float(np.log(2.0))


def _heights(columns: tuple[str, ...], context: MetricContext) -> FloatArray:
    return np.array([hierarchy_of(context, c).height for c in columns], dtype=np.float64)


def _mean_level(level: npt.NDArray[np.int64], count: npt.NDArray[np.int64], n: float) -> float:
    return float(np.dot(count.astype(np.float64), level)) / n if n else 0.0


def _classes_of(release: ReleaseCells) -> ClassStats:
    """The released classes as class statistics (sizes only)."""
    sizes = np.asarray(release.class_sizes, dtype=np.int64)
    return ClassStats(release.columns, tuple(0 for _ in release.columns), sizes, int(sizes.sum()))


def _relative_levels(levels: tuple[int, ...], heights: FloatArray) -> FloatArray:
    t = np.asarray(levels, dtype=np.float64)
    out: FloatArray = np.divide(t, heights, out=np.zeros_like(t), where=heights != 0)
    return out


# =========================================================================== Height
class Height(MultiDimensionalMetric):
    """Generalization height (ARX ``MetricMDHeight``).

    ``v_j = t_j``; the loss is ``sum_j v_j * w_j`` (SUM by default).

    Suppressed records are ignored: the value depends only on the levels. Monotonic.
    :meth:`lower_bound` equals the loss.

    Parameters
    ----------
    aggregate : str, optional
        Aggregate function (default ``"sum"``).
    weights : Mapping[str, float], optional
        Attribute weights (default: the context's).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "sex": ["F", "M"] * 4})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "height"}
    >>> result = anonlab.anonymize(t, job)
    >>> Height().name, result.loss, result.transformation
    ('height', 2.0, {'zip': 1, 'sex': 1})
    """

    name: ClassVar[str] = "height"
    monotonic: ClassVar[bool] = True
    needs_keys: ClassVar[bool] = False
    default_aggregate: ClassVar[Aggregate] = Aggregate.SUM

    def per_attribute(
        self, stats: ClassStats, suppressed: npt.NDArray[np.bool_], context: MetricContext
    ) -> FloatArray:
        """``t_j`` per column."""
        return np.asarray(stats.levels, dtype=np.float64)

    def per_attribute_bound(
        self, levels: tuple[int, ...], context: MetricContext
    ) -> FloatArray | None:
        """Exact: ``t_j``."""
        return np.asarray(levels, dtype=np.float64)

    def per_attribute_cells(self, release: ReleaseCells, context: MetricContext) -> FloatArray:
        """The mean level of the cells of each column (``t_j`` when all share one)."""
        n = float(context.n_rows)
        return np.array(
            [_mean_level(c.level, c.kept + c.suppressed, n) for c in release.cells],
            dtype=np.float64,
        )


# =========================================================================== Precision
class Precision(GsMixin, MultiDimensionalMetric):
    """Non-monotonic precision (ARX ``MetricMDNMPrecision``, ``createPrecisionMetric()``).

    ``v_j = ((U * (t_j / h_j)) * gFactor + S * sFactor) / N`` (``t_j / h_j = 0`` if
    ``h_j = 0``): a suppressed record counts as fully generalized. The loss is the aggregate
    (ARITHMETIC_MEAN by default), in ``[0, 1]``; ``h_j`` is the full hierarchy height.

    :meth:`lower_bound` is the aggregate of ``min(gFactor * t_j / h_j, sFactor)``, valid
    whenever the class sizes sum to ``N``.

    Parameters
    ----------
    gamma : float
        gs-factor in ``[0, 1]`` (default 0.5).
    aggregate : str, optional
        Aggregate function (default ``"arithmetic"``).
    weights : Mapping[str, float], optional
        Attribute weights (default: the context's).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "sex": ["F", "M"] * 4})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "precision"}
    >>> result = anonlab.anonymize(t, job)
    >>> Precision().name, result.loss, result.transformation
    ('precision', 0.25, {'zip': 2, 'sex': 0})
    """

    name: ClassVar[str] = "precision"
    monotonic: ClassVar[bool] = False
    needs_keys: ClassVar[bool] = False
    default_aggregate: ClassVar[Aggregate] = Aggregate.ARITHMETIC

    def __init__(
        self,
        *,
        gamma: float = 0.5,
        aggregate: Aggregate | str | None = None,
        weights: Mapping[str, float] | None = None,
    ) -> None:
        super().__init__(aggregate=aggregate, weights=weights)
        self._set_gamma(gamma)

    def per_attribute(
        self, stats: ClassStats, suppressed: npt.NDArray[np.bool_], context: MetricContext
    ) -> FloatArray:
        """``v_j`` per column (see the class docstring)."""
        r = _relative_levels(stats.levels, _heights(stats.columns, context))
        if self.monotonic:
            out: FloatArray = r * self.g_factor
            return out
        _, _, u_rows, s_rows = split_sizes(stats, suppressed)
        n = float(context.n_rows)
        if n == 0:
            return np.zeros_like(r)
        out = ((float(u_rows) * r) * self.g_factor + float(s_rows) * self.s_factor) / n
        return out

    def per_attribute_bound(
        self, levels: tuple[int, ...], context: MetricContext
    ) -> FloatArray | None:
        """``gFactor * t_j / h_j`` (monotonic; exact) or ``min(that, sFactor)`` (with a
        ``1e-12`` relative margin for rounding)."""
        r = _relative_levels(levels, _heights(context.quasi_identifiers, context))
        if self.monotonic:
            out: FloatArray = r * self.g_factor
            return out
        out = np.minimum(r * self.g_factor, self.s_factor) * MARGIN
        return out

    def per_attribute_cells(self, release: ReleaseCells, context: MetricContext) -> FloatArray:
        """``v_j`` with ``U * t_j / h_j`` replaced by the sum of each released cell's
        ``level / h_j`` (suppressed cells as in :meth:`per_attribute`)."""
        n = float(context.n_rows)
        heights = _heights(release.columns, context)
        s_rows = float(release.suppressed_rows)
        out = np.zeros(len(release.columns), dtype=np.float64)
        if n == 0:
            return out
        for j, c in enumerate(release.cells):
            h = heights[j]
            counted = c.kept + c.suppressed if self.monotonic else c.kept
            rel = float(np.dot(counted, c.level)) / h if h else 0.0
            if self.monotonic:
                out[j] = rel / n * self.g_factor
            else:
                out[j] = (rel * self.g_factor + s_rows * self.s_factor) / n
        return out

    def _params(self) -> dict[str, Any]:
        return {"gamma": self.gamma, **super()._params()}


class MonotonicPrecision(Precision):
    """Monotonic precision (ARX ``MetricMDPrecision``, ``createPrecisionMetric(true)``).

    ``v_j = gFactor * t_j / h_j`` (0 if ``h_j = 0``); suppression is ignored. Aggregate
    ARITHMETIC_MEAN by default. Monotonic; :meth:`lower_bound` equals the loss.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "sex": ["F", "M"] * 4})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 4}}],
    ...        "metric": {"name": "precision", "monotonic": True}}
    >>> result = anonlab.anonymize(t, job)
    >>> type(result.problem.metric).__name__, result.loss
    ('MonotonicPrecision', 0.25)
    """

    monotonic: ClassVar[bool] = True


# =========================================================================== Discernibility
class Discernibility(Metric):
    """Discernibility DM, non-monotonic (ARX ``MetricSDNMDiscernability``).

    ``DM = sum_{E not suppressed} count(E)^2 + sum_{E suppressed} N * count(E)``: every
    suppressed record costs ``N``. No gs-factor.

    :meth:`lower_bounds` is ``N^2 / C`` with ``C`` an upper bound on the node's number of
    classes (``DM >= DM* >= N^2 / C`` since ``N >= count(E)``); the search raises it from
    the classes it computes (:meth:`successor_bound`).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "sex": ["F", "M"] * 4})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "discernibility"}
    >>> result = anonlab.anonymize(t, job)
    >>> Discernibility().name, result.loss, result.transformation
    ('discernibility', 32.0, {'zip': 1, 'sex': 1})
    """

    name: ClassVar[str] = "discernibility"
    monotonic: ClassVar[bool] = False
    needs_keys: ClassVar[bool] = False

    def loss(
        self, stats: ClassStats, suppressed: npt.NDArray[np.bool_], context: MetricContext
    ) -> float:
        """Return DM (see the class docstring)."""
        sizes, mask, _, s_rows = split_sizes(stats, suppressed)
        if self.monotonic:
            return float(int(np.dot(sizes, sizes)))
        kept = np.where(mask, 0, sizes)
        return float(int(np.dot(kept, kept)) + int(context.n_rows) * s_rows)

    def lower_bound(self, levels: tuple[int, ...], context: MetricContext) -> float | None:
        """``N^2 / C`` (see the class docstring)."""
        return float(self.lower_bounds(np.asarray([levels]), context)[0])

    def lower_bounds(self, nodes: npt.NDArray[np.int64], context: MetricContext) -> FloatArray:
        """:meth:`lower_bound` of every node at once."""
        n = float(context.n_rows)
        classes = max_classes(context, nodes)
        out: FloatArray = np.divide(n * n, classes, out=np.zeros_like(classes), where=classes > 0)
        return out

    def successor_bound(self, sizes: npt.NDArray[np.int64], context: MetricContext) -> float | None:
        """``sum count^2`` of a node's classes: every more general node has classes that are
        unions of these, so its DM* (and its DM, for any suppression) is at least that.

        DM (not DM*) counts each record by its class size, or ``N`` if suppressed: in a
        release whose unsuppressed classes hold at least ``k = context.min_class_size``
        records, a record of a class smaller than ``k`` here costs at least ``k`` (see
        :func:`~anonlab.metrics._util.floored_squares`)."""
        return floored_squares(sizes, 1 if self.monotonic else context.min_class_size)

    def release_loss(self, release: ReleaseCells, context: MetricContext) -> float:
        """DM of the released classes (a class-based metric: levels do not enter)."""
        return self.loss(_classes_of(release), release.class_suppressed, context)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class MonotonicDiscernibility(Discernibility):
    """Discernibility DM*, monotonic (ARX ``MetricSDDiscernability``).

    ``DM* = sum_{E} count(E)^2`` over all classes: suppressed classes count like ordinary
    ones, so suppression is ignored. Monotonic.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "sex": ["F", "M"] * 4})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 4}}],
    ...        "metric": {"name": "discernibility", "monotonic": True}}
    >>> result = anonlab.anonymize(t, job)
    >>> type(result.problem.metric).__name__, result.loss
    ('MonotonicDiscernibility', 32.0)
    """

    monotonic: ClassVar[bool] = True


# =========================================================================== AECS
class AverageClassSize(Metric):
    """Average equivalence class size (ARX ``MetricSDAECS``).

    ``AECS = N / (C_ns * sFactor + [S > 0] * gFactor)`` where ``C_ns`` is the number of
    classes not suppressed and all suppressed records form one extra class (ARX swaps the
    two factors on purpose). At ``gamma = 0.5``: ``N / (C_ns + [S > 0])``. A zero
    denominator gives infinity (0 for an empty table). Non-monotonic.

    :meth:`lower_bound` is ``N / C`` with ``C`` an upper bound on the node's classes.

    Parameters
    ----------
    gamma : float
        gs-factor in ``[0, 1]`` (default 0.5).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "sex": ["F", "M"] * 4})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "aecs"}
    >>> result = anonlab.anonymize(t, job)
    >>> AverageClassSize().name, result.loss, result.transformation
    ('aecs', 4.0, {'zip': 1, 'sex': 1})
    """

    name: ClassVar[str] = "aecs"
    monotonic: ClassVar[bool] = False
    needs_keys: ClassVar[bool] = False

    def __init__(self, *, gamma: float = 0.5) -> None:
        self.gamma = check_gamma(gamma, type(self).__name__)
        self.g_factor, self.s_factor = gs_factors(self.gamma)

    def loss(
        self, stats: ClassStats, suppressed: npt.NDArray[np.bool_], context: MetricContext
    ) -> float:
        """Return AECS (see the class docstring)."""
        sizes, mask, _, s_rows = split_sizes(stats, suppressed)
        n = float(context.n_rows)
        c_ns = float(int(np.count_nonzero((~mask) & (sizes > 0))))
        den = c_ns * self.s_factor + (self.g_factor if s_rows > 0 else 0.0)
        if den == 0:
            return float("inf") if n > 0 else 0.0
        return n / den

    def release_loss(self, release: ReleaseCells, context: MetricContext) -> float:
        """AECS of the released classes (a class-based metric: levels do not enter)."""
        return self.loss(_classes_of(release), release.class_suppressed, context)

    def lower_bound(self, levels: tuple[int, ...], context: MetricContext) -> float | None:
        """``N / C`` (see the class docstring)."""
        return float(self.lower_bounds(np.asarray([levels]), context)[0])

    def lower_bounds(self, nodes: npt.NDArray[np.int64], context: MetricContext) -> FloatArray:
        """:meth:`lower_bound` of every node at once."""
        n = float(context.n_rows)
        classes = max_classes(context, nodes)
        out: FloatArray = np.divide(n, classes, out=np.zeros_like(classes), where=classes > 0)
        return out

    def successor_bound(self, sizes: npt.NDArray[np.int64], context: MetricContext) -> float | None:
        """``N / (C' sFactor + gFactor)``: a more general node's classes are unions of these;
        each of its unsuppressed classes (at least ``k = context.min_class_size`` records) holds one
        of the ``b`` classes of at least ``k`` records here, or ``k`` records of the ``r``
        in smaller ones, so it has at most ``C' = b + floor(r / k)`` of them (plus the class
        of the suppressed records)."""
        s = np.asarray(sizes, dtype=np.int64)
        k = max(int(context.min_class_size), 1)
        big = s >= k
        most = int(np.count_nonzero(big)) + (int(s.sum()) - int(np.dot(s, big))) // k
        n = float(context.n_rows)
        den = float(most) * self.s_factor + self.g_factor
        return n / den if den > 0 else 0.0

    def __repr__(self) -> str:
        return f"{type(self).__name__}(gamma={self.gamma!r})"


# =========================================================================== Entropy
def _generalization_entropy(context: MetricContext, column: str, level: int) -> float:
    """``G_j = sum_{v: a(v) > 0} a(v) * log2(a(v) / b_j(gen(v)))`` (<= 0), cached."""

    def make() -> float:
        a = value_counts(context, column)
        mapping, n_labels = base_map(context, column, level)
        b = np.bincount(mapping, weights=a, minlength=n_labels)[mapping]
        present = a > 0
        ap = a[present]
        return float(np.sum(ap * (np.log(ap / b[present]) / _LN2)))

    key = ("nu_entropy", column, level)
    if key not in context.cache:
        context.cache[key] = make()
    result: float = context.cache[key]
    return result


class NonUniformEntropy(GsMixin, MultiDimensionalMetric):
    """Non-uniform entropy, non-monotonic (ARX ``MetricMDNUNMEntropy``, the default of
    ``createEntropyMetric()``).

    With ``a(v)`` the records whose original value is ``v`` and ``b_j(g)`` the records whose
    value generalizes to ``g`` at level ``t_j`` (suppressed records included in both),
    ``G_j = sum_v a(v) * log2(a(v) / b_j(gen(v)))``. With ``c_j(g)`` the suppressed records
    whose generalized value is ``g`` and ``S`` all suppressed records,
    ``v_j = round(-(gFactor * G_j + sFactor * sum_g c_j(g) * log2(c_j(g) / S)))``: the added
    term is the entropy of moving the suppressed records to ``*``. Aggregate SUM by default.

    :meth:`lower_bound` is the aggregate of ``round(-gFactor * G_j)`` (the suppression term
    is never negative); it needs no classes.

    Parameters
    ----------
    gamma : float
        gs-factor in ``[0, 1]`` (default 0.5).
    aggregate : str, optional
        Aggregate function (default ``"sum"``).
    weights : Mapping[str, float], optional
        Attribute weights (default: the context's).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "sex": ["F", "M"] * 4})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "entropy"}
    >>> result = anonlab.anonymize(t, job)
    >>> NonUniformEntropy().name, result.loss, result.transformation
    ('entropy', 16.0, {'zip': 1, 'sex': 1})
    """

    name: ClassVar[str] = "entropy"
    monotonic: ClassVar[bool] = False
    default_aggregate: ClassVar[Aggregate] = Aggregate.SUM

    def __init__(
        self,
        *,
        gamma: float = 0.5,
        aggregate: Aggregate | str | None = None,
        weights: Mapping[str, float] | None = None,
    ) -> None:
        super().__init__(aggregate=aggregate, weights=weights)
        self._set_gamma(gamma)

    def _g_terms(
        self, columns: tuple[str, ...], levels: tuple[int, ...], context: MetricContext
    ) -> FloatArray:
        return np.array(
            [
                self.g_factor * _generalization_entropy(context, c, int(t))
                for c, t in zip(columns, levels)
            ],
            dtype=np.float64,
        )

    def per_attribute(
        self, stats: ClassStats, suppressed: npt.NDArray[np.bool_], context: MetricContext
    ) -> FloatArray:
        """``v_j`` per column (see the class docstring)."""
        g_terms = self._g_terms(stats.columns, stats.levels, context)
        if self.monotonic:
            return arx_round(-g_terms)
        sizes, mask, _, s_rows = split_sizes(stats, suppressed)
        if s_rows == 0:
            return arx_round(-g_terms)
        keys = require_keys(stats, type(self).__name__)
        supp_sizes = sizes[mask].astype(np.float64)
        total = float(s_rows)
        inner = np.empty(len(stats.columns), dtype=np.float64)
        for j in range(len(stats.columns)):
            c = np.bincount(keys[mask, j], weights=supp_sizes)
            c = c[c > 0]
            term = float(np.sum(c * (np.log(c / total) / _LN2)))
            inner[j] = g_terms[j] + self.s_factor * term
        return arx_round(-inner)

    def per_attribute_bound(
        self, levels: tuple[int, ...], context: MetricContext
    ) -> FloatArray | None:
        """``round(-gFactor * G_j)`` per quasi-identifier (exact for the monotonic variant)."""
        return arx_round(-self._g_terms(context.quasi_identifiers, levels, context))

    def per_attribute_cells(self, release: ReleaseCells, context: MetricContext) -> FloatArray:
        """``v_j`` of a release on mixed levels: ``G_j`` is the entropy of the original value
        given the released label, ``sum_{g,v} n(g,v) log2(n(g,v) / n(g))`` over every record
        (``n(g,v) = a(v)`` and ``n(g) = b_j(g)`` when all cells share a level); the
        suppression term counts the suppressed records by their released label ``g``."""
        s_rows = float(release.suppressed_rows)
        inner = np.empty(len(release.columns), dtype=np.float64)
        for j, c in enumerate(release.cells):
            pairs, inv = np.unique(np.stack([c.label, c.value]), axis=1, return_inverse=True)
            n_gv = np.bincount(inv.reshape(-1), weights=(c.kept + c.suppressed).astype(np.float64))
            n_g = np.bincount(pairs[0], weights=n_gv)[pairs[0]]
            present = n_gv > 0
            g_term = float(np.sum(n_gv[present] * (np.log(n_gv[present] / n_g[present]) / _LN2)))
            inner[j] = self.g_factor * g_term
            if not self.monotonic and s_rows > 0:
                cg = np.bincount(c.label, weights=c.suppressed.astype(np.float64))
                cg = cg[cg > 0]
                inner[j] += self.s_factor * float(np.sum(cg * (np.log(cg / s_rows) / _LN2)))
        return arx_round(-inner)

    def _params(self) -> dict[str, Any]:
        return {"gamma": self.gamma, **super()._params()}


class MonotonicNonUniformEntropy(NonUniformEntropy):
    """Non-uniform entropy, monotonic (ARX ``MetricMDNUEntropy``, ``createEntropyMetric(true)``).

    ``v_j = round(-gFactor * G_j)``: suppressed records are charged as if they were only
    generalized (suppression is ignored). Monotonic; :meth:`lower_bound` equals the loss.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "sex": ["F", "M"] * 4})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 4}}],
    ...        "metric": {"name": "entropy", "monotonic": True}}
    >>> result = anonlab.anonymize(t, job)
    >>> type(result.problem.metric).__name__, result.loss
    ('MonotonicNonUniformEntropy', 16.0)
    """

    monotonic: ClassVar[bool] = True


# =========================================================================== Loss
class Loss(GsMixin, MultiDimensionalMetric):
    """ARX's Loss metric ("LM", Iyengar's generalized loss; ARX ``MetricMDNMLoss``).

    ``share_j(g)`` at level ``L`` is the number of hierarchy rows whose level-``L`` label is
    ``g`` divided by ``|dom_j|``, the number of hierarchy rows (leaves that never occur in the
    data count too; a null counts as one leaf). Per attribute,
    ``acc_j = sum_{E not suppressed} count(E) * share_j(E_j) * gFactor`` plus, per suppressed
    class, ``count(E)`` if ``sFactor = 1`` else ``count*share + sFactor*(count - count*share)``;
    ``v_j = round(max(0, (acc_j - min_j) / (N - min_j)))`` with ``min_j = gFactor*N/|dom_j|``
    (0 when ``N = min_j``). Aggregate GEOMETRIC_MEAN by default. Non-monotonic.

    :meth:`lower_bound` replaces every suppressed record by its generalized value:
    ``acc_j >= gFactor * sum_v a(v) * share_j(gen(v))``, computed from the base classes.

    Parameters
    ----------
    gamma : float
        gs-factor in ``[0, 1]`` (default 0.5).
    aggregate : str, optional
        Aggregate function (default ``"geometric"``).
    weights : Mapping[str, float], optional
        Attribute weights (default: the context's).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "sex": ["F", "M"] * 4})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "loss"}
    >>> result = anonlab.anonymize(t, job)
    >>> Loss().name, round(result.loss, 6), result.transformation
    ('loss', 0.414214, {'zip': 2, 'sex': 0})
    """

    name: ClassVar[str] = "loss"
    monotonic: ClassVar[bool] = False
    default_aggregate: ClassVar[Aggregate] = Aggregate.GEOMETRIC

    def __init__(
        self,
        *,
        gamma: float = 0.5,
        aggregate: Aggregate | str | None = None,
        weights: Mapping[str, float] | None = None,
    ) -> None:
        super().__init__(aggregate=aggregate, weights=weights)
        self._set_gamma(gamma)

    def _normalize(self, acc_times_dom: FloatArray, doms: FloatArray, n: float) -> FloatArray:
        acc = acc_times_dom / doms
        low = self.g_factor * n / doms
        den = n - low
        ratio = np.divide(acc - low, den, out=np.zeros_like(acc), where=den != 0)
        ratio = np.where(ratio >= 0, ratio, 0.0)  # also maps NaN to 0, like ARX
        return arx_round(ratio)

    def per_attribute(
        self, stats: ClassStats, suppressed: npt.NDArray[np.bool_], context: MetricContext
    ) -> FloatArray:
        """``v_j`` per column (see the class docstring)."""
        sizes, mask, _, s_rows = split_sizes(stats, suppressed)
        m = len(stats.columns)
        doms = np.array([domain_size(context, c) for c in stats.columns], dtype=np.float64)
        num = np.empty(m, dtype=np.float64)  # acc_j * |dom_j|
        for j in range(m):
            lc = class_leaf_counts(stats, j, context)
            x_ns = float(int(np.dot(sizes[~mask], lc[~mask])))
            y_s = float(int(np.dot(sizes[mask], lc[mask])))
            if self.s_factor == 1.0:
                supp = float(s_rows) * doms[j]
            else:
                supp = y_s + self.s_factor * (float(s_rows) * doms[j] - y_s)
            num[j] = self.g_factor * x_ns + supp
        return self._normalize(num, doms, float(context.n_rows))

    def per_attribute_cells(self, release: ReleaseCells, context: MetricContext) -> FloatArray:
        """``v_j`` with each record's share taken at its own cell's level."""
        s_rows = float(release.suppressed_rows)
        doms = np.array([domain_size(context, c) for c in release.columns], dtype=np.float64)
        num = np.empty(len(release.columns), dtype=np.float64)
        for j, (col, c) in enumerate(zip(release.columns, release.cells)):
            lc = cell_leaf_counts(context, col, c)
            x_ns = float(np.dot(c.kept.astype(np.float64), lc))
            y_s = float(np.dot(c.suppressed.astype(np.float64), lc))
            if self.s_factor == 1.0:
                supp = s_rows * doms[j]
            else:
                supp = y_s + self.s_factor * (s_rows * doms[j] - y_s)
            num[j] = self.g_factor * x_ns + supp
        return self._normalize(num, doms, float(context.n_rows))

    def per_attribute_bound(
        self, levels: tuple[int, ...], context: MetricContext
    ) -> FloatArray | None:
        """The generalization-only ``v_j`` (see the class docstring)."""
        qis = context.quasi_identifiers
        doms = np.array([domain_size(context, c) for c in qis], dtype=np.float64)
        num = np.empty(len(qis), dtype=np.float64)
        for j, (col, lv) in enumerate(zip(qis, levels)):
            a = value_counts(context, col)
            lc = base_leaf_counts(context, col, int(lv)).astype(np.float64)
            num[j] = self.g_factor * float(np.dot(a, lc))
        if not (self.g_factor == 1.0 and self.s_factor == 1.0):
            num *= MARGIN  # exact integers otherwise, so no margin is needed
        return self._normalize(num, doms, float(context.n_rows))

    def _params(self) -> dict[str, Any]:
        return {"gamma": self.gamma, **super()._params()}
