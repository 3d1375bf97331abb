"""Writing released tables atomically (CSV, gzipped CSV or Parquet), never over an input."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._optional import import_optional
from anonlab.data.labels import clock_labels, float_labels
from anonlab.data.table import LabelColumns
from anonlab.io.atomic import atomic_write, output_format

__all__ = ["arrow_table", "csv_header", "json_text", "write_table"]


def _labels_array(pa: Any, codes: npt.NDArray[np.int32], cats: npt.NDArray[np.object_]) -> Any:
    """Text array of ``cats[codes]``, gathered by Arrow (no Python object per row)."""
    dictionary = pa.array(cats, type=pa.string(), from_pandas=False)
    return dictionary.take(pa.array(codes, type=pa.int32()))


def _distinct_text(pa: Any, values: Any, labels_of: Callable[[Any], Any]) -> Any:
    """A column as text, each distinct value made a label once: ``labels_of`` takes the
    Arrow array of distinct values and returns their labels (a list, or an Arrow array)."""
    pc = import_optional("pyarrow.compute")
    encoded = pc.dictionary_encode(values)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    labels = labels_of(encoded.dictionary)
    if not isinstance(labels, pa.Array):
        labels = pa.array(labels, type=pa.string())
    return labels.take(encoded.indices)


def _float_text(pa: Any, values: Any) -> Any:
    """A float column as the text of its labels (:func:`~anonlab.data.labels.float_labels`:
    ``1`` for ``1.0``, NaN empty), as every engine writes it to CSV."""
    return _distinct_text(
        pa, values, lambda d: float_labels(d.to_numpy(zero_copy_only=False)).tolist()
    )


def _clock_text(pa: Any, values: Any) -> Any:
    """A time or timestamp column as the text of its labels
    (:func:`~anonlab.data.labels.clock_labels`: ``12:30:05.12``, a timestamp with a time
    zone as its instant in UTC, ``2020-01-01 12:30:05.12+00:00``), as every engine writes
    it to CSV."""
    pc = import_optional("pyarrow.compute")
    zoned = pa.types.is_timestamp(values.type) and values.type.tz is not None
    if zoned:
        values = pc.cast(values, pa.timestamp(values.type.unit))
    return _distinct_text(
        pa, values, lambda d: clock_labels(pc.cast(d, pa.string()).to_pylist(), zoned=zoned)
    )


def json_text(pa: Any, values: Any) -> Any:
    """A list, map or struct column as compact JSON text (``[1,2]``, ``{"x":1}``, a map as
    an object), as DuckDB's and Spark's ``to_json`` write it to CSV.

    Parameters
    ----------
    pa : module
        pyarrow.
    values : pyarrow.Array or pyarrow.ChunkedArray
        A list, map or struct column.

    Returns
    -------
    pyarrow.Array
        Its values as JSON text, a null as a null.
    """
    is_map = pa.types.is_map(values.type)

    def dump(v: Any) -> str:
        return json.dumps(
            dict(v) if is_map else v, default=str, separators=(",", ":"), ensure_ascii=False
        )

    return pa.array([None if v is None else dump(v) for v in values.to_pylist()], pa.string())


def _arrow_table(columns: Mapping[str, Any], fmt: str) -> Any:
    pa = import_optional("pyarrow")
    arrays = []
    names = []
    for name in columns:
        typed = columns.typed(name) if isinstance(columns, LabelColumns) else None
        if typed is not None:
            if fmt != "parquet" and pa.types.is_nested(typed.type):
                typed = json_text(pa, typed)  # CSV has no lists or structs
            elif fmt != "parquet" and pa.types.is_floating(typed.type):
                typed = _float_text(pa, typed)
            elif fmt != "parquet" and (
                pa.types.is_timestamp(typed.type) or pa.types.is_time(typed.type)
            ):
                typed = _clock_text(pa, typed)
            arrays.append(typed)
        elif isinstance(columns, LabelColumns):
            arrays.append(_labels_array(pa, *columns.encoded(name)))
        else:
            arrays.append(pa.array(np.asarray(columns[name], dtype=object), type=pa.string()))
        names.append(name)
    return pa.table(arrays, names=names)


def arrow_table(columns: Mapping[str, Any]) -> Any:
    """A released table as a pyarrow Table, the columns' original types kept.

    Parameters
    ----------
    columns : LabelColumns or Mapping[str, ndarray of object]
        The released table: a :class:`~anonlab.data.table.LabelColumns` keeps the type of
        the columns it releases as they are (numbers stay numbers) and gives the others as
        text (their labels, ``*`` where masked); a plain mapping is given as text.

    Returns
    -------
    pyarrow.Table
        One column per released column, in order, as a Parquet file would hold them.

    Examples
    --------
    >>> import numpy as np
    >>> arrow_table({"zip": np.array(["435*", None], dtype=object)}).to_pydict()
    {'zip': ['435*', None]}
    """
    return _arrow_table(columns, "parquet")


def write_table(
    columns: Mapping[str, npt.NDArray[np.object_]],
    path: str | os.PathLike[str],
    *,
    separator: str = ",",
    protect: Iterable[str | os.PathLike[str]] = (),
    status: Callable[[str], None] | None = None,
) -> Path:
    """Write a released table to a CSV, gzipped CSV or Parquet file (by suffix), atomically.

    Parameters
    ----------
    columns : LabelColumns or Mapping[str, ndarray of object]
        The released table. A :class:`~anonlab.data.table.LabelColumns` is written from its
        codes (labels gathered by Arrow) and its typed columns keep their type in Parquet;
        a plain mapping is written as text.
    path : path-like
        Output file: ``.csv``, ``.csv.gz`` or ``.parquet``; anything else is an error. A
        character device such as ``/dev/null`` is written to directly.
    separator : str
        CSV separator.
    protect : iterable of path-like
        Input files that must not be overwritten.
    status : callable, optional
        ``status(message)`` before the table is written (a progress line).

    Returns
    -------
    Path
        The written file.

    Raises
    ------
    InputError
        Unknown suffix, a directory or special file as target, an input file as target, an
        unwritable folder (see :func:`~anonlab.io.atomic.atomic_write`). Nothing is written.
    """
    target = Path(path)
    fmt = output_format(target)
    with atomic_write(target, protect=protect) as tmp:
        if status is not None:
            status(f"writing {target.name}")
        table = _arrow_table(columns, fmt)
        if fmt == "parquet":
            import_optional("pyarrow.parquet").write_table(table, tmp)
            return target
        if fmt == "csv.gz":
            # level 6, gzip's own default (against Arrow's stream: benchmarks/README.md)
            with gzip.open(tmp, "wb", compresslevel=6) as stream:
                _write_csv(table, stream, separator)
        else:
            with open(tmp, "wb") as stream:
                _write_csv(table, stream, separator)
    return target


#: Rows of a release formatted as CSV text at a time.
_CSV_BATCH = 1 << 18


def _write_csv(table: Any, stream: Any, separator: str) -> None:
    """Write ``table`` as CSV to the binary ``stream``: a header row, then the rows, each
    value quoted only where it must be (:func:`_csv_fields`), as DuckDB and Spark write CSV
    (Arrow's own writer quotes every text value). Arrow makes the text, a batch of rows at
    a time. A table without columns is an empty file."""
    if not table.num_columns:
        return
    pa = import_optional("pyarrow")
    pc = import_optional("pyarrow.compute")
    stream.write(csv_header(table.column_names, separator))
    sep, end, empty = (pa.scalar(t, pa.large_string()) for t in (separator, "\n", ""))
    for batch in table.to_batches(max_chunksize=_CSV_BATCH):
        fields = [_csv_fields(pa, column, separator) for column in batch.columns]
        lines = pc.binary_join_element_wise(pc.binary_join_element_wise(*fields, sep), end, empty)
        stream.write(_text_bytes(lines))


def csv_header(names: Sequence[str], separator: str) -> bytes:
    """The header line of a CSV release (UTF-8): the column names quoted as values are
    (:func:`_csv_fields`: an empty name as ``""``), as every engine writes it.

    Parameters
    ----------
    names : sequence of str
        The column names.
    separator : str
        The field separator.
    """
    pa = import_optional("pyarrow")
    fields = _csv_fields(pa, pa.array(list(names), type=pa.string()), separator)
    return (separator.join(fields.to_pylist()) + "\n").encode()


def _csv_fields(pa: Any, values: Any, separator: str) -> Any:
    """The CSV fields of a column, as large text: its values as text, in double quotes (a
    quote doubled) where a value holds the separator, a quote or a line break or is empty;
    a null an empty field.

    The column's text is searched for those characters at once; a column that has one is
    quoted on its distinct values (:func:`_distinct_text`)."""
    pc = import_optional("pyarrow.compute")
    text = pc.cast(values, pa.large_string())
    special = separator + '"\r\n'
    pattern = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in special) + "]"
    quote, empty = pa.scalar('"', pa.large_string()), pa.scalar("", pa.large_string())

    def quoted(distinct: Any) -> Any:
        needs = pc.or_(pc.match_substring_regex(distinct, pattern), pc.equal(distinct, ""))
        escaped = pc.replace_substring(distinct, '"', '""')
        return pc.if_else(
            needs, pc.binary_join_element_wise(quote, escaped, quote, empty), distinct
        )

    raw = _text_bytes(text)
    if any(c.encode() in raw for c in special) or pc.any(pc.equal(text, "")).as_py():
        text = _distinct_text(pa, text, quoted)
    return pc.fill_null(text, "")


def _text_bytes(text: Any) -> bytes:
    """The bytes of a large text array's values, one after another (a null adds none)."""
    data = text.buffers()[2]
    if data is None or not len(text):
        return b""
    offsets = np.frombuffer(text.buffers()[1], dtype=np.int64)
    return bytes(memoryview(data)[offsets[text.offset] : offsets[text.offset + len(text)]])
