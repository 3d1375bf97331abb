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
