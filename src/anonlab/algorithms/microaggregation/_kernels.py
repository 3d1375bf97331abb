"""The compiled MDAV kernel (numba's nopython mode): plain loops over numpy arrays.

See :mod:`anonlab.algorithms.microaggregation.grouping` for the algorithm; :func:`mdav_kernel`
returns :func:`_mdav_blocks` compiled.
"""

from typing import Any

import numpy as np

from anonlab._compiled import jit

__all__ = ["mdav_kernel"]


def _mdav_block(points, k, first, out):
    """MDAV on ``points`` (rows, dims): ``out[i]`` the group of row ``i`` (given as -1),
    groups numbered from ``first``; returns the number of groups. Ties go to the lower row."""
    n, d = points.shape
    alive = np.arange(n)  # the remaining rows are alive[:m]
    m = n
    group = first
    dist = np.empty(n)
    while m > 0:
        if m < 2 * k:  # the last group
            for i in range(m):
                out[alive[i]] = group
            group += 1
            break
        # the centroid of the remaining rows and the row farthest from it
        c = np.zeros(d)
        for i in range(m):
            for j in range(d):
                c[j] += points[alive[i], j]
        for j in range(d):
            c[j] /= m
        r = _farthest(points, alive, m, c, dist)
        seeds = 1 if m < 3 * k else 2
        if seeds == 2:
            s = _farthest(points, alive, m, points[r].copy(), dist)
        for t in range(seeds):
            centre = points[r].copy() if t == 0 else points[s].copy()
            _distances(points, alive, m, centre, dist)
            threshold = np.partition(dist[:m], k - 1)[k - 1]
            taken = 0
            # rows strictly nearer than the k-th distance, then ties in row order
            for i in range(m):
                if dist[i] < threshold:
                    out[alive[i]] = group
                    taken += 1
            for i in range(m):
                if taken < k and dist[i] == threshold:
                    out[alive[i]] = group
                    taken += 1
            # compact the remaining rows (keep their order)
            w = 0
            for i in range(m):
                if out[alive[i]] != group:
                    alive[w] = alive[i]
                    w += 1
            m = w
            group += 1
        if seeds == 1:  # 2k..3k-1 rows were left: the rest is the last group
            for i in range(m):
                out[alive[i]] = group
            if m > 0:
                group += 1
            break
    return group - first


def _distances(points, alive, m, centre, dist):
    """``dist[i]``: squared distance of row ``alive[i]`` to ``centre``."""
    d = points.shape[1]
    for i in range(m):
        acc = 0.0
        for j in range(d):
            x = points[alive[i], j] - centre[j]
            acc += x * x
        dist[i] = acc


def _farthest(points, alive, m, centre, dist):
    """The row (of ``points``) farthest from ``centre`` among ``alive[:m]``, the lowest on
    ties."""
    _distances(points, alive, m, centre, dist)
    best = 0
    for i in range(1, m):
        if dist[i] > dist[best]:
            best = i
    return alive[best]


def _mdav_blocks(points, k, starts, out):
    """MDAV in each block ``points[starts[b]:starts[b+1]]``; groups numbered across blocks.
    Returns the number of groups."""
    groups = 0
    for b in range(starts.size - 1):
        lo, hi = starts[b], starts[b + 1]
        groups += _mdav_block(points[lo:hi], k, groups, out[lo:hi])
    return groups


_KERNELS: list[object] = []


def mdav_kernel() -> Any:
    """:func:`_mdav_blocks` compiled (once per process; its helpers first)."""
    if not _KERNELS:
        # the helpers are compiled first: the block kernel calls them
        g = globals()
        g["_distances"] = jit(_distances, inline=True)
        g["_farthest"] = jit(_farthest, inline=True)
        g["_mdav_block"] = jit(_mdav_block)
        _KERNELS.append(jit(_mdav_blocks))
    return _KERNELS[0]
