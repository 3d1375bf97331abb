"""Per-partition releases by DuckDB: the rows sorted into blocks, each block's labels
staged in a Parquet file, the release written by joining them to the source by position."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from anonlab._optional import import_optional
from anonlab._validation import check_columns
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.table import EncodedColumn, EncodedTable
from anonlab.engines.base import RowsPlan
from anonlab.engines.duckdb_engine.dialect import ROW_GROUP_ROWS, copy_options, csv_scan, summary
from anonlab.engines.sql import literal, quoted
from anonlab.engines.staging import (
    BLOCK,
    KEEP,
    ROW,
    blocks_of,
    encode_block,
    encode_text,
    label_lookup,
    stage_block,
)
from anonlab.exceptions import DataFormatError, ParameterError
from anonlab.io.temporary import private_file

if TYPE_CHECKING:
    from anonlab.engines.duckdb_engine.engine import DuckDBEngine

__all__ = ["DuckDBBlocks"]


class DuckDBBlocks:
    """The partitions and staged labels of a :class:`~anonlab.engines.duckdb_engine.DuckDBEngine`.

    Examples
    --------
    >>> from anonlab.engines.duckdb_engine import DuckDBEngine
    >>> with DuckDBEngine("people.csv") as engine:  # doctest: +SKIP
    ...     blocks = list(engine.partitions(["age"], categories=cats, order_by={}, block_rows=100))
    """

    def __init__(self, engine: DuckDBEngine) -> None:
        self._engine = engine
        self._staged: list[Path] = []  # per-partition labels, one Parquet file per block
        self._staged_sorted = False  # whether the table staged_labels holds them, sorted

    def partitions(
        self,
        cols: list[str],
        categories: Mapping[str, npt.NDArray[np.object_]],
        order_by: Mapping[str, Hierarchy],
        rows: int,
    ) -> Iterator[tuple[npt.NDArray[np.int64], EncodedTable]]:
        """Stream the rows sorted by ``order_by`` in blocks (arguments checked by
        :meth:`SqlEngine.partitions <anonlab.engines.sql.SqlEngine.partitions>`).

        One ``COPY (SELECT ... ORDER BY ...)`` writes the columns asked for, sorted, to a
        Parquet file in the engine's folder (DuckDB sorts beyond its memory limit by
        spilling); the blocks are then read from it ``block_rows`` rows at a time. Each
        sort key is a value's position in the ENUM of its hierarchy's values (a value not
        in the hierarchy and a null sort last).
        """
        pa = import_optional("pyarrow")
        pq = import_optional("pyarrow.parquet")
        keys = [
            f"enum_code(TRY_CAST({self._engine._text(c)} AS {self._engine._enum_type(c, h)})) NULLS LAST"
            for c, h in order_by.items()
        ]
        select = ", ".join(f"{self._engine._text(c)} AS {quoted(c)}" for c in cols)
        sorted_path = private_file(
            self._engine._tmp / f"sorted_{next(self._engine._serial)}.parquet"
        )
        self._engine._run(
            f"COPY (SELECT {quoted(ROW)}, {select} FROM {self._engine._kept_rows()} "
            f"ORDER BY {', '.join([*keys, quoted(ROW)])}) TO {literal(str(sorted_path))} "
            f"(FORMAT parquet, ROW_GROUP_SIZE {ROW_GROUP_ROWS}, USE_TMP_FILE false)"
        )
        lookup = label_lookup(categories, cols)
        try:
            batches = pq.ParquetFile(sorted_path).iter_batches(batch_size=min(rows, 1 << 16))
            for table in blocks_of(batches, rows, pa):
                yield self._block(table, cols, categories, lookup)
        finally:
            sorted_path.unlink(missing_ok=True)

    def _block(
        self,
        table: Any,
        cols: list[str],
        categories: Mapping[str, npt.NDArray[np.object_]],
        lookup: Mapping[str, Mapping[Any, int]],
    ) -> tuple[npt.NDArray[np.int64], EncodedTable]:
        """One block: its rows' positions and its columns, encoded with ``categories``."""
        row = np.asarray(table.column(ROW).to_numpy(), dtype=np.int64)
        return row, encode_block(table, cols, categories, lookup, self._engine.source_name)

    def stage_labels(
        self,
        rows: npt.NDArray[np.int64],
        labels: Mapping[str, EncodedColumn],
        keep: npt.NDArray[np.bool_],
    ) -> None:
        """Write one block's labels to a Parquet file of the engine's folder (pyarrow; the
        DuckDB connection is not used, so a partition stream stays open)."""
        if self._staged_sorted:  # labels staged after a release was written: sort again
            self._engine._run("DROP TABLE IF EXISTS staged_labels")
            self._staged_sorted = False
        path = self._engine._tmp / "staged" / f"block_{len(self._staged):06d}.parquet"
        pa = import_optional("pyarrow")
        stage_block(
            path, len(self._staged), rows, labels, keep, pa, import_optional("pyarrow.parquet")
        )
        self._staged.append(path)

    def clear_staged(self) -> None:
        """Delete the staged labels."""
        for path in self._staged:
            path.unlink(missing_ok=True)
        self._staged = []
        self._staged_sorted = False
        self._engine._run("DROP TABLE IF EXISTS staged_labels")

    def _staged_table(self, plan: RowsPlan) -> str:
        """A temporary table of the staged labels sorted by row position (made once)."""
        if not self._staged:
            raise ParameterError("No labels are staged: nothing to release.")
        if not self._staged_sorted:
            files = "[" + ", ".join(literal(str(p)) for p in self._staged) + "]"
            cols = ", ".join(quoted(c) for c in (ROW, KEEP, BLOCK, *plan.replaced))
            self._engine._run(
                f"CREATE TEMP TABLE staged_labels AS SELECT {cols} FROM read_parquet({files}) "
                f"ORDER BY {quoted(ROW)}"
            )
            self._staged_sorted = True
        return "staged_labels"

    def write_staged_release(
        self,
        plan: RowsPlan,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        separator: str = ",",
    ) -> int:
        """Write the staged release in the source's order (see
        :meth:`Engine.write_staged_release`).

        The staged labels, sorted by row position, are joined to the source row by row
        (``POSITIONAL JOIN``: no hash table, no sort of the wide rows, the source's order
        kept); a row whose position differs from its label's stops the query with an error.
        """
        check_columns(list(plan.columns), self._engine.columns)
        options = copy_options(fmt, separator)
        labels = self._staged_table(plan)
        select = []
        for i, c in enumerate(plan.columns):
            if c in plan.replaced:
                expr = f"L.{quoted(c)}"
                if plan.mask_suppressed and c in plan.masked:
                    expr = f"CASE WHEN L.{quoted(KEEP)} THEN {expr} ELSE '*' END"
            else:
                expr = self._engine._copied(c, fmt)
            if i == 0:  # every row checks that its label is its own
                expr = (
                    f"CASE WHEN s.{quoted(ROW)} IS DISTINCT FROM L.{quoted(ROW)} THEN "
                    f"error('a staged label is not aligned with its row') ELSE {expr} END"
                )
            select.append(f"{expr} AS {quoted(c)}")
        where = "" if plan.mask_suppressed else f" WHERE L.{quoted(KEEP)}"
        query = (
            f"SELECT {', '.join(select)} FROM {self._engine._kept_rows()} AS s "
            f"POSITIONAL JOIN {labels} AS L{where}"
        )
        return self._engine._copy_release(query, path, options)

    def staged_mismatches(
        self,
        plan: RowsPlan,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        separator: str = ",",
    ) -> int:
        """Count the written rows that differ from the staged labels (see
        :meth:`Engine.staged_mismatches`): the file's rows in its order beside the kept
        labels in the source's order (``POSITIONAL JOIN``)."""
        labels = self._staged_table(plan)
        cols = list(plan.replaced)
        casts = ", ".join(f"CAST({quoted(c)} AS VARCHAR) AS {quoted(c)}" for c in cols)
        scan = (
            f"read_parquet({literal(str(path))})"
            if fmt == "parquet"
            else csv_scan(path, fmt, separator)
        )
        masked = [
            f"CASE WHEN {quoted(KEEP)} THEN {quoted(c)} ELSE '*' END AS {quoted(c)}"
            if plan.mask_suppressed and c in plan.masked
            else quoted(c)
            for c in cols
        ]
        where = "" if plan.mask_suppressed else f" WHERE {quoted(KEEP)}"
        staged = f"SELECT {quoted(ROW)}, {', '.join(masked)} FROM {labels}{where}"
        written = f"SELECT 1 AS one, {casts} FROM {scan}"
        differ = " OR ".join(
            ["w.one IS NULL", f"l.{quoted(ROW)} IS NULL"]
            + [f"w.{quoted(c)} IS DISTINCT FROM l.{quoted(c)}" for c in cols]
        )
        try:  # both in order, side by side (a row too many or too few meets a NULL)
            res = self._engine.con.execute(
                f"SELECT count(*) FROM ({written}) w POSITIONAL JOIN ({staged}) l WHERE {differ}"
            ).fetchall()
        except self._engine._duckdb.Error as exc:
            raise DataFormatError(f"Cannot read the written release back: {summary(exc)}") from None
        return int(res[0][0])

    def staged_spanning(
        self,
        plan: RowsPlan,
        columns: Sequence[str],
        categories: Mapping[str, npt.NDArray[np.object_]],
    ) -> tuple[int, npt.NDArray[np.int64], EncodedTable, EncodedTable]:
        """The released classes whose labels occur in more than one staged block (see
        :meth:`Engine.staged_spanning`): one ``GROUP BY`` of the staged labels, then their
        kept rows joined to the source."""
        labels = self._staged_table(plan)
        keys = [quoted(c) for c in plan.masked]
        span = (
            f"SELECT {', '.join(keys)}, row_number() OVER () - 1 AS cls FROM {labels} "
            f"WHERE {quoted(KEEP)} GROUP BY {', '.join(keys)} "
            f"HAVING count(DISTINCT {quoted(BLOCK)}) > 1"
        )
        self._engine._run(f"CREATE OR REPLACE TEMP TABLE spanning AS {span}")
        n = int(self._engine._run("SELECT count(*) FROM spanning").fetchall()[0][0])
        cols = list(dict.fromkeys(columns))
        empty = EncodedTable(())
        if not n or not cols:
            return n, np.zeros(0, dtype=np.int64), empty, empty
        on = " AND ".join(f"L.{k} IS NOT DISTINCT FROM sp.{k}" for k in keys)
        staged = ", ".join(f"L.{quoted(c)} AS {quoted('l_' + c)}" for c in plan.replaced)
        source = ", ".join(f"{self._engine._text(c, 'r.')} AS {quoted('s_' + c)}" for c in cols)
        try:
            table = self._engine.con.sql(
                f"SELECT sp.cls, {staged}, {source} FROM {labels} L JOIN spanning sp ON {on} "
                f"JOIN {self._engine._kept_rows()} r ON r.{quoted(ROW)} = L.{quoted(ROW)} "
                f"WHERE L.{quoted(KEEP)} ORDER BY L.{quoted(ROW)}"
            ).to_arrow_table()
        except self._engine._duckdb.Error as exc:
            raise DataFormatError(f"Cannot read {self._engine._label()}: {summary(exc)}") from None
        row_class = np.asarray(table.column("cls").to_numpy(), dtype=np.int64)
        lookup = label_lookup(categories, cols)
        renamed = table.select([f"s_{c}" for c in cols]).rename_columns(cols)
        renamed = renamed.append_column(ROW, table.column("cls"))
        _, original = self._block(renamed, cols, categories, lookup)
        released = EncodedTable(
            tuple(encode_text(c, table.column(f"l_{c}")) for c in plan.replaced)
        )
        return n, row_class, original, released
