"""The worked example of the Diagnosis Centre paper (Figures 2 and 3) as acceptance tests."""

from __future__ import annotations

from anonlab import diagnose, open_engine
from anonlab.diagnosis import SubsetEvaluator, largest_subsets


def test_figure3_largest_3_anonymous_subsets(figure2):
    answer = diagnose(figure2, k=3)
    assert answer.question == "Q3"
    assert answer.subsets == [["W", "X", "Z"], ["W", "Y", "Z"]]
    assert answer.evaluations == 13


def test_figure3_level_values(figure2):
    eng = open_engine(figure2)
    level1 = {a: int(eng.class_sizes([a]).min()) for a in "VWXYZ"}
    assert level1 == {"V": 2, "W": 6, "X": 6, "Y": 6, "Z": 6}
    level2 = {
        "".join(p): int(eng.class_sizes(list(p)).min())
        for p in ["WX", "WY", "WZ", "XY", "XZ", "YZ"]
    }
    assert level2 == {"WX": 3, "WY": 3, "WZ": 6, "XY": 2, "XZ": 3, "YZ": 3}
    assert int(eng.class_sizes(["W", "X", "Z"]).min()) == 3
    assert int(eng.class_sizes(["W", "Y", "Z"]).min()) == 3


def test_figure3_trace_prunes_without_computing(figure2):
    """{W,X,Y} and {W,X,Y,Z} are pruned without computing k (13 calls instead of 31)."""
    seen = []
    eng = open_engine(figure2)

    class Spy(SubsetEvaluator):
        def sizes(self, subset):
            seen.append(subset)
            return super().sizes(subset)

    spy = Spy(eng)
    result = largest_subsets(spy, list("VWXYZ"), lambda s: int(s.min()) >= 3)
    assert result == [("W", "X", "Z"), ("W", "Y", "Z")]
    assert len(seen) == 13
    assert ("W", "X", "Y") not in seen and ("W", "X", "Y", "Z") not in seen
    assert ("X", "Y", "Z") not in seen


def test_q2_and_q1_on_figure2(figure2):
    assert diagnose(figure2, quasi_identifiers=["V"]).k == 2
    q1 = diagnose(figure2, quasi_identifiers=["W", "X"], k=3)
    assert q1.question == "Q1" and q1.answer is True and q1.k == 3
    assert diagnose(figure2, quasi_identifiers=["X", "Y"], k=3).answer is False


def test_q4_matches_algorithm3_with_pruning(figure2):
    answer = diagnose(figure2)
    assert answer.question == "Q4"
    assert len(answer.rows) == 31
    by = {tuple(r.attributes): r.k for r in answer.rows}
    assert by[("V",)] == 2 and by[("W", "X", "Z")] == 3 and by[("X", "Y")] == 2
    # k = 1 subsets prune their supersets: fewer evaluations than subsets
    assert answer.evaluations <= 31
