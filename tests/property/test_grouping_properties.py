"""Hypothesis properties: ordered grouping (``anonlab.data.grouping``) and the numpy engine's
classes equal ``np.unique(..., axis=0)`` over the columns, nulls included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from anonlab import EncodedTable
from anonlab.data.grouping import factorize_keys, lex_groups, refine_steps, sort_order
from anonlab.engines.numpy_engine import NumpyEngine

# a counting pass, a sort of every key, or a counting pass only for tiny key spaces
limits = st.sampled_from([None, 0, 8])


@st.composite
def code_tables(draw):
    """Columns of codes with cardinalities from 1 to beyond one 62-bit key."""
    n = draw(st.integers(0, 40))
    m = draw(st.integers(1, 7))
    cards = draw(
        st.lists(
            st.one_of(st.integers(1, 4), st.integers(5, 3000), st.sampled_from([2**31, 2**61])),
            min_size=m,
            max_size=m,
        )
    )
    codes = []
    for card in cards:
        # few distinct codes per column, so that rows repeat, even when the card is huge
        values = draw(st.lists(st.integers(0, card - 1), min_size=1, max_size=4))
        picks = draw(st.lists(st.integers(0, len(values) - 1), min_size=n, max_size=n))
        codes.append(np.array([values[i] for i in picks], dtype=np.int64))
    return codes, cards


def reference(codes):
    """Groups numbered in lexicographic order of the code rows: np.unique over axis 0."""
    rows = np.column_stack(codes)
    uniq, inverse, counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    return uniq, inverse.reshape(-1), counts


@pytest.mark.slow
@given(code_tables(), limits)
def test_lex_groups_equal_np_unique(table, limit):
    codes, cards = table
    ids, sizes = lex_groups(codes, cards, counting_limit=limit)
    _, inverse, counts = reference(codes)
    assert ids.tolist() == inverse.tolist()
    assert sizes.tolist() == counts.tolist()


@pytest.mark.slow
@given(code_tables(), st.integers(0, 7), limits)
def test_refining_a_prefix_equals_grouping_all_columns(table, split, limit):
    """Every partition refine_steps yields is the grouping of the columns done so far."""
    codes, cards = table
    split = min(split, len(codes))
    n = codes[0].size
    if split:
        ids, sizes = lex_groups(codes[:split], cards[:split])
        ids = ids.astype(np.int32)
    else:
        ids, sizes = np.zeros(n, dtype=np.int32), np.array([n] if n else [], dtype=np.int64)
    rest, rest_cards = codes[split:], cards[split:]
    last = 0
    for done, step_ids, step_sizes in refine_steps(
        ids, sizes, rest, rest_cards, counting_limit=limit
    ):
        assert last < done <= len(rest)
        last = done
        assert step_ids.dtype == np.int32
        want_ids, want_sizes = lex_groups(codes[: split + done], cards[: split + done])
        assert step_ids.tolist() == want_ids.tolist()
        assert step_sizes.tolist() == want_sizes.tolist()
    assert last == len(rest)


def test_lex_groups_without_columns_or_rows():
    ids, sizes = lex_groups([], [])
    assert ids.size == 0 and sizes.size == 0
    ids, sizes = lex_groups([np.zeros(0, dtype=np.int64)], [3])
    assert ids.size == 0 and sizes.size == 0


@st.composite
def labelled_tables(draw):
    """Small tables of labels with nulls; some columns with many values (sorted key spaces)."""
    n = draw(st.integers(1, 40))
    m = draw(st.integers(1, 9))
    columns = [f"c{j}" for j in range(m)]
    alphabets = [
        draw(st.lists(st.one_of(st.none(), st.text("abcxyz", min_size=1, max_size=3)),
                      min_size=1, max_size=14, unique=True))
        for _ in range(m)
    ]  # fmt: skip
    rows = [tuple(draw(st.sampled_from(a)) for a in alphabets) for _ in range(n)]
    return EncodedTable.from_rows(rows, columns), columns


@pytest.mark.slow
@given(labelled_tables(), st.data())
def test_engine_classes_equal_np_unique_over_the_columns(table_columns, data):
    table, columns = table_columns
    width = data.draw(st.integers(1, len(columns)))
    asked = data.draw(st.permutations(columns))[:width]
    stats = NumpyEngine(table).class_stats(asked, sensitive=[columns[0]], with_rows=True)
    # classes are numbered in the lexicographic order of the codes, columns in table order
    in_table_order = [c for c in columns if c in asked]
    uniq, inverse, counts = reference([table.column(c).codes for c in in_table_order])
    assert stats.row_class is not None
    assert stats.row_class.tolist() == inverse.tolist()
    assert stats.sizes.tolist() == counts.tolist()
    assert stats.keys is not None and stats.keys.flags.f_contiguous  # column-major
    for j, c in enumerate(asked):
        assert stats.keys[:, j].tolist() == uniq[:, in_table_order.index(c)].tolist()
    # the same partition as grouping the rows' labels (None, the null, is a value like others)
    groups: dict[tuple[object, ...], set[int]] = {}
    labels = [table.column(c).labels() for c in asked]
    for r in range(table.n_rows):
        groups.setdefault(tuple(col[r] for col in labels), set()).add(r)
    by_class: dict[int, set[int]] = {}
    for r, c in enumerate(stats.row_class.tolist()):
        by_class.setdefault(c, set()).add(r)
    assert sorted(map(sorted, groups.values())) == sorted(map(sorted, by_class.values()))
    keys = stats.key_labels()
    for c, rows in by_class.items():
        assert keys[c] == tuple(col[min(rows)] for col in labels)
    sens = stats.sensitive[columns[0]].counts
    assert sens.sum(axis=1).tolist() == stats.sizes.tolist()


@given(labelled_tables(), st.lists(st.integers(1, 9), min_size=1, max_size=6))
def test_warm_engine_numbers_classes_like_a_fresh_one(table_columns, widths):
    """Cached prefixes (whatever was asked before) never change the class numbering."""
    table, columns = table_columns
    warm = NumpyEngine(table)
    for w in widths:
        subset = columns[: min(w, len(columns))]
        a = warm.class_stats(subset, with_rows=True)
        b = NumpyEngine(table).class_stats(subset, with_rows=True)
        assert a.row_class is not None and b.row_class is not None
        assert a.row_class.tolist() == b.row_class.tolist()
        assert a.sizes.tolist() == b.sizes.tolist()
        assert a.keys is not None and b.keys is not None
        assert a.keys.tolist() == b.keys.tolist()


@given(st.lists(st.sampled_from([0, 1, 7, 2**63 - 1, 2**64 - 1, 12345678901234567]), max_size=60))
def test_factorize_keys_groups_equal_keys_exactly(values):
    """Arrow-hashed dense ids: equal keys share an id, different keys never do."""
    key = np.array(values, dtype=np.uint64)
    ids, n = factorize_keys(key)
    assert ids.dtype == np.int64 and ids.shape == key.shape
    uniq, inv = np.unique(key, return_inverse=True)
    assert n == uniq.size
    if key.size:
        assert sorted(set(ids.tolist())) == list(range(n))
        # the same partition as np.unique's: id <-> unique key is a bijection
        pairs = set(zip(ids.tolist(), inv.reshape(-1).tolist()))
        assert len(pairs) == n


@given(
    st.sampled_from([1, 2, 255, 256, 2**16, 2**16 + 1, 2**33, 2**62, 2**63]),
    st.lists(st.integers(0, 2**63 - 1), max_size=80),
    st.integers(1, 5),
)
def test_sort_order_is_numpys_stable_argsort(space, draws, repeats):
    """The radix passes sort like ``np.argsort(kind="stable")``: ascending keys, equal keys
    (repeated here) in their given order, for spaces of one to four 16-bit digits."""
    key = np.array([d % space for d in draws] * repeats, dtype=np.int64)
    order = sort_order(key, space)
    assert order.tolist() == np.argsort(key, kind="stable").tolist()
