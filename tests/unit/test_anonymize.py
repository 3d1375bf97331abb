"""anonymize() and check(): results satisfy their models, bad jobs fail cleanly, nothing written."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from anonlab import EncodedTable, open_engine
from anonlab.cli import app
from anonlab.exceptions import AnonlabError, ColumnNotFoundError, HierarchyError, ParameterError
from anonlab.jobs import anonymize, check, validate_job
from anonlab.models import build_model

ROWS = [
    ("34", "4350", "F", "flu"),
    ("35", "4351", "F", "hiv"),
    ("36", "4352", "M", "flu"),
    ("37", "4353", "M", "cold"),
    ("44", "4360", "F", "flu"),
    ("45", "4361", "M", "hiv"),
    ("46", "4362", "F", "cold"),
    ("47", "4363", "M", "flu"),
    ("52", "4370", "F", "hiv"),
    ("53", "4371", "M", "cold"),
    ("58", "4372", "F", "flu"),
    ("59", "4373", "M", "flu"),
]
COLS = ["age", "zip", "sex", "disease"]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    p = tmp_path / "patients.csv"
    with p.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(COLS)
        w.writerows(ROWS)
    return p


def job(**overrides):
    base = {
        "quasi_identifiers": {
            "age": {"intervals": {"widths": [5, 10, 20]}},
            "zip": {"mask": {"width": 4}},
            "sex": {},
        },
        "sensitive": ["disease"],
        "models": [{"k_anonymity": {"k": 3}}],
        "suppression": 0.0,
        "metric": {"name": "loss"},
    }
    base.update(overrides)
    return base


def released_ok(columns, models):
    table = EncodedTable.from_columns(columns)
    stats = open_engine(table).class_stats(["age", "zip", "sex"], sensitive=["disease"])
    return all(bool(build_model(n, p).class_ok(stats).all()) for n, p in models)


@pytest.mark.parametrize("algorithm", ["optimal", "incognito"])
@pytest.mark.parametrize(
    "models",
    [
        [("k_anonymity", {"k": 3})],
        [("k_anonymity", {"k": 2}), ("distinct_l_diversity", {"attribute": "disease", "l": 2})],
    ],
)
def test_output_satisfies_models(data, tmp_path, algorithm, models):
    spec = job(models=[{n: p} for n, p in models], algorithm=algorithm)
    out = tmp_path / "out.csv"
    res = anonymize(data, spec, output=out)
    assert all(res.checks.values())
    assert out.exists() and not list(tmp_path.glob(".out.csv.*"))
    with out.open() as fh:
        rows = list(csv.DictReader(fh))
    cols = {c: [r[c] for r in rows] for c in COLS}
    assert released_ok(cols, models)
    assert len(rows) == len(ROWS) - res.suppressed_rows
    d = res.to_dict()
    assert set(d) >= {
        "algorithm",
        "parameters",
        "transformation",
        "recoding",
        "loss",
        "suppressed_rows",
        "evaluated_nodes",
        "elapsed_s",
        "checks",
        "verification",
        "search",
    }
    assert d["loss"] == {"metric": "loss", "value": res.loss, "measured_on": "release"}
    assert d["search"]["lattice_size"] >= d["search"]["evaluated"] == d["evaluated_nodes"]
    assert d["recoding"] == {"kind": "FullDomain", "levels": d["transformation"]}


def test_optimal_and_incognito_agree(data):
    a = anonymize(data, job(algorithm="optimal"))
    b = anonymize(data, job(algorithm="incognito"))
    assert a.loss == pytest.approx(b.loss)


def test_mask_suppressed_rows(data):
    res = anonymize(
        data,
        job(suppression=0.25, output={"suppressed": "mask"}, models=[{"k_anonymity": {"k": 4}}]),
    )
    assert len(res.columns["age"]) == len(ROWS)
    masked = sum(1 for v in res.columns["age"] if v == "*")
    assert masked == res.suppressed_rows


def test_check_reports_violations(data):
    rep = check(data, job()).to_dict()
    assert rep["models"][0]["holds"] is False
    assert rep["models"][0]["violating_rows"] == len(ROWS)


@pytest.mark.parametrize(
    ("overrides", "error", "match"),
    [
        ({"models": [{"k_anonimity": {"k": 2}}]}, ParameterError, "k_anonymity"),
        ({"metric": "entropyy"}, ParameterError, "entropy"),
        (
            {"models": [{"alpha_k_anonymity": {"attribute": "disease", "alpha": 1.5, "k": 2}}]},
            ParameterError,
            "alpha",
        ),
        (
            {"models": [{"distinct_l_diversity": {"attribute": "disease", "l": 4}}]},
            AnonlabError,
            "distinct",
        ),
        ({"quasi_identifiers": {"agee": {}}}, ColumnNotFoundError, "Did you mean 'age'"),
        ({"sensitive": ["illness"]}, ColumnNotFoundError, "illness"),
        ({"models": [{"k_anonymity": {"k": 13}}]}, ParameterError, "only 12 rows"),
        (
            {
                "models": [{"k_anonymity": {"k": 5}}],
                "quasi_identifiers": {"zip": {"mask": {"width": 4}, "max_level": 1}},
                "identifiers": ["age"],  # unique per row, and no longer a quasi-identifier
                "insensitive": ["sex"],
            },
            AnonlabError,
            "No transformation",
        ),
        ({"algorithm": "greedy"}, ParameterError, "Valid algorithms"),
        ({"quasi_identifiers": {"age": {"max_level": 9}}}, ParameterError, "max_level"),
    ],
)
def test_bad_jobs_fail_and_write_nothing(data, tmp_path, overrides, error, match):
    out = tmp_path / "out.csv"
    with pytest.raises(error, match=match):
        anonymize(data, job(**overrides), output=out)
    assert not out.exists()
    if match not in ("No transformation", "distinct"):  # found by the search only
        # validate_job refuses the same, without a search
        with pytest.raises(error, match=match):
            validate_job(data, job(**overrides))


def test_validate_job_accepts_what_anonymize_runs(data):
    assert validate_job(data, job()) is None
    assert validate_job(data, job(algorithm={"name": "wong_nh"}, metric="gcp")) is None
    with pytest.raises(ParameterError, match="'gcp' or 'ncp'"):
        validate_job(data, job(algorithm={"name": "wong_nh"}))
    with pytest.raises(ParameterError, match="Unknown parameter 'scor'"):
        validate_job(data, job(algorithm={"name": "privacyfrost2", "scor": "log"}))


def test_hierarchy_file_missing_a_value(data, tmp_path):
    h = tmp_path / "sex.csv"
    h.write_text("F;*\n")
    spec = job(quasi_identifiers={"sex": {"hierarchy": str(h)}})
    with pytest.raises(HierarchyError, match="'M' of attribute 'sex'"):
        anonymize(data, spec, output=tmp_path / "o.csv")
    assert not (tmp_path / "o.csv").exists()


def test_hierarchy_in_memory_equals_its_file(data, tmp_path):
    from anonlab import masking_hierarchy
    from anonlab.io import write_hierarchy

    h = masking_hierarchy([r[1] for r in ROWS], steps=[1, 2, 4])  # no attribute name
    path = tmp_path / "zip.csv"
    write_hierarchy(h, path)
    qis = {"age": {"intervals": {"widths": [5, 10, 20]}}, "sex": {}}
    from_file = anonymize(data, job(quasi_identifiers={**qis, "zip": {"hierarchy": str(path)}}))
    in_memory = anonymize(data, job(quasi_identifiers={**qis, "zip": {"hierarchy": h}}))
    assert in_memory.transformation == from_file.transformation
    assert in_memory.loss == from_file.loss
    for name in COLS:
        assert list(in_memory.columns[name]) == list(from_file.columns[name])
    assert h.attribute is None  # the caller's hierarchy is not renamed
    short = masking_hierarchy(["4350"], steps=[1])
    with pytest.raises(
        HierarchyError,
        match=r"'4351' and 10 more of attribute 'zip' is not in its hierarchy \(row 2\)",
    ):
        anonymize(data, job(quasi_identifiers={"zip": {"hierarchy": short}}))


def test_never_overwrites_the_input(data):
    with pytest.raises(AnonlabError, match="overwrite the input"):
        anonymize(data, job(), output=data)


def test_cli_anonymize_and_check(data, tmp_path):
    import yaml

    job_file = tmp_path / "job.yaml"
    job_file.write_text(yaml.safe_dump(job()))
    runner = CliRunner()
    out = tmp_path / "out.csv"
    res = runner.invoke(
        app, ["anonymize", str(data), "--job", str(job_file), "--output", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["checks"] == {"k_anonymity": True} and out.exists()
    res = runner.invoke(app, ["anonymize", str(data), "--job", str(job_file), "--output", str(out)])
    assert res.exit_code == 0 and "levels" in res.stdout and "loss (on the release)" in res.stdout
    res = runner.invoke(app, ["check", str(data), "--job", str(job_file), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["models"][0]["holds"] is False
    bad = tmp_path / "bad.yaml"
    bad.write_text("models: [k_anonymity]\nquasi_identifiers: {nope: {}}\n")
    res = runner.invoke(
        app, ["anonymize", str(data), "--job", str(bad), "--output", str(tmp_path / "x.csv")]
    )
    assert res.exit_code == 2 and "Unknown quasi-identifier 'nope'" in res.output
    assert not (tmp_path / "x.csv").exists()


# ------------------------------------------------------------------ PrivacyFrost2 as an algorithm
@pytest.mark.parametrize(
    "pf2",
    [
        {},
        {"score": "log"},
        {"score": "eta", "d": 2},
        {"partial_domain": True},
        {"presampling": {"levels": 1, "k": 2}},
        {
            "p": 1,
            "partial_domain": True,
            "presampling": {"levels": {"age": 1, "zip": 1, "sex": 0}, "k": 2},
        },
    ],
)
@pytest.mark.parametrize(
    "models",
    [
        [("k_anonymity", {"k": 3})],
        [("k_anonymity", {"k": 2}), ("distinct_l_diversity", {"attribute": "disease", "l": 2})],
    ],
)
def test_privacyfrost2_output_satisfies_models(data, tmp_path, pf2, models):
    spec = job(models=[{n: p} for n, p in models], algorithm="privacyfrost2", privacyfrost2=pf2)
    spec["quasi_identifiers"]["age"]["priority"] = 3
    out = tmp_path / "out.csv"
    res = anonymize(data, spec, output=out)
    assert res.algorithm == "privacyfrost2" and all(res.checks.values())
    assert released_ok(res.columns, models)
    doc = res.to_dict()
    d = doc["search"]
    assert d["evaluated"] >= 1 and d["score_function"] == pf2.get("score", "basic")
    rows = list(csv.reader(out.open()))
    assert len(rows) - 1 == len(ROWS) - res.suppressed_rows - d["presampled_rows"]
    assert doc["verification"]["removed_rows"] == d["presampled_rows"]
    if pf2.get("partial_domain") and not d["partial_splits"]:  # T^G: a full-domain release
        assert doc["recoding"]["kind"] == "FullDomain" and d["score"] == d["full_domain_score"]
    elif pf2.get("partial_domain"):
        assert d["score"] >= d["full_domain_score"]
        part = doc["recoding"]
        assert part["kind"] == "Levels"
        assert 1 <= part["level_vectors"] <= d["partial_classes"]
        released = len(ROWS) - d["presampled_rows"]
        assert set(part["rows_per_level"]) == set(spec["quasi_identifiers"])
        for q, per in part["rows_per_level"].items():
            assert sum(per.values()) == released, q


def test_privacyfrost2_honours_max_level(data):
    spec = job(algorithm="privacyfrost2")
    spec["quasi_identifiers"]["zip"]["max_level"] = 1
    spec["quasi_identifiers"]["age"]["priority"] = 2
    res = anonymize(data, spec)
    assert res.transformation["zip"] <= 1


@pytest.mark.parametrize(
    ("pf2", "qi_extra", "match"),
    [
        ({"score": "cubic"}, {}, "'score' parameter of privacyfrost2 must be one of"),
        ({"p": -1}, {}, "'p' parameter of privacyfrost2 must be an int >= 0. Got -1"),
        ({"presampling": {"levels": 1, "k": 0}}, {}, r"'privacyfrost2\.presampling\.k'.*>= 1"),
        ({"presampling": {"levels": 1, "k": 2.5}}, {}, r"'privacyfrost2\.presampling\.k'"),
        ({"bogus": 1}, {}, "Unknown parameter 'bogus' of algorithm 'privacyfrost2'"),
        ({}, {"priority": 0}, r"'priority' of quasi-identifier 'age' must be an int >= 1. Got 0"),
        ({}, {"priority": 1.5}, "priority"),
        ({"score": "basic", "d": 3}, {}, "'eta'"),
    ],
)
def test_privacyfrost2_bad_parameters(data, tmp_path, pf2, qi_extra, match):
    spec = job(algorithm="privacyfrost2", privacyfrost2=pf2)
    spec["quasi_identifiers"]["age"].update(qi_extra)
    out = tmp_path / "out.csv"
    with pytest.raises((ParameterError, AnonlabError), match=match):
        anonymize(data, spec, output=out)
    assert not out.exists()


def test_privacyfrost2_infeasible_names_binding_attributes(data, tmp_path):
    spec = job(algorithm="privacyfrost2", models=[{"k_anonymity": {"k": 5}}])
    for q in spec["quasi_identifiers"].values():
        q["max_level"] = 0
    out = tmp_path / "out.csv"
    with pytest.raises(AnonlabError, match="age|zip|sex"):
        anonymize(data, spec, output=out)
    assert not out.exists()


def test_cli_privacyfrost2_json(data, tmp_path):
    import yaml

    job_file = tmp_path / "job.yaml"
    job_file.write_text(
        yaml.safe_dump(job(algorithm="privacyfrost2", privacyfrost2={"partial_domain": True}))
    )
    out = tmp_path / "out.csv"
    res = CliRunner().invoke(
        app, ["anonymize", str(data), "--job", str(job_file), "--output", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["algorithm"] == "privacyfrost2" and doc["search"]["score"] > 0
    assert all(doc["checks"].values()) and out.exists()
    stats = doc["search"]
    # with the partial-domain step the paper's search is the default (no restarts)
    assert stats["restarts_allowed"] == 0 and stats["restarts_run"] == 0
    assert stats["paper_score"] == stats["full_domain_score"]
    assert doc["parameters"]["partial_domain"] is True


def test_inconsistent_hierarchy_file(data, tmp_path):
    h = tmp_path / "sex.csv"
    h.write_text("F;A;*\nM;A;**\n")
    out = tmp_path / "o.csv"
    with pytest.raises(HierarchyError, match="'A' at level 1 has 2 parents"):
        anonymize(data, job(quasi_identifiers={"sex": {"hierarchy": str(h)}}), output=out)
    assert not out.exists()


def test_cli_bad_job_exits_non_zero_and_writes_nothing(data, tmp_path):
    import yaml

    job_file = tmp_path / "job.yaml"
    job_file.write_text(yaml.safe_dump(job(metric="entropyy")))
    out = tmp_path / "out.csv"
    res = CliRunner().invoke(
        app, ["anonymize", str(data), "--job", str(job_file), "--output", str(out)]
    )
    assert res.exit_code != 0 and "entropy" in res.output
    assert not out.exists()


def test_empty_table(tmp_path):
    p = tmp_path / "empty.csv"
    p.write_text("age,zip,sex,disease\n")
    out = tmp_path / "out.csv"
    with pytest.raises(AnonlabError, match="empty"):
        anonymize(p, job(), output=out)
    assert not out.exists()
