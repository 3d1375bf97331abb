"""SUDA2 (Manning, Haglin & Keane 2008) on the worked examples sdcMicro documents, MSUs and
scores computed by hand; a Hypothesis property against the brute-force reference; bad input.

The examples are sdcMicro's own (tests/testthat/test_suda2.R): the ten records of the
sdcMicro guidelines (sdcPractice, "Measuring risk", SUDA), the eight records of Templ's book
(*Statistical Disclosure Control for Microdata*, 2017) and the three-record contribution
example. sdcMicro searches MSUs of every size (``m = M``); with ``M = 4`` quasi-identifiers
an MSU of size ``k`` weighs ``(M - k)!``: 6, 2, 1, 1.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from anonlab import EncodedTable
from anonlab.api import open_engine
from anonlab.diagnosis.suda import suda2
from anonlab.exceptions import ColumnNotFoundError, DataFormatError, ParameterError
from tests.support.profiles import costly
from tests.support.suda_reference import reference_suda

GUIDE_QI = ["residence", "gender", "education", "labour"]
GUIDE = [
    ("Urban", "Female", "Secondary incomplete", "Employed"),
    ("Urban", "Female", "Secondary incomplete", "Employed"),
    ("Urban", "Female", "Primary incomplete", "Non-LF"),
    ("Urban", "Male", "Secondary complete", "Employed"),
    ("Rural", "Female", "Secondary complete", "Unemployed"),
    ("Urban", "Male", "Secondary complete", "Employed"),
    ("Urban", "Female", "Primary complete", "Non-LF"),
    ("Urban", "Male", "Post-secondary", "Unemployed"),
    ("Urban", "Female", "Secondary incomplete", "Non-LF"),
    ("Urban", "Female", "Secondary incomplete", "Non-LF"),
]
BOOK_QI = ["age", "gender", "income", "education"]
BOOK = [
    ("20s", "male", "50k+", "highschool"),
    ("20s", "male", "50k+", "highschool"),
    ("20s", "male", "50k-", "highschool"),
    ("20s", "male", "50k-", "highschool"),
    ("20s", "female", "50k-", "university"),
    ("20s", "female", "50k-", "highschool"),
    ("20s", "female", "50k-", "middleschool"),
    ("60s", "male", "50k-", "university"),
]


def _dis(scores: list[float], pairs: int, n_qi: int, f: float = 0.01) -> list[float]:
    """The DIS score by hand: 1 / (1 + P (1 - f) / (f s^Q sum_j s_j^-Q))."""
    q = 1 + (8 - n_qi) / 20
    adjust = sum(s**-q for s in scores if s > 0)
    return [0.0 if s == 0 else 1 / (1 + pairs * (1 - f) / f / (s**q * adjust)) for s in scores]


def test_guidelines_example_msus_and_scores() -> None:
    result = suda2(EncodedTable.from_rows(GUIDE, GUIDE_QI), GUIDE_QI)
    # Record 3 (row 2): its primary-incomplete education is unique; Urban-Female-Non-LF is
    # held by rows 2, 6, 8, 9. Record 5: Rural is unique; so are Female with Secondary
    # complete, Female with Unemployed, Secondary complete with Unemployed. Record 7:
    # primary complete. Record 8: post-secondary, Male with Unemployed, Urban with
    # Unemployed (record 5 is Rural).
    expected = {
        2: [("education",)],
        4: [("residence",), ("gender", "education"), ("gender", "labour"), ("education", "labour")],
        6: [("education",)],
        7: [("education",), ("residence", "labour"), ("gender", "labour")],
    }
    for row in range(len(GUIDE)):
        assert result.msus_of(row) == expected.get(row, [])
    # sdcMicro's expected scores (test_suda2.R, "suda2 sdc guideline"): 6, 6 + 3 x 2, 6, 6 + 2 x 2.
    assert result.scores.tolist() == [0, 0, 6, 0, 12, 0, 6, 10, 0, 0]
    assert result.msus_by_size == {1: 4, 2: 5, 3: 0, 4: 0}
    assert result.size_weights.tolist() == [6, 2, 1, 1]
    # DIS: three pairs (rows 0-1, 3-5, 8-9), P = 6; M = 4 so Q = 1.2; f = 0.01.
    assert (result.sample_uniques, result.pair_records) == (4, 6)
    adjust = 2 * 6**-1.2 + 12**-1.2 + 10**-1.2
    hand = [1 / (1 + 6 * 0.99 / 0.01 / (s**1.2 * adjust)) for s in (6, 12, 6, 10)]
    np.testing.assert_allclose(result.dis_scores[[2, 4, 6, 7]], hand, rtol=1e-12)
    np.testing.assert_allclose(hand, [0.0049868, 0.0113830, 0.0049868, 0.0091667], rtol=1e-4)
    assert result.dis_scores[[0, 1, 3, 5, 8, 9]].tolist() == [0.0] * 6
    # Contributions: record 8's MSUs {edu}: 6, {res, lab}: 2, {sex, lab}: 2 of its 10.
    np.testing.assert_allclose(result.contributions[7], [0.2, 0.2, 0.6, 0.4])
    # The table's 34 points: residence 6 + 2 = 8, gender 2 + 2 + 2 = 6, education 6 + 2 + 2
    # + 6 + 6 = 22, labour 2 + 2 + 2 + 2 = 8.
    got = result.attribute_contributions
    np.testing.assert_allclose(
        [got[q] for q in GUIDE_QI], [100 * 8 / 34, 100 * 6 / 34, 100 * 22 / 34, 100 * 8 / 34]
    )


def test_book_example_scores() -> None:
    result = suda2(EncodedTable.from_rows(BOOK, BOOK_QI), BOOK_QI)
    # Row 4: female+university, 20s+university. Row 5: female+highschool. Row 6:
    # middleschool. Row 7: 60s, male+university. Rows 0-3 are two pairs.
    assert result.msus_of(4) == [("age", "education"), ("gender", "education")]
    assert result.msus_of(5) == [("gender", "education")]
    assert result.msus_of(6) == [("education",)]
    assert result.msus_of(7) == [("age",), ("gender", "education")]
    # sdcMicro's expected scores (test_suda2.R, "suda2 book example"): su$score[5:8] = 4, 2, 6, 8.
    assert result.scores.tolist() == [0, 0, 0, 0, 4, 2, 6, 8]
    assert (result.sample_uniques, result.pair_records) == (4, 4)
    np.testing.assert_allclose(result.dis_scores, _dis([0, 0, 0, 0, 4, 2, 6, 8], 4, 4))


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        ("abc", [50, 37.5, 37.5]),
        ("acb", [50, 37.5, 37.5]),
        ("cab", [37.5, 50, 37.5]),
        ("cba", [37.5, 37.5, 50]),
    ],
)
def test_contribution_example(order: str, expected: list[float]) -> None:
    # sdcMicro's "suda2 simple example contribution": a = (2, 1, 1), b = (0, 3, 0),
    # c = (0, 6, 0). M = 3: weights 2, 1, 1. Row 0: {a} (2). Row 1: {b}, {c} (2 + 2). Row 2:
    # {a, b}, {a, c} (1 + 1). Total 8: a 2 + 2 = 4 (50 %), b 2 + 1 = 3, c 3 (37.5 %).
    columns = {"a": ["2", "1", "1"], "b": ["0", "3", "0"], "c": ["0", "6", "0"]}
    table = EncodedTable.from_columns({name: columns[name] for name in order})
    result = suda2(table, list(order))
    assert result.scores.tolist() == [2, 4, 2]
    got = result.attribute_contributions
    assert [got[q] for q in order] == pytest.approx(expected)


def test_max_size_weights_and_truncation() -> None:
    # With m = 2 of M = 4: weights prod_{i=k}^{1} (4 - i): size 1 -> 3, size 2 -> 1.
    result = suda2(EncodedTable.from_rows(GUIDE, GUIDE_QI), GUIDE_QI, max_size=2)
    assert result.size_weights.tolist() == [3, 1]
    assert result.scores.tolist() == [0, 0, 3, 0, 3 + 3, 0, 3, 3 + 2, 0, 0]
    # m = 1: a single MSU size, weight 1 (the empty product).
    one = suda2(EncodedTable.from_rows(GUIDE, GUIDE_QI), GUIDE_QI, max_size=1)
    assert one.size_weights.tolist() == [1]
    assert one.scores.tolist() == [0, 0, 1, 0, 1, 0, 1, 1, 0, 0]
    assert one.msus_by_size == {1: 4}


def test_engine_and_nulls() -> None:
    # A null is a value of its own: two nulls are equal, a null differs from every value.
    table = EncodedTable.from_columns(
        {"a": ["x", "x", None, None, "y"], "b": ["1", "2", "1", "1", "2"]}
    )
    result = suda2(open_engine(table), ["a", "b"])
    # Row 4: a = y unique. Row 0: (x, 1) unique, x held by 0 and 1, 1 by 0, 2, 3. Row 1:
    # (x, 2) unique. Rows 2 and 3 are a pair (null, 1).
    assert [result.msus_of(r) for r in range(5)] == [[("a", "b")], [("a", "b")], [], [], [("a",)]]
    ref = reference_suda([("x", "1"), ("x", "2"), (None, "1"), (None, "1"), ("y", "2")], 2)
    np.testing.assert_allclose(result.scores, ref.scores)
    np.testing.assert_allclose(result.dis_scores, ref.dis_scores)


def test_riskiest_and_summary() -> None:
    result = suda2(EncodedTable.from_rows(GUIDE, GUIDE_QI), GUIDE_QI)
    top = result.riskiest(2)
    assert [(r["row"], r["score"]) for r in top] == [(4, 12.0), (7, 10.0)]
    assert top[0]["msus"][0] == ["residence"]
    summary = result.to_dict(riskiest=1)
    assert summary["msus_by_size"] == {"1": 4, "2": 5, "3": 0, "4": 0}
    assert (summary["msus"], summary["records_with_msus"]) == (9, 4)
    assert summary["highest_score"] == 12.0
    assert math.isclose(summary["mean_dis_score"], float(result.dis_scores.sum()) / 10)
    assert len(summary["riskiest"]) == 1


# ----------------------------------------------------------------------------- property


@st.composite
def small_tables(draw: st.DrawFn) -> tuple[list[tuple[str | None, ...]], int]:
    n_att = draw(st.integers(1, 5))
    n = draw(st.integers(1, 14))
    alphabet = st.sampled_from(["a", "b", "c", None])
    rows = [tuple(draw(alphabet) for _ in range(n_att)) for _ in range(n)]
    m = draw(st.integers(1, n_att))
    return rows, m


@costly(120, deadline=None)
@given(small_tables(), st.sampled_from([0.01, 0.1, 0.5, 1.0]))
def test_matches_brute_force(case: tuple[list[tuple[str | None, ...]], int], f: float) -> None:
    rows, m = case
    names = [f"q{j}" for j in range(len(rows[0]))]
    result = suda2(EncodedTable.from_rows(rows, names), names, max_size=m, dis_fraction=f)
    ref = reference_suda(rows, m, f)
    for r, own in enumerate(ref.msus):
        assert result.msus_of(r) == [tuple(names[j] for j in s) for s in own]
    np.testing.assert_allclose(result.scores, ref.scores)
    np.testing.assert_allclose(result.dis_scores, ref.dis_scores, rtol=1e-9, atol=1e-15)


# ----------------------------------------------------------------------------- bad input


def test_bad_input() -> None:
    table = EncodedTable.from_rows(GUIDE, GUIDE_QI)
    with pytest.raises(ParameterError, match=r"'max_size' parameter of suda2 .*\[1, 4\]. Got 5"):
        suda2(table, GUIDE_QI, max_size=5)
    with pytest.raises(ParameterError, match=r"'max_size'.*\[1, 4\]. Got 0"):
        suda2(table, GUIDE_QI, max_size=0)
    with pytest.raises(ParameterError, match="max_size"):
        suda2(table, GUIDE_QI, max_size=2.5)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="'dis_fraction'.*Got 0"):
        suda2(table, GUIDE_QI, dis_fraction=0.0)
    with pytest.raises(ParameterError, match="'dis_fraction'.*Got 1.5"):
        suda2(table, GUIDE_QI, dis_fraction=1.5)
    with pytest.raises(ColumnNotFoundError, match="'educaton'.*Did you mean 'education'"):
        suda2(table, ["residence", "educaton"])
    with pytest.raises(ParameterError, match="'gender' is named twice"):
        suda2(table, ["gender", "gender"])
    with pytest.raises(ParameterError, match="at least one quasi-identifier"):
        suda2(table, [])
    empty = EncodedTable.from_columns({"a": [], "b": []})
    with pytest.raises(DataFormatError, match="empty"):
        suda2(empty, ["a", "b"])
