"""Hypothesis: the Spark engine and the numpy engine agree on small random tables (issue 33).

Class sizes, class statistics (keys, rows, sensitive histograms, numbered alike), rows in small
classes, batched subset sizes and diagnosis questions, at hierarchy levels and with nulls.
Spark answers in tenths of a second per question, so the examples are few; they share one
local SparkSession (the ``spark`` fixture of tests/conftest.py).
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonlab import EncodedTable, diagnose, open_engine, taxonomy_hierarchy
from anonlab.engines import get_engine

COLS = ["a", "b", "c", "d"]
#: a root above two levels: a null is its own class below the root, merged at it
HIER = {"a": taxonomy_hierarchy({"x": ["xy", "*"], "y": ["xy", "*"], "z": ["z", "*"]})}

values = st.sampled_from(["x", "y", "z", None])
subsets = st.lists(st.sampled_from(COLS), min_size=1, max_size=4, unique=True)


@st.composite
def tables(draw, max_rows=25):
    n = draw(st.integers(1, max_rows))
    rows = draw(st.lists(st.tuples(*[values] * len(COLS)), min_size=n, max_size=n))
    return EncodedTable.from_rows(rows, COLS)


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    tables(),
    subsets,
    st.sampled_from(COLS),
    st.integers(0, 2),
    st.integers(1, 4),
    st.sampled_from([0.0, 0.2]),
)
def test_spark_and_numpy_engines_agree(spark, table, subset, sens, level, k, delta):
    levels = {"a": level} if "a" in subset and level else {}
    np_eng = open_engine(table, hierarchies=HIER)
    sp = get_engine("spark", table, hierarchies=HIER, spark=spark)
    try:
        a = np_eng.class_stats(subset, levels, sensitive=[sens], with_rows=True)
        b = sp.class_stats(subset, levels, sensitive=[sens], with_rows=True)
        for name in ("sizes", "keys", "row_class"):
            assert np.array_equal(getattr(a, name), getattr(b, name)), name
        assert all(np.array_equal(x, y) for x, y in zip(a.domains, b.domains))
        assert np.array_equal(a.sensitive[sens].counts, b.sensitive[sens].counts)
        assert np.array_equal(a.sensitive[sens].values, b.sensitive[sens].values)
        assert sorted(sp.class_sizes(subset, levels).tolist()) == sorted(a.sizes.tolist())
        assert np.array_equal(
            np_eng.rows_in_small_classes(subset, levels, k),
            sp.rows_in_small_classes(subset, levels, k),
        )
        # every subset of the table in one batch
        all_subsets = [[c for i, c in enumerate(COLS) if m >> i & 1] for m in range(1, 16)]
        lv = {"a": level} if level else {}
        for s, sizes in zip(all_subsets, sp.class_sizes_many(all_subsets, lv)):
            expected = np_eng.class_sizes(s, {"a": level} if "a" in s and level else {})
            assert sorted(sizes.tolist()) == sorted(expected.tolist()), s
        # a few diagnosis questions through the engine protocol
        kk = min(k, table.n_rows)
        for question in (
            dict(quasi_identifiers=subset, k=kk, levels=levels),  # Q1
            dict(quasi_identifiers=subset, delta=delta, list_rows=True, levels=levels),  # Q6
            dict(quasi_identifiers=subset, k=kk, find_delta=True, list_rows=True),  # Q9
            dict(attributes=COLS[:3], k=kk, delta=delta or None),  # Q3 / Q7
        ):
            if "levels" in question and not levels:
                question.pop("levels")
            assert diagnose(sp, **question).to_dict() == diagnose(np_eng, **question).to_dict()
    finally:
        sp.close()
