"""The cluster recoding: rows in clusters, each cluster's quasi-identifiers generalized on
their hierarchies, and each record's sensitive value generalized on the sensitive tree.

Personalized privacy (Song et al. 2015) releases such a table: a cluster's members share one
label per quasi-identifier (the lowest level at which they agree), and a record whose leakage
is too high has its own or another record's sensitive value raised towards the root. Clusters
whose labels coincide are one released class; the release layer groups the released labels
again, as for every recoding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab.data.hierarchy import Hierarchy
from anonlab.data.table import EncodedTable
from anonlab.exceptions import ParameterError
from anonlab.release.problem import Problem
from anonlab.release.recoding import Levels, generalize_cells

__all__ = ["Clusters"]


@dataclass
class Clusters(Levels):
    """Rows grouped in clusters; quasi-identifiers per cluster, sensitive values per record.

    Parameters
    ----------
    levels : ndarray of int64, shape (clusters, quasi-identifiers)
        The level of each cluster's label on each quasi-identifier (problem order).
    group : ndarray of int64, shape (table rows,)
        The cluster of each row.
    rows : ndarray of int64, optional
        The rows kept (None: every row).
    sensitive : str, optional
        The sensitive attribute whose values are generalized (None: none is).
    sensitive_hierarchy : Hierarchy, optional
        Its tree.
    sensitive_levels : ndarray of int64, shape (table rows,), optional
        The level each row's sensitive value is released at (0: as it is).

    Examples
    --------
    >>> import numpy as np
    >>> from anonlab import EncodedTable
    >>> from anonlab.data.builders import masking_hierarchy
    >>> from anonlab.metrics.certainty import NormalizedCertaintyPenalty
    >>> from anonlab.models import KAnonymity
    >>> from anonlab.release.problem import Problem
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"]})
    >>> p = Problem(t, ("zip",), {"zip": masking_hierarchy(t["zip"].categories)},
    ...             (KAnonymity(2),), NormalizedCertaintyPenalty())
    >>> clusters = Clusters(levels=np.array([[1], [1]]), group=np.array([0, 0, 1, 1]))
    >>> clusters.apply(p)["zip"].labels().tolist()
    ['435*', '435*', '436*', '436*']
    """

    sensitive: str | None = None
    sensitive_hierarchy: Hierarchy | None = None
    sensitive_levels: npt.NDArray[np.int64] | None = None

    def __post_init__(self) -> None:
        if self.sensitive is not None and (
            self.sensitive_hierarchy is None or self.sensitive_levels is None
        ):
            raise ParameterError(
                f"A cluster recoding that generalizes {self.sensitive!r} needs its tree and "
                "a level per row."
            )

    def _sensitive_levels(self) -> npt.NDArray[np.int64]:
        assert self.sensitive_levels is not None
        lv = np.asarray(self.sensitive_levels, dtype=np.int64)
        return lv if self.rows is None else lv[self.rows]

    def apply(self, problem: Problem) -> EncodedTable:
        """Each quasi-identifier at its cluster's level, each sensitive value at its row's."""
        released = super().apply(problem)
        if self.sensitive is None:
            return released
        assert self.sensitive_hierarchy is not None
        lv = self._sensitive_levels()
        if not lv.any():
            return released
        col = generalize_cells(released[self.sensitive], self.sensitive_hierarchy, lv)
        return released.with_columns({self.sensitive: col})

    def summary(self, problem: Problem) -> dict[str, Any]:
        """The clusters, their distinct level vectors, the rows on each level of each
        quasi-identifier, and the records whose sensitive value is generalized (per level)."""
        out = super().summary(problem)
        out["clusters"] = int(self.levels_in_use(problem)[1].size)
        if self.sensitive is not None:
            counts = np.bincount(self._sensitive_levels(), minlength=1)
            out["sensitive_rows_per_level"] = {
                self.sensitive: {int(x): int(counts[x]) for x in np.flatnonzero(counts)}
            }
        return out
