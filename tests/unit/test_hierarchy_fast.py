"""Hierarchies built without a Python loop over rows: ``Hierarchy.from_codes``, the pyarrow
reader of large hierarchy files and the vectorised ``leaf_index``.

Each fast path is checked against the reference it replaces: ``Hierarchy(rows)`` and the
csv-module reader give the same hierarchy (labels, their order, rows) and the same errors.
"""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import anonlab.io.hierarchies as hio
from anonlab import EncodedTable, Hierarchy, read_hierarchy
from anonlab.algorithms._lattice import lattice_of
from anonlab.exceptions import HierarchyError
from anonlab.jobs import build_problem, load_job


def _read(path, fast: bool, **kwargs):
    """Read ``path`` through pyarrow (``fast``) or the csv module; the hierarchy or the error."""
    saved = hio._ARROW_MIN_ROWS
    hio._ARROW_MIN_ROWS = 0 if fast else 10**12
    try:
        return read_hierarchy(path, **kwargs)
    except HierarchyError as exc:
        return f"HierarchyError: {exc}"
    finally:
        hio._ARROW_MIN_ROWS = saved


def _summary(h):
    if isinstance(h, str):
        return h
    labels = [h.level_labels(lv).tolist() for lv in range(h.n_levels)]
    types = {type(x) for lab in labels for x in lab}
    return h.rows(), labels, h.leaves.tolist(), types


def _codes_of(rows):
    """Codes and labels per level of ``rows``, labels in first-seen (unsorted) order."""
    codes, labels = [], []
    for column in zip(*rows):
        seen: dict[str, int] = {}
        codes.append(np.array([seen.setdefault(v, len(seen)) for v in column]))
        labels.append(np.array(list(seen), dtype=object))
    return codes, labels


def _outcome(build):
    try:
        h = build()
    except HierarchyError as exc:
        return str(exc)
    return _summary(h)


# ----------------------------------------------------------------------------- from_codes
def test_from_codes_equals_rows_constructor_and_sorts_labels():
    rows = [
        ["9", "[5, 10)", "*"],
        ["10", "[10, 15)", "*"],
        ["é", "other", "*"],
        ["a", "other", "*"],
    ]
    codes, labels = _codes_of(rows)
    h = Hierarchy.from_codes(codes, labels, attribute="x")
    assert h == Hierarchy(rows)
    assert h.rows() == rows
    assert list(h.leaves) == ["9", "10", "é", "a"]  # file order
    # labels per level are sorted by code point, as np.unique sorts them
    assert list(h.level_labels(0)) == ["10", "9", "a", "é"]
    assert list(h.level_labels(1)) == ["[10, 15)", "[5, 10)", "other"]
    mapping, lab = h.generalization(np.array(["a", "9", None], dtype=object), 1)
    assert list(lab[mapping]) == ["other", "[5, 10)", None]


def test_from_codes_merges_repeated_labels_and_accepts_a_2d_array():
    # level 1 lists "x" twice: the two codes become one label
    h = Hierarchy.from_codes(
        np.array([[0, 1, 2], [0, 1, 2]]),
        [np.array(["b", "a", "c"], dtype=object), np.array(["x", "y", "x"], dtype=object)],
    )
    assert h == Hierarchy([["b", "x"], ["a", "y"], ["c", "x"]])
    assert list(h.level_labels(1)) == ["x", "y"]


@pytest.mark.parametrize(
    "rows",
    [
        [["a", "*"], ["a", "*"]],  # a value listed twice
        [["b", "*"], ["a", "*"], ["b", "*"], ["a", "*"], ["a", "*"]],
        [["a", ""], ["b", "*"]],  # empty labels, reported at the first in row order
        [["a", "x", "*"], ["b", "", ""], ["", "y", "*"]],
        [["a", "x", "*"], ["b", "x", "*"], ["c", "y", "*"], ["d", "y", "+"]],  # two parents
        [["a", "x", "*"], ["b", "y", "*"], ["c", "x", "+"], ["d", "y", "-"], ["e", "y", "="]],
    ],
)
def test_from_codes_errors_match_rows_constructor(rows):
    codes, labels = _codes_of(rows)
    kwargs = {"attribute": "colour", "source": "h.csv"}
    expected = _outcome(lambda: Hierarchy(rows, **kwargs))
    assert isinstance(expected, str)
    assert _outcome(lambda: Hierarchy.from_codes(codes, labels, **kwargs)) == expected


def test_duplicate_value_message_quotes_the_value():
    with pytest.raises(HierarchyError) as exc:
        Hierarchy([["b", "*"], ["a", "*"], ["b", "*"]], attribute="c")
    assert str(exc.value) == ("Malformed hierarchy (attribute 'c'): value 'b' is listed 2 times.")


def test_from_codes_rejects_codes_that_do_not_fit():
    lab = [np.array(["a", "b"], dtype=object), np.array(["*"], dtype=object)]
    with pytest.raises(HierarchyError, match="is empty"):
        Hierarchy.from_codes([np.array([], dtype=int), np.array([], dtype=int)], lab)
    with pytest.raises(HierarchyError, match=r"codes of level 1 must be integers in \[0, 1\)"):
        Hierarchy.from_codes([np.array([0, 1]), np.array([0, 1])], lab)
    with pytest.raises(HierarchyError, match="levels of codes"):
        Hierarchy.from_codes([np.array([0, 1]), np.array([0])], lab)
    with pytest.raises(HierarchyError, match="levels of codes"):
        Hierarchy.from_codes([np.array([0, 1])], lab)


@given(
    st.lists(
        st.lists(st.sampled_from(["a", "b", "c", "10", "9", "é", "", "*"]), min_size=3, max_size=3),
        min_size=1,
        max_size=8,
    ),
    st.randoms(use_true_random=False),
)
def test_from_codes_agrees_with_rows_constructor(rows, rnd):
    codes, labels = _codes_of(rows)
    # shuffle each level's labels (the codes follow) to exercise the sorting
    for j, lab in enumerate(labels):
        perm = list(range(lab.size))
        rnd.shuffle(perm)
        inv = np.argsort(perm)
        labels[j] = lab[perm]
        codes[j] = inv[codes[j]]
    assert _outcome(lambda: Hierarchy.from_codes(codes, labels)) == _outcome(
        lambda: Hierarchy(rows)
    )


# ----------------------------------------------------------------------------- the reader
FILES = {
    "plain": b"1;1-2;*\n2;1-2;*\n3;3-4;*\n",
    "crlf": b"1;1-2;*\r\n2;1-2;*\r\n3;3-4;*\r\n",
    "cr": b"1;1-2;*\r2;1-2;*\r3;3-4;*",
    "blank lines": b"\n\n1;1-2;*\n\n2;1-2;*\r\n\r\n3;3-4;*\n\n",
    "no final newline": b"b;x\na;x",
    "one level": b"b\na\nc\n",
    "unicode order": "z;*\né;*\nZ;*\n中;*\n\U0001f600;*\n10;*\n9;*\n".encode(),
    "spaces kept": b" a ;x \nb;x \n",
    "whitespace line": b"a;x\n \nb;x\n",
    "quotes": b'"a;b";x\nc;x\n',
    "odd quotes": b'a"b;x\n"c"d;x\n',
    "bom": b"\xef\xbb\xbfa;x\nb;x\n",
    "nul": b"a\x00;x\nb;x\n",
    "empty file": b"",
    "only blank lines": b"\n\r\n\n",
    "ragged": b"a;x;*\nb;*\n",
    "ragged longer": b"a;*\nb;x;*\n",
    "trailing separator": b"a;x;\nb;x;\n",
    "empty label": b"a;x\nb;\n",
    "duplicate": b"a;x\nb;x\na;x\n",
    "two parents": b"a;x;*\nb;x;*\nc;y;*\nd;y;+\n",
    "bad utf-8": b"caf\xe9;*\nb;*\n",
    "bad utf-8 later": b"a;*\n" * 5000 + b"caf\xe9;*\n",
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_pyarrow_and_csv_readers_agree(tmp_path, name):
    p = tmp_path / "h.csv"
    p.write_bytes(FILES[name])
    slow = _summary(_read(p, False, attribute="a"))
    fast = _summary(_read(p, True, attribute="a"))
    assert fast == slow
    if not isinstance(slow, str):
        assert slow[3] == {str}


@pytest.mark.parametrize(
    ("data", "separator", "encoding"),
    [
        (b"a,x\nb,x\n", ",", "utf-8"),
        (b"a\tx\nb\tx\n", "\t", "utf-8"),
        ("café;x\nb;x\n".encode("latin-1"), ";", "latin-1"),
        ("café;x\nb;x\n".encode("utf-8-sig"), ";", "utf-8-sig"),
        ("café;x\nb;x\n".encode("utf-16"), ";", "utf-16"),
        ("a§x\nb§x\n".encode(), "§", "utf-8"),
    ],
)
def test_readers_agree_on_separators_and_encodings(tmp_path, data, separator, encoding):
    p = tmp_path / "h.csv"
    p.write_bytes(data)
    kwargs = {"separator": separator, "encoding": encoding}
    slow = _summary(_read(p, False, **kwargs))
    assert not isinstance(slow, str)
    assert _summary(_read(p, True, **kwargs)) == slow


def test_reader_errors_keep_their_messages(tmp_path):
    p = tmp_path / "h.csv"
    p.write_bytes(b"a;*\n" * 5000 + b"caf\xe9;*\n")
    msg = _read(p, True, attribute="c")
    assert re.fullmatch(
        r"HierarchyError: Hierarchy file '.*h\.csv' of attribute 'c' is not valid utf-8 text "
        r"\(byte \d+: b'\\xe9'\)\.",
        msg,
    )
    p.write_bytes(b"a;x;*\n" * 3 + b"b;*\n" + b"c;x;*\n" * 1000)
    assert _read(p, True, attribute="c") == (
        f"HierarchyError: Malformed hierarchy (attribute 'c', file {str(p)!r}): row 4 ('b') "
        "has 2 levels, the first row has 3."
    )
    assert "does not exist" in _read(tmp_path / "nope.csv", True)


def _big_file(n: int, seed: int = 0) -> tuple[bytes, list[list[str]]]:
    rnd = random.Random(seed)
    values = rnd.sample(range(10**6), n)
    rows = [
        [str(v), f"[{v // 1000 * 1000}, {v // 1000 * 1000 + 1000})", f"{v // 100000}xx", "*"]
        for v in values
    ]
    return "".join(";".join(r) + "\n" for r in rows).encode(), rows


def test_large_file_is_parsed_by_pyarrow(tmp_path, monkeypatch):
    data, rows = _big_file(3 * hio._ARROW_MIN_ROWS)
    p = tmp_path / "big.csv"
    p.write_bytes(data)
    used = []
    parse = hio._parse_columns
    monkeypatch.setattr(hio, "_parse_columns", lambda *a: used.append(parse(*a)) or used[-1])
    h = read_hierarchy(p, attribute="w")
    assert used and used[0] is not None
    assert h == Hierarchy(rows)
    assert h.rows() == rows
    assert _summary(h) == _summary(_read(p, False, attribute="w"))


_ALPHABET = ["a", "b", "é", "1", "10", ";", ";", "\n", "\n", "\r\n", "\r", " ", '"', "*"]


@given(st.lists(st.sampled_from(_ALPHABET), max_size=60))
def test_readers_agree_on_any_text(tmp_path_factory, parts):
    p = tmp_path_factory.mktemp("h") / "h.csv"
    p.write_bytes("".join(parts).encode())
    assert _summary(_read(p, True)) == _summary(_read(p, False))


# ----------------------------------------------------------------------------- leaf_index
def test_leaf_index_in_any_order_with_nulls_and_non_str():
    rows = [["5", "*"], ["10", "*"], ["1", "*"], ["a", "*"]]
    h = Hierarchy(rows, attribute="n", source="n.csv")
    for cats in (["5", "10", "1", "a"], ["1", "10", "5", "a"], ["a", "5"], ["10", None, "a"]):
        arr = np.array(cats, dtype=object)
        expect = [-1 if c is None else [r[0] for r in rows].index(c) for c in cats]
        assert h.leaf_index(arr).tolist() == expect
    assert h.leaf_index(np.array([5, None, 10], dtype=object)).tolist() == [0, -1, 1]
    assert h.leaf_index(np.array([], dtype=object)).tolist() == []
    with pytest.raises(HierarchyError) as exc:
        h.leaf_index(np.array(["a", "zz", None, 7], dtype=object))
    assert str(exc.value) == (
        "Value 'zz' and 1 more of attribute 'n' is not in its hierarchy file 'n.csv'."
    )


def test_leaf_index_is_remembered_per_array():
    h = Hierarchy([["a", "*"], ["b", "*"]])
    cats = np.array(["b", "a"], dtype=object)
    first = h.leaf_index(cats)
    assert h.leaf_index(cats) is first
    assert not first.flags.writeable
    assert h.leaf_index(["b", "a"]).tolist() == [1, 0]


# ----------------------------------------------------------------------------- prepare
def test_prepare_with_a_large_hierarchy_file(tmp_path):
    data, rows = _big_file(2 * hio._ARROW_MIN_ROWS, seed=1)
    p = tmp_path / "w.csv"
    p.write_bytes(data)
    values = [r[0] for r in rows]
    table = EncodedTable.from_columns(
        {"w": values + values[:5], "s": ["x", "y"] * ((len(values) + 5) // 2) + ["x"]}
    )
    spec = load_job(
        {
            "quasi_identifiers": {"w": {"hierarchy": str(p)}},
            "sensitive": ["s"],
            "models": [{"k_anonymity": {"k": 2}}],
            "suppression": 0.0,
            "metric": "height",
        }
    )
    prepared = build_problem(table, spec)
    h = prepared.hierarchies["w"]
    assert h == Hierarchy(rows)
    cats = table.column("w").categories
    leaf = h.leaf_index(cats)
    assert [rows[i][0] for i in leaf] == list(cats)
    assert lattice_of(prepared).max_levels == (3,)


@given(
    st.lists(
        st.lists(st.sampled_from([None, "*", "x", "y", "z", "xy", "1", "2"]), unique=True),
        min_size=1,
        max_size=5,
    )
)
def test_label_ids_are_the_first_seen_codes_of_the_levels(levels):
    """Label ids of a hierarchy's levels (each level's labels distinct, a label may repeat on
    another level) are the codes, in the order first seen, of all the labels in a row."""
    from anonlab.data.hierarchy import _first_seen

    # the first level as a hierarchy gives it: sorted, a null last
    head = sorted(x for x in levels[0] if x is not None) + [None] * (None in levels[0])
    levels = [head, *levels[1:]]
    flat = [x for level in levels for x in level]
    seen: dict[object, int] = {}
    want = [seen.setdefault(x, len(seen)) for x in flat]
    ids, values = _first_seen([np.array(level, dtype=object) for level in levels])
    assert ids.tolist() == want
    assert values.tolist() == list(seen)
    # labels other than str
    number = {x: i for i, x in enumerate([None, "*", "x", "y", "z", "xy", "1", "2"])}
    ints = [np.array([number[x] for x in level], dtype=object) for level in levels]
    flat = [x for level in ints for x in level]
    seen = {}
    want = [seen.setdefault(x, len(seen)) for x in flat]
    ids, values = _first_seen(ints)
    assert ids.tolist() == want
    assert values.tolist() == list(seen)


def test_label_ids_give_equal_labels_of_any_level_one_id():
    """``Hierarchy.label_ids``: per level and category the id of its label, equal labels on
    different levels (and a null, on every level below the root) sharing one id."""
    h = Hierarchy([["a", "ab", "*"], ["b", "ab", "*"], ["c", "c", "*"]])
    cats = np.array(["a", "b", "c", None], dtype=object)
    ids, values = h.label_ids(cats)
    mappings, labels = h.generalizations(cats)
    for level in range(h.n_levels):  # the ids name the labels generalizations gives
        assert values[ids[level]].tolist() == labels[level][mappings[level]].tolist()
    assert ids[0, 2] == ids[1, 2]  # "c" on levels 0 and 1
    assert ids[0, 3] == ids[1, 3] != ids[2, 3]  # a null below the root, "*" at it
    assert len(set(values.tolist())) == values.size
    assert h.label_ids(cats)[0] is ids  # remembered for the same categories


@pytest.mark.parametrize("at", [[0, 1, 2, 3], [1, 3], [0, 2], []])
def test_a_remembered_subset_is_generalized_as_if_looked_up(at):
    """``Hierarchy.remember_subset``: the leaf index and the labels per level of a column's
    labels after rows were dropped are those a lookup of each label gives."""
    h = Hierarchy([["a", "ab", "*"], ["b", "ab", "*"], ["c", "c", "*"]])
    cats = np.array(["a", "b", "c", None], dtype=object)
    sub = cats[at]
    fresh = Hierarchy([["a", "ab", "*"], ["b", "ab", "*"], ["c", "c", "*"]])
    h.remember_subset(sub, cats, at)
    assert h.leaf_index(sub).tolist() == fresh.leaf_index(sub).tolist()
    ids, values = h.label_ids(sub)
    want_ids, want_values = fresh.label_ids(sub)
    assert ids.shape == want_ids.shape
    assert values[ids].tolist() == want_values[want_ids].tolist()
    for level in range(h.n_levels):
        mapping, labels = h.generalization(sub, level)
        want_mapping, want_labels = fresh.generalization(sub, level)
        assert labels[mapping].tolist() == want_labels[want_mapping].tolist()


def test_a_subset_that_is_not_one_is_refused_by_name():
    h = Hierarchy([["a", "ab", "*"], ["b", "ab", "*"], ["c", "c", "*"]], attribute="letter")
    cats = np.array(["a", "b", "c"], dtype=object)
    for sub, at in [(cats[[0, 2]], [0, 1]), (cats[[0]], [5]), (cats[[0, 1]], [0])]:
        with pytest.raises(HierarchyError, match="'letter'"):
            h.remember_subset(sub, cats, at)
    assert h.leaf_index(cats).tolist() == [0, 1, 2]  # nothing was remembered
