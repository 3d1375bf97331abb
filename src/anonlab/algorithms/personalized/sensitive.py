"""SA_Generalization (Song et al. 2015, section 6), for every class at once.

For a record ``t*_j`` whose Pleak is above its limit, the paper raises the sensitive value of
the record of the leakage collection ``LC(t*_j)`` with the largest information left to its
parent, again and again until ``t*_j`` meets its limit (a record whose value is the root
leaves ``LC``). anonlab runs it as the paper does with three precisions:

* one pass over the records can break a record it already fixed (a value raised onto the
  branch of another record raises that record's leakage), so the passes repeat, in the same
  order, until no record is over its limit;
* within a class, the records with the same original value have the same Pleak (Definition 8
  depends on the value only), so they are taken together, in the order of their first record,
  and fixed to the lowest limit among them;
* the record of ``LC(t*_j)`` with the largest information left is one at the lowest node of
  ``t*_j``'s branch that holds records (fewest leaves, Definition 9; the class shares its
  quasi-identifiers); raising one record from node ``x`` (``a`` leaves) to its parent (``c``
  leaves) lowers the mass on ``t*_j``'s value by ``1/a - 1/c``, so the records the paper
  raises one by one from ``x`` are raised in one move, as many as ``t*_j`` needs (all of them
  when the parent has no more leaves).

A class in which a record stays over its limit with every record of its leakage collection at
the root is *stuck*: no generalization of its sensitive values can help it, and the caller
merges it with a neighbour.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from anonlab._typing import BoolArray, FloatArray, IntArray
from anonlab.data.hierarchy import Hierarchy
from anonlab.metrics.info_left import info_left_by_level
from anonlab.models.per_record import RecordFractions

__all__ = ["SensitiveOutcome", "sa_generalization"]


@dataclass
class SensitiveOutcome:
    """What SA_Generalization did to the classes it was given.

    Attributes
    ----------
    levels : ndarray of int64
        The level of each given row's sensitive value.
    stuck : ndarray of bool
        Per class id, whether a record stays over its limit.
    moves : int
        Raises made (each a batch of records from one node to its parent).
    steps : int
        Rounds of moves (one per class that still has a record over its limit).
    """

    levels: IntArray
    stuck: BoolArray
    moves: int
    steps: int


def tree_arrays(
    hierarchy: Hierarchy, categories: npt.NDArray[np.object_]
) -> tuple[IntArray, FloatArray]:
    """The ancestor code of each category at each level and the leaves under it (``Nleaf``,
    read back from ILeft_value: ``Nleaf = N (1 - ILeft) + 1``)."""
    mappings, _ = hierarchy.generalizations(categories)
    total = float(hierarchy.leaves.size)
    leaves = np.rint(total * (1.0 - info_left_by_level(hierarchy, categories)) + 1.0)
    return mappings.astype(np.int64), leaves


def sa_generalization(
    row_class: IntArray,
    codes: IntArray,
    limits: FloatArray,
    rank: IntArray,
    ancestors: IntArray,
    leaves: FloatArray,
) -> SensitiveOutcome:
    """Raise sensitive values until every record of every class meets its limit.

    Parameters
    ----------
    row_class : ndarray of int64
        The class of each row given (any integers).
    codes : ndarray of int64
        Each row's sensitive value (category code).
    limits : ndarray of float
        Each row's limit.
    rank : ndarray of int64
        Each row's position in the order the paper walks the records (the sorted table).
    ancestors : ndarray of int64, shape (levels, categories)
        The label code of each category at each level of the sensitive tree.
    leaves : ndarray of float, shape (levels, categories)
        The leaves under each category's ancestor at each level.

    Returns
    -------
    SensitiveOutcome
    """
    top = ancestors.shape[0] - 1
    classes, cls = np.unique(row_class, return_inverse=True)
    cls = cls.reshape(-1).astype(np.int64)
    sizes = np.bincount(cls).astype(np.float64)
    # cells: (class, value), in class order and then the order of their first record
    width = int(codes.max()) + 1 if codes.size else 1
    cell_key, cell_of = np.unique(cls * width + codes, return_inverse=True)
    cell_of = cell_of.reshape(-1)
    count = np.bincount(cell_of)
    first = np.full(cell_key.size, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, cell_of, rank)
    lowest = np.full(cell_key.size, np.inf)
    np.minimum.at(lowest, cell_of, limits)
    cell_class = cell_key // width
    # only the classes with a record over its limit while every value is a leaf need work
    work = np.zeros(classes.size, dtype=bool)
    leaf_pleak = RecordFractions.shares(count, sizes[cell_class].astype(np.int64))
    work[cell_class[~leaf_pleak.within(lowest)]] = True  # exactly, as the model judges
    order = np.lexsort((first, cell_class))
    order = order[work[cell_class[order]]]
    renumber = np.full(cell_key.size, -1, dtype=np.int64)
    renumber[order] = np.arange(order.size)
    cell_of = renumber[cell_of]  # -1: a row of a class left as it is
    state = _Cells.build(cell_class[order], (cell_key % width)[order], count[order],
                         lowest[order], sizes, ancestors, leaves)  # fmt: skip
    stuck = np.zeros(classes.size, dtype=bool)
    moves = steps = 0
    while True:
        live = state.live()
        if live is None:
            break
        target, over_class = live
        level, node_mass = state.lowest_mass(target)
        blocked = level < 0
        stuck[over_class[blocked]] = True
        state.drop(over_class[blocked])
        go = ~blocked
        if not go.any():
            continue
        state.raise_mass(target[go], level[go], node_mass[go])
        moves += int(go.sum())
        steps += 1
    levels = state.row_levels(cell_of, rank, top)
    return SensitiveOutcome(levels, stuck, moves, steps)


@dataclass
class _Cells:
    """The (class, value) cells of the classes still being fixed and where their records sit.

    ``placed[c, l]`` records of cell ``c`` have their value raised to level ``l``;
    ``key[l, c]`` numbers the (class, node at level ``l``) of cell ``c``'s value, so that the
    records on one node of one class are the cells sharing a key.
    """

    cls: IntArray
    value: IntArray
    placed: IntArray
    limit: FloatArray
    size: FloatArray  # per class
    ancestors: IntArray
    leaves: FloatArray
    key: IntArray
    n_keys: list[int]
    alive: BoolArray  # per class: still being fixed
    cursor: IntArray  # per class: the cell the paper's walk is at

    @classmethod
    def build(
        cls,
        cell_class: IntArray,
        cell_value: IntArray,
        count: IntArray,
        limit: FloatArray,
        size: FloatArray,
        ancestors: IntArray,
        leaves: FloatArray,
    ) -> _Cells:
        """The cells with their records on their own values (level 0), keyed per level."""
        levels = ancestors.shape[0]
        placed = np.zeros((cell_class.size, levels), dtype=np.int64)
        placed[:, 0] = count
        key = np.empty((levels, cell_class.size), dtype=np.int64)
        n_keys = []
        for lv in range(levels):
            span = int(ancestors[lv].max()) + 1
            _, inv = np.unique(cell_class * span + ancestors[lv, cell_value], return_inverse=True)
            key[lv] = inv.reshape(-1)
            n_keys.append(int(inv.max()) + 1 if inv.size else 0)
        first = np.searchsorted(cell_class, np.arange(size.size))
        return cls(cell_class, cell_value, placed, limit, size, ancestors, leaves, key, n_keys,
                   np.ones(size.size, dtype=bool), first.astype(np.int64))  # fmt: skip

    def branch_counts(self) -> IntArray:
        """Per cell and level, the records of its class on the node of its value's branch at
        that level (shape ``(cells, levels)``)."""
        out = np.zeros(self.placed.shape, dtype=np.int64)
        for lv in range(self.placed.shape[1]):
            on = np.bincount(self.key[lv], weights=self.placed[:, lv], minlength=self.n_keys[lv])
            out[:, lv] = np.rint(on[self.key[lv]]).astype(np.int64)
        return out

    def pleak(self, cells: IntArray, counts: IntArray) -> RecordFractions:
        """Pleak (Definition 8) of the records of ``cells`` with ``counts`` records on their
        branch per level, exactly: ``sum_l counts[l] / Nleaf(l)`` over the class's size."""
        return RecordFractions(
            counts,
            np.rint(self.leaves.T).astype(np.int64),  # per value: its branch's leaves
            self.value[cells],
            self.size[self.cls[cells]].astype(np.int64),
        )

    def over(self, cells: IntArray, counts: IntArray) -> BoolArray:
        """Whether the records of ``cells`` with ``counts`` on their branch are over their
        limit (exactly, as the model judges)."""
        out: BoolArray = ~self.pleak(cells, counts).within(self.limit[cells])
        return out

    def live(self) -> tuple[IntArray, IntArray] | None:
        """The cell each class over its limit works on next (the first over its limit from
        the class's cursor on, cyclically) and that class; None when no class is over."""
        every = np.arange(self.cls.size, dtype=np.int64)
        over = self.over(every, self.branch_counts())
        over &= self.alive[self.cls]
        cells = np.flatnonzero(over)
        if cells.size == 0:
            return None
        c = self.cls[cells]
        span = np.bincount(self.cls, minlength=self.size.size)
        ahead = (cells - self.cursor[c]) % span[c]
        pick = np.lexsort((ahead, c))
        keep = np.ones(pick.size, dtype=bool)
        keep[1:] = c[pick][1:] != c[pick][:-1]
        target = cells[pick][keep]
        klass = self.cls[target]
        self.cursor[klass] = target
        return target.astype(np.int64), klass.astype(np.int64)

    def lowest_mass(self, target: IntArray) -> tuple[IntArray, IntArray]:
        """For each target cell, the lowest level below the root at which the node of its
        branch holds records (-1: none), and how many."""
        levels = self.placed.shape[1]
        masses = np.zeros((target.size, max(levels - 1, 0)), dtype=np.int64)
        for lv in range(levels - 1):
            on = np.bincount(self.key[lv], weights=self.placed[:, lv], minlength=self.n_keys[lv])
            masses[:, lv] = np.rint(on[self.key[lv, target]]).astype(np.int64)
        has = masses > 0
        level = np.where(has.any(axis=1), np.argmax(has, axis=1), -1)
        mass = np.where(level >= 0, masses[np.arange(target.size), np.maximum(level, 0)], 0)
        return level.astype(np.int64), mass.astype(np.int64)

    def raise_mass(self, target: IntArray, level: IntArray, available: IntArray) -> None:
        """Raise, per target, as many records as it needs from the lowest node of its branch
        that holds records to that node's parent (cells in order, each as far as it has)."""
        v = self.value[target]
        a = self.leaves[level, v]
        c = self.leaves[level + 1, v]
        drop = 1.0 / a - 1.0 / c
        klass = self.cls[target]
        branch = self.branch_counts()[target]
        mass = (branch / self.leaves[:, v].T).sum(axis=1)
        bound = self.size[klass] * self.limit[target]
        with np.errstate(divide="ignore", invalid="ignore"):
            want = np.where(drop > 0, np.ceil((mass - bound) / drop), available)
        count = np.clip(want, 1, available).astype(np.int64)
        rows = np.arange(target.size)

        def fits(raised: IntArray) -> BoolArray:
            """Whether each target is within its limit once ``raised`` records moved up."""
            moved = branch.copy()
            moved[rows, level] -= raised
            moved[rows, level + 1] += raised
            return ~self.over(target, moved)

        # the float estimate corrected exactly: one fewer when that is already enough, one
        # more when it falls short by one
        cut = drop > 0
        fewer = np.maximum(count - 1, 1)
        count = np.where(cut & (fewer < count) & fits(fewer), fewer, count)
        more = np.minimum(count + 1, available)
        count = np.where(cut & (more > count) & ~fits(count) & fits(more), more, count)
        # the cells of each target's class on the same node at that level
        lv_of_class = np.full(self.size.size, -1, dtype=np.int64)
        lv_of_class[klass] = level
        node_of_class = np.full(self.size.size, -1, dtype=np.int64)
        node_of_class[klass] = self.key[level, target]
        todo = np.zeros(self.size.size, dtype=np.int64)
        todo[klass] = count
        lv = lv_of_class[self.cls]
        cells = np.flatnonzero(lv >= 0)
        lvc = lv[cells]
        same = self.key[lvc, cells] == node_of_class[self.cls[cells]]
        cells, lvc = cells[same], lvc[same]
        have = self.placed[cells, lvc]
        behind = np.cumsum(have) - have
        start = np.searchsorted(self.cls[cells], self.cls[cells], side="left")
        behind = behind - behind[start]  # records on the node in the class's earlier cells
        take = np.clip(todo[self.cls[cells]] - behind, 0, have)
        self.placed[cells, lvc] -= take
        self.placed[cells, lvc + 1] += take

    def drop(self, klass: IntArray) -> None:
        """Stop working on these classes (stuck)."""
        self.alive[klass] = False

    def row_levels(self, cell_of: IntArray, rank: IntArray, top: int) -> IntArray:
        """The level of each row's value: a cell's records in walk order take its lowest
        levels first (a row of no cell, ``-1``, keeps its value)."""
        out = np.zeros(cell_of.size, dtype=np.int64)
        mine = np.flatnonzero(cell_of >= 0)
        order = mine[np.lexsort((rank[mine], cell_of[mine]))]
        c = cell_of[order]
        start = np.searchsorted(c, c, side="left")
        within = np.arange(c.size) - start
        reached = np.cumsum(self.placed, axis=1)[c]
        out[order] = np.minimum((reached <= within[:, None]).sum(axis=1), top)
        return out
