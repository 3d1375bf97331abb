"""The generalization lattice and the evaluation of its nodes from rolled-up class counts.

A node is a level vector ``(t_1, ..., t_m)``, one hierarchy level per quasi-identifier. A node
is evaluated without touching the rows: the classes of the original table (level 0 everywhere)
are computed once by an engine, and a node's classes are obtained by mapping each base class's
key through the hierarchies and merging the base classes that coincide ("rolling up"); sizes
and sensitive-value histograms are summed.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from anonlab.data.grouping import class_members, group_rows
from anonlab.data.grouping import hashed_groups as _hashed_groups
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.stats import ClassStats, SensitiveHistogram
from anonlab.exceptions import ParameterError
from anonlab.metrics.base import Metric, MetricContext
from anonlab.models.base import PrivacyModel

__all__ = [
    "Lattice",
    "LatticeEvaluator",
    "NodeResult",
    "SearchResult",
    "better",
    "group_rows",
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

    One mixed-radix key per input class; a counting pass (``np.bincount``) when the key space
    is small, otherwise one sort of keys packed with their weights (when ids are not needed)
    or ``np.unique``. The codes of the merged classes are decoded from their keys.

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
    ids: npt.NDArray[np.int64] | None = None
    if space <= 4 * n or (need_ids and space <= 1 << 16):
        counts = np.bincount(key, weights=weights, minlength=space)
        if not need_ids and not need_codes:
            return None, counts[counts > 0].astype(np.int64), []
        ukeys = np.flatnonzero(counts)
        sizes = counts[ukeys].astype(np.int64)
        if need_ids:
            dense = np.zeros(space, dtype=np.int64)
            dense[ukeys] = np.arange(ukeys.size)
            ids = dense[key]
    else:
        bits = max(int(weights.max()).bit_length(), 1)
        if not need_codes:
            ids, sizes = _hashed_groups(key, weights, need_ids=need_ids)
            return ids, sizes, []
        if not need_ids and space < 2 ** (62 - bits):
            packed = np.sort((key << bits) | weights)  # values: no order of equals
            keys = packed >> bits
            starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
            ukeys = keys[starts]
            sizes = np.add.reduceat(packed & ((1 << bits) - 1), starts).astype(np.int64)
        elif need_ids and space < 2 ** (62 - max((n - 1).bit_length(), 1)):
            # np.unique's inverse by one sort of the keys packed with their positions
            at = max((n - 1).bit_length(), 1)
            packed = np.sort((key << at) | np.arange(n, dtype=np.int64))
            keys = packed >> at
            new = np.r_[True, keys[1:] != keys[:-1]]
            ukeys = keys[new]
            ids = np.empty(n, dtype=np.int64)
            ids[packed & ((1 << at) - 1)] = np.cumsum(new) - 1
            sizes = np.bincount(ids, weights=weights, minlength=ukeys.size).astype(np.int64)
        else:
            ukeys, inv = np.unique(key, return_inverse=True)
            ids = inv.astype(np.int64).reshape(-1)
            sizes = np.bincount(ids, weights=weights, minlength=ukeys.size).astype(np.int64)
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
        """All nodes as an array of shape (size, m), in order of total height."""
        widths = [b - a + 1 for a, b in zip(self.min_levels, self.max_levels)]
        if not widths:
            return np.zeros((1, 0), dtype=np.int64)
        # row-major enumeration, one column at a time (no meshgrid: any number of attributes)
        rest = np.arange(self.size, dtype=np.int64)
        grid = np.empty((self.size, len(widths)), dtype=np.int64)
        for j in range(len(widths) - 1, -1, -1):
            rest, grid[:, j] = np.divmod(rest, widths[j])
            grid[:, j] += self.min_levels[j]
        order = np.argsort(grid.sum(axis=1), kind="stable")
        return grid[order]

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
class _Snapshot:
    """The classes of an evaluated node, kept to roll up its generalizations from (ARX's
    snapshots): far fewer classes than the base classes once a node is a few levels up."""

    levels: Node
    codes: list[npt.NDArray[np.int64]]  # per attribute: each class's code at its level
    sizes: npt.NDArray[np.int64]
    hists: dict[str, SensitiveHistogram] | None

    @property
    def nbytes(self) -> int:
        return int(self.sizes.nbytes * (1 + len(self.codes)))


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


class LatticeEvaluator:
    """Evaluate lattice nodes by rolling up the classes of the original table.

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
    """

    def __init__(
        self,
        base: ClassStats,
        hierarchies: dict[str, Hierarchy],
        models: Sequence[PrivacyModel],
        max_suppressed: int,
        metric: Metric,
        context: MetricContext,
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
        for j, attr in enumerate(base.columns):
            mappings, labels = hierarchies[attr].generalizations(base.domains[j])
            self._maps.append(list(mappings.astype(np.int64)))
            self._labels.append(labels)
        self._sens = dict(base.sensitive)
        self._keycols = [
            np.ascontiguousarray(base.keys[:, j], dtype=np.int64) for j in range(len(base.columns))
        ]
        self._code_cache: dict[tuple[int, int], npt.NDArray[np.int64]] = {}
        self._dom_sizes: dict[int, npt.NDArray[np.float64]] = {}  # rows per domain code
        self._pair_cache: dict[tuple[int, int, int, int], npt.NDArray[np.int64]] = {}
        self._pair_bytes = 0
        #: Memory the cache of paired codes may use.
        self.pair_cache_bytes = 256 * 2**20
        self._sparse: (
            dict[
                str,
                tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64], int],
            ]
            | None
        ) = None
        self._needs_sensitive = any(m.sensitive_attributes for m in self.models)
        #: Called as ``on_classes(levels, sizes)`` whenever the classes of a node of every
        #: quasi-identifier are computed (a search raises the bounds of its generalizations).
        self.on_classes: Callable[[Node, npt.NDArray[np.int64]], None] | None = None
        self._float_sizes: npt.NDArray[np.float64] | None = None
        self._snapshots: OrderedDict[Node, _Snapshot] = OrderedDict()
        self._snapshot_bytes = 0
        #: Memory the snapshots (classes of evaluated nodes, rolled up from) may use.
        self.snapshot_cache_bytes = 128 * 2**20
        #: How many snapshots are kept (each node looks through them for the nearest).
        self.snapshot_count = 16
        self._level_maps: dict[tuple[int, int, int], npt.NDArray[np.int64]] = {}
        self._recent: OrderedDict[Node, ClassStats] = OrderedDict()

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

    def _paired(
        self, cols: Sequence[int], levels: Sequence[int]
    ) -> tuple[list[npt.NDArray[np.int64]], list[int]]:
        """Codes of the base classes by pairs of attributes (half the work per node).

        ``code_a * card_b + code_b`` of attributes ``a, b`` at their levels is cached while
        the cache stays under :attr:`pair_cache_bytes`; the node's classes are the same.
        """
        codes: list[npt.NDArray[np.int64]] = []
        cards: list[int] = []
        for group in self._pairs(cols, levels):
            if len(group) == 2:
                (a, la, ca), (b, lb, cb) = group
                hit = self._pair_cache.get((a, la, b, lb))
                if hit is None:
                    hit = self.level_codes(a, la) * cb + self.level_codes(b, lb)
                    if self._pair_bytes + hit.nbytes <= self.pair_cache_bytes:
                        self._pair_cache[(a, la, b, lb)] = hit
                        self._pair_bytes += hit.nbytes
                codes.append(hit)
                cards.append(ca * cb)
            else:
                ((j, lv, c),) = group
                codes.append(self.level_codes(j, lv))
                cards.append(c)
        return codes, cards

    def _pairs(
        self, cols: Sequence[int], levels: Sequence[int]
    ) -> list[tuple[tuple[int, int, int], ...]]:
        """How :meth:`_paired` groups the attributes: pairs (and one single) of
        ``(attribute, level, labels)``, attributes at a one-label level left out."""
        items = [(j, int(lv), self.level_size(j, lv)) for j, lv in zip(cols, levels)]
        items = [it for it in items if it[2] > 1]  # a column at its root adds nothing
        return [tuple(items[i : i + 2]) for i in range(0, len(items), 2)]

    def _level_map(self, j: int, low: int, high: int) -> npt.NDArray[np.int64]:
        """The code at level ``high`` of each code at level ``low`` of attribute ``j``."""
        hit = self._level_maps.get((j, low, high))
        if hit is None:
            hit = np.zeros(self.level_size(j, low), dtype=np.int64)
            hit[self._maps[j][low]] = self._maps[j][high]
            self._level_maps[(j, low, high)] = hit
        return hit

    def _nearest_snapshot(self, levels: Node, with_hists: bool) -> _Snapshot | None:
        """The kept snapshot of a node below ``levels`` with the fewest classes, if any has
        fewer than half the base classes."""
        best: _Snapshot | None = None
        for snap in self._snapshots.values():
            if (with_hists and snap.hists is None) or any(
                a > b for a, b in zip(snap.levels, levels)
            ):
                continue
            if best is None or snap.sizes.size < best.sizes.size:
                best = snap
        if best is not None:
            self._snapshots.move_to_end(best.levels)
        return best

    def _keep_snapshot(self, snap: _Snapshot) -> None:
        """Keep a node's classes to roll up from (least recently used dropped first)."""
        if snap.sizes.size * 2 > self.base.n_classes or snap.levels in self._snapshots:
            return
        self._snapshots[snap.levels] = snap
        self._snapshot_bytes += snap.nbytes
        while (
            self._snapshot_bytes > self.snapshot_cache_bytes
            or len(self._snapshots) > self.snapshot_count
        ):
            _, old = self._snapshots.popitem(last=False)
            self._snapshot_bytes -= old.nbytes

    def attribute_sizes(
        self,
        attribute: int,
        level: int,
        *,
        domain_sizes: npt.NDArray[np.float64] | None = None,
    ) -> npt.NDArray[np.int64]:
        """The class sizes of one attribute on its own at ``level`` (non-empty classes in
        code order), as ``stats((level,), [attribute]).sizes`` but summed through the
        hierarchy from the attribute's domain counts instead of over the base classes.

        Parameters
        ----------
        attribute : int
            The index of the quasi-identifier.
        level : int
            Its generalization level.
        domain_sizes : ndarray of float64, optional
            The records of each code of the attribute's base domain, if the caller has
            them (else summed over the base classes once and kept).

        Returns
        -------
        ndarray of int64
        """
        maps = self._maps[attribute]
        if domain_sizes is not None:
            self._dom_sizes[attribute] = domain_sizes
        elif attribute not in self._dom_sizes:
            if self._float_sizes is None:  # converted once for every attribute
                self._float_sizes = np.asarray(self.base.sizes, dtype=np.float64)
            self._dom_sizes[attribute] = np.asarray(
                np.bincount(
                    self._keycols[attribute], weights=self._float_sizes, minlength=maps[0].size
                ),
                dtype=np.float64,
            )
        dom = self._dom_sizes[attribute]
        card = self.level_size(attribute, level)
        counts = np.bincount(maps[level], weights=dom, minlength=card)
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
        """Return the classes of the node ``levels``, rolled up from the base classes.

        With ``attributes`` (indices of quasi-identifiers), ``levels`` gives the levels of
        those attributes only and the others are projected out (Incognito's subsets).
        Keys and sensitive histograms can be skipped when only sizes are needed.
        """
        base = self.base
        cols = list(range(len(base.columns))) if attributes is None else list(attributes)
        want_hist = with_sensitive and bool(self._sens)
        node = tuple(int(x) for x in levels)
        whole = attributes is None  # a node of every quasi-identifier: snapshots apply
        snap = self._nearest_snapshot(node, want_hist) if whole else None
        cards = [self.level_size(j, lv) for j, lv in zip(cols, levels)]
        pairs = None
        if snap is not None:  # roll up from a kept node below: fewer classes to merge
            codes = [
                self._level_map(j, snap.levels[j], lv)[snap.codes[j]] for j, lv in zip(cols, node)
            ]
            weights = snap.sizes
        elif with_keys:
            codes = [self.level_codes(j, lv) for j, lv in zip(cols, levels)]
            weights = base.sizes
        else:
            pairs = self._pairs(cols, levels)
            codes, pair_cards = self._paired(cols, levels)
            weights = base.sizes
        ids, sizes, merged = roll_up(
            codes,
            cards if pairs is None else pair_cards,
            weights,
            need_ids=want_hist,
            need_codes=with_keys or whole,  # a whole node's codes: a snapshot to roll up from
        )
        g = int(sizes.size)
        if whole and self.on_classes is not None:
            self.on_classes(node, sizes)
        if want_hist:
            hists = self._hists(ids, g) if snap is None else _rolled(snap.hists, ids, g)
        else:
            hists = {}
        per_attribute = merged if pairs is None else _unpair(merged, pairs, len(cols), g)
        if whole:
            self._keep_snapshot(_Snapshot(node, per_attribute, sizes, hists if want_hist else None))
        keys = None
        if with_keys:
            keys = np.empty((g, len(cols)), dtype=np.int32)
            for j in range(len(cols)):
                keys[:, j] = per_attribute[j]
        return ClassStats(
            columns=tuple(base.columns[j] for j in cols),
            levels=tuple(levels),
            sizes=sizes,
            n_rows=base.n_rows,
            keys=keys,
            domains=tuple(self._labels[j][lv] for j, lv in zip(cols, levels))
            if with_keys
            else None,
            sensitive=hists,
        )

    def _hists(self, ids: npt.NDArray[np.integer] | None, g: int) -> dict[str, SensitiveHistogram]:
        """The sensitive histograms of ``g`` classes, ``ids`` the class of each base class."""
        assert ids is not None
        hists = {}
        for name, (cls, val, cnt, _) in self.sparse_histograms().items():
            hists[name] = SensitiveHistogram.from_triplets(
                self._sens[name].values, ids[cls], val, cnt, n_classes=g
            )
        return hists

    def classes(self, levels: Node) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The classes of the node ``levels``: the class of every base class and the class
        sizes (for :meth:`refine` and :meth:`evaluate_classes`)."""
        codes, cards = self._paired(list(range(len(self.base.columns))), levels)
        ids, sizes, _ = roll_up(codes, cards, self.base.sizes, need_ids=True, need_codes=False)
        assert ids is not None
        return ids, sizes

    def refine(
        self, ids: npt.NDArray[np.integer], n_classes: int, attribute: int, level: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """The classes of a node from those of a node that differs only in ``attribute``,
        which the new node takes to a lower (finer) ``level``.

        Hierarchy levels nest (every label has one parent), so the new node's classes are
        the old ones split by the attribute's labels at ``level``: a grouping of two
        columns instead of one per attribute.

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
        ids, sizes : ndarray of int64
            As :meth:`classes` for the new node.
        """
        card = self.level_size(attribute, level)
        new, sizes, _ = roll_up(
            [np.asarray(ids, dtype=np.int64), self.level_codes(attribute, level)],
            [int(n_classes), card],
            self.base.sizes,
            need_ids=True,
            need_codes=False,
        )
        assert new is not None
        return new, sizes

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
        if with_loss:  # the codes of any base class of each class (its members share them)
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
        stats = self.stats(levels, with_keys=False, with_sensitive=False)
        return int(stats.sizes[stats.sizes < self.mcs].sum()) <= self.max_suppressed

    def evaluate(
        self, levels: Node, *, with_loss: bool = True, attributes: Sequence[int] | None = None
    ) -> NodeResult:
        """Evaluate the node: classes, violations, suppression and (optionally) loss.

        With ``attributes``, the node is one of a subset of the quasi-identifiers and no loss
        is computed.
        """
        self._count(attributes, levels)
        with_loss = with_loss and attributes is None
        with_keys = with_loss and self.metric.needs_keys
        node = tuple(int(x) for x in levels)
        stats = self._recent.get(node) if attributes is None else None
        if stats is None or (with_keys and stats.keys is None):
            stats = self.stats(
                levels, attributes, with_keys=with_keys, with_sensitive=self._needs_sensitive
            )
            if attributes is None:  # a check and then the loss of the same node: one roll-up
                self._recent[node] = stats
                while len(self._recent) > 8:
                    self._recent.popitem(last=False)
        return self._judge(levels, stats, with_loss=with_loss)

    def _judge(self, levels: Node, stats: ClassStats, *, with_loss: bool) -> NodeResult:
        """The verdicts of the models on a node's classes, suppression and (optionally) loss."""
        small = stats.sizes < self.mcs
        mcs_rows = int(stats.sizes[small].sum())
        violating = small.copy()
        for model in self.models:
            violating |= ~model.class_ok(stats)
        suppressed = int(stats.sizes[violating].sum())
        res = NodeResult(
            levels=tuple(int(x) for x in levels),
            stats=stats,
            violating=violating,
            suppressed_rows=suppressed,
            anonymous=suppressed <= self.max_suppressed,
            mcs_ok=mcs_rows <= self.max_suppressed,
        )
        if with_loss and res.anonymous:
            res.loss = float(self.metric.loss(stats, violating, self.context))
        return res


def _unpair(
    merged: list[npt.NDArray[np.int64]],
    pairs: list[tuple[tuple[int, int, int], ...]],
    n_columns: int,
    g: int,
) -> list[npt.NDArray[np.int64]]:
    """Per attribute codes from the codes of :meth:`LatticeEvaluator._pairs`' groups."""
    out = [np.zeros(g, dtype=np.int64) for _ in range(n_columns)]
    for codes, group in zip(merged, pairs):
        if len(group) == 2:
            (a, _, _), (b, _, cb) = group
            out[a], out[b] = np.divmod(codes, cb)
        else:
            out[group[0][0]] = codes
    return out


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
