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

:class:`CoverModel` holds the numbers an algorithm needs to weigh a cover (per released record,
a state that is the elementwise maximum of its covered records' contributions, and the cost of
a state); :func:`parse_cells` reads released labels back into the sets of values they cover,
independently of the model, for the verification and for ``anonlab check --release``.

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
from anonlab.data.labels import factorize, natural_order
from anonlab.data.table import EncodedColumn, EncodedTable
from anonlab.exceptions import InputError, ParameterError
from anonlab.release.problem import Problem
from anonlab.release.recoding import CellGroups, Recoding

__all__ = [
    "KINDS",
    "CellCover",
    "CoverModel",
    "ParsedColumn",
    "Site",
    "cell_loss",
    "parse_cells",
    "resolve_generalization",
]


#: The generalizations a cell-cover release can use (the job's ``generalization``).
KINDS = ("concealing", "hierarchy", "interval", "set")
#: The largest domain a ``set`` generalization may have (a state holds one flag per value).
MAX_SET_DOMAIN = 256
HIDDEN = "*"


def resolve_generalization(
    generalization: str | Mapping[str, str], attributes: Sequence[str], owner: str
) -> dict[str, str]:
    """The kind of each attribute: one kind for all, or a mapping (unnamed ones conceal).

    Raises
    ------
    ParameterError
        An unknown kind or an attribute that is not a quasi-identifier.
    """
    if isinstance(generalization, str):
        spec = {a: generalization for a in attributes}
    else:
        unknown = [a for a in generalization if a not in attributes]
        if unknown:
            raise ParameterError(
                f"The 'generalization' parameter of {owner} names {unknown[0]!r}, which is not "
                f"a quasi-identifier ({', '.join(attributes)})."
            )
        spec = {a: str(generalization.get(a, "concealing")) for a in attributes}
    for a, kind in spec.items():
        if kind not in KINDS:
            raise ParameterError(
                f"The 'generalization' parameter of {owner} must be one of "
                f"{', '.join(map(repr, KINDS))} (or a mapping of attribute to one). Got "
                f"{kind!r} for {a!r} instead."
            )
    return spec


# --------------------------------------------------------------------------- sites
@dataclass(frozen=True)
class Site:
    """One quasi-identifier (or one character of a pseudo-quasi-identifier) as costs see it.

    A released record's state in a site is the elementwise maximum of the contributions of the
    records it covers (:meth:`contribution` of the anchor, its own value, and a covered
    value); :meth:`cost` is the weighted NCP of a state. Only numbers: sites travel to worker
    processes.

    Attributes
    ----------
    kind : str
        ``concealing``, ``hierarchy``, ``interval`` or ``set``.
    width : int
        Features of the state (1; 2 for an interval: the ranks above and below the anchor;
        the domain size for a set: a flag per value).
    weight : float
        The attribute's weight (largest weight 1).
    scale : float
        ``1 / (|A*| - 1)`` (0 for a one-value domain).
    levels : ndarray of int32, optional
        ``hierarchy``: the node of each value code at each level (levels x codes).
    ncp : ndarray of float64, optional
        ``hierarchy``: the NCP of each (level, value code); the last level is ``*``.
    rank : ndarray of int64, optional
        ``interval`` and ``set``: the rank (leaf index) of each value code.
    """

    kind: str
    width: int
    weight: float
    scale: float
    levels: npt.NDArray[np.int32] | None = None
    ncp: FloatArray | None = None
    rank: IntArray | None = None

    def contribution(self, anchor: npt.ArrayLike, value: npt.ArrayLike) -> npt.NDArray[np.int32]:
        """The state a released record with value code ``anchor`` needs to cover ``value``.

        Parameters
        ----------
        anchor, value : array_like of int
            Value codes, pairwise.

        Returns
        -------
        ndarray of int32, shape (pairs, width)
        """
        a = np.asarray(anchor, dtype=np.int64)
        x = np.asarray(value, dtype=np.int64)
        if self.kind == "concealing":
            hidden: npt.NDArray[np.int32] = (a != x).astype(np.int32)[:, None]
            return hidden
        if self.kind == "hierarchy":
            assert self.levels is not None
            lv = np.zeros(a.size, dtype=np.int32)
            for row in self.levels:  # a few levels: nodes differ up to the common ancestor
                lv += row[a] != row[x]
            return lv[:, None]
        assert self.rank is not None
        ra, rx = self.rank[a], self.rank[x]
        if self.kind == "interval":
            return np.stack([np.maximum(rx - ra, 0), np.maximum(ra - rx, 0)], axis=1).astype(
                np.int32
            )
        flags: npt.NDArray[np.int32] = np.zeros((a.size, self.width), dtype=np.int32)
        flags[np.arange(a.size), rx] = rx != ra
        return flags

    def cost(self, state: npt.NDArray[np.integer], anchor: npt.ArrayLike) -> FloatArray:
        """The weighted NCP of released cells with these states and anchors."""
        s = np.asarray(state)
        if self.kind == "concealing":
            out = s[:, 0].astype(np.float64)
        elif self.kind == "hierarchy":
            assert self.ncp is not None
            out = self.ncp[s[:, 0], np.asarray(anchor, dtype=np.int64)]
        else:
            out = s.sum(axis=1, dtype=np.int64).astype(np.float64) * self.scale
        result: FloatArray = out * self.weight
        return result


@dataclass(frozen=True)
class _Render:
    """What turns a site's states back into labels (kept out of :class:`Site`)."""

    attribute: str
    categories: npt.NDArray[np.object_]  # the column's labels, a code's label
    top: npt.NDArray[np.object_] | None = None  # hierarchy: labels per level, then '*'
    leaves: npt.NDArray[np.object_] | None = None  # interval/set: the leaf of each rank


def _leaf_ranks(hierarchy: Hierarchy, col: EncodedColumn, kind: str) -> tuple[IntArray, Any]:
    """Ranks of the column's codes among the hierarchy's values (natural order)."""
    if col.null_code is not None:
        row = int(np.flatnonzero(col.codes == col.null_code)[0])
        raise ParameterError(
            f"The {kind!r} generalization of {col.name!r} needs a value in every row; row {row + 1} "
            "has none. Use 'concealing' or 'hierarchy' for an attribute with missing values."
        )
    leaves = hierarchy.leaves
    order = natural_order(leaves)
    if kind == "interval":
        try:
            nums = np.array([float(v) for v in leaves], dtype=np.float64)
        except ValueError:
            bad = next(v for v in leaves if not _is_number(v))
            where = np.flatnonzero(col.categories == bad)
            at = f" (row {int(np.flatnonzero(col.codes == where[0])[0]) + 1})" if where.size else ""
            raise ParameterError(
                f"The 'interval' generalization of {col.name!r} needs numbers; value {bad!r}"
                f"{at} is not one."
            ) from None
        order = np.lexsort((np.arange(leaves.size), nums))
    rank_of_leaf = np.empty(leaves.size, dtype=np.int64)
    rank_of_leaf[order] = np.arange(leaves.size)
    # the hierarchy's leaves in file order are its rows; leaf_index maps labels to rows
    file_rows = hierarchy.leaf_index(leaves)
    rank_of_row = np.empty(leaves.size, dtype=np.int64)
    rank_of_row[file_rows] = rank_of_leaf
    ranks = rank_of_row[hierarchy.leaf_index(col.categories)]
    return ranks, leaves[order]


def _is_number(value: object) -> bool:
    try:
        float(str(value))
    except ValueError:
        return False
    return True


def _hierarchy_site(
    hierarchy: Hierarchy, col: EncodedColumn, weight: float
) -> tuple[Site, npt.NDArray[np.object_]]:
    """A hierarchy site: nodes of every code per level, their NCP, the labels per level."""
    mappings, labels = hierarchy.generalizations(col.categories)
    height = hierarchy.height
    leaf_map, leaf_labels = hierarchy.generalizations(hierarchy.leaves)
    domain = int(hierarchy.leaves.size)
    scale = 1.0 / (domain - 1) if domain > 1 else 0.0
    ncp = np.ones((height + 2, col.cardinality), dtype=np.float64)
    ncp[0] = 0.0
    null = col.null_code
    for level in range(1, height + 1):
        per_label = {}
        counts = np.bincount(leaf_map[level], minlength=leaf_labels[level].size)
        for lab, c in zip(leaf_labels[level].tolist(), counts.tolist()):
            per_label[lab] = c
        lab_of_code = labels[level][mappings[level]]
        cnt = np.array([per_label.get(v, 1) for v in lab_of_code.tolist()], dtype=np.float64)
        ncp[level] = (cnt - 1.0) * scale if domain > 1 else 0.0
        if null is not None and lab_of_code[null] is None:
            ncp[level, null] = 1.0  # a null mixed with values is concealed
    per_level = np.empty((height + 2, col.cardinality), dtype=object)
    per_level[0] = col.categories
    for level in range(1, height + 1):
        per_level[level] = labels[level][mappings[level]]
        if null is not None and per_level[level, null] is None:
            per_level[level, null] = HIDDEN
    per_level[height + 1] = HIDDEN
    site = Site("hierarchy", 1, weight, scale, levels=np.ascontiguousarray(mappings), ncp=ncp)
    return site, per_level


# --------------------------------------------------------------------------- model
@dataclass
class CoverModel:
    """The sites of a problem's quasi-identifiers under a chosen generalization.

    Parameters
    ----------
    attributes : tuple of str
        The quasi-identifiers, in the problem's order.
    kinds : dict
        The generalization of each attribute.
    pseudo : tuple of str
        Attributes released as one pseudo-quasi-identifier per character.
    sites : list of Site
        One per attribute, one per character of a pseudo-quasi-identifier.
    site_attribute : list of int
        The attribute (index) of each site.
    codes : ndarray of int32, shape (rows, sites)
        The value code of each row in each site.
    """

    attributes: tuple[str, ...]
    kinds: dict[str, str]
    pseudo: tuple[str, ...]
    sites: list[Site]
    site_attribute: list[int]
    codes: npt.NDArray[np.int32]
    _render: list[_Render] = field(default_factory=list, repr=False)

    @classmethod
    def build(
        cls,
        problem: Problem,
        generalization: str | Mapping[str, str] = "concealing",
        pseudo_qids: Sequence[str] = (),
        *,
        owner: str = "the release",
    ) -> CoverModel:
        """The model of ``problem`` (every row of its table).

        Raises
        ------
        ParameterError
            An unknown kind, an interval over values that are not numbers, a set over more
            than :data:`MAX_SET_DOMAIN` values, a pseudo-quasi-identifier that is not a
            quasi-identifier or whose values differ in length (naming the row).
        """
        qis = problem.quasi_identifiers
        kinds = resolve_generalization(generalization, qis, owner)
        pseudo = tuple(dict.fromkeys(str(p) for p in pseudo_qids))
        for p in pseudo:
            if p not in qis:
                raise ParameterError(
                    f"The 'pseudo_qids' parameter of {owner} names {p!r}, which is not a "
                    f"quasi-identifier ({', '.join(qis)})."
                )
            if kinds[p] != "concealing":
                raise ParameterError(
                    f"Pseudo-quasi-identifier {p!r} is concealed character by character; its "
                    f"generalization must be 'concealing', not {kinds[p]!r}."
                )
        top = max(problem.weights.values(), default=1.0) if problem.weights else 1.0
        sites: list[Site] = []
        owners: list[int] = []
        codes: list[npt.NDArray[np.int32]] = []
        render: list[_Render] = []
        for j, q in enumerate(qis):
            col = problem.table[q]
            w = float(problem.weights.get(q, 1.0)) / top if top > 0 else 1.0
            hierarchy = problem.hierarchies[q]
            if q in pseudo:
                for chars, cats in _characters(col):
                    sites.append(Site("concealing", 1, w, 1.0))
                    owners.append(j)
                    codes.append(chars)
                    render.append(_Render(q, cats))
                continue
            kind = kinds[q]
            domain = int(hierarchy.leaves.size)
            scale = 1.0 / (domain - 1) if domain > 1 else 0.0
            if kind == "concealing":
                sites.append(Site("concealing", 1, w, 1.0))
                render.append(_Render(q, col.categories))
            elif kind == "hierarchy":
                site, per_level = _hierarchy_site(hierarchy, col, w)
                sites.append(site)
                render.append(_Render(q, col.categories, top=per_level))
            else:
                ranks, leaves = _leaf_ranks(hierarchy, col, kind)
                if kind == "set" and domain > MAX_SET_DOMAIN:
                    raise ParameterError(
                        f"The 'set' generalization of {q!r} holds one flag per value; its "
                        f"{domain:,} values are more than {MAX_SET_DOMAIN}. Use 'hierarchy' or "
                        "'interval'."
                    )
                width = 2 if kind == "interval" else domain
                sites.append(Site(kind, width, w, scale, rank=ranks))
                render.append(_Render(q, col.categories, leaves=leaves))
            owners.append(j)
            codes.append(col.codes)
        matrix = np.ascontiguousarray(np.stack(codes, axis=1).astype(np.int32))
        return cls(qis, kinds, pseudo, sites, owners, matrix, render)

    # ------------------------------------------------------------------ numbers
    @property
    def n_rows(self) -> int:
        """Rows of the table."""
        return int(self.codes.shape[0])

    @property
    def width(self) -> int:
        """Features of a released record's state."""
        return sum(s.width for s in self.sites)

    @property
    def n_sites(self) -> int:
        """Quasi-identifiers as the loss counts them (a pseudo-quasi-identifier per character)."""
        return len(self.sites)

    @property
    def total_weight(self) -> float:
        """The sum of the sites' weights (the GCP's denominator per record)."""
        return float(sum(s.weight for s in self.sites))

    def costs(self) -> CoverCosts:
        """The numeric part (picklable: for worker processes)."""
        return CoverCosts(tuple(self.sites), self.codes)

    def labels(self, state: npt.NDArray[np.integer]) -> dict[str, EncodedColumn]:
        """The released column of each quasi-identifier from the states of every row."""
        out: dict[str, EncodedColumn] = {}
        pos = 0
        per_attr: dict[int, list[npt.NDArray[np.object_]]] = {}
        for s, (site, render, owner) in enumerate(
            zip(self.sites, self._render, self.site_attribute)
        ):
            st = state[:, pos : pos + site.width]
            pos += site.width
            per_attr.setdefault(owner, []).append(_site_labels(site, render, st, self.codes[:, s]))
        for j, q in enumerate(self.attributes):
            parts = per_attr[j]
            if q in self.pseudo:
                joined = parts[0].astype(object)
                for p in parts[1:]:
                    joined = joined + p
                labels = joined
            else:
                labels = parts[0]
            codes, cats = factorize(labels)
            out[q] = EncodedColumn(q, codes, cats)
        return out


def _characters(
    col: EncodedColumn,
) -> list[tuple[npt.NDArray[np.int32], npt.NDArray[np.object_]]]:
    """Per character position of a pseudo-quasi-identifier: the codes and their characters."""
    cats = col.categories
    if col.null_code is not None:
        row = int(np.flatnonzero(col.codes == col.null_code)[0])
        raise ParameterError(
            f"Pseudo-quasi-identifier {col.name!r} is concealed character by character; row "
            f"{row + 1} has no value."
        )
    lengths = np.array([len(str(v)) for v in cats.tolist()], dtype=np.int64)
    if lengths.size and int(lengths.min()) != int(lengths.max()):
        short = int(np.argmin(lengths))
        row = int(np.flatnonzero(col.codes == short)[0])
        raise ParameterError(
            f"Pseudo-quasi-identifier {col.name!r} is concealed character by character, so its "
            f"values must have one length; row {row + 1} has {cats[short]!r} ({lengths[short]} "
            f"characters), others have {int(lengths.max())}."
        )
    width = int(lengths[0]) if lengths.size else 0
    out = []
    for p in range(width):
        chars = np.array([str(v)[p] for v in cats.tolist()], dtype=object)
        c_codes, c_cats = factorize(chars)
        out.append((c_codes[col.codes].astype(np.int32), c_cats))
    return out


def _site_labels(
    site: Site, render: _Render, state: npt.NDArray[np.integer], codes: npt.NDArray[np.int32]
) -> npt.NDArray[np.object_]:
    """The label of each row's cell in one site."""
    own = render.categories[codes]
    if site.kind == "concealing":
        return np.where(state[:, 0] > 0, HIDDEN, own).astype(object)
    if site.kind == "hierarchy":
        assert render.top is not None
        labels: npt.NDArray[np.object_] = render.top[state[:, 0], codes]
        return labels
    assert render.leaves is not None and site.rank is not None
    leaves = render.leaves
    domain = leaves.size
    rank = site.rank[codes]
    out = own.astype(object).copy()
    if site.kind == "interval":
        lo = rank - state[:, 1]
        hi = rank + state[:, 0]
        wide = hi > lo
        full = wide & (lo == 0) & (hi == domain - 1)
        part = np.flatnonzero(wide & ~full)
        out[full] = HIDDEN
        if part.size:
            pairs, inv = np.unique(
                np.stack([lo[part], hi[part]], axis=1), axis=0, return_inverse=True
            )
            text = np.array([f"[{leaves[a]},{leaves[b]}]" for a, b in pairs.tolist()], dtype=object)
            out[part] = text[inv.reshape(-1)]
        return out
    flags = state > 0
    count = flags.sum(axis=1) + 1
    full = count >= domain
    out[full & (count > 1)] = HIDDEN
    part = np.flatnonzero((count > 1) & ~full)
    if part.size:
        members = flags[part].copy()
        members[np.arange(part.size), rank[part]] = True
        sets, inv = np.unique(members, axis=0, return_inverse=True)
        text = np.array(
            ["{" + ";".join(str(v) for v in leaves[row]) + "}" for row in sets], dtype=object
        )
        out[part] = text[inv.reshape(-1)]
    return out


@dataclass(frozen=True)
class CoverCosts:
    """The sites and value codes of (a block of) rows: what an algorithm weighs covers with.

    Attributes
    ----------
    sites : tuple of Site
    codes : ndarray of int32, shape (rows, sites)
    """

    sites: tuple[Site, ...]
    codes: npt.NDArray[np.int32]

    @property
    def width(self) -> int:
        """Features of a state."""
        return sum(s.width for s in self.sites)

    def take(self, rows: npt.NDArray[np.integer]) -> CoverCosts:
        """The same sites for some rows (a block)."""
        return CoverCosts(self.sites, np.ascontiguousarray(self.codes[rows]))

    def contributions(
        self, anchors: npt.NDArray[np.integer], values: npt.NDArray[np.integer]
    ) -> npt.NDArray[np.int32]:
        """The state released record ``anchors[e]`` needs to cover row ``values[e]``.

        Returns
        -------
        ndarray of int32, shape (pairs, width)
        """
        parts = [
            site.contribution(self.codes[anchors, s], self.codes[values, s])
            for s, site in enumerate(self.sites)
        ]
        out: npt.NDArray[np.int32] = (
            np.concatenate(parts, axis=1)
            if parts
            else np.zeros((np.asarray(anchors).size, 0), dtype=np.int32)
        )
        return out

    def cost(self, state: npt.NDArray[np.integer], anchors: npt.NDArray[np.integer]) -> FloatArray:
        """The weighted NCP of released records ``anchors`` in ``state`` (summed over sites)."""
        total = np.zeros(np.asarray(anchors).size, dtype=np.float64)
        pos = 0
        for s, site in enumerate(self.sites):
            total += site.cost(state[:, pos : pos + site.width], self.codes[anchors, s])
            pos += site.width
        return total

    def states(self, covers: npt.NDArray[np.integer]) -> npt.NDArray[np.int32]:
        """The state of each released record: the maximum over its covered rows.

        Parameters
        ----------
        covers : ndarray of int, shape (rows, k)
            The rows each released record covers (row ``j`` is released as record ``j``).
        """
        n, k = covers.shape
        anchors = np.repeat(np.arange(n, dtype=np.int64), k)
        contrib = self.contributions(anchors, covers.reshape(-1))
        state: npt.NDArray[np.int32] = contrib.reshape(n, k, -1).max(axis=1, initial=0)
        return state


# --------------------------------------------------------------------------- recoding
@dataclass
class CellCover(Recoding):
    """A non-homogeneous release: released record ``j`` covers the rows ``covers[j]``.

    ``covers`` is a k-regular witness: every row appears in exactly ``k`` covers, so the
    anonymity graph holds ``k`` edge-disjoint perfect matchings (Definition 1); the
    verification re-derives each of its edges from the released labels and falls back to a
    max-flow on the whole anonymity graph when it is not.

    Parameters
    ----------
    covers : ndarray of int64, shape (rows, k)
        The rows (positions in the table) each released record covers; ``covers[j]`` usually
        holds ``j``.
    generalization : str or Mapping[str, str]
        The kind of every quasi-identifier (see the module docstring), or one per attribute.
    pseudo_qids : tuple of str
        Attributes released one character at a time.
    """

    forms_classes: ClassVar[bool] = False
    verifier: ClassVar[str] = "graph"

    covers: IntArray
    generalization: str | Mapping[str, str] = "concealing"
    pseudo_qids: tuple[str, ...] = ()
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

    def model(self, problem: Problem) -> CoverModel:
        """The :class:`CoverModel` of the problem under this recoding's generalization."""
        return self._model_and_states(problem)[0]

    def states(self, problem: Problem) -> npt.NDArray[np.int32]:
        """The state of every released record (see :class:`CoverModel`)."""
        return self._model_and_states(problem)[1]

    def _model_and_states(self, problem: Problem) -> tuple[CoverModel, npt.NDArray[np.int32]]:
        return self._memo("model", problem, lambda: self._build_model(problem))

    def _build_model(self, problem: Problem) -> tuple[CoverModel, npt.NDArray[np.int32]]:
        model = CoverModel.build(problem, self.generalization, self.pseudo_qids)
        if self.covers.shape[0] != problem.n_rows:
            raise ParameterError(
                f"The cell cover has {self.covers.shape[0]} released records; the table "
                f"has {problem.n_rows} rows."
            )
        if self.covers.size and (
            int(self.covers.min()) < 0 or int(self.covers.max()) >= problem.n_rows
        ):
            raise ParameterError("The cell cover names a row outside the table.")
        return model, model.costs().states(self.covers)

    def row_levels(
        self, problem: Problem, rows: npt.NDArray[np.integer] | None = None
    ) -> npt.NDArray[np.int64]:
        """1 where a released cell is generalized (covers more than its own value), else 0."""
        model = self.model(problem)
        state = self.states(problem)
        out = np.zeros((problem.n_rows, len(problem.quasi_identifiers)), dtype=np.int64)
        pos = 0
        for site, owner in zip(model.sites, model.site_attribute):
            wide = state[:, pos : pos + site.width].max(axis=1) > 0
            out[:, owner] |= wide
            pos += site.width
        return out if rows is None else out[rows]

    def cells(self, problem: Problem) -> tuple[CellGroups, ...]:
        """Not defined: a released cell is a cover of several records' values, not a
        hierarchy label at a level (its loss is read from its labels: :func:`cell_loss`)."""
        raise ParameterError(
            "A cell cover's released cells are covers of several records, not labels at "
            "hierarchy levels; its loss is measured on its labels (NCP or GCP)."
        )

    def apply(self, problem: Problem) -> EncodedTable:
        """Every row, each quasi-identifier as the cell of its released record."""
        model = self.model(problem)
        return problem.table.with_columns(model.labels(self.states(problem)))

    def cost(self, problem: Problem) -> float:
        """The weighted NCP(T) of the release as the model counts it (the verification
        measures it again from the labels)."""
        model = self.model(problem)
        n = problem.n_rows
        return float(model.costs().cost(self.states(problem), np.arange(n)).sum())

    def summary(self, problem: Problem) -> dict[str, Any]:
        """``k``, the generalization of each attribute and the generalized cells of each."""
        model = self.model(problem)
        wide = self.row_levels(problem)
        return {
            "k": self.k,
            "generalization": dict(model.kinds),
            "pseudo_qids": list(model.pseudo),
            "generalized_cells": {
                q: int(wide[:, j].sum()) for j, q in enumerate(problem.quasi_identifiers)
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
