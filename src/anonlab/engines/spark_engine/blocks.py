"""Per-partition releases by Spark: the rows sorted by Spark into Parquet parts the driver
reads in blocks, each block's verified labels staged in a Parquet file, the release written
by joining them to the source by row position."""

from __future__ import annotations

import os
import shutil
import tempfile
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
from anonlab.engines.spark_engine.reading import position_column
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

if TYPE_CHECKING:
    from anonlab.engines.spark_engine.engine import SparkEngine

__all__ = ["SparkBlocks"]


class SparkBlocks:
    """The partitions and staged labels of a :class:`~anonlab.engines.spark_engine.SparkEngine`.

    Examples
    --------
    >>> from anonlab.engines.spark_engine import SparkEngine
    >>> with SparkEngine("people.parquet") as engine:  # doctest: +SKIP
    ...     blocks = list(engine.partitions(["age"], categories=cats, order_by={}, block_rows=100))
    """

    def __init__(self, engine: SparkEngine) -> None:
        self._engine = engine
        self._staged: list[Path] = []  # per-partition labels, one Parquet file per block
        self._staged_rows = 0
        self._staged_kept = 0

    def partitions(
        self,
        cols: list[str],
        categories: Mapping[str, npt.NDArray[np.object_]],
        order_by: Mapping[str, Hierarchy],
        rows: int,
    ) -> Iterator[tuple[npt.NDArray[np.int64], EncodedTable]]:
        """Stream the rows sorted by ``order_by`` in blocks (arguments checked by
        :meth:`SqlEngine.partitions <anonlab.engines.sql.SqlEngine.partitions>`).

        Each sort key is a value's place among its hierarchy's values (a broadcast join; a
        value not in the hierarchy and a null sort last), then the row's position. Spark
        sorts the rows (range partitions, spilling to its local disks) and writes the
        columns asked for into the engine's scratch folder as Parquet parts, which the
        driver reads part after part, ``block_rows`` rows at a time.
        """
        F = self._engine._F
        pa = self._engine._pa
        pq = import_optional("pyarrow.parquet")
        frame = self._engine._data
        keys = []
        for i, (c, h) in enumerate(order_by.items()):
            leaves = list(dict.fromkeys(r[0] for r in h.rows()))
            places = pa.table(
                {
                    f"o{i}": pa.array(leaves, type=pa.string()),
                    f"k{i}": pa.array(np.arange(len(leaves), dtype=np.int64)),
                }
            )
            frame = frame.join(
                F.broadcast(self._engine._frame(places)),
                F.col(self._engine._internal[c]) == F.col(f"o{i}"),
                "left",
            )
            keys.append(F.col(f"k{i}").asc_nulls_last())
        ordered = frame.orderBy(*keys, F.col("mid")).select(
            "mid", *[F.col(self._engine._internal[c]).alias(f"b{j}") for j, c in enumerate(cols)]
        )
        folder = Path(tempfile.mkdtemp(prefix="sorted-", dir=self._engine._scratch()))
        try:
            self._engine._guard(
                lambda: ordered.write.mode("overwrite").parquet(folder.resolve().as_uri())
            )
            lookup = label_lookup(categories, cols)

            def batches() -> Iterator[Any]:
                for part in sorted(folder.glob("part-*")):
                    yield from pq.ParquetFile(part).iter_batches(batch_size=min(rows, 1 << 16))

            for table in blocks_of(batches(), rows, pa):
                block = table.select([f"b{j}" for j in range(len(cols))]).rename_columns(cols)
                yield (
                    self._engine._positions(table.column("mid")),
                    encode_block(block, cols, categories, lookup, self._engine._source_path),
                )
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def stage_labels(
        self,
        rows: npt.NDArray[np.int64],
        labels: Mapping[str, EncodedColumn],
        keep: npt.NDArray[np.bool_],
    ) -> None:
        """Write one block's labels to a Parquet file of the engine's scratch folder (see
        :meth:`Engine.stage_labels`); each column under its internal name."""
        path = self._engine._scratch() / "staged" / f"block_{len(self._staged):06d}.parquet"
        names = {c: self._engine._internal[c] for c in labels}
        pq = import_optional("pyarrow.parquet")
        stage_block(path, len(self._staged), rows, labels, keep, self._engine._pa, pq, names)
        self._staged.append(path)
        self._staged_rows += len(rows)
        self._staged_kept += int(np.count_nonzero(keep))

    def clear_staged(self) -> None:
        """Delete the staged labels."""
        for path in self._staged:
            path.unlink(missing_ok=True)
        self._staged = []
        self._staged_rows = self._staged_kept = 0

    def _staged_frame(self) -> Any:
        """The staged labels as a Spark DataFrame (columns :data:`ROW`, :data:`KEEP`,
        :data:`BLOCK` and the replaced columns under their internal names)."""
        if not self._staged:
            raise ParameterError("No labels are staged: nothing to release.")
        uris = [p.resolve().as_uri() for p in self._staged]
        return self._engine._guard(lambda: self._engine.spark.read.parquet(*uris))

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

        The source's rows, each with its position (the order Spark reads them in), are
        joined with the staged labels by position and sorted by it; a row without a label
        stops the job with an error, and the staged rows must be the source's in number, so
        every row has exactly one label. Written as :meth:`write_release` writes, to one
        file (CSV, gzipped CSV or Parquet).
        """
        F = self._engine._F
        if fmt not in ("csv", "csv.gz", "parquet"):
            raise ParameterError(f"Unknown release format {fmt!r}; use csv, csv.gz, parquet.")
        check_columns(list(plan.columns), self._engine.columns)
        staged = self._staged_frame()
        if self._staged_rows != self._engine.n_rows:
            raise DataFormatError(
                f"Cannot write the release of {self._engine._label}: {self._staged_rows} rows are "
                f"staged for its {self._engine.n_rows} rows."
            )
        source, n = self._engine._with_positions(self._engine._source()[0], "_anonlab_pos")
        if n != self._engine.n_rows:  # (the typed rows read again: the rows the blocks saw)
            raise DataFormatError(
                f"Cannot write the release of {self._engine._label}: it now has {n} rows, the blocks "
                f"had {self._engine.n_rows}."
            )
        replaced = list(plan.replaced)
        labels = staged.select(
            F.col(ROW).alias("_anonlab_at"),
            F.col(KEEP).alias("_anonlab_keep"),
            *[
                F.col(self._engine._internal[c]).alias(f"_anonlab_l{i}")
                for i, c in enumerate(replaced)
            ],
        )
        joined = source.join(labels, F.col("_anonlab_pos") == F.col("_anonlab_at"), "left")
        keep = F.col("_anonlab_keep")
        if not plan.mask_suppressed:  # (a row without a label stays, to stop the job)
            joined = joined.where(keep.isNull() | keep)
        select = []
        for i, c in enumerate(plan.columns):
            if c in plan.replaced:
                expr = F.col(f"_anonlab_l{replaced.index(c)}")
                if plan.mask_suppressed and c in plan.masked:
                    expr = F.when(keep, expr).otherwise(F.lit("*"))
            else:
                expr = F.col(self._engine._internal[c])
            if i == 0:  # every row checks that it has a label
                expr = F.when(
                    F.col("_anonlab_at").isNull(),
                    F.raise_error(F.lit("a row of the source has no staged label")),
                ).otherwise(expr)
            select.append(expr.alias(c))
        frame = joined.orderBy("_anonlab_pos").select(*select)
        written = self._engine._writer.write_frame(frame, Path(path), fmt, separator)
        if written is None:
            return self._staged_rows if plan.mask_suppressed else self._staged_kept
        return written

    def staged_mismatches(
        self,
        plan: RowsPlan,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        separator: str = ",",
    ) -> int:
        """Count the written rows that differ from the staged labels (see
        :meth:`Engine.staged_mismatches`): the file's rows numbered in its order beside the
        kept labels numbered in the source's order (their positions when no row was
        removed; else sorted by position and kept by Spark while they are numbered), joined
        on their numbers (a row too many or too few meets no partner)."""
        F = self._engine._F
        cols = list(plan.replaced)
        staged = self._staged_frame()
        masked = [
            F.when(F.col(KEEP), F.col(self._engine._internal[c]))
            .otherwise(F.lit("*"))
            .alias(f"s{i}")
            if plan.mask_suppressed and c in plan.masked
            else F.col(self._engine._internal[c]).alias(f"s{i}")
            for i, c in enumerate(cols)
        ]
        ordered = None
        if plan.mask_suppressed or self._staged_kept == self._staged_rows:
            kept = staged.select(F.col(ROW).alias("sn"), *masked)  # a row's number: its position
        else:  # rows removed: the kept ones numbered in order (sorted, kept by Spark meanwhile)
            ordered = staged.where(F.col(KEEP)).orderBy(ROW).select(*masked).persist()
            kept = self._engine._with_positions(ordered, "sn")[0]
        try:
            with self._engine._writer.written(path, fmt, separator) as (frame, names):
                check_columns(cols, names)
                at = {n: f"c{i}" for i, n in enumerate(names)}
                written = self._engine._with_positions(
                    frame.select(
                        *[F.col(at[c]).cast("string").alias(f"w{i}") for i, c in enumerate(cols)]
                    ),
                    "wn",
                )[0].withColumn("one", F.lit(1))
                both = written.join(kept, F.col("wn") == F.col("sn"), "full_outer")
                differ = F.col("one").isNull() | F.col("sn").isNull()
                for i in range(len(cols)):
                    differ = differ | ~F.col(f"w{i}").eqNullSafe(F.col(f"s{i}"))
                return int(self._engine._guard(lambda: both.where(differ).count()))
        finally:
            if ordered is not None:
                ordered.unpersist()

    def staged_spanning(
        self,
        plan: RowsPlan,
        columns: Sequence[str],
        categories: Mapping[str, npt.NDArray[np.object_]],
    ) -> tuple[int, npt.NDArray[np.int64], EncodedTable, EncodedTable]:
        """The released classes whose labels occur in more than one staged block (see
        :meth:`Engine.staged_spanning`): one ``groupBy`` of the kept staged labels, then the
        rows of those classes joined (broadcast) and joined to the source by position."""
        F = self._engine._F
        pa = self._engine._pa
        staged = self._staged_frame().where(F.col(KEEP))
        keys = [F.col(self._engine._internal[c]).alias(f"k{j}") for j, c in enumerate(plan.masked)]
        span = self._engine._collect(
            staged.groupBy(*keys)
            .agg(F.countDistinct(BLOCK).alias("_anonlab_blocks"))
            .where(F.col("_anonlab_blocks") > 1)
            .drop("_anonlab_blocks")
        )
        n = span.num_rows
        cols = list(dict.fromkeys(columns))
        empty = EncodedTable(())
        if not n or not cols:
            return n, np.zeros(0, dtype=np.int64), empty, empty
        classes = self._engine._frame(
            span.append_column("cls", pa.array(np.arange(n, dtype=np.int64)))
        )
        on = None
        for j, c in enumerate(plan.masked):
            cond = F.col(self._engine._internal[c]).eqNullSafe(F.col(f"k{j}"))
            on = cond if on is None else on & cond
        replaced = list(plan.replaced)
        rows = staged.join(F.broadcast(classes), on, "inner").select(
            F.col(ROW).alias("_anonlab_at"),
            "cls",
            *[F.col(self._engine._internal[c]).alias(f"l{i}") for i, c in enumerate(replaced)],
        )
        source = self._engine._data.select(
            position_column(F, F.col("mid"), self._engine._row_offsets()).alias("_anonlab_pos"),
            *[F.col(self._engine._internal[c]).alias(f"s{i}") for i, c in enumerate(cols)],
        )
        table = self._engine._collect(
            rows.join(source, F.col("_anonlab_at") == F.col("_anonlab_pos"), "inner")
            .orderBy("_anonlab_at")
            .select(
                "cls",
                *[f"l{i}" for i in range(len(replaced))],
                *[f"s{i}" for i in range(len(cols))],
            )
        )
        row_class = np.asarray(table.column("cls").to_numpy(), dtype=np.int64)
        lookup = label_lookup(categories, cols)
        original = encode_block(
            table.select([f"s{i}" for i in range(len(cols))]).rename_columns(cols),
            cols,
            categories,
            lookup,
        )
        released = EncodedTable(
            tuple(encode_text(c, table.column(f"l{i}")) for i, c in enumerate(replaced))
        )
        return n, row_class, original, released
