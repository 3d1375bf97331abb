"""What the local-recoding algorithms read of a Problem: labels per level, the requirement.

Both algorithms of Wong et al. 2009 (section 4) move rows, not whole columns, between hierarchy
levels, so they work on integer codes per row:

* :class:`LocalProblem` holds, per quasi-identifier, each row's value code and a small table
  ``text[level, value]``: the code of the value's label at that level. Labels are identified
  by their text over every level, as the release identifies them
  (:func:`anonlab.release.generalize_cells`): the classes the algorithms judge are the classes
  the release is verified on.
* :class:`Requirement` is (alpha,k)-anonymity as the job's models state it, read through their
  public attributes (``k``, ``alpha``, ``values``, ``attributes``) and sized by the model's own
  arithmetic (``max_count``); plain k-anonymity is the requirement with no alpha bound
  (alpha = 1).

References
----------
.. [1] R. C.-W. Wong, J. Li, A. W.-C. Fu, K. Wang, "(alpha, k)-anonymous data publishing",
   J. Intell. Inf. Syst. 33 (2009), sections 2 (Definitions 4-6, Lemma 1), 4.1 (Lemma 5) and
   6 (Definitions 10-14).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, Self, cast

import numpy as np
import numpy.typing as npt

from anonlab._typing import BoolArray, IntArray
from anonlab.data.grouping import group_rows
from anonlab.data.labels import factorize
from anonlab.engines import get_engine
from anonlab.exceptions import InputError, ParameterError
from anonlab.models.alpha_k import further_removal_bound  # Lemma 5: arithmetic, not a judge
from anonlab.release.problem import Problem

__all__ = [
    "BoolArray",
    "Bound",
    "IntArray",
    "LocalProblem",
    "LocalResult",
    "Requirement",
    "segment_starts",
]


#: The models the local-recoding family implements (by their job-file names).
#: The models local recoding meets (k-map estimated with a population model is k-anonymity
#: with its derived k).
SUPPORTED = ("k_anonymity", "alpha_k_anonymity", "k_map")


class _AlphaK(Protocol):
    """The public face of the ``alpha_k_anonymity`` model this family reads."""

    name: str
    alpha: float
    k: int
    values: tuple[str | None, ...] | None
    attributes: tuple[str, ...]
    refined: bool

    def max_count(self, sizes: npt.ArrayLike) -> IntArray: ...


@dataclass
class LocalResult:
    """What a local-recoding search returns.

    Attributes
    ----------
    levels : ndarray of int64, shape (rows, quasi-identifiers)
        The level of every cell.
    elapsed_s : float
        Time of the search.
    """

    levels: IntArray
    elapsed_s: float = 0.0

    @classmethod
    def start(cls, n_rows: int, n_attributes: int) -> Self:
        """An empty result: the levels are filled in as rows are released."""
        return cls(np.empty((n_rows, n_attributes), dtype=np.int64))


def segment_starts(seg: IntArray) -> IntArray:
    """For a non-decreasing array of segment ids, the index where each element's run starts."""
    n = seg.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(seg[1:], seg[:-1], out=new[1:])
    return np.maximum.accumulate(np.where(new, np.arange(n, dtype=np.int64), 0))


@dataclass(frozen=True)
class Bound:
    """One alpha bound of the requirement.

    Attributes
    ----------
    attribute : str
        The sensitive attribute.
    codes : ndarray of int64
        Per row of the table: 1 if it holds a protected value, else 0 (``simple``), or the
        code of its value (general: every value bounded).
    n_values : int
        The number of codes.
    simple : bool
        Whether the bound counts the protected rows (Definitions 5-6, section 6.1) or the most
        frequent value (Definitions 10-14).
    alpha : float
    max_count : callable
        ``max_count(sizes)``: the most bounded rows a class of each size may hold (the
        model's own arithmetic).
    what : str
        The bounded value(s), for messages.
    """

    attribute: str
    codes: IntArray
    n_values: int
    simple: bool
    alpha: float
    max_count: Callable[[npt.ArrayLike], IntArray]
    what: str

    def tops(self, group: IntArray, n_groups: int, rows: IntArray) -> IntArray:
        """Per group, the bounded count: protected rows, or rows of the most frequent value.

        Parameters
        ----------
        group : ndarray of int64
            The group of each of ``rows`` (``0 <= group < n_groups``).
        n_groups : int
        rows : ndarray of int64
            Rows of the table.
        """
        codes = self.codes[rows]
        if self.simple:
            return np.bincount(group, weights=codes, minlength=n_groups).astype(np.int64)
        nv = self.n_values
        key = group * nv + codes
        if n_groups * nv <= max(4 * key.size, 1 << 16):
            dense = np.bincount(key, minlength=n_groups * nv).reshape(n_groups, nv)
            return dense.max(axis=1).astype(np.int64) if nv else np.zeros(n_groups, np.int64)
        uniq, counts = np.unique(key, return_counts=True)
        out = np.zeros(n_groups, dtype=np.int64)
        g = uniq // nv
        starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
        out[g[starts]] = np.maximum.reduceat(counts, starts)
        return out

    def fraction_cap(self, sizes: npt.ArrayLike) -> IntArray:
        """The largest count ``c`` with ``c / n <= alpha`` per size ``n`` (Lemma 1's form)."""
        n = np.asarray(sizes, dtype=np.int64)
        safe = np.maximum(n, 1).astype(np.float64)
        c = np.floor(self.alpha * safe).astype(np.int64)
        c = np.where((c + 1) / safe <= self.alpha, c + 1, c)
        c = np.where(c / safe > self.alpha, c - 1, c)
        return np.minimum(np.maximum(c, 0), n)

    def min_rows(self, counts: IntArray, k: int) -> IntArray:
        """The fewest rows (at least ``k``) a class holding ``counts`` bounded rows needs."""
        c = np.asarray(counts, dtype=np.int64)
        # max_count(n) >= c needs alpha n > c - 1 (ceiling) or >= c (fraction): a window of
        # about 1 / alpha sizes
        lo = np.maximum(np.floor((c - 1) / self.alpha).astype(np.int64) - 1, 0)
        hi = np.ceil(c / self.alpha).astype(np.int64) + 2  # max_count(hi) >= c
        while bool((lo < hi).any()):  # binary search: max_count is non-decreasing
            mid = (lo + hi) // 2
            good = self.max_count(mid) >= c
            hi = np.where(good, mid, hi)
            lo = np.where(good, lo, np.minimum(mid + 1, hi))
        return np.maximum(lo, k)


@dataclass(frozen=True)
class Requirement:
    """(alpha,k)-anonymity as the job's models state it.

    Attributes
    ----------
    k : int
        The largest ``k`` of the models.
    bounds : tuple of Bound
        One per sensitive attribute of every ``alpha_k_anonymity`` model (none: plain
        k-anonymity, the requirement with alpha = 1).
    """

    k: int
    bounds: tuple[Bound, ...]

    @property
    def trunks(self) -> bool:
        """Whether alpha-deassociated removal applies: one simple bound (section 4.1; for the
        general and multi-attribute models "we cannot apply (2)", section 6.1)."""
        return len(self.bounds) == 1 and self.bounds[0].simple

    @property
    def variant(self) -> str:
        """``k-anonymity``, ``simple``, ``general`` or ``multi`` (several bounds)."""
        if not self.bounds:
            return "k-anonymity"
        if len(self.bounds) > 1:
            return "multi"
        return "simple" if self.bounds[0].simple else "general"

    def tops(self, group: IntArray, n_groups: int, rows: IntArray) -> list[IntArray]:
        """Per bound, per group, the bounded count."""
        return [b.tops(group, n_groups, rows) for b in self.bounds]

    def passes(self, sizes: IntArray, tops: Sequence[IntArray]) -> BoolArray:
        """Per group: a class of these sizes and counts satisfies the models."""
        ok = np.asarray(sizes >= self.k, dtype=bool)
        for b, t in zip(self.bounds, tops):
            ok &= t <= b.max_count(sizes)
        return ok

    def feasible(self, sizes: IntArray, tops: Sequence[IntArray]) -> BoolArray:
        """Per group: at least ``k`` rows and every bounded share at most alpha (Lemma 1:
        such a set of rows, fully generalized into one class, satisfies the models)."""
        ok = np.asarray(sizes >= self.k, dtype=bool)
        for b, t in zip(self.bounds, tops):
            ok &= t <= b.fraction_cap(sizes)
        return ok

    def judge(self, group: IntArray, n_groups: int, rows: IntArray) -> tuple[IntArray, BoolArray]:
        """Sizes of the groups of ``rows`` and whether each satisfies the models."""
        sizes = np.bincount(group, minlength=n_groups).astype(np.int64)
        return sizes, self.passes(sizes, self.tops(group, n_groups, rows))

    def min_rows(self, tops: Sequence[IntArray], n: int) -> IntArray:
        """Per group, the fewest rows a class with these bounded counts needs (>= k)."""
        out = np.full(n, self.k, dtype=np.int64)
        for b, t in zip(self.bounds, tops):
            out = np.maximum(out, b.min_rows(t, self.k))
        return out

    def further_removal(self, rows: IntArray) -> int:
        """Lemma 5: how many of ``rows`` (``D_r``) may be removed; ``|D_r|`` without bounds.

        For the general and multi-attribute models the bound is the minimum over every value
        of every attribute (sections 6.1-6.2), reached at each attribute's most frequent
        value. A negative bound (``D_r`` above alpha) removes nothing.
        """
        q = int(rows.size)
        one = np.zeros(rows.size, dtype=np.int64)
        for b in self.bounds:
            top = int(b.tops(one, 1, rows)[0]) if rows.size else 0
            q = min(q, further_removal_bound(int(rows.size), top, b.alpha))
        return max(q, 0)


def _requirement(problem: Problem, owner: str) -> Requirement:
    """The requirement of the problem's models; a clear error for anything else."""
    k = 1
    bounds: list[Bound] = []
    table = problem.table
    for m in problem.models:
        if m.name not in SUPPORTED:
            raise ParameterError(
                f"The {owner} algorithm implements (alpha,k)-anonymity by local recoding "
                f"(paper 002): its models must be {', '.join(SUPPORTED[:-1])} or {SUPPORTED[-1]}. Got model "
                f"{m.name!r}; use algorithm 'optimal' for other models."
            )
        k = max(k, int(m.min_class_size))
        if m.name != "alpha_k_anonymity":
            continue
        ak = cast(_AlphaK, m)
        for attr in ak.attributes:
            col = table[attr]
            cats = [None if c is None else str(c) for c in col.categories.tolist()]
            if ak.values is not None:
                wanted = set(ak.values)
                flag = np.array([c in wanted for c in cats], dtype=np.int64)
                shown = ", ".join(repr(v) for v in ak.values)
                bounds.append(
                    Bound(
                        attr,
                        flag[col.codes],
                        2,
                        True,
                        float(ak.alpha),
                        ak.max_count,
                        f"{shown} of {attr!r}",
                    )
                )
            else:
                bounds.append(
                    Bound(
                        attr,
                        col.codes.astype(np.int64),
                        len(cats),
                        False,
                        float(ak.alpha),
                        ak.max_count,
                        f"every value of {attr!r}",
                    )
                )
    return Requirement(k, tuple(bounds))


def check_requirement(problem: Problem, owner: str) -> Requirement:
    """Validate the problem for a local-recoding algorithm, before any work.

    The models must be k-anonymity and (alpha,k)-anonymity; each model's own feasibility
    check runs (a protected value absent from its attribute, alpha below 1/d); and Lemma 1
    must hold: alpha at least the frequency of the protected value(s) (of every value, for
    the general and multi-attribute models) in the whole table.

    Raises
    ------
    ParameterError
        Naming the model, the parameter and the frequency.
    """
    req = _requirement(problem, owner)
    if problem.sensitive:
        whole = get_engine("numpy", problem.table).class_stats([], sensitive=problem.sensitive)
        for m in problem.models:
            m.check_feasible(whole)
    n = problem.n_rows
    rows = np.arange(n, dtype=np.int64)
    one = np.zeros(n, dtype=np.int64)
    for b in req.bounds:
        top = int(b.tops(one, 1, rows)[0])
        if top <= int(b.fraction_cap(np.array([n]))[0]):
            continue
        if b.simple:
            what = f"the frequency of {b.what},"
        else:
            values = b.codes
            most = int(np.argmax(np.bincount(values, minlength=b.n_values)))
            label = problem.table[b.attribute].categories[most]
            what = f"the frequency of {label!r}, the most frequent value of {b.attribute!r},"
        raise ParameterError(
            f"The 'alpha' parameter of alpha_k_anonymity (alpha={b.alpha:g}) is below "
            f"{what} {top / n:.6g} ({top:,} of {n:,} rows): by Lemma 1 of paper 002 no "
            f"release keeps that share at or below alpha in every class, and {owner} refuses "
            f"it (Algorithm 1, line 3). Choose alpha >= {math.ceil(top / n * 1e6) / 1e6:g}."
        )
    return req


@dataclass
class LocalProblem:
    """A Problem encoded for local recoding.

    Attributes
    ----------
    problem : Problem
    requirement : Requirement
    codes : list of ndarray of int64
        Per quasi-identifier, each row's value code.
    text : list of ndarray of int64, shape (levels, values)
        Per quasi-identifier, the code of each value's label at each level (labels with the
        same text have the same code, whatever their level).
    labels : list of ndarray of object
        Per quasi-identifier, the label text of each code of ``text``.
    low, high, heights : ndarray of int64
        Per quasi-identifier, the lowest and highest level allowed and the hierarchy height.
    """

    problem: Problem
    requirement: Requirement
    codes: list[IntArray]
    text: list[IntArray]
    labels: list[npt.NDArray[np.object_]]
    low: IntArray
    high: IntArray
    heights: IntArray

    @classmethod
    def build(cls, problem: Problem, owner: str) -> LocalProblem:
        """Encode ``problem`` (validated by :func:`check_requirement`)."""
        req = check_requirement(problem, owner)
        codes, text, labels = [], [], []
        for q in problem.quasi_identifiers:
            col = problem.table[q]
            mappings, level_labels = problem.hierarchies[q].generalizations(col.categories)
            sizes = np.array([lab.size for lab in level_labels], dtype=np.int64)
            offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
            text_codes, categories = factorize(np.concatenate(level_labels))
            codes.append(col.codes.astype(np.int64))
            text.append(np.asarray(text_codes, dtype=np.int64)[offsets[:, None] + mappings])
            labels.append(np.asarray(categories, dtype=object))
        return cls(
            problem,
            req,
            codes,
            text,
            labels,
            np.asarray(problem.min_levels, dtype=np.int64),
            np.asarray(problem.max_levels, dtype=np.int64),
            np.asarray(problem.heights, dtype=np.int64),
        )

    @property
    def n_rows(self) -> int:
        """Rows of the table."""
        return self.problem.n_rows

    @property
    def m(self) -> int:
        """The number of quasi-identifiers."""
        return len(self.codes)

    def label_codes(self, j: int, levels: IntArray | int, rows: IntArray) -> IntArray:
        """The label code of quasi-identifier ``j`` of ``rows`` at ``levels`` (one level, or
        one per row)."""
        out: IntArray = self.text[j][levels, self.codes[j][rows]]
        return out

    def classes(self, levels: IntArray, rows: IntArray) -> tuple[IntArray, int]:
        """Dense class ids of ``rows`` at ``levels`` (a level vector, or one per row)."""
        lv = np.asarray(levels, dtype=np.int64)
        cols = [
            self.label_codes(j, lv[j] if lv.ndim == 1 else lv[:, j], rows) for j in range(self.m)
        ]
        return group_rows(cols, [int(self.labels[j].size) for j in range(self.m)])

    def lemma6_bound(self) -> int:
        """Lemma 6: the sum of the heights the quasi-identifiers may climb (their hierarchy
        heights when no level bound is set)."""
        return int((self.high - self.low).sum())

    def finish(self, levels: IntArray, owner: str) -> tuple[int, float]:
        """Check the final levels as the release will be checked; return the rows whose class
        fails (left to the release's suppression) and the distortion ratio.

        Raises
        ------
        InputError
            When more rows fail than the suppression limit allows (max-level bounds too
            tight for the models).
        """
        n = self.n_rows
        rows = np.arange(n, dtype=np.int64)
        gid, ng = self.classes(levels, rows)
        _, ok = self.requirement.judge(gid, ng, rows)
        bad = ~ok[gid]
        left = int(np.count_nonzero(bad))
        limit = self.problem.max_suppressed
        if left > limit:
            raise InputError(
                f"{owner} leaves {left:,} row{'' if left == 1 else 's'} in classes that fail "
                f"the models, more than the suppression limit of {limit:,} of {n:,} rows. "
                f"{self._top_failures(rows)} Raise 'suppression', allow higher levels "
                "(max_level) or relax the models. Nothing was written."
            )
        total = int(self.heights.sum())
        if total == 0:
            return left, 0.0
        kept = float(levels[~bad].sum())
        return left, (kept + left * total) / (n * total)

    def _top_failures(self, rows: IntArray) -> str:
        """What the highest levels allowed say of a release that suppresses too much: how
        many rows sit in classes that fail there as a whole (no release within the levels
        keeps them all), or that every class there passes (a release exists)."""
        gid, ng = self.classes(self.high, rows)
        sizes, ok = self.requirement.judge(gid, ng, rows)
        whole = int(sizes[~ok].sum())
        if whole == 0:
            return (
                "Every class at the highest levels allowed satisfies the models, so a release "
                "without suppression exists: 'top_down' or 'optimal' finds one."
            )
        return (
            f"At the highest levels allowed (max_level) {whole:,} "
            f"{'row is' if whole == 1 else 'rows are'} in classes that fail the models as a "
            "whole, so no release within these levels keeps all of them."
        )


def describe(req: Requirement) -> str:
    """The requirement in words, for the search statistics."""
    parts = [f"k = {req.k}"]
    for b in req.bounds:
        parts.append(f"alpha = {b.alpha:g} on {b.what}")
    return "; ".join(parts)
