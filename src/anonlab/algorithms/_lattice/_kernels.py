"""Compiled grouping of the lattice's nodes: the classes of a full-domain table grouped from
the base classes (:func:`_group_classes`) or split from the classes of a table one level
coarser on one attribute (:func:`_split_classes`), and the records of each base domain code
(:func:`_domain_sizes`). :class:`~anonlab.algorithms._lattice.LatticeEvaluator` calls them
(``classes``, ``refine``, ``attribute_sizes``), and
:func:`~anonlab.algorithms._lattice.rollup.merge_keys` merges rolled-up keys with
:func:`_merge_keys`; plain Python for numba's nopython mode, compiled on first use by
:func:`compiled` (:mod:`anonlab._compiled`).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from anonlab._compiled import jit

__all__ = ["Grouping", "compiled"]

_FIB = 0x9E3779B97F4A7C15  # 2^64 / golden ratio: multiplicative hashing
_CACHE: list[SimpleNamespace] = []
I64 = npt.NDArray[np.int64]


class Grouping(NamedTuple):
    """The full-domain search's grouping of the base classes: their domain codes ``keys``
    (n, m), every attribute's level maps end to end (``maps``: code -> label), their records
    ``weights``, a hash table of at least two slots per base class (``tkeys`` all ``-1``
    between calls, ``tvals``) and ``out``, written: the class of each base class."""

    keys: npt.NDArray[np.integer[Any]]
    maps: I64
    weights: I64
    tkeys: I64
    tvals: I64
    out: npt.NDArray[np.integer[Any]]


def _slots(n):
    """The mask of a hash table's first ``2 * n`` slots or more (a power of two, at least 16)
    and the shift that takes a 64-bit hash to a slot."""
    bits = 4
    while (1 << bits) < 2 * n:
        bits += 1
    return (1 << bits) - 1, np.uint64(64 - bits)


def _hash_groups(packed, gr):
    """Group the rows of ``packed`` (n, words: each row's key) exactly: row ``r`` goes to
    the class of its key, numbered in the order first met, in ``gr.out``. The hash table
    (``gr.tkeys``, ``gr.tvals``) keys a representative row per class, whose words are
    compared. Returns ``(g, sizes)``: the number of classes and the sum of ``gr.weights``
    in each."""
    tkeys, tvals, out, weights = gr.tkeys, gr.tvals, gr.out, gr.weights
    n, nw = packed.shape
    mask, shift = _slots(n)
    fib = np.uint64(_FIB)
    sizes = np.zeros(n, dtype=np.int64)
    slot = np.empty(n, dtype=np.int64)
    g = 0
    for r in range(n):
        h = np.uint64(0)
        for w in range(nw):
            h = (h ^ np.uint64(packed[r, w])) * fib
        s = np.int64(h >> shift)
        while True:
            rep = tkeys[s]
            if rep == -1:
                tkeys[s] = r
                tvals[s] = g
                slot[g] = s
                c = g
                g += 1
                break
            same = True
            for w in range(nw):
                if packed[r, w] != packed[rep, w]:
                    same = False
                    break
            if same:
                c = tvals[s]
                break
            s = (s + 1) & mask
        out[r] = c
        sizes[c] += weights[r]
    for c in range(g):
        tkeys[slot[c]] = -1
    return g, sizes[:g]


def _dense_groups(packed, gr):
    """:func:`_hash_groups` of rows with one key word below ``gr.tkeys.size``, by direct
    addressing: ``tkeys`` holds the class of each key met. The same classes, numbered the
    same way (the search's coarse tables have a small key space: a lookup in a table that
    stays in cache instead of a hash and a probe)."""
    table, out, weights = gr.tkeys, gr.out, gr.weights
    n = packed.shape[0]
    sizes = np.zeros(n, dtype=np.int64)
    key_of = np.empty(n, dtype=np.int64)
    g = 0
    for r in range(n):
        k = packed[r, 0]
        c = table[k]
        if c == -1:
            c = g
            table[k] = g
            key_of[g] = k
            g += 1
        out[r] = c
        sizes[c] += weights[r]
    for c in range(g):
        table[key_of[c]] = -1
    return g, sizes[:g]


def _split_classes(ids, x, moff, card, gr):
    """The classes of a table one level finer on one attribute than a table whose classes
    are ``ids`` (the full-domain search's refinement, 5.3): base class ``r`` goes to the
    class of ``(ids[r], maps[moff + keys[r, x]])`` (the label of attribute ``x``, one of
    ``card``), numbered in the order first met, in ``gr.out``. Returns ``(g, sizes)``: the
    number of classes and the records in each."""
    n = ids.size
    keys, maps = gr.keys, gr.maps
    packed = np.empty((n, 1), dtype=np.int64)
    top = np.int64(0)
    for r in range(n):
        packed[r, 0] = np.int64(ids[r]) * card + maps[moff + keys[r, x]]
        top = max(top, packed[r, 0])
    if top < gr.tkeys.size:  # a key space that tkeys addresses directly
        return _dense_groups(packed, gr)
    return _hash_groups(packed, gr)


def _group_classes(cols, cards, moff, gr):
    """The classes of a full-domain table grouped from the base classes (the search's
    check of a table with no checked coarser neighbour, 5.2): base class ``r`` goes to the
    class of its labels ``maps[moff[i] + keys[r, cols[i]]]`` (``cards[i]`` of them) over the
    attributes ``cols``, numbered in the order first met, in ``gr.out``. The labels are
    packed into mixed-radix words below ``2**62`` (one word while they fit) and grouped by
    :func:`_hash_groups`. Returns ``(g, sizes)`` as :func:`_split_classes`."""
    keys, maps = gr.keys, gr.maps
    n = keys.shape[0]
    nc = cols.size
    word = np.zeros(nc, dtype=np.int64)  # the word each attribute goes to
    nw = 1
    space = 1
    for i in range(nc):
        if space > (1 << 62) // cards[i]:
            nw += 1
            space = 1
        space *= cards[i]
        word[i] = nw - 1
    packed = np.zeros((n, nw), dtype=np.int64)
    for i in range(nc):
        base = moff[i]
        x = cols[i]
        w = word[i]
        card = cards[i]
        for r in range(n):
            packed[r, w] = packed[r, w] * card + maps[base + keys[r, x]]
    if nw == 1 and space <= gr.tkeys.size:  # (direct addressing, :func:`_dense_groups`)
        return _dense_groups(packed, gr)
    return _hash_groups(packed, gr)


def _domain_sizes(keys, weights, off, out):
    """The records of each base domain code of every attribute, side by side (the search's
    single-attribute class sizes, 5.2): ``out[off[x] + keys[r, x]] += weights[r]`` over
    the base classes ``r``, attribute by attribute (the engines' keys are column-major)."""
    for x in range(keys.shape[1]):
        o = off[x]
        for r in range(keys.shape[0]):
            out[o + keys[r, x]] += weights[r]


def _count_keys(key, weights, space, need_ids):
    """The distinct values of ``key`` (in ``0..space-1``) ascending, the sum of ``weights``
    (positive) over each, and with ``need_ids`` each key's position among the distinct ones
    (else an empty array): a count per possible key, then one scan of the counts."""
    counts = np.zeros(space, dtype=np.int64)
    for r in range(key.size):
        counts[key[r]] += weights[r]
    g = 0
    for x in range(space):
        if counts[x] != 0:
            g += 1
    ukeys = np.empty(g, dtype=np.int64)
    sums = np.empty(g, dtype=np.int64)
    g = 0
    for x in range(space):
        c = counts[x]
        if c != 0:
            ukeys[g] = x
            sums[g] = c
            counts[x] = g  # (now the key's position)
            g += 1
    ids = np.empty(key.size if need_ids else 0, dtype=np.int64)
    for r in range(ids.size):
        ids[r] = counts[key[r]]
    return ukeys, sums, ids


def _merge_keys(key, weights, tkeys, tvals):
    """The distinct values of ``key`` (non-negative) in the order first met and the sum of
    ``weights`` over each: returns ``(ukeys, sums)``. The hash table (``tkeys``, ``tvals``:
    a power of two of at least ``2 * key.size`` slots, ``tkeys`` all -1, left so) holds the
    keys themselves and their positions among the distinct ones (open addressing, as
    :func:`_hash_groups` with one word per row)."""
    n = key.size
    mask, shift = _slots(n)
    fib = np.uint64(_FIB)
    ukeys = np.empty(n, dtype=np.int64)
    sums = np.zeros(n, dtype=np.int64)
    slot = np.empty(n, dtype=np.int64)
    g = 0
    for r in range(n):
        x = np.int64(key[r])
        s = np.int64((np.uint64(x) * fib) >> shift)
        while True:
            held = tkeys[s]
            if held == -1:
                tkeys[s] = x
                tvals[s] = g
                slot[g] = s
                ukeys[g] = x
                sums[g] = weights[r]
                g += 1
                break
            if held == x:
                sums[tvals[s]] += weights[r]
                break
            s = (s + 1) & mask
    for c in range(g):
        tkeys[slot[c]] = -1
    return ukeys[:g], sums[:g]


def compiled() -> SimpleNamespace:
    """The compiled kernels (once per process; numba caches the machine code on disk)."""
    if not _CACHE:
        g = globals()
        g["_slots"] = jit(_slots, entry=False, inline=True)
        for name in ("_hash_groups", "_dense_groups"):  # (called by the other kernels)
            g[name] = jit(g[name], entry=False)
        _CACHE.append(
            SimpleNamespace(
                split_classes=jit(_split_classes),
                group_classes=jit(_group_classes),
                domain_sizes=jit(_domain_sizes),
                merge_keys=jit(_merge_keys),
                count_keys=jit(_count_keys),
            )
        )
    return _CACHE[0]
