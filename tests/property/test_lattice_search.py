"""The optimal lattice search and Incognito equal exhaustive search on small lattices."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from anonlab import EncodedTable, taxonomy_hierarchy
from anonlab.algorithms._lattice import Lattice, LatticeEvaluator
from anonlab.engines import get_engine
from anonlab.metrics import build_metric
from anonlab.metrics.base import MetricContext
from anonlab.models import build_model
from tests.support.exhaustive import searches_equal_exhaustive
from tests.support.profiles import costly

QIS = ("a", "b", "c")
H = {
    "a": taxonomy_hierarchy({"x": ["xy"], "y": ["xy"], "z": ["z"]}, attribute="a"),
    "b": taxonomy_hierarchy(
        {"x": ["xy", "xyz"], "y": ["xy", "xyz"], "z": ["z", "xyz"]}, attribute="b"
    ),
    "c": taxonomy_hierarchy({"x": ["*"], "y": ["*"], "z": ["*"]}, attribute="c", add_top=False),
}
vals = st.sampled_from(["x", "y", "z"])

MODELS = [
    [("k_anonymity", {"k": 2})],
    [("k_anonymity", {"k": 3})],
    [("k_anonymity", {"k": 2}), ("distinct_l_diversity", {"attribute": "s", "l": 2})],
    [("entropy_l_diversity", {"attribute": "s", "l": 1.5})],
    [("recursive_cl_diversity", {"attribute": "s", "c": 2, "l": 2})],
    [("k_anonymity", {"k": 2}), ("equal_t_closeness", {"attribute": "s", "t": 0.3})],
]
METRICS = [
    ("height", {}),
    ("precision", {"monotonic": False}),
    ("precision", {"monotonic": True}),
    ("discernibility", {"monotonic": False}),
    ("discernibility", {"monotonic": True}),
    ("aecs", {}),
    ("entropy", {"monotonic": False}),
    ("entropy", {"monotonic": True}),
    ("loss", {}),
]


def setup(rows, models, metric, suppression):
    table = EncodedTable.from_rows(rows, [*QIS, "s"])
    engine = get_engine("numpy", table, hierarchies=H)
    built = [build_model(n, p) for n, p in models]
    sens = sorted({a for m in built for a in m.sensitive_attributes})
    base = engine.class_stats(list(QIS), sensitive=sens)
    met = build_metric(metric[0], **metric[1])
    ctx = MetricContext(QIS, H, base, table.n_rows, {})
    limit = int(math.floor(suppression * table.n_rows + 1e-9))
    ev = LatticeEvaluator(base, H, built, limit, met, ctx)
    lattice = Lattice(QIS, (0, 0, 0), tuple(H[q].height for q in QIS))
    mono = all(
        m.monotonic_generalization and (suppression == 0 or m.monotonic_suppression) for m in built
    )
    return ev, lattice, mono


def table_rows(min_size: int = 1) -> st.SearchStrategy[list[tuple[str, str, str, str]]]:
    """Rows of the three quasi-identifiers and the sensitive attribute ``s``."""
    return st.lists(
        st.tuples(vals, vals, vals, st.sampled_from(["p", "q", "r"])),
        min_size=min_size,
        max_size=25,
    )


# costly: each example searches a lattice and its brute force
@costly(80)
@given(
    table_rows(min_size=2),
    st.sampled_from(MODELS),
    st.sampled_from(METRICS),
    st.sampled_from([0.0, 0.1, 0.3]),
)
def test_optimal_equals_exhaustive(rows, models, metric, suppression):
    ev, lattice, mono = setup(rows, models, metric, suppression)
    assume(searches_equal_exhaustive(ev, lattice, mono) is not None)


# costly: each example searches a lattice and its brute force
@costly(40)
@given(
    st.lists(st.tuples(vals, vals, vals, st.sampled_from(["p", "q"])), min_size=1, max_size=15),
    st.sampled_from(
        [*METRICS, ("loss", {"aggregate": "sum"}), ("entropy", {"aggregate": "geometric"}),
         ("precision", {"aggregate": "max"}), ("loss", {"aggregate": "arithmetic"}),
         ("ncp", {}), ("gcp", {}), ("distortion", {})]
    ),
)  # fmt: skip
def test_vectorised_lower_bounds_equal_per_node_bounds(rows, metric):
    ev, lattice, _ = setup(rows, [("k_anonymity", {"k": 1})], metric, 0.0)
    nodes = lattice.nodes()
    many = ev.metric.lower_bounds(nodes, ev.context)
    one = [ev.metric.lower_bound(tuple(int(x) for x in v), ev.context) for v in nodes]
    if many is None:
        assert any(b is None for b in one)
    assume(many is not None)
    one_f = [float(b) for b in one]
    assert list(many) == pytest.approx(one_f, rel=1e-11, abs=0)
    # never above the per-node bound (a bound must stay a bound)
    assert all(a <= b for a, b in zip(many, one_f))


@given(
    st.lists(st.tuples(st.integers(0, 2**40), st.integers(1, 50)), min_size=1, max_size=300),
    st.sampled_from([None, 1, 2, 4, 8]),
    st.integers(1, 6),
)
def test_hashed_grouping_equals_exact_grouping(pairs, bits, spread):
    import numpy as np

    from anonlab.algorithms._lattice.lattice import _hashed_groups

    key = np.array([k % (10**spread) for k, _ in pairs], dtype=np.int64)
    w = np.array([x for _, x in pairs], dtype=np.int64)
    ids, sizes = _hashed_groups(key, w, need_ids=True, bits=bits)
    _, only_sizes = _hashed_groups(key, w, bits=bits)
    assert only_sizes.tolist() == sizes.tolist()
    uniq, inv = np.unique(key, return_inverse=True)
    want = np.bincount(inv.reshape(-1), weights=w).astype(np.int64)
    assert sorted(sizes.tolist()) == sorted(want.tolist())
    # same partition: ids and the exact inverse map one to one, sizes agree per group
    assert ids is not None and ids.min() >= 0 and ids.max() == sizes.size - 1
    pairs_seen = set(zip(ids.tolist(), inv.reshape(-1).tolist()))
    assert len(pairs_seen) == uniq.size == sizes.size
    assert np.bincount(ids, weights=w).astype(np.int64).tolist() == sizes.tolist()


@pytest.mark.slow
@given(
    st.lists(
        st.tuples(vals, vals, vals, st.sampled_from(["p", "q", "r"])), min_size=1, max_size=25
    ),
    st.sampled_from(MODELS),
    st.sampled_from([0.0, 0.3]),
    st.data(),
)
def test_refined_classes_equal_the_node_classes(rows, models, suppression, data):
    """Splitting a node's classes by one attribute's finer labels gives the finer node's
    classes and verdicts (levels nest), as grouping every base class does."""
    import numpy as np

    ev, lattice, _ = setup(rows, models, ("height", {}), suppression)
    node = tuple(data.draw(st.integers(0, h)) for h in lattice.max_levels)
    movable = [j for j, lv in enumerate(node) if lv > 0]
    assume(movable)
    j = data.draw(st.sampled_from(movable))
    finer = data.draw(st.integers(0, node[j] - 1))
    target = node[:j] + (finer,) + node[j + 1 :]
    ids, sizes = ev.classes(node)
    new_ids, new_sizes = ev.refine(ids, sizes.size, j, finer)
    ref = ev.evaluate(target, with_loss=False)
    got = ev.evaluate_classes(target, new_ids, new_sizes)
    assert sorted(new_sizes.tolist()) == sorted(ref.stats.sizes.tolist())
    # the same partition of the base classes as a direct grouping
    direct, _ = ev.classes(target)
    pairs = set(zip(direct.tolist(), new_ids.tolist()))
    assert len(pairs) == len(set(direct.tolist())) == len(set(new_ids.tolist()))
    assert (got.anonymous, got.suppressed_rows) == (ref.anonymous, ref.suppressed_rows)
    assert np.array_equal(
        np.sort(got.stats.sizes[got.violating]), np.sort(ref.stats.sizes[ref.violating])
    )


@given(
    table_rows(),
    st.sampled_from(MODELS),
    st.sampled_from(METRICS),
    st.sampled_from([0.0, 0.3]),
    st.data(),
)
def test_loss_of_known_classes_equals_the_evaluated_loss(rows, models, metric, suppression, data):
    """A node evaluated with loss on classes found elsewhere (any numbering, as
    PrivacyFrost2's search groups them) has the verdicts and the loss of :meth:`evaluate`."""
    import numpy as np

    ev, lattice, _ = setup(rows, models, metric, suppression)
    node = tuple(data.draw(st.integers(0, h)) for h in lattice.max_levels)
    ids, sizes = ev.classes(node)
    perm = np.array(data.draw(st.permutations(range(sizes.size))), dtype=np.int64)
    renumbered = perm[ids]  # class c becomes perm[c]
    moved = np.empty_like(sizes)
    moved[perm] = sizes
    ref = ev.evaluate(node, with_loss=True)
    got = ev.evaluate_classes(node, renumbered, moved, with_loss=True)
    assert (got.anonymous, got.suppressed_rows) == (ref.anonymous, ref.suppressed_rows)
    if ref.loss is None:
        assert got.loss is None
    else:
        assert got.loss is not None
        assert got.loss == pytest.approx(ref.loss, rel=1e-12, abs=1e-12)


# costly: each example searches a lattice and its brute force
@costly(60)
@given(
    st.lists(
        st.tuples(vals, vals, vals, st.sampled_from(["p", "q", "r"])), min_size=1, max_size=25
    ),
    st.data(),
)
def test_attribute_sizes_equal_the_single_attribute_classes(rows, data):
    """One attribute's class sizes summed through its hierarchy from its domain counts
    equal the sizes of grouping the base classes by that attribute alone."""
    ev, lattice, _ = setup(rows, MODELS[0], ("height", {}), 0.0)
    j = data.draw(st.integers(0, len(lattice.max_levels) - 1))
    level = data.draw(st.integers(0, lattice.max_levels[j]))
    want = ev.stats((level,), [j], with_keys=False, with_sensitive=False).sizes
    got = ev.attribute_sizes(j, level)
    assert got.tolist() == want.tolist()
    assert int(got.sum()) == len(rows)
