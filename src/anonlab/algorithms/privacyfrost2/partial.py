"""Partial-domain de-generalization of PrivacyFrost2 (section 5.4, step 4) and the re-check.

After full-domain generalization every record of an attribute sits on the same level. The
partial-domain step then works group by group (a group = records with the same
quasi-identifier values): it de-generalizes one attribute of one group by one level (the
group splits by the more detailed values) and keeps the change while the table still
satisfies the check. Levels then differ between groups, so a table is described by one level
vector per *base class* (the classes of the original values; every record of a base class
shares its values, so it shares its levels too).

Released classes are the groups of equal released *labels*: two groups whose labels coincide
(a label repeated on two levels of a hierarchy, or a null, which stays null at every level)
are one class of the released table. Every check here groups by labels, as a reader of the
released table would.

Reading of the paper: a de-generalization is kept when the table passes the check and the
score does not drop (the paper says the output's score "is larger than that of the best
scoring table produced by full-domain generalization"; requiring a strict increase would
forbid Fig. 2, where the log-based score, a maximum, is unchanged by the USA group's
de-generalization). Groups whose records are suppressed are not de-generalized and no
de-generalization may add suppressed records.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from anonlab._progress import Progress
from anonlab.algorithms.global_recoding.lattice import LatticeEvaluator, group_rows, roll_up
from anonlab.algorithms.privacyfrost2._common import base_codes, hierarchies_of
from anonlab.algorithms.privacyfrost2.scoring import Score
from anonlab.data.stats import ClassStats, SensitiveHistogram
from anonlab.exceptions import ParameterError, PrivacyCheckError

__all__ = [
    "PartialDomainResult",
    "partial_domain_degeneralization",
    "released_labels",
    "verify_release",
]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def _label_key(label: object) -> tuple[bool, str]:
    return (label is None, "" if label is None else str(label))


def _check_levels(evaluator: LatticeEvaluator, base_levels: npt.ArrayLike) -> IntArray:
    lv = np.asarray(base_levels, dtype=np.int64)
    n, m = evaluator.base.n_classes, len(evaluator.base.columns)
    if lv.shape != (n, m):
        raise ParameterError(
            f"Base-class levels must have shape (n_base_classes, n_attributes) = ({n}, {m}). "
            f"Got {lv.shape}."
        )
    heights = np.asarray(evaluator.heights(), dtype=np.int64)
    removed = (lv == -1).all(axis=1) if m else np.zeros(n, dtype=bool)
    live = lv[~removed]
    if live.size and ((live < 0).any() or (live > heights[None, :]).any()):
        raise ParameterError(
            "Base-class levels must lie between 0 and each hierarchy's height (or be -1 on "
            "every attribute for a base class removed by pre-sampling)."
        )
    return lv


def released_labels(
    evaluator: LatticeEvaluator, base_levels: npt.ArrayLike
) -> tuple[npt.NDArray[np.object_], ...]:
    """The released label of every base class, per attribute.

    Parameters
    ----------
    evaluator : LatticeEvaluator
        The evaluator whose base classes ``base_levels`` describes.
    base_levels : array_like of int, shape (n_base_classes, n_attributes)
        The level of each attribute in each base class (anonlab levels), such as
        ``PartialDomainResult.base_levels``; a row of ``-1`` marks a base class removed by
        pre-sampling (its labels are ``None``: drop those records).

    Returns
    -------
    tuple of ndarray of object
        Per attribute, one label per base class (a null stays ``None``). The labels of the
        rows are ``labels[j][base.row_class]`` when the base statistics have ``row_class``
        (computed with ``with_rows=True``).
    """
    lv = _check_levels(evaluator, base_levels)
    out = []
    for j, h in enumerate(hierarchies_of(evaluator)):
        col = np.full(lv.shape[0], None, dtype=object)
        for level in np.unique(lv[:, j][lv[:, j] >= 0]):
            rows = lv[:, j] == level
            codes, labels = base_codes(evaluator, j, int(level), h)
            col[rows] = labels[codes[rows]]
        out.append(col)
    return tuple(out)


def _sensitive_needed(evaluator: LatticeEvaluator) -> list[str]:
    return sorted({a for m in evaluator.models for a in m.sensitive_attributes})


def _class_stats(
    evaluator: LatticeEvaluator,
    ids: IntArray,
    sizes: IntArray,
    sparse: dict[str, tuple[IntArray, IntArray, npt.NDArray[np.float64], int]],
) -> ClassStats:
    g = int(sizes.size)
    hists = {}
    for name, (cls, val, cnt, nv) in sparse.items():
        summed = np.bincount(ids[cls] * nv + val, weights=cnt, minlength=g * nv)
        hists[name] = SensitiveHistogram(
            evaluator.base.sensitive[name].values, summed.astype(np.int64).reshape(g, nv)
        )
    base = evaluator.base
    return ClassStats(
        columns=base.columns,
        levels=tuple(-1 for _ in base.columns),  # mixed levels
        sizes=sizes,
        n_rows=base.n_rows,
        sensitive=hists,
    )


def _sparse(
    evaluator: LatticeEvaluator,
) -> dict[str, tuple[IntArray, IntArray, npt.NDArray[np.float64], int]]:
    out = {}
    for name in _sensitive_needed(evaluator):
        hist = evaluator.base.sensitive.get(name)
        if hist is None:
            raise ParameterError(
                f"The evaluator's base classes have no counts of sensitive attribute {name!r}, "
                "which a privacy model needs."
            )
        counts = np.asarray(hist.counts)
        cls, val = np.nonzero(counts)
        out[name] = (
            cls.astype(np.int64),
            val.astype(np.int64),
            counts[cls, val].astype(np.float64),
            int(counts.shape[1]),
        )
    return out


def _violating(evaluator: LatticeEvaluator, stats: ClassStats) -> BoolArray:
    bad = stats.sizes < evaluator.mcs
    for model in evaluator.models:
        bad |= ~np.asarray(model.class_ok(stats), dtype=bool)
    return np.asarray(bad, dtype=bool)


def verify_release(evaluator: LatticeEvaluator, base_levels: npt.ArrayLike) -> ClassStats:
    """Re-check a table given by per-base-class levels, from its released labels.

    The released labels of every base class are compared as strings (a null as a value of
    its own), records with equal labels on every quasi-identifier form one class, and every
    privacy model judges every class; classes that fail (or are smaller than the minimal
    class size) are suppressed, and their records must fit the suppression limit.

    Parameters
    ----------
    evaluator : LatticeEvaluator
        Base classes, models and suppression limit.
    base_levels : array_like of int, shape (n_base_classes, n_attributes)
        The level of each attribute in each base class.

    Returns
    -------
    ClassStats
        The released classes (``row_class`` maps each *base class* to its released class).

    Raises
    ------
    ParameterError
        If ``base_levels`` has the wrong shape or a level outside a hierarchy.
    PrivacyCheckError
        If more records violate the models than the suppression limit allows.
    """
    if (_check_levels(evaluator, base_levels) < 0).any():
        raise ParameterError(
            "verify_release needs a level for every base class; check the records kept by "
            "pre-sampling on restrict_evaluator(evaluator, keep) with base_levels[keep]."
        )
    labels = released_labels(evaluator, base_levels)
    codes: list[IntArray] = []
    cards: list[int] = []
    for col in labels:  # factorize the label strings, a null apart (vectorised)
        null = np.asarray(col == None, dtype=bool)  # noqa: E711 - elementwise
        text = np.where(null, "", col).astype(str)
        uniq, inv = np.unique(text, return_inverse=True)
        codes += [inv.reshape(-1).astype(np.int64), null.astype(np.int64)]
        cards += [max(int(uniq.size), 1), 2]
    base = evaluator.base
    ids, g = group_rows(codes, cards)
    sizes = np.bincount(ids, weights=base.sizes, minlength=g).astype(np.int64)
    stats = _class_stats(evaluator, ids, sizes, _sparse(evaluator))
    bad = _violating(evaluator, stats)
    suppressed = int(sizes[bad].sum())
    if suppressed > evaluator.max_suppressed:
        raise PrivacyCheckError(
            f"Re-check failed: {suppressed} records of the PrivacyFrost2 table violate the "
            f"privacy models, more than the suppression limit of {evaluator.max_suppressed}. "
            "Nothing may be released."
        )
    return ClassStats(
        columns=stats.columns,
        levels=stats.levels,
        sizes=sizes,
        n_rows=stats.n_rows,
        row_class=ids,
        sensitive=stats.sensitive,
    )


@dataclass
class _Table:
    """The released classes of a table with per-base-class levels."""

    ids: IntArray
    sizes: IntArray
    violating: BoolArray
    suppressed_rows: int
    ok: bool
    counts: IntArray


class _LabelIndex:
    """Global label ids of every (attribute, level, base class), for fast grouping by labels."""

    def __init__(self, evaluator: LatticeEvaluator) -> None:
        self.evaluator = evaluator
        n = evaluator.base.n_classes
        self.tables: list[IntArray] = []
        self.values: list[npt.NDArray[np.object_]] = []
        self.cards: list[int] = []
        for j, h in enumerate(hierarchies_of(evaluator)):
            index: dict[tuple[bool, str], int] = {}
            values: list[object] = []
            table = np.empty((h.height + 1, n), dtype=np.int64)
            for level in range(h.height + 1):
                codes, labels = base_codes(evaluator, j, level, h)
                ids = np.empty(labels.size, dtype=np.int64)
                for c, lab in enumerate(labels):  # loop over labels, not rows
                    key = _label_key(lab)
                    if key not in index:
                        index[key] = len(values)
                        values.append(lab)
                    ids[c] = index[key]
                table[level] = ids[codes]
            self.tables.append(table)
            arr = np.empty(len(values), dtype=object)
            arr[:] = values
            self.values.append(arr)
            self.cards.append(max(len(values), 1))
        self._cols = np.arange(n, dtype=np.int64)
        self._sparse = _sparse(evaluator)

    def keys(self, levels: IntArray) -> list[IntArray]:
        """Label id per base class, per attribute."""
        n = self._cols.size
        return [
            np.take(t.reshape(-1), levels[:, j] * n + self._cols) for j, t in enumerate(self.tables)
        ]

    def table(self, levels: IntArray) -> _Table:
        """Group by labels and judge the classes (the check of a partial-domain table)."""
        keys = self.keys(levels)
        ev = self.evaluator
        ids, sizes, _ = roll_up(keys, self.cards, ev.base.sizes, need_ids=True, need_codes=False)
        assert ids is not None
        stats = _class_stats(ev, ids, sizes, self._sparse)
        bad = _violating(ev, stats)
        suppressed = int(sizes[bad].sum())
        counts = np.array(
            [np.count_nonzero(np.bincount(k, minlength=c)) for k, c in zip(keys, self.cards)],
            dtype=np.int64,
        )
        return _Table(ids, sizes, bad, suppressed, suppressed <= ev.max_suppressed, counts)


@dataclass(frozen=True)
class PartialDomainResult:
    """The table after partial-domain de-generalization (PrivacyFrost2 section 5.4, step 4).

    Arrays are indexed by the base classes of the evaluator passed to
    :func:`~anonlab.algorithms.privacyfrost2.privacyfrost2` (records removed by
    pre-sampling have level ``-1`` and class ``-1``).

    Attributes
    ----------
    base_levels : ndarray of int64, shape (n_base_classes, n_attributes)
        Level (anonlab convention) of each attribute in each base class.
    class_of_base : ndarray of int64, shape (n_base_classes,)
        The released class of each base class.
    class_sizes : ndarray of int64, shape (n_classes,)
    class_levels : ndarray of int64, shape (n_classes, n_attributes)
        The group-wise levels: the level of each attribute in each released class (if a
        class joins groups on different levels through a shared label, the most general).
    class_labels : tuple of ndarray of object
        Per attribute, the released label of each class.
    suppressed : ndarray of bool, shape (n_classes,)
        Classes that violate a model and are suppressed (within the suppression limit).
    score : float
        The score of the table (never below the full-domain score).
    value_counts : tuple of int
        ``e``: distinct released labels per attribute.
    splits : int
        Group de-generalizations kept.
    tables_checked : int
        Tables checked during this step.
    """

    base_levels: IntArray = field(repr=False)
    class_of_base: IntArray = field(repr=False)
    class_sizes: IntArray = field(repr=False)
    class_levels: IntArray = field(repr=False)
    class_labels: tuple[npt.NDArray[np.object_], ...] = field(repr=False)
    suppressed: BoolArray = field(repr=False)
    score: float
    value_counts: tuple[int, ...]
    splits: int
    tables_checked: int

    @property
    def n_classes(self) -> int:
        """Number of released classes."""
        return int(self.class_sizes.size)

    def level_vectors(self) -> tuple[IntArray, IntArray]:
        """The distinct level vectors of the classes and the number of records on each."""
        if not self.class_sizes.size:
            return np.zeros((0, self.class_levels.shape[1]), dtype=np.int64), np.zeros(
                0, dtype=np.int64
            )
        vecs, inv = np.unique(self.class_levels, axis=0, return_inverse=True)
        rows = np.bincount(inv.reshape(-1), weights=self.class_sizes, minlength=vecs.shape[0])
        return vecs.astype(np.int64), rows.astype(np.int64)


class _Partial:
    """State of the partial-domain search."""

    def __init__(
        self,
        evaluator: LatticeEvaluator,
        levels: Sequence[int],
        min_levels: Sequence[int],
        order: Sequence[int],
        score: Score,
        priorities: npt.NDArray[np.float64],
        base_counts: IntArray,
        progress: Progress | None,
    ) -> None:
        self.index = _LabelIndex(evaluator)
        n = evaluator.base.n_classes
        self.levels = np.tile(np.asarray(levels, dtype=np.int64), (n, 1))
        self.lo = np.asarray(min_levels, dtype=np.int64)
        self.order = list(order)
        self.score_fn = score
        self.v = priorities
        self.eb = base_counts
        self.progress = progress
        self.checked = 0
        self.splits = 0
        self.entangled = 0  # groups left alone because their labels would merge with another's
        self.table = self._check(self.levels)
        if not self.table.ok:
            raise PrivacyCheckError(
                "The full-domain PrivacyFrost2 table fails its check before the partial-domain "
                "step; nothing may be released."
            )
        self.s = self._score(self.table)

    def _check(self, levels: IntArray) -> _Table:
        self.checked += 1
        if self.progress is not None:
            self.progress(1, None)
        return self.index.table(levels)

    def _score(self, table: _Table) -> float:
        return self.score_fn.score(table.counts, self.v, self.eb)

    def run(self) -> None:
        changed = True
        while changed:
            changed = False
            for j in self.order:
                while self._batch(j):
                    changed = True

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
        # own records and the whole table's distribution, which splitting does not change
        hyp = self._check(split)
        fails = np.bincount(gid, weights=hyp.violating[hyp.ids], minlength=g) > 0
        has_cand = np.bincount(gid, weights=cand, minlength=g) > 0
        # a new class whose labels coincide with another group's (before or after its own
        # split) would merge with it: such groups are not split
        both = [
            np.concatenate([a, b]) for a, b in zip(self.index.keys(levels), self.index.keys(split))
        ]
        comb, nc = group_rows(both, self.index.cards)
        parent = np.concatenate([gid, gid])
        lo_p = np.full(nc, g, dtype=np.int64)
        hi_p = np.full(nc, -1, dtype=np.int64)
        np.minimum.at(lo_p, comb, parent)
        np.maximum.at(hi_p, comb, parent)
        shared = lo_p != hi_p
        entangled = np.bincount(parent, weights=shared[comb], minlength=g) > 0
        self.entangled += int((entangled & has_cand & ~fails & ~cur.violating).sum())
        passing = np.flatnonzero(has_cand & ~fails & ~entangled & ~cur.violating)
        if not passing.size:
            return False
        return self._apply(j, passing, gid, cand)

    def _apply(self, j: int, groups: IntArray, gid: IntArray, cand: BoolArray) -> bool:
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
        t = self.table
        g = int(t.sizes.size)
        m = self.levels.shape[1]
        class_levels = np.full((g, m), -1, dtype=np.int64)
        for j in range(m):
            np.maximum.at(class_levels[:, j], t.ids, self.levels[:, j])
        member = np.zeros(g, dtype=np.int64)  # any base class of each class: same labels
        member[t.ids] = np.arange(t.ids.size, dtype=np.int64)
        keys = self.index.keys(self.levels)
        labels = tuple(self.index.values[j][keys[j][member]] for j in range(m))
        return PartialDomainResult(
            base_levels=self.levels,
            class_of_base=t.ids,
            class_sizes=t.sizes,
            class_levels=class_levels,
            class_labels=labels,
            suppressed=t.violating,
            score=self.s,
            value_counts=tuple(int(x) for x in t.counts),
            splits=self.splits,
            tables_checked=self.checked,
        )


def partial_domain_degeneralization(
    evaluator: LatticeEvaluator,
    levels: Sequence[int],
    *,
    min_levels: Sequence[int],
    order: Sequence[int],
    score: Score,
    priorities: npt.ArrayLike,
    base_counts: npt.ArrayLike,
    progress: Progress | None = None,
) -> PartialDomainResult:
    """Partial-domain de-generalization of a full-domain table (PrivacyFrost2 5.4, step 4).

    Starting from the full-domain table at ``levels``, a group (records with equal
    released quasi-identifiers) has one attribute de-generalized by one level; the change
    is kept if the table still satisfies the check (no class of the group's split violates
    a model, so suppressed records do not change) and the score does not drop. Attributes
    are taken in ``order`` (top priority first, as the top-down search does) and each is
    de-generalized as deep as it goes before the next; rounds repeat until no group changes.

    The splits of different groups on one attribute are independent (a class's verdict
    depends only on its records and the whole table's distribution), so all groups are
    tried at once on one grouping of the base classes, and the passing splits are applied
    together; if together they lower the score, halves are tried (each kept change is
    checked on the table as it then is). Groups whose new labels would coincide with another
    group's (a label repeated across levels) are left as they are.

    Parameters
    ----------
    evaluator : LatticeEvaluator
        The table (base classes), models and suppression limit.
    levels : sequence of int
        The full-domain levels (anonlab convention).
    min_levels : sequence of int
        The most detailed level allowed per attribute (never crossed).
    order : sequence of int
        Attribute indices, highest priority first.
    score : Score
        The scoring function.
    priorities, base_counts : array_like
        ``v`` and ``e^b`` of the score.
    progress : callable, optional
        ``progress(1, None)`` per table checked.

    Returns
    -------
    PartialDomainResult
        Indexed by the base classes of ``evaluator``.

    Raises
    ------
    PrivacyCheckError
        If the starting table fails its check (it never should).

    References
    ----------
    Kiyomoto and Miyake, CD-ARES 2014, sections 4.1 and 5.4 (step 4) and Fig. 3.
    """
    state = _Partial(
        evaluator,
        levels,
        min_levels,
        order,
        score,
        np.asarray(priorities, dtype=np.float64),
        np.asarray(base_counts, dtype=np.int64),
        progress,
    )
    state.run()
    return state.result(evaluator)
