"""Recodings: what an anonymization family returns, each able to produce the released table.

A recoding says what happens to every quasi-identifier cell; applying it to the
:class:`~anonlab.release.problem.Problem`'s table gives the released quasi-identifier
columns (the other columns are released as they are, identifiers never). Every recoding keeps
one contract, :class:`Recoding`: it applies to the problem (:meth:`~Recoding.apply`), says
what a report prints (:meth:`~Recoding.summary`), names the rows it keeps (``rows``) and the
verifier that re-checks it (``verifier``). The recodings whose cells are hierarchy labels at
levels keep the richer contract of :class:`LevelRecoding` (the level of each cell, the cells
grouped by level and value), which the classes verifier and the metrics read:

=============  ==================================================  ===========================
recoding       what it holds                                       families
=============  ==================================================  ===========================
FullDomain     one hierarchy level per quasi-identifier            optimal, incognito,
                                                                   PrivacyFrost2's ``T^G``
Levels         a level vector per group of rows (a class, or a     PrivacyFrost2 partial
               row): cells of one column sit at different levels   domain, local recoding
Clusters       Levels per cluster, and a level per record for the  personalized privacy
               sensitive value
=============  ==================================================  ===========================

A cell cover (:class:`~anonlab.release.cellcover.CellCover`: a record released as the cover of
several records, verified on the anonymity graph) is a :class:`Recoding` but not a
:class:`LevelRecoding`: its cells are covers of several values, not labels at levels.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, ClassVar, TypeVar

import numpy as np
import numpy.typing as npt

from anonlab._compiled import jit
from anonlab._typing import IntArray
from anonlab.data.grouping import group_rows
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.labels import natural_order
from anonlab.data.table import EncodedColumn, EncodedTable
from anonlab.exceptions import ParameterError
from anonlab.release.problem import Problem

__all__ = [
    "CellGroups",
    "Recoding",
    "LevelRecoding",
    "FullDomain",
    "Levels",
    "distinct_vectors",
    "generalize_column",
    "generalize_cells",
    "group_cells",
]


def generalize_column(col: EncodedColumn, hierarchy: Hierarchy, level: int) -> EncodedColumn:
    """The column with every value replaced by its label at ``level`` of ``hierarchy``.

    The labels in use at ``level`` are ordered as :func:`~anonlab.data.labels.factorize`
    orders them (a handful of values, each once), then the categories' and the rows' codes are
    mapped: the same column as encoding the generalized rows, without touching each row's or
    each category's label.

    Examples
    --------
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.data.table import EncodedTable
    >>> col = EncodedTable.from_columns({"sex": ["F", "M", "F"]})["sex"]
    >>> generalize_column(col, flat_hierarchy(["F", "M"]), 1).labels().tolist()
    ['*', '*', '*']
    """
    mapping, labels = hierarchy.generalization(col.categories, level)
    used = np.zeros(labels.size, dtype=bool)
    used[mapping] = True
    at = np.flatnonzero(used)
    at = at[natural_order(labels[at])]  # (a level's labels are distinct)
    by_label = np.zeros(labels.size, dtype=np.int32)
    by_label[at] = np.arange(at.size, dtype=np.int32)
    return EncodedColumn(col.name, by_label[mapping][col.codes], labels[at])


@dataclass(frozen=True)
class CellGroups:
    """One quasi-identifier's released cells, grouped by (level, original value).

    A cell's label follows from its level and its value, so these groups are all that the
    release and its measures need: the released column, and per group its level, value,
    label and rows (:func:`~anonlab.release.measure.release_cells` counts them).

    Attributes
    ----------
    column : EncodedColumn
        The released column: each row's label at that row's level.
    width : int
        The original column's values: a group's key is ``level * width + value``.
    key : ndarray of int64, shape (groups,)
        Ascending.
    label : ndarray of int, shape (groups,)
        The code of each group's label in ``column.categories``.
    count : ndarray of int64, shape (groups,)
        The rows in each group.
    """

    column: EncodedColumn
    width: int
    key: IntArray
    label: npt.NDArray[np.integer]
    count: IntArray

    @property
    def level(self) -> IntArray:
        """The level of each group."""
        out: IntArray = self.key // self.width
        return out

    @property
    def value(self) -> IntArray:
        """The original value's code (in the original column's categories) of each group."""
        out: IntArray = self.key % self.width
        return out

    def count_cells(self, levels: npt.NDArray[np.integer], values: npt.ArrayLike) -> IntArray:
        """How many of the given cells (a level and an original value each) fall in each
        group; every cell must be one of the column's."""
        key = np.asarray(levels, dtype=np.int64) * self.width + np.asarray(values)
        at = np.searchsorted(self.key, key)
        out: IntArray = np.bincount(at, minlength=self.key.size).astype(np.int64)
        return out


def group_cells(
    col: EncodedColumn,
    hierarchy: Hierarchy,
    levels: npt.NDArray[np.integer],
    group: npt.NDArray[np.integer] | None = None,
) -> CellGroups:
    """Release each row's value at that row's level, grouping the cells by (level, value).

    Labels are identified by their text: two cells whose labels read the same are the same
    released value, whatever level they come from. Two compiled passes over the rows: one
    counts the cells of each (level, value), one writes each row's label.

    Parameters
    ----------
    col : EncodedColumn
        The original column.
    hierarchy : Hierarchy
        Its hierarchy.
    levels : ndarray of int
        One level per row of ``col``, or per group of rows with ``group``.
    group : ndarray of int, optional
        The group of each row of ``col`` (row ``r`` sits on ``levels[group[r]]``).

    Raises
    ------
    ParameterError
        A level outside the hierarchy.
    """
    ids, values = hierarchy.label_ids(col.categories)
    width = max(int(ids.shape[1]), 1)
    group = np.arange(col.codes.size) if group is None else group
    kernels = _cell_kernels()
    slot = np.zeros(ids.shape[0] * width, dtype=np.int64)
    if not kernels.count(levels, group, col.codes, width, slot):
        raise ParameterError(
            f"A level of {col.name!r} is outside its hierarchy's levels 0..{ids.shape[0] - 1} "
            f"(or a row's group outside the {len(levels)} level(s) given)."
        )
    key = np.flatnonzero(slot)
    count = slot[key]
    # each cell's label, then the labels in use in their natural order (as factorize)
    cell_id = ids.reshape(-1)[key] if ids.size else np.zeros(0, dtype=np.int64)
    in_use = np.zeros(values.size, dtype=bool)
    in_use[cell_id] = True
    used = np.flatnonzero(in_use)
    order = natural_order(values[used])
    rank = np.empty(values.size, dtype=np.int32)
    rank[used[order]] = np.arange(used.size, dtype=np.int32)
    label = rank[cell_id]
    categories = values[used[order]]
    slot[key] = np.arange(key.size)  # (the cells in use, numbered)
    codes = np.empty(col.codes.size, dtype=np.int32)
    kernels.label(levels, group, col.codes, width, slot, label, codes)
    return CellGroups(EncodedColumn(col.name, codes, categories), width, key, label, count)


def _count_cells(levels, group, codes, width, counts):  # type: ignore[no-untyped-def]
    """Count each row's cell in ``counts[level * width + value]``; False if a group, a level
    or a value falls outside its array."""
    n_levels = counts.size // width
    for r in range(codes.size):
        g = np.int64(group[r])
        if g < 0 or g >= levels.size:
            return False
        lv = np.int64(levels[g])
        v = np.int64(codes[r])
        if lv < 0 or lv >= n_levels or v < 0 or v >= width:
            return False
        counts[lv * width + v] += 1
    return True


def _label_cells(levels, group, codes, width, slot, label, out):  # type: ignore[no-untyped-def]
    """``out[r]``: the label of row ``r``'s cell (``slot`` numbering the cells in use)."""
    for r in range(codes.size):
        out[r] = label[slot[np.int64(levels[group[r]]) * width + codes[r]]]


def _cell_kernels() -> SimpleNamespace:
    """:func:`_count_cells` and :func:`_label_cells`, compiled once per process. They run on
    one thread: numba's parallel loops cost about a second of the first run's compilation
    and bought little on a release of a million rows (benchmarks/README.md)."""
    if not _KERNELS:
        _KERNELS.append(SimpleNamespace(count=jit(_count_cells), label=jit(_label_cells)))
    return _KERNELS[0]


_KERNELS: list[SimpleNamespace] = []


def generalize_cells(
    col: EncodedColumn, hierarchy: Hierarchy, levels: npt.NDArray[np.integer]
) -> EncodedColumn:
    """The column with each row's value replaced by its label at that row's level: the
    released column of :func:`group_cells` (same parameters).

    Examples
    --------
    >>> import numpy as np
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.data.table import EncodedTable
    >>> col = EncodedTable.from_columns({"sex": ["F", "M", "F", "M"]})["sex"]
    >>> levels = np.array([0, 1, 1, 0])
    >>> generalize_cells(col, flat_hierarchy(["F", "M"]), levels).labels().tolist()
    ['F', '*', '*', 'M']
    """
    return group_cells(col, hierarchy, levels).column


def _take(problem: Problem, rows: IntArray) -> EncodedTable:
    """The problem's table at ``rows``, each quasi-identifier's kept labels remembered by its
    hierarchy as a subset of the column's (for :meth:`Recoding.kept`)."""
    table = problem.table.take(rows)
    for q in problem.quasi_identifiers:
        col = problem.table[q]
        at = np.flatnonzero(np.bincount(col.codes[rows], minlength=col.cardinality))
        problem.hierarchies[q].remember_subset(table[q].categories, col.categories, at)
    return table


_T = TypeVar("_T")


class Recoding(ABC):
    """What an anonymization algorithm returns: a statement per quasi-identifier cell.

    The contract every recoding keeps: :meth:`apply`, :meth:`summary`, ``rows`` and
    ``verifier``.

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

    Examples
    --------
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.data.table import EncodedTable
    >>> from anonlab.metrics import build_metric
    >>> from anonlab.models import build_model
    >>> from anonlab.release import Problem
    >>> t = EncodedTable.from_columns({"sex": ["F", "M", "F", "M"]})
    >>> p = Problem(t, ("sex",), {"sex": flat_hierarchy(["F", "M"])},
    ...             (build_model("k_anonymity", {"k": 2}),), build_metric("loss"))
    >>> r = FullDomain({"sex": 1})
    >>> isinstance(r, Recoding), r.verifier
    (True, 'classes')
    >>> r.apply(p)["sex"].labels().tolist()
    ['*', '*', '*', '*']
    """

    forms_classes: ClassVar[bool]
    verifier: ClassVar[str]
    rows: IntArray | None
    _cache: dict[str, Any]  # what :meth:`_memo` keeps

    @abstractmethod
    def apply(self, problem: Problem) -> EncodedTable:
        """The table to release: the kept rows, quasi-identifiers generalized, the other
        columns as they are (identifiers are dropped by the verification)."""

    @abstractmethod
    def summary(self, problem: Problem) -> dict[str, Any]:
        """What a report prints: the levels, or how many cells sit on each level."""

    def kept(self, problem: Problem) -> EncodedTable:
        """The rows of the table this recoding keeps (taken once).

        A quasi-identifier's labels among the kept rows are a subset of the column's: its
        hierarchy is told which (:meth:`Hierarchy.remember_subset`), so that generalizing
        them looks no label up again.
        """
        rows = self.rows
        if rows is None:
            return problem.table
        return self._memo("kept", problem, lambda: _take(problem, rows))

    def _memo(self, key: str, problem: Problem, make: Callable[[], _T]) -> _T:
        """``make()``, kept in the recoding for the problem it was made for."""
        cache = self.__dict__.setdefault("_cache", {})  # not a dataclass field: no repr, eq
        hit = cache.get(key)
        if hit is None or hit[0] is not problem:
            hit = cache[key] = (problem, make())
        out: _T = hit[1]
        return out


class LevelRecoding(Recoding):
    """A recoding whose every released cell is its value's label at a hierarchy level.

    Its release forms classes, verified by grouping the released labels (``"classes"``);
    the metrics measure it from its cells, grouped by (level, original value).

    Examples
    --------
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.data.table import EncodedTable
    >>> from anonlab.metrics import build_metric
    >>> from anonlab.models import build_model
    >>> from anonlab.release import Problem
    >>> t = EncodedTable.from_columns({"sex": ["F", "M", "F", "M"]})
    >>> p = Problem(t, ("sex",), {"sex": flat_hierarchy(["F", "M"])},
    ...             (build_model("k_anonymity", {"k": 2}),), build_metric("loss"))
    >>> import numpy as np
    >>> r = Levels(np.array([[0], [1]]), np.array([0, 0, 1, 1]))  # two groups of rows
    >>> r.row_levels(p).ravel().tolist()
    [0, 0, 1, 1]
    >>> [(int(g.count.sum()), g.column.categories.tolist()) for g in r.cells(p)]
    [(4, ['*', 'F', 'M'])]
    """

    forms_classes: ClassVar[bool] = True
    verifier: ClassVar[str] = "classes"

    @abstractmethod
    def row_levels(
        self, problem: Problem, rows: npt.NDArray[np.integer] | None = None
    ) -> npt.NDArray[np.integer]:
        """The level of each released cell: shape (rows kept, quasi-identifiers), or of the
        kept rows at positions ``rows`` only."""

    @property
    def uniform(self) -> bool:
        """Whether every cell of a column sits on one level (a full-domain release)."""
        return False

    def cells(self, problem: Problem) -> tuple[CellGroups, ...]:
        """The released cells of each quasi-identifier, grouped by (level, value)."""
        table = self.kept(problem)
        levels, group = self._cell_levels(problem)
        return tuple(
            group_cells(table[q], problem.hierarchies[q], levels[:, j], group)
            for j, q in enumerate(problem.quasi_identifiers)
        )

    def _cell_levels(
        self, problem: Problem
    ) -> tuple[npt.NDArray[np.integer], npt.NDArray[np.integer] | None]:
        """The cells' levels for :func:`group_cells`: one per kept row (group None), or one
        per group with the group of each kept row."""
        return self.row_levels(problem), None


@dataclass
class FullDomain(LevelRecoding):
    """Full-domain generalization: one hierarchy level per quasi-identifier.

    Parameters
    ----------
    levels : Mapping[str, int]
        The level of each quasi-identifier.
    rows : ndarray of int64, optional
        The rows kept (None: every row).

    Examples
    --------
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.data.table import EncodedTable
    >>> from anonlab.metrics import build_metric
    >>> from anonlab.models import build_model
    >>> from anonlab.release import Problem
    >>> t = EncodedTable.from_columns({"sex": ["F", "M", "F", "M"]})
    >>> p = Problem(t, ("sex",), {"sex": flat_hierarchy(["F", "M"])},
    ...             (build_model("k_anonymity", {"k": 2}),), build_metric("loss"))
    >>> FullDomain({"sex": 1}).apply(p)["sex"].labels().tolist()
    ['*', '*', '*', '*']
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

    def row_levels(
        self, problem: Problem, rows: npt.NDArray[np.integer] | None = None
    ) -> npt.NDArray[np.int64]:
        """Every row at the recoding's levels."""
        if rows is not None:
            n = int(np.asarray(rows).size)
        else:
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
class Levels(LevelRecoding):
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

    Examples
    --------
    >>> import numpy as np
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.data.table import EncodedTable
    >>> from anonlab.metrics import build_metric
    >>> from anonlab.models import build_model
    >>> from anonlab.release import Problem
    >>> t = EncodedTable.from_columns({"sex": ["F", "M", "F", "M"]})
    >>> p = Problem(t, ("sex",), {"sex": flat_hierarchy(["F", "M"])},
    ...             (build_model("k_anonymity", {"k": 2}),), build_metric("loss"))
    >>> r = Levels(np.array([[0], [1]]), np.array([0, 1, 0, 1]))  # rows of M at level 1
    >>> r.apply(p)["sex"].labels().tolist()
    ['F', '*', 'F', '*']
    """

    levels: npt.NDArray[np.integer]
    group: npt.NDArray[np.int64]
    rows: IntArray | None = None

    def row_levels(
        self, problem: Problem, rows: npt.NDArray[np.integer] | None = None
    ) -> npt.NDArray[np.integer]:
        """The level vector of each kept row (of the kept rows at positions ``rows``)."""
        self.levels_in_use(problem)  # checks the levels against the problem
        g = self._kept_groups() if rows is None else self._kept_groups()[rows]
        # gathered column by column (the release and its measures read it by column), in
        # the levels' own integer type
        out: npt.NDArray[np.integer] = np.take(self._columns(problem).T, g, axis=1).T
        return out

    def _kept_groups(self) -> npt.NDArray[np.int64]:
        """The group of each kept row."""
        return self.group if self.rows is None else self.group[self.rows]

    def levels_in_use(self, problem: Problem) -> tuple[npt.NDArray[np.integer], IntArray]:
        """The level vectors of the groups that hold kept rows, and their rows.

        Raises
        ------
        ParameterError
            A level vector of the wrong length, or a level outside its attribute's bounds.
        """
        return self._memo("in_use", problem, lambda: self._levels_in_use(problem))

    def _columns(self, problem: Problem) -> npt.NDArray[np.integer]:
        """The level vectors, column-major (read by column), made once."""
        return self._memo("columns", problem, lambda: np.asfortranarray(self.levels))

    def _levels_in_use(self, problem: Problem) -> tuple[npt.NDArray[np.integer], IntArray]:
        levels = self._columns(problem)
        if levels.ndim != 2 or levels.shape[1] != len(problem.quasi_identifiers):
            raise ParameterError(
                f"The level vectors have {levels.shape[-1]} entries; the problem has "
                f"{len(problem.quasi_identifiers)} quasi-identifiers."
            )
        g = self._kept_groups()
        rows = np.bincount(g, minlength=levels.shape[0]) if g.size else np.zeros(0, np.int64)
        used = np.flatnonzero(rows)
        # column-major, without a copy where every group holds kept rows
        in_use = levels if used.size == levels.shape[0] else np.asfortranarray(levels[used])
        bad = np.zeros(levels.shape[1], dtype=bool)
        if used.size:
            low, high = np.asarray(problem.min_levels), np.asarray(problem.max_levels)
            bad = (in_use.min(axis=0) < low) | (in_use.max(axis=0) > high)
        if bad.any():
            q = problem.quasi_identifiers[int(np.flatnonzero(bad)[0])]
            raise ParameterError(
                f"A level of quasi-identifier {q!r} is outside its bounds "
                f"{problem.level_bounds[q]}."
            )
        return in_use, rows[used].astype(np.int64)

    def cells(self, problem: Problem) -> tuple[CellGroups, ...]:
        """The released cells of each quasi-identifier, grouped by (level, value), from the
        groups' levels; computed once (the release, its loss and a report read them)."""
        return self._memo("cells", problem, lambda: super(Levels, self).cells(problem))

    def _cell_levels(
        self, problem: Problem
    ) -> tuple[npt.NDArray[np.integer], npt.NDArray[np.integer] | None]:
        """The groups' level vectors (a column is read at random: contiguous) and the group
        of each kept row."""
        self.levels_in_use(problem)  # checks the levels against the problem
        return self._columns(problem), self._kept_groups()

    def apply(self, problem: Problem) -> EncodedTable:
        """Each cell at its row's level."""
        columns = self.cells(problem)
        return self.kept(problem).with_columns(
            {q: c.column for q, c in zip(problem.quasi_identifiers, columns)}
        )

    def summary(self, problem: Problem) -> dict[str, Any]:
        """The distinct level vectors and, per quasi-identifier, the rows on each level."""
        per: dict[str, dict[int, int]] = {}
        for q, c in zip(problem.quasi_identifiers, self.cells(problem)):
            counts = np.bincount(c.level, weights=c.count, minlength=1).astype(np.int64)
            per[q] = {int(x): int(counts[x]) for x in np.flatnonzero(counts)}
        levels, _ = self.levels_in_use(problem)
        return {"level_vectors": distinct_vectors(levels), "rows_per_level": per}


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
