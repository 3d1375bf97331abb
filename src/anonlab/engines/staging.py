"""Per-partition releases, the parts the out-of-core engines share (Arrow in, Arrow out).

The algorithms that place individual rows run block by block (Murakami & Uno 2017, section 3.2.3):
an engine streams the table's rows sorted into blocks (:meth:`Engine.partitions`), each
block is encoded with the whole table's labels (:func:`encode_block`), and the labels the
algorithm releases for it are staged in a Parquet file of their own (:func:`stage_block`)
until the engine writes the release. pyarrow is the only library used here; it is imported
by the engine that calls these functions (an optional dependency of DuckDB's and Spark's).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab.data.labels import factorize
from anonlab.data.table import EncodedColumn, EncodedTable
from anonlab.exceptions import InputError
from anonlab.io.temporary import private_file

__all__ = [
    "BLOCK",
    "KEEP",
    "ROW",
    "blocks_of",
    "encode_block",
    "encode_text",
    "label_lookup",
    "stage_block",
]

#: The column that numbers the source's rows in a per-partition release (a name no data has).
ROW = "__anonlab_row"
#: Whether a staged row is kept (False: suppressed).
KEEP = "__anonlab_keep"
#: The block a staged row belongs to.
BLOCK = "__anonlab_block"


def blocks_of(batches: Iterable[Any], block_rows: int, pa: Any) -> Iterator[Any]:
    """Arrow record batches regrouped into tables of ``block_rows`` rows (the last one
    smaller), holding at most one block and one batch in memory.

    Parameters
    ----------
    batches : iterable of pyarrow.RecordBatch
        The rows in order.
    block_rows : int
        Rows per block.
    pa : module
        pyarrow.

    Yields
    ------
    pyarrow.Table
    """
    pending: list[Any] = []
    count = 0
    for batch in batches:
        pending.append(batch)
        count += batch.num_rows
        while count >= block_rows:
            table = pa.Table.from_batches(pending)
            yield table.slice(0, block_rows)
            rest = table.slice(block_rows)
            pending = rest.to_batches()
            count = rest.num_rows
    if count:
        yield pa.Table.from_batches(pending)


def label_lookup(
    categories: Mapping[str, npt.NDArray[np.object_]], columns: Sequence[str]
) -> dict[str, dict[Any, int]]:
    """Per column, the code of each of its labels (``categories[c][code]``)."""
    return {c: {v: i for i, v in enumerate(categories[c].tolist())} for c in columns}


def encode_block(
    table: Any,
    columns: Sequence[str],
    categories: Mapping[str, npt.NDArray[np.object_]],
    lookup: Mapping[str, Mapping[Any, int]],
    source: str | None = None,
) -> EncodedTable:
    """A block's text columns encoded with the whole table's labels.

    Parameters
    ----------
    table : pyarrow.Table
        The block, with a text column per name of ``columns``.
    columns : sequence of str
    categories : Mapping[str, ndarray]
        Each column's labels (the whole table's: a block's codes mean what the table's mean).
    lookup : Mapping[str, Mapping]
        :func:`label_lookup` of ``categories``.
    source : str, optional
        The source file, recorded in the table.

    Returns
    -------
    EncodedTable
    """
    encoded = []
    for c in columns:
        enc = table.column(c).combine_chunks().dictionary_encode()
        labels = enc.dictionary.to_pylist()
        where = lookup[c]
        absent = [v for v in labels if v not in where]
        if absent:  # pragma: no cover - the categories are the whole table's
            raise InputError(f"Value {absent[0]!r} of column {c!r} is not among its labels.")
        remap = np.array([where[v] for v in labels], dtype=np.int32)
        index = np.asarray(enc.indices.fill_null(0).to_numpy(zero_copy_only=False))
        codes = remap[index] if remap.size else np.zeros(index.size, dtype=np.int32)
        null = np.asarray(enc.indices.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        if null.any():
            if None not in where:  # pragma: no cover - the categories are the whole table's
                raise InputError(f"Column {c!r} has a null its labels do not have.")
            codes[null] = where[None]
        encoded.append(EncodedColumn(c, codes.astype(np.int32), categories[c]))
    return EncodedTable(tuple(encoded), source=source)


def encode_text(name: str, column: Any) -> EncodedColumn:
    """An Arrow text column as an :class:`EncodedColumn` (labels in natural order, a null
    last), without a Python object per row.

    Parameters
    ----------
    name : str
    column : pyarrow.Array or pyarrow.ChunkedArray

    Returns
    -------
    EncodedColumn
    """
    enc = column.combine_chunks().dictionary_encode()
    labels = np.asarray(enc.dictionary.to_pylist(), dtype=object)
    remap, categories = factorize(labels)  # natural order of the distinct labels
    null = np.asarray(enc.indices.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    index = np.asarray(enc.indices.fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)
    codes = remap[index] if remap.size else np.zeros(index.size, dtype=np.int32)
    if null.any():
        codes[null] = categories.size
        categories = np.append(categories, np.array([None], dtype=object))
    return EncodedColumn(name, codes.astype(np.int32), categories)


def stage_block(
    path: Path,
    block: int,
    rows: npt.NDArray[np.int64],
    labels: Mapping[str, EncodedColumn],
    keep: npt.NDArray[np.bool_],
    pa: Any,
    pq: Any,
    names: Mapping[str, str] | None = None,
) -> None:
    """Write one block's released labels to the new Parquet file ``path`` (mode ``0600``, in
    a folder made ``0700`` if it does not exist: the engine's temporary folder).

    Parameters
    ----------
    path : Path
    block : int
        The block's number.
    rows : ndarray of int64
        The rows' positions in the source (column :data:`ROW`).
    labels : Mapping[str, EncodedColumn]
        Per replaced column, the released labels, row-aligned with ``rows``.
    keep : ndarray of bool
        Per row, False when it is suppressed (column :data:`KEEP`).
    pa, pq : module
        pyarrow and pyarrow.parquet.
    names : Mapping[str, str], optional
        The file's name of each replaced column (default: its own).
    """
    data: dict[str, Any] = {
        ROW: pa.array(np.asarray(rows, dtype=np.int64)),
        KEEP: pa.array(np.asarray(keep, dtype=bool)),
        BLOCK: pa.array(np.full(len(rows), block, dtype=np.int64)),
    }
    for name, col in labels.items():
        cats = pa.array(col.categories.tolist(), type=pa.string())
        key = name if names is None else names[name]
        data[key] = pa.DictionaryArray.from_arrays(pa.array(col.codes, type=pa.int32()), cats).cast(
            pa.string()
        )
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    pq.write_table(pa.table(data), private_file(path))  # (pyarrow keeps the file's mode)
