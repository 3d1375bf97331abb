"""Attribute disclosure (issue 54, item 3): classes whose records share one sensitive value."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import anonlab
from anonlab import EncodedTable
from anonlab.api import adult_path, open_engine, report_data
from anonlab.cli.app import app
from anonlab.diagnosis.disclosure import attribute_disclosure
from anonlab.exceptions import ParameterError
from anonlab.report.html import render
from tests.support.identifying import ADULT_AGE_SEX_RACE_ROLES

ADULT = str(adult_path())
JOB = {
    "quasi_identifiers": {"age": {"intervals": {"widths": [5, 10, 20]}}, "sex": {}, "race": {}},
    **ADULT_AGE_SEX_RACE_ROLES,
    "models": [{"k_anonymity": {"k": 5}}],
    "suppression": 0.02,
}


def stats_of(zips, values):
    t = EncodedTable.from_columns({"zip": zips, "disease": values})
    return open_engine(t).class_stats(["zip"], sensitive=["disease"])


def test_counts_by_hand():
    # classes: A = flu x3 (homogeneous), B = flu, flu, flu, hiv (75 % flu), C = flu, hiv
    stats = stats_of(
        ["A"] * 3 + ["B"] * 4 + ["C"] * 2, ["flu"] * 3 + ["flu"] * 3 + ["hiv"] + ["flu", "hiv"]
    )
    d = attribute_disclosure(stats, "disease")
    assert (d.classes, d.records, d.homogeneous_classes, d.homogeneous_records) == (3, 9, 1, 3)
    assert d.dominated_classes == 0 and d.worst == [
        {"labels": ["A"], "size": 3, "value": "flu", "share": 1.0}
    ]
    d = attribute_disclosure(stats, "disease", share=0.7)
    assert (d.dominated_classes, d.dominated_records) == (2, 7)
    assert [w["labels"] for w in d.worst] == [["A"], ["B"]]
    # a suppressed class gives nothing away
    kept = np.ones(stats.n_classes, dtype=bool)
    kept[[i for i in range(stats.n_classes) if stats.domains[0][stats.keys[i, 0]] == "A"]] = False
    assert attribute_disclosure(stats, "disease", kept=kept).homogeneous_classes == 0


def test_bad_input():
    stats = stats_of(["A", "B"], ["flu", "hiv"])
    with pytest.raises(ParameterError, match="'share' parameter of attribute_disclosure"):
        attribute_disclosure(stats, "disease", share=1.5)
    with pytest.raises(ParameterError, match="No sensitive counts of 'zip'"):
        attribute_disclosure(stats, "zip")
    with pytest.raises(ParameterError, match="'disclosure_share' parameter of check"):
        anonlab.check(ADULT, JOB, disclosure_share=0)


def test_check_lists_them_even_for_k_anonymity_alone(tmp_path):
    before = anonlab.check(ADULT, JOB).to_dict()["attribute_disclosure"]
    assert before[0]["attribute"] == "income" and before[0]["homogeneous_classes"] == 232
    out = tmp_path / "release.csv"
    anonlab.anonymize(ADULT, JOB, output=out)
    after = anonlab.check(ADULT, JOB, release=out).disclosure[0]
    assert (after.homogeneous_classes, after.homogeneous_records) == (83, 2815)
    res = CliRunner().invoke(
        app, ["check", ADULT, "--job", _job_file(tmp_path), "--release", str(out), "--json"]
    )
    text = res.output[res.output.index("{") :]  # (after the engine's note)
    assert json.loads(text)["attribute_disclosure"][0]["homogeneous_records"] == 2815
    res = CliRunner().invoke(
        app, ["check", ADULT, "--job", _job_file(tmp_path), "--release", str(out)]
    )
    assert (
        "83 classes of 2,815 records (8.8% of the records) share one value of 'income'"
        in " ".join(res.output.split())
    )


def test_out_of_core_check_finds_the_same_classes():
    numpy = anonlab.check(ADULT, JOB, engine="numpy", disclosure_share=0.9).disclosure
    duck = anonlab.check(ADULT, JOB, engine="duckdb", disclosure_share=0.9).disclosure
    assert [d.to_dict() for d in numpy] == [d.to_dict() for d in duck]


def test_the_report_says_so_next_to_the_verdict():
    data = report_data(anonlab.load_adult(), job=JOB, disclosure_share=0.95)
    page = render(data)
    d = data.job.after_disclosure[0]
    assert d.exposed and d.share == 0.95
    assert 'data-disclosure="income">k_anonymity: yes, but attribute disclosure:' in page


def _job_file(tmp_path):
    import yaml

    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(JOB))
    return str(path)
