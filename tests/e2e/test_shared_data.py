"""End-to-end checks on the real benchmark data in ../shared (skipped where it is absent)."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from anonlab import CsvOptions, diagnose, load_adult, open_engine, read_hierarchy, read_table

pytestmark = pytest.mark.shared

ADULT_NAMES = (
    "age workclass fnlwgt education education-num marital-status occupation relationship race "
    "sex capital-gain capital-loss hours-per-week native-country income"
).split()
ARX_QI = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
]


def test_bundled_adult_is_uci_adult_data(shared):
    opts = CsvOptions(header=False, names=tuple(ADULT_NAMES), strip=True, na_values=("?",))
    uci = read_table(shared / "datasets/adult/adult.data", csv_options=opts)
    ours = load_adult(drop_missing=False)
    assert uci.n_rows == ours.n_rows == 32561
    for name in ADULT_NAMES:
        assert np.array_equal(uci[name].labels(), ours[name].labels())
    assert uci.drop_nulls().n_rows == 30162


@pytest.fixture(scope="module")
def arx_adult(shared):
    base = shared / "datasets/arx"
    hier = {a: read_hierarchy(base / f"adult_hierarchy_{a}.csv", attribute=a) for a in ARX_QI}
    opts = CsvOptions(separator=";")
    return base / "adult.csv", hier, opts


@pytest.mark.parametrize(
    "levels",
    [
        {},
        {"age": 1},
        {"age": 2, "education": 1, "native-country": 1},
        {"age": 4, "workclass": 2, "occupation": 1},
    ],
)
def test_arx_hierarchies_numpy_and_duckdb_agree(arx_adult, levels):
    pytest.importorskip("duckdb")
    path, hier, opts = arx_adult
    np_eng = open_engine(path, csv_options=opts, hierarchies=hier)
    db_eng = open_engine(path, engine="duckdb", csv_options=opts, hierarchies=hier)
    assert np_eng.n_rows == db_eng.n_rows == 30162
    a = np_eng.class_stats(ARX_QI, levels, sensitive=["salary-class"])
    b = db_eng.class_stats(ARX_QI, levels, sensitive=["salary-class"])
    assert a.canonical() == b.canonical()
    for eng in (np_eng, db_eng):
        q9 = diagnose(eng, quasi_identifiers=ARX_QI, k=5, find_delta=True, levels=levels)
        assert q9.suppressed_rows == int(a.sizes[a.sizes < 5].sum())


@pytest.mark.slow
def test_census_income_kdd_reads_and_engines_agree(shared, tmp_path):
    pytest.importorskip("duckdb")
    src = shared / "datasets/census-income-kdd/census-income.data.gz"
    opts = CsvOptions(header=False, strip=True, na_values=("?",))
    table = read_table(src, csv_options=opts)
    assert table.n_rows == 199523 and len(table.names) == 42
    attrs = ["c0", "c1", "c4", "c7", "c10", "c12"]
    np_eng = open_engine(table)
    db_eng = open_engine(src, engine="duckdb", csv_options=opts)
    for s in (attrs[:2], attrs[:4], attrs):
        assert sorted(np_eng.class_sizes(s).tolist()) == sorted(db_eng.class_sizes(s).tolist())
    with gzip.open(src, "rt") as fh:
        assert sum(1 for _ in fh) == 199523
