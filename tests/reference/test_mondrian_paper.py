"""Mondrian (LeFevre, DeWitt & Ramakrishnan, ICDE 2006): worked examples computed by hand.

Each example follows the greedy algorithm of section 4 step by step: the region is cut on
the dimension of widest normalized range (ties: the first quasi-identifier), at the median
(strict: between distinct values, the boundary nearest the median; relaxed: at the median
row when that boundary leaves a part under k), a region of fewer than 2k rows is final. Categories
released as sets are cut on their values by frequency in the region, the most frequent
first.
The released cells and the GCP (per cell: ``(hi - lo) / (max - min)`` of an interval,
``(leaves - 1) / (all leaves - 1)`` of a hierarchy label) are worked out in the comments.
"""

from __future__ import annotations

import pytest

from anonlab import EncodedTable, anonymize
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.table import EncodedColumn
from anonlab.exceptions import PrivacyCheckError
from anonlab.release import Regions, verify

#: Six patients in the style of the paper's Figure 1 (Age, Sex, Zipcode; Disease sensitive).
PATIENTS = {
    "age": ["25", "25", "26", "27", "27", "28"],
    "sex": ["Male", "Female", "Male", "Male", "Female", "Male"],
    "zipcode": ["53711", "53712", "53711", "53710", "53712", "53711"],
    "disease": ["Flu", "Hepatitis", "Bronchitis", "Broken Arm", "AIDS", "Hang Nail"],
}


def _job(k: int, **algorithm: object) -> dict[str, object]:
    return {
        "quasi_identifiers": {"age": {}, "sex": {}, "zipcode": {}},
        "sensitive": ["disease"],
        "models": [{"k_anonymity": {"k": k}}],
        "metric": "gcp",
        "algorithm": {"name": "mondrian", **algorithm},
    }


def test_patients_at_k_2():
    """Round 1: age (28-25)/3 = 1, sex (2-1)/(2-1) = 1, zipcode (53712-53710)/2 = 1: a tie,
    age is first. Ages sorted 25 25 26 | 27 27 28: the median (3rd row) is 26, rows <= 26
    are 3 (balanced), so the cut is after 26. Both parts hold 3 rows < 2k = 4: final.

    Released: [25,26] * [53711,53712] and [27,28] * [53710,53712].
    NCP per row: 1/3 + 1 + 1/2 = 11/6 (first three), 1/3 + 1 + 1 = 7/3 (last three);
    GCP = (3 * 11/6 + 3 * 7/3) / (6 * 3) = 12.5 / 18."""
    r = anonymize(EncodedTable.from_columns(PATIENTS), _job(2))
    assert r.columns["age"].tolist() == ["[25,26]"] * 3 + ["[27,28]"] * 3
    assert r.columns["sex"].tolist() == ["*"] * 6
    assert r.columns["zipcode"].tolist() == ["[53711,53712]"] * 3 + ["[53710,53712]"] * 3
    assert r.loss == pytest.approx(12.5 / 18)
    assert r.release.verification.k_after == 3
    assert r.search.regions == 2


def test_patients_at_k_1_reach_single_rows():
    """k = 1: every region of two or more rows with a positive width is cut; the last
    regions hold identical records (rows 1 and 3: 25 Male 53711 and 26 Male 53711 are cut
    on age), so nothing is generalized and the GCP is 0."""
    r = anonymize(EncodedTable.from_columns(PATIENTS), _job(1))
    assert r.columns["age"].tolist() == PATIENTS["age"]
    assert r.columns["sex"].tolist() == PATIENTS["sex"]
    assert r.loss == 0.0


AGES = {"age": ["30", "30", "30", "30", "30", "40"]}


def test_strict_and_relaxed_on_ties():
    """Ages 30 30 30 30 30 40, k = 2. Strict: the median (3rd row) is 30; rows <= 30 are 5,
    leaving 1 row on the right (< k); rows < 30 are 0: no allowable cut, one region
    [30,40], GCP 1. Relaxed (section 4.2): the cut falls at the median row, 3 | 3, the
    rows equal to 30 on both sides: 30 30 30 | 30 30 40, released 30 and [30,40];
    GCP = (3 * 0 + 3 * 1) / 6 = 0.5."""
    job = {
        "quasi_identifiers": {"age": {}},
        "models": [{"k_anonymity": {"k": 2}}],
        "metric": "gcp",
        "algorithm": {"name": "mondrian"},
    }
    table = EncodedTable.from_columns(AGES)
    strict = anonymize(table, job)
    assert strict.columns["age"].tolist() == ["[30,40]"] * 6
    assert strict.loss == 1.0
    relaxed = anonymize(
        table, {**job, "algorithm": {"name": "mondrian", "partitioning": "relaxed"}}
    )
    assert relaxed.columns["age"].tolist() == ["30"] * 3 + ["[30,40]"] * 3
    assert relaxed.loss == 0.5
    assert relaxed.release.verification.k_after == 3


JOBS = Hierarchy(
    [
        ["nurse", "medical", "*"],
        ["doctor", "medical", "*"],
        ["teacher", "education", "*"],
        ["professor", "education", "*"],
    ]
)


def test_hierarchy_cuts_into_children():
    """job: nurse nurse doctor teacher teacher professor professor nurse, k = 2.
    Round 1: the common label is * (4 leaves, width 1): cut into its children medical
    (nurse x 3, doctor: 4 rows) and education (4 rows). Round 2: medical's children are
    nurse (3) and doctor (1 < k): doctor joins the largest child, one part only: no cut,
    medical is final. education's children teacher (2) and professor (2): cut.
    Released: medical x 4, teacher x 2, professor x 2; NCP of medical (2-1)/(4-1) = 1/3,
    GCP = 4 * 1/3 / 8 = 1/6."""
    values = ["nurse", "nurse", "doctor", "teacher", "teacher", "professor", "professor", "nurse"]
    job = {
        "quasi_identifiers": {"job": {"hierarchy": JOBS}},
        "models": [{"k_anonymity": {"k": 2}}],
        "metric": "gcp",
        "algorithm": "mondrian",
    }
    r = anonymize(EncodedTable.from_columns({"job": values}), job)
    expected = ["medical"] * 3 + ["teacher"] * 2 + ["professor"] * 2 + ["medical"]
    assert r.columns["job"].tolist() == expected
    assert r.loss == pytest.approx(1 / 6)


def test_small_children_pooled_in_a_part():
    """A flat hierarchy over a b c d; rows a x 3, b, c, d x 3, k = 2: the children a and d
    are parts, b and c (1 row each) are pooled in a third part of 2 rows whose lowest
    common label is *. GCP = 2 * 1 / 8 = 0.25."""
    values = ["a", "a", "a", "b", "c", "d", "d", "d"]
    job = {
        "quasi_identifiers": {"x": {}},
        "models": [{"k_anonymity": {"k": 2}}],
        "metric": "gcp",
        "algorithm": "mondrian",
    }
    r = anonymize(EncodedTable.from_columns({"x": values}), job)
    assert r.columns["x"].tolist() == ["a", "a", "a", "*", "*", "d", "d", "d"]
    assert r.loss == 0.25


def test_l_diversity_forbids_a_cut():
    """The patients with distinct 2-diversity on disease and k = 2: every disease differs,
    so each part of 2+ rows is 2-diverse; the result is the k = 2 one. With k = 1 and
    l = 2 the cut of age into single rows is refused (a row holds one disease): regions
    keep two rows at least."""
    job = _job(1)
    job["models"] = [
        {"k_anonymity": {"k": 1}},
        {"distinct_l_diversity": {"attribute": "disease", "l": 2}},
    ]
    r = anonymize(EncodedTable.from_columns(PATIENTS), job)
    assert r.release.verification.k_after == 3  # regions of 3 rows cannot be cut in two 2s
    assert r.columns["age"].tolist() == ["[25,26]"] * 3 + ["[27,28]"] * 3
    assert r.release.verification.checks["distinct_l_diversity"]


def test_the_verifier_reads_the_labels_back():
    """A release whose label does not cover its record's value is refused, whatever the
    recoding claims."""
    table = EncodedTable.from_columns(AGES)
    r = anonymize(
        table,
        {
            "quasi_identifiers": {"age": {}},
            "models": [{"k_anonymity": {"k": 2}}],
            "metric": "gcp",
            "algorithm": {"name": "mondrian", "partitioning": "relaxed"},
        },
    )
    assert isinstance(r.recoding, Regions)
    bad = Regions(
        r.recoding.group,
        {"age": EncodedColumn.from_values("age", ["30"] * 3 + ["[31,40]"] * 3)},
        r.recoding.kinds,
    )
    with pytest.raises(PrivacyCheckError, match="does not cover the original value '30'"):
        verify(r.problem, bad)
    small = Regions(
        r.recoding.group,
        {"age": EncodedColumn.from_values("age", ["30"] * 5 + ["40"])},
        r.recoding.kinds,
    )
    with pytest.raises(PrivacyCheckError, match="1 rows violate the models"):
        verify(r.problem, small)


def test_categories_released_as_sets():
    """job: nurse doctor teacher professor nurse doctor, k = 2, the values by frequency
    (ties in the hierarchy's order) nurse < doctor < teacher < professor. With sets: the
    median (3rd row) is doctor, rows <= doctor are 4 and rows < doctor 2, equally far from
    3: the cut keeps <= (4 | 2). {nurse, doctor} x 4 is cut again at nurse (2 | 2);
    {teacher, professor} (2 rows) is final. GCP = 2 * (2-1)/(4-1) / 6 = 1/9. With the
    hierarchy: * into medical (4) and education (2), medical into nurse and doctor: the same
    regions, education released as its label, the same GCP."""
    values = ["nurse", "doctor", "teacher", "professor", "nurse", "doctor"]
    job = {
        "quasi_identifiers": {"job": {"hierarchy": JOBS}},
        "models": [{"k_anonymity": {"k": 2}}],
        "metric": "gcp",
        "algorithm": {"name": "mondrian", "categorical": "set"},
    }
    table = EncodedTable.from_columns({"job": values})
    sets = anonymize(table, job)
    pair = "{teacher;professor}"
    assert sets.columns["job"].tolist() == ["nurse", "doctor", pair, pair, "nurse", "doctor"]
    assert sets.loss == pytest.approx(1 / 9)
    labels = anonymize(table, {**job, "algorithm": "mondrian"})
    assert labels.columns["job"].tolist() == [
        "nurse", "doctor", "education", "education", "nurse", "doctor"
    ]  # fmt: skip
    assert labels.loss == pytest.approx(1 / 9)


def _sets_job(k: int) -> dict[str, object]:
    return {
        "quasi_identifiers": {"country": {}},
        "models": [{"k_anonymity": {"k": k}}],
        "metric": "gcp",
        "algorithm": {"name": "mondrian", "categorical": "set"},
    }


def test_sets_cut_on_the_values_by_frequency():
    """country A A A B C C C D (the hierarchy's order A < B < C < D), k = 2. By frequency
    (ties in the hierarchy's order): A A A C C C B D. The median (4th row) is C; rows <= C
    are 6 (6 | 2) and rows < C are 3 (3 | 5): both leave 2 rows on each side, 3 is nearer
    the middle (4): {A} x 3 | {C, B, D} x 5. {A} is one value, final. {C, B, D}: C C C B D,
    the median (3rd row) C, rows <= C 3 (3 | 2): {C} x 3 | {B, D} x 2, final.
    Released: A A A, C C C, {B;D} twice. GCP = 2 * (2-1)/(4-1) / 8 = 1/12. (In the
    hierarchy's order the first cut would be A A A B | C C C D, each half then uncuttable:
    GCP 8 * 1/3 / 8 = 1/3.)"""
    values = ["A", "B", "C", "D", "A", "C", "A", "C"]
    r = anonymize(EncodedTable.from_columns({"country": values}), _sets_job(2))
    pair = "{B;D}"
    assert r.columns["country"].tolist() == ["A", pair, "C", pair, "A", "C", "A", "C"]
    assert r.loss == pytest.approx(1 / 12)


def test_a_missing_value_in_a_set_is_its_empty_member():
    """country A A B B C C and one missing value, k = 2 (3 values: A, B, C). By frequency:
    A A B B C C, the missing value last. The median (4th row) is B; rows <= B 4 (4 | 3),
    rows < B 2 (2 | 5): both allowable, 4 is nearer 3.5: {A, B} x 4 | {C, missing} x 3.
    {A, B} is cut at A (2 | 2); {C, missing} (3 rows < 2k) is final and released as
    ``{C;}``, which covers C and the missing value: NCP (2-1)/(3-1) = 1/2 per cell, read
    back from the label by the verifier. GCP = 3 * 1/2 / 7 = 3/14 (a ``*`` would cost
    3 * 1 / 7)."""
    values = ["A", "A", "B", "B", "C", "C", None]
    r = anonymize(EncodedTable.from_columns({"country": values}), _sets_job(2))
    assert r.columns["country"].tolist() == ["A", "A", "B", "B", "{C;}", "{C;}", "{C;}"]
    assert r.loss == pytest.approx(3 / 14)
    assert r.release.verification.k_after == 2
