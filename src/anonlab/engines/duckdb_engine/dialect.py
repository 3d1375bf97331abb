"""DuckDB's dialect: how the engine reads a source, makes a value text and writes a file.

Module functions only, each the SQL text of one thing (no connection is held here).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._optional import import_optional
from anonlab._validation import column_name
from anonlab.data.labels import UTC_SUFFIX, factorize
from anonlab.data.source import CsvOptions, FileSource, header_names, reader_encoding
from anonlab.data.table import EncodedTable
from anonlab.engines.sql import NEVER, literal, quoted, text_table
from anonlab.exceptions import DataFormatError, InputError, ParameterError
from anonlab.io.temporary import discard

#: Rows per row group of the Parquet copy of a CSV. The writer buffers a row group per thread;
#: a quarter of DuckDB's default (122,880) lowered the peak RSS on Census-Income (42 columns)
#: from ~470 to ~350 MiB for ~10% slower questions (benchmarks/bench_duckdb_gz.py).
ROW_GROUP_ROWS = 32_768
RN = "__anonlab_rn"
FLOATS = ("DOUBLE", "FLOAT")
#: DuckDB's number types (and ``DECIMAL(p, s)``): columns a weight may be read from as it is.
NUMBER_KINDS = (
    *FLOATS, "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
    "UINTEGER", "UBIGINT", "UHUGEINT",
)  # fmt: skip


def is_zoned(kind: str) -> bool:
    """Whether the DuckDB type ``kind`` is a timestamp with a time zone."""
    return kind.startswith("TIMESTAMPTZ") or kind.startswith("TIMESTAMP WITH TIME ZONE")


def is_clock(kind: str) -> bool:
    """Whether the DuckDB type ``kind`` is a time or a timestamp."""
    return kind.startswith("TIME")


def nested_kind(kind: str) -> bool:
    """Whether the DuckDB type ``kind`` is a list, array, map, struct or union."""
    return kind.endswith("]") or kind.startswith(("STRUCT", "MAP", "UNION"))


def nfc_scan(names: list[str], scan: str) -> tuple[list[str], str]:
    """The column names of ``scan`` in Unicode NFC, as every name is compared
    (:func:`~anonlab._validation.column_name`), and the scan renaming those that differ."""
    nfc = [column_name(n) for n in names]
    if nfc == names:
        return names, scan
    renamed = ", ".join(f"{quoted(a)} AS {quoted(b)}" for a, b in zip(names, nfc))
    return nfc, f"(SELECT {renamed} FROM {scan})"


def check_named(names: Sequence[str], label: str) -> None:
    """Refuse a column without a name (DuckDB would name it ``C0`` or fail on it)."""
    if "" in names:
        raise DataFormatError(
            f"Column {list(names).index('') + 1} of {label} has no name, and the DuckDB engine "
            "names every column in SQL: give it a name (a pandas index written to CSV: "
            "to_csv(index=False) or index_label='id'), or use --engine numpy or spark."
        )


def text_of(column: str, kind: str) -> str:
    """SQL: the text of ``column`` (an SQL expression of DuckDB type ``kind``) as anonlab's
    readers write it: a float as :func:`~anonlab.data.labels.float_labels` does (a whole
    number below 2**53 without ``.0``, NaN a null; DuckDB writes any other double as
    Python's ``repr``), a timestamp with a time zone as
    :func:`~anonlab.data.labels.clock_labels` does (its instant in UTC and ``+00:00``, not
    in the session's time zone), anything else cast to text (DuckDB writes the fraction of
    a second of times and timestamps with the digits it needs)."""
    if is_zoned(kind):
        return f"(CAST(timezone('UTC', {column}) AS VARCHAR) || {literal(UTC_SUFFIX)})"
    if kind in FLOATS:
        return (
            f"CASE WHEN isnan({column}) THEN NULL "
            f"WHEN abs({column}) < 9007199254740992 AND {column} = floor({column}) "
            # (TRY_CAST: DuckDB may evaluate a branch on rows the CASE does not give it)
            f"THEN CAST(TRY_CAST({column} AS BIGINT) AS VARCHAR) ELSE CAST({column} AS VARCHAR) END"
        )
    return f"CAST({column} AS VARCHAR)"


def scan_source(con: Any, error: type[Exception], source: Any) -> tuple[list[str], str]:
    """The column names of ``source`` and the SQL that scans it (``error``: DuckDB's
    ``duckdb.Error``); a frame is registered on ``con`` as ``frame_src``."""
    if isinstance(source, FileSource):
        path = source.path
        if not path.exists():
            raise InputError(f"Data file {str(path)!r} does not exist.")
        if source.format == "parquet":
            scan = f"read_parquet({literal(str(path))})"
            try:
                rel = con.sql(f"SELECT * FROM {scan} LIMIT 0")
            except error as exc:
                raise DataFormatError(
                    f"Cannot read Parquet file {str(path)!r}: {summary(exc)}"
                ) from None
            pq = import_optional("pyarrow.parquet")
            check_named(pq.read_schema(path).names, repr(str(path)))
            return nfc_scan(list(rel.columns), scan)
        opts = source.csv
        names = header_names(path, opts)
        check_named(names, repr(str(path)))
        scan = (
            f"read_csv({literal(str(path))}, columns = {text_columns(names)}, header = false, "
            f"skip = {1 if opts.header else 0}, delim = {literal(opts.separator)}, "
            f"quote = {literal(opts.quote)}, escape = {literal(opts.quote)}, "
            f"nullstr = {literal(NEVER)}, auto_detect = false, strict_mode = true, "
            f"null_padding = false{encoding_option(opts.encoding)})"
        )
        return names, scan
    # in-memory frames: pyarrow Table, pandas or polars DataFrame (an EncodedTable as text)
    source = frame_table(source)
    names = source.column_names if hasattr(source, "column_names") else source.columns
    check_named([str(n) for n in names], "the data frame")
    con.register("frame_src", source)
    rel = con.sql("SELECT * FROM frame_src LIMIT 0")
    return nfc_scan(list(rel.columns), "frame_src")


def frame_table(source: Any) -> Any:
    """An in-memory table DuckDB can scan: an EncodedTable's columns as text; an Arrow
    table or a pandas or polars frame as it is."""
    if isinstance(source, EncodedTable):
        if source.weights is not None:
            raise InputError(
                "The DuckDB engine reads rows; a frequency set (an EncodedTable with "
                "weights) is read by the numpy engine."
            )
        return text_table(source, import_optional("pyarrow"))
    if hasattr(source, "to_arrow") or hasattr(source, "iloc") or hasattr(source, "schema"):
        return source  # polars, pandas, Arrow
    raise InputError(
        "The DuckDB engine takes a path, a FileSource, an EncodedTable, an Arrow table or "
        f"a pandas/polars frame; got {type(source).__name__}."
    )


def copy_options(fmt: str, separator: str) -> str:
    """The options of a ``COPY ... TO`` in a release format. The file is written where it
    is named (``USE_TMP_FILE false``): it is the release's own temporary file (or a device),
    whose mode is kept, and no ``tmp_`` file of DuckDB's is left beside it by a killed run."""
    options = {
        "parquet": "FORMAT parquet",
        "csv": f"FORMAT csv, HEADER true, DELIMITER {literal(separator)}",
        "csv.gz": f"FORMAT csv, HEADER true, DELIMITER {literal(separator)}, COMPRESSION gzip",
    }
    if fmt not in options:
        raise ParameterError(f"Unknown release format {fmt!r}; use {', '.join(options)}.")
    return f"{options[fmt]}, USE_TMP_FILE false"


def text_columns(names: Sequence[str]) -> str:
    """``read_csv``'s ``columns`` of a CSV file read as text: every name, as it is, VARCHAR."""
    return "{" + ", ".join(f"{literal(n)}: 'VARCHAR'" for n in names) + "}"


def csv_scan(path: str | os.PathLike[str], fmt: str, separator: str) -> str:
    """A written CSV release read back as text (a null as an empty field), its columns
    named from its header as anonlab's reader reads it (DuckDB's own header reading strips
    the spaces around a name: a column ``" age "`` would not be found)."""
    names = header_names(Path(path), CsvOptions(separator=separator), gzipped=fmt == "csv.gz")
    return (
        f"read_csv({literal(str(path))}, columns = {text_columns(names)}, header = false, skip = 1, "
        f"delim = {literal(separator)}, quote = '\"', escape = '\"', auto_detect = false, "
        "allow_quoted_nulls = false, "
        f"compression = {literal('gzip' if fmt == 'csv.gz' else 'none')})"
    )


def release_connection(con: Any, folder: Path) -> None:
    """Close a DuckDB connection, then delete the temporary folder it wrote into."""
    try:
        con.close()
    finally:
        discard(folder)


def summary(exc: BaseException) -> str:
    """One line from a DuckDB error: its first line and the line that says what is wrong."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    if not lines:
        return type(exc).__name__
    detail = [
        ln for ln in lines[1:] if not ln.startswith(("Original Line", "Possible", "*", "LINE", "^"))
    ]
    # a row quoted after "Original Line:" can span lines (a quote never closed runs on)
    detail = [ln for ln in detail if "unterminated quote" in ln] or detail
    return "; ".join(lines[:1] + detail[:1])


#: Python's name of each encoding DuckDB's CSV reader takes -> DuckDB's name of it.
ENCODINGS = {"utf-8": "utf-8", "utf-8-sig": "utf-8", "iso8859-1": "latin-1", "utf-16": "utf-16"}


def encoding_option(enc: str) -> str:
    """The ``encoding`` option of ``read_csv`` (none for UTF-8, its default)."""
    name = reader_encoding(enc, ENCODINGS, "duckdb")
    return "" if name == "utf-8" else f", encoding = {literal(name)}"


def factorize_fetched(values: Any) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.object_]]:
    """Codes and naturally ordered labels of a fetched column (masked arrays hold NULLs)."""
    if isinstance(values, np.ma.MaskedArray):
        arr = np.asarray(values.data, dtype=object)
        arr[np.ma.getmaskarray(values)] = None
    else:
        arr = np.asarray(values, dtype=object)
    return factorize(arr)
