"""Class statistics in memory, by vectorised partition refinement over integer codes.

The classes of columns ``(a, b, c)`` are computed from the cached classes of ``(a, b)``:
``key = class_ab * card(c) + code(c)`` is compacted to dense class ids either by a counting
pass (``np.bincount``) when the key space is small or by a sort otherwise. Subset searches visit
subsets in an order where a prefix was usually just computed, so most evaluations cost one
refinement step over the rows.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from anonlab.data.hierarchy import Hierarchy
from anonlab.data.stats import ClassStats, SensitiveHistogram
from anonlab.data.table import EncodedTable
from anonlab.engines.base import Engine, Levels
from anonlab.exceptions import InputError

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
            if col in table.names:
                h.leaf_index(table.column(col).categories)  # raises if a value is missing
        self._gen: dict[tuple[str, int], tuple[npt.NDArray[np.int32], npt.NDArray[np.object_]]] = {}
        n = max(table.n_rows, 1)
        self._id_dtype = np.int32 if n < 2**31 else np.int64
        self._cache_max = max(4, cache_bytes // (n * np.dtype(self._id_dtype).itemsize))
        self._cache: OrderedDict[_Key, tuple[npt.NDArray[np.integer], npt.NDArray[np.int64]]] = (
            OrderedDict()
        )

    @property
    def n_rows(self) -> int:
        """Number of rows of the table."""
        return self.table.n_rows

    @property
    def columns(self) -> list[str]:
        """Column names of the table."""
        return self.table.names

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
        n = self.n_rows
        start = max(len(key) - 1, 0)
        while start > 0 and key[:start] not in self._cache:
            start -= 1
        if start == 0:
            ids: npt.NDArray[np.integer] = np.zeros(n, dtype=self._id_dtype)
            sizes = np.array([n], dtype=np.int64) if n else np.zeros(0, dtype=np.int64)
        else:
            ids, sizes = self._cache[key[:start]]
        for j in range(start, len(key)):
            codes, labels = self.generalized(*key[j])
            ids, sizes = self._refine(ids, sizes.size, codes, labels.size)
            if j < len(key) - 1:
                self._store(key[: j + 1], ids, sizes)
        self._store(key, ids, sizes)
        return ids, sizes

    def _refine(
        self,
        ids: npt.NDArray[np.integer],
        n_classes: int,
        codes: npt.NDArray[np.int32],
        card: int,
    ) -> tuple[npt.NDArray[np.integer], npt.NDArray[np.int64]]:
        n = ids.size
        if n == 0:
            return ids, np.zeros(0, dtype=np.int64)
        space = n_classes * card
        if space <= max(4 * n, 1 << 16):
            key = ids.astype(np.int64) * card + codes if card > 1 else ids.astype(np.int64)
            counts = np.bincount(key, minlength=space)
            present = counts > 0
            dense = np.cumsum(present, dtype=np.int64) - 1
            new_ids: npt.NDArray[np.integer] = dense[key].astype(self._id_dtype)
            return new_ids, counts[present].astype(np.int64)
        key = ids.astype(np.int64) * card + codes
        order = np.argsort(key, kind="stable")
        ks = key[order]
        boundary = np.empty(n, dtype=bool)
        boundary[0] = True
        np.not_equal(ks[1:], ks[:-1], out=boundary[1:])
        starts = np.flatnonzero(boundary)
        sizes = np.diff(np.append(starts, n)).astype(np.int64)
        sorted_ids: npt.NDArray[np.integer] = np.empty(n, dtype=self._id_dtype)
        sorted_ids[order] = (np.cumsum(boundary) - 1).astype(self._id_dtype)
        return sorted_ids, sizes

    def _store(self, key: _Key, ids: npt.NDArray[np.integer], sizes: npt.NDArray[np.int64]) -> None:
        self._cache[key] = (ids, sizes)
        self._cache.move_to_end(key)
        while len(self._cache) > self._cache_max:
            self._cache.popitem(last=False)

    def _key(self, columns: Sequence[str], levels: Levels | None) -> _Key:
        lv = self.validate(columns, levels)
        order = {c: i for i, c in enumerate(self.columns)}
        return tuple(sorted(zip(columns, lv), key=lambda cl: order[cl[0]]))

    # ------------------------------------------------------------ the interface
    def class_sizes(
        self, columns: Sequence[str], levels: Levels | None = None
    ) -> npt.NDArray[np.int64]:
        """Return the class sizes of ``columns`` at ``levels`` (see :class:`Engine`)."""
        return self._partition(self._key(columns, levels))[1]

    def class_stats(
        self,
        columns: Sequence[str],
        levels: Levels | None = None,
        *,
        sensitive: Sequence[str] = (),
        with_rows: bool = False,
    ) -> ClassStats:
        """Return the class statistics of ``columns`` at ``levels`` (see :class:`Engine`)."""
        key = self._key(columns, levels)
        for s in sensitive:
            self.table.column(s)
        ids, sizes = self._partition(key)
        n_cls = sizes.size
        # first row of each class gives its key
        first = np.full(n_cls, -1, dtype=np.int64)
        if n_cls:
            _, first_idx = np.unique(ids, return_index=True)
            first = first_idx.astype(np.int64)
        pos = {c: i for i, (c, _) in enumerate(key)}
        keys = np.empty((n_cls, len(columns)), dtype=np.int32)
        domains = []
        out_levels = []
        for j, col in enumerate(columns):
            codes, labels = self.generalized(*key[pos[col]])
            keys[:, j] = codes[first]
            domains.append(labels)
            out_levels.append(key[pos[col]][1])
        hists = {}
        for s in sensitive:
            scol = self.table.column(s)
            nv = scol.cardinality
            flat = ids.astype(np.int64) * nv + scol.codes
            counts = np.bincount(flat, minlength=n_cls * nv).reshape(n_cls, nv)
            hists[s] = SensitiveHistogram(scol.categories, counts.astype(np.int64))
        return ClassStats(
            columns=tuple(columns),
            levels=tuple(out_levels),
            sizes=sizes,
            n_rows=self.n_rows,
            keys=keys,
            domains=tuple(domains),
            row_class=ids if with_rows else None,
            sensitive=hists,
        )

    def rows_in_small_classes(
        self, columns: Sequence[str], levels: Levels | None, k: int
    ) -> npt.NDArray[np.int64]:
        """Return the positions of rows in classes smaller than ``k`` (see :class:`Engine`)."""
        ids, sizes = self._partition(self._key(columns, levels))
        small = sizes < k
        return np.flatnonzero(small[ids]).astype(np.int64)
