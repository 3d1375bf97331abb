"""`anonlab diagnose --risk`: the attacker models, the population estimates and bad input."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from anonlab.cli import app

runner = CliRunner()
SAMPLE = (
    [("30", "F", "100")] * 3 + [("30", "M", "100")] * 2 + [("40", "F", "100"), ("50", "M", "100")]
)


def _write(path: Path, header: list[str], rows: list[tuple[str, ...]]) -> Path:
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return _write(tmp_path / "s.csv", ["age", "sex", "w"], SAMPLE)


def run(*args: str):
    return runner.invoke(app, ["diagnose", *args])


def test_json_has_the_issue_keys(sample: Path) -> None:
    res = run(str(sample), "--qi", "age,sex", "--risk", "--sampling-fraction", "0.01", "--json")
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["question"] == "risk"
    assert d["sampling_fraction"] == pytest.approx(0.01)
    assert d["population_size"] == 700
    # 7 records in 4 classes (3, 2, 1, 1): 4 records in classes < 5 ... all 7 in classes < 5
    assert d["prosecutor"] == {"records_at_risk": 1.0, "highest": 1.0, "average": 4 / 7}
    assert d["journalist"] == d["prosecutor"]
    assert d["marketer"] == {"average": 4 / 7}
    assert d["sample_uniqueness"] == 2 / 7
    assert set(d["population_uniqueness"]) == {"pitman", "zayatz", "snb", "dankar", "dankar_choice"}


def test_weights_give_the_weighted_risk_and_the_population(sample: Path) -> None:
    res = run(str(sample), "--qi", "age,sex", "--risk", "--weight", "w", "--json")
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["population_size"] == 700 and d["weight"] == "w"
    assert d["weighted_risk"]["population_size"] == 700.0
    assert d["weighted_risk"]["expected_reidentifications"] > 0
    assert all(c["column"] != "w" for c in d["identifying_columns"])


def test_population_table_for_the_journalist(sample: Path, tmp_path: Path) -> None:
    pop = _write(tmp_path / "p.csv", ["age", "sex"], [(a, s) for a, s, _ in SAMPLE] * 4)
    res = run(str(sample), "--qi", "age,sex", "--risk", "--population", str(pop), "--json")
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["population_size"] == 28
    assert d["journalist"]["highest"] == 0.25  # the sample's uniques are 4 in the population
    assert d["marketer"]["average"] == pytest.approx(4 * (1 / 4) / 7)  # sum f/F over n


def test_text_says_what_each_number_means(sample: Path) -> None:
    res = run(str(sample), "--qi", "age,sex", "--risk", "--weight", "w")
    assert res.exit_code == 0, res.output
    text = " ".join(res.stdout.split())
    for phrase in (
        "Attacker models",
        "records at risk: share of the records",
        "sample uniqueness:",
        "Population uniqueness",
        "alone in their class in the whole population",
        "expected re-identifications",
        "Benedetti-Franconi",
    ):
        assert phrase in text, phrase


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--sampling-fraction", "0"], "Got 0 instead"),
        (["--sampling-fraction", "1.5"], "Got 1.5 instead"),
        (["--population-size", "3"], "population size 3 is below the 7 records"),
        (["--weight", "wt"], "Unknown column 'wt'"),
        (["--weight", "bad"], "holds 'x', which is not a number"),
        (["--weight", "neg"], "holds -1"),
        (["--weight", "small"], "sum to 3.5, fewer than the 7 records"),
        (["--weight", "age"], "'age' is among the quasi-identifiers"),
        (["--sampling-fraction", "0.1", "--weight", "w"], "give the population one way"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, options: list[str], named: str) -> None:
    rows = [
        (a, s, w, "x" if i == 2 else "2", "-1" if i == 1 else "3", "0.5")
        for i, (a, s, w) in enumerate(SAMPLE)
    ]
    data = _write(tmp_path / "s.csv", ["age", "sex", "w", "bad", "neg", "small"], rows)
    before = sorted(p.name for p in tmp_path.iterdir())
    res = run(str(data), "--qi", "age,sex", "--risk", *options)
    assert res.exit_code == 2
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and named in lines[0], res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_population_without_the_quasi_identifiers(sample: Path, tmp_path: Path) -> None:
    pop = _write(tmp_path / "p.csv", ["age", "gender"], [("30", "F")])
    res = run(str(sample), "--qi", "age,sex", "--risk", "--population", str(pop))
    assert res.exit_code == 2
    assert "has no column 'sex'" in res.output


def test_population_options_need_risk(sample: Path) -> None:
    res = run(str(sample), "--qi", "age,sex", "--sampling-fraction", "0.1")
    assert res.exit_code == 2
    assert "--sampling-fraction does not apply" in res.output
