"""The non-homogeneous cost model: what ``wong_nh`` and ``murakami_uno`` weigh a cover with.

A released record ``j`` of a cell cover (:class:`~anonlab.release.cellcover.CellCover`) is the
least generalization of the records it covers, of the kind the job chose per quasi-identifier
(``concealing``, ``hierarchy``, ``interval``, ``set``; the release's format is described in
:mod:`anonlab.release.cellcover`). Each quasi-identifier, or each character of a pseudo-
quasi-identifier, is a :class:`Site`: a released record's state in a site is the elementwise
maximum of its covered records' contributions, and the cost of a state is the paper's NCP
(equations (1)-(3)): ``NCP(q, r) = (|A(q, r)| - 1) / (|A*| - 1)`` per cell, with ``|A*|`` the
number of values of the attribute's hierarchy, weighted; with ``concealing`` the GCP is the
share of hidden cells (Definition 2). A pseudo-quasi-identifier counts as one
quasi-identifier per character.

:class:`CoverModel` holds the sites of a problem, turns states back into released labels and
makes the :class:`~anonlab.release.cellcover.CellCover` of a cover (:meth:`CoverModel.recoding`):
the recoding carries its released labels, so that the release layer applies and verifies it
without this model (the verification measures the loss again from the labels).

References
----------
.. [1] K. Murakami and T. Uno, "Optimization algorithm for k-anonymization of datasets with
   low information loss", Int. J. Inf. Secur. 17 (2018), sections 1.1, 2.3 and 3.2.4.
.. [2] W. K. Wong, N. Mamoulis and D. W. Cheung, "Non-homogeneous generalization in privacy
   preserving data publishing", SIGMOD 2010.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._typing import FloatArray, IntArray
from anonlab.algorithms.nonhomogeneous._kernels import CostTables, kernel
from anonlab.data.grouping import unique_rows
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.labels import factorize, natural_order
from anonlab.data.table import EncodedColumn
from anonlab.exceptions import ParameterError
from anonlab.release.cellcover import HIDDEN, CellCover, _is_number
from anonlab.release.problem import Problem

__all__ = [
    "KINDS",
    "CoverCosts",
    "CoverModel",
    "Site",
    "cell_cover",
    "cover_cost",
    "resolve_generalization",
]


KINDS = ("concealing", "hierarchy", "interval", "set")
#: The largest domain a ``set`` generalization may have (a state holds one flag per value).
MAX_SET_DOMAIN = 256


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

    A released record's state in a site is the elementwise maximum of the states it needs to
    cover each of its records (:meth:`CoverCosts.contributions`: of the anchor, its own
    value, and a covered value); :meth:`CoverCosts.cost` is the weighted NCP of a state.
    Only numbers: sites travel to worker processes.

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
        """The released column of each quasi-identifier from the states of every row.

        The labels are rendered once per distinct (codes, states) of an attribute's sites.
        """
        out: dict[str, EncodedColumn] = {}
        pos = 0
        keys: dict[int, list[npt.NDArray[np.integer]]] = {}
        spans: list[tuple[int, int]] = []
        for s, owner in enumerate(self.site_attribute):
            spans.append((pos, pos + self.sites[s].width))
            keys.setdefault(owner, []).extend(
                [self.codes[:, s], *state[:, spans[-1][0] : spans[-1][1]].T]
            )
            pos = spans[-1][1]
        for j, q in enumerate(self.attributes):
            # one representative row per distinct (codes, states) of the attribute's sites
            _, group, _ = unique_rows(np.column_stack(keys[j]))
            first = np.empty(int(group.max()) + 1 if group.size else 0, dtype=np.int64)
            first[group[::-1]] = np.arange(group.size - 1, -1, -1, dtype=np.int64)
            parts = [
                _site_labels(
                    self.sites[s], self._render[s], state[first, a:b], self.codes[first, s]
                )
                for s, (a, b) in enumerate(spans)
                if self.site_attribute[s] == j
            ]
            if q in self.pseudo:
                joined = parts[0].astype(object)
                for p in parts[1:]:
                    joined = joined + p
                labels = joined
            else:
                labels = parts[0]
            codes, cats = factorize(labels)
            out[q] = EncodedColumn(q, codes[group], cats)
        return out

    def generalized(self, state: npt.NDArray[np.integer]) -> npt.NDArray[np.bool_]:
        """Per row and quasi-identifier, whether its released cell covers more than its own
        value (a pseudo-quasi-identifier: more than its own characters)."""
        out = np.zeros((state.shape[0], len(self.attributes)), dtype=bool)
        pos = 0
        for site, owner in zip(self.sites, self.site_attribute):
            out[:, owner] |= state[:, pos : pos + site.width].max(axis=1) > 0
            pos += site.width
        return out

    def recoding(
        self, covers: npt.ArrayLike, state: npt.NDArray[np.int32] | None = None
    ) -> CellCover:
        """The :class:`~anonlab.release.cellcover.CellCover` of ``covers``: every released
        record's labels and the generalized cells of each quasi-identifier.

        Parameters
        ----------
        covers : array_like of int, shape (rows, k)
            The rows each released record covers (row ``j`` is released as record ``j``).
        state : ndarray of int32, shape (rows, width), optional
            ``self.costs().states(covers)`` when the caller has it already.

        Raises
        ------
        ParameterError
            A cover of another number of rows, or naming a row outside the table.
        """
        cover = np.ascontiguousarray(np.asarray(covers, dtype=np.int64))
        if cover.ndim != 2:
            raise ParameterError("A cell cover needs a (rows, k) array of covered rows.")
        if cover.shape[0] != self.n_rows:
            raise ParameterError(
                f"The cell cover has {cover.shape[0]} released records; the table "
                f"has {self.n_rows} rows."
            )
        if cover.size and (int(cover.min()) < 0 or int(cover.max()) >= self.n_rows):
            raise ParameterError("The cell cover names a row outside the table.")
        if state is None:
            state = self.costs().states(cover)
        wide = self.generalized(state)
        return CellCover(
            cover,
            self.labels(state),
            dict(self.kinds),
            self.pseudo,
            {q: int(wide[:, j].sum()) for j, q in enumerate(self.attributes)},
        )


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
        """The state released record ``anchors[e]`` needs to cover row ``values[e]``, site by
        site: ``concealing``, 1 when the value codes differ; ``hierarchy``, the levels at
        which their nodes differ (the level of their common ancestor); ``interval``, how far
        the covered value's rank lies above and below the anchor's; ``set``, a flag at the
        covered value's rank when it is not the anchor's (a compiled loop, :mod:`._kernels`).

        Returns
        -------
        ndarray of int32, shape (pairs, width)

        Examples
        --------
        >>> import numpy as np
        >>> site = Site("concealing", 1, 1.0, 1.0)
        >>> costs = CoverCosts((site, site), np.array([[0, 1], [0, 2]], dtype=np.int32))
        >>> costs.contributions(np.array([0, 0]), np.array([0, 1])).tolist()
        [[0, 0], [0, 1]]
        """
        anchors = np.ascontiguousarray(anchors, dtype=np.int64)
        out = np.empty((anchors.size, self.width), dtype=np.int32)
        kernel("contributions")(
            self._codes32,
            anchors,
            np.ascontiguousarray(values, dtype=np.int64),
            self.tables,
            out,
        )
        return out

    @functools.cached_property
    def _codes32(self) -> npt.NDArray[np.int32]:
        """:attr:`codes` as the kernels read them."""
        return np.ascontiguousarray(self.codes, dtype=np.int32)

    @functools.cached_property
    def tables(self) -> CostTables:
        """The sites as the compiled kernels read them."""
        kind = {"concealing": 0, "hierarchy": 1, "interval": 2, "set": 3}
        widths = np.array([site.width for site in self.sites], dtype=np.int64)
        ncp_start, ncp = _packed(
            [np.zeros(0) if site.ncp is None else site.ncp for site in self.sites], np.float64
        )
        levels = [
            np.zeros((0, 0), np.int64) if site.levels is None else np.asarray(site.levels)
            for site in self.sites
        ]
        levels_start, levels_flat = _packed(levels, np.int64)
        rank_start, rank = _packed(
            [np.zeros(0) if site.rank is None else site.rank for site in self.sites], np.int64
        )
        return CostTables(
            np.array([kind[site.kind] for site in self.sites], dtype=np.int64),
            np.cumsum(widths) - widths,
            widths,
            np.array([site.weight for site in self.sites], dtype=np.float64),
            np.array([site.scale for site in self.sites], dtype=np.float64),
            ncp_start,
            np.array(
                [site.ncp.shape[1] if site.ncp is not None else 0 for site in self.sites],
                dtype=np.int64,
            ),
            ncp,
            levels_start,
            np.array([a.shape[0] for a in levels], dtype=np.int64),
            np.array([a.shape[1] for a in levels], dtype=np.int64),
            levels_flat,
            rank_start,
            rank,
        )

    def cost(self, state: npt.NDArray[np.integer], anchors: npt.NDArray[np.integer]) -> FloatArray:
        """The weighted NCP of released records ``anchors`` in ``state``, summed over the sites.

        A site's NCP: ``concealing``, its state (1 hidden, 0 not); ``hierarchy``, the NCP of
        the released value's ancestor at the state's level; ``interval`` and ``set``, the
        sum of its state's features times ``scale``. Each is multiplied by the site's weight.

        Examples
        --------
        >>> import numpy as np
        >>> site = Site("concealing", 1, 0.5, 1.0)
        >>> costs = CoverCosts((site, site), np.zeros((2, 2), dtype=np.int32))
        >>> costs.cost(np.array([[1, 1], [0, 1]], dtype=np.int32), np.array([0, 1])).tolist()
        [1.0, 0.5]
        """
        rows = np.arange(np.asarray(anchors).size, dtype=np.int64)
        none = np.zeros(0, dtype=np.int64)
        return self.cost_of_max(state, rows, state[:0], none, anchors)

    def cost_of_max(
        self,
        base: npt.NDArray[np.integer],
        rows: npt.NDArray[np.integer],
        contrib: npt.NDArray[np.integer],
        edges: npt.NDArray[np.integer],
        anchors: npt.NDArray[np.integer],
    ) -> FloatArray:
        """:meth:`cost` of released records ``anchors[i]`` in the states
        ``max(base[rows[i]], contrib[edges[i]])`` (``edges`` empty: ``base[rows[i]]``),
        without making those states (a compiled loop, :mod:`._kernels`).

        Examples
        --------
        >>> import numpy as np
        >>> site = Site("concealing", 1, 1.0, 1.0)
        >>> costs = CoverCosts((site,), np.zeros((1, 1), dtype=np.int32))
        >>> base = np.array([[0]], dtype=np.int32)
        >>> contrib = np.array([[0], [1]], dtype=np.int32)
        >>> costs.cost_of_max(base, np.array([0, 0]), contrib, np.array([0, 1]),
        ...                   np.array([0, 0])).tolist()
        [0.0, 1.0]
        """
        out = np.empty(np.asarray(rows).size, dtype=np.float64)
        kernel("costs")(
            np.ascontiguousarray(base, dtype=np.int32),
            np.ascontiguousarray(rows, dtype=np.int64),
            np.ascontiguousarray(contrib, dtype=np.int32),
            np.ascontiguousarray(edges, dtype=np.int64),
            self._codes32,
            np.ascontiguousarray(anchors, dtype=np.int64),
            self.tables,
            out,
        )
        return out

    def states(self, covers: npt.NDArray[np.integer]) -> npt.NDArray[np.int32]:
        """The state of each released record: the elementwise maximum of the states it needs
        to cover its rows (:meth:`contributions`; a compiled loop, :mod:`._kernels`).

        Parameters
        ----------
        covers : ndarray of int, shape (rows, k)
            The rows each released record covers (row ``j`` is released as record ``j``).

        Returns
        -------
        ndarray of int32, shape (rows, width)

        Examples
        --------
        >>> import numpy as np
        >>> site = Site("concealing", 1, 1.0, 1.0)
        >>> costs = CoverCosts((site,), np.array([[0], [0], [1]], dtype=np.int32))
        >>> costs.states(np.array([[0, 1], [1, 2], [2, 0]])).tolist()
        [[0], [1], [1]]
        """
        covers = np.ascontiguousarray(covers, dtype=np.int64)
        state = np.empty((covers.shape[0], self.width), dtype=np.int32)
        kernel("states")(self._codes32, covers, self.tables, state)
        return state


def _packed(
    parts: Sequence[npt.NDArray[Any]], dtype: type[np.number[Any]]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[Any]]:
    """The arrays ``parts`` flattened end to end (as ``dtype``) and where each starts."""
    sizes = np.array([a.size for a in parts], dtype=np.int64)
    flat = np.concatenate([np.zeros(0, dtype=dtype), *(a.ravel() for a in parts)]).astype(dtype)
    return np.cumsum(sizes) - sizes, flat


def cell_cover(
    problem: Problem,
    covers: npt.ArrayLike,
    generalization: str | Mapping[str, str] = "concealing",
    pseudo_qids: Sequence[str] = (),
) -> CellCover:
    """The cell cover of ``covers`` on ``problem`` under a generalization (its labels made).

    Parameters
    ----------
    problem : Problem
    covers : array_like of int, shape (rows, k)
        The rows each released record covers.
    generalization : str or Mapping[str, str]
        The kind of every quasi-identifier, or one per attribute.
    pseudo_qids : sequence of str
        Attributes released one character at a time.

    Raises
    ------
    ParameterError
        A bad generalization (:meth:`CoverModel.build`) or a cover that does not fit the
        table.

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
    >>> c = cell_cover(p, [[0, 1], [1, 0], [2, 0], [3, 1]])  # rows 2, 3 cover their twins
    >>> c.apply(p)["sex"].labels().tolist(), c.summary(p)["generalized_cells"]
    (['*', '*', 'F', 'M'], {'sex': 2})
    >>> cover_cost(p, c)  # two hidden cells
    2.0
    """
    return CoverModel.build(problem, generalization, pseudo_qids).recoding(covers)


def cover_cost(problem: Problem, recoding: CellCover) -> float:
    """The weighted NCP(T) of a cell cover as the cost model counts it (the verification
    measures it again from the labels).

    Parameters
    ----------
    problem : Problem
        The problem the cover was made for.
    recoding : CellCover
    """
    model = CoverModel.build(problem, dict(recoding.generalization), recoding.pseudo_qids)
    costs = model.costs()
    covers = recoding.covers
    return float(costs.cost(costs.states(covers), np.arange(covers.shape[0])).sum())
