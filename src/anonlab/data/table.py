"""The encoded table: integer codes per column, the data model every engine and algorithm uses."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from anonlab._validation import check_columns
from anonlab.data.labels import factorize, natural_order
from anonlab.data.schema import Role, Schema
from anonlab.exceptions import InputError

__all__ = ["EncodedColumn", "EncodedTable", "LabelColumns"]


@dataclass(frozen=True)
class EncodedColumn:
    """One column as integer codes into its distinct labels.

    Parameters
    ----------
    name : str
        Column name.
    codes : ndarray of int32
        One code per row, indexing ``categories``.
    categories : ndarray of object
        Distinct labels (str), naturally ordered; a null is the label ``None`` (last), a
        value of its own that is never dropped silently.
    """

    name: str
    codes: npt.NDArray[np.int32]
    categories: npt.NDArray[np.object_]

    def __post_init__(self) -> None:
        codes = np.ascontiguousarray(self.codes, dtype=np.int32)
        object.__setattr__(self, "codes", codes)
        object.__setattr__(self, "categories", np.asarray(self.categories, dtype=object))

    @property
    def cardinality(self) -> int:
        """Number of distinct labels (a null counts as one)."""
        return int(self.categories.size)

    @property
    def null_code(self) -> int | None:
        """The code of the null label, or None if the column has no null."""
        if self.categories.size and self.categories[-1] is None:
            return int(self.categories.size - 1)
        return None

    def labels(self) -> npt.NDArray[np.object_]:
        """Return the decoded labels, one per row."""
        return self.categories[self.codes]

    @classmethod
    def from_values(cls, name: str, values: npt.ArrayLike) -> EncodedColumn:
        """Encode raw values (None or NaN is a null)."""
        codes, cats = factorize(values)
        return cls(name, codes, cats)

    def take(self, rows: npt.NDArray[np.intp]) -> EncodedColumn:
        """Return the column restricted to ``rows`` (positions), with unused labels dropped."""
        sub = self.codes[rows]
        used = np.zeros(self.cardinality, dtype=bool)
        used[sub] = True
        remap = np.cumsum(used, dtype=np.int64) - 1
        return EncodedColumn(self.name, remap[sub].astype(np.int32), self.categories[used])


class LabelColumns(Mapping[str, npt.NDArray[np.object_]]):
    """Columns of labels, one per row, decoded from encoded columns when first read.

    A read-only mapping from column name to an object array of labels (a null as ``None``),
    in column order. Each column is decoded on its first access and then kept, so a caller
    that reads a few columns (or none) does not pay for the others.

    Parameters
    ----------
    columns : sequence of EncodedColumn
        The columns, in order.
    rows : ndarray of intp, optional
        The rows (positions) to take from each column; every row when omitted.
    masked : collection of str
        Columns whose labels are replaced by ``"*"`` where ``keep`` is False.
    keep : ndarray of bool, optional
        Per row taken, whether it keeps its labels in the ``masked`` columns.
    """

    def __init__(
        self,
        columns: Sequence[EncodedColumn],
        rows: npt.NDArray[np.intp] | None = None,
        *,
        masked: Iterable[str] = (),
        keep: npt.NDArray[np.bool_] | None = None,
    ) -> None:
        self._columns = {c.name: c for c in columns}
        self._rows = rows
        self._masked = frozenset(masked)
        self._keep = keep
        self._decoded: dict[str, npt.NDArray[np.object_]] = {}

    def __getitem__(self, name: str) -> npt.NDArray[np.object_]:
        hit = self._decoded.get(name)
        if hit is None:
            col = self._columns[name]
            hit = col.labels() if self._rows is None else col.categories[col.codes[self._rows]]
            if self._keep is not None and name in self._masked:
                hit = np.where(self._keep, hit, "*").astype(object)
            self._decoded[name] = hit
        return hit

    def __iter__(self) -> Iterator[str]:
        return iter(self._columns)

    def __len__(self) -> int:
        return len(self._columns)

    def __repr__(self) -> str:
        return f"LabelColumns({list(self._columns)})"


@dataclass(frozen=True)
class EncodedTable:
    """A table of microdata as integer codes per column (one row per person).

    Rows are addressed by position (0..n-1), never by index labels.

    Parameters
    ----------
    columns : Sequence[EncodedColumn]
        The columns, all of the same length.
    schema : Schema, optional
        Attribute roles.
    source : str, optional
        Where the table came from (a file path), used in messages.
    """

    columns: tuple[EncodedColumn, ...]
    schema: Schema = field(default_factory=Schema)
    source: str | None = None

    def __post_init__(self) -> None:
        cols = tuple(self.columns)
        object.__setattr__(self, "columns", cols)
        lengths = {c.codes.size for c in cols}
        if len(lengths) > 1:
            raise InputError(f"Columns have different lengths: {sorted(lengths)}.")
        names = [c.name for c in cols]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise InputError(f"Duplicate column names: {', '.join(map(repr, dup))}.")
        check_columns(list(self.schema.roles), names)
        object.__setattr__(self, "_index", {c.name: c for c in cols})

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_columns(
        cls,
        data: Mapping[str, npt.ArrayLike],
        *,
        schema: Schema | None = None,
        source: str | None = None,
    ) -> EncodedTable:
        """Encode a mapping of column name to values (lists or arrays).

        Parameters
        ----------
        data : Mapping[str, array_like]
            Column values; None or NaN is a null.
        schema : Schema, optional
            Attribute roles.
        source : str, optional
            Origin used in messages.

        Returns
        -------
        EncodedTable
        """
        cols = [EncodedColumn.from_values(name, values) for name, values in data.items()]
        return cls(tuple(cols), schema or Schema(), source)

    @classmethod
    def from_rows(
        cls, rows: Iterable[Sequence[object]], columns: Sequence[str], **kwargs: object
    ) -> EncodedTable:
        """Encode a sequence of rows (small tables, examples and tests)."""
        data = list(rows)
        for i, row in enumerate(data):
            if len(row) != len(columns):
                raise InputError(f"Row {i} has {len(row)} values; expected {len(columns)}.")
        arr = np.array(data, dtype=object).reshape(len(data), len(columns))
        return cls.from_columns(
            {c: arr[:, j] for j, c in enumerate(columns)},
            **kwargs,  # type: ignore[arg-type]
        )

    # -------------------------------------------------------------------- accessors
    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return int(self.columns[0].codes.size) if self.columns else 0

    @property
    def names(self) -> list[str]:
        """Column names in table order."""
        return [c.name for c in self.columns]

    def column(self, name: str) -> EncodedColumn:
        """Return the column ``name``; the error lists existing columns and the closest one."""
        index: dict[str, EncodedColumn] = self._index  # type: ignore[attr-defined]
        if name not in index:
            check_columns([name], self.names)
        return index[name]

    def __getitem__(self, name: str) -> EncodedColumn:
        return self.column(name)

    def __len__(self) -> int:
        return self.n_rows

    def candidate_attributes(self) -> list[str]:
        """Columns that may be quasi-identifiers: all but identifiers and sensitive ones."""
        return [
            n for n in self.names if self.schema.role(n) not in (Role.IDENTIFIER, Role.SENSITIVE)
        ]

    def with_schema(self, schema: Schema) -> EncodedTable:
        """Return the same data with other attribute roles."""
        return EncodedTable(self.columns, schema, self.source)

    # ------------------------------------------------------------------- row subsets
    def take(self, rows: npt.ArrayLike) -> EncodedTable:
        """Return the rows at ``rows`` (positions or a boolean mask), labels recompacted."""
        idx = np.asarray(rows)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        return EncodedTable(tuple(c.take(idx) for c in self.columns), self.schema, self.source)

    def null_mask(self, columns: Sequence[str] | None = None) -> npt.NDArray[np.bool_]:
        """Boolean mask of rows with a null in any of ``columns`` (default: all)."""
        mask = np.zeros(self.n_rows, dtype=bool)
        for name in columns if columns is not None else self.names:
            col = self.column(name)
            if col.null_code is not None:
                mask |= col.codes == col.null_code
        return mask

    def drop_nulls(self, columns: Sequence[str] | None = None) -> EncodedTable:
        """Return the table without the rows that have a null in any of ``columns``."""
        mask = self.null_mask(columns)
        return self if not mask.any() else self.take(~mask)

    def select(self, names: Sequence[str]) -> EncodedTable:
        """Return a table with only the named columns."""
        check_columns(list(names), self.names)
        roles = {k: v for k, v in self.schema.roles.items() if k in names}
        return EncodedTable(tuple(self.column(n) for n in names), Schema(roles), self.source)

    def to_dict(self) -> dict[str, npt.NDArray[np.object_]]:
        """Decode to a mapping of column name to label arrays."""
        return {c.name: c.labels() for c in self.columns}


def reorder_categories(column: EncodedColumn) -> EncodedColumn:
    """Return ``column`` with its categories in natural order (used by readers)."""
    order = natural_order(column.categories)
    if np.array_equal(order, np.arange(order.size)):
        return column
    remap = np.empty(order.size, dtype=np.int32)
    remap[order] = np.arange(order.size, dtype=np.int32)
    return EncodedColumn(column.name, remap[column.codes], column.categories[order])
