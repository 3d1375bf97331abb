"""k-map with a population table and delta-presence from a YAML job on the command line: a
release that holds (and the same on DuckDB), ``check`` counting the population, the re-check
judging the population, and each bad input as one clear line (exit 2) with nothing written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from anonlab import EncodedTable, anonymize, check
from anonlab.cli import app
from anonlab.exceptions import PrivacyCheckError
from anonlab.io import read_table
from anonlab.release import verify
from anonlab.release.recoding import FullDomain

runner = CliRunner()

JOB = """\
quasi_identifiers:
  age: {{intervals: {{widths: [5, 10, 20, 40]}}}}
  zip: {{mask: {{width: 4}}}}
identifiers: [note]
population: {population}
models:
{models}
suppression: 0.05
metric: loss
"""


def _tables(tmp_path: Path) -> tuple[Path, Path]:
    """A population of 600 rows and a sample of its first 150 (data.csv, pop.csv)."""
    rng = np.random.default_rng(5)
    ages = rng.integers(20, 70, size=600)
    zips = rng.choice(["4350", "4351", "4360", "4361"], size=600)
    rows = [f"{a},{z},x{i}\n" for i, (a, z) in enumerate(zip(ages, zips))]
    pop = tmp_path / "pop.csv"
    pop.write_text("age,zip,note\n" + "".join(rows))
    data = tmp_path / "data.csv"
    data.write_text("age,zip,note\n" + "".join(rows[:150]))
    return data, pop


def _run(tmp_path: Path, models: str, population: str = "pop.csv", *extra: str):
    data, _ = _tables(tmp_path)
    job = tmp_path / "job.yaml"
    job.write_text(JOB.format(models=models, population=population))
    out = tmp_path / "release.csv"
    args = ["anonymize", str(data), "--job", str(job), "--output", str(out), *extra]
    return runner.invoke(app, args), out, data, job


@pytest.mark.parametrize(
    "models",
    [
        "  - k_map: {k: 10}",
        "  - delta_presence: {dmin: 0.0, dmax: 0.5}",
        "  - k_anonymity: {k: 2}\n  - delta_presence: {dmin: 0.1, dmax: 0.4}",
    ],
)
def test_a_yaml_job_with_a_population_table_releases_the_sample(tmp_path, models):
    res, out, data, job = _run(tmp_path, models)
    assert res.exit_code == 0, res.output
    released = read_table(out)
    assert released.n_rows >= 150 - 7  # the sample's rows, at most 5 % suppressed
    assert released.n_rows <= 150
    on_duckdb = tmp_path / "duckdb.csv"
    pytest.importorskip("duckdb")
    args = ["anonymize", str(data), "--job", str(job), "--output", str(on_duckdb)]
    res = runner.invoke(app, [*args, "--engine", "duckdb"])
    assert res.exit_code == 0, res.output
    key = lambda path: sorted(map(tuple, zip(*read_table(path).to_dict().values())))  # noqa: E731
    assert key(on_duckdb) == key(out)


@pytest.mark.parametrize(
    ("models", "population", "words"),
    [
        ("  - k_map: {k: 0}", "pop.csv", "'k' parameter of KMap must be an int >= 1"),
        ("  - delta_presence: {dmin: 0.6, dmax: 0.5}", "pop.csv", "needs dmin <= dmax"),
        ("  - delta_presence: {dmin: -0.1, dmax: 0.5}", "pop.csv", "'dmin' parameter"),
        ("  - delta_presence: {dmin: 0.1, dmax: 1.5}", "pop.csv", "'dmax' parameter"),
        ("  - k_map: {k: 5}", "nowhere.csv", "nowhere.csv"),
        ("  - k_anonymity: {k: 2}", "pop.csv", "none of its models reads"),
        ("  - k_map: {k: 5, sampling_fraction: 0.1}", "pop.csv", "none of its models reads"),
        ("  - k_map: {k: 5, population: pop.csv}", "pop.csv", "takes the job's population"),
        ("  - delta_presence: {dmin: 0.0, dmax: 0.5}", "{file: pop.csv, sep: ';'}", "'sep'"),
    ],
)
def test_a_bad_population_job_is_one_line_and_writes_nothing(tmp_path, models, population, words):
    res, out, _, _ = _run(tmp_path, models, population)
    assert res.exit_code == 2, res.output
    assert words in " ".join(res.output.split()), res.output
    assert not out.exists()


def test_a_population_without_a_quasi_identifier(tmp_path):
    (tmp_path / "short.csv").write_text("age,note\n30,a\n")
    res, out, _, _ = _run(tmp_path, "  - k_map: {k: 5}", "short.csv")
    assert res.exit_code == 2, res.output
    said = " ".join(res.output.split())
    assert "has no column 'zip' (a quasi-identifier)" in said and "short.csv" in said, said
    assert not out.exists()


def test_a_sample_row_absent_from_the_population(tmp_path):
    _, pop = _tables(tmp_path)
    lines = pop.read_text().splitlines(keepends=True)
    (tmp_path / "fewer.csv").write_text(lines[0] + "".join(lines[100:]))  # rows 1..99 gone
    res, out, _, _ = _run(tmp_path, "  - delta_presence: {dmin: 0.0, dmax: 0.9}", "fewer.csv")
    assert res.exit_code == 2, res.output
    said = " ".join(res.output.split())
    assert "the sample must be part of the population" in said and "fewer.csv" in said, said
    assert not out.exists()


def _problem_and_levels(models):
    """A job run on a sample of 40 rows of an 80-row population, from Python."""
    rng = np.random.default_rng(1)
    zips = rng.choice(["4350", "4351", "4360", "4361"], size=80).astype(object)
    pop = EncodedTable.from_columns({"zip": zips})
    sample = EncodedTable.from_columns({"zip": zips[:40]})
    job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}}, "models": models,
           "population": pop, "suppression": 0.0}  # fmt: skip
    return sample, job, anonymize(sample, job)


def test_the_recheck_judges_the_population():
    """verify() counts the population on the release's levels: the raw zip codes leave classes
    below k = 30 population records, which no release may hold (without the count the model
    could not judge them at all)."""
    _, _, result = _problem_and_levels([{"k_map": {"k": 30}}])
    assert result.transformation["zip"] >= 1
    with pytest.raises(PrivacyCheckError, match="violate the models"):
        verify(result.problem, FullDomain({"zip": 0}))


def test_check_counts_the_population_at_level_zero():
    sample, job, _ = _problem_and_levels([{"delta_presence": {"dmin": 0.0, "dmax": 0.6}}])
    report = check(sample, job)
    (entry,) = report.models
    assert entry["model"] == "delta_presence" and entry["params"]["population"] == "(in memory)"
    assert entry["holds"]  # half of each zip code's records are in the sample, about
    strict = {**job, "models": [{"delta_presence": {"dmin": 0.0, "dmax": 0.2}}]}
    assert not check(sample, strict).models[0]["holds"]
