"""The straightforward partial-domain step of PrivacyFrost2 (section 5.4, step 4): every table
checked whole, all base classes regrouped by their labels (the reference of the compiled step
in tests), and the released labels and re-check of a table given by per-base-class levels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab.algorithms._lattice.lattice import LatticeEvaluator, group_rows, roll_up
from anonlab.algorithms.privacyfrost2._kernels import levels_of
from anonlab.algorithms.privacyfrost2.partial import (
    PartialDomainResult,
    _CompiledPartial,
    _LabelIndex,
    _result,
    _Rounds,
    _Table,
)
from anonlab.exceptions import PrivacyCheckError

IntArray = npt.NDArray[np.int64]


def released_labels(
    evaluator: LatticeEvaluator, base_levels: npt.ArrayLike
) -> tuple[npt.NDArray[np.object_], ...]:
    """Per attribute, the released label of every base class at its level in
    ``base_levels`` (a null stays ``None``; ``None`` too for a base class removed by
    pre-sampling, level ``-1``)."""
    lv = np.asarray(base_levels, dtype=np.int64)
    keys = np.asarray(evaluator.base.keys)
    out = []
    for j in range(lv.shape[1]):
        col = np.full(lv.shape[0], None, dtype=object)
        for level in np.unique(lv[:, j][lv[:, j] >= 0]):
            rows = lv[:, j] == level
            mapping, labels = evaluator.generalization(j, int(level))
            col[rows] = labels[mapping[keys[rows, j]]]
        out.append(col)
    return tuple(out)


def verify_release(evaluator: LatticeEvaluator, base_levels: npt.ArrayLike) -> _Table:
    """Re-check a table given by per-base-class levels from its released labels: base
    classes with equal labels (compared as values, a null as one of its own) form one class,
    every model judges every class and the violating records must fit the limit."""
    labels = released_labels(evaluator, base_levels)
    rows = list(zip(*labels)) if labels else [()] * evaluator.base.n_classes
    seen: dict[tuple[object, ...], int] = {}
    ids = np.array([seen.setdefault(r, len(seen)) for r in rows], dtype=np.int64)
    sizes = np.bincount(ids, weights=evaluator.base.sizes, minlength=len(seen)).astype(np.int64)
    table = _LabelIndex(evaluator).judged(ids, sizes, np.zeros(0, dtype=np.int64))
    if not table.ok:
        raise PrivacyCheckError(f"Re-check failed: {table.suppressed_rows} records violate.")
    return table


def _first_member(gid: IntArray, g: int) -> IntArray:
    """The first base class (lowest index) of each of the ``g`` groups of ``gid``."""
    first = np.full(g, gid.size, dtype=np.int64)
    np.minimum.at(first, gid, np.arange(gid.size, dtype=np.int64))
    return first


def label_keys(index: _LabelIndex, levels: IntArray) -> list[IntArray]:
    """The label id of each base class at its ``levels``, per attribute."""
    return [
        dom.reshape(-1)[levels[:, j] * dom.shape[1] + np.asarray(index.evaluator.base.keys)[:, j]]
        for j, dom in enumerate(index._dom)
    ]


def label_table(index: _LabelIndex, keys: Sequence[IntArray], *, counts: bool = True) -> _Table:
    """The check of the table whose base classes have label ids ``keys`` (one array per
    attribute); without ``counts`` its label counts ``e`` are left empty."""
    ids, sizes, _ = roll_up(
        list(keys), index.cards, index.evaluator.base.sizes, need_ids=True, need_codes=False
    )
    assert ids is not None
    e = [np.count_nonzero(np.bincount(k, minlength=c)) for k, c in zip(keys, index.cards)]
    return index.judged(ids, sizes, np.array(e if counts else [], dtype=np.int64))


def table_of(index: _LabelIndex, levels: IntArray, apart: IntArray | None = None) -> _Table:
    """The check of the table at per-base-class ``levels``. With ``apart`` (a group per base
    class), base classes of different groups are never in one class: each group's classes are
    judged on their own records."""
    keys = label_keys(index, levels)
    if apart is None:
        return label_table(index, keys)
    by, cards = [*keys, apart], [*index.cards, int(apart.max()) + 1 if apart.size else 1]
    base = index.evaluator.base
    ids, sizes, _ = roll_up(by, cards, base.sizes, need_ids=True, need_codes=False)
    assert ids is not None
    e = [np.count_nonzero(np.bincount(k, minlength=c)) for k, c in zip(keys, index.cards)]
    return index.judged(ids, sizes, np.array(e, dtype=np.int64))


class ReferencePartial(_Rounds):
    """The partial-domain search with every table checked whole."""

    def __init__(self, evaluator: LatticeEvaluator, levels: Sequence[int], *args: Any) -> None:
        """The arguments of the compiled step's state (``_CompiledPartial``)."""
        super().__init__(evaluator, *args)
        n = evaluator.base.n_classes
        self.levels = np.tile(np.asarray(levels, dtype=np.int64), (n, 1))
        self.table = self._check(self.levels)
        self._starts(self.table)
        self.s = self._score(self.table)

    def _check(self, levels: IntArray, apart: IntArray | None = None) -> _Table:
        self._tick()
        return table_of(self.index, levels, apart)

    def _batch(self, j: int) -> bool:
        """De-generalize attribute ``j`` in every group where that keeps the check."""
        cur, levels = self.table, self.levels
        gid = cur.ids
        g = int(cur.sizes.size)
        cand = (levels[:, j] > self.lo[j]) & ~cur.violating[gid]
        if not cand.any():
            return False
        split = levels.copy()
        split[cand, j] -= 1
        # every candidate group split at once: a class of a split group depends only on its
        # own records and the whole table's distribution, which splitting does not change;
        # each group's split classes are judged on their own records (a group whose classes
        # would merge with another group's is left alone below anyway)
        hyp = self._check(split, apart=gid)
        fails = np.bincount(gid, weights=hyp.violating[hyp.ids], minlength=g) > 0
        has_cand = np.bincount(gid, weights=cand, minlength=g) > 0
        # a new class whose labels coincide with another group's (before or after its own
        # split) would merge with it: such groups are not split
        keys = zip(label_keys(self.index, levels), label_keys(self.index, split))
        comb, nc = group_rows([np.concatenate([a, b]) for a, b in keys], self.index.cards)
        parent = np.concatenate([gid, gid])
        lo_p = np.full(nc, g, dtype=np.int64)
        hi_p = np.full(nc, -1, dtype=np.int64)
        np.minimum.at(lo_p, comb, parent)
        np.maximum.at(hi_p, comb, parent)
        shared = lo_p != hi_p
        entangled = np.bincount(parent, weights=shared[comb], minlength=g) > 0
        # groups whose own split passes but is left alone because it would merge
        self.entangled += int((entangled & has_cand & ~fails & ~cur.violating).sum())
        passing = np.flatnonzero(has_cand & ~fails & ~entangled & ~cur.violating)
        if not passing.size:
            return False
        passing = passing[np.argsort(_first_member(gid, g)[passing])]  # table order
        return self._apply(j, passing, gid, cand)

    def _apply(self, j: int, groups: IntArray, gid: IntArray, cand: npt.NDArray[np.bool_]) -> bool:
        """Apply the splits of ``groups`` if the table passes and the score does not drop;
        otherwise try each half (the splits are independent for the check)."""
        member = np.zeros(int(gid.max()) + 1 if gid.size else 0, dtype=bool)
        member[groups] = True
        sel = cand & member[gid]
        trial = self.levels.copy()
        trial[sel, j] -= 1
        table = self._check(trial)
        if table.ok:
            s = self._score(table)
            if s >= self.s:
                self.levels, self.table, self.s = trial, table, s
                self.splits += int(groups.size)
                return True
        if groups.size == 1:
            return False
        half = groups.size // 2
        first = self._apply(j, groups[:half], gid, cand)
        second = self._apply(j, groups[half:], gid, cand)
        return first or second

    def result(self, evaluator: LatticeEvaluator) -> PartialDomainResult:
        """The result, as the compiled step returns it."""
        return _result(self.levels, self.table, self.s, self.splits, self.checked)


def reference_partial_domain(
    evaluator: LatticeEvaluator, levels: Sequence[int], **kw: Any
) -> PartialDomainResult:
    """``partial_domain_degeneralization(evaluator, levels, **kw)`` by
    :class:`ReferencePartial`: its result must equal the compiled step's."""
    v = np.asarray(kw["priorities"], dtype=np.float64)
    eb = np.asarray(kw["base_counts"], dtype=np.int64)
    args = (kw["min_levels"], kw["order"], kw["score"], v, eb, None)
    state = ReferencePartial(evaluator, levels, *args)
    state.run()
    return state.result(evaluator)


class PartialState(_CompiledPartial):
    """The compiled step's state whose levels and table tests may set (from mixed levels)
    and whose table they may read after a run (numbered as :meth:`_LabelIndex.table` does)."""

    @property
    def levels(self) -> IntArray:
        return super().levels

    @levels.setter
    def levels(self, value: IntArray) -> None:
        self._gs.lv[...] = np.asarray(value)[self._tab.orig]
        self._stale = False
        self._gs.doom[...] = 0  # levels set from outside need not refine the ones known
        self._table = None
        self._dirty = True

    @property
    def table(self) -> _Table:
        if self._table is None:
            keys = self._gs.glab[:, self._gs.gid[self._at]]  # each base class's group labels
            self._table = label_table(self.index, list(keys))
        return self._table

    @table.setter
    def table(self, value: _Table) -> None:
        if self._stale:  # the levels the group state knows, written back in place
            positions = np.arange(self._n, dtype=np.int64)
            levels_of(self._gs, positions, self._gs.lv)
            self._stale = False
        self._table = value
        self._gs.doom[...] = 0
        self._dirty = True
