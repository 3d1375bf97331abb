"""The risk-based models (average risk, sample and population uniqueness, k-map): the optimal
search and Incognito equal brute force on small lattices, the optimum satisfies the models,
and ARX's binary search suppresses the fewest smallest classes where the verdict can only
improve as they go."""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

from anonlab.data.stats import ClassStats
from anonlab.models import AverageRisk, SampleUniqueness, failing_classes
from tests.property.test_lattice_search import METRICS, setup, table_rows
from tests.support.exhaustive import searches_equal_exhaustive
from tests.support.profiles import costly

MODELS = [
    [("average_risk", {"threshold": 0.3})],
    [("average_risk", {"threshold": 0.5, "highest_risk": 0.34, "records_at_risk": 0.2})],
    [("k_anonymity", {"k": 2}), ("average_risk", {"threshold": 0.25})],
    [("sample_uniqueness", {"threshold": 0.1})],
    [("distinct_l_diversity", {"attribute": "s", "l": 2}), ("sample_uniqueness", {"threshold": 0.2})],
    [("population_uniqueness", {"threshold": 0.05, "sampling_fraction": 0.2, "estimator": "zayatz"})],
    [("population_uniqueness", {"threshold": 0.02, "sampling_fraction": 0.05})],
    [("k_map", {"k": 20, "sampling_fraction": 0.1})],
    [("average_risk", {"threshold": 0.4}), ("sample_uniqueness", {"threshold": 0.15})],
]  # fmt: skip


def _kept(stats: ClassStats, violating: np.ndarray) -> ClassStats:
    return ClassStats(stats.columns, stats.levels, stats.sizes[~violating], stats.n_rows)


# costly: each example searches a lattice and its brute force
@costly(60)
@given(
    table_rows(min_size=2),
    st.sampled_from(MODELS),
    st.sampled_from(METRICS),
    st.sampled_from([0.0, 0.1, 0.3]),
)
def test_optimal_equals_exhaustive_and_satisfies_the_models(rows, models, metric, suppression):
    ev, lattice, mono = setup(rows, models, metric, suppression)
    best = searches_equal_exhaustive(ev, lattice, mono)
    assume(best is not None)
    assert best is not None
    assert best.suppressed_rows <= ev.max_suppressed
    kept = _kept(best.stats, best.violating)
    for m in ev.models:  # every model holds on the classes left, judged afresh
        if m.sample_based:
            assert m.holds(kept), m
        else:
            assert bool(np.all(m.class_ok(best.stats)[~best.violating])), m
    assert int(kept.sizes.min(initial=ev.mcs)) >= ev.mcs


@given(
    st.lists(st.integers(1, 9), min_size=0, max_size=40),
    st.sampled_from(
        [AverageRisk(0.2), AverageRisk(0.5), AverageRisk(0.3, 0.25, 0.1), SampleUniqueness(0.1),
         SampleUniqueness(0.3)]
    ),
)  # fmt: skip
def test_binary_search_suppresses_the_fewest_smallest_classes(sizes, model):
    """Average risk and sample uniqueness only improve as the smallest classes go: ARX's
    binary search then suppresses the fewest of them that make the rest hold."""
    s = np.asarray(sizes, dtype=np.int64)
    stats = ClassStats(("q",), (0,), s, int(s.sum()))
    out = failing_classes([model], stats)
    order = np.sort(s)
    fewest = next(j for j in range(s.size + 1) if model.fulfilled(order[j:], int(s.sum())))
    assert int(out.sum()) == fewest
    if fewest:  # the smallest ones
        assert int(s[out].max()) <= int(s[~out].min(initial=10**9))
    assert model.holds(ClassStats(("q",), (0,), s[~out], int(s.sum())))
