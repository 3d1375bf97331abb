"""A job's ``weight:`` column: never a quasi-identifier, dropped from the release unless asked."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from anonlab import anonymize
from anonlab.exceptions import InputError
from anonlab.io.job import parse_job

RNG = np.random.default_rng(0)
TABLE = pa.table(
    {
        "sex": RNG.choice(["F", "M"], 200),
        "age": RNG.integers(20, 30, 200).astype(str),
        "w": (RNG.random(200) * 100 + 1).round(3).astype(str),
    }
)
BASE = {"quasi_identifiers": {"sex": {}}, "models": [{"k_anonymity": {"k": 2}}]}


def _released_columns(tmp_path: Path, job: dict, engine: str) -> list[str]:
    out = tmp_path / f"{engine}.csv"
    anonymize(TABLE, job, output=out, engine=engine)
    with out.open() as fh:
        return next(csv.reader(fh))


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_the_weight_column_is_not_released(tmp_path: Path, engine: str) -> None:
    assert _released_columns(tmp_path, {**BASE, "weight": "w"}, engine) == ["sex", "age"]


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_the_weight_column_is_released_when_asked(tmp_path: Path, engine: str) -> None:
    job = {**BASE, "weight": {"column": "w", "release": True}}
    assert _released_columns(tmp_path, job, engine) == ["sex", "age", "w"]


def test_a_weight_is_never_a_quasi_identifier() -> None:
    with pytest.raises(
        InputError, match="'sex' is the weight column and is also a quasi-identifier"
    ):
        parse_job({**BASE, "weight": "sex"})


def test_a_missing_weight_column_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="weight column"):
        anonymize(TABLE, {**BASE, "weight": "weights"}, output=tmp_path / "o.csv")
    assert not (tmp_path / "o.csv").exists()


def test_unknown_key_under_weight() -> None:
    with pytest.raises(InputError, match="Unknown key 'relese' under 'weight'"):
        parse_job({**BASE, "weight": {"column": "w", "relese": True}})
