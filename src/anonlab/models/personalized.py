"""Personalized privacy: each record's probability of privacy leakage against its own limit.

Song, Huang, Wang, Kang & Liu (2015), section 4. The sensitive attribute ``A_S`` has a
generalization tree; a release may generalize each record's sensitive value to an ancestor.
For a record ``t`` (original value ``t[A_S]``, released as ``t*``) and a record ``t*_i`` of
its QI group (the ``b`` records with the same released quasi-identifiers):

* Definition 6, the correlate degree: ``DCorrelate(t*, t*_i) = 1 / Nleaf(t*_i[A_S])`` when
  ``t[A_S]`` is a leaf of the subtree rooted at ``t*_i[A_S]`` (``Nleaf`` counts that subtree's
  leaves), which includes ``t*_i[A_S] = t[A_S]`` (a leaf: 1); otherwise 0. An attacker who
  links ``t`` to ``t*_i`` guesses ``t``'s value among the leaves under ``t*_i[A_S]``.
* Definition 7, the leakage collection ``LC(t*)``: the records of ``t``'s group with
  ``DCorrelate(t*, t*_i) > 0``.
* Definition 8, the privacy leakage probability:
  ``Pleak(t*) = sum_{i=1..b} DCorrelate(t*, t*_i) / b``.

Reading of the garbled Definition 8 (the extracted text is "b* * * Correlate i=1 ( ) ( , ) /
i Pleak t D t t b"): the sum runs over all ``b`` records of the group, ``t*`` itself included,
and is divided by ``b`` once. The paper's Table 3 confirms it: the first three records
(three different diseases) have Pleak 1/3 and the fourth and fifth (both pneumonia) 1.

How a record's own generalized value counts (Theorem 1): ``t*`` is one of the ``t*_i``, so
its own term is ``1 / Nleaf(t*[A_S])``, like any other record's. Hence
``Pleak(t*) >= 1 / (b * Nleaf(t*[A_S]))``: the paper's bound ``1/b`` while ``t``'s own value
stays a leaf, lower once it is generalized (``1 / (b * N)`` at the root of a tree with ``N``
leaves). Records with the same original value in a group have the same Pleak, whichever of
them is generalized.

References
----------
.. [1] J. Song, L. Huang, G. Wang, Y. Kang and H. Liu, "The k-anonymization method
   satisfying personalized privacy preservation", Chemical Engineering Transactions 46
   (2015), section 4, Definitions 6-8, Theorems 1-2.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from anonlab._typing import FloatArray, IntArray
from anonlab._validation import Param
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.stats import ClassStats
from anonlab.data.table import EncodedColumn
from anonlab.exceptions import HierarchyError, InputError, ParameterError
from anonlab.models._common import ATTRIBUTE, counts_of
from anonlab.models.per_record import RecordFractions, RecordModel

__all__ = [
    "PersonalizedLeakage",
    "SensitiveTree",
    "correlate_degree",
    "leakage_collection",
    "leakage_fractions",
    "leakage_lower_bound",
    "privacy_leakage",
]


@dataclass(frozen=True)
class SensitiveTree:
    """The generalization tree of a sensitive attribute, indexed for one column's values.

    Attributes
    ----------
    hierarchy : Hierarchy
    ancestors : ndarray of int64, shape (height + 1, values)
        The label code of each value's ancestor at each level (``ancestors[0]`` the value).
    leaves : list of ndarray of float
        Per level, the leaves (hierarchy rows) under each label: ``Nleaf``.
    labels : list of ndarray of object
        Per level, the labels the codes of ``ancestors`` index.
    """

    hierarchy: Hierarchy
    ancestors: IntArray
    leaves: list[FloatArray]
    labels: list[npt.NDArray[np.object_]]

    @classmethod
    def of(cls, hierarchy: Hierarchy, column: EncodedColumn) -> SensitiveTree:
        """Index ``hierarchy`` for the values of ``column``.

        A missing value (a null) is a value of its own, as in every hierarchy: a leaf under
        the root (it joins the root at a one-label top).

        Raises
        ------
        HierarchyError
            A value of the column is not in the tree: the message names the value, the row,
            the attribute and the file.
        """
        attribute = hierarchy.attribute or column.name
        where = f" file {hierarchy.source!r}" if hierarchy.source else ""
        cats = column.categories
        known = set(hierarchy.leaves.tolist())
        absent = [i for i, v in enumerate(cats.tolist()) if v is not None and v not in known]
        if absent:
            row = int(np.flatnonzero(np.isin(column.codes, absent))[0])
            raise HierarchyError(
                f"Value {cats[absent[0]]!r} of sensitive attribute {attribute!r} (row {row + 1}) "
                f"is not in its tree{where}."
            )
        mappings, labels = hierarchy.generalizations(cats)
        leaves = []
        for level in range(hierarchy.height + 1):
            under, _ = hierarchy.generalization(hierarchy.leaves, level)
            count = np.bincount(under, minlength=labels[level].size).astype(np.float64)
            leaves.append(np.maximum(count, 1.0))  # a missing value: a leaf of its own
        return cls(hierarchy, mappings.astype(np.int64), leaves, labels)

    @property
    def height(self) -> int:
        """The top level of the tree."""
        return int(self.ancestors.shape[0] - 1)

    @property
    def n_leaves(self) -> int:
        """``N``: the leaves of the whole tree."""
        return int(self.hierarchy.leaves.size)

    def node_leaves(self, codes: npt.ArrayLike, levels: npt.ArrayLike) -> FloatArray:
        """``Nleaf`` of each value ``codes[i]`` generalized to ``levels[i]``."""
        c = np.asarray(codes, dtype=np.int64)
        lv = np.asarray(levels, dtype=np.int64)
        out = np.empty(c.size, dtype=np.float64)
        for level in np.unique(lv).tolist():
            at = lv == level
            out[at] = self.leaves[level][self.ancestors[level, c[at]]]
        return out

    def covers(
        self, own: npt.ArrayLike, other: npt.ArrayLike, levels: npt.ArrayLike
    ) -> npt.NDArray[np.bool_]:
        """Whether value ``own[i]`` lies under ``other[i]`` generalized to ``levels[i]``."""
        o = np.asarray(own, dtype=np.int64)
        t = np.asarray(other, dtype=np.int64)
        lv = np.asarray(levels, dtype=np.int64)
        out: npt.NDArray[np.bool_] = self.ancestors[lv, o] == self.ancestors[lv, t]
        return out


def correlate_degree(
    tree: SensitiveTree, own: npt.ArrayLike, other: npt.ArrayLike, levels: npt.ArrayLike
) -> FloatArray:
    """``DCorrelate(t*, t*_i)`` (Definition 6), elementwise.

    Parameters
    ----------
    tree : SensitiveTree
    own : array_like of int
        ``t[A_S]``: the original value (code) of the record whose leakage is measured.
    other : array_like of int
        The original value of ``t*_i``.
    levels : array_like of int
        The level ``t*_i``'s value is released at.

    Returns
    -------
    ndarray of float
        ``1 / Nleaf(t*_i[A_S])`` where ``t[A_S]`` lies under it, else 0.
    """
    under = tree.covers(own, other, levels)
    return np.where(under, 1.0 / tree.node_leaves(other, levels), 0.0)


def leakage_collection(
    tree: SensitiveTree,
    group: npt.ArrayLike,
    codes: npt.ArrayLike,
    levels: npt.ArrayLike,
    row: int,
) -> IntArray:
    """``LC(t*)`` of the record at ``row`` (Definition 7): the rows of its group whose
    released value covers its original value (``DCorrelate > 0``), itself included."""
    g = np.asarray(group, dtype=np.int64)
    c = np.asarray(codes, dtype=np.int64)
    lv = np.asarray(levels, dtype=np.int64)
    mates = np.flatnonzero(g == g[row])
    own = np.full(mates.size, c[row], dtype=np.int64)
    out: IntArray = mates[tree.covers(own, c[mates], lv[mates])].astype(np.int64)
    return out


def leakage_fractions(
    tree: SensitiveTree, group: npt.ArrayLike, codes: npt.ArrayLike, levels: npt.ArrayLike
) -> RecordFractions:
    """``Pleak(t*)`` of every record (Definition 8) as an exact fraction, vectorised.

    Parameters
    ----------
    tree : SensitiveTree
    group : array_like of int
        The QI group (released class) of each row.
    codes : array_like of int
        The original sensitive value of each row (codes into the tree's column).
    levels : array_like of int
        The level each row's sensitive value is released at.

    Returns
    -------
    RecordFractions
        Per row and level ``l``: the records of its group released at ``l`` on the ancestor
        of its own value at ``l`` (``counts``), each adding ``1 / Nleaf`` of that node
        (``leaves``); over the group's size.

    Notes
    -----
    Per level, the records released at it are counted per (group, node); every record then
    reads, at each level, the count of (its group, the ancestor of its own value):
    ``O(rows * levels * log rows)``.

    Examples
    --------
    Paper 004's Table 3: three diseases in the first group, two pneumonias in the second.

    >>> import numpy as np
    >>> from anonlab import EncodedTable, Hierarchy
    >>> tree = Hierarchy([["flu", "*"], ["hiv", "*"], ["cancer", "*"], ["pneumonia", "*"]])
    >>> col = EncodedTable.from_columns(
    ...     {"d": ["flu", "hiv", "cancer", "pneumonia", "pneumonia"]})["d"]
    >>> fractions = leakage_fractions(
    ...     SensitiveTree.of(tree, col), [0, 0, 0, 1, 1], col.codes, np.zeros(5, int))
    >>> fractions.values().tolist() == [1 / 3, 1 / 3, 1 / 3, 1.0, 1.0]
    True
    """
    g = np.asarray(group, dtype=np.int64)
    c = np.asarray(codes, dtype=np.int64)
    lv = np.asarray(levels, dtype=np.int64)
    height = tree.height
    counts = np.zeros((g.size, height + 1), dtype=np.int64)
    # per value of the column, the leaves under the node of its branch at each level
    leaves = np.stack(
        [np.rint(tree.leaves[level][tree.ancestors[level]]) for level in range(height + 1)],
        axis=1,
    ).astype(np.int64)
    if g.size == 0:
        return RecordFractions(counts, leaves, c, np.zeros(0, dtype=np.int64))
    for level in range(height + 1):
        node = tree.ancestors[level, c]
        at = lv == level
        if not at.any():
            continue
        width = int(tree.ancestors[level].max()) + 1
        keys, mass = np.unique(g[at] * width + node[at], return_counts=True)
        wanted = g * width + node
        pos = np.minimum(np.searchsorted(keys, wanted), keys.size - 1)
        counts[:, level] = np.where(keys[pos] == wanted, mass[pos], 0)
    return RecordFractions(counts, leaves, c, np.bincount(g)[g].astype(np.int64))


def privacy_leakage(
    tree: SensitiveTree, group: npt.ArrayLike, codes: npt.ArrayLike, levels: npt.ArrayLike
) -> FloatArray:
    """``Pleak(t*)`` of every record (Definition 8): :func:`leakage_fractions` correctly
    rounded.

    Returns
    -------
    ndarray of float
        Per row, the sum over its group of the correlate degrees, over the group's size.
    """
    return leakage_fractions(tree, group, codes, levels).values()


def leakage_lower_bound(
    tree: SensitiveTree, group: npt.ArrayLike, codes: npt.ArrayLike, levels: npt.ArrayLike
) -> FloatArray:
    """Theorem 1 as anonlab counts a record's own value: ``1 / (b * Nleaf(t*[A_S]))`` per
    record (``1/b`` while its own value is a leaf)."""
    g = np.asarray(group, dtype=np.int64)
    sizes = np.bincount(g).astype(np.float64)
    out: FloatArray = 1.0 / (sizes[g] * tree.node_leaves(codes, levels))
    return out


class PersonalizedLeakage(RecordModel):
    """Personalized privacy: every record's Pleak is at most its own limit.

    A record passes iff ``Pleak(t*) <= limit(t)`` (Definitions 6-8, see the module
    docstring), compared exactly: Pleak as a fraction, the limit as the decimal it is
    written as (:func:`~anonlab.models.per_record.decimal_fraction`); a class passes iff
    every record in it does. The limits are a column of the
    table or one default for every record (the job's ``personalized:`` key); the release
    layer and ``anonlab check`` judge each record against its own limit.

    Parameters
    ----------
    attribute : str
        The sensitive attribute.
    hierarchy : Hierarchy
        Its generalization tree (an ARX-format file in a job). Required.

    Raises
    ------
    ParameterError
        No tree, or not a Hierarchy.

    Notes
    -----
    *Searches over class statistics* (``optimal``, ``incognito``, ``privacyfrost2``) see only
    per-class value counts, with sensitive values not generalized: a record's Pleak is then
    the share of its value in its class. :meth:`class_ok` accepts a class when its most
    frequent value's share is at most the lowest limit in the class (from the counts of the
    limit column, or the default): never a class the per-record judgement rejects, exact
    when all limits are equal.

    *Monotonicity.* With one limit for every record, generalization merges classes and a
    merged class's largest share is at most its parts' (monotonic). With limits per record
    it is not: a merged class's lowest limit can fall below what its parts needed. Neither
    is monotonic under suppression.

    References
    ----------
    .. [1] J. Song, L. Huang, G. Wang, Y. Kang and H. Liu, "The k-anonymization method
       satisfying personalized privacy preservation", Chemical Engineering Transactions 46
       (2015), section 4.

    Examples
    --------
    >>> import numpy as np
    >>> from anonlab import EncodedTable, Hierarchy
    >>> tree = Hierarchy([["flu", "*"], ["cold", "*"], ["hiv", "*"]])
    >>> d = EncodedTable.from_columns({"disease": ["flu", "cold", "hiv", "hiv"]})["disease"]
    >>> model = PersonalizedLeakage("disease", tree)
    >>> model.record_values(np.array([0, 0, 1, 1]), d, d).tolist()
    [0.5, 0.5, 1.0, 1.0]
    """

    name = "personalized_leakage"
    _parameter_constraints: ClassVar[dict[str, Param]] = {"attribute": ATTRIBUTE}
    record_parameter = "leakage_limit"
    measure = "pleak"

    def __init__(self, attribute: str, hierarchy: Hierarchy | None = None) -> None:
        owner = type(self).__name__
        self.attribute: str = self._checked("attribute", attribute)
        if hierarchy is None:
            raise ParameterError(
                f"Model 'personalized_leakage' needs the generalization tree of sensitive "
                f"attribute {self.attribute!r}: give 'hierarchy' (an ARX-format file). A "
                "record's leakage counts the leaves under each released value (Definition 6)."
            )
        if not isinstance(hierarchy, Hierarchy):
            raise ParameterError(
                f"The 'hierarchy' parameter of {owner} must be a Hierarchy of attribute "
                f"{self.attribute!r}. Got {type(hierarchy).__name__} instead."
            )
        self.hierarchy = hierarchy.named(self.attribute)
        self.limit_column: str | None = None
        self.default_limit: float | None = None
        self.monotonic_generalization = True
        self.monotonic_suppression = False
        self._trees: dict[int, tuple[npt.NDArray[np.object_], SensitiveTree]] = {}

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        """The sensitive attribute, and the limit column when the limits are a column."""
        if self.limit_column is None:
            return (self.attribute,)
        return (self.attribute, self.limit_column)

    def bind(self, *, column: str | None, default: float | None) -> Self:
        """This model reading its limits from ``column`` (``default`` for a missing cell) or
        ``default`` for every record (see :class:`RecordModel`)."""
        out = copy.copy(self)
        out.limit_column = column
        out.default_limit = None if default is None else float(default)
        out.monotonic_generalization = column is None
        out._trees = {}
        return out

    def tree(self, column: EncodedColumn) -> SensitiveTree:
        """The tree indexed for ``column``'s values (kept for the same categories array).

        Raises
        ------
        HierarchyError
            A value not in the tree (the row is named).
        """
        hit = self._trees.get(id(column.categories))
        if hit is not None and hit[0] is column.categories:
            return hit[1]
        tree = SensitiveTree.of(self.hierarchy, column)
        self._trees = {id(column.categories): (column.categories, tree)}
        return tree

    def validate(self, column: EncodedColumn) -> None:
        """Every value of the sensitive column is a leaf of the tree (:meth:`tree` raises,
        naming the row)."""
        self.tree(column)

    def released_levels(self, original: EncodedColumn, released: EncodedColumn) -> IntArray:
        """The level of each released value on its record's own branch of the tree.

        A label that reads the same at two levels of the branch is taken at the lower one
        (fewer leaves: the higher leakage).

        Raises
        ------
        InputError
            A released value that is not an ancestor of its record's original value.
        """
        tree = self.tree(original)
        ids = {v: i for i, v in enumerate(released.categories.tolist())}
        rel = released.codes.astype(np.int64)
        own = original.codes.astype(np.int64)
        levels = np.full(own.size, -1, dtype=np.int64)
        for level in range(tree.height, -1, -1):
            text = np.array([ids.get(v, -1) for v in tree.labels[level].tolist()], dtype=np.int64)
            levels[text[tree.ancestors[level, own]] == rel] = level
        bad = np.flatnonzero(levels < 0)
        if bad.size:
            r = int(bad[0])
            raise InputError(
                f"Released value {released.categories[rel[r]]!r} of {self.attribute!r} in row "
                f"{r + 1} is not a generalization of the row's value "
                f"{original.categories[own[r]]!r} in its tree."
            )
        return levels

    def record_fractions(
        self,
        row_class: npt.NDArray[np.integer],
        original: EncodedColumn,
        released: EncodedColumn,
    ) -> RecordFractions:
        """Pleak of each record of the release (Definition 8), exactly."""
        levels = self.released_levels(original, released)
        return leakage_fractions(self.tree(original), row_class, original.codes, levels)

    def _limits_of(self, values: npt.NDArray[np.object_]) -> FloatArray:
        default = np.inf if self.default_limit is None else self.default_limit
        return np.array(
            [default if v is None else float(v) for v in values.tolist()], dtype=np.float64
        )

    def class_ok(self, stats: ClassStats) -> npt.NDArray[np.bool_]:
        """Per class: its most frequent value's share is within the lowest limit in it (see
        the class docstring).

        Raises
        ------
        ParameterError
            If the model has no limits (it was not bound to a job's ``personalized:``).
        """
        if self.limit_column is None and self.default_limit is None:
            raise ParameterError(
                "Model 'personalized_leakage' has no leakage limits: give the job "
                "'personalized: {limit_column: ...}' or '{default_limit: ...}'."
            )
        counts = counts_of(stats, self.attribute, self.name)
        sizes = np.maximum(np.asarray(stats.sizes, dtype=np.int64), 1)
        top = np.zeros(stats.n_classes, dtype=np.int64)
        np.maximum.at(top, counts.rows, np.rint(counts.data).astype(np.int64))
        if self.limit_column is None:
            assert self.default_limit is not None
            lowest = np.full(stats.n_classes, self.default_limit)
        else:
            limits = counts_of(stats, self.limit_column, self.name)
            lowest = np.full(stats.n_classes, np.inf)
            np.minimum.at(lowest, limits.rows, self._limits_of(limits.values)[limits.indices])
        return RecordFractions.shares(top, sizes).within(lowest)

    def params(self) -> dict[str, Any]:
        """``{"attribute": ..., "hierarchy": ...}`` (and the limits' source when bound)."""
        out: dict[str, Any] = {"attribute": self.attribute, "hierarchy": self.hierarchy}
        if self.limit_column is not None:
            out["limit_column"] = self.limit_column
        if self.default_limit is not None:
            out["default_limit"] = self.default_limit
        return out
