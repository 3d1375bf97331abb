"""Cell covers: non-homogeneous generalization, where each released record covers k records.

In a non-homogeneous release (Wong, Mamoulis & Cheung, SIGMOD 2010; Murakami & Uno, IJIS 2017)
record ``j`` is released as a generalization ``r'_j`` of its own values that also covers the
values of a few other records; no two released records need to be equal, so the release
forms no equivalence classes. :class:`CellCover` says which records each released record
covers (``covers[j]``, the edges ``F`` of the paper's anonymity graph); its released cell in
each quasi-identifier is the least generalization of the covered values of the kind the job
chose:

==============  ==============================================  ===========================
generalization  a released cell                                 cardinality ``|A(q, r)|``
==============  ==============================================  ===========================
concealing      the value, or ``*`` (Definition 2 of the paper)  1, or the whole domain
hierarchy       the lowest hierarchy label above every value     the leaves under the label
                (section 3.2.4), ``*`` when there is none
interval        ``[lo,hi]``, the smallest and largest value      the domain values in it
                (numeric attributes)
set             ``{a;b}``, the values themselves                 the values in the set
==============  ==============================================  ===========================

A cell that covers the whole domain is released as ``*`` whatever the kind. An attribute may
also be released as *pseudo-quasi-identifiers* (section 1.1: each digit of a zip code is
concealed on its own): every character position is a quasi-identifier of its own and the cell
is the value with its hidden characters replaced by ``*`` (``941*2``).

The information loss is the paper's NCP and GCP (equations (1)-(3)): ``NCP(q, r) = (|A(q, r)|
- 1) / (|A*| - 1)`` per cell, with ``|A*|`` the number of values of the attribute's hierarchy;
with ``concealing`` the GCP is the share of hidden cells (Definition 2). A pseudo-quasi-
identifier counts as one quasi-identifier per character.

This module holds what the release layer needs to apply and verify a cell cover: the
recoding carries its released labels (made by the algorithm's cost model,
:mod:`anonlab.algorithms.nonhomogeneous.cover_model`), and :func:`parse_cells` reads released
labels back into the sets of values they cover, independently of any model, for the
verification, its loss (:func:`cell_loss`) and ``anonlab check --release``.

References
----------
.. [1] K. Murakami and T. Uno, "Optimization algorithm for k-anonymization of datasets with
   low information loss", Int. J. Inf. Secur. 17 (2018), sections 1.1, 2.3 and 3.2.4.
.. [2] W. K. Wong, N. Mamoulis and D. W. Cheung, "Non-homogeneous generalization in privacy
   preserving data publishing", SIGMOD 2010.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._typing import FloatArray, IntArray
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.table import EncodedColumn, EncodedTable
from anonlab.exceptions import InputError, ParameterError
from anonlab.release.problem import Problem
from anonlab.release.recoding import Recoding

__all__ = [
    "CellCover",
    "ParsedColumn",
    "cell_loss",
    "parse_cells",
]

#: A cell that covers the whole domain (or a hidden character).
HIDDEN = "*"


def _is_number(value: object) -> bool:
    try:
        float(str(value))
    except ValueError:
        return False
    return True


# --------------------------------------------------------------------------- recoding
@dataclass
class CellCover(Recoding):
    """A non-homogeneous release: released record ``j`` covers the rows ``covers[j]``.

    ``covers`` is a k-regular witness: every row appears in exactly ``k`` covers, so the
    anonymity graph holds ``k`` edge-disjoint perfect matchings (Definition 1); the
    verification re-derives each of its edges from the released labels and falls back to a
    max-flow on the whole anonymity graph when it is not. The recoding carries the released
    labels its algorithm made (the least generalization of each record's covered values,
    :meth:`anonlab.algorithms.nonhomogeneous.cover_model.CoverModel.recoding`); its cells are
    covers of several values, not hierarchy labels at levels, so it is a :class:`Recoding`
    but not a :class:`~anonlab.release.recoding.LevelRecoding`, and its loss is measured on
    its labels (NCP or GCP, :func:`cell_loss`).

    Parameters
    ----------
    covers : ndarray of int64, shape (rows, k)
        The rows (positions in the table) each released record covers; ``covers[j]`` usually
        holds ``j``.
    released : Mapping[str, EncodedColumn]
        The released column of each quasi-identifier (row ``j``: released record ``j``).
    generalization : Mapping[str, str]
        The kind of every quasi-identifier (see the module docstring).
    pseudo_qids : tuple of str
        Attributes released one character at a time.
    generalized_cells : Mapping[str, int]
        Per quasi-identifier, the released cells that cover more than their own value.

    Examples
    --------
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.data.table import EncodedTable
    >>> from anonlab.metrics import build_metric
    >>> from anonlab.models import build_model
    >>> from anonlab.release import Problem
    >>> t = EncodedTable.from_columns({"sex": ["F", "M", "F", "M"]})
    >>> p = Problem(t, ("sex",), {"sex": flat_hierarchy(["F", "M"])},
    ...             (build_model("k_anonymity", {"k": 2}),), build_metric("loss"))
    >>> released = {"sex": EncodedTable.from_columns({"sex": ["*"] * 4})["sex"]}
    >>> c = CellCover([[0, 1], [1, 0], [2, 3], [3, 2]], released, {"sex": "concealing"},
    ...               generalized_cells={"sex": 4})
    >>> c.k, c.verifier, c.apply(p)["sex"].labels().tolist()
    (2, 'graph', ['*', '*', '*', '*'])
    >>> c.summary(p)["generalized_cells"]
    {'sex': 4}
    """

    forms_classes: ClassVar[bool] = False
    verifier: ClassVar[str] = "graph"

    covers: IntArray
    released: Mapping[str, EncodedColumn]
    generalization: Mapping[str, str]
    pseudo_qids: tuple[str, ...] = ()
    generalized_cells: Mapping[str, int] = field(default_factory=dict)
    rows: IntArray | None = None

    def __post_init__(self) -> None:
        self.covers = np.ascontiguousarray(np.asarray(self.covers, dtype=np.int64))
        if self.covers.ndim != 2:
            raise ParameterError("A cell cover needs a (rows, k) array of covered rows.")
        self.pseudo_qids = tuple(self.pseudo_qids)

    @property
    def k(self) -> int:
        """Records each released record covers."""
        return int(self.covers.shape[1])

    def apply(self, problem: Problem) -> EncodedTable:
        """Every row, each quasi-identifier as the cell of its released record.

        Raises
        ------
        ParameterError
            A cover of another number of rows than the table's, naming a row outside it,
            or without the released column of a quasi-identifier.
        """
        if self.covers.shape[0] != problem.n_rows:
            raise ParameterError(
                f"The cell cover has {self.covers.shape[0]} released records; the table "
                f"has {problem.n_rows} rows."
            )
        if self.covers.size and (
            int(self.covers.min()) < 0 or int(self.covers.max()) >= problem.n_rows
        ):
            raise ParameterError("The cell cover names a row outside the table.")
        missing = [q for q in problem.quasi_identifiers if q not in self.released]
        if missing:
            raise ParameterError(f"The cell cover releases no cell of {missing[0]!r}.")
        return problem.table.with_columns({q: self.released[q] for q in problem.quasi_identifiers})

    def summary(self, problem: Problem) -> dict[str, Any]:
        """``k``, the generalization of each attribute and the generalized cells of each."""
        return {
            "k": self.k,
            "generalization": dict(self.generalization),
            "pseudo_qids": list(self.pseudo_qids),
            "generalized_cells": {
                q: int(self.generalized_cells.get(q, 0)) for q in problem.quasi_identifiers
            },
        }


# --------------------------------------------------------------------------- parsing
_INTERVAL = re.compile(r"^\[\s*([^,\]]+?)\s*,\s*([^,\]]+?)\s*\]$")


@dataclass(frozen=True)
class ParsedColumn:
    """The released labels of one quasi-identifier, read as sets of original values.

    Attributes
    ----------
    attribute : str
    exact : ndarray of int64
        Per released label, the original value code it is (-1: it covers several).
    cover : ndarray of bool, shape (labels, values)
        Per released label that covers several values, which original value codes it covers
        (rows of labels with ``exact >= 0`` are not used).
    leaves : ndarray of int64
        Per released label, the number of hierarchy values it covers (its ``|A(q, r)|``).
    domain : int
        ``|A*|``, the number of values of the attribute's hierarchy.
    hidden_sites : ndarray of int64
        Per released label, the hidden characters of a masked pattern (pseudo-quasi-
        identifiers), 0 otherwise.
    sites : int
        Characters of a pseudo-quasi-identifier (1 for any other attribute).
    """

    attribute: str
    exact: IntArray
    cover: npt.NDArray[np.bool_]
    leaves: IntArray
    domain: int
    hidden_sites: IntArray
    sites: int = 1


def parse_cells(
    original: EncodedColumn,
    released: EncodedColumn,
    hierarchy: Hierarchy,
    *,
    pseudo: bool = False,
) -> ParsedColumn:
    """Read the released labels of a quasi-identifier as the original values they cover.

    A label is, in this order: a null (covers a null); an original value (itself); ``*``
    (everything); a label of the attribute's hierarchy (the values under it; its root also
    covers a null); ``[lo,hi]`` (the numbers between, ends included); ``{a;b}`` (those
    values); a masked pattern as long as the values with ``*`` for hidden characters.

    Parameters
    ----------
    original, released : EncodedColumn
        The column before and after generalization (any row order).
    hierarchy : Hierarchy
        The attribute's hierarchy (its values are the domain ``A*``).
    pseudo : bool
        Count a masked pattern's hidden characters as hidden sites (a pseudo-quasi-
        identifier) rather than as one generalized cell.

    Raises
    ------
    InputError
        A label that is none of these, naming it and the attribute.
    """
    values = original.categories
    n_val = values.size
    leaves_all = hierarchy.leaves
    domain = int(leaves_all.size)
    text_of = {v: i for i, v in enumerate(values.tolist()) if v is not None}
    null_code = original.null_code
    labels = released.categories
    exact = np.full(labels.size, -1, dtype=np.int64)
    cover = np.zeros((labels.size, n_val), dtype=bool)
    leaves = np.ones(labels.size, dtype=np.int64)
    hidden = np.zeros(labels.size, dtype=np.int64)
    lengths = np.array([len(str(v)) for v in values.tolist() if v is not None], dtype=np.int64)
    width = int(lengths[0]) if lengths.size and int(lengths.min()) == int(lengths.max()) else -1
    texts = [
        str(lab)
        for lab in labels.tolist()
        if lab is not None and str(lab) not in text_of and str(lab) != HIDDEN
    ]
    node_cover = _hierarchy_nodes(hierarchy, original, texts) if texts else {}
    numbers: FloatArray | None = None
    for i, lab in enumerate(labels.tolist()):
        if lab is None:
            exact[i] = -2 if null_code is None else null_code
            continue
        text = str(lab)
        if text in text_of:
            exact[i] = text_of[text]
            continue
        if text == HIDDEN:
            cover[i] = True
            leaves[i] = domain
            hidden[i] = width if pseudo and width > 0 else 0
            continue
        hit = node_cover.get(text)
        if hit is not None:
            cover[i], leaves[i] = hit
            continue
        m = _INTERVAL.match(text)
        if m is not None and _is_number(m.group(1)) and _is_number(m.group(2)):
            if numbers is None:
                numbers = np.array(
                    [float(v) if v is not None and _is_number(v) else np.nan for v in values],
                    dtype=np.float64,
                )
            lo, hi = float(m.group(1)), float(m.group(2))
            cover[i] = (numbers >= lo) & (numbers <= hi)
            leaf_nums = np.array(
                [float(v) if _is_number(v) else np.nan for v in leaves_all], dtype=np.float64
            )
            leaves[i] = int(((leaf_nums >= lo) & (leaf_nums <= hi)).sum())
            continue
        if text.startswith("{") and text.endswith("}") and len(text) > 2:
            members = text[1:-1].split(";")
            unknown = [v for v in members if v not in text_of and v not in set(leaves_all)]
            if unknown:
                raise InputError(
                    f"Row {_first_row(released, i)}, column {original.name!r}: the released "
                    f"value {text!r} is a set holding {unknown[0]!r}, which is not a value of "
                    "the attribute."
                )
            for v in members:
                if v in text_of:
                    cover[i, text_of[v]] = True
            leaves[i] = len(set(members))
            continue
        if HIDDEN in text and len(text) == width:
            keep = [p for p, ch in enumerate(text) if ch != HIDDEN]
            cover[i] = [
                v is not None and all(str(v)[p] == text[p] for p in keep) for v in values.tolist()
            ]
            if pseudo:
                hidden[i] = width - len(keep)
                leaves[i] = 1
            else:
                leaves[i] = int(
                    sum(all(str(v)[p] == text[p] for p in keep) for v in leaves_all.tolist())
                )
            continue
        raise InputError(
            f"Row {_first_row(released, i)}, column {original.name!r}: the released value "
            f"{text!r} is not a generalization of the attribute: expected one of its values, "
            "'*', a label of its hierarchy, an interval such as [20,30], a set such as {a;b} or a "
            "masked value such as '941*2'."
        )
    if pseudo:
        leaves[:] = 1
    return ParsedColumn(
        original.name, exact, cover, leaves, domain, hidden, width if pseudo and width > 0 else 1
    )


def _first_row(column: EncodedColumn, code: int) -> int:
    """The first row whose released label has ``code``, counted from 1 (for messages)."""
    return int(np.flatnonzero(column.codes == code)[0]) + 1


def _hierarchy_nodes(
    hierarchy: Hierarchy, original: EncodedColumn, texts: Sequence[str]
) -> dict[str, tuple[npt.NDArray[np.bool_], int]]:
    """Each of ``texts`` that is a label above the values: the original values it covers
    and the number of leaves under it (a text that labels nodes of several levels covers
    the union of theirs; the single root also covers a null).

    One pass per level over the values and the leaves (no loop over the labels).
    """
    want = {t: i for i, t in enumerate(texts)}
    mappings, labels = hierarchy.generalizations(original.categories)
    leaf_map, leaf_labels = hierarchy.generalizations(hierarchy.leaves)
    n_val, n_leaves = original.categories.size, hierarchy.leaves.size
    covers = np.zeros((len(texts), n_val), dtype=bool)
    found = np.zeros(len(texts), dtype=bool)
    under: list[IntArray] = []  # (label, leaf) pairs as label * n_leaves + leaf
    top = hierarchy.height

    def wanted(level_labels: npt.NDArray[np.object_]) -> IntArray:
        return np.array(
            [-1 if v is None else want.get(str(v), -1) for v in level_labels.tolist()],
            dtype=np.int64,
        )

    for level in range(1, top + 1):
        leaf_w = wanted(leaf_labels[level])[leaf_map[level]]
        hit = np.flatnonzero(leaf_w >= 0)
        found[leaf_w[hit]] = True  # a label above the values: some leaf is under it
        under.append(leaf_w[hit] * n_leaves + hit)
        code_w = wanted(labels[level])[mappings[level]]
        ok = np.flatnonzero(code_w >= 0)
        ok = ok[found[code_w[ok]]]
        covers[code_w[ok], ok] = True
        if level == top and original.null_code is not None and leaf_labels[level].size == 1:
            root = leaf_w[hit[:1]]
            covers[root, original.null_code] = True  # a null joins the single root
    pairs = np.unique(np.concatenate(under)) if under else np.zeros(0, np.int64)
    count = np.bincount(pairs // max(n_leaves, 1), minlength=len(texts))
    return {t: (covers[i], int(count[i])) for t, i in want.items() if found[i]}


def cell_loss(
    parsed: Sequence[ParsedColumn],
    released_codes: Sequence[npt.NDArray[np.integer]],
    weights: Sequence[float],
) -> tuple[float, float, float]:
    """NCP(T), the sites counted and the hidden-site count of a release (equations (1)-(3)).

    Parameters
    ----------
    parsed : sequence of ParsedColumn
        Per quasi-identifier.
    released_codes : sequence of ndarray
        Per quasi-identifier, the released label code of each row.
    weights : sequence of float
        Per quasi-identifier (largest 1).

    Returns
    -------
    ncp : float
        ``sum_q w_q sum_r NCP(q, r)``; a pseudo-quasi-identifier adds one per hidden
        character.
    sites : float
        ``sum_q w_q`` times the sites of ``q`` (the GCP is ``ncp / (rows * sites)``).
    hidden : float
        Cells released as ``*`` or as hidden characters (unweighted).
    """
    ncp = 0.0
    sites = 0.0
    hidden = 0.0
    for col, codes, w in zip(parsed, released_codes, weights):
        c = np.asarray(codes, dtype=np.int64)
        if col.sites > 1:
            per = col.hidden_sites.astype(np.float64)
            hid = per
        else:
            per = (
                (col.leaves.astype(np.float64) - 1.0) / (col.domain - 1)
                if col.domain > 1
                else np.zeros(col.leaves.size)
            )
            hid = (col.leaves >= col.domain).astype(np.float64) * (col.exact < 0)
        counts = np.bincount(c, minlength=col.leaves.size).astype(np.float64)
        ncp += w * float(np.dot(counts, per))
        hidden += float(np.dot(counts, hid))
        sites += w * col.sites
    return ncp, sites, hidden
