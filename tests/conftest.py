"""Shared fixtures (the paper's Figure 2 instance, the location of ../shared, a Spark
session) and the Hypothesis profiles.

Profiles: ``ci`` (the whole suite: 200 examples per property, no deadline: timings are the
benchmarks' business) and ``dev`` (the development loop: 20 examples). A run that deselects
the slow tests (``-m "not slow"``) loads ``dev``, any other run ``ci``; the environment
variable ``HYPOTHESIS_PROFILE`` or Hypothesis's option ``--hypothesis-profile`` choose one
explicitly. Tests whose examples are costly bound their number with
:func:`tests.support.profiles.costly`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from anonlab import EncodedTable

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ANONLAB_SHARED", ROOT.parent / "shared"))

settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", settings.get_profile("ci"), max_examples=20)


def _profile(config: pytest.Config) -> str | None:
    """The Hypothesis profile this run loads (None: the one ``--hypothesis-profile`` named)."""
    if config.getoption("hypothesis_profile", None):
        return None
    if os.environ.get("HYPOTHESIS_PROFILE"):
        return os.environ["HYPOTHESIS_PROFILE"]
    words = (config.getoption("markexpr", "") or "").split()
    return "dev" if "not slow" in " ".join(words) else "ci"


def pytest_configure(config: pytest.Config) -> None:
    name = _profile(config)
    if name is not None:
        settings.load_profile(name)


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


def _uses_spark(item: pytest.Item) -> bool:
    """Whether the test starts Spark: it asks for the ``spark`` fixture, or it runs on the
    ``"spark"`` engine of a parametrized test (which then asks for the fixture)."""
    if "spark" in getattr(item, "fixturenames", ()):
        return True
    callspec = getattr(item, "callspec", None)
    return callspec is not None and "spark" in callspec.params.values()


@pytest.hookimpl(tryfirst=True)  # (before ``-m`` deselects by marker)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every Spark test is ``slow``; without ../shared, the ``shared`` tests are skipped."""
    for item in items:
        if _uses_spark(item):
            item.add_marker(pytest.mark.slow)
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
