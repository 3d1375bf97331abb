"""The twelve questions: dispatch, answers and bad input."""

from __future__ import annotations

import pytest

from anonlab import diagnose, find_quasi_identifiers, open_engine, risk, taxonomy_hierarchy
from anonlab.diagnosis import question_for
from anonlab.exceptions import ColumnNotFoundError, HierarchyError, ParameterError


@pytest.mark.parametrize(
    ("s", "k", "delta", "find", "q"),
    [
        (True, True, False, False, "Q1"),
        (True, False, False, False, "Q2"),
        (False, True, False, False, "Q3"),
        (False, False, False, False, "Q4"),
        (True, True, True, False, "Q5"),
        (True, False, True, False, "Q6"),
        (False, True, True, False, "Q7"),
        (False, False, True, False, "Q8"),
        (True, True, False, True, "Q9"),
        (False, True, False, True, "Q10"),
        (True, False, False, True, "Q11"),
        (False, False, False, True, "Q12"),
    ],
)
def test_question_decided_by_what_is_given(figure2, s, k, delta, find, q):
    assert question_for(["V"] if s else None, 2 if k else None, 0.1 if delta else None, find) == q
    ans = diagnose(
        figure2,
        quasi_identifiers=["V", "Y"] if s else None,
        k=3 if k else None,
        delta=0.2 if delta else None,
        find_delta=find,
        max_k=5,
    )
    assert ans.question == q
    d = ans.to_dict()
    assert d["question"] == q
    if q in ("Q1", "Q2", "Q5", "Q6", "Q9"):
        assert {"quasi_identifiers", "k", "delta", "suppressed_rows"} <= set(d)
        assert ("answer" in d) == (q in ("Q1", "Q5"))
    elif q in ("Q3", "Q7"):
        assert {"k", "delta", "subsets", "evaluations"} <= set(d)
    else:
        assert {"rows", "evaluations"} <= set(d)
        assert {"attributes", "k", "delta", "suppressed_rows", "evaluated"} == set(d["rows"][0])


def test_one_subset_answers(figure2):
    # S = {V, Y}: classes (1,a)=2 (2,b)=2 (2,a)=1 (3,a)=3 (3,b)=4 -> k = 1
    assert diagnose(figure2, quasi_identifiers=["V", "Y"]).k == 1
    q6 = diagnose(figure2, quasi_identifiers=["V", "Y"], delta=1 / 12, list_rows=True)
    assert (q6.k, q6.suppressed_rows, q6.suppressed_row_positions) == (2, 1, [4])
    q5 = diagnose(figure2, quasi_identifiers=["V", "Y"], k=3, delta=0.25)
    assert q5.answer is False and q5.suppressed_rows <= 3
    q9 = diagnose(figure2, quasi_identifiers=["V", "Y"], k=3, find_delta=True, list_rows=True)
    assert q9.suppressed_rows == 5 and q9.delta == pytest.approx(5 / 12) and q9.achieved_k == 3
    assert q9.suppressed_row_positions == [0, 1, 2, 3, 4]


def test_tables(figure2):
    q11 = diagnose(figure2, quasi_identifiers=["V"], find_delta=True, max_k=4)
    assert [(r.k, r.suppressed_rows) for r in q11.rows] == [(1, 0), (2, 0), (3, 2), (4, 5)]
    q12 = diagnose(figure2, find_delta=True, max_k=3)
    assert len(q12.rows) == 31 * 3
    q10 = diagnose(figure2, k=3, find_delta=True)
    assert {tuple(r.attributes): r.suppressed_rows for r in q10.rows}[("X", "Y")] == 4
    q8 = diagnose(figure2, delta=0.2)
    assert {tuple(r.attributes): r.k for r in q8.rows}[("V",)] == 3


def test_levels(figure2):
    h = taxonomy_hierarchy({"1": ["low"], "2": ["low"], "3": ["high"]}, attribute="V")
    ans = diagnose(figure2, quasi_identifiers=["V"], levels={"V": 1}, hierarchies={"V": h})
    assert ans.k == 5 and ans.levels == {"V": 1}
    with pytest.raises(HierarchyError, match="no hierarchy"):
        diagnose(figure2, quasi_identifiers=["W"], levels={"W": 1})
    with pytest.raises(ParameterError, match="level of attribute 'V'"):
        diagnose(figure2, quasi_identifiers=["V"], levels={"V": 5}, hierarchies={"V": h})
    bad = taxonomy_hierarchy({"1": ["low"], "2": ["low"]}, attribute="V")
    with pytest.raises(HierarchyError, match="Value '3' of attribute 'V'"):
        open_engine(figure2, hierarchies={"V": bad})


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"k": 0}, ParameterError, "'k' parameter must be an int in \\[1, 12\\]"),
        ({"k": 13}, ParameterError, "Got 13"),
        ({"k": 2.5}, ParameterError, "must be an int"),
        ({"delta": 1.5}, ParameterError, "'delta' parameter must be a number in \\[0, 1\\]"),
        ({"delta": -0.1}, ParameterError, "delta"),
        ({"quasi_identifiers": ["Vv"]}, ColumnNotFoundError, "Did you mean 'V'"),
        ({"quasi_identifiers": []}, ParameterError, "empty"),
        ({"attributes": ["Q"]}, ColumnNotFoundError, "Available: 'V'"),
        ({"delta": 0.1, "find_delta": True}, ParameterError, "not both"),
        ({"max_k": 0}, ParameterError, "max_k"),
    ],
)
def test_bad_input(figure2, kwargs, error, match):
    with pytest.raises(error, match=match):
        diagnose(figure2, **kwargs)


def test_risk_summary(figure2):
    r = risk(figure2, ["V", "Y"], threshold=3)
    d = r.to_dict()
    assert (d["n_classes"], d["k"], d["unique_records"], d["records_at_risk"]) == (5, 1, 1, 5)
    assert d["highest_risk"] == 1.0 and d["average_risk"] == pytest.approx(5 / 12)
    assert sum(b["records"] for b in d["class_size_histogram"]) == 12


def test_quasi_identifier_discovery(figure2):
    rep = find_quasi_identifiers(figure2, threshold=3)
    found = [tuple(s["attributes"]) for s in rep.subsets]
    # minimal subsets with a class smaller than 3: {V} and {X, Y}
    assert found == [("V",), ("X", "Y")]
    assert rep.evaluations == 13
    uniques = find_quasi_identifiers(figure2, threshold=2).subsets
    assert uniques[0]["attributes"] == ["V", "W"] and uniques[0]["records_exposed"] == 1
