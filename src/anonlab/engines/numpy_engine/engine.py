"""Class statistics in memory, by vectorised partition refinement over integer codes.

The classes of columns ``(a, b, c, d)`` are computed from the cached classes of a prefix,
say ``(a, b)``: the remaining columns are packed with the class id into one mixed-radix key
``(class_ab * card(c) + code(c)) * card(d) + code(d)`` while it fits 62 bits, and the key is
compacted to dense class ids by a counting pass (``np.bincount``) when the key space is small,
else by one sort, or by hashed grouping when the keys look few
(:func:`anonlab.data.grouping.refine_steps`); rows already alone in their class are left out
of sorts. A table with many columns thus costs a few passes over the rows, not one per column.
Subset searches visit subsets in an order where a prefix was usually just computed, so most
evaluations cost one pass.

Classes are numbered in the lexicographic order of their codes, the columns taken in table
order (as ``np.unique(..., axis=0)`` numbers distinct rows): ``sizes``, ``keys`` and
``row_class`` follow that numbering.

A table with row weights (:attr:`EncodedTable.weights`, a frequency set) is partitioned like
any other; class sizes and sensitive histograms then count each row as often as its weight,
so every statistic is that of the records the rows stand for (``n_rows`` is their number).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from anonlab._optional import import_optional
from anonlab.data.grouping import class_members, refine_steps
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.stats import ClassStats, SensitiveHistogram
from anonlab.data.table import EncodedTable
from anonlab.engines.base import AttributeLevels, Engine, WeightedClasses, label_numbers
from anonlab.exceptions import InputError
from anonlab.io.writers import json_text

__all__ = ["NumpyEngine"]

_Key = tuple[tuple[str, int], ...]


class NumpyEngine(Engine):
    """Class statistics of an :class:`~anonlab.data.EncodedTable` held in memory.

    Parameters
    ----------
    table : EncodedTable
        The data.
    hierarchies : Mapping[str, Hierarchy], optional
        Hierarchies per column; each is checked to cover the column's values.
    cache_bytes : int
        Memory budget for cached partitions (row -> class arrays) reused by refinement.
    """

    name = "numpy"
    in_memory = True

    def __init__(
        self,
        table: EncodedTable,
        hierarchies: Mapping[str, Hierarchy] | None = None,
        *,
        cache_bytes: int = 256 * 2**20,
    ) -> None:
        if not isinstance(table, EncodedTable):
            raise InputError(
                f"The numpy engine takes an EncodedTable; got {type(table).__name__}. "
                "Read the data with anonlab.read_table first."
            )
        super().__init__(hierarchies)
        self.table = table
        for col, h in self.hierarchies.items():
            if col in table.names:  # raises if a value is missing, naming its row
                c = table.column(col)
                h.check_covers(c.categories, c.codes if table.weights is None else None)
        self._gen: dict[tuple[str, int], tuple[npt.NDArray[np.int32], npt.NDArray[np.object_]]] = {}
        self._weights = table.weights
        #: Weighted class sizes per partition key (frequency sets only).
        self._weighted: dict[_Key, npt.NDArray[np.int64]] = {}
        n = max(table.n_rows, 1)
        self._id_dtype = np.int32 if n < 2**31 else np.int64
        self._cache_max = max(4, cache_bytes // (n * np.dtype(self._id_dtype).itemsize))
        self._cache: OrderedDict[_Key, tuple[npt.NDArray[np.integer], npt.NDArray[np.int64]]] = (
            OrderedDict()
        )

    @property
    def n_rows(self) -> int:
        """Number of records of the table (its rows, each counted by its weight if any)."""
        return self.table.n_records

    @property
    def source_name(self) -> str | None:
        """The file the table was read from (None for a frame)."""
        return self.table.source

    @property
    def columns(self) -> list[str]:
        """Column names of the table (its encoded columns: a list, map or struct column is
        among :attr:`nested_columns` instead)."""
        return self.table.names

    @property
    def nested_columns(self) -> list[str]:
        """The table's list, map and struct columns (carried, never encoded)."""
        return self.table.nested

    def _nested_kind(self, column: str) -> str:
        return str(getattr(self.table.typed[column], "type", "nested"))

    def distinct_counts(self, columns: Sequence[str], *, rows: int | None = None) -> dict[str, int]:
        """Return the number of distinct values (a null counts as one) of each column; a
        list, map or struct column is counted by its JSON text (as DuckDB and Spark count
        it). With ``rows``, among the table's first ``rows`` records."""
        if rows is not None and rows < self.n_rows:
            w = self.table.weights
            # the rows holding the first records (the last one perhaps in part: its value
            # is among them all the same)
            end = int(rows) if w is None else int(np.searchsorted(np.cumsum(w), rows)) + 1
            first = self.table.select(list(columns)).take(np.arange(end))
            return NumpyEngine(first).distinct_counts(columns)
        kinds = set(self.nested_columns)
        nested = [c for c in columns if c in kinds]
        counts = super().distinct_counts([c for c in columns if c not in nested])
        if nested:
            pa, pc = import_optional("pyarrow"), import_optional("pyarrow.compute")
            for c in nested:
                text = json_text(pa, self.table.typed[c])
                counts[c] = int(pc.count_distinct(text, mode="all").as_py())
        return {c: counts[c] for c in columns}

    def first_row(self, column: str, values: Sequence[str | None]) -> tuple[int, str | None] | None:
        """The first row whose ``column`` holds one of ``values`` and its value (see
        :meth:`Engine.first_row`); None for a frequency set, whose rows are not the file's."""
        if self.table.weights is not None:
            return None
        col = self.table.column(column)
        wanted = set(values)
        codes = [i for i, v in enumerate(col.categories.tolist()) if v in wanted]
        rows = np.flatnonzero(np.isin(col.codes, codes))
        if not rows.size:
            return None
        value = col.categories[col.codes[rows[0]]]
        return int(rows[0]), None if value is None else str(value)

    def head(self, columns: Sequence[str], rows: int) -> EncodedTable:
        """Return the table's first ``rows`` records of ``columns`` (see :meth:`Engine.head`)."""
        cols = list(columns)
        self.validate(cols, None)
        table = self.table.select(cols)
        if rows >= self.n_rows:
            return table
        w = self.table.weights
        end = int(rows) if w is None else int(np.searchsorted(np.cumsum(w), rows)) + 1
        return table.take(np.arange(end))

    # ------------------------------------------------------------ generalized codes
    def generalized(
        self, column: str, level: int
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.object_]]:
        """Return the codes of ``column`` at ``level`` and their labels (cached)."""
        key = (column, level)
        hit = self._gen.get(key)
        if hit is not None:
            return hit
        col = self.table.column(column)
        if level == 0:
            out = (col.codes, col.categories)
        else:
            mapping, labels = self.hierarchies[column].generalization(col.categories, level)
            used = np.zeros(labels.size, dtype=bool)
            used[mapping] = True
            remap = (np.cumsum(used) - 1).astype(np.int32)
            out = (remap[mapping][col.codes], labels[used])
        self._gen[key] = out
        return out

    # ------------------------------------------------------------ partitions
    def _partition(self, key: _Key) -> tuple[npt.NDArray[np.integer], npt.NDArray[np.int64]]:
        """Return (row -> class id, class sizes) for the canonical key."""
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        n = self.table.n_rows
        start = max(len(key) - 1, 0)
        while start > 0 and key[:start] not in self._cache:
            start -= 1
        if start == 0:
            ids: npt.NDArray[np.integer] = np.zeros(n, dtype=self._id_dtype)
            sizes = np.array([n], dtype=np.int64) if n else np.zeros(0, dtype=np.int64)
        else:
            ids, sizes = self._cache[key[:start]]
        rest = key[start:]
        gen = [self.generalized(*c) for c in rest]
        steps = refine_steps(ids, sizes, [c for c, _ in gen], [lab.size for _, lab in gen])
        for done, ids, sizes in steps:
            self._store(key[: start + done], ids, sizes)
        self._store(key, ids, sizes)
        return ids, sizes

    def _store(self, key: _Key, ids: npt.NDArray[np.integer], sizes: npt.NDArray[np.int64]) -> None:
        self._cache[key] = (ids, sizes)
        self._cache.move_to_end(key)
        while len(self._cache) > self._cache_max:
            self._cache.popitem(last=False)

    def _sizes(
        self, key: _Key, ids: npt.NDArray[np.integer], sizes: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        """The class sizes in records: ``sizes`` (rows per class), or the rows' weights
        summed per class for a frequency set."""
        if self._weights is None:
            return sizes
        hit = self._weighted.get(key)
        if hit is None:
            summed = np.bincount(ids, weights=self._weights, minlength=sizes.size)
            hit = summed.astype(np.int64)  # exact: integer sums below 2**53
            if len(self._weighted) > 64:
                self._weighted.clear()
            self._weighted[key] = hit
        return hit

    def _key(self, columns: Sequence[str], levels: AttributeLevels | None) -> _Key:
        lv = self.validate(columns, levels)
        order = {c: i for i, c in enumerate(self.columns)}
        return tuple(sorted(zip(columns, lv), key=lambda cl: order[cl[0]]))

    # ------------------------------------------------------------ the interface
    def class_sizes(
        self, columns: Sequence[str], levels: AttributeLevels | None = None
    ) -> npt.NDArray[np.int64]:
        """Return the class sizes of ``columns`` at ``levels`` (see :class:`Engine`)."""
        key = self._key(columns, levels)
        return self._sizes(key, *self._partition(key))

    def class_stats(
        self,
        columns: Sequence[str],
        levels: AttributeLevels | None = None,
        *,
        sensitive: Sequence[str] = (),
        with_rows: bool = False,
        with_keys: bool = True,
    ) -> ClassStats:
        """Return the class statistics of ``columns`` at ``levels`` (see :class:`Engine`)."""
        key = self._key(columns, levels)
        for s in sensitive:
            self.table.column(s)
        ids, rows_per_class = self._partition(key)
        sizes = self._sizes(key, ids, rows_per_class)
        n_cls = sizes.size
        pos = {c: i for i, (c, _) in enumerate(key)}
        per_column = [key[pos[col]] for col in columns]  # (column, level) in the given order
        keys, domains = self._keys(per_column, ids, n_cls) if with_keys else (None, None)
        hists = {}
        for s in sensitive:
            scol = self.table.column(s)
            hists[s] = SensitiveHistogram.from_triplets(
                scol.categories, ids, scol.codes, self._weights, n_classes=n_cls
            )
        return ClassStats(
            columns=tuple(columns),
            levels=tuple(lv for _, lv in per_column),
            sizes=sizes,
            n_rows=self.n_rows,
            keys=keys,
            domains=domains,
            row_class=ids if with_rows else None,
            sensitive=hists,
        )

    def _keys(
        self, per_column: Sequence[tuple[str, int]], ids: npt.NDArray[np.integer], n_cls: int
    ) -> tuple[npt.NDArray[np.int32], tuple[npt.NDArray[np.object_], ...]]:
        """The key of each of the ``n_cls`` classes ``ids`` (its codes of the columns, each
        at its level, ``per_column``) and the labels each column's codes index (for
        :meth:`class_stats`)."""
        first = class_members(ids, n_cls)  # any row of a class gives its key
        # filled column by column, each a contiguous row of a (columns, classes) array, and
        # handed out as its transpose (n_cls, m): column-major, so that a column of the keys
        # (what the lattice reads) is one contiguous run, and no strided writes
        m = len(per_column)
        by_column = np.empty((m, n_cls), np.int32)
        domains = []
        for j, (col, lv) in enumerate(per_column):
            codes, labels = self.generalized(col, lv)
            by_column[j] = _narrow(codes, labels.size, n_cls)[first]
            domains.append(labels)
        keys = by_column.T
        return keys, tuple(domains)

    def weighted_class_sizes(
        self, columns: Sequence[str], levels: AttributeLevels | None, weight: str
    ) -> WeightedClasses:
        """Class sizes and the sum of ``weight`` per class (see :class:`Engine`)."""
        key = self._key(columns, levels)
        self.validate([weight], None)
        ids, rows_per_class = self._partition(key)
        sizes = self._sizes(key, ids, rows_per_class)
        col = self.table.column(weight)
        numbers, bad = label_numbers(col.categories)
        per_row = numbers[col.codes]
        counts = np.ones(per_row.size) if self._weights is None else self._weights
        given = ~np.isnan(per_row)
        summed = np.bincount(
            ids, weights=np.where(given, per_row, 0.0) * counts, minlength=sizes.size
        )
        null = col.null_code
        missing = int(counts[col.codes == null].sum()) if null is not None else 0
        return WeightedClasses(
            sizes=sizes,
            weights=summed.astype(np.float64),
            missing=missing,
            not_numeric=bad,
            lowest=float(per_row[given].min()) if given.any() else float("nan"),
            total=float((per_row[given] * counts[given]).sum()),
        )

    def rows_in_small_classes(
        self, columns: Sequence[str], levels: AttributeLevels | None, k: int
    ) -> npt.NDArray[np.int64]:
        """Return the positions of rows in classes smaller than ``k`` (see :class:`Engine`;
        a class's size counts records, the positions are the table's rows)."""
        key = self._key(columns, levels)
        ids, rows_per_class = self._partition(key)
        small = self._sizes(key, ids, rows_per_class) < k
        return np.flatnonzero(small[ids]).astype(np.int64)


def _narrow(codes: npt.NDArray[np.int32], card: int, n_reads: int) -> npt.NDArray[np.integer]:
    """The codes in the smallest integer type, when many random reads of them are coming.

    Reading one code per class from a column much larger than the processor's cache is faster
    from a copy of 1 or 2 bytes per code; for few reads or a small column the copy costs more.
    """
    if codes.nbytes < 1 << 18 or 4 * n_reads < codes.size:
        return codes
    if card <= 1 << 8:
        return codes.astype(np.uint8)
    if card <= 1 << 16:
        return codes.astype(np.uint16)
    return codes
