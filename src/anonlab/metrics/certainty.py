"""Normalized and global certainty penalty, NCP and GCP (Murakami & Uno 2017, §2.3).

For a generalized value ``A(q, r)`` of quasi-identifier ``q`` in record ``r``, with
``|A(q, r)|`` the number of original values (leaves) it covers and ``|A*|`` that of the top of
the hierarchy (the whole domain),

    NCP(q, r) = (|A(q, r)| - 1) / (|A*| - 1)                                   (Eq. 1)
    NCP(T)    = sum_q sum_r NCP(q, r)                                          (Eq. 2)
    GCP(T)    = NCP(T) / (|QIDs| * |T|)                                        (Eq. 3)

Choices, documented once here:

* ``|A|`` is counted on the hierarchy: the number of hierarchy rows whose label at the level
  is the value; ``|A*|`` is the number of hierarchy rows. The paper defines cardinality only;
  it is used for every attribute, intervals included (a materialized interval hierarchy lists
  its values). A null is a value of its own (one leaf).
* A one-value domain (``|A*| = 1``) has ``NCP = 0`` (nothing can be uncertain).
* A suppressed record counts as fully generalized: ``A(q, r) = A*`` and ``NCP(q, r) = 1`` for
  every quasi-identifier (the paper's "concealing" of a value, §2.3, Definition 2).
* Weights: ``NCP(T) = sum_q w_q sum_r NCP(q, r)`` and ``GCP = NCP(T) / (|T| * sum_q w_q)``,
  with weights normalised by the largest one; equal weights give the paper's formulas.

References
----------
.. [1] K. Murakami and T. Uno, "Optimization algorithm for k-anonymization of datasets with
   low information loss", Int. J. Inf. Secur. 17 (2018), §2.3, Eqs. (1)-(3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._typing import FloatArray
from anonlab.data.stats import ClassStats
from anonlab.metrics._util import (
    base_leaf_counts,
    cell_leaf_counts,
    check_weights,
    class_leaf_counts,
    domain_size,
    normalized_weights,
    split_sizes,
    value_counts,
    weighted_sum,
)
from anonlab.metrics.base import Metric, MetricContext, ReleaseCells

__all__ = [
    "GlobalCertaintyPenalty",
    "NormalizedCertaintyPenalty",
    "lost_leaves",
    "lost_leaves_cells",
]


def lost_leaves(
    stats: ClassStats, suppressed: npt.NDArray[np.bool_], context: MetricContext
) -> tuple[FloatArray, FloatArray]:
    """Per column of ``stats``: ``sum_r (|A(q, r)| - 1)`` over all records and ``|A*|``.

    A suppressed record covers the whole domain (``|A*| - 1`` lost leaves). The sums are
    exact integers (returned as floats).
    """
    sizes, mask, _, s_rows = split_sizes(stats, suppressed)
    m = len(stats.columns)
    lost = np.empty(m, dtype=np.float64)
    doms = np.empty(m, dtype=np.float64)
    kept = sizes[~mask]
    for j, col in enumerate(stats.columns):
        dom = domain_size(context, col)
        lc = class_leaf_counts(stats, j, context)[~mask]
        lost[j] = float(int(np.dot(kept, lc - 1)) + s_rows * (dom - 1))
        doms[j] = dom
    return lost, doms


def lost_leaves_cells(
    release: ReleaseCells, context: MetricContext
) -> tuple[FloatArray, FloatArray]:
    """:func:`lost_leaves` of a release whose cells sit on different levels: each released
    record loses the leaves of its own cell's label."""
    m = len(release.columns)
    lost = np.empty(m, dtype=np.float64)
    doms = np.empty(m, dtype=np.float64)
    s_rows = release.suppressed_rows
    for j, (col, c) in enumerate(zip(release.columns, release.cells)):
        dom = domain_size(context, col)
        lc = cell_leaf_counts(context, col, c)
        lost[j] = float(np.dot(c.kept.astype(np.float64), lc - 1.0)) + s_rows * (dom - 1)
        doms[j] = dom
    return lost, doms


def lost_leaves_bound(
    levels: tuple[int, ...], context: MetricContext
) -> tuple[FloatArray, FloatArray]:
    """Per quasi-identifier: ``sum_v a(v) * (|gen_t(v)| - 1)`` (every record generalized, none
    suppressed; a lower bound of :func:`lost_leaves` for any suppression) and ``|A*|``."""
    qis = context.quasi_identifiers
    lost = np.empty(len(qis), dtype=np.float64)
    doms = np.empty(len(qis), dtype=np.float64)
    for j, (col, lv) in enumerate(zip(qis, levels)):
        a = value_counts(context, col)
        lc = base_leaf_counts(context, col, int(lv)).astype(np.float64)
        lost[j] = float(np.dot(a, lc - 1.0))
        doms[j] = domain_size(context, col)
    return lost, doms


def _ncp_per_attribute(lost: FloatArray, doms: FloatArray) -> FloatArray:
    out: FloatArray = np.divide(lost, doms - 1.0, out=np.zeros_like(lost), where=doms > 1)
    return out


class NormalizedCertaintyPenalty(Metric):
    """NCP(T), the total normalized certainty penalty of the table (Eqs. 1-2).

    ``NCP(T) = sum_q w_q * sum_r (|A(q, r)| - 1) / (|A*| - 1)``, in ``[0, |T| * sum_q w_q]``;
    a suppressed record counts as fully generalized (``NCP(q, r) = 1``). See the module
    docstring for the choices. Non-monotonic with suppression (a generalization can lower
    suppression); :meth:`lower_bound` charges every record its generalized value only.

    Parameters
    ----------
    weights : Mapping[str, float], optional
        Attribute weights (default: the context's), normalised by the largest.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "sex": ["F", "M"] * 4})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "ncp"}
    >>> result = anonlab.anonymize(t, job)
    >>> NormalizedCertaintyPenalty().name, result.loss, result.transformation
    ('ncp', 8.0, {'zip': 2, 'sex': 0})
    """

    name: ClassVar[str] = "ncp"
    monotonic: ClassVar[bool] = False

    def __init__(self, *, weights: Mapping[str, float] | None = None) -> None:
        self.weights = check_weights(weights, type(self).__name__)

    def per_attribute(
        self, stats: ClassStats, suppressed: npt.NDArray[np.bool_], context: MetricContext
    ) -> FloatArray:
        """``sum_r NCP(q, r)`` per column, unweighted."""
        return _ncp_per_attribute(*lost_leaves(stats, suppressed, context))

    def per_attribute_cells(self, release: ReleaseCells, context: MetricContext) -> FloatArray:
        """``sum_r NCP(q, r)`` per column of a release whose cells sit on different levels
        (Eq. 1 per cell), unweighted."""
        return _ncp_per_attribute(*lost_leaves_cells(release, context))

    def combine(
        self, columns: Sequence[str], values: npt.ArrayLike, context: MetricContext
    ) -> float:
        """``sum_q w_q * values_q``: NCP(T) from its per-attribute sums."""
        w = normalized_weights(columns, context, self.weights)
        return weighted_sum(w, values)

    def loss(
        self, stats: ClassStats, suppressed: npt.NDArray[np.bool_], context: MetricContext
    ) -> float:
        """Return NCP(T) (see the class docstring)."""
        return self.combine(stats.columns, self.per_attribute(stats, suppressed, context), context)

    def release_loss(self, release: ReleaseCells, context: MetricContext) -> float:
        """NCP(T) (GCP(T)) of a release whose cells sit on different levels (Eq. 1 per cell)."""
        return self.combine(release.columns, self.per_attribute_cells(release, context), context)

    def lower_bound(self, levels: tuple[int, ...], context: MetricContext) -> float | None:
        """NCP(T) with every record generalized and none suppressed."""
        lvl = tuple(int(x) for x in levels)
        values = _ncp_per_attribute(*lost_leaves_bound(lvl, context))
        return self.combine(context.quasi_identifiers, values, context)

    def _params(self) -> dict[str, Any]:
        return {} if self.weights is None else {"weights": self.weights}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({args})"


class GlobalCertaintyPenalty(NormalizedCertaintyPenalty):
    """GCP(T), the global certainty penalty (Eq. 3), in ``[0, 1]``.

    ``GCP(T) = NCP(T) / (|T| * sum_q w_q)`` with ``|T| = N`` (``MetricContext.n_rows``); with
    equal weights this is the paper's ``NCP(T) / (|QIDs| * |T|)``. A suppressed record counts
    as fully generalized. Non-monotonic with suppression; :meth:`lower_bound` charges every
    record its generalized value only.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "sex": ["F", "M"] * 4})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "gcp"}
    >>> result = anonlab.anonymize(t, job)
    >>> GlobalCertaintyPenalty().name, result.loss, result.transformation
    ('gcp', 0.5, {'zip': 2, 'sex': 0})
    """

    name: ClassVar[str] = "gcp"

    def combine(
        self, columns: Sequence[str], values: npt.ArrayLike, context: MetricContext
    ) -> float:
        """``sum_q w_q * values_q / (|T| * sum_q w_q)``: GCP(T) from the per-attribute sums."""
        w = normalized_weights(columns, context, self.weights)
        den = float(context.n_rows) * weighted_sum(w, np.ones_like(w))
        return weighted_sum(w, values) / den if den > 0 else 0.0
