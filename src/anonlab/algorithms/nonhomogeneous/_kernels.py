"""The compiled kernels of the two-phase algorithm (numba's nopython mode): plain loops.

:func:`kernel` returns each compiled: ``cycles`` (:func:`_label_rounds`, phase 2's label
correcting; see :func:`anonlab.algorithms.nonhomogeneous.two_phase.cancel_cycles`), ``pairs``
and ``nearest`` (:func:`_near_pairs`, :func:`_nearest`: the candidate edges' multi-sorting,
:func:`anonlab.algorithms.nonhomogeneous.candidates.candidate_edges`), ``cheapest``
(:func:`_cheapest`: phase 2's additions), ``costs`` (:func:`_costs`: the weighted NCP,
:meth:`anonlab.algorithms.nonhomogeneous.cover_model.CoverCosts.cost`), ``contributions``
and ``states`` (:func:`_contributions`, :func:`_states`: the states covering rows needs,
:meth:`~anonlab.algorithms.nonhomogeneous.cover_model.CoverCosts.contributions` and
:meth:`~anonlab.algorithms.nonhomogeneous.cover_model.CoverCosts.states`).
:func:`compile_before_workers` compiles them before the worker processes start.
"""

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from anonlab._compiled import compile_elsewhere, compiled, jit

__all__ = ["CostTables", "compile_before_workers", "compile_kernels", "kernel"]


def _label_rounds(n, tail, heads, starts, weight, rounds, eps, found):
    """Label-correcting rounds over arcs sorted by head, collecting the cycles of the
    shortest-path graph.

    ``heads[g]`` receives the arcs ``starts[g]:starts[g + 1]`` (the last group ends at the
    last arc); every vertex starts at label 0 (a virtual root). A round corrects every
    label at once from the labels of the round before (Bellman-Ford), each vertex's parent
    arc the first arc of its group that reaches the new label. After each round the parent
    pointers are walked for cycles (each is negative); their vertices are frozen: their arcs
    weigh infinity from then on and their labels no longer change. Stops when no label
    improves or after ``rounds`` rounds. A group is evaluated again only when one of its
    arcs changed (its tail's label or its weight): the others keep their minimum.

    ``found`` (n, 3) receives per cycle vertex, in the order found (per round by vertex),
    the vertex, its cycle's id (its smallest vertex) and its parent arc; returns how many.
    """
    groups = heads.size
    arcs = tail.size
    ends = np.empty(groups, dtype=np.int64)
    ends[:-1] = starts[1:]
    ends[-1] = arcs
    label = np.zeros(n)
    parent_arc = np.full(n, -1, dtype=np.int64)
    frozen = np.zeros(n, dtype=np.bool_)
    best = np.empty(groups)
    first = np.empty(groups, dtype=np.int64)
    parent = np.empty(n, dtype=np.int64)
    walk = np.empty(n, dtype=np.int64)  # the vertex whose walk passed here, -1: none yet
    cycle_id = np.full(n, -1, dtype=np.int64)
    # each vertex's outgoing arcs (out_arc[out_start[v]:out_start[v + 1]]), each arc's
    # group and each vertex's group (-1: it receives no arc)
    out_start = np.zeros(n + 1, dtype=np.int64)
    for a in range(arcs):
        out_start[tail[a] + 1] += 1
    for v in range(n):
        out_start[v + 1] += out_start[v]
    out_arc = np.empty(arcs, dtype=np.int64)
    arc_group = np.empty(arcs, dtype=np.int64)
    group_of = np.full(n, -1, dtype=np.int64)
    fill = out_start[:-1].copy()
    for g in range(groups):
        group_of[heads[g]] = g
        for a in range(starts[g], ends[g]):
            out_arc[fill[tail[a]]] = a
            fill[tail[a]] += 1
            arc_group[a] = g
    dirty = np.ones(groups, dtype=np.bool_)
    count = 0
    for _ in range(rounds):
        for g in range(groups):
            if not dirty[g]:
                continue
            dirty[g] = False
            low = np.inf
            arg = -1
            for a in range(starts[g], ends[g]):
                reach = label[tail[a]] + weight[a]
                if reach < low:
                    low = reach
                    arg = a
            best[g] = low
            first[g] = arg
        better = False
        for g in range(groups):
            h = heads[g]
            if best[g] < label[h] - eps and not frozen[h]:
                label[h] = best[g]
                parent_arc[h] = first[g]
                better = True
                for b in range(out_start[h], out_start[h + 1]):
                    dirty[arc_group[out_arc[b]]] = True
        if not better:
            break
        for v in range(n):
            parent[v] = -1 if frozen[v] or parent_arc[v] < 0 else tail[parent_arc[v]]
            walk[v] = -1
        new = 0
        for s in range(n):  # walk from every vertex; a walk meeting itself closed a cycle
            v = s
            while v >= 0 and walk[v] < 0:
                walk[v] = s
                v = parent[v]
            if v < 0 or walk[v] != s:
                continue
            smallest = v
            u = parent[v]
            while u != v:
                smallest = min(smallest, u)
                u = parent[u]
            u = v
            while True:
                cycle_id[u] = smallest
                u = parent[u]
                if u == v:
                    break
            new += 1
        if new == 0:
            continue
        for v in range(n):
            if cycle_id[v] >= 0:
                found[count, 0] = v
                found[count, 1] = cycle_id[v]
                found[count, 2] = parent_arc[v]
                count += 1
                frozen[v] = True
                cycle_id[v] = -1
                g = group_of[v]  # its arcs in and out weigh infinity
                if g >= 0:
                    dirty[g] = True
                    for a in range(starts[g], ends[g]):
                        weight[a] = np.inf
                for b in range(out_start[v], out_start[v + 1]):
                    weight[out_arc[b]] = np.inf
                    dirty[arc_group[out_arc[b]]] = True
    return count


def _count_sort(codes, s, card, src, dst, lo, hi, width):
    """Rows ``src[lo:hi]`` sorted stably by site ``s`` into ``dst[lo:hi]`` (a counting
    sort); ``width[v]`` is left at the end of the run of value ``v`` (offsets from ``lo``)."""
    width[: card[s] + 1] = 0
    for i in range(lo, hi):
        width[codes[s, src[i]] + 1] += 1
    for v in range(card[s]):
        width[v + 1] += width[v]
    for i in range(lo, hi):
        r = src[i]
        v = codes[s, r]
        dst[lo + width[v]] = r
        width[v] += 1


_SHORT = 16
"""Runs of at most this many rows are sorted by insertion (no counting pass per site)."""


def _before(codes, hidden, h, a, b):
    """Whether row ``a`` comes before row ``b`` (rows sorted ascending so far) when sorted
    by the sites ``hidden[:h]`` (stably)."""
    for i in range(h):
        s = hidden[i]
        if codes[s, a] != codes[s, b]:
            return codes[s, a] < codes[s, b]
    return False


def _near_pairs(codes, card, sites, max_distance, window, span):
    """The pairs of rows within Hamming distance ``max_distance`` (Uno's multi-sorting).

    ``codes`` (sites, rows); ``card[s]`` the values of site ``s``; ``sites`` every site from
    the fewest values. For every set ``D`` of at most ``max_distance`` sites, the rows equal
    outside ``D`` (a run) are sorted by ``D`` (each in the order of ``sites``), ties by row,
    and each row is joined to its ``window`` nearest followers of the run when they differ on
    every site of ``D``. The runs of all sets come from one radix partition per site and
    hidden prefix, most significant site first, shared by the sets that agree so far; a run
    of one row is not followed further. Each pair comes twice, as int64 keys
    ``(released * span + |D|) * rows + original`` both ways round; returns them (any order).
    """
    m, n = codes.shape
    top = 1
    for s in range(m):
        top = max(top, card[s])
    width = np.empty(top + 1, dtype=np.int64)
    rows = np.empty((m + 1, n), dtype=np.int64)  # the rows of each level's runs, in place
    for r in range(n):
        rows[0, r] = r
    spare = np.empty(n, dtype=np.int64)
    out = np.empty(max(16, 4 * n * window), dtype=np.int64)
    count = 0
    # the stack: (level, lo, hi, sites hidden, then up to three of them; a negative level
    # -(level + 1) is the partition of that run by its site, after the hidden branch)
    depth = max_distance + 4
    stack = np.empty(((m + 1) * (top + 2) + 4, depth), dtype=np.int64)
    hidden = np.empty(max_distance + 1, dtype=np.int64)
    stack[0, 0] = 0
    stack[0, 1] = 0
    stack[0, 2] = n
    stack[0, 3] = 0
    size = 1 if n > 1 else 0
    while size:
        size -= 1
        level = stack[size, 0]
        lo = stack[size, 1]
        hi = stack[size, 2]
        h = stack[size, 3]
        for i in range(h):
            hidden[i] = stack[size, 4 + i]
        if level < 0:  # partition the run by its site; its runs of two rows or more follow
            level = -level - 1
            s = sites[level]
            _count_sort(codes, s, card, rows[level], rows[level + 1], lo, hi, width)
            start = lo
            for v in range(card[s]):
                end = lo + width[v]
                if end - start > 1:
                    stack[size, 0] = level + 1
                    stack[size, 1] = start
                    stack[size, 2] = end
                    stack[size, 3] = h
                    for i in range(h):
                        stack[size, 4 + i] = hidden[i]
                    size += 1
                start = end
            continue
        if level < m:
            stack[size, 0] = -level - 1  # after the branch that hides the site
            size += 1
            if h < max_distance:
                rows[level + 1, lo:hi] = rows[level, lo:hi]
                stack[size, 0] = level + 1
                stack[size, 1] = lo
                stack[size, 2] = hi
                stack[size, 3] = h + 1
                for i in range(h):
                    stack[size, 4 + i] = hidden[i]
                stack[size, 4 + h] = sites[level]
                size += 1
            continue
        # a run of the set ``hidden``: sorted by its sites (rows ascending within a run)
        run = rows[m]
        if hi - lo <= _SHORT:  # an insertion sort
            for p in range(lo + 1, hi):
                r = run[p]
                q = p
                while q > lo and _before(codes, hidden, h, r, run[q - 1]):
                    run[q] = run[q - 1]
                    q -= 1
                run[q] = r
        else:
            for i in range(h - 1, -1, -1):
                _count_sort(codes, hidden[i], card, run, spare, lo, hi, width)
                run[lo:hi] = spare[lo:hi]
        for p in range(lo, hi):
            b = run[p]
            for q in range(p + 1, min(p + window + 1, hi)):
                a = run[q]
                apart = True  # on every site of D
                for i in range(h):
                    if codes[hidden[i], a] == codes[hidden[i], b]:
                        apart = False
                        break
                if not apart:
                    continue
                if count + 2 > out.size:
                    grown = np.empty(2 * out.size, dtype=np.int64)
                    grown[:count] = out[:count]
                    out = grown
                out[count] = (b * span + h) * n + a
                out[count + 1] = (a * span + h) * n + b
                count += 2
    return out[:count]


def _nearest(keys, n, span, per_record):
    """Per released record, its ``per_record`` nearest pairs of ``keys`` (distinct keys
    ``(released * span + distance) * n + original``): the smallest (distance, original).
    Returns them as keys ``original * n + released`` (any order).

    A counting sort by (released, distance); of the last distance a record takes only in
    part, the smallest originals."""
    starts = np.zeros(n * span + 1, dtype=np.int64)
    for key in keys:
        starts[key // n + 1] += 1
    for b in range(n * span):
        starts[b + 1] += starts[b]
    fill = starts[:-1].copy()
    original = np.empty(keys.size, dtype=np.int64)
    for key in keys:
        b = key // n
        original[fill[b]] = key - b * n
        fill[b] += 1
    out = np.empty(min(keys.size, n * per_record), dtype=np.int64)
    count = 0
    for r in range(n):
        left = per_record
        for b in range(r * span, (r + 1) * span):
            lo = starts[b]
            hi = starts[b + 1]
            if hi - lo > left:
                original[lo:hi] = np.sort(original[lo:hi])
                hi = lo + left
            for i in range(lo, hi):
                out[count] = original[i] * n + r
                count += 1
            left -= hi - lo
            if left == 0:
                break
    return out[:count]


def _cheapest(record, value, additions):
    """Per run of equal ``record`` values (each record's entries side by side), the
    positions of its ``additions`` smallest ``value``, ties by position, in that order:
    an insertion into a sorted list of at most ``additions`` positions per record."""
    size = record.size
    out = np.empty(size, dtype=np.int64)
    count = 0
    best = np.empty(max(additions, 1), dtype=np.int64)
    i = 0
    while i < size:
        end = i
        while end < size and record[end] == record[i]:
            end += 1
        kept = 0
        for p in range(i, end):
            v = value[p]
            if kept == additions:
                if not v < value[best[kept - 1]]:
                    continue
                q = kept - 1
            else:
                q = kept
                kept += 1
            while q > 0 and v < value[best[q - 1]]:
                best[q] = best[q - 1]
                q -= 1
            best[q] = p
        out[count : count + kept] = best[:kept]
        count += kept
        i = end
    return out[:count]


def _contribute(codes, a, x, t, out, i, raise_only):
    """Writes to ``out[i]`` the state released record ``a`` needs to cover row ``x`` (with
    ``raise_only``: raises ``out[i]`` to it, the elementwise maximum), site by site as ``t``
    says: concealing, 1 when the codes differ; hierarchy, the levels whose nodes differ;
    interval, the ranks above and below the anchor's; set, a flag at the covered value's
    rank when it is not the anchor's."""
    for s in range(t.kind.size):
        p = t.start[s]
        ca = codes[a, s]
        cx = codes[x, s]
        kind = t.kind[s]
        if kind <= 1:
            v = 0
            if kind == 0:
                v = 1 if ca != cx else 0
            else:
                at = t.levels_start[s]
                for _ in range(t.levels_count[s]):
                    if t.levels[at + ca] != t.levels[at + cx]:
                        v += 1
                    at += t.levels_width[s]
            if not raise_only or v > out[i, p]:
                out[i, p] = v
            continue
        ra = t.rank[t.rank_start[s] + ca]
        rx = t.rank[t.rank_start[s] + cx]
        if kind == 2:  # interval: the ranks above and below the anchor's
            up = rx - ra if rx > ra else 0
            down = ra - rx if ra > rx else 0
            if not raise_only or up > out[i, p]:
                out[i, p] = up
            if not raise_only or down > out[i, p + 1]:
                out[i, p + 1] = down
            continue
        if not raise_only:  # set: a flag per value
            for c in range(p, p + t.width[s]):
                out[i, c] = 0
        if rx != ra:
            out[i, p + rx] = 1


def _contributions(codes, anchors, values, t, out):
    """``out[e]``: the state released record ``anchors[e]`` needs to cover row
    ``values[e]`` (:func:`_contribute`)."""
    for e in range(anchors.size):
        _contribute(codes, anchors[e], values[e], t, out, e, False)


def _states(codes, covers, t, out):
    """``out[j]``: the state of released record ``j``, the elementwise maximum of the states
    it needs to cover the rows ``covers[j]`` (:func:`_contribute`)."""
    for j in range(covers.shape[0]):
        for slot in range(covers.shape[1]):
            _contribute(codes, j, covers[j, slot], t, out, j, slot > 0)


def _costs(base, rows, contrib, edges, codes, anchors, t, out):
    """``out[i]``: the weighted NCP of released record ``anchors[i]`` (its value codes
    ``codes[anchors[i]]``) in the state ``max(base[rows[i]], contrib[edges[i]])``, or
    ``base[rows[i]]`` when ``edges`` is empty; the sites as ``t`` (a
    :class:`~anonlab.algorithms.nonhomogeneous.cover_model.CostTables`) says, summed in
    their order (:meth:`~anonlab.algorithms.nonhomogeneous.cover_model.CoverCosts.cost`)."""
    mixed = edges.size > 0
    for i in range(rows.size):
        r = rows[i]
        e = edges[i] if mixed else 0
        total = 0.0
        for s in range(t.kind.size):
            p = t.start[s]
            if t.kind[s] >= 2:  # a sum of the state's features (interval, set)
                acc = 0
                for c in range(p, p + t.width[s]):
                    v = base[r, c]
                    if mixed and contrib[e, c] > v:
                        v = contrib[e, c]
                    acc += v
                total += acc * t.scale[s] * t.weight[s]
                continue
            v = base[r, p]
            if mixed and contrib[e, p] > v:
                v = contrib[e, p]
            if t.kind[s] == 0:  # concealing: hidden or not
                total += v * t.weight[s]
            else:  # hierarchy: the NCP of the level above the released value
                at = t.ncp_start[s] + v * t.ncp_width[s] + codes[anchors[i], s]
                total += t.ncp[at] * t.weight[s]
        out[i] = total


class CostTables(NamedTuple):
    """The sites of a :class:`~anonlab.algorithms.nonhomogeneous.cover_model.CoverCosts` as
    arrays, one entry per site: its kind (0 concealing, 1 hierarchy, 2 interval, 3 set; the
    last two cost the sum of their features), its first feature in a state and its number
    of features, its weight and scale; for a hierarchy where its NCP table (levels x value
    codes, flat) starts in ``ncp`` and its value codes per level, and where its node table
    (the node of each value code at each level, flat) starts in ``levels``, its levels and
    value codes per level; for an interval or a set where its ranks (of each value code)
    start in ``rank``."""

    kind: npt.NDArray[np.int64]
    start: npt.NDArray[np.int64]
    width: npt.NDArray[np.int64]
    weight: npt.NDArray[np.float64]
    scale: npt.NDArray[np.float64]
    ncp_start: npt.NDArray[np.int64]
    ncp_width: npt.NDArray[np.int64]
    ncp: npt.NDArray[np.float64]
    levels_start: npt.NDArray[np.int64]
    levels_count: npt.NDArray[np.int64]
    levels_width: npt.NDArray[np.int64]
    levels: npt.NDArray[np.int64]
    rank_start: npt.NDArray[np.int64]
    rank: npt.NDArray[np.int64]


#: The kernels by name, compiled on first use (:func:`kernel`).
#: (Longest to compile first: :func:`compile_before_workers` deals them out in turn, one
#: here, one elsewhere.)
_PLAIN: dict[str, Callable[..., Any]] = {
    "nearest": _nearest,
    "pairs": _near_pairs,
    "cycles": _label_rounds,
    "states": _states,
    "contributions": _contributions,
    "cheapest": _cheapest,
    "costs": _costs,
}
_KERNELS: dict[str, Any] = {}


def kernel(name: str) -> Any:
    """The kernel ``name`` (a key of ``_PLAIN``) compiled, once per process."""
    if not _KERNELS:
        g = globals()
        g["_count_sort"] = jit(_count_sort, entry=False)
        g["_before"] = jit(_before, entry=False, inline=True)
        g["_contribute"] = jit(_contribute, entry=False, inline=True)
        _KERNELS.update({key: jit(f) for key, f in _PLAIN.items()})
    return _KERNELS[name]


def _arguments(name: str) -> tuple[Any, ...]:
    """Arguments of the types the search passes to kernel ``name`` (empty arrays)."""
    i64, f64 = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    i64x2, i32x2 = np.zeros((0, 0), dtype=np.int64), np.zeros((0, 0), dtype=np.int32)
    tables = CostTables(i64, i64, i64, f64, f64, i64, i64, f64, i64, i64, i64, i64, i64, i64)
    return {
        "cycles": (0, i64, i64, i64, f64, 0, 0.0, i64x2),
        "pairs": (i64x2, i64, i64, 0, 0, 0),
        "nearest": (i64, 0, 0, 0),
        "cheapest": (i64, f64, 0),
        "costs": (i32x2, i64, i32x2, i64, i32x2, i64, tables, f64),
        "contributions": (i32x2, i64, i64, tables, i32x2),
        "states": (i32x2, i64x2, tables, i32x2),
    }[name]


def compile_kernels(names: str) -> None:
    """Compile the kernels ``names`` (comma-separated) for the search's argument types,
    into the disk cache: the work of the process :func:`compile_before_workers` starts."""
    for name in names.split(","):
        k = kernel(name)
        k.compile(tuple(k.typeof_pyval(a) for a in _arguments(name)))


def compile_before_workers() -> None:
    """Compile the kernels the chunks call before the worker processes start: half here, half
    in another process (into the disk cache), so that the workers (forked, or loading the
    cache) compile nothing and one note tells of the compilation. Nothing happens when the
    machine code is at hand.

    Examples
    --------
    >>> compile_before_workers()
    >>> kernel("cheapest")(np.array([0, 0, 1]), np.array([2.0, 1.0, 3.0]), 1).tolist()
    [1, 2]
    """
    todo = [name for name in _PLAIN if not compiled(kernel(name), _arguments(name))]
    if not todo:
        return
    here, there = todo[0::2], todo[1::2]  # (about even halves: _PLAIN's order)
    elsewhere = (
        compile_elsewhere(
            "anonlab.algorithms.nonhomogeneous._kernels:compile_kernels", ",".join(there)
        )
        if there
        else None
    )
    compile_kernels(",".join(here if elsewhere is not None else todo))
    if elsewhere is not None:
        elsewhere.wait()
        for name in there:  # load the machine code the other process left
            compile_kernels(name)
