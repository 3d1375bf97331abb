"""The compiled kernels of the anonymity graph (numba's nopython mode): plain loops.

:func:`_join_tries` finds the edges of
:meth:`~anonlab.release.anonymity_graph.AnonymityGraph.build`, :func:`_cover_pairs` whether
released records cover original ones
(:meth:`~anonlab.release.anonymity_graph.ReleaseCells.covers`); :func:`kernels` returns them
compiled.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from anonlab._compiled import jit

__all__ = ["kernels"]


def _first_above(col, lo, hi, x):
    """The first position in ``[lo, hi)`` of ``col`` (sorted there) holding a value above
    ``x``, ``hi`` if none: galloping from ``lo``, then a binary search."""
    if lo >= hi or col[lo] > x:
        return lo
    a = lo  # col[a] <= x
    step = 1
    while a + step < hi and col[a + step] <= x:
        a += step
        step *= 2
    b = min(a + step, hi)  # col[b] > x, or b == hi
    a += 1
    while a < b:
        mid = (a + b) >> 1
        if col[mid] <= x:
            a = mid + 1
        else:
            b = mid
    return a


def _grown(a, size):
    """``a`` copied into a new array of at least ``size`` entries (twice its own at least).
    A loop: a slice assignment would compile numba's shape-mismatch message (seconds)."""
    out = np.empty(max(size, 2 * a.size), dtype=a.dtype)
    for i in range(a.size):
        out[i] = a[i]
    return out


def _pushed(stack, top, d, ulo, uhi, vlo, vhi):
    """The stack of :func:`_join_tries` (grown if full) with the node ``(d, ulo, uhi, vlo,
    vhi)`` written as its entry ``top`` (five numbers each)."""
    at = 5 * top
    if at + 5 > stack.size:
        stack = _grown(stack, at + 5)
    stack[at] = d
    stack[at + 1] = ulo
    stack[at + 2] = uhi
    stack[at + 3] = vlo
    stack[at + 4] = vhi
    return stack


def _join_tries(t, c, budget):
    """Every pair (original tuple, released tuple position in ``t.keys``) whose labels
    cover it (``c``: :class:`~anonlab.release.anonymity_graph._Covers`), walking both tries
    of ``t`` (:class:`~anonlab.release.anonymity_graph._Tries`) at once.

    A node is a column ``d``, a range of original tuples with the same values before ``d``
    and a range of released tuples with the same labels before ``d``, those labels covering
    those values. In column ``d`` a run of released tuples whose label is a value meets the
    run of original tuples with that value (both sorted: a merge); a run whose label covers
    several values (or none) meets each run of original tuples with a value it covers. A
    node past the last column, or of one released tuple whose labels from ``d`` on cover
    every value, pairs all its tuples.

    Returns ``(original, released, n)``: the ``n`` pairs, or ``n = -1`` (and no pair) when
    there would be more than ``budget``.
    """
    u, keys, last, width, offset, cover = t.original, t.keys, t.last, c.width, c.offset, c.table
    m, nu = u.shape
    nv = keys.shape[1]
    src = np.empty(max(nu, nv, 16), dtype=np.int64)
    dst = np.empty(src.size, dtype=np.int64)
    # the nodes to visit: (column, original tuples lo, hi, released tuples lo, hi)
    stack = _pushed(np.empty(320, dtype=np.int64), 0, 0, 0, nu, 0, nv)
    top = 1
    n = 0
    while top > 0:
        top -= 1
        at = 5 * top
        d, ulo, uhi = stack[at], stack[at + 1], stack[at + 2]
        vlo, vhi = stack[at + 3], stack[at + 4]
        if d == m or (vhi - vlo == 1 and last[vlo] < d):
            end = n + (uhi - ulo) * (vhi - vlo)
            if end > budget:
                return src[:0].copy(), dst[:0].copy(), -1
            if end > src.size:
                src = _grown(src, end)
                dst = _grown(dst, end)
            for i in range(vlo, vhi):
                for j in range(ulo, uhi):
                    src[n] = j
                    dst[n] = i
                    n += 1
            continue
        uc, kc, w = u[d], keys[d], width[d]
        values_end = _first_above(kc, vlo, vhi, w - 1)  # (labels that are a value come first)
        i, j = vlo, ulo
        while i < values_end and j < uhi:
            x, y = kc[i], uc[j]
            if x < y:
                i = _first_above(kc, i, values_end, y - 1)
            elif y < x:
                j = _first_above(uc, j, uhi, x - 1)
            else:
                i2 = _first_above(kc, i, values_end, x)
                j2 = _first_above(uc, j, uhi, x)
                stack = _pushed(stack, top, d + 1, j, j2, i, i2)
                top += 1
                i, j = i2, j2
        i = values_end
        while i < vhi:
            i2 = _first_above(kc, i, vhi, kc[i])
            base = offset[d] + (kc[i] - w) * w
            j = ulo
            while j < uhi:
                x = uc[j]
                j2 = _first_above(uc, j, uhi, x)
                if cover[base + x]:
                    stack = _pushed(stack, top, d + 1, j, j2, i, i2)
                    top += 1
                j = j2
            i = i2
    return src[:n].copy(), dst[:n].copy(), n


def _cover_pairs(released, original, released_rows, original_rows, c, out):
    """``out[e]`` False where a label of released row ``released_rows[e]`` does not cover
    the value of original row ``original_rows[e]`` (``c``:
    :class:`~anonlab.release.anonymity_graph._Covers`)."""
    m = released.shape[1]
    for e in range(released_rows.size):
        r, o = released_rows[e], original_rows[e]
        for j in range(m):
            w = c.width[j]
            if not c.table[c.offset[j] + released[r, j] * w + original[o, j]]:
                out[e] = False
                break


def kernels() -> SimpleNamespace:
    """:func:`_join_tries` and :func:`_cover_pairs`, compiled once per process (numba
    caches the machine code)."""
    if not _KERNELS:
        g = globals()
        for name in ("_first_above", "_grown", "_pushed"):  # (called by the kernels only)
            g[name] = jit(g[name], entry=False)
        _KERNELS.append(SimpleNamespace(join=jit(_join_tries), cover_pairs=jit(_cover_pairs)))
    return _KERNELS[0]


_KERNELS: list[SimpleNamespace] = []
