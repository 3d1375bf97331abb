"""Shared fixtures: the paper's Figure 2 instance and the location of ../shared."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from anonlab import EncodedTable

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ANONLAB_SHARED", ROOT.parent / "shared"))

FIGURE2_ROWS = [
    ("1", "A", "1", "a", "*"),
    ("1", "A", "1", "a", "*"),
    ("2", "A", "1", "b", "*"),
    ("2", "B", "1", "b", "+"),
    ("2", "B", "1", "a", "+"),
    ("3", "B", "1", "a", "+"),
    ("3", "A", "2", "b", "*"),
    ("3", "A", "2", "b", "*"),
    ("3", "A", "2", "a", "*"),
    ("3", "B", "2", "a", "+"),
    ("3", "B", "2", "b", "+"),
    ("3", "B", "2", "b", "+"),
]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if SHARED.is_dir():
        return
    skip = pytest.mark.skip(reason=f"needs ../shared (not found at {SHARED})")
    for item in items:
        if "shared" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def figure2() -> EncodedTable:
    """Instance r of R(V, W, X, Y, Z), Figure 2 of the Diagnosis Centre paper."""
    return EncodedTable.from_rows(FIGURE2_ROWS, ["V", "W", "X", "Y", "Z"])


@pytest.fixture(scope="session")
def shared() -> Path:
    """Path of ../shared (tests using it are marked ``shared``)."""
    return SHARED


@pytest.fixture(scope="session")
def spark():
    """A local SparkSession shared by every Spark test (local[2]; started once, ~5 s).

    Skipped, with the reason, where pyspark or Java 17+ is missing.
    """
    pytest.importorskip("pyspark", reason="pyspark is not installed: pip install 'anonlab[spark]'")
    from anonlab.engines.spark_engine import spark_session
    from anonlab.exceptions import OptionalDependencyError

    try:
        session = spark_session()
    except OptionalDependencyError as exc:  # no Java, or one too old to start Spark
        pytest.skip(str(exc))
    yield session
    session.stop()
