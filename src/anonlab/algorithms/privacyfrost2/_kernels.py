"""Compiled kernels of PrivacyFrost2: the partial-domain step (section 5.4, step 4) and the
full-domain search's table checks (5.2-5.4).

numba is imported here and nowhere else in anonlab (architecture rule 8); it is optional
(``pip install 'anonlab[fast]'``). :func:`kernels` compiles the functions below on first
use (cached on disk by numba) and returns them, or returns ``None`` when numba is missing
or ``ANONLAB_NO_NUMBA=1`` is set, in which case the numpy versions run.

The functions are plain Python written for numba's nopython mode: loops over base classes
and groups, no Python objects. :func:`_group_classes` (from the base classes),
:func:`_split_classes` (from the classes of a coarser table) and :func:`_class_hists`
compute the classes of a full-domain table (the search's checks); the others work on the
group state of
:class:`~anonlab.algorithms.privacyfrost2.partial._CompiledPartial`:

* base classes are *positions* ``0..n-1``: the base classes renumbered class by class of
  the full-domain table (``orig[r]`` is the base class at position ``r``), so that a
  group's members lie close together in memory;
* ``lv`` (n, m): the level of each attribute at each position; ``codes`` (m, n): the
  domain code at each position; ``dom`` (flat, ``dom_off``/``dom_w``): the label id of
  (attribute, level, domain code); ``down`` (m, n): the label a position takes when its
  group splits on an attribute (one level down, or its own on the lowest level), kept
  up to date by :func:`_commit` so that a split reads one array; both only where a
  position's group has members on several levels of the attribute: where they share one
  level (``guni``, below) that level is the group's ``gmax`` and the label one level down
  comes from the code (:func:`_down_base`), so that a group going down one level on an
  attribute without splitting is not walked (:func:`_levels_of` writes ``lv`` back);
* per group (capacity n, as groups partition the base classes): labels ``glab`` (m, n:
  attribute-major, so a scan of all groups on one attribute reads one row), a 64-bit tuple
  hash ``ghash`` (a sum of one random number ``fh`` per label), whether it is suppressed
  ``gviol``, its first base class ``gfirst`` (a base class number, not a position), the
  deepest level of its members per attribute ``gmax`` (n, m), its members
  ``mem[gstart : gstart + gcount]`` (a group's members are contiguous in ``mem``: a split
  divides its group's range), and three bit sets (n, words: one bit per attribute): the
  attributes it is a candidate on ``gcand`` (not suppressed, a member above the lowest
  level), those on which its split failed since it last changed ``gfail``, and those on
  which one of its members is doomed ``gdoom``; and the attributes on which its members
  share one level ``guni`` (a split keeps that, so the deepest level is known unwalked);
  its records ``gsize``; per attribute (m, n) a level on which its members' codes share
  one label ``gcl`` (see :func:`_split_into`);
  and per attribute (m, n) the label one level down that all its
  members share ``gdl`` (``-1``: not known to), so that its split on that attribute, which
  is then the group itself, needs no walk: set from the members where they are walked
  (the group state built, a split committed, a split found), and inherited by the split
  classes of a split on another attribute (a subset of members that shared one still do);
* ``doom`` (n, words): per position, the attributes on which it is *doomed*: its split
  class on that attribute was smaller than the minimal class size. The partial step only
  refines the partition (a group splits, a level goes down), so a doomed member's split
  class stays a subset of that class, too small, in every later group: a group with a
  doomed member on ``j`` fails on ``j`` by size without its members being walked;
* per label (flat, offsets ``lab_off``): how many base classes carry it ``lcount``, and
  scratch rows ``scratch`` (one per chunk of work run in parallel) that are all ``-1``
  between calls (``delta`` all ``0``).

:func:`_batch` runs a whole batch (find, judge, halving, commits) in one call when the
models are built-in and the score is tabulated (``Score.terms``), and :func:`_round` a whole
round of batches.

:func:`_find` and :func:`_commit` split their groups into contiguous chunks of about equal
members and run the chunks in parallel (``numba.prange``); each chunk writes only its own
groups' slots, so the result does not depend on the number of threads.

A group's split on attribute ``j`` regroups its members by their label on ``j`` one level
down (members already at the lowest level keep the group's label). Two groups whose label
tuples agree on every attribute but ``j`` form a *family* on ``j``: only within a family can
a split class coincide with another group's tuple (a merge), so entanglement is decided per
family with a hash table keyed on the tuple without ``j`` (exact: tuples are compared when
hashes agree).
"""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import Any

import numpy as np

__all__ = ["kernels"]

prange = range  # numba.prange once the kernels are compiled

_FIB = 0x9E3779B97F4A7C15  # 2^64 / golden ratio: multiplicative hashing
_CACHE: dict[str, Any] = {}


def _label(j, r, level, codes, dom, dom_off, dom_w):
    return dom[dom_off[j] + level * dom_w[j] + codes[j, r]]


def _zeros_b(n):
    """``np.zeros(n, bool)`` outside a parallel kernel (inside one, numba would make it a
    parallel loop of its own: a fork and join of the threads for a few bytes)."""
    return np.zeros(n, dtype=np.bool_)


def _zeros_i(n):
    """``np.zeros(n, int64)``, serial (see :func:`_zeros_b`)."""
    return np.zeros(n, dtype=np.int64)


def _zeros_u(n):
    """``np.zeros(n, uint64)``, serial (see :func:`_zeros_b`)."""
    return np.zeros(n, dtype=np.uint64)


def _zeros_i2(r, c):
    """``np.zeros((r, c), int64)``, serial (see :func:`_zeros_b`)."""
    return np.zeros((r, c), dtype=np.int64)


def _same_family(a, b, j, glab):
    for x in range(glab.shape[0]):
        if x != j and glab[x, a] != glab[x, b]:
            return False
    return True


def _down_base(G, j, guni, gmax, dom_off, dom_w, lo_j):
    """Where in ``dom`` the labels one level down (or their own, on the lowest level
    ``lo_j``) of group ``G``'s members' codes on ``j`` start, if its members share one
    level on ``j`` (``guni``: ``down`` is not kept for them, see :func:`_split_into`); else
    ``-1`` (read ``down``)."""
    if (guni[G, j >> 6] >> np.uint64(j & 63)) & np.uint64(1):
        return dom_off[j] + max(np.int64(gmax[G, j]) - 1, lo_j) * dom_w[j]
    return np.int64(-1)


def _shared_level(rows, lo, hi, cj, dom, doff, dw, lo_j, top):
    """The finest level from ``lo_j`` up (at most ``top``, where they share one) on which
    the codes ``cj`` of positions ``rows[lo:hi]`` share one label (``dom`` of the attribute
    at ``doff``, ``dw`` codes a level)."""
    y = np.int64(lo_j)
    c0 = cj[rows[lo]]
    ref = dom[doff + y * dw + c0]
    for i in range(lo, hi):
        c = cj[rows[i]]
        while y < top and dom[doff + y * dw + c] != ref:
            y += 1
            ref = dom[doff + y * dw + c0]
    return y


def _split_groups(
    lo, hi, sc, j, mcs, off, wj, bj, judged, xoff, down, bsize, gstart, gcount, mem, doom,
    gdoom, row_of, cls_of, s_label, s_size, s_nb, ncls, failed, gdl, gsize, guni, gmax, gcl,
    codes, dom, dom_off, dom_w, lo_j,
):  # fmt: skip
    """The split classes on ``j`` of judged groups ``lo:hi`` (one chunk of :func:`_find`,
    with its own scratch row ``sc``): per member its row and class within its group, per
    group its classes in slots ``xoff[a] + a + 0, 1, ...`` (label, size, base classes),
    their number and whether one is below ``mcs`` (then the members of too-small classes
    are doomed on ``j``). A group with no members to walk (``xoff``) is one whose members
    are known to share their label one level down (``gdl``): its one class is the group;
    a group walked and found so is remembered in ``gdl``. The members of a group on one
    level of ``j`` (``guni``) take their label from ``codes`` (``down`` is not kept for
    them); such a group found to be one class gets its shared level ``gcl`` on ``j``."""
    dj = down[j]
    cj = codes[j]
    for a in range(lo, hi):
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
        base = _down_base(G, j, guni, gmax, dom_off, dom_w, lo_j)
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
                gcl[j, G] = _shared_level(
                    row_of, xoff[a], x, cj, dom, dom_off[j], dom_w[j], lo_j, gmax[G, j]
                )  # fmt: skip
        if small:
            # the members of a too-small split class are doomed on j: the partition only
            # gets finer, so their split class on j stays too small in every later group
            gdoom[G, wj] |= bj
            for y in range(xoff[a], x):
                if s_size[x0 + cls_of[y]] < mcs:
                    doom[row_of[y], wj] |= bj


def _hist_groups(
    lo, hi, failed, judge_of, cstart, xoff, cls_of, row_of, sp_indptr, sp_val, sp_cnt, hist
):  # fmt: skip
    """The sensitive histograms of the classes of judged groups ``lo:hi`` that the models
    judge (one chunk of :func:`_find`): a group's classes are judged in a row."""
    for a in range(lo, hi):
        if judge_of[cstart[a]] < 0:  # failed on size, or one class: the group itself
            continue
        k0 = judge_of[cstart[a]]
        for x in range(xoff[a], xoff[a + 1]):
            k = k0 + cls_of[x]
            r = row_of[x]
            for e in range(sp_indptr[r], sp_indptr[r + 1]):
                hist[k, sp_val[e]] += sp_cnt[e]


def _ext_scan(
    lo, hi, j, off, judged, fh, glab, ghash, filt, fshift, table, mask, famh, ext_rep, ext_grp
):  # fmt: skip
    """The groups ``lo:hi`` not judged that are in the family on ``j`` of a judged group
    (one chunk of :func:`_entangled`'s scan, with its hash table ``table`` of the judged
    groups' families and their bits ``filt``): written as (representative, group) in
    ``ext_rep``/``ext_grp`` from ``lo`` on; returns how many."""
    fib = np.uint64(_FIB)
    three = np.uint64(3)
    nj = judged.size
    n = 0
    p = np.searchsorted(judged, lo)
    for H in range(lo, hi):
        if p < nj and judged[p] == H:  # (judged is ascending) its family is known
            p += 1
            continue
        h = ghash[H] - fh[off + glab[j, H]]
        f = (h * fib) >> fshift
        if not (filt[f >> np.uint64(6)] >> (f & np.uint64(63))) & np.uint64(1):
            continue
        s = np.int64(f >> three)
        while table[s] != -1:
            b = table[s]
            if famh[b] == h and _same_family(judged[b], H, j, glab):
                ext_rep[lo + n] = b
                ext_grp[lo + n] = H
                n += 1
                break
            s = (s + 1) & mask
    return n


def _entangled(
    j, g, judged, off, card, fh, glab, ghash, gcand, gstart, gcount, mem, down, cstart,
    cls_label, sc0, ent, gdl, guni, gmax, codes, dom, dom_off, dom_w, lo_j, n_chunks,
):  # fmt: skip
    """Which judged groups' splits on ``j`` would merge with another group (``ent``): per
    family on ``j`` (a hash table keyed on the tuple without ``j``), whether the label sets
    on ``j`` of its groups intersect (for :func:`_find`; ``sc0``: a scratch row)."""
    fib = np.uint64(_FIB)
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
    fam_cnt = _zeros_i(nj)
    # a bit per slot of a table 8 times larger, set for the families of judged groups: most
    # groups are in none of them, and the bits (2 bytes per judged group) stay in cache
    fshift = np.uint64(64 - bits - 3)
    three = np.uint64(3)
    filt = _zeros_u(((size << 3) >> 6) + 1)
    for a in range(nj):
        G = judged[a]
        h = ghash[G] - fh[off + glab[j, G]]
        famh[a] = h
        f = (h * fib) >> fshift
        filt[f >> np.uint64(6)] |= np.uint64(1) << (f & np.uint64(63))
        s = np.int64(f >> three)
        while table[s] != -1:
            b = table[s]
            if famh[b] == h and _same_family(judged[b], G, j, glab):
                break
            s = (s + 1) & mask
        if table[s] == -1:
            table[s] = a
        jrep[a] = table[s]
        fam_cnt[jrep[a]] += 1
    # the other groups in the family of a judged group: (representative, group), found in
    # chunks of groups in parallel, each written from its chunk's start, then packed
    ext_rep = np.empty(g, dtype=np.int64)
    ext_grp = np.empty(g, dtype=np.int64)
    n_in = _zeros_i(n_chunks)
    for t in prange(n_chunks):
        n_in[t] = _ext_scan(
            (g * t) // n_chunks, (g * (t + 1)) // n_chunks, j, off, judged, fh, glab, ghash,
            filt, fshift, table, mask, famh, ext_rep, ext_grp,
        )  # fmt: skip
    n_ext = 0
    for t in range(n_chunks):
        at = (g * t) // n_chunks
        for e in range(at, at + n_in[t]):
            ext_rep[n_ext] = ext_rep[e]
            ext_grp[n_ext] = ext_grp[e]
            fam_cnt[ext_rep[e]] += 1
            n_ext += 1
    multi = 0
    for a in range(nj):
        if fam_cnt[a] > 1:
            multi += 1
    if multi:
        # families of two or more groups: do their label sets on j intersect?
        pos = _zeros_i(nj + 1)
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
        hit = _zeros_b(pos[nj])
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
                # its labels on j: the current one (kept if its split is not), then those
                # of its split classes: known if it is judged or its members share one
                # (gdl), else from its members
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
                        base = _down_base(H, j, guni, gmax, dom_off, dom_w, lo_j)
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
                        lab = down[j, r] if base < 0 else dom[base + codes[j, r]]
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


def _find(
    j, g, mcs, down, fh, lab_off, bsize, glab, ghash, gcand, gfail, gstart, gcount, mem,
    scratch, sp_indptr, sp_val, sp_cnt, nv, doom, gdoom, total, total_hist, gdl, gsize, guni,
    gmax, gcl, codes, dom, dom_off, dom_w, lo_lv,
):  # fmt: skip
    """One batch on attribute ``j``: the candidate groups, which are judged, their split
    classes, the classes the models must judge and their sensitive histograms.

    Returns ``(n_cand, judged, entangled, failed, cls_group, judge_of_class, judge_size,
    hist, cstart, cls_label, cls_nb, xoff, row_of, cls_of)``: groups with candidates (not
    suppressed), the groups
    judged now (not known to fail since their last change), per judged group whether its
    split would merge with another group and whether a split class is below ``mcs``; per
    split class its judged group; per class the row of ``hist``/``judge_size`` the models
    judge (``-1``: its group already failed on size, or it is its group's only class, which
    keeps the group's records and verdict); the split classes of judged group
    ``a`` are ``cstart[a]:cstart[a+1]``, each with its label on ``j`` and its number of base
    classes (for :func:`_e_after`); the members of judged group ``a`` are
    ``row_of[xoff[a]:xoff[a+1]]`` (in ``mem`` order), each with its split class counted
    within the group in ``cls_of`` (for :func:`_commit`), none if its members are known to
    share their label one level down (``gdl``): it is not walked. ``judge_size`` and ``hist`` have
    one more row, last: the records of every other class as one class (``total`` records,
    ``total_hist`` their sensitive counts), so the models see the whole table's
    distribution. The split classes and histograms are computed in ``scratch.shape[0]``
    chunks of judged groups in parallel.
    """
    off = lab_off[j]
    wj = j >> 6
    bj = np.uint64(1) << np.uint64(j & 63)
    nj = np.int64(0)
    n_cand = np.int64(0)
    sh = np.uint64(j & 63)
    one = np.uint64(1)
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
    ent = _zeros_b(nj)
    failed = _zeros_b(nj)
    if nj == 0:
        e64 = _zeros_i(0)
        h1 = _zeros_i2(1, nv)
        s1 = np.full(1, total, dtype=np.int64)
        z1 = _zeros_i(1)
        return n_cand, judged, ent, failed, e64, e64, s1, h1, z1, e64, e64, z1, e64, e64
    # --- split classes of the judged groups (their labels also decide entanglement), in
    # contiguous chunks of groups of about equal members, one per scratch row (in parallel)
    # group a's members are row_of[xoff[a]:xoff[a+1]]: none for a group whose members are
    # known to share their label one level down (it splits into itself, unwalked)
    xoff = np.empty(nj + 1, dtype=np.int64)
    xoff[0] = 0
    for a in range(nj):
        G = judged[a]
        walk = gdl[j, G] < 0 or gsize[G] < mcs
        xoff[a + 1] = xoff[a] + (gcount[G] if walk else 0)
    n_rows = xoff[nj]
    n_chunks = scratch.shape[0]
    bounds = _chunk_bounds(xoff, n_chunks)
    row_of = np.empty(n_rows, dtype=np.int64)
    cls_of = np.empty(n_rows, dtype=np.int64)  # its split class, counted within its group
    # the split classes of group a in slots xoff[a] + a + 0, 1, ... (a group has at most as
    # many classes as members, and one if not walked)
    s_label = np.empty(n_rows + nj, dtype=np.int64)
    s_size = np.empty(n_rows + nj, dtype=np.int64)
    s_nb = np.empty(n_rows + nj, dtype=np.int64)
    ncls = np.empty(nj, dtype=np.int64)
    for t in prange(n_chunks):
        _split_groups(
            bounds[t], bounds[t + 1], scratch[t], j, mcs, off, wj, bj, judged, xoff, down,
            bsize, gstart, gcount, mem, doom, gdoom, row_of, cls_of, s_label, s_size, s_nb,
            ncls, failed, gdl, gsize, guni, gmax, gcl, codes, dom, dom_off, dom_w, lo_lv[j],
        )  # fmt: skip
    # the classes numbered group after group
    cstart = np.empty(nj + 1, dtype=np.int64)
    cstart[0] = 0
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
    _entangled(
        j, g, judged, off, lab_off[j + 1] - off, fh, glab, ghash, gcand, gstart, gcount, mem,
        down, cstart, cls_label, scratch[0], ent, gdl, guni, gmax, codes, dom, dom_off, dom_w,
        lo_lv[j], n_chunks,
    )  # fmt: skip
    # --- histograms of the classes the models judge: those of groups not failed on size
    # that split into two or more (a group splitting into itself keeps its records, and
    # so its verdict: it is not suppressed, and every model judges a class by its own
    # records and the whole table's)
    judge_of = np.full(nc, -1, dtype=np.int64)
    nk = 0
    for c in range(nc):
        a = cls_group[c]
        if not failed[a] and cstart[a + 1] - cstart[a] > 1:
            judge_of[c] = nk
            nk += 1
    judge_size = np.empty(nk + 1, dtype=np.int64)
    rest = total
    for c in range(nc):
        if judge_of[c] >= 0:
            judge_size[judge_of[c]] = cls_size[c]
            rest -= cls_size[c]
    judge_size[nk] = rest
    hist = _zeros_i2(nk + 1, nv)
    if nv:
        for t in prange(n_chunks):
            _hist_groups(
                bounds[t], bounds[t + 1], failed, judge_of, cstart, xoff, cls_of, row_of,
                sp_indptr, sp_val, sp_cnt, hist,
            )  # fmt: skip
        for v in range(nv):
            hist[nk, v] = total_hist[v]
        for k in range(nk):
            for v in range(nv):
                hist[nk, v] -= hist[k, v]
    return (
        n_cand, judged, ent, failed, cls_group, judge_of, judge_size, hist, cstart,
        cls_label, cls_nb, xoff, row_of, cls_of,
    )  # fmt: skip


def _chunk_bounds(xoff, n_chunks):
    """Split the items with running totals ``xoff`` (``xoff[a]`` before item ``a``, the
    total last) into ``n_chunks`` contiguous chunks of about equal totals: chunk ``t`` is
    items ``bounds[t]:bounds[t + 1]``."""
    n = xoff.size - 1
    bounds = np.empty(n_chunks + 1, dtype=np.int64)
    bounds[0] = 0
    a = 0
    for t in range(1, n_chunks):
        target = (xoff[n] * t) // n_chunks
        while a < n and xoff[a] < target:
            a += 1
        bounds[t] = a
    bounds[n_chunks] = n
    return bounds


def _e_after(j, which, judged, e_j, cstart, cls_label, cls_nb, lab_off, glab, lcount, delta):
    """``e`` of attribute ``j`` (distinct labels over the base classes) after splitting
    the judged groups ``judged[which]``, from their split classes as :func:`_find` found
    them (no member is walked)."""
    off = lab_off[j]
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


def _commit(
    j, lo, which, judged, cstart, cls_label, cls_nb, xoff, row_of, cls_of, g, lv, down, codes,
    dom, dom_off, dom_w, fh, lab_off, orig, gid, glab, ghash, gcand, gfail, gfirst, gmax, guni,
    gstart, gcount, mem, lcount, doom, gdoom, n_chunks, bsize, gdl, gsize, gcl,
):  # fmt: skip
    """Split the judged groups ``judged[which]`` of the last :func:`_find` on ``j`` into the
    split classes it found (``cstart``, ``cls_label``, ``cls_nb``; per member ``row_of`` and
    ``cls_of``, group ``a``'s at ``xoff[a]:xoff[a+1]``): levels, label counts and the group
    state. Each split class becomes a group (the first one keeps the group's id) whose
    members are a contiguous part of the split group's range of ``mem`` (in the same order).
    New groups are numbered in the order of ``which`` (table order: later steps read the
    groups of base classes in that order), but split in ``n_chunks`` chunks in parallel in
    the order of their ids (``judged`` is ascending), so that the group state is read and
    written front to back, not at random. Returns the new number of groups."""
    off = lab_off[j]
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
    wx = np.empty(which.size + 1, dtype=np.int64)  # running member totals, for the chunks
    wx[0] = 0
    for i in range(which.size):
        wx[i + 1] = wx[i] + gcount[judged[which[i]]]
    bounds = _chunk_bounds(wx, n_chunks)
    cdl = np.empty(n_cls, dtype=np.int64)  # per split class: its members' next label
    for t in prange(n_chunks):
        _split_into(
            bounds[t], bounds[t + 1], j, which, judged, cstart, cls_label, cls_nb, xoff,
            row_of, cls_of, ct, cat, lo, lv, down, codes, dom, dom_off, dom_w, fh, off, orig,
            gid, glab, ghash, gcand, gfail, gfirst, gmax, guni, gstart, gcount, mem, doom, gdoom,
            bsize, gdl, gsize, cdl, gcl,
        )  # fmt: skip
    return g


def _score(e, is_max, terms, term_off):
    """The score of counts ``e`` from its tabulated terms (``Score.terms``): their sum, or
    their maximum when ``is_max``."""
    s = 0.0
    for x in range(e.size):
        t = terms[term_off[x] + e[x]]
        if is_max:
            s = t if x == 0 or t > s else s
        else:
            s += t
    return s


def _order_of(keys, n_keys):
    """The order that sorts ``keys`` (distinct integers ``0..n_keys-1``): by insertion for a
    few, by their slots in ``0..n_keys-1`` when they fill a good part of them, else by a
    least-significant-digit radix sort, 8 bits a pass (numba's ``np.argsort`` is several
    times slower on the thousands of groups of a batch)."""
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


def _batch(
    j, g, mcs, lv, down, codes, dom, dom_off, dom_w, fh, lab_off, bsize, glab, ghash, gcand,
    gfail, gstart, gcount, mem, scratch, sp_indptr, sp_val, sp_cnt, nv, doom, gdoom, total,
    total_hist, kinds, offs, widths, ipar, fpar, lo, orig, gfirst, gmax, guni, gid, lcount,
    delta, n_chunks, ok, e, s, is_max, terms, term_off, out, gdl, gsize, gcl,
):  # fmt: skip
    """One whole batch on attribute ``j`` with built-in models and a tabulated score: the
    split of every candidate group (:func:`_find`), the models' verdicts (:func:`_judge`),
    then the passing groups' splits applied together if the score does not drop, else each
    half in table order, down to single groups (:func:`_e_after`, :func:`_commit`), as
    ``_CompiledPartial`` does it step by step in Python.

    ``e`` (the counts of the table) is updated in place; ``out`` receives the tables
    checked, the groups left alone as entangled, the groups split and the commits. Returns
    ``(score, number of groups)``.
    """
    for i in range(4):
        out[i] = 0
    (
        n_cand, judged, ent, failed, cls_group, judge_of, judge_size, hist, cstart, cls_label,
        cls_nb, xoff, row_of, cls_of,
    ) = _find(
        j, g, mcs, down, fh, lab_off, bsize, glab, ghash, gcand, gfail, gstart, gcount, mem,
        scratch, sp_indptr, sp_val, sp_cnt, nv, doom, gdoom, total, total_hist, gdl, gsize, guni,
        gmax, gcl, codes, dom, dom_off, dom_w, lo,
    )  # fmt: skip
    if n_cand == 0:
        return s, g
    out[0] = 1  # the table with every candidate group split
    nk = judge_size.size - 1
    if nk > 0:
        bad = np.empty(nk, dtype=np.bool_)
        _judge(judge_size, hist, nk, total_hist, mcs, kinds, offs, widths, ipar, fpar, bad)
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
    passing = passing[_order_of(first, gid.size)]  # table order (first base classes differ)
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
            e_j = _e_after(
                j, which, judged, e[j], cstart, cls_label, cls_nb, lab_off, glab, lcount, delta
            )  # fmt: skip
            before = e[j]
            e[j] = e_j
            s_new = _score(e, is_max, terms, term_off)
            if s_new >= s:
                g = _commit(
                    j, lo, which, judged, cstart, cls_label, cls_nb, xoff, row_of, cls_of, g,
                    lv, down, codes, dom, dom_off, dom_w, fh, lab_off, orig, gid, glab, ghash,
                    gcand, gfail, gfirst, gmax, guni, gstart, gcount, mem, lcount, doom, gdoom,
                    n_chunks, bsize, gdl, gsize, gcl,
                )  # fmt: skip
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


def _round(
    order, memo_ver, memo_chk, memo_ent, version, tot, g, mcs, lv, down, codes, dom, dom_off,
    dom_w, fh, lab_off, bsize, glab, ghash, gcand, gfail, gstart, gcount, mem, scratch,
    sp_indptr, sp_val, sp_cnt, nv, doom, gdoom, total, total_hist, kinds, offs, widths, ipar,
    fpar, lo, orig, gfirst, gmax, guni, gid, lcount, delta, n_chunks, ok, e, s, is_max, terms,
    term_off, out, gdl, gsize, gcl,
):  # fmt: skip
    """One round of the partial-domain step (PrivacyFrost2 5.4, step 4) in one call, with
    built-in models and a tabulated score: each attribute of ``order`` de-generalized batch
    after batch (:func:`_batch`) while a batch changes the table, as ``_Rounds.run`` does
    it from Python. A batch that changed nothing is not repeated while the table stays the
    same (its ``version``): per attribute, the version it was tried in vain at
    (``memo_ver``), and its tables checked and groups left alone (``memo_chk``,
    ``memo_ent``), counted again.

    ``tot`` receives the tables checked, the groups left alone as entangled, the groups
    split, the table's new version and whether it changed. Returns ``(score, number of
    groups)``."""
    for i in range(5):
        tot[i] = 0
    for i in range(order.size):
        j = order[i]
        while True:
            if memo_ver[j] == version:  # tried in vain on this table: the same outcome
                tot[0] += memo_chk[j]
                tot[1] += memo_ent[j]
                break
            s, g = _batch(
                j, g, mcs, lv, down, codes, dom, dom_off, dom_w, fh, lab_off, bsize, glab,
                ghash, gcand, gfail, gstart, gcount, mem, scratch, sp_indptr, sp_val, sp_cnt,
                nv, doom, gdoom, total, total_hist, kinds, offs, widths, ipar, fpar, lo, orig,
                gfirst, gmax, guni, gid, lcount, delta, n_chunks, ok, e, s, is_max, terms,
                term_off, out, gdl, gsize, gcl,
            )  # fmt: skip
            tot[0] += out[0]
            tot[1] += out[1]
            if out[3] == 0:
                memo_ver[j] = version
                memo_chk[j] = out[0]
                memo_ent[j] = out[1]
                break
            tot[2] += out[2]
            version += out[3]
            tot[4] = 1
    tot[3] = version
    return s, g


def _split_into(
    lo, hi, j, which, judged, cstart, cls_label, cls_nb, xoff, row_of, cls_of, ct, cat,
    lo_lv, lv, down, codes, dom, dom_off, dom_w, fh, off, orig, gid, glab, ghash, gcand, gfail,
    gfirst, gmax, guni, gstart, gcount, mem, doom, gdoom, bsize, gdl, gsize, cdl, gcl,
):  # fmt: skip
    """Split groups ``judged[which[lo:hi]]`` (one chunk of :func:`_commit`) into the groups
    ``ct`` of their split classes, whose members start at ``cat`` in ``mem``; ``lo_lv``: the
    lowest level of each attribute. On an attribute where a group's members share one level
    (``guni``, one bit per attribute) its split classes' deepest level is known without
    walking them: the same, or one less on ``j``. A split class's members share their
    label one level down on an attribute other than ``j`` if its group's did (``gdl``); on
    ``j`` it is found as they are walked (``cdl``: per split class, scratch). A group that
    :func:`_find` did not walk (one class, the group itself) is walked here in ``mem``.

    On ``j`` where a group's members share one level (``uni_j``), ``lv`` and ``down`` are
    not kept (the level is the group's ``gmax``, the label one level down comes from the
    code, :func:`_down_base`; :func:`_levels_of` writes the levels back): a group that
    splits into itself then only goes down one level, unwalked, and its members share their
    next label if they share one on a level at least ``gcl`` (per attribute and group: a
    level on which its members' codes share one label: inherited by split classes, whose
    members are a subset, made exact where a find walks a group that splits into itself,
    and else found by walking the group once when it is not low enough), read on the code
    of its first member in ``mem`` (any member gives the same label there)."""
    m = glab.shape[0]
    nw = doom.shape[1]
    n = gid.size
    lo_j = lo_lv[j]
    pmax = np.empty(m, dtype=np.int64)  # the split group's deepest levels
    walk = np.empty(m, dtype=np.int64)  # the attributes on which its levels differ
    puni = np.empty(nw, dtype=np.uint64)
    keep = np.empty(nw, dtype=np.uint64)  # candidate bits the split classes inherit
    bj = np.uint64(1) << np.uint64(j & 63)
    for i in range(lo, hi):
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
                    gcl[j, G] = _shared_level(
                        mem, gstart[G], gstart[G] + gcount[G], codes[j], dom, dom_off[j],
                        dom_w[j], lo_j, top,
                    )  # fmt: skip
                dl = np.int64(-1)
                if y >= gcl[j, G]:
                    dl = np.int64(dom[dom_off[j] + y * dom_w[j] + codes[j, mem[gstart[G]]]])
            else:
                dl = np.int64(-2)
                top = np.int64(-1)
                # (this lowering repeats the loop below on purpose: as two inlined helpers
                # shared with it and _build_groups it made Adult k = 2 about 11 ms slower)
                for q in range(gstart[G], gstart[G] + gcount[G]):
                    r = mem[q]
                    if lv[r, j] > lo_j:
                        lv[r, j] -= 1
                        down[j, r] = _label(
                            j, r, max(lv[r, j] - 1, lo_j), codes, dom, dom_off, dom_w
                        )  # fmt: skip
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
        dbase = dom_off[j] + max(pmax[j] - 1, lo_j) * dom_w[j]
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
                    down[j, r] = _label(j, r, max(lv[r, j] - 1, lo_j), codes, dom, dom_off, dom_w)
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


def _set_candidate(G, lo_lv, gmax, gcand, gfail):
    """The candidate bits of a group ``G`` not suppressed whose members were just set: a
    candidate on the attributes where a member is above the lowest level, no split of it
    failed yet (for :func:`_build_groups`)."""
    for w in range(gcand.shape[1]):
        gcand[G, w] = 0
        gfail[G, w] = 0
    for x in range(gmax.shape[1]):
        if gmax[G, x] > lo_lv[x]:
            gcand[G, x >> 6] |= np.uint64(1) << np.uint64(x & 63)


def _build_groups(
    gid, g, lv, codes, dom, dom_off, dom_w, fh, lab_off, orig, glab, ghash, gfirst, gmax,
    gstart, gcount, mem, lcount, doom, gdoom, gviol, lo_lv, gcand, gfail, guni, down, bsize,
    gdl, gsize, gcl,
):  # fmt: skip
    """The group state of a table given as the group of each base class (``orig``: the
    base class number of each position, for ``gfirst``); a group's labels are those of
    its first member (all its members share them). ``lcount``: base classes per label.
    A group not suppressed (``gviol``) is a candidate (``gcand``) on the attributes where a
    member is above the lowest level ``lo_lv``; none has failed (``gfail``). ``guni``: the
    attributes on which its members share one level. ``down``: each position's label one
    level down (its own on the lowest level); ``gdl``: per attribute, the label one level
    down that all of a group's members share, or ``-1``; ``gcl``: per attribute, a level
    on which its members' codes share one label (read where they share one level, see
    :func:`_split_into`): their deepest.
    ``gsize``: its records."""
    m = lv.shape[1]
    nw = doom.shape[1]
    n = gid.size
    gmin = np.empty((g, m), dtype=np.int64)
    for G in range(g):
        gcount[G] = 0
        gsize[G] = 0
        gfirst[G] = n
        for x in range(m):
            gdl[x, G] = -2  # none seen yet
        for x in range(m):
            gmax[G, x] = -1
            gmin[G, x] = 1 << 30
        for w in range(nw):
            gdoom[G, w] = 0
    for r in range(n):
        G = gid[r]
        if gcount[G] == 0:
            for x in range(m):
                glab[x, G] = _label(x, r, lv[r, x], codes, dom, dom_off, dom_w)
        gcount[G] += 1
        gsize[G] += bsize[r]
        if orig[r] < gfirst[G]:
            gfirst[G] = orig[r]
        for x in range(m):
            gmax[G, x] = max(gmax[G, x], lv[r, x])
            gmin[G, x] = min(gmin[G, x], lv[r, x])
        for w in range(nw):
            gdoom[G, w] |= doom[r, w]
    for x in range(m):  # attribute by attribute: each row of down is written in order
        lo_x = lo_lv[x]
        for r in range(n):
            d = _label(x, r, max(lv[r, x] - 1, lo_x), codes, dom, dom_off, dom_w)
            down[x, r] = d
            G = gid[r]
            if gdl[x, G] == -2:
                gdl[x, G] = d
                gcl[x, G] = gmax[G, x]  # (where its members share one level, they share it)
            elif gdl[x, G] != d:
                gdl[x, G] = -1
    for G in range(g):
        for w in range(nw):
            guni[G, w] = 0
        for x in range(m):
            if gmin[G, x] == gmax[G, x]:
                guni[G, x >> 6] |= np.uint64(1) << np.uint64(x & 63)
    fill = np.empty(g, dtype=np.int64)
    at = 0
    for G in range(g):
        gstart[G] = at
        fill[G] = at
        at += gcount[G]
    for r in range(n):
        G = gid[r]
        mem[fill[G]] = r
        fill[G] += 1
    for q in range(lcount.size):
        lcount[q] = 0
    for G in range(g):
        h = np.uint64(0)
        for x in range(m):
            h += fh[lab_off[x] + glab[x, G]]
            lcount[lab_off[x] + glab[x, G]] += gcount[G]
        ghash[G] = h
        _set_candidate(G, lo_lv, gmax, gcand, gfail)
        if gviol[G]:
            for w in range(gcand.shape[1]):
                gcand[G, w] = 0


def _levels_of(g, lv, gmax, guni, gstart, gcount, mem, orig, out):
    """``out[orig[r], x]``: the level of attribute ``x`` at each position ``r``, from ``lv``
    or, where it is not kept (its group's members share one level, ``guni``, see
    :func:`_split_into`), the group's ``gmax``. With ``out`` = ``lv`` and ``orig`` the
    positions themselves it writes ``lv`` back."""
    m = lv.shape[1]
    for G in range(g):
        for q in range(gstart[G], gstart[G] + gcount[G]):
            r = mem[q]
            o = orig[r]
            for x in range(m):
                if (guni[G, x >> 6] >> np.uint64(x & 63)) & np.uint64(1):
                    out[o, x] = gmax[G, x]
                else:
                    out[o, x] = lv[r, x]


def _hash_groups(packed, weights, tkeys, tvals, out):
    """Group the rows of ``packed`` (n, words: each row's key) exactly: row ``r`` goes to
    the class of its key, numbered in the order first met, in ``out``. A hash table
    (``tkeys`` all ``-1`` between calls, ``tvals``; a power of two of at least twice the
    rows) keys a representative row per class, whose words are compared. Returns
    ``(g, sizes)``: the number of classes and the sum of ``weights`` in each."""
    n, nw = packed.shape
    bits = 4
    while (1 << bits) < 2 * n:
        bits += 1
    mask = (1 << bits) - 1
    shift = np.uint64(64 - bits)
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


def _dense_groups(packed, weights, table, out):
    """:func:`_hash_groups` of rows with one key word below ``table.size``, by direct
    addressing: ``table`` (all ``-1`` between calls) holds the class of each key met. The
    same classes, numbered the same way (the search's coarse tables have a small key
    space: a lookup in a table that stays in cache instead of a hash and a probe)."""
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


def _split_classes(ids, keys, x, maps, moff, card, weights, tkeys, tvals, out):
    """The classes of a table one level finer on one attribute than a table whose classes
    are ``ids`` (the full-domain search's refinement, 5.3): base class ``r`` goes to the
    class of ``(ids[r], maps[moff + keys[r, x]])`` (the label of attribute ``x``, one of
    ``card``), numbered in the order first met, in ``out`` (:func:`_hash_groups`; ``tkeys``
    and ``tvals`` as there). Returns ``(g, sizes)``: the number of classes and the sum of
    ``weights`` in each."""
    n = ids.size
    packed = np.empty((n, 1), dtype=np.int64)
    top = np.int64(0)
    for r in range(n):
        packed[r, 0] = np.int64(ids[r]) * card + maps[moff + keys[r, x]]
        top = max(top, packed[r, 0])
    if top < tkeys.size:  # a key space that tkeys addresses directly (:func:`_dense_groups`)
        return _dense_groups(packed, weights, tkeys, out)
    return _hash_groups(packed, weights, tkeys, tvals, out)


def _group_classes(keys, cols, cards, maps, moff, weights, tkeys, tvals, out):
    """The classes of a full-domain table grouped from the base classes (the search's
    check of a table with no checked coarser neighbour, 5.2): base class ``r`` goes to the
    class of its labels ``maps[moff[i] + keys[r, cols[i]]]`` (``cards[i]`` of them) over the
    attributes ``cols``, numbered in the order first met, in ``out``. The labels are packed
    into mixed-radix words below ``2**62`` (one word while they fit) and grouped by
    :func:`_hash_groups` (``tkeys`` and ``tvals`` as there). Returns ``(g, sizes)`` as
    :func:`_split_classes`."""
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
    if nw == 1 and space <= tkeys.size:  # (:func:`_dense_groups`)
        return _dense_groups(packed, weights, tkeys, out)
    return _hash_groups(packed, weights, tkeys, tvals, out)


def _domain_sizes(keys, weights, off, out):
    """The records of each base domain code of every attribute, side by side (the search's
    single-attribute class sizes, 5.2): ``out[off[x] + keys[r, x]] += weights[r]`` over
    the base classes ``r`` (one pass over the keys, row by row)."""
    for r in range(keys.shape[0]):
        w = weights[r]
        for x in range(keys.shape[1]):
            out[off[x] + keys[r, x]] += w


def _class_hists(ids, g, cls, val, cnt, nv):
    """Sensitive histograms (g, nv) of the classes ``ids`` of the base classes, from the
    base classes' non-zero counts ``(cls, val, cnt)``."""
    hist = np.zeros((g, nv), dtype=np.int64)
    for e in range(cls.size):
        hist[ids[cls[e]], val[e]] += cnt[e]
    return hist


def _judge(sizes, hist, nk, total_hist, mcs, kinds, offs, widths, ipar, fpar, bad):
    """Which of the classes ``0..nk-1`` violate the built-in models (see
    :func:`~anonlab.algorithms.privacyfrost2._common.judge_spec`): ``bad[c]``
    is set; returns the records of the violating classes.

    ``hist`` holds each class's sensitive counts, every sensitive attribute side by side
    (model ``q`` reads columns ``offs[q] : offs[q] + widths[q]``); ``total_hist`` the whole
    table's. The arithmetic is the models' own: counts and the t-closeness numerators are
    exact integers (as floats), divided once, so every verdict equals ``class_ok``'s.
    """
    nm = kinds.size
    ntot = np.zeros(nm, dtype=np.int64)
    for q in range(nm):
        for v in range(widths[q]):
            ntot[q] += total_hist[offs[q] + v]
    top = np.zeros(max(hist.shape[1], 1), dtype=np.int64)
    rows = np.int64(0)
    for c in range(nk):
        fail = sizes[c] < mcs
        for q in range(nm):
            if fail:
                break
            kind, off, w = kinds[q], offs[q], widths[q]
            if kind == 0:  # k-anonymity: at least k records
                fail = sizes[c] < ipar[q]
            elif kind == 1:  # distinct l-diversity: at least l values
                d = 0
                for v in range(w):
                    if hist[c, off + v] > 0:
                        d += 1
                fail = d < ipar[q]
            elif kind == 2:  # recursive (c,l)-diversity: r_1 < c (r_l + ... + r_m)
                d = 0
                tail = np.int64(0)
                for v in range(w):
                    x = hist[c, off + v]
                    if x > 0:
                        top[d] = x
                        d += 1
                    tail += x
                lq = ipar[q]
                top[:d].sort()  # ascending: the l - 1 largest are the last
                head = top[d - 1] if d else np.int64(0)
                for u in range(max(d - (lq - 1), 0), d):
                    tail -= top[u]
                fail = d < lq or not (float(head) < fpar[q] * float(tail))
            else:  # equal-distance t-closeness: sum |n p_count - f N| / (2 N n) <= t
                n_tot = ntot[q]
                n = np.int64(0)
                for v in range(w):
                    n += hist[c, off + v]
                num = 0.0
                for v in range(w):
                    num += abs(
                        float(n) * float(total_hist[off + v])
                        - float(hist[c, off + v]) * float(n_tot)
                    )
                den = 2.0 * float(n_tot) * float(n if n > 1 else 1)
                fail = not (den > 0.0 and num / den <= fpar[q])  # 0 / 0 fails, as NaN
        bad[c] = fail
        if fail:
            rows += sizes[c]
    return rows


def _counting_order(keys, n_keys):
    """The stable sort order of ``keys`` (integers ``0..n_keys-1``) by counting, and the
    start of each key's run in it (``n_keys + 1`` offsets)."""
    start = np.zeros(n_keys + 1, dtype=np.int64)
    for i in range(keys.size):
        start[keys[i] + 1] += 1
    for k in range(n_keys):
        start[k + 1] += start[k]
    fill = start[:n_keys].copy()
    order = np.empty(keys.size, dtype=np.int64)
    for i in range(keys.size):
        k = keys[i]
        order[fill[k]] = i
        fill[k] += 1
    return order, start


def _take_rows(keys, at, out):
    """``out[x, i] = keys[at[i], x]``: rows ``at`` of ``keys`` (n, m), transposed."""
    for i in range(at.size):
        r = at[i]
        for x in range(keys.shape[1]):
            out[x, i] = keys[r, x]


def _keys_of(gid, glab, at, out):
    """``out[x, o]``: the label of attribute ``x`` of base class ``o`` (its group's; ``at[o]``
    is its position)."""
    for o in range(at.size):
        G = gid[at[o]]
        for x in range(glab.shape[0]):
            out[x, o] = glab[x, G]


def kernels() -> SimpleNamespace | None:
    """The compiled kernels, or ``None`` if numba is not installed (or
    ``ANONLAB_NO_NUMBA=1``). Compiled once per process (numba caches the machine code on
    disk, so later processes load it)."""
    if os.environ.get("ANONLAB_NO_NUMBA", "") not in ("", "0"):
        return None
    if "k" in _CACHE:
        return _CACHE["k"]  # type: ignore[no-any-return]
    try:
        import numba
    except ImportError:
        _CACHE["k"] = None
        return None

    def jit(f: Any, inline: bool = False, parallel: bool = False) -> Any:
        how: Any = "always" if inline else "never"
        return numba.njit(cache=True, nogil=True, inline=how, parallel=parallel)(f)

    g = globals()
    g["prange"] = numba.prange
    g["_label"] = jit(_label, inline=True)  # the kernels call the compiled helpers
    g["_same_family"] = jit(_same_family, inline=True)
    for name in ("_zeros_b", "_zeros_i", "_zeros_u", "_zeros_i2"):
        g[name] = jit(g[name])
    g["_down_base"] = jit(_down_base, inline=True)
    g["_shared_level"] = jit(_shared_level)
    g["_split_groups"] = jit(_split_groups)
    g["_hist_groups"] = jit(_hist_groups)
    g["_split_into"] = jit(_split_into)
    g["_chunk_bounds"] = jit(_chunk_bounds)
    g["_ext_scan"] = jit(_ext_scan)
    g["_entangled"] = jit(_entangled, parallel=True)
    g["_set_candidate"] = jit(_set_candidate)
    g["_score"] = jit(_score, inline=True)
    g["_order_of"] = jit(_order_of)
    g["_hash_groups"] = jit(_hash_groups)
    g["_dense_groups"] = jit(_dense_groups)
    # the kernels that _batch calls, compiled
    g["_find"] = jit(_find, parallel=True)
    g["_commit"] = jit(_commit, parallel=True)
    g["_e_after"] = jit(_e_after)
    g["_judge"] = jit(_judge)
    g["_batch"] = jit(_batch)
    ns = SimpleNamespace(
        # chunks of work run in parallel: one per thread, up to 8 (a scratch row each)
        chunks=max(1, min(8, int(numba.get_num_threads()))),
        find=_find,
        commit=_commit,
        e_after=_e_after,
        batch=_batch,
        round=jit(_round),
        build_groups=jit(_build_groups),
        levels_of=jit(_levels_of),
        keys_of=jit(_keys_of),
        take_rows=jit(_take_rows),
        counting_order=jit(_counting_order),
        split_classes=jit(_split_classes),
        group_classes=jit(_group_classes),
        class_hists=jit(_class_hists),
        domain_sizes=jit(_domain_sizes),
        judge=_judge,
    )
    _CACHE["k"] = ns
    return ns
