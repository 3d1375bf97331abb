"""Generalization hierarchies: one row per original value, one column per level up to the root.

A hierarchy of height ``h`` has levels ``0..h``; level 0 holds the original values and each
higher level a coarser label. Generalizing a column to a level is an array lookup on codes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from anonlab._validation import check_int
from anonlab.data.labels import factorize
from anonlab.exceptions import HierarchyError

__all__ = ["Hierarchy"]


class Hierarchy:
    """A value generalization hierarchy (taxonomy) for one attribute.

    Parameters
    ----------
    rows : Sequence[Sequence[str]]
        One row per original value: the value, then its label at level 1, 2, ..., h.
        This is ARX's hierarchy format.
    attribute : str, optional
        The attribute the hierarchy belongs to, named in error messages.
    source : str, optional
        The file the hierarchy came from, named in error messages.

    Raises
    ------
    HierarchyError
        If the rows are empty or ragged, a value is listed twice, a label is empty, or a label
        has two parents on the next level (levels must only coarsen).

    Notes
    -----
    A null in the data is a value of its own: it stays null at every level (it forms its own
    equivalence class) unless the hierarchy lists it explicitly.
    """

    def __init__(
        self,
        rows: Sequence[Sequence[str]],
        *,
        attribute: str | None = None,
        source: str | None = None,
    ) -> None:
        self.attribute = attribute
        self.source = source
        rows = [list(r) for r in rows]
        if not rows:
            raise HierarchyError(f"The hierarchy{self._where()} is empty.")
        width = len(rows[0])
        for i, row in enumerate(rows):
            if len(row) != width:
                raise HierarchyError(
                    f"Malformed hierarchy{self._where()}: row {i + 1} ({row[0]!r}) has "
                    f"{len(row)} levels, the first row has {width}."
                )
        table = np.array(rows, dtype=object).reshape(len(rows), width)
        empty = np.argwhere((table == "") | (table == None))  # noqa: E711 - elementwise
        if empty.size:
            r, c = empty[0]
            raise HierarchyError(
                f"Malformed hierarchy{self._where()}: empty label at row {r + 1}, level {c}."
            )
        table = table.astype(str).astype(object)
        leaves = table[:, 0]
        uniq, counts = np.unique(leaves.astype(str), return_counts=True)
        if (counts > 1).any():
            raise HierarchyError(
                f"Malformed hierarchy{self._where()}: value {uniq[counts > 1][0]!r} is listed "
                f"{int(counts[counts > 1][0])} times."
            )
        codes = np.empty((width, len(rows)), dtype=np.int32)
        labels: list[npt.NDArray[np.object_]] = []
        for j in range(width):
            lab, inv = np.unique(table[:, j].astype(str), return_inverse=True)
            codes[j] = inv
            labels.append(lab.astype(object))
        for j in range(width - 1):
            pairs = np.unique(codes[j].astype(np.int64) * len(rows) + codes[j + 1])
            if pairs.size != labels[j].size:
                child = pairs // len(rows)
                bad = int(child[np.flatnonzero(np.diff(child) == 0)[0]])
                parents = labels[j + 1][pairs[child == bad] % len(rows)]
                raise HierarchyError(
                    f"Inconsistent hierarchy{self._where()}: {labels[j][bad]!r} at level {j} "
                    f"has {parents.size} parents at level {j + 1} "
                    f"({', '.join(map(repr, parents[:3]))}); each label needs exactly one."
                )
        self._table = table
        self._codes = codes
        self._labels = labels
        self._leaf_lookup = {v: i for i, v in enumerate(leaves)}
        self._last_leaf_index: tuple[object, npt.NDArray[np.int64]] | None = None

    # ---------------------------------------------------------------- properties
    def _where(self) -> str:
        parts = []
        if self.attribute is not None:
            parts.append(f"attribute {self.attribute!r}")
        if self.source is not None:
            parts.append(f"file {self.source!r}")
        return f" ({', '.join(parts)})" if parts else ""

    @property
    def height(self) -> int:
        """The top level (the number of generalization steps above the original values)."""
        return int(self._codes.shape[0] - 1)

    @property
    def n_levels(self) -> int:
        """Number of levels, ``height + 1``."""
        return int(self._codes.shape[0])

    @property
    def leaves(self) -> npt.NDArray[np.object_]:
        """The original values, in file order."""
        return self._table[:, 0].copy()

    def rows(self) -> list[list[str]]:
        """Return the hierarchy as rows (value, level 1, ..., level h)."""
        return [list(map(str, r)) for r in self._table]

    def level_labels(self, level: int) -> npt.NDArray[np.object_]:
        """Distinct labels at ``level``."""
        return self._labels[self._check_level(level)].copy()

    def _check_level(self, level: int) -> int:
        name = f"level of attribute {self.attribute!r}" if self.attribute else "level"
        return check_int(level, name, low=0, high=self.height)

    # ---------------------------------------------------------------- lookups
    def leaf_index(self, categories: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """Return, for each category label, its row in the hierarchy (``-1`` for a null).

        Raises
        ------
        HierarchyError
            If a non-null category is not among the hierarchy's values; the message names
            the value, the attribute and the file.
        """
        last = self._last_leaf_index
        if last is not None and last[0] is categories:
            return last[1]
        cats = np.asarray(categories, dtype=object)
        out = np.fromiter(
            (-1 if c is None else self._leaf_lookup.get(str(c), -2) for c in cats),
            dtype=np.int64,
            count=cats.size,
        )
        missing = cats[out == -2]
        if missing.size:
            more = f" and {missing.size - 1} more" if missing.size > 1 else ""
            raise HierarchyError(
                f"Value {str(missing[0])!r}{more} of attribute "
                f"{self.attribute or '?'!r} is not in its hierarchy"
                f"{' file ' + repr(self.source) if self.source else ''}."
            )
        if isinstance(categories, np.ndarray):
            out.setflags(write=False)
            # the same domain array is generalized to every level in turn: remember it
            self._last_leaf_index = (categories, out)
        return out

    def generalization(
        self, categories: npt.ArrayLike, level: int
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.object_]]:
        """Map category codes to codes of their labels at ``level``.

        Parameters
        ----------
        categories : array_like
            The distinct labels of a column (a null as ``None``).
        level : int
            Target level, ``0..height``.

        Returns
        -------
        mapping : ndarray of int32
            ``mapping[c]`` is the generalized code of category ``c``.
        labels : ndarray of object
            Labels of the generalized codes (a null stays ``None``, last).
        """
        level = self._check_level(level)
        leaf = self.leaf_index(categories)
        level_codes = self._codes[level]
        labels = self._labels[level]
        mapping = np.empty(leaf.size, dtype=np.int32)
        has = leaf >= 0
        mapping[has] = level_codes[leaf[has]]
        if (~has).any():
            mapping[~has] = labels.size
            labels = np.append(labels, np.array([None], dtype=object))
        return mapping, labels

    def generalize(self, values: npt.ArrayLike, level: int) -> npt.NDArray[np.object_]:
        """Return the labels of ``values`` at ``level`` (a null stays None)."""
        vals = np.asarray(values, dtype=object)
        codes, cats = factorize(vals)
        mapping, labels = self.generalization(cats, level)
        return np.asarray(labels[mapping[codes]], dtype=object)

    def __repr__(self) -> str:
        return (
            f"Hierarchy(attribute={self.attribute!r}, values={self._table.shape[0]}, "
            f"height={self.height})"
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hierarchy) and np.array_equal(self._table, other._table)

    __hash__ = None  # type: ignore[assignment]
