"""Utility-driven adaptive clustering (Song et al. 2015, section 6, Anonymity_Generalization
lines 3-13): sort on the quasi-identifiers, then let each tuple join the current group or
start the next one, whichever leaves it more information.

The paper does not say in which order of the quasi-identifiers the table is sorted. anonlab
sorts as the out-of-core blocks are cut (:attr:`~anonlab.release.problem.Problem.sort_order`:
ascending cardinality, each column's values in its hierarchy's leaf order, Murakami & Uno's
section 3.2.3): each block is then a run of the order the whole table is scanned in, and
its groups are those of the whole table but at its ends. (Scanned in the job's column
order, a block cut from the other order is a slab whose groups differ from the whole
table's: on 1,000,000 Adult rows the blocks of 100,000 lost 7.9 % more. The order matters
for the loss too: with a column of many values first, as age, the groups of each of its
values mix every other column.)

The groups are runs of the sorted table. A group's label on a quasi-identifier is the lowest
level of its hierarchy at which all its members agree (the lowest common ancestor), within
the problem's level bounds. Equal tuples form a *block* and stay together: a tuple equal to
the previous one always joins its group (its box does not widen and the group that would
start at it is no tighter).

Line 6 of the algorithm is garbled in the extracted text ("if (ILeft_table(QGi tl) -
ILeft_table (QGi) ILeft_tuple (tl { the k tuples of T from tl }))"). The reading taken here:
``ILeft_table`` of a group is the *sum* of its tuples' ILeft_tuple (the mean of Definition 11
times the group's size), and tuple ``t_l`` joins ``QG_i`` iff

    ILeft_table(QG_i + t_l) - ILeft_table(QG_i) >= ILeft_tuple(t_l in the group of the
    tuples of T from t_l)

that is, iff the information the table keeps by adding ``t_l`` to the current group (its own
tuple in the widened box, minus what the members lose to the widening) is at least what
``t_l`` keeps as the first tuple of the next group. With the mean of Definition 11 the left
side would be 0 for a tuple that fits the group exactly, which then would never join. Ties
join. A group first takes tuples until it has its required size (``the front k tuples``);
anonlab requires ``max(k, ceil(1 / limit))`` for every member (Theorem 1: a limit below
``1 / |group|`` cannot be met while the record's own value stays a leaf), and the group
starting at ``t_l`` is sized the same way. The sensitive attribute adds the same constant to
both sides before its values are generalized, so the comparison reads the quasi-identifiers.

The scan is sequential by nature (a group's end decides where the next starts). It runs in
lockstep on segments of the table (*lanes*), a window of blocks per lane per step: every lane
starts a group at its segment's first block; a lane that has passed its segment's end goes
on until it starts a group at a block where the next segment's lane started one (from there
on both scans are the same, the decisions depending only on where the group started); the
groups of the whole table are then read from lane to lane. A lane that does not meet the
next lane's scan soon goes on alone with a growing window.

References
----------
.. [1] J. Song, L. Huang, G. Wang, Y. Kang and H. Liu, "The k-anonymization method
   satisfying personalized privacy preservation", Chemical Engineering Transactions 46
   (2015), sections 5-6.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from anonlab._typing import BoolArray, FloatArray, IntArray
from anonlab.metrics.info_left import info_left_by_level
from anonlab.models.per_record import decimal_fraction
from anonlab.release.problem import Problem

__all__ = ["QuasiIdentifierIndex", "RangeMax", "adaptive_clustering", "group_needs"]


#: Blocks per lane (segment length) and blocks per window of the lockstep scan.
_SEGMENT = 256
_WINDOW = 16
#: Lockstep steps a lane gets after its segment to meet the next lane's scan.
_SYNC_STEPS = 8
#: Slack of the comparison of line 6 (floating sums of leaf ratios).
_EPS = 1e-12


class RangeMax:
    """Maxima of ranges of an integer array (a sparse table: ``O(n log n)`` to build,
    ``O(1)`` per query, vectorised).

    Parameters
    ----------
    values : array_like of int
    """

    def __init__(self, values: npt.ArrayLike) -> None:
        v = np.asarray(values, dtype=np.int64)
        self._tables = [v]
        step = 1
        while 2 * step <= v.size:
            last = self._tables[-1]
            self._tables.append(np.maximum(last[:-step], last[step:]))
            step *= 2

    def query(self, lo: npt.ArrayLike, hi: npt.ArrayLike) -> IntArray:
        """``max(values[lo:hi + 1])`` per pair (0 where ``hi < lo``)."""
        a = np.asarray(lo, dtype=np.int64)
        b = np.asarray(hi, dtype=np.int64)
        empty = b < a
        span = np.where(empty, 1, b - a + 1)
        j = np.floor(np.log2(span)).astype(np.int64)
        out = np.zeros(np.broadcast(a, b).shape, dtype=np.int64)
        for level in np.unique(j).tolist():
            at = (j == level) & ~empty
            t = self._tables[level]
            out[at] = np.maximum(t[a[at]], t[b[at] - (1 << level) + 1])
        return out


@dataclass
class QuasiIdentifierIndex:
    """The table sorted on its quasi-identifiers, in blocks of equal tuples.

    Attributes
    ----------
    order : ndarray of int64
        The rows in sorted order (ties in row order).
    offsets : ndarray of int64, shape (blocks + 1,)
        Block ``b`` is ``order[offsets[b]:offsets[b + 1]]``.
    rep : ndarray of int64, shape (quasi-identifiers, blocks)
        Each block's category code on each quasi-identifier.
    pair : ndarray of int64, shape (quasi-identifiers, blocks)
        The lowest level at which block ``b`` and block ``b - 1`` agree (0 for block 0).
    forced : ndarray of bool, shape (blocks,)
        Blocks that cannot share a group with the previous block (no common label within
        the level bounds: a hierarchy with several top labels, or a ``max_level``).
    ancestors : list of ndarray of int64
        Per quasi-identifier, the label code of each category at each level.
    info : list of ndarray of float
        Per quasi-identifier, ILeft_value (Definition 9) of each category at each level.
    low : ndarray of int64
        The lowest level allowed per quasi-identifier.
    weights : ndarray of float
        The attributes' weights, summing to 1 (Definition 10's mean by default).
    """

    order: IntArray
    offsets: IntArray
    rep: IntArray
    pair: IntArray
    forced: BoolArray
    ancestors: list[IntArray]
    info: list[FloatArray]
    low: IntArray
    weights: FloatArray
    _range: list[RangeMax] = field(default_factory=list, repr=False)

    @classmethod
    def of(cls, problem: Problem) -> QuasiIdentifierIndex:
        """Sort ``problem``'s table on its quasi-identifiers (in
        :attr:`~anonlab.release.problem.Problem.sort_order`, each in its hierarchy's leaf
        order, a null last) and find its blocks and the agreement levels of neighbouring
        blocks."""
        table = problem.table
        keys: list[IntArray] = []
        codes: list[IntArray] = []
        ancestors: list[IntArray] = []
        info: list[FloatArray] = []
        for q in problem.quasi_identifiers:
            col = table[q]
            h = problem.hierarchies[q]
            leaf = h.leaf_index(col.categories).astype(np.int64)
            position = np.where(leaf < 0, np.iinfo(np.int64).max, leaf)
            rank = np.argsort(np.argsort(position, kind="stable"), kind="stable")
            keys.append(rank[col.codes])
            codes.append(col.codes.astype(np.int64))
            mappings, _ = h.generalizations(col.categories)
            ancestors.append(mappings.astype(np.int64))
            info.append(info_left_by_level(h, col.categories))
        n = table.n_rows
        at = {q: j for j, q in enumerate(problem.quasi_identifiers)}
        significant = [keys[at[q]] for q in problem.sort_order]  # most significant first
        order = np.lexsort([np.arange(n), *reversed(significant)]).astype(np.int64)
        sorted_codes = np.stack([c[order] for c in codes]) if codes else np.zeros((0, n))
        change = np.zeros(n, dtype=bool)
        change[0] = True
        change[1:] = (sorted_codes[:, 1:] != sorted_codes[:, :-1]).any(axis=0)
        first = np.flatnonzero(change).astype(np.int64)
        offsets = np.append(first, n).astype(np.int64)
        rep = sorted_codes[:, first].astype(np.int64)
        nb = first.size
        pair = np.zeros((len(codes), nb), dtype=np.int64)
        forced = np.zeros(nb, dtype=bool)
        low = np.array([problem.level_bounds[q][0] for q in problem.quasi_identifiers])
        high = np.array([problem.level_bounds[q][1] for q in problem.quasi_identifiers])
        for j, anc in enumerate(ancestors):
            agree = anc[:, rep[j, 1:]] == anc[:, rep[j, :-1]]  # (levels, blocks - 1)
            level = np.argmax(agree, axis=0)
            never = ~agree.any(axis=0) | (level > high[j])
            pair[j, 1:] = np.where(never, high[j], level)
            forced[1:] |= never
        raw = np.array([float(problem.weights.get(q, 1.0)) for q in problem.quasi_identifiers])
        weights = np.ones_like(raw) if raw.max() <= 0 else raw / raw.max()
        out = cls(order, offsets, rep, pair, forced, ancestors, info, low.astype(np.int64),
                  weights / weights.sum())  # fmt: skip
        out._range = [RangeMax(p) for p in pair]
        return out

    @property
    def n_blocks(self) -> int:
        """Blocks of equal tuples."""
        return int(self.offsets.size - 1)

    @property
    def counts(self) -> IntArray:
        """Rows per block."""
        out: IntArray = np.diff(self.offsets)
        return out

    def box(self, first: npt.ArrayLike, last: npt.ArrayLike) -> IntArray:
        """The label level of each group of blocks ``first..last`` on each quasi-identifier:
        shape (quasi-identifiers, groups), within the level bounds."""
        a = np.asarray(first, dtype=np.int64)
        b = np.asarray(last, dtype=np.int64)
        lv = np.stack([r.query(a + 1, b) for r in self._range]).reshape(len(self._range), -1)
        out: IntArray = np.maximum(lv, self.low[:, None])
        return out

    def value(self, first: IntArray, levels: IntArray) -> FloatArray:
        """ILeft_tuple (Definition 10, quasi-identifiers) of the tuples of a group starting at
        block ``first`` with label ``levels`` (quasi-identifiers first; any trailing shape)."""
        total = np.zeros(np.shape(first), dtype=np.float64)
        for j, table in enumerate(self.info):
            lv = np.maximum(levels[j], self.low[j])
            total += self.weights[j] * table[lv, self.rep[j][first]]
        return total

    def labels(self, first: IntArray, levels: IntArray) -> IntArray:
        """A code per group and quasi-identifier for its label (shape (quasi-identifiers,
        groups)); two groups with equal codes release the same labels."""
        out = np.empty(levels.shape, dtype=np.int64)
        for j, anc in enumerate(self.ancestors):
            width = int(anc.max()) + 1
            out[j] = levels[j] * width + anc[levels[j], self.rep[j][first]]
        return out


def group_needs(limits: FloatArray, k: int, n_rows: int) -> IntArray:
    """The group size each record requires: ``max(k, ceil(1 / limit))`` (Theorem 1: the
    smallest ``b`` with ``1/b <= limit``, the limit read as the decimal it is written as,
    exactly), at most the table's rows."""
    lim = np.asarray(limits, dtype=np.float64)
    need = np.where(lim == np.inf, 1.0, float(max(n_rows, 1)))  # no limit; none possible
    for value in np.unique(lim[(lim > 0) & np.isfinite(lim)]).tolist():  # distinct limits
        f = decimal_fraction(value)
        need[lim == value] = float(-(-f.denominator // f.numerator))
    out: IntArray = np.clip(np.maximum(need, k), 1, max(n_rows, 1)).astype(np.int64)
    return out


@dataclass
class _Lanes:
    """The state of every lane: the group being built and the next block to decide."""

    start: IntArray  # the block the current group starts at
    next: IntArray  # the next block to decide
    rows: IntArray  # rows in the current group
    need: IntArray  # the size the current group requires
    levels: IntArray  # (quasi-identifiers, lanes): the current group's label levels
    value: FloatArray  # ILeft_tuple of the current group's tuples
    end: IntArray  # the block each lane stops at
    synced: BoolArray  # met the next lane's scan
    starts: list[tuple[IntArray, IntArray]] = field(default_factory=list)  # (lane, block)


class _Scan:
    """The lockstep scan of the adaptive clustering over the blocks of an index."""

    def __init__(self, index: QuasiIdentifierIndex, block_need: IntArray) -> None:
        self.index = index
        self.need = block_need
        self.counts = index.counts
        self.cum = np.concatenate([[0], np.cumsum(self.counts)])
        self.next_value = self._next_values()
        self.steps = 0

    def _next_values(self) -> FloatArray:
        """ILeft_tuple of the first tuple of the group that would start at each block: the
        blocks from it until the group has its required size (not past a forced block)."""
        ix = self.index
        nb = ix.n_blocks
        b = np.arange(nb, dtype=np.int64)
        most = RangeMax(self.need)
        target = self.need.copy()
        while True:
            end = np.searchsorted(self.cum, self.cum[b] + target, side="left")
            end = np.clip(end, b + 1, nb)
            grown = np.maximum(target, most.query(b, end - 1))
            if np.array_equal(grown, target):
                break
            target = grown
        forced = np.append(np.flatnonzero(ix.forced), nb)
        cut = forced[np.searchsorted(forced, b, side="right")]
        end = np.minimum(end, cut)
        return ix.value(b, ix.box(b, end - 1))

    def new_lanes(self, first: IntArray, end: IntArray) -> _Lanes:
        """Lanes starting a group at blocks ``first``, each stopping at ``end``."""
        ix = self.index
        lv = np.zeros((ix.rep.shape[0], first.size), dtype=np.int64)
        lanes = _Lanes(
            start=first.copy(),
            next=first + 1,
            rows=self.counts[first].copy(),
            need=self.need[first].copy(),
            levels=lv,
            value=ix.value(first, lv),
            end=end.copy(),
            synced=np.zeros(first.size, dtype=bool),
        )
        lanes.starts.append((np.arange(first.size, dtype=np.int64), first.copy()))
        return lanes

    def step(self, lanes: _Lanes, which: IntArray, width: int, marks: BoolArray | None) -> None:
        """Decide up to ``width`` blocks of each lane in ``which``: they join its group until
        the first that starts a new one (line 6, or a forced block). With ``marks``, a lane
        that starts a group at a marked block has met the next lane's scan and stops."""
        self.steps += 1
        ix = self.index
        nq = ix.rep.shape[0]
        base = lanes.next[which]
        idx = base[:, None] + np.arange(width, dtype=np.int64)[None, :]
        valid = idx < lanes.end[which][:, None]
        at = np.minimum(idx, ix.n_blocks - 1)
        start = lanes.start[which][:, None]
        levels = np.empty((nq, *idx.shape), dtype=np.int64)
        for j in range(nq):
            pair = np.where(valid, ix.pair[j][at], 0)
            levels[j] = np.maximum(lanes.levels[j, which][:, None], np.maximum.accumulate(pair, 1))
        after = ix.value(np.broadcast_to(start, idx.shape), levels)  # the group with block j
        before = np.concatenate([lanes.value[which][:, None], after[:, :-1]], axis=1)
        counts = np.where(valid, self.counts[at], 0)
        rows = lanes.rows[which][:, None] + np.cumsum(counts, axis=1) - counts
        needs = np.where(valid, self.need[at], 0)
        need_before = np.maximum(
            lanes.need[which][:, None],
            np.concatenate([np.zeros((idx.shape[0], 1), np.int64), needs[:, :-1]], axis=1),
        )
        need_before = np.maximum.accumulate(need_before, axis=1)
        gain = after - rows * (before - after)  # ILeft_table(QG + t) - ILeft_table(QG)
        leave = (rows >= need_before) & (gain < self.next_value[at] - _EPS)
        starts = valid & (ix.forced[at] | leave)
        has = starts.any(axis=1)
        j = np.where(has, np.argmax(starts, axis=1), valid.sum(axis=1) - 1)
        r = np.arange(idx.shape[0])
        # lanes that start a group at block idx[r, j]
        moved = which[has]
        block = idx[r, j][has]
        if moved.size:
            lanes.starts.append((moved, block))
            lanes.start[moved] = block
            lanes.next[moved] = block + 1
            lanes.rows[moved] = self.counts[block]
            lanes.need[moved] = self.need[block]
            lanes.levels[:, moved] = 0
            lanes.value[moved] = ix.value(block, np.zeros((nq, block.size), np.int64))
            if marks is not None:
                lanes.synced[moved] = marks[block]
        # lanes whose whole window joined
        grown = which[~has]
        if grown.size:
            jj = j[~has]
            rr = r[~has]
            lanes.next[grown] = idx[rr, jj] + 1
            lanes.rows[grown] = rows[rr, jj] + counts[rr, jj]
            lanes.need[grown] = np.maximum(need_before[rr, jj], needs[rr, jj])
            lanes.levels[:, grown] = levels[:, rr, jj]
            lanes.value[grown] = after[rr, jj]

    def run(self, lanes: _Lanes, which: IntArray, marks: BoolArray | None, limit: int) -> IntArray:
        """Step the lanes in lockstep until each reaches its end (or meets a marked block),
        at most ``limit`` steps; return the lanes still going."""
        live = which
        for _ in range(limit):
            live = live[(lanes.next[live] < lanes.end[live]) & ~lanes.synced[live]]
            if live.size == 0:
                break
            self.step(lanes, live, _WINDOW, marks)
        return live[(lanes.next[live] < lanes.end[live]) & ~lanes.synced[live]]


def adaptive_clustering(index: QuasiIdentifierIndex, block_need: IntArray) -> tuple[IntArray, int]:
    """The groups of the adaptive clustering (see the module docstring).

    Parameters
    ----------
    index : QuasiIdentifierIndex
    block_need : ndarray of int64
        The group size each block's records require (the largest of its rows').

    Returns
    -------
    starts : ndarray of int64
        The first block of each group, increasing (the first is 0).
    steps : int
        Window steps of the scan.
    """
    nb = index.n_blocks
    scan = _Scan(index, block_need)
    first = np.arange(0, nb, _SEGMENT, dtype=np.int64)
    seg_end = np.minimum(first + _SEGMENT, nb)
    lanes = scan.new_lanes(first, seg_end)
    every = np.arange(first.size, dtype=np.int64)
    scan.run(lanes, every, None, nb + 1)  # each lane over its own segment
    marks = np.zeros(nb, dtype=bool)
    for _, blocks in lanes.starts:
        marks[blocks] = True  # only the lanes' own segments were scanned so far
    phase1 = len(lanes.starts)
    lanes.end[:] = nb
    late = scan.run(lanes, every, marks, _SYNC_STEPS)  # into the next segments
    owner = np.minimum(np.arange(nb) // _SEGMENT, first.size - 1)
    by_lane = _starts_by_lane(lanes, phase1, first.size)
    late_set = set(late.tolist())
    chain: list[IntArray] = []
    lane, frm = 0, 0
    while True:
        own, more = by_lane[lane]
        if lane in late_set:  # this lane is on the table's scan: finish it alone
            more = _finish(scan, lanes, lane, marks, more)
        chain.append(own[own >= frm])
        if lanes.synced[lane]:
            chain.append(more[:-1])
            frm = int(more[-1])
            lane = int(owner[frm])
            continue
        chain.append(more)
        break
    starts = np.unique(np.concatenate(chain)).astype(np.int64)
    return _close_last(index, starts, block_need), scan.steps


def _starts_by_lane(lanes: _Lanes, phase1: int, n_lanes: int) -> list[tuple[IntArray, IntArray]]:
    """Per lane, the starts in its own segment and those after it, in block order."""
    out = []
    parts = [
        np.concatenate([p[i] for p in lanes.starts[a:b]]) if b > a else np.zeros(0, np.int64)
        for a, b in ((0, phase1), (phase1, len(lanes.starts)))
        for i in (0, 1)
    ]
    lane1, block1, lane2, block2 = parts
    o1 = np.lexsort((block1, lane1))
    o2 = np.lexsort((block2, lane2))
    lane1, block1, lane2, block2 = lane1[o1], block1[o1], lane2[o2], block2[o2]
    c1 = np.searchsorted(lane1, np.arange(n_lanes + 1))
    c2 = np.searchsorted(lane2, np.arange(n_lanes + 1))
    for i in range(n_lanes):  # a loop over lanes (segments), not rows
        out.append((block1[c1[i] : c1[i + 1]], block2[c2[i] : c2[i + 1]]))
    return out


def _finish(scan: _Scan, lanes: _Lanes, lane: int, marks: BoolArray, more: IntArray) -> IntArray:
    """Go on with one lane alone, with a window that doubles while no group ends, until it
    meets a later lane's scan or the table ends; return all its starts after its segment."""
    which = np.array([lane], dtype=np.int64)
    width = _WINDOW
    found = [more]
    while lanes.next[lane] < lanes.end[lane] and not lanes.synced[lane]:
        before = len(lanes.starts)
        scan.step(lanes, which, width, marks)
        ended = len(lanes.starts) > before
        if ended:
            found.append(lanes.starts[-1][1])
        width = _WINDOW if ended else min(width * 2, 1 << 16)
    return np.concatenate(found).astype(np.int64)


def _close_last(index: QuasiIdentifierIndex, starts: IntArray, block_need: IntArray) -> IntArray:
    """The last group of the table joins the one before when it is smaller than it requires
    (the table ran out of tuples), unless a forced block separates them."""
    if starts.size < 2:
        return starts
    last = int(starts[-1])
    rows = int(index.offsets[-1] - index.offsets[last])
    if rows >= int(block_need[last:].max()) or bool(index.forced[last]):
        return starts
    return starts[:-1]
