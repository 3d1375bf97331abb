"""Hypothesis: the DuckDB engine and the numpy engine agree on small random tables (issue 33).

The twin of ``test_spark_differential.py``: class statistics (the same classes, rows and
sensitive histograms, whatever their numbering), rows in small classes, batched subset sizes
and diagnosis questions, at hierarchy levels (the root included, where a null is generalized
too) and with nulls. It found two bugs: rows numbered after the joins with the level tables
(the wrong rows in small classes) and nulls left out of the root.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonlab import EncodedTable, diagnose, open_engine, taxonomy_hierarchy
from anonlab.engines import get_engine

pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")

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


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tables(),
    subsets,
    st.sampled_from(COLS),
    st.integers(0, 2),
    st.integers(1, 4),
    st.sampled_from([0.0, 0.2]),
)
def test_duckdb_and_numpy_engines_agree(table, subset, sens, level, k, delta):
    levels = {"a": level} if "a" in subset and level else {}
    np_eng = open_engine(table, hierarchies=HIER)
    db = get_engine("duckdb", table, hierarchies=HIER)  # (its columns as text)
    try:
        a = np_eng.class_stats(subset, levels, sensitive=[sens], with_rows=True)
        b = db.class_stats(subset, levels, sensitive=[sens], with_rows=True)
        assert a.canonical() == b.canonical()
        pairs = set(zip(a.row_class.tolist(), b.row_class.tolist()))  # the same partition
        assert len(pairs) == a.n_classes == b.n_classes
        assert sorted(db.class_sizes(subset, levels).tolist()) == sorted(a.sizes.tolist())
        assert np.array_equal(
            np_eng.rows_in_small_classes(subset, levels, k),
            db.rows_in_small_classes(subset, levels, k),
        )
        # every subset of the table in one batch
        all_subsets = [[c for i, c in enumerate(COLS) if m >> i & 1] for m in range(1, 16)]
        lv = {"a": level} if level else {}
        for s, sizes in zip(all_subsets, db.class_sizes_many(all_subsets, lv)):
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
            assert diagnose(db, **question).to_dict() == diagnose(np_eng, **question).to_dict()
    finally:
        db.close()
