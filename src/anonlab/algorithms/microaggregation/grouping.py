"""MDAV (maximum distance to average vector): fixed-size multivariate microaggregation.

Domingo-Ferrer & Torra (2005), section 3.1 (the MDAV heuristic of Domingo-Ferrer & Mateo-Sanz
2002 with groups of fixed size k): while at least ``3k`` records remain, take the record ``r``
farthest from the centroid of the remaining records and the record ``s`` farthest from ``r``;
``r`` and its ``k - 1`` nearest remaining records form a group, then ``s`` and its ``k - 1``
nearest. With ``2k`` to ``3k - 1`` records left, one more group is formed around the record
farthest from their centroid and the rest form the last group; with fewer than ``2k`` left,
they are the last group. Every group holds ``k`` to ``2k - 1`` records.

One MDAV pass over ``n`` records costs ``O(n^2 / k)`` distances. For large tables the records
are first split into blocks of at most ``block_size`` records by median cuts along each
block's first principal component (:func:`blocks`; partitioning a large data set before
microaggregating each part, cf. Solé, Muntés-Mulero & Nin 2012), and MDAV runs in each
block: the cost is ``O(n * block_size / k)``. A table of at most ``block_size`` records is one block: plain MDAV.
Every block holds at least ``block_size / 2 >= k`` records, so every group still holds ``k`` to
``2k - 1`` records.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from anonlab._typing import FloatArray, IntArray
from anonlab.algorithms.microaggregation._kernels import mdav_kernel

__all__ = ["mdav", "blocks", "count_blocks"]


#: The rows of a block whose first principal component is computed (a systematic sample).
SAMPLE = 20_000


def blocks(points: FloatArray, size: int) -> tuple[IntArray, IntArray]:
    """Split the rows into blocks of at most ``size`` rows by median cuts.

    A block of more than ``size`` rows is cut in two halves (sizes differing by at most one)
    at the median of the rows' projections on the block's first principal component (of
    every ``m // 20000``-th row of a block of ``m``); the halves are cut again until each
    holds at most ``size`` rows. The loop is over blocks, not rows.

    Parameters
    ----------
    points : ndarray of float, shape (rows, dims)
    size : int
        The largest block (>= 1).

    Returns
    -------
    order : ndarray of int64
        The rows, block after block.
    starts : ndarray of int64
        Where each block starts in ``order``, and the number of rows last.

    Examples
    --------
    >>> import numpy as np
    >>> order, starts = blocks(np.array([[0.0, 1.0], [9.0, 8.0], [1.0, 0.0], [8.0, 9.0]]), 2)
    >>> sorted(sorted(order[a:b].tolist()) for a, b in zip(starts[:-1], starts[1:]))
    [[0, 2], [1, 3]]
    """
    n = points.shape[0]
    order = np.arange(n, dtype=np.int64)
    done: list[tuple[int, int]] = []
    todo = [(0, n)]
    while todo:
        lo, hi = todo.pop()
        if hi - lo <= size or points.shape[1] == 0:
            done.append((lo, hi))
            continue
        rows = order[lo:hi]
        sub = points[rows]
        centred = sub - sub.mean(axis=0)
        sample = centred[:: max(1, centred.shape[0] // SAMPLE)]
        direction = np.linalg.svd(sample, full_matrices=False)[2][0]
        half = (hi - lo) // 2
        cut = np.argpartition(centred @ direction, half)
        order[lo:hi] = rows[cut]
        todo.append((lo + half, hi))
        todo.append((lo, lo + half))
    done.sort()
    starts = np.array([lo for lo, _ in done] + [n], dtype=np.int64)
    return order, starts


def count_blocks(n: int, size: int) -> int:
    """How many blocks :func:`blocks` cuts ``n`` rows into (halves until at most ``size``).

    Examples
    --------
    >>> count_blocks(10, 10), count_blocks(10001, 5000), count_blocks(20000, 5000)
    (1, 3, 4)
    """
    counts: dict[int, int] = {}

    def leaves(m: int) -> int:
        if m <= size:
            return 1
        if m not in counts:
            counts[m] = leaves(m // 2) + leaves(m - m // 2)
        return counts[m]

    return leaves(n)


def mdav(points: npt.ArrayLike, k: int, block_size: int | None = None) -> IntArray:
    """The MDAV group of every row (see the module docstring).

    Parameters
    ----------
    points : array of float, shape (rows, dims)
        The records (standardized by the caller); at least ``k`` rows.
    k : int
        The smallest group (>= 1).
    block_size : int, optional
        The largest block MDAV runs on (raised to ``4k`` if smaller); None: one block, plain
        MDAV on the whole table.

    Returns
    -------
    ndarray of int64, shape (rows,)
        The group of each row, groups numbered from 0 in the order MDAV forms them.

    Examples
    --------
    >>> mdav([[0.0], [1.0], [2.0], [10.0], [11.0], [12.0]], 3).tolist()
    [0, 0, 0, 1, 1, 1]
    """
    x = np.ascontiguousarray(np.asarray(points, dtype=np.float64))
    if x.ndim == 1:
        x = x[:, None]
    n = x.shape[0]
    if n < k:
        raise ValueError(f"MDAV needs at least k = {k} rows; it got {n}.")
    if block_size is None or n <= block_size:
        order = np.arange(n, dtype=np.int64)
        starts = np.array([0, n], dtype=np.int64)
    else:
        order, starts = blocks(x, max(int(block_size), 4 * k))
    sorted_points = np.ascontiguousarray(x[order])
    out = np.empty(n, dtype=np.int64)
    groups = np.zeros(starts.size - 1, dtype=np.int64)
    mdav_kernel()(sorted_points, np.int64(k), starts, out, groups)
    # number the groups across blocks, block after block
    out += np.repeat(np.cumsum(groups) - groups, np.diff(starts))
    group = np.empty(n, dtype=np.int64)
    group[order] = out
    return group
