"""Reading tables into :class:`~anonlab.data.EncodedTable` through Apache Arrow.

CSV and Parquet files are parsed by pyarrow (multi-threaded C++), every column is read as text
so that labels match hierarchy files exactly, and each column is dictionary-encoded into
integer codes without a Python loop over rows.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from anonlab._optional import import_optional
from anonlab._validation import check_columns, column_name
from anonlab.data.labels import clock_labels, factorize, float_labels
from anonlab.data.schema import Schema
from anonlab.data.source import (
    NEVER_CLOSED,
    CsvOptions,
    FileSource,
    ends_inside_quotes,
    infer_format,
    ragged_error,
    read_header,
)
from anonlab.data.table import EncodedColumn, EncodedTable
from anonlab.exceptions import DataFormatError, InputError
from anonlab.io.atomic import check_input_file, check_local

__all__ = ["column_names", "memory_estimate", "read_table", "read_arrow"]


def read_table(
    data: Any,
    *,
    format: str | None = None,
    csv_options: CsvOptions | None = None,
    schema: Schema | None = None,
    columns: Sequence[str] | None = None,
    allow_empty: bool = False,
) -> EncodedTable:
    """Read data into an :class:`~anonlab.data.EncodedTable`.

    Parameters
    ----------
    data : str, path, FileSource, pandas/polars DataFrame, pyarrow Table or mapping
        A CSV or Parquet file, a data frame, or a mapping of column name to values.
    format : str, optional
        ``"csv"`` or ``"parquet"``; inferred from the file suffix by default.
    csv_options : CsvOptions, optional
        Parsing options for CSV files (separator, header, quote, encoding, missing markers).
    schema : Schema, optional
        Attribute roles.
    columns : sequence of str, optional
        Read only these columns.
    allow_empty : bool
        Accept a table with no rows (an error by default).

    Returns
    -------
    EncodedTable

    Raises
    ------
    DataFormatError
        Ragged rows, bytes not valid in the encoding, an empty file or table.
    ColumnNotFoundError
        A requested column does not exist.

    Examples
    --------
    >>> import pandas as pd
    >>> t = read_table(pd.DataFrame({"age": [31, 42], "sex": ["F", None]}))
    >>> t.n_rows, t.names, t["sex"].labels().tolist()
    (2, ['age', 'sex'], ['F', None])
    """
    source_name: str | None = None
    na_values: tuple[str, ...] = ()
    strip = False
    if isinstance(data, FileSource):
        csv_options = csv_options or data.csv
        format = format or data.format
        data = data.path
    if isinstance(data, (str, os.PathLike)):
        check_local(data, "data file")  # before a Path makes 's3://b/x' 's3:/b/x'
        path = Path(data)
        source_name = str(path)
        fmt = format or infer_format(path)
        opts = csv_options or CsvOptions()
        table = _read_file(path, fmt, opts)
        if fmt == "csv":
            na_values, strip = opts.na_values, opts.strip
    elif isinstance(data, EncodedTable):
        table = None
        enc = data
    elif isinstance(data, Mapping):
        table = None
        enc = EncodedTable.from_columns(data)
    else:
        table = _frame_to_arrow(data)
    if table is not None:
        table = _nfc_names(table)
        if columns is not None:
            check_columns(list(columns), table.column_names)
            table = table.select(list(columns))
        enc = read_arrow(table, schema=schema, source=source_name, na_values=na_values, strip=strip)
    elif columns is not None:
        enc = enc.select(columns)
    if schema is not None and enc.schema is not schema:
        enc = enc.with_schema(schema)
    if enc.n_rows == 0 and columns is not None:
        enc.require(list(columns))  # list or struct columns alone: no rows to count, say why
    if enc.n_rows == 0 and not allow_empty:
        where = f" {source_name!r}" if source_name else ""
        raise DataFormatError(f"The table{where} is empty: it has no rows.")
    if not enc.names:
        raise DataFormatError("The table has no columns.")
    return enc


def column_names(path: str | os.PathLike[str], csv_options: CsvOptions | None = None) -> list[str]:
    """The column names of a CSV or Parquet file, without reading its rows.

    Raises
    ------
    InputError
        If the file cannot be read (see :func:`read_table`).

    Examples
    --------
    >>> from anonlab.datasets import adult_path
    >>> column_names(adult_path())[:4]
    ['age', 'workclass', 'fnlwgt', 'education']
    """
    p = check_input_file(path, "data file")
    if infer_format(p) == "parquet":
        pq = import_optional("pyarrow.parquet")
        pa = import_optional("pyarrow")
        try:
            return [column_name(n) for n in pq.read_schema(p).names]
        except (pa.ArrowException, OSError) as exc:
            raise DataFormatError(f"Cannot read Parquet file {str(p)!r}: {exc}") from None
    return read_header(p, csv_options or CsvOptions())[0]


#: Bytes the in-memory (numpy) engine needs per cell of a table while ``anonymize`` reads,
#: encodes, searches and writes it (Adult-like data; the peak it rounds up is in
#: benchmarks/README.md, "Measurements behind choices in the code").
MEMORY_PER_CELL = 24
#: Bytes in memory per byte of a CSV file on disk (text ~8 bytes per cell), and of gzip.
MEMORY_PER_CSV_BYTE = 3
MEMORY_PER_GZIP_BYTE = 27


def memory_estimate(
    path: str | os.PathLike[str], csv_options: CsvOptions | None = None
) -> tuple[int, int]:
    """The size of a data file on disk and what reading it whole into memory would need.

    A Parquet file's rows and columns are read from its footer (:data:`MEMORY_PER_CELL`
    bytes a cell); a CSV file's size is scaled (:data:`MEMORY_PER_CSV_BYTE`, or
    :data:`MEMORY_PER_GZIP_BYTE` when gzipped). An estimate, to choose an engine and refuse
    what cannot fit, not a promise.

    Parameters
    ----------
    path : path-like
        The data file.
    csv_options : CsvOptions, optional
        Unused but for symmetry with :func:`read_table` (the estimate reads no text).

    Returns
    -------
    on_disk, in_memory : int
        Bytes.

    Examples
    --------
    >>> from anonlab.datasets import adult_path
    >>> on_disk, in_memory = memory_estimate(adult_path())
    >>> on_disk > 0, in_memory > on_disk
    (True, True)
    """
    del csv_options
    p = check_input_file(path, "data file")
    on_disk = int(p.stat().st_size)
    if infer_format(p) == "parquet":
        pq = import_optional("pyarrow.parquet")
        pa = import_optional("pyarrow")
        try:
            md = pq.ParquetFile(p).metadata
        except (pa.ArrowException, OSError) as exc:
            raise DataFormatError(f"Cannot read Parquet file {str(p)!r}: {exc}") from None
        return on_disk, int(md.num_rows) * max(int(md.num_columns), 1) * MEMORY_PER_CELL
    with p.open("rb") as fh:
        gzipped = fh.read(2) == b"\x1f\x8b"
    factor = MEMORY_PER_GZIP_BYTE if gzipped else MEMORY_PER_CSV_BYTE
    return on_disk, on_disk * factor


def _read_file(path: Path, fmt: str, options: CsvOptions) -> Any:
    pa = import_optional("pyarrow")
    check_input_file(path, "data file")
    if fmt == "parquet":
        pq = import_optional("pyarrow.parquet")
        try:
            return pq.read_table(path)
        except (pa.ArrowException, OSError) as exc:
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise DataFormatError(f"Cannot read Parquet file {str(path)!r}: {msg}") from None
    pcsv = import_optional("pyarrow.csv")
    names, bom = read_header(path, options)
    encoding = options.encoding
    if bom:  # the first header name would start with U+FEFF: read past the mark
        encoding = (
            "utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding
        )
    read_opts = pcsv.ReadOptions(
        column_names=names,
        skip_rows=1 if options.header else 0,
        encoding=encoding,
    )
    # a quoted field may hold a line break anywhere in the file (Arrow assumes none unless
    # told, and then fails on a file beyond its first block of 1 MB)
    parse_opts = pcsv.ParseOptions(
        delimiter=options.separator, quote_char=options.quote, newlines_in_values=True
    )
    convert_opts = pcsv.ConvertOptions(
        column_types={n: pa.string() for n in names},
        null_values=[],
        strings_can_be_null=False,
        check_utf8=True,
    )
    try:
        table = pcsv.read_csv(
            path, read_options=read_opts, parse_options=parse_opts, convert_options=convert_opts
        )
    except pa.ArrowInvalid as exc:
        msg = str(exc).splitlines()[0]
        ragged = ragged_error(path, options) if " columns, got " in msg else None
        if ragged is not None:  # where the ragged row is, as every engine says it
            raise ragged from None
        if "utf8" in msg.lower() or "utf-8" in msg.lower():
            msg = f"bytes that are not valid {options.encoding} ({msg}); pass the right encoding"
        elif "gzip" in msg.lower() or "compress" in msg.lower():
            msg = f"the gzip stream is corrupt or truncated ({msg})"
        elif "straddl" in msg.lower():  # a row over Arrow's block of 1 MiB
            msg = (
                "a quoted field is never closed, or a row is longer than 1 MiB, the longest the "
                "numpy engine reads (DuckDB reads rows up to 2 MB: --engine duckdb)"
            )
        raise DataFormatError(f"Cannot parse CSV file {str(path)!r}: {msg}.") from None
    except (pa.ArrowException, OSError, EOFError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if path.suffix.lower() == ".gz":
            msg = f"the gzip stream is corrupt or truncated ({msg})"
        raise DataFormatError(f"Cannot read CSV file {str(path)!r}: {msg}.") from None
    last = None
    if table.num_rows and table.num_columns:
        last = table.column(table.num_columns - 1)[-1].as_py()
    if ends_inside_quotes(path, options, last):
        raise DataFormatError(f"Cannot parse CSV file {str(path)!r}: {NEVER_CLOSED}.")
    return table


def _nfc_names(table: Any) -> Any:
    """The Arrow table with its column names in Unicode NFC, as every name is compared."""
    names = [column_name(n) for n in table.column_names]
    return table if names == table.column_names else table.rename_columns(names)


def _frame_to_arrow(frame: Any) -> Any:
    pa = import_optional("pyarrow")
    if isinstance(frame, (pa.Table, pa.RecordBatch)):
        return pa.table(frame)
    mod = type(frame).__module__.split(".")[0]
    if mod == "polars":
        return frame.to_arrow()
    if mod == "pandas":
        return pa.Table.from_pandas(frame, preserve_index=False)
    if hasattr(frame, "__arrow_c_stream__"):
        return pa.table(frame)
    raise InputError(
        f"Cannot read data of type {type(frame).__name__}; give a CSV/Parquet path, a pandas or "
        "polars DataFrame, a pyarrow Table or a mapping of columns."
    )


def read_arrow(
    table: Any,
    *,
    schema: Schema | None = None,
    source: str | None = None,
    na_values: Sequence[str] = (),
    strip: bool = False,
) -> EncodedTable:
    """Encode a pyarrow Table: every column is cast to text and dictionary-encoded.

    Column names are taken in Unicode NFC (:func:`~anonlab._validation.column_name`).

    Cleaning (white space, missing-value markers, float NaN) is applied to the distinct values
    only, never row by row.

    Parameters
    ----------
    table : pyarrow.Table
        The data.
    schema : Schema, optional
        Attribute roles.
    source : str, optional
        Origin used in messages.
    na_values : sequence of str
        Labels read as a null.
    strip : bool
        Strip white space around labels.

    Returns
    -------
    EncodedTable
    """
    pa = import_optional("pyarrow")
    pc = import_optional("pyarrow.compute")
    names = [column_name(n) for n in table.column_names]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise DataFormatError(f"Duplicate column names: {', '.join(map(repr, dup))}.")
    markers = set(na_values)
    cols = []
    typed: dict[str, Any] = {}
    for name, col in zip(names, table.columns):
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
        if pa.types.is_nested(col.type):
            typed[name] = col  # carried through to the output, never an attribute
            continue
        if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
            typed[name] = col  # released as it is when not generalized: numbers stay numbers
        is_float = pa.types.is_floating(col.type)
        clock = _clock(pa, col.type)
        zoned = pa.types.is_timestamp(col.type) and col.type.tz is not None
        if zoned:  # the instant's wall clock in UTC, whatever the column's zone
            col = pc.cast(col, pa.timestamp(col.type.unit))
        if not is_float and not (
            pa.types.is_string(col.type) or pa.types.is_large_string(col.type)
        ):
            col = pc.cast(col, pa.string())
        dict_arr = pc.dictionary_encode(col)  # (a float column: its distinct numbers)
        if isinstance(dict_arr, pa.ChunkedArray):
            dict_arr = dict_arr.combine_chunks()
        if is_float:  # as every engine writes them (NaN a null)
            labels = float_labels(dict_arr.dictionary.to_numpy(zero_copy_only=False)).tolist()
        else:
            labels = dict_arr.dictionary.to_pylist()
        if clock:  # 03:04:05.120000 as 03:04:05.12; a zone as the instant in UTC
            labels = clock_labels(labels, zoned=zoned)
        if strip:
            labels = [None if v is None else v.strip() for v in labels]
        if markers:
            labels = [None if v in markers else v for v in labels]
        raw = _indices(dict_arr.indices)
        if dict_arr.indices.null_count:
            raw = np.where(_valid(dict_arr.indices), raw, len(labels))
            labels.append(None)
        dcodes, categories = factorize(np.array(labels, dtype=object))
        codes = dcodes[raw.astype(np.int64)] if raw.size else np.zeros(0, np.int32)
        cols.append(EncodedColumn(name, codes, categories))
    return EncodedTable(tuple(cols), schema or Schema(), source, typed, tuple(names))


def _clock(pa: Any, kind: Any) -> bool:
    """Whether values of the Arrow type ``kind`` are times or timestamps, labelled by
    :func:`~anonlab.data.labels.clock_labels` (Arrow pads the fraction of a second with
    zeros to the unit, where DuckDB and Spark write only the digits needed)."""
    return bool(pa.types.is_time(kind) or pa.types.is_timestamp(kind))


def _indices(arr: Any) -> np.ndarray:
    """Integer values of an Arrow index array, read from its buffer (no pandas involved)."""
    width = arr.type.bit_width // 8
    dtype = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}[width]
    values = np.frombuffer(arr.buffers()[1], dtype=dtype)
    return values[arr.offset : arr.offset + len(arr)].astype(np.int64)


def _valid(arr: Any) -> np.ndarray:
    """Validity of an Arrow array from its bitmap."""
    bits = np.unpackbits(np.frombuffer(arr.buffers()[0], dtype=np.uint8), bitorder="little")
    return bits[arr.offset : arr.offset + len(arr)].astype(bool)
