"""Giving rows back to a remainder so that it satisfies the models (Wong et al. 2009, section 4).

Both algorithms meet the same situation: a set of rows that must be released together (the
*remainder*: Top-Down's parent node after its failing children were pushed back, Algorithm 2
lines 9-10; Progressive's rows still in processing) fails the models, while groups beside it
(passing children; classes just removed) could give some of their rows. :func:`give_back`
chooses, for many remainders at once (one *segment* each), rows to move into the remainder so
that it passes while every group still passes (or is emptied):

1. **spare rows**: each group may give the rows it can lose and still pass; the rows are
   taken in the caller's priority order (Top-Down: the rows with the fewest further
   specializations first, as section 4.2 prescribes), the fewest that make the remainder pass;
2. **whole groups**, smallest first, when spare rows are not enough;
3. **everything** otherwise (the state before the split, which passes by construction).

Everything is vectorised over segments: prefixes are judged with segmented cumulative counts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from anonlab.algorithms.local_recoding._setup import (
    BoolArray,
    IntArray,
    Requirement,
    segment_starts,
)

__all__ = ["first_prefix", "give_back"]


def first_prefix(
    req: Requirement,
    r_rows: IntArray,
    r_seg: IntArray,
    donors: IntArray,
    d_seg: IntArray,
    n_seg: int,
    *,
    valid: BoolArray | None = None,
    feasible: bool = False,
) -> IntArray:
    """Per segment, the fewest donors (a prefix, in order) that make the remainder pass.

    Parameters
    ----------
    req : Requirement
    r_rows, r_seg : ndarray of int64
        The remainders' rows and the segment of each.
    donors, d_seg : ndarray of int64
        The donor rows in the order they are given, and their segments (non-decreasing).
    n_seg : int
    valid : ndarray of bool, optional
        Per donor, whether a prefix may end there (default: anywhere).
    feasible : bool
        Judge the union by Lemma 1's share (``Requirement.feasible``: the rows can still be
        generalized into passing classes) instead of as one released class.

    Returns
    -------
    ndarray of int64
        Per segment, the prefix length, or -1 where no prefix passes.
    """
    out = np.full(n_seg, -1, dtype=np.int64)
    if donors.size == 0:
        return out
    r_size = np.bincount(r_seg, minlength=n_seg).astype(np.int64)
    starts = segment_starts(d_seg)
    pos = np.arange(donors.size, dtype=np.int64) - starts + 1
    size = r_size[d_seg] + pos
    ok = size >= req.k
    if valid is not None:
        ok &= valid
    for b in req.bounds:
        cap = b.fraction_cap(size) if feasible else b.max_count(size)
        if b.simple:
            r_top = np.bincount(r_seg, weights=b.codes[r_rows], minlength=n_seg).astype(np.int64)
            f = b.codes[donors]
            cs = np.cumsum(f)
            top = r_top[d_seg] + cs - (cs[starts] - f[starts])
        else:
            nv = b.n_values
            rkey = r_seg * nv + b.codes[r_rows]
            ukey, ucnt = np.unique(rkey, return_counts=True)
            r_max = np.zeros(n_seg, dtype=np.int64)
            if ukey.size:
                useg = ukey // nv
                st = np.flatnonzero(np.r_[True, useg[1:] != useg[:-1]])
                r_max[useg[st]] = np.maximum.reduceat(ucnt, st)
            dkey = d_seg * nv + b.codes[donors]
            rc = np.zeros(donors.size, dtype=np.int64)
            if ukey.size:  # the remainder's count of each donor's value
                at = np.minimum(np.searchsorted(ukey, dkey), ukey.size - 1)
                rc = np.where(ukey[at] == dkey, ucnt[at], 0)
            order = np.argsort(dkey, kind="stable")
            sk = dkey[order]
            rank = np.empty(donors.size, dtype=np.int64)
            rank[order] = np.arange(donors.size, dtype=np.int64) - segment_starts(sk)
            val = rc + rank + 1  # the count of the donor's value once it joins
            big = int(val.max()) + 1
            lift = d_seg * big
            run = np.maximum.accumulate(val + lift) - lift  # running maximum per segment
            top = np.maximum(r_max[d_seg], run)
        ok &= top <= cap
    hit = np.flatnonzero(ok)
    if hit.size:
        hs = d_seg[hit]  # non-decreasing: the first hit of each segment starts a run
        first = hit[np.flatnonzero(np.r_[True, hs[1:] != hs[:-1]])]
        out[d_seg[first]] = pos[first]
    return out


def _order(keys: Sequence[IntArray]) -> IntArray:
    """The permutation sorting by ``keys`` (most significant first; non-negative integers),
    packed into one integer key when it fits (one sort instead of a lexsort)."""
    if keys[0].size == 0:
        return np.zeros(0, dtype=np.int64)
    span = 1.0
    for key in keys:
        span *= float(key.max()) + 1.0
    if span >= 2.0**62:
        return np.lexsort(tuple(keys[::-1]))
    packed = np.zeros(keys[0].size, dtype=np.int64)
    for key in keys:
        packed = packed * (int(key.max()) + 1) + key
    return np.argsort(packed, kind="stable")


def give_back(
    req: Requirement,
    need: BoolArray,
    r_rows: IntArray,
    r_seg: IntArray,
    cand: IntArray,
    cand_group: IntArray,
    group_seg: IntArray,
    priority: Callable[[IntArray], Sequence[IntArray]],
    *,
    feasible: bool = False,
) -> tuple[BoolArray, IntArray]:
    """Choose rows of the groups to move into each failing remainder.

    Parameters
    ----------
    req : Requirement
    need : ndarray of bool
        Per segment, whether its remainder fails and must be given rows.
    r_rows, r_seg : ndarray of int64
        The remainders' rows and their segments.
    cand, cand_group : ndarray of int64
        The rows of the groups (each group passes the models), and the group of each.
    group_seg : ndarray of int64
        The segment of each group.
    priority : callable
        ``priority(positions)``: sort keys (integers, most significant first) of the rows
        ``cand[positions]``; rows sorting first are given first. It is asked only about the
        rows of groups that have rows to spare.
    feasible : bool
        Judge remainders by Lemma 1's share (see :func:`first_prefix`).

    Returns
    -------
    given : ndarray of bool
        Per row of ``cand``, whether it moves into its segment's remainder.
    stage : ndarray of int64
        Per segment, 0 (nothing needed), 1 (spare rows), 2 (whole groups) or 3 (everything).
    """
    n_seg = need.size
    given = np.zeros(cand.size, dtype=bool)
    stage = np.zeros(n_seg, dtype=np.int64)
    seg = group_seg[cand_group]
    take = need[seg]
    if not bool(take.any()):
        return given, stage
    idx = np.flatnonzero(take)
    rows, groups, segs = cand[idx], cand_group[idx], seg[idx]
    r_take = need[r_seg]
    rr, rs = r_rows[r_take], r_seg[r_take]
    n_groups = int(group_seg.size)
    gsize = np.bincount(groups, minlength=n_groups).astype(np.int64)
    spare = gsize - req.min_rows(req.tops(groups, n_groups, rows), n_groups)

    # 1. spare rows, in priority order (rows kept by their group come last)
    spares = np.flatnonzero(spare[groups] > 0)
    keys = [np.asarray(p, dtype=np.int64) for p in priority(idx[spares])]
    keys = [k - k.min() if k.size else k for k in keys]  # non-negative, same order
    order = spares[_order([segs[spares], *keys])]
    og = groups[order]
    by_group = np.argsort(og, kind="stable")
    rank = np.empty(order.size, dtype=np.int64)
    rank[by_group] = np.arange(order.size, dtype=np.int64) - segment_starts(og[by_group])
    ok1 = rank < spare[og]
    d1 = order[ok1]
    t1 = first_prefix(req, rr, rs, rows[d1], segs[d1], n_seg, feasible=feasible)
    t1 = np.where(need, t1, -1)
    pos1 = np.arange(d1.size) - segment_starts(segs[d1]) + 1
    chosen = pos1 <= t1[segs[d1]]
    given[idx[d1[chosen]]] = True
    stage[t1 > 0] = 1
    left = need & (t1 < 0)

    # 2. whole groups, smallest first
    if bool(left.any()):
        sel = np.flatnonzero(left[segs])
        order2 = sel[_order([segs[sel], gsize[groups[sel]], groups[sel], rows[sel]])]
        g2 = groups[order2]
        ends = np.r_[g2[1:] != g2[:-1], True]
        t2 = first_prefix(
            req, rr, rs, rows[order2], segs[order2], n_seg, valid=ends, feasible=feasible
        )
        t2 = np.where(left, t2, -1)
        pos2 = np.arange(order2.size) - segment_starts(segs[order2]) + 1
        chosen2 = pos2 <= t2[segs[order2]]
        given[idx[order2[chosen2]]] = True
        stage[t2 > 0] = 2
        left &= t2 < 0

    # 3. everything
    if bool(left.any()):
        given[idx[left[segs]]] = True
        stage[left] = 3
    return given, stage
