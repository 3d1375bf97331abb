"""The DuckDB engine reads a CSV file once, then answers every question from its copy (issue 27)."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from anonlab import CsvOptions, diagnose, open_engine
from anonlab.exceptions import DataFormatError

pytest.importorskip("duckdb")
from anonlab.engines.duckdb_engine import DuckDBEngine  # noqa: E402

#: Census-Income style: no header, ", " between fields, "?" for a missing value.
NAMES = ("age", "sex", "education", "region", "tabbed", "income")
ATTRIBUTES = ["age", "sex", "education", "region", "tabbed"]
OPTS = CsvOptions(separator=",", header=False, names=NAMES, strip=True, na_values=("?",))
N_ROWS = 80_000  # several row groups of the engine's Parquet copy, so row order is exercised


def _write(path: Path) -> Path:
    """A CSV (gzip when ``path`` ends in .gz) with nulls and fields padded by tabs."""
    rng = np.random.default_rng(27)
    age = rng.integers(17, 91, N_ROWS).astype(str)
    sex = rng.choice(["Male", "Female"], N_ROWS)
    edu = rng.choice(
        ["HS", "Bachelors", "Masters", "Doctorate", "?"], N_ROWS, p=[0.5, 0.3, 0.1, 0.05, 0.05]
    )
    region = rng.choice(["North", "South", "East", "West", "?"], N_ROWS)
    tabbed = rng.choice(["a", "\tb", "c\t", "\t?\t"], N_ROWS)  # strip removes tabs too
    income = rng.choice(["- 50000.", "50000+."], N_ROWS)
    lines = "".join(", ".join(r) + "\n" for r in zip(age, sex, edu, region, tabbed, income))
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8", newline="") as fh:
        fh.write(lines)
    return path


class _CountingConnection:
    """A DuckDB connection that counts the statements scanning the CSV file."""

    def __init__(self, con: Any) -> None:
        self._con = con
        self.csv_scans = 0

    def execute(self, sql: str, *args: Any) -> Any:
        """Count ``sql`` if it scans a CSV file, then run it."""
        self.csv_scans += "read_csv(" in sql
        return self._con.execute(sql, *args)

    def sql(self, sql: str, *args: Any) -> Any:
        """Count ``sql`` if it scans a CSV file, then build its relation."""
        self.csv_scans += "read_csv(" in sql
        return self._con.sql(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._con, name)


class _CountingEngine(DuckDBEngine):
    """The DuckDB engine with its connection wrapped in :class:`_CountingConnection`."""

    def _open(self, *args: Any) -> None:
        self.con = _CountingConnection(self.con)
        super()._open(*args)


def _q4(engine: Any) -> list[tuple[tuple[str, ...], int, bool]]:
    ans = diagnose(engine, attributes=ATTRIBUTES)
    assert ans.question == "Q4"
    return [(tuple(r.attributes), r.k, r.evaluated) for r in ans.rows]


def test_gzip_csv_q4_matches_numpy_and_the_file_is_read_once(tmp_path):
    path = _write(tmp_path / "people.csv.gz")
    expected = open_engine(path, csv_options=OPTS)
    engine = _CountingEngine(path, csv_options=OPTS, temp_directory=tmp_path)
    assert engine.con.csv_scans == 1  # the engine opened: parsed once into its Parquet copy
    path.unlink()  # every question below must be answered without the file
    assert engine.n_rows == expected.n_rows == N_ROWS
    assert _q4(engine) == _q4(expected)
    # row positions survive the copy (several row groups, read in parallel)
    for subset in (["age", "education"], ["region", "tabbed", "sex"]):
        k = int(np.median(expected.class_sizes(subset))) + 1  # about half the rows
        want = expected.rows_in_small_classes(subset, None, k)
        assert 0 < want.size < N_ROWS
        assert np.array_equal(engine.rows_in_small_classes(subset, None, k), want)
    a = expected.class_stats(["education", "tabbed"], sensitive=["income"], with_rows=True)
    b = engine.class_stats(["education", "tabbed"], sensitive=["income"], with_rows=True)
    assert a.canonical() == b.canonical()
    assert len(set(zip(a.row_class.tolist(), b.row_class.tolist()))) == a.n_classes
    assert engine.con.csv_scans == 1
    engine.close()


def test_plain_csv_with_dropped_nulls_matches_numpy(tmp_path):
    path = _write(tmp_path / "people.csv")
    expected = open_engine(path, csv_options=OPTS, drop_missing=True)
    engine = open_engine(path, engine="duckdb", csv_options=OPTS, drop_missing=True)
    assert engine.n_rows == expected.n_rows < N_ROWS
    assert _q4(engine) == _q4(expected)
    engine.close()  # type: ignore[attr-defined]


def test_close_deletes_the_temporary_folder(tmp_path):
    path = _write(tmp_path / "people.csv.gz")
    temp = tmp_path / "temp"
    temp.mkdir()
    with DuckDBEngine(path, csv_options=OPTS, temp_directory=temp) as engine:
        (folder,) = temp.iterdir()
        assert (folder / "source.parquet").is_file()
        assert engine.class_sizes(["sex"]).sum() == N_ROWS
    assert not any(temp.iterdir())
    engine.close()  # closing twice does nothing


def test_a_file_that_cannot_be_read_leaves_no_temporary_files(tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_text("a,b\n1,2\n3,4,5\n", encoding="utf-8")
    temp = tmp_path / "temp"
    temp.mkdir()
    with pytest.raises(DataFormatError, match=r"row 2 \(line 3\) has 3 fields instead of 2"):
        DuckDBEngine(path, temp_directory=temp)
    assert not any(temp.iterdir())


@pytest.mark.parametrize("name", ["latin-1", "latin1", "ISO-8859-1", "iso8859_1"])
def test_every_name_of_an_encoding_reads_as_numpy_reads_it(tmp_path, name):
    """DuckDB's reader knows Latin-1 as ``latin-1`` only; any of Python's names for it works."""
    path = tmp_path / "latin.csv"
    path.write_bytes("a,b\nxé,1\ny,1\nxé,2\n".encode("latin-1"))
    opts = CsvOptions(encoding=name)
    ours = open_engine(path, engine="duckdb", csv_options=opts).class_stats(["a"], with_keys=True)
    assert ours.key_labels() == open_engine(path, csv_options=opts).class_stats(
        ["a"], with_keys=True
    ).key_labels() == [("xé",), ("y",)]  # fmt: skip


def test_an_encoding_duckdb_does_not_read_names_those_it_reads(tmp_path):
    path = tmp_path / "cp.csv"
    path.write_bytes("a,b\nx\u20ac,1\n".encode("cp1252"))
    with pytest.raises(DataFormatError, match="reads CSV text in utf-8, latin-1, utf-16 only"):
        open_engine(path, engine="duckdb", csv_options=CsvOptions(encoding="cp1252"))


def test_a_column_without_a_name_is_refused_with_the_fix(tmp_path):
    """A pandas index written to CSV has no header name: DuckDB failed with a parser error
    (a CSV) or renamed it C0 (Parquet) or v0 (a frame); one line says what to do instead."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    csv_path = tmp_path / "index.csv"
    csv_path.write_text(",a,b\n0,x,1\n1,y,1\n", encoding="utf-8")
    parquet_path = tmp_path / "index.parquet"
    pq.write_table(pa.table({"": ["0", "1"], "a": ["x", "y"]}), parquet_path)
    for source in (csv_path, parquet_path, pa.table({"a": ["x"], "": ["0"]})):
        with pytest.raises(DataFormatError, match=r"Column \d of .* has no name.*index=False"):
            open_engine(source, engine="duckdb")
    assert open_engine(csv_path).columns == ["", "a", "b"]  # numpy reads it


def test_a_quote_never_closed_is_named(tmp_path):
    # DuckDB quotes the row, which then spans lines, before it says what is wrong
    path = tmp_path / "unclosed.csv"
    path.write_text('q,note\na,x\na,"never closed\nb,y\nb,z\n')
    with pytest.raises(DataFormatError, match="Value with unterminated quote found"):
        DuckDBEngine(path)


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_a_header_only_file_is_an_empty_table_on_both_engines(tmp_path, engine):
    # DuckDB called it a ParameterError, numpy a DataFormatError (as every reader does)
    p = tmp_path / "ho.csv"
    p.write_text("age,sex\n")
    with pytest.raises(DataFormatError, match="ho.csv' is empty: it has no rows"):
        diagnose(p, quasi_identifiers=["age", "sex"], k=2, engine=engine)
