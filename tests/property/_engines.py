"""What the engine differential tests share: small random tables with nulls, and the check
that an engine answers as the numpy engine does (test_spark_differential.py,
test_duckdb_differential.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from anonlab import EncodedTable, diagnose, open_engine, taxonomy_hierarchy

COLS = ["a", "b", "c", "d"]
#: a root above two levels: a null is its own class below the root, merged at it
HIER = {"a": taxonomy_hierarchy({"x": ["xy", "*"], "y": ["xy", "*"], "z": ["z", "*"]})}

values = st.sampled_from(["x", "y", "z", None])
subsets = st.lists(st.sampled_from(COLS), min_size=1, max_size=4, unique=True)
#: the arguments of :func:`check_agrees` after the table: subset, sensitive attribute,
#: level of ``a``, k and delta
questions = (
    subsets,
    st.sampled_from(COLS),
    st.integers(0, 2),
    st.integers(1, 4),
    st.sampled_from([0.0, 0.2]),
)


@st.composite
def tables(draw: Any, max_rows: int = 25) -> EncodedTable:
    n = draw(st.integers(1, max_rows))
    rows = draw(st.lists(st.tuples(*[values] * len(COLS)), min_size=n, max_size=n))
    return EncodedTable.from_rows(rows, COLS)


def check_agrees(
    other: Any,
    table: EncodedTable,
    subset: list[str],
    sens: str,
    level: int,
    k: int,
    delta: float,
    *,
    same_numbering: bool,
) -> None:
    """Assert that the engine ``other`` (on ``table``, with :data:`HIER`) gives the numpy
    engine's classes (numbered alike if ``same_numbering``, else the same partition of the
    rows), rows in small classes, batched subset sizes and diagnosis answers."""
    levels = {"a": level} if "a" in subset and level else {}
    np_eng = open_engine(table, hierarchies=HIER)
    a = np_eng.class_stats(subset, levels, sensitive=[sens], with_rows=True)
    b = other.class_stats(subset, levels, sensitive=[sens], with_rows=True)
    if same_numbering:
        for name in ("sizes", "keys", "row_class"):
            assert np.array_equal(getattr(a, name), getattr(b, name)), name
        assert all(np.array_equal(x, y) for x, y in zip(a.domains, b.domains))
        assert np.array_equal(a.sensitive[sens].counts, b.sensitive[sens].counts)
        assert np.array_equal(a.sensitive[sens].values, b.sensitive[sens].values)
    else:
        assert a.canonical() == b.canonical()
        pairs = set(zip(a.row_class.tolist(), b.row_class.tolist()))  # the same partition
        assert len(pairs) == a.n_classes == b.n_classes
    assert sorted(other.class_sizes(subset, levels).tolist()) == sorted(a.sizes.tolist())
    assert np.array_equal(
        np_eng.rows_in_small_classes(subset, levels, k),
        other.rows_in_small_classes(subset, levels, k),
    )
    # every subset of the table in one batch
    all_subsets = [[c for i, c in enumerate(COLS) if m >> i & 1] for m in range(1, 16)]
    lv = {"a": level} if level else {}
    for s, sizes in zip(all_subsets, other.class_sizes_many(all_subsets, lv)):
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
        assert diagnose(other, **question).to_dict() == diagnose(np_eng, **question).to_dict()
