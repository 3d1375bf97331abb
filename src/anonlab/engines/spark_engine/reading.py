"""How the Spark engine reads its source and numbers its rows.

A source becomes a DataFrame with columns ``c0..`` (names may hold characters Spark SQL
does not take); row positions follow the order of the DataFrame's partitions, as Spark reads
them. Each row gets its position from ``monotonically_increasing_id()`` (its partition and
its place there) and the number of rows of the partitions before it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from anonlab.data.source import CsvOptions, FileSource, header_names, infer_format
from anonlab.data.table import EncodedTable
from anonlab.engines.spark_engine.text import (
    SPLIT_BYTES,
    as_text,
    csv_reader_options,
    internal_names,
)
from anonlab.engines.sql import text_table
from anonlab.exceptions import InputError

if TYPE_CHECKING:
    from anonlab.engines.spark_engine.engine import SparkEngine

__all__ = ["arrow_table", "partition_starts", "position_column", "read_source"]

#: Bits of ``monotonically_increasing_id()`` that number a row within its partition.
ROW_BITS = 33


def read_source(
    engine: SparkEngine, source: Any, csv_options: CsvOptions | None, sql: Any, types: Any
) -> tuple[Any, list[str], CsvOptions | None, bool, Callable[[], Any] | None]:
    """The source as a DataFrame with columns ``c0..``, its names, the CSV options whose
    markers apply, whether to keep it (parsed once) and, when the DataFrame holds text
    made from typed columns, how to make the typed one (for releases). Sets the engine's
    label of the data and what :meth:`SparkEngine._guard` looks at (``sql`` and ``types``
    are ``pyspark.sql`` and ``pyspark.sql.types``)."""
    reader = engine.spark.read
    engine._whole_csv = None
    engine._csv_file = None
    if isinstance(source, FileSource):
        path = source.path
        engine._label = repr(str(path))
        engine._source_path = str(path)
        if path.is_dir():
            raise InputError(f"The data file {str(path)!r} is a directory; give a file.")
        if not path.exists():
            raise InputError(f"Data file {str(path)!r} does not exist.")
        if source.format == "parquet":
            raw = engine._guard(lambda: reader.parquet(str(path.resolve())))
            names = list(raw.columns)
            renamed = raw.toDF(*internal_names(names))
            return renamed, names, None, False, lambda: renamed
        opts = source.csv
        engine._csv_file = source
        names = header_names(path, opts)
        schema = types.StructType(
            [types.StructField(c, types.StringType()) for c in internal_names(names)]
        )
        # one task reads a gzipped file, or one under Spark's split size, anyway: let
        # its quoted fields hold line breaks
        whole = path.suffix.lower() == ".gz" or path.stat().st_size <= SPLIT_BYTES
        engine._whole_csv = source if whole else None
        raw = reader.csv(
            str(path.resolve()), schema=schema, **csv_reader_options(opts, multi_line=whole)
        )
        return raw, names, opts, True, None
    if isinstance(source, str):  # a URI the cluster reads
        engine._label = repr(source)
        engine._source_path = source
        if infer_format(Path(source)) == "parquet":
            raw = engine._guard(lambda: reader.parquet(source))
            names = list(raw.columns)
            renamed = raw.toDF(*internal_names(names))
            return renamed, names, None, False, lambda: renamed
        opts = csv_options or CsvOptions()
        raw = engine._guard(
            lambda: reader.csv(
                source, **csv_reader_options(opts, multi_line=source.endswith(".gz"))
            )
        )
        names = list(opts.names) if opts.names else list(raw.columns)
        if not opts.header and not opts.names:
            names = [f"c{i}" for i in range(len(raw.columns))]
        return raw.toDF(*internal_names(names)), names, opts, True, None
    if isinstance(source, sql.DataFrame):
        names = list(source.columns)
        renamed = source.toDF(*internal_names(names))
        return renamed, names, None, False, lambda: renamed
    original = arrow_table(engine._pa, source)
    names = list(original.column_names)
    text = as_text(engine._pa, original)
    frame = engine._frame(text.rename_columns(internal_names(names)))
    typed = None
    if text is not original:  # keep numbers numbers in a release

        def typed() -> Any:
            return engine._frame(original.rename_columns(internal_names(names)))

    return frame, names, None, True, typed


def arrow_table(pa: Any, source: Any) -> Any:
    """An in-memory table as an Arrow table (an EncodedTable's columns as text)."""
    if isinstance(source, EncodedTable):
        return text_table(source, pa)
    if isinstance(source, pa.Table):
        return source
    if hasattr(source, "to_arrow"):  # polars
        return source.to_arrow()
    if hasattr(source, "iloc"):  # pandas
        return pa.Table.from_pandas(source, preserve_index=False)
    raise InputError(
        "The Spark engine takes a path, a FileSource, a Spark DataFrame, an EncodedTable, "
        f"an Arrow table or a pandas/polars frame; got {type(source).__name__}."
    )


def partition_starts(
    F: Any, collect: Callable[[Any], Any], frame: Any, mid: str
) -> tuple[npt.NDArray[np.int64], int]:
    """The rows of ``frame`` before each of its partitions (one job: its rows counted
    per partition of their ``monotonically_increasing_id()`` ``mid``), and its rows."""
    per_part = collect(frame.groupBy(F.shiftright(F.col(mid), ROW_BITS).alias("p")).count())
    parts = np.asarray(per_part.column("p").to_numpy(), dtype=np.int64)
    counts = np.asarray(per_part.column("count").to_numpy(), dtype=np.int64)
    rows = np.zeros(int(parts.max()) + 1 if parts.size else 0, dtype=np.int64)
    rows[parts] = counts
    starts = np.concatenate([[0], np.cumsum(rows)[:-1]]).astype(np.int64)
    return starts, int(counts.sum())


def position_column(F: Any, mid: Any, starts: npt.NDArray[np.int64]) -> Any:
    """The row position of each row, as a Spark column, from its id ``mid`` and the
    rows before each partition (:func:`partition_starts`)."""
    first = F.array(*[F.lit(int(x)) for x in starts]) if starts.size else F.array(F.lit(0))
    part = (F.shiftright(mid, ROW_BITS) + 1).cast("int")
    return F.element_at(first, part) + mid.bitwiseAND(F.lit((1 << ROW_BITS) - 1))
