"""Identifying columns are caught before release (issue 51 item 2).

An undeclared column that makes more than ``identifying_threshold`` of the records unique
(alone or with another column), that depends on a quasi-identifier, or whose name says it
identifies stops ``anonymize`` with the figures until it is declared (``identifiers``, a
quasi-identifier, ``insensitive``); ``check`` warns. The same answer on every engine.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

import anonlab
from anonlab import EncodedTable, flat_hierarchy, taxonomy_hierarchy
from anonlab.diagnosis import risk
from anonlab.engines import get_engine
from anonlab.exceptions import ColumnNotFoundError, InputError, ParameterError, PrivacyRiskWarning
from anonlab.io.job import parse_job
from anonlab.jobs import anonymize, check, validate_job
from tests.support.identifying import PEOPLE_FOUND, people_table, summary, write_csv

ROOT = Path(__file__).resolve().parents[2]
ADULT = ROOT / "src" / "anonlab" / "datasets" / "adult.csv.gz"
EXAMPLES = ROOT / "examples"
ENGINES = ["numpy", "duckdb"]


def _open(table: EncodedTable, engine: str, tmp_path: Path):
    """``table`` on ``engine`` (DuckDB reads it from a CSV file, as a user's data)."""
    if engine == "numpy":
        return get_engine("numpy", table)
    pytest.importorskip("duckdb")
    return anonlab.open_engine(write_csv(tmp_path / "data.csv", table), engine=engine)


_people = people_table
_write = write_csv


# ------------------------------------------------------------------ the rule, on the engines


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("screen", [None, 300])
def test_each_reason_with_its_figures_on_every_engine(tmp_path, monkeypatch, engine, screen):
    """Uniqueness alone and in pairs, dependency either way, on numpy and DuckDB, with the
    whole table in the screen or only its first 50 records."""
    if screen is not None:
        monkeypatch.setattr(risk, "SCREEN_ROWS", screen)
    table = _people()
    eng = _open(table, engine, tmp_path)
    found = risk.identifying_columns(eng, quasi_identifiers=["age", "edu"])
    assert found == PEOPLE_FOUND  # in the table's order


def test_a_column_unique_on_a_share_of_the_records_above_the_threshold():
    """``fnlwgt``-like: a column repeating most values is identifying when more than the
    threshold of the records are unique on it (a column unique per row, as before)."""
    table = _people()
    eng = get_engine("numpy", table)
    found = dict(risk.identifying_columns(eng, ["age", "edu", "edu_num", "band", "hours"]))
    assert "weight" in found and "(200)" in found["weight"]
    assert "weight" not in dict(
        risk.identifying_columns(eng, ["age", "edu", "edu_num", "band", "hours"], threshold=0.1)
    )
    assert "weight" in dict(
        risk.identifying_columns(eng, ["age", "edu", "edu_num", "band", "hours"], threshold=0.099)
    )


def test_a_pair_is_reported_under_its_first_undeclared_column_and_insensitive_partners():
    table = _people()
    eng = get_engine("numpy", table)
    declared = ["age", "edu", "edu_num", "band", "weight"]
    assert summary(risk.identifying_columns(eng, declared)) == [("hours", "pair", 728)]
    # released knowingly, 'hours' is still the partner of 'gain'
    assert summary(risk.identifying_columns(eng, declared, insensitive=["hours"])) == [
        ("gain", "pair", 728)
    ]
    assert risk.identifying_columns(eng, declared, insensitive=["hours", "gain"]) == []
    # a column identifying on its own is no partner: every pair with it would identify
    assert (
        risk.identifying_columns(
            eng, ["age", "edu", "edu_num", "band", "hours", "gain"], insensitive=["weight"]
        )
        == []
    )


def test_a_dependency_is_not_reported_when_the_release_tells_it_anyway(tmp_path):
    """A coarser copy of a quasi-identifier that never goes above the copy's level tells
    nothing more; at the root (the default: the top of its hierarchy) it does."""
    table = _people()
    eng = get_engine("numpy", table)
    ages = [a for a in table.column("age").categories if a is not None]
    decades = taxonomy_hierarchy({a: [f"{int(a) // 10 * 10}s", "*"] for a in ages})
    declared = ["edu", "edu_num", "hours", "gain", "weight"]
    said = {}
    for level in (2, 1, 0, None):
        found = dict(
            risk.identifying_columns(
                eng, declared, quasi_identifiers=["age"], hierarchies={"age": decades},
                levels={} if level is None else {"age": level},
            )
        )  # fmt: skip
        said[level] = found.get("band")
    assert said[1] is None and said[0] is None  # the decades (or the ages) are released
    assert (
        said[2]
        == said[None]
        == (
            "quasi-identifier 'age' determines it (40 values -> 4 values), and it tells more of "
            "'age' than 'age' generalized to one value"
        )
    )
    # a top level of several labels is no single value: the decades' own top tells 'band'
    (tmp_path / "age.csv").write_text("".join(f"{a};{int(a) // 10 * 10}s\n" for a in ages))
    split = anonlab.read_hierarchy(tmp_path / "age.csv")
    assert split.height == 1
    found = risk.identifying_columns(
        eng, declared, quasi_identifiers=["age"], hierarchies={"age": split}
    )
    assert found == []


def test_a_nearly_unique_quasi_identifier_determines_nothing_by_chance():
    """A quasi-identifier unique in most records determines any column on those records;
    only values shared by several records count, so nothing is reported."""
    rows = [
        (f"id{i if i % 10 else i + 1}", "ab"[(i * 7) % 3 % 2], "xyz"[i % 3]) for i in range(300)
    ]
    eng = get_engine("numpy", EncodedTable.from_rows(rows, ["serial", "flag", "kind"]))
    assert risk.identifying_columns(eng, quasi_identifiers=["serial"]) == []


def test_a_dependency_with_a_few_stray_records_is_reported_with_them():
    """A copy of a quasi-identifier with a few data-entry errors is still a copy: at most
    1 % of a guess's errors and at most DEPENDENCY_EXCEPTIONS records."""
    rows = [(str(i % 6), f"c{i % 6}") for i in range(600)]
    rows[5] = ("5", "c0")  # one stray record
    eng = get_engine("numpy", EncodedTable.from_rows(rows, ["race", "race_code"]))
    assert summary(risk.identifying_columns(eng, quasi_identifiers=["race"])) == [
        ("race_code", "determines", 1)
    ]
    rows[11] = ("5", "c1")
    rows[17] = ("5", "c2")
    rows[23] = ("5", "c3")
    rows[29] = ("5", "c4")
    rows[35] = ("5", "c0")  # six strays: more than 1 % of the 500 a guess gets wrong
    eng = get_engine("numpy", EncodedTable.from_rows(rows, ["race", "race_code"]))
    assert risk.identifying_columns(eng, quasi_identifiers=["race"]) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_the_screen_passes_a_dependency_with_its_strays_and_drops_the_others(
    tmp_path, monkeypatch, engine
):
    """Above ``SCREEN_ROWS`` records a dependency is looked for among the first ones: one
    whose stray records all lie there still passes (what errs on at most
    ``DEPENDENCY_EXCEPTIONS`` of all the records errs on no more of them) and is counted
    over the whole table; a free column is dropped there, never counted over all."""
    monkeypatch.setattr(risk, "SCREEN_ROWS", 100)
    monkeypatch.setattr(risk, "DEPENDENCY_EXCEPTIONS", 10)
    rng = np.random.default_rng(1)
    race = rng.integers(0, 6, 600)
    rows = [(str(r), f"c{r}", str(v)) for r, v in zip(race, rng.integers(0, 6, 600))]
    for i in (3, 40, 77):  # three strays, all among the first 100 records
        rows[i] = (rows[i][0], f"c{(int(rows[i][0]) + 1) % 6}", rows[i][2])
    eng = _open(EncodedTable.from_rows(rows, ["race", "race_code", "noise"]), engine, tmp_path)
    asked = []
    stats = eng.class_stats
    monkeypatch.setattr(
        eng, "class_stats", lambda cols, *a, **k: asked.append(cols) or stats(cols, *a, **k)
    )
    found = risk.identifying_columns(eng, quasi_identifiers=["race"])
    assert summary(found) == [("race_code", "determines", 3)]
    assert asked == [["race_code", "race"]]  # 'noise' never counted over the whole table


def test_a_near_constant_column_is_not_told_by_everything():
    """Guessing the most common value of a near-constant column errs on few records: a
    column that errs on as many predicting it does not determine it."""
    rows = [(str(i % 7), "rare" if i % 97 == 0 else "usual") for i in range(700)]
    eng = get_engine("numpy", EncodedTable.from_rows(rows, ["day", "flag"]))
    assert risk.identifying_columns(eng, quasi_identifiers=["day"]) == []


@pytest.mark.parametrize(
    "name",
    ["id", "ID", "patient_id", "PatientID", "userId", "ssn", "uuid", "name", "full name",
     "first_name", "PatientName", "email", "e-mail", "Email Address", "phone", "home phone",
     "mrn", "MRN", "dob", "date_of_birth", "PID", "pid", "DUID", "PERSONID", "person-id",
     "record_no", "RecordNumber", "address", "ip_address"],
)  # fmt: skip
def test_identifier_names(name):
    assert risk.named_like_an_identifier(name)
    eng = get_engine("numpy", EncodedTable.from_rows([("a", "x"), ("a", "y")] * 5, ["q", name]))
    assert risk.identifying_columns(eng, ["q"]) == [
        (name, "its name says it identifies people or records")
    ]


@pytest.mark.parametrize(
    "name",
    ["valid", "paid", "grid", "education-num", "fnlwgt", "drug_name", "file name", "rapid",
     "nameplate", "hours-per-week", "Year", "mobility", "idea", "zip"],
)  # fmt: skip
def test_names_that_do_not_say_identifier(name):
    assert not risk.named_like_an_identifier(name)


def test_one_record_is_judged_by_its_names_only():
    eng = get_engine("numpy", EncodedTable.from_rows([("a", "1", "x")], ["q", "mrn", "v"]))
    assert [c for c, _ in risk.identifying_columns(eng, ["q"])] == ["mrn"]


def test_the_threshold_is_validated():
    eng = get_engine("numpy", _people())
    with pytest.raises(ParameterError, match="'threshold' parameter of identifying_columns"):
        risk.identifying_columns(eng, threshold=1.5)


# ------------------------------------------------------------------ UCI Adult, the issue


def _adult_job(**changes):
    spec = yaml.safe_load((EXAMPLES / "adult_k5.yaml").read_text())
    for key in ("identifiers", "insensitive"):
        spec.pop(key)
    for q in spec["quasi_identifiers"].values():
        q["hierarchy"] = str(EXAMPLES / q["hierarchy"])
    spec.update(changes)
    return spec


@pytest.fixture(scope="module")
def adult() -> EncodedTable:
    return anonlab.read_table(ADULT, csv_options=anonlab.CsvOptions(na_values=("?",)))


def test_adult_k5_without_its_declarations_stops_with_the_figures(adult, tmp_path):
    """The issue's case: ``fnlwgt`` (47 % unique), ``education-num`` (1:1 with the
    generalized ``education``) and ``capital-gain`` with ``hours-per-week``; nothing is
    written."""
    out = tmp_path / "out.csv"
    with pytest.raises(InputError) as err:
        anonymize(adult, _adult_job(), output=out)
    assert str(err.value) == (
        "3 undeclared columns would be released as they are and may identify people:\n"
        "  'fnlwgt': 47.1 % of the 32,561 records (15,330) are unique on it (threshold 1 %)\n"
        "  'education-num': it determines quasi-identifier 'education' (16 values -> 16 "
        "values)\n"
        "  'capital-gain': together with 'hours-per-week' it makes 1.47 % of the 32,561 "
        "records (478) unique (threshold 1 %)\n"
        "Declare each under 'identifiers:' (dropped from the release), as a quasi-identifier "
        "(generalized) or under 'insensitive:' (released as it is, knowingly). Nothing was "
        "written."
    )
    assert not out.exists()
    with pytest.raises(InputError, match="'fnlwgt': 47.1 %"):
        validate_job(adult, _adult_job())


def test_adult_declared_three_ways(adult):
    """Dropped, generalized or released knowingly: each declaration lets the job run."""
    qis = _adult_job()["quasi_identifiers"]
    job = _adult_job(
        identifiers=["fnlwgt"],
        quasi_identifiers={**qis, "education-num": {}},
        insensitive=["capital-gain", "hours-per-week"],  # the pair, knowingly
        models=[{"k_anonymity": {"k": 2}}],
        metric="loss",
    )
    validate_job(adult, job)
    with pytest.raises(InputError, match="'hours-per-week': together with 'capital-gain'"):
        validate_job(adult, {**job, "insensitive": ["capital-gain"]})
    # a threshold above fnlwgt's 47.1 % (and its pairs', up to 79.6 % with hours-per-week)
    # lets it through too, knowingly
    validate_job(
        adult, _adult_job(identifiers=["education-num", "capital-gain"], identifying_threshold=0.8)
    )
    with pytest.raises(InputError, match="'fnlwgt': together with 'hours-per-week' it makes 79.6"):
        validate_job(
            adult,
            _adult_job(identifiers=["education-num", "capital-gain"], identifying_threshold=0.5),
        )
    with pytest.raises(InputError, match="'fnlwgt'"):
        validate_job(
            adult,
            _adult_job(identifiers=["education-num", "capital-gain"], identifying_threshold=0.4),
        )


def test_the_examples_release_no_identifying_column(adult):
    """Every bundled example declares its columns: nothing undeclared identifies, and
    fnlwgt and education-num are never released as they are (a quasi-identifier is released
    transformed: education-num microaggregated in adult_microaggregation.yaml)."""
    from anonlab.jobs import build_problem, load_job
    from anonlab.jobs.identifying import identifying as _identifying

    for path in sorted(EXAMPLES.glob("*.yaml")):
        spec = load_job(path)
        assert _identifying(build_problem(adult, spec), spec) == [], path.name
        transformed = {q.name for q in spec.quasi_identifiers}
        released = {*adult.names} - {*spec.identifiers} - transformed
        assert not {"fnlwgt", "education-num"} & released, path.name


@pytest.mark.parametrize("engine", ["duckdb"])
def test_out_of_core_anonymize_stops_as_in_memory(tmp_path, engine):
    """The frequency-set run and the block-by-block run refuse the same columns."""
    pytest.importorskip("duckdb")
    data = _write(tmp_path / "people.csv", _people())
    base = {"quasi_identifiers": {"age": {}, "edu": {}}, "models": [{"k_anonymity": {"k": 2}}]}
    for algorithm in ("optimal", "progressive"):
        job = {**base, "algorithm": algorithm, "suppression": 0.5}
        with pytest.raises(InputError) as err:
            anonymize(data, job, engine=engine, output=tmp_path / "o.csv")
        assert [line.split("'")[1] for line in str(err.value).splitlines()[1:-1]] == [
            "edu_num", "band", "hours", "weight"
        ], algorithm  # fmt: skip
        assert not (tmp_path / "o.csv").exists()


def test_check_warns_and_does_not_stop(tmp_path):
    data = _write(tmp_path / "people.csv", _people())
    job = {"quasi_identifiers": {"age": {}, "edu": {}}, "models": [{"k_anonymity": {"k": 2}}]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = check(data, job)
    assert report.n_rows == 2000
    said = [str(w.message) for w in caught if issubclass(w.category, PrivacyRiskWarning)]
    assert [s.split("'")[1] for s in said] == ["edu_num", "band", "hours", "weight"]
    assert all("under 'insensitive:'" in s for s in said)


# ------------------------------------------------------------------ the job keys


def test_insensitive_and_the_threshold_are_parsed():
    spec = parse_job(
        {
            "quasi_identifiers": {"age": {}},
            "models": ["k_anonymity"],
            "insensitive": ["hours"],
            "identifying_threshold": 0.05,
        }
    )
    assert spec.insensitive == ["hours"] and spec.identifying_threshold == 0.05
    assert parse_job({"quasi_identifiers": ["age"], "models": ["k_anonymity"]}).insensitive == []


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"insensitive": ["age"]}, "'age' is declared insensitive .* also a quasi-identifier"),
        ({"sensitive": ["s"], "insensitive": ["s"]}, "also a sensitive attribute"),
        ({"identifiers": ["s"], "insensitive": ["s"]}, "also an identifier"),
        (
            {"personalized": {"limit_column": "p"}, "insensitive": ["p"]},
            "also the limit column of 'personalized'",
        ),
        ({"insensitive": {"a": 1}}, "'insensitive' must be a list of names"),
        ({"identifying_threshold": 2}, "'identifying_threshold' parameter must be a number in"),
        ({"identifying_threshold": "high"}, "'identifying_threshold' parameter must be a number"),
        (
            {"identifying_treshold": 0.1},
            "Unknown key 'identifying_treshold'.*identifying_threshold",
        ),
    ],
)
def test_bad_declarations_are_refused_at_parse_time(changes, message):
    job = {"quasi_identifiers": {"age": {}}, "models": ["k_anonymity"], **changes}
    with pytest.raises(InputError, match=message):
        parse_job(job, source="job.yaml")


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_an_insensitive_column_the_data_lacks_is_named(tmp_path, engine):
    pytest.importorskip("duckdb")
    data = _write(tmp_path / "people.csv", _people())
    job = {
        "quasi_identifiers": {"age": {}},
        "models": [{"k_anonymity": {"k": 2}}],
        "insensitive": ["hour"],
    }
    with pytest.raises(ColumnNotFoundError, match="Unknown insensitive column 'hour'.*'hours'"):
        anonymize(data, job, engine=engine)


def test_flat_hierarchy_is_a_root_for_the_dependency():
    """A quasi-identifier with a flat hierarchy (value -> *) may be released as one value:
    a column it determines tells more."""
    rows = [(str(i % 4), "lh"[i % 4 // 2]) for i in range(40)]
    eng = get_engine("numpy", EncodedTable.from_rows(rows, ["q", "half"]))
    h = flat_hierarchy(["0", "1", "2", "3"])
    found = risk.identifying_columns(
        eng, quasi_identifiers=["q"], hierarchies={"q": h}, levels={"q": 1}
    )
    assert summary(found) == [("half", "determined", 0)]


# ------------------------------------------------------------------ the data sets


@pytest.mark.shared
@pytest.mark.parametrize("engine", ENGINES)
def test_meps_identifiers_are_caught(shared, engine):
    """MEPS 2005 (INFORMS): the household id DUID (8.97 % of the records unique on it), the
    person number PID (its name; unique with DUID), the person id DUPERSID (one per record)
    and RACEWX, a copy of the quasi-identifier RACEX but for 71 records."""
    pytest.importorskip("duckdb")
    path = shared / "datasets" / "informs-meps2005-test" / "demographics05test.csv"
    eng = anonlab.open_engine(path, engine=engine)
    qis = ["DOBMM", "DOBYY", "SEX", "RACEX", "EDUCYEAR", "marry"]
    found = risk.identifying_columns(eng, ["income"], quasi_identifiers=qis)
    assert summary(found) == [
        ("DUID", "unique", 3047),
        ("PID", "named", None),
        ("DUPERSID", "unique", 33961),
        ("RACEWX", "determined", 71),
    ]


@pytest.mark.shared
def test_census_income_copies_of_quasi_identifiers_are_caught(shared):
    """Census-Income (KDD), columns by position: the major industry and occupation codes
    (c8, c9) are functions of the detailed recodes (c2, c3); the instance weight (c24) makes
    28 % of the records unique; dividends (c18) with weeks worked (c39), 1.08 %."""
    path = shared / "datasets" / "census-income-kdd" / "census-income.data.gz"
    opts = anonlab.CsvOptions(header=False, strip=True, na_values=("?",))
    eng = anonlab.open_engine(anonlab.read_table(path, csv_options=opts))
    qis = ["c0", "c12", "c10", "c7", "c4", "c2", "c3", "c34"]  # age, sex, race, ...
    found = risk.identifying_columns(eng, ["c41"], quasi_identifiers=qis)
    assert summary(found) == [
        ("c8", "determined", 0),
        ("c9", "determined", 0),
        ("c18", "pair", 2146),
        ("c24", "unique", 55863),
    ]
    assert dict(found)["c8"].startswith("quasi-identifier 'c2' determines it (52 values -> 24")
