"""Rolling the classes of a lattice node up to a more general node.

Hierarchy levels nest, so the classes of a node are unions of the classes of any node below
it: a node is evaluated by mapping the codes of a known node's classes through the
hierarchies and merging the classes whose codes coincide, their sizes (and sensitive
histograms) summed. The known node is the original table (the base classes) or, as in ARX's
snapshots (Kohlmayer, Prasser, Eckert, Kemper & Kuhn, *Flash: efficient, stable and optimal
k-anonymity*, 2012, section 5), an evaluated node below it with fewer classes.

Each node's classes are keyed by one integer: consecutive attributes form groups of at most
:data:`GROUP_CODES` codes, a group's code (the mixed radix of its attributes' codes, the first
most significant) takes a bit field of the key, the first group the highest. Rolling up is one
gather per group of the known node from a table (the group's code there to its part of the
new key, the hierarchies' maps folded in), the parts summed, and one :func:`merge_keys`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from anonlab.algorithms._lattice._kernels import compiled
from anonlab.data.grouping import group_rows
from anonlab.data.stats import SensitiveHistogram

__all__ = ["GROUP_CODES", "Classes", "Layout", "RollUp", "Snapshots", "layout_of", "merge_keys"]

Node = tuple[int, ...]
Codes = npt.NDArray[np.signedinteger[Any]]

_NONE = np.iinfo(np.int64).max

#: At most this many codes per group of attributes (the length of a group's tables), unless
#: one attribute has more.
GROUP_CODES = 1 << 12


def merge_keys(
    key: npt.NDArray[np.int64],
    space: int,
    weights: npt.NDArray[np.int64],
    *,
    need_ids: bool,
    table: Callable[[], npt.NDArray[np.int64]] | None = None,
) -> tuple[npt.NDArray[np.int64] | None, npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Sum the weights of equal keys: the distinct keys in ascending order and their sums.

    A compiled count per possible key when the key space is small; otherwise, given a hash
    ``table`` and no ids, one compiled pass over it (the distinct keys then come in the order
    first met, not ascending), else one sort of the keys packed with their weights: in 32
    bits (twice as fast to sort) when the keys leave at least 4 bits for the weights, the
    larger weights capped there and their rest added to their keys' sums after the sort,
    else in 64 bits. With ids, the keys are packed with their positions instead
    (``np.unique`` when even that does not fit 62 bits).

    Parameters
    ----------
    key : ndarray of int64
        The keys, in ``0..space-1``.
    space : int
        The number of possible keys (below ``2**62``).
    weights : ndarray of int64
        The weight of each key (positive).
    need_ids : bool
        Whether to return, for each key, the index of its distinct key.
    table : callable, optional
        Returns a scratch hash table of shape ``(2, s)``, ``s`` a power of two, at least 16
        and ``2 * key.size``, its first row all ``-1`` (left so): the slots of the compiled
        merge's table (:func:`~anonlab.algorithms._lattice._kernels._merge_keys`: the keys,
        and their positions among the distinct ones). Called only when the keys are hashed.

    Returns
    -------
    ids : ndarray of int64 or None
    sums : ndarray of int64
        The summed weights of each distinct key.
    ukeys : ndarray of int64
        The distinct keys, ascending (with a ``table`` and a key space larger than
        ``4 * key.size``: in the order first met).

    Examples
    --------
    >>> import numpy as np
    >>> key = np.array([7, 3, 7, 1000], dtype=np.int64)
    >>> _, sums, ukeys = merge_keys(key, 1 << 20, np.array([1, 2, 3, 4]), need_ids=False)
    >>> ukeys.tolist(), sums.tolist()
    ([3, 7, 1000], [2, 4, 4])
    >>> table = np.full((2, 16), -1, dtype=np.int64)  # (at least two slots per key)
    >>> _, sums, ukeys = merge_keys(key, 1 << 20, np.array([1, 2, 3, 4]), need_ids=False,
    ...                             table=lambda: table)
    >>> ukeys.tolist(), sums.tolist(), bool((table[0] == -1).all())
    ([7, 3, 1000], [4, 2, 4], True)
    """
    n = int(key.size)
    ids: npt.NDArray[np.int64] | None = None
    if n == 0 or space == 1:  # (one key: a count into one bin is a chain of additions)
        one = np.zeros(min(n, 1), dtype=np.int64)
        ids = np.zeros(n, dtype=np.int64) if need_ids else None
        return ids, np.full(one.size, int(weights.sum()), dtype=np.int64), one
    if space <= 4 * n or (need_ids and space <= 1 << 16):
        ukeys, sums, dense_ids = compiled().count_keys(key, weights, space, need_ids)
        return (dense_ids if need_ids else None), sums, ukeys
    if table is not None and not need_ids:
        slots = table()
        ukeys, sums = compiled().merge_keys(key, weights, slots[0], slots[1])
        return None, sums, ukeys
    key_bits = (space - 1).bit_length()
    bits = max(int(weights.max()).bit_length(), 1)
    if not need_ids and (key_bits <= 27 or key_bits + bits <= 62):
        narrow = key_bits <= 27
        w = weights
        if narrow and key_bits + bits > 31:
            bits = 31 - key_bits
            w = np.minimum(weights, (1 << bits) - 1)
        packed = (key << bits) | w  # (in 32 bits already when the keys and weights are)
        packed = packed.astype(np.int32 if narrow else np.int64, copy=False)
        packed.sort()  # equal keys need no order among them
        keys = packed >> bits
        last = np.empty(n, dtype=bool)  # the last of each run of equal keys
        np.not_equal(keys[1:], keys[:-1], out=last[:-1])
        last[-1] = True
        ends = np.flatnonzero(last)
        sums = np.cumsum(packed & ((1 << bits) - 1), dtype=np.int64)[ends]
        sums[1:] -= sums[:-1].copy()
        ukeys = keys[ends].astype(np.int64)
        if w is not weights:
            heavy = np.flatnonzero(weights != w)
            rest = weights[heavy] - w[heavy]
            np.add.at(sums, np.searchsorted(ukeys, key[heavy]), rest)
        return None, sums, ukeys
    at = max((n - 1).bit_length(), 1)
    key = key.astype(np.int64, copy=False)
    if space < 2 ** (62 - at):
        # np.unique's inverse by one sort of the keys packed with their positions
        packed = (key << at) | np.arange(n, dtype=np.int64)
        if space < 2 ** (31 - at):
            packed = packed.astype(np.int32)
        packed.sort()
        keys = packed >> at
        new = np.r_[True, keys[1:] != keys[:-1]]
        ukeys = keys[new].astype(np.int64)
        ids = np.empty(n, dtype=np.int64)
        ids[packed & ((1 << at) - 1)] = np.cumsum(new) - 1
    else:
        ukeys, inv = np.unique(key, return_inverse=True)
        ids = inv.astype(np.int64).reshape(-1)
    sums = np.bincount(ids, weights=weights, minlength=ukeys.size).astype(np.int64)
    return (ids if need_ids else None), sums, ukeys


class Layout(NamedTuple):
    """The key of a node's classes.

    Attributes
    ----------
    cards : tuple of int
        The number of codes of each attribute at the node's levels (1: projected out).
    groups : tuple of (int, int)
        The attributes ``start..end-1`` of each group.
    shifts, widths : tuple of int
        Each group's bit field in the key.
    bits : int
        The key's width: keys are below ``2**bits``.
    """

    cards: tuple[int, ...]
    groups: tuple[tuple[int, int], ...]
    shifts: tuple[int, ...]
    widths: tuple[int, ...]
    bits: int


def layout_of(cards: tuple[int, ...], runs: Sequence[tuple[int, int]]) -> Layout:
    """The layout of a node whose attributes have ``cards`` codes, its groups made of
    consecutive ``runs`` of attributes (each a group of a node below, or one attribute)
    while their codes multiply to at most :data:`GROUP_CODES`."""
    groups: list[tuple[int, int]] = []
    spaces: list[int] = []
    for a, b in runs:
        space = math.prod(cards[a:b])
        if groups and spaces[-1] * space <= GROUP_CODES:
            groups[-1] = (groups[-1][0], b)
            spaces[-1] *= space
        else:
            groups.append((a, b))
            spaces.append(space)
    widths = [(s - 1).bit_length() for s in spaces]
    shifts = [0] * len(groups)
    for g in range(len(groups) - 2, -1, -1):
        shifts[g] = shifts[g + 1] + widths[g + 1]
    bits = shifts[0] + widths[0] if groups else 0
    return Layout(cards, tuple(groups), tuple(shifts), tuple(widths), bits)


@dataclass
class Classes:
    """The classes of a node: their sizes and each class's code per group of its layout,
    given (``codes``) or read from each class's key (``ukeys``).

    Attributes
    ----------
    levels : tuple of int
        The node (-1: an attribute projected out).
    sizes : ndarray of int64
    layout : Layout
    ukeys : ndarray of int64 or None
        Each class's key (ascending, or in the order met when merged by hashing).
    codes : list of ndarray or None
        Per group, each class's code.
    hists : dict or None
        The sensitive histograms of the classes, if computed.
    """

    levels: Node
    sizes: npt.NDArray[np.int64]
    layout: Layout
    ukeys: npt.NDArray[np.int64] | None = None
    codes: list[Codes] | None = None
    hists: dict[str, SensitiveHistogram] | None = None

    def code(self, g: int, dtype: type[np.signedinteger[Any]] | None = None) -> Codes:
        """Each class's code of group ``g`` (with a ``dtype``, a new array of it)."""
        if self.codes is not None:
            return self.codes[g] if dtype is None else self.codes[g].astype(dtype)
        assert self.ukeys is not None
        code = (self.ukeys >> self.layout.shifts[g]) & ((1 << self.layout.widths[g]) - 1)
        return code if dtype is None else code.astype(dtype, copy=False)

    def compact(self, records: int) -> Classes:
        """These classes with their sizes and keys in 32 bits where they fit (a snapshot
        holds half the memory); no class holds more than ``records``."""
        sizes, ukeys = self.sizes, self.ukeys
        if records < 2**31:
            sizes = sizes.astype(np.int32)
        if ukeys is not None and self.layout.bits <= 31:
            ukeys = ukeys.astype(np.int32)
        return Classes(self.levels, sizes, self.layout, ukeys, self.codes, self.hists)

    def widened(self) -> Classes:
        """These classes with their sizes in 64 bits (as :meth:`compact` found them)."""
        if self.sizes.dtype == np.int64:
            return self
        sizes = self.sizes.astype(np.int64)
        return Classes(self.levels, sizes, self.layout, self.ukeys, self.codes, self.hists)

    @property
    def nbytes(self) -> int:
        """The memory held by the arrays."""
        held = [self.sizes, self.ukeys, *(self.codes or [])]
        return sum(int(a.nbytes) for a in held if a is not None)


class Snapshots:
    """The classes of evaluated nodes, to roll up from: the nearest one below a node is the
    one with the fewest classes among those at or below it in every attribute. The least
    recently used one goes first when the count or the memory is exhausted.

    Each snapshot's levels are packed in words of bit fields, a guard bit above each field,
    so that one subtraction per word compares all the levels in it: a node's fields with
    their guard bits set, minus the snapshot's, keep every guard bit exactly when no level
    of the snapshot is above the node's.

    Parameters
    ----------
    heights : sequence of int
        The highest level of each attribute.
    count : int
        The most snapshots kept.
    nbytes : int
        The most memory they hold.
    """

    def __init__(self, heights: Sequence[int], count: int, nbytes: int) -> None:
        self._fields: list[tuple[int, int]] = []  # per attribute: word, offset
        guards = [0]
        at = 0
        for h in heights:
            width = int(h).bit_length() + 1
            if at + width > 62:
                guards.append(0)
                at = 0
            self._fields.append((len(guards) - 1, at))
            guards[-1] |= 1 << (at + width - 1)
            at += width
        self._guards = guards
        self.packed = np.zeros((len(guards), count), dtype=np.int64)
        self.n_classes = np.zeros(count, dtype=np.int64)
        self.has_hists = np.zeros(count, dtype=bool)
        self.used = np.zeros(count, dtype=np.int64)
        self.items: list[Classes | None] = [None] * count
        self.index: dict[Node, int] = {}
        self.nbytes = 0
        self.max_bytes = nbytes
        self.tick = 0
        self._packed_node: tuple[Node, list[int]] = ((), [])

    def _pack(self, node: Node) -> list[int]:
        if self._packed_node[0] == node:  # keep() after nearest() of the same node
            return self._packed_node[1]
        words = [0] * len(self._guards)
        for (w, at), lv in zip(self._fields, node):
            words[w] |= lv << at
        self._packed_node = (node, words)
        return words

    def nearest(self, node: Node, with_hists: bool) -> Classes | None:
        """The snapshot at or below ``node`` with the fewest classes (with histograms if
        asked), or None."""
        n = len(self.index)
        if not n:
            return None
        below: npt.NDArray[np.bool_] | None = None
        for word, guard, kept in zip(self._pack(node), self._guards, self.packed):
            ok = ((word | guard) - kept[:n]) & guard == guard
            below = ok if below is None else below & ok
        assert below is not None
        if with_hists:
            below &= self.has_hists[:n]
        i = int(np.argmin(np.where(below, self.n_classes[:n], _NONE)))
        if not below[i]:
            return None
        self.tick += 1
        self.used[i] = self.tick
        return self.items[i]

    def get(self, node: Node) -> Classes | None:
        """The snapshot of ``node``, if kept."""
        i = self.index.get(node)
        return None if i is None else self.items[i]

    def keep(self, snap: Classes) -> None:
        """Keep a snapshot (the least recently used ones make room)."""
        i = self.index.get(snap.levels)
        size = snap.nbytes
        if i is not None:  # kept already: replaced if the new one has histograms
            old = self.items[i]
            assert old is not None
            if old.hists is None and snap.hists is not None:
                self.nbytes += size - old.nbytes
                self.items[i] = snap
                self.has_hists[i] = True
            return
        n = len(self.index)
        while n and (n == len(self.items) or self.nbytes + size > self.max_bytes):
            self._drop(int(np.argmin(self.used[:n])))
            n -= 1
        if n == len(self.items) or self.nbytes + size > self.max_bytes:
            return
        self.tick += 1
        self.items[n] = snap
        self.packed[:, n] = self._pack(snap.levels)
        self.n_classes[n] = snap.sizes.size
        self.has_hists[n] = snap.hists is not None
        self.used[n] = self.tick
        self.index[snap.levels] = n
        self.nbytes += size

    def _drop(self, i: int) -> None:
        """Remove snapshot ``i`` (the last one takes its slot)."""
        last = len(self.index) - 1
        old = self.items[i]
        assert old is not None
        self.nbytes -= old.nbytes
        del self.index[old.levels]
        if i != last:
            moved = self.items[last]
            assert moved is not None
            self.items[i] = moved
            self.packed[:, i] = self.packed[:, last]
            self.n_classes[i] = self.n_classes[last]
            self.has_hists[i] = self.has_hists[last]
            self.used[i] = self.used[last]
            self.index[moved.levels] = i
        self.items[last] = None


class RollUp:
    """Roll classes up through the hierarchies: the base classes, tables and decoders.

    Parameters
    ----------
    maps : list of list of ndarray
        Per attribute and level, the code at that level of each code of the base domain.
    cards : list of list of int
        Per attribute and level, the number of codes at that level.
    base_codes : list of ndarray
        Per attribute, each base class's code at level 0.
    base_sizes : ndarray of int64
        The size of each base class.
    """

    def __init__(
        self,
        maps: list[list[npt.NDArray[np.int64]]],
        cards: list[list[int]],
        base_codes: list[npt.NDArray[np.int64]],
        base_sizes: npt.NDArray[np.int64],
    ) -> None:
        self.maps = maps
        self.cards = cards
        self._base_codes = base_codes
        self._base_sizes = base_sizes
        self._base: Classes | None = None
        self._level_maps: dict[tuple[int, int, int], npt.NDArray[np.int64]] = {}
        self._tables: dict[tuple[int, Node, Node, type], npt.NDArray[np.signedinteger[Any]]] = {}
        self._decoders: dict[tuple[Node, int, int], npt.NDArray[np.int64]] = {}
        self._base_parts: dict[tuple[int, Node, type], npt.NDArray[np.signedinteger[Any]]] = {}
        self._table_bytes = 0
        self._hash_table: npt.NDArray[np.int64] | None = None  # (made when first hashed)
        #: Memory the cached tables (and codes of the base classes) may use.
        self.table_cache_bytes = 128 * 2**20

    def base(self) -> Classes:
        """The base classes (every attribute at level 0), their codes given per group."""
        if self._base is None:
            levels = (0,) * len(self.cards)
            cards = [c[0] for c in self.cards]
            layout = layout_of(tuple(cards), [(j, j + 1) for j in range(len(cards))])
            codes: list[Codes] = []
            for a, b in layout.groups:
                code = np.zeros(self._base_sizes.size, dtype=np.int64)
                for j in range(a, b):
                    code *= cards[j]
                    code += self._base_codes[j]
                space = math.prod(cards[a:b])
                codes.append(code.astype(np.int32) if space < 2**31 else code)
            sizes = self._base_sizes
            if int(sizes.sum()) < 2**31:  # weights of 32 bits: keys packed with them in 32
                sizes = sizes.astype(np.int32)
            self._base = Classes(levels, sizes, layout, codes=codes)
        return self._base

    def roll(
        self, src: Classes, target: Node, *, need_ids: bool
    ) -> tuple[Classes, npt.NDArray[np.int64] | None]:
        """The classes at ``target`` (a level per attribute, -1: projected out), each a
        union of classes of ``src`` (a node at or below it), and with ``need_ids`` the
        class of each of ``src``'s.

        The groups of ``src`` map through their tables to their codes at ``target`` (a
        group whose levels do not change keeps its codes); the node's groups are runs of
        them, each run's code the mixed radix of its groups', and the key is computed in 32
        bits when it has 27 or fewer (:func:`merge_keys` then sorts it with the sizes in
        32 bits)."""
        cards = tuple([self.cards[j][lv] if lv >= 0 else 1 for j, lv in enumerate(target)])
        out = layout_of(cards, src.layout.groups)
        if out.bits >= 62:
            return self._roll_wide(src, target, out, need_ids=need_ids)
        dtype = np.int32 if out.bits <= 27 else np.int64
        key: npt.NDArray[np.signedinteger[Any]] | None = None
        g = 0
        for (_, b), shift in zip(out.groups, out.shifts):
            code: npt.NDArray[np.signedinteger[Any]] | None = None
            while g < len(src.layout.groups) and src.layout.groups[g][1] <= b:
                c, d = src.layout.groups[g]
                space = math.prod(cards[c:d])
                if space > 1:  # else all its attributes at one label: it adds nothing
                    part = self._part(src, g, target[c:d], dtype)
                    code = part if code is None else code * space + part
                g += 1
            if code is None:
                continue
            if shift:
                code = code << shift
            key = code if key is None else key + code  # out of place: base parts are kept
        if key is None:
            key = np.zeros(src.sizes.size, dtype=dtype)
        ids, sizes, ukeys = merge_keys(
            key, 1 << out.bits, src.sizes, need_ids=need_ids, table=self._merge_table
        )
        return Classes(target, sizes, out, ukeys=ukeys), ids

    def _merge_table(self) -> npt.NDArray[np.int64]:
        """The scratch hash table :meth:`roll` merges classes in (:func:`merge_keys`), made
        when classes are first merged by hashing, for as many classes as the base ones (no
        node has more)."""
        if self._hash_table is None:
            slots = 1 << max(4, (2 * int(self._base_sizes.size) - 1).bit_length())
            self._hash_table = np.full((2, slots), -1, dtype=np.int64)
        return self._hash_table

    def _part(
        self, src: Classes, g: int, high: Node, dtype: type[np.signedinteger[Any]]
    ) -> npt.NDArray[np.signedinteger[Any]]:
        """The codes at levels ``high`` of group ``g`` of ``src``'s classes (of ``dtype``);
        those of the base classes are kept while :attr:`table_cache_bytes` allows (many
        nodes with no snapshot below are rolled up from them)."""
        a, b = src.layout.groups[g]
        low = src.levels[a:b]
        hit = self._base_parts.get((g, high, dtype)) if src is self._base else None
        if hit is None:
            if low == high:  # its codes are the node's
                hit = src.code(g, dtype)
            else:
                hit = np.take(self._table(a, b, low, high, dtype), src.code(g))
            if src is self._base and self._table_bytes + hit.nbytes <= self.table_cache_bytes:
                self._base_parts[(g, high, dtype)] = hit
                self._table_bytes += hit.nbytes
        return hit

    def _roll_wide(
        self, src: Classes, target: Node, out: Layout, *, need_ids: bool
    ) -> tuple[Classes, npt.NDArray[np.int64] | None]:
        """:meth:`roll` when the key would not fit 62 bits: grouped by the attributes'
        codes (:func:`~anonlab.data.grouping.group_rows`), the groups' codes given."""
        codes = []
        for j, lv in enumerate(target):
            low = self.attribute_codes(src, j)
            codes.append(np.take(self._level_map(j, src.levels[j], lv), low))
        ids, g = group_rows(codes, out.cards)
        sizes = np.bincount(ids, weights=src.sizes, minlength=g).astype(np.int64)
        first = np.empty(g, dtype=np.int64)
        first[ids[::-1]] = np.arange(ids.size - 1, -1, -1, dtype=np.int64)  # one member each
        merged = []
        for a, b in out.groups:
            code = np.zeros(g, dtype=np.int64)
            for j in range(a, b):
                code *= out.cards[j]
                code += codes[j][first]
            merged.append(code)
        return Classes(target, sizes, out, codes=merged), (ids if need_ids else None)

    def attribute_codes(self, classes: Classes, j: int) -> npt.NDArray[np.int64]:
        """Each class's code of attribute ``j`` at its level."""
        g = next(i for i, (a, b) in enumerate(classes.layout.groups) if a <= j < b)
        a, b = classes.layout.groups[g]
        if b - a == 1:
            return classes.code(g, np.int64)
        decode = self._decoder(classes.layout.cards[a:b], a, j)
        return np.take(decode, classes.code(g))

    def _level_map(self, j: int, low: int, high: int) -> npt.NDArray[np.int64]:
        """The code at level ``high`` of each code at level ``low`` of attribute ``j``
        (all 0 when ``high`` is -1: the attribute is projected out)."""
        hit = self._level_maps.get((j, low, high))
        if hit is None:
            hit = np.zeros(self.cards[j][low], dtype=np.int64)
            if high >= 0:
                hit[self.maps[j][low]] = self.maps[j][high]
            self._level_maps[(j, low, high)] = hit
        return hit

    def _table(
        self, a: int, b: int, low: Node, high: Node, dtype: type[np.signedinteger[Any]]
    ) -> npt.NDArray[np.signedinteger[Any]]:
        """The table of the attributes ``a..b-1`` (a group at levels ``low``) to levels
        ``high``: for each group code, the mixed radix of its attributes' codes there (of
        ``dtype``). Cached while the cache stays under :attr:`table_cache_bytes`."""
        hit = self._tables.get((a, low, high, dtype))
        if hit is None:
            # the mixed radix one attribute at a time, a run of unchanged ones at once
            steps: list[tuple[int, npt.NDArray[np.int64] | None]] = []
            for j, lo, hi in zip(range(a, b), low, high):
                if lo == hi and steps and steps[-1][1] is None:
                    steps[-1] = (steps[-1][0] * self.cards[j][lo], None)
                elif lo == hi:
                    steps.append((self.cards[j][lo], None))
                else:
                    steps.append((self.cards[j][hi] if hi >= 0 else 1, self._level_map(j, lo, hi)))
            hit = np.zeros(1, dtype=np.int64)
            for card, codes in steps:
                part = np.arange(card, dtype=np.int64) if codes is None else codes
                hit = (hit[:, None] * card + part[None, :]).reshape(-1)
            hit = hit.astype(dtype, copy=False)
            if self._table_bytes + hit.nbytes <= self.table_cache_bytes:
                self._tables[(a, low, high, dtype)] = hit
                self._table_bytes += hit.nbytes
        return hit

    def _decoder(self, cards: Node, a: int, j: int) -> npt.NDArray[np.int64]:
        """The code of attribute ``j`` of each code of its group (attributes ``a..`` with
        ``cards`` codes)."""
        hit = self._decoders.get((cards, a, j))
        if hit is None:
            rest = np.arange(math.prod(cards), dtype=np.int64)
            for i in range(len(cards) - 1, -1, -1):
                rest, self._decoders[(cards, a, a + i)] = np.divmod(rest, cards[i])
            hit = self._decoders[(cards, a, j)]
        return hit
