"""The engine interface: class statistics of a table, whatever holds the rows.

An engine answers one question, "what are the equivalence classes of these columns at these
hierarchy levels?", for data in memory (numpy), in files processed out of core (DuckDB) or on
a cluster (Spark). Diagnosis and algorithms only talk to this interface.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._validation import check_columns, check_int
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.stats import ClassStats
from anonlab.data.table import EncodedColumn, EncodedTable
from anonlab.exceptions import DataFormatError, HierarchyError, ParameterError

__all__ = [
    "AttributeLevels",
    "Engine",
    "ReleasePlan",
    "RowsPlan",
    "WeightedClasses",
    "label_numbers",
    "root_label",
]

#: One hierarchy level per attribute (a full-domain level vector, by name).
AttributeLevels = Mapping[str, int]


def root_label(hierarchy: Hierarchy, level: int) -> str | None:
    """The label a null takes at ``level`` of ``hierarchy``: the root when the level is the
    top of a hierarchy with one root (a null is generalized too), else None (a null stays a
    null).

    Parameters
    ----------
    hierarchy : Hierarchy
    level : int

    Returns
    -------
    str or None
    """
    if level == hierarchy.height and level > 0:
        top = hierarchy.level_labels(level)
        if top.size == 1:
            return str(top[0])
    return None


@dataclass(frozen=True)
class ReleasePlan:
    """A full-domain release as an engine writes it, without the rows passing through Python.

    The release is one pass over the data: every quasi-identifier mapped to its label at its
    level (a join with the hierarchy's level table), the rows of suppressed classes removed
    or their quasi-identifiers masked with ``*``, identifiers dropped, every other column as
    it is.

    Parameters
    ----------
    columns : tuple of str
        The released columns, in order (identifiers already left out).
    quasi_identifiers : tuple of str
        The generalized columns.
    levels : tuple of int
        The level of each quasi-identifier (0: its values as they are, as text).
    hierarchies : Mapping[str, Hierarchy]
        The hierarchy of each quasi-identifier.
    suppressed : tuple of tuple
        The released keys of the suppressed classes: per class, its label in each
        quasi-identifier (a null as None), in ``quasi_identifiers`` order.
    mask_suppressed : bool
        Mask the quasi-identifiers of suppressed rows with ``*`` instead of removing them.
    """

    columns: tuple[str, ...]
    quasi_identifiers: tuple[str, ...]
    levels: tuple[int, ...]
    hierarchies: Mapping[str, Hierarchy]
    suppressed: tuple[tuple[str | None, ...], ...] = ()
    mask_suppressed: bool = False

    def __post_init__(self) -> None:
        if len(self.levels) != len(self.quasi_identifiers):
            raise ParameterError(
                f"A release plan needs one level per quasi-identifier; got {len(self.levels)} "
                f"levels for {len(self.quasi_identifiers)}."
            )
        m = len(self.quasi_identifiers)
        for key in self.suppressed:
            if len(key) != m:
                raise ParameterError(
                    f"A suppressed key has {len(key)} labels; the plan has {m} quasi-identifiers."
                )

    def root_label(self, j: int) -> str | None:
        """The label a null of quasi-identifier ``j`` takes at its level (:func:`root_label`)."""
        return root_label(self.hierarchies[self.quasi_identifiers[j]], self.levels[j])


@dataclass(frozen=True)
class RowsPlan:
    """A release given row by row: the labels staged block by block (a per-partition release).

    The algorithms that place individual rows run out of core partition by partition
    (:meth:`Engine.partitions`); each block's released labels are staged with
    :meth:`Engine.stage_labels`, keyed by each row's position in the source. The release is
    then one pass over the source, in its order: the ``replaced`` columns taken from the
    staged labels, every other column as it is, identifiers dropped, the rows of suppressed
    classes removed or their ``masked`` columns set to ``*``.

    Parameters
    ----------
    columns : tuple of str
        The released columns, in order (identifiers already left out).
    replaced : tuple of str
        The columns whose released values are the staged labels (the quasi-identifiers, and
        a sensitive attribute a release generalizes).
    masked : tuple of str
        The columns set to ``*`` in a suppressed row when ``mask_suppressed``.
    mask_suppressed : bool
        Mask the suppressed rows instead of removing them.
    """

    columns: tuple[str, ...]
    replaced: tuple[str, ...]
    masked: tuple[str, ...] = ()
    mask_suppressed: bool = False


def label_numbers(labels: npt.NDArray[np.object_]) -> tuple[npt.NDArray[np.float64], str | None]:
    """The labels of a column read as numbers (``nan`` for a null or a label that is none),
    and the first label that is no number (None if all are).

    Examples
    --------
    >>> values, bad = label_numbers(np.array(["1.5", "x", None, "2"], dtype=object))
    >>> values.tolist()[:2], bad
    ([1.5, nan], 'x')
    """
    out = np.full(labels.size, np.nan)
    bad: str | None = None
    for i, label in enumerate(labels.tolist()):  # one per distinct value, not per row
        if label is None:
            continue
        try:
            out[i] = float(label)
        except (TypeError, ValueError):
            if bad is None:
                bad = str(label)
    return out, bad


@dataclass(frozen=True)
class WeightedClasses:
    """The classes of a grouping with the sampling weights of their records summed.

    Attributes
    ----------
    sizes : ndarray of int64
        Records per class (``f_k``).
    weights : ndarray of float64
        Sum of the weights of each class's records (``F_k``), in the order of ``sizes``;
        a record without a numeric weight adds nothing.
    missing : int
        Records whose weight is missing (null).
    not_numeric : str or None
        A weight value that is no number, if there is one.
    lowest : float
        The smallest numeric weight (``nan`` without any).
    total : float
        The sum of the numeric weights.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.engines import get_engine
    >>> t = EncodedTable.from_columns({"sex": ["F", "F", "M"], "w": ["10", "20.5", "3"]})
    >>> got = get_engine("numpy", t).weighted_class_sizes(["sex"], None, "w")
    >>> got.sizes.tolist(), got.weights.tolist(), got.total
    ([2, 1], [30.5, 3.0], 33.5)
    """

    sizes: npt.NDArray[np.int64]
    weights: npt.NDArray[np.float64]
    missing: int
    not_numeric: str | None
    lowest: float
    total: float


class Engine:
    """Base class of the engines.

    Subclasses implement :meth:`class_sizes`, :meth:`class_stats` and
    :meth:`rows_in_small_classes`; the base class validates columns and levels.

    Parameters
    ----------
    hierarchies : Mapping[str, Hierarchy], optional
        Hierarchies of the columns that may be generalized.
    """

    name: ClassVar[str] = "base"
    #: Whether the engine holds the table's rows in memory (``anonymize`` then runs the
    #: algorithm on them); an out-of-core engine computes frequency sets and blocks.
    in_memory: ClassVar[bool] = False

    def __init__(self, hierarchies: Mapping[str, Hierarchy] | None = None) -> None:
        self.hierarchies: dict[str, Hierarchy] = dict(hierarchies or {})

    # ------------------------------------------------------------- to implement
    @property
    def n_rows(self) -> int:
        """Number of rows of the data."""
        raise NotImplementedError

    @property
    def columns(self) -> list[str]:
        """Column names of the data."""
        raise NotImplementedError

    @property
    def nested_columns(self) -> list[str]:
        """The columns of list, map or struct values (default: none): carried into a release
        as they are, counted by the identifying-column check by their JSON text, never an
        attribute (:meth:`validate` refuses them)."""
        return []

    @property
    def source_name(self) -> str | None:
        """The file the engine reads, as messages name it (default: None, a frame)."""
        return None

    def require_rows(self, action: str) -> int:
        """:attr:`n_rows`, refused with one line naming the file when there are none.

        Parameters
        ----------
        action : str
            What the rows are for, said in the error ("diagnose", ...).

        Returns
        -------
        int

        Raises
        ------
        DataFormatError
            If the table has no rows (as the readers say of an empty file).
        """
        n = self.n_rows
        if n == 0:
            where = f" {self.source_name!r}" if self.source_name else ""
            raise DataFormatError(f"The table{where} is empty: it has no rows to {action}.")
        return n

    @property
    def attribute_columns(self) -> list[str]:
        """The columns that may be attributes: every column but :attr:`nested_columns`."""
        nested = set(self.nested_columns)
        return [c for c in self.columns if c not in nested]

    def class_sizes(
        self, columns: Sequence[str], levels: AttributeLevels | None = None
    ) -> npt.NDArray[np.int64]:
        """Return the sizes of the equivalence classes of ``columns`` at ``levels``.

        Parameters
        ----------
        columns : sequence of str
            Columns to group on (the empty sequence gives one class of all rows).
        levels : Mapping[str, int], optional
            Hierarchy level per column; missing columns are at level 0.

        Returns
        -------
        ndarray of int64
            One size per class, in no particular order.
        """
        raise NotImplementedError

    def class_stats(
        self,
        columns: Sequence[str],
        levels: AttributeLevels | None = None,
        *,
        sensitive: Sequence[str] = (),
        with_rows: bool = False,
        with_keys: bool = True,
    ) -> ClassStats:
        """Return the full class statistics of ``columns`` at ``levels``.

        Parameters
        ----------
        columns : sequence of str
            Columns to group on.
        levels : Mapping[str, int], optional
            Hierarchy level per column.
        sensitive : sequence of str
            Sensitive attributes whose value counts per class are wanted.
        with_rows : bool
            Also return the class of every row (may be unsupported out of core).
        with_keys : bool
            Also return each class's key and the labels it codes (``keys``, ``domains``);
            without them (``None``) when only sizes, histograms and rows are wanted.

        Returns
        -------
        ClassStats
        """
        raise NotImplementedError

    def weighted_class_sizes(
        self, columns: Sequence[str], levels: AttributeLevels | None, weight: str
    ) -> WeightedClasses:
        """The class sizes of ``columns`` at ``levels`` and the sum of ``weight`` per class.

        Parameters
        ----------
        columns : sequence of str
            Columns to group on.
        levels : Mapping[str, int], optional
            Hierarchy level per column.
        weight : str
            The column of sampling weights (numbers; text that reads as a number counts).

        Returns
        -------
        WeightedClasses
            Sizes and weight sums per class, and what the caller needs to refuse bad
            weights (missing and non-numeric values, the smallest weight, the total).
        """
        raise NotImplementedError

    def rows_in_small_classes(
        self, columns: Sequence[str], levels: AttributeLevels | None, k: int
    ) -> npt.NDArray[np.int64]:
        """Return the positions of the rows whose class has fewer than ``k`` rows, ascending."""
        raise NotImplementedError

    # ------------------------------------------------------------- out of core
    def frequency_set(self, columns: Sequence[str]) -> EncodedTable:
        """Return the distinct combinations of ``columns`` and their counts.

        The table a search needs when the rows do not fit in memory: one row per distinct
        combination (a null is a value of its own), each with its number of records as its
        weight (:attr:`EncodedTable.weights`). Class statistics of any of these columns at
        any levels are then those of the whole data.

        Parameters
        ----------
        columns : sequence of str
            The quasi-identifiers and the attributes the models read.

        Returns
        -------
        EncodedTable
            With ``weights`` (its ``n_records`` is the engine's :attr:`n_rows`).
        """
        raise self._no_release("compute frequency sets")

    def write_release(
        self,
        plan: ReleasePlan,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        separator: str = ",",
    ) -> int | None:
        """Write the release ``plan`` describes to ``path``, streaming the rows.

        Parameters
        ----------
        plan : ReleasePlan
            What to release.
        path : path-like
            The file to write (a temporary file the caller renames: its name says nothing
            of its format).
        fmt : str
            ``"csv"``, ``"csv.gz"`` or ``"parquet"``.
        separator : str
            The CSV separator.

        Returns
        -------
        int or None
            The rows written, or None when only another pass over the data would count
            them (the re-check, :meth:`release_stats`, reads the written file and counts
            its rows in any case).
        """
        raise self._no_release("write releases")

    def release_stats(
        self,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        quasi_identifiers: Sequence[str],
        sensitive: Sequence[str] = (),
        separator: str = ",",
    ) -> ClassStats:
        """Return the classes of a written release, read back from the file.

        The independent re-check of an out-of-core release: the released labels of
        ``path`` grouped again (with keys, and the histograms of ``sensitive``), for the
        privacy models to judge before the file is renamed into place.

        Parameters
        ----------
        path : path-like
            The written release (as :meth:`write_release` wrote it).
        fmt : str
            Its format: ``"csv"``, ``"csv.gz"`` or ``"parquet"``.
        quasi_identifiers : sequence of str
            The columns to group on.
        sensitive : sequence of str
            The sensitive attributes whose value counts per class are wanted.
        separator : str
            The CSV separator.

        Returns
        -------
        ClassStats
        """
        raise self._no_release("read releases back")

    # ------------------------------------------------------------- per partition
    def partitions(
        self,
        columns: Sequence[str],
        *,
        categories: Mapping[str, npt.NDArray[np.object_]],
        order_by: Mapping[str, Hierarchy],
        block_rows: int,
    ) -> Iterator[tuple[npt.NDArray[np.int64], EncodedTable]]:
        """Stream the rows sorted by ``order_by``, in blocks of ``block_rows`` rows.

        The rows are sorted by each column of ``order_by`` in turn (its values in the order
        of its hierarchy's leaves, a null last), then by their position in the source, so
        similar records share a block (Murakami & Uno, section 3.2.3). Only the last block
        may be smaller.

        Parameters
        ----------
        columns : sequence of str
            The columns of each block.
        categories : Mapping[str, ndarray]
            Each column's labels (those of the whole table): every block is encoded with
            them, so a block's codes mean what the whole table's mean.
        order_by : Mapping[str, Hierarchy]
            The sort columns, most significant first, with their hierarchies.
        block_rows : int
            Rows per block.

        Yields
        ------
        rows : ndarray of int64
            Each row's position in the source (the order the release is written in).
        table : EncodedTable
            The block's ``columns``, row-aligned with ``rows``.
        """
        raise ParameterError(
            f"The {self.name} engine cannot stream partitions yet, so it cannot run the "
            "algorithms that place individual rows (they run block by block out of core); "
            "use --engine duckdb or spark (out of core) or --engine numpy (in memory). Nothing was "
            "written."
        )

    def stage_labels(
        self,
        rows: npt.NDArray[np.int64],
        labels: Mapping[str, EncodedColumn],
        keep: npt.NDArray[np.bool_],
    ) -> None:
        """Stage the released labels of one block for :meth:`write_staged_release`.

        Parameters
        ----------
        rows : ndarray of int64
            The rows' positions in the source.
        labels : Mapping[str, EncodedColumn]
            Per replaced column, the released labels, row-aligned with ``rows``.
        keep : ndarray of bool
            Per row, False when it is suppressed.
        """
        raise self._no_release("stage released labels")

    def clear_staged(self) -> None:
        """Forget the staged labels (default: nothing staged)."""

    def write_staged_release(
        self,
        plan: RowsPlan,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        separator: str = ",",
    ) -> int:
        """Write the release of the staged labels to ``path``, in the source's row order.

        Parameters
        ----------
        plan : RowsPlan
        path : path-like
        fmt : str
            ``"csv"``, ``"csv.gz"`` or ``"parquet"``.
        separator : str
            The CSV separator.

        Returns
        -------
        int
            The rows written.
        """
        raise self._no_release("write per-partition releases")

    def staged_mismatches(
        self,
        plan: RowsPlan,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        separator: str = ",",
    ) -> int:
        """Count the rows of a written release that do not hold the staged labels.

        The written file read back, row by row in its order, against the staged labels of
        the rows it keeps (in the source's order): a row whose ``plan.replaced`` columns
        differ, or a row too many or too few, counts.

        Returns
        -------
        int
            0 when the file holds exactly the staged release.
        """
        raise self._no_release("read per-partition releases back")

    def staged_spanning(
        self,
        plan: RowsPlan,
        columns: Sequence[str],
        categories: Mapping[str, npt.NDArray[np.object_]],
    ) -> tuple[int, npt.NDArray[np.int64], EncodedTable, EncodedTable]:
        """The released classes whose labels (``plan.masked``) occur in several staged blocks.

        A per-record model judges such merged classes again (their parts were verified in
        their blocks).

        Parameters
        ----------
        plan : RowsPlan
            Its ``masked`` columns (the quasi-identifiers) are the class key.
        columns : sequence of str
            Source columns to return for the kept rows of those classes (none: count only).
        categories : Mapping[str, ndarray]
            Their labels (the whole table's).

        Returns
        -------
        n_classes : int
            Classes spanning blocks.
        row_class : ndarray of int64
            The class (0 .. n_classes - 1) of each row returned.
        source : EncodedTable
            The rows' ``columns`` as in the source.
        released : EncodedTable
            The rows' staged labels (``plan.replaced``).
        """
        raise self._no_release("find classes spanning blocks")

    @property
    def writes_releases(self) -> bool:
        """Whether the engine implements the release protocol (:meth:`frequency_set`,
        :meth:`write_release`, :meth:`release_stats`): ``anonymize`` can run on it."""
        cls = type(self)
        return (
            cls.frequency_set is not Engine.frequency_set
            and cls.write_release is not Engine.write_release
            and cls.release_stats is not Engine.release_stats
        )

    @property
    def runs_partitions(self) -> bool:
        """Whether the engine runs the row-placing algorithms partition by partition
        (:meth:`partitions`, :meth:`stage_labels`, :meth:`write_staged_release`,
        :meth:`staged_mismatches`, :meth:`staged_spanning`)."""
        cls = type(self)
        return all(
            getattr(cls, name) is not getattr(Engine, name)
            for name in (
                "partitions",
                "stage_labels",
                "write_staged_release",
                "staged_mismatches",
                "staged_spanning",
            )
        )

    def _nested_kind(self, column: str) -> str:
        """The type of a nested column, as the error messages name it (default: nested)."""
        return "nested"

    def _no_release(self, what: str) -> ParameterError:
        return ParameterError(
            f"The {self.name} engine cannot {what} yet, so it cannot anonymize; use "
            "--engine duckdb (out of core) or --engine numpy (in memory)."
        )

    def distinct_counts(self, columns: Sequence[str], *, rows: int | None = None) -> dict[str, int]:
        """Return the number of distinct values (a null counts as one) of each column.

        Engines that scan files answer in one pass; the default counts the classes of each
        column on its own.

        Parameters
        ----------
        columns : sequence of str
        rows : int, optional
            Count among ``rows`` records of the table only (any of them, the same for every
            column; at most :attr:`n_rows`), not among all.
        """
        if rows is not None:  # pragma: no cover - every registered engine answers it
            raise NotImplementedError(f"The {self.name} engine counts every row.")
        return {c: int(self.class_sizes([c]).size) for c in columns}

    def first_row(self, column: str, values: Sequence[str | None]) -> tuple[int, str | None] | None:
        """The first row whose ``column`` holds one of ``values`` (None: a missing value):
        its position (0-based, in the source's order) and its value; None if no row does.
        For an error message, which names the row of the file: one scan, never on a hot
        path.

        Parameters
        ----------
        column : str
        values : sequence of str or None
            Labels of the column (its text, as the engine reads it).

        Returns
        -------
        (int, str or None) or None
        """
        del column, values
        return None  # pragma: no cover - every registered engine answers it

    def head(self, columns: Sequence[str], rows: int) -> EncodedTable:
        """Return about ``rows`` records of ``columns`` in memory: the first ones the engine
        reads (every record when the table has no more), encoded as the engine's questions
        see them.

        A screen for questions about the whole table: what fails on any of its records
        cannot hold on all of them (the identifying-column check looks here first for the
        dependencies it then counts over the whole table).

        Parameters
        ----------
        columns : sequence of str
            Columns that may be attributes (not lists, maps or structs).
        rows : int
            How many records (a weighted row of a frequency set counts as its records;
            the last one taken may stand for a few more).

        Returns
        -------
        EncodedTable
        """
        raise NotImplementedError(f"The {self.name} engine cannot return its first records.")

    def close(self) -> None:
        """Release what the engine holds (connections, temporary files); default: nothing."""

    # ------------------------------------------------------------- shared
    def class_sizes_many(
        self,
        subsets: Iterable[Sequence[str]],
        levels: AttributeLevels | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> list[npt.NDArray[np.int64]]:
        """Return :meth:`class_sizes` for each subset (engines may batch this)."""
        out = []
        for subset in subsets:
            out.append(self.class_sizes(subset, levels))
            if progress is not None:
                progress(1)
        return out

    def validate(self, columns: Sequence[str], levels: AttributeLevels | None) -> tuple[int, ...]:
        """Check that ``columns`` exist and ``levels`` are valid; return the level tuple.

        A list, map or struct column (:attr:`nested_columns`) is refused as an attribute
        with one line naming its type.
        """
        nested = self.nested_columns
        for col in columns:
            if col in nested:
                raise DataFormatError(
                    f"The column {col!r} is a column of type {self._nested_kind(col)}; an "
                    "attribute must hold one value per row (text, numbers, dates). Flatten it, "
                    "or leave it out of the job (unused columns are carried through as they are)."
                )
        check_columns(list(columns), self.columns)
        levels = levels or {}
        check_columns(list(levels), self.columns, what="column in levels")
        out = []
        for col in columns:
            lv = levels.get(col, 0)
            if lv == 0:
                out.append(0)
                continue
            h = self.hierarchies.get(col)
            if h is None:
                raise HierarchyError(
                    f"Attribute {col!r} is asked at level {lv} but has no hierarchy."
                )
            out.append(check_int(lv, f"level of attribute {col!r}", low=0, high=h.height))
        return tuple(out)
