"""The Spark engine: the same classes, rows and answers as the numpy engine (issue 33).

Every test but the two about missing dependencies shares one local SparkSession (the
``spark`` fixture of tests/conftest.py) and is skipped, with the reason, without pyspark or
Java 17+.
"""

from __future__ import annotations

import csv
import gzip
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from anonlab import CsvOptions, EncodedTable, diagnose, open_engine, taxonomy_hierarchy
from anonlab.engines import get_engine
from anonlab.exceptions import (
    AnonlabError,
    ColumnNotFoundError,
    DataFormatError,
    HierarchyError,
    InputError,
    OptionalDependencyError,
)
from tests.conftest import FIGURE2_ROWS

ROOT = Path(__file__).resolve().parents[2]
FIG2 = ["V", "W", "X", "Y", "Z"]

#: a hierarchy with one root: at its top level a null is generalized like any value
HIER_A = taxonomy_hierarchy({"x": ["xy", "*"], "y": ["xy", "*"], "z": ["z", "*"]}, attribute="a")

ROWS = [
    ("x", "1", "p", "s1"),
    ("y", "1", "p", "s2"),
    ("z", "2", "q", "s1"),
    (None, "2", "q", "s3"),
    ("x", "10", None, "s1"),
    ("y", "2", "p", None),
    ("x", "1", "p", "s2"),
    (None, "10", "q", "s1"),
]


def _table() -> EncodedTable:
    return EncodedTable.from_rows(ROWS, ["a", "b", "c", "s"])


def _same_stats(a, b) -> None:
    """Equal class statistics: the same arrays, numbered the same way."""
    assert np.array_equal(a.sizes, b.sizes)
    assert a.levels == b.levels and a.n_rows == b.n_rows
    if a.keys is not None:
        assert np.array_equal(a.keys, b.keys)
        assert all(np.array_equal(x, y) for x, y in zip(a.domains, b.domains))
    if a.row_class is not None:
        assert np.array_equal(a.row_class, b.row_class)
    assert set(a.sensitive) == set(b.sensitive)
    for s in a.sensitive:
        assert np.array_equal(a.sensitive[s].values, b.sensitive[s].values)
        assert np.array_equal(a.sensitive[s].counts, b.sensitive[s].counts)


# ---------------------------------------------------------------------- without Spark
def test_missing_pyspark_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark.sql.functions", None)
    with pytest.raises(OptionalDependencyError, match=r"anonlab\[spark\]"):
        get_engine("spark", _table())


def test_missing_java_names_java_17_and_java_home(monkeypatch, tmp_path):
    from anonlab.engines.spark_engine.engine import _check_java

    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(OptionalDependencyError, match="Java 17.*JAVA_HOME"):
        _check_java()
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(OptionalDependencyError, match="Java 17 or later.*JAVA_HOME"):
        _check_java()


# ---------------------------------------------------------------------- in memory
def test_classes_rows_and_histograms_equal_numpy(spark, figure2):
    np_eng = open_engine(figure2)
    sp = get_engine("spark", figure2, spark=spark)
    assert sp.n_rows == 12 and sp.columns == FIG2
    for cols, sens in ((["V", "W"], ["Z"]), (["Y", "W", "X"], ["Z", "V"]), ([], ["Y"])):
        a = np_eng.class_stats(cols, sensitive=sens, with_rows=True)
        b = sp.class_stats(cols, sensitive=sens, with_rows=True)
        _same_stats(a, b)
        assert sorted(sp.class_sizes(cols).tolist()) == sorted(a.sizes.tolist())
        for k in (2, 3):
            assert np.array_equal(
                np_eng.rows_in_small_classes(cols, None, k), sp.rows_in_small_classes(cols, None, k)
            )
    bare = sp.class_stats(["V"], with_keys=False)
    assert bare.keys is None and bare.domains is None and bare.row_class is None


def test_levels_and_nulls_equal_numpy(spark):
    table = _table()
    hier = {"a": HIER_A}
    np_eng = open_engine(table, hierarchies=hier)
    sp = get_engine("spark", table, hierarchies=hier, spark=spark)
    for level in (0, 1, 2):  # a null is a class of its own below the root, merged at it
        lv = {"a": level}
        _same_stats(
            np_eng.class_stats(["a", "b"], lv, sensitive=["s"], with_rows=True),
            sp.class_stats(["a", "b"], lv, sensitive=["s"], with_rows=True),
        )
        assert np.array_equal(
            np_eng.rows_in_small_classes(["a"], lv, 3), sp.rows_in_small_classes(["a"], lv, 3)
        )
    assert sp.class_sizes(["a"], {"a": 2}).tolist() == [8]
    many = sp.class_sizes_many([["a"], ["a", "b"], ["b", "c"], ["a"]], {"a": 1})
    for sizes, cols in zip(many, [["a"], ["a", "b"], ["b", "c"], ["a"]]):
        lv = {"a": 1} if "a" in cols else {}
        assert sorted(sizes.tolist()) == sorted(np_eng.class_sizes(cols, lv).tolist())


def test_frames_and_spark_dataframes_are_read_as_text(spark):
    pa = pytest.importorskip("pyarrow")
    frame = pa.table(
        {
            "n": pa.array([1, 2, 2, None, 1]),
            "f": pa.array([1.0, 2.5, float("nan"), 2.5, 1.0]),
            "b": pa.array([True, False, True, None, True]),
            "t": pa.array(["u", "v", None, "u", "u"]),
        }
    )
    np_eng = open_engine(frame)
    cols = ["n", "f", "b", "t"]
    expected = np_eng.class_stats(cols, with_rows=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pyspark on pandas 3
        from_pandas = spark.createDataFrame(frame.to_pandas())
    for source in (frame, from_pandas):
        sp = get_engine("spark", source, spark=spark)
        if source is frame:
            _same_stats(expected, sp.class_stats(cols, with_rows=True))
        else:  # pandas turned the integers into floats and the nulls into NaN: labels agree
            assert sp.class_stats(cols).canonical() == expected.canonical()


# ---------------------------------------------------------------------- files
def _write_csv(path: Path, rows, header, *, sep=",", opener=open) -> Path:
    with opener(path, "wt", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter=sep)
        if header:
            w.writerow(header)
        w.writerows(rows)
    return path


CSV_ROWS = [
    [" 39", "a, b", "?", 'say "hi"'],
    ["50 ", "a, b", "", "x"],
    ["39", "c", "?", ""],
    [" 50\t", "c", "zz", "x"],
    ["39", "a, b", "zz", 'say "hi"'],
]


@pytest.mark.parametrize("name", ["people.csv", "people.csv.gz"])
def test_csv_options_match_numpy(spark, tmp_path, name):
    opener = gzip.open if name.endswith(".gz") else open
    path = _write_csv(tmp_path / name, CSV_ROWS, None, sep=";", opener=opener)
    # no header, named columns, stripped fields, '?' missing and the empty field a value
    opts = CsvOptions(
        separator=";", header=False, names=("age", "g", "m", "q"), strip=True, na_values=("?",)
    )
    np_eng = open_engine(path, csv_options=opts)
    sp = open_engine(path, engine="spark", csv_options=opts)
    assert sp.columns == ["age", "g", "m", "q"] and sp.n_rows == 5
    for cols in (["age", "g"], ["m", "q"], ["age", "g", "m", "q"]):
        _same_stats(
            np_eng.class_stats(cols, sensitive=["q"], with_rows=True),
            sp.class_stats(cols, sensitive=["q"], with_rows=True),
        )
    dropped = open_engine(path, engine="spark", csv_options=opts, drop_missing=["m"])
    assert dropped.n_rows == 3
    assert np.array_equal(
        dropped.rows_in_small_classes(["age"], None, 3),
        open_engine(path, csv_options=opts, drop_missing=["m"]).rows_in_small_classes(
            ["age"], None, 3
        ),
    )


def test_parquet_with_typed_columns_matches_numpy(spark, tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "t.parquet"
    pq.write_table(
        pa.table(
            {
                "n": pa.array([3, 1, 3, None, 1, 3]),
                "f": pa.array([1.0, 0.5, -0.0, None, float("nan"), float("-inf")]),
                "t": pa.array(["a", "b", "a", "a", None, "b"]),
                "l": pa.array([[1], [2], [], None, [1, 2], [3]]),
            }
        ),
        path,
    )
    np_eng = open_engine(path)
    sp = open_engine(path, engine="spark")
    assert sp.columns == ["n", "f", "t", "l"]
    _same_stats(
        np_eng.class_stats(["n", "f", "t"], with_rows=True),
        sp.class_stats(["n", "f", "t"], with_rows=True),
    )
    with pytest.raises(DataFormatError, match="'l' is a column of type array"):
        sp.class_sizes(["l"])


def test_float_labels_are_laid_out_as_python_writes_them(spark, tmp_path):
    """Java writes floats below 0.001 and from 10**7 on in scientific notation (``1.0E-5``),
    Python below 0.0001 and from 10**16 on (``1e-05``): Spark's labels take Python's layout,
    so a value has one label (and one hierarchy entry) on every engine."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from anonlab.data.labels import float_labels

    values = [
        1.5e-5, -2.5e-7, 1e-100, 1e-4, 0.00012, -0.00015, 0.0009, 0.001, 2.5, 1234567.5,
        12345678.5, -123456789012.25, 1e15 + 0.5, 9007199254740994.0, 1e20, 1.5e16, 1e100,
    ]  # fmt: skip
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"f": pa.array(values)}), path)
    expected = float_labels(np.array(values))
    assert expected[[0, 4, 10, 13]].tolist() == [
        "1.5e-05", "0.00012", "12345678.5", "9007199254740994.0",
    ]  # fmt: skip
    sp = open_engine(path, engine="spark").class_stats(["f"])
    assert sorted(sp.domains[0]) == sorted(expected.tolist())
    _same_stats(open_engine(path).class_stats(["f"]), sp)
    # 32-bit floats: numpy writes 1000000.5 as 1.0000005e+06, Spark and float_labels do not
    single = np.array([1000000.5, 2000000.25, 123456.7, 9.5e-5, 1.5e-5, 0.00012], np.float32)
    pq.write_table(pa.table({"f": pa.array(single)}), path)
    assert float_labels(single)[:2].tolist() == ["1000000.5", "2000000.2"]
    _same_stats(
        open_engine(path).class_stats(["f"]), open_engine(path, engine="spark").class_stats(["f"])
    )


def test_timestamps_are_labelled_in_utc_whatever_the_session_zone(spark, tmp_path):
    """A timestamp with a time zone is labelled as its instant in UTC with ``+00:00`` (as
    numpy and DuckDB label it), not in the session's time zone; a naive one as it is. A CSV
    release copies both as numpy writes them (Spark's CSV writer would write ``T`` and the
    session's zone)."""
    from anonlab.api import anonymize
    from tests.support.times import ZONED_LABELS, times_parquet

    pa = pytest.importorskip("pyarrow")
    path = times_parquet(
        tmp_path / "times.parquet",
        2,
        when=pa.timestamp("us", tz="Europe/Berlin"),
        naive=pa.timestamp("us"),
    )
    zone = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "Asia/Tokyo")
    try:
        sp = open_engine(path, engine="spark").class_stats(["when", "naive"])
        assert list(sp.domains[0]) == ZONED_LABELS
        _same_stats(open_engine(path).class_stats(["when", "naive"]), sp)
        job = {"quasi_identifiers": {"q": {}}, "models": [{"k_anonymity": {"k": 2}}]}
        anonymize(path, job, output=tmp_path / "spark.csv", engine="spark")
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)
    anonymize(path, job, output=tmp_path / "numpy.csv", engine="numpy")
    assert _fields(tmp_path / "spark.csv") == _fields(tmp_path / "numpy.csv")
    assert (tmp_path / "spark.csv").read_bytes() == (tmp_path / "numpy.csv").read_bytes()
    assert _fields(tmp_path / "spark.csv")[1] == [
        "a", "2020-01-01 12:30:05.12+00:00", "2020-01-01 12:30:05.12",
    ]  # fmt: skip


@pytest.mark.parametrize("output", ["r.parquet", "r/"])
def test_a_parquet_release_keeps_timestamps_spark_can_read_again(spark, tmp_path, output):
    """Spark wrote timestamps as INT96, which Arrow read back as nanoseconds: a Parquet
    release of a table with timestamps failed Spark's own re-check. They are written as
    microseconds (the session's setting restored), the same instants as numpy's release."""
    from anonlab.api import anonymize
    from tests.support.times import times_parquet

    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = times_parquet(
        tmp_path / "times.parquet", 2, when=pa.timestamp("us", tz="Europe/Berlin"),
        naive=pa.timestamp("us"),
    )  # fmt: skip
    job = {"quasi_identifiers": {"q": {}}, "models": [{"k_anonymity": {"k": 2}}]}
    setting = "spark.sql.parquet.outputTimestampType"
    before = spark.conf.get(setting)
    anonymize(path, job, output=f"{tmp_path}/{output}", engine="spark")
    assert spark.conf.get(setting) == before
    anonymize(path, job, output=tmp_path / "numpy.parquet", engine="numpy")
    got, want = pq.read_table(tmp_path / output), pq.read_table(tmp_path / "numpy.parquet")
    assert got.schema.field("when").type == pa.timestamp("us", tz="UTC")
    assert got.schema.field("naive").type == pa.timestamp("us")
    for name in ("when", "naive"):
        assert got.column(name).cast(pa.int64()) == want.column(name).cast(pa.int64())


def test_nested_columns_are_carried_and_copied_as_numpy_writes_them(spark, tmp_path):
    """A table with list, struct and map columns: Spark counts them for the
    identifying-column check (it refused them as attributes, so anonymize failed), carries
    them into a Parquet release and writes them to CSV as the same compact JSON as numpy."""
    from anonlab.api import anonymize
    from tests.support.nested import FIRST_ROW_JSON, nested_parquet

    pq = pytest.importorskip("pyarrow.parquet")
    path = nested_parquet(tmp_path / "nested.parquet")
    sp = open_engine(path, engine="spark")
    assert sp.distinct_counts(["visits", "address", "tags"]) == {
        "visits": 4, "address": 4, "tags": 4,
    }  # fmt: skip
    job = {
        "quasi_identifiers": {"q": {}},
        "insensitive": ["visits", "address", "tags"],  # ('address' is named like an identifier)
        "models": [{"k_anonymity": {"k": 2}}],
    }
    for suffix in (".csv", ".parquet"):
        anonymize(path, job, output=tmp_path / f"spark{suffix}", engine="spark")
        anonymize(path, job, output=tmp_path / f"numpy{suffix}", engine="numpy")
    assert _fields(tmp_path / "spark.csv") == _fields(tmp_path / "numpy.csv")
    assert (tmp_path / "spark.csv").read_bytes() == (tmp_path / "numpy.csv").read_bytes()
    assert _fields(tmp_path / "spark.csv")[1][1:] == FIRST_ROW_JSON
    got, want = pq.read_table(tmp_path / "spark.parquet"), pq.read_table(tmp_path / "numpy.parquet")
    assert got.schema.types == want.schema.types
    assert got.to_pylist() == want.to_pylist()


def test_a_quoted_field_with_a_line_break_reads_as_numpy_reads_it(spark, tmp_path):
    """A CSV file up to Spark's split size is read whole, so a quoted field may hold a line
    break (Spark reported a valid file as malformed); the release equals numpy's."""
    from anonlab.api import anonymize

    src = tmp_path / "notes.csv"
    src.write_text('q,note\na,"one\ntwo"\na,plain\nb,"say ""hi"""\nb,plain\n', encoding="utf-8")
    job = {
        "quasi_identifiers": {"q": {}},
        "insensitive": ["note"],
        "models": [{"k_anonymity": {"k": 2}}],
    }
    anonymize(src, job, output=tmp_path / "spark.csv", engine="spark")
    anonymize(src, job, output=tmp_path / "numpy.csv", engine="numpy")
    assert _fields(tmp_path / "spark.csv") == _fields(tmp_path / "numpy.csv")
    assert (tmp_path / "spark.csv").read_bytes() == (tmp_path / "numpy.csv").read_bytes()
    assert _fields(tmp_path / "spark.csv")[1] == ["a", "one\ntwo"]


@pytest.mark.parametrize("drop", [None, True])
def test_a_quote_never_closed_is_an_error_as_on_numpy(spark, tmp_path, drop):
    """Spark read the rest of a file that ends inside a quoted field as the last row's last
    value without a word (2 rows instead of 4); it is refused, plain or gzipped, with
    numpy's message, and a valid file ending in a quoted value with a line break reads."""
    from tests.support.csv_files import never_closed

    unclosed, closed = never_closed(tmp_path)
    for path in unclosed:
        with pytest.raises(DataFormatError, match="a quoted field is never closed"):
            open_engine(path, engine="spark", drop_missing=drop)
    engine = open_engine(closed, engine="spark", drop_missing=drop)
    assert engine.n_rows == 2
    assert engine.distinct_counts(["note"]) == {"note": 2}


def test_an_empty_table_is_named_as_on_numpy(spark, tmp_path):
    """A header-only file: the diagnosis names it (Spark said only "The table is empty")."""
    path = tmp_path / "ho.csv"
    path.write_text("q,note\n")
    with pytest.raises(AnonlabError, match="ho.csv' is empty: it has no rows"):
        diagnose(path, quasi_identifiers=["q"], engine="spark")


def test_nanosecond_timestamps_get_a_one_line_error_with_the_fix(spark, tmp_path):
    """pandas writes datetimes to Parquet in nanoseconds, which Spark cannot read: the error
    says how to write them instead and which engines read them."""
    pd = pytest.importorskip("pandas")
    path = tmp_path / "ns.parquet"
    moments = pd.to_datetime(["2020-01-01 00:00:00.123456789", "2021-01-01 00:00:00.000000000"])
    pd.DataFrame({"t": moments, "q": ["a", "b"]}).to_parquet(path)
    with pytest.raises(DataFormatError, match="nanoseconds, which Spark cannot read.*coerce"):
        open_engine(path, engine="spark")


def test_half_floats_get_a_one_line_error_with_the_fix(spark, tmp_path):
    """Spark cannot read Parquet's 16-bit floats either (numpy and DuckDB read them)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "half.parquet"
    pq.write_table(pa.table({"h": pa.array(np.array([1.5, 2.0], dtype=np.float16))}), path)
    with pytest.raises(DataFormatError, match="16-bit floats .* Spark cannot read.*float32"):
        open_engine(path, engine="spark")
    assert open_engine(path, engine="duckdb").class_stats(["h"], with_keys=True).key_labels() == [
        ("1.5",),
        ("2",),
    ]


# ---------------------------------------------------------------------- diagnosis
@pytest.mark.parametrize(
    "question",
    [
        dict(quasi_identifiers=["V", "W"], k=2),  # Q1
        dict(quasi_identifiers=["V", "W", "Y"]),  # Q2
        dict(attributes=["V", "W", "Y"], k=2),  # Q3
        dict(attributes=["V", "W", "Y"]),  # Q4
        dict(quasi_identifiers=["V", "W"], k=3, delta=0.2),  # Q5
        dict(quasi_identifiers=["V", "W"], delta=0.2, list_rows=True),  # Q6
        dict(attributes=["V", "W", "Y"], k=3, delta=0.2),  # Q7
        dict(attributes=["V", "W", "Y"], delta=0.2),  # Q8
        dict(quasi_identifiers=["V", "W"], k=3, find_delta=True, list_rows=True),  # Q9
        dict(attributes=["V", "W", "Y"], k=3, find_delta=True),  # Q10
        dict(quasi_identifiers=["V", "W"], find_delta=True, max_k=6),  # Q11
        dict(attributes=["V", "W", "Y"], find_delta=True, max_k=4),  # Q12
    ],
)
def test_the_twelve_questions_agree_with_numpy(spark, figure2, question):
    sp = get_engine("spark", figure2, spark=spark)
    assert diagnose(sp, **question).to_dict() == diagnose(figure2, **question).to_dict()


def test_diagnose_a_csv_path_on_spark(spark, tmp_path):
    path = _write_csv(tmp_path / "r.csv", FIGURE2_ROWS, FIG2)
    ans = diagnose(path, engine="spark", attributes=FIG2, k=3)
    assert ans.to_dict() == diagnose(path, attributes=FIG2, k=3).to_dict()
    assert ans.evaluations == 13  # the paper's Figure 2 instance


# ---------------------------------------------------------------------- bad input
def test_bad_input_gives_clear_errors(spark, tmp_path, figure2):
    with pytest.raises(InputError, match="does not exist"):
        open_engine(tmp_path / "nope.csv", engine="spark")
    with pytest.raises(InputError, match="is a directory"):
        get_engine("spark", _as_source(tmp_path), spark=spark)
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a,b\n1,2\n3\n")
    with pytest.raises(DataFormatError, match=r"row 2 \(line 3\) has 1 field instead of 2"):
        open_engine(ragged, engine="spark").class_sizes(["a"])
    sp = get_engine("spark", figure2, spark=spark)
    with pytest.raises(ColumnNotFoundError, match="(?i)did you mean 'V'"):
        sp.class_sizes(["v"])
    with pytest.raises(HierarchyError, match="Value 'z'"):
        get_engine(
            "spark",
            _table(),
            hierarchies={"a": taxonomy_hierarchy({"x": ["*"], "y": ["*"]}, attribute="a")},
            spark=spark,
        )
    with pytest.raises(InputError, match="takes a path"):
        get_engine("spark", [1, 2], spark=spark)


def _as_source(folder: Path):
    from anonlab.data.source import FileSource

    return FileSource(folder, format="csv")


# ---------------------------------------------------------------------- release protocol
def test_frequency_set_and_distinct_counts_equal_numpy(spark, figure2):
    sp = get_engine("spark", figure2, spark=spark)
    freq = sp.frequency_set(["W", "Z", "V"])
    assert int(freq.weights.sum()) == 12
    expected = open_engine(figure2).class_stats(["W", "Z", "V"])
    got = get_engine("numpy", freq).class_stats(["W", "Z", "V"])
    assert got.canonical() == expected.canonical()
    assert sp.distinct_counts(["V", "Y"]) == {"V": 3, "Y": 2}


def test_a_csv_release_with_removed_rows_is_written_in_one_pass(spark, tmp_path):
    """Spark's CSV parts do not tell their rows: with rows removed, ``write_release`` leaves
    the count to the re-check (None) instead of running the release a second time."""
    from anonlab import flat_hierarchy
    from anonlab.engines.base import ReleasePlan

    pd = pytest.importorskip("pandas")
    src = tmp_path / "d.parquet"
    pd.DataFrame({"g": list("aabbc"), "w": [1, 2, 3, 4, 5]}).to_parquet(src, index=False)
    eng = open_engine(src, engine="spark")
    h = {"g": flat_hierarchy(list("abc"))}
    removed = ReleasePlan(("g", "w"), ("g",), (0,), h, suppressed=(("c",),))
    assert eng.write_release(removed, tmp_path / "r.csv", fmt="csv") is None
    assert _fields(tmp_path / "r.csv")[1:] == [["a", "1"], ["a", "2"], ["b", "3"], ["b", "4"]]
    stats = eng.release_stats(tmp_path / "r.csv", fmt="csv", quasi_identifiers=["g"])
    assert stats.n_rows == 4
    masked = ReleasePlan(("g", "w"), ("g",), (0,), h, (("c",),), mask_suppressed=True)
    assert eng.write_release(masked, tmp_path / "m.csv", fmt="csv") == 5
    assert eng.write_release(removed, tmp_path / "r.parquet", fmt="parquet") == 4


def test_a_column_without_a_name_heads_the_release_as_numpy_writes_it(spark, tmp_path):
    """A file whose lines end with the separator has a column named '' (numpy and Spark
    read it; DuckDB refuses it): its name is written as "" (Spark wrote nothing)."""
    from anonlab.api import anonymize

    src = tmp_path / "trailing.csv"
    src.write_text("q,s,\n" + "".join(f"{'ab'[i % 2]},{i % 3},\n" for i in range(8)))
    job = {"quasi_identifiers": {"q": {}}, "models": [{"k_anonymity": {"k": 2}}]}
    anonymize(src, job, output=tmp_path / "spark.csv", engine="spark")
    anonymize(src, job, output=tmp_path / "numpy.csv", engine="numpy")
    assert (tmp_path / "spark.csv").read_bytes() == (tmp_path / "numpy.csv").read_bytes()
    assert (tmp_path / "spark.csv").read_text().startswith('q,s,""\n')


def _fields(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_anonymize_on_spark_writes_the_numpy_release(spark, tmp_path, suffix):
    from anonlab.api import anonymize

    data = ROOT / "src/anonlab/datasets/adult.csv.gz"
    job = ROOT / "examples/adult_k5.yaml"
    ours = anonymize(data, job, output=tmp_path / f"spark{suffix}", engine="spark")
    theirs = anonymize(data, job, output=tmp_path / f"numpy{suffix}", engine="numpy")
    assert ours.transformation == theirs.transformation
    if suffix == ".csv":  # the same fields, quoted alike: the same bytes
        assert _fields(tmp_path / "spark.csv") == _fields(tmp_path / "numpy.csv")
        assert (tmp_path / "spark.csv").read_bytes() == (tmp_path / "numpy.csv").read_bytes()
    else:
        pq = pytest.importorskip("pyarrow.parquet")
        a = pq.read_table(tmp_path / "spark.parquet")
        b = pq.read_table(tmp_path / "numpy.parquet")
        assert a.column_names == b.column_names and a.to_pylist() == b.to_pylist()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"spark{suffix}", f"numpy{suffix}"]
    )


def test_anonymize_on_spark_writes_a_parquet_dataset_folder(spark, tmp_path):
    """An output ending with '/': Spark's part files are the release (nothing joined by the
    driver), read back and re-checked before the folder is renamed into place; the same rows
    in the same order as numpy's file."""
    from anonlab.api import anonymize

    pq = pytest.importorskip("pyarrow.parquet")
    data = ROOT / "src/anonlab/datasets/adult.csv.gz"
    job = ROOT / "examples/adult_k5.yaml"
    folder = f"{tmp_path / 'release'}/"
    ours = anonymize(data, job, output=folder, engine="spark")
    theirs = anonymize(data, job, output=tmp_path / "numpy.parquet", engine="numpy")
    assert ours.transformation == theirs.transformation and ours.output == folder
    parts = sorted((tmp_path / "release").glob("part-*.parquet"))
    assert parts  # the parts as Spark wrote them
    rows = [r for part in parts for r in pq.read_table(part).to_pylist()]
    assert rows == pq.read_table(tmp_path / "numpy.parquet").to_pylist()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["numpy.parquet", "release"]
    with pytest.raises(InputError, match="exists"):  # never written over
        anonymize(data, job, output=folder, engine="spark")
    assert sorted((tmp_path / "release").glob("part-*.parquet")) == parts


def test_a_release_folder_that_fails_the_recheck_is_not_kept(spark, tmp_path, monkeypatch):
    from anonlab.api import anonymize
    from anonlab.exceptions import PrivacyCheckError
    from anonlab.jobs import frequency_set

    def fail(*args, **kwargs):
        raise PrivacyCheckError("the written release failed the re-check")

    monkeypatch.setattr(frequency_set, "recheck_written", fail)
    data = ROOT / "src/anonlab/datasets/adult.csv.gz"
    with pytest.raises(PrivacyCheckError):
        anonymize(data, ROOT / "examples/adult_k5.yaml", output=f"{tmp_path / 'r'}/",
                  engine="spark")  # fmt: skip
    assert list(tmp_path.iterdir()) == []


def test_a_float_column_is_copied_into_a_csv_release_as_numpy_writes_it(spark, tmp_path):
    from anonlab.api import anonymize

    pd = pytest.importorskip("pandas")
    src = tmp_path / "data.parquet"
    w = [1.0, 2.5, float("nan"), None, -0.0, float("inf")] * 2
    pd.DataFrame({"q": ["a", "b"] * 6, "w": w}).to_parquet(src, index=False)
    job = {"quasi_identifiers": {"q": {}}, "models": [{"k_anonymity": {"k": 2}}]}
    anonymize(src, job, output=tmp_path / "spark.csv", engine="spark")
    anonymize(src, job, output=tmp_path / "numpy.csv", engine="numpy")
    rows = _fields(tmp_path / "spark.csv")
    assert rows == _fields(tmp_path / "numpy.csv")
    assert [r[1] for r in rows[1:7]] == ["1", "2.5", "", "", "0", "inf"]


# ---------------------------------------------------------------------- command line
def test_cli_diagnose_on_spark_answers_as_numpy(spark, tmp_path):
    import json

    from typer.testing import CliRunner

    from anonlab.cli import app

    path = str(_write_csv(tmp_path / "r.csv", FIGURE2_ROWS, FIG2))
    runner = CliRunner()
    numpy = runner.invoke(app, ["diagnose", path, "--k", "3", "--json"])
    master = spark.sparkContext.master
    ours = runner.invoke(
        app, ["diagnose", path, "--k", "3", "--json", "--engine", "spark", "--spark-master", master]
    )
    assert ours.exit_code == 0, ours.output
    assert json.loads(ours.stdout) == json.loads(numpy.stdout)
    wrong = runner.invoke(app, ["diagnose", path, "--k", "3", "--spark-master", master])
    assert wrong.exit_code == 2 and "--engine spark" in wrong.output


def test_cli_anonymize_and_check_take_the_spark_master(spark, tmp_path):
    from typer.testing import CliRunner

    from anonlab.cli import app

    data = str(ROOT / "src/anonlab/datasets/adult.csv.gz")
    job = str(ROOT / "examples/adult_k5.yaml")
    master = spark.sparkContext.master
    runner = CliRunner()
    out = tmp_path / "released.parquet"
    done = runner.invoke(
        app,
        ["anonymize", data, "--job", job, "-o", str(out), "--engine", "spark",
         "--spark-master", master, "--json"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert out.is_file()
    folder = tmp_path / "released"
    done = runner.invoke(
        app,
        ["anonymize", data, "--job", job, "-o", f"{folder}/", "--engine", "spark",
         "--spark-master", master, "--json"],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    assert any(folder.glob("part-*.parquet"))
    checked = runner.invoke(
        app, ["check", data, "--job", job, "--engine", "spark", "--spark-master", master]
    )
    assert checked.exit_code == 0, checked.output
    for command in (["anonymize", data, "--job", job, "-o", str(tmp_path / "x.csv")],
                    ["check", data, "--job", job]):  # fmt: skip
        wrong = runner.invoke(app, [*command, "--spark-master", master])
        assert wrong.exit_code == 2 and "--engine spark" in wrong.output
    assert not (tmp_path / "x.csv").exists()


def test_distinct_counts_and_row_count_of_typed_parquet_equal_numpy(spark, tmp_path):
    """Each column's distinct values on its own type, made text as the questions see them
    (NaN and null one value, 1.0 the text 1), and the rows counted without a question having
    read them."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "t.parquet"
    pq.write_table(
        pa.table(
            {
                "n": pa.array([3, 1, 3, None, 1, 3, 7]),
                "f": pa.array([0.0, 1.0, 1.0, None, float("nan"), 2.5, 0.0]),
                "t": pa.array(["a", "b", "a", "a", None, "b", "c"]),
            }
        ),
        path,
    )
    sp = open_engine(path, engine="spark")
    assert sp.n_rows == 7
    expected = open_engine(path).distinct_counts(["n", "f", "t"])
    assert sp.distinct_counts(["n", "f", "t"]) == expected == {"n": 4, "f": 4, "t": 4}


#: ("a", null) is a class of one row, suppressed; (null, "a") has the same hash of its
#: labels (Spark's xxhash64 skips nulls) and is kept
SUPPRESSION_ROWS = [
    ("a", None, 1),
    (None, "a", 2),
    (None, "a", 2),
    ("b", "c", 4),
    ("b", "c", 4),
    ("c", "b", 6),
    ("c", "b", 6),
    ("b", "b", 8),
    ("b", "b", 8),
]


@pytest.mark.parametrize("mask", [False, True])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_suppressed_classes_removed_or_masked_as_numpy(spark, tmp_path, mask, suffix):
    from anonlab.api import anonymize

    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    src = tmp_path / "data.parquet"
    q1, q2, n = zip(*SUPPRESSION_ROWS)
    pq.write_table(pa.table({"q1": list(q1), "q2": list(q2), "n": pa.array(n, pa.int64())}), src)
    job = {
        "quasi_identifiers": {"q1": {}, "q2": {}},
        "insensitive": ["n"],
        "models": [{"k_anonymity": {"k": 2}}],
        "suppression": 0.2,
        "metric": "loss",
        "output": {"suppressed": "mask" if mask else "remove"},
    }
    ours = anonymize(src, job, output=tmp_path / f"spark{suffix}", engine="spark")
    theirs = anonymize(src, job, output=tmp_path / f"numpy{suffix}", engine="numpy")
    assert ours.transformation == theirs.transformation == {"q1": 0, "q2": 0}
    assert ours.suppressed_rows == theirs.suppressed_rows == 1
    if suffix == ".csv":
        rows = _fields(tmp_path / "spark.csv")
        assert rows == _fields(tmp_path / "numpy.csv")
    else:
        table = pq.read_table(tmp_path / "spark.parquet")
        assert table.to_pylist() == pq.read_table(tmp_path / "numpy.parquet").to_pylist()
        # text is plain text (not dictionaries) and numbers stay numbers
        assert [str(t) for t in table.schema.types] == ["string", "string", "int64"]
        rows = [[str(v) for v in r.values()] for r in table.to_pylist()]
    kept = {r[-1] for r in rows}
    assert "2" in kept and ("1" in kept) == mask


@pytest.mark.parametrize("screen", [None, 3])
def test_nested_columns_are_never_attributes_and_identify_as_on_numpy(
    spark, tmp_path, monkeypatch, screen
):
    """Spark leaves list, struct and map columns out of a diagnosis's default attributes (it
    failed on them), refuses them as attributes and flags them as identifying, as numpy;
    also when the check first screens a few records (``screen``)."""
    from anonlab.diagnosis import risk
    from tests.support.nested import nested_roles, unique_nested_parquet

    if screen is not None:
        monkeypatch.setattr(risk, "SCREEN_ROWS", screen)

    path = unique_nested_parquet(tmp_path / "nested.parquet")
    assert nested_roles(path, "spark") == nested_roles(path, "numpy")
    assert nested_roles(path, "spark")[0] == ["q"]


@pytest.mark.parametrize("screen", [None, 300])
def test_identifying_columns_as_on_numpy(spark, tmp_path, monkeypatch, screen):
    """Spark's counts and first records give the identifying-column check numpy's answer,
    with the table in memory or only its first records (``screen``)."""
    from anonlab.diagnosis import risk
    from tests.support.identifying import PEOPLE_FOUND, people_table, write_csv

    if screen is not None:
        monkeypatch.setattr(risk, "SCREEN_ROWS", screen)
    path = write_csv(tmp_path / "people.csv", people_table())
    sp = open_engine(path, engine="spark")
    assert risk.identifying_columns(sp, quasi_identifiers=["age", "edu"]) == PEOPLE_FOUND
    first = sp.head(["age", "hours"], 5)
    assert first.n_rows == 5 and first.names == ["age", "hours"]
    assert risk.identifying_columns(open_engine(path), quasi_identifiers=["age", "edu"]) == (
        PEOPLE_FOUND
    )


@pytest.mark.parametrize("name", ["latin-1", "latin1", "ISO-8859-1", "utf-16"])
def test_every_name_of_an_encoding_spark_reads_reads_as_numpy(spark, tmp_path, name):
    """Spark 4 takes seven charset names (``iso-8859-1``, not ``latin-1``); any of Python's
    names for them works, and another encoding is refused with the list."""
    path = tmp_path / "text.csv"
    codec = "latin-1" if name != "utf-16" else "utf-16"
    path.write_bytes("a,b\nxé,1\ny,1\nxé,2\n".encode(codec))
    opts = CsvOptions(encoding=name)
    ours = open_engine(path, engine="spark", csv_options=opts).class_stats(["a"], with_keys=True)
    assert ours.key_labels() == open_engine(path, csv_options=opts).class_stats(
        ["a"], with_keys=True
    ).key_labels() == [("xé",), ("y",)]  # fmt: skip
    with pytest.raises(DataFormatError, match="spark engine reads CSV text in utf-8, iso-8859-1"):
        open_engine(path, engine="spark", csv_options=CsvOptions(encoding="cp1252"))
