"""Re-identification risk of samples (issue 53): every estimate on Adult, MEPS and 10 M rows.

For each setting (data set, quasi-identifiers, sampling fraction) the script times
``anonlab.diagnosis.sample_risk`` (prosecutor, journalist and marketer risk, sample uniqueness,
Pitman, Zayatz, SNB and Dankar's rule) on a fresh engine, and runs ARX 3.9.2's ``ArxRisk`` on
the same file where ARX is built (``$ARX_CP``, or /tmp/arx with ../shared/tools/arx/build.sh),
printing both tools' estimates side by side.

The 10 M-row case is a Parquet file of the 8 Adult quasi-identifiers resampled with a column
of sampling weights (``benchmarks/.cache/risk_10M_seed0.parquet``, written the first time,
about 10 s); it runs in a child process on DuckDB, which reports its own peak RSS (VmHWM): every
estimate with a sampling fraction, then with the weight column (the attacker models, the
population estimates for the population the weights sum to, and the Benedetti-Franconi risk),
and the whole ``diagnose --risk`` answer (``api.risk``, which also looks for identifying
columns). Goal: opening the file and every estimate (the weight path) under 10 s, and the
child's peak RSS over all three under 1 GiB.

    .venv/bin/python benchmarks/bench_risk.py [--repeat 3] [--no-arx] [--no-big]

Writes benchmarks/results/risk.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import common

ADULT_QI = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex",
            "native-country"]  # fmt: skip
SETTINGS = [
    ("adult", ("arx", "adult.csv"), ";", ["age", "sex", "race", "marital-status"], 0.01),
    ("adult", ("arx", "adult.csv"), ";", ["age", "sex", "race", "marital-status"], 0.1),
    ("adult", ("arx", "adult.csv"), ";", ["age", "sex", "race", "marital-status"], 0.5),
    ("adult", ("arx", "adult.csv"), ";", ["sex", "age", "education", "workclass"], 0.05),
    ("meps", ("informs-meps2005-test", "demographics05test.csv"), ",", ["DOBYY", "SEX", "RACEX"], 0.01),
    ("meps", ("informs-meps2005-test", "demographics05test.csv"), ",",
     ["DOBMM", "DOBYY", "SEX", "marry"], 0.1),
    ("meps", ("informs-meps2005-test", "demographics05test.csv"), ",",
     ["DOBMM", "DOBYY", "SEX", "RACEX", "EDUCYEAR"], 0.01),
]  # fmt: skip
BIG_ROWS = 10_000_000
BIG_FRACTION = 0.01
BIG_PATH = common.CACHE / "risk_10M_seed0.parquet"
BIG_TAG = f"adult-8qi resample n={BIG_ROWS} seed=0 weights~1/{BIG_FRACTION} v1"
GOAL_S, GOAL_MIB = 10.0, 1024.0


def run_arx(cp: str, data: Path, sep: str, qis: list[str], fraction: float) -> dict[str, Any]:
    cmd = ["java", "-cp", cp, "ArxRisk", "--data", str(data), "--sep", sep,
           "--qis", ",".join(qis), "--fraction", repr(fraction)]  # fmt: skip
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    doc: dict[str, Any] = json.loads([x for x in out.splitlines() if x.startswith("{")][-1])
    doc["process_wall_s"] = time.perf_counter() - t0
    return doc


def ours(data: Path, sep: str, qis: list[str], fraction: float, repeat: int) -> dict[str, Any]:
    from anonlab import CsvOptions, open_engine
    from anonlab.diagnosis.sample_risk import sample_risk

    options = CsvOptions(separator=sep)

    def fresh() -> Any:
        return sample_risk(open_engine(data, csv_options=options), qis, sampling_fraction=fraction)

    best, times, result = common.best_of(fresh, repeat)
    engine = open_engine(data, csv_options=options)
    t0 = time.perf_counter()
    sample_risk(engine, qis, sampling_fraction=fraction)
    estimates_s = time.perf_counter() - t0
    return {"best_s": best, "times_s": times, "estimates_s": estimates_s, **result.to_dict()}


# --------------------------------------------------------------------------- 10 M rows
def ensure_big() -> dict[str, Any]:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    if BIG_PATH.exists():
        md = pq.ParquetFile(BIG_PATH).metadata
        if (
            md.num_rows == BIG_ROWS
            and (md.metadata or {}).get(b"anonlab-bench") == BIG_TAG.encode()
        ):
            return {"path": str(BIG_PATH), "generated": False, "bytes": BIG_PATH.stat().st_size}
    t0 = time.perf_counter()
    table = common.load_adult_complete()
    src = pa.table({a: pa.array(table.column(a).labels().tolist(), pa.string()) for a in ADULT_QI})
    rng = np.random.default_rng(0)
    BIG_PATH.parent.mkdir(parents=True, exist_ok=True)
    tmp = BIG_PATH.with_suffix(".tmp")
    step = 1_000_000
    schema = src.schema.append(pa.field("weight", pa.float64()))
    schema = schema.with_metadata({"anonlab-bench": BIG_TAG})
    with pq.ParquetWriter(tmp, schema) as writer:
        for _ in range(BIG_ROWS // step):
            part = src.take(pa.array(rng.integers(0, src.num_rows, step)))
            weight = rng.uniform(0.5, 1.5, step) / BIG_FRACTION
            writer.write_table(part.append_column("weight", pa.array(weight)).cast(schema))
    os.replace(tmp, BIG_PATH)
    return {"path": str(BIG_PATH), "generated": True, "generate_s": time.perf_counter() - t0,
            "bytes": BIG_PATH.stat().st_size}  # fmt: skip


def big_child() -> None:
    """In a fresh process: every estimate on the 10 M-row Parquet with DuckDB; one JSON line."""
    t0 = time.perf_counter()
    from anonlab import api
    from anonlab.diagnosis.sample_risk import sample_risk

    out: dict[str, Any] = {"import_s": time.perf_counter() - t0}
    t1 = time.perf_counter()
    engine = api.open_engine(str(BIG_PATH), engine="duckdb")
    t2 = time.perf_counter()
    by_fraction = sample_risk(engine, ADULT_QI, sampling_fraction=BIG_FRACTION)
    t3 = time.perf_counter()
    by_weight = sample_risk(engine, ADULT_QI, weight="weight")
    t4 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = api.risk(engine, ADULT_QI, sampling_fraction=BIG_FRACTION)
    t5 = time.perf_counter()
    out.update(
        {
            "open_s": t2 - t1,
            "fraction_s": t3 - t2,
            "weight_s": t4 - t3,
            "estimates_total_s": t4 - t1,
            "diagnose_risk_s": t5 - t4,
            "n_rows": engine.n_rows,
            "by_fraction": by_fraction.to_dict(),
            "by_weight": by_weight.to_dict(),
            "identifying_columns": whole.identifying_columns,
            "peak_rss_mib": common.peak_rss_mib("self"),
        }
    )
    print(json.dumps(out))


def _estimates(d: dict[str, Any]) -> dict[str, Any]:
    return d.get("population_uniqueness", {})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-arx", action="store_true")
    ap.add_argument("--no-big", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        big_child()
        return
    cp = None if args.no_arx else common.arx_classpath()
    rows, records = [], []
    for name, parts, sep, qis, fraction in SETTINGS:
        data = common.shared_file("datasets", *parts)
        mine = ours(data, sep, qis, fraction, args.repeat)
        arx = run_arx(cp, data, sep, qis, fraction) if cp else None
        records.append(
            {"data": name, "qis": qis, "fraction": fraction, "anonlab": mine, "arx": arx}
        )
        p = _estimates(mine)
        for est in ("pitman", "zayatz", "snb", "dankar"):
            theirs = arx.get(f"population_uniques_{est}") if arx else None
            rows.append([f"{name} {len(qis)} QI f={fraction:g}", est, p.get(est), theirs])
        rows.append(
            [f"{name} {len(qis)} QI f={fraction:g}", "dankar picks", p.get("dankar_choice"), ""]
        )
        rows.append([f"{name} {len(qis)} QI f={fraction:g}", "journalist avg",
                     mine["journalist"]["average"], arx["journalist"]["success_rate"] if arx else None])  # fmt: skip
        rows.append([f"{name} {len(qis)} QI f={fraction:g}", "time (s, ms ARX)", mine["best_s"],
                     arx["ms"] / 1000 if arx else None])  # fmt: skip
    common.print_table(["setting", "estimate", "anonlab", "ARX 3.9.2"], rows, "Estimates")
    big = None
    goals = {}
    if not args.no_big:
        data = ensure_big()
        big = common.run_json_child([sys.executable, __file__, "--child"])
        big["data"] = data
        common.print_table(
            ["10 M rows, DuckDB", "s"],
            [
                ["open", big["open_s"]],
                ["every estimate, sampling fraction", big["fraction_s"]],
                ["every estimate, weight column", big["weight_s"]],
                ["open + both", big["estimates_total_s"]],
                ["diagnose --risk (api.risk, identifying columns too)", big["diagnose_risk_s"]],
                ["peak RSS (MiB)", big["peak_rss_mib"]],
            ],  # fmt: skip
        )
        goals = {  # the weight path gives every estimate: attacker models, population
            # uniqueness (the population is the weights' sum) and the Benedetti-Franconi risk
            "10 M rows: open + every estimate (weights) (s)": common.goal(
                big["open_s"] + big["weight_s"], GOAL_S
            ),
            "10 M rows: peak RSS (MiB)": common.goal(big["peak_rss_mib"], GOAL_MIB),
        }
        common.print_goals(goals, digits=2)
    path = common.write_results(
        "risk", {"settings": records, "big": big, "goals": goals, "arx": cp is not None}
    )
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
