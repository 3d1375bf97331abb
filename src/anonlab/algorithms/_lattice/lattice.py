"""The generalization lattice and the evaluation of its nodes from rolled-up class counts.

A node is a level vector ``(t_1, ..., t_m)``, one hierarchy level per quasi-identifier. A node
is evaluated without touching the rows: the classes of the original table (level 0 everywhere)
are computed once by an engine, and a node's classes are obtained by mapping the keys of the
classes of a node below it through the hierarchies and merging the classes that coincide
("rolling up", :mod:`~anonlab.algorithms._lattice.rollup`); sizes and sensitive-value
histograms are summed. The node below is the nearest snapshot (the classes of an evaluated
node, as in ARX: Kohlmayer et al., *Flash*, 2012, section 5) or the base classes.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from anonlab.algorithms._lattice._kernels import Grouping, compiled
from anonlab.algorithms._lattice.judge import Judge, SensitiveColumns, judge_of, side_by_side
from anonlab.algorithms._lattice.rollup import Classes, RollUp, Snapshots, merge_keys
from anonlab.data.grouping import class_members, group_rows
from anonlab.data.grouping import hashed_groups as _hashed_groups
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.stats import ClassStats, SensitiveHistogram
from anonlab.exceptions import ParameterError
from anonlab.metrics.base import Metric, MetricContext
from anonlab.models.base import PrivacyModel, failing_classes

__all__ = [
    "Lattice",
    "LatticeEvaluator",
    "NodeResult",
    "SearchResult",
    "better",
    "grid_heights",
    "grid_nodes",
    "group_rows",
    "height_order",
    "roll_up",
    "timed",
]

Node = tuple[int, ...]


def roll_up(
    codes: Sequence[npt.NDArray[np.int64]],
    cards: Sequence[int],
    weights: npt.NDArray[np.int64],
    *,
    need_ids: bool,
    need_codes: bool = True,
) -> tuple[npt.NDArray[np.int64] | None, npt.NDArray[np.int64], list[npt.NDArray[np.int64]]]:
    """Merge classes whose codes coincide: group ids, summed sizes and the merged codes.

    One mixed-radix key per input class, grouped by :func:`merge_keys` (or by hashing when
    the codes of the merged classes are not needed); their codes are decoded from their keys.

    Parameters
    ----------
    codes : sequence of ndarray
        Per column, the code of each input class (``0..card-1``).
    cards : sequence of int
        Number of codes per column.
    weights : ndarray of int64
        Size of each input class.
    need_ids : bool
        Whether to return the merged class of each input class.
    need_codes : bool
        Whether to decode the merged classes' codes (else ``merged_codes`` is empty).

    Returns
    -------
    ids : ndarray of int64 or None
    sizes : ndarray of int64
    merged_codes : list of ndarray
        Per column, the code of each merged class.
    """
    n = len(weights)
    space = 1
    for c in cards:
        space *= max(int(c), 1)
    if space >= 2**62 or n == 0:
        gids, g = group_rows(codes, cards)
        sizes = np.bincount(gids, weights=weights, minlength=g).astype(np.int64)
        if not need_codes:
            return gids, sizes, []
        first = np.empty(g, dtype=np.int64)
        first[gids[::-1]] = np.arange(n - 1, -1, -1, dtype=np.int64)  # first row of each
        return gids, sizes, [np.asarray(c, dtype=np.int64)[first] for c in codes]
    key = np.zeros(n, dtype=np.int64)
    for col, card in zip(codes, cards):
        if card > 1:
            key *= card
            key += col
    if not need_codes and not (space <= 4 * n or (need_ids and space <= 1 << 16)):
        ids, sizes = _hashed_groups(key, weights, need_ids=need_ids)
        return ids, sizes, []
    ids, sizes, ukeys = merge_keys(key, space, weights, need_ids=need_ids)
    if not need_codes:
        return ids, sizes, []
    merged: list[npt.NDArray[np.int64]] = [np.zeros(0, dtype=np.int64)] * len(cards)
    rest = ukeys.astype(np.int64, copy=True)
    for j in range(len(cards) - 1, -1, -1):
        card = int(cards[j])
        if card > 1:
            merged[j] = rest % card
            rest //= card
        else:
            merged[j] = np.zeros(ukeys.size, dtype=np.int64)
    return ids, sizes, merged


def grid_nodes(mins: Sequence[int], maxs: Sequence[int]) -> npt.NDArray[np.int64]:
    """Every node between ``mins`` and ``maxs`` (inclusive) in row-major order of the grid,
    shape (N, m): each attribute's levels broadcast over the grid (any number of
    attributes)."""
    shape = tuple(int(b) - int(a) + 1 for a, b in zip(mins, maxs))
    if not shape:  # one node, of no attribute
        return np.zeros((1, 0), dtype=np.int64)
    grid = np.empty((*shape, len(shape)), dtype=np.int64)
    for j, a in enumerate(mins):
        axis = [1] * len(shape)
        axis[j] = shape[j]
        grid[..., j] = np.arange(int(a), int(a) + shape[j], dtype=np.int64).reshape(axis)
    return grid.reshape(-1, len(shape))


def grid_heights(mins: Sequence[int], maxs: Sequence[int]) -> npt.NDArray[np.int64]:
    """The total height of every node of :func:`grid_nodes`, in its order."""
    shape = tuple(int(b) - int(a) + 1 for a, b in zip(mins, maxs))
    heights = np.full(shape, sum(int(a) for a in mins), dtype=np.int64)
    for j in range(len(shape)):
        axis = [1] * len(shape)
        axis[j] = shape[j]
        heights += np.arange(shape[j], dtype=np.int64).reshape(axis)
    return heights.reshape(-1)


def height_order(heights: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The order of nodes by their total ``heights``, ties in their order (a radix sort
    when the heights fit 16 bits)."""
    if heights.size and int(heights.max()) < 2**15:
        heights = heights.astype(np.int16)
    order: npt.NDArray[np.int64] = np.argsort(heights, kind="stable")
    return order


@dataclass(frozen=True)
class Lattice:
    """The nodes of full-domain generalization between minimum and maximum levels.

    Parameters
    ----------
    attributes : tuple of str
        Quasi-identifiers, in table order.
    min_levels, max_levels : tuple of int
        Bounds per attribute (inclusive).
    """

    attributes: tuple[str, ...]
    min_levels: tuple[int, ...]
    max_levels: tuple[int, ...]

    @property
    def size(self) -> int:
        """Number of nodes."""
        return math.prod(b - a + 1 for a, b in zip(self.min_levels, self.max_levels))

    def nodes(self) -> npt.NDArray[np.int64]:
        """All nodes as an array of shape (size, m), in order of total height (ties in
        row-major order)."""
        order = height_order(grid_heights(self.min_levels, self.max_levels))
        return grid_nodes(self.min_levels, self.max_levels)[order]

    def memory_estimate(self, heights: Sequence[int]) -> int:
        """Bytes a search over every node holds at once (nodes, successors, tags, bounds).

        Parameters
        ----------
        heights : sequence of int
            The hierarchy height of each attribute.
        """
        m = len(self.attributes)
        per_node = 56 * m + 2 * sum(int(h) + 1 for h in heights) + 96
        return int(self.size) * per_node

    @property
    def bottom(self) -> Node:
        """The most specific node."""
        return tuple(self.min_levels)

    @property
    def top(self) -> Node:
        """The most general node."""
        return tuple(self.max_levels)


@dataclass
class NodeResult:
    """The evaluation of one node.

    Attributes
    ----------
    levels : tuple of int
    stats : ClassStats
        The node's classes.
    violating : ndarray of bool
        Classes that fail a privacy model (they are suppressed).
    suppressed_rows : int
    anonymous : bool
        Whether ``suppressed_rows`` is within the suppression limit.
    mcs_ok : bool
        Whether the rows in classes smaller than the minimal class size fit the limit
        (a monotonic part that prunes even for non-monotonic models).
    """

    levels: Node
    stats: ClassStats
    violating: npt.NDArray[np.bool_]
    suppressed_rows: int
    anonymous: bool
    mcs_ok: bool
    loss: float | None = None


@dataclass
class SearchResult:
    """The outcome of a lattice search."""

    best: NodeResult | None
    evaluated_nodes: int
    lattice_size: int
    elapsed_s: float
    algorithm: str
    checked: dict[Node, bool] = field(default_factory=dict)


def better(res: NodeResult, best: NodeResult | None) -> bool:
    """Whether ``res`` beats ``best``: less loss, then a lower total height (ties: the
    first found stays)."""
    if best is None:
        return True
    assert res.loss is not None and best.loss is not None
    if res.loss != best.loss:
        return res.loss < best.loss
    return sum(res.levels) < sum(best.levels)


#: How many snapshots an evaluator keeps (at most).
SNAPSHOTS = 4000


class LatticeEvaluator:
    """Evaluate lattice nodes by rolling up the classes of the original table, or of the
    evaluated node below with the fewest classes (a snapshot; up to :attr:`snapshot_count`
    of them are kept, in :attr:`snapshot_cache_bytes`).

    Parameters
    ----------
    base : ClassStats
        Classes of the quasi-identifiers at level 0 everywhere, with keys and the histograms
        of every sensitive attribute the models need.
    hierarchies : Mapping[str, Hierarchy]
        Hierarchy per quasi-identifier.
    models : sequence of PrivacyModel
        All must hold in every class that is not suppressed.
    max_suppressed : int
        The most rows that may be suppressed (``floor(limit * n)``).
    metric : Metric
        The utility metric.
    context : MetricContext
        What the metric needs.
    population : ClassStats, optional
        The classes of the population table at level 0 everywhere (with keys), for the models
        that read it (:attr:`PrivacyModel.population_table`): every node's classes then carry their
        population records (:attr:`ClassStats.population_sizes`), the population's classes
        generalized to the node and matched to the sample's on their labels.
    """

    def __init__(
        self,
        base: ClassStats,
        hierarchies: dict[str, Hierarchy],
        models: Sequence[PrivacyModel],
        max_suppressed: int,
        metric: Metric,
        context: MetricContext,
        population: ClassStats | None = None,
    ) -> None:
        if base.keys is None or base.domains is None:
            raise ParameterError("The base class statistics need keys.")
        self.base = base
        self.models = list(models)
        self.max_suppressed = int(max_suppressed)
        self.metric = metric
        self.context = context
        self.mcs = max([m.min_class_size for m in self.models] + [1])
        self.evaluations = 0  # distinct nodes whose classes were computed
        self._seen: set[tuple[tuple[int, ...] | None, tuple[int, ...]]] = set()
        # per attribute and level: base domain code -> level code, and level labels
        self._maps: list[list[npt.NDArray[np.int64]]] = []
        self._labels: list[list[npt.NDArray[np.object_]]] = []
        self._hierarchies = [hierarchies[attr] for attr in base.columns]
        for j, attr in enumerate(base.columns):
            mappings, labels = hierarchies[attr].generalizations(base.domains[j])
            self._maps.append(list(mappings.astype(np.int64)))
            self._labels.append(labels)
        self._sens = dict(base.sensitive)
        self._keycols = [
            np.ascontiguousarray(base.keys[:, j], dtype=np.int64) for j in range(len(base.columns))
        ]
        self._code_cache: dict[tuple[int, int], npt.NDArray[np.int64]] = {}
        self._dom_sizes: list[npt.NDArray[np.int64]] | None = None  # rows per domain code
        self._grp: Grouping | None = None  # the compiled grouping's state (built on first use)
        self._map_at: list[list[int]] = []  # per attribute and level: its map's offset in it
        self._sparse: (
            dict[
                str,
                tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64], int],
            ]
            | None
        ) = None
        self._needs_sensitive = any(m.sensitive_attributes for m in self.models)
        self._columns: SensitiveColumns | None = None
        self._compiled_judge: tuple[Judge | None] | None = None
        #: Called as ``on_classes(levels, sizes)`` whenever the classes of a node of every
        #: quasi-identifier are computed (a search raises the bounds of its generalizations).
        self.on_classes: Callable[[Node, npt.NDArray[np.int64]], None] | None = None
        self._roll: RollUp | None = None  # (built on first use; PrivacyFrost2 never rolls up)
        #: Memory the snapshots (classes of evaluated nodes, rolled up from) may use.
        self.snapshot_cache_bytes = 128 * 2**20
        #: How many snapshots are kept (each node looks through them for the nearest).
        self.snapshot_count = SNAPSHOTS
        self._snapshots: Snapshots | None = None
        self._recent: OrderedDict[Node, Classes] = OrderedDict()
        self._records = int(base.sizes.sum())  # no class of any node is larger
        self._judged: OrderedDict[Node, NodeResult] = OrderedDict()
        if population is not None and (population.keys is None or population.domains is None):
            raise ParameterError("The population's base class statistics need keys.")
        self.population = population
        # per attribute and level: population domain code -> the node's label code (-1: none)
        self._pop_codes: dict[tuple[int, int], npt.NDArray[np.int64]] = {}

    def restricted(self, keep: npt.ArrayLike) -> LatticeEvaluator:
        """A new evaluator of the table without the base classes where ``keep`` is False.

        Hierarchies, models, metric, attribute weights and the suppression limit (an absolute
        number of rows) are those of this evaluator; so is the metric context, but for its
        base classes and records, those that remain (:meth:`ClassStats.restricted`).

        Parameters
        ----------
        keep : array_like of bool, shape (n_base_classes,)
        """
        base = self.base.restricted(keep)
        context = replace(self.context, base=base, n_rows=base.n_rows, cache={})
        return LatticeEvaluator(
            base,
            dict(context.hierarchies),
            self.models,
            self.max_suppressed,
            self.metric,
            context,
            self.population,
        )

    def level_codes(self, j: int, level: int) -> npt.NDArray[np.int64]:
        """The code of every base class's label of attribute ``j`` at ``level``, an index
        into ``level_size(j, level)`` labels (cached; do not modify).

        Parameters
        ----------
        j : int
            The quasi-identifier: its column in the base classes' keys.
        level : int
            The hierarchy level whose labels the codes index (0 = the original values).

        Returns
        -------
        ndarray of int64, one code per base class
        """
        hit = self._code_cache.get((j, level))
        if hit is None:
            hit = self._maps[j][level][self._keycols[j]]
            self._code_cache[(j, level)] = hit
        return hit

    @property
    def _rollup(self) -> RollUp:
        """The roll-up of node classes from snapshots (built on first use)."""
        if self._roll is None:
            self._roll = RollUp(
                self._maps,
                [[int(lab.size) for lab in labs] for labs in self._labels],
                [m[0][k] for m, k in zip(self._maps, self._keycols)],  # level-0 codes
                self.base.sizes,
            )
        return self._roll

    def attribute_sizes(self, attribute: int, level: int) -> npt.NDArray[np.int64]:
        """The class sizes of one attribute on its own at ``level`` (non-empty classes in
        code order), as ``stats((level,), [attribute]).sizes`` but summed through the
        hierarchy from the records of each code of the attribute's base domain (counted for
        every attribute in one compiled pass over the base classes, on the first call).

        Parameters
        ----------
        attribute : int
            The index of the quasi-identifier.
        level : int
            Its generalization level.

        Returns
        -------
        ndarray of int64
        """
        if self._dom_sizes is None:
            sizes = [int(m[0].size) for m in self._maps]
            off = np.zeros(len(sizes) + 1, dtype=np.int64)
            off[1:] = np.cumsum(sizes)
            flat = np.zeros(int(off[-1]), dtype=np.int64)  # (integer adds: exact)
            assert self.base.keys is not None
            keys = np.asarray(self.base.keys)  # (either layout: no copy)
            compiled().domain_sizes(keys, self.base.sizes, off, flat)
            self._dom_sizes = [flat[off[j] : off[j + 1]] for j in range(len(sizes))]
        maps = self._maps[attribute]
        card = self.level_size(attribute, level)
        counts = np.bincount(maps[level], weights=self._dom_sizes[attribute], minlength=card)
        return counts[counts > 0].astype(np.int64)

    def generalization(
        self, j: int, level: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.object_]]:
        """:meth:`Hierarchy.generalization` of attribute ``j``'s base domain to ``level``, as
        kept by the evaluator (do not modify).

        Parameters
        ----------
        j : int
            The quasi-identifier: its column in the base classes' keys.
        level : int
            The hierarchy level to generalize to (0 = the original values).

        Returns
        -------
        mapping : ndarray of int64
            The code at ``level`` of each code of the base classes' keys:
            ``level_codes(j, level) == mapping[base.keys[:, j]]``.
        labels : ndarray of object
            The labels those codes index: the hierarchy's labels at ``level``, and a null
            (``None``, last) if the data has one.
        """
        return self._maps[j][level], self._labels[j][level]

    def label_ids(self, j: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.object_]]:
        """:meth:`Hierarchy.label_ids` of attribute ``j``'s base domain: per level and base
        domain code, the id of its label (equal labels on different levels share one), and
        the label of each id."""
        assert self.base.domains is not None
        return self._hierarchies[j].label_ids(self.base.domains[j])

    def level_size(self, j: int, level: int) -> int:
        """The number of labels of attribute ``j`` at ``level`` (the codes of
        :meth:`level_codes` are below it).

        Parameters
        ----------
        j, level : int
            The quasi-identifier and its level, as in :meth:`level_codes`.

        Returns
        -------
        int
        """
        return int(self._labels[j][level].size)

    def heights(self) -> tuple[int, ...]:
        """The hierarchy height of each quasi-identifier."""
        return tuple(len(m) - 1 for m in self._maps)

    def stats(
        self,
        levels: Node,
        attributes: Sequence[int] | None = None,
        *,
        with_keys: bool = True,
        with_sensitive: bool = True,
    ) -> ClassStats:
        """Return the classes of the node ``levels``, rolled up from the base classes or,
        for a node of every quasi-identifier, from the snapshot below it with the fewest
        classes (the classes of an evaluated node, as in ARX).

        With ``attributes`` (indices of quasi-identifiers), ``levels`` gives the levels of
        those attributes only and the others are projected out (Incognito's subsets).
        Keys and sensitive histograms can be skipped when only sizes are needed.
        """
        node = tuple(map(int, levels))
        rolled = self._classes_of(node, attributes, with_sensitive)
        if not with_keys:
            columns = self.base.columns
            if attributes is not None:
                columns = tuple(columns[j] for j in attributes)
            return ClassStats(
                columns, node, rolled.sizes, self.base.n_rows, sensitive=rolled.hists or {}
            )
        cols = list(range(len(self.base.columns))) if attributes is None else list(attributes)
        keys = np.empty((rolled.sizes.size, len(cols)), dtype=np.int32)
        for i, j in enumerate(cols):
            keys[:, i] = self._rollup.attribute_codes(rolled, j)
        return ClassStats(
            columns=tuple(self.base.columns[j] for j in cols),
            levels=node,
            sizes=rolled.sizes,
            n_rows=self.base.n_rows,
            keys=keys,
            domains=tuple(self._labels[j][lv] for j, lv in zip(cols, node)),
            sensitive=rolled.hists or {},
        )

    def _classes_of(
        self, node: Node, attributes: Sequence[int] | None, with_sensitive: bool
    ) -> Classes:
        """The classes of ``node`` (of ``attributes`` only, if given). Those of a node of
        every quasi-identifier are kept: the last few as they are (a check and then the
        loss of the same node), and in 32 bits as a snapshot when they are fewer than the
        base classes."""
        want_hist = with_sensitive and bool(self._sens)
        src: Classes | None = None
        if attributes is None:
            store = self._snapshot_store()
            hit = self._recent.get(node)
            if hit is None:
                hit = store.get(node)
                hit = None if hit is None else hit.widened()
            if hit is not None and (hit.hists is not None or not want_hist):
                return hit
            target = node
            src = store.nearest(node, want_hist)
        else:
            levels = [-1] * len(self.base.columns)
            for j, lv in zip(attributes, node):
                levels[j] = lv
            target = tuple(levels)
        rolled, ids = self._rollup.roll(
            self._rollup.base() if src is None else src, target, need_ids=want_hist
        )
        g = int(rolled.sizes.size)
        if want_hist:
            rolled.hists = self._hists(ids, g) if src is None else _rolled(src.hists, ids, g)
        if attributes is None:
            if self.on_classes is not None:
                self.on_classes(node, rolled.sizes)
            if g < self.base.n_classes:
                store.keep(rolled.compact(self._records))
            self._recent[node] = rolled
            while len(self._recent) > 8:
                self._recent.popitem(last=False)
        return rolled

    def _snapshot_store(self) -> Snapshots:
        if self._snapshots is None:
            self._snapshots = Snapshots(
                self.heights(), self.snapshot_count, self.snapshot_cache_bytes
            )
        return self._snapshots

    def _hists(self, ids: npt.NDArray[np.integer] | None, g: int) -> dict[str, SensitiveHistogram]:
        """The sensitive histograms of ``g`` classes, ``ids`` the class of each base class."""
        assert ids is not None
        hists = {}
        for name, (cls, val, cnt, _) in self.sparse_histograms().items():
            hists[name] = SensitiveHistogram.from_triplets(
                self._sens[name].values, ids[cls], val, cnt, n_classes=g
            )
        return hists

    def _grouping(self) -> Grouping:
        """The compiled grouping's state: every attribute's level maps end to end and a hash
        table of at least two slots per base class (32 bytes per base class)."""
        if self._grp is None:
            n = self.base.n_classes
            maps = [m for levels in self._maps for m in levels]
            start = np.cumsum([0] + [m.size for m in maps]).tolist()
            i = 0
            for levels in self._maps:  # per attribute, where its maps start, level by level
                self._map_at.append(start[i : i + len(levels)])
                i += len(levels)
            slots = 1 << max(4, (2 * n - 1).bit_length())
            assert self.base.keys is not None
            self._grp = Grouping(
                keys=np.asarray(self.base.keys),  # (either layout: no copy)
                maps=np.concatenate(maps or [np.zeros(0, dtype=np.int64)]),
                weights=np.asarray(self.base.sizes, dtype=np.int64),
                tkeys=np.full(slots, -1, dtype=np.int64),
                tvals=np.zeros(slots, dtype=np.int64),
                out=np.empty(n, dtype=np.int32 if n < 2**31 else np.int64),
            )
        return self._grp

    def classes(self, levels: Node) -> tuple[npt.NDArray[np.integer], npt.NDArray[np.int64]]:
        """The classes of the node ``levels``: the class of every base class (numbered in
        the order first met; int32 below 2**31 base classes) and the class sizes (for
        :meth:`refine` and :meth:`evaluate_classes`), grouped in one compiled pass."""
        gr = self._grouping()
        cols = [j for j, lv in enumerate(levels) if self.level_size(j, lv) > 1]  # (a root)
        _, sizes = compiled().group_classes(
            np.array(cols, dtype=np.int64),
            np.array([self.level_size(j, levels[j]) for j in cols], dtype=np.int64),
            np.array([self._map_at[j][levels[j]] for j in cols], dtype=np.int64),
            gr,
        )
        return gr.out.copy(), sizes

    def refine(
        self, ids: npt.NDArray[np.integer], n_classes: int, attribute: int, level: int
    ) -> tuple[npt.NDArray[np.integer], npt.NDArray[np.int64]]:
        """The classes of a node from those of a node that differs only in ``attribute``,
        which the new node takes to a lower (finer) ``level``.

        Hierarchy levels nest (every label has one parent), so the new node's classes are
        the old ones split by the attribute's labels at ``level``: a grouping of two
        columns instead of one per attribute, in one compiled pass.

        Parameters
        ----------
        ids : ndarray of int
            The class of every base class in the old node (as :meth:`classes` returns).
        n_classes : int
            The number of classes of the old node.
        attribute : int
            The index of the attribute that changes.
        level : int
            Its level in the new node, at most its level in the old one.

        Returns
        -------
        ids, sizes : ndarray
            As :meth:`classes` for the new node.
        """
        gr = self._grouping()
        card = self.level_size(attribute, level)
        at = self._map_at[attribute][level]
        _, sizes = compiled().split_classes(ids, attribute, at, card, gr)
        return gr.out.copy(), sizes

    def evaluate_classes(
        self,
        levels: Node,
        ids: npt.NDArray[np.integer],
        sizes: npt.NDArray[np.int64],
        hists: Mapping[str, npt.NDArray[np.int64]] | None = None,
        *,
        with_loss: bool = False,
    ) -> NodeResult:
        """:meth:`evaluate` of the node ``levels`` whose classes are known (from
        :meth:`classes` or :meth:`refine`, or a search that grouped them itself).

        ``hists`` (per sensitive attribute, the counts of each class, shape
        ``(classes, values)`` in the order of :meth:`sparse_histograms`) are used when given
        instead of being summed from ``ids``. With ``with_loss`` the loss is computed too,
        on these classes (their keys read from one base class of each), in the order
        ``ids`` numbers them.
        """
        self._count(None, levels)
        g = int(sizes.size)
        keys: npt.NDArray[np.int32] | None = None
        domains: tuple[npt.NDArray[np.object_], ...] | None = None
        if with_loss or self.population is not None:  # the codes of any base class of each
            # class (its members share them)
            first = class_members(ids, g)
            by_column = np.empty((len(levels), g), dtype=np.int32)  # column-major
            for j, lv in enumerate(levels):
                by_column[j] = self._maps[j][lv][self._keycols[j][first]]
            keys = by_column.T
            domains = tuple(self._labels[j][lv] for j, lv in enumerate(levels))
        sensitive: dict[str, SensitiveHistogram] = {}
        if self._needs_sensitive and self._sens:
            if hists is None:
                sensitive = self._hists(ids, g)
            else:
                sensitive = {
                    name: SensitiveHistogram(self._sens[name].values, hists[name])
                    for name in self._sens
                }
        stats = ClassStats(
            columns=tuple(self.base.columns),
            levels=tuple(levels),
            sizes=sizes,
            n_rows=self.base.n_rows,
            keys=keys,
            domains=domains,
            sensitive=sensitive,
        )
        return self._judge(levels, stats, with_loss=with_loss)

    def sparse_histograms(
        self,
    ) -> dict[
        str, tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64], int]
    ]:
        """The base classes' sensitive histograms as (class, value, count) triplets.

        Returns
        -------
        dict
            Per sensitive attribute: the base class and value of every non-zero count (in
            base-class order), the counts, and the number of values. Computed once.
        """
        if self._sparse is None:
            self._sparse = {}
            for name, h in self._sens.items():
                self._sparse[name] = (h.rows, h.indices, h.data.astype(np.float64), h.n_values)
        return self._sparse

    def sensitive_columns(self) -> SensitiveColumns:
        """The base classes' sensitive counts, every attribute side by side
        (:func:`~anonlab.algorithms._lattice.judge.side_by_side`), made once.

        Raises
        ------
        ParameterError
            If a model reads a sensitive attribute the base classes have no counts of.
        """
        if self._columns is None:
            known = self.sparse_histograms()
            for name in sorted({a for m in self.models for a in m.sensitive_attributes}):
                if name not in known:
                    raise ParameterError(
                        f"The evaluator's base classes have no counts of sensitive attribute "
                        f"{name!r}, which a privacy model needs."
                    )
            self._columns = side_by_side(known)
        return self._columns

    def compiled_judge(self) -> Judge | None:
        """The compiled judge of the models on :meth:`sensitive_columns`
        (:func:`~anonlab.algorithms._lattice.judge.judge_of`), made once; None if a model has
        no rule (then the models judge themselves)."""
        if self._compiled_judge is None:
            columns = self.sensitive_columns()
            self._compiled_judge = (judge_of(self.models, columns, self.base.n_rows),)
        return self._compiled_judge[0]

    def reset_evaluations(self) -> None:
        """Start counting evaluated nodes from zero."""
        self.evaluations = 0
        self._seen.clear()

    def count_evaluation(self, levels: Node) -> None:
        """Count the node ``levels`` in :attr:`evaluations` (once), for a search that judged
        its classes itself (as :meth:`evaluate_classes` counts the nodes it judges).

        Parameters
        ----------
        levels : tuple of int
            The node.
        """
        self._count(None, levels)

    def _count(self, attributes: Sequence[int] | None, levels: Node) -> None:
        """Count a node the first time its classes are computed (``evaluations``)."""
        key = (None if attributes is None else tuple(attributes), tuple(levels))
        if key not in self._seen:
            self._seen.add(key)
            self.evaluations += 1

    def mcs_ok(self, levels: Node) -> bool:
        """Whether the rows in classes smaller than the minimal class size fit the limit.

        This part of every model (k, ceil(l), ...) is monotonic under generalization even when
        the models are not, so it can rule out specializations safely.
        """
        self._count(None, levels)
        sizes = self._classes_of(tuple(map(int, levels)), None, False).sizes
        return int(np.dot(sizes, sizes < self.mcs)) <= self.max_suppressed

    def evaluate(
        self, levels: Node, *, with_loss: bool = True, attributes: Sequence[int] | None = None
    ) -> NodeResult:
        """Evaluate the node: classes, violations, suppression and (optionally) loss.

        With ``attributes``, the node is one of a subset of the quasi-identifiers and no loss
        is computed.
        """
        self._count(attributes, levels)
        if attributes is not None:
            stats = self.stats(
                levels,
                attributes,
                with_keys=self.population is not None,
                with_sensitive=self._needs_sensitive,
            )
            return self._judge(levels, stats, with_loss=False)
        node = tuple(map(int, levels))
        res = self._judged.get(node)  # a check and then the loss of the same node: one verdict
        if res is None:
            stats = self.stats(
                node,
                with_keys=(with_loss and self.metric.needs_keys) or self.population is not None,
                with_sensitive=self._needs_sensitive,
            )
            res = self._judge(node, stats, with_loss=False)
            self._judged[node] = res
            while len(self._judged) > 8:
                self._judged.popitem(last=False)
        if with_loss and res.anonymous and res.loss is None:
            if self.metric.needs_keys and res.stats.keys is None:
                res.stats = self.with_population(
                    self.stats(node, with_sensitive=self._needs_sensitive)
                )
            res.loss = float(self.metric.loss(res.stats, res.violating, self.context))
        return res

    def with_population(self, stats: ClassStats) -> ClassStats:
        """``stats`` (classes of a node, with keys) with their population records, when the
        evaluator has a population; ``stats`` itself otherwise.

        The population's base classes are generalized to the node's levels and their codes
        translated to the sample's labels (once per attribute and level); a population class
        whose label at some attribute no sample class has is in no sample class. The
        population records of each sample class are then the sums over equal keys.
        """
        pop = self.population
        if pop is None or stats.population_sizes is not None:
            return stats
        if stats.keys is None:  # pragma: no cover - the evaluator asks for keys
            raise ParameterError("Counting the population of a node needs its classes' keys.")
        assert pop.keys is not None
        position = {c: j for j, c in enumerate(self.base.columns)}
        cols = [position[c] for c in stats.columns]
        radix = [self.level_size(j, lv) for j, lv in zip(cols, stats.levels)]
        pop_codes = [self._population_codes(j, lv) for j, lv in zip(cols, stats.levels)]
        inside = np.ones(pop.n_classes, dtype=bool)
        for codes in pop_codes:
            inside &= codes >= 0
        pop_weights = np.asarray(pop.sizes, dtype=np.int64)[inside]
        space = math.prod(radix)
        if space < 2**62:  # one integer per key: mixed radix
            pop_key = np.zeros(int(inside.sum()), dtype=np.int64)
            key = np.zeros(stats.n_classes, dtype=np.int64)
            for i, (codes, card) in enumerate(zip(pop_codes, radix)):
                pop_key = pop_key * card + codes[inside]
                key = key * card + np.asarray(stats.keys[:, i], dtype=np.int64)
        else:  # rows of codes, numbered in one sort
            both = np.concatenate(
                [
                    np.stack([c[inside] for c in pop_codes], axis=1),
                    np.asarray(stats.keys, dtype=np.int64),
                ]
            )
            _, ids = np.unique(both, axis=0, return_inverse=True)
            ids = np.asarray(ids, dtype=np.int64).ravel()
            pop_key, key = ids[: pop_weights.size], ids[pop_weights.size :]
            space = int(ids.max()) + 1 if ids.size else 1
        _, sums, ukeys = merge_keys(pop_key, space, pop_weights, need_ids=False)
        at = np.minimum(np.searchsorted(ukeys, key), max(ukeys.size - 1, 0))
        found = ukeys[at] == key if ukeys.size else np.zeros(key.size, dtype=bool)
        counts = np.where(found, sums[at] if ukeys.size else 0, 0).astype(np.int64)
        return replace(stats, population_sizes=counts, population_rows=int(pop.sizes.sum()))

    def _population_codes(self, j: int, level: int) -> npt.NDArray[np.int64]:
        """Per code of the population's domain of attribute ``j``, the code of its label at
        ``level`` among the sample's labels (:meth:`generalization`), or -1."""
        hit = self._pop_codes.get((j, level))
        if hit is None:
            pop = self.population
            assert pop is not None and pop.domains is not None and pop.keys is not None
            mappings, labels = self._hierarchies[j].generalizations(pop.domains[j])
            ours = {label: code for code, label in enumerate(self._labels[j][level].tolist())}
            to_ours = np.array([ours.get(x, -1) for x in labels[level].tolist()], dtype=np.int64)
            per_code = to_ours[np.asarray(mappings[level], dtype=np.int64)]
            hit = per_code[np.asarray(pop.keys[:, j], dtype=np.int64)]
            self._pop_codes[(j, level)] = hit
        return hit

    def _judge(self, levels: Node, stats: ClassStats, *, with_loss: bool) -> NodeResult:
        """The verdicts of the models on a node's classes, suppression and (optionally) loss."""
        stats = self.with_population(stats)
        sizes = stats.sizes
        small = sizes < self.mcs
        mcs_rows = int(np.dot(sizes, small))  # (a masked sum: twice as fast as sizes[small])
        violating = failing_classes(self.models, stats, small)
        same = np.array_equal(violating, small)  # k-anonymity alone
        suppressed = mcs_rows if same else int(np.dot(sizes, violating))
        res = NodeResult(
            levels=tuple(map(int, levels)),
            stats=stats,
            violating=violating,
            suppressed_rows=suppressed,
            anonymous=suppressed <= self.max_suppressed,
            mcs_ok=mcs_rows <= self.max_suppressed,
        )
        if with_loss and res.anonymous:
            res.loss = float(self.metric.loss(stats, violating, self.context))
        return res


def _rolled(
    hists: dict[str, SensitiveHistogram] | None, ids: npt.NDArray[np.integer] | None, g: int
) -> dict[str, SensitiveHistogram]:
    """Histograms of ``g`` classes, each a union of classes of ``hists`` (``ids`` the class
    of each)."""
    assert hists is not None and ids is not None
    return {
        name: SensitiveHistogram.from_triplets(
            h.values, ids[h.rows], h.indices, h.data, n_classes=g
        )
        for name, h in hists.items()
    }


def timed(fn: Callable[[], SearchResult]) -> SearchResult:
    """Run a search and set its elapsed time."""
    t0 = time.perf_counter()
    res = fn()
    res.elapsed_s = time.perf_counter() - t0
    return res
