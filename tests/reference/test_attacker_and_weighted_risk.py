"""Attacker models (El Emam 2013, ch. 13; ARX's RiskModelSampleSummary) and the
Benedetti-Franconi individual risk (sdcMicro's indivRisk, method "approx"), by hand.

Sample: classes of sizes 1, 1, 2, 4 (8 records); population classes 3, 10, 2, 40.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from anonlab.exceptions import ParameterError
from anonlab.risk import (
    individual_risk,
    journalist_risk,
    marketer_risk,
    prosecutor_risk,
    sample_uniqueness,
    weighted_risk,
)

SAMPLE = [1, 1, 2, 4]
POPULATION = [3, 10, 2, 40]


def test_prosecutor_by_hand() -> None:
    r = prosecutor_risk(SAMPLE, threshold=3)
    # classes < 3 records: 1 + 1 + 2 = 4 of 8 records; highest 1/1; success rate 4 classes / 8
    assert (r.records_at_risk, r.highest, r.average) == (0.5, 1.0, 0.5)


def test_journalist_against_a_population_by_hand() -> None:
    r = journalist_risk(SAMPLE, POPULATION, threshold=3)
    # population classes < 3: only the class of 2 (2 sample records) -> 2/8
    assert r.records_at_risk == 0.25
    assert r.highest == 0.5  # 1 / min F = 1/2
    # max(u / sum F = 4/55, sum f/F / n = (1/3 + 1/10 + 1 + 1/10) / 8)
    assert r.average == pytest.approx(max(4 / 55, (1 / 3 + 0.1 + 1 + 0.1) / 8))


def test_journalist_without_population_is_the_prosecutor() -> None:
    assert journalist_risk(SAMPLE, threshold=3) == prosecutor_risk(SAMPLE, threshold=3)


def test_marketer_by_hand() -> None:
    assert marketer_risk(SAMPLE) == 4 / 8
    assert marketer_risk(SAMPLE, POPULATION) == pytest.approx((1 / 3 + 0.1 + 1 + 0.1) / 8)


def test_sample_uniqueness() -> None:
    assert sample_uniqueness(SAMPLE) == 2 / 8


def test_population_smaller_than_sample_is_refused() -> None:
    with pytest.raises(ParameterError, match="smaller than the sample"):
        journalist_risk([3], [2])


def test_benedetti_franconi_cases_by_hand() -> None:
    # f = 1, F = 10: p = 0.1 -> p/(1-p) log(1/p)
    # f = 2, F = 8: p = 0.25 -> p/(1-p) - (p/(1-p))^2 log(1/p)
    # f = 5, F = 20: p = 0.25 -> p / (f - (1 - p))
    # f = 3, F = 3: the whole population -> 1/3
    got = individual_risk([1, 2, 5, 3], [10.0, 8.0, 20.0, 3.0])
    expected = [
        (0.1 / 0.9) * math.log(10),
        (1 / 3) - (1 / 9) * math.log(4),
        0.25 / (5 - 0.75),
        1 / 3,
    ]
    assert got.tolist() == pytest.approx(expected, rel=1e-12)


def test_global_risk_is_the_expected_number_of_reidentifications() -> None:
    sizes, weights = [1, 2, 5, 3], [10.0, 8.0, 20.0, 3.0]
    r = weighted_risk(sizes, weights, threshold=0.1)
    per_key = individual_risk(sizes, weights)
    assert r.expected_reidentifications == pytest.approx(float(np.dot(sizes, per_key)))
    assert r.global_risk == pytest.approx(r.expected_reidentifications / 11)
    # above 0.1: f=1 (0.256) and f=3 (1/3) -> 1 + 3 records; f=2 (0.179) -> +2
    assert r.records_above_threshold == 6
    assert r.population_size == 41.0
