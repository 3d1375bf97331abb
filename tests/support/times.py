"""A Parquet file of timestamps for the engines' label tests."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

#: Two moments and a null: 12:30:05.12 (a fraction of a second) and a midnight.
MOMENTS = [dt.datetime(2020, 1, 1, 12, 30, 5, 120000), dt.datetime(2021, 6, 1), None]

#: Their labels as timestamps with a time zone (each moment read as UTC).
ZONED_LABELS = ["2020-01-01 12:30:05.12+00:00", "2021-06-01 00:00:00+00:00", None]


def times_parquet(path: Path, repeat: int, **types: Any) -> Path:
    """Write ``MOMENTS * repeat`` as one column per Arrow type of ``types`` (name: type;
    a time type takes the moments' times), and ``q`` (``a a b b c c ...``) to group on."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    moments = MOMENTS * repeat
    columns = {"q": pa.array([chr(ord("a") + i // 2) for i in range(len(moments))])}
    for name, kind in types.items():
        values = [m and m.time() for m in moments] if pa.types.is_time(kind) else moments
        columns[name] = pa.array(values, kind)
    pq.write_table(pa.table(columns), path)
    return path
