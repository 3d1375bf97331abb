"""Golden values on the bundled UCI Adult (30,162 rows without '?'), measured with anonlab.

These figures pin the behaviour of the foundation; a change in any of them needs a reason.
"""

from __future__ import annotations

import pytest

from anonlab import (
    adult_hierarchies,
    diagnose,
    find_quasi_identifiers,
    load_adult,
    open_engine,
    risk,
)
from anonlab.datasets import ADULT_QUASI_IDENTIFIERS

QI = list(ADULT_QUASI_IDENTIFIERS)


@pytest.fixture(scope="module")
def adult():
    table = load_adult()
    return table, open_engine(table, hierarchies=adult_hierarchies(table))


def test_rows_and_schema(adult):
    table, _ = adult
    assert table.n_rows == 30162
    assert load_adult(drop_missing=False).n_rows == 32561
    assert table.schema.quasi_identifiers == QI
    assert table.schema.sensitive == ["income"]


def test_k_and_risk(adult):
    _, eng = adult
    assert diagnose(eng, quasi_identifiers=QI).k == 1
    r = risk(eng, QI).to_dict()
    assert (r["n_classes"], r["unique_records"], r["records_at_risk"]) == (18109, 14021, 21977)


def test_delta_for_5_anonymity(adult):
    _, eng = adult
    q9 = diagnose(eng, quasi_identifiers=QI, k=5, find_delta=True)
    assert q9.suppressed_rows == 21977
    coarse = {
        "age": 2,
        "education": 2,
        "marital-status": 1,
        "occupation": 1,
        "native-country": 1,
        "workclass": 1,
    }
    q9c = diagnose(eng, quasi_identifiers=QI, k=5, find_delta=True, levels=coarse)
    assert q9c.suppressed_rows == 2976


def test_largest_10_anonymous_subsets(adult):
    _, eng = adult
    q3 = diagnose(eng, attributes=QI, k=10)
    assert q3.subsets == [["education", "sex"], ["race", "sex"], ["workclass"], ["marital-status"]]
    assert q3.evaluations == 18


def test_q4_all_255_subsets(adult):
    _, eng = adult
    q4 = diagnose(eng, attributes=QI)
    assert len(q4.rows) == 255
    by = {tuple(r.attributes): r.k for r in q4.rows}
    assert by[("race", "sex")] == 87
    assert q4.evaluations == 23  # supersets of k = 1 subsets are not evaluated (Algorithm 3)
    assert by[("sex",)] == 9782


def test_minimal_unique_combinations(adult):
    _, eng = adult
    rep = find_quasi_identifiers(eng, QI)
    first = [s["attributes"] for s in rep.subsets[:2]]
    assert first == [["age"], ["native-country"]]
    assert len(rep.subsets) == 12 and rep.evaluations == 23
