"""Hypothesis: the identifying-column check (issue 51) reports what its rule says, on every
engine, whether its screen of the first records is the whole table or not.

The rule is computed naively on the rows by :func:`tests.support.identifying.reference`
(unique records counted value by value, dependencies by their exceptions, every pair
grouped); the tables draw quasi-identifiers, columns that are functions of them (some with
a stray record), functions of other columns, and free columns, so every reason occurs.
"""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from anonlab import EncodedTable
from anonlab.diagnosis import risk
from anonlab.engines import get_engine
from tests.support.identifying import reference, summary
from tests.support.profiles import costly

COLUMNS = ["q1", "q2", "code", "coarse", "detail", "free", "twin", "tag", "extra"]
values = st.sampled_from(["a", "b", "c", "d", None])
TOLERANCE, CAP = 0.2, 2


@st.composite
def tables(draw: Any) -> tuple[list[tuple[Any, ...]], dict[str, Any]]:
    """Rows of :data:`COLUMNS` and the roles: ``code`` a function of ``q1`` and ``q2`` a
    function of ``detail`` (each with a stray record, perhaps), ``coarse`` a function of
    ``q2``, ``twin`` of ``free``, ``tag`` and ``extra`` free."""
    n = draw(st.integers(2, 40))
    q1 = draw(st.lists(values, min_size=n, max_size=n))
    detail = draw(st.lists(st.integers(0, 11), min_size=n, max_size=n))
    q2 = [str(d % 6 + 1) for d in detail]
    code_of = draw(st.dictionaries(values, st.sampled_from(["x", "y", "z", "w"]), min_size=5))
    code = [code_of.get(v, "x") for v in q1]
    for column, other in ((code, "y"), (q2, "1")):
        if draw(st.booleans()):
            column[draw(st.integers(0, n - 1))] = other
    coarse_of = {"1": "lo", "2": "lo", "3": "mid", "4": "mid", "5": "hi", "6": "hi"}
    coarse = [coarse_of[v] for v in q2]
    free = draw(st.lists(st.integers(0, draw(st.integers(1, 30))), min_size=n, max_size=n))
    twin = [str(v % 3) for v in free]
    tag = draw(st.lists(st.sampled_from(["t", "u", "v"]), min_size=n, max_size=n))
    extra = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
    rows = list(
        zip(q1, q2, code, coarse, map(str, detail), map(str, free), twin, tag, map(str, extra))
    )
    roles = {
        "quasi_identifiers": draw(st.sampled_from([["q1"], ["q1", "q2"], ["q2"], []])),
        "insensitive": draw(st.sampled_from([[], ["tag"], ["extra"], ["tag", "extra"]])),
        "threshold": draw(st.sampled_from([0.0, 0.01, 0.1, 0.3])),
        "top_levels": draw(st.sampled_from([{}, {"q2": 0}])),
    }
    return rows, roles


def _production(engine: Any, roles: dict[str, Any]) -> list[tuple[str, str, int | None]]:
    from anonlab import flat_hierarchy

    qis = roles["quasi_identifiers"]
    hierarchies = {q: flat_hierarchy(["1", "2", "3", "4", "5", "6"]) for q in qis if q == "q2"}
    levels = {q: lv for q, lv in roles["top_levels"].items() if q in qis}
    return summary(
        risk.identifying_columns(
            engine,
            quasi_identifiers=qis,
            insensitive=roles["insensitive"],
            threshold=roles["threshold"],
            hierarchies=hierarchies,
            levels=levels,
        )
    )


def _reference(rows: list[tuple[Any, ...]], roles: dict[str, Any]) -> Any:
    return reference(
        rows,
        COLUMNS,
        quasi_identifiers=roles["quasi_identifiers"],
        insensitive=roles["insensitive"],
        threshold=roles["threshold"],
        top_levels={q: lv for q, lv in roles["top_levels"].items()},
        tolerance=TOLERANCE,
        cap=CAP,
    )


def _rule():
    """The dependencies' tolerance and cap, loose enough for a stray record in a small
    table (the reference takes the same)."""
    return mock.patch.multiple(risk, DEPENDENCY_TOLERANCE=TOLERANCE, DEPENDENCY_EXCEPTIONS=CAP)


@given(tables(), st.integers(4, 30))
def test_the_check_reports_what_its_rule_says_with_or_without_a_screen(case, screen):
    """The numpy engine's answer is the naive rule's, when the screen holds every record and
    when it holds only the first ``screen`` (a dependency that errs on more than
    ``DEPENDENCY_EXCEPTIONS`` records there is never counted over the whole table)."""
    rows, roles = case
    table = EncodedTable.from_rows(rows, COLUMNS)
    want = _reference(rows, roles)
    with _rule():
        assert _production(get_engine("numpy", table), roles) == want
        with mock.patch.object(risk, "SCREEN_ROWS", screen):
            assert _production(get_engine("numpy", table), roles) == want


# costly: each example screens the table on DuckDB
@pytest.mark.slow
@costly(40)
@given(tables(), st.integers(1, 12))
def test_duckdb_reports_what_numpy_reports(case, screen):
    """The DuckDB engine (its questions, its first records) gives numpy's answer."""
    pytest.importorskip("duckdb")
    rows, roles = case
    table = EncodedTable.from_rows(rows, COLUMNS)
    with _rule():
        want = _production(get_engine("numpy", table), roles)
        db = get_engine("duckdb", table)
        try:
            assert _production(db, roles) == want
            with mock.patch.object(risk, "SCREEN_ROWS", screen):
                assert _production(db, roles) == want
        finally:
            db.close()
