"""Phase 2's search for negative cycles (Murakami & Uno 2018, section 3.2.2), restated on
Python lists for the property tests: Bellman-Ford rounds from a virtual root (every label 0),
each vertex's parent the first of its arcs (in the given order) reaching its new label, the
cycles of the parent pointers collected after each round and their vertices set aside.
"""

from __future__ import annotations

import math


def find_cycles(
    n: int, tail: list[int], head: list[int], weight: list[float], rounds: int, eps: float
) -> list[tuple[int, int, int]]:
    """(vertex, its cycle's smallest vertex, its parent arc) per cycle vertex, ordered by
    round found, then vertex."""
    weight = list(weight)
    label = [0.0] * n
    parent_arc = [-1] * n
    frozen = [False] * n
    found: list[tuple[int, int, int]] = []
    for _ in range(rounds):
        # every head's best reach from the labels of the round before
        best: dict[int, tuple[float, int]] = {}
        for a in sorted(range(len(tail)), key=lambda a: (head[a], a)):
            reach = label[tail[a]] + weight[a]
            if head[a] not in best or reach < best[head[a]][0]:
                best[head[a]] = (reach, a)
        improved = [(h, r, a) for h, (r, a) in best.items() if r < label[h] - eps and not frozen[h]]
        if not improved:
            break
        for h, r, a in improved:
            label[h], parent_arc[h] = r, a
        parent = [-1 if frozen[v] or parent_arc[v] < 0 else tail[parent_arc[v]] for v in range(n)]
        on_cycle: dict[int, int] = {}
        for s in range(n):
            seen = []
            v = s
            while v >= 0 and v not in seen and v not in on_cycle:
                seen.append(v)
                v = parent[v]
            if v >= 0 and v in seen:  # the walk closed a cycle at v
                cycle = seen[seen.index(v) :]
                for u in cycle:
                    on_cycle[u] = min(cycle)
        for v in sorted(on_cycle):
            found.append((v, on_cycle[v], parent_arc[v]))
            frozen[v] = True
        for a in range(len(tail)):
            if frozen[tail[a]] or frozen[head[a]]:
                weight[a] = math.inf
    return found
