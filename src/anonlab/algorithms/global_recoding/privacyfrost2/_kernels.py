"""Compiled kernels of PrivacyFrost2: the partial-domain step (section 5.4, step 4) and the
full-domain search's table checks (5.2-5.4).

numba is imported here and nowhere else in anonlab (architecture rule 8); it is optional
(``pip install 'anonlab[fast]'``). :func:`kernels` compiles the functions below on first
use (cached on disk by numba) and returns them, or returns ``None`` when numba is missing
or ``ANONLAB_NO_NUMBA=1`` is set, in which case the numpy versions run.

The functions are plain Python written for numba's nopython mode: loops over base classes
and groups, no Python objects. :func:`_split_classes` and :func:`_class_hists` compute the
classes of a full-domain table from those of a coarser one (the search's checks); the
others work on the group state of
:class:`~anonlab.algorithms.global_recoding.privacyfrost2.partial._CompiledPartial`:

* base classes are *positions* ``0..n-1``: the base classes renumbered class by class of
  the full-domain table (``orig[r]`` is the base class at position ``r``), so that a
  group's members lie close together in memory;
* ``lv`` (n, m): the level of each attribute at each position; ``codes`` (m, n): the
  domain code at each position; ``dom`` (flat, ``dom_off``/``dom_w``): the label id of
  (attribute, level, domain code);
* per group (capacity n, as groups partition the base classes): labels ``glab`` (n, m),
  a 64-bit tuple hash ``ghash`` (a sum of one random number ``fh`` per label), whether it is
  suppressed ``gviol``, the version of its last change ``gstamp``, its first base class
  ``gfirst`` (a base class number, not a position), the deepest level of its members per
  attribute ``gmax`` (n, m), its members ``mem[gstart : gstart + gcount]`` (a group's
  members are contiguous in ``mem``: a split divides its group's range), per attribute the
  version at which its split failed the models ``failstamp``, and the attributes on which
  one of its members is doomed ``gdoom`` (n, words: one bit per attribute);
* ``doom`` (n, words): per position, the attributes on which it is *doomed*: its split
  class on that attribute was smaller than the minimal class size. The partial step only
  refines the partition (a group splits, a level goes down), so a doomed member's split
  class stays a subset of that class, too small, in every later group: a group with a
  doomed member on ``j`` fails on ``j`` by size without its members being walked;
* per label (flat, offsets ``lab_off``): how many base classes carry it ``lcount``, and a
  scratch array ``scratch`` that is all ``-1`` between calls (``delta`` all ``0``).

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

_FIB = 0x9E3779B97F4A7C15  # 2^64 / golden ratio: multiplicative hashing
_CACHE: dict[str, Any] = {}


def _label(j, r, level, codes, dom, dom_off, dom_w):
    return dom[dom_off[j] + level * dom_w[j] + codes[j, r]]


def _same_family(a, b, j, glab):
    for x in range(glab.shape[1]):
        if x != j and glab[a, x] != glab[b, x]:
            return False
    return True


def _find(
    j, lo_j, g, mcs, lv, codes, dom, dom_off, dom_w, fh, lab_off, bsize,
    glab, ghash, gviol, gstamp, gmax, failstamp, gstart, gcount, mem, scratch,
    sp_indptr, sp_val, sp_cnt, nv, doom, gdoom, total, total_hist,
):  # fmt: skip
    """One batch on attribute ``j``: the candidate groups, which are judged, their split
    classes, the classes the models must judge and their sensitive histograms.

    Returns ``(n_cand, judged, entangled, failed, cls_group, judge_of_class, judge_size,
    hist, cstart, cls_label, cls_nb)``: groups with candidates (not suppressed), the groups
    judged now (not known to fail since their last change), per judged group whether its
    split would merge with another group and whether a split class is below ``mcs``; per
    split class its judged group; per class the row of ``hist``/``judge_size`` the models
    judge (``-1``: its group already failed on size); the split classes of judged group
    ``a`` are ``cstart[a]:cstart[a+1]``, each with its label on ``j`` and its number of base
    classes (for :func:`_e_after`). ``judge_size`` and ``hist`` have one more row, last: the
    records of every other class as one class (``total`` records, ``total_hist`` their
    sensitive counts), so the models see the whole table's distribution.
    """
    fib = np.uint64(_FIB)
    off = lab_off[j]
    wj = j >> 6
    bj = np.uint64(1) << np.uint64(j & 63)
    judged = np.empty(g, dtype=np.int64)
    nj = 0
    n_cand = 0
    for G in range(g):
        if gviol[G] or gmax[G, j] <= lo_j:
            continue
        n_cand += 1
        if failstamp[G, j] >= gstamp[G]:
            continue  # its split failed the models and it has not changed since
        if gdoom[G, wj] & bj:
            continue  # a member's split class on j is too small in any group it is in
        judged[nj] = G
        nj += 1
    judged = judged[:nj]
    ent = np.zeros(nj, dtype=np.bool_)
    failed = np.zeros(nj, dtype=np.bool_)
    if nj == 0:
        e64 = np.zeros(0, dtype=np.int64)
        h1 = np.zeros((1, nv), dtype=np.int64)
        s1 = np.full(1, total, dtype=np.int64)
        return n_cand, judged, ent, failed, e64, e64, s1, h1, np.zeros(1, np.int64), e64, e64
    # --- split classes of the judged groups (their labels also decide entanglement)
    n_rows = 0
    for a in range(nj):
        n_rows += gcount[judged[a]]
    row_of = np.empty(n_rows, dtype=np.int64)
    cls_of = np.empty(n_rows, dtype=np.int64)
    cls_group = np.empty(n_rows, dtype=np.int64)
    cls_label = np.empty(n_rows, dtype=np.int64)
    cls_size = np.zeros(n_rows, dtype=np.int64)
    cls_nb = np.zeros(n_rows, dtype=np.int64)
    cstart = np.empty(nj + 1, dtype=np.int64)
    nc = 0
    x = 0
    for a in range(nj):
        G = judged[a]
        c0 = nc
        x0 = x
        cstart[a] = nc
        cur = glab[G, j]
        for q in range(gstart[G], gstart[G] + gcount[G]):
            r = mem[q]
            lab = cur
            if lv[r, j] > lo_j:
                lab = _label(j, r, lv[r, j] - 1, codes, dom, dom_off, dom_w)
            c = scratch[off + lab]
            if c == -1:
                c = nc
                scratch[off + lab] = c
                cls_group[c] = a
                cls_label[c] = lab
                nc += 1
            cls_size[c] += bsize[r]
            cls_nb[c] += 1
            row_of[x] = r
            cls_of[x] = c
            x += 1
        for c in range(c0, nc):
            scratch[off + cls_label[c]] = -1
            if cls_size[c] < mcs:
                failed[a] = True
        if failed[a]:
            # the members of a too-small split class are doomed on j: the partition only
            # gets finer, so their split class on j stays too small in every later group
            gdoom[G, wj] |= bj
            for y in range(x0, x):
                if cls_size[cls_of[y]] < mcs:
                    doom[row_of[y], wj] |= bj
    cstart[nj] = nc
    # --- families on j of the judged groups (hash table keyed on the tuple without j)
    bits = 4
    while (1 << bits) < 2 * nj:
        bits += 1
    size = 1 << bits
    mask = size - 1
    shift = np.uint64(64 - bits)
    table = np.full(size, -1, dtype=np.int64)
    famh = np.empty(nj, dtype=np.uint64)
    for a in range(nj):
        G = judged[a]
        h = ghash[G] - fh[off + glab[G, j]]
        famh[a] = h
        s = np.int64((h * fib) >> shift)
        while table[s] != -1:
            b = table[s]
            if famh[b] == h and _same_family(judged[b], G, j, glab):
                break
            s = (s + 1) & mask
        if table[s] == -1:
            table[s] = a
    # every group in the family of a judged group: (representative, group)
    fam_rep = np.empty(g, dtype=np.int64)
    fam_cnt = np.zeros(nj, dtype=np.int64)
    for H in range(g):
        h = ghash[H] - fh[off + glab[H, j]]
        s = np.int64((h * fib) >> shift)
        rep = -1
        while table[s] != -1:
            b = table[s]
            if famh[b] == h and (judged[b] == H or _same_family(judged[b], H, j, glab)):
                rep = b
                break
            s = (s + 1) & mask
        fam_rep[H] = rep
        if rep >= 0:
            fam_cnt[rep] += 1
    multi = 0
    for a in range(nj):
        if fam_cnt[a] > 1:
            multi += 1
    if multi:
        # families of two or more groups: do their label sets on j intersect?
        pos = np.zeros(nj + 1, dtype=np.int64)
        for a in range(nj):
            pos[a + 1] = pos[a] + (fam_cnt[a] if fam_cnt[a] > 1 else 0)
        members = np.empty(pos[nj], dtype=np.int64)
        fill = pos[:nj].copy()
        for H in range(g):
            rep = fam_rep[H]
            if rep >= 0 and fam_cnt[rep] > 1:
                members[fill[rep]] = H
                fill[rep] += 1
        is_judged = np.full(g, -1, dtype=np.int64)
        for a in range(nj):
            is_judged[judged[a]] = a
        touched = np.empty(64, dtype=np.int64)
        for rep in range(nj):
            if fam_cnt[rep] < 2:
                continue
            nt = 0
            hit = np.zeros(pos[rep + 1] - pos[rep], dtype=np.bool_)
            owner_of = np.empty(pos[rep + 1] - pos[rep], dtype=np.int64)
            for x in range(pos[rep], pos[rep + 1]):
                H = members[x]
                k = x - pos[rep]
                owner_of[k] = H
                cur = glab[H, j]
                aj = is_judged[H]
                # its labels on j: the current one (kept if its split is not), then those
                # of its split classes: known if it is judged, else from its members
                c = 0
                n_lab = 0
                q0 = 0
                q1 = 0
                if aj >= 0:
                    c = cstart[aj]
                    n_lab = cstart[aj + 1] - c
                elif (not gviol[H]) and gmax[H, j] > lo_j:
                    q0 = gstart[H]
                    q1 = q0 + gcount[H]
                i = -1
                while i < n_lab or q0 < q1:
                    if i < 0:
                        lab = cur
                    elif aj >= 0:
                        lab = cls_label[c + i]
                    else:
                        r = mem[q0]
                        lab = cur
                        if lv[r, j] > lo_j:
                            lab = _label(j, r, lv[r, j] - 1, codes, dom, dom_off, dom_w)
                        q0 += 1
                    i += 1
                    o = scratch[off + lab]
                    if o == -1:
                        scratch[off + lab] = k
                        if nt == touched.size:
                            grown = np.empty(2 * nt, dtype=np.int64)
                            grown[:nt] = touched
                            touched = grown
                        touched[nt] = off + lab
                        nt += 1
                    elif o != k:
                        hit[k] = True
                        hit[o] = True
            for t in range(nt):
                scratch[touched[t]] = -1
            for k in range(hit.size):
                if hit[k]:
                    a = is_judged[owner_of[k]]
                    if a >= 0:
                        ent[a] = True
    # --- histograms of the classes of groups not failed on size
    judge_of = np.full(nc, -1, dtype=np.int64)
    nk = 0
    for c in range(nc):
        if not failed[cls_group[c]]:
            judge_of[c] = nk
            nk += 1
    judge_size = np.empty(nk + 1, dtype=np.int64)
    rest = total
    for c in range(nc):
        if judge_of[c] >= 0:
            judge_size[judge_of[c]] = cls_size[c]
            rest -= cls_size[c]
    judge_size[nk] = rest
    hist = np.zeros((nk + 1, nv), dtype=np.int64)
    if nv:
        for x in range(n_rows):
            k = judge_of[cls_of[x]]
            if k >= 0:
                r = row_of[x]
                for e in range(sp_indptr[r], sp_indptr[r + 1]):
                    hist[k, sp_val[e]] += sp_cnt[e]
        for v in range(nv):
            hist[nk, v] = total_hist[v]
        for k in range(nk):
            for v in range(nv):
                hist[nk, v] -= hist[k, v]
    return (
        n_cand, judged, ent, failed, cls_group[:nc], judge_of, judge_size, hist, cstart,
        cls_label[:nc], cls_nb[:nc],
    )  # fmt: skip


def _e_after(j, which, judged, e_j, cstart, cls_label, cls_nb, lab_off, glab, lcount, delta):
    """``e`` of attribute ``j`` (distinct labels over the base classes) after splitting
    the judged groups ``judged[which]``, from their split classes as :func:`_find` found
    them (no member is walked)."""
    off = lab_off[j]
    touched = np.empty(64, dtype=np.int64)
    nt = 0
    for i in range(which.size):
        a = which[i]
        old = off + glab[judged[a], j]
        for c in range(cstart[a], cstart[a + 1]):
            new = off + cls_label[c]
            if new != old:
                if nt + 2 > touched.size:
                    grown = np.empty(2 * touched.size, dtype=np.int64)
                    grown[:nt] = touched[:nt]
                    touched = grown
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
    j, lo_j, groups, g, version, lv, codes, dom, dom_off, dom_w, fh, lab_off, orig, gid,
    glab, ghash, gviol, gstamp, gfirst, gmax, gstart, gcount, mem, lcount, scratch, doom,
    gdoom,
):  # fmt: skip
    """Split ``groups`` on ``j``: levels, label counts and the group state. Each split
    class becomes a group (the first one keeps the group's id) whose members are a
    contiguous part of the split group's range of ``mem`` (in the same order). Returns the
    new number of groups."""
    off = lab_off[j]
    m = glab.shape[1]
    nw = doom.shape[1]
    n = gid.size
    saved = np.empty(m, dtype=np.int64)
    n_lab = lab_off[j + 1] - off
    used = np.empty(n_lab, dtype=np.int64)  # per split class: its label slot, group, size
    ugroup = np.empty(n_lab, dtype=np.int64)
    ucount = np.empty(n_lab, dtype=np.int64)
    big = 0
    for i in range(groups.size):
        big = max(big, gcount[groups[i]])
    cls = np.empty(big, dtype=np.int64)
    tmp = np.empty(big, dtype=np.int64)
    for i in range(groups.size):
        G = groups[i]
        for x in range(m):
            saved[x] = glab[G, x]
        old = saved[j]
        fam = ghash[G] - fh[off + old]
        s0 = gstart[G]
        cnt = gcount[G]
        nu = 0
        for q in range(cnt):
            r = mem[s0 + q]
            lab = old
            if lv[r, j] > lo_j:
                lv[r, j] -= 1
                lab = _label(j, r, lv[r, j], codes, dom, dom_off, dom_w)
                lcount[off + lab] += 1
                lcount[off + old] -= 1
            u = scratch[off + lab]
            if u == -1:
                u = nu
                nu += 1
                if u == 0:
                    t = G
                else:
                    t = g
                    g += 1
                scratch[off + lab] = u
                used[u] = off + lab
                ugroup[u] = t
                ucount[u] = 0
                for x in range(m):
                    glab[t, x] = saved[x]
                    gmax[t, x] = -1
                for w in range(nw):
                    gdoom[t, w] = 0
                glab[t, j] = lab
                ghash[t] = fam + fh[off + lab]
                gviol[t] = False
                gstamp[t] = version
                gfirst[t] = n
            t = ugroup[u]
            cls[q] = u
            ucount[u] += 1
            gid[r] = t
            if orig[r] < gfirst[t]:
                gfirst[t] = orig[r]
            for x in range(m):
                gmax[t, x] = max(gmax[t, x], lv[r, x])  # branch-free
            for w in range(nw):
                gdoom[t, w] |= doom[r, w]
        # the split classes take consecutive parts of the group's range (stable)
        at = s0
        for u in range(nu):
            t = ugroup[u]
            gstart[t] = at
            gcount[t] = ucount[u]
            ucount[u] = at - s0  # now: where the class's next member goes in tmp
            at += gcount[t]
            scratch[used[u]] = -1
        for q in range(cnt):
            u = cls[q]
            tmp[ucount[u]] = mem[s0 + q]
            ucount[u] += 1
        for q in range(cnt):
            mem[s0 + q] = tmp[q]
    return g


def _build_groups(
    gid, g, lv, codes, dom, dom_off, dom_w, fh, lab_off, orig, glab, ghash, gfirst, gmax,
    gstart, gcount, mem, lcount, doom, gdoom,
):  # fmt: skip
    """The group state of a table given as the group of each base class (``orig``: the
    base class number of each position, for ``gfirst``); a group's labels are those of
    its first member (all its members share them). ``lcount``: base classes per label."""
    m = lv.shape[1]
    nw = doom.shape[1]
    n = gid.size
    for G in range(g):
        gcount[G] = 0
        gfirst[G] = n
        for x in range(m):
            gmax[G, x] = -1
        for w in range(nw):
            gdoom[G, w] = 0
    for r in range(n):
        G = gid[r]
        if gcount[G] == 0:
            for x in range(m):
                glab[G, x] = _label(x, r, lv[r, x], codes, dom, dom_off, dom_w)
        gcount[G] += 1
        if orig[r] < gfirst[G]:
            gfirst[G] = orig[r]
        for x in range(m):
            gmax[G, x] = max(gmax[G, x], lv[r, x])
        for w in range(nw):
            gdoom[G, w] |= doom[r, w]
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
            h += fh[lab_off[x] + glab[G, x]]
            lcount[lab_off[x] + glab[G, x]] += gcount[G]
        ghash[G] = h


def _split_classes(ids, code, card, weights, tkeys, tvals, out):
    """The classes of a table one level finer on one attribute than a table whose classes
    are ``ids`` (the full-domain search's refinement, 5.3): base class ``r`` goes to the
    class of ``(ids[r], code[r])``, numbered in the order first met, in ``out``. A hash
    table (``tkeys`` all ``-1`` between calls, ``tvals``; a power of two of at least twice
    the base classes) keys the pairs. Returns ``(g, sizes)``: the number of classes and the
    sum of ``weights`` in each."""
    n = ids.size
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
        key = np.int64(ids[r]) * card + code[r]
        s = np.int64((np.uint64(key) * fib) >> shift)
        while True:
            have = tkeys[s]
            if have == key:
                c = tvals[s]
                break
            if have == -1:
                tkeys[s] = key
                tvals[s] = g
                slot[g] = s
                c = g
                g += 1
                break
            s = (s + 1) & mask
        out[r] = c
        sizes[c] += weights[r]
    for c in range(g):
        tkeys[slot[c]] = -1
    return g, sizes[:g]


def _class_hists(ids, g, cls, val, cnt, nv):
    """Sensitive histograms (g, nv) of the classes ``ids`` of the base classes, from the
    base classes' non-zero counts ``(cls, val, cnt)``."""
    hist = np.zeros((g, nv), dtype=np.int64)
    for e in range(cls.size):
        hist[ids[cls[e]], val[e]] += cnt[e]
    return hist


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
        for x in range(glab.shape[1]):
            out[x, o] = glab[G, x]


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

    def jit(f: Any, inline: bool = False) -> Any:
        how: Any = "always" if inline else "never"
        return numba.njit(cache=True, nogil=True, inline=how)(f)

    g = globals()
    g["_label"] = jit(_label, inline=True)  # the kernels call the compiled helpers
    g["_same_family"] = jit(_same_family, inline=True)
    ns = SimpleNamespace(
        find=jit(_find),
        e_after=jit(_e_after),
        commit=jit(_commit),
        build_groups=jit(_build_groups),
        keys_of=jit(_keys_of),
        take_rows=jit(_take_rows),
        counting_order=jit(_counting_order),
        split_classes=jit(_split_classes),
        class_hists=jit(_class_hists),
    )
    _CACHE["k"] = ns
    return ns
