"""Exact grouping of rows by integer codes: the primitive under class statistics and roll-ups.

Two kinds of grouping share this module, the lowest layer both engines and algorithms import:

* unordered (:func:`group_rows`, :func:`hashed_groups`): dense group ids in no particular
  order, for lattice roll-ups that only need which rows go together;
* ordered (:func:`refine_steps`, :func:`lex_groups`): groups numbered in the lexicographic
  order of their codes, exactly as ``np.unique(np.column_stack(codes), axis=0)`` numbers
  them, for the engines, whose class numbering is part of their output.

Both pack several columns into one mixed-radix ``int64`` key while its space fits 62 bits,
so a table with many columns costs a few grouping passes, not one per column.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt

from anonlab._optional import import_optional

__all__ = [
    "factorize_keys",
    "group_rows",
    "hashed_groups",
    "lex_groups",
    "ordered_groups",
    "refine_steps",
    "sort_order",
    "unique_rows",
]

_KEY_SPACE = 1 << 62  # mixed-radix keys stay below this (non-negative int64)


def group_rows(
    codes: Sequence[npt.NDArray[np.integer]], cards: Sequence[int]
) -> tuple[npt.NDArray[np.int64], int]:
    """Dense group ids of the rows of several integer columns.

    Columns are combined into one mixed-radix key while its space fits 62 bits, and the key
    is made dense (a counting pass when the space is small, hashed grouping otherwise)
    whenever the next column would overflow it.

    Parameters
    ----------
    codes : sequence of ndarray
        One code array per column, all of the same length.
    cards : sequence of int
        The number of distinct codes per column (codes are in ``0..card-1``).

    Returns
    -------
    ids : ndarray of int64
        Group id per row, ``0..n_groups-1``, in no particular order.
    n_groups : int
    """
    n = len(codes[0]) if codes else 0
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    key = np.zeros(n, dtype=np.int64)
    space = 1
    for col, card in zip(codes, cards):
        card = int(card)
        if card <= 1:
            continue
        if space * card >= 2**62:
            key, space = _densify(key, space)
        key = key * card + np.asarray(col, dtype=np.int64)
        space *= card
    return _densify(key, space)


def _densify(key: npt.NDArray[np.int64], space: int) -> tuple[npt.NDArray[np.int64], int]:
    """Map keys in ``0..space-1`` to dense ids ``0..g-1`` (equal keys, equal ids)."""
    n = key.size
    if space <= max(4 * n, 1 << 16):
        present = np.zeros(space, dtype=bool)
        present[key] = True
        dense = np.cumsum(present, dtype=np.int64) - 1
        return dense[key], int(dense[-1] + 1)
    return factorize_keys(key.view(np.uint64))  # Arrow's hash table: exact, no order


_GOLDEN = np.int64(-7046029254386353131)  # 0x9E3779B97F4A7C15, Fibonacci hashing


def hashed_groups(
    key: npt.NDArray[np.int64],
    weights: npt.NDArray[np.int64] | None,
    *,
    need_ids: bool = False,
    bits: int | None = None,
) -> tuple[npt.NDArray[np.int64] | None, npt.NDArray[np.int64]]:
    """Group equal keys: (group of each element or None, summed weights per group); exact.

    Keys are hashed into ``M >= 2 n`` buckets and weights summed per bucket with one
    ``bincount``. A bucket is exact when all its keys are equal: after scattering the keys
    into their buckets (the last write wins), an element whose bucket holds another key
    marks its bucket as colliding. Only the elements of colliding buckets are sorted. This
    avoids sorting all keys, the cost of a lattice node's check. Groups come in no
    particular order.

    Parameters
    ----------
    key : ndarray of int64
        The keys to group.
    weights : ndarray of int64 or None
        Weight per element; None counts elements.
    need_ids : bool
        Whether to return the group of each element.
    bits : int, optional
        The log2 of the number of buckets (for tests).

    Returns
    -------
    ids : ndarray of int64 or None
        Group per element (when ``need_ids``).
    sizes : ndarray of int64
        Summed weights per group.
    """
    n = key.size
    if bits is None:
        bits = max(int(2 * n - 1).bit_length(), 10)
    m = 1 << bits
    bucket = ((key * _GOLDEN) >> np.int64(64 - bits)) & np.int64(m - 1)
    totals = np.bincount(bucket, weights=weights, minlength=m)
    seen = np.empty(m, dtype=np.int64)  # only written positions are read
    seen[bucket] = key
    collide = np.zeros(m, dtype=bool)
    collide[bucket[seen[bucket] != key]] = True
    clean = totals > 0
    clean &= ~collide
    sizes = totals[clean].astype(np.int64)
    ids: npt.NDArray[np.int64] | None = None
    if need_ids:
        dense = np.full(m, -1, dtype=np.int64)
        dense[clean] = np.arange(sizes.size, dtype=np.int64)
        ids = dense[bucket]
    if not collide.any():
        return ids, sizes
    rest = np.flatnonzero(collide[bucket])
    rk = key[rest]
    order = np.argsort(rk)  # equal keys need no order among them
    rk = rk[order]
    flags = np.r_[True, rk[1:] != rk[:-1]]
    starts = np.flatnonzero(flags)
    w_rest = np.ones(rest.size, dtype=np.int64) if weights is None else weights[rest][order]
    more = np.add.reduceat(w_rest, starts).astype(np.int64)
    if ids is not None:
        ids[rest[order]] = sizes.size + np.cumsum(flags) - 1
    return ids, np.concatenate([sizes, more])


# ---------------------------------------------------------------- ordered grouping
def sort_order(key: npt.NDArray[np.integer], space: int) -> npt.NDArray[np.intp]:
    """The positions that sort integer keys ascending, equal keys in their given order.

    A least-significant-digit radix sort: one pass of numpy's stable sort (a radix sort on
    16-bit integers) per 16 bits of ``space``. Each pass is linear (against ``np.argsort`` of
    64-bit keys: benchmarks/README.md, "Measurements behind choices in the
    code").

    Parameters
    ----------
    key : ndarray of int
        The keys, in ``0..space-1``.
    space : int
        An upper bound of the keys (exclusive), at most ``2**63``.

    Returns
    -------
    ndarray of intp
        ``key[order]`` is ascending; the sort is stable.
    """
    bits = max(int(space - 1).bit_length(), 1)
    order: npt.NDArray[np.intp] | None = None
    for shift in range(0, bits, 16):
        width = min(16, bits - shift)
        digit = ((key >> shift) & ((1 << width) - 1)).astype(np.uint8 if width <= 8 else np.uint16)
        if order is None:
            order = np.argsort(digit, kind="stable")
        else:
            order = order[np.argsort(digit[order], kind="stable")]
    assert order is not None
    return order


def ordered_groups(
    key: npt.ArrayLike, space: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Group integer keys in ascending key order: what ``np.unique(key, return_inverse=True,
    return_counts=True)`` gives, by one counting pass where the key space is small (no sort).

    Parameters
    ----------
    key : array_like of int
        The keys, in ``0..space-1``.
    space : int
        An upper bound of the keys (exclusive).

    Returns
    -------
    ids : ndarray of int64
        The group of each key, ``0..g-1``, in ascending key order.
    counts : ndarray of int64
        The keys in each group.
    distinct : ndarray of int64
        The key of each group, ascending.
    """
    k = np.asarray(key, dtype=np.int64).reshape(-1)
    if not k.size:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    ids, counts, distinct = _ordered_dense(k, int(space), max(4 * k.size, 1 << 16))
    assert distinct is not None
    return ids, counts, distinct


def _ordered_dense(
    key: npt.NDArray[np.int64], space: int, counting_limit: int, *, need_keys: bool = True
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64] | None]:
    """Dense ids of keys in ``0..space-1`` in ascending key order: (ids, counts, distinct keys).

    A counting pass (``np.bincount``) when ``space <= counting_limit``; else, when a sample
    of the keys suggests few distinct values, hashed grouping followed by a sort of the
    distinct keys only; a sort of all keys otherwise. The distinct keys may be skipped
    (None) when not ``need_keys``.
    """
    n = key.size
    if space <= counting_limit:
        counts = np.bincount(key, minlength=space)
        present = counts > 0
        sizes = counts[present].astype(np.int64)
        ukeys = np.flatnonzero(present).astype(np.int64) if need_keys else None
        dense = np.cumsum(present, out=counts)  # reuses the counts' memory (fresh pages are slow)
        dense -= 1
        return dense[key], sizes, ukeys
    if _few_distinct(key):
        return _ordered_hashed(key, space)
    order = sort_order(key, space)
    ks = key[order]
    flags = np.empty(n, dtype=bool)
    flags[0] = True
    np.not_equal(ks[1:], ks[:-1], out=flags[1:])
    starts = np.flatnonzero(flags)
    counts = np.diff(np.append(starts, n)).astype(np.int64)
    ids = np.empty(n, dtype=np.int64)
    ids[order] = np.cumsum(flags, dtype=np.int64) - 1
    return ids, counts, ks[starts]


_SAMPLE = 2048  # keys sampled to judge whether they take few distinct values


def _few_distinct(key: npt.NDArray[np.int64]) -> bool:
    """Whether the keys likely take fewer than ``n / 8`` distinct values (then hashing pays).

    The number of distinct keys is estimated from a sample by Chao's estimator
    ``d + f1 (f1 - 1) / (2 (f2 + 1))`` (``d`` distinct sampled values, ``f1`` seen once,
    ``f2`` seen twice). A wrong guess only costs time: both passes give the same answer. The
    sample is pseudo-random with a fixed seed.
    """
    n = key.size
    if n < 16 * _SAMPLE:
        return False
    pick = np.random.default_rng(0).integers(0, n, _SAMPLE)
    _, seen = np.unique(key[pick], return_counts=True)
    f1 = int(np.count_nonzero(seen == 1))
    f2 = int(np.count_nonzero(seen == 2))
    estimate = seen.size + f1 * (f1 - 1) / (2 * (f2 + 1))
    return 8 * estimate <= n


def _ordered_hashed(
    key: npt.NDArray[np.int64], space: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """:func:`_ordered_dense` by hashed grouping, then a sort of the distinct keys only."""
    hid, counts = hashed_groups(key, None, need_ids=True)
    assert hid is not None
    g = int(counts.size)
    distinct = np.empty(g, dtype=np.int64)
    distinct[hid] = key
    order = sort_order(distinct, space)
    rank = np.empty(g, dtype=np.int64)
    rank[order] = np.arange(g, dtype=np.int64)
    return rank[hid], counts[order], distinct[order]


def _ordered_pairs(
    parent: npt.NDArray[np.int64], code: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Dense ids of pairs (parent, code) in lexicographic order: (ids, counts, group parents).

    For a column whose codes do not fit one 62-bit key beside the parent (huge spaces only).
    """
    n = parent.size
    order = np.lexsort((code, parent))
    ps, cs = parent[order], code[order]
    flags = np.empty(n, dtype=bool)
    flags[0] = True
    flags[1:] = (ps[1:] != ps[:-1]) | (cs[1:] != cs[:-1])
    starts = np.flatnonzero(flags)
    counts = np.diff(np.append(starts, n)).astype(np.int64)
    ids = np.empty(n, dtype=np.int64)
    ids[order] = np.cumsum(flags, dtype=np.int64) - 1
    return ids, counts, ps[starts]


def refine_steps(
    ids: npt.NDArray[np.integer],
    sizes: npt.NDArray[np.int64],
    codes: Sequence[npt.NDArray[np.integer]],
    cards: Sequence[int],
    *,
    counting_limit: int | None = None,
) -> Iterator[tuple[int, npt.NDArray[np.integer], npt.NDArray[np.int64]]]:
    """Refine a partition of rows by more columns, keeping classes in lexicographic order.

    The input classes ``0..g-1`` are assumed numbered in the order of some key (a prefix of
    columns); the output classes are numbered in the order of (input class, ``codes[0]``,
    ``codes[1]``, ...), so refining the single class of all rows numbers the classes as
    ``np.unique(np.column_stack(codes), axis=0)`` does.

    Columns are packed into mixed-radix ``int64`` keys (class, codes...); each chunk of
    columns costs one grouping pass: a counting pass while the key space stays within
    ``counting_limit``, else one sort (or hashed grouping, when the keys look few) of keys
    packed while their space stays below ``2**62``. The sort is taken also when it would
    pack at least three times as many columns as the counting pass (many classes leave
    room for few columns under the limit). Rows in classes of one row cannot split
    further: when they are many, they are left out of a sort and the classes renumbered
    around them.

    Parameters
    ----------
    ids : ndarray of int
        Class of each row, ``0..g-1`` (its dtype is kept).
    sizes : ndarray of int64
        Size of each class (``g`` entries).
    codes : sequence of ndarray
        The columns to refine by, one code array per column (codes in ``0..card-1``).
    cards : sequence of int
        Number of codes per column.
    counting_limit : int, optional
        Largest key space grouped by a counting pass instead of a sort; default
        ``max(4 * rows, 2**16)`` (for tests).

    Yields
    ------
    done : int
        How many of ``codes`` the partition now includes (the last step yields
        ``len(codes)``).
    ids : ndarray
        Class of each row, same dtype as the input ``ids``.
    sizes : ndarray of int64
        Size of each class.
    """
    m = len(codes)
    n = int(ids.size)
    dtype = ids.dtype
    limit = max(4 * n, 1 << 16) if counting_limit is None else counting_limit
    j = 0
    while j < m:
        g = int(sizes.size)
        while j < m and int(cards[j]) <= 1:  # a constant column splits nothing
            j += 1
        if n == 0 or g == n or j == m:  # done, or every class has one row: nothing can split
            yield m, ids, sizes
            return
        # the chunk: columns j..k-1, all counted (key space within the limit) or all sorted
        # (key space below 2**62). A counting pass costs about a third of a sort per row, but
        # once the classes are many it takes few columns: when one sort would take at least
        # three times as many, the columns are sorted. Before a sort, rows alone in their
        # class are left out when they are many.
        counting = g * int(cards[j]) <= limit
        if counting:
            n_count = len(_chunk(cards, j, g, limit)[1])
            counting = len(_chunk(cards, j, g, _KEY_SPACE - 1)[1]) < 3 * n_count
        restrict = False
        n_active = g
        if not counting:
            n_single = int(np.count_nonzero(sizes == 1))
            restrict = 8 * n_single >= n
            n_active = g - n_single if restrict else g
        k, taken = _chunk(cards, j, n_active, limit if counting else _KEY_SPACE - 1)
        chunk = [(codes[i], int(cards[i])) for i in taken]
        space = math.prod(int(cards[i]) for i in taken)
        if restrict:
            active = sizes > 1
            rows: npt.NDArray[np.intp] | None = np.flatnonzero(active[ids])
            local = np.cumsum(active, dtype=np.int64)
            local -= 1
            parent = local[ids[rows]]
        else:
            rows = None
            parent = ids.astype(np.int64)
        if n_active * space < _KEY_SPACE:
            key = parent  # a fresh array: updated in place
            for col, card in chunk:
                key *= card
                key += col if rows is None else col[rows]
            dense, counts, ukeys = _ordered_dense(key, n_active * space, limit, need_keys=restrict)
            group_parent = None if ukeys is None else ukeys // space
        else:  # one column beside the classes overflows a key (tables of > 2**31 rows)
            col, _card = chunk[0]
            code = np.asarray(col if rows is None else col[rows], dtype=np.int64)
            dense, counts, group_parent = _ordered_pairs(parent, code)
        n_groups = int(counts.size)
        if n_groups > n_active:  # some class split
            if not restrict:
                ids, sizes = dense.astype(dtype, copy=False), counts
            else:
                assert rows is not None and group_parent is not None
                ids, sizes = _renumber(ids, sizes, rows, dense, counts, group_parent, dtype)
        yield k, ids, sizes
        j = k


def _chunk(cards: Sequence[int], j: int, n_active: int, bound: int) -> tuple[int, list[int]]:
    """The columns from ``j`` packed beside ``n_active`` classes while the key space stays
    within ``bound`` (at least one): (the next column, the packed columns, constant ones
    skipped)."""
    space, k = n_active, j
    taken: list[int] = []
    while k < len(cards):
        card = int(cards[k])
        if card > 1:
            if taken and space * card > bound:
                break
            taken.append(k)
            space *= card
        k += 1
    return k, taken


def _renumber(
    ids: npt.NDArray[np.integer],
    sizes: npt.NDArray[np.int64],
    rows: npt.NDArray[np.intp],
    dense: npt.NDArray[np.int64],
    counts: npt.NDArray[np.int64],
    group_parent: npt.NDArray[np.int64],
    dtype: np.dtype[np.integer],
) -> tuple[npt.NDArray[np.integer], npt.NDArray[np.int64]]:
    """Number the classes after the classes of several rows (``rows``) split into groups.

    Class ``c`` becomes the classes ``offset[c] ..`` (one per group it split into, in group
    order), so the lexicographic order of the classes is kept.
    """
    active_cls = np.flatnonzero(sizes > 1)
    per_parent = np.bincount(group_parent, minlength=active_cls.size)
    n_sub = np.ones(sizes.size, dtype=np.int64)
    n_sub[active_cls] = per_parent
    offset = np.cumsum(n_sub)
    total = int(offset[-1])
    offset -= n_sub
    first_group = np.cumsum(per_parent)
    first_group -= per_parent
    shift = offset[active_cls] - first_group
    group_class = np.arange(counts.size, dtype=np.int64)
    group_class += shift[group_parent]
    new_ids = offset[ids].astype(dtype, copy=False)
    new_ids[rows] = group_class[dense]
    new_sizes = np.empty(total, dtype=np.int64)
    new_sizes[offset] = sizes
    new_sizes[group_class] = counts
    return new_ids, new_sizes


def class_members(ids: npt.NDArray[np.integer], n_classes: int) -> npt.NDArray[np.int64]:
    """A row of each class: ``out[c]`` is some ``r`` with ``ids[r] == c`` (one scatter, no
    sort; which row is unspecified). Its rows share their codes, so any gives the class's key.

    Parameters
    ----------
    ids : ndarray of int
        The class of each row, ``0..n_classes-1``, every class present.
    n_classes : int
        The number of classes.

    Returns
    -------
    ndarray of int64
        A row index per class.
    """
    out = np.empty(n_classes, dtype=np.int64)
    out[ids] = np.arange(ids.size, dtype=np.int64)
    return out


def lex_groups(
    codes: Sequence[npt.NDArray[np.integer]],
    cards: Sequence[int],
    *,
    counting_limit: int | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Group rows by several integer columns, groups in lexicographic order of their codes.

    Equal to ``np.unique(np.column_stack(codes), axis=0, return_inverse=True,
    return_counts=True)`` (inverse and counts), without sorting row tuples.

    Parameters
    ----------
    codes : sequence of ndarray
        One code array per column, all of the same length (codes in ``0..card-1``).
    cards : sequence of int
        Number of codes per column.
    counting_limit : int, optional
        See :func:`refine_steps` (for tests).

    Returns
    -------
    ids : ndarray of int64
        Group of each row, ``0..n_groups-1``.
    sizes : ndarray of int64
        Rows per group.
    """
    n = len(codes[0]) if codes else 0
    ids: npt.NDArray[np.integer] = np.zeros(n, dtype=np.int64)
    sizes = np.array([n] if n else [], dtype=np.int64)
    for step in refine_steps(ids, sizes, codes, cards, counting_limit=counting_limit):
        _, ids, sizes = step
    return ids.astype(np.int64, copy=False), sizes


def unique_rows(
    table: npt.NDArray[np.integer],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The distinct rows of a non-negative integer matrix, in lexicographic order.

    Equal to ``np.unique(table, axis=0, return_inverse=True, return_counts=True)`` (the
    inverse flat), by :func:`lex_groups` on its columns instead of sorting row tuples.

    Parameters
    ----------
    table : ndarray of int, shape (rows, columns)
        Codes in ``0..`` (no negative value).

    Returns
    -------
    rows : ndarray of int64, shape (distinct, columns)
        The distinct rows, sorted.
    inverse : ndarray of int64
        Each row's position among them.
    counts : ndarray of int64
        How many rows each distinct row stands for.

    Examples
    --------
    >>> import numpy as np
    >>> rows, inverse, counts = unique_rows(np.array([[1, 0], [0, 2], [1, 0]]))
    >>> rows.tolist(), inverse.tolist(), counts.tolist()
    ([[0, 2], [1, 0]], [1, 0, 1], [1, 2])
    """
    a = np.asarray(table)
    n, m = a.shape
    if n == 0 or m == 0:
        return (
            a[:1].astype(np.int64),
            np.zeros(n, dtype=np.int64),
            np.array([n] if n else [], dtype=np.int64),
        )
    columns = [np.ascontiguousarray(a[:, j]) for j in range(m)]
    inverse, counts = lex_groups(columns, [int(c.max()) + 1 for c in columns])
    first = np.empty(counts.size, dtype=np.int64)
    first[inverse[::-1]] = np.arange(n - 1, -1, -1, dtype=np.int64)
    return a[first].astype(np.int64), inverse, counts


def factorize_keys(key: npt.NDArray[np.uint64]) -> tuple[npt.NDArray[np.int64], int]:
    """Dense ids of equal 64-bit keys (exact), numbered in order of first appearance.

    One pass through Arrow's hash table (``pyarrow.compute.dictionary_encode``, imported on
    first use; against numpy hash rounds or a sort: benchmarks/README.md, "Measurements
    behind choices in the code").

    Parameters
    ----------
    key : ndarray of uint64

    Returns
    -------
    ids : ndarray of int64
        ``0..n_groups-1``; equal keys share an id, different keys never do.
    n_groups : int
    """
    if not key.size:
        return np.zeros(0, dtype=np.int64), 0
    pa = import_optional("pyarrow")
    pc = import_optional("pyarrow.compute")
    encoded = pc.dictionary_encode(pa.array(np.ascontiguousarray(key, dtype=np.uint64)))
    ids = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    return ids, len(encoded.dictionary)
