"""The compiled label-correcting kernel of phase 2 (numba's nopython mode): plain loops.

See :func:`anonlab.algorithms.nonhomogeneous.two_phase.cancel_cycles` for the algorithm;
:func:`cycle_kernel` returns :func:`_label_rounds` compiled.
"""

from typing import Any

import numpy as np

from anonlab._compiled import jit

__all__ = ["cycle_kernel"]


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


_KERNELS: list[Any] = []


def cycle_kernel() -> Any:
    """:func:`_label_rounds` compiled (once per process)."""
    if not _KERNELS:
        _KERNELS.append(jit(_label_rounds))
    return _KERNELS[0]
