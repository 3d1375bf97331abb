"""Sensitive histograms in bounded memory (issue 27).

A sensitive attribute with 20,000 distinct values in 20,000 classes would take a dense
``(classes, values)`` matrix of 3.2 GB. t-closeness judges it from the non-zero counts; models
that read the counts whole refuse with a clear error instead of allocating gigabytes; the
optimal search reports its progress per evaluated node.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from anonlab import EncodedTable
from anonlab.algorithms._lattice import Lattice, LatticeEvaluator
from anonlab.algorithms.full_domain import optimal_search
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.stats import SensitiveHistogram
from anonlab.engines import get_engine
from anonlab.exceptions import InputError
from anonlab.jobs import check
from anonlab.metrics import build_metric
from anonlab.metrics.base import MetricContext
from anonlab.models import (
    DistinctLDiversity,
    EqualTCloseness,
    HierarchicalTCloseness,
    OrderedTCloseness,
)

N = 20_000
MIB = 2**20


@pytest.fixture(scope="module")
def wide() -> tuple[EncodedTable, Hierarchy]:
    """40,000 rows: 20,000 classes of two rows, 20,000 distinct sensitive values."""
    rng = np.random.default_rng(0)
    s = rng.permutation(2 * N) % N
    labels = np.array([f"{x:05d}" for x in range(N)], dtype=object)
    table = EncodedTable.from_columns({"q": labels[np.arange(2 * N) % N], "s": labels[s]})
    rows = [[v, v[:3], v[:1], "*"] for v in labels]
    return table, Hierarchy(rows, attribute="s")


def _models(hier: Hierarchy):
    return [
        EqualTCloseness("s", 0.3),
        OrderedTCloseness("s", 0.3),
        HierarchicalTCloseness("s", 0.3, hier),
    ]


def test_wide_attribute_is_judged_without_the_dense_matrix(wide):
    table, hier = wide
    engine = get_engine("numpy", table)
    models = _models(hier)
    tracemalloc.start()
    try:
        stats = engine.class_stats(["q"], sensitive=["s"])
        verdicts = [m.class_ok(stats) for m in models]
        values = [m.value(stats) for m in models]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    hist = stats.sensitive["s"]
    assert (stats.n_classes, hist.n_values) == (N, N)
    assert not hist.is_dense
    assert peak < 32 * MIB, f"peak {peak / MIB:.1f} MiB (dense: {N * N * 8 / MIB:,.0f} MiB)"
    # two rows of 20,000 values: all classes are far from the table, unless the order
    # places the two values near its thirds
    assert all(v.shape == (N,) for v in verdicts)
    assert not verdicts[0].any() and not verdicts[2].any() and 0 < verdicts[1].sum() < N
    assert all(0.3 < v <= 1.0 for v in values)


def test_check_of_a_wide_attribute_stays_small(wide):
    table, hier = wide
    job = {
        "quasi_identifiers": {"q": {}},
        "sensitive": ["s"],
        "models": [
            {"equal_t_closeness": {"attribute": "s", "t": 0.3}},
            {"ordered_t_closeness": {"attribute": "s", "t": 0.3}},
            {"hierarchical_t_closeness": {"attribute": "s", "t": 0.3, "hierarchy": hier}},
        ],
        "metric": {"name": "entropy", "monotonic": False},
    }
    tracemalloc.start()
    try:
        report = check(table, job)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.n_classes == N
    engine = get_engine("numpy", table)
    stats = engine.class_stats(["q"], sensitive=["s"])
    want = [int((~m.class_ok(stats)).sum()) for m in _models(hier)]
    assert [m["violating_classes"] for m in report.models] == want
    assert peak < 32 * MIB, f"peak {peak / MIB:.1f} MiB"


def test_dense_counts_over_the_budget_raise_a_clear_error(wide, monkeypatch):
    table, _ = wide
    stats = get_engine("numpy", table).class_stats(["q"], sensitive=["s"])
    monkeypatch.setenv("ANONLAB_MEMORY_BUDGET", "256M")
    with pytest.raises(InputError) as info:
        DistinctLDiversity("s", 2).class_ok(stats)
    msg = str(info.value)
    for part in (
        "'distinct_l_diversity'",
        "'s'",
        "20,000 classes x 20,000 sensitive values",
        "3.2 GB",
        "ANONLAB_MEMORY_BUDGET",
    ):
        assert part in msg, msg
    assert not stats.sensitive["s"].is_dense


def test_dense_counts_within_the_budget_are_made_once():
    values = np.array(["a", "b", "c"], dtype=object)
    h = SensitiveHistogram(values, indptr=[0, 2, 2, 3], indices=[0, 2, 1], data=[4, 1, 2])
    assert not h.is_dense
    assert np.array_equal(h.counts, [[4, 0, 1], [0, 0, 0], [0, 2, 0]])
    assert h.is_dense and h.counts is h.counts
    assert np.array_equal(h.class_totals(), [5, 0, 2])
    assert np.array_equal(h.value_totals(), [4, 2, 1])
    assert "3 classes x 3 values" in repr(h)


def test_a_histogram_needs_one_form():
    values = np.array(["a"], dtype=object)
    with pytest.raises(InputError):
        SensitiveHistogram(values)
    with pytest.raises(InputError):
        SensitiveHistogram(values, indptr=[0, 1], indices=[0, 0], data=[1])
    with pytest.raises(InputError):
        SensitiveHistogram(values, np.zeros((2, 2), dtype=np.int64))


def test_optimal_search_reports_evaluated_nodes_of_the_lattice():
    rng = np.random.default_rng(3)
    rows = [(str(a), str(b), str(s)) for a, b, s in rng.integers(0, 6, size=(300, 3))]
    table = EncodedTable.from_rows(rows, ["a", "b", "s"])
    hier = {
        q: Hierarchy([[str(v), str(v // 2), str(v // 4), "*"] for v in range(6)], attribute=q)
        for q in ("a", "b")
    }
    base = get_engine("numpy", table, hierarchies=hier).class_stats(["a", "b"], sensitive=["s"])
    metric = build_metric("entropy", monotonic=False)
    context = MetricContext(("a", "b"), hier, base, table.n_rows, {})
    model = EqualTCloseness("s", 0.25)
    ev = LatticeEvaluator(base, hier, [model], 15, metric, context)
    lattice = Lattice(("a", "b"), (0, 0), (3, 3))
    calls: list[tuple[int, int | None]] = []
    res = optimal_search(
        ev, lattice, monotonic_models=False, progress=lambda a, t: calls.append((a, t))
    )
    assert calls and all(t == lattice.size == 16 for _, t in calls)
    assert sum(a for a, _ in calls) == res.evaluated_nodes
    assert all(a > 0 for a, _ in calls)
