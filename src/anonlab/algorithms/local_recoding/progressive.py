"""Progressive local recoding (Wong et al. 2009, section 4.1, Algorithm 1).

The table is generalized one attribute one level at a time, the attribute with the highest
entropy first; at every level the rows that already satisfy (alpha,k)-anonymity leave the
processing, so they are not generalized further:

* **alpha-deassociated removal** (Definitions 8-9): every class that satisfies the models is
  split into a *trunk*, a precisely alpha-deassociated set of ``p >= k`` rows holding exactly
  ``ceil(alpha p)`` protected rows, which is released at the current levels, and a *stub*
  that stays in processing;
* **further removal** (Lemma 5): of the rows left, ``D_r``, classes that satisfy the models are
  released too, at most ``floor(|D_r| - |(D_r, s)| / alpha)`` rows, so that what stays keeps
  the protected share at most alpha (Lemma 1) and can still be anonymized;
* the loop ends when nothing is left or every attribute is at its highest allowed level, after
  at most the sum of the attributes' heights generalization steps (Lemma 6); what remains is
  released at the highest levels (one class, which satisfies the models by Lemma 1, when every
  hierarchy ends in one root).

Readings where the paper leaves a choice (each also commented where it is made):

* the trunk of a class is its *largest* precisely alpha-deassociated subset (the most rows kept
  at the current levels), made of the class's first rows in table order; with Definition 4's
  fraction (``refined=False``) a precise trunk holds exactly ``alpha p`` protected rows;
* further removal takes whole classes, largest first, then the smallest that still fit;
* the paper bounds the rows removed but not what stays: fewer than ``k`` rows left could never
  form a class. anonlab keeps what stays *solvable* (at least ``k`` rows, protected share at
  most alpha): when a removal would leave less, the stubs of passing classes leave with their
  trunks (the whole class passes), and if that is not enough rows of the classes just removed
  come back, the fewest that restore it (:func:`~._donate.give_back`). What stays is released
  at the highest levels allowed, one class per class of the table there: one with hierarchies
  ending in a root, several under ``max_level`` bounds. So solvability is kept per such *top
  class*, each as solvable as it was (Lemma 1's share, or passing as one class where
  Definition 5's ceiling allows more); rows are left to suppression only in top classes that
  fail as a whole;
* the general and multi-attribute models (section 6) have no trunks ("we cannot apply (2)");
  their further removal bound is the minimum of Lemma 5 over every value of every attribute;
  plain k-anonymity is the model without alpha (every passing class may leave).

References
----------
.. [1] R. C.-W. Wong, J. Li, A. W.-C. Fu, K. Wang, "(alpha, k)-anonymous data publishing",
   J. Intell. Inf. Syst. 33 (2009), section 4.1 (Algorithm 1, Definitions 8-9, Lemmas 4-6,
   Theorem 2) and sections 6.1-6.2.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from anonlab._progress import Progress
from anonlab.algorithms.local_recoding._donate import give_back
from anonlab.algorithms.local_recoding._setup import (
    BoolArray,
    Bound,
    IntArray,
    LocalProblem,
    LocalResult,
    Requirement,
    segment_starts,
)
from anonlab.data.grouping import group_rows

__all__ = ["ProgressiveResult", "progressive", "trunk_sizes"]


@dataclass
class ProgressiveResult(LocalResult):
    """What Algorithm 1 did (besides :class:`~._setup.LocalResult`'s levels and time).

    Attributes
    ----------
    iterations : int
        Passes of the while loop (the last one releases what is left).
    generalizations : int
        Generalization steps (line 16): Lemma 6's loops.
    trunks, trunk_rows : int
        Precisely alpha-deassociated trunks removed, and their rows.
    further_removed : int
        Rows removed by further removal (Lemma 5).
    given_back : int
        Rows given back to keep the rows in processing solvable.
    rounds : list of dict
        Per iteration: the levels, rows in processing, classes, trunk rows, ``q_max``, rows
        further removed and given back, the attribute generalized and its entropy.
    """

    iterations: int = 0
    generalizations: int = 0
    trunks: int = 0
    trunk_rows: int = 0
    further_removed: int = 0
    given_back: int = 0
    rounds: list[dict[str, Any]] = field(default_factory=list)


def _last_true(ok: Any, hi: IntArray) -> IntArray:
    """Per entry, the largest ``p`` in ``[0, hi]`` with ``ok(p)`` true, for a predicate that is
    true up to some point and false after (``ok(0)`` true); binary search, vectorised."""
    lo = np.zeros(hi.size, dtype=np.int64)
    top = hi.astype(np.int64).copy()
    while bool((lo < top).any()):
        mid = (lo + top + 1) // 2
        good = ok(mid)
        lo = np.where(good, mid, lo)
        top = np.where(good, top, mid - 1)
    return lo


def trunk_sizes(
    bound: Bound, k: int, sizes: IntArray, protected: IntArray
) -> tuple[IntArray, IntArray]:
    """The largest precisely alpha-deassociated trunk of each class (Definition 8).

    A trunk of ``p`` rows holds exactly ``c = max_count(p)`` protected rows (``ceil(alpha
    p)`` under Definition 5), with ``p >= k``, ``c >= 1`` and a protected share ``c / p``
    of at least alpha (so removing it leaves the share of the rest at most alpha, Lemma 4).
    Reading: the largest such ``p`` the class's rows allow (the paper does not say which).

    Parameters
    ----------
    bound : Bound
        The simple bound (one protected value or a combined class of values).
    k : int
    sizes, protected : ndarray of int64
        Rows and protected rows of each class.

    Returns
    -------
    p, c : ndarray of int64
        Trunk rows and protected trunk rows per class (0 where the class has no trunk).
    """
    cap = bound.max_count
    s, other = protected, sizes - protected
    # max_count and p - max_count are non-decreasing in p (alpha <= 1)
    p1 = _last_true(lambda p: cap(p) <= s, sizes)
    p2 = _last_true(lambda p: p - cap(p) <= other, sizes)
    p = np.minimum(p1, p2)
    c = cap(p)
    exact = c >= bound.alpha * p - 1e-9 * np.maximum(p, 1)
    if not bool(exact.all()):
        # Definition 4 (fraction): a precise trunk holds alpha p protected rows exactly, so p
        # is a multiple of the smallest size d with max_count(d) = alpha d
        d = _precise_period(bound)
        p = np.where(exact, p, (p // d) * d if d else 0)
        c = cap(p)
    ok = (p >= k) & (c >= 1)
    return np.where(ok, p, 0), np.where(ok, c, 0)


def _precise_period(bound: Bound) -> int:
    """The smallest ``d >= 1`` with ``max_count(d) = alpha d`` (0 if alpha is no fraction with
    a denominator up to a million)."""
    frac = Fraction(bound.alpha).limit_denominator(1_000_000)
    d = frac.denominator
    if (
        int(bound.max_count(np.array([d]))[0]) == frac.numerator
        and frac.numerator / d == bound.alpha
    ):
        return d
    return 0


def _trunks(
    req: Requirement, gid: IntArray, ng: int, sizes: IntArray, ok: BoolArray, rows: IntArray
) -> tuple[BoolArray, int]:
    """Mark the rows of the trunk of every passing class (Definition 9); rows are in table
    order and a trunk takes each class's first protected and first other rows."""
    b = req.bounds[0]
    prot = b.tops(gid, ng, rows)
    p, c = trunk_sizes(b, req.k, sizes, prot)
    p, c = np.where(ok, p, 0), np.where(ok, c, 0)
    f = b.codes[rows]
    key = gid * 2 + f
    order = np.argsort(key, kind="stable")  # rows stay in table order within a key
    rank = np.empty(rows.size, dtype=np.int64)
    rank[order] = np.arange(rows.size, dtype=np.int64) - segment_starts(key[order])
    need = np.where(f == 1, c[gid], p[gid] - c[gid])
    return rank < need, int(np.count_nonzero(p))


def _further(sizes: IntArray, ok: BoolArray, q_max: int, n_rest: int, k: int) -> BoolArray:
    """The classes of ``D_r`` released by further removal (Lemma 5, line 10).

    Whole passing classes, largest first, then the smallest that still fit, at most
    ``q_max`` rows; unless every row of ``D_r`` can go, at least ``k`` rows stay (fewer could
    never form a class).
    """
    take = np.zeros(sizes.size, dtype=bool)
    cand = np.flatnonzero(ok)
    total = int(sizes[cand].sum())
    if total == n_rest and total <= q_max:
        take[cand] = True
        return take
    budget = min(q_max, n_rest - k)
    if budget <= 0 or cand.size == 0:
        return take
    desc = cand[np.lexsort((cand, -sizes[cand]))]
    cs = np.cumsum(sizes[desc])
    first = desc[cs <= budget]
    take[first] = True
    room = budget - int(sizes[first].sum())
    rest = np.setdiff1d(cand, first)
    if room > 0 and rest.size:
        asc = rest[np.lexsort((rest, sizes[rest]))]
        take[asc[np.cumsum(sizes[asc]) <= room]] = True
    return take


@dataclass(frozen=True)
class _Tops:
    """The classes of the table at the highest levels allowed (one, the root, without
    ``max_level`` bounds): what stays in processing is released in them at the end."""

    of_row: IntArray
    n: int

    def state(self, req: Requirement, rows: IntArray) -> IntArray:
        """Per top class, how solvable its ``rows`` are: 2 when none or when they satisfy
        Lemma 1 (at least ``k``, each bounded share at most alpha: they pass as one class
        whatever is released before), 1 when they pass as one class at the highest levels
        only (Definition 5's ceiling allows more than alpha), 0 when they fail."""
        top = self.of_row[rows]
        sizes = np.bincount(top, minlength=self.n).astype(np.int64)
        counts = req.tops(top, self.n, rows)
        out = np.where(req.passes(sizes, counts), 1, 0)
        out[req.feasible(sizes, counts) | (sizes == 0)] = 2
        return out.astype(np.int64)


def _keep_solvable(
    req: Requirement,
    before: IntArray,
    broken: BoolArray,
    tops: _Tops,
    left: IntArray,
    removed: IntArray,
    classes: IntArray,
    n_classes: int,
) -> BoolArray:
    """Which removed rows to give back so that each ``broken`` top class is again as
    solvable as it was (``before``, :meth:`_Tops.state`): Lemma 1's share, or passing as
    one class (:func:`~._donate.give_back`, one segment per top class, the removed rows'
    classes as the groups); the later rows go back first, as stubs do (Table 9)."""
    groups, n_groups = group_rows([classes], [n_classes])
    group_top = np.zeros(n_groups, dtype=np.int64)
    group_top[groups] = tops.of_row[removed]  # a class lies within one top class

    def later_first(at: IntArray) -> tuple[IntArray]:
        return (-removed[at],)

    given = np.zeros(removed.size, dtype=bool)
    for level in (2, 1):
        need = broken & (before == level)
        if need.any():
            more, _ = give_back(
                req,
                need,
                left,
                tops.of_row[left],
                removed,
                groups,
                group_top,
                later_first,
                feasible=level == 2,
            )
            given |= more
    return given


def _entropy(lp: LocalProblem, j: int, level: int, rows: IntArray) -> float:
    """Entropy (bits) of attribute ``j`` of ``rows`` at ``level`` (section 4.1's criterion)."""
    counts = np.bincount(lp.label_codes(j, level, rows))
    p = counts[counts > 0] / rows.size
    return float(-(p * np.log2(p)).sum())


def progressive(lp: LocalProblem, progress: Progress | None = None) -> ProgressiveResult:
    """Run Algorithm 1 on an encoded problem.

    Parameters
    ----------
    lp : LocalProblem
    progress : callable, optional
        ``progress(1, total)`` per iteration.

    Returns
    -------
    ProgressiveResult
    """
    t0 = time.perf_counter()
    req = lp.requirement
    out = ProgressiveResult.start(lp.n_rows, lp.m)
    cur = lp.low.copy()
    active = np.arange(lp.n_rows, dtype=np.int64)  # D, in table order
    # what stays is released at the highest levels allowed: one class per top class there
    tops = _Tops(*lp.classes(lp.high, active))
    total = lp.lemma6_bound() + 1
    names = lp.problem.quasi_identifiers
    while active.size:
        out.iterations += 1
        if progress is not None:
            progress(1, total)
        gid, ng = lp.classes(cur, active)
        sizes, ok = req.judge(gid, ng, active)
        # how solvable the rows in processing of each top class are (under max_level bounds
        # a top class may fail as a whole: its failing rows are left to suppression)
        before = tops.state(req, active)
        rnd: dict[str, Any] = {
            "levels": dict(zip(names, cur.tolist())),
            "rows": int(active.size),
            "classes": ng,
            "passing_classes": int(np.count_nonzero(ok)),
        }
        out.rounds.append(rnd)
        if not bool((cur < lp.high).any()):  # every attribute at its top: release the rest
            out.levels[active] = cur
            rnd["released"] = int(active.size)
            break
        # line 6: the precisely alpha-deassociated trunks of the passing classes
        trunk = np.zeros(active.size, dtype=bool)
        if req.trunks:
            trunk, n_trunks = _trunks(req, gid, ng, sizes, ok, active)
            out.trunks += n_trunks
        rest = np.flatnonzero(~trunk)
        dr, gr = active[rest], gid[rest]
        # lines 9-11: further removal, at most q_max rows (Lemma 5)
        q_max = req.further_removal(dr)
        ssizes, sok = req.judge(gr, ng, dr)
        further = _further(ssizes, sok & (ssizes > 0), q_max, int(dr.size), req.k)[gr]
        removed = trunk.copy()
        removed[rest[further]] = True
        left = active[~removed]
        back = absorbed = 0
        broken = tops.state(req, left) < before
        if broken.any():
            # what stays in a top class could not be anonymized any more (fewer than k rows,
            # or a share above alpha): the stubs of its passing classes leave with their
            # trunks (the whole class passes), then rows of its classes just removed come
            # back, the fewest that make it solvable again
            stub = ~removed & ok[gid] & broken[tops.of_row[active]]
            absorbed = int(np.count_nonzero(stub))
            removed |= stub
            left = active[~removed]
            broken = tops.state(req, left) < before
            if broken.any():
                idx = np.flatnonzero(removed)
                given = _keep_solvable(req, before, broken, tops, left, active[idx], gid[idx], ng)
                removed[idx[given]] = False
                back = int(np.count_nonzero(given))
                left = active[~removed]
        out.levels[active[removed]] = cur
        n_trunk = int(np.count_nonzero(trunk & removed))
        out.trunk_rows += n_trunk
        out.further_removed += int(np.count_nonzero(removed)) - n_trunk
        out.given_back += back
        rnd.update(
            trunk_rows=n_trunk,
            q_max=q_max,
            further_removed=int(np.count_nonzero(removed)) - n_trunk,
            stubs_with_trunk=absorbed,
            given_back=back,
        )
        active = left
        if active.size:
            # lines 15-16: generalize the attribute with the highest entropy one level
            can = np.flatnonzero(cur < lp.high)
            ent = [_entropy(lp, int(j), int(cur[j]), active) for j in can]
            j = int(can[int(np.argmax(ent))])
            cur[j] += 1
            out.generalizations += 1
            rnd.update(generalized=names[j], entropy=float(max(ent)))
    out.elapsed_s = time.perf_counter() - t0
    return out
