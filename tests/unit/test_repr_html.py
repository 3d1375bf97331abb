"""Results and diagnosis answers show as tables in Jupyter (``_repr_html_``).

Jupyter calls ``_repr_html_`` on the last value of a cell. Each result and answer a user gets
from the API gives a card: a title, a headline that says what the figures mean, each figure
with its meaning, its lists as tables; an anonymization also the first rows released. The
text is escaped (a column named ``<b>`` stays text).
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest

import anonlab
from anonlab._html import MAX_ROWS, html_card


class _Cells(HTMLParser):
    """The text of every ``td``/``th`` cell and whether the tags are balanced."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[str] = []
        self.open: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: object) -> None:
        self.open.append(tag)
        if tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        assert self.open and self.open[-1] == tag, f"</{tag}> closes {self.open[-1:]}"
        self.open.pop()
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def cells(page: str) -> list[str]:
    parser = _Cells()
    parser.feed(page)
    assert parser.open == [], f"unclosed tags: {parser.open}"
    return parser.cells


def figure(page: str, name: str) -> str:
    """The value shown in the row of the figure ``name``."""
    found = cells(page)
    return found[found.index(name) + 1]


@pytest.fixture(scope="module")
def adult() -> anonlab.EncodedTable:
    return anonlab.load_adult()


QIS = ["age", "sex", "race"]


def test_a_question_s_answer_says_what_it_means(adult: anonlab.EncodedTable) -> None:
    page = anonlab.diagnose(adult, quasi_identifiers=QIS, k=5)._repr_html_()
    assert "Q1: is the table k-anonymous w.r.t. S?" in page
    assert "No: the table is 1-anonymous w.r.t. age, sex, race (5 asked for)." in page
    assert figure(page, "n rows") == "30,162"
    assert figure(page, "k") == "1"
    assert "at least k-1 others" in page  # the figure's meaning beside it

    q9 = anonlab.diagnose(adult, quasi_identifiers=QIS, k=5, find_delta=True)
    page = q9._repr_html_()
    assert f"after suppressing {q9.suppressed_rows:,} of 30,162 rows" in page
    assert figure(page, "achieved k") == str(q9.achieved_k)


def test_a_table_answer_is_a_table_with_a_row_per_set(adult: anonlab.EncodedTable) -> None:
    answer = anonlab.diagnose(adult, attributes=QIS)
    page = answer._repr_html_()
    assert answer.question == "Q4" and "Q4: the k of every set S" in page
    found = cells(page)
    for row in answer.rows:
        at = found.index(", ".join(row.attributes))
        assert found[at + 1] == f"{row.k:,}"

    search = anonlab.diagnose(adult, attributes=QIS, k=2)
    page = search._repr_html_()
    assert all(", ".join(s) in cells(page) for s in search.subsets)


def test_risk_and_found_quasi_identifiers(adult: anonlab.EncodedTable) -> None:
    summary = anonlab.risk(adult, QIS, declared=adult.names)
    page = summary._repr_html_()
    share = 100 * summary.unique_records / summary.n_rows
    assert f"{summary.unique_records:,} of the 30,162 records ({share:.2f} %)" in page
    assert figure(page, "average risk") == f"{summary.average_risk:,.4g}"
    # the class-size histogram: a table with a column per key
    assert "class size histogram" in page and "records" in cells(page)

    t = anonlab.EncodedTable.from_columns(
        {"zip": ["4350", "4350", "4351", "4351"], "sex": ["F", "M", "F", "F"]}
    )
    found = anonlab.find_quasi_identifiers(t)
    page = found._repr_html_()
    assert "sex" in cells(page) and "exposed_row_positions" not in page


def test_an_anonymization_shows_its_figures_and_first_rows(adult: anonlab.EncodedTable) -> None:
    job = {
        "quasi_identifiers": {"age": {"intervals": {"widths": [10, 20]}}, "sex": {}, "race": {}},
        "models": [{"k_anonymity": {"k": 5}}],
        "suppression": 0.02,
    }
    result = anonlab.anonymize(adult.select(QIS), job)
    page = result._repr_html_()
    k_after = result.release.verification.k_after
    assert f"its smallest class has {k_after:,} records" in page
    assert figure(page, "suppressed rows") == f"{result.suppressed_rows:,}"
    assert f"the first 10 of {result.columns.n_rows:,} rows" in page
    found = cells(page)
    first = [str(result.columns[name][0]) for name in QIS]
    at = found.index("age")  # the preview's header, then its rows
    header_end = at + len(QIS)
    assert found[at:header_end] == QIS and found[header_end : header_end + 3] == first


def test_a_check_names_what_does_not_hold(adult: anonlab.EncodedTable) -> None:
    job = {"quasi_identifiers": {q: {} for q in QIS}, "models": [{"k_anonymity": {"k": 5}}]}
    report = anonlab.check(adult.select(QIS), job)
    page = report._repr_html_()
    assert not report.holds
    assert "On the table as it is, does not hold: k_anonymity." in page
    assert "models" in page and "violating classes" in page


def test_text_is_escaped_and_long_lists_are_cut() -> None:
    rows = [{"column": "<b>x</b>", "n": i} for i in range(MAX_ROWS + 5)]
    page = html_card("<title>", {"what": "<script>", "rows": rows})
    assert "<script>" not in page and "<b>" not in page and "&lt;title&gt;" in page
    assert html.unescape(figure(page, "what")) == "<script>"
    assert len(re.findall(r"&lt;b&gt;x", page)) == MAX_ROWS and "and 5 more" in page


def test_special_uniques_and_the_profile(adult: anonlab.EncodedTable) -> None:
    from anonlab.diagnosis.suda import suda2

    special = suda2(adult, QIS, max_size=2)
    page = special._repr_html_()
    assert f"{special.records_with_msus:,} of the 30,162 records have a minimal sample" in page
    assert figure(page, "msus") == f"{special.msu_records.size:,}"
    top = special.riskiest(1)[0]
    assert ", ".join(top["msus"][0]) in cells(page)

    page = anonlab.api.profile(adult)._repr_html_()
    assert "30,162 rows, 15 columns" in page
    assert "marital-status" in cells(page) and "quasi-identifier" in cells(page)
