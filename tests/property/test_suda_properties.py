"""Hypothesis: properties of SUDA2's minimal sample uniques and scores
(:func:`anonlab.diagnosis.suda.suda2`), checked on small random tables with nulls.

* every MSU is unique on the table and no smaller non-empty subset of it is;
* a record scores above 0 iff it has an MSU, and then it is unique on all the
  quasi-identifiers; with ``m = M`` every such sample unique has one;
* a larger ``m`` keeps the MSUs of the smaller sizes; reordering the rows reorders the
  answers; the DIS score is 0 iff the SUDA score is, lies in (0, 1] otherwise and grows
  with it;
* the DuckDB engine gives the numpy engine's answer.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from anonlab import EncodedTable
from anonlab.diagnosis.suda import suda2
from anonlab.engines import get_engine
from tests.property._engines import COLS, tables
from tests.support.profiles import costly


def _rows(table: EncodedTable) -> list[tuple[object, ...]]:
    labels = [table.column(c).labels().tolist() for c in COLS]
    return list(zip(*labels))


@costly(80, deadline=None)
@given(tables(), st.integers(1, 4))
def test_msus_are_unique_and_minimal(table: EncodedTable, m: int) -> None:
    result = suda2(table, COLS, max_size=m)
    rows = _rows(table)
    counts = {
        s: Counter(tuple(r[j] for j in s) for r in rows)
        for k in range(1, 5)
        for s in combinations(range(4), k)
    }

    def unique(r: int, s: tuple[int, ...]) -> bool:
        return counts[s][tuple(rows[r][j] for j in s)] == 1

    full = Counter(rows)
    seen = set()
    for r, mask in zip(result.msu_records.tolist(), result.msu_attributes):
        s = tuple(np.flatnonzero(mask).tolist())
        assert 1 <= len(s) <= m
        assert (r, s) not in seen  # each MSU once
        seen.add((r, s))
        assert unique(r, s)
        assert not any(unique(r, t) for k in range(1, len(s)) for t in combinations(s, k))
        assert full[rows[r]] == 1  # unique on a subset: unique on all of them
    # a record scores iff it has an MSU; its MSU counts are its MSUs
    has = np.zeros(table.n_rows, dtype=bool)
    has[result.msu_records] = True
    assert np.array_equal(result.scores > 0, has)
    assert int(result.msu_counts.sum()) == result.msu_records.size
    assert np.array_equal(
        result.msu_counts.sum(axis=1), np.bincount(result.msu_records, minlength=table.n_rows)
    )
    if m == 4:  # every sample unique has an MSU of at most M attributes
        assert (
            result.records_with_msus
            == result.sample_uniques
            == sum(1 for r in rows if full[r] == 1)
        )


@costly(60, deadline=None)
@given(tables(), st.integers(1, 3), st.sampled_from([0.01, 0.2, 1.0]))
def test_sizes_orders_and_dis(table: EncodedTable, m: int, f: float) -> None:
    small = suda2(table, COLS, max_size=m, dis_fraction=f)
    large = suda2(table, COLS, max_size=m + 1, dis_fraction=f)
    assert np.array_equal(large.msu_counts[:, :m], small.msu_counts)
    # the DIS score
    dis, score = small.dis_scores, small.scores
    assert np.array_equal(dis > 0, score > 0)
    assert ((dis >= 0) & (dis <= 1)).all()
    order = np.argsort(score, kind="stable")
    assert (np.diff(dis[order]) >= -1e-15).all()
    if small.pair_records == 0:
        assert (dis[score > 0] == 1).all()
    # rows reordered: answers reordered
    perm = np.random.default_rng(table.n_rows).permutation(table.n_rows)
    moved = suda2(table.take(perm), COLS, max_size=m, dis_fraction=f)
    assert np.array_equal(moved.scores, small.scores[perm])
    np.testing.assert_allclose(moved.dis_scores, small.dis_scores[perm], rtol=1e-12)
    assert np.array_equal(moved.msu_counts, small.msu_counts[perm])


@costly(30, deadline=None)
@given(tables(), st.integers(1, 4))
def test_duckdb_engine_agrees(table: EncodedTable, m: int) -> None:
    pytest.importorskip("duckdb")
    expected = suda2(table, COLS, max_size=m)
    db = get_engine("duckdb", table)
    try:
        got = suda2(db, COLS, max_size=m)
    finally:
        db.close()
    assert np.array_equal(got.scores, expected.scores)
    np.testing.assert_allclose(got.dis_scores, expected.dis_scores, rtol=1e-12)
    assert np.array_equal(got.msu_records, expected.msu_records)
    assert [got.msus_of(r) for r in range(table.n_rows)] == [
        expected.msus_of(r) for r in range(table.n_rows)
    ]
