"""The example jobs in ``examples/`` run on the bundled UCI Adult data, as the README shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from anonlab.cli import app

ROOT = Path(__file__).resolve().parents[2]
ADULT = ROOT / "src" / "anonlab" / "datasets" / "adult.csv.gz"


@pytest.mark.parametrize(
    "name", ["adult_k5.yaml", "adult_privacyfrost2.yaml", "adult_personalized.yaml"]
)
def test_example_job_runs_and_passes_its_checks(tmp_path, name):
    out = tmp_path / "out.csv"
    job = ROOT / "examples" / name
    res = CliRunner().invoke(
        app, ["anonymize", str(ADULT), "--job", str(job), "--output", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["checks"] and all(doc["checks"].values())
    assert out.exists() and out.stat().st_size > 0


def test_privacyfrost2_example_summary(tmp_path):
    out = tmp_path / "out.csv"
    job = ROOT / "examples" / "adult_privacyfrost2.yaml"
    res = CliRunner().invoke(
        app, ["anonymize", str(ADULT), "--job", str(job), "--output", str(out)]
    )
    assert res.exit_code == 0, res.output
    for line in ("full-domain table T^G", "score", "partial-domain classes", "level vectors"):
        assert line in res.output
