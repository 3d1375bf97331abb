"""The roll-up of lattice nodes (issue 34): classes rolled up from the base classes or from
snapshots, in any order, equal the classes grouped from the rows; the grouping primitive,
the key layouts, the snapshot lookup and the grid tagger against plain references."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from anonlab import EncodedTable, Hierarchy
from anonlab.algorithms._lattice import (
    Lattice,
    LatticeEvaluator,
    grid_heights,
    grid_nodes,
    height_order,
)
from anonlab.algorithms._lattice.rollup import (
    GROUP_CODES,
    Classes,
    Snapshots,
    layout_of,
    merge_keys,
)
from anonlab.algorithms.full_domain.optimal import ANON, NOT_ANON, UNKNOWN, Tagger
from anonlab.engines import get_engine
from anonlab.metrics import build_metric
from anonlab.metrics.base import MetricContext
from anonlab.models import build_model


def label(i: int, level: int, height: int) -> str:
    """The label of value ``i`` at ``level``: groups of ``4**level`` values, ``*`` on top."""
    return "*" if level == height else f"L{level}_{i // 4**level}"


def hierarchy(domain: int, height: int, name: str) -> Hierarchy:
    rows = [[label(i, lv, height) for lv in range(height + 1)] for i in range(domain)]
    return Hierarchy(rows, attribute=name)


def make(domains, heights, n_rows, seed, models=(("k_anonymity", {"k": 2}),)):
    """An evaluator over random rows (value ``i`` of attribute ``j`` drawn from its
    domain, a sensitive attribute ``s``) and the rows' value indices."""
    rng = np.random.default_rng(seed)
    qis = tuple(f"q{j}" for j in range(len(domains)))
    idx = np.stack([rng.integers(0, d, n_rows) for d in domains], axis=1)
    sens = rng.choice(["p", "q", "r"], n_rows)
    cols = {q: np.array([label(int(i), 0, h) for i in idx[:, j]], dtype=object)
            for j, (q, h) in enumerate(zip(qis, heights))}  # fmt: skip
    cols["s"] = sens.astype(object)
    table = EncodedTable.from_columns(cols)
    hs = {q: hierarchy(d, h, q) for q, d, h in zip(qis, domains, heights)}
    built = [build_model(n, p) for n, p in models]
    engine = get_engine("numpy", table, hierarchies=hs)
    wanted = sorted({a for m in built for a in m.sensitive_attributes})
    base = engine.class_stats(list(qis), sensitive=wanted)
    ctx = MetricContext(qis, hs, base, table.n_rows, {})
    ev = LatticeEvaluator(base, hs, built, 0, build_metric("discernibility"), ctx)
    return ev, idx, sens, qis


def grouped(idx, sens, heights, levels, attributes=None):
    """The classes of a node grouped from the rows, as ``ClassStats.canonical`` gives them."""
    cols = range(idx.shape[1]) if attributes is None else attributes
    keys = [tuple(label(int(idx[r, j]), lv, heights[j]) for j, lv in zip(cols, levels))
            for r in range(idx.shape[0])]  # fmt: skip
    sizes = Counter(keys)
    per: dict[tuple[str, ...], Counter[str]] = {}
    for key, s in zip(keys, sens):
        per.setdefault(key, Counter())[str(s)] += 1
    out = [(key, sizes[key], {"s": dict(per[key])}) for key in sizes]
    return sorted(out, key=lambda e: tuple(e[0]))


def canonical(stats, with_sensitive):
    got = stats.canonical()
    if not with_sensitive:
        return sorted((k, n) for k, n, _ in got)
    return sorted((k, n, {a: {str(v): c for v, c in d.items()} for a, d in s.items()})
                  for k, n, s in got)  # fmt: skip


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("sensitive", [False, True])
def test_every_node_in_any_order_equals_the_grouped_rows(seed, sensitive):
    domains, heights = (40, 9, 70, 3, 17), (3, 2, 4, 1, 3)
    models = (("distinct_l_diversity", {"attribute": "s", "l": 2}),) if sensitive else ()
    ev, idx, sens, _ = make(domains, heights, 600, seed, models or (("k_anonymity", {"k": 2}),))
    ev.snapshot_count = 7  # few snapshots: evicted and replaced while the nodes come
    nodes = list(itertools.product(*[range(h + 1) for h in heights]))
    rng = np.random.default_rng(seed)
    for i in rng.permutation(len(nodes))[:160]:
        node = nodes[i]
        stats = ev.stats(node, with_sensitive=sensitive)
        want = grouped(idx, sens, heights, node)
        if sensitive:
            assert canonical(stats, True) == want
        else:
            assert canonical(stats, False) == sorted((k, n) for k, n, _ in want)
        again = ev.stats(node, with_keys=False, with_sensitive=False)
        assert sorted(again.sizes.tolist()) == sorted(n for _, n, _ in want)


def test_subsets_of_the_attributes_equal_the_grouped_rows():
    domains, heights = (40, 9, 70, 3), (3, 2, 4, 1)
    ev, idx, sens, _ = make(domains, heights, 300, 5)
    for attrs in [(0,), (1, 3), (0, 2, 3), (2,)]:
        for levels in itertools.product(*[range(heights[j] + 1) for j in attrs]):
            stats = ev.stats(levels, attrs, with_sensitive=False)
            want = grouped(idx, sens, heights, levels, attrs)
            assert canonical(stats, False) == sorted((k, n) for k, n, _ in want)


def test_keys_wider_than_62_bits_are_grouped_exactly():
    """Seven attributes of 3,000 values: the base classes' key needs 84 bits."""
    domains, heights = (3000,) * 7, (5,) * 7
    ev, idx, sens, _ = make(domains, heights, 400, 7)
    assert sum(math.ceil(math.log2(d)) for d in domains) > 62
    for node in [(0,) * 7, (0, 0, 0, 1, 0, 0, 0), (1,) * 7, (0, 5, 0, 5, 0, 5, 0), (5,) * 7]:
        stats = ev.stats(node, with_sensitive=False)
        assert canonical(stats, False) == sorted(
            (k, n) for k, n, _ in grouped(idx, sens, heights, node)
        )
    stats = ev.stats((0, 0), (1, 4), with_sensitive=False)
    assert canonical(stats, False) == sorted(
        (k, n) for k, n, _ in grouped(idx, sens, heights, (0, 0), (1, 4))
    )


@pytest.mark.parametrize("need_ids", [False, True])
@pytest.mark.parametrize(
    ("n", "space", "wmax"),
    [(1000, 50, 5), (1000, 3000, 5), (1000, 2**20, 3), (1000, 2**25, 2**10), (500, 2**40, 7),
     (200, 2**61, 2**20), (1, 2**30, 1), (1000, 1, 5), (0, 2**20, 3)],
)  # fmt: skip
def test_merge_keys_equals_unique(need_ids, n, space, wmax):
    rng = np.random.default_rng(n + wmax)
    pool = rng.integers(0, space, max(n // 3, 1))
    key = pool[rng.integers(0, pool.size, n)].astype(np.int64)
    weights = rng.integers(1, wmax + 1, n).astype(np.int64)
    ids, sums, ukeys = merge_keys(key, space, weights, need_ids=need_ids)
    want, inv = np.unique(key, return_inverse=True)
    assert ukeys.tolist() == want.tolist()
    want_sums = np.bincount(inv.reshape(-1), weights=weights, minlength=want.size)
    assert sums.tolist() == want_sums.astype(int).tolist()
    if need_ids:
        assert ids is not None and ids.tolist() == inv.reshape(-1).tolist()


@pytest.mark.parametrize(
    ("n", "space", "wmax", "dtype"),
    [
        (1, 2**30, 1, np.int64),
        (3, 2**20, 3, np.int64),
        (1000, 2**40, 7, np.int64),
        (500, 2**61, 2**20, np.int64),
        (2000, 2**27, 9, np.int32),  # (the roll's keys and sizes in 32 bits)
    ],
)
def test_merge_keys_by_hashing_equals_unique(n, space, wmax, dtype):
    rng = np.random.default_rng(n)
    pool = rng.integers(0, space, max(n // 3, 1))
    key = pool[rng.integers(0, pool.size, n)].astype(dtype)
    weights = rng.integers(1, wmax + 1, n).astype(dtype)
    table = np.full((2, 1 << max(4, (2 * n - 1).bit_length())), -1, dtype=np.int64)
    _, sums, ukeys = merge_keys(key, space, weights, need_ids=False, table=lambda: table)
    want, inv = np.unique(key, return_inverse=True)
    want_sums = np.bincount(inv.reshape(-1), weights=weights, minlength=want.size)
    assert sorted(zip(ukeys.tolist(), sums.tolist())) == list(
        zip(want.tolist(), want_sums.astype(int).tolist())
    )
    assert (table[0] == -1).all()


@pytest.mark.parametrize(
    "cards",
    [[1], [5], [100000, 10000, 6, 7, 53, 5676, 238, 451], [2, 1, 1, 3], [4096, 1, 2], [3] * 20],
)
def test_layout_fields_hold_every_group_code(cards):
    layout = layout_of(tuple(cards), [(j, j + 1) for j in range(len(cards))])
    assert [a for a, _ in layout.groups] == sorted(a for a, _ in layout.groups)
    assert layout.groups[0][0] == 0 and layout.groups[-1][1] == len(cards)
    at = 0
    for (a, b), shift, width in reversed(list(zip(layout.groups, layout.shifts, layout.widths))):
        space = math.prod(cards[a:b])
        assert shift == at and space <= 1 << width
        assert b - a == 1 or space <= GROUP_CODES
        at += width
    assert layout.bits == at
    coarser = layout_of(tuple(max(c // 7, 1) for c in cards), layout.groups)
    for a, b in coarser.groups:  # runs of the finer groups
        assert any(g[0] == a for g in layout.groups) and any(g[1] == b for g in layout.groups)


def test_nearest_snapshot_is_the_smallest_below():
    rng = np.random.default_rng(3)
    heights = (5, 2, 9, 1, 3, 7, 30, 2, 4, 6, 3, 8)  # two words of bit fields
    store = Snapshots(heights, 50, 2**30)
    kept: dict[tuple[int, ...], int] = {}
    layout = layout_of((1,) * len(heights), [(j, j + 1) for j in range(len(heights))])
    for _ in range(300):
        node = tuple(int(rng.integers(0, h + 1)) for h in heights)
        n = int(rng.integers(1, 1000))
        store.keep(Classes(node, np.ones(n, dtype=np.int64), layout))
        kept = {lv: store.items[i].sizes.size for lv, i in store.index.items()}
        query = tuple(int(rng.integers(0, h + 1)) for h in heights)
        below = [(c, lv) for lv, c in kept.items() if all(a <= b for a, b in zip(lv, query))]
        got = store.nearest(query, False)
        if not below:
            assert got is None
        else:
            assert got is not None and got.sizes.size == min(below)[0]
    assert len(store.index) == 50


def test_tagger_boxes_and_the_given_order():
    maxs = np.array([2, 1, 3])
    lattice = Lattice(("a", "b", "c"), (0, 0, 0), (2, 1, 3))
    nodes = lattice.nodes()  # by height, not in grid order
    checked: list[tuple[int, ...]] = []

    def check(v):
        checked.append(v)
        return sum(v) >= 3

    tagger = Tagger(nodes, maxs, check)
    status = tagger.classify_all()
    assert status.tolist() == [ANON if sum(v) >= 3 else NOT_ANON for v in nodes.tolist()]
    assert (tagger.status != UNKNOWN).all()
    assert len(checked) < len(nodes)
    box = np.zeros(tagger.shape, dtype=int)
    box[tagger.above((1, 0, 2))] = 1
    flat = box.reshape(-1)
    assert [tuple(v) for v in tagger.nodes[flat == 1].tolist()] == [
        tuple(v) for v in tagger.nodes.tolist() if v[0] >= 1 and v[2] >= 2
    ]
    assert tagger.index((2, 1, 3)) == len(nodes) - 1


def test_a_snapshot_kept_in_32_bits_rolls_up_to_keys_of_64():
    """One big class and pairs of rows one level apart: the classes of (1, 0, 0) are kept
    as a snapshot with keys of 32 bits, and keys packed with the sizes of its classes when
    rolled up from it need 64."""
    domains, heights = (2000, 2000, 5), (5, 5, 2)
    rng = np.random.default_rng(11)
    half = np.stack([rng.integers(0, d, 1500) for d in domains], axis=1)
    twin = half.copy()
    twin[:, 0] ^= 1  # the same label one level up
    rows = np.concatenate([half, twin, np.zeros((6000, 3), dtype=np.int64)])
    labels = np.full(rows.shape[0], "p")
    qis = tuple(f"q{j}" for j in range(3))
    cols = {q: np.array([label(int(i), 0, h) for i in rows[:, j]], dtype=object)
            for j, (q, h) in enumerate(zip(qis, heights))}  # fmt: skip
    table = EncodedTable.from_columns(cols)
    hs = {q: hierarchy(d, h, q) for q, d, h in zip(qis, domains, heights)}
    base = get_engine("numpy", table, hierarchies=hs).class_stats(list(qis))
    ctx = MetricContext(qis, hs, base, table.n_rows, {})
    model = build_model("k_anonymity", {"k": 2})
    ev = LatticeEvaluator(base, hs, [model], 0, build_metric("discernibility"), ctx)
    for node in [(1, 0, 0), (1, 0, 1), (1, 0, 2), (1, 1, 2), (2, 1, 2)]:
        stats = ev.stats(node, with_sensitive=False)
        assert canonical(stats, False) == sorted(
            (k, n) for k, n, _ in grouped(rows, labels, heights, node)
        )
    snap = ev._snapshot_store().get((1, 0, 0))
    assert snap is not None and snap.ukeys is not None and snap.ukeys.dtype == np.int32


@pytest.mark.parametrize(
    ("mins", "maxs"), [((0, 0, 0), (2, 1, 3)), ((1, 0, 2), (3, 2, 4)), ((), ())]
)
def test_grid_and_height_order_of_the_lattice(mins, maxs):
    every = list(itertools.product(*[range(a, b + 1) for a, b in zip(mins, maxs)]))
    grid = grid_nodes(mins, maxs)
    assert [tuple(v) for v in grid.tolist()] == every  # row-major
    assert grid_heights(mins, maxs).tolist() == [sum(v) for v in every]
    nodes = Lattice(tuple("abc"[: len(mins)]), mins, maxs).nodes()
    assert [tuple(v) for v in nodes.tolist()] == sorted(every, key=sum)  # stable: ties in order
    assert height_order(grid_heights(mins, maxs)).tolist() == sorted(
        range(len(every)), key=lambda i: sum(every[i])
    )
