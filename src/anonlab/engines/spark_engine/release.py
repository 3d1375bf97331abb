"""Releases written by Spark: the release as a DataFrame, written in parallel as parts that
the driver joins into one file in partition order (or keeps as a Parquet dataset)."""

from __future__ import annotations

import contextlib
import gzip
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from anonlab._optional import import_optional
from anonlab._validation import check_columns
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.stats import ClassStats
from anonlab.engines.base import ReleasePlan
from anonlab.engines.spark_engine.classes import grouped
from anonlab.engines.spark_engine.text import (
    float_text,
    instant_text,
    internal_names,
    json_text,
    quoted_name,
    record,
)
from anonlab.engines.sql import level_table
from anonlab.exceptions import ParameterError
from anonlab.io.atomic import PARQUET_DATASET
from anonlab.io.temporary import discard, make_folder
from anonlab.io.writers import csv_header

if TYPE_CHECKING:
    from anonlab.engines.spark_engine.engine import SparkEngine

__all__ = ["SparkRelease"]


class SparkRelease:
    """The release writer of a :class:`~anonlab.engines.spark_engine.SparkEngine`.

    Examples
    --------
    >>> from anonlab.engines.spark_engine import SparkEngine
    >>> with SparkEngine("people.parquet") as engine:  # doctest: +SKIP
    ...     engine.write_release(plan, "release.parquet", fmt="parquet")
    """

    def __init__(self, engine: SparkEngine) -> None:
        self._engine = engine

    def release_frame(self, plan: ReleasePlan) -> Any:
        """The release ``plan`` describes, as a Spark DataFrame (nothing is computed yet).

        Each quasi-identifier is joined to its hierarchy's level table (broadcast), the
        suppressed classes are found by a broadcast join with their released keys (by a
        hash of the labels, then the labels themselves) and removed (or their
        quasi-identifiers masked with ``*``), identifiers are left out and every other
        column keeps its type. The rows keep the source's order.

        Parameters
        ----------
        plan : ReleasePlan
            What to release.

        Returns
        -------
        pyspark.sql.DataFrame
            With the columns ``plan.columns``, under their own names.
        """
        F = self._engine._F
        pa = self._engine._pa
        check_columns(list(plan.columns), self._engine.columns)
        qis = list(plan.quasi_identifiers)
        self._engine.validate(qis, None)
        rows, text = self._engine._source()
        labels = {}
        for j, q in enumerate(qis):
            c = self._engine._internal[q]
            lv = plan.levels[j]
            if lv == 0:
                label = text(c)
            else:
                table = self._level_frame(plan.hierarchies[q], lv).toDF(f"rl{j}", f"rt{j}")
                rows = rows.join(F.broadcast(table), text(c) == F.col(f"rl{j}"), "left")
                label = F.col(f"rt{j}")
            root = plan.root_label(j)
            if root is not None:
                label = F.coalesce(label, F.lit(root))
            labels[q] = label
        if plan.suppressed:
            # a row is suppressed when its released key is one of the suppressed classes':
            # the keys are grouped by a 64-bit hash of their labels (a broadcast table keyed
            # by a number, cheap to probe), and a row whose hash is found compares its
            # labels with the keys of that hash (nulls equal), so a collision does not count
            arrays = {
                f"s{j}": pa.array([key[j] for key in plan.suppressed], type=pa.string())
                for j in range(len(qis))
            }
            keys = self._engine._frame(pa.table(arrays))
            by_hash = keys.groupBy(
                F.xxhash64(*[F.col(f"s{j}") for j in range(len(qis))]).alias("sh")
            ).agg(F.collect_list(record(F, [F.col(f"s{j}") for j in range(len(qis))])).alias("sk"))
            released = [labels[q] for q in qis]
            rows = rows.join(F.broadcast(by_hash), F.xxhash64(*released) == F.col("sh"), "left")
            # (the labels' record is built only for the rows whose hash is found)
            flag = F.when(F.col("sk").isNull(), F.lit(False)).otherwise(
                F.array_contains("sk", record(F, released))
            )
            if plan.mask_suppressed:
                labels = {
                    q: F.when(flag, F.lit("*")).otherwise(label) for q, label in labels.items()
                }
            else:
                rows = rows.where(~flag)
        return rows.select(
            *[
                (labels[c] if c in labels else F.col(self._engine._internal[c])).alias(c)
                for c in plan.columns
            ]
        )

    def _level_frame(self, h: Hierarchy, level: int) -> Any:
        """The level table of a hierarchy (perhaps not one the engine was given)."""
        for (col, lv), table in self._engine._levels.items():
            if lv == level and self._engine.hierarchies.get(col) is h:
                return table
        return self._engine._frame(level_table(h, level, self._engine._pa))

    def write(
        self,
        plan: ReleasePlan,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        separator: str = ",",
    ) -> int | None:
        """Write the release ``plan`` describes to the file ``path`` (see
        :meth:`Engine.write_release`).

        Spark writes the release in parallel as a partitioned dataset (Parquet, or CSV parts)
        into a temporary folder beside ``path``, which the driver then concatenates, part by
        part in partition order, into the one file: the rows keep the source's order and
        memory holds one batch of rows at a time. Parquet parts are written uncompressed and
        their text columns read as the dictionaries Spark encoded them with, so the driver
        decodes no string (the file is compressed as it is written). The folder must be one
        the executors can write and the driver read (always so in local mode).

        With ``fmt`` :data:`~anonlab.io.atomic.PARQUET_DATASET` the parts are the release:
        Spark writes them (Snappy-compressed) into the new folder ``path``, nothing is
        joined, and the rows keep the source's order part after part (by file name). This is
        the format for a cluster (``path`` on storage every executor and the driver see).
        """
        if fmt not in _FORMATS:
            raise ParameterError(f"Unknown release format {fmt!r}; use {', '.join(_FORMATS)}.")
        rows = self.write_frame(self.release_frame(plan), Path(path), fmt, separator)
        if rows is None and not (plan.suppressed and not plan.mask_suppressed):
            rows = self._engine.n_rows  # CSV parts, every row kept (with rows removed, counting
            # them would run the release again: the re-check counts the written file)
        return rows

    def write_frame(self, frame: Any, target: Path, fmt: str, separator: str) -> int | None:
        """Write the rows of ``frame`` in their order to ``target`` (see
        :meth:`write_release`); return the rows written, or None for CSV parts."""
        if fmt in ("csv", "csv.gz"):  # floats, timestamps and nested columns as text
            kinds = dict(frame.dtypes)
            texts = {
                "double": lambda c: float_text(self._engine._F, frame[quoted_name(c)]),
                "float": lambda c: float_text(self._engine._F, frame[quoted_name(c)]),
                "timestamp": lambda c: instant_text(self._engine._F, quoted_name(c)),
                "timestamp_ntz": lambda c: frame[quoted_name(c)].cast("string"),
                "nested": lambda c: json_text(
                    self._engine._F, frame[quoted_name(c)]
                ),  # as numpy writes it
            }
            nested = ("array<", "map<", "struct<")
            kinds = {c: "nested" if k.startswith(nested) else k for c, k in kinds.items()}
            frame = frame.select(
                *[
                    texts[kinds[c]](c).alias(c) if kinds[c] in texts else frame[quoted_name(c)]
                    for c in frame.columns
                ]
            )
        if fmt == PARQUET_DATASET:
            self._write_parquet(
                lambda: frame.write.mode("errorifexists").parquet(target.resolve().as_uri())
            )
            pq = import_optional("pyarrow.parquet")
            return int(sum(pq.read_metadata(part).num_rows for part in target.glob("part-*")))
        folder = make_folder(".anonlab-spark-parts", target.parent)  # 0700, hidden
        parts = folder / "parts"
        try:
            writer = frame.write.mode("overwrite")
            if fmt == "parquet":  # uncompressed: the parts are read once, right away
                self._write_parquet(
                    lambda: writer.parquet(parts.resolve().as_uri(), compression=_PART_COMPRESSION)
                )
            else:
                self._engine._guard(
                    lambda: writer.csv(
                        parts.resolve().as_uri(),
                        sep=separator,
                        quote='"',
                        escape='"',
                        header=False,
                        nullValue="",
                        emptyValue='""',
                        ignoreLeadingWhiteSpace=False,
                        ignoreTrailingWhiteSpace=False,
                        lineSep="\n",
                        compression="gzip" if fmt == "csv.gz" else "none",
                    ),
                    "write the release of",
                )
            return _concatenate(
                self._engine._pa,
                sorted(parts.glob("part-*")),
                target,
                fmt,
                list(frame.columns),
                separator,
            )
        finally:
            discard(folder)

    def _write_parquet(self, write: Callable[[], Any]) -> None:
        """Run a Parquet write of Spark's with its timestamps written as microseconds from
        the epoch (``TIMESTAMP_MICROS``, as the other engines write them) instead of Spark's
        default ``INT96``, which Arrow reads back as nanoseconds and Spark then cannot read
        (the re-check, a user's next job). The session's setting is restored afterwards."""
        conf = self._engine.spark.conf
        before = conf.get(_TIMESTAMP_TYPE, None)
        conf.set(_TIMESTAMP_TYPE, "TIMESTAMP_MICROS")
        try:
            self._engine._guard(write, "write the release of")
        finally:
            if before is None:
                conf.unset(_TIMESTAMP_TYPE)
            else:
                conf.set(_TIMESTAMP_TYPE, before)

    def release_stats(
        self,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        quasi_identifiers: Sequence[str],
        sensitive: Sequence[str] = (),
        separator: str = ",",
    ) -> ClassStats:
        """Group a written release again, read back from its file by Spark (see
        :meth:`Engine.release_stats`)."""
        F = self._engine._F
        with self.written(path, fmt, separator) as (frame, names):
            check_columns(list(quasi_identifiers) + list(sensitive), names)
            at = {n: f"c{i}" for i, n in enumerate(names)}
            cols = list(quasi_identifiers)
            base = frame.select(
                *[F.col(at[c]).cast("string").alias(f"g{j}") for j, c in enumerate(cols)],
                *[F.col(at[s]).cast("string").alias(f"x{i}") for i, s in enumerate(sensitive)],
            )
            return grouped(
                self._engine._collect,
                self._engine._pa,
                base,
                cols,
                tuple(0 for _ in cols),
                list(sensitive),
                with_keys=True,
                table_order=names,
            )[0]

    @contextlib.contextmanager
    def written(
        self, path: str | os.PathLike[str], fmt: str, separator: str
    ) -> Iterator[tuple[Any, list[str]]]:
        """A written release read back by Spark: its rows (columns ``c0..``, a CSV's as
        text, a file read by one task: in its order) and its column names."""
        if fmt not in _FORMATS:
            raise ParameterError(f"Unknown release format {fmt!r}.")
        source = Path(path).resolve()
        folder = None
        label, self._engine._label = self._engine._label, "the written release"
        try:
            if fmt != PARQUET_DATASET:
                # Spark skips files named ".*" (the caller's temporary file) and decompresses
                # by suffix: read the file under a plain name
                folder = make_folder(".anonlab-spark-read", source.parent)
                (folder / f"release.{fmt}").symlink_to(source)
                source = folder / f"release.{fmt}"
            reader = self._engine.spark.read
            if fmt in ("parquet", PARQUET_DATASET):
                frame = self._engine._guard(lambda: reader.parquet(source.as_uri()))
            else:
                frame = self._engine._guard(
                    lambda: reader.csv(
                        source.as_uri(),
                        header=True,
                        sep=separator,
                        quote='"',
                        escape='"',
                        inferSchema=False,
                        mode="FAILFAST",
                        multiLine=True,
                    )
                )
            names = list(frame.columns)
            yield frame.toDF(*internal_names(names)), names
        finally:
            self._engine._label = label
            if folder is not None:
                discard(folder)


_FORMATS = ("csv", "csv.gz", "parquet", PARQUET_DATASET)
#: Compression of the Parquet parts Spark writes before they are joined into one file.
_PART_COMPRESSION = "none"
#: Rows per row group of a written Parquet release (pyarrow's default).
_ROW_GROUP = 1 << 20


def _concatenate(
    pa: Any, parts: Sequence[Path], target: Path, fmt: str, names: Sequence[str], separator: str
) -> int | None:
    """Concatenate the part files Spark wrote into ``target``, in order; return the rows
    (Parquet) or None (CSV, whose rows the parts do not tell without parsing them)."""
    if fmt == "parquet":
        pq = import_optional("pyarrow.parquet")
        rows = 0
        writer = None
        try:
            for part in parts:
                # text read as dictionaries (as Spark encoded it), so that no string is
                # decoded and hashed again; the file stores no Arrow schema, so its text is
                # read back as plain strings
                text = [f.name for f in pq.read_schema(part) if pa.types.is_string(f.type)]
                file = pq.ParquetFile(part, read_dictionary=text)
                if writer is None:  # every column nullable, without Spark's metadata
                    schema = pa.schema([f.with_nullable(True) for f in file.schema_arrow])
                    writer = pq.ParquetWriter(target, schema, store_schema=False)
                for batch in file.iter_batches(batch_size=_ROW_GROUP):
                    table = pa.Table.from_batches([batch]).cast(schema)
                    writer.write_table(table)
                    rows += table.num_rows
            if writer is None:  # no part at all: an empty table of text columns
                empty = pa.table({n: pa.array([], type=pa.string()) for n in names})
                writer = pq.ParquetWriter(target, empty.schema)
                writer.write_table(empty)
        finally:
            if writer is not None:
                writer.close()
        return rows
    header = csv_header(names, separator)
    with open(target, "wb") as out:
        out.write(gzip.compress(header) if fmt == "csv.gz" else header)
        for part in parts:  # gzip members one after the other are one gzip file
            with open(part, "rb") as fh:
                shutil.copyfileobj(fh, out, 1 << 20)
    return None


#: The Spark setting of how Parquet files store timestamps.
_TIMESTAMP_TYPE = "spark.sql.parquet.outputTimestampType"
