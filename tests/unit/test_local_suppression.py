"""local_suppression: bad input is one clear line and writes nothing; the ``blanks``
verifier and ``check --release`` judge the released labels, never the algorithm's word."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

import anonlab
from anonlab.cli import app
from anonlab.exceptions import InputError, ParameterError, PrivacyCheckError
from anonlab.release import verify
from anonlab.release.blanks import Blanks

runner = CliRunner()

ROWS = {
    "a": ["a1", "a1", "a1", "a1", "a2", "a2", "a2"],
    "b": ["b1", "b1", "b1", "b2", "b2", "b2", "b1"],
    "c": ["c1", "c1", "c2", "c2", "c2", "c2", "c3"],
}


def _job(k: int = 2, **params: object) -> dict:
    return {
        "quasi_identifiers": {"a": {}, "b": {}, "c": {}},
        "models": [{"k_anonymity": {"k": k}}],
        "metric": "gcp",
        "algorithm": {"name": "local_suppression", "generalize": "none", **params},
    }


def _table() -> anonlab.EncodedTable:
    return anonlab.EncodedTable.from_columns(ROWS)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    lines = ["a,b,c"] + [",".join(r) for r in zip(*ROWS.values())]
    (tmp_path / "data.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def _cli_refuses(folder: Path, job: dict, message: str) -> None:
    (folder / "job.yaml").write_text(yaml.safe_dump(job), encoding="utf-8")
    out = folder / "out.csv"
    res = runner.invoke(
        app, ["anonymize", str(folder / "data.csv"), "--job", str(folder / "job.yaml"),
              "-o", str(out)],
    )  # fmt: skip
    text = " ".join(res.output.split())
    assert res.exit_code == 2, res.output
    assert message in text, res.output
    assert "Traceback" not in res.output
    assert len([ln for ln in res.output.splitlines() if ln.startswith("error:")]) == 1
    assert not out.exists()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (
            {"importance": ["a", "sexx"]},
            "The importance of 'local_suppression' names 'sexx', which is not a quasi-identifier.",
        ),
        ({"importance": ["a", "a"]}, "names 'a' twice"),
        ({"limits": {"d": 3}}, "The limits of 'local_suppression' names 'd'"),
        ({"limits": {"a": -1}}, "The \"limits['a']\" parameter of local_suppression must be"),
        ({"generalize": "best"}, "must be 'optimal', 'none' or a level per quasi-identifier"),
        ({"generalize": {"a": 5}}, "parameter of local_suppression must be an int in [0, 1]"),
        ({"search_k": 3}, "'search_k' parameter of local_suppression would do nothing"),
        ({"importance": "a"}, "The 'importance' parameter of local_suppression must be"),
    ],
)
def test_bad_parameters_are_one_line_naming_them(files, params, message):
    with pytest.raises(ParameterError) as err:
        anonlab.anonymize(_table(), _job(**params))
    assert "\n" not in str(err.value)
    _cli_refuses(files, _job(**params), message)


def test_k_larger_than_the_table_is_one_line_naming_it(files):
    with pytest.raises(InputError, match="at least 8 rows"):
        anonlab.anonymize(_table(), _job(k=8))
    _cli_refuses(files, _job(k=8), "needs classes of at least 8 rows")


def test_models_other_than_k_anonymity_are_refused_by_name(files):
    job = _job()
    job["models"] = [
        {"k_anonymity": {"k": 2}},
        {"distinct_l_diversity": {"attribute": "c", "l": 2}},
    ]
    job["quasi_identifiers"] = {"a": {}, "b": {}}
    job["sensitive"] = ["c"]
    _cli_refuses(files, job, "no classes for model 'distinct_l_diversity' to judge")


def test_a_suppression_limit_needs_generalize_optimal(files):
    job = {**_job(), "suppression": 0.1}
    _cli_refuses(files, job, "'suppression: 0.1' would do nothing")
    job["algorithm"] = {"name": "local_suppression", "generalize": "optimal"}
    assert anonlab.anonymize(_table(), job).release.verification.k_after >= 2


def test_a_star_among_the_values_is_refused():
    table = anonlab.EncodedTable.from_columns({**ROWS, "a": ["*", *ROWS["a"][1:]]})
    with pytest.raises(ParameterError, match="holds the label '\\*' beside other values"):
        anonlab.anonymize(table, _job())


def test_the_cli_writes_a_release_that_check_release_verifies(files):
    (files / "job.yaml").write_text(yaml.safe_dump(_job(importance=["a", "b", "c"])))
    out = files / "out.csv"
    res = runner.invoke(
        app, ["anonymize", str(files / "data.csv"), "--job", str(files / "job.yaml"),
              "-o", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert out.read_text().splitlines()[-1] == "a2,*,*"
    report = anonlab.check(str(files / "data.csv"), str(files / "job.yaml"), release=out)
    assert report.release is not None
    assert report.release["holds"] and report.release["k_after"] == 2
    assert report.release["kind"] == "blanks (wildcard)"
    # a blank put back: r4 = (a1, b2, c2) is then unique, and check --release says so
    lines = out.read_text().splitlines()
    lines[4] = "a1,b2,c2"
    out.write_text("\n".join(lines) + "\n")
    report = anonlab.check(str(files / "data.csv"), str(files / "job.yaml"), release=out)
    assert report.release is not None and not report.release["holds"]
    assert report.release["k_after"] == 1


def test_the_verifier_recounts_the_released_labels():
    """A recoding that leaves a record below k is refused, whatever the algorithm said."""
    result = anonlab.anonymize(_table(), _job())
    problem = result.problem
    none = Blanks({"a": 0, "b": 0, "c": 0}, np.zeros((7, 3), dtype=bool))
    with pytest.raises(PrivacyCheckError, match="3 records of the release of Blanks"):
        verify(problem, none)
    one_short = np.asarray(result.recoding.blank).copy()  # type: ignore[union-attr]
    one_short[3] = False  # r4's blank undone
    with pytest.raises(PrivacyCheckError, match="compatible with fewer than 2"):
        verify(problem, Blanks({"a": 0, "b": 0, "c": 0}, one_short))
