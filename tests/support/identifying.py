"""A table for the identifying-column check's screen (``diagnosis.risk.SCREEN_ROWS``)."""

from __future__ import annotations

from pathlib import Path

import pytest


def screened_parquet(path: Path) -> Path:
    """12 rows: ``q`` (two values), ``uid`` all different, ``late`` different but for its
    last row (a repeat of the first), ``early`` two values."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    late = [f"l{i}" for i in range(11)] + ["l0"]
    pq.write_table(
        pa.table(
            {
                "q": ["a", "b"] * 6,
                "uid": [f"u{i}" for i in range(12)],
                "late": late,
                "early": ["x", "y"] * 6,
            }
        ),
        path,
    )
    return path


#: What the check says of ``uid``, the one identifying column.
UNIQUE_UID = ("uid", "it holds a different value in each of the 12 rows")
