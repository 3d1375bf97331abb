"""Test-only references of the personalized-privacy family, written as the paper reads: loops
over records, one decision or one raise at a time (Song et al. 2015, sections 4-6)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from anonlab.algorithms.personalized.clustering import QuasiIdentifierIndex
from anonlab.models.per_record import decimal_fraction


def pleak_by_definition(rows, group, released, n_leaves_of, covers):
    """Definition 8 literally: for each record, the sum over its group of DCorrelate / b.

    ``rows``: the original sensitive values; ``released``: the released (generalized) values;
    ``covers(value, node)``: whether ``node`` is ``value`` or one of its ancestors;
    ``n_leaves_of(node)``: leaves under ``node``. Returns a Fraction per record.
    """
    out = []
    for t in range(len(rows)):
        mates = [i for i in range(len(rows)) if group[i] == group[t]]
        total = Fraction(0)
        for i in mates:
            if covers(rows[t], released[i]):
                total += Fraction(1, n_leaves_of(released[i]))
        out.append(total / len(mates))
    return out


def clustering_by_definition(index: QuasiIdentifierIndex, block_need) -> np.ndarray:
    """Anonymity_Generalization lines 3-13 as a loop over the sorted blocks (the reading of
    line 6 in anonlab.algorithms.personalized.clustering)."""
    nb = index.n_blocks
    counts = index.counts
    cum = np.concatenate([[0], np.cumsum(counts)])
    nq = index.rep.shape[0]

    def box(first, last):
        lv = np.zeros(nq, dtype=np.int64)
        for b in range(first + 1, last + 1):
            lv = np.maximum(lv, index.pair[:, b])
        return lv

    def value(first, lv):
        return float(index.value(np.array([first]), lv.reshape(nq, 1))[0])

    def next_value(b):
        end = b + 1
        while end < nb and not index.forced[end]:
            if cum[end] - cum[b] >= max(block_need[b:end]):
                break
            end += 1
        return value(b, box(b, end - 1))

    starts = [0]
    s, rows, need, lv = 0, int(counts[0]), int(block_need[0]), np.zeros(nq, dtype=np.int64)
    v = value(0, lv)
    for b in range(1, nb):
        lv2 = np.maximum(lv, index.pair[:, b])
        v2 = value(s, lv2)
        gain = v2 - rows * (v - v2)
        if index.forced[b] or (rows >= need and gain < next_value(b) - 1e-12):
            starts.append(b)
            s, rows, need, lv = b, int(counts[b]), int(block_need[b]), np.zeros(nq, np.int64)
            v = value(b, lv)
        else:
            rows += int(counts[b])
            need = max(need, int(block_need[b]))
            lv, v = lv2, v2
    if len(starts) > 1 and not index.forced[starts[-1]]:
        last = starts[-1]
        if cum[nb] - cum[last] < max(block_need[last:]):
            starts.pop()
    return np.array(starts, dtype=np.int64)


def _mass(v, values, placed, ancestors, leaves):
    """``b * Pleak`` of value ``v``, exactly (a Fraction)."""
    total = Fraction(0)
    for u in values:
        for lv in range(ancestors.shape[0]):
            if placed[u][lv] and ancestors[lv, u] == ancestors[lv, v]:
                total += Fraction(int(placed[u][lv]), int(round(leaves[lv, u])))
    return total


def sa_one_at_a_time(row_class, codes, limits, rank, ancestors, leaves):
    """SA_Generalization raising one record at a time (the batching of anonlab's version
    must give the same levels): per class, records of one value together, in the order of
    their first record, the walk repeated until none is over or the class is stuck; Pleak
    and the limits (read as the numbers they were written as) compared as fractions."""
    levels = np.zeros(len(codes), dtype=np.int64)
    stuck = {}
    top = ancestors.shape[0] - 1
    for c in np.unique(row_class):
        members = np.flatnonzero(row_class == c)
        b = members.size
        mine = codes[members]
        values = sorted(
            {int(v) for v in mine}, key=lambda v, m=members: min(rank[m][codes[m] == v])
        )
        placed = {v: [0] * (top + 1) for v in values}
        limit = {}
        for v in values:
            placed[v][0] = int(np.sum(mine == v))
            limit[v] = decimal_fraction(float(np.min(limits[members][mine == v])))
        over = [v for v in values if _mass(v, values, placed, ancestors, leaves) > b * limit[v]]
        cursor = 0
        stuck[int(c)] = False
        while over:
            ring = [values[j % len(values)] for j in range(cursor, cursor + len(values))]
            v = next(u for u in ring if u in over)
            cursor = values.index(v)
            raised = False
            for lv in range(top):
                on = [u for u in values if placed[u][lv] and ancestors[lv, u] == ancestors[lv, v]]
                if on:
                    placed[on[0]][lv] -= 1
                    placed[on[0]][lv + 1] += 1
                    raised = True
                    break
            if not raised:
                stuck[int(c)] = True
                break
            over = [u for u in values if _mass(u, values, placed, ancestors, leaves) > b * limit[u]]
        for v in values:
            rows = members[mine == v]
            rows = rows[np.argsort(rank[rows], kind="stable")]
            levels[rows] = [lv for lv in range(top + 1) for _ in range(placed[v][lv])]
    return levels, stuck
