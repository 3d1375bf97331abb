"""``anonlab check DATA --job JOB --release RELEASE`` verifies the whole release (issue 51).

Items 1, 5 and 6: the release's columns, rows, cells and identifying columns are verified
against the data and the job before its models are judged, on a release of any family; a
verdict of "no" says what violates it, a per-record model counts records, "k after" is one
number per kind of release; a release reads back with the job that wrote it (its missing
values are empty fields, whatever the job's ``na_values``).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import anonlab
from anonlab import anonymize, check
from anonlab.cli import app
from anonlab.exceptions import InputError
from anonlab.jobs import build_problem, load_job
from anonlab.release import check_release
from anonlab.report import anonymization_sections

from .test_personalized import TEN
from .test_personalized import job as personalized_job
from .test_personalized import table as personalized_table

QIS = {
    "age": {"intervals": {"widths": [10, 20, 40]}},
    "zip": {"mask": {"width": 4}},
    "sex": {},
}


def _write_data(path: Path, n: int = 90, seed: int = 4) -> Path:
    """A CSV whose missing values are '?' (a quasi-identifier's and another column's), with
    a declared identifier ``pid``."""
    rng = np.random.default_rng(seed)
    lines = ["pid,age,zip,sex,disease,visits"]
    for i in range(n):
        zip_code = "?" if i % 17 == 3 else str(rng.choice(["4350", "4351", "4360", "4361"]))
        visits = "?" if i % 11 == 5 else str(rng.integers(0, 9))
        lines.append(
            f"P{i:04d},{rng.integers(20, 70)},{zip_code},{rng.choice(['F', 'M'])},"
            f"{rng.choice(['flu', 'cold', 'hiv'])},{visits}"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _job(kind: str, **more: Any) -> dict[str, Any]:
    job: dict[str, Any] = {
        "na_values": ["?"],
        "identifiers": ["pid"],
        "quasi_identifiers": QIS,
        "sensitive": ["disease"],
        "models": [{"k_anonymity": {"k": 3}}],
        "suppression": 0.1,
        "metric": "loss",
        "algorithm": "optimal",
    }
    if kind == "graph":
        job.update(metric="gcp", suppression=0.0)
        job["algorithm"] = {"name": "murakami_uno", "n_jobs": 1}
    job.update(more)
    return job


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def _write_rows(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    return path


def _released(tmp_path: Path, kind: str, **more: Any) -> tuple[Path, Path, dict[str, Any]]:
    data = _write_data(tmp_path / "data.csv")
    job = _job(kind, **more)
    out = tmp_path / f"{kind}.csv"
    anonymize(data, job, output=out)
    return data, out, job


def _failures(report: Any, check_name: str) -> list[str]:
    return [
        f["detail"] for f in report.release["verified"] if f["check"] == check_name and not f["ok"]
    ]


# ------------------------------------------------------------------------- item 1
@pytest.mark.parametrize("kind", ["classes", "graph"])
def test_a_release_with_a_column_added_dropped_or_renamed_is_an_error_naming_it(tmp_path, kind):
    """The problem seen: --release certified "largest k = 5" for a release with an added
    ``ssn`` column, a dropped column and an extra column; only the quasi-identifiers were
    compared."""
    data, out, job = _released(tmp_path, kind)
    rows = _rows(out)
    head = rows[0]
    visits = head.index("visits")
    variants = {
        "ssn": ([head + ["ssn"]] + [r + [f"{100000000 + i}"] for i, r in enumerate(rows[1:])]),
        "dropped": [r[:visits] + r[visits + 1 :] for r in rows],
        "renamed": [head[:visits] + ["visits2"]] + rows[1:],
        "moved": [r[visits:] + r[:visits] for r in rows],
        "pid": [["pid"] + head] + [[f"P{i}"] + r for i, r in enumerate(rows[1:])],
    }
    words = {
        "ssn": "has a column 'ssn' the job does not release: the data has no such column",
        "dropped": "lacks column 'visits', which the job releases",
        "renamed": "Column 'visits2' of the release stands where the job releases 'visits'",
        "moved": "in another order: column 1 is 'visits' where the job releases 'age'",
        "pid": "column 'pid' the job does not release: it is an identifier of the job",
    }
    runner = CliRunner()
    for name, table in variants.items():
        path = _write_rows(tmp_path / f"{name}.csv", table)
        with pytest.raises(InputError, match=words[name]):
            check(data, job, release=path)
    job_file = tmp_path / "job.json"  # YAML reads JSON
    job_file.write_text(json.dumps(job))
    res = runner.invoke(
        app, ["check", str(data), "--job", str(job_file), "--release", str(tmp_path / "ssn.csv")]
    )
    assert res.exit_code == 2 and "error:" in res.output and "'ssn'" in res.output


@pytest.mark.parametrize("kind", ["classes", "graph"])
def test_a_changed_cell_or_a_column_of_unique_ids_fails_naming_column_row_and_value(tmp_path, kind):
    data, out, job = _released(tmp_path, kind)
    rows = _rows(out)
    visits = rows[0].index("visits")
    changed = [list(r) for r in rows]
    changed[4][visits] = "99"  # row 4 of the release (the header not counted)
    report = check(data, job, release=_write_rows(tmp_path / "cell.csv", changed))
    assert not report.holds and not report.release["holds"]
    (line,) = _failures(report, "cells")
    assert line.startswith("column 'visits', row 4 of the release holds '99' where it must hold")
    assert line.endswith("(row 4 of the data).") or "of the data)" in line
    ids = [rows[0]] + [r[:visits] + [str(i)] + r[visits + 1 :] for i, r in enumerate(rows[1:])]
    report = check(data, job, release=_write_rows(tmp_path / "ids.csv", ids))
    (line,) = _failures(report, "cells")
    assert line.startswith("column 'visits', row 1 of the release holds '0'")
    (ident,) = _failures(report, "identifying columns")
    assert ident.startswith("column 'visits' may identify people on its own (it holds a different")
    # the quasi-identifiers, the models and the order of the rows are not blamed
    assert not _failures(report, "quasi-identifiers") and not _failures(report, "rows")
    job_file = tmp_path / "job.json"
    job_file.write_text(json.dumps(job))
    res = CliRunner().invoke(
        app, ["check", str(data), "--job", str(job_file), "--release", str(tmp_path / "ids.csv")]
    )
    assert res.exit_code == 1, res.output
    assert "FAILED" in res.output and "the release holds: NO" in res.output


def test_a_quasi_identifier_cell_that_generalizes_another_value_fails(tmp_path):
    data, out, job = _released(tmp_path, "classes")
    rows = _rows(out)
    age = rows[0].index("age")
    # a label of the hierarchy, but not above this record's age
    first = next(i for i in range(1, len(rows)) if rows[i][age] != "*")
    wrong = [list(r) for r in rows]
    wrong[first][age] = "[90, 100)"
    report = check(data, job, release=_write_rows(tmp_path / "qi.csv", wrong))
    (line,) = _failures(report, "quasi-identifiers")
    assert line.startswith(f"column 'age', row {first} of the release holds '[90, 100)'")
    assert "a label above it in its hierarchy" in line


def test_rows_removed_beyond_the_limit_or_out_of_order_fail(tmp_path):
    data, out, job = _released(tmp_path, "classes")
    rows = _rows(out)
    report = check(data, job, release=out)
    assert report.holds and report.release["suppressed_rows"] > 0  # removed, and read back
    limit = report.release["suppression_limit"]
    cut = [rows[0]] + rows[1 + limit :]
    report = check(data, job, release=_write_rows(tmp_path / "cut.csv", cut))
    (line,) = _failures(report, "rows")
    assert "more than the" in line and f"the {limit:,} the job allows" in line
    swapped = [rows[0], rows[2], rows[1], *rows[3:]]
    report = check(data, job, release=_write_rows(tmp_path / "swapped.csv", swapped))
    assert not report.holds and (_failures(report, "rows") or _failures(report, "cells"))


def test_a_release_keeping_an_undeclared_identifying_column_fails_naming_it(tmp_path):
    data = _write_data(tmp_path / "data.csv")
    # released knowingly (insensitive), then checked with a job that does not declare it
    out = tmp_path / "out.csv"
    anonymize(data, _job("classes", identifiers=[], insensitive=["pid"]), output=out)
    job = _job("classes", identifiers=[])
    with pytest.warns(UserWarning, match="'pid'"):
        report = check(data, job, release=out)
    (line,) = _failures(report, "identifying columns")
    assert line.startswith("column 'pid' may identify people on its own")
    assert not report.holds


def test_the_output_says_what_was_verified(tmp_path):
    data, out, job = _released(tmp_path, "classes")
    job_file = tmp_path / "job.json"
    job_file.write_text(json.dumps(job))
    res = CliRunner().invoke(
        app, ["check", str(data), "--job", str(job_file), "--release", str(out)]
    )
    assert res.exit_code == 0, res.output
    for words in ("columns", "rows", "cells", "quasi-identifiers", "identifying columns",
                  "privacy", "k after = ", "the release holds: yes"):  # fmt: skip
        assert words in res.output, words
    res = CliRunner().invoke(
        app, ["check", str(data), "--job", str(job_file), "--release", str(out), "--json"]
    )
    release = json.loads(res.stdout)["release"]
    assert release["holds"] and release["kind"] == "classes" and release["failures"] == []
    assert [f["check"] for f in release["verified"]] == [
        "columns", "rows", "cells", "quasi-identifiers", "identifying columns", "privacy"
    ]  # fmt: skip


# ------------------------------------------------------------------------- item 5
def test_a_per_record_model_counts_the_records_over_their_limit():
    """The problem seen: a personalized check showed the rows of violating classes (2,950)
    beside the records over their limit (1,338)."""
    t = personalized_table(TEN, ["0.5"] * 10, ["1", "1", "1", "2", "2", "3", "3", "4", "4", "4"])
    data = personalized_job()
    data["quasi_identifiers"] = {"x": {}}
    leak = check(t, data).models[1]
    # the class {cancer x2, hiv}: the hiv record (Pleak 1/3) is within its limit
    assert leak["violating_records"] == [0, 1, 2, 3, 4, 5, 6, 7, 8]
    assert leak["violating_rows"] == 9 and leak["violating_classes"] == 4
    assert leak["violation"].startswith("9 records are over their own limit")


@pytest.mark.parametrize("kind", ["classes", "graph"])
def test_a_no_always_says_what_violates(tmp_path, kind):
    """The problem seen: ``check --release`` said "holds: no" beside 0 violating classes."""
    data, out, job = _released(tmp_path, kind)
    strict = {**job, "models": [{"k_anonymity": {"k": 40}}]}
    report = check(data, strict, release=out)
    (model,) = report.models
    assert not model["holds"] and not report.holds
    if kind == "graph":
        assert model["violation"].startswith("the largest k of the anonymity graph is")
        assert model["violation"].endswith(("(Condition 1)", "40 * 90)"))
    else:
        assert model["violating_classes"] > 0 and model["violating_rows"] > 0
        assert model["violation"].endswith("do not satisfy it")
    assert any(line.startswith("k_anonymity: ") for line in report.release["failures"])


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::anonlab.exceptions.PrivacyRiskWarning")  # the report's
def test_k_after_of_a_cell_cover_is_its_anonymity_graph_k(tmp_path):
    """The problem seen: the report of a non-homogeneous release said "k after = 1" (its
    smallest group of equal released rows) beside "holds after: yes"."""
    data = _write_data(tmp_path / "data.csv")
    job = _job("graph")
    job["algorithm"]["generalization"] = "hierarchy"  # a released row may be unique
    result = anonymize(data, job, output=tmp_path / "out.csv")
    verification = result.release.verification
    smallest = int(result.release.classes.sizes.min())
    assert smallest < 3 <= verification.k_after  # equal released rows are no class
    problem = build_problem(data, load_job(job))
    assert verification.k_after == check_release(problem, result.recoding.apply(problem)).largest_k
    assert check(data, job, release=tmp_path / "out.csv").release["k_after"] == verification.k_after
    rows = dict(anonymization_sections(result)[0].rows)
    assert rows["k after"].startswith(f"{verification.k_after} (the largest k of the anonymity")
    pytest.importorskip("matplotlib")
    page = anonlab.report(data, job=job)
    assert f'data-card="k-after" data-value="{verification.k_after}"' in page
    assert "k after: the largest k of the anonymity graph" in page


# ------------------------------------------------------------------------- item 6
@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".parquet"])
def test_a_release_reads_back_with_its_own_job_missing_values_included(tmp_path, suffix):
    """The problem seen: missing values are written as empty fields, which the job's
    ``na_values: ["?"]`` does not read as missing, so a release did not read back."""
    data = _write_data(tmp_path / "data.csv")
    for kind in ("classes", "graph"):
        job = _job(kind)
        out = tmp_path / f"{kind}{suffix}"
        anonymize(data, job, output=out)
        if suffix == ".csv":
            lines = out.read_text(encoding="utf-8").splitlines()
            assert any(",," in line or line.endswith(",") for line in lines)  # empty fields
        report = check(data, job, release=out)
        assert report.holds, report.release["failures"]


def test_a_release_written_out_of_core_reads_back(tmp_path):
    pytest.importorskip("duckdb")
    data = _write_data(tmp_path / "data.csv")
    job = _job("classes")
    numpy_out, duckdb_out = tmp_path / "numpy.csv", tmp_path / "duckdb.csv"
    anonymize(data, job, output=numpy_out, engine="numpy")
    anonymize(data, job, output=duckdb_out, engine="duckdb")
    assert numpy_out.read_bytes() == duckdb_out.read_bytes()  # the same bytes, nulls too
    report = check(data, job, release=duckdb_out)
    assert report.holds, report.release["failures"]


def test_a_release_without_the_rows_presampling_removed_reads_back(tmp_path):
    data = _write_data(tmp_path / "data.csv", n=120)
    job = _job("classes", algorithm={"name": "privacyfrost2", "presampling": {"levels": 0, "k": 2}})
    # the 25 records pre-sampling keeps: 2 are unique on visits, released knowingly
    job["insensitive"] = ["visits"]
    out = tmp_path / "pf2.csv"
    result = anonymize(data, job, output=out)
    presampled = result.search.presampled_rows
    assert presampled > 0
    report = check(data, job, release=out)
    assert report.holds, report.release["failures"]
    assert report.release["removed_rows"] == presampled
    assert report.release["suppressed_rows"] == result.suppressed_rows
