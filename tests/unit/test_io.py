"""Reading CSV, Parquet and frames into the encoded table."""

from __future__ import annotations

import numpy as np
import pytest

from anonlab import CsvOptions, EncodedTable, Schema, read_table
from anonlab.exceptions import ColumnNotFoundError, DataFormatError, InputError


def test_csv_with_separator_quotes_and_missing_markers(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text('a;b;c\n1;"x;y";?\n2;;z\n1;"x;y";z\n')
    t = read_table(p, csv_options=CsvOptions(separator=";"))
    assert t.names == ["a", "b", "c"]
    assert t.n_rows == 3
    assert list(t["b"].labels()) == ["x;y", None, "x;y"]
    assert list(t["c"].labels()) == [None, "z", "z"]
    # a null is a value of its own, never dropped
    assert t["c"].null_code is not None


def test_custom_markers_and_strip(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("1, NA, x\n2, ?, y\n")
    t = read_table(
        p,
        csv_options=CsvOptions(header=False, strip=True, na_values=("NA",), names=("a", "b", "c")),
    )
    assert list(t["b"].labels()) == [None, "?"]
    assert list(t["c"].labels()) == ["x", "y"]


def test_no_header_names_columns(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("1,2\n3,4\n")
    assert read_table(p, csv_options=CsvOptions(header=False)).names == ["c0", "c1"]


def test_encoding(tmp_path):
    p = tmp_path / "d.csv"
    p.write_bytes("name\ncafé\n".encode("latin-1"))
    with pytest.raises(DataFormatError, match="utf-8"):
        read_table(p)
    t = read_table(p, csv_options=CsvOptions(encoding="latin-1"))
    assert list(t["name"].labels()) == ["café"]


def test_ragged_rows_are_an_error(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("a,b\n1,2\n3\n")  # the row and line named, as on every engine
    with pytest.raises(DataFormatError, match=r"row 2 \(line 3\) has 1 field instead of 2"):
        read_table(p)
    p.write_text("a,b\n1,2\n3,4,5\n")
    with pytest.raises(DataFormatError):
        read_table(p)


def test_empty_inputs(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("")
    with pytest.raises(DataFormatError, match="empty"):
        read_table(p)
    p.write_text("a,b\n")
    with pytest.raises(DataFormatError, match="no rows"):
        read_table(p)
    with pytest.raises(InputError, match="does not exist"):
        read_table(tmp_path / "missing.csv")


def test_parquet_pandas_polars_arrow_agree(tmp_path):
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    df = pd.DataFrame(
        {"age": [30, 31, 30, None], "sex": ["F", "M", "F", None]}, index=[10, 5, 7, 1]
    )  # index labels are ignored: rows are positions
    t1 = read_table(df)
    t2 = read_table(pl.from_pandas(df))
    t3 = read_table(pa.Table.from_pandas(df, preserve_index=False))
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp_path / "d.parquet")
    t4 = read_table(tmp_path / "d.parquet")
    for t in (t1, t2, t3, t4):
        assert t.n_rows == 4
        assert list(t["sex"].labels()) == ["F", "M", "F", None]
        assert [None if v is None else float(v) for v in t["age"].labels()] == [30, 31, 30, None]


def test_columns_and_unknown_column(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("age,sex\n1,F\n")
    assert read_table(p, columns=["sex"]).names == ["sex"]
    with pytest.raises(ColumnNotFoundError, match="Did you mean 'age'"):
        read_table(p, columns=["agee"])


def test_a_column_differing_in_case_or_spaces_is_the_one_suggested(tmp_path):
    # 'age' suggested 'race' (the closer spelling) beside the column 'AGE'
    p = tmp_path / "d.csv"
    p.write_text("AGE,race, sex \n1,x,F\n")
    with pytest.raises(ColumnNotFoundError, match="Did you mean 'AGE'"):
        read_table(p, columns=["age"])
    with pytest.raises(ColumnNotFoundError, match="Did you mean ' sex '"):
        read_table(p, columns=["sex"])


def test_encoded_table_helpers():
    t = EncodedTable.from_columns(
        {"a": ["x", None, "y", "x"], "b": [1, 2, 2, np.nan]},
        schema=Schema.from_lists(quasi_identifiers=["a"], sensitive=["b"]),
    )
    assert t.candidate_attributes() == ["a"]
    assert t.drop_nulls().n_rows == 2
    assert list(t.take([0, 2])["a"].labels()) == ["x", "y"]
    assert t["a"].cardinality == 3


def test_numbers_sort_naturally():
    t = EncodedTable.from_columns({"age": ["10", "9", "100"]})
    assert list(t["age"].categories) == ["9", "10", "100"]


def test_label_columns_decode_the_rows_taken_and_mask_once_read():
    """The released columns decode each column when first read (then keep it): the rows
    taken, a null as None, and ``*`` in the masked columns where a row is not kept."""
    from anonlab.data.table import EncodedColumn, LabelColumns

    a = EncodedColumn("a", np.array([0, 1, 2, 1], dtype=np.int32), np.array(["x", "y", None]))
    b = EncodedColumn("b", np.array([1, 0, 0, 1], dtype=np.int32), np.array(["p", "q"]))
    taken = LabelColumns([a, b], np.array([0, 2, 3]))
    assert list(taken) == ["a", "b"] and len(taken) == 2
    assert taken["a"].tolist() == ["x", None, "y"]
    assert taken["b"].tolist() == ["q", "p", "q"]
    assert taken["a"] is taken["a"]  # decoded once
    keep = np.array([True, False, True, False])
    masked = LabelColumns([a, b], masked=["a"], keep=keep)
    assert masked["a"].tolist() == ["x", "*", None, "*"]
    assert masked["b"].tolist() == ["q", "p", "p", "q"]
    with pytest.raises(KeyError):
        masked["c"]


@pytest.mark.parametrize("separator", [",", ";", "\t", "§"])
def test_csv_release_quotes_only_where_it_must(tmp_path, separator):
    import pyarrow as pa
    import pyarrow.csv as pcsv

    from anonlab.io.writers import write_table

    values = ["x", "", None, "a,b", "a;b", 'q"q', "n\nl", "r\rr", " sp ", "t\tb", "é§ü", "#"]
    out = write_table(
        {"v": np.array(values, dtype=object), f"odd{separator}name": np.array(["1"] * 12)},
        tmp_path / "r.csv",
        separator=separator,
    )
    lines = out.read_bytes().decode().split("\n")
    must = {separator, '"', "\n", "\r"}
    assert lines[0] == f'v{separator}"odd{separator}name"'

    def field(v):
        if v is None:
            return ""
        return '"' + v.replace('"', '""') + '"' if v == "" or must & set(v) else v

    assert out.read_bytes().decode() == "".join(
        f"{h}\n" for h in [lines[0], *(f"{field(v)}{separator}1" for v in values)]
    )
    if not separator.isascii():
        return  # Arrow reads ASCII separators only
    back = pcsv.read_csv(
        out,
        parse_options=pcsv.ParseOptions(delimiter=separator, newlines_in_values=True),
        convert_options=pcsv.ConvertOptions(
            column_types={"v": pa.string()},
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
        ),
    )
    assert back.column("v").to_pylist() == values  # a null and an empty text stay apart


def test_quoted_line_breaks_beyond_the_first_block_of_the_file(tmp_path):
    # Arrow splits a CSV file in blocks of 1 MB and assumed no line break inside a value
    rows = [("a", f"first {i}\nsecond line of note {i}") if i % 3 == 0 else ("b", f"plain {i}")
            for i in range(60_000)]  # fmt: skip
    path = tmp_path / "notes.csv"
    path.write_text("q,note\n" + "".join(f'{q},"{note}"\n' for q, note in rows), encoding="utf-8")
    assert path.stat().st_size > 2**20
    table = read_table(path)
    assert table.n_rows == len(rows)
    notes = table.column("note")
    assert notes.categories[notes.codes[-3]] == rows[-3][1]


def test_an_unclosed_quote_or_an_overlong_row_is_named(tmp_path):
    unclosed = tmp_path / "unclosed.csv"
    unclosed.write_text("q,note\n" + "a,x\n" * 300_000 + 'a,"never closed\n' + "b,y\n" * 800_000)
    long_row = tmp_path / "long.csv"
    long_row.write_text('q,note\na,"' + "x" * 3_000_000 + '"\nb,y\n')
    for path in (unclosed, long_row):
        with pytest.raises(DataFormatError, match="a quoted field is never closed, or a row is"):
            read_table(path)


def test_a_quote_never_closed_near_the_end_is_an_error(tmp_path):
    # Arrow reads the rest of the file as one value; DuckDB refuses the file
    from tests.support.csv_files import never_closed

    unclosed, closed = never_closed(tmp_path)
    for path in unclosed:
        with pytest.raises(DataFormatError, match="a quoted field is never closed"):
            read_table(path)
    assert read_table(closed).column("note").categories.tolist() == ["and\nthese", "two\nlines"]
