"""anonlab explore (issue 54, item 4): candidate releases, their risk against their loss."""

from __future__ import annotations

import html

import pytest
from typer.testing import CliRunner

import anonlab
from anonlab.api import adult_path, explore
from anonlab.cli.app import app
from anonlab.exceptions import InputError, ParameterError
from tests.support.identifying import ADULT_AGE_SEX_RACE_ROLES

ADULT = str(adult_path())
JOB = {
    "quasi_identifiers": {"age": {"hierarchy": "auto"}, "sex": {}, "race": {}},
    **ADULT_AGE_SEX_RACE_ROLES,
    "models": [{"k_anonymity": {"k": 5}}],
    "suppression": 0.05,
}


@pytest.fixture(scope="module")
def found(tmp_path_factory):
    out = tmp_path_factory.mktemp("explore") / "explore.html"
    algorithms = ["optimal", "top_down", "murakami_uno"]
    return out, explore(ADULT, JOB, ks=[2, 10], algorithms=algorithms, output=out)


def test_every_candidate_is_measured_on_one_scale(found):
    _, data = found
    assert [(c.k, c.algorithm) for c in data.candidates] == [
        (2, "optimal"), (2, "top_down"), (2, "murakami_uno"),
        (10, "optimal"), (10, "top_down"), (10, "murakami_uno"),
    ]  # fmt: skip
    for c in data.candidates:
        job = {**JOB, "models": [{"k_anonymity": {"k": c.k}}], "algorithm": c.algorithm,
               "metric": "gcp"}  # fmt: skip
        if c.algorithm == "murakami_uno":
            job.pop("suppression")
        result = anonlab.anonymize(ADULT, job)
        assert c.loss == pytest.approx(result.loss) and c.k_after >= c.k
        assert c.risk.highest_risk <= 1 / c.k or c.cover


def test_the_frontier_is_the_candidates_no_other_beats_on_both(found):
    _, data = found
    ran = data.candidates
    for c in ran:
        beaten = any(
            o.loss <= c.loss and o.risk.average_risk <= c.risk.average_risk
            and (o.loss < c.loss or o.risk.average_risk < c.risk.average_risk)
            for o in ran if o is not c
        )  # fmt: skip
        assert c.frontier == (not beaten)
    assert any(c.frontier for c in ran)


def test_the_page_links_each_candidates_files(found):
    out, data = found
    page = html.unescape(out.read_text(encoding="utf-8"))
    assert 'data-figure="frontier"' in page
    for c in data.candidates:
        for rel in (c.report, c.release, c.job):
            assert f'href="{rel}"' in page and (out.parent / rel).is_file()
    # a candidate's job file runs as it is and gives its release
    c = data.candidates[0]
    again = anonlab.anonymize(ADULT, out.parent / c.job)
    assert again.loss == pytest.approx(c.loss)


def test_a_refused_candidate_is_listed_with_its_reason():
    job = {**JOB, "models": [{"k_anonymity": {"k": 2}},
                             {"distinct_l_diversity": {"attribute": "income", "l": 2}}]}  # fmt: skip
    data = explore(ADULT, job, ks=[2], algorithms=["optimal", "murakami_uno"])
    refused = [c for c in data.candidates if c.refused]
    assert [c.algorithm for c in refused] == ["murakami_uno"] and refused[0].loss is None


def test_bad_input_is_one_line_and_writes_nothing(tmp_path):
    out = tmp_path / "e.html"
    with pytest.raises(ParameterError, match="Unknown algorithm 'optimall'. Did you mean"):
        explore(ADULT, JOB, algorithms=["optimall"], output=out)
    with pytest.raises(ParameterError, match="'k' parameter of explore must be an int >= 1"):
        explore(ADULT, JOB, ks=[0], output=out)
    with pytest.raises(InputError, match="Unknown quasi-identifier 'agee'"):
        explore(ADULT, {**JOB, "quasi_identifiers": {"agee": {}}}, output=out)
    with pytest.raises(
        ParameterError, match="201 k's x 1 algorithms = 201 candidates, more than 200"
    ):
        explore(ADULT, JOB, ks=range(1, 202), output=out)
    with pytest.raises(InputError, match="end it with .html"):
        explore(ADULT, JOB, output=tmp_path / "e.csv")
    assert list(tmp_path.iterdir()) == []
    res = CliRunner().invoke(
        app, ["explore", ADULT, "--job", "x.yaml", "--k", "2,x", "-o", str(out)]
    )
    assert res.exit_code == 2 and "--k 'x': give whole numbers" in res.output
    assert list(tmp_path.iterdir()) == []


def test_candidates_with_a_classification_target_show_its_accuracy():
    pytest.importorskip("sklearn")
    data = explore(ADULT, JOB, ks=[5], algorithms=["optimal"], classify="income")
    (c,) = data.candidates
    assert set(c.accuracy) == {"logistic regression", "random forest"}
    assert 0.7 < c.accuracy["random forest"]["release"] <= 1
    page = html.unescape(__import__("anonlab.report.html", fromlist=["x"]).render_explore(data))
    assert "random forest accuracy (data / release)" in page
    assert 'data-figure="frontier-highest"' in page
    with pytest.raises(ParameterError, match="target 'age' is a quasi-identifier"):
        explore(ADULT, JOB, ks=[5], algorithms=["optimal"], classify="age")


def test_a_bad_target_writes_nothing(tmp_path):
    for target in ("age", "incomee"):
        with pytest.raises(InputError, match="classification target"):
            explore(ADULT, JOB, ks=[5], classify=target, output=tmp_path / "e.html")
    assert list(tmp_path.iterdir()) == []


def test_explore_takes_the_csv_options_diagnose_takes(tmp_path):
    import yaml

    semi = tmp_path / "adult.csv"
    pd = pytest.importorskip("pandas")
    semi.write_text(pd.read_csv(ADULT, dtype=str).to_csv(sep=";", index=False))
    job = tmp_path / "job.yaml"
    job.write_text(yaml.safe_dump(JOB))
    out = tmp_path / "e.html"
    res = CliRunner().invoke(
        app,
        ["explore", str(semi), "--job", str(job), "-s", ";", "--k", "2,5", "-o", str(out)],
    )
    assert res.exit_code == 0, res.output
    assert res.output.count("engine auto chose") == 1  # a note once, not once per candidate
    written = yaml.safe_load((tmp_path / "e_files" / "k5_optimal.yaml").read_text())
    assert written["separator"] == ";"
    again = anonlab.anonymize(str(semi), tmp_path / "e_files" / "k5_optimal.yaml")
    assert again.transformation
