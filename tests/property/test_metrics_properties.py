"""Properties of the utility metrics on random tables, nodes and suppression masks.

* Without suppression every metric is monotone along a generalization step; metrics flagged
  ``monotonic`` are monotone for any suppression.
* ``lower_bound(levels)`` never exceeds ``loss`` for any suppression at those levels, and
  never decreases along a generalization step.
* The loss does not depend on the order of the classes.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from anonlab import EncodedTable, Hierarchy, open_engine, taxonomy_hierarchy
from anonlab.metrics import build_metric
from anonlab.metrics.base import MetricContext

QIS = ("a", "b", "c")
H = {
    # w never occurs in the data, but counts in the domain
    "a": Hierarchy(
        [["x", "xy", "*"], ["y", "xy", "*"], ["z", "zw", "*"], ["w", "zw", "*"]], attribute="a"
    ),
    "b": taxonomy_hierarchy({"x": ["*"], "y": ["*"], "z": ["*"]}, attribute="b", add_top=False),
    "c": taxonomy_hierarchy({"x": ["xy"], "y": ["xy"], "z": ["z"]}, attribute="c"),
}
HEIGHTS = tuple(H[q].height for q in QIS)
WEIGHTS = {"a": 3.0, "b": 1.0, "c": 0.5}

METRICS = [
    ("height", {}),
    ("height", {"weights": WEIGHTS}),
    ("precision", {}),
    ("precision", {"monotonic": True}),
    ("precision", {"gamma": 0.2}),
    ("precision", {"gamma": 0.8, "aggregate": "geometric", "weights": WEIGHTS}),
    ("discernibility", {}),
    ("discernibility", {"monotonic": True}),
    ("aecs", {}),
    ("aecs", {"gamma": 0.3}),
    ("aecs", {"gamma": 0.9}),
    ("entropy", {}),
    ("entropy", {"monotonic": True}),
    ("entropy", {"gamma": 0.1, "weights": WEIGHTS}),
    ("entropy", {"gamma": 0.7, "aggregate": "max"}),
    ("loss", {}),
    ("loss", {"aggregate": "rank"}),
    ("loss", {"gamma": 0.0, "aggregate": "sum"}),
    ("loss", {"gamma": 0.3, "aggregate": "arithmetic", "weights": WEIGHTS}),
    ("loss", {"gamma": 0.8, "aggregate": "rank", "weights": WEIGHTS}),
    ("loss", {"gamma": 1.0}),
    ("ncp", {}),
    ("gcp", {"weights": WEIGHTS}),
    ("distortion", {}),
    ("distortion", {"weights": WEIGHTS}),
    ("info_left", {}),
    ("info_left", {"weights": WEIGHTS, "n_sensitive": 2}),
]

vals = st.sampled_from(["x", "y", "z"])
rows_st = st.lists(st.tuples(vals, vals, vals), min_size=1, max_size=30)
node_st = st.tuples(*(st.integers(0, h) for h in HEIGHTS))
metric_st = st.sampled_from(METRICS)


def setup(rows):
    table = EncodedTable.from_rows(rows, list(QIS))
    engine = open_engine(table, hierarchies=H)
    ctx = MetricContext(QIS, H, engine.class_stats(list(QIS)), table.n_rows, {})

    def at(levels):
        return engine.class_stats(list(QIS), levels=dict(zip(QIS, levels)))

    return ctx, at


def random_mask(data, n):
    return np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)


def le(a: float, b: float) -> bool:
    """``a <= b`` (an infinite loss is larger than everything but itself)."""
    return bool(a <= b)


@given(rows_st, node_st, metric_st, st.data())
def test_generalization_never_lowers_the_loss_without_suppression(rows, node, metric, data):
    ctx, at = setup(rows)
    grow = [j for j in range(len(QIS)) if node[j] < HEIGHTS[j]]
    assume(grow)
    j = data.draw(st.sampled_from(grow))
    upper = tuple(lv + (i == j) for i, lv in enumerate(node))
    m = build_metric(metric[0], **metric[1])
    low, high = at(node), at(upper)
    l0 = m.loss(low, np.zeros(low.n_classes, dtype=bool), ctx)
    l1 = m.loss(high, np.zeros(high.n_classes, dtype=bool), ctx)
    assert le(l0, l1), (node, upper, l0, l1)


@pytest.mark.slow
@given(rows_st, node_st, metric_st, st.data())
def test_monotonic_metrics_never_decrease_with_any_suppression(rows, node, metric, data):
    m = build_metric(metric[0], **metric[1])
    assume(m.monotonic)
    ctx, at = setup(rows)
    grow = [j for j in range(len(QIS)) if node[j] < HEIGHTS[j]]
    assume(grow)
    j = data.draw(st.sampled_from(grow))
    upper = tuple(lv + (i == j) for i, lv in enumerate(node))
    low, high = at(node), at(upper)
    l0 = m.loss(low, random_mask(data, low.n_classes), ctx)
    l1 = m.loss(high, random_mask(data, high.n_classes), ctx)
    assert le(l0, l1)


@given(rows_st, node_st, metric_st, st.data())
def test_lower_bound_never_exceeds_the_loss(rows, node, metric, data):
    ctx, at = setup(rows)
    m = build_metric(metric[0], **metric[1])
    stats = at(node)
    bound = m.lower_bound(node, ctx)
    assert bound is not None
    for mask in (
        np.zeros(stats.n_classes, dtype=bool),
        np.ones(stats.n_classes, dtype=bool),
        random_mask(data, stats.n_classes),
        stats.sizes < data.draw(st.integers(2, 5)),  # k-anonymity's suppression
    ):
        loss = m.loss(stats, mask, ctx)
        assert le(bound, loss), (node, mask, bound, loss)


@given(rows_st, node_st, metric_st, st.data())
def test_lower_bound_is_monotone_in_the_levels(rows, node, metric, data):
    ctx, _ = setup(rows)
    m = build_metric(metric[0], **metric[1])
    grow = [j for j in range(len(QIS)) if node[j] < HEIGHTS[j]]
    assume(grow)
    j = data.draw(st.sampled_from(grow))
    upper = tuple(lv + (i == j) for i, lv in enumerate(node))
    b0, b1 = m.lower_bound(node, ctx), m.lower_bound(upper, ctx)
    assert b0 is not None and b1 is not None and le(b0, b1)


@given(rows_st, node_st, metric_st, st.data())
def test_loss_is_invariant_to_class_order(rows, node, metric, data):
    ctx, at = setup(rows)
    m = build_metric(metric[0], **metric[1])
    stats = at(node)
    mask = random_mask(data, stats.n_classes)
    perm = np.array(data.draw(st.permutations(list(range(stats.n_classes)))), dtype=np.int64)
    assert stats.keys is not None
    shuffled = replace(stats, sizes=stats.sizes[perm], keys=stats.keys[perm])
    a, b = m.loss(stats, mask, ctx), m.loss(shuffled, mask[perm], ctx)
    if metric[1].get("aggregate") == "rank":
        assert a.ranks == pytest.approx(b.ranks, rel=1e-12, abs=1e-12)
    else:
        assert a == pytest.approx(b, rel=1e-12, abs=1e-12)


@given(rows_st, node_st, st.data())
def test_bounds_of_suppression_blind_metrics_are_exact(rows, node, data):
    ctx, at = setup(rows)
    stats = at(node)
    mask = random_mask(data, stats.n_classes)
    for name, params in [
        ("height", {}),
        ("precision", {"monotonic": True}),
        ("entropy", {"monotonic": True}),
    ]:
        m = build_metric(name, **params)
        assert m.lower_bound(node, ctx) == m.loss(stats, mask, ctx)
