"""Candidate edges by Hamming distance (multi-sorting) and the lower bound of equations (7)-(9).

The two-phase algorithm never builds the whole anonymity graph: it keeps, for every released
record, the original records within a small Hamming distance of it (section 3.2.1: "the
lower-weighted edges (the Hamming distance) are obtained by the fast algorithm proposed by
Uno", multi-sorting). Two records within distance ``d`` agree outside some set ``D`` of ``d``
sites; sorting the records by the sites outside ``D`` (then by ``D``) puts them in one run, and
each record is joined to its ``window`` nearest neighbours of the run. A pair is kept from the
set ``D`` it differs on exactly, so no pair is produced twice. The sorts of all the sets share
their work as in Uno's multi-sorting: one radix partition per site and set of sites hidden so
far, the most significant site first, and a run of one record is not followed further (a
compiled kernel, :func:`~anonlab.algorithms.nonhomogeneous._kernels._near_pairs`).

References
----------
.. [1] K. Murakami and T. Uno, "Optimization algorithm for k-anonymization of datasets with
   low information loss", Int. J. Inf. Secur. 17 (2018), sections 3.2.1 and 4 (equations
   (7)-(9)).
.. [2] T. Uno, "Multi-sorting algorithm for finding pairs of similar short substrings from
   large-scale string data", Knowl. Inf. Syst. 25 (2010).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from anonlab._typing import IntArray
from anonlab.algorithms.nonhomogeneous._kernels import kernel
from anonlab.data.grouping import factorize_keys, unique_rows

__all__ = ["candidate_edges", "distinct", "lower_bound", "row_keys"]


def row_keys(codes: npt.NDArray[np.integer], columns: list[int]) -> IntArray:
    """One int64 key per row, equal iff the rows agree on ``columns`` (mixed radix, or a
    factorization of the rows when the radix would overflow)."""
    n = codes.shape[0]
    if not columns:
        return np.zeros(n, dtype=np.int64)
    sub = codes[:, columns].astype(np.int64)
    radix = sub.max(axis=0) + 1
    if float(np.prod(radix.astype(np.float64))) < 2.0**62:
        key = np.zeros(n, dtype=np.int64)
        for j in range(sub.shape[1]):
            key = key * radix[j] + sub[:, j]
        return key
    out: IntArray = unique_rows(sub)[1]
    return out


def distinct(values: IntArray) -> IntArray:
    """The distinct values, sorted: a sort and a mask of each run's first value.

    ``np.unique`` without ``return_*`` hashes int64 values before sorting them, which is
    slower than sorting at the sizes of a chunk's edge keys (benchmarks/README.md).

    Examples
    --------
    >>> import numpy as np
    >>> distinct(np.array([7, 3, 7, 1, 3])).tolist()
    [1, 3, 7]
    """
    out = np.sort(values, kind="stable")
    if out.size:
        out = out[np.concatenate([[True], out[1:] != out[:-1]])]
    return out


def candidate_edges(
    codes: npt.NDArray[np.integer],
    k: int,
    *,
    max_distance: int,
    window: int,
    per_record: int,
) -> tuple[IntArray, IntArray]:
    """Candidate edges ``(original, released)`` of a block, sorted by original then released.

    Parameters
    ----------
    codes : ndarray of int, shape (rows, sites)
        The block's value codes, its rows in sorted order.
    k : int
        Every released record gets the edges of the ring ``j, j+1, ..., j+k-1`` of the block's
        order too: they hold a k-regular cover, so the candidates always admit a solution.
    max_distance : int
        The largest Hamming distance searched.
    window : int
        Neighbours joined in each sorted run.
    per_record : int
        At most this many candidates per released record (the nearest; the ring and the
        record itself always stay).

    Returns
    -------
    original, released : ndarray of int64
        Distinct pairs: released record ``released[e]`` may cover ``original[e]``.
    """
    n, m = codes.shape
    by_site = np.ascontiguousarray(codes.T, dtype=np.int64)
    card = by_site.max(axis=1) + 1 if n else np.ones(m, np.int64)
    sites = np.argsort(card, kind="stable").astype(np.int64)
    for s in np.flatnonzero(card > n).tolist():  # sparse codes: their ranks (the same order)
        values, inverse = np.unique(by_site[s], return_inverse=True)
        by_site[s], card[s] = inverse.reshape(-1), values.size
    span = m + 1  # a pair's key: (released * span + distance) * n + original
    found = kernel("pairs")(by_site, card, sites, min(max_distance, m), window, span)
    rows = np.arange(n, dtype=np.int64)
    ring = [((rows + s) % n) * n + rows for s in range(k)]  # original j+s covered by j
    near = kernel("nearest")(found, n, span, per_record)
    pairs = distinct(np.concatenate([near, *ring]))
    o, r = np.divmod(pairs, n)
    return o.astype(np.int64), r.astype(np.int64)


def lower_bound(codes: npt.NDArray[np.integer], k: int) -> IntArray:
    """Per record, the fewest sites it must hide to cover ``k`` records (equations (7)-(9)).

    Relaxing the degree constraints of the original records (5), each released record needs
    only ``k`` neighbours: the fewest hidden sites ``h`` such that some ``h`` sites hidden leave
    ``k`` records (itself included) agreeing with it on the rest. Hidden sets are examined by
    increasing size, as in section 4; the sum over the records bounds every k-anonymous
    concealing release from below.

    The groups of a hidden set are those of the set without its last site, merged: each
    group is keyed by its first record on the visible sites and the equal keys are joined
    by one hash pass (:func:`~anonlab.data.grouping.factorize_keys`), so a set costs its
    parent's number of groups, not the table's. Only the records still without a bound are
    followed from set to set. The groups of one size are kept for the next while they hold
    at most ``_KEPT`` entries; past that a set is grouped from the distinct records.

    Parameters
    ----------
    codes : ndarray of int, shape (rows, sites)
    k : int

    Returns
    -------
    ndarray of int64
        The bound of each record (its number of hidden sites).

    Examples
    --------
    Three records agree on the first site; the third differs from both on the second:

    >>> import numpy as np
    >>> lower_bound(np.array([[0, 1], [0, 1], [0, 2], [1, 2]]), 2).tolist()
    [0, 0, 1, 1]
    """
    n, m = codes.shape
    tuples, inverse, weight = unique_rows(codes)
    best = np.where(weight >= k, 0, -1).astype(np.int64)
    todo = np.flatnonzero(best < 0)  # the distinct records still without a bound
    radix = tuples.max(axis=0, initial=0) + 1
    # a group's key: its first record's digits on the visible sites (or, when the mixed
    # radix would overflow, its visible sites factorized set by set)
    fits = float(np.prod(radix.astype(np.float64))) < 2.0**62
    place = np.ones(m, dtype=np.int64)  # each site's positional weight in one mixed radix
    for s in range(m - 2, -1, -1) if fits else ():
        place[s] = place[s + 1] * radix[s + 1]
    root = _Groups(np.arange(tuples.shape[0]), weight, todo, tuples @ place if fits else None)
    site = [np.ascontiguousarray(tuples[:, s]) for s in range(m)]
    previous: dict[tuple[int, ...], _Groups] = {(): root}
    for h in range(1, m + 1):
        if not todo.size:
            break
        current: dict[tuple[int, ...], _Groups] = {}
        kept = 0
        done = np.zeros(todo.size, dtype=bool)
        for hidden in itertools.combinations(range(m), h):
            parent = previous.get(hidden[:-1], root)
            if parent.key is not None:  # the parent's keys less the new hidden site's digit
                key = parent.key.copy()
                for s in hidden if parent is root else hidden[-1:]:
                    key -= site[s][parent.first] * place[s]
            else:
                key = row_keys(tuples[parent.first], [s for s in range(m) if s not in hidden])
            ids, count = factorize_keys(key.view(np.uint64))
            at = np.empty(count, dtype=np.int64)  # each group's first position in the parent's
            at[ids[::-1]] = np.arange(ids.size - 1, -1, -1)
            size = np.bincount(ids, weights=parent.size, minlength=count).astype(np.int64)
            group = ids[parent.todo]
            done |= size[group] >= k
            if kept + 3 * count + group.size <= _KEPT:
                keys = None if parent.key is None else key[at]
                current[hidden] = _Groups(parent.first[at], size, group, keys)
                kept += 3 * count + group.size
            if done.all():
                break
        best[todo[done]] = h
        todo = todo[~done]
        previous = {s: g.following(~done) for s, g in current.items()}
        root = root.following(~done)
    out: IntArray = best[inverse]
    return out


_KEPT = 1 << 25
"""Entries (int64) of the groups of one size of hidden sets kept for the next size (256 MiB)."""


@dataclass(frozen=True)
class _Groups:
    """The groups of the distinct records under one hidden set: each group's first record,
    its size (rows), the group of each record still without a bound, and each group's key
    (its first record's digits on the visible sites; None when they would overflow)."""

    first: IntArray
    size: IntArray
    todo: IntArray
    key: IntArray | None

    def following(self, still: npt.NDArray[np.bool_]) -> _Groups:
        """The same groups, following only the records of ``todo`` where ``still``."""
        return _Groups(self.first, self.size, self.todo[still], self.key)
