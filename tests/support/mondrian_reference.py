"""Mondrian (LeFevre, DeWitt & Ramakrishnan 2006, section 4) written as the paper's
recursion, one region at a time, for the property tests (strict partitioning, k only).

``anonymize(partition)``: if no allowable cut, the partition is final; else cut it on the
dimension of widest normalized range (ties: the first) at the median and recurse. The
rules are those of :mod:`anonlab.algorithms.mondrian.partition`, restated on Python lists.
"""

from __future__ import annotations

from collections import Counter

from anonlab.data.hierarchy import Hierarchy


def mondrian_strict(
    rows: list[tuple[object, ...]],
    kinds: list[str],
    hierarchies: list[Hierarchy | None],
    k: int,
) -> list[list[int]]:
    """The final regions (lists of row indices) of strict Mondrian on ``rows``.

    ``kinds[j]`` is ``interval`` (the values are numbers) or ``hierarchy``."""
    d = len(kinds)
    numbers = [[float(r[j]) for r in rows] if kinds[j] == "interval" else None for j in range(d)]
    spans = [max(numbers[j]) - min(numbers[j]) if numbers[j] else 0.0 for j in range(d)]
    paths = []
    for j in range(d):
        h = hierarchies[j]
        if h is None:
            paths.append(None)
            continue
        # each value's labels from level 0 up
        paths.append(
            {
                v: [str(h.generalize([v], lv)[0]) for lv in range(h.height + 1)]
                for v in {r[j] for r in rows}
            }
        )
    leaves = [None if hierarchies[j] is None else _leaves(hierarchies[j]) for j in range(d)]

    def lca(region: list[int], j: int) -> int:
        top = hierarchies[j].height + 1
        for lv in range(top):
            if len({paths[j][rows[i][j]][lv] for i in region}) == 1:
                return lv
        return top

    def width(region: list[int], j: int) -> float:
        if kinds[j] == "interval":
            vals = [numbers[j][i] for i in region]
            return (max(vals) - min(vals)) / spans[j] if spans[j] > 0 else 0.0
        lv = lca(region, j)
        h = hierarchies[j]
        if lv > h.height:
            return 1.0
        if lv == 0:
            return 0.0
        label = paths[j][rows[region[0]][j]][lv]
        dom = len(h.leaves)
        return leaves[j][(lv, label)] / dom

    def cut(region: list[int], j: int) -> list[list[int]] | None:
        if kinds[j] == "interval":
            vals = sorted(numbers[j][i] for i in region)
            median = vals[(len(vals) - 1) // 2]
            le = sum(v <= median for v in vals)
            lt = sum(v < median for v in vals)
            half = len(vals) / 2
            options = [c for c in (le, lt) if 0 < c < len(vals)]
            if not options:
                return None
            c = (
                le
                if le in options and (lt not in options or abs(le - half) <= abs(lt - half))
                else lt
            )
            split = sorted(vals)[c - 1]
            left = [i for i in region if numbers[j][i] <= split]
            right = [i for i in region if numbers[j][i] > split]
            parts = [left, right]
        else:
            lv = lca(region, j)
            child = max(min(lv, hierarchies[j].height + 1) - 1, 0)
            by_child: dict[str, list[int]] = {}
            for i in region:
                by_child.setdefault(paths[j][rows[i][j]][child], []).append(i)
            ordered = [
                by_child[c] for c in sorted(by_child, key=lambda c: _first_code(c, paths[j], child))
            ]
            large = [p for p in ordered if len(p) >= k]
            small = [i for p in ordered if len(p) < k for i in p]
            if not large:
                return None
            if small and len(small) >= k:
                parts = [*large, small]
            else:
                biggest = max(range(len(large)), key=lambda a: (len(large[a]), -a))
                large[biggest] = large[biggest] + small
                parts = large
        if len(parts) < 2 or min(len(p) for p in parts) < k:
            return None
        return parts

    final: list[list[int]] = []
    todo = [list(range(len(rows)))]
    while todo:
        region = todo.pop()
        if len(region) < 2 * k:
            final.append(region)
            continue
        widths = [width(region, j) for j in range(d)]
        order = sorted((j for j in range(d) if widths[j] > 0), key=lambda j: (-widths[j], j))
        for j in order:
            parts = cut(region, j)
            if parts is not None:
                todo.extend(parts)
                break
        else:
            final.append(region)
    return final


def _leaves(h: Hierarchy) -> dict[tuple[int, str], int]:
    out: Counter[tuple[int, str]] = Counter()
    for lv in range(h.height + 1):
        for v in h.leaves.tolist():
            out[(lv, str(h.generalize([v], lv)[0]))] += 1
    return dict(out)


def _first_code(label: str, paths: dict[object, list[str]], level: int) -> str:
    """Children are grouped, not ordered, by the algorithm: any order gives the same parts
    except which large child takes a small pool; the label order decides ties here."""
    del paths, level
    return label
