"""Recodings: what an anonymization family returns, each able to produce the released table.

A recoding says what happens to every quasi-identifier cell; applying it to the
:class:`~anonlab.release.problem.Problem`'s table gives the released quasi-identifier
columns (the other columns are released as they are, identifiers never). The shapes:

=============  ==================================================  ===========================
recoding       what it holds                                       families
=============  ==================================================  ===========================
FullDomain     one hierarchy level per quasi-identifier            optimal, incognito,
                                                                   PrivacyFrost2's ``T^G``
Levels         a level vector per group of rows (a class, or a     PrivacyFrost2 partial
               row): cells of one column sit at different levels   domain, local recoding
=============  ==================================================  ===========================

Cluster-based recodings (generalized sensitive values) and cell covers (a record released as
the cover of several records, verified on the anonymity graph) subclass :class:`Recoding`
with ``forms_classes = False`` where their release has no equivalence classes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._typing import IntArray
from anonlab.data.grouping import group_rows, ordered_groups
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.labels import factorize
from anonlab.data.table import EncodedColumn, EncodedTable
from anonlab.exceptions import ParameterError
from anonlab.release.problem import Problem

__all__ = [
    "Recoding",
    "FullDomain",
    "Levels",
    "distinct_vectors",
    "generalize_column",
    "generalize_cells",
]


def generalize_column(col: EncodedColumn, hierarchy: Hierarchy, level: int) -> EncodedColumn:
    """The column with every value replaced by its label at ``level`` of ``hierarchy``.

    The labels in use at ``level`` are encoded (a handful of values, each once), then the
    categories' and the rows' codes are mapped: the same column as encoding the generalized
    rows, without touching each row's or each category's label.
    """
    mapping, labels = hierarchy.generalization(col.categories, level)
    used = np.zeros(labels.size, dtype=bool)
    used[mapping] = True
    at = np.flatnonzero(used)
    codes, categories = factorize(labels[at])
    by_label = np.zeros(labels.size, dtype=np.int32)
    by_label[at] = codes
    return EncodedColumn(col.name, by_label[mapping][col.codes], categories)


def generalize_cells(
    col: EncodedColumn, hierarchy: Hierarchy, levels: npt.NDArray[np.integer]
) -> EncodedColumn:
    """The column with each row's value replaced by its label at that row's level.

    Labels are identified by their text: two cells whose labels read the same are the same
    released value, whatever level they come from.

    Parameters
    ----------
    col : EncodedColumn
        The original column.
    hierarchy : Hierarchy
        Its hierarchy.
    levels : ndarray of int
        One level per row of ``col``.
    """
    mappings, labels = hierarchy.generalizations(col.categories)
    sizes = [lab.size for lab in labels]
    offsets = np.cumsum([0, *sizes[:-1]])
    label_of = (mappings + offsets[:, None]).ravel()  # (level, value): a code over every label
    pair = np.asarray(levels, dtype=np.int64) * mappings.shape[1] + col.codes
    inverse, _, used = ordered_groups(label_of[pair], sum(sizes))
    # the same text: the same value
    text_codes, categories = factorize(np.concatenate(labels)[used])
    return EncodedColumn(col.name, text_codes[inverse], categories)


class Recoding(ABC):
    """What an anonymization algorithm returns: a statement per quasi-identifier cell.

    Attributes
    ----------
    forms_classes : bool
        Whether the release forms equivalence classes (then it is verified by grouping the
        released labels); False only for a cell cover.
    verifier : str
        The key of the verifier in :data:`anonlab.release.verify.VERIFIERS`.
    rows : ndarray of int64, optional
        The rows of the table the release keeps, by position (None: every row). Rows an
        algorithm removes before the release (PrivacyFrost2's pre-sampling) are not here;
        rows suppressed because their class fails a model are decided by the verification.
    """

    forms_classes: ClassVar[bool] = True
    verifier: ClassVar[str] = "classes"
    rows: IntArray | None

    @abstractmethod
    def row_levels(self, problem: Problem) -> npt.NDArray[np.integer]:
        """The level of each released cell: shape (rows kept, quasi-identifiers)."""

    @abstractmethod
    def apply(self, problem: Problem) -> EncodedTable:
        """The table to release: the kept rows, quasi-identifiers generalized, the other
        columns as they are (identifiers are dropped by the verification)."""

    @abstractmethod
    def summary(self, problem: Problem) -> dict[str, Any]:
        """What a report prints: the levels, or how many cells sit on each level."""

    @property
    def uniform(self) -> bool:
        """Whether every cell of a column sits on one level (a full-domain release)."""
        return False

    def kept(self, problem: Problem) -> EncodedTable:
        """The rows of the table this recoding keeps."""
        return problem.table if self.rows is None else problem.table.take(self.rows)


@dataclass
class FullDomain(Recoding):
    """Full-domain generalization: one hierarchy level per quasi-identifier.

    Parameters
    ----------
    levels : Mapping[str, int]
        The level of each quasi-identifier.
    rows : ndarray of int64, optional
        The rows kept (None: every row).
    """

    levels: Mapping[str, int]
    rows: IntArray | None = None

    def __post_init__(self) -> None:
        self.levels = {str(q): int(v) for q, v in self.levels.items()}

    @property
    def uniform(self) -> bool:
        """True: one level per column."""
        return True

    def vector(self, problem: Problem) -> tuple[int, ...]:
        """The levels in the problem's quasi-identifier order."""
        missing = [q for q in problem.quasi_identifiers if q not in self.levels]
        if missing:
            raise ParameterError(f"The recoding has no level for {missing[0]!r}.")
        return tuple(self.levels[q] for q in problem.quasi_identifiers)

    def row_levels(self, problem: Problem) -> npt.NDArray[np.int64]:
        """Every row at the recoding's levels."""
        n = problem.n_rows if self.rows is None else int(self.rows.size)
        return np.broadcast_to(
            np.asarray(self.vector(problem), dtype=np.int64), (n, len(self.levels))
        )

    def apply(self, problem: Problem) -> EncodedTable:
        """Each quasi-identifier at its level; quasi-identifiers are released as labels."""
        table = self.kept(problem)
        return table.with_columns(
            {
                q: generalize_column(table[q], problem.hierarchies[q], lv) if lv else table[q]
                for q, lv in zip(problem.quasi_identifiers, self.vector(problem))
            }
        )

    def summary(self, problem: Problem) -> dict[str, Any]:
        """``{"levels": {attribute: level}}``."""
        return {"levels": dict(zip(problem.quasi_identifiers, self.vector(problem)))}


@dataclass
class Levels(Recoding):
    """Cells of a column on different levels: a level vector per group of rows.

    ``levels[group[r]]`` is the level vector of row ``r`` of the table: a group may be a class
    (PrivacyFrost2's partial domain: the groups are the base classes) or a row (local
    recoding: ``group = arange(n)``).

    Parameters
    ----------
    levels : ndarray of int, shape (groups, quasi-identifiers)
        The level vector of each group, quasi-identifiers in the problem's order (any
        integer type: the row levels keep it).
    group : ndarray of int64, shape (table rows,)
        The group of each row of the table.
    rows : ndarray of int64, optional
        The rows kept (None: every row).
    """

    levels: npt.NDArray[np.integer]
    group: npt.NDArray[np.int64]
    rows: IntArray | None = None
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def row_levels(self, problem: Problem) -> npt.NDArray[np.integer]:
        """The level vector of each kept row."""
        hit = self._cache.get("row_levels")
        if hit is None:
            g = self.group if self.rows is None else self.group[self.rows]
            levels = np.asarray(self.levels)
            if levels.ndim != 2 or levels.shape[1] != len(problem.quasi_identifiers):
                raise ParameterError(
                    f"The level vectors have {levels.shape[-1]} entries; the problem has "
                    f"{len(problem.quasi_identifiers)} quasi-identifiers."
                )
            # column-major, gathered column by column (the release and its measures read it
            # by column), in the levels' own integer type
            hit = np.take(np.ascontiguousarray(levels.T), g, axis=1).T
            low = np.asarray(problem.min_levels)
            high = np.asarray(problem.max_levels)
            if hit.size and (bool((hit < low).any()) or bool((hit > high).any())):
                j = int(np.flatnonzero(((hit < low) | (hit > high)).any(axis=0))[0])
                raise ParameterError(
                    f"A level of quasi-identifier {problem.quasi_identifiers[j]!r} is outside "
                    f"its bounds {problem.level_bounds[problem.quasi_identifiers[j]]}."
                )
            self._cache["row_levels"] = hit
        out: npt.NDArray[np.integer] = hit
        return out

    def apply(self, problem: Problem) -> EncodedTable:
        """Each cell at its row's level."""
        table = self.kept(problem)
        lv = self.row_levels(problem)
        return table.with_columns(
            {
                q: generalize_cells(table[q], problem.hierarchies[q], lv[:, j])
                for j, q in enumerate(problem.quasi_identifiers)
            }
        )

    def summary(self, problem: Problem) -> dict[str, Any]:
        """The distinct level vectors and, per quasi-identifier, the rows on each level."""
        lv = self.row_levels(problem)
        per: dict[str, dict[int, int]] = {}
        for j, q in enumerate(problem.quasi_identifiers):
            counts = np.bincount(lv[:, j], minlength=1) if lv.size else np.zeros(1, np.int64)
            per[q] = {int(x): int(counts[x]) for x in np.flatnonzero(counts)}
        return {"level_vectors": distinct_vectors(lv), "rows_per_level": per}


def distinct_vectors(levels: npt.NDArray[np.integer]) -> int:
    """The number of distinct rows of a small-integer matrix (level vectors), exactly.

    Parameters
    ----------
    levels : ndarray of int, shape (rows, quasi-identifiers)
        Non-negative levels.

    Returns
    -------
    int
    """
    if not levels.size:
        return 0
    columns = [levels[:, j] for j in range(levels.shape[1])]
    return group_rows(columns, [int(c.max()) + 1 for c in columns])[1]
