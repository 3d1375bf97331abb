"""Parity with ARX 3.9.2's risk analysis (``ArxRisk``) on ARX's Adult and on MEPS.

The attacker models, sample uniqueness and the Pitman and Zayatz estimates agree with ARX to
1e-9 (relative); Dankar's rule agrees wherever ARX's rule does not pick SNB. ARX's ``ModelSNB``
departs from Chen & Keller-McNulty's second moment equation and from Haas & Stokes' Shlosser
estimator (see anonlab.risk.population) and finds no root on these tables (0 in its output),
so SNB is not compared. Skipped where ARX is not built (/tmp/arx) or ../shared is absent.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from anonlab import api
from anonlab.io import CsvOptions
from tests.support.arx_risk import arx_classpath, arx_risk

pytestmark = [pytest.mark.shared, pytest.mark.slow]

CASES = [
    ("arx/adult.csv", ";", ["age", "sex", "race", "marital-status"], 0.01),
    ("arx/adult.csv", ";", ["age", "sex", "race", "marital-status"], 0.1),
    ("arx/adult.csv", ";", ["sex", "age", "education", "workclass"], 0.05),
    ("informs-meps2005-test/demographics05test.csv", ",", ["DOBYY", "SEX", "RACEX"], 0.01),
    ("informs-meps2005-test/demographics05test.csv", ",", ["DOBMM", "DOBYY", "SEX", "marry"], 0.1),
]


@pytest.fixture(scope="module")
def classpath(shared: Path) -> str:
    cp = arx_classpath(shared)
    if cp is None:
        pytest.skip("ARX is not built (/tmp/arx/harness/ArxRisk.class): ../shared/tools/arx")
    return cp


@pytest.mark.parametrize(("name", "sep", "qis", "fraction"), CASES)
def test_estimates_match_arx(shared: Path, classpath: str, name, sep, qis, fraction) -> None:
    data = shared / "datasets" / name
    if not data.exists():
        pytest.skip(f"{data} is absent")
    arx = arx_risk(classpath, data, qis, fraction, sep=sep)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = api.risk(
            data,
            qis,
            threshold=5,
            sampling_fraction=fraction,
            csv_options=CsvOptions(separator=sep),
        ).to_dict()
    assert ours["n_rows"] == arx["rows"]
    close = {"rel": 1e-9, "abs": 1e-12}
    for model in ("prosecutor", "journalist"):
        assert ours[model]["records_at_risk"] == pytest.approx(
            arx[model]["records_at_risk"], **close
        )
        assert ours[model]["highest"] == pytest.approx(arx[model]["highest"], **close)
        assert ours[model]["average"] == pytest.approx(arx[model]["success_rate"], **close)
    assert ours["marketer"]["average"] == pytest.approx(arx["marketer"]["success_rate"], **close)
    assert ours["sample_uniqueness"] == pytest.approx(arx["sample_uniques_fraction"], **close)
    estimates = ours["population_uniqueness"]
    for name_ in ("pitman", "zayatz"):
        theirs = arx[f"population_uniques_{name_}"]
        if theirs in (None, 0.0):  # ARX: no solution
            assert estimates[name_] is None
        else:
            assert estimates[name_] == pytest.approx(theirs, rel=1e-6)
    if estimates["dankar_choice"] in ("pitman", "zayatz") and fraction <= 0.1:
        assert estimates["dankar"] == pytest.approx(arx["population_uniques_dankar"], rel=1e-6)
