"""The risk-based models from a YAML job file on the command line: a release that holds, and
a bad parameter as one clear line (exit 2) with nothing written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from anonlab.cli import app

runner = CliRunner()

JOB = """\
quasi_identifiers:
  age: {{intervals: {{widths: [5, 10, 20, 40]}}}}
  zip: {{mask: {{width: 4}}}}
models:
{models}
suppression: 0.05
metric: loss
"""


def _data(path: Path) -> Path:
    rng = np.random.default_rng(5)
    ages = rng.integers(20, 70, size=300)
    zips = rng.choice(["4350", "4351", "4360", "4361"], size=300)
    path.write_text("age,zip\n" + "".join(f"{a},{z}\n" for a, z in zip(ages, zips)))
    return path


@pytest.mark.parametrize(
    "models",
    [
        "  - average_risk: {threshold: 0.1}\n  - sample_uniqueness: {threshold: 0.01}",
        "  - k_map: {k: 100, sampling_fraction: 0.05, estimator: zero_truncated_poisson}",
        "  - population_uniqueness: {threshold: 0.01, sampling_fraction: 0.2, estimator: zayatz}",
    ],
)
def test_a_yaml_job_with_a_risk_model_releases_and_checks(tmp_path, models):
    data = _data(tmp_path / "data.csv")
    job = tmp_path / "job.yaml"
    job.write_text(JOB.format(models=models))
    out = tmp_path / "release.csv"
    res = runner.invoke(app, ["anonymize", str(data), "--job", str(job), "--output", str(out)])
    assert res.exit_code == 0, res.output
    assert out.exists()
    check = runner.invoke(app, ["check", str(data), "--job", str(job), "--release", str(out)])
    assert check.exit_code == 0, check.output


@pytest.mark.parametrize(
    ("models", "words"),
    [
        ("  - average_risk: {threshold: 1.5}", "'threshold' parameter of AverageRisk"),
        (
            "  - population_uniqueness: {threshold: 0.01, sampling_fraction: 0.1, estimator: snbb}",
            "Did you mean 'snb'?",
        ),
        ("  - k_map: {k: 10}", "Model 'k_map' needs parameter 'sampling_fraction'"),
        ("  - sample_uniqueness: {threshold: 0.1, k: 2}", "Unknown parameter 'k'"),
    ],
)
def test_a_bad_risk_model_is_one_line_and_writes_nothing(tmp_path, models, words):
    data = _data(tmp_path / "data.csv")
    job = tmp_path / "job.yaml"
    job.write_text(JOB.format(models=models))
    out = tmp_path / "release.csv"
    res = runner.invoke(app, ["anonymize", str(data), "--job", str(job), "--output", str(out)])
    assert res.exit_code == 2, res.output
    assert words in " ".join(res.output.split()), res.output
    assert not out.exists()
