"""The statistics-office families out of core, partition by partition (issue 56, item 2).

mondrian (regions), microaggregation (centroids) and local_suppression (blanks) run on
DuckDB block by block like the other row-placing families: each block anonymized in memory
and verified by the release layer, the union written in the source's order and re-checked
(the written classes judged again; a release with blanks recounted under wildcard matching).
Each release read back must pass ``anonlab check --release`` (an audit independent of the
write path), keep the input's rows in their order, and its loss -- measured exactly on the
union of the blocks -- must equal the loss measured in memory on the written release. The
Spark engine runs the same blocks and writes the same release.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

import anonlab
from anonlab import EncodedTable
from anonlab.data.stats import ClassStats
from anonlab.engines import get_engine
from anonlab.exceptions import ParameterError, PrivacyCheckError
from anonlab.jobs.problem import build_problem, load_job
from anonlab.release.blanks import recheck_blanks
from anonlab.release.centroids import centroid_gcp
from anonlab.release.regions import region_loss
from tests.support.profiles import costly
from tests.unit import test_partitioned as _partitioned
from tests.unit.test_partitioned import (
    ADULT_COLUMNS,
    HIERARCHIES,
    QIS,
    ROWS,
    _columns,
    _random_job,
    _text,
)

duckdb = pytest.importorskip("duckdb")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

FAMILIES = ("mondrian", "local_suppression", "microaggregation")
NUMERIC = ("age", "education-num", "hours-per-week")


adult = _partitioned.adult  # the same table (the first ROWS rows of Adult)


def _job(algorithm: str, **extra: Any) -> dict[str, Any]:
    """Adult's 6 quasi-identifiers with their hierarchies, k = 5, GCP; microaggregation on
    three numbers and sex (by its mode)."""
    job: dict[str, Any] = {
        "quasi_identifiers": {q: {"hierarchy": str(HIERARCHIES / f"adult_{q}.csv")} for q in QIS},
        "sensitive": ["income"],
        "models": [{"k_anonymity": {"k": 5}}],
        "suppression": 0.02,
        "metric": "gcp",
        "algorithm": algorithm,
    }
    if algorithm == "microaggregation":
        job["quasi_identifiers"] = {q: {} for q in (*NUMERIC, "sex")}
        job["algorithm"] = {"name": "microaggregation", "categorical": "mode"}
    job.update(extra)
    qis = list(job["quasi_identifiers"])
    job["insensitive"] = [c for c in ADULT_COLUMNS if c not in qis and c not in job["sensitive"]]
    return job


def _name(job: dict[str, Any]) -> str:
    algorithm = job["algorithm"]
    return str(algorithm if isinstance(algorithm, str) else algorithm["name"])


def _loss_in_memory(data: Path, job: dict[str, Any], released: Path) -> float:
    """The job's loss measured in memory on the written release, against the whole table:
    regions and blanks read cell by cell from their labels (an interval's or a hierarchy
    label's NCP; a blank, ``*``, 1), centroids on the written classes (each class's range
    or distinct values)."""
    problem = build_problem(str(data), load_job(job))
    qis = list(problem.quasi_identifiers)
    cols = _columns(released)
    table = EncodedTable.from_columns({q: cols[q] for q in qis})
    if _name(job) != "microaggregation":
        return region_loss(problem, table, np.ones(table.n_rows, dtype=bool))
    stats = get_engine("numpy", table).class_stats(qis, with_rows=True)
    row_class = np.asarray(stats.row_class, dtype=np.int64)
    first = np.full(stats.n_classes, table.n_rows)
    np.minimum.at(first, row_class, np.arange(table.n_rows))
    hidden = {q: table[q].categories[table[q].codes[first]] == "*" for q in qis}
    none = np.zeros(stats.n_classes, dtype=bool)
    return centroid_gcp(problem.table, qis, row_class, none, hidden)


def _audited(data: Path, job: dict[str, Any], released: Path, k: int) -> None:
    """``anonlab check --release`` (numpy) holds: every cell covers its value (regions,
    blanks) or every written class holds its centroid (the mean of its merged parts), and
    k-anonymity holds on the classes or under wildcard matching."""
    report = anonlab.check(str(data), job, release=str(released), engine="numpy")
    assert report.release is not None and report.release["holds"], report.release
    assert report.release["k_after"] >= k


# ------------------------------------------------------------------ every family, Adult
@pytest.mark.parametrize("algorithm", FAMILIES)
def test_blocks_release_satisfies_the_model_in_source_order(adult, tmp_path, algorithm):
    job = _job(algorithm)
    out = tmp_path / "released.parquet"
    result = anonlab.anonymize(str(adult), job, output=out, engine="duckdb", block_rows=1500)
    assert result.search.blocks >= 3
    assert result.blocks is not None and result.blocks.summary()["partitioned"]
    assert all(result.checks.values())
    _audited(adult, job, out, 5)
    source, released = _columns(adult), _columns(out)
    assert list(released) == list(source)
    assert len(released["age"]) == ROWS - result.suppressed_rows
    if not result.suppressed_rows:
        for name in source:
            if name not in job["quasi_identifiers"]:
                assert (released[name] == source[name]).all(), name  # the source's order
    assert result.loss == pytest.approx(_loss_in_memory(adult, job, out), rel=1e-9, abs=1e-12)
    if algorithm == "local_suppression":
        assert result.release.verification.k_meaning.startswith("the fewest released records")
    assert result.metric == "gcp"


@pytest.mark.parametrize("algorithm", FAMILIES)
def test_one_block_is_the_in_memory_release(adult, tmp_path, algorithm):
    _partitioned._one_block_is_the_in_memory_release(adult, tmp_path, _job(algorithm))


def test_mondrian_cuts_blocks_of_its_own_size_by_default(adult):
    res = anonlab.anonymize(str(adult), _job("mondrian"), engine="duckdb")
    assert res.search.block_rows == 250_000 and res.search.blocks == 1
    res = anonlab.anonymize(str(adult), _job("microaggregation"), engine="duckdb")
    assert res.search.block_rows == 100_000


def test_mondrian_ncp_of_blocks_adds_up(adult, tmp_path):
    job = _job("mondrian", metric="ncp")
    out = tmp_path / "released.parquet"
    res = anonlab.anonymize(str(adult), job, output=out, engine="duckdb", block_rows=2000)
    assert res.loss == pytest.approx(sum(b["loss"] for b in res.search.per_block), rel=1e-9)
    assert res.loss == pytest.approx(_loss_in_memory(adult, job, out), rel=1e-9)


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
def test_centroid_classes_spanning_blocks_are_measured_merged(request, tmp_path, engine):
    """Identical centroids from different blocks are one class: its range is the merged
    rows' (here wider than either part's), measured exactly, and its mean still the mean."""
    if engine == "spark":
        request.getfixturevalue("spark")
    rng = np.random.default_rng(3)
    x = rng.integers(0, 4, 900)
    y = rng.integers(0, 3, 900)
    data = tmp_path / "data.csv"
    data.write_text("x,y\n" + "\n".join(f"{a},{b}" for a, b in zip(x, y)) + "\n")
    job = {
        "quasi_identifiers": {"x": {}, "y": {}},
        "models": [{"k_anonymity": {"k": 4}}],
        "suppression": 0.0,
        "algorithm": {"name": "microaggregation", "block_size": 50},
    }
    out = tmp_path / "out.csv"
    res = anonlab.anonymize(str(data), job, output=out, engine=engine, block_rows=100)
    assert res.search.spanning_classes > 0
    _audited(data, job, out, 4)
    assert res.loss == pytest.approx(_loss_in_memory(data, job, out), rel=1e-9, abs=1e-12)
    per = res.search.per_block
    mean = sum(b["loss"] * b["rows"] for b in per) / 900
    assert res.loss != pytest.approx(mean, rel=1e-6)  # merged classes and whole-table ranges


@pytest.mark.parametrize("algorithm", FAMILIES)
def test_spark_writes_the_duckdb_release_block_by_block(spark, adult, tmp_path, algorithm):
    """The Spark engine runs the same blocks, writes the same release, measures the same
    loss (the centroid classes that span blocks read back from Spark)."""
    job = _job(algorithm)
    a, b = tmp_path / "duckdb.parquet", tmp_path / "spark.parquet"
    ra = anonlab.anonymize(str(adult), job, output=a, engine="duckdb", block_rows=1500)
    rb = anonlab.anonymize(str(adult), job, output=b, engine="spark", block_rows=1500)
    assert rb.search.blocks == ra.search.blocks >= 3
    assert rb.search.spanning_classes == ra.search.spanning_classes
    assert _text(b) == _text(a)
    assert rb.loss == pytest.approx(ra.loss, rel=1e-12)


# ------------------------------------------------------------------ refusals, re-checks
def test_limits_of_local_suppression_are_refused_out_of_core(adult, tmp_path):
    job = _job("local_suppression")
    job["algorithm"] = {"name": "local_suppression", "limits": {"age": 10}}
    out = tmp_path / "x.parquet"
    with pytest.raises(ParameterError, match="needs the individual rows") as info:
        anonlab.anonymize(str(adult), job, output=out, engine="duckdb")
    assert "\n" not in str(info.value) and not out.exists()


def test_a_model_the_union_may_break_is_refused_for_mondrian(adult, tmp_path):
    models = [{"k_anonymity": {"k": 5}}, {"equal_t_closeness": {"attribute": "income", "t": 0.2}}]
    out = tmp_path / "x.parquet"
    with pytest.raises(ParameterError, match="partition by partition"):
        anonlab.anonymize(str(adult), _job("mondrian", models=models), output=out, engine="duckdb")
    assert not out.exists()


@pytest.mark.parametrize("algorithm", FAMILIES)
def test_a_written_release_that_fails_is_not_written(adult, tmp_path, monkeypatch, algorithm):
    """The written file is judged again on its own: a record made unique after the blocks
    were verified (and the labels' comparison silenced) is caught, nothing written."""
    from anonlab.engines.duckdb_engine import DuckDBEngine

    real = DuckDBEngine.write_staged_release

    def unique_first_row(self: Any, plan: Any, path: Any, **kwargs: Any) -> int:
        n = real(self, plan, path, **kwargs)
        data = pq.read_table(path)
        q = "sex"
        values = data.column(q).to_pylist()
        values[0] = "nobody else"
        pq.write_table(data.set_column(data.schema.get_field_index(q), q, pa.array(values)), path)
        return n

    monkeypatch.setattr(DuckDBEngine, "write_staged_release", unique_first_row)
    monkeypatch.setattr(DuckDBEngine, "staged_mismatches", lambda self, *a, **k: 0)
    out = tmp_path / "out.parquet"
    words = "compatible with fewer than" if algorithm == "local_suppression" else "fail the models"
    with pytest.raises(PrivacyCheckError, match=words):
        anonlab.anonymize(str(adult), _job(algorithm), output=out, engine="duckdb", block_rows=2000)
    assert list(tmp_path.iterdir()) == []


def test_recheck_blanks_counts_a_blank_as_any_value():
    problem = build_problem(
        EncodedTable.from_columns({"a": ["1", "1", "2", "2"], "b": ["x", "y", "x", "y"]}),
        load_job({"quasi_identifiers": {"a": {}, "b": {}},
                  "models": [{"k_anonymity": {"k": 2}}]}),
    )  # fmt: skip

    def written(a: list[str], b: list[str]) -> ClassStats:
        table = EncodedTable.from_columns({"a": a, "b": b})
        return get_engine("numpy", table).class_stats(["a", "b"], with_keys=True)

    # (1,*) matches (1,y); (*,x) matches (2,x): each record has 2 compatible records
    assert recheck_blanks(problem, written(["1", "1", "*", "2"], ["*", "y", "x", "x"])) == 2
    with pytest.raises(PrivacyCheckError, match="2 records are compatible with fewer than 2"):
        recheck_blanks(problem, written(["1", "1", "2", "2"], ["*", "y", "x", "y"]))
    with pytest.raises(PrivacyCheckError, match="3 rows, not the 4"):
        recheck_blanks(problem, written(["1", "1", "*"], ["*", "y", "x"]))


# ------------------------------------------------------------------ random tables
@st.composite
def _tables(draw: Any) -> tuple[list[list[str]], str, int, int]:
    n = draw(st.integers(12, 60))
    rows = [
        [
            str(draw(st.integers(0, 9))),
            draw(st.sampled_from(["a", "b", "c"])),
            draw(st.sampled_from(["x", "y"])),
        ]
        for _ in range(n)
    ]
    algorithm = draw(st.sampled_from(FAMILIES))
    k = draw(st.integers(2, 4))
    block = draw(st.integers(k, n))
    return rows, algorithm, k, block


# costly: each example runs a block-by-block job out of core
@pytest.mark.slow
@costly(25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_tables())
def test_random_tables_blocks_satisfy_k_and_measure_their_union(tmp_path_factory, case):
    rows, algorithm, k, block = case
    folder = tmp_path_factory.mktemp("random")
    data, job = _random_job(folder, rows, algorithm, k)
    if algorithm == "microaggregation":
        job["algorithm"] = {"name": "microaggregation", "categorical": "mode", "block_size": 8}
    out = folder / "out.csv"
    res = anonlab.anonymize(str(data), job, output=out, engine="duckdb", block_rows=block)
    _, released = _text(out)
    assert len(released) == len(rows)
    assert [r[2] for r in released] == [r[2] for r in rows]  # the source's order
    _audited(data, job, out, k)
    assert res.loss == pytest.approx(_loss_in_memory(data, job, out), rel=1e-9, abs=1e-12)
