"""Ordered grouping on tables too large for the property tests (hashed and sorted passes)."""

from __future__ import annotations

import numpy as np
import pytest

from anonlab.algorithms._lattice import lattice
from anonlab.data import grouping
from anonlab.data.grouping import lex_groups


def _reference(codes):
    _, inverse, counts = np.unique(
        np.column_stack(codes), axis=0, return_inverse=True, return_counts=True
    )
    return inverse.reshape(-1), counts


@pytest.mark.parametrize("prototypes", [300, 40_000])
def test_many_rows_few_or_many_distinct(prototypes):
    """Few distinct rows take the hashed pass, many the sort; both number groups in order."""
    rng = np.random.default_rng(7)
    n = 50_000
    cards = [5000, 3000, 7, 1, 90]
    base = np.column_stack([rng.integers(0, c, prototypes) for c in cards])
    rows = base[rng.integers(0, prototypes, n)]
    codes = [rows[:, j] for j in range(len(cards))]
    key = np.zeros(n, dtype=np.int64)
    for c, card in zip(codes, cards):
        key = key * card + c
    assert grouping._few_distinct(key) == (prototypes == 300)
    ids, sizes = lex_groups(codes, cards)
    want_ids, want_sizes = _reference(codes)
    assert np.array_equal(ids, want_ids)
    assert np.array_equal(sizes, want_sizes)


def test_hashed_pass_numbers_keys_in_order():
    rng = np.random.default_rng(3)
    key = rng.integers(0, 2**60, 200)[rng.integers(0, 200, 60_000)]
    ids, counts, distinct = grouping._ordered_hashed(key, 2**60)
    want_distinct, want_ids, want_counts = np.unique(key, return_inverse=True, return_counts=True)
    assert np.array_equal(ids, want_ids)
    assert np.array_equal(counts, want_counts)
    assert np.array_equal(distinct, want_distinct)


def test_lattice_still_exports_the_grouping_primitives():
    assert lattice.group_rows is grouping.group_rows
    assert lattice._hashed_groups is grouping.hashed_groups


@pytest.mark.parametrize(
    ("n", "space", "distinct"),
    [(0, 10, 1), (1, 1, 1), (1_000, 50, 50), (70_000, 1 << 40, 300), (70_000, 1 << 40, 60_000)],
)
def test_ordered_groups_equals_numpy_unique(n, space, distinct):
    """The counting pass (small space), the hashed pass (few distinct keys) and the sort
    (many) give numpy's unique keys, inverse and counts."""
    rng = np.random.default_rng(n + distinct)
    pool = rng.integers(0, space, distinct)
    key = pool[rng.integers(0, distinct, n)]
    ids, counts, keys = grouping.ordered_groups(key, space)
    want_keys, want_ids, want_counts = np.unique(key, return_inverse=True, return_counts=True)
    assert keys.tolist() == want_keys.tolist()
    assert ids.tolist() == want_ids.reshape(-1).tolist()
    assert counts.tolist() == want_counts.tolist()
