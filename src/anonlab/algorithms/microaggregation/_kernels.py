"""The compiled MDAV kernel (numba's nopython mode): plain loops over numpy arrays.

See :mod:`anonlab.algorithms.microaggregation.grouping` for the algorithm; :func:`mdav_kernel`
returns :func:`_mdav_blocks` compiled, its blocks run on numba's threads.
"""

from typing import Any

import numpy as np

from anonlab._compiled import jit, numba

__all__ = ["mdav_kernel"]

prange = range  # numba.prange once the kernel is compiled


def _mdav_block(points, k, out):
    """MDAV on ``points`` (rows, dims): ``out[i]`` the group of row ``i``, groups numbered
    from 0; returns the number of groups. Ties go to the lower row."""
    n, d = points.shape
    alive = np.arange(n)  # the remaining rows are alive[:m], in row order
    m = n
    group = 0
    dist = np.empty(n)
    total = np.zeros(d)  # the sum of the remaining rows
    for i in range(n):
        for j in range(d):
            total[j] += points[i, j]
    while m > 0:
        if m < 2 * k:  # the last group
            for i in range(m):
                out[alive[i]] = group
            return group + 1
        r = _farthest(points, alive, m, total / m, dist)
        _distances(points, alive, m, points[r].copy(), dist)  # (to r: kept for r's group)
        two = m >= 3 * k
        s = alive[np.argmax(dist[:m])] if two else -1  # the farthest from r, the lowest row
        centre_s = points[s].copy() if two else points[r].copy()
        m = _take(points, alive, m, dist, k, group, out, total)
        group += 1
        if not two:  # 2k..3k-1 rows were left: the rest is the last group
            for i in range(m):
                out[alive[i]] = group
            return group + 1
        _distances(points, alive, m, centre_s, dist)
        m = _take(points, alive, m, dist, k, group, out, total)
        group += 1
    return group


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
    return alive[np.argmax(dist[:m])]


def _take(points, alive, m, dist, k, group, out, total):
    """Put the ``k`` remaining rows nearest by ``dist`` (ties: the lower rows) in ``group``,
    take them out of ``total`` and of ``alive`` (kept in order); returns the rows left."""
    threshold = np.partition(dist[:m], k - 1)[k - 1]
    below = 0
    for i in range(m):
        if dist[i] < threshold:
            below += 1
    ties = k - below
    w = 0
    for i in range(m):
        row = alive[i]
        if dist[i] < threshold or (ties > 0 and dist[i] == threshold):
            if dist[i] == threshold:
                ties -= 1
            out[row] = group
            for j in range(points.shape[1]):
                total[j] -= points[row, j]
        else:
            alive[w] = row
            w += 1
    return w


def _mdav_blocks(points, k, starts, out, groups):
    """MDAV in each block ``points[starts[b]:starts[b+1]]`` (groups numbered from 0 in each),
    the blocks shared among numba's threads; ``groups[b]``: the groups of block ``b``."""
    for b in prange(starts.size - 1):
        lo, hi = starts[b], starts[b + 1]
        groups[b] = _mdav_block(points[lo:hi], k, out[lo:hi])


_KERNELS: list[Any] = []


def mdav_kernel() -> Any:
    """:func:`_mdav_blocks` compiled (once per process; its helpers first)."""
    if not _KERNELS:
        g = globals()
        g["prange"] = numba().prange
        g["_distances"] = jit(_distances, inline=True)
        g["_farthest"] = jit(_farthest, inline=True)
        g["_take"] = jit(_take, entry=False)  # (called by the kernels only)
        g["_mdav_block"] = jit(_mdav_block, entry=False)
        _KERNELS.append(jit(_mdav_blocks, parallel=True))
    return _KERNELS[0]
