"""The models with a population table (k-map with a population table, delta-presence): every
node's population counts equal a brute-force count of the population rows with the same
generalized labels, the optimal search and Incognito equal brute force on small lattices
(delta-presence is monotonic under generalization only without suppression), and the optimum
satisfies the models."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

from anonlab import EncodedTable
from anonlab.algorithms._lattice import Lattice, LatticeEvaluator
from anonlab.data.population import Population
from anonlab.engines import get_engine
from anonlab.metrics import build_metric
from anonlab.metrics.base import MetricContext
from anonlab.models import build_model
from tests.property.test_lattice_search import METRICS, QIS, H, table_rows
from tests.support.exhaustive import searches_equal_exhaustive
from tests.support.profiles import costly

MODELS = [
    [("k_map", {"k": 3})],
    [("k_map", {"k": 5})],
    [("delta_presence", {"dmin": 0.0, "dmax": 0.5})],
    [("delta_presence", {"dmin": 0.2, "dmax": 0.7})],
    [("k_anonymity", {"k": 2}), ("delta_presence", {"dmin": 0.0, "dmax": 0.6})],
    [("k_map", {"k": 4}), ("delta_presence", {"dmin": 0.1, "dmax": 1.0})],
]


def setup(rows, extra, models, metric, suppression):
    """The evaluator of the sample ``rows`` against the population ``rows + extra``."""
    table = EncodedTable.from_rows(rows, [*QIS, "s"])
    population = Population(EncodedTable.from_rows(rows + extra, [*QIS, "s"]), "pop")
    built = [
        build_model(n, {**p, "population": population} if n != "k_anonymity" else p)
        for n, p in models
    ]
    base = get_engine("numpy", table, hierarchies=H).class_stats(list(QIS))
    pop = get_engine("numpy", population.table, hierarchies=H).class_stats(list(QIS))
    met = build_metric(metric[0], **metric[1])
    ctx = MetricContext(QIS, H, base, table.n_rows, {})
    limit = int(math.floor(suppression * table.n_rows + 1e-9))
    ev = LatticeEvaluator(base, H, built, limit, met, ctx, pop)
    lattice = Lattice(QIS, (0, 0, 0), tuple(H[q].height for q in QIS))
    mono = all(
        m.monotonic_generalization and (suppression == 0 or m.monotonic_suppression) for m in built
    )
    return ev, lattice, mono


def _label(q: str, level: int, value: str) -> object:
    cats = np.array(["x", "y", "z"], dtype=object)
    mappings, labels = H[q].generalizations(cats)
    return labels[level][mappings[level][["x", "y", "z"].index(value)]]


populations = st.lists(
    st.tuples(*(st.sampled_from(["x", "y", "z"]) for _ in QIS), st.just("p")), max_size=30
)


# costly: each example evaluates every node and counts the population by brute force
@costly(40)
@given(table_rows(min_size=1), populations)
def test_population_counts_equal_brute_force(rows, extra):
    ev, lattice, _ = setup(rows, extra, [("k_map", {"k": 2})], ("height", {}), 0.0)
    everyone = rows + extra
    for v in lattice.nodes():
        node = tuple(int(x) for x in v)
        res = ev.evaluate(node, with_loss=False)
        stats = ev.with_population(ev.stats(node))
        assert stats.population_rows == len(everyone)
        for key, count in zip(stats.key_labels(), stats.population_sizes.tolist()):
            expected = sum(
                all(_label(q, lv, r[j]) == key[j] for j, (q, lv) in enumerate(zip(QIS, node)))
                for r in everyone
            )
            assert count == expected, (node, key)
        assert np.array_equal(res.stats.population_sizes, stats.population_sizes)


# costly: each example searches a lattice and its brute force
@costly(60)
@given(
    table_rows(min_size=2),
    populations,
    st.sampled_from(MODELS),
    st.sampled_from(METRICS),
    st.sampled_from([0.0, 0.1, 0.3]),
)
def test_optimal_equals_exhaustive_and_satisfies_the_models(
    rows, extra, models, metric, suppression
):
    ev, lattice, mono = setup(rows, extra, models, metric, suppression)
    best = searches_equal_exhaustive(ev, lattice, mono)
    assume(best is not None)
    assert best is not None
    assert best.suppressed_rows <= ev.max_suppressed
    for m in ev.models:
        assert bool(np.all(m.class_ok(best.stats)[~best.violating])), m


def test_delta_presence_with_suppression_is_searched_as_non_monotonic():
    """A table where delta-presence is not monotonic under generalization with suppression
    (found by a random search): Incognito pruning as for a monotonic model misses the
    optimum, (1, 2, 0) at height 3, and returns (1, 2, 1)."""
    rows = [
        ("z", "z", "z"), ("z", "x", "x"), ("y", "y", "z"), ("x", "x", "z"), ("z", "x", "y"),
        ("x", "z", "y"), ("y", "z", "y"), ("z", "y", "z"), ("y", "x", "y"), ("y", "x", "y"),
        ("y", "x", "z"),
    ]  # fmt: skip
    extra = [
        ("z", "x", "x"), ("z", "y", "z"), ("x", "z", "x"), ("x", "y", "y"), ("y", "z", "y"),
        ("x", "z", "x"), ("x", "y", "x"), ("x", "z", "y"), ("z", "z", "y"), ("z", "z", "z"),
        ("x", "x", "y"), ("y", "z", "y"), ("x", "z", "y"),
    ]  # fmt: skip
    ev, lattice, mono = setup(
        [(*r, "p") for r in rows],
        [(*r, "p") for r in extra],
        [("delta_presence", {"dmin": 0.0, "dmax": 0.5})],
        ("height", {}),
        0.3,
    )
    assert not mono
    best = searches_equal_exhaustive(ev, lattice, mono)
    assert best is not None and best.levels == (1, 2, 0)
