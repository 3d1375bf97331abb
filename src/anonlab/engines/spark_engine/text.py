"""Spark's dialect: a column made the text the questions group on, the reader's options and
Spark's errors in one line. Expression builders only: the caller passes
``pyspark.sql.functions`` as ``F`` (pyspark is imported by the engine alone).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from anonlab._optional import import_optional
from anonlab.data.labels import UTC_SUFFIX
from anonlab.data.source import CsvOptions, reader_encoding
from anonlab.engines.sql import NEVER, quoted


def clean(F: Any, name: str, kind: str, csv: CsvOptions | None) -> Any:
    """The text of column ``name`` (of Spark type ``kind``) as anonlab's readers make it
    (:func:`~anonlab.data.labels.float_labels`): a whole number in a float column without
    ``.0``, NaN null, infinities ``inf``, other numbers laid out as Python writes them
    (:meth:`_float_text`); a timestamp with a time zone as its instant in UTC
    (:meth:`_instant_text`); a CSV file's markers made null."""
    col = F.col(name)
    if kind in ("double", "float"):
        expr = float_text(F, col)
    elif kind == "timestamp":
        expr = instant_text(F, quoted_name(name))
    else:
        expr = col.cast("string")
    if csv is None:
        return expr
    if "" not in csv.na_values:
        # Spark reads an empty unquoted field as null whatever the marker: make it text
        expr = F.coalesce(expr, F.lit(""))
    if csv.strip:
        expr = F.regexp_replace(expr, r"^[ \t\r\n]+|[ \t\r\n]+$", "")
    if csv.na_values:
        expr = F.when(expr.isin(list(csv.na_values)), F.lit(None)).otherwise(expr)
    return expr


def instant_text(F: Any, column: str) -> Any:
    """The text of a timestamp column (Spark's ``timestamp``: an instant; ``column`` its
    SQL name, quoted) as :func:`~anonlab.data.labels.clock_labels` writes it: the
    instant's wall clock in UTC (counted from the epoch, so neither the session's nor the
    machine's time zone enters) and ``+00:00``."""
    utc = F.expr(
        f"CAST(timestampadd(MICROSECOND, unix_micros({column}), "
        "TIMESTAMP_NTZ'1970-01-01 00:00:00') AS STRING)"
    )
    return F.concat(utc, F.lit(UTC_SUFFIX))


def float_text(F: Any, col: Any) -> Any:
    """The text of a float column ``col`` as :meth:`_clean` writes it
    (:func:`~anonlab.data.labels.float_labels`).

    Java writes a number in scientific notation below 0.001 and from 10**7 on
    (``1.0E-5``, ``1.23456785E7``), Python below 0.0001 and from 10**16 on (``1e-05``,
    ``1e+16``): the digits Java gives are laid out as Python lays them out
    (``12345678.5``, ``0.00012``, ``1.5e+16``). Both write the shortest digits that
    read back as the number; Java 17 gives a few numbers more digits than that
    (``4.9E-324`` for ``5e-324``), which stay as Java gives them.
    """
    whole = (F.abs(col) < 2.0**53) & (col == F.floor(col))
    text = col.cast("string")
    sci = r"^(-?)(\d)\.(\d+)E(-?\d+)$"
    sign, first, rest, exp = (F.regexp_extract(text, sci, i) for i in (1, 2, 3, 4))
    rest = F.when(rest == "0", F.lit("")).otherwise(rest)  # "1.0E-5": the digit 1 only
    digits = F.concat(first, rest)
    e = exp.cast("int")
    n = F.length(digits)
    python = (
        F.when(
            (e >= -4) & (e < 0),
            F.concat(sign, F.lit("0."), F.repeat(F.lit("0"), -e - 1), digits),
        )
        .when(  # 10**7 <= |x| < 10**16 (e >= 7): the point inside the digits, or ".0"
            (e >= 0) & (e < 16) & (n > e + 1),
            F.concat(sign, digits.substr(F.lit(1), e + 1), F.lit("."), digits.substr(e + 2, n)),
        )
        .when(
            (e >= 0) & (e < 16),
            F.concat(sign, digits, F.repeat(F.lit("0"), e + 1 - n), F.lit(".0")),
        )
        .otherwise(
            F.concat(
                sign,
                first,
                F.when(rest == "", F.lit("")).otherwise(F.concat(F.lit("."), rest)),
                F.lit("e"),
                F.when(e < 0, F.lit("-")).otherwise(F.lit("+")),
                F.when(F.abs(e) < 10, F.lit("0")).otherwise(F.lit("")),  # e-05, e+100
                F.abs(e).cast("string"),
            )
        )
    )
    return (
        F.when(F.isnan(col), F.lit(None))
        .when(whole, col.cast("long").cast("string"))
        .when(col == float("inf"), F.lit("inf"))
        .when(col == float("-inf"), F.lit("-inf"))
        .when(text.contains("E"), python)
        .otherwise(text)
    )


def json_text(F: Any, col: Any) -> Any:
    """A list, map or struct column as compact JSON, a null field written as ``null`` (as
    the numpy and DuckDB engines write it; Spark leaves such fields out by default)."""
    return F.to_json(col, {"ignoreNullFields": "false"})


def quoted_name(name: str) -> str:
    """A column name as Spark SQL reads it, whatever characters it holds."""
    return quoted(name, mark="`")


def record(F: Any, columns: Sequence[Any]) -> Any:
    """A struct of ``columns`` with fields ``k0..``, compared field by field (two nulls
    are equal)."""
    return F.struct(*[c.alias(f"k{j}") for j, c in enumerate(columns)])


def as_text(pa: Any, table: Any) -> Any:
    """An Arrow table's columns as text, as :func:`anonlab.io.read_arrow` casts them (a
    float NaN null); list, map and struct columns as they are."""
    pc = import_optional("pyarrow.compute")
    if all(pa.types.is_string(t) or pa.types.is_nested(t) for t in table.schema.types):
        return table
    columns = []
    for col in table.columns:
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
        if pa.types.is_nested(col.type) or pa.types.is_string(col.type):
            columns.append(col)
            continue
        text = pc.cast(col, pa.string())
        if pa.types.is_floating(col.type):
            text = pc.if_else(pc.is_nan(col), pa.scalar(None, pa.string()), text)
        columns.append(text)
    return pa.table(columns, names=table.column_names)


def internal_names(names: Sequence[str]) -> list[str]:
    """Spark-safe column names ``c0, c1, ...`` (names may hold dots, spaces, backticks)."""
    return [f"c{i}" for i in range(len(names))]


#: Spark's default split size (``spark.sql.files.maxPartitionBytes``): a CSV file up to it
#: is read by one task, so reading it whole (quoted fields may hold line breaks) costs nothing.
SPLIT_BYTES = 128 * 2**20


#: Python's name of each encoding Spark's CSV reader takes -> Spark's name of it.
ENCODINGS = {
    "utf-8": "utf-8",
    "utf-8-sig": "utf-8",
    "iso8859-1": "iso-8859-1",
    "ascii": "us-ascii",
    "utf-16": "utf-16",
    "utf-16-be": "utf-16be",
    "utf-16-le": "utf-16le",
    "utf-32": "utf-32",
}


def csv_reader_options(opts: CsvOptions, *, multi_line: bool) -> dict[str, Any]:
    """Options of Spark's CSV reader that parse as anonlab's reader does; with
    ``multi_line`` a quoted field may hold line breaks (the file is then read by one task)."""
    return {
        "sep": opts.separator,
        "header": opts.header,
        "quote": opts.quote,
        "escape": opts.quote,  # a quote inside a quoted field is doubled (RFC 4180)
        "encoding": reader_encoding(opts.encoding, ENCODINGS, "spark"),
        "nullValue": NEVER,
        "mode": "FAILFAST",
        "multiLine": multi_line,
        "inferSchema": False,
        "enforceSchema": True,
    }


def is_spark_error(exc: BaseException) -> bool:
    """Whether ``exc`` comes from Spark or its Java gateway (not from anonlab)."""
    module = type(exc).__module__ or ""
    return module.startswith(("pyspark", "py4j"))


MALFORMED = "a malformed row"


def summary(exc: BaseException) -> str:
    """One line from a Spark error: its first meaningful line, without the Java stack."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    for ln in lines:  # the reason of a failed read, if Spark gives one
        if "Malformed" in ln or "MALFORMED" in ln:
            return (
                f"{MALFORMED} (a different number of fields, a quote not closed, or, in a "
                "file over 128 MiB that is not gzipped, a line break inside a quoted field, "
                "which Spark reads only from a gzipped file or --engine duckdb): " + ln[:160]
            )
        if "TIMESTAMP(NANOS" in ln:  # pandas writes datetimes so by default
            return (
                "it holds timestamps in nanoseconds, which Spark cannot read. Write them in "
                "microseconds (pandas: to_parquet(..., coerce_timestamps='us', "
                "allow_truncated_timestamps=True)) or use --engine duckdb or numpy."
            )
        if "(FLOAT16)" in ln:  # half floats (numpy float16) written by Arrow
            return (
                "it holds 16-bit floats (float16), which Spark cannot read. Write them as "
                "32-bit floats (pandas: df.astype({'col': 'float32'})) or use --engine duckdb "
                "or numpy."
            )
    for ln in lines:
        if ln.startswith(("at ", "Traceback", "JVM stacktrace", "py4j", "An error occurred")):
            continue
        return ln[:300]
    return type(exc).__name__
