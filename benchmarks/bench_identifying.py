#!/usr/bin/env python3
"""The identifying-column check (issue 51) on UCI Adult, Census-Income (KDD) and MEPS, with
the numpy and DuckDB engines, and on a 10-million-row Parquet file with DuckDB.

For each data set, a plausible job's quasi-identifiers are declared (Adult: the 8 of
``examples/adult_k5.yaml``; Census-Income: age, sex, race, marital stat, education, the two
detailed recodes and country of birth; MEPS: birth month and year, sex, race, education,
marital status) and the sensitive attribute (income); every other column is checked:
alone, in pairs and against each quasi-identifier (``anonlab.diagnosis.risk.
identifying_columns``, as ``anonymize`` runs it). Times are best of --repeat, each on a fresh
engine (numpy: the table already read; DuckDB: the engine already open, its open time
reported apart). Both engines must report the same columns with the same reasons.

With --big, also a 10,000,000-row Parquet file drawn from Adult's 32,561 rows (all 15
columns, numpy default_rng(0), written to benchmarks/.cache/ once), DuckDB only.

    /work/main/.venv/bin/python benchmarks/bench_identifying.py [--repeat 3] [--big]

Writes benchmarks/results/identifying.json.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from bench_census_kdd import CENSUS_NAMES  # noqa: E402
from common import ADULT_QI, best_of, print_table  # noqa: E402

import anonlab  # noqa: E402
from anonlab import CsvOptions  # noqa: E402
from anonlab.diagnosis.risk import identifying_columns  # noqa: E402

BIG_ROWS = 10_000_000
BIG_PATH = common.CACHE / "adult_all_columns_10M_seed0.parquet"
ADULT_COLUMNS = list(common.ADULT_NAMES)


def datasets() -> list[dict[str, Any]]:
    """The data sets: path, CSV options, quasi-identifiers, declared columns."""
    return [
        {
            "name": "Adult",
            "path": common.PROJECT / "src" / "anonlab" / "datasets" / "adult.csv.gz",
            "csv": CsvOptions(na_values=("?",)),
            "qi": list(ADULT_QI),
            "declared": ["income"],
        },
        {
            "name": "Census-Income",
            "path": common.shared_file("datasets", "census-income-kdd", "census-income.data.gz"),
            "csv": CsvOptions(
                separator=",", header=False, names=CENSUS_NAMES, strip=True, na_values=("?",)
            ),
            "qi": [
                "age",
                "sex",
                "race",
                "marital stat",
                "education",
                "detailed industry recode",
                "detailed occupation recode",
                "country of birth self",
            ],  # fmt: skip
            "declared": ["income"],
        },
        {
            "name": "MEPS",
            "path": common.shared_file(
                "datasets", "informs-meps2005-test", "demographics05test.csv"
            ),
            "csv": CsvOptions(),
            "qi": ["DOBMM", "DOBYY", "SEX", "RACEX", "EDUCYEAR", "marry"],
            "declared": ["income"],
        },
    ]


def check(engine: Any, spec: dict[str, Any]) -> list[tuple[str, str]]:
    return identifying_columns(engine, spec["declared"], quasi_identifiers=spec["qi"])


def ensure_big() -> Path:
    """The 10 M-row Parquet file of Adult's rows (made once)."""
    if BIG_PATH.exists():
        return BIG_PATH
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    path = common.PROJECT / "src" / "anonlab" / "datasets" / "adult.csv.gz"
    text = {c: pa.string() for c in ADULT_COLUMNS}
    table = pacsv.read_csv(path, convert_options=pacsv.ConvertOptions(column_types=text))
    rows = np.random.default_rng(0).integers(0, table.num_rows, BIG_ROWS)
    BIG_PATH.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table.take(pa.array(rows)), BIG_PATH, row_group_size=1_000_000)
    return BIG_PATH


def timed(
    open_engine: Callable[[], Any], spec: dict[str, Any], repeat: int
) -> tuple[float, list[float], list[tuple[str, str]], float | None]:
    """Best of ``repeat`` checks, each on a fresh engine from ``open_engine`` (not timed);
    also the times, the answer and the engine's best opening time."""
    engines: list[Any] = []
    opened: list[float] = []

    def fresh() -> None:
        t0 = time.perf_counter()
        engines.append(open_engine())
        opened.append(time.perf_counter() - t0)

    best, times, found = best_of(lambda: check(engines[-1], spec), repeat, setup=fresh)
    for eng in engines:
        eng.close()
    return best, times, found, min(opened)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--big", action="store_true", help="also 10 M rows with DuckDB")
    args = ap.parse_args()
    rows, results = [], []
    cases: list[tuple[dict[str, Any], str, Callable[[], Any], int, int]] = []
    for spec in datasets():
        table = anonlab.read_table(spec["path"], csv_options=spec["csv"])
        size = (table.n_rows, len(table.names))
        cases.append((spec, "numpy", partial(anonlab.open_engine, table), *size))
        duck = partial(anonlab.open_engine, spec["path"], engine="duckdb", csv_options=spec["csv"])
        cases.append((spec, "duckdb", duck, *size))
    if args.big:
        spec = {"name": "Adult x 10M", "qi": list(ADULT_QI), "declared": ["income"]}
        big = partial(anonlab.open_engine, ensure_big(), engine="duckdb")
        cases.append((spec, "duckdb", big, BIG_ROWS, len(ADULT_COLUMNS)))
    answers: dict[str, list[tuple[str, str]]] = {}
    for spec, engine, opener, n_rows, n_cols in cases:
        best, times, found, opened = timed(opener, spec, args.repeat)
        assert answers.setdefault(spec["name"], found) == found, (spec["name"], engine)
        rows.append([spec["name"], f"{n_rows:,}", n_cols, engine, f"{best:.3f}"])
        results.append(
            {
                "data": spec["name"],
                "rows": n_rows,
                "columns": n_cols,
                "quasi_identifiers": spec["qi"],
                "engine": engine,
                "best_s": best,
                "times_s": times,
                "engine_open_s": opened,
                "found": [list(f) for f in found],
            }
        )
        print(f"{spec['name']} ({engine}): {best:.3f} s, {[c for c, _ in found]}")
    print_table(
        ["data", "rows", "columns", "engine", "check s (best)"],
        rows,
        title=f"identifying-column check, best of {args.repeat}",
    )
    out = common.write_results("identifying", {"repeat": args.repeat, "results": results})
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
