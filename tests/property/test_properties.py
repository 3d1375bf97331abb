"""Hypothesis properties: Lemma 1, Lemma 2, a-priori search = brute force, engines agree."""

from __future__ import annotations

import csv
import itertools
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from anonlab import CsvOptions, EncodedTable, diagnose, open_engine, taxonomy_hierarchy
from anonlab.diagnosis import k_with_suppression
from anonlab.diagnosis.suppression import suppression_budget
from tests.support.profiles import costly

COLS = ["a", "b", "c", "d"]

values = st.sampled_from(["x", "y", "z", None])


@st.composite
def tables(draw, min_rows=1, max_rows=30, null=True):
    n = draw(st.integers(min_rows, max_rows))
    alphabet = values if null else st.sampled_from(["x", "y", "z"])
    rows = draw(st.lists(st.tuples(*[alphabet] * len(COLS)), min_size=n, max_size=n))
    return EncodedTable.from_rows(rows, COLS)


def brute_k(table: EncodedTable, subset) -> int:
    rows = list(zip(*[table[c].labels() for c in subset])) if subset else [()] * table.n_rows
    counts = {}
    for r in rows:
        counts[r] = counts.get(r, 0) + 1
    return min(counts.values())


subsets = st.lists(st.sampled_from(COLS), min_size=1, max_size=4, unique=True)


@given(tables(), subsets, subsets, st.floats(0, 1))
def test_lemma1_monotonicity(table, s1, s2, delta):
    """Adding attributes never raises k, with or without delta-suppression."""
    eng = open_engine(table)
    small, big = s1, sorted(set(s1) | set(s2), key=COLS.index)
    n = table.n_rows
    assert eng.class_sizes(big).min() <= eng.class_sizes(small).min()
    assert (
        k_with_suppression(eng.class_sizes(big), n, delta)[0]
        <= k_with_suppression(eng.class_sizes(small), n, delta)[0]
    )
    assert int(eng.class_sizes(small).min()) == brute_k(table, small)


# costly: each example runs a brute-force oracle or DuckDB
@costly(60)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=9), st.floats(0, 1))
def test_lemma2_smallest_classes_first_is_optimal(labels, delta):
    """Brute force over every set of rows to remove equals compute-k-with-suppression."""
    n = len(labels)
    budget = suppression_budget(delta, n)
    best_k, best_removed = 0, 0
    for r in range(0, min(budget, n - 1) + 1):
        for removed in itertools.combinations(range(n), r):
            rest = [labels[i] for i in range(n) if i not in removed]
            k = min(rest.count(v) for v in set(rest))
            if k > best_k or (k == best_k and r < best_removed):
                best_k, best_removed = k, r
    sizes = np.bincount(labels)
    sizes = sizes[sizes > 0].astype(np.int64)
    k, suppressed = k_with_suppression(sizes, n, delta)
    assert (k, suppressed) == (best_k, best_removed)
    assert suppressed <= budget


def brute_largest(table, k, delta):
    n = table.n_rows
    eng = open_engine(table)
    ok = []
    for r in range(1, len(COLS) + 1):
        for s in itertools.combinations(COLS, r):
            kk = k_with_suppression(eng.class_sizes(list(s)), n, delta)[0]
            if kk >= k:
                ok.append(s)
    return sorted(
        [s for s in ok if not any(set(s) < set(t) for t in ok)],
        key=lambda s: (-len(s), [COLS.index(a) for a in s]),
    )


# costly: each example runs a brute-force oracle or DuckDB
@costly(60)
@given(tables(), st.integers(1, 6), st.sampled_from([0.0, 0.1, 0.3]))
def test_apriori_search_equals_brute_force(table, k, delta):
    k = min(k, table.n_rows)
    ans = diagnose(table, k=k, delta=delta if delta else None)
    assert [tuple(s) for s in ans.subsets] == brute_largest(table, k, delta)
    assert ans.evaluations <= 2 ** len(COLS) - 1


# costly: each example runs a brute-force oracle or DuckDB
@costly(40)
@given(tables(), st.sampled_from([None, 0.2]))
def test_all_subsets_table_equals_brute_force(table, delta):
    ans = diagnose(table, delta=delta)
    n = table.n_rows
    for row in ans.rows:
        sizes = open_engine(table).class_sizes(row.attributes)
        expected = k_with_suppression(sizes, n, delta)[0] if delta else int(sizes.min())
        assert row.k == expected, row


# costly: each example runs a brute-force oracle or DuckDB
@costly(30)
@given(tables(), st.integers(1, 8))
def test_delta_tables_equal_one_subset_answers(table, k):
    k = min(k, table.n_rows)
    q10 = diagnose(table, k=k, find_delta=True)
    for row in q10.rows:
        q9 = diagnose(table, quasi_identifiers=row.attributes, k=k, find_delta=True)
        assert (row.delta, row.suppressed_rows) == (q9.delta, q9.suppressed_rows)


HIER = taxonomy_hierarchy({"x": ["xy"], "y": ["xy"], "z": ["z"]}, attribute="a")


def _write_csv(table: EncodedTable, path: Path) -> None:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(table.names)
        cols = [table[c].labels() for c in table.names]
        for row in zip(*cols):
            w.writerow(["" if v is None else v for v in row])


# costly: each example runs a brute-force oracle or DuckDB
@costly(25)
@given(tables(), subsets, st.sampled_from(COLS), st.booleans(), st.integers(1, 4))
def test_numpy_and_duckdb_engines_agree(table, subset, sens, generalize, k):
    pytest.importorskip("duckdb")
    levels = {"a": 1} if generalize and "a" in subset else None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.csv"
        _write_csv(table, path)
        opts = CsvOptions(na_values=("",))
        np_eng = open_engine(path, csv_options=opts, hierarchies={"a": HIER})
        db_eng = open_engine(path, engine="duckdb", csv_options=opts, hierarchies={"a": HIER})
        a = np_eng.class_stats(subset, levels, sensitive=[sens], with_rows=True)
        b = db_eng.class_stats(subset, levels, sensitive=[sens], with_rows=True)
        assert a.canonical() == b.canonical()
        assert sorted(a.sizes.tolist()) == sorted(db_eng.class_sizes(subset, levels).tolist())
        # same partition of rows, whatever the class numbering
        pairs = set(zip(a.row_class.tolist(), b.row_class.tolist()))
        assert len(pairs) == a.n_classes == b.n_classes
        assert np.array_equal(
            np_eng.rows_in_small_classes(subset, levels, k),
            db_eng.rows_in_small_classes(subset, levels, k),
        )
        # without keys: the same classes, rows and histograms, and no keys
        for eng, full in ((np_eng, a), (db_eng, b)):
            bare = eng.class_stats(
                subset, levels, sensitive=[sens], with_rows=True, with_keys=False
            )
            assert bare.keys is None and bare.domains is None
            assert np.array_equal(bare.sizes, full.sizes)
            assert np.array_equal(bare.row_class, full.row_class)
            assert np.array_equal(bare.sensitive[sens].counts, full.sensitive[sens].counts)


@given(tables(), st.lists(subsets, min_size=1, max_size=6))
def test_partition_cache_does_not_change_answers(table, many):
    warm = open_engine(table)
    for s in many:
        assert sorted(warm.class_sizes(s).tolist()) == sorted(
            open_engine(table).class_sizes(s).tolist()
        )
