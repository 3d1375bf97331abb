"""Mondrian from the job file, the CLI and the API; its bad input (issue 55)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from anonlab import EncodedTable, anonymize
from anonlab.cli.app import app
from anonlab.data.hierarchy import Hierarchy
from anonlab.exceptions import ParameterError

runner = CliRunner()

TABLE = {
    "age": ["30", "32", "40", "41", "52", "55"],
    "sex": ["F", "F", "M", "M", "F", "M"],
}


def _job(**algorithm: object) -> dict[str, object]:
    return {
        "quasi_identifiers": {"age": {}, "sex": {}},
        "models": [{"k_anonymity": {"k": 2}}],
        "metric": "gcp",
        "algorithm": {"name": "mondrian", **algorithm},
    }


@pytest.mark.parametrize(
    ("job", "words"),
    [
        (
            {
                **_job(),
                "quasi_identifiers": {"age": {}, "sex": {"hierarchy": Hierarchy([["F"], ["M"]])}},
            },
            "Mondrian cannot cut attribute 'sex': it has neither an order",
        ),
        (_job(intervals=["sex"]), "cannot cut attribute 'sex' on an order: its value 'F'"),
        (_job(intervals=["height"]), "'intervals' names 'height', which is not a quasi-identifier"),
        ({**_job(), "metric": "loss"}, "with 'gcp' or 'ncp'; the job asks for 'loss'"),
        (
            {**_job(), "models": [{"average_risk": {"threshold": 0.5}}]},
            "model 'average_risk' judges the whole release",
        ),
        ({**_job(), "models": [{"k_anonymity": {"k": 7}}]}, "at least 7 rows"),
        (_job(partitioning="loose"), "'partitioning' parameter of mondrian must be one of"),
    ],
)
def test_bad_input_one_line_nothing_written(tmp_path: Path, job, words):
    out = tmp_path / "release.csv"
    with pytest.raises(ParameterError) as exc:
        anonymize(EncodedTable.from_columns(TABLE), job, output=out)
    assert words in str(exc.value)
    assert "\n" not in str(exc.value)
    assert not out.exists()


def test_from_a_job_file_on_the_command_line(tmp_path: Path):
    data = tmp_path / "people.csv"
    data.write_text("age,sex\n" + "".join(f"{a},{s}\n" for a, s in zip(*TABLE.values())))
    job = tmp_path / "job.yaml"
    job.write_text(
        "quasi_identifiers: {age: {}, sex: {}}\n"
        "models: [{k_anonymity: {k: 2}}]\n"
        "metric: gcp\n"
        "algorithm: {name: mondrian, partitioning: relaxed}\n"
    )
    out = tmp_path / "release.csv"
    res = runner.invoke(app, ["anonymize", str(data), "--job", str(job), "--output", str(out)])
    assert res.exit_code == 0, res.output
    # ages 30 32 40 | 41 52 55 (median 40; age before sex on a tie), then regions of 3 < 2k
    rows = list(csv.reader(out.read_text().splitlines()))
    assert rows == [["age", "sex"]] + [["[30,40]", "*"]] * 3 + [["[41,55]", "*"]] * 3
    check = runner.invoke(
        app,
        [
            "check",
            str(data),
            "--job",
            str(job),
            "--release",
            str(out),
            "--json",
            "--engine",
            "numpy",
        ],
    )
    assert check.exit_code == 0, check.output
    text = check.output[check.output.index("{") : check.output.rindex("}") + 1]
    assert json.loads(text)["release"]["holds"]
    # the loss read back from the labels, as anonymize measured it: ages [30,40] and [41,55]
    # of a range of 25 (10/25 and 14/25), sex * (1): GCP = (3 * 0.4 + 3 * 0.56 + 6) / 12
    assert json.loads(text)["loss"] == {"metric": "gcp", "value": pytest.approx(8.88 / 12)}
    human = runner.invoke(
        app, ["check", str(data), "--job", str(job), "--release", str(out), "--engine", "numpy"]
    )
    assert "gcp = 0.74: a released quasi-identifier cell hides on average 74.0 %" in " ".join(
        human.output.split()
    )


def test_the_loss_counts_a_record_without_a_row_1_in_every_cell():
    """Ages 30 32 40 41 released as [30,32] [30,32] [40,41], the record of 41 suppressed:
    per cell 2/11, 2/11, 1/11 and 1 for the missing record; GCP = (5/11 + 1) / 4."""
    from anonlab.data.builders import flat_hierarchy
    from anonlab.metrics import build_metric
    from anonlab.models import KAnonymity
    from anonlab.release import region_loss
    from anonlab.release.problem import Problem

    t = EncodedTable.from_columns({"age": ["30", "32", "40", "41"]})
    p = Problem(
        t, ("age",), {"age": flat_hierarchy(t["age"].categories)}, (KAnonymity(2),),
        build_metric("gcp"),
    )  # fmt: skip
    released = EncodedTable.from_columns({"age": ["[30,32]", "[30,32]", "[40,41]"]})
    kept = np.ones(3, dtype=bool)
    loss = region_loss(p, released, kept, records=np.array([0, 1, 2]))
    assert loss == pytest.approx((5 / 11 + 1) / 4)


def test_the_bad_attribute_on_the_command_line(tmp_path: Path):
    data = tmp_path / "people.csv"
    data.write_text("age,sex\n" + "".join(f"{a},{s}\n" for a, s in zip(*TABLE.values())))
    job = tmp_path / "job.yaml"
    job.write_text(
        "quasi_identifiers: {age: {}, sex: {}}\n"
        "models: [{k_anonymity: {k: 2}}]\n"
        "metric: gcp\n"
        "algorithm: {name: mondrian, intervals: [sex]}\n"
    )
    out = tmp_path / "release.csv"
    res = runner.invoke(app, ["anonymize", str(data), "--job", str(job), "--output", str(out)])
    assert res.exit_code != 0
    assert "cannot cut attribute 'sex' on an order" in res.output
    assert not out.exists()
