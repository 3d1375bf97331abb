"""The query building the SQL engines share (DuckDB's SQL, Spark's DataFrames and Spark SQL).

Both engines answer every question the same way: the data's columns as text, each
generalized column joined to its hierarchy's *level table* (value -> label at the level; at
the root of a hierarchy with one root a null takes the root too), grouped on the columns
``g0..`` with the raw sensitive columns ``x0..`` beside them. :class:`SqlEngine` holds what
they do alike (checking the arguments, the cache of class sizes, the per-partition
arguments); each engine builds its own query from :func:`group_terms` and
:func:`level_table`, the differences of dialect being the quote of a name
(:func:`quoted`'s ``mark``) and how a query runs. No database library is imported here:
the engines import theirs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Self

import numpy as np
import numpy.typing as npt

from anonlab._validation import check_columns
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.stats import ClassStats
from anonlab.data.table import EncodedColumn, EncodedTable
from anonlab.engines.base import (
    AttributeLevels,
    Engine,
    ReleasePlan,
    RowsPlan,
    WeightedClasses,
    root_label,
)
from anonlab.exceptions import InputError, ParameterError

__all__ = [
    "GroupTerm",
    "SqlEngine",
    "group_terms",
    "level_table",
    "literal",
    "quoted",
    "text_table",
]

#: A null marker that never occurs in a CSV file: nulls are decided by ``na_values``.
NEVER = "\x1e\x1f"


def quoted(name: str, *, mark: str = '"') -> str:
    """A column name as SQL reads it, whatever characters it holds.

    Parameters
    ----------
    name : str
        The name.
    mark : str
        The dialect's quote of names: ``'"'`` (DuckDB, standard SQL) or ``"`"`` (Spark SQL).

    Returns
    -------
    str

    Examples
    --------
    >>> print(quoted('a "b" c'))
    "a ""b"" c"
    >>> quoted("a.b", mark="`")
    '`a.b`'
    """
    return mark + name.replace(mark, mark + mark) + mark


def literal(value: str) -> str:
    """A text literal of SQL.

    Examples
    --------
    >>> literal("O'Brien")
    "'O''Brien'"
    """
    return "'" + value.replace("'", "''") + "'"


@dataclass(frozen=True)
class GroupTerm:
    """One column of a class query: ``column`` at ``level``, named ``g{index}``.

    Attributes
    ----------
    index : int
        The position among the grouped columns (the query's column ``g{index}``).
    column : str
        The data's column.
    level : int
        Its hierarchy level (0: its values as they are, no join).
    root : str or None
        The label a null takes (the root at the top of a hierarchy with one root), else None.

    Examples
    --------
    >>> GroupTerm(0, "age", 0, None).name
    'g0'
    """

    index: int
    column: str
    level: int
    root: str | None

    @property
    def name(self) -> str:
        """The term's column in the query, ``g{index}``."""
        return f"g{self.index}"


def group_terms(
    hierarchies: Mapping[str, Hierarchy], columns: Sequence[str], levels: Sequence[int]
) -> list[GroupTerm]:
    """The terms of a class query: each column at its level (see :class:`GroupTerm`).

    Examples
    --------
    >>> [t.name for t in group_terms({}, ["age", "sex"], [0, 0])]
    ['g0', 'g1']
    """
    return [
        GroupTerm(j, col, lv, root_label(hierarchies[col], lv) if lv else None)
        for j, (col, lv) in enumerate(zip(columns, levels))
    ]


def group_names(m: int) -> list[str]:
    """The names of the grouped columns ``g0..g{m-1}``."""
    return [f"g{j}" for j in range(m)]


def level_table(h: Hierarchy, level: int, pa: Any) -> Any:
    """The Arrow table (``leaf``, ``label``) of hierarchy ``h`` at ``level``: one row per
    value of the hierarchy, in file order, both as text (``pa`` is pyarrow)."""
    rows = h.rows()
    return pa.table(
        {
            "leaf": pa.array([r[0] for r in rows], type=pa.string()),
            "label": pa.array([r[level] for r in rows], type=pa.string()),
        }
    )


def text_table(table: EncodedTable, pa: Any) -> Any:
    """An encoded table's columns as an Arrow table of text (``pa`` is pyarrow): each
    value its label, a null category a null."""
    arrays = [  # a null category is None: taking it gives a null
        pa.array(table.column(n).categories.tolist(), type=pa.string()).take(
            pa.array(table.column(n).codes)
        )
        for n in table.names
    ]
    return pa.table(arrays, names=list(table.names))


class ReleaseWriter(Protocol):
    """What writes an engine's full-domain releases and groups them again (see
    :meth:`Engine.write_release` and :meth:`Engine.release_stats`)."""

    def write(
        self, plan: ReleasePlan, path: str | os.PathLike[str], *, fmt: str, separator: str = ","
    ) -> int | None:
        """Write the release ``plan`` describes to ``path``."""

    def release_stats(
        self,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        quasi_identifiers: Sequence[str],
        sensitive: Sequence[str] = (),
        separator: str = ",",
    ) -> ClassStats:
        """The classes of a written release, read back from the file."""


class Blocks(Protocol):
    """What runs an engine's per-partition releases (see :meth:`Engine.partitions` and the
    staging methods after it); ``partitions`` takes arguments already checked."""

    def partitions(
        self,
        cols: list[str],
        categories: Mapping[str, npt.NDArray[np.object_]],
        order_by: Mapping[str, Hierarchy],
        rows: int,
    ) -> Iterator[tuple[npt.NDArray[np.int64], EncodedTable]]:
        """The rows sorted by ``order_by`` in blocks of ``rows``."""

    def stage_labels(
        self,
        rows: npt.NDArray[np.int64],
        labels: Mapping[str, EncodedColumn],
        keep: npt.NDArray[np.bool_],
    ) -> None:
        """Keep one block's labels until the release is written."""

    def clear_staged(self) -> None:
        """Delete the staged labels."""

    def write_staged_release(
        self, plan: RowsPlan, path: str | os.PathLike[str], *, fmt: str, separator: str = ","
    ) -> int:
        """Write the staged release in the source's order."""

    def staged_mismatches(
        self, plan: RowsPlan, path: str | os.PathLike[str], *, fmt: str, separator: str = ","
    ) -> int:
        """Count the written rows that differ from the staged labels."""

    def staged_spanning(
        self,
        plan: RowsPlan,
        columns: Sequence[str],
        categories: Mapping[str, npt.NDArray[np.object_]],
    ) -> tuple[int, npt.NDArray[np.int64], EncodedTable, EncodedTable]:
        """The released classes whose labels occur in more than one staged block."""


class SqlEngine(Engine):
    """What the DuckDB and Spark engines do alike around their queries.

    The questions' arguments are checked here, once, and the query is the engine's own
    (``_count_classes``, ``_class_stats``, ``_head``, ``_frequency_set``,
    ``_distinct_counts``). Class sizes are remembered per (column, level) set: results are
    small, and every question reuses them. Releases are written by the engine's
    :class:`ReleaseWriter` (``_writer``) and per-partition releases run by its
    :class:`Blocks` (``_blocks``), helper objects that hold the engine.

    Examples
    --------
    >>> issubclass(SqlEngine, Engine)
    True
    """

    _names: list[str]
    _sizes: dict[tuple[tuple[str, int], ...], npt.NDArray[np.int64]]
    _writer: ReleaseWriter
    _blocks: Blocks

    def __enter__(self) -> Self:
        """Return the engine itself (``with Engine(...) as engine:``)."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Close the engine (see :meth:`close`)."""
        self.close()

    @property
    def columns(self) -> list[str]:
        """Column names of the data."""
        return list(self._names)

    def class_sizes(
        self, columns: Sequence[str], levels: AttributeLevels | None = None
    ) -> npt.NDArray[np.int64]:
        """Return class sizes with one grouping (see :class:`Engine`), remembered."""
        cols = list(columns)
        lv = self.validate(cols, levels)
        if not cols:
            return np.array([self.n_rows], np.int64) if self.n_rows else np.zeros(0, np.int64)
        key = tuple(sorted(zip(cols, lv)))
        hit = self._sizes.get(key)
        if hit is None:
            hit = self._count_classes(cols, lv)
            self._sizes[key] = hit
        return hit

    def _count_classes(self, cols: list[str], lv: tuple[int, ...]) -> npt.NDArray[np.int64]:
        """The class sizes of (validated, non-empty) ``cols`` at ``lv``: the engine's query."""
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
        """Return class statistics (see :class:`Engine`), numbered as the numpy engine does."""
        cols = list(columns)
        lv = self.validate(cols, levels)
        self.validate(list(sensitive), None)
        return self._class_stats(cols, lv, list(sensitive), with_rows, with_keys)

    def _class_stats(
        self,
        cols: list[str],
        lv: tuple[int, ...],
        sensitive: list[str],
        with_rows: bool,
        with_keys: bool,
    ) -> ClassStats:
        """:meth:`class_stats` of validated arguments: the engine's queries."""
        raise NotImplementedError

    def weighted_class_sizes(
        self, columns: Sequence[str], levels: AttributeLevels | None, weight: str
    ) -> WeightedClasses:
        """Class sizes and the sum of ``weight`` per class (see :class:`Engine`), with the
        facts about the weights, from one grouped query (``_weight_classes``)."""
        cols = list(columns)
        lv = self.validate(cols, levels)
        self.validate([weight], None)
        got = self._weight_classes(cols, lv, weight)
        lowest = np.asarray(got["lowest"], dtype=np.float64)  # nan: a class without numbers
        bad = [value for value in got["bad"] if value is not None]
        return WeightedClasses(
            sizes=np.asarray(got["n"], dtype=np.int64),
            weights=np.nan_to_num(np.asarray(got["w"], dtype=np.float64)),
            missing=int(np.asarray(got["missing"], dtype=np.int64).sum()),
            not_numeric=str(bad[0]) if bad else None,
            lowest=float(np.nanmin(lowest)) if np.isfinite(lowest).any() else float("nan"),
            total=float(np.nansum(np.asarray(got["w"], dtype=np.float64))),
        )

    def _weight_classes(self, cols: list[str], lv: tuple[int, ...], weight: str) -> dict[str, Any]:
        """Per class of ``cols`` at ``lv``, in one query: its rows ``n``, the sum ``w`` of its
        numeric weights, its rows without a weight ``missing``, its smallest numeric weight
        ``lowest`` (null without any) and a weight that is no number ``bad`` (or null)."""
        raise NotImplementedError

    def distinct_counts(self, columns: Sequence[str], *, rows: int | None = None) -> dict[str, int]:
        """Return the distinct values of each column (a null counts as one), in one pass;
        a list, map or struct column by its values. With ``rows``, among ``rows`` records
        (the first ones the engine reads, the records :meth:`head` gives)."""
        cols = list(columns)
        check_columns(cols, self.columns)
        if not cols:
            return {}
        return self._distinct_counts(cols, rows)

    def _distinct_counts(self, cols: list[str], rows: int | None) -> dict[str, int]:
        raise NotImplementedError

    def head(self, columns: Sequence[str], rows: int) -> EncodedTable:
        """Return ``rows`` records of ``columns`` (the first ones the engine reads, the
        records :meth:`distinct_counts` with ``rows`` counts among); see :meth:`Engine.head`."""
        cols = list(dict.fromkeys(columns))
        self.validate(cols, None)
        return self._head(cols, int(rows))

    def _head(self, cols: list[str], rows: int) -> EncodedTable:
        raise NotImplementedError

    def frequency_set(self, columns: Sequence[str]) -> EncodedTable:
        """Return the distinct combinations of ``columns`` with their counts (one
        grouping); see :meth:`Engine.frequency_set`."""
        cols = list(dict.fromkeys(columns))
        self.validate(cols, None)
        if not cols:
            raise InputError("A frequency set needs at least one column.")
        return self._frequency_set(cols)

    def _frequency_set(self, cols: list[str]) -> EncodedTable:
        raise NotImplementedError

    def partitions(
        self,
        columns: Sequence[str],
        *,
        categories: Mapping[str, npt.NDArray[np.object_]],
        order_by: Mapping[str, Hierarchy],
        block_rows: int,
    ) -> Iterator[tuple[npt.NDArray[np.int64], EncodedTable]]:
        """Stream the rows sorted by ``order_by`` in blocks (see :meth:`Engine.partitions`);
        each sort key is a value's position in its hierarchy (a value not in the hierarchy
        and a null sort last), ties in the source's order."""
        cols = list(dict.fromkeys(columns))
        self.validate(list(dict.fromkeys([*cols, *order_by])), None)
        missing = [c for c in cols if c not in categories]
        if missing:
            raise ParameterError(f"No labels given for column {missing[0]!r} of the partitions.")
        rows = int(block_rows)
        if rows < 1:
            raise ParameterError(f"The 'block_rows' of partitions must be >= 1. Got {rows}.")
        yield from self._blocks.partitions(cols, categories, order_by, rows)

    def stage_labels(
        self,
        rows: npt.NDArray[np.int64],
        labels: Mapping[str, EncodedColumn],
        keep: npt.NDArray[np.bool_],
    ) -> None:
        """Write one block's labels to a Parquet file of the engine's folder (see
        :meth:`Engine.stage_labels`)."""
        self._blocks.stage_labels(rows, labels, keep)

    def clear_staged(self) -> None:
        """Delete the staged labels."""
        self._blocks.clear_staged()

    def write_staged_release(
        self,
        plan: RowsPlan,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        separator: str = ",",
    ) -> int:
        """Write the staged release in the source's order (see
        :meth:`Engine.write_staged_release`)."""
        return self._blocks.write_staged_release(plan, path, fmt=fmt, separator=separator)

    def staged_mismatches(
        self,
        plan: RowsPlan,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        separator: str = ",",
    ) -> int:
        """Count the written rows that differ from the staged labels (see
        :meth:`Engine.staged_mismatches`)."""
        return self._blocks.staged_mismatches(plan, path, fmt=fmt, separator=separator)

    def staged_spanning(
        self,
        plan: RowsPlan,
        columns: Sequence[str],
        categories: Mapping[str, npt.NDArray[np.object_]],
    ) -> tuple[int, npt.NDArray[np.int64], EncodedTable, EncodedTable]:
        """The released classes whose labels occur in more than one staged block (see
        :meth:`Engine.staged_spanning`)."""
        return self._blocks.staged_spanning(plan, columns, categories)

    def write_release(
        self,
        plan: ReleasePlan,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        separator: str = ",",
    ) -> int | None:
        """Write the release ``plan`` describes to ``path``, the rows in the source's order
        (see :meth:`Engine.write_release`)."""
        return self._writer.write(plan, path, fmt=fmt, separator=separator)

    def release_stats(
        self,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        quasi_identifiers: Sequence[str],
        sensitive: Sequence[str] = (),
        separator: str = ",",
    ) -> ClassStats:
        """Group a written release again, read back from its file (see
        :meth:`Engine.release_stats`)."""
        return self._writer.release_stats(
            path,
            fmt=fmt,
            quasi_identifiers=quasi_identifiers,
            sensitive=sensitive,
            separator=separator,
        )
