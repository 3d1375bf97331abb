"""A Parquet file with list, struct and map columns for the engines' release tests."""

from __future__ import annotations

from pathlib import Path

#: The first released row's nested values as every engine writes them to CSV.
FIRST_ROW_JSON = ["[1,2]", '{"x":1,"y":"é"}', '{"a":1}']


def nested_parquet(path: Path) -> Path:
    """Write ``q`` (``a a b b c c``, to group on) and a list, a struct and a map column,
    each with 4 distinct values (none identifies a row)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "q": pa.array(list("aabbcc")),
            "visits": pa.array([[1, 2], [], None, [3], [3], [1, 2]]),
            "address": pa.array(
                [{"x": 1, "y": "é"}, {"x": 2, "y": None}, None] + [{"x": 3, "y": "z"}] * 3
            ),
            "tags": pa.array(
                [[("a", 1)], [("b", 2), ("c", 3)], None, [], [], [("a", 1)]],
                pa.map_(pa.string(), pa.int64()),
            ),
        }
    )
    pq.write_table(table, path)
    return path


def nested_roles(path: Path, engine: str) -> tuple[list[str], str, list[str]]:
    """How an engine treats the list, struct and map columns of ``path`` (a file of
    :func:`nested_parquet`'s columns, each nested one a different value in every row):
    the attributes a diagnosis takes by default, the error when one is asked for as an
    attribute (its words before the type's name) and the columns an ``anonymize`` refuses
    to release undeclared, for they identify people."""
    import pytest

    import anonlab
    from anonlab.exceptions import DataFormatError, InputError

    attributes = anonlab.diagnose(str(path), engine=engine, k=2).to_dict()["attributes"]
    with pytest.raises(DataFormatError) as err:
        anonlab.diagnose(str(path), engine=engine, attributes=["q", "visits"])
    job = {"quasi_identifiers": {"q": {}}, "models": [{"k_anonymity": {"k": 2}}]}
    out = path.with_name(f"{engine}.csv")
    with pytest.raises(InputError) as refused:
        anonlab.anonymize(str(path), job, output=out, engine=engine)
    assert not out.exists()
    flagged = sorted(line.split("'")[1] for line in str(refused.value).splitlines()[1:-1])
    return attributes, str(err.value).split(" of type ")[0], flagged  # (each engine's types)


def unique_nested_parquet(path: Path) -> Path:
    """Like :func:`nested_parquet`, each nested column a different value in every row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "q": pa.array(list("aabbcc")),
            "visits": pa.array([[i, i + 1] for i in range(6)]),
            "address": pa.array([{"x": i, "y": "é"} for i in range(6)]),
            "tags": pa.array([[("a", i)] for i in range(6)], pa.map_(pa.string(), pa.int64())),
        }
    )
    pq.write_table(table, path)
    return path
