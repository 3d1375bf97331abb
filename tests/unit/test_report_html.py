"""The HTML report: self-contained, offline, every figure with its numbers, numbers = the API's."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import anonlab
from anonlab import api
from anonlab.diagnosis import profile_release, profile_table
from anonlab.jobs import build_problem, load_job
from anonlab.release import metric_context
from anonlab.report.html import render
from tests.support.identifying import ADULT_IDENTIFYING

pytest.importorskip("matplotlib")

QI = list(api.ADULT_QUASI_IDENTIFIERS)
JOB = {
    "quasi_identifiers": {
        "age": {"intervals": {"widths": [5, 10, 20]}},
        "sex": {},
        "race": {},
        "marital-status": {},
        "native-country": {},
    },
    "sensitive": ["income"],
    "identifiers": ADULT_IDENTIFYING,
    "models": [{"k_anonymity": {"k": 5}}],
    "suppression": 0.02,
    "metric": "loss",
}


@pytest.fixture(scope="module")
def adult() -> anonlab.EncodedTable:
    return anonlab.load_adult()


@pytest.fixture(scope="module")
def gathered(adult):
    return api.report_data(adult, quasi_identifiers=QI, job=JOB)


@pytest.fixture(scope="module")
def html(gathered) -> str:
    return render(gathered)


def test_report_is_one_offline_document(html):
    assert html.startswith("<!doctype html>")
    assert 'http-equiv="Content-Security-Policy" content="default-src &#x27;none&#x27;' in html
    assert "<script" not in html
    # nothing to fetch: no external addresses in attributes (only in-page references)
    refs = re.findall(r'(?:src|href)="([^"#][^"]*)"', html)
    assert all(r.startswith("data:") for r in refs), refs
    assert not re.search(r"url\((?!#)", html)


def test_every_figure_has_an_svg_and_its_numbers(html):
    for name in ("class-sizes", "k-delta", "lattice", "singling-out", "transformation", "loss"):
        block = html.split(f'data-figure="{name}"', 1)[1].split("</figure>", 1)[0]
        assert "<svg" in block and "<table" in block, name
        assert "<title>" in block, f"{name} has no tooltips"
    assert 'data-figure="sensitive-income"' in html
    assert 'data-figure="verdicts"' in html
    # ids stay unique although every figure is inlined
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids))


def test_numbers_shown_are_the_answers_of_the_api(adult, gathered, html):
    eng = anonlab.open_engine(adult)
    q2 = anonlab.diagnose(eng, quasi_identifiers=QI)
    assert f'data-card="k" data-value="{q2.k}"' in html
    q11 = anonlab.diagnose(eng, quasi_identifiers=QI, find_delta=True)
    k_delta = html.split('data-figure="k-delta"', 1)[1].split("</figure>", 1)[0]
    for row in q11.rows:
        assert f'<td class="num">{row.delta:.4f}</td>' in k_delta
    q4 = anonlab.diagnose(eng, attributes=QI)
    lattice = html.split('data-figure="lattice"', 1)[1].split("</figure>", 1)[0]
    for row in q4.rows[:20]:
        assert f'<td>{", ".join(row.attributes)}</td><td class="num">{row.k}</td>' in lattice
    result = gathered.job.result
    reference = anonlab.anonymize(adult, JOB)
    assert result.loss == reference.loss and result.suppressed_rows == reference.suppressed_rows
    assert f'data-card="suppressed" data-value="{reference.suppressed_rows}"' in html


def test_report_data_gathers_answers_of_the_api(adult, gathered):
    eng = anonlab.open_engine(adult)
    assert gathered.q2.to_dict() == anonlab.diagnose(eng, quasi_identifiers=QI).to_dict()
    assert gathered.q3.to_dict() == anonlab.diagnose(eng, attributes=QI, k=5).to_dict()
    # the columns the job gives a role are not listed as undeclared identifying columns
    risk = anonlab.risk(eng, QI, declared=["income", *ADULT_IDENTIFYING]).to_dict()
    assert gathered.risk.to_dict() == risk
    undeclared = {c["column"] for c in anonlab.risk(eng, QI).to_dict()["identifying_columns"]}
    assert undeclared & set(ADULT_IDENTIFYING)  # (they would be, without the job)
    assert not {c["column"] for c in risk["identifying_columns"]} & set(ADULT_IDENTIFYING)
    assert gathered.profile.n_rows == 30162 and gathered.k == 5
    assert [c.name for c in gathered.profile.columns] == adult.names


def test_the_report_module_is_callable_and_still_a_package(tmp_path, adult):
    out = tmp_path / "r.html"
    text = anonlab.report(adult, quasi_identifiers=["age", "sex"], output=out)
    assert out.read_text(encoding="utf-8") == text
    from anonlab import report

    assert report.Section is anonlab.report.Section and callable(report)


def test_profile_release_per_attribute_loss_aggregates_to_the_loss(adult):
    result = anonlab.anonymize(adult, JOB)
    problem = build_problem(adult, load_job(JOB))
    profile = profile_release(problem, result, ["income"])
    assert profile.attribute_loss is not None
    values = [profile.attribute_loss.values[q] for q in problem.quasi_identifiers]
    context = metric_context(problem)
    total = problem.metric.combine(problem.quasi_identifiers, values, context)
    assert total == pytest.approx(result.loss)
    income = profile.sensitive[0]
    assert income.attribute == "income" and sum(income.table_counts) == adult.n_rows
    assert profile.released_rows + profile.suppressed_rows == adult.n_rows
    assert profile.suppressed_rows == result.suppressed_rows
    assert sum(b["records"] for b in profile.class_size_histogram) == profile.released_rows
    for c in income.classes:
        assert sum(c["counts"]) == c["size"] and 0.0 <= c["distance"] <= 1.0


@pytest.mark.parametrize("metric", ["ncp", "gcp"])
@pytest.mark.parametrize(
    "algorithm", ["optimal", "progressive", "top_down", "wong_nh", "murakami_uno", "personalized"]
)
def test_profile_release_per_attribute_certainty_penalty_of_every_family(adult, algorithm, metric):
    """NCP and GCP per attribute, on releases with cells on different levels and on cell
    covers (once an AttributeError and an AssertionError), add up to the loss."""
    table = adult.take(list(range(300)))
    # 300 records: the other columns are released knowingly (fnlwgt is dropped)
    others = [c for c in table.names if c not in {*JOB["quasi_identifiers"], "income", "fnlwgt"}]
    job = {
        **JOB, "metric": metric, "algorithm": algorithm, "identifiers": ["fnlwgt"],
        "insensitive": others,
    }  # fmt: skip
    job["models"] = [{"k_anonymity": {"k": 3}}]
    if algorithm in ("wong_nh", "murakami_uno"):  # a cover suppresses no row
        job["suppression"] = 0.0
    result = anonlab.anonymize(table, job)
    problem = build_problem(table, load_job(job))
    profile = profile_release(problem, result, ["income"])
    assert profile.attribute_loss is not None and profile.attribute_loss.metric == metric
    values = [profile.attribute_loss.values[q] for q in problem.quasi_identifiers]
    assert all(v >= 0 for v in values) and sum(values) > 0
    total = problem.metric.combine(problem.quasi_identifiers, values, metric_context(problem))
    assert total == pytest.approx(result.loss)
    # each class shown is named by its released labels (grouped again where the
    # verification kept no keys: every release but a full-domain one)
    (income,) = profile.sensitive
    width = len(problem.quasi_identifiers)
    assert income.classes and all(len(c["key"]) == width for c in income.classes)


def test_profile_table_counts_missing_and_distinct():
    table = anonlab.EncodedTable.from_columns(
        {"a": ["x", "y", None, "x"], "b": ["1", "1", "1", "2"]}
    )
    prof = profile_table(table)
    a, b = prof.columns
    assert (a.distinct, a.missing, a.top_value, a.top_count) == (2, 1, "x", 2)
    assert (b.distinct, b.missing, b.top_value) == (2, 0, "1")


def test_bad_input_is_one_error_and_nothing_is_written(tmp_path, adult):
    data = tmp_path / "d.csv"
    data.write_text("a,b\n1,2\n3,4\n")
    with pytest.raises(anonlab.AnonlabError, match="Unknown quasi-identifier 'c'"):
        anonlab.report(data, quasi_identifiers=["c"], output=tmp_path / "r.html")
    with pytest.raises(anonlab.AnonlabError, match="end it with .html"):
        anonlab.report(data, quasi_identifiers=["a"], output=tmp_path / "r.pdf")
    page = tmp_path / "d.html"  # a CSV file whose name ends like a report
    page.write_text("a,b\n1,2\n3,4\n")
    with pytest.raises(anonlab.AnonlabError, match="Refusing to overwrite the input"):
        anonlab.report(page, quasi_identifiers=["a"], output=page)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv", "d.html"]
    assert page.read_text() == "a,b\n1,2\n3,4\n"
    assert data.read_text() == "a,b\n1,2\n3,4\n"


@pytest.mark.slow
def test_the_command_writes_the_report_and_fails_in_one_line(tmp_path):
    adult = str(api.adult_path())
    out = tmp_path / "report.html"
    cmd = [sys.executable, "-m", "anonlab", "report", adult, "--qi", ",".join(QI)]
    ok = subprocess.run(
        [*cmd, "--drop-missing", "--output", str(out)], capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stderr
    text = out.read_text(encoding="utf-8")
    assert "30,162" in text and 'data-figure="lattice"' in text
    bad = subprocess.run(
        [sys.executable, "-m", "anonlab", "report", adult, "--qi", "agee", "--output",
         str(tmp_path / "x.html")],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert bad.returncode == 2
    assert bad.stderr.strip().startswith("error: Unknown quasi-identifier 'agee'")
    assert len(bad.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.html").exists()


def test_svg_ids_are_prefixed_per_figure():
    from anonlab.report import _plots

    a = _plots.bar_chart(["x"], [1], tips=["t"])
    b = _plots.bar_chart(["x"], [1], tips=["t"])
    ids_a = set(re.findall(r'\bid="([^"]+)"', a))
    ids_b = set(re.findall(r'\bid="([^"]+)"', b))
    assert ids_a and not ids_a & ids_b
    assert a.count("url(#f") == a.count("url(#")


def test_a_non_homogeneous_release_shows_its_generalized_cells(adult):
    # its summary has no levels: the figure counts the cells each attribute generalizes
    table = adult.select([*QI, "income"]).take(list(range(300)))
    job = {
        **JOB,
        "metric": "gcp",
        "suppression": 0.0,
        "algorithm": {"name": "wong_nh"},
        "identifiers": [],
    }
    job["insensitive"] = [q for q in QI if q not in JOB["quasi_identifiers"]]
    job["models"] = [{"k_anonymity": {"k": 3}}]
    data = api.report_data(table, quasi_identifiers=QI, job=job)
    wide = data.job.result.summary["generalized_cells"]
    page = render(data)
    block = page.split('data-figure="transformation"', 1)[1].split("</figure>", 1)[0]
    assert "each released record covers 3 records" in block
    for q in JOB["quasi_identifiers"]:
        row = re.search(
            rf"<td>{re.escape(q)}</td><td[^>]*>([\d,]+)</td><td[^>]*>([\d,]+)</td>", block
        )
        assert row is not None, q
        kept, generalized = (int(x.replace(",", "")) for x in row.groups())
        assert (kept, generalized) == (300 - wide[q], wide[q])
    assert sum(wide.values()) > 0


def test_the_risk_sections_tell_the_population_before_and_after(adult):
    """Issue 53: with a sampling fraction the report shows the three attacker models and the
    population estimates of S, the risk before and after the job side by side, the riskiest
    records by SUDA score, and the commands repeat the fraction."""
    data = api.report_data(adult, quasi_identifiers=QI, job=JOB, sampling_fraction=0.01)
    page = render(data)
    for title in (
        "Attacker models",
        "Population uniqueness (sampling fraction 0.01",
        "Re-identification risk before and after",
        "Riskiest records by SUDA score",
    ):
        assert title in page, title
    assert "--sampling-fraction=0.01" in page
    before, after = data.job.before_risk.to_dict(), data.job.after_risk.to_dict()
    assert after["k"] >= 5 and before["k"] == 1
    assert after["sampling_fraction"] == before["sampling_fraction"] == 0.01
    assert "population_uniqueness" in after and after["unique_fraction"] == 0
    top = data.suda.riskiest(1)[0]
    assert f"<td>{top['row'] + 1:,}</td>" in page.replace('<td class="num">', "<td>")


def test_the_after_risk_weighs_each_released_row_by_its_own_weight(adult):
    """The weights of the release's rows are the data's rows' own (suppressed rows out)."""
    job = {
        **JOB,
        "weight": "fnlwgt",
        "identifiers": [c for c in ADULT_IDENTIFYING if c != "fnlwgt"],
    }
    data = api.report_data(adult, quasi_identifiers=QI, job=job)
    result = data.job.result
    keys = {q: result.columns[q] for q in data.job.result.problem.quasi_identifiers}
    assert result.columns.rows is not None  # the job suppresses rows
    keys["fnlwgt"] = adult["fnlwgt"].labels()[result.columns.rows]
    expected = api.risk(anonlab.EncodedTable.from_columns(keys), list(keys)[:-1], weight="fnlwgt")
    after = data.job.after_risk.to_dict()
    assert after["weighted_risk"] == pytest.approx(expected.to_dict()["weighted_risk"], rel=1e-12)
    assert "Benedetti-Franconi" in render(data)


def test_report_takes_the_csv_options_diagnose_takes(tmp_path):
    """Issue 54, item 5: one shared set of CSV options (a ';' file, a tab file by name)."""
    from typer.testing import CliRunner

    from anonlab.cli.app import app

    rows = "age;sex;income\n" + "".join(f"{20 + i % 7};{'FM'[i % 2]};x{i % 3}\n" for i in range(60))
    semi = tmp_path / "semi.csv"
    semi.write_text(rows)
    tabbed = tmp_path / "tab.csv"
    tabbed.write_text(rows.replace(";", "\t"))
    for path, sep in ((semi, ";"), (tabbed, "tab"), (tabbed, "\\t")):
        out = tmp_path / "r.html"
        res = CliRunner().invoke(
            app, ["report", str(path), "-s", sep, "--qi", "age,sex", "--output", str(out)]
        )
        assert res.exit_code == 0, res.output
        assert "60 rows" in out.read_text(encoding="utf-8")
        out.unlink()


def test_dollar_labels_are_shown_as_written_and_never_crash():
    """A '$' in the data is a dollar in every figure, not TeX ('$x_$' does not parse as TeX)."""
    labels = ["$x_$", "$50K-$60K", "a$^$b"] * 10
    t = anonlab.EncodedTable.from_columns(
        {"band": labels, "sex": ["F", "M"] * 15, "income": ["$x_$", "$2", "$x_$"] * 10}
    )
    job = {
        "quasi_identifiers": {"band": {}, "sex": {}},
        "sensitive": ["income"],
        "models": [{"k_anonymity": {"k": 2}}],
    }
    page = render(api.report_data(t, job=job))  # the sensitive values are a figure's legend
    assert "$x_$" in page and "$50K-$60K" in page and 'data-figure="sensitive' in page


def test_the_print_stylesheet_shows_every_row():
    from anonlab.report.html import CSS

    media = CSS[CSS.index("@media print") :]
    assert ".numbers, pre { max-height: none; overflow: visible; }" in media


def test_sensitive_without_a_job_is_honoured(adult):
    """--sensitive without --job: the classes of S whose records share one value are listed."""
    data = api.report_data(adult, quasi_identifiers=["age", "sex", "race"], sensitive=["income"])
    assert data.disclosure[0].attribute == "income" and data.disclosure[0].homogeneous_classes > 0
    page = render(data)
    assert 'data-disclosure-s="income">Attribute disclosure under S:' in page


def test_a_column_the_job_releases_as_it_is_is_said_so_once():
    """An identifying column the job declares insensitive is still listed (the app holds such
    a release for confirmation), and its warning says it is released as it is, once; a
    column the job drops (identifiers) is not listed."""
    import warnings

    from anonlab.exceptions import PrivacyRiskWarning

    n = 60
    t = anonlab.EncodedTable.from_columns(
        {
            "age": [str(20 + i % 3) for i in range(n)],
            "sex": ["FM"[i % 2] for i in range(n)],
            "code": [f"C{i:03d}" for i in range(n)],  # unique: identifies
            "ssn": [f"S{i:03d}" for i in range(n)],  # unique: identifies
        }
    )
    job = {"quasi_identifiers": {"age": {}, "sex": {}}, "insensitive": ["code"],
           "identifiers": ["ssn"], "models": [{"k_anonymity": {"k": 2}}]}  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyRiskWarning)
        data = api.report_data(t, quasi_identifiers=["age", "sex"], job=job)
    said = [str(w.message) for w in caught if issubclass(w.category, PrivacyRiskWarning)]
    about_code = [m for m in said if "'code'" in m]
    assert len(about_code) == 1 and "is released as it is (insensitive)" in about_code[0]
    assert not [m for m in said if "'ssn'" in m]
    assert [c["column"] for c in data.risk.identifying_columns] == ["code"]
