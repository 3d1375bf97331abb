"""Generalization hierarchies: one row per original value, one column per level up to the root.

A hierarchy of height ``h`` has levels ``0..h``; level 0 holds the original values and each
higher level a coarser label. Generalizing a column to a level is an array lookup on codes.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._validation import check_int, shown
from anonlab.data.labels import as_text, factorize
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

    See Also
    --------
    Hierarchy.from_codes : build one from integer codes per level (no Python loop over rows).

    Notes
    -----
    A null in the data is a value of its own: it stays null at every level below the top (it
    forms its own equivalence class) unless the hierarchy lists it explicitly. At the top level
    of a hierarchy with one root label (``*``), a null becomes that label like every other
    value, so the most general transformation always merges every row into one class (a table
    with one rare null would otherwise have no solution). A hierarchy whose top level has
    several labels keeps the null apart there too.

    Internally each level is stored as integer codes (one per row) into its distinct labels,
    sorted by code point; the labels of a level, as :meth:`level_labels` and
    :meth:`generalization` return them, come in that order.

    Examples
    --------
    >>> h = Hierarchy([["4350", "435*", "*"], ["4351", "435*", "*"], ["4360", "436*", "*"]],
    ...               attribute="zip")
    >>> h.height, h.leaves.tolist()
    (2, ['4350', '4351', '4360'])
    >>> h.generalize(["4351", "4360"], 1).tolist()
    ['435*', '436*']
    >>> h.level_labels(1).tolist()
    ['435*', '436*']
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
        lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
        ragged = np.flatnonzero(lengths != width)
        if ragged.size:
            i = int(ragged[0])
            raise HierarchyError(
                f"Malformed hierarchy{self._where()}: row {i + 1} ({rows[i][0]!r}) has "
                f"{len(rows[i])} levels, the first row has {width}."
            )
        table = np.array(rows, dtype=object).reshape(len(rows), width)
        empty = np.argwhere((table == "") | (table == None))  # noqa: E711 - elementwise
        if empty.size:
            r, c = empty[0]
            raise HierarchyError(
                f"Malformed hierarchy{self._where()}: empty label at row {r + 1}, level {c}."
            )
        text = as_text(table).reshape(table.shape)
        codes = np.empty((width, len(rows)), dtype=np.int32)
        labels: list[npt.NDArray[np.object_]] = []
        for j in range(width):
            lab, inv = np.unique(text[:, j], return_inverse=True)
            codes[j] = inv.reshape(-1)
            labels.append(lab.astype(object))
        self._setup(codes, labels)

    @classmethod
    def from_codes(
        cls,
        codes: Sequence[npt.ArrayLike] | npt.ArrayLike,
        labels: Sequence[npt.ArrayLike],
        *,
        attribute: str | None = None,
        source: str | None = None,
        sorted_labels: bool = False,
    ) -> Hierarchy:
        """Build a hierarchy from integer codes per level, without a Python loop over rows.

        Row ``i`` of the hierarchy is ``labels[0][codes[0][i]], labels[1][codes[1][i]], ...``;
        the result equals ``Hierarchy(rows)`` of those rows (same labels, order and errors).

        Parameters
        ----------
        codes : sequence of array_like of int, or a 2-D array (levels x rows)
            One code per row for each level, ``0 <= code < len(labels[level])``.
        labels : sequence of array_like of str
            The labels each level's codes index. Fastest when they are distinct and sorted
            (by code point); otherwise they are sorted here and repeated labels merged.
        attribute : str, optional
            The attribute the hierarchy belongs to, named in error messages.
        source : str, optional
            The file the hierarchy came from, named in error messages.
        sorted_labels : bool, default False
            The caller guarantees that each level's labels are distinct str in code-point
            order (a file reader that sorted them): their order is not checked again, only
            that none is empty.

        Returns
        -------
        Hierarchy

        Raises
        ------
        HierarchyError
            As :class:`Hierarchy` does (empty, repeated value, empty label, two parents),
            and if codes and labels do not fit together.
        """
        self = cls.__new__(cls)
        self.attribute = attribute
        self.source = source
        levels = [np.asarray(c).reshape(-1) for c in codes]  # type: ignore[union-attr]
        labs = [np.asarray(lab, dtype=object).reshape(-1) for lab in labels]
        if not levels or levels[0].size == 0:
            raise HierarchyError(f"The hierarchy{self._where()} is empty.")
        n = levels[0].size
        if len(labs) != len(levels) or any(c.size != n for c in levels):
            raise HierarchyError(
                f"Malformed hierarchy{self._where()}: {len(levels)} levels of codes "
                f"(lengths {sorted({c.size for c in levels})}) for {len(labs)} levels of labels."
            )
        for j, (c, lab) in enumerate(zip(levels, labs)):
            if c.dtype.kind not in "iu" or int(c.min()) < 0 or int(c.max()) >= lab.size:
                raise HierarchyError(
                    f"Malformed hierarchy{self._where()}: codes of level {j} must be integers "
                    f"in [0, {lab.size})."
                )
        out = np.empty((len(levels), n), dtype=np.int32)
        empties: list[npt.NDArray[np.bool_] | None] = []
        for j, (c, lab) in enumerate(zip(levels, labs)):
            if sorted_labels and lab.size and lab[0] != "":  # sorted: an empty one is first
                out[j] = c
                empties.append(None)
                continue
            lab, out[j], empty = _sorted_level(c, lab)
            labs[j] = lab
            empties.append(empty)
        if any(e is not None for e in empties):
            per_level = np.zeros((n, len(levels)), dtype=bool)
            for j, e in enumerate(empties):
                if e is not None:
                    per_level[:, j] = e[levels[j]]
            r, c = np.argwhere(per_level)[0]
            raise HierarchyError(
                f"Malformed hierarchy{self._where()}: empty label at row {r + 1}, level {c}."
            )
        self._setup(out, labs)
        return self

    def _setup(self, codes: npt.NDArray[np.int32], labels: list[npt.NDArray[np.object_]]) -> None:
        """Check values and parents, then store ``codes`` (levels x rows) and sorted ``labels``."""
        n = codes.shape[1]
        counts = np.bincount(codes[0], minlength=labels[0].size)
        if (counts > 1).any():
            first = int(np.argmax(counts > 1))
            raise HierarchyError(
                f"Malformed hierarchy{self._where()}: value {labels[0][first]!r} is listed "
                f"{int(counts[first])} times."
            )
        for j in range(codes.shape[0] - 1):
            parent = np.empty(labels[j].size, dtype=np.int32)
            parent[codes[j]] = codes[j + 1]
            if np.array_equal(parent[codes[j]], codes[j + 1]):
                continue
            pairs = np.unique(codes[j].astype(np.int64) * n + codes[j + 1])
            child = pairs // n
            bad = int(child[np.flatnonzero(np.diff(child) == 0)[0]])
            parents = labels[j + 1][pairs[child == bad] % n]
            raise HierarchyError(
                f"Inconsistent hierarchy{self._where()}: {labels[j][bad]!r} at level {j} "
                f"has {parents.size} parents at level {j + 1} "
                f"({', '.join(map(repr, parents[:3]))}); each label needs exactly one."
            )
        # leaf_row[k] is the row of the k-th (sorted) value
        leaf_row = np.empty(n, dtype=np.int64)
        leaf_row[codes[0]] = np.arange(n, dtype=np.int64)
        self._codes = codes
        self._labels = labels
        self._leaf_row = leaf_row
        self._leaves: npt.NDArray[np.object_] | None = None
        self._leaf_lookup: dict[object, int] | None = None
        self._leaf_indexes: list[tuple[object, npt.NDArray[np.int64]]] = []
        self._label_ids: list[tuple[object, tuple[npt.NDArray[np.int64], npt.NDArray[np.object_]]]]
        self._label_ids = []

    def named(self, attribute: str) -> Hierarchy:
        """This hierarchy for ``attribute``: itself if it names it already, else a shallow
        copy that does, for error messages about that attribute (the arrays are shared:
        nothing in a hierarchy changes after it is built).

        Parameters
        ----------
        attribute : str
            The attribute the hierarchy generalizes.

        Returns
        -------
        Hierarchy

        Examples
        --------
        >>> Hierarchy([["F", "*"], ["M", "*"]]).named("sex").attribute
        'sex'
        """
        if self.attribute == attribute:
            return self
        out = copy.copy(self)
        out.attribute = attribute
        return out

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
        return self._file_leaves().copy()

    def _file_leaves(self) -> npt.NDArray[np.object_]:
        if self._leaves is None:
            self._leaves = self._labels[0][self._codes[0]]
            self._leaves.setflags(write=False)
        return self._leaves

    def _as_table(self) -> npt.NDArray[np.object_]:
        """The labels as an object array, one row per value and one column per level."""
        return np.stack([lab[c] for lab, c in zip(self._labels, self._codes)], axis=1)

    def rows(self) -> list[list[str]]:
        """Return the hierarchy as rows (value, level 1, ..., level h).

        Examples
        --------
        >>> Hierarchy([["F", "*"], ["M", "*"]]).rows()
        [['F', '*'], ['M', '*']]
        """
        return [list(map(str, r)) for r in self._as_table()]

    def level_labels(self, level: int) -> npt.NDArray[np.object_]:
        """Distinct labels at ``level``.

        Examples
        --------
        >>> h = Hierarchy([["4350", "435*", "*"], ["4360", "436*", "*"]])
        >>> h.level_labels(0).tolist(), h.level_labels(2).tolist()
        (['4350', '4360'], ['*'])
        """
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

        Examples
        --------
        >>> h = Hierarchy([["F", "*"], ["M", "*"]], attribute="sex")
        >>> h.leaf_index(["M", None, "F"]).tolist()
        [1, -1, 0]
        >>> h.leaf_index(["X"])
        Traceback (most recent call last):
        ...
        anonlab.exceptions.HierarchyError: Value 'X' of attribute 'sex' is not in its hierarchy.
        """
        for seen, rows in self._leaf_indexes:
            if seen is categories:
                return rows
        cats = np.asarray(categories, dtype=object)
        null = np.asarray(cats == None, dtype=bool)  # noqa: E711 - elementwise
        if null.any():
            out = np.full(cats.size, -1, dtype=np.int64)
            out[~null] = self._rows_of(cats[~null])
        else:
            out = self._rows_of(cats)
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
            # the same few domain arrays (a column's, the hierarchy's own leaves) are
            # generalized to every level in turn: remember the last ones
            self._leaf_indexes = [(categories, out), *self._leaf_indexes[:3]]
        return out

    def check_covers(
        self,
        categories: npt.ArrayLike,
        codes: npt.NDArray[np.integer] | None = None,
        *,
        locate: Callable[[list[Any]], tuple[int, Any] | None] | None = None,
    ) -> None:
        """Refuse a column with a value the hierarchy lacks (:meth:`leaf_index`), naming
        the first row that holds one (and its value), counted from 1 in the table's order:
        found in the column's ``codes`` (row by row, indices into ``categories``), or by
        ``locate`` (given the values lacking, the position of the first row holding one and
        its value: an engine's :meth:`~anonlab.engines.base.Engine.first_row`).

        Raises
        ------
        HierarchyError
            Naming the value, its row, the attribute and the file.

        Examples
        --------
        >>> h = Hierarchy([["20", "*"], ["30", "*"]], attribute="age")
        >>> h.check_covers(np.array(["20", "30", "99"], dtype=object), np.array([0, 1, 2, 0]))
        Traceback (most recent call last):
        ...
        anonlab.exceptions.HierarchyError: Value '99' of attribute 'age' is not in its hierarchy (row 3).
        """
        try:
            self.leaf_index(categories)
        except HierarchyError:
            if codes is None and locate is None:
                raise
        else:
            return
        cats = np.asarray(categories, dtype=object)
        known = np.asarray(cats == None, dtype=bool)  # noqa: E711 - elementwise
        known[~known] = self._rows_of(cats[~known]) != -2
        found: tuple[int, Any] | None = None
        if codes is not None:
            rows = np.flatnonzero(~known[codes])
            found = (int(rows[0]), cats[codes[rows[0]]])
        elif locate is not None:
            found = locate(cats[~known].tolist())
        if found is None:
            self.leaf_index(categories)  # (raises, naming no row)
            return  # pragma: no cover
        others = int(np.count_nonzero(~known)) - 1
        raise HierarchyError(
            f"Value {str(found[1])!r}{f' and {others} more' if others else ''} of attribute "
            f"{self.attribute or '?'!r} is not in its hierarchy"
            f"{' file ' + repr(self.source) if self.source else ''} (row {found[0] + 1})."
        )

    def _rows_of(self, values: npt.NDArray[np.object_]) -> npt.NDArray[np.int64]:
        """Rows of non-null ``values`` in the hierarchy, ``-2`` for a value it lacks."""
        n = self._leaf_row.size
        if values.size == n:
            # the usual cases: a column's labels are the values in file or in sorted order
            if bool(np.all(values == self._file_leaves())):
                return np.arange(n, dtype=np.int64)
            if bool(np.all(values == self._labels[0])):
                return self._leaf_row.copy()
        if self._leaf_lookup is None:
            self._leaf_lookup = dict(zip(self._labels[0].tolist(), self._leaf_row.tolist()))
        lookup = self._leaf_lookup
        out = np.fromiter(map(lookup.get, values, repeat(-2)), dtype=np.int64, count=values.size)
        miss = np.flatnonzero(out == -2)
        if miss.size:  # a label that is not a str (an int, say) is looked up as text
            out[miss] = [lookup.get(str(v), -2) for v in values[miss]]
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
        mappings, labels = self._mappings(categories, slice(level, level + 1))
        return mappings[0], labels[0]

    def leaf_generalization(
        self, level: int
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.object_]]:
        """:meth:`generalization` of the hierarchy's own values (:attr:`leaves`, in file
        order) to ``level``, read off the hierarchy without looking any value up.

        Returns
        -------
        mapping : ndarray of int32
            The code at ``level`` of each value (read-only).
        labels : ndarray of object
            The labels at ``level``.
        """
        level = self._check_level(level)
        codes = self._codes[level]
        return codes, self._labels[level]

    def generalizations(
        self, categories: npt.ArrayLike
    ) -> tuple[npt.NDArray[np.int32], list[npt.NDArray[np.object_]]]:
        """:meth:`generalization` to every level at once (one gather for all levels).

        Parameters
        ----------
        categories : array_like
            The distinct labels of a column (a null as ``None``).

        Returns
        -------
        mappings : ndarray of int32, shape (height + 1, n_categories)
            ``mappings[level]`` is ``generalization(categories, level)[0]``.
        labels : list of ndarray of object
            ``labels[level]`` is ``generalization(categories, level)[1]``.
        """
        return self._mappings(categories, slice(None))

    def label_ids(
        self, categories: npt.ArrayLike
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.object_]]:
        """One id per distinct label of every level, as :meth:`generalizations` gives them
        for ``categories``: equal labels on different levels share an id (a null is a label
        of its own), so grouping by ids groups by released labels.

        Parameters
        ----------
        categories : array_like
            As for :meth:`generalizations`.

        Returns
        -------
        ids : ndarray of int64, shape (height + 1, n_categories)
            The id of each category's label at each level (read-only; the last few
            ``categories`` arrays asked for are remembered).
        labels : ndarray of object
            The label of each id: level 0's labels in their order, then the other levels'
            labels that level 0 lacks, in the order first met.
        """
        for seen, hit in self._label_ids:
            if seen is categories:
                return hit
        mappings, labels = self._mappings(categories, slice(None))
        flat, values = _first_seen(labels)
        offsets = np.cumsum([0, *(lab.size for lab in labels[:-1])])
        ids = flat[mappings + offsets[:, None]]
        ids.setflags(write=False)
        if isinstance(categories, np.ndarray):
            self._label_ids = [(categories, (ids, values)), *self._label_ids[:3]]
        return ids, values

    def remember_subset(
        self, categories: npt.NDArray[np.object_], of: npt.NDArray[np.object_], at: npt.ArrayLike
    ) -> None:
        """Remember that ``categories`` are ``of[at]``, so that :meth:`leaf_index` and
        :meth:`label_ids` of ``categories`` are read off those of ``of`` without looking a
        value up (a column's labels after rows were dropped: :meth:`EncodedColumn.take`).

        Parameters
        ----------
        categories : ndarray of object
            The labels to remember.
        of : ndarray of object
            The labels they are taken from (looked up as usual, if not already).
        at : array_like of int
            The position in ``of`` of each of ``categories``.

        Raises
        ------
        HierarchyError
            If ``categories`` are not ``of[at]``.
        """
        at = np.asarray(at, dtype=np.int64).reshape(-1)
        fits = at.size == 0 or (int(at.min()) >= 0 and int(at.max()) < len(of))
        if not (fits and np.array_equal(np.asarray(of, dtype=object)[at], categories)):
            raise HierarchyError(
                f"The labels given for attribute {self.attribute or '?'!r} are not the "
                "labels they are said to be taken from, at the positions given."
            )
        leaf = self.leaf_index(of)[at]
        ids, values = self.label_ids(of)
        ids = ids[:, at]
        for a in (leaf, ids):
            a.setflags(write=False)
        self._leaf_indexes = [(categories, leaf), *self._leaf_indexes[:3]]
        self._label_ids = [(categories, (ids, values)), *self._label_ids[:3]]

    def _mappings(
        self, categories: npt.ArrayLike, levels: slice
    ) -> tuple[npt.NDArray[np.int32], list[npt.NDArray[np.object_]]]:
        """:meth:`generalization` to the ``levels`` (a slice of levels): one gather; a null
        category gets a code of its own after each level's labels."""
        leaf = self.leaf_index(categories)
        has = leaf >= 0
        codes = self._codes[levels]
        labels = list(self._labels[levels])
        if bool(has.all()):
            return codes[:, leaf].astype(np.int32, copy=False), labels
        mappings = np.empty((codes.shape[0], leaf.size), dtype=np.int32)
        mappings[:, has] = codes[:, leaf[has]]
        null = np.array([None], dtype=object)
        for i, level in enumerate(range(self.height + 1)[levels]):
            lab = labels[i]
            if level == self.height and level > 0 and lab.size == 1:
                mappings[i, ~has] = 0  # at the root a null is generalized like any value
                continue
            mappings[i, ~has] = lab.size
            labels[i] = np.append(lab, null)
        return mappings, labels

    def generalize(self, values: npt.ArrayLike, level: int) -> npt.NDArray[np.object_]:
        """Return the labels of ``values`` at ``level`` (a null stays None).

        Examples
        --------
        >>> h = Hierarchy([["4350", "435*", "*"], ["4360", "436*", "*"]])
        >>> h.generalize(["4360", None], 1).tolist()
        ['436*', None]
        """
        vals = np.asarray(values, dtype=object)
        codes, cats = factorize(vals)
        mapping, labels = self.generalization(cats, level)
        return np.asarray(labels[mapping[codes]], dtype=object)

    def __repr__(self) -> str:
        """The attribute, the size and the first value's labels up the levels.

        Examples
        --------
        >>> Hierarchy([["4350", "435*", "*"], ["4360", "436*", "*"]], attribute="zip")
        Hierarchy(attribute='zip', values=2, height=2, e.g. '4350' -> '435*' -> '*')
        """
        first = [lab[c[0]] for lab, c in zip(self._labels, self._codes)]
        steps = [shown(v, 40) for v in first]
        if len(steps) > 6:  # a deep hierarchy: its first and last levels
            steps = [*steps[:3], "...", *steps[-2:]]
        return (
            f"Hierarchy(attribute={self.attribute!r}, values={self._codes.shape[1]:,}, "
            f"height={self.height}, e.g. {' -> '.join(steps)})"
        )

    def __eq__(self, other: object) -> bool:
        # labels are sorted and distinct per level: equal tables have equal codes and labels
        return (
            isinstance(other, Hierarchy)
            and self._codes.shape == other._codes.shape
            and all(np.array_equal(a, b) for a, b in zip(self._labels, other._labels))
            and np.array_equal(self._codes, other._codes)
        )

    __hash__ = None  # type: ignore[assignment]


def _sorted_level(
    codes: npt.NDArray[np.integer], labels: npt.NDArray[np.object_]
) -> tuple[npt.NDArray[np.object_], npt.NDArray[np.int32], npt.NDArray[np.bool_] | None]:
    """Sort one level's labels and remap its codes.

    Returns the distinct labels as str in code-point order, the codes into them, and, when some
    label is empty (``""`` or None), a mask of the empty ones among ``labels`` (the other two
    results are then not meaningful). Labels already sorted and distinct cost one comparison
    of neighbours; others are converted to str and sorted with :func:`numpy.unique`.
    """
    try:
        # strictly increasing labels whose first is ``> ""`` are distinct non-empty str (a
        # label not a str makes a comparison with a str raise TypeError)
        if labels.size and labels[0] > "" and bool(np.all(labels[:-1] < labels[1:])):
            return labels, codes.astype(np.int32, copy=False), None
    except TypeError:
        pass
    empty = np.asarray((labels == "") | (labels == None), dtype=bool)  # noqa: E711 - elementwise
    if empty.any():
        return labels, codes.astype(np.int32, copy=False), empty
    uniq, inv = np.unique(as_text(labels), return_inverse=True)
    return uniq.astype(object), inv.reshape(-1).astype(np.int32)[codes], None


def _first_seen(
    levels: Sequence[npt.NDArray[np.object_]],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.object_]]:
    """Codes of the labels of a hierarchy's levels, concatenated, into their distinct
    values in the order first seen (a label may repeat on another level).

    The first level's labels, the most numerous, are distinct and come first: only the
    other levels' labels are hashed, and the first level's are looked up among them."""
    first = levels[0]
    tail = np.concatenate(levels[1:]) if len(levels) > 1 else np.zeros(0, dtype=object)
    later: dict[object, int] = {}  # each label of the other levels: its rank, first seen
    tail_ids = np.fromiter((later.setdefault(x, len(later)) for x in tail), np.int64, len(tail))
    listed = first.tolist()
    if later.keys().isdisjoint(listed):  # as usual: a third of the lookups' time
        hit = np.full(len(first), -1, dtype=np.int64)
    else:
        hit = np.fromiter(map(later.get, listed, repeat(-1)), np.int64, len(first))
    at_first = np.flatnonzero(hit >= 0)
    later_id = np.full(len(later), -1, dtype=np.int64)
    later_id[hit[at_first]] = at_first  # a label of the first level keeps its code there
    new = later_id < 0
    later_id[new] = len(first) + np.arange(int(new.sum()))
    later_values = np.empty(len(later), dtype=object)
    later_values[:] = list(later)
    ids = np.concatenate([np.arange(len(first), dtype=np.int64), later_id[tail_ids]])
    return ids, np.concatenate([np.asarray(first, dtype=object), later_values[new]])
