"""Every registered algorithm passes the conformance suite (anonlab.testing)."""

from __future__ import annotations

import numpy as np
import pytest

from anonlab.algorithms import ALGORITHMS
from anonlab.models.l_diversity import DistinctLDiversity
from anonlab.release.problem import Problem
from anonlab.testing import (
    CHECKS,
    ENGINES,
    check_anonymizer,
    check_engine,
    check_l_diversity,
    check_suppression_limit,
)


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


# ------------------------------------------------ the checks catch a broken algorithm
def test_the_suppression_check_catches_a_limit_read_wrong(monkeypatch):
    """An algorithm (and its verifier) that read the limit as every row suppress the six
    outliers; the check counts the rows missing from the file against the job's limit."""
    real = Problem.__post_init__

    def every_row(self):
        real(self)
        object.__setattr__(self, "max_suppressed", self.n_rows)

    monkeypatch.setattr(Problem, "__post_init__", every_row)
    with pytest.raises(AssertionError, match="more than the suppression limit of 3"):
        check_suppression_limit(ALGORITHMS["optimal"])


@pytest.mark.parametrize("name", ["optimal", "privacyfrost2"])
def test_the_l_diversity_check_catches_a_judge_that_always_passes(monkeypatch, name):
    """A distinct l-diversity that passes every class (for the algorithm and its verifier):
    the check counts each written class's diseases itself."""
    monkeypatch.setattr(
        DistinctLDiversity, "class_ok", lambda self, stats: np.ones(len(stats.sizes), bool)
    )
    with pytest.raises(AssertionError, match="fewer than l = 2"):
        check_l_diversity(ALGORITHMS[name])
