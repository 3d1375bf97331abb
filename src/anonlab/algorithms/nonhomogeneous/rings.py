"""Rings of windows: Wong et al.'s randomized cover and anonlab's pattern rings.

A *ring* over records ``t_0, ..., t_{g-1}`` releases ``t_i`` as the generalization of the
window ``t_i, t_{i+1}, ..., t_{i+k-1}`` (indices modulo ``g``): every record lies in exactly
``k`` windows, so the cover is k-regular (Definition 1 holds) whatever the order.

* :func:`wong_rings` is the baseline of Wong, Mamoulis & Cheung (SIGMOD 2010) as Murakami & Uno
  describe it (section 1.1): sort, cut into groups of ``k`` to ``2k - 1`` records, and within
  each group a random order (seeded) makes the ring: the random assignment of covers.
* :func:`pattern_rings` is anonlab's start for the two-phase algorithm (not in the paper): the
  hidden sets ``P`` are tried cheapest first (fewest sites, the highest-cardinality sites
  first), and every group of at least ``k`` not-yet-covered records that agree outside ``P``
  becomes a ring, its records ordered by their values in ``P`` so that a window hides as little
  of ``P`` as it can. Each record is then released at (or below) the cheapest hidden set that
  groups it with ``k - 1`` others still free (how this start compares with the paper's
  two-phase GCP: benchmarks/README.md).

References
----------
.. [1] W. K. Wong, N. Mamoulis and D. W. Cheung, "Non-homogeneous generalization in privacy
   preserving data publishing", SIGMOD 2010.
.. [2] K. Murakami and T. Uno, "Optimization algorithm for k-anonymization of datasets with
   low information loss", Int. J. Inf. Secur. 17 (2018), sections 1.1 and 3.2.3.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

from anonlab._typing import IntArray
from anonlab.algorithms.nonhomogeneous.candidates import row_keys

__all__ = ["pattern_rings", "ring_windows", "wong_rings"]


#: Hidden sets examined one by one before the rest of the records are grouped with every site
#: hidden (many sites, e.g. long pseudo-quasi-identifiers, make 2^sites sets).
MAX_PATTERNS = 20_000


def ring_windows(members: IntArray, sizes: IntArray, k: int) -> tuple[IntArray, IntArray]:
    """The windows of consecutive rings.

    Parameters
    ----------
    members : ndarray of int64
        The records of every ring, ring after ring, each in its ring order.
    sizes : ndarray of int64
        The size of each ring (each at least ``k``).
    k : int

    Returns
    -------
    released : ndarray of int64
        ``members`` (each released once).
    covers : ndarray of int64, shape (len(members), k)
        The window of each: itself and the next ``k - 1`` records of its ring.
    """
    start = np.repeat(np.cumsum(sizes) - sizes, sizes)
    size = np.repeat(sizes, sizes)
    pos = np.arange(members.size, dtype=np.int64) - start
    steps = np.arange(k, dtype=np.int64)
    covers = members[start[:, None] + (pos[:, None] + steps) % size[:, None]]
    return members, covers


def wong_rings(order: IntArray, k: int, seed: int) -> IntArray:
    """Wong et al.'s cover: groups of ``k`` consecutive records of ``order`` (the last takes
    the rest, up to ``2k - 1``), each a ring in a random order.

    Parameters
    ----------
    order : ndarray of int64
        The records in sorted order.
    k : int
    seed : int
        Seed of the random orders (``numpy.random.default_rng``).

    Returns
    -------
    ndarray of int64, shape (records, k)
        ``covers[r]``: the records released record ``r`` covers.
    """
    n = order.size
    groups = max(n // k, 1)
    sizes = np.full(groups, k, dtype=np.int64)
    sizes[-1] += n - groups * k
    rng = np.random.default_rng(seed)
    group = np.repeat(np.arange(groups), sizes)
    shuffled = order[np.lexsort((rng.random(n), group))]
    released, covers = ring_windows(shuffled, sizes, k)
    out = np.empty((n, k), dtype=np.int64)
    out[released] = covers
    return out


def _hidden_sets(
    cardinality: IntArray, weights: npt.NDArray[np.float64]
) -> Iterator[tuple[int, ...]]:
    """Hidden sets, cheapest first: by total weight, then size, then the highest-cardinality
    sites first."""
    m = cardinality.size
    sites = [int(s) for s in np.lexsort((-cardinality, weights))]  # cheap, then wide sites
    seen = 0
    for h in range(1, m):
        combos = sorted(
            itertools.combinations(sites, h),
            key=lambda c: (round(float(weights[list(c)].sum()), 9), [sites.index(s) for s in c]),
        )
        for combo in combos:
            yield combo
            seen += 1
            if seen >= MAX_PATTERNS:
                return
        if seen + math.comb(m, h + 1) > MAX_PATTERNS and h + 1 < m:
            return


def _keys(
    sub: npt.NDArray[np.integer], outside: list[int], hidden: list[int], radix: IntArray | None
) -> tuple[IntArray, IntArray]:
    """Each row's key on the sites ``outside`` and on ``outside`` then ``hidden``: equal iff
    the rows agree there, and in the rows' lexicographic order (one mixed radix of the sites'
    cardinalities ``radix``, the first key a prefix of the second; :func:`row_keys` when
    ``radix`` is None: the keys of all the sites would overflow)."""
    if radix is None:
        return row_keys(sub, outside), row_keys(sub, outside + hidden)
    key = np.zeros(sub.shape[0], dtype=np.int64)
    for s in outside:
        key *= radix[s]
        key += sub[:, s]
    if not hidden:
        return key, key
    whole = key.copy()
    for s in hidden:
        whole *= radix[s]
        whole += sub[:, s]
    return key, whole


def pattern_rings(
    codes: npt.NDArray[np.integer], k: int, weights: npt.NDArray[np.float64] | None = None
) -> tuple[IntArray, IntArray]:
    """A k-regular cover from rings of records that agree outside a hidden set.

    Parameters
    ----------
    codes : ndarray of int, shape (records, sites)
        Value codes (any row order).
    k : int
    weights : ndarray of float, optional
        The cost of hiding each site (default 1 each).

    Returns
    -------
    covers : ndarray of int64, shape (records, k)
        ``covers[r]``: the records released record ``r`` covers (``r`` itself first).
    ring : ndarray of int64
        The ring of each record (a ring covers only its own records).
    """
    n, m = codes.shape
    w = np.ones(m) if weights is None else np.asarray(weights, dtype=np.float64)
    cardinality = codes.max(axis=0).astype(np.int64) + 1 if n else np.ones(m, np.int64)
    fits = float(np.prod(cardinality.astype(np.float64))) < 2.0**62
    radix = cardinality if fits else None  # (one key of all the sites fits 62 bits)
    covers = np.full((n, k), -1, dtype=np.int64)
    ring_of = np.full(n, -1, dtype=np.int64)
    rings = 0
    free = np.ones(n, dtype=bool)
    last_members = np.zeros(0, dtype=np.int64)
    todo = np.flatnonzero(free)
    sub = codes[todo]  # the codes of the records without a ring
    for hidden in itertools.chain([()], _hidden_sets(cardinality, w)):
        if todo.size < k:
            break
        outside = [s for s in range(m) if s not in hidden]
        key, whole = _keys(sub, outside, list(hidden), radix)
        # by the sites outside, then hidden (a stable sort of records nearly in order already)
        order = np.argsort(whole, kind="stable")
        run = key[order]
        starts = np.flatnonzero(np.concatenate([[True], run[1:] != run[:-1]]))
        sizes = np.diff(np.append(starts, run.size))
        big = sizes >= k
        if not big.any():
            continue
        take = np.repeat(big, sizes)
        members = todo[order[take]]
        released, cov = ring_windows(members, sizes[big], k)
        covers[released] = cov
        ring_of[members] = rings + np.repeat(np.arange(int(big.sum())), sizes[big])
        rings += int(big.sum())
        free[members] = False
        last_members = members[-int(sizes[big][-1]) :]
        todo = np.flatnonzero(free)
        sub = codes[todo]
    rest = np.flatnonzero(free)
    if rest.size:
        # every site hidden: one ring of the rest, with the last ring made when the rest is
        # too small to be a ring of its own
        ring = rest if rest.size >= k else np.concatenate([last_members, rest])
        order = np.lexsort(codes[ring].T[::-1])
        released, cov = ring_windows(ring[order], np.array([ring.size], dtype=np.int64), k)
        covers[released] = cov
        ring_of[ring] = rings
    return covers, ring_of
