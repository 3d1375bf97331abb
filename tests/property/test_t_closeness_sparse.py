"""Hypothesis: t-closeness judged from the sparse counts equals the dense computation.

The models read only the non-zero counts of each class (issue 27). The reference below is the
earlier dense arithmetic, kept here as a test-only oracle: the ``(classes, values)`` matrix of
integer numerators ``p_count(s) n_E - f(s) N``, then ARX's formulas over every value (equal),
their running sums in rank order (ordered) and the bottom-up ``l * min(pos, neg)`` over the
hierarchy (hierarchical), divided once. Distances must agree bit for bit, whichever form the
histogram is held in.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from anonlab.data.hierarchy import Hierarchy
from anonlab.data.stats import ClassStats, SensitiveHistogram
from anonlab.models import EqualTCloseness, HierarchicalTCloseness, OrderedTCloseness


# ------------------------------------------------------------------ the dense oracle
def _extras(f: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    n = f.sum(axis=1)
    p_count = f.sum(axis=0)
    n_total = float(p_count.sum())
    out = np.multiply.outer(n.astype(np.float64), p_count.astype(np.float64))
    out -= f.astype(np.float64) * n_total
    return out, n


def equal_dense(f: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    x, n = _extras(f)
    num = np.abs(x).sum(axis=1)
    return num / (2.0 * float(f.sum()) * np.maximum(n, 1).astype(np.float64))


def ordered_dense(f: npt.NDArray[np.int64], perm: npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
    m = f.shape[1]
    x, n = _extras(f)
    if m <= 1:
        return np.zeros(n.size)
    num = np.abs(np.cumsum(x[:, perm], axis=1)).sum(axis=1)
    return num / (float(f.sum()) * float(m - 1) * np.maximum(n, 1).astype(np.float64))


def hierarchical_dense(
    f: npt.NDArray[np.int64], values: npt.NDArray[np.object_], h: Hierarchy
) -> npt.NDArray[np.float64]:
    x, n = _extras(f)
    cost = np.zeros(n.size)
    prev = np.arange(len(values))
    for level in range(1, h.height + 1):
        if level == h.height:
            mapping = np.zeros(len(values), dtype=np.int64)
        else:
            mapping = h.generalization(values, level)[0].astype(np.int64)
        _, cur = np.unique(mapping, return_inverse=True)
        cur = cur.reshape(-1)
        parent = np.empty(int(prev.max()) + 1, dtype=np.int64)
        parent[prev] = cur
        n_parents = int(parent.max()) + 1
        pos = np.zeros((n.size, n_parents))
        neg = np.zeros((n.size, n_parents))
        for child in range(x.shape[1]):
            pos[:, parent[child]] += np.maximum(x[:, child], 0.0)
            neg[:, parent[child]] += np.maximum(-x[:, child], 0.0)
        cost += float(level) * np.minimum(pos, neg).sum(axis=1)
        x = pos - neg
        prev = cur
    den = float(h.height) * float(f.sum())
    return cost / (den * np.maximum(n, 1).astype(np.float64))


# ------------------------------------------------------------------ strategies
@st.composite
def instances(draw):
    """Counts (some classes and values sparse), value labels, a nested taxonomy, an order."""
    m = draw(st.integers(1, 9))
    g = draw(st.integers(1, 12))
    density = draw(st.sampled_from([0.15, 0.4, 1.0]))
    cells = draw(
        st.lists(st.tuples(st.booleans(), st.integers(1, 40)), min_size=g * m, max_size=g * m)
    )
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    f = np.array([c if rng.random() < density else 0 for _, c in cells], dtype=np.int64)
    f = f.reshape(g, m)
    if not f.any():  # a table has rows (a class may be empty)
        f[-1, 0] = 1
    if g > 1 and f[1:].any() and draw(st.booleans()):
        f[0] = f[1:].sum(axis=0)  # half of the table, its distribution: distance exactly 0
    labels = [f"v{i}" for i in rng.permutation(m)]  # not in code order: exercises sorting
    height = draw(st.integers(1, 3))
    groups = rng.integers(0, max(1, m // 2), size=m)
    rows = []
    for i, v in enumerate(labels):
        row, grp = [v], int(groups[i])
        for level in range(1, height):
            row.append(f"L{level}:{grp}")
            grp //= 2  # coarser on the next level: every label keeps one parent
        rows.append([*row, "*"])
    order = list(rng.permutation(labels)) if draw(st.booleans()) else None
    return f, np.array(labels, dtype=object), Hierarchy(rows, attribute="s"), order


def _both_forms(f: npt.NDArray[np.int64], values: npt.NDArray[np.object_]):
    dense = SensitiveHistogram(values, f)
    rows, idx = np.nonzero(f)
    indptr = np.r_[0, np.cumsum(np.bincount(rows, minlength=f.shape[0]))]
    sparse = SensitiveHistogram(values, indptr=indptr, indices=idx, data=f[rows, idx])
    assert not sparse.is_dense
    return [
        ClassStats(("q",), (0,), f.sum(axis=1), int(f.sum()), sensitive={"s": h})
        for h in (dense, sparse)
    ]


@pytest.mark.slow
@given(instances())
def test_sparse_distances_equal_the_dense_computation(inst):
    f, values, h, order = inst
    models = [
        (EqualTCloseness("s", 0.2), equal_dense(f)),
        (HierarchicalTCloseness("s", 0.2, h), hierarchical_dense(f, values, h)),
    ]
    ordered = OrderedTCloseness("s", 0.2, order=order)
    models.append((ordered, ordered_dense(f, ordered.permutation(values))))
    for stats in _both_forms(f, values):
        for model, want in models:
            got = model.class_distance(stats)
            assert np.array_equal(got, want), (model, got, want)
            if np.array_equal(f[0] * 2, f.sum(axis=0)):
                assert got[0] == 0.0, (model, got)


@given(instances())
def test_triplets_give_the_same_histogram_in_either_form(inst):
    f, values, _, _ = inst
    rows, idx = np.nonzero(f)
    # split every count in two triplets, shuffled: equal pairs are summed
    rng = np.random.default_rng(int(f.sum()))
    part = rng.integers(0, f[rows, idx] + 1)
    cls = np.r_[rows, rows]
    val = np.r_[idx, idx]
    cnt = np.r_[part, f[rows, idx] - part]
    shuffle = rng.permutation(cls.size)
    # few classes: the dense form; many (empty ones after them): the sparse form
    for extra in (0, 70_000):
        g = f.shape[0] + extra
        h = SensitiveHistogram.from_triplets(
            values, cls[shuffle], val[shuffle], cnt[shuffle], n_classes=g
        )
        assert h.is_dense == (extra == 0)
        want = np.zeros((g, f.shape[1]), dtype=np.int64)
        want[: f.shape[0]] = f
        ref = SensitiveHistogram(values, want)
        for name in ("indptr", "indices", "data", "rows"):
            assert np.array_equal(getattr(h, name), getattr(ref, name)), name
        assert np.array_equal(h.class_totals(), want.sum(axis=1))
        assert np.array_equal(h.value_totals(), want.sum(axis=0))
        assert np.array_equal(h.counts, want)
