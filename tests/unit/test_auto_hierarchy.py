"""Automatic hierarchies (issue 54, item 1): inferred from a column's values and counts."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

import anonlab
from anonlab.api import adult_path, infer_hierarchies, write_hierarchies
from anonlab.cli.app import app
from anonlab.data.auto import infer_hierarchy
from anonlab.exceptions import HierarchyError, InputError, ParameterError
from anonlab.io import read_hierarchy

ADULT = str(adult_path())


def chain(h, value):
    return [h.generalize([value], level)[0] for level in range(h.n_levels)]


def test_adult_age_gets_nested_intervals_with_its_tail_top_coded():
    auto = infer_hierarchies(ADULT, ["age"])["age"]
    assert auto.kind == "intervals"
    assert chain(auto.hierarchy, "37") == ["37", "[35, 40)", "[30, 40)", "[20, 40)", "<40", "*"]
    assert chain(auto.hierarchy, "90") == ["90", ">=75", ">=70", ">=60", ">=40", "*"]
    # a small tail merges with its half below the top: it never forces the column to *
    assert chain(auto.hierarchy, "17") == ["17", "[15, 20)", "<20", "<20", "<40", "*"]
    assert "75 and above top-coded (0.9% of the records)" in auto.description


def test_counts_decide_the_tails():
    values = [str(v) for v in range(100)]
    even = infer_hierarchy(values)
    heavy = infer_hierarchy(values, [1000] * 90 + [1] * 10)  # 90-99: 0.01 % of the records
    assert "top-coded" not in even.description and "bottom-coded" not in even.description
    assert "90 and above top-coded (0.0% of the records)" in heavy.description


@given(
    st.lists(
        st.one_of(st.integers(-(10**6), 10**6), st.floats(-1e4, 1e4, allow_nan=False)),
        min_size=3,
        max_size=60,
        unique=True,
    ),
    st.data(),
)
def test_any_numeric_column_gets_a_valid_coarsening_hierarchy(numbers, data):
    values = [repr(float(v)) if isinstance(v, float) else str(v) for v in numbers]
    values = list(dict.fromkeys(values))
    counts = data.draw(st.lists(st.integers(1, 50), min_size=len(values), max_size=len(values)))
    h = infer_hierarchy(values, counts, attribute="x").hierarchy  # Hierarchy checks nesting
    sizes = [len(set(h.generalize(values, level).tolist())) for level in range(h.n_levels)]
    assert sizes[0] == len(values) and sizes[-1] == 1
    assert all(a >= b for a, b in zip(sizes, sizes[1:]))
    assert all(a > b for a, b in zip(sizes[:-1], sizes[1:-1]))  # no level repeats the one below


def test_dates_and_timestamps():
    d = infer_hierarchy(["2024-03-15", "2019-11-02", "2020-01-31"])
    assert d.kind == "dates"
    assert chain(d.hierarchy, "2024-03-15") == [
        "2024-03-15",
        "2024-03",
        "2024-Q1",
        "2024",
        "2020s",
        "*",
    ]
    t = infer_hierarchy(["2024-03-15 10:00:00", "2024-03-16 11:30:00"])
    assert chain(t.hierarchy, "2024-03-15 10:00:00")[:3] == [
        "2024-03-15 10:00:00",
        "2024-03-15",
        "2024-03",
    ]


@pytest.mark.parametrize(
    ("values", "attribute", "kind"),
    [
        (["02139", "02140", "94110"], "residence", "mask"),  # a leading zero: a code
        (["94110", "94117", "10001"], "zip", "mask"),  # the name says code
        ([str(v) for v in range(10001, 94110, 997)], "amount", "intervals"),  # plain numbers
        (["J45", "A01", "B20"], "diagnosis", "mask"),  # letters and digits of one length
        ([str(a) for a in range(17, 91)], "age", "intervals"),
        (["1", "2", "3", "4", "5", "6"], "race", "flat"),  # few whole numbers: codes
        (["0.5", "1.5", "2.25"], "dose", "intervals"),
        (["F", "M"], "sex", "flat"),
    ],
)
def test_the_kind_follows_the_values(values, attribute, kind):
    assert infer_hierarchy(values, attribute=attribute).kind == kind


def test_frequency_grouping_names_a_label_of_its_own():
    values = ["a", "b", "other", "r1", "r2"]
    counts = [500, 400, 300, 1, 1]
    auto = infer_hierarchy(values, counts, grouping="frequency")
    assert auto.kind == "frequency"
    assert chain(auto.hierarchy, "r1") == ["r1", "other*", "*"]
    assert chain(auto.hierarchy, "a") == ["a", "a", "*"]
    assert infer_hierarchy(values, counts).kind == "frequency"  # the default
    assert infer_hierarchy(values, counts, grouping="none").kind == "flat"


def test_bad_input_names_the_culprit():
    with pytest.warns(UserWarning, match=r"Column 'x' has no value \(every row is missing\)"):
        assert infer_hierarchy([None, float("nan")], attribute="x").hierarchy.height == 1
    with pytest.warns(UserWarning, match=r"Column 'x' has one value \('7'\): .* value -> \*"):
        assert infer_hierarchy(["7", None], attribute="x").kind == "flat"
    with pytest.raises(ParameterError, match="'grouping' parameter .* one of 'none', 'frequency'"):
        infer_hierarchy(["a"], grouping="freq")
    with pytest.raises(HierarchyError, match="one per value: 2 values, 1 counts"):
        infer_hierarchy(["a", "b"], [1], attribute="x")


QIS = ["age", "education", "marital-status", "hours-per-week", "native-country", "sex"]


def _job(opts):
    return {
        "quasi_identifiers": {q: dict(opts) for q in QIS},
        "models": [{"k_anonymity": {"k": 5}}],
        "suppression": 0.02,
        "insensitive": ["fnlwgt", "education-num", "capital-gain", "capital-loss"],
    }


def test_a_job_with_hierarchy_auto_keeps_more_than_value_to_star():
    flat = anonlab.anonymize(ADULT, _job({}))
    auto = anonlab.anonymize(ADULT, _job({"hierarchy": "auto"}))
    assert auto.loss < flat.loss
    heights = {q: h.height for q, h in auto.problem.hierarchies.items()}
    fully = lambda r: [q for q in QIS if r.transformation[q] == r.problem.hierarchies[q].height]  # noqa: E731
    assert len(fully(auto)) < len(fully(flat)), (heights, auto.transformation, flat.transformation)


def test_auto_options_and_their_errors():
    job = _job({"auto": {"grouping": "frequency"}})
    result = anonlab.anonymize(ADULT, job)
    assert result.problem.hierarchies["native-country"].height == 2
    with pytest.raises(ParameterError, match="Unknown option 'groupin' of the 'auto' hierarchy"):
        anonlab.anonymize(ADULT, _job({"auto": {"groupin": "frequency"}}))


def test_out_of_core_infers_the_same_hierarchies_from_the_frequency_set():
    job = _job({"hierarchy": "auto"})
    numpy = anonlab.anonymize(ADULT, job, engine="numpy")
    duck = anonlab.anonymize(ADULT, job, engine="duckdb")
    for q in QIS:
        assert numpy.problem.hierarchies[q].rows() == duck.problem.hierarchies[q].rows(), q
    assert numpy.transformation == duck.transformation


def test_written_files_are_the_hierarchies_a_job_infers(tmp_path):
    written = write_hierarchies(ADULT, ["age", "hours-per-week"], tmp_path / "h")
    for q, (auto, path) in written.items():
        assert read_hierarchy(path, attribute=q).rows() == auto.hierarchy.rows()


def test_cli_hierarchies(tmp_path):
    out = tmp_path / "h"
    res = CliRunner().invoke(
        app, ["hierarchies", ADULT, "--qi", "age,sex", "--output-dir", str(out)]
    )
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == ["age.csv", "sex.csv"]
    assert "age: {hierarchy: age.csv}" in res.output and "intervals" in res.output


@pytest.mark.parametrize(
    ("qi", "where", "message"),
    [
        ("agee", "new", "Unknown column 'agee'. Did you mean 'age'?"),
        ("age", "file", "is not a folder"),
        ("age", "orphan", "parent .* does not exist"),
        ("", "new", "--qi needs at least one column"),
    ],
)
def test_cli_hierarchies_bad_input_writes_nothing(tmp_path, qi, where, message):
    (tmp_path / "file").write_text("x")
    target = {"new": tmp_path / "new", "file": tmp_path / "file", "orphan": tmp_path / "a" / "b"}
    res = CliRunner().invoke(
        app, ["hierarchies", ADULT, "--qi", qi, "--output-dir", str(target[where])]
    )
    assert res.exit_code == 2
    assert re.search(message, res.output), res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
    assert (tmp_path / "file").read_text() == "x"


def test_write_hierarchies_never_writes_onto_the_data(tmp_path):
    data = tmp_path / "age.csv"
    data.write_text("age\n30\n40\n50\n")
    with pytest.raises(InputError, match="Refusing to overwrite the input file"):
        write_hierarchies(str(data), ["age"], tmp_path)
    assert data.read_text() == "age\n30\n40\n50\n"


def test_a_job_column_with_nothing_to_infer_gets_star_with_a_warning():
    t = anonlab.EncodedTable.from_columns(
        {"empty": [None] * 6, "one": ["x"] * 6, "age": ["30", "31", "45", "46", "60", "61"]}
    )
    job = {
        "quasi_identifiers": {q: {"hierarchy": "auto"} for q in ("empty", "one", "age")},
        "models": [{"k_anonymity": {"k": 2}}],
    }
    with pytest.warns(UserWarning, match="Column 'empty' has no value") as caught:
        result = anonlab.anonymize(t, job)
    assert any("Column 'one' has one value ('x')" in str(w.message) for w in caught)
    assert result.problem.hierarchies["empty"].height == 1
