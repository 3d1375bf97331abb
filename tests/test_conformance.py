"""Every registered algorithm passes the conformance suite (anonlab.testing)."""

from __future__ import annotations

import pytest

from anonlab.algorithms import ALGORITHMS
from anonlab.testing import CHECKS, ENGINES, check_anonymizer, check_engine


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_registered_algorithm_conforms(name, check):
    check(ALGORITHMS[name])


@pytest.mark.parametrize("engine", ENGINES)  # (the Spark runs are slow: tests/conftest.py)
@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_registered_algorithm_runs_on_every_engine(request, name, engine):
    """The engine check on numpy, DuckDB and Spark (skipped without pyspark or Java)."""
    options = {"spark": request.getfixturevalue("spark")} if engine == "spark" else None
    check_engine(ALGORITHMS[name], engine, options)


def test_check_anonymizer_runs_every_check():
    check_anonymizer("optimal")
