#!/usr/bin/env python3
"""A national census on one machine: 330 million rows diagnosed and anonymized with DuckDB
(issue 56, item 1).

The data: ``bench_scale.ensure_data`` (rows of the bundled Adult sampled with replacement,
numpy ``default_rng(0)``, each quasi-identifier value swapped with probability ``SWAP`` for
another row's: Adult's joint distribution with rare combinations at every size; 15 columns,
Parquet in row groups of 1,000,000 rows in ``benchmarks/data/``, made once), at 10 M, 100 M
and 330 M rows. The quasi-identifiers: ARX's 9 adult attributes with its hierarchy files.

Per size, two fresh child processes on the DuckDB engine (2 threads, the machine's cores):

* **diagnose**: open the engine on the Parquet file; Q2 (the k of the table under the 9
  quasi-identifiers); Q9 at k = 5 (the fewest rows to suppress for 5-anonymity); the risk
  summary (prosecutor, journalist and marketer risk, records at risk below 5), each timed;
* **anonymize**: ``bench_scale``'s job (the optimal search, k = 5, at most 5 % suppressed,
  the loss metric), the release written as Parquet and re-checked, as ``bench_scale.py``.

Each child reports its peak RSS (``VmHWM``: DuckDB's memory is the process's). Goals: every
step under 5 minutes, peak memory under 4 GiB, cost linear in rows (the least-squares slope
in seconds per million rows from the three sizes, and its r^2).

    .venv/bin/python benchmarks/bench_census.py [--sizes 10M,100M,330M]

Writes ``benchmarks/results/census.json``. The 330 M-row file takes about 2.3 GiB of disk.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_scale  # noqa: E402
import common  # noqa: E402

K = 5
GOAL_STEP_S = 300.0
GOAL_RSS_MIB = 4096.0
STEPS = ("q2", "q9", "risk", "anonymize")


def diagnose_child(data: str) -> None:
    """Q2, Q9 (k = 5) and the risk summary of ``data`` on DuckDB; prints one JSON line."""
    t0 = time.perf_counter()
    from anonlab import diagnose, open_engine
    from anonlab.diagnosis import risk_summary

    qis = list(bench_scale.QUASI_IDENTIFIERS)
    out: dict[str, Any] = {"import_s": time.perf_counter() - t0}
    t = time.perf_counter()
    eng = open_engine(data, engine="duckdb")
    out["open_s"] = time.perf_counter() - t
    t = time.perf_counter()
    q2 = diagnose(eng, quasi_identifiers=qis)
    out["q2_s"] = time.perf_counter() - t
    t = time.perf_counter()
    q9 = diagnose(eng, quasi_identifiers=qis, k=K, find_delta=True)
    out["q9_s"] = time.perf_counter() - t
    t = time.perf_counter()
    summary = risk_summary(eng, qis, threshold=K)
    out["risk_s"] = time.perf_counter() - t
    risk = summary.to_dict()
    out.update(
        k=q2.to_dict().get("k"),
        q9=q9.to_dict(),
        risk={
            key: risk.get(key)
            for key in ("k", "unique_records", "records_at_risk", "highest_risk", "average_risk")
        },
        rows=eng.n_rows,
        peak_rss_mib=common.peak_rss_mib("self"),
    )
    print(json.dumps(out, default=str))


def measure(n: int) -> dict[str, Any]:
    """Diagnose and anonymize ``n`` rows, each in a child process."""
    data = bench_scale.ensure_data(n)
    print(f"  {bench_scale.label(n)} rows: diagnose ...", flush=True)
    diag = common.run_json_child([sys.executable, __file__, "--diagnose", str(data)])
    print(
        f"    open {diag['open_s']:.1f} s, Q2 {diag['q2_s']:.1f} s (k = {diag['k']}), "
        f"Q9 {diag['q9_s']:.1f} s, risk {diag['risk_s']:.1f} s, "
        f"peak {diag['peak_rss_mib']:,.0f} MiB",
        flush=True,
    )
    anon = bench_scale.measure(n, "duckdb")
    print(
        f"    anonymize {anon['total_s']:.1f} s (search {anon['search_s']:.1f} s, "
        f"{anon['transformation']}, {anon['suppressed_rows']:,} rows suppressed), "
        f"peak {anon['peak_rss_mib']:,.0f} MiB",
        flush=True,
    )
    return {
        "rows": n,
        "bytes": data.stat().st_size,
        "diagnose": diag,
        "anonymize": anon,
        "seconds": {
            "q2": diag["open_s"] + diag["q2_s"],  # (the engine's opening counted with Q2)
            "q9": diag["q9_s"],
            "risk": diag["risk_s"],
            "anonymize": anon["total_s"],
        },
        "peak_rss_mib": {"diagnose": diag["peak_rss_mib"], "anonymize": anon["peak_rss_mib"]},
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", default="10M,100M,330M", help="rows per run (10M, ...)")
    ap.add_argument("--diagnose", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.diagnose:
        diagnose_child(args.diagnose)
        return
    sizes = [bench_scale.parse_size(s) for s in args.sizes.split(",")]
    load = list(os.getloadavg())
    runs = [measure(n) for n in sizes]
    common.print_table(
        ["rows", "Q2 s", "Q9 s", "risk s", "anonymize s", "diagnose MiB", "anonymize MiB",
         "k", "Q9 delta", "suppressed"],
        [
            [
                bench_scale.label(r["rows"]),
                *[f"{r['seconds'][s]:.1f}" for s in STEPS],
                f"{r['peak_rss_mib']['diagnose']:,.0f}",
                f"{r['peak_rss_mib']['anonymize']:,.0f}",
                str(r["diagnose"]["k"]),
                str(r["diagnose"]["q9"].get("delta")),
                f"{r['anonymize']['suppressed_rows']:,}",
            ]
            for r in runs
        ],
        title=f"DuckDB, 9 quasi-identifiers, k = {K} (Q2 includes opening the engine)",
    )  # fmt: skip
    slopes = {}
    for step in STEPS:
        fit = bench_scale.slope([(r["rows"], r["seconds"][step]) for r in runs])
        if fit is not None:
            slopes[step] = fit
            print(
                f"{step}: {fit['seconds_per_million_rows']:.3f} s per million rows "
                f"(intercept {fit['intercept_s']:.1f} s, r^2 = {fit['r2']:.4f})"
            )
    goals = {}
    for r in runs:
        size = bench_scale.label(r["rows"])
        for step in STEPS:
            goals[f"{size} {step}: under 5 min"] = common.goal(r["seconds"][step], GOAL_STEP_S)
        for what, mib in r["peak_rss_mib"].items():
            goals[f"{size} {what}: under 4 GiB"] = common.goal(mib, GOAL_RSS_MIB)
    common.print_goals(goals, digits=1)
    path = common.write_results(
        "census",
        {
            "job": {**bench_scale.job(), "quasi_identifiers": list(bench_scale.QUASI_IDENTIFIERS)},
            "load_avg_before": load,
            "runs": runs,
            "slopes": slopes,
            "goals": goals,
        },
    )
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
