"""The command line: JSON answers, Rich output, and clear errors that write nothing."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from anonlab.cli import app
from tests.conftest import FIGURE2_ROWS

runner = CliRunner()


@pytest.fixture
def fig2_csv(tmp_path: Path) -> Path:
    p = tmp_path / "r.csv"
    with p.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["V", "W", "X", "Y", "Z"])
        w.writerows(FIGURE2_ROWS)
    return p


def run(*args: str):
    return runner.invoke(app, list(args))


def listing(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_q3_json_reproduces_figure3(fig2_csv, engine):
    res = run("diagnose", str(fig2_csv), "--k", "3", "--engine", engine, "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["question"] == "Q3"
    assert data["subsets"] == [["W", "X", "Z"], ["W", "Y", "Z"]]
    assert data["evaluations"] == 13
    assert data["delta"] == 0.0


def test_q2_q5_q9_json(fig2_csv):
    q2 = json.loads(run("diagnose", str(fig2_csv), "--qi", "V,Y", "--json").stdout)
    assert q2 == {
        "question": "Q2",
        "quasi_identifiers": ["V", "Y"],
        "k": 1,
        "delta": 0.0,
        "suppressed_rows": 0,
        "n_rows": 12,
    }
    q5 = json.loads(
        run(
            "diagnose",
            str(fig2_csv),
            "--qi",
            "V,Y",
            "--k",
            "2",
            "--delta",
            "0.1",
            "--list-rows",
            "--json",
        ).stdout
    )
    assert q5["answer"] is True and q5["suppressed_row_positions"] == [4]
    q9 = json.loads(
        run("diagnose", str(fig2_csv), "--qi", "V", "--k", "3", "--find-delta", "--json").stdout
    )
    assert q9["question"] == "Q9" and q9["suppressed_rows"] == 2


def test_tables_json(fig2_csv):
    q4 = json.loads(run("diagnose", str(fig2_csv), "--json").stdout)
    assert q4["question"] == "Q4" and len(q4["rows"]) == 31
    assert set(q4["rows"][0]) == {"attributes", "k", "delta", "suppressed_rows", "evaluated"}
    q12 = json.loads(
        run(
            "diagnose",
            str(fig2_csv),
            "--find-delta",
            "--max-k",
            "2",
            "--attributes",
            "V,W",
            "--json",
        ).stdout
    )
    assert q12["question"] == "Q12" and len(q12["rows"]) == 3 * 2


def test_rich_output_and_other_reports(fig2_csv):
    res = run("diagnose", str(fig2_csv), "--k", "3")
    assert res.exit_code == 0 and "W, X, Z" in res.stdout and "13 evaluations" in res.stdout
    res = run("diagnose", str(fig2_csv), "--qi", "V,Y", "--risk")
    assert res.exit_code == 0 and "average risk" in res.stdout
    res = run("diagnose", str(fig2_csv), "--find-qis", "--json")
    assert json.loads(res.stdout)["subsets"][0]["attributes"] == ["V", "W"]
    assert run("diagnose", str(fig2_csv)).exit_code == 0
    assert run("diagnose", str(fig2_csv), "--find-delta").exit_code == 0


def test_hierarchy_levels(fig2_csv, tmp_path):
    h = tmp_path / "v.csv"
    h.write_text("1;low;*\n2;low;*\n3;high;*\n")
    res = run(
        "diagnose", str(fig2_csv), "--qi", "V", "--hierarchy", f"V={h}", "--level", "V=1", "--json"
    )
    assert json.loads(res.stdout)["k"] == 5


@pytest.mark.parametrize(
    ("args", "content", "message"),
    [
        (["--qi", "Vv"], None, "Did you mean 'V'"),
        (["--k", "0"], None, "'k' parameter must be an int in [1, 12]"),
        (["--k", "13"], None, "Got 13"),
        (["--delta", "1.5"], None, "'delta' parameter must be a number in [0, 1]"),
        (["--level", "V=1"], None, "needs --hierarchy V=FILE"),
        ([], "V,W\n", "no rows"),
        ([], "", "empty"),
        ([], "V,W\n1,2\n3\n", "row 2 (line 3) has 1 field instead of 2."),
        ([], b"V,W\n1,\xff\n", "not valid utf-8"),
        (["--engine", "duckdb"], "V,W\n1,2\n3\n", "row 2 (line 3) has 1 field instead of 2."),
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(tmp_path, fig2_csv, args, content, message):
    data = fig2_csv
    if content is not None:
        data = tmp_path / "bad.csv"
        data.write_bytes(content if isinstance(content, bytes) else content.encode())
    before = listing(tmp_path)
    res = run("diagnose", str(data), *args)
    assert res.exit_code == 2, res.output
    assert message in " ".join(res.output.split())
    assert "Traceback" not in res.output
    assert listing(tmp_path) == before


def test_bad_hierarchies(tmp_path, fig2_csv):
    h = tmp_path / "v.csv"
    h.write_text("1;low\n2;low\n")
    res = run("diagnose", str(fig2_csv), "--qi", "V", "--hierarchy", f"V={h}", "--level", "V=1")
    assert res.exit_code == 2
    out = " ".join(res.output.split())
    assert "Value '3' of attribute 'V'" in out and "v.csv" in out
    h.write_text("1;low;*\n2;low\n")
    res = run("diagnose", str(fig2_csv), "--qi", "V", "--hierarchy", f"V={h}", "--level", "V=1")
    assert res.exit_code == 2 and "Malformed hierarchy" in res.output
    res = run("diagnose", str(tmp_path / "nope.csv"))
    assert res.exit_code == 2 and "does not exist" in res.output


def test_demo():
    res = run("demo")
    assert res.exit_code == 0, res.output
    assert "30,162" in res.stdout and "Q9" in res.stdout
    data = json.loads(run("demo", "--json").stdout)
    assert data[0]["question"] == "Q2" and data[0]["k"] == 1


@pytest.mark.slow
def test_installed_entry_point(fig2_csv):
    exe = Path(sys.executable).with_name("anonlab")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "anonlab"]
    res = subprocess.run(
        [*cmd, "diagnose", str(fig2_csv), "--k", "3", "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "120"},
    )
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["evaluations"] == 13
    assert subprocess.run([*cmd, "--version"], capture_output=True, text=True).stdout.startswith(
        "anonlab"
    )


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_drop_missing(tmp_path, engine):
    p = tmp_path / "m.csv"
    p.write_text("a,b\nx,1\nx,?\ny,1\nx,1\n")
    base = ["diagnose", str(p), "--engine", engine, "--json"]
    assert json.loads(run(*base, "--qi", "a,b").stdout)["n_rows"] == 4
    assert json.loads(run(*base, "--qi", "a,b", "--drop-missing").stdout)["n_rows"] == 3
    assert json.loads(run(*base, "--qi", "a", "--drop-missing").stdout)["n_rows"] == 4
    assert json.loads(run(*base, "--drop-missing").stdout)["n_rows"] == 3


def test_the_version_is_said_in_one_place():
    """``anonlab --version`` and ``anonlab.__version__`` are the installed package's metadata,
    which pyproject.toml sets (issue 57, item 3)."""
    from importlib.metadata import version

    from typer.testing import CliRunner

    import anonlab
    from anonlab.cli import app

    assert anonlab.__version__ == version("anonlab")
    out = CliRunner().invoke(app, ["--version"]).stdout
    assert out.strip() == f"anonlab {version('anonlab')}"
    assert anonlab.__version__ in (Path(__file__).parents[2] / "pyproject.toml").read_text()
