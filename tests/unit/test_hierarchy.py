"""Hierarchies: ARX files, builders and validation."""

from __future__ import annotations

import numpy as np
import pytest

from anonlab import (
    Hierarchy,
    date_hierarchy,
    flat_hierarchy,
    interval_hierarchy,
    masking_hierarchy,
    read_hierarchy,
    taxonomy_hierarchy,
    write_hierarchy,
)
from anonlab.exceptions import HierarchyError, ParameterError


def test_read_arx_file(tmp_path):
    p = tmp_path / "age.csv"
    p.write_text("1;1-2;*\n2;1-2;*\n3;3-4;*\n")
    h = read_hierarchy(p, attribute="age")
    assert h.height == 2
    assert list(h.generalize(["1", "3", None], 1)) == ["1-2", "3-4", None]
    assert list(h.generalize(["2"], 2)) == ["*"]


def test_roundtrip(tmp_path):
    h = masking_hierarchy(["4350", "4351", "4360"])
    write_hierarchy(h, tmp_path / "zip.csv")
    assert read_hierarchy(tmp_path / "zip.csv") == h


def test_missing_value_names_value_attribute_and_file(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("a;*\nb;*\n")
    h = read_hierarchy(p, attribute="colour")
    with pytest.raises(HierarchyError) as exc:
        h.leaf_index(np.array(["a", "zz"], dtype=object))
    msg = str(exc.value)
    assert "'zz'" in msg and "'colour'" in msg and str(p) in msg


def test_ragged_file_is_malformed(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("a;x;*\nb;*\n")
    with pytest.raises(HierarchyError, match="row 2"):
        read_hierarchy(p, attribute="c")


@pytest.mark.parametrize("rows", [3, 500])  # the csv module's and pyarrow's parsing
@pytest.mark.parametrize("other", [",", "\t"])
def test_a_file_written_with_another_separator_is_named_as_such(tmp_path, rows, other):
    # read with ';' it had one column of whole rows, and the data's values were reported
    # missing from it ("Value 'Female' ... is not in its hierarchy file")
    p = tmp_path / "sex.csv"
    p.write_text("".join(f"v{i}{other}g{i % 2}{other}*\n" for i in range(rows)))
    with pytest.raises(HierarchyError) as exc:
        read_hierarchy(p, attribute="sex")
    msg = str(exc.value)
    assert str(p) in msg and "'sex'" in msg and f"{other!r} (2 per row)" in msg
    assert "';' (ARX's format)" in msg
    # the same file read with its own separator; a one-column file of plain values
    assert read_hierarchy(p, separator=other).height == 2
    (tmp_path / "flat.csv").write_text("a\nb, c\n")
    assert read_hierarchy(tmp_path / "flat.csv").height == 0


def test_two_parents_is_inconsistent():
    with pytest.raises(HierarchyError, match="parents"):
        Hierarchy([["a", "x", "*"], ["b", "x", "*"], ["c", "y", "*"], ["d", "y", "+"]])


def test_duplicate_value_and_empty_label():
    with pytest.raises(HierarchyError, match="listed 2 times"):
        Hierarchy([["a", "*"], ["a", "*"]])
    with pytest.raises(HierarchyError, match="empty label"):
        Hierarchy([["a", ""], ["b", "*"]])


def test_missing_file_and_bad_encoding(tmp_path):
    with pytest.raises(HierarchyError, match="does not exist"):
        read_hierarchy(tmp_path / "nope.csv")
    p = tmp_path / "latin.csv"
    p.write_bytes(b"caf\xe9;*\n")
    with pytest.raises(HierarchyError, match="not valid utf-8"):
        read_hierarchy(p)


def test_level_out_of_range():
    h = flat_hierarchy(["a", "b"], attribute="x")
    with pytest.raises(ParameterError, match="level of attribute 'x'"):
        h.generalization(np.array(["a"], dtype=object), 2)


def test_masking_zip_example():
    h = masking_hierarchy(["4350"], steps=[1, 2, 4])
    assert [h.generalize(["4350"], lv)[0] for lv in range(4)] == ["4350", "435*", "43**", "****"]


def test_intervals_by_widths_nest():
    h = interval_hierarchy([17, 23, 38, 90], widths=[5, 10, 20], start=0)
    assert h.height == 4
    assert list(h.generalize(["23"], 1)) == ["[20, 25)"]
    assert list(h.generalize(["38"], 3)) == ["[20, 40)"]
    assert list(h.generalize(["90"], 4)) == ["*"]


def test_intervals_widths_that_do_not_nest_fail():
    with pytest.raises(HierarchyError, match="nest"):
        interval_hierarchy([1, 2, 3, 4, 5, 6, 7], widths=[2, 3])


def test_intervals_by_cuts_and_non_numbers():
    h = interval_hierarchy([15, 25, 35, 70], cuts=[[20, 30, 40], [30]])
    assert list(h.generalize(["15", "25", "70"], 1)) == ["<20", "[20, 30)", ">=40"]
    assert list(h.generalize(["25", "35"], 2)) == ["<30", ">=30"]
    with pytest.raises(HierarchyError, match="'x' is not a number") as info:
        interval_hierarchy(["1", "x"], widths=[2], attribute="age")
    assert "released" not in str(info.value)
    for label in ("*", "[20, 30)", "<20", ">=40"):  # a release given as the data
        with pytest.raises(HierarchyError, match="--release RELEASE") as info:
            interval_hierarchy(["25", label], widths=[2], attribute="age")
        assert f"value {label!r} is not a number" in str(info.value)


def test_dates():
    h = date_hierarchy(["2024-03-15", "2019-12-01"])
    assert [h.generalize(["2024-03-15"], lv)[0] for lv in range(5)] == [
        "2024-03-15",
        "2024-03",
        "2024",
        "2020s",
        "*",
    ]
    with pytest.raises(HierarchyError, match="not a date"):
        date_hierarchy(["15/03/2024"], attribute="born")


def test_taxonomy():
    h = taxonomy_hierarchy(
        {"Flu": ["Respiratory"], "Cold": ["Respiratory"], "Ulcer": ["Digestive"]}
    )
    assert h.height == 2
    assert list(h.generalize(["Flu", "Ulcer"], 1)) == ["Respiratory", "Digestive"]


@pytest.mark.parametrize(
    "categories",
    [["3", "1", "4"], ["4", None, "2"], [None], []],
    ids=["plain", "null", "only-null", "none"],
)
def test_generalizations_equal_generalization_per_level(tmp_path, categories):
    p = tmp_path / "age.csv"
    p.write_text("1;1-2;*\n2;1-2;*\n3;3-4;*\n4;3-4;*\n")
    h = read_hierarchy(p, attribute="age")
    cats = np.array(categories, dtype=object)
    mappings, labels = h.generalizations(cats)
    assert mappings.shape == (h.height + 1, cats.size) and mappings.dtype == np.int32
    for level in range(h.height + 1):
        mapping, lab = h.generalization(cats, level)
        assert mappings[level].tolist() == mapping.tolist()
        assert labels[level].tolist() == lab.tolist()
