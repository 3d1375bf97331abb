"""Utility in a steward's terms (issue 54, item 2): per attribute, per pair, in words."""

from __future__ import annotations

import math

import pytest
from typer.testing import CliRunner

import anonlab
from anonlab.api import adult_path, report_data
from anonlab.cli.app import app
from anonlab.diagnosis.utility import utility_profile
from anonlab.exceptions import ColumnNotFoundError, ParameterError
from anonlab.report.html import render

# 8 records: zip 435x / 436x, disease; k = 3 suppresses the one record of 4370
ROWS = {
    "zip": ["4350", "4351", "4352", "4360", "4361", "4362", "4363", "4370"],
    "disease": ["flu", "flu", "hiv", "flu", "hiv", "hiv", "hiv", "flu"],
}
JOB = {
    "quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    "sensitive": ["disease"],
    "models": [{"k_anonymity": {"k": 3}}],
    "suppression": 0.2,
}


@pytest.fixture(scope="module")
def profile():
    t = anonlab.EncodedTable.from_columns(ROWS)
    result = anonlab.anonymize(t, JOB)
    assert result.transformation == {"zip": 1} and result.suppressed_rows == 1
    return utility_profile(t, result, ["disease"], pair=["zip", "disease"])


def test_shares_by_hand(profile):
    zip_, disease = profile.attributes
    assert zip_.generalized == 7 / 8 and zip_.suppressed == 1 / 8
    assert (zip_.level, zip_.height, zip_.fully_generalized) == (1, 4, False)
    # disease: data 4 flu / 4 hiv; kept 3 flu / 4 hiv: TVD = |4/8 - 3/7| = 1/14
    assert disease.kept_distribution == pytest.approx(1 - 1 / 14)
    # zip labels on every row: 435* x3, 436* x4, 437* x1; released 3 / 4: TVD = 1/8
    assert zip_.kept_distribution == pytest.approx(1 - 1 / 8)
    assert zip_.after == [("436*", 4), ("435*", 3)]
    assert profile.summary == (
        "0 of 1 attribute is fully generalized; 1 row (12.5%) suppressed; disease keeps "
        "92.9% of its distribution."
    )


def test_cramers_v_and_the_contingency_table_by_hand(profile):
    (pair,) = profile.associations
    assert pair["pair"] == ["zip", "disease"]
    assert pair["before"] == pytest.approx(1.0)  # every zip is its own class: V = 1
    # after: 435* = (2 flu, 1 hiv), 436* = (1 flu, 3 hiv); chi2 by hand
    observed = [[2, 1], [1, 3]]
    n, rows, cols = 7, [3, 4], [3, 4]
    chi2 = sum((observed[i][j] - rows[i] * cols[j] / n) ** 2 / (rows[i] * cols[j] / n)
               for i in range(2) for j in range(2))  # fmt: skip
    assert pair["after"] == pytest.approx(round(math.sqrt(chi2 / n), 4))
    after = profile.contingency["after"]
    assert after["rows"] == ["436*", "435*"] and after["columns"] == ["hiv", "flu"]
    assert after["counts"] == [[3, 1], [1, 2]]


def test_bad_pairs_are_named():
    t = anonlab.EncodedTable.from_columns(ROWS)
    result = anonlab.anonymize(t, JOB)
    with pytest.raises(ColumnNotFoundError, match="Unknown attribute 'zipp' for the contingency"):
        utility_profile(t, result, ["disease"], pair=["zipp", "disease"])
    with pytest.raises(ParameterError, match="needs two attributes"):
        utility_profile(t, result, ["disease"], pair=["zip"])


def test_the_report_opens_with_the_summary_and_shows_the_pair(tmp_path):
    job = {
        "quasi_identifiers": {"age": {"hierarchy": "auto"}, "sex": {}, "race": {}},
        "sensitive": ["income"],
        "identifiers": ["fnlwgt", "education-num"],
        "insensitive": ["workclass", "education", "marital-status", "occupation",
                        "relationship", "capital-gain", "capital-loss", "hours-per-week",
                        "native-country"],
        "models": [{"k_anonymity": {"k": 5}}],
        "suppression": 0.05,
    }  # fmt: skip
    data = report_data(anonlab.load_adult(), job=job, contingency=["age", "income"])
    page = render(data)
    summary = data.job.utility.summary
    assert summary.startswith("0 of 3 attributes are fully generalized;")
    assert f'data-summary="utility">{summary}</p>' in page.replace("&#x27;", "'")
    assert "What the release keeps" in page and "age x income: after" in page
    import yaml

    (tmp_path / "job.yaml").write_text(yaml.safe_dump(job))
    res = CliRunner().invoke(
        app,
        ["report", str(adult_path()), "--job", str(tmp_path / "job.yaml"), "--contingency",
         "age,incomee", "--output", str(tmp_path / "r.html")],
    )  # fmt: skip
    assert res.exit_code == 2 and "Unknown attribute 'incomee' for the contingency" in res.output
    assert not (tmp_path / "r.html").exists()


def test_classification_utility_trains_on_the_data_and_on_the_release():
    """The release's model is measured on the same held-out records as the data's; a
    release that generalizes away what predicts the target loses the accuracy; bad targets
    are named."""
    from anonlab.diagnosis.utility import classification_utility

    pytest.importorskip("sklearn")
    t = anonlab.EncodedTable.from_columns(
        {"zip": ["4350", "4351", "4360", "4361"] * 25, "sex": ["F", "M"] * 50,
         "sick": ["y", "y", "n", "n"] * 25}
    )  # fmt: skip
    job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
           "sensitive": ["sick"], "models": [{"k_anonymity": {"k": 30}}]}  # fmt: skip
    result = anonlab.anonymize(t, job)
    u = classification_utility(t, result, "sick")
    assert (u.records, u.test_records, u.baseline) == (100, 30, 0.5)
    for name in ("logistic regression", "random forest"):
        assert u.accuracy[name]["data"] == 1.0
    # zip at level 2 (43**) no longer tells sick apart (435* from 436*): guessing at best
    assert result.transformation == {"zip": 2, "sex": 0}
    assert u.accuracy["random forest"]["release"] <= 0.5 and u.kept("random forest") <= 0
    with pytest.raises(ParameterError, match="target 'zip' is a quasi-identifier"):
        classification_utility(t, result, "zip")
    with pytest.raises(ColumnNotFoundError, match="Unknown classification target 'sik'"):
        classification_utility(t, result, "sik")
