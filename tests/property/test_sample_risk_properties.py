"""Properties of the sample risk: weights all equal to 1/F tell the population a sampling
fraction F tells, and the engines agree on weighted class sums."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from anonlab import EncodedTable
from anonlab.api import open_engine
from anonlab.diagnosis.sample_risk import sample_risk
from anonlab.exceptions import InputError
from tests.support.profiles import costly

rows = st.lists(
    st.tuples(st.sampled_from("abcdef"), st.sampled_from("xyz")), min_size=2, max_size=60
)


@costly(60)
@given(rows=rows, fraction=st.sampled_from([0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.8, 1.0]))
def test_weights_of_one_over_f_give_the_estimates_of_fraction_f(rows, fraction):
    a, b = zip(*rows, strict=True)
    weight = [repr(1.0 / fraction)] * len(rows)
    table = EncodedTable.from_columns({"a": list(a), "b": list(b), "w": weight})
    engine = open_engine(table)
    by_weight = sample_risk(engine, ["a", "b"], weight="w")
    by_fraction = sample_risk(engine, ["a", "b"], sampling_fraction=fraction)
    assert by_weight.population_size == by_fraction.population_size
    assert by_weight.population_uniqueness == by_fraction.population_uniqueness
    assert by_weight.prosecutor == by_fraction.prosecutor


def _table(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table(
        {
            "age": rng.integers(17, 60, n).astype(str),
            "sex": rng.choice(["F", "M"], n),
            "zip": rng.integers(0, 30, n).astype(str),
            "w": (rng.random(n) * 90 + 10).round(2).astype(str),
        }
    )


def _close(left, right) -> bool:
    a, b = left.to_dict(), right.to_dict()
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], dict):
            for sub in a[key]:
                if isinstance(a[key][sub], float):
                    assert a[key][sub] == pytest.approx(b[key][sub], rel=1e-9), (key, sub)
                else:
                    assert a[key][sub] == b[key][sub], (key, sub)
        elif isinstance(a[key], float):
            assert a[key] == pytest.approx(b[key], rel=1e-9), key
        else:
            assert a[key] == b[key], key
    return True


@pytest.mark.parametrize("seed", [0, 1])
def test_duckdb_gives_the_numpy_numbers(seed):
    table = _table(3000, seed)
    numpy_engine = open_engine(table, engine="numpy")
    duck = open_engine(table, engine="duckdb")
    for told in ({"weight": "w"}, {"sampling_fraction": 0.02}):
        _close(
            sample_risk(numpy_engine, ["age", "sex", "zip"], **told),
            sample_risk(duck, ["age", "sex", "zip"], **told),
        )
    _close(
        sample_risk(numpy_engine, ["age", "sex"], population=open_engine(_table(3000, seed))),
        sample_risk(
            duck, ["age", "sex"], population=open_engine(_table(3000, seed), engine="duckdb")
        ),
    )


@pytest.mark.slow
def test_spark_gives_the_numpy_numbers(spark):
    table = _table(2000, 3)
    numpy_engine = open_engine(table, engine="numpy")
    sparked = open_engine(table, engine="spark")
    _close(
        sample_risk(numpy_engine, ["age", "sex", "zip"], weight="w"),
        sample_risk(sparked, ["age", "sex", "zip"], weight="w"),
    )
    _close(
        sample_risk(numpy_engine, ["age", "sex"], population=open_engine(table)),
        sample_risk(sparked, ["age", "sex"], population=open_engine(table, engine="spark")),
    )


@pytest.mark.parametrize("kind", [pa.float64(), pa.int32()])
def test_a_typed_weight_column_reads_as_its_text_does(kind):
    """DuckDB reads a numeric weight column as it is (not through its text): same numbers."""
    table = _table(2000, 5)
    weights = pa.array(np.random.default_rng(5).integers(10, 100, 2000)).cast(kind)
    typed = table.set_column(3, "w", weights)
    by_text = sample_risk(
        open_engine(table.set_column(3, "w", weights.cast(pa.string()))), ["age", "sex"], weight="w"
    )
    _close(by_text, sample_risk(open_engine(typed, engine="duckdb"), ["age", "sex"], weight="w"))
    _close(by_text, sample_risk(open_engine(typed), ["age", "sex"], weight="w"))


def test_a_nan_weight_is_a_missing_weight_on_every_engine():
    table = _table(50, 6).set_column(3, "w", pa.array([float("nan")] + [20.0] * 49))
    for engine in ("numpy", "duckdb"):
        with pytest.raises(InputError, match="1 record\\(s\\) without a weight"):
            sample_risk(open_engine(table, engine=engine), ["age"], weight="w")
