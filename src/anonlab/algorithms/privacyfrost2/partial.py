"""Partial-domain de-generalization of PrivacyFrost2 (section 5.4, step 4).

After full-domain generalization, the step de-generalizes one attribute of one group (the
records of equal quasi-identifier values) by one level while the table still satisfies the
check and the score does not drop, so that levels differ between groups: a table is one level
vector per *base class*. Splits that would merge two groups' released labels are not made.
The readings of the paper and the step's state are described in ``docs/concepts/privacyfrost2.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._progress import Progress
from anonlab._typing import BoolArray, IntArray, U64Array
from anonlab.algorithms._lattice.lattice import LatticeEvaluator
from anonlab.algorithms.privacyfrost2._kernels import (
    Groups,
    Table,
    Terms,
    build_groups,
    counting_order,
    kernels,
    levels_of,
    settle_elsewhere,
)
from anonlab.data.stats import ClassStats, SensitiveHistogram
from anonlab.exceptions import ParameterError, PrivacyCheckError
from anonlab.metrics.scores import Score
from anonlab.models.base import failing_classes

__all__ = ["PartialDomainResult", "partial_domain_degeneralization"]


def _mixed_stats(
    evaluator: LatticeEvaluator, sizes: IntArray, hists: dict[str, SensitiveHistogram]
) -> ClassStats:
    """Class statistics of classes whose attributes sit on mixed levels."""
    base = evaluator.base
    levels = tuple(-1 for _ in base.columns)
    return ClassStats(base.columns, levels, sizes, base.n_rows, sensitive=hists)


def _violating(evaluator: Any, stats: ClassStats) -> BoolArray:
    """Which classes violate a model or are below the minimal class size
    (:func:`~anonlab.models.base.failing_classes`)."""
    return failing_classes(evaluator.models, stats, np.asarray(stats.sizes < evaluator.mcs))


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
    """Global label ids of every (attribute, level, domain code): equal labels on different
    levels share one id (a null is a label of its own), so grouping by ids groups by labels."""

    def __init__(self, evaluator: LatticeEvaluator) -> None:
        self.evaluator = evaluator
        base = evaluator.base
        assert base.keys is not None and base.domains is not None
        self.cards: list[int] = []
        self._dom: list[IntArray] = []  # (height + 1, domain size): label id per level
        for j in range(len(base.columns)):
            ids, values = evaluator.label_ids(j)
            self._dom.append(ids)
            self.cards.append(max(int(values.size), 1))
        self.columns = evaluator.sensitive_columns()  # (checks the models' attributes)

    def judged(self, ids: IntArray, sizes: IntArray, counts: IntArray) -> _Table:
        """The table of classes ``ids`` (one per base class) of ``sizes`` records, judged by
        the models; ``counts`` become its label counts."""
        ev = self.evaluator
        hists = {
            name: SensitiveHistogram.from_triplets(
                ev.base.sensitive[name].values, ids[cls], val, cnt, n_classes=int(sizes.size)
            )
            for name, (cls, val, cnt, _) in ev.sparse_histograms().items()
        }
        bad = _violating(ev, _mixed_stats(ev, sizes, hists))
        suppressed = int(sizes[bad].sum())
        return _Table(ids, sizes, bad, suppressed, suppressed <= ev.max_suppressed, counts)


@dataclass(frozen=True)
class PartialDomainResult:
    """The table after partial-domain de-generalization (PrivacyFrost2 section 5.4, step 4).

    Arrays are indexed by the base classes of the evaluator passed to
    :func:`~anonlab.algorithms.privacyfrost2.privacyfrost2` (records removed by
    pre-sampling have level ``-1`` and class ``-1``). The release layer
    (:class:`~anonlab.release.Levels`) makes, checks and measures the released table.

    Attributes
    ----------
    base_levels : ndarray of int8 or int16, shape (n_base_classes, n_attributes)
        Level (anonlab convention) of each attribute in each base class.
    class_of_base : ndarray of int64, shape (n_base_classes,)
        The released class of each base class, numbered in the order of their first base
        class.
    class_sizes : ndarray of int64, shape (n_classes,)
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

    References
    ----------
    Kiyomoto and Miyake, CD-ARES 2014, section 5.4 (step 4).
    """

    base_levels: IntArray = field(repr=False)
    class_of_base: IntArray = field(repr=False)
    class_sizes: IntArray = field(repr=False)
    suppressed: BoolArray = field(repr=False)
    score: float
    value_counts: tuple[int, ...]
    splits: int
    tables_checked: int

    @property
    def n_classes(self) -> int:
        """Number of released classes."""
        return int(self.class_sizes.size)


def _label_hashes(cards: Sequence[int]) -> U64Array:
    """A pseudo-random 64-bit number per label id of each attribute (end to end), distinct
    within an attribute: SplitMix64's finalizer (Steele, Lea & Flood, OOPSLA 2014), a
    bijection of 64-bit integers, of label ``i`` of attribute ``j`` numbered
    ``(j + 1) * 2**40 + i``."""
    n = np.asarray(cards, dtype=np.int64)
    ends = np.cumsum(n)
    z = np.arange(int(ends[-1]) if n.size else 0, dtype=np.uint64)
    z -= np.repeat((ends - n).astype(np.uint64), n)
    z += np.repeat((np.arange(1, n.size + 1, dtype=np.uint64) << np.uint64(40)), n)
    with np.errstate(over="ignore"):
        z *= np.uint64(0x9E3779B97F4A7C15)  # odd: a bijection too
        z ^= z >> np.uint64(30)
        z *= np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(27)
        z *= np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return z


class _Rounds:
    """The rounds of the partial-domain step (PrivacyFrost2 5.4, step 4): attributes in
    ``order``, each de-generalized batch after batch while a batch changes the table, and
    rounds until none does. Shared by the step and its test-only reference."""

    def __init__(
        self,
        evaluator: LatticeEvaluator,
        min_levels: Sequence[int],
        order: Sequence[int],
        score: Score,
        priorities: npt.NDArray[np.float64],
        base_counts: IntArray,
        progress: Progress | None,
    ) -> None:
        """Store the shared inputs and zero the counters."""
        self.evaluator = evaluator
        self.index = _LabelIndex(evaluator)
        self.lo = np.asarray(min_levels, dtype=np.int64)
        self.order = list(order)
        self.score_fn = score
        self.v = priorities
        self.eb = base_counts
        self.progress = progress
        self.checked = 0
        self.splits = 0
        self.entangled = 0  # groups left alone: their labels would merge with another's

    def _batch(self, j: int) -> bool:
        raise NotImplementedError

    @staticmethod
    def _starts(table: _Table) -> None:
        """Raise if the full-domain table fails its check (never expected)."""
        if not table.ok:
            raise PrivacyCheckError(
                "The full-domain PrivacyFrost2 table fails its check before the partial-domain "
                "step; nothing may be released."
            )

    def _score(self, table: _Table) -> float:
        return self.score_fn.score(table.counts, self.v, self.eb)

    def _tick(self, n: int = 1) -> None:
        self.checked += n
        if self.progress is not None:
            for _ in range(n):
                self.progress(1, None)

    def run(self) -> None:
        """Rounds of batches until no batch changes the table."""
        changed = True
        while changed:
            changed = False
            for j in self.order:
                while self._batch(j):
                    changed = True


class _CompiledPartial(_Rounds):
    """State of the partial-domain search (PrivacyFrost2 5.4, step 4) on the compiled
    kernels of :mod:`._kernels`: the outcome of checking every table whole (the test-only
    reference), at a cost per batch of the groups judged. The batches are driven from
    Python: the models' compiled judge where every model has a rule (else the models judge
    themselves), the score's terms (:meth:`Score.terms`, else tabulated per batch).
    """

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
        classes: tuple[npt.NDArray[np.integer], int] | None = None,
    ) -> None:
        super().__init__(evaluator, min_levels, order, score, priorities, base_counts, progress)
        self.k = kernels()
        # levels one byte each (two for hierarchies over 100 levels)
        tall = max(evaluator.heights(), default=0) > 100
        ldt: type[np.signedinteger[Any]] = np.int16 if tall else np.int8
        # a first run: another process compiles settle while this one compiles find
        self._elsewhere = settle_elsewhere(np.dtype(ldt).name)
        base = evaluator.base
        n = base.n_classes
        m = len(levels)
        self._n, self._m = n, m
        index = self.index
        if classes is None:  # the full-domain table's classes and their records
            found, csize = evaluator.classes(tuple(int(lv) for lv in levels))
        else:  # as the search found them
            found, n_classes = classes
            csize = np.bincount(found, weights=base.sizes, minlength=n_classes).astype(np.int64)
        ids = np.asarray(found, dtype=np.int64)
        table = index.judged(ids, csize, np.zeros(0, dtype=np.int64))
        self._tick()
        self._starts(table)
        # The kernels see the base classes renumbered class by class of the full-domain
        # table, so that a group's members lie close together in memory.
        perm = counting_order(table.ids, table.sizes.size)[0]
        self._at = np.empty(n, dtype=np.int64)  # the position of each base class
        self._at[perm] = np.arange(n, dtype=np.int64)
        lab_off = np.cumsum([0, *index.cards], dtype=np.int64)  # (and the labels' total)
        # (32-bit: half the memory to walk)
        codes = np.ascontiguousarray(np.asarray(base.keys)[perm].T, dtype=np.int32)
        cols = index.columns
        self._sens = [(name, off, width) for name, (off, width) in cols.layout.items()]
        by, sp_indptr = counting_order(self._at[cols.cls], n)
        bsize = np.ascontiguousarray(np.asarray(base.sizes)[perm], dtype=np.int64)
        doms = index._dom
        self._tab = Table(
            codes=codes,
            dom=np.concatenate([d.reshape(-1) for d in doms] or [np.zeros(0, np.int64)]).astype(
                np.int32
            ),
            dom_off=np.cumsum([0, *(d.size for d in doms)], dtype=np.int64)[:-1],
            dom_w=np.array([d.shape[1] for d in doms], dtype=np.int64),
            fh=_label_hashes(index.cards),
            lab_off=lab_off,
            bsize=bsize,
            orig=perm,
            lo=self.lo,
            sp_indptr=sp_indptr,
            sp_val=cols.val[by],
            sp_cnt=cols.cnt[by],
            total_hist=cols.total,
            total=int(bsize.sum()),
            mcs=int(evaluator.mcs),
        )
        # the models' compiled judge (None: they judge themselves) and the score's terms
        # (None: tabulated per batch)
        self._judge_k = evaluator.compiled_judge()
        terms = score.terms(priorities, base_counts, index.cards) if m else None
        self._terms: Terms | None = None
        if terms is not None:
            off = np.cumsum([0, *(t.size for t in terms[1][:-1])], dtype=np.int64)
            self._terms = Terms(terms[0] == "max", np.concatenate(terms[1]), off)
        # the group state (capacity n: groups partition the base classes)
        n_labels = int(lab_off[-1])
        words = max((m + 63) // 64, 1)  # one bit per attribute
        self._gs = Groups(
            lv=np.empty((n, m), dtype=ldt),
            down=np.empty((m, n), dtype=np.int32),
            doom=np.zeros((n, words), dtype=np.uint64),
            gid=np.empty(n, dtype=np.int64),
            glab=np.empty((m, n), dtype=np.int32),
            ghash=np.empty(n, dtype=np.uint64),
            gviol=np.empty(n, dtype=np.bool_),
            gfirst=np.empty(n, dtype=np.int64),
            gmax=np.empty((n, m), dtype=ldt),
            gstart=np.empty(n, dtype=np.int64),
            gcount=np.empty(n, dtype=np.int64),
            mem=np.empty(n, dtype=np.int64),
            gcand=np.empty((n, words), dtype=np.uint64),
            gfail=np.empty((n, words), dtype=np.uint64),
            guni=np.empty((n, words), dtype=np.uint64),
            gdoom=np.empty((n, words), dtype=np.uint64),
            gsize=np.empty(n, dtype=np.int64),
            gdl=np.empty((m, n), dtype=np.int32),
            gcl=np.empty((m, n), dtype=ldt),
            lcount=np.empty(n_labels, dtype=np.int64),
            scratch=np.full(n_labels, -1, dtype=np.int64),
            delta=np.zeros(n_labels, dtype=np.int64),
        )
        self._gs.lv[...] = np.asarray(levels, dtype=ldt)
        self._stale = False  # whether lv is behind the group state (see levels)
        self._g = 0
        self._version = 0
        self._table: _Table | None = table
        self._dirty = True
        self._sync()
        table.counts = self._e.copy()
        self.s = self._score(table)

    # ------------------------------------------------------------------ state
    @property
    def levels(self) -> IntArray:
        """Level of each attribute in each base class (a copy, in the state's small integer
        type; column-major when made from the group state, as the release reads them)."""
        if self._stale:  # the group state knows them (the kernels keep no lv where a
            # group's members share one level: it is the group's gmax)
            out = np.empty((self._m, self._n), dtype=self._gs.lv.dtype).T
            levels_of(self._gs, self._tab.orig, out)
            return out
        return np.take(self._gs.lv, self._at, axis=0)

    def _sync(self) -> None:
        """Build the group state from ``lv`` and the table ``_table`` (when they were set)."""
        if not self._dirty:
            return
        t, gs = self._table, self._gs
        assert t is not None
        self._g = g = int(t.sizes.size)
        gs.gid[...] = t.ids[self._tab.orig]
        gs.gviol[...] = False
        gs.gviol[:g] = t.violating
        self._ok = bool(t.ok)
        build_groups(g, self._tab, gs)
        starts = self._tab.lab_off[:-1]
        self._e = np.add.reduceat(gs.lcount > 0, starts).astype(np.int64) if self._m else starts
        self._version += 1
        self._dirty = False

    def run(self) -> None:
        """The rounds (:meth:`_Rounds.run`); a compilation of settle still under way in
        another process is stopped with them."""
        try:
            super().run()
        finally:
            if self._elsewhere is not None:
                self._elsewhere.stop()
                self._elsewhere = None

    def _advance(self, s: float, g: int, splits: int, commits: int) -> None:
        """The table after ``commits`` commits of ``splits`` group splits."""
        self.splits += splits
        self._version += commits
        self._stale = True
        self._table = None
        self._g, self.s = g, s

    # ------------------------------------------------------------------ search
    def _batch(self, j: int) -> bool:
        """De-generalize attribute ``j`` in every group where that keeps the check: the
        compiled :func:`._kernels._find`, the models' verdicts, the compiled
        :func:`._kernels._settle`."""
        self._sync()
        f = self.k.find(j, self._g, self._tab, self._gs)
        if not f.n_cand:
            return False
        if self._elsewhere is not None:  # settle's machine code, cached by the other process
            self._elsewhere.wait()
            self._elsewhere = None
        bad = self._judge(f.judge_size, f.hist)
        terms = self._terms if self._terms is not None else self._terms_of(j)
        out = np.zeros(4, dtype=np.int64)
        s, g = self.k.settle(
            j, self._g, self.s, self._ok, self._e, f, bad, self._tab, self._gs, terms, out
        )
        self._tick(int(out[0]))
        self.entangled += int(out[1])
        if not out[3]:
            return False
        self._advance(float(s), int(g), int(out[2]), int(out[3]))
        return True

    def _judge(self, sizes: IntArray, hist: IntArray) -> BoolArray:
        """Which of these classes violate a model. The last row of ``sizes`` and ``hist``
        (dropped from the answer) is one class of every other record, so the whole table's
        distribution is the same; it is left out when it is empty."""
        nk = int(sizes.size) - 1
        bad = np.zeros(nk, dtype=np.bool_)
        if self._judge_k is not None:
            self._judge_k.judge(sizes, hist, nk, self._tab.mcs, self._judge_k.rules, bad)
            return bad
        if not nk:
            return bad
        if not sizes[nk]:
            sizes, hist = sizes[:nk], hist[:nk]
        ev = self.evaluator
        hists = {
            name: SensitiveHistogram(ev.base.sensitive[name].values, hist[:, off : off + width])
            for name, off, width in self._sens
        }
        return _violating(ev, _mixed_stats(ev, sizes, hists))[:nk]

    def _terms_of(self, j: int) -> Terms:
        """A score without terms as terms for a batch on ``j``: attribute ``j``'s term of
        ``x`` is the score with ``e_j = x`` (the other counts as they are), the other terms
        0 (adding zeros is exact)."""
        lab_off = self._tab.lab_off
        card = int(lab_off[j + 1] - lab_off[j])
        e = np.repeat(self._e[None, :].astype(np.float64), card + 1, axis=0)
        e[:, j] = np.arange(card + 1)
        off = lab_off[:-1] + np.arange(self._m)  # (card + 1 terms per attribute)
        values = np.zeros(int(lab_off[-1]) + self._m, dtype=np.float64)
        values[off[j] : off[j] + card + 1] = self.score_fn.scores(e, self.v, self.eb)
        return Terms(False, values, off)

    def result(self, evaluator: LatticeEvaluator) -> PartialDomainResult:
        """The partial-domain table (indexed by ``evaluator``'s base classes)."""
        self._sync()
        g, gs = self._g, self._gs
        gid = np.empty(self._n, dtype=np.int64)  # the group of each base class
        gid[self._tab.orig] = gs.gid
        sizes = np.bincount(gs.gid, weights=self._tab.bsize, minlength=g).astype(np.int64)
        violating = gs.gviol[:g].copy()
        suppressed = int(sizes[violating].sum())
        ok = suppressed <= evaluator.max_suppressed
        # the groups are the released classes (no split that merges labels is kept)
        t = _Table(gid, sizes, violating, suppressed, ok, self._e.copy())
        return _result(self.levels, t, self.s, self.splits, self.checked)


def _result(
    levels: IntArray, t: _Table, s: float, splits: int, checked: int
) -> PartialDomainResult:
    """The result of a partial-domain search: classes numbered in the order of their first
    base class, whatever numbering ``t`` has."""
    n = t.ids.size
    g = int(t.sizes.size)
    first = np.empty(g, dtype=np.int64)  # the first base class of each class
    first[t.ids[::-1]] = np.arange(n - 1, -1, -1, dtype=np.int64)
    order = np.argsort(first)  # distinct values
    rank = np.empty(g, dtype=np.int64)
    rank[order] = np.arange(g, dtype=np.int64)
    return PartialDomainResult(
        base_levels=levels,
        class_of_base=rank[t.ids],
        class_sizes=t.sizes[order],
        suppressed=t.violating[order],
        score=s,
        value_counts=tuple(int(x) for x in t.counts),
        splits=splits,
        tables_checked=checked,
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
    classes: tuple[npt.NDArray[np.integer], int] | None = None,
) -> PartialDomainResult:
    """Partial-domain de-generalization of a full-domain table (PrivacyFrost2 5.4, step 4).

    Starting from the full-domain table at ``levels``, a group (records with equal
    released quasi-identifiers) has one attribute de-generalized by one level; the change
    is kept if the table still satisfies the check (no class of the group's split violates
    a model, so suppressed records do not change) and the score does not drop. Attributes
    are taken in ``order`` (top priority first, as the top-down search does) and each is
    de-generalized as deep as it goes before the next; rounds repeat until no group changes.
    All groups are tried at once per attribute (``docs/concepts/privacyfrost2.md``).

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
    classes : (ndarray of int, int), optional
        The classes of the full-domain table at ``levels``, if the caller has them: the
        class of each base class (any numbering, below the number of classes) and the number
        of classes. The step then does not group them again.

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
    if classes is not None:
        ids, n_classes = np.asarray(classes[0]), int(classes[1])
        if ids.shape != (evaluator.base.n_classes,) or (
            ids.size and not 0 <= int(ids.min()) <= int(ids.max()) < n_classes
        ):
            raise ParameterError(
                "The 'classes' of partial_domain_degeneralization must give a class in "
                f"0..{n_classes - 1} for each of the {evaluator.base.n_classes} base classes; "
                f"got shape {ids.shape}."
            )
    state = _CompiledPartial(
        evaluator,
        levels,
        min_levels,
        order,
        score,
        np.asarray(priorities, dtype=np.float64),
        np.asarray(base_counts, dtype=np.int64),
        progress,
        classes,
    )
    state.run()
    return state.result(evaluator)
