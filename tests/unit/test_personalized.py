"""Personalized privacy (issue 31): limits per record, the model, the algorithm, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from anonlab import EncodedTable, Hierarchy, anonymize, check
from anonlab.data.schema import Role
from anonlab.exceptions import HierarchyError, InputError, ParameterError, PrivacyCheckError
from anonlab.jobs import build_problem, load_job
from anonlab.metrics.info_left import info_left_by_level, info_left_values, release_info_left
from anonlab.models import PersonalizedLeakage, build_model
from anonlab.release import Clusters, verify

DISEASE = Hierarchy(
    [
        ["flu", "respiratory", "*"],
        ["cold", "respiratory", "*"],
        ["hiv", "serious", "*"],
        ["cancer", "serious", "*"],
    ],
    attribute="disease",
)
X = Hierarchy([[str(v), "[1-5]" if v <= 5 else "[6-10]", "*"] for v in range(1, 11)], attribute="x")


def table(diseases, limits, xs=None):
    xs = xs or [str(i + 1) for i in range(len(diseases))]
    return EncodedTable.from_columns({"x": xs, "disease": diseases, "pleak": limits})


def job(**personalized):
    return {
        "quasi_identifiers": {"x": {"hierarchy": X}},
        "sensitive": ["disease"],
        "models": [
            {"k_anonymity": {"k": 2}},
            {"personalized_leakage": {"attribute": "disease", "hierarchy": DISEASE}},
        ],
        "personalized": personalized or {"limit_column": "pleak"},
        "algorithm": "personalized",
        "metric": "info_left",
    }


TEN = ["flu", "flu", "flu", "cold", "cold", "hiv", "hiv", "cancer", "cancer", "hiv"]


# ------------------------------------------------------------------------- limits
def test_limits_come_from_the_column_or_the_default():
    t = table(TEN, ["0.5", None, "1", "0.25", "0.5", "1", "1", "1", "1", "0.5"])
    p = build_problem(t, load_job(job(limit_column="pleak", default_limit=0.3)))
    limits = p.record_parameters["leakage_limit"]
    np.testing.assert_allclose(limits, [0.5, 0.3, 1, 0.25, 0.5, 1, 1, 1, 1, 0.5])
    assert t.with_schema(p.table.schema).schema.role("pleak") is Role.LIMIT
    assert "pleak" not in p.table.candidate_attributes()  # never a quasi-identifier
    p = build_problem(t, load_job(job(default_limit=0.25)))
    assert (p.record_parameters["leakage_limit"] == 0.25).all()


@pytest.mark.parametrize(
    ("cell", "words"),
    [
        ("0", "Row 4 of limit column 'pleak' holds 0: a leakage limit is a probability in (0, 1]"),
        ("1.5", "Row 4 of limit column 'pleak' holds 1.5"),
        ("-0.1", "Row 4 of limit column 'pleak' holds -0.1"),
        ("nan", "Row 4 of limit column 'pleak' holds nan"),
        ("high", "Row 4 of limit column 'pleak' holds 'high', which is not a number"),
        (None, "Row 4 of limit column 'pleak' has no limit (a missing value)"),
    ],
)
def test_a_bad_limit_names_its_row_and_nothing_is_written(tmp_path, cell, words):
    limits = ["0.5"] * 10
    limits[3] = cell
    out = tmp_path / "out.csv"
    with pytest.raises(ParameterError, match=words.replace("(", r"\(").replace(")", r"\)")):
        anonymize(table(TEN, limits), job(), output=out)
    assert not out.exists()


@pytest.mark.parametrize(
    ("personalized", "words"),
    [
        ({"default_limit": 0}, r"'default_limit' parameter of 'personalized' .* \(0, 1\]"),
        ({"default_limit": 1.5}, r"must be a number in \(0, 1\]. Got 1.5"),
        ({"default_limit": "low"}, "Got 'low' instead"),
        ({"limit_column": 3}, "'limit_column' of 'personalized' must be a column name"),
        ({"release_limits": True}, "needs 'limit_column'"),
        ({"limit_column": "pleak", "limits": 1}, "Unknown key 'limits' under 'personalized'"),
        ({"limit_column": "pleak", "release_limits": "yes"}, "must be true or false"),
    ],
)
def test_bad_personalized_keys(personalized, words):
    data = job()
    data["personalized"] = personalized
    with pytest.raises(InputError, match=words):
        load_job(data)


def test_personalized_must_be_a_mapping():
    data = job()
    data["personalized"] = 0.25
    with pytest.raises(InputError, match="'personalized' must be a mapping"):
        load_job(data)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ("qi", "Column 'pleak' is the limit column of 'personalized' and also a quasi-identifier"),
        ("sensitive", "and also a sensitive attribute"),
        ("identifier", "and also an identifier"),
        ("model", "limit column of 'personalized' and the sensitive attribute of model"),
        ("missing", "Unknown limit column 'plaek'"),
    ],
)
def test_the_limit_column_has_one_role(change, words):
    data = job()
    if change == "qi":
        data["quasi_identifiers"]["pleak"] = {}
    elif change == "sensitive":
        data["sensitive"] = ["disease", "pleak"]
    elif change == "identifier":
        data["identifiers"] = ["pleak"]
    elif change == "model":
        data["models"][1]["personalized_leakage"]["attribute"] = "pleak"
    else:
        data["personalized"] = {"limit_column": "plaek"}
    with pytest.raises(InputError, match=words):
        build_problem(table(TEN, ["0.5"] * 10), load_job(data))


def test_the_model_and_the_limits_come_together():
    data = job()
    del data["personalized"]
    with pytest.raises(ParameterError, match="judges each record against its own leakage limit"):
        build_problem(table(TEN, ["0.5"] * 10), load_job(data))
    data = job()
    data["models"] = data["models"][:1]
    with pytest.raises(ParameterError, match="no model judges them"):
        build_problem(table(TEN, ["0.5"] * 10), load_job(data))


def test_no_tree_for_the_sensitive_attribute():
    with pytest.raises(
        ParameterError, match="needs the generalization tree of sensitive attribute"
    ):
        build_model("personalized_leakage", {"attribute": "disease"})
    with pytest.raises(ParameterError, match="must be a Hierarchy"):
        build_model("personalized_leakage", {"attribute": "disease", "hierarchy": 3})


def test_a_sensitive_value_absent_from_its_tree_names_the_value_and_row():
    diseases = list(TEN)
    diseases[6] = "measles"
    with pytest.raises(
        HierarchyError, match=r"Value 'measles' of sensitive attribute 'disease' \(row 7\)"
    ):
        build_problem(table(diseases, ["0.5"] * 10), load_job(job()))
    diseases[6] = None  # a missing value is a value of its own: a leaf under the root
    problem = build_problem(table(diseases, ["1"] * 10), load_job(job()))
    column = problem.table["disease"]
    model = problem.models[1]
    values = model.record_values(np.zeros(10, dtype=np.int64), column, column)
    assert values[6] == pytest.approx(1 / 10)


def test_the_limit_column_is_released_only_when_asked():
    t = table(TEN, ["1"] * 10)
    assert "pleak" not in anonymize(t, job()).columns
    shown = anonymize(t, job(limit_column="pleak", release_limits=True))
    assert list(shown.columns["pleak"]) == ["1"] * 10


# ------------------------------------------------------------------- algorithm
def test_a_stuck_group_is_merged_with_its_neighbour():
    """Row 0 asks 0.2 < 1/N = 0.25: its group of five flus cannot meet it on its own (all at
    the root, each leaks 1/4); merged with the group of hiv and cancer records it can."""
    diseases = ["flu"] * 5 + ["hiv", "hiv", "cancer", "cancer", "hiv"]
    res = anonymize(table(diseases, ["0.2"] + ["1"] * 9), job())
    assert res.search.merge_rounds == 1
    assert res.search.classes == 1
    assert res.checks["personalized_leakage"]
    assert list(res.columns["x"]) == ["*"] * 10
    assert res.search.highest_pleak <= 1.0


def test_limits_that_cannot_be_met_fail_naming_the_records(tmp_path):
    out = tmp_path / "out.csv"
    with pytest.raises(
        InputError, match=r"cannot bring 10 record\(s\) within their leakage limits"
    ) as info:
        anonymize(table(TEN, ["0.2"] * 10), job(), output=out)
    assert "Every limit of at least 1/N = 0.25" in str(info.value)
    assert "No table can" not in str(info.value)
    assert not out.exists()
    with pytest.raises(InputError, match=r"No table can meet the limits of 10 of them"):
        anonymize(table(TEN, ["0.001"] * 10), job())


def test_models_the_algorithm_cannot_meet_are_refused():
    data = job()
    data["models"].append({"distinct_l_diversity": {"attribute": "disease", "l": 2}})
    with pytest.raises(ParameterError, match="model 'distinct_l_diversity' is not one of them"):
        anonymize(table(TEN, ["1"] * 10), data)


def test_too_few_rows_for_a_group():
    data = job()
    data["models"] = data["models"][1:]
    with pytest.raises(InputError, match="groups of at least 2 rows"):
        anonymize(table(["flu"], ["1"], ["1"]), data)


def test_other_algorithms_meet_the_model_too():
    """The full-domain search judges classes with the model's class rule (the largest share
    within the lowest limit): its release passes the per-record re-check."""
    t = table(TEN, ["0.5"] * 10)
    data = job()
    data["algorithm"] = "optimal"
    res = anonymize(t, data)
    assert res.checks == {"k_anonymity": True, "personalized_leakage": True}
    model = build_problem(t, load_job(data)).models[1]
    assert model.monotonic_generalization is False  # limits per record
    data["personalized"] = {"default_limit": 0.5}
    assert build_problem(t, load_job(data)).models[1].monotonic_generalization is True


def test_the_verification_judges_each_record_against_its_own_limit():
    """A cluster release whose second class holds two pneumonias: over a 0.5 limit."""
    t = EncodedTable.from_columns(
        {"x": ["1", "2", "3", "6", "7"], "disease": ["flu", "hiv", "cancer", "cold", "cold"]}
    )
    data = job(default_limit=0.5)
    problem = build_problem(t, load_job(data))
    groups = Clusters(np.array([[1], [1]]), np.array([0, 0, 0, 1, 1]))
    with pytest.raises(PrivacyCheckError, match="more than the suppression limit of 0"):
        verify(problem, groups)
    lifted = Clusters(
        np.array([[1], [1]]),
        np.array([0, 0, 0, 1, 1]),
        sensitive="disease",
        sensitive_hierarchy=DISEASE,
        sensitive_levels=np.array([0, 0, 0, 1, 1]),
    )
    release = verify(problem, lifted)
    assert release.verification.checks["personalized_leakage"]
    assert list(release.columns["disease"]) == [
        "flu",
        "hiv",
        "cancer",
        "respiratory",
        "respiratory",
    ]
    assert lifted.summary(problem)["sensitive_rows_per_level"] == {"disease": {0: 3, 1: 2}}
    assert lifted.summary(problem)["clusters"] == 2


def test_check_reports_the_records_a_k_anonymous_release_exposes():
    t = table(TEN, ["0.5"] * 10, ["1", "1", "1", "2", "2", "3", "3", "4", "4", "4"])
    data = job()
    data["quasi_identifiers"] = {"x": {}}
    report = check(t, data).to_dict()
    leak = report["models"][1]
    # classes {flu x3}, {cold x2}, {hiv x2}, {cancer x2, hiv}: Pleak 1, 1, 1, 2/3 and 1/3
    assert leak["violating_records"] == [0, 1, 2, 3, 4, 5, 6, 7, 8]
    assert leak["highest_pleak"] == 1.0
    assert leak["average_pleak"] == pytest.approx((7 * 1 + 2 * (2 / 3) + 1 / 3) / 10)


def test_the_model_refuses_a_released_value_off_the_records_branch():
    model = PersonalizedLeakage("disease", DISEASE)
    original = EncodedTable.from_columns({"d": ["flu", "hiv"]})["d"]
    released = EncodedTable.from_columns({"d": ["respiratory", "respiratory"]})["d"]
    with pytest.raises(InputError, match="Released value 'respiratory' of 'disease' in row 2"):
        model.record_values(np.array([0, 0]), original, released)
    with pytest.raises(ParameterError, match="has no leakage limits"):
        model.class_ok(anonymize_stats())


def anonymize_stats():
    from anonlab.engines import get_engine

    t = EncodedTable.from_columns({"x": ["1"], "disease": ["flu"]})
    return get_engine("numpy", t).class_stats(["x"], sensitive=["disease"])


# ------------------------------------------------------------------ information left
def test_information_left_by_level_matches_definition_9():
    cats = np.array(["flu", "hiv", None], dtype=object)
    table_ = info_left_by_level(DISEASE, cats)
    assert table_.shape == (3, 3)
    for level in range(3):
        per_label = info_left_values(DISEASE, level)
        assert table_[level, 0] == per_label[DISEASE.generalization(cats[:1], level)[0][0]]
    assert table_[0, 2] == 1.0  # a null: a leaf of its own
    assert table_[2, 0] == pytest.approx(1 / 4)  # the root keeps 1/N


def test_release_info_left_counts_the_sensitive_attribute():
    t = table(["flu", "cold"], ["1", "1"], ["1", "2"])
    got = release_info_left(t, {"x": [1, 1], "disease": [0, 1]}, {"x": X, "disease": DISEASE})
    x = 1 - (5 - 1) / 10
    np.testing.assert_allclose(got, [(x + 1) / 2, (x + 1 - 1 / 4) / 2])


# ------------------------------------------------------- issue 51: exact comparisons
THREE = Hierarchy(
    [["a1", "A", "*"], ["a2", "A", "*"], ["a3", "A", "*"], ["b", "B", "*"]], attribute="disease"
)


def test_check_compares_each_record_with_its_limit_exactly():
    """Three classes of three different diseases: every Pleak is 1/3, 3.3e-10 over a limit
    written 0.333333333; a limit of 1/3 computed (0.3333333333333333) is met exactly."""
    xs = ["1", "1", "1", "2", "2", "2", "3", "3", "3"]
    diseases = ["flu", "cold", "hiv"] * 3
    data = job()
    data["quasi_identifiers"] = {"x": {}}
    report = check(table(diseases, ["0.333333333"] * 9, xs), data).to_dict()["models"][1]
    assert report["violating_records"] == list(range(9))
    assert report["highest_pleak"] == 1 / 3
    met = check(table(diseases, [repr(1 / 3)] * 9, xs), data).to_dict()["models"][1]
    assert met["holds"] and met["violating_records"] == []
    assert met["highest_pleak"] == met["average_pleak"] == 1 / 3


def test_optimal_does_not_release_a_record_over_its_limit():
    """The class rule of the full-domain search is exact too: no class of three different
    diseases passes a limit of 0.333333333, and no table here has a larger share."""
    xs = ["1", "1", "1", "2", "2", "2"]
    data = job()
    data["algorithm"] = "optimal"
    with pytest.raises((InputError, PrivacyCheckError)):
        anonymize(table(["flu", "cold", "hiv"] * 2, ["0.333333333"] * 6, xs), data)
    res = anonymize(table(["flu", "cold", "hiv"] * 2, ["0.34"] * 6, xs), data)
    assert res.checks["personalized_leakage"]


def test_the_highest_pleak_of_a_limit_met_exactly_is_the_limit():
    """Ten records of a1 released as A (3 leaves): each Pleak is 10 * (1/3) / 10 = 1/3, which
    the sum of ten floats 1/3 over 10 made 0.33333333333333337."""
    model = PersonalizedLeakage("disease", THREE).bind(column=None, default=1 / 3)
    original = EncodedTable.from_columns({"d": ["a1"] * 10})["d"]
    released = EncodedTable.from_columns({"d": ["A"] * 10})["d"]
    verdict = model.judge_records(np.zeros(10, dtype=np.int64), original, released, [1 / 3] * 10)
    assert verdict.ok.all() and verdict.highest == 1 / 3
    assert verdict.report("pleak")["highest_pleak"] == 1 / 3
    assert (model.record_values(np.zeros(10, dtype=np.int64), original, released) == 1 / 3).all()
    over = model.judge_records(np.zeros(10, dtype=np.int64), original, released, [0.333333333] * 10)
    assert not over.ok.any()


def test_the_personalized_algorithm_meets_a_limit_exactly():
    """Groups sized by Theorem 1 exactly (a limit of 0.333333333 needs 4 records, 1/3 needs
    3), and every released record within its limit read as written."""
    from anonlab.algorithms.personalized import group_needs
    from anonlab.models.per_record import decimal_fraction

    needs = group_needs(np.array([0.333333333, 1 / 3, 0.25, 0.2500001, 1.0]), 2, 100)
    assert needs.tolist() == [4, 3, 4, 4, 2]
    diseases = ["flu", "cold", "hiv", "cancer"] * 3
    res = anonymize(
        table(diseases, ["0.333333333"] * 12, [str(i % 10 + 1) for i in range(12)]), job()
    )
    assert res.checks["personalized_leakage"]
    assert res.search.highest_pleak <= float(decimal_fraction(0.333333333))


def test_classes_merged_across_blocks_are_generalized_again_or_refused():
    """Out of core, groups of two blocks released with the same labels are one class: the
    algorithm runs SA_Generalization on it again (as in memory); a class no raise can fix
    is refused in one line."""
    from anonlab.algorithms.personalized import Personalized

    model = PersonalizedLeakage("disease", DISEASE).bind(column=None, default=0.4)
    original = EncodedTable.from_columns({"d": ["flu", "flu", "cold", "hiv"]})["d"]
    algorithm = Personalized()
    one = np.zeros(4, dtype=np.int64)
    assert not model.judge_records(one, original, original, np.full(4, 0.4)).ok.all()
    again = algorithm.rejoin_classes(None, model, one, original, np.full(4, 0.4), np.arange(4))
    assert model.judge_records(one, original, again, np.full(4, 0.4)).ok.all()
    assert list(again.labels()) == ["flu", "respiratory", "cold", "hiv"]  # one flu raised
    with pytest.raises(InputError, match=r"1 classes whose labels occur in several blocks") as e:
        algorithm.rejoin_classes(None, model, one, original, np.full(4, 0.2), np.arange(4))
    assert "--block-rows" in str(e.value) and "\n" not in str(e.value)
