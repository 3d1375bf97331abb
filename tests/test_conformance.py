"""Every registered algorithm passes the conformance suite (anonlab.testing)."""

from __future__ import annotations

import pytest

from anonlab.algorithms import ALGORITHMS
from anonlab.testing import CHECKS, check_anonymizer


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_registered_algorithm_conforms(name, check):
    check(ALGORITHMS[name])


def test_check_anonymizer_runs_every_check():
    check_anonymizer("optimal")
