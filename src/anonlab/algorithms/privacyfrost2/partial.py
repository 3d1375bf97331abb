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
from functools import cached_property
from itertools import repeat
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._progress import Progress
from anonlab.algorithms._lattice.lattice import LatticeEvaluator, group_rows, roll_up
from anonlab.algorithms.privacyfrost2._common import (
    base_codes,
    hierarchies_of,
    judge_spec,
    side_by_side,
)
from anonlab.algorithms.privacyfrost2._kernels import kernels
from anonlab.algorithms.privacyfrost2.scoring import Score
from anonlab.data.grouping import factorize_keys
from anonlab.data.labels import factorize
from anonlab.data.stats import ClassStats, SensitiveHistogram
from anonlab.exceptions import ParameterError, PrivacyCheckError

__all__ = [
    "PartialDomainResult",
    "partial_domain_degeneralization",
    "released_codes",
    "released_labels",
    "verify_release",
]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
U64Array = npt.NDArray[np.uint64]
_JudgeSpec = tuple[IntArray, IntArray, IntArray, IntArray, npt.NDArray[np.float64]]


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


def released_codes(
    evaluator: LatticeEvaluator, base_levels: npt.ArrayLike
) -> tuple[tuple[IntArray, npt.NDArray[np.object_]], ...]:
    """The released label of every base class as a code into that attribute's labels.

    Equal labels on different levels (a label repeated up a hierarchy) share one code; a null
    stays null (``None``, the last label). The work is over the distinct labels of the levels
    used and one lookup per base class (no string work per base class).

    Parameters
    ----------
    evaluator : LatticeEvaluator
        The evaluator whose base classes ``base_levels`` describes.
    base_levels : array_like of int, shape (n_base_classes, n_attributes)
        The level of each attribute in each base class (anonlab levels); a row of ``-1``
        marks a base class removed by pre-sampling (its code is ``-1``).

    Returns
    -------
    tuple of (codes, labels)
        Per attribute: ``codes`` (int64, one per base class, ``-1`` for a removed one) into
        ``labels`` (distinct labels, naturally ordered, a null as ``None`` last). Labels no
        base class uses may be listed.
    """
    lv = _check_levels(evaluator, base_levels)
    out = []
    for j, h in enumerate(hierarchies_of(evaluator)):
        col = lv[:, j]
        codes = np.full(lv.shape[0], -1, dtype=np.int64)
        parts: list[npt.NDArray[np.object_]] = []
        offset = 0
        for level in np.unique(col[col >= 0]):
            rows = col == level
            lcodes, labels = base_codes(evaluator, j, int(level), h)
            codes[rows] = lcodes[rows] + offset
            parts.append(labels)
            offset += labels.size
        if parts:
            fcodes, cats = factorize(np.concatenate(parts))
            keep = codes >= 0
            codes[keep] = fcodes.astype(np.int64)[codes[keep]]
        else:
            cats = np.zeros(0, dtype=object)
        out.append((codes, cats))
    return tuple(out)


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
    out = []
    for codes, cats in released_codes(evaluator, base_levels):
        col = np.full(codes.size, None, dtype=object)
        keep = codes >= 0
        col[keep] = cats[codes[keep]]
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
    for name, (cls, val, cnt, _) in sparse.items():
        hists[name] = SensitiveHistogram.from_triplets(
            evaluator.base.sensitive[name].values, ids[cls], val, cnt, n_classes=g
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
    known = evaluator.sparse_histograms()
    out = {}
    for name in _sensitive_needed(evaluator):
        if name not in known:
            raise ParameterError(
                f"The evaluator's base classes have no counts of sensitive attribute {name!r}, "
                "which a privacy model needs."
            )
        out[name] = known[name]
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
    released = released_codes(evaluator, base_levels)
    codes = [c for c, _ in released]  # equal labels share a code, on any level
    cards = [max(int(cats.size), 1) for _, cats in released]
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


def _first_seen(
    levels: Sequence[npt.NDArray[np.object_]], *, sorted_first: bool = False
) -> tuple[IntArray, npt.NDArray[np.object_]]:
    """Codes of the labels of a hierarchy's levels, concatenated, into their distinct
    values in the order first seen (no sorting, no string conversion).

    The labels of one level are distinct (a label may repeat on another level), so the
    first level's labels, the most numerous, are not put in a hash table: only the other
    levels' labels are, and each is looked for in the first level. With ``sorted_first``
    the first level's labels are str in code-point order, perhaps with a null (``None``)
    last, as :meth:`Hierarchy.generalization` gives them: they are searched by bisection
    instead of hashed.
    """
    first = levels[0]
    tail = np.concatenate(levels[1:]) if len(levels) > 1 else np.zeros(0, dtype=object)
    later: dict[object, int] = {}  # each label of the other levels: its rank, first seen
    tail_ids = np.fromiter(
        (later.setdefault(x, len(later)) for x in tail), dtype=np.int64, count=len(tail)
    )
    n0 = len(first)
    later_values = np.empty(len(later), dtype=object)
    later_values[:] = list(later)
    found = _in_sorted(first, later_values) if sorted_first else None
    if found is not None:
        later_id = found  # its position in the first level, or -1
    else:
        listed = first.tolist()
        later_id = np.full(len(later), -1, dtype=np.int64)
        if not later.keys().isdisjoint(listed):  # usually they are: 3x faster than lookups
            hit = np.fromiter(map(later.get, listed, repeat(-1)), dtype=np.int64, count=n0)
            at_first = hit >= 0
            later_id[hit[at_first]] = np.flatnonzero(at_first)  # a label of the first level
    new = later_id < 0
    later_id[new] = n0 + np.arange(int(new.sum()), dtype=np.int64)
    ids = np.concatenate([np.arange(n0, dtype=np.int64), later_id[tail_ids]])
    return ids, np.concatenate([np.asarray(first, dtype=object), later_values[new]])


def _in_sorted(first: npt.NDArray[np.object_], values: npt.NDArray[np.object_]) -> IntArray | None:
    """The position of each of ``values`` in ``first`` (str in code-point order, perhaps a
    ``None`` last), ``-1`` where absent; None if a value is neither a str nor None."""
    n0 = len(first)
    null_at = n0 - 1 if n0 and first[n0 - 1] is None else -1
    core = first[: n0 - 1] if null_at >= 0 else first
    out = np.full(values.size, -1, dtype=np.int64)
    is_null = np.fromiter((v is None for v in values), dtype=bool, count=values.size)
    out[is_null] = null_at
    text = np.flatnonzero(~is_null)
    if not all(isinstance(v, str) for v in values[text]):
        return None
    if text.size and core.size:
        pos = np.searchsorted(core, values[text])
        at = np.minimum(pos, core.size - 1)
        match = (pos < core.size) & (core[at] == values[text])
        out[text[match]] = at[match]
    return out


class _LabelIndex:
    """Global label ids of every (attribute, level, base class), for fast grouping by labels.

    Per attribute, a small table gives the label id of each (level, domain value); the ids of
    the base classes on one level are gathered from it when first asked for and kept.
    """

    def __init__(self, evaluator: LatticeEvaluator) -> None:
        self.evaluator = evaluator
        base = evaluator.base
        assert base.keys is not None and base.domains is not None
        n = base.n_classes
        self.values: list[npt.NDArray[np.object_]] = []
        self.cards: list[int] = []
        self._dom: list[IntArray] = []  # (height + 1, domain size): label id per level
        self._codes: list[IntArray] = []  # domain code of each base class
        self._level_ids: dict[tuple[int, int], IntArray] = {}
        keys_t = _transposed(np.asarray(base.keys, dtype=np.int32))
        for j, height in enumerate(evaluator.heights()):
            maps: list[IntArray] = []
            parts: list[npt.NDArray[np.object_]] = []
            offset = 0
            for level in range(height + 1):
                mapping, labels = evaluator.generalization(j, level)
                maps.append(mapping + offset)
                parts.append(labels)
                offset += labels.size
            # one id per distinct label, on any level (a null is a label of its own)
            ids, values = _first_seen(parts, sorted_first=True)
            self._dom.append(ids[np.stack(maps)])
            self._codes.append(keys_t[j] if n else np.zeros(0, dtype=np.int64))
            self.values.append(values)
            self.cards.append(max(int(values.size), 1))
        self._sparse = _sparse(evaluator)

    def level_ids(self, j: int, level: int) -> IntArray:
        """Label ids of attribute ``j`` at ``level`` for every base class (kept; read-only)."""
        hit = self._level_ids.get((j, level))
        if hit is None:
            hit = self._dom[j][level][self._codes[j]]
            hit.setflags(write=False)
            self._level_ids[(j, level)] = hit
        return hit

    def ids_at(self, j: int, levels: IntArray, rows: IntArray) -> IntArray:
        """Label ids of attribute ``j`` of base classes ``rows`` at ``levels`` (one each)."""
        if not rows.size:
            return np.zeros(0, dtype=np.int64)
        lo = int(levels.min())
        if lo == int(levels.max()):
            return self.level_ids(j, lo)[rows]
        dom = self._dom[j]
        out: IntArray = dom.reshape(-1)[levels * dom.shape[1] + self._codes[j][rows]]
        return out

    def keys(self, levels: IntArray) -> list[IntArray]:
        """Label id per base class, per attribute."""
        out = []
        for j, dom in enumerate(self._dom):
            lv = levels[:, j]
            if not lv.size:
                out.append(np.zeros(0, dtype=np.int64))
                continue
            lo = int(lv.min())
            if lo == int(lv.max()):  # one level for every base class
                out.append(self.level_ids(j, lo))
            else:
                out.append(dom.reshape(-1)[lv * dom.shape[1] + self._codes[j]])
        return out

    def table(
        self,
        levels: IntArray | None,
        keys: list[IntArray] | None = None,
        apart: IntArray | None = None,
        *,
        counts: bool = True,
    ) -> _Table:
        """Group by labels and judge the classes (the check of a partial-domain table).

        ``keys`` are the labels of ``levels`` if already known (see :meth:`keys`). With
        ``apart`` (a group per base class), base classes of different groups are never in
        one class: each group's classes are judged on their own records. Without
        ``counts``, the table's ``counts`` are left empty (for a caller that counts the
        labels itself).
        """
        if keys is None:
            assert levels is not None
            keys = self.keys(levels)
        ev = self.evaluator
        by, cards = list(keys), list(self.cards)
        if apart is not None:
            by.append(apart)
            cards.append(int(apart.max()) + 1 if apart.size else 1)
        ids, sizes, _ = roll_up(by, cards, ev.base.sizes, need_ids=True, need_codes=False)
        assert ids is not None
        e = np.array(
            [np.count_nonzero(np.bincount(k, minlength=c)) for k, c in zip(keys, self.cards)]
            if counts
            else [],
            dtype=np.int64,
        )
        return self.judged(ids, sizes, e)

    def judged(self, ids: IntArray, sizes: IntArray, counts: IntArray) -> _Table:
        """The table of classes ``ids`` (one per base class) of ``sizes`` records, judged by
        the models; ``counts`` become its label counts."""
        ev = self.evaluator
        stats = _class_stats(ev, ids, sizes, self._sparse)
        bad = _violating(ev, stats)
        suppressed = int(sizes[bad].sum())
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
    class_codes : tuple of ndarray of int64, optional
        Per attribute, the released label of each class as a code into ``label_values``,
        kept from the search.
    label_values : tuple of ndarray of object, optional
        Per attribute, the labels the codes index (distinct; in no particular order).
    """

    base_levels: IntArray = field(repr=False)
    class_of_base: IntArray = field(repr=False)
    class_sizes: IntArray = field(repr=False)
    class_levels: IntArray = field(repr=False)
    suppressed: BoolArray = field(repr=False)
    score: float
    value_counts: tuple[int, ...]
    splits: int
    tables_checked: int
    class_codes: tuple[IntArray, ...] | None = field(default=None, repr=False)
    label_values: tuple[npt.NDArray[np.object_], ...] | None = field(default=None, repr=False)

    @property
    def n_classes(self) -> int:
        """Number of released classes."""
        return int(self.class_sizes.size)

    @cached_property
    def label_codes(self) -> tuple[IntArray, ...] | None:
        """Per attribute, the released label of each base class as a code into
        ``label_values`` (``-1`` for a base class removed by pre-sampling): what
        :func:`released_codes` computes (the same labels, coded in another order). From
        ``class_codes`` on first use; None without them."""
        if self.class_codes is None:
            return None
        cls = self.class_of_base
        kept = cls >= 0
        every = bool(kept.all())
        out = []
        for c in self.class_codes:
            codes = c[cls] if every else np.where(kept, c[np.maximum(cls, 0)], -1)
            out.append(codes.astype(np.int64, copy=False))
        return tuple(out)

    @cached_property
    def class_labels(self) -> tuple[npt.NDArray[np.object_], ...]:
        """Per attribute, the released label of each class (from ``class_codes``, on first
        use).

        Raises
        ------
        ValueError
            If the result was made without ``class_codes`` and ``label_values``.
        """
        if self.class_codes is None or self.label_values is None:
            raise ValueError("This partial-domain result was made without its label codes.")
        return tuple(v[c] for c, v in zip(self.class_codes, self.label_values))

    def _vector_ids(self) -> tuple[IntArray, int]:
        """The level vector of each class, as dense ids (classes and attributes exist)."""
        cols = list(np.ascontiguousarray(self.class_levels.T) + 1)  # -1 (no level) -> 0
        return group_rows(cols, [int(c.max()) + 1 for c in cols])

    def n_level_vectors(self) -> int:
        """The number of distinct level vectors of the classes."""
        if not self.class_sizes.size or not self.class_levels.shape[1]:
            return int(min(self.class_sizes.size, 1))
        lv = self.class_levels
        m = lv.shape[1]
        bits = max(int(lv.max() + 1).bit_length(), 1)
        if bits * m <= 62:  # a vector packs into one integer (levels -1.. -> 0..): count those
            key = (lv + 1) @ np.left_shift(1, bits * np.arange(m, dtype=np.int64))
            key.sort()
            return int(np.count_nonzero(key[1:] != key[:-1])) + 1
        return self._vector_ids()[1]  # (levels too tall to pack: grouped)

    def level_vectors(self) -> tuple[IntArray, IntArray]:
        """The distinct level vectors of the classes and the number of records on each."""
        if not self.class_sizes.size:
            return np.zeros((0, self.class_levels.shape[1]), dtype=np.int64), np.zeros(
                0, dtype=np.int64
            )
        lv = self.class_levels
        if not lv.shape[1]:  # no attributes: one (empty) vector for every record
            return np.zeros((1, 0), dtype=np.int64), np.array([self.class_sizes.sum()])
        ids, n = self._vector_ids()
        rows = np.bincount(ids, weights=self.class_sizes, minlength=n).astype(np.int64)
        vecs = lv[_first_member(ids, n)]
        order = np.lexsort(vecs.T[::-1])  # lexicographic, as np.unique
        return vecs[order].astype(np.int64), rows[order]


_FIBONACCI = np.uint64(0x9E3779B97F4A7C15)  # 2^64 / golden ratio: multiplicative hashing


def _near(new: U64Array, *others: U64Array) -> tuple[BoolArray, ...]:
    """Which keys of each of ``others`` may equal a key of ``new`` (a superset: exact keys
    are compared later).

    ``new`` is scattered into a bit table of ``>= 32`` slots per key by a multiplicative hash;
    a key of ``others`` is near if its slot is taken. A large ``new`` marks everything.

    Parameters
    ----------
    new : ndarray of uint64
    *others : ndarray of uint64

    Returns
    -------
    tuple of ndarray of bool
        One mask per array of ``others``.
    """
    bits = max(int(32 * new.size).bit_length(), 6)
    if bits > 20:
        return tuple(np.ones(o.size, dtype=bool) for o in others)
    shift = np.uint64(64 - bits)
    mult = _FIBONACCI
    mark = np.zeros(1 << bits, dtype=bool)
    mark[((new * mult) >> shift).astype(np.intp)] = True
    return tuple(mark[((o * mult) >> shift).astype(np.intp)] for o in others)


def _label_hashes(cards: Sequence[int]) -> list[U64Array]:
    """A pseudo-random 64-bit number per label id of each attribute, distinct within an
    attribute: SplitMix64's finalizer (Steele, Lea & Flood, OOPSLA 2014) of the label's
    number in a sequence per attribute. The finalizer is a bijection of 64-bit integers,
    so distinct numbers give distinct hashes, with no check."""
    n = np.asarray(cards, dtype=np.int64)
    ends = np.cumsum(n)
    # every attribute's sequence end to end: label i of attribute j is (j + 1) * 2**40 + i
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
    return np.split(z, ends[:-1]) if n.size else []


def _first_member(gid: IntArray, g: int) -> IntArray:
    """The first base class (lowest index) of each of the ``g`` groups of ``gid``."""
    first = np.full(g, gid.size, dtype=np.int64)
    np.minimum.at(first, gid, np.arange(gid.size, dtype=np.int64))
    return first


@dataclass
class _Plan:
    """The splits of one attribute in the groups that pass (one batch), ready to apply.

    ``rows`` are the base classes that go one level down (of group ``parent``, from label
    ``old`` to ``new``, into class ``cls``); ``rows3`` are the other base classes of those
    groups (they keep their labels, in class ``cls3``). Per class: its group (``-1`` for a
    class of no passing group), label on the attribute, tuple hash and size.
    """

    j: int
    n_groups: int
    rows: IntArray
    parent: IntArray
    old: IntArray
    new: IntArray
    cls: IntArray
    rows3: IntArray
    parent3: IntArray
    cls3: IntArray
    class_parent: IntArray
    class_label: IntArray
    class_hash: U64Array
    class_size: IntArray


class _Rounds:
    """The rounds of the partial-domain step, shared by its implementations: attributes in
    ``order``, each de-generalized batch after batch while a batch changes the table, and
    rounds until none does (PrivacyFrost2 5.4, step 4)."""

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
        """Store the inputs every implementation shares and zero the counters."""
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
        # groups left alone because their labels would merge with another's (a diagnostic)
        self.entangled = 0

    def _batch(self, j: int) -> bool:
        raise NotImplementedError

    def _score(self, table: _Table) -> float:
        return self.score_fn.score(table.counts, self.v, self.eb)

    def run(self) -> None:
        changed = True
        while changed:
            changed = False
            for j in self.order:
                while self._batch(j):
                    changed = True


class _Partial(_Rounds):
    """State of the partial-domain search, checked locally.

    The released table is kept as groups (label tuples) of base classes: per group its
    labels, a 64-bit hash of its label tuple (a sum of random numbers per label) and whether
    it is suppressed, and per attribute how many base classes carry each label (so ``e`` is
    updated by the difference of a split). A batch groups only the candidate base classes
    by their tuple after the split, together with one row per group for its current tuple:
    classes holding rows of two groups are merges (checked exactly on the labels), and the
    classes of each candidate group are judged by the models on class statistics that hold
    them and one class for every other record (so the whole table's distribution is the
    same). Each table checked by :class:`_ReferencePartial` is checked here with the same
    outcome; the count of tables checked is the same.
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
    ) -> None:
        super().__init__(evaluator, min_levels, order, score, priorities, base_counts, progress)
        n = evaluator.base.n_classes
        # column-major: the search reads and changes one attribute's levels at a time
        self._levels = np.empty((n, len(levels)), dtype=np.int64, order="F")
        self._levels[...] = np.asarray(levels, dtype=np.int64)
        # ``entangled`` is counted here by the verdict on the merged classes, where the
        # reference judges each group's own split classes
        self._hash = _label_hashes(self.index.cards)
        self._total = int(np.asarray(evaluator.base.sizes).sum())
        self._csr: dict[str, tuple[IntArray, npt.NDArray[np.float64]]] = {}
        # base classes with a single sensitive value (most, when records are near unique):
        # that value and its count, read without the CSR expansion
        self._single: dict[str, tuple[BoolArray, IntArray, npt.NDArray[np.float64]]] = {}
        for name, (cls, val, cnt, nv) in self.index._sparse.items():  # cls is sorted
            indptr = np.searchsorted(cls, np.arange(n + 1, dtype=np.int64)).astype(np.int64)
            self._csr[name] = (
                indptr,
                np.bincount(val, weights=cnt, minlength=nv).astype(np.float64),
            )
            first = np.minimum(indptr[:-1], max(val.size - 1, 0))
            self._single[name] = (
                np.diff(indptr) == 1,
                val[first] if val.size else np.zeros(n, dtype=np.int64),
                cnt[first] if cnt.size else np.zeros(n, dtype=np.float64),
            )
        self._version = 0
        self._dirty = True
        self._memo: dict[int, tuple[int, bool, int]] = {}
        # per attribute: the groups whose split failed the models when last judged, and
        # their split classes (tuple hash, group, label), valid while a group is unchanged
        self._failed: dict[int, tuple[int, IntArray, U64Array, IntArray, IntArray]] = {}
        self._table: _Table | None = self._check(self._levels)
        if not self._table.ok:
            raise PrivacyCheckError(
                "The full-domain PrivacyFrost2 table fails its check before the partial-domain "
                "step; nothing may be released."
            )
        self.s = self._score(self._table)
        self._sync()

    # ------------------------------------------------------------------ state
    @property
    def levels(self) -> IntArray:
        """Level of each attribute in each base class."""
        return self._levels

    @levels.setter
    def levels(self, value: IntArray) -> None:
        self._levels = np.asfortranarray(value)
        self._dirty = True

    @property
    def table(self) -> _Table:
        """The released classes, numbered as :meth:`_LabelIndex.table` numbers them."""
        if self._table is None:
            self._table = self.index.table(self._levels)
        return self._table

    @table.setter
    def table(self, value: _Table) -> None:
        self._table = value
        self._dirty = True

    def _sync(self) -> None:
        """Rebuild the group state from ``levels`` and ``table`` (after they were set)."""
        if not self._dirty:
            return
        t = self.table
        keys = self.index.keys(self._levels)
        g = int(t.sizes.size)
        self._gid = np.asarray(t.ids, dtype=np.int64).copy()
        self._gviol = np.asarray(t.violating, dtype=bool).copy()
        # base classes outside suppressed groups (splits never change it: only groups that
        # are not suppressed split, into groups that are not)
        self._row_ok = ~self._gviol[self._gid]
        self._ok = bool(t.ok)
        # label of each group per attribute: rows of one array with room to grow
        self._gl = np.zeros((len(keys), max(2 * g, 16)), dtype=np.int64)
        self._glab: list[IntArray] = []
        self._ghash = np.zeros(g, dtype=np.uint64)
        self._lcount: list[IntArray] = []
        for j, (k, card, f) in enumerate(zip(keys, self.index.cards, self._hash)):
            lab = self._gl[j, :g]
            lab[self._gid] = k
            self._glab.append(lab)
            self._ghash += f[lab]
            self._lcount.append(np.bincount(k, minlength=card).astype(np.int64))
        self._e = np.array([np.count_nonzero(c) for c in self._lcount], dtype=np.int64)
        self._scratch = [np.zeros(card, dtype=np.int64) for card in self.index.cards]
        self._owner = [np.zeros(card, dtype=np.int64) for card in self.index.cards]
        self._dirty = False
        self._version += 1
        self._stamp = np.full(g, self._version, dtype=np.int64)  # version of last change
        self._failed = {}

    def _tick(self) -> None:
        self.checked += 1
        if self.progress is not None:
            self.progress(1, None)

    def _check(self, levels: IntArray) -> _Table:
        self._tick()
        return self.index.table(levels)

    # ------------------------------------------------------------------ search

    def _batch(self, j: int) -> bool:
        """De-generalize attribute ``j`` in every group where that keeps the check."""
        self._sync()
        memo = self._memo.get(j)
        if memo is not None and memo[0] == self._version:
            # nothing changed since attribute j was last tried in vain: same outcome
            if memo[1]:
                self._tick()
            self.entangled += memo[2]
            return False
        found = self._find(j)
        if found is None:
            return False
        return self._apply_plan(found)

    def _give_up(self, j: int, ticked: bool, entangled: int) -> None:
        self._memo[j] = (self._version, ticked, entangled)

    def _find(self, j: int) -> _Plan | None:
        """The candidate splits of attribute ``j``: which groups pass, as a plan."""
        ev = self.evaluator
        gid, g = self._gid, int(self._gviol.size)
        lv = self._levels[:, j]
        cand = lv > self.lo[j]
        cand &= self._row_ok
        if not cand.any():
            self._give_up(j, False, 0)
            return None
        self._tick()  # the table with every candidate group split
        # groups unchanged since their split on j failed fail again: only their split
        # classes take part (for the merges of other groups), not their base classes
        skip = np.zeros(g, dtype=bool)
        f_key = np.zeros(0, dtype=np.uint64)
        f_par = f_lab = np.zeros(0, dtype=np.int64)
        changed = np.ones(g, dtype=bool)
        cached = self._failed.get(j)
        if cached is not None:
            ver, f_grp, f_key, f_par, f_lab = cached
            skip[f_grp[self._stamp[f_grp] <= ver]] = True
            live = skip[f_par]
            f_key, f_par, f_lab = f_key[live], f_par[live], f_lab[live]
            changed = self._stamp > ver
        glab, f = self._glab[j], self._hash[j]
        family = self._ghash - f[glab]  # the hash of a group's tuple without attribute j
        while True:
            ci = np.flatnonzero(cand & ~skip[gid])
            g_ci = gid[ci]
            new = self.index.ids_at(j, lv[ci] - 1, ci)
            split_key = family[g_ci] + f[new]
            # only keys equal to a new one (a split key, or a changed group's tuple) can
            # share a class: no two of the others did when the cache was made
            has_cand = np.zeros(g, dtype=bool)
            has_cand[g_ci] = True
            near_f, near_g = _near(
                np.concatenate([split_key, self._ghash[changed]]), f_key, self._ghash
            )
            fx = np.flatnonzero(near_f)
            gx = np.flatnonzero(has_cand | changed | near_g)
            c, nf = ci.size, fx.size
            keys = np.concatenate([split_key, f_key[fx], self._ghash[gx]])
            parents = np.concatenate([g_ci, f_par[fx], gx])
            labels = np.concatenate([new, f_lab[fx], glab[gx]])
            cls, nc = factorize_keys(keys)
            multi = self._multi(cls, nc, parents)
            if multi.any():  # merges, or hash collisions: regroup those rows by their labels
                rx = np.flatnonzero(multi[cls])
                codes = [lab[parents[rx]] for lab in self._glab]
                codes[j] = labels[rx]
                exact, nx = group_rows(codes, self.index.cards)
                cls[rx] = nc + exact
                nc += nx
                multi = self._multi(cls, nc, parents)
            # a skipped group sharing a class with another group is judged with it (its
            # verdict then depends on the other group's records), as the whole check does
            back = parents[multi[cls]]
            back = back[skip[back]]
            if not back.size:
                break
            skip[back] = False
            live = skip[f_par]
            f_key, f_par, f_lab = f_key[live], f_par[live], f_lab[live]
        cls1 = cls[:c]
        cls2 = np.full(g, -1, dtype=np.int64)  # the class of each grouped group's tuple
        cls2[gx] = cls[c + nf :]
        entangled = np.zeros(g, dtype=bool)
        entangled[parents[multi[cls]]] = True
        # the other base classes of these groups keep their labels (their group's tuple)
        r3 = np.flatnonzero((has_cand | entangled)[gid] & ~cand)
        cls3 = cls2[gid[r3]]
        present = np.zeros(nc, dtype=bool)
        present[cls1] = True
        present[cls3] = True
        pres = np.flatnonzero(present)
        n_sub = int(pres.size)
        dense = np.full(nc, -1, dtype=np.int64)
        dense[pres] = np.arange(n_sub, dtype=np.int64)
        id1, id3 = dense[cls1], dense[cls3]
        rows_all = np.concatenate([ci, r3])
        ids_all = np.concatenate([id1, id3])
        grp_all = np.concatenate([g_ci, gid[r3]])
        sizes = np.bincount(ids_all, weights=ev.base.sizes[rows_all], minlength=n_sub).astype(
            np.int64
        )
        # a class below the minimal class size fails every model: its groups fail without
        # statistics; the models judge the classes that hold records of the other groups
        bad = sizes < ev.mcs
        fails = np.zeros(g, dtype=bool)
        fails[grp_all[bad[ids_all]]] = True
        live = np.zeros(n_sub, dtype=bool)
        live[ids_all[~fails[grp_all]]] = True
        if live.any():
            keep = live[ids_all]
            n_live = int(np.count_nonzero(live))
            remap = np.cumsum(live, dtype=np.int64) - 1
            # the classes of these base classes, and every other record as one class
            stats = self._local_stats(rows_all[keep], remap[ids_all[keep]], n_live)
            bad[live] |= _violating(ev, stats)[:n_live]
            fails[grp_all[bad[ids_all]]] = True
        ok = has_cand & ~fails & ~self._gviol
        self._remember(
            j, skip, fails & ~entangled, g_ci, cls1, multi, keys, labels, f_key, f_par, f_lab
        )
        n_ent = int((entangled & ok).sum())
        self.entangled += n_ent
        passing = ok & ~entangled
        if not passing.any():
            self._give_up(j, True, n_ent)
            return None
        sel = passing[g_ci]
        g3 = grp_all[c:]
        sel3 = passing[g3]
        rows3 = r3[sel3]
        class_parent = np.full(nc, -1, dtype=np.int64)
        class_parent[cls1[sel]] = g_ci[sel]
        class_parent[cls3[sel3]] = g3[sel3]
        class_label = np.empty(nc, dtype=np.int64)
        class_label[cls] = labels
        class_hash = np.empty(nc, dtype=np.uint64)
        class_hash[cls] = keys
        class_size = np.zeros(nc, dtype=np.int64)
        class_size[pres] = sizes[:n_sub]
        return _Plan(
            j=j,
            n_groups=g,
            rows=ci[sel],
            parent=g_ci[sel],
            old=glab[g_ci[sel]],
            new=new[sel],
            cls=cls1[sel],
            rows3=rows3,
            parent3=g3[sel3],
            cls3=cls3[sel3],
            class_parent=class_parent,
            class_label=class_label,
            class_hash=class_hash,
            class_size=class_size,
        )

    def _local_stats(self, rows: IntArray, ids: IntArray, n_sub: int) -> ClassStats:
        """Class statistics of classes ``0..n_sub-1`` (base classes ``rows`` in ``ids``)
        and one more class of every other record (left out when empty).

        Equal to :func:`_class_stats` with every other base class in class ``n_sub``, but
        the work is over ``rows`` only (the other class is the whole table minus them).

        Parameters
        ----------
        rows, ids : ndarray of int64
            Base classes and their classes.
        n_sub : int
            Number of classes of ``rows``.

        Returns
        -------
        ClassStats
        """
        ev = self.evaluator
        base = ev.base
        inside = np.bincount(ids, weights=base.sizes[rows], minlength=n_sub).astype(np.int64)
        rest = self._total - int(inside.sum())
        sizes = np.append(inside, rest) if rest else inside
        g = int(sizes.size)
        hists = {}
        for name, (_, val, cnt, nv) in self.index._sparse.items():
            indptr, total = self._csr[name]
            single, val1, cnt1 = self._single[name]
            one = single[rows]
            r1, i1 = (rows, ids) if one.all() else (rows[one], ids[one])
            summed = np.bincount(i1 * nv + val1[r1], weights=cnt1[r1], minlength=n_sub * nv).astype(
                np.float64, copy=False
            )
            if r1.size < rows.size:  # the others through the CSR arrays
                rm, im = rows[~one], ids[~one]
                start = indptr[rm]
                lens = indptr[rm + 1] - start
                ends = np.cumsum(lens)
                idx = np.repeat(start - ends + lens, lens) + np.arange(
                    int(ends[-1]) if ends.size else 0, dtype=np.int64
                )
                summed += np.bincount(
                    np.repeat(im, lens) * nv + val[idx], weights=cnt[idx], minlength=n_sub * nv
                )
            summed = summed.reshape(n_sub, nv)
            if rest:
                summed = np.vstack([summed, total - summed.sum(axis=0)])
            hists[name] = SensitiveHistogram(
                base.sensitive[name].values, summed.astype(np.int64).reshape(g, nv)
            )
        return ClassStats(
            columns=base.columns,
            levels=tuple(-1 for _ in base.columns),  # mixed levels
            sizes=sizes,
            n_rows=base.n_rows,
            sensitive=hists,
        )

    def _remember(
        self,
        j: int,
        skip: BoolArray,
        fails: BoolArray,
        g_ci: IntArray,
        cls1: IntArray,
        multi: BoolArray,
        keys: U64Array,
        labels: IntArray,
        f_key: U64Array,
        f_par: IntArray,
        f_lab: IntArray,
    ) -> None:
        """Remember the groups whose split on ``j`` fails on their own records.

        Kept per group: the verdict (it holds while the group is unchanged) and its split
        classes (tuple hash, group, label on ``j``; one entry per class), so that a later
        batch on ``j`` still sees them merge with other groups' classes.

        Parameters
        ----------
        j : int
            The attribute.
        skip : ndarray of bool
            Groups skipped in this batch (their cached entries are ``f_key``, ...).
        fails : ndarray of bool
            Groups judged now whose split fails and shares no class with another group.
        g_ci, cls1 : ndarray of int
            Group and class of each candidate base class judged now.
        multi : ndarray of bool
            Classes holding rows of more than one group.
        keys, labels : ndarray
            Tuple hash and label on ``j`` of the rows grouped (candidates first).
        f_key, f_par, f_lab : ndarray
            The cached entries of the skipped groups.
        """
        rows = np.flatnonzero(fails[g_ci])
        cl = cls1[rows]
        first = np.empty(multi.size, dtype=np.int64)
        first[cl] = rows
        rows = rows[(first[cl] == rows) | multi[cl]]
        self._failed[j] = (
            self._version,
            np.flatnonzero(skip | fails),
            np.concatenate([f_key, keys[rows]]),
            np.concatenate([f_par, g_ci[rows]]),
            np.concatenate([f_lab, labels[rows]]),
        )

    @staticmethod
    def _multi(cls: IntArray, nc: int, parents: IntArray) -> BoolArray:
        """Classes holding rows of more than one group."""
        first = np.empty(nc, dtype=np.int64)
        first[cls] = parents
        multi = np.zeros(nc, dtype=bool)
        multi[cls[first[cls] != parents]] = True
        return multi

    def _apply_plan(self, plan: _Plan) -> bool:
        """Apply every passing split if the score does not drop; else bisect like the
        reference does, the groups in table order (by their first base class)."""
        groups = np.flatnonzero(np.bincount(plan.parent, minlength=plan.n_groups) > 0)
        if self._try(plan, groups):
            return True
        if groups.size == 1:
            return False
        # halves in table order: groups by their first base class, as the reference does
        groups = groups[np.argsort(_first_member(self._gid, plan.n_groups)[groups])]
        half = groups.size // 2
        first = self._apply(plan, groups[:half])
        second = self._apply(plan, groups[half:])
        return first or second

    def _apply(self, plan: _Plan, groups: IntArray) -> bool:
        """Apply the splits of ``groups`` if the score does not drop; otherwise each half."""
        if self._try(plan, groups):
            return True
        if groups.size == 1:
            return False
        half = groups.size // 2
        first = self._apply(plan, groups[:half])
        second = self._apply(plan, groups[half:])
        return first or second

    def _try(self, plan: _Plan, groups: IntArray) -> bool:
        """Check the table with the splits of ``groups`` (one table checked) and keep it if it
        passes with a score that does not drop."""
        self._tick()
        if not self._ok:  # the splits leave the suppressed classes as they are
            return False
        member = np.zeros(plan.n_groups, dtype=bool)
        member[groups] = True
        sel = member[plan.parent]
        j = plan.j
        e_j = self._count_after(j, plan.old[sel], plan.new[sel])
        e = self._e.copy()
        e[j] = e_j
        s = self.score_fn.score(e, self.v, self.eb)
        if s < self.s:
            return False
        self._commit(plan, member, sel)
        self._e, self.s = e, s
        self.splits += int(groups.size)
        return True

    def _count_after(self, j: int, old: IntArray, new: IntArray) -> int:
        """``e`` of attribute ``j`` after base classes move from labels ``old`` to ``new``."""
        scratch, owner, count = self._scratch[j], self._owner[j], self._lcount[j]
        np.add.at(scratch, new, 1)
        np.subtract.at(scratch, old, 1)
        touched = np.concatenate([old, new])
        pos = np.arange(touched.size, dtype=np.int64)
        owner[touched] = pos
        uniq = touched[owner[touched] == pos]
        before = count[uniq]
        after = before + scratch[uniq]
        scratch[uniq] = 0
        gained = int(np.count_nonzero((before == 0) & (after > 0)))
        lost = int(np.count_nonzero((before > 0) & (after == 0)))
        return int(self._e[j]) + gained - lost

    def _commit(self, plan: _Plan, member: BoolArray, sel: BoolArray) -> None:
        """Apply the splits of the groups in ``member``: levels, label counts and groups."""
        j = plan.j
        rows, new = plan.rows[sel], plan.new[sel]
        self._levels[rows, j] -= 1
        np.add.at(self._lcount[j], new, 1)
        np.subtract.at(self._lcount[j], plan.old[sel], 1)
        # each class of a split group becomes a group; one keeps the group's id
        classes = np.flatnonzero(
            (plan.class_parent >= 0) & member[np.maximum(plan.class_parent, 0)]
        )
        parent = plan.class_parent[classes]
        keep = np.empty(plan.n_groups, dtype=np.int64)
        keep[parent] = classes
        kept = keep[parent] == classes
        g = int(self._gviol.size)
        extra = classes[~kept]
        new_id = np.empty(plan.class_parent.size, dtype=np.int64)
        new_id[classes[kept]] = parent[kept]
        new_id[extra] = g + np.arange(extra.size, dtype=np.int64)
        sel3 = member[plan.parent3]
        rows3 = plan.rows3[sel3]
        self._gid[rows] = new_id[plan.cls[sel]]
        self._gid[rows3] = new_id[plan.cls3[sel3]]
        born = parent[~kept]
        g_new = g + int(born.size)
        if g_new > self._gl.shape[1]:
            grown = np.zeros((self._gl.shape[0], 2 * g_new), dtype=np.int64)
            grown[:, :g] = self._gl[:, :g]
            self._gl = grown
        self._gl[:, g:g_new] = self._gl[:, born]
        self._glab = [row[:g_new] for row in self._gl]
        self._glab[j][new_id[classes]] = plan.class_label[classes]
        self._ghash = np.concatenate([self._ghash, self._ghash[born]])
        self._ghash[new_id[classes]] = plan.class_hash[classes]
        self._gviol = np.concatenate([self._gviol, np.zeros(extra.size, dtype=bool)])
        self._table = None
        self._version += 1
        self._stamp = np.concatenate([self._stamp, np.zeros(extra.size, dtype=np.int64)])
        self._stamp[new_id[classes]] = self._version

    def result(self, evaluator: LatticeEvaluator) -> PartialDomainResult:
        return _result(self.index, self._levels, self.table, self.s, self.splits, self.checked)


class _CompiledPartial(_Rounds):
    """State of the partial-domain search, on compiled kernels (numba).

    Same search and outcome as :class:`_ReferencePartial` (every split, table checked and
    group left alone), at a cost per batch of the groups judged rather than of the table:
    the released table is kept as groups of base classes (contiguous member ranges, labels, a
    64-bit tuple hash, the deepest level of each attribute); a group whose split on an
    attribute failed the models, and that has not changed since, fails again without being
    looked at, and so does a group holding a member whose split class on that attribute was
    once too small (it stays too small as the partition refines), while a group whose
    members are known to share their label one level down splits into itself and passes
    (its records, and so its verdict, unchanged); merges are found per
    family (groups equal on every attribute but the one split), see :mod:`._kernels`. The
    models judge the split classes of the groups judged in one call per batch, on class
    statistics that hold those classes and one class of every other record (so the whole
    table's distribution is the same). A batch that changed nothing is not repeated while
    the table stays the same: its tables checked are counted again. With the built-in
    models and a score with :meth:`Score.terms` a batch is one compiled call
    (``_kernels._batch``) and a whole round of batches one more (``_kernels._round``);
    otherwise the models judge and the score scores from Python, with the same outcome.
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
        kern: Any,
        classes: tuple[npt.NDArray[np.integer], int] | None = None,
    ) -> None:
        super().__init__(evaluator, min_levels, order, score, priorities, base_counts, progress)
        self.k = kern
        base = evaluator.base
        n = base.n_classes
        m = len(levels)
        self._n, self._m = n, m
        # row-major, one byte a level: the kernels read and change whole rows of levels
        tall = max((h.height for h in hierarchies_of(evaluator)), default=0) > 100
        self._ldt = np.int16 if tall else np.int8
        self._lv = np.empty((n, m), dtype=self._ldt)
        self._lv[...] = np.asarray(levels, dtype=self._ldt)
        cards = self.index.cards
        self._lab_off = np.zeros(m + 1, dtype=np.int64)
        self._lab_off[1:] = np.cumsum(cards)
        self._fh = np.concatenate(_label_hashes(cards)) if m else np.zeros(0, dtype=np.uint64)
        doms = self.index._dom
        self._dom_w = np.array([d.shape[1] for d in doms], dtype=np.int64)
        sizes = [d.size for d in doms]
        self._dom_off = np.zeros(m, dtype=np.int64)
        if m:
            self._dom_off[1:] = np.cumsum(sizes)[:-1]
        self._dom = (
            np.concatenate([d.reshape(-1) for d in doms]).astype(np.int32)
            if m
            else np.zeros(0, dtype=np.int32)
        )
        # (its label counts come from the group state, below)
        self._table: _Table | None
        if classes is None:
            keys0 = [self.index.level_ids(j, int(lv)) for j, lv in enumerate(levels)]
            self._table = self.index.table(None, keys0, counts=False)
        else:  # the full-domain table's classes, as the search found them
            ids = np.asarray(classes[0], dtype=np.int64)
            csize = np.bincount(ids, weights=base.sizes, minlength=classes[1]).astype(np.int64)
            self._table = self.index.judged(ids, csize, np.zeros(0, dtype=np.int64))
        self.checked += 1
        if progress is not None:
            progress(1, None)
        if not self._table.ok:
            raise PrivacyCheckError(
                "The full-domain PrivacyFrost2 table fails its check before the partial-domain "
                "step; nothing may be released."
            )
        # The kernels see the base classes renumbered class by class of the full-domain
        # table: a group's members (a subset of one such class) then lie close together in
        # memory, and walking them reads compact ranges instead of the whole table.
        # ``_perm[i]`` is the base class at position ``i``.
        self._perm = kern.counting_order(self._table.ids, self._table.sizes.size)[0]
        perm = self._perm
        self._at = np.empty(n, dtype=np.int64)  # the position of each base class
        self._at[perm] = np.arange(n, dtype=np.int64)
        # 32-bit codes and labels: half the memory the kernels walk through
        self._codes = np.empty((m, n), dtype=np.int32)
        kern.take_rows(np.asarray(base.keys, dtype=np.int32), perm, self._codes)
        self._bsize = np.ascontiguousarray(np.asarray(base.sizes)[perm], dtype=np.int64)
        self._mcs = int(evaluator.mcs)
        # the sensitive counts of every base class, all attributes side by side (CSR)
        layout, cls, val, cnt, self._nv, self._total_hist = side_by_side(self.index._sparse)
        self._sens = [(name, off, width) for name, (off, width) in layout.items()]
        by, self._sp_indptr = kern.counting_order(self._at[cls], n)
        self._sp_val, self._sp_cnt = val[by], cnt[by]
        self._total = int(self._bsize.sum())
        # the models as the compiled judge reads them (None: they judge themselves)
        self._jspec = judge_spec(evaluator.models, layout)
        # the score as tabulated terms (None: it is called from Python); with the compiled
        # judge, a whole batch then runs in one compiled call
        terms = score.terms(priorities, base_counts, cards) if m else None
        self._fused: tuple[_JudgeSpec, bool, npt.NDArray[np.float64], IntArray] | None = None
        if terms is not None and self._jspec is not None:
            kind, tables = terms
            term_off = np.zeros(m, dtype=np.int64)
            term_off[1:] = np.cumsum([t.size for t in tables])[:-1]
            self._fused = (
                self._jspec,
                kind == "max",
                np.concatenate(tables).astype(np.float64),
                term_off,
            )
        self._out = np.zeros(4, dtype=np.int64)
        self._mixed = tuple(-1 for _ in base.columns)  # the class levels of the judge's stats
        # group state (capacity n: groups partition the base classes), written by _sync's
        # build_groups for the groups there are and by the commits for the groups they make
        self._glab = np.empty((m, n), dtype=np.int32)  # attribute-major: a column per scan
        self._ghash = np.empty(n, dtype=np.uint64)
        self._gviol = np.empty(n, dtype=np.bool_)
        self._gfirst = np.empty(n, dtype=np.int64)
        self._gmax = np.empty((n, m), dtype=self._ldt)
        self._gstart = np.empty(n, dtype=np.int64)
        self._gcount = np.empty(n, dtype=np.int64)
        self._mem = np.empty(n, dtype=np.int64)
        self._gid = np.empty(n, dtype=np.int64)
        words = max((m + 63) // 64, 1)  # one bit per attribute
        self._doom = np.zeros((n, words), dtype=np.uint64)
        self._gdoom = np.empty((n, words), dtype=np.uint64)
        # per group, one bit per attribute: a candidate (not suppressed, a member above the
        # lowest level), its split failed the models since it last changed
        self._gcand = np.empty((n, words), dtype=np.uint64)
        self._gfail = np.empty((n, words), dtype=np.uint64)
        self._guni = np.empty((n, words), dtype=np.uint64)  # members on one level
        self._lcount = np.empty(int(self._lab_off[-1]), dtype=np.int64)
        # one scratch row per chunk of work that the kernels run in parallel
        self._scratch = np.full((kern.chunks, int(self._lab_off[-1])), -1, dtype=np.int64)
        self._delta = np.zeros(int(self._lab_off[-1]), dtype=np.int64)
        # per attribute and position: its label one level down, or its own on the lowest
        # level (what a split on that attribute gives it; kept by the commits)
        self._down = np.empty((m, n), dtype=np.int32)
        # per attribute and group: the label of ``down`` its members all share, or -1 (not
        # known to); then its split on that attribute is the group itself, unwalked
        self._gdl = np.empty((m, n), dtype=np.int32)
        # per attribute and group whose members share one level on it: a level on which
        # their codes share one label (then so do they on every level above it)
        self._gcl = np.empty((m, n), dtype=self._ldt)
        # whether ``_lv`` is behind: the kernels do not keep the levels of a group's members
        # on an attribute where they share one level (it is the group's ``_gmax``)
        self._stale = False
        self._gsize = np.empty(n, dtype=np.int64)  # records per group
        self._g = 0
        self._version = 0
        self._memo: dict[int, tuple[int, int, int]] = {}
        # the last batch's judged groups and their split classes (for _apply)
        self._found: tuple[IntArray, ...] = ()
        self._dirty = True
        self._sync()
        self._table.counts = self._e.copy()
        self.s = self._score(self._table)

    # ------------------------------------------------------------------ state
    @property
    def levels(self) -> IntArray:
        """Level of each attribute in each base class (a copy)."""
        if self._stale:  # the group state knows them (and is in step): no write-back
            out = np.empty((self._n, self._m), dtype=np.int64)
            self.k.levels_of(
                self._g, self._lv, self._gmax, self._guni, self._gstart, self._gcount, self._mem,
                self._perm, out,
            )  # fmt: skip
            return out
        return np.take(self._lv, self._at, axis=0).astype(np.int64)

    @levels.setter
    def levels(self, value: IntArray) -> None:
        self._lv = np.ascontiguousarray(np.asarray(value)[self._perm], dtype=self._ldt)
        self._stale = False
        self._doom[...] = 0  # levels set from outside need not refine the ones known
        self._dirty = True

    @property
    def table(self) -> _Table:
        """The released classes, numbered as :meth:`_LabelIndex.table` numbers them."""
        if self._table is None:
            self._table = self.index.table(None, self._keys())
        return self._table

    @table.setter
    def table(self, value: _Table) -> None:
        self._materialize()  # (the group state that knows the levels is rebuilt)
        self._table = value
        self._doom[...] = 0
        self._dirty = True

    def _materialize(self) -> None:
        """Bring ``_lv`` up to date (see ``_stale``)."""
        if self._stale:  # written back in place: every position is its own
            self.k.levels_of(
                self._g, self._lv, self._gmax, self._guni, self._gstart, self._gcount, self._mem,
                np.arange(self._n, dtype=np.int64), self._lv,
            )  # fmt: skip
            self._stale = False

    def _keys(self) -> list[IntArray]:
        """Label id per base class, per attribute: the labels of its group."""
        out = np.empty((self._m, self._n), dtype=np.int64)
        self.k.keys_of(self._gid, self._glab, self._at, out)
        return list(out)

    def _sync(self) -> None:
        """Rebuild the group state from ``levels`` and ``table`` (after they were set)."""
        if not self._dirty:
            return
        t = self.table
        g = int(t.sizes.size)
        self._g = g
        self._gid[...] = t.ids[self._perm]
        self._gviol[...] = False
        self._gviol[:g] = t.violating
        self._ok = bool(t.ok)
        self.k.build_groups(
            self._gid, g, self._lv, self._codes, self._dom, self._dom_off, self._dom_w,
            self._fh, self._lab_off, self._perm, self._glab, self._ghash, self._gfirst,
            self._gmax, self._gstart, self._gcount, self._mem, self._lcount, self._doom,
            self._gdoom, self._gviol, self.lo, self._gcand, self._gfail, self._guni, self._down,
            self._bsize, self._gdl, self._gsize, self._gcl,
        )  # fmt: skip
        self._e = (
            np.add.reduceat(self._lcount > 0, self._lab_off[:-1]).astype(np.int64)
            if self._m
            else np.zeros(0, dtype=np.int64)
        )
        self._version += 1
        self._memo = {}
        self._dirty = False

    def _tick(self, n: int = 1) -> None:
        self.checked += n
        if self.progress is not None:
            for _ in range(n):
                self.progress(1, None)

    # ------------------------------------------------------------------ search

    def run(self) -> None:
        """The rounds of :class:`_Rounds`; with the built-in models and a tabulated score,
        a whole round in one compiled call (``_kernels._round``)."""
        if self._fused is None:
            super().run()
            return
        jspec, is_max, terms, term_off = self._fused
        order = np.asarray(self.order, dtype=np.int64)
        # per attribute: the table version it was last tried in vain at (-1: never), and
        # that batch's tables checked and groups left alone
        memo = np.zeros((3, self._m), dtype=np.int64)
        memo[0] = -1
        tot = np.zeros(5, dtype=np.int64)
        changed = True
        while changed:
            self._sync()
            s, g = self.k.round(
                order, memo[0], memo[1], memo[2], self._version, tot, self._g, self._mcs,
                self._lv, self._down, self._codes, self._dom, self._dom_off, self._dom_w,
                self._fh, self._lab_off, self._bsize, self._glab, self._ghash, self._gcand,
                self._gfail, self._gstart, self._gcount, self._mem, self._scratch,
                self._sp_indptr, self._sp_val, self._sp_cnt, self._nv, self._doom, self._gdoom,
                self._total, self._total_hist, *jspec, self.lo, self._perm, self._gfirst,
                self._gmax, self._guni, self._gid, self._lcount, self._delta, self.k.chunks,
                self._ok, self._e, self.s, is_max, terms, term_off, self._out, self._gdl,
                self._gsize, self._gcl,
            )  # fmt: skip
            self._tick(int(tot[0]))
            self.entangled += int(tot[1])
            changed = bool(tot[4])
            if changed:
                self.splits += int(tot[2])
                self._version = int(tot[3])
                self._stale = True
                self._table = None
                self._g, self.s = int(g), float(s)

    def _batch(self, j: int) -> bool:
        """De-generalize attribute ``j`` in every group where that keeps the check."""
        self._sync()
        memo = self._memo.get(j)
        if memo is not None and memo[0] == self._version:
            self._tick(memo[1])  # nothing changed since j was tried in vain: same outcome
            self.entangled += memo[2]
            return False
        checked, entangled = self.checked, self.entangled
        changed = self._try_batch(j)
        if not changed:
            self._memo[j] = (self._version, self.checked - checked, self.entangled - entangled)
        return changed

    def _try_batch(self, j: int) -> bool:
        if self._fused is not None:
            return self._fused_batch(j, *self._fused)
        found = self.k.find(
            j, self._g, self._mcs, self._down, self._fh, self._lab_off, self._bsize, self._glab,
            self._ghash, self._gcand, self._gfail, self._gstart, self._gcount, self._mem,
            self._scratch, self._sp_indptr, self._sp_val, self._sp_cnt, self._nv, self._doom,
            self._gdoom, self._total, self._total_hist, self._gdl, self._gsize, self._guni,
            self._gmax, self._gcl, self._codes, self._dom, self._dom_off, self._dom_w, self.lo,
        )  # fmt: skip
        n_cand, judged, ent, failed, cls_group, judge_of, judge_size, hist = found[:8]
        if not n_cand:
            return False
        self._tick()  # the table with every candidate group split
        if judge_size.size > 1:
            bad = self._judge(judge_size, hist)
            cls_bad = np.zeros(judge_of.size, dtype=bool)
            has = judge_of >= 0
            cls_bad[has] = bad[judge_of[has]]
            failed = failed.copy()
            failed[cls_group[cls_bad]] = True
        self._gfail[judged[failed], j >> 6] |= np.uint64(1) << np.uint64(j & 63)
        self.entangled += int(np.count_nonzero(ent & ~failed))
        passing = np.flatnonzero(~failed & ~ent)  # as indices into ``judged``
        if not passing.size:
            return False
        passing = passing[np.argsort(self._gfirst[judged[passing]])]  # table order
        self._found = (judged, *found[8:])
        return self._apply(j, passing)

    def _fused_batch(
        self,
        j: int,
        jspec: _JudgeSpec,
        is_max: bool,
        terms: npt.NDArray[np.float64],
        term_off: IntArray,
    ) -> bool:
        """The batch of :meth:`_try_batch` (its split, verdicts and halving) in one compiled
        call: the built-in models and a score with :meth:`Score.terms`."""
        out = self._out
        s, g = self.k.batch(
            j, self._g, self._mcs, self._lv, self._down, self._codes, self._dom, self._dom_off,
            self._dom_w, self._fh, self._lab_off, self._bsize, self._glab, self._ghash,
            self._gcand, self._gfail, self._gstart, self._gcount, self._mem, self._scratch,
            self._sp_indptr, self._sp_val, self._sp_cnt, self._nv, self._doom, self._gdoom,
            self._total, self._total_hist, *jspec, self.lo, self._perm, self._gfirst,
            self._gmax, self._guni, self._gid, self._lcount, self._delta, self.k.chunks,
            self._ok, self._e, self.s, is_max, terms, term_off, out, self._gdl, self._gsize,
            self._gcl,
        )  # fmt: skip
        self._tick(int(out[0]))
        self.entangled += int(out[1])
        if not out[3]:
            return False
        self.splits += int(out[2])
        self._version += int(out[3])
        self._stale = True
        self._table = None
        self._g, self.s = int(g), float(s)
        return True

    def _judge(self, sizes: IntArray, hist: IntArray) -> BoolArray:
        """Which of these classes violate a model. The last row of ``sizes`` and ``hist``
        (dropped from the answer) is one class of every other record, so the whole table's
        distribution is the same; it is left out when it is empty. Built-in models are
        judged by the compiled judge, on the whole table's counts, with the same verdicts."""
        ev = self.evaluator
        nk = int(sizes.size) - 1
        if self._jspec is not None:
            bad = np.empty(nk, dtype=np.bool_)
            self.k.judge(sizes, hist, nk, self._total_hist, self._mcs, *self._jspec, bad)
            return bad
        if not sizes[nk]:
            sizes, hist = sizes[:nk], hist[:nk]
        hists = {}
        for name, off, nvals in self._sens:
            hists[name] = SensitiveHistogram(
                ev.base.sensitive[name].values, hist[:, off : off + nvals]
            )
        stats = ClassStats(
            columns=ev.base.columns,
            levels=self._mixed,
            sizes=sizes,
            n_rows=ev.base.n_rows,
            sensitive=hists,
        )
        return _violating(ev, stats)[:nk]

    def _apply(self, j: int, which: IntArray) -> bool:
        """Apply the splits of the judged groups ``which`` (indices into the last
        :meth:`_try_batch`'s judged groups) if the score does not drop; otherwise each half
        (in table order), as the reference does."""
        self._tick()
        judged, cstart, cls_label, cls_nb = self._found[:4]
        if self._ok:
            e_j = self.k.e_after(
                j, which, judged, int(self._e[j]), cstart, cls_label, cls_nb, self._lab_off,
                self._glab, self._lcount, self._delta,
            )  # fmt: skip
            e = self._e.copy()
            e[j] = e_j
            s = self.score_fn.score(e, self.v, self.eb)
            if s >= self.s:
                self._commit(j, which)
                self._e, self.s = e, s
                self.splits += int(which.size)
                return True
        if which.size == 1:
            return False
        half = which.size // 2
        first = self._apply(j, which[:half])
        second = self._apply(j, which[half:])
        return first or second

    def _commit(self, j: int, which: IntArray) -> None:
        """Split the judged groups ``which`` of the last :meth:`_try_batch` on ``j``, into
        the split classes that its ``find`` found."""
        self._version += 1
        self._g = self.k.commit(
            j, self.lo, which, *self._found, self._g, self._lv, self._down, self._codes,
            self._dom, self._dom_off, self._dom_w, self._fh, self._lab_off, self._perm, self._gid,
            self._glab, self._ghash, self._gcand, self._gfail, self._gfirst, self._gmax,
            self._guni, self._gstart, self._gcount, self._mem, self._lcount, self._doom,
            self._gdoom, self.k.chunks, self._bsize, self._gdl, self._gsize, self._gcl,
        )  # fmt: skip
        self._stale = True
        self._table = None

    def result(self, evaluator: LatticeEvaluator) -> PartialDomainResult:
        self._sync()
        g = self._g
        gid = np.empty(self._n, dtype=np.int64)  # the group of each base class
        gid[self._perm] = self._gid
        sizes = np.bincount(self._gid, weights=self._bsize, minlength=g).astype(np.int64)
        violating = self._gviol[:g].copy()
        suppressed = int(sizes[violating].sum())
        # the groups are the released classes (no split that merges labels is kept)
        t = _Table(
            gid, sizes, violating, suppressed, suppressed <= evaluator.max_suppressed,
            self._e.copy(),
        )  # fmt: skip
        return _result(
            self.index, self.levels, t, self.s, self.splits, self.checked,
            class_levels=self._gmax[:g].astype(np.int64), class_codes=self._glab[:, :g],
        )  # fmt: skip


def _transposed(keys: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
    """``keys.T`` as a contiguous array (compiled when numba is there: numpy's transposed
    copy of a tall table is several times slower); ``keys.T`` itself when the keys are
    column-major (as the numpy engine makes them)."""
    if keys.T.flags.c_contiguous:
        return keys.T
    kern = kernels()
    if kern is None or not keys.size:
        return np.ascontiguousarray(keys.T)
    out = np.empty((keys.shape[1], keys.shape[0]), dtype=keys.dtype)
    kern.take_rows(keys, np.arange(keys.shape[0], dtype=np.int64), out)
    return out


def _result(
    index: _LabelIndex,
    levels: IntArray,
    t: _Table,
    s: float,
    splits: int,
    checked: int,
    *,
    class_levels: IntArray | None = None,
    class_codes: npt.NDArray[np.integer] | None = None,
) -> PartialDomainResult:
    """The result of a partial-domain search (shared by the implementations): classes
    numbered in the order of their first base class, whatever numbering ``t`` has.

    ``class_levels`` (per class of ``t``, the deepest level of each attribute) and
    ``class_codes`` (attribute by class of ``t``: the label id of each class) are computed
    from ``levels`` when not given.
    """
    n = t.ids.size
    g = int(t.sizes.size)
    m = levels.shape[1]
    first = np.empty(g, dtype=np.int64)  # the first base class of each class
    first[t.ids[::-1]] = np.arange(n - 1, -1, -1, dtype=np.int64)
    order = np.argsort(first)  # distinct values
    rank = np.empty(g, dtype=np.int64)
    rank[order] = np.arange(g, dtype=np.int64)
    ids = rank[t.ids]
    if class_levels is None:
        by = np.argsort(ids)  # a maximum per class: its order does not matter
        starts = np.searchsorted(ids[by], np.arange(g, dtype=np.int64))
        class_levels = (
            np.maximum.reduceat(levels[by], starts, axis=0)
            if g and m
            else np.full((g, m), -1, dtype=np.int64)
        )
    else:
        class_levels = class_levels[order]
    if class_codes is None:  # the labels of each class's first base class
        codes = [k[first[order]] for k in index.keys(levels)]
    else:
        codes = [np.asarray(c, dtype=np.int64)[order] for c in class_codes]
    return PartialDomainResult(
        base_levels=levels,
        class_of_base=ids,
        class_sizes=t.sizes[order],
        class_levels=np.asarray(class_levels, dtype=np.int64),
        suppressed=t.violating[order],
        score=s,
        value_counts=tuple(int(x) for x in t.counts),
        splits=splits,
        tables_checked=checked,
        class_codes=tuple(codes),
        label_values=tuple(index.values),
    )


class _ReferencePartial(_Rounds):
    """The straightforward partial-domain search: every table checked whole.

    Kept as the reference of :class:`_Partial` (used by the tests only): it regroups all base
    classes for every table it checks.
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
    ) -> None:
        super().__init__(evaluator, min_levels, order, score, priorities, base_counts, progress)
        n = evaluator.base.n_classes
        self.levels = np.tile(np.asarray(levels, dtype=np.int64), (n, 1))
        self.table = self._check(self.levels)
        if not self.table.ok:
            raise PrivacyCheckError(
                "The full-domain PrivacyFrost2 table fails its check before the partial-domain "
                "step; nothing may be released."
            )
        self.s = self._score(self.table)

    def _check(self, levels: IntArray, apart: IntArray | None = None) -> _Table:
        self.checked += 1
        if self.progress is not None:
            self.progress(1, None)
        return self.index.table(levels, apart=apart)

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
        # groups whose own split passes but is left alone because it would merge
        self.entangled += int((entangled & has_cand & ~fails & ~cur.violating).sum())
        passing = np.flatnonzero(has_cand & ~fails & ~entangled & ~cur.violating)
        if not passing.size:
            return False
        passing = passing[np.argsort(_first_member(gid, g)[passing])]  # table order
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
        return _result(self.index, self.levels, self.table, self.s, self.splits, self.checked)


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

    The splits of different groups on one attribute are independent (a class's verdict
    depends only on its records and the whole table's distribution), so all groups are
    tried at once on one grouping of the base classes, and the passing splits are applied
    together; if together they lower the score, halves are tried, the groups in table order
    (by their first record; each kept change is checked on the table as it then is). Groups
    whose new labels would coincide with another group's (a label repeated across levels) are
    left as they are.

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
        of classes. The compiled step then does not group them again.

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
    args = (
        evaluator,
        levels,
        min_levels,
        order,
        score,
        np.asarray(priorities, dtype=np.float64),
        np.asarray(base_counts, dtype=np.int64),
        progress,
    )
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
    kern = kernels()
    state = _Partial(*args) if kern is None else _CompiledPartial(*args, kern, classes)
    state.run()
    return state.result(evaluator)


def _reference_partial_domain(
    evaluator: LatticeEvaluator,
    levels: Sequence[int],
    *,
    min_levels: Sequence[int],
    order: Sequence[int],
    score: Score,
    priorities: npt.ArrayLike,
    base_counts: npt.ArrayLike,
) -> PartialDomainResult:
    """:func:`partial_domain_degeneralization` by :class:`_ReferencePartial` (for tests).

    Every table is checked whole (all base classes regrouped by their labels); the result
    must equal the fast step's.
    """
    state = _ReferencePartial(
        evaluator,
        levels,
        min_levels,
        order,
        score,
        np.asarray(priorities, dtype=np.float64),
        np.asarray(base_counts, dtype=np.int64),
        None,
    )
    state.run()
    return state.result(evaluator)
