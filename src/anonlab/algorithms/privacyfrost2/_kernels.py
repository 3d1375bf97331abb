"""Compiled kernels of PrivacyFrost2's partial-domain step (section 5.4, step 4).

:func:`kernels` compiles the functions below on first use (:mod:`anonlab._compiled`, numba's
machine code cached on disk), but :func:`build_groups`, :func:`levels_of` and
:func:`counting_order`, numpy (called once a search, they are not worth their compilation);
a batch is :func:`_find`, the models' verdicts and
:func:`_settle`, driven from Python (``partial._CompiledPartial``). The kernels run on one
thread: numba's parallel loops cost a third of the first run's compilation and bought
nothing on the batches of a search (benchmarks/README.md, ``bench_compile.py``). The functions
are plain Python for numba's nopython mode and take a few named records: :class:`Table`
(what the partial step never changes) and :class:`Groups` (the released table as groups of
base classes, which the step refines). ``docs/concepts/privacyfrost2.md`` describes that state: the
positions, batches, families, and the work each saves.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from anonlab._compiled import Elsewhere, compile_elsewhere, compiled, jit

__all__ = [
    "Groups",
    "Table",
    "Terms",
    "build_groups",
    "compile_settle",
    "counting_order",
    "kernels",
    "levels_of",
    "settle_elsewhere",
]

_FIB = 0x9E3779B97F4A7C15  # 2^64 / golden ratio: multiplicative hashing
_CACHE: dict[Any, Any] = {}

I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]
I32 = npt.NDArray[np.int32]
LevelArray = npt.NDArray[np.signedinteger[Any]]  # int8, or int16 for tall hierarchies


class Table(NamedTuple):
    """What the partial-domain step reads and never changes, per position ``r`` and
    attribute ``j``.

    Attributes
    ----------
    codes : ndarray of int32, shape (m, n)
        Domain codes.
    dom, dom_off, dom_w : ndarray
        The label id of (``j``, level, code) is ``dom[dom_off[j] + level * dom_w[j] + code]``.
    fh : ndarray of uint64
        A random 64-bit number per label id (attribute ``j``'s from ``lab_off[j]``).
    lab_off : ndarray of int64, shape (m + 1,)
    bsize, orig : ndarray of int64, shape (n,)
        The records and the base class at each position.
    lo : ndarray of int64, shape (m,)
        The lowest level allowed.
    sp_indptr, sp_val, sp_cnt : ndarray of int64
        The sensitive counts, every sensitive attribute side by side (CSR: position ``r``'s
        are ``sp_indptr[r]:sp_indptr[r + 1]``); ``total_hist`` the whole table's.
    total, mcs : int
        The whole table's records; the models' minimal class size.
    """

    codes: I32
    dom: I32
    dom_off: I64
    dom_w: I64
    fh: U64
    lab_off: I64
    bsize: I64
    orig: I64
    lo: I64
    sp_indptr: I64
    sp_val: I64
    sp_cnt: I64
    total_hist: I64
    total: int
    mcs: int


class Groups(NamedTuple):
    """The group state of the partial-domain step (``words`` = one bit per attribute).

    Attributes
    ----------
    lv : ndarray of int8 or int16, shape (n, m)
        Per position, the level of each attribute (not kept where ``guni``).
    down : ndarray of int32, shape (m, n)
        Per position, the label it takes when its group splits on an attribute: one level
        down, or its own on the lowest level (not kept where ``guni``).
    doom : ndarray of uint64, shape (n, words)
        Per position, the attributes on which it is doomed.
    gid : ndarray of int64, shape (n,)
        The group of each position.
    glab : ndarray of int32, shape (m, n)
        Per group, its labels (attribute-major: a scan of all groups on one attribute reads
        one row); ``ghash`` the sum of their ``fh``.
    gviol : ndarray of bool
        Whether a group is suppressed.
    gfirst, gstart, gcount, mem, gsize : ndarray of int64, shape (n,)
        Per group, its first base class (not a position), its members
        ``mem[gstart : gstart + gcount]`` (contiguous: a split divides its group's range)
        and its records.
    gmax : ndarray of int8 or int16, shape (n, m)
        Per group, the deepest level of its members.
    gcand, gfail, guni, gdoom : ndarray of uint64, shape (n, words)
        Per group, the attributes it is a candidate on (not suppressed, a member above the
        lowest level), on which its split failed since it last changed, on which its
        members share one level, and on which a member is doomed.
    gdl : ndarray of int32, shape (m, n)
        Per attribute and group, the label one level down that all its members share, or
        ``-1`` (inherited by the split classes of a split on another attribute).
    gcl : ndarray of int8 or int16, shape (m, n)
        Per attribute and group, a level on which its members' codes share one label.
    lcount, delta : ndarray of int64, shape (n_labels,)
        Base classes per label; zeros between calls.
    scratch : ndarray of int64, shape (n_labels,)
        Per label, all ``-1`` between calls.
    """

    lv: LevelArray
    down: I32
    doom: U64
    gid: I64
    glab: I32
    ghash: U64
    gviol: npt.NDArray[np.bool_]
    gfirst: I64
    gmax: LevelArray
    gstart: I64
    gcount: I64
    mem: I64
    gcand: U64
    gfail: U64
    guni: U64
    gdoom: U64
    gsize: I64
    gdl: I32
    gcl: LevelArray
    lcount: I64
    scratch: I64
    delta: I64


class Found(NamedTuple):
    """One batch on an attribute, as :func:`_find` finds it.

    Attributes
    ----------
    n_cand : int
        Groups with candidates (not suppressed).
    judged : ndarray of int64
        The groups judged now (not known to fail since their last change), ascending.
    ent, failed : ndarray of bool
        Per judged group: its split would merge with another group; it fails (a split
        class below the minimal class size, or, once judged, failing a model).
    cls_group, cstart, cls_label, cls_nb : ndarray of int64
        The split classes, judged group after group (group ``a``'s are
        ``cstart[a]:cstart[a + 1]``): each one's group, label and base classes.
    judge_of : ndarray of int64
        Per split class, its row of ``judge_size``/``hist``, or ``-1`` (its group failed on
        size, or splits into itself).
    judge_size, hist : ndarray of int64
        The classes the models judge, then one class of every other record (so the models
        see the whole table's distribution).
    xoff, row_of, cls_of : ndarray of int64
        Judged group ``a``'s members walked are ``row_of[xoff[a]:xoff[a + 1]]``, each with
        its split class within its group (none if they share their label one level down).
    """

    n_cand: int | np.integer[Any]
    judged: I64
    ent: npt.NDArray[np.bool_]
    failed: npt.NDArray[np.bool_]
    cls_group: I64
    judge_of: I64
    judge_size: I64
    hist: I64
    cstart: I64
    cls_label: I64
    cls_nb: I64
    xoff: I64
    row_of: I64
    cls_of: I64


class _Walk(NamedTuple):
    """The split classes of the judged groups (:func:`_split_groups`): group ``a``'s in slots
    ``xoff[a] + a + 0, 1, ...``, their number and whether one is too small; per member
    walked, its position and class within its group."""

    row_of: I64
    cls_of: I64
    label: I64
    size: I64
    nb: I64
    ncls: I64
    failed: npt.NDArray[np.bool_]


class _Families(NamedTuple):
    """The families on an attribute of the judged groups (:func:`_entangled`): a hash table
    of ``slots`` keyed on ``hashes`` (a judged group's tuple hash without the attribute) and
    a bit filter 8 times larger (the slot of a hash is ``(hash * fib) >> shift``)."""

    slots: I64
    mask: int
    hashes: U64
    bits: U64
    shift: np.uint64


class Terms(NamedTuple):
    """A score as tabulated terms (``Score.terms``): attribute ``x``'s term for ``e_x`` at
    ``values[off[x] + e_x]``, summed, or their maximum when ``is_max``."""

    is_max: bool
    values: npt.NDArray[np.float64]
    off: I64


def _same_family(a, b, j, glab):
    for x in range(glab.shape[0]):
        if x != j and glab[x, a] != glab[x, b]:
            return False
    return True


def _down_base(G, j, guni, gmax, doff, dw, lo_j):
    """Where in ``dom`` the labels one level down (or their own, on the lowest level
    ``lo_j``) of group ``G``'s members' codes on ``j`` start, if its members share one level
    on ``j`` (``guni``); else ``-1`` (read ``down``). (The kernels pass arrays, not
    records, to per-group helpers: a record's field read in a loop is reference counted.)"""
    if (guni[G, j >> 6] >> np.uint64(j & 63)) & np.uint64(1):
        return doff + max(np.int64(gmax[G, j]) - 1, lo_j) * dw
    return np.int64(-1)


def _shared_level(rows, lo, hi, cj, dom, doff, dw, lo_j, top):
    """The finest level from ``lo_j`` up (at most ``top``, where they share one) on which
    the codes ``cj`` of positions ``rows[lo:hi]`` share one label (attribute's labels in
    ``dom`` at ``doff``, ``dw`` codes a level)."""
    y = np.int64(lo_j)
    c0 = cj[rows[lo]]
    ref = dom[doff + y * dw + c0]
    for i in range(lo, hi):
        c = cj[rows[i]]
        while y < top and dom[doff + y * dw + c] != ref:
            y += 1
            ref = dom[doff + y * dw + c0]
    return y


def _split_groups(j, judged, xoff, w, tab, gs):
    """The split classes on ``j`` of the judged groups (for :func:`_find`), written to
    ``w`` (:class:`_Walk`): per member its row
    and class within its group, per group its classes in slots ``xoff[a] + a + 0, 1, ...``
    (label, size, base classes), their number and whether one is below the minimal class
    size (then the members of too-small classes are doomed on ``j``). A group with no
    members to walk (``xoff``) is one whose members are known to share their label one level
    down (``gdl``): its one class is the group; a group walked and found so is remembered in
    ``gdl``. The members of a group on one level of ``j`` (``guni``) take their label from
    ``codes`` (``down`` is not kept for them); such a group found to be one class gets its
    shared level ``gcl`` on ``j``."""
    mcs, off, sc = tab.mcs, tab.lab_off[j], gs.scratch
    wj = j >> 6
    bj = np.uint64(1) << np.uint64(j & 63)
    dj, cj, dom, bsize = gs.down[j], tab.codes[j], tab.dom, tab.bsize
    gdl, gcl, mem, doom, gdoom = gs.gdl, gs.gcl, gs.mem, gs.doom, gs.gdoom
    gstart, gcount, gsize, guni, gmax = gs.gstart, gs.gcount, gs.gsize, gs.guni, gs.gmax
    doff, dw, lo_j = tab.dom_off[j], tab.dom_w[j], tab.lo[j]
    row_of, cls_of, s_label, s_size, s_nb = w.row_of, w.cls_of, w.label, w.size, w.nb
    ncls, failed = w.ncls, w.failed
    for a in range(judged.size):
        G = judged[a]
        x0 = xoff[a] + a
        x = xoff[a]
        if xoff[a + 1] == x:  # not walked: one class, the group itself
            s_label[x0] = gdl[j, G]
            s_size[x0] = gsize[G]
            s_nb[x0] = gcount[G]
            ncls[a] = 1
            failed[a] = False
            continue
        nc_a = 0
        # on one level: the labels one level down of its members' codes (-1: read down)
        base = _down_base(G, j, guni, gmax, doff, dw, lo_j)
        for q in range(gstart[G], gstart[G] + gcount[G]):
            r = mem[q]
            lab = dj[r] if base < 0 else dom[base + cj[r]]
            c = sc[off + lab]
            if c == -1:
                c = nc_a
                sc[off + lab] = c
                s_label[x0 + c] = lab
                s_size[x0 + c] = 0
                s_nb[x0 + c] = 0
                nc_a += 1
            s_size[x0 + c] += bsize[r]
            s_nb[x0 + c] += 1
            row_of[x] = r
            cls_of[x] = c
            x += 1
        small = False
        for c in range(nc_a):
            sc[off + s_label[x0 + c]] = -1
            if s_size[x0 + c] < mcs:
                small = True
        ncls[a] = nc_a
        failed[a] = small
        if nc_a == 1:
            gdl[j, G] = s_label[x0]  # its members share their label one level down
            if base >= 0:  # and the finest level on which they share one
                top = np.int64(gmax[G, j])  # (one signature for both callers)
                gcl[j, G] = _shared_level(row_of, xoff[a], x, cj, dom, doff, dw, lo_j, top)
        if small:
            # the members of a too-small split class are doomed on j: the partition only
            # gets finer, so their split class on j stays too small in every later group
            gdoom[G, wj] |= bj
            for y in range(xoff[a], x):
                if s_size[x0 + cls_of[y]] < mcs:
                    doom[row_of[y], wj] |= bj


def _hist_groups(f, tab):
    """The sensitive histograms of the classes of the judged groups that the models judge
    (for :func:`_find`): a group's classes are judged in a row."""
    judge_of, cstart, xoff, cls_of, row_of = f.judge_of, f.cstart, f.xoff, f.cls_of, f.row_of
    hist = f.hist
    indptr, val, cnt = tab.sp_indptr, tab.sp_val, tab.sp_cnt
    for a in range(f.judged.size):
        k0 = judge_of[cstart[a]]
        if k0 < 0:  # failed on size, or one class: the group itself
            continue
        for x in range(xoff[a], xoff[a + 1]):
            k = k0 + cls_of[x]
            r = row_of[x]
            for e in range(indptr[r], indptr[r + 1]):
                hist[k, val[e]] += cnt[e]


def _ext_scan(g, j, judged, fam, tab, gs, ext_rep, ext_grp):
    """The groups ``0..g-1`` not judged that are in the family on ``j`` of a judged group
    (for :func:`_entangled`, with the judged groups' families ``fam``): written as
    (representative, group) in ``ext_rep``/``ext_grp``; returns how many."""
    fib = np.uint64(_FIB)
    three = np.uint64(3)
    off = tab.lab_off[j]
    glab, ghash, fh = gs.glab, gs.ghash, tab.fh
    bits, slots, hashes, shift, mask = fam.bits, fam.slots, fam.hashes, fam.shift, fam.mask
    nj = judged.size
    n = 0
    p = 0
    for H in range(g):
        if p < nj and judged[p] == H:  # (judged is ascending) its family is known
            p += 1
            continue
        h = ghash[H] - fh[off + glab[j, H]]
        f = (h * fib) >> shift
        if not (bits[f >> np.uint64(6)] >> (f & np.uint64(63))) & np.uint64(1):
            continue
        s = np.int64(f >> three)
        while slots[s] != -1:
            b = slots[s]
            if hashes[b] == h and _same_family(judged[b], H, j, glab):
                ext_rep[n] = b
                ext_grp[n] = H
                n += 1
                break
            s = (s + 1) & mask
    return n


def _entangled(j, g, f, tab, gs):
    """Which judged groups' splits on ``j`` would merge with another group (``f.ent``): per
    family on ``j`` (a hash table keyed on the tuple without ``j``), whether the label sets
    on ``j`` of its groups intersect (for :func:`_find`)."""
    fib = np.uint64(_FIB)
    off = tab.lab_off[j]
    card = tab.lab_off[j + 1] - off
    judged, glab, ghash, fh = f.judged, gs.glab, gs.ghash, tab.fh
    sc0 = gs.scratch
    nj = judged.size
    # --- families on j of the judged groups (hash table keyed on the tuple without j)
    bits = 4
    while (1 << bits) < 2 * nj:
        bits += 1
    size = 1 << bits
    mask = size - 1
    table = np.full(size, -1, dtype=np.int64)
    famh = np.empty(nj, dtype=np.uint64)
    jrep = np.empty(nj, dtype=np.int64)  # a judged group's family: its first judged group
    fam_cnt = np.zeros(nj, dtype=np.int64)
    # a bit per slot of a table 8 times larger, set for the families of judged groups: most
    # groups are in none of them, and the bits (2 bytes per judged group) stay in cache
    fshift = np.uint64(64 - bits - 3)
    three = np.uint64(3)
    filt = np.zeros(((size << 3) >> 6) + 1, dtype=np.uint64)
    for a in range(nj):
        G = judged[a]
        h = ghash[G] - fh[off + glab[j, G]]
        famh[a] = h
        hf = (h * fib) >> fshift
        filt[hf >> np.uint64(6)] |= np.uint64(1) << (hf & np.uint64(63))
        s = np.int64(hf >> three)
        while table[s] != -1:
            b = table[s]
            if famh[b] == h and _same_family(judged[b], G, j, glab):
                break
            s = (s + 1) & mask
        if table[s] == -1:
            table[s] = a
        jrep[a] = table[s]
        fam_cnt[jrep[a]] += 1
    fam = _Families(table, mask, famh, filt, fshift)
    # the other groups in the family of a judged group: (representative, group)
    ext_rep = np.empty(g, dtype=np.int64)
    ext_grp = np.empty(g, dtype=np.int64)
    n_ext = _ext_scan(g, j, judged, fam, tab, gs, ext_rep, ext_grp)
    for e in range(n_ext):
        fam_cnt[ext_rep[e]] += 1
    multi = 0
    for a in range(nj):
        if fam_cnt[a] > 1:
            multi += 1
    if not multi:
        return
    # families of two or more groups: do their label sets on j intersect?
    pos = np.zeros(nj + 1, dtype=np.int64)
    for a in range(nj):
        pos[a + 1] = pos[a] + (fam_cnt[a] if fam_cnt[a] > 1 else 0)
    members = np.empty(pos[nj], dtype=np.int64)
    mj = np.empty(pos[nj], dtype=np.int64)  # a member's index in judged, or -1
    fill = pos[:nj].copy()
    for a in range(nj):
        rep = jrep[a]
        if fam_cnt[rep] > 1:
            members[fill[rep]] = judged[a]
            mj[fill[rep]] = a
            fill[rep] += 1
    for e in range(n_ext):
        rep = ext_rep[e]
        members[fill[rep]] = ext_grp[e]
        mj[fill[rep]] = -1
        fill[rep] += 1
    hit = np.zeros(pos[nj], dtype=np.bool_)
    cstart, cls_label, ent, gcand, gdl = f.cstart, f.cls_label, f.ent, gs.gcand, gs.gdl
    gstart, gcount, mem, down = gs.gstart, gs.gcount, gs.mem, gs.down
    guni, gmax, dom, cj = gs.guni, gs.gmax, tab.dom, tab.codes[j]
    doff, dw, lo_j = tab.dom_off[j], tab.dom_w[j], tab.lo[j]
    # the labels a family has on j, each once (not grown in the loop: numba then counts
    # references to the array at every step)
    touched = np.empty(card, dtype=np.int64)
    for rep in range(nj):
        if fam_cnt[rep] < 2:
            continue
        nt = 0
        for x in range(pos[rep], pos[rep + 1]):
            H = members[x]
            cur = glab[j, H]
            aj = mj[x]
            # its labels on j: the current one (kept if its split is not), then those of
            # its split classes: known if it is judged or its members share one (gdl), else
            # from its members
            c = 0
            n_lab = 0
            q0 = 0
            q1 = 0
            one = -1
            base = np.int64(-1)
            if aj >= 0:
                c = cstart[aj]
                n_lab = cstart[aj + 1] - c
            elif (gcand[H, j >> 6] >> np.uint64(j & 63)) & np.uint64(1):
                one = gdl[j, H]
                if one < 0:
                    q0 = gstart[H]
                    q1 = q0 + gcount[H]
                    base = _down_base(H, j, guni, gmax, doff, dw, lo_j)
            i = -1
            while i < n_lab or q0 < q1 or one >= 0:
                if i < 0:
                    lab = cur
                elif aj >= 0:
                    lab = cls_label[c + i]
                elif one >= 0:
                    lab = one
                    one = -1
                else:
                    r = mem[q0]
                    lab = down[j, r] if base < 0 else dom[base + cj[r]]
                    q0 += 1
                i += 1
                o = sc0[off + lab]
                if o == -1:
                    sc0[off + lab] = x
                    touched[nt] = off + lab
                    nt += 1
                elif o != x:
                    hit[x] = True
                    hit[o] = True
        for t in range(nt):
            sc0[touched[t]] = -1
        for x in range(pos[rep], pos[rep + 1]):
            if hit[x] and mj[x] >= 0:
                ent[mj[x]] = True


def _find(j, g, tab, gs):
    """One batch on attribute ``j`` (5.4, step 4): the candidate groups, which are judged,
    their split classes, the classes the models must judge and their sensitive histograms
    (a :class:`Found`)."""
    wj = j >> 6
    nj = np.int64(0)
    n_cand = np.int64(0)
    sh = np.uint64(j & 63)
    one = np.uint64(1)
    gcand, gfail, gdoom = gs.gcand, gs.gfail, gs.gdoom
    nv = tab.total_hist.size
    # counted first (a loop the compiler vectorizes), listed only if any: late in the
    # search most batches judge none
    for G in range(g):
        cand = gcand[G, wj]
        n_cand += np.int64((cand >> sh) & one)
        # not if its split failed the models since it last changed, nor if a member's split
        # class on j is too small in any group it is in
        nj += np.int64(((cand & ~(gfail[G, wj] | gdoom[G, wj])) >> sh) & one)
    judged = np.empty(nj + 1, dtype=np.int64)  # (+1: the last write of the loop below)
    if nj:
        at = np.int64(0)
        for G in range(g):  # without branches: which way they go is hard to predict
            judged[at] = G
            at += np.int64(((gcand[G, wj] & ~(gfail[G, wj] | gdoom[G, wj])) >> sh) & one)
    judged = judged[:nj]
    ent = np.zeros(nj, dtype=np.bool_)
    failed = np.zeros(nj, dtype=np.bool_)
    if nj == 0:
        e64, z1 = np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64)
        h1 = np.zeros((1, nv), dtype=np.int64)
        everyone = np.full(1, tab.total, dtype=np.int64)  # one class: every record
        return Found(n_cand, judged, ent, failed, e64, e64, everyone, h1, z1, e64, e64, z1, e64,
                     e64)  # fmt: skip
    # --- split classes of the judged groups (their labels also decide entanglement):
    # group a's members are row_of[xoff[a]:xoff[a+1]]: none for a group whose members are
    # known to share their label one level down (it splits into itself, unwalked)
    xoff = np.empty(nj + 1, dtype=np.int64)
    xoff[0] = 0
    gdl, gsize, gcount, mcs = gs.gdl, gs.gsize, gs.gcount, tab.mcs
    for a in range(nj):
        G = judged[a]
        walk = gdl[j, G] < 0 or gsize[G] < mcs
        xoff[a + 1] = xoff[a] + (gcount[G] if walk else 0)
    n_rows = xoff[nj]
    # (a group has at most as many classes as members, and one if not walked)
    w = _Walk(np.empty(n_rows, dtype=np.int64), np.empty(n_rows, dtype=np.int64),
              np.empty(n_rows + nj, dtype=np.int64), np.empty(n_rows + nj, dtype=np.int64),
              np.empty(n_rows + nj, dtype=np.int64), np.empty(nj, dtype=np.int64), failed)  # fmt: skip
    _split_groups(j, judged, xoff, w, tab, gs)
    # the classes numbered group after group
    cstart = np.empty(nj + 1, dtype=np.int64)
    cstart[0] = 0
    ncls, s_label, s_size, s_nb = w.ncls, w.label, w.size, w.nb
    for a in range(nj):
        cstart[a + 1] = cstart[a] + ncls[a]
    nc = cstart[nj]
    cls_group = np.empty(nc, dtype=np.int64)
    cls_label = np.empty(nc, dtype=np.int64)
    cls_size = np.empty(nc, dtype=np.int64)
    cls_nb = np.empty(nc, dtype=np.int64)
    for a in range(nj):
        for u in range(ncls[a]):
            c = cstart[a] + u
            cls_group[c] = a
            cls_label[c] = s_label[xoff[a] + a + u]
            cls_size[c] = s_size[xoff[a] + a + u]
            cls_nb[c] = s_nb[xoff[a] + a + u]
    # --- the classes the models judge: those of groups not failed on size that split into
    # two or more (a group splitting into itself keeps its records, and so its verdict: it
    # is not suppressed, and every model judges a class by its own records and the whole
    # table's)
    judge_of = np.full(nc, -1, dtype=np.int64)
    nk = 0
    for c in range(nc):
        a = cls_group[c]
        if not failed[a] and cstart[a + 1] - cstart[a] > 1:
            judge_of[c] = nk
            nk += 1
    judge_size = np.empty(nk + 1, dtype=np.int64)
    rest = tab.total
    for c in range(nc):
        if judge_of[c] >= 0:
            judge_size[judge_of[c]] = cls_size[c]
            rest -= cls_size[c]
    judge_size[nk] = rest
    hist = np.zeros((nk + 1, nv), dtype=np.int64)
    f = Found(n_cand, judged, ent, failed, cls_group, judge_of, judge_size, hist, cstart,
              cls_label, cls_nb, xoff, w.row_of, w.cls_of)  # fmt: skip
    _entangled(j, g, f, tab, gs)
    if nv:
        _hist_groups(f, tab)
        for v in range(nv):
            hist[nk, v] = tab.total_hist[v]
        for k in range(nk):
            for v in range(nv):
                hist[nk, v] -= hist[k, v]
    return f


def _e_after(j, which, e_j, f, tab, gs):
    """``e`` of attribute ``j`` (distinct labels over the base classes) after splitting
    the judged groups ``f.judged[which]``, from their split classes as :func:`_find` found
    them (no member is walked)."""
    off = tab.lab_off[j]
    lcount, delta, glab = gs.lcount, gs.delta, gs.glab
    judged, cstart, cls_label, cls_nb = f.judged, f.cstart, f.cls_label, f.cls_nb
    n_cls = 0
    for i in range(which.size):
        n_cls += cstart[which[i] + 1] - cstart[which[i]]
    touched = np.empty(2 * n_cls, dtype=np.int64)
    nt = 0
    for i in range(which.size):
        a = which[i]
        old = off + glab[j, judged[a]]
        for c in range(cstart[a], cstart[a + 1]):
            new = off + cls_label[c]
            if new != old:
                delta[new] += cls_nb[c]
                delta[old] -= cls_nb[c]
                touched[nt] = new
                touched[nt + 1] = old
                nt += 2
    e = e_j
    for t in range(nt):
        lab = touched[t]
        d = delta[lab]
        if d != 0:
            before = lcount[lab]
            after = before + d
            if before == 0 and after > 0:
                e += 1
            elif before > 0 and after == 0:
                e -= 1
            delta[lab] = 0
    return e


def _commit(j, which, f, g, tab, gs):
    """Split the judged groups ``f.judged[which]`` on ``j`` into the split classes
    :func:`_find` found: levels, label counts and the group state. Each split class becomes
    a group (the first one keeps the group's id) whose members are a contiguous part of the
    split group's range of ``mem`` (in the same order). New groups are numbered in the
    order of ``which`` (table order: later steps read the groups of base classes in that
    order), but split in the order of their ids (``judged`` is ascending), so that the
    group state is read and written front to back, not at random.

    Where a group's members share one level (``guni``) its split classes' deepest level is
    known unwalked: the same, or one less on ``j``. A split class's members share their
    label one level down where its group's did (``gdl``); on ``j`` it is found as they are
    walked. A group that :func:`_find` did not walk (one class, the group itself) is walked
    here, unless its members share one level on ``j``: it then only goes down one level,
    and its members share their next label if they share one on a level at least ``gcl``
    (inherited by split classes, whose members are a subset; else found by walking the group
    once), read on the code of its first member. Returns the new number of groups. (One
    kernel, not two: a callee is compiled again inside each kernel that calls it.)"""
    lv, down, codes, dom, lo_lv = gs.lv, gs.down, tab.codes, tab.dom, tab.lo
    glab, ghash, gcand, gfail, gmax, guni = gs.glab, gs.ghash, gs.gcand, gs.gfail, gs.gmax, gs.guni
    gdl, gcl, gsize, gdoom, mem = gs.gdl, gs.gcl, gs.gsize, gs.gdoom, gs.mem
    gid, gfirst, gstart, gcount, doom = gs.gid, gs.gfirst, gs.gstart, gs.gcount, gs.doom
    fh, bsize, orig = tab.fh, tab.bsize, tab.orig
    judged, cstart, cls_label, cls_nb = f.judged, f.cstart, f.cls_label, f.cls_nb
    xoff, row_of, cls_of = f.xoff, f.row_of, f.cls_of
    # the labels on j: dom[doff + level * dw + cj[r]]
    cj, doff, dw = codes[j], tab.dom_off[j], tab.dom_w[j]
    off = tab.lab_off[j]
    m = glab.shape[0]
    nw = doom.shape[1]
    n = gid.size
    lo_j = lo_lv[j]
    pmax = np.empty(m, dtype=np.int64)  # the split group's deepest levels
    walk = np.empty(m, dtype=np.int64)  # the attributes on which its levels differ
    puni = np.empty(nw, dtype=np.uint64)
    keep = np.empty(nw, dtype=np.uint64)  # candidate bits the split classes inherit
    bj = np.uint64(1) << np.uint64(j & 63)
    lcount = gs.lcount
    n_cls = cstart[judged.size]
    ct = np.empty(n_cls, dtype=np.int64)  # per split class (of the groups split): its group
    cat = np.empty(n_cls, dtype=np.int64)  # and where its members start in mem
    for i in range(which.size):
        a = which[i]
        G = judged[a]
        old = glab[j, G]
        at = gstart[G]
        for c in range(cstart[a], cstart[a + 1]):
            if c == cstart[a]:
                ct[c] = G
            else:
                ct[c] = g
                g += 1
            cat[c] = at
            at += cls_nb[c]
            if cls_label[c] != old:  # its members went down to another label
                lcount[off + cls_label[c]] += cls_nb[c]
                lcount[off + old] -= cls_nb[c]
    which = which[_order_of(which, judged.size)]  # in the order of their ids
    cdl = np.empty(n_cls, dtype=np.int64)  # per split class: its members' next label
    for i in range(which.size):
        a = which[i]
        G = judged[a]
        fam = ghash[G] - fh[off + glab[j, G]]
        c0, c1 = cstart[a], cstart[a + 1]
        nwalk = 0
        for x in range(m):
            pmax[x] = gmax[G, x]
            if not (guni[G, x >> 6] >> np.uint64(x & 63)) & np.uint64(1):
                walk[nwalk] = x
                nwalk += 1
        for w in range(nw):
            puni[w] = guni[G, w]
            # on an attribute other than j whose members share one level, a split class
            # has the group's deepest level, so it is a candidate as the group is
            keep[w] = gcand[G, w] & puni[w]
        keep[j >> 6] &= ~bj
        uni_j = (puni[j >> 6] & bj) != 0
        if c1 - c0 == 1:
            # the group splits into itself: same members (and so the same size, range, first
            # base class, doomed attributes and levels but on j); only j goes down
            glab[j, G] = cls_label[c0]
            ghash[G] = fam + fh[off + cls_label[c0]]
            if uni_j:
                # its members on one level all go down one (their lv and down are not kept:
                # see above); they share their next label if they share one on its level
                top = np.int64(gmax[G, j]) - 1
                y = max(top - 1, lo_j)
                if y < gcl[j, G]:  # not known to: the finest level they share one on
                    q0 = gstart[G]
                    gcl[j, G] = _shared_level(mem, q0, q0 + gcount[G], cj, dom, doff, dw, lo_j, top)
                dl = np.int64(-1)
                if y >= gcl[j, G]:
                    dl = np.int64(dom[doff + y * dw + cj[mem[gstart[G]]]])
            else:
                dl = np.int64(-2)
                top = np.int64(-1)
                # (this lowering repeats the loop below on purpose, rather than an inlined
                # helper shared with it: benchmarks/README.md)
                for q in range(gstart[G], gstart[G] + gcount[G]):
                    r = mem[q]
                    if lv[r, j] > lo_j:
                        lv[r, j] -= 1
                        down[j, r] = dom[doff + max(lv[r, j] - 1, lo_j) * dw + cj[r]]
                    d = down[j, r]
                    if dl == -2:
                        dl = np.int64(d)
                    elif dl != d:
                        dl = np.int64(-1)
                    top = max(top, np.int64(lv[r, j]))
            gdl[j, G] = dl
            gmax[G, j] = top
            for w in range(nw):
                gcand[G, w] = keep[w]
                gfail[G, w] = 0
            if gmax[G, j] > lo_j:
                gcand[G, j >> 6] |= bj
            for y in range(nwalk):  # (as below; their deepest levels stay)
                x = walk[y]
                if gmax[G, x] > lo_lv[x]:
                    gcand[G, x >> 6] |= np.uint64(1) << np.uint64(x & 63)
            continue
        if uni_j:
            pmax[j] -= 1  # every member is above the lowest level (a candidate) and goes down
        # on one level: where the labels one level down of the members' codes start
        dbase = doff + max(pmax[j] - 1, lo_j) * dw
        for c in range(c0, c1):
            t = ct[c]
            if t != G:
                for x in range(m):
                    glab[x, t] = glab[x, G]
                    # (a subset of members that shared one label still do)
                    gdl[x, t] = gdl[x, G]
                    gcl[x, t] = gcl[x, G]
        for c in range(c0, c1):
            t = ct[c]
            glab[j, t] = cls_label[c]
            ghash[t] = fam + fh[off + cls_label[c]]
            gfirst[t] = n
            gstart[t] = cat[c]
            gcount[t] = cls_nb[c]
            gsize[t] = 0
            cdl[c] = -2  # none seen yet
            for x in range(m):
                gmax[t, x] = pmax[x]
            for y in range(nwalk):
                gmax[t, walk[y]] = -1
            for w in range(nw):
                gdoom[t, w] = 0
                guni[t, w] = puni[w]  # (a split class of members on one level stays so)
        walked = xoff[a + 1] > xoff[a]
        q0 = cat[c0]
        for i in range(xoff[a + 1] - xoff[a] if walked else cls_nb[c0]):
            if walked:
                r = row_of[xoff[a] + i]
                c = c0 + cls_of[xoff[a] + i]
            else:  # one class, the group itself, in the same order (mem is read first)
                r = mem[q0 + i]
                c = c0
            t = ct[c]
            if uni_j:  # lv and down are not kept: its label from its code
                d = dom[dbase + codes[j, r]]
            else:
                if lv[r, j] > lo_j:
                    lv[r, j] -= 1
                    # its label one level further down (or its own, on the lowest level)
                    down[j, r] = dom[doff + max(lv[r, j] - 1, lo_j) * dw + cj[r]]
                d = down[j, r]
            if cdl[c] == -2:
                cdl[c] = d
            elif cdl[c] != d:
                cdl[c] = -1
            gsize[t] += bsize[r]
            gid[r] = t
            if orig[r] < gfirst[t]:
                gfirst[t] = orig[r]
            for y in range(nwalk):
                gmax[t, walk[y]] = max(gmax[t, walk[y]], lv[r, walk[y]])
            for w in range(nw):
                gdoom[t, w] |= doom[r, w]
            mem[cat[c]] = r  # the split classes take consecutive parts of the range (stable)
            cat[c] += 1
        for c in range(c0, c1):  # a changed group: a candidate where it can go down
            t = ct[c]
            gdl[j, t] = cdl[c]
            for w in range(nw):
                gcand[t, w] = keep[w]
                gfail[t, w] = 0
            if uni_j and pmax[j] > lo_j:
                gcand[t, j >> 6] |= bj
            for y in range(nwalk):
                x = walk[y]
                if gmax[t, x] > lo_lv[x]:
                    gcand[t, x >> 6] |= np.uint64(1) << np.uint64(x & 63)
    return g


def _score(e, terms):
    """The score of counts ``e`` from its tabulated :class:`Terms`."""
    values, off, is_max = terms.values, terms.off, terms.is_max
    s = 0.0
    for x in range(e.size):
        t = values[off[x] + e[x]]
        if is_max:
            s = t if x == 0 or t > s else s
        else:
            s += t
    return s


def _order_of(keys, n_keys):
    """The order that sorts ``keys`` (distinct integers ``0..n_keys-1``): by insertion for a
    few, by their slots in ``0..n_keys-1`` when they fill a good part of them, else by a
    least-significant-digit radix sort, 8 bits a pass (rather than numba's ``np.argsort``:
    benchmarks/README.md)."""
    n = keys.size
    order = np.arange(n)
    if n <= 32:
        for i in range(1, n):
            o = order[i]
            p = i
            while p > 0 and keys[order[p - 1]] > keys[o]:
                order[p] = order[p - 1]
                p -= 1
            order[p] = o
        return order
    if 4 * n >= n_keys:
        slot = np.full(n_keys, -1, dtype=np.int64)
        for i in range(n):
            slot[keys[i]] = i
        o = 0
        for v in range(n_keys):
            if slot[v] >= 0:
                order[o] = slot[v]
                o += 1
        return order
    tmp = np.empty(n, dtype=np.int64)
    cnt = np.empty(256, dtype=np.int64)
    shift = 0
    while shift == 0 or ((n_keys - 1) >> shift) > 0:
        cnt[:] = 0
        for i in range(n):
            cnt[(keys[i] >> shift) & 255] += 1
        acc = 0
        for b in range(256):
            c = cnt[b]
            cnt[b] = acc
            acc += c
        for i in range(n):
            o = order[i]
            b = (keys[o] >> shift) & 255
            tmp[cnt[b]] = o
            cnt[b] += 1
        order, tmp = tmp, order
        shift += 8
    return order


def _settle(j, g, s, ok, e, f, bad, tab, gs, terms, out):
    """The rest of a batch on ``j`` (5.4, step 4) once the models judged the classes of
    ``f`` (``bad``: per row of ``f.judge_size``): the groups whose split fails are
    remembered (``gfail``), the passing groups' splits are applied together if the score
    does not drop, else each half in table order, down to single groups (:func:`_e_after`,
    :func:`_commit`); ``ok``: whether the table passes (the splits leave its suppressed
    classes as they are).

    ``e`` (the counts of the table) is updated in place; ``out`` adds the tables checked,
    the groups left alone as entangled, the groups split and the commits. Returns
    ``(score, number of groups)``."""
    out[0] += 1  # the table with every candidate group split
    judge_of, failed, ent, judged, cls_group = f.judge_of, f.failed, f.ent, f.judged, f.cls_group
    gfail, gfirst = gs.gfail, gs.gfirst
    for c in range(judge_of.size):
        if judge_of[c] >= 0 and bad[judge_of[c]]:
            failed[cls_group[c]] = True
    wj = j >> 6
    bj = np.uint64(1) << np.uint64(j & 63)
    nj = judged.size
    n_pass = 0
    for a in range(nj):
        if failed[a]:
            gfail[judged[a], wj] |= bj
        elif ent[a]:
            out[1] += 1
        else:
            n_pass += 1
    if n_pass == 0:
        return s, g
    passing = np.empty(n_pass, dtype=np.int64)
    first = np.empty(n_pass, dtype=np.int64)
    n_pass = 0
    for a in range(nj):
        if not failed[a] and not ent[a]:
            passing[n_pass] = a
            first[n_pass] = gfirst[judged[a]]
            n_pass += 1
    passing = passing[_order_of(first, gs.gid.size)]  # table order (first base classes differ)
    # the halving, depth first: a range of passing groups is applied whole if the score
    # does not drop, else its first half, then its second half
    stack = np.empty(2 * 64 + 2, dtype=np.int64)
    stack[0] = 0
    stack[1] = n_pass
    top = 2
    while top:
        top -= 2
        lo_i, hi_i = stack[top], stack[top + 1]
        which = passing[lo_i:hi_i]
        out[0] += 1
        if ok:
            before = e[j]
            e[j] = _e_after(j, which, e[j], f, tab, gs)
            s_new = _score(e, terms)
            if s_new >= s:
                g = _commit(j, which, f, g, tab, gs)
                s = s_new
                out[2] += hi_i - lo_i
                out[3] += 1
                continue
            e[j] = before
        if hi_i - lo_i == 1:
            continue
        mid = lo_i + (hi_i - lo_i) // 2
        stack[top] = mid  # the second half after the first
        stack[top + 1] = hi_i
        stack[top + 2] = lo_i
        stack[top + 3] = mid
        top += 4
    return s, g


def build_groups(g: int, tab: Table, gs: Groups) -> None:
    """The group state (:class:`Groups`) of a table given as the group of each position
    (``gs.gid``, ``g`` groups, each with a member; ``gs.gviol``: which are suppressed) and
    its levels ``gs.lv``: a group's labels are those of its first member; no split has
    failed yet. (numpy, an attribute at a time: called once a search, it is not worth its
    compilation.)"""
    lv, gid, n_labels = gs.lv, gs.gid, gs.lcount.size
    m = lv.shape[1]
    gs.lcount[:] = 0
    if not g:
        return
    mem = np.argsort(gid, kind="stable")  # the positions group by group, in table order
    count = np.bincount(gid, minlength=g)
    start = np.zeros(g, dtype=np.int64)
    np.cumsum(count[:-1], out=start[1:])
    first = mem[start]  # each group's first member
    gs.mem[:] = mem
    gs.gstart[:g], gs.gcount[:g] = start, count
    gs.gsize[:g] = np.add.reduceat(tab.bsize[mem], start)
    gs.gfirst[:g] = np.minimum.reduceat(tab.orig[mem], start)
    gs.gdoom[:g] = np.bitwise_or.reduceat(gs.doom[mem], start, axis=0)
    gmax = gs.gmax[:g]
    gmax[...] = np.maximum.reduceat(lv[mem], start, axis=0)
    same_level = np.minimum.reduceat(lv[mem], start, axis=0) == gmax
    gs.ghash[:g] = 0
    gs.guni[:g] = 0
    gs.gcand[:g] = 0
    gs.gfail[:g] = 0
    zero = np.uint64(0)
    for x in range(m):
        at = tab.dom_off[x] + tab.codes[x].astype(np.int64)  # each position's labels
        width = tab.dom_w[x]
        glab = tab.dom[at[first] + lv[first, x].astype(np.int64) * width]
        gs.glab[x, :g] = glab
        down = tab.dom[at + np.maximum(lv[:, x].astype(np.int64) - 1, tab.lo[x]) * width]
        gs.down[x] = down
        # the label one level down its members share, or -1; where their levels are one,
        # they share a label on it
        down = down[mem]
        shared = np.minimum.reduceat(down, start) == np.maximum.reduceat(down, start)
        gs.gdl[x, :g] = np.where(shared, down[start], -1)
        gs.gcl[x, :g] = gmax[:, x]
        label = tab.lab_off[x] + glab
        gs.ghash[:g] += tab.fh[label]  # (wraps around, as the kernels' sums)
        gs.lcount[:] += np.bincount(label, weights=count, minlength=n_labels).astype(np.int64)
        bit = np.uint64(1) << np.uint64(x & 63)
        gs.guni[:g, x >> 6] |= np.where(same_level[:, x], bit, zero)
        # a candidate where a member is above the lowest level, if not suppressed
        cand = (gmax[:, x] > tab.lo[x]) & ~gs.gviol[:g]
        gs.gcand[:g, x >> 6] |= np.where(cand, bit, zero)


def levels_of(gs: Groups, orig: I64, out: LevelArray) -> None:
    """``out[orig[r], x]``: the level of attribute ``x`` at each position ``r``, from ``lv``
    or, where it is not kept (``guni``), its group's ``gmax``; with ``out = lv`` and ``orig``
    the positions themselves it writes ``lv`` back. (numpy, an attribute at a time: called
    once a search, it is not worth its compilation.)"""
    for x in range(gs.lv.shape[1]):
        shared = (gs.guni[gs.gid, x >> 6] >> np.uint64(x & 63)) & np.uint64(1)
        out[orig, x] = np.where(shared != 0, gs.gmax[gs.gid, x], gs.lv[:, x])


def counting_order(keys: I64, n_keys: int) -> tuple[I64, I64]:
    """The stable sort order of ``keys`` (integers ``0..n_keys-1``) and the start of each
    key's run in it (``n_keys + 1`` offsets)."""
    start = np.zeros(n_keys + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=n_keys), out=start[1:])
    return np.argsort(keys, kind="stable").astype(np.int64, copy=False), start


def kernels() -> SimpleNamespace:
    """The compiled kernels. Compiled once per process (numba caches the machine code on
    disk, so later processes load it)."""
    if "k" in _CACHE:
        return _CACHE["k"]  # type: ignore[no-any-return]
    g = globals()
    g["_same_family"] = jit(_same_family, inline=True)  # the kernels call the compiled helpers
    g["_down_base"] = jit(_down_base, inline=True)
    g["_score"] = jit(_score, inline=True)
    for name in ("_shared_level", "_split_groups", "_hist_groups", "_entangled", "_ext_scan",
                 "_e_after", "_commit"):  # fmt: skip
        g[name] = jit(g[name], entry=False)  # (called by the kernels only)
    for name in ("_order_of", "_find", "_settle"):
        g[name] = jit(g[name])
    ns = SimpleNamespace(
        find=_find,
        settle=_settle,
        order_of=_order_of,
    )
    _CACHE["k"] = ns
    return ns


def _settle_arguments(level_dtype: str) -> tuple[Any, ...]:
    """Arguments of :func:`_settle`'s types (empty arrays) for a level type (``"int8"`` or
    ``"int16"``, :class:`Groups`): what a search passes, so that the machine code compiled
    for them is the code the search loads."""
    i64 = np.zeros(0, dtype=np.int64)
    i32 = np.zeros(0, dtype=np.int32)
    u64 = np.zeros(0, dtype=np.uint64)
    flags = np.zeros(0, dtype=np.bool_)
    lv: LevelArray = np.zeros((0, 0), dtype=level_dtype)
    two_i32, two_u64 = np.zeros((0, 0), dtype=np.int32), np.zeros((0, 0), dtype=np.uint64)
    tab = Table(two_i32, i32, i64, i64, u64, i64, i64, i64, i64, i64, i64, i64, i64, 0, 0)
    gs = Groups(lv, two_i32, two_u64, i64, two_i32, u64, flags, i64, lv, i64, i64, i64,
                two_u64, two_u64, two_u64, two_u64, i64, two_i32, lv, i64, i64, i64)  # fmt: skip
    hist = np.zeros((0, 0), dtype=np.int64)
    found = Found(0, i64, flags, flags, i64, i64, i64, hist, i64, i64, i64, i64, i64, i64)
    terms = Terms(False, np.zeros(0, dtype=np.float64), i64)
    return 0, 0, 0.0, False, i64, found, flags, tab, gs, terms, i64


def compile_settle(level_dtype: str) -> None:
    """Compile :func:`_settle` (and the kernels it calls) for ``level_dtype`` into the disk
    cache: the work of the process :func:`settle_elsewhere` starts."""
    settle = kernels().settle
    settle.compile(tuple(settle.typeof_pyval(a) for a in _settle_arguments(level_dtype)))


def settle_elsewhere(level_dtype: str) -> Elsewhere | None:
    """Start compiling :func:`_settle` in another process unless its machine code for
    ``level_dtype`` is at hand (or there is no disk cache): the first search compiles
    :func:`_find` and its kernels meanwhile. ``wait()`` on the result before the first
    ``settle``.

    Examples
    --------
    >>> job = settle_elsewhere("int8")
    >>> job is None or job.wait() is None
    True
    """
    if compiled(kernels().settle, _settle_arguments(level_dtype)):
        return None
    return compile_elsewhere(
        "anonlab.algorithms.privacyfrost2._kernels:compile_settle", level_dtype
    )
