"""Microaggregation: bad input, missing values, categorical attributes, models beyond k, and
the independent re-check of a Centroids release."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from anonlab import EncodedTable, anonymize
from anonlab.cli import app
from anonlab.exceptions import InputError, ParameterError, PrivacyCheckError
from anonlab.jobs import build_problem, load_job
from anonlab.release import verify
from anonlab.release.centroids import Centroids, centroid_gcp, check_centroids


def _table(n: int = 12, seed: int = 0) -> EncodedTable:
    rng = np.random.default_rng(seed)
    return EncodedTable.from_columns(
        {
            "age": rng.integers(20, 70, size=n).astype(str).astype(object),
            "hours": rng.integers(10, 60, size=n).astype(str).astype(object),
            "sex": rng.choice(["F", "M"], size=n).astype(object),
            "disease": rng.choice(["flu", "hiv", "cold"], size=n).astype(object),
        }
    )


def _job(qis=("age", "hours"), k=3, **algorithm):
    return {
        "quasi_identifiers": {q: {} for q in qis},
        "sensitive": ["disease"],
        "models": [{"k_anonymity": {"k": k}}],
        "algorithm": {"name": "microaggregation", **algorithm},
    }


# ------------------------------------------------------------------ bad input
def test_a_non_numeric_column_without_a_categorical_rule_is_refused_naming_it(tmp_path):
    out = tmp_path / "release.csv"
    with pytest.raises(ParameterError) as err:
        anonymize(_table(), _job(qis=("age", "sex")), output=out)
    text = str(err.value)
    assert "'sex'" in text and "categorical: mode" in text and "\n" not in text
    assert not out.exists()


def test_a_k_larger_than_the_table_is_refused_naming_it(tmp_path):
    out = tmp_path / "release.csv"
    job = _job(k=2)
    job["algorithm"]["k"] = 10
    with pytest.raises(InputError) as err:
        anonymize(_table(n=6), job, output=out)
    text = str(err.value)
    assert "k = 10" in text and "6" in text and "\n" not in text
    assert not out.exists()


def test_a_model_k_larger_than_the_table_is_refused(tmp_path):
    out = tmp_path / "release.csv"
    with pytest.raises(InputError, match="at least 10 rows"):
        anonymize(_table(n=6), _job(k=10), output=out)
    assert not out.exists()


def test_bad_input_on_the_command_line_is_one_line_and_writes_nothing(tmp_path):
    data = tmp_path / "data.csv"
    data.write_text("age,sex\n30,F\n31,M\n35,F\n60,M\n")
    job = tmp_path / "job.yaml"
    job.write_text(
        "quasi_identifiers: {age: {}, sex: {}}\nmodels: [{k_anonymity: {k: 2}}]\n"
        "algorithm: microaggregation\n"
    )
    out = tmp_path / "release.csv"
    run = CliRunner().invoke(app, ["anonymize", str(data), "--job", str(job), "-o", str(out)])
    assert run.exit_code != 0
    assert "'sex'" in run.output and "categorical: mode" in run.output
    assert not out.exists()


def test_a_sample_based_model_is_refused_naming_it():
    job = _job()
    job["models"] = [{"average_risk": {"threshold": 0.3}}]
    with pytest.raises(ParameterError, match="'average_risk'"):
        anonymize(_table(), job)


def test_only_categorical_attributes_are_refused():
    with pytest.raises(ParameterError, match="none of 'sex' is numeric"):
        anonymize(_table(), _job(qis=("sex",), categorical="mode"))


# ------------------------------------------------------------------ releases
def test_categorical_attributes_are_released_as_each_groups_mode():
    t = EncodedTable.from_columns(
        {
            "age": ["30", "31", "32", "60", "61", "62"],
            "sex": ["F", "M", "F", "M", "M", "F"],
            "disease": ["flu"] * 6,
        }
    )
    result = anonymize(t, _job(qis=("age", "sex"), categorical="mode"))
    assert result.columns["sex"].tolist() == ["F"] * 3 + ["M"] * 3
    assert result.columns["age"].tolist() == ["31"] * 3 + ["61"] * 3


def test_missing_values_stay_missing_and_mixed_groups_are_hidden():
    # three rows miss their age: they form a group of their own (null); the rest are numbers
    t = EncodedTable.from_columns(
        {"age": ["30", "31", "32", None, None, None, "60", "61", "62"], "hours": ["40"] * 9}
    )
    result = anonymize(t, {**_job(), "sensitive": []})
    assert result.columns["age"].tolist() == ["31"] * 3 + [None] * 3 + ["61"] * 3
    # two rows miss it: their group mixes missing and present values, released as '*'
    t = EncodedTable.from_columns(
        {"age": ["30", "31", "32", None, None, "59", "60", "61", "62"], "hours": ["40"] * 9}
    )
    ages = anonymize(t, {**_job(), "sensitive": []}).columns["age"].tolist()
    assert ages[3] == ages[4] == "*"
    assert None not in ages


def test_l_diversity_merges_the_groups_that_fail_it():
    # disease follows age: MDAV's groups of three hold one disease each
    ages = [str(a) for a in (20, 21, 22, 40, 41, 42, 60, 61, 62)]
    disease = ["flu"] * 3 + ["hiv"] * 3 + ["cold"] * 3
    t = EncodedTable.from_columns({"age": ages, "hours": ["40"] * 9, "disease": disease})
    job = _job()
    job["models"].append({"distinct_l_diversity": {"attribute": "disease", "l": 2}})
    result = anonymize(t, job)
    assert result.checks == {"k_anonymity": True, "distinct_l_diversity": True}
    assert result.search.merged_groups >= 2
    assert result.release.verification.suppressed_rows == 0


def test_large_tables_run_in_blocks_of_groups_of_k_to_2k_minus_1():
    t = _table(n=400, seed=3)
    result = anonymize(t, _job(k=4, block_size=50))
    sizes = np.bincount(result.recoding.group)
    assert sizes.min() >= 4 and sizes.max() <= 7
    assert result.search.blocks == 8
    # the blocks the statistics count are those MDAV ran on
    from anonlab.algorithms.microaggregation.grouping import blocks, count_blocks

    for n, size in ((401, 50), (10001, 5000), (5000, 5000), (999, 7)):
        _, starts = blocks(np.random.default_rng(n).normal(size=(n, 2)), size)
        assert count_blocks(n, size) == starts.size - 1


# ------------------------------------------------------------------ re-check
def _problem(table, job):
    return build_problem(table, load_job(job))


def test_the_verifier_refuses_groups_smaller_than_k():
    t = _table()
    problem = _problem(t, _job())
    group = np.arange(t.n_rows) // 2  # groups of two rows: not 3-anonymous
    with pytest.raises(PrivacyCheckError, match="violate the models"):
        verify(problem, Centroids(group=group))


def test_the_verifier_regroups_released_values_and_checks_every_centroid(monkeypatch):
    t = _table()
    problem = _problem(t, _job())
    group = np.arange(t.n_rows) // 3
    assert verify(problem, Centroids(group=group)).verification.k_after == 3
    # a recoding that releases a value other than its class's mean is caught
    real = Centroids.apply

    def shifted(self, problem):
        released = real(self, problem)
        col = released["age"]
        cats = col.categories.copy()
        cats[0] = str(float(cats[0]) + 0.5)
        return released.with_columns({"age": type(col)(col.name, col.codes, cats)})

    monkeypatch.setattr(Centroids, "apply", shifted)
    with pytest.raises(PrivacyCheckError, match="column 'age'.*not the mean"):
        verify(problem, Centroids(group=group))


def test_check_centroids_accepts_a_median_and_refuses_a_non_mode():
    t = EncodedTable.from_columns({"x": ["1", "2", "9"], "c": ["a", "b", "b"]})
    r = EncodedTable.from_columns({"x": ["2", "2", "2"], "c": ["b", "b", "b"]})
    rows = np.zeros(3, dtype=np.int64)
    assert check_centroids(t, r, ["x", "c"], rows, "median")[0] == []
    assert check_centroids(t, r, ["x"], rows, "mean")[0]  # the mean is 4
    r2 = EncodedTable.from_columns({"x": ["2", "2", "2"], "c": ["a", "a", "a"]})
    (problem,) = check_centroids(t, r2, ["c"], rows, "median")[0]
    assert "column 'c'" in problem and "most frequent" in problem


def test_gcp_counts_a_hidden_cell_and_a_suppressed_class_as_1():
    t = EncodedTable.from_columns({"x": ["0", "10", "4", "6"]})
    rows = np.array([0, 0, 1, 1])
    none = np.zeros(2, dtype=bool)
    assert centroid_gcp(t, ["x"], rows, none, {"x": none}) == pytest.approx((2 * 1 + 2 * 0.2) / 4)
    hidden = np.array([False, True])
    assert centroid_gcp(t, ["x"], rows, none, {"x": hidden}) == pytest.approx((2 + 2) / 4)
    assert centroid_gcp(t, ["x"], rows, np.array([True, False]), {"x": none}) == pytest.approx(
        (2 + 2 * 0.2) / 4
    )


def test_a_median_with_more_digits_than_released_is_still_a_median():
    """A released value keeps 10 significant digits: the median 0.123456789012 of a group
    is released as 0.123456789, and the re-check counts it as the median."""
    values = ["0.123456789012", "0.5", "0.9", "5.25", "5.5", "5.75"]
    t = EncodedTable.from_columns({"x": values})
    job = {
        "quasi_identifiers": {"x": {}},
        "models": [{"k_anonymity": {"k": 3}}],
        "algorithm": {"name": "microaggregation", "aggregate": "median"},
    }
    assert anonymize(t, job).columns["x"].tolist() == ["0.5"] * 3 + ["5.5"] * 3
    values[1] = "0.123456789013"  # now the median of the first group has 12 digits
    t = EncodedTable.from_columns({"x": values})
    released = anonymize(t, job).columns["x"].tolist()
    assert released == ["0.123456789"] * 3 + ["5.5"] * 3
