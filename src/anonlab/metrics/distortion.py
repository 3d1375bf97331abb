"""Distortion ratio (Wong, Li, Fu & Wang, (alpha,k)-anonymous data publishing, §2).

"The distortion of [a] value is defined in terms of the height of the value generalized": 0
for an original value, 1 one level up the taxonomy, and so on. With ``h_{i,j}`` the height of
attribute ``A_i`` of tuple ``t_j``, ``distortion = sum_{i,j} h_{i,j}``, and the *distortion
ratio* is the distortion of the generalized table divided by that of the fully generalized
table (every value at the root of its taxonomy).

For full-domain generalization at levels ``t_i`` of hierarchies of height ``H_i`` this is

    ratio = sum_i w_i * (U * t_i + S * H_i) / (N * sum_i w_i * H_i)

Choices: the height of a value is its level in the hierarchy (ARX-format hierarchies have
every leaf at depth ``H_i``); a suppressed record's values become ``*``, the root, so it counts
as fully generalized (height ``H_i``); weights (normalised by the largest, default equal)
weight the attributes, and equal weights give the paper's ratio. A table whose hierarchies
all have height 0 has ratio 0.

References
----------
.. [1] R. C.-W. Wong, J. Li, A. W.-C. Fu and K. Wang, "(alpha, k)-anonymous data publishing",
   J. Intell. Inf. Syst. 33 (2009), §2 ("Distortion Ratio or Recoding Cost").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from anonlab.data.stats import ClassStats
from anonlab.metrics._util import (
    check_weights,
    hierarchy_of,
    normalized_weights,
    split_sizes,
    weighted_sum,
)
from anonlab.metrics.base import Metric, MetricContext, ReleaseCells

__all__ = ["DistortionRatio"]


class DistortionRatio(Metric):
    """Distortion ratio of Wong et al. 2009 (see the module docstring for the formula).

    ``ratio = sum_i w_i (U t_i + S H_i) / (N sum_i w_i H_i)`` in ``[0, 1]``; a suppressed
    record counts as fully generalized. Non-monotonic with suppression (a generalization can
    lower suppression); :meth:`lower_bound` is ``sum_i w_i t_i / sum_i w_i H_i``, the ratio
    without suppression.

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
    ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "distortion"}
    >>> result = anonlab.anonymize(t, job)
    >>> DistortionRatio().name, result.loss, result.transformation
    ('distortion', 0.4, {'zip': 1, 'sex': 1})
    """

    name: ClassVar[str] = "distortion"
    monotonic: ClassVar[bool] = False
    needs_keys: ClassVar[bool] = False

    def __init__(self, *, weights: Mapping[str, float] | None = None) -> None:
        self.weights = check_weights(weights, type(self).__name__)

    def _ratio(
        self,
        columns: tuple[str, ...],
        levels: tuple[int, ...],
        u_rows: int,
        s_rows: int,
        context: MetricContext,
    ) -> float:
        heights = [hierarchy_of(context, c).height for c in columns]
        w = normalized_weights(columns, context, self.weights)
        num = weighted_sum(w, [u_rows * int(t) + s_rows * h for t, h in zip(levels, heights)])
        den = float(context.n_rows) * weighted_sum(w, heights)
        return num / den if den > 0 else 0.0

    def loss(
        self, stats: ClassStats, suppressed: npt.NDArray[np.bool_], context: MetricContext
    ) -> float:
        """Return the distortion ratio (see the class docstring)."""
        _, _, u_rows, s_rows = split_sizes(stats, suppressed)
        return self._ratio(stats.columns, stats.levels, u_rows, s_rows, context)

    def release_loss(self, release: ReleaseCells, context: MetricContext) -> float:
        """The distortion ratio of a release whose cells sit on different levels: the sum of
        the heights of the released cells (the paper's definition, cell by cell)."""
        heights = [hierarchy_of(context, c).height for c in release.columns]
        w = normalized_weights(release.columns, context, self.weights)
        s_rows = release.suppressed_rows
        sums = [
            float(np.dot(c.kept.astype(np.float64), c.level)) + s_rows * h
            for c, h in zip(release.cells, heights)
        ]
        den = float(context.n_rows) * weighted_sum(w, heights)
        return weighted_sum(w, sums) / den if den > 0 else 0.0

    def lower_bound(self, levels: tuple[int, ...], context: MetricContext) -> float | None:
        """The ratio with nothing suppressed (exact integers, so a true bound)."""
        return self._ratio(
            context.quasi_identifiers, tuple(levels), int(context.n_rows), 0, context
        )

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({'' if self.weights is None else f'weights={self.weights!r}'})"
        )
