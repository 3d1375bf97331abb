"""The encoded table: integer codes per column, the data model every engine and algorithm uses."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._validation import check_columns
from anonlab.data.labels import factorize
from anonlab.data.schema import Role, Schema
from anonlab.exceptions import DataFormatError, InputError

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

    Examples
    --------
    >>> c = EncodedColumn.from_values("sex", ["F", "M", None, "F"])
    >>> c.codes.tolist(), c.categories.tolist(), c.cardinality
    ([0, 1, 2, 0], ['F', 'M', None], 3)
    >>> c.labels().tolist()
    ['F', 'M', None, 'F']
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
        """Return the decoded labels, one per row.

        Examples
        --------
        >>> EncodedColumn.from_values("sex", ["F", None]).labels().tolist()
        ['F', None]
        """
        return self.categories[self.codes]

    @classmethod
    def from_values(cls, name: str, values: npt.ArrayLike) -> EncodedColumn:
        """Encode raw values (None or NaN is a null).

        Examples
        --------
        >>> c = EncodedColumn.from_values("age", [31, None, 31])
        >>> c.codes.tolist(), c.categories.tolist(), c.null_code
        ([0, 1, 0], ['31', None], 1)
        """
        codes, cats = factorize(values)
        return cls(name, codes, cats)

    def take(self, rows: npt.NDArray[np.intp]) -> EncodedColumn:
        """Return the column restricted to ``rows`` (positions), with unused labels dropped.

        Examples
        --------
        >>> import numpy as np
        >>> c = EncodedColumn.from_values("sex", ["F", "M", "F"])
        >>> c.take(np.array([0, 2])).categories.tolist()
        ['F']
        """
        sub = self.codes[rows]
        used = np.zeros(self.cardinality, dtype=bool)
        used[sub] = True
        remap = np.cumsum(used, dtype=np.int64) - 1
        return EncodedColumn(self.name, remap[sub].astype(np.int32), self.categories[used])


class LabelColumns(Mapping[str, npt.NDArray[np.object_]]):
    """The columns of a released table, decoded to labels when first read.

    A read-only mapping from column name to an object array of labels (a null as ``None``),
    in column order. Each column is decoded on its first access and then kept, so a caller
    that reads a few columns (or none) does not pay for the others. Writers read the codes
    (:meth:`encoded`) or the original typed values (:meth:`typed`) instead, without decoding.

    Parameters
    ----------
    columns : sequence of EncodedColumn
        The encoded columns, in order.
    rows : ndarray of intp, optional
        The rows (positions) to take from each column; every row when omitted.
    masked : collection of str
        Columns whose labels are replaced by ``"*"`` where ``keep`` is False.
    keep : ndarray of bool, optional
        Per row taken, whether it keeps its labels in the ``masked`` columns.
    typed : Mapping[str, object], optional
        Columns released with their original values and type (numbers stay numbers): an
        array with ``take(positions)`` and ``to_pylist()`` (a pyarrow array) per name, for
        every row of the table before ``rows``. A name here that is not among ``columns``
        is a column that was never encoded (a list or struct column carried through).
    order : sequence of str, optional
        The order of the columns (default: ``columns``, then the names only in ``typed``).
    """

    def __init__(
        self,
        columns: Sequence[EncodedColumn],
        rows: npt.NDArray[np.intp] | None = None,
        *,
        masked: Iterable[str] = (),
        keep: npt.NDArray[np.bool_] | None = None,
        typed: Mapping[str, Any] | None = None,
        order: Sequence[str] | None = None,
    ) -> None:
        self._columns = {c.name: c for c in columns}
        self._rows = rows
        self._masked = frozenset(masked)
        self._keep = keep
        self._typed = dict(typed or {})
        names = list(self._columns) + [n for n in self._typed if n not in self._columns]
        self._order = list(order) if order is not None else names
        self._decoded: dict[str, npt.NDArray[np.object_]] = {}

    def __getitem__(self, name: str) -> npt.NDArray[np.object_]:
        hit = self._decoded.get(name)
        if hit is None:
            if name not in self._columns:
                raw = self.typed(name)
                if raw is None:
                    raise KeyError(name)
                hit = np.asarray(raw.to_pylist() + [None], dtype=object)[:-1]
            else:
                codes, cats = self.encoded(name)
                hit = cats[codes]
            self._decoded[name] = hit
        return hit

    @property
    def rows(self) -> npt.NDArray[np.intp] | None:
        """The positions, in the table the columns were taken from, of the rows released
        (None: every row, a suppressed row masked).

        Examples
        --------
        >>> import numpy as np
        >>> c = EncodedTable.from_columns({"zip": ["4350", "4351", "4350"]})
        >>> LabelColumns(c.columns, np.array([0, 2])).rows.tolist()
        [0, 2]
        """
        return self._rows

    def encoded(self, name: str) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.object_]]:
        """Return the codes of the rows released and their labels, masked rows as ``"*"``.

        Raises
        ------
        KeyError
            If ``name`` is not an encoded column.
        """
        col = self._columns[name]
        codes = col.codes if self._rows is None else col.codes[self._rows]
        cats = col.categories
        if self._keep is not None and name in self._masked and not bool(self._keep.all()):
            cats = np.append(cats, np.array(["*"], dtype=object))
            codes = np.where(self._keep, codes, np.int32(cats.size - 1)).astype(np.int32)
        return codes, cats

    def typed(self, name: str) -> Any | None:
        """The column with its original values and type for the rows released, or None."""
        raw = self._typed.get(name)
        if raw is None:
            return None
        return raw if self._rows is None else raw.take(self._rows)

    @property
    def n_rows(self) -> int:
        """Number of rows released."""
        if self._rows is not None:
            return int(self._rows.size)
        for col in self._columns.values():
            return int(col.codes.size)
        for raw in self._typed.values():
            return len(raw)
        return 0

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)

    def __repr__(self) -> str:
        return f"LabelColumns({self._order})"


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
    typed : Mapping[str, object], optional
        The original values of columns that were not text (numbers, dates, booleans, and
        list or struct columns, which are not encoded at all): an array with
        ``take(positions)`` and ``to_pylist()`` (a pyarrow array) per name, one value per
        row. Columns a release does not generalize are written with these, so numbers stay
        numbers. A name here that is not among ``columns`` is a nested column: it can be
        carried through to the output but never used as an attribute.
    order : tuple of str, optional
        The order of every column, nested ones included (default: ``columns``).
    weights : ndarray of int64, optional
        The multiplicity of each row: how many records of the data it stands for (a
        *frequency set*: the distinct combinations of some columns and their counts, as an
        out-of-core engine computes them with one ``GROUP BY``). Engines and searches count
        a row ``weights[r]`` times, so class sizes, sensitive histograms, suppression and
        losses are those of the full data; :attr:`n_records` is their sum. None (the
        default): every row is one record.

    Examples
    --------
    >>> t = EncodedTable.from_rows([("31", "F"), ("42", "M"), ("31", None)], ["age", "sex"])
    >>> t.n_rows, t.names
    (3, ['age', 'sex'])
    >>> t["age"].codes.tolist(), t["age"].categories.tolist()
    ([0, 1, 0], ['31', '42'])
    >>> t.drop_nulls(["sex"]).n_rows
    2
    """

    columns: tuple[EncodedColumn, ...]
    schema: Schema = field(default_factory=Schema)
    source: str | None = None
    typed: Mapping[str, Any] = field(default_factory=dict)
    order: tuple[str, ...] = ()
    weights: npt.NDArray[np.int64] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        cols = tuple(self.columns)
        object.__setattr__(self, "columns", cols)
        if not self.order:
            extra = tuple(n for n in self.typed if n not in {c.name for c in cols})
            object.__setattr__(self, "order", tuple(c.name for c in cols) + extra)
        lengths = {c.codes.size for c in cols}
        if len(lengths) > 1:
            raise InputError(f"Columns have different lengths: {sorted(lengths)}.")
        names = [c.name for c in cols]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise InputError(f"Duplicate column names: {', '.join(map(repr, dup))}.")
        check_columns(list(self.schema.roles), list(self.order))
        object.__setattr__(self, "_index", {c.name: c for c in cols})
        if self.weights is not None:
            w = np.ascontiguousarray(self.weights, dtype=np.int64).reshape(-1)
            if w.size != self.n_rows:
                raise InputError(
                    f"A table of {self.n_rows} rows got {w.size} row weights; give one per row."
                )
            if w.size and int(w.min()) < 1:
                raise InputError("Row weights (multiplicities) must be integers >= 1.")
            object.__setattr__(self, "weights", w)

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

        Examples
        --------
        >>> t = EncodedTable.from_columns({"age": [31, 42, None], "sex": ["F", "M", "F"]})
        >>> t.n_rows, t["age"].labels().tolist()
        (3, ['31', '42', None])
        """
        cols = [EncodedColumn.from_values(name, values) for name, values in data.items()]
        return cls(tuple(cols), schema or Schema(), source)

    @classmethod
    def from_rows(
        cls, rows: Iterable[Sequence[object]], columns: Sequence[str], **kwargs: object
    ) -> EncodedTable:
        """Encode a sequence of rows (small tables, examples and tests).

        Examples
        --------
        >>> t = EncodedTable.from_rows([("31", "F"), ("42", "M")], ["age", "sex"])
        >>> t.to_dict()["sex"].tolist()
        ['F', 'M']
        """
        data = list(rows)
        for i, row in enumerate(data):
            if len(row) != len(columns):
                raise InputError(f"Row {i + 1} has {len(row)} values; expected {len(columns)}.")
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
    def n_records(self) -> int:
        """Number of records the rows stand for: the sum of :attr:`weights` (the rows
        themselves when the table has no weights)."""
        return self.n_rows if self.weights is None else int(self.weights.sum())

    @property
    def weighted(self) -> bool:
        """Whether rows carry a multiplicity (:attr:`weights`): a frequency set."""
        return self.weights is not None

    @property
    def names(self) -> list[str]:
        """Column names in table order."""
        return [c.name for c in self.columns]

    def column(self, name: str) -> EncodedColumn:
        """Return the column ``name``; the error lists existing columns and the closest one.

        Examples
        --------
        >>> t = EncodedTable.from_columns({"age": ["31", "42"]})
        >>> t.column("age").labels().tolist()
        ['31', '42']
        >>> t.column("agee")
        Traceback (most recent call last):
        ...
        anonlab.exceptions.ColumnNotFoundError: Unknown column 'agee'. Did you mean 'age'? Available: 'age'.
        """
        index: dict[str, EncodedColumn] = self._index  # type: ignore[attr-defined]
        if name not in index:
            check_columns([name], self.names)
        return index[name]

    def __getitem__(self, name: str) -> EncodedColumn:
        return self.column(name)

    def __len__(self) -> int:
        return self.n_rows

    def candidate_attributes(self) -> list[str]:
        """Columns that may be quasi-identifiers: all but identifiers, sensitive ones and
        per-record limits.

        Examples
        --------
        >>> roles = Schema.from_lists(identifiers=["id"], sensitive=["disease"])
        >>> t = EncodedTable.from_columns(
        ...     {"id": ["a", "b"], "age": ["31", "42"], "disease": ["flu", "hiv"]}, schema=roles)
        >>> t.candidate_attributes()
        ['age']
        """
        never = (Role.IDENTIFIER, Role.SENSITIVE, Role.LIMIT)
        return [n for n in self.names if self.schema.role(n) not in never]

    @property
    def nested(self) -> list[str]:
        """Columns carried through but never encoded (list, struct or map values)."""
        encoded = set(self.names)
        return [n for n in self.typed if n not in encoded]

    def require(self, names: Sequence[str], *, what: str = "column") -> None:
        """Raise a clear error if any of ``names`` does not exist or cannot be an attribute.

        Raises
        ------
        ColumnNotFoundError
            A name is not a column (the message lists the columns and the closest name).
        DataFormatError
            A name is a list, struct or map column, which anonlab cannot generalize or count.
        """
        nested = set(self.nested)
        for name in names:
            if name in nested:
                kind = getattr(self.typed[name], "type", "nested")
                raise DataFormatError(
                    f"The {what} {name!r} is a column of type {kind}; an attribute must hold "
                    "one value per row (text, numbers, dates). Flatten it, or leave it out of "
                    "the job (unused columns are carried through as they are)."
                )
        check_columns(list(names), self.names + list(nested), what=what)

    def with_schema(self, schema: Schema) -> EncodedTable:
        """Return the same data with other attribute roles.

        Examples
        --------
        >>> t = EncodedTable.from_columns({"id": ["a", "b"], "sex": ["F", "M"]})
        >>> t.with_schema(Schema.from_lists(identifiers=["id"])).schema.identifiers
        ['id']
        """
        return EncodedTable(
            self.columns, schema, self.source, self.typed, self.order, weights=self.weights
        )

    def with_columns(self, replace: Mapping[str, EncodedColumn]) -> EncodedTable:
        """Return the table with some encoded columns replaced (same rows, same order).

        A replaced column loses its original typed values: it is released as its labels.

        Examples
        --------
        >>> t = EncodedTable.from_columns({"sex": ["F", "M"]})
        >>> t2 = t.with_columns({"sex": EncodedColumn.from_values("sex", ["*", "*"])})
        >>> t2["sex"].labels().tolist()
        ['*', '*']
        """
        cols = tuple(replace.get(c.name, c) for c in self.columns)
        typed = {n: a for n, a in self.typed.items() if n not in replace}
        return EncodedTable(cols, self.schema, self.source, typed, self.order, weights=self.weights)

    # ------------------------------------------------------------------- row subsets
    def take(self, rows: npt.ArrayLike) -> EncodedTable:
        """Return the rows at ``rows`` (positions or a boolean mask), labels recompacted.

        Examples
        --------
        >>> t = EncodedTable.from_columns({"sex": ["F", "M", "F"]})
        >>> t.take([1, 2])["sex"].labels().tolist(), t.take([True, False, False]).n_rows
        (['M', 'F'], 1)
        """
        idx = np.asarray(rows)
        if idx.dtype == bool:
            idx = np.flatnonzero(idx)
        typed = {n: a.take(idx) for n, a in self.typed.items()}
        return EncodedTable(
            tuple(c.take(idx) for c in self.columns),
            self.schema,
            self.source,
            typed,
            self.order,
            weights=None if self.weights is None else self.weights[idx],
        )

    def null_mask(self, columns: Sequence[str] | None = None) -> npt.NDArray[np.bool_]:
        """Boolean mask of rows with a null in any of ``columns`` (default: all).

        Examples
        --------
        >>> t = EncodedTable.from_columns({"age": ["31", None, "42"], "sex": ["F", "M", None]})
        >>> t.null_mask(["age"]).tolist(), t.null_mask().tolist()
        ([False, True, False], [False, True, True])
        """
        mask = np.zeros(self.n_rows, dtype=bool)
        for name in columns if columns is not None else self.names:
            col = self.column(name)
            if col.null_code is not None:
                mask |= col.codes == col.null_code
        return mask

    def drop_nulls(self, columns: Sequence[str] | None = None) -> EncodedTable:
        """Return the table without the rows that have a null in any of ``columns``.

        Examples
        --------
        >>> t = EncodedTable.from_columns({"age": ["31", None, "42"], "sex": ["F", "M", None]})
        >>> t.drop_nulls(["age"]).n_rows, t.drop_nulls().n_rows
        (2, 1)
        """
        mask = self.null_mask(columns)
        return self if not mask.any() else self.take(~mask)

    def select(self, names: Sequence[str]) -> EncodedTable:
        """Return a table with only the named columns (list, map and struct columns too).

        Raises
        ------
        ColumnNotFoundError
            A name is not a column.

        Examples
        --------
        >>> t = EncodedTable.from_columns({"age": ["31", "42"], "sex": ["F", "M"]})
        >>> t.select(["sex"]).names
        ['sex']
        """
        check_columns(list(names), self.names + self.nested)
        roles = {k: v for k, v in self.schema.roles.items() if k in names}
        encoded = set(self.names)
        typed = {n: self.typed[n] for n in names if n in self.typed}
        return EncodedTable(
            tuple(self.column(n) for n in names if n in encoded),
            Schema(roles),
            self.source,
            typed,
            tuple(n for n in names if n in encoded or n in typed),
            weights=self.weights,
        )

    def to_dict(self) -> dict[str, npt.NDArray[np.object_]]:
        """Decode to a mapping of column name to label arrays.

        Examples
        --------
        >>> EncodedTable.from_columns({"sex": ["F", None]}).to_dict()["sex"].tolist()
        ['F', None]
        """
        return {c.name: c.labels() for c in self.columns}
