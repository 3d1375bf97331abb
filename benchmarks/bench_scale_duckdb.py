#!/usr/bin/env python3
"""Q2 and Q9 (k=5) on a 10,000,000-row Parquet file with the DuckDB engine: time and peak RSS.

The file is drawn from Adult's joint distribution over its 8 quasi-identifiers: rows of the
30,162 complete Adult rows sampled with replacement (numpy default_rng(0)), written with pyarrow
in row groups of 1,000,000 rows to benchmarks/.cache/ (reused on later runs; --regenerate to
rebuild). Each measurement runs in a fresh child process, so its peak RSS
(VmHWM of /proc/self/status in the child; ru_maxrss is recorded too, but Linux carries it over
fork + exec, so it can show the parent's peak instead) is that of the measurement alone:

    open_engine(parquet, engine="duckdb", ...) ; Q2 ; Q9 k=5

"total" = engine open + Q2 + Q9 (interpreter start and imports are reported apart, as is the
wall time of the whole child process). Goal: total < 10 s and peak RSS < 2 GiB. DuckDB runs with
its defaults first; if that misses, with memory_limit="1GB", threads=2 (--all-configs runs both
anyway). For comparison the numpy engine (read_table of the Parquet file + open + Q2 + Q9) runs
too, unless --no-numpy.

    /work/main/.venv/bin/python benchmarks/bench_scale_duckdb.py [--repeat 3] [--no-numpy]

Writes benchmarks/results/scale_duckdb.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import ADULT_QI, print_table, verdict  # noqa: E402

N_ROWS = 10_000_000
ROW_GROUP = 1_000_000
SEED = 0
K = 5
GOAL_TOTAL_S = 10.0
GOAL_RSS_MIB = 2048.0
TAG = f"adult-8qi resample n={N_ROWS} seed={SEED} rowgroup={ROW_GROUP} v1"
DEFAULT_PATH = common.CACHE / "adult_resampled_10M_seed0.parquet"
TUNED = {"memory_limit": "1GB", "threads": 2}


# --------------------------------------------------------------------------- data
def ensure_parquet(path: Path, regenerate: bool) -> dict:
    import pyarrow.parquet as pq

    if path.exists() and not regenerate:
        md = pq.ParquetFile(path).metadata
        tag = (md.metadata or {}).get(b"anonlab-bench", b"").decode()
        if md.num_rows == N_ROWS and tag == TAG:
            return {
                "path": str(path),
                "generated": False,
                "bytes": path.stat().st_size,
                "row_groups": md.num_row_groups,
            }
        print(f"{path} is stale; regenerating")
    return generate_parquet(path)


def generate_parquet(path: Path) -> dict:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    t0 = time.perf_counter()
    table = common.load_adult_complete()
    cols = {}
    for a in ADULT_QI:
        labels = table.column(a).labels()
        cols[a] = (
            pa.array(labels.astype(np.int64))
            if a == "age"
            else pa.array(labels.tolist(), pa.string())
        )
    src = pa.table(cols)
    src = src.replace_schema_metadata({"anonlab-bench": TAG})
    rng = np.random.default_rng(SEED)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".parquet.tmp")
    with pq.ParquetWriter(tmp, src.schema) as w:
        for start in range(0, N_ROWS, ROW_GROUP):
            idx = rng.integers(0, src.num_rows, size=min(ROW_GROUP, N_ROWS - start))
            w.write_table(src.take(pa.array(idx)), row_group_size=ROW_GROUP)
    os.replace(tmp, path)
    secs = time.perf_counter() - t0
    md = pq.ParquetFile(path).metadata
    assert md.num_rows == N_ROWS
    print(f"generated {path} ({path.stat().st_size / 2**20:.1f} MiB) in {secs:.1f} s")
    return {
        "path": str(path),
        "generated": True,
        "generate_s": secs,
        "bytes": path.stat().st_size,
        "row_groups": md.num_row_groups,
    }


# --------------------------------------------------------------------------- child
def child(args: argparse.Namespace) -> None:
    """One measurement in this (fresh) process; prints one JSON line."""
    t0 = time.perf_counter()
    from anonlab import diagnose, open_engine, read_table

    t1 = time.perf_counter()
    qi = list(ADULT_QI)
    out: dict = {"engine": args.child, "import_s": t1 - t0}
    if args.child == "duckdb":
        opts = {}
        if args.memory_limit:
            opts["memory_limit"] = args.memory_limit
        if args.threads:
            opts["threads"] = args.threads
        eng = open_engine(args.parquet, engine="duckdb", **opts)
        t2 = time.perf_counter()
        ((ml, th),) = eng.con.execute(
            "SELECT current_setting('memory_limit'), current_setting('threads')"
        ).fetchall()
        out["duckdb_settings"] = {"memory_limit": ml, "threads": int(th)}
        out["read_s"] = None
    else:
        table = read_table(args.parquet)
        tr = time.perf_counter()
        eng = open_engine(table)
        t2 = time.perf_counter()
        out["read_s"] = tr - t1
    t2b = time.perf_counter()
    q2 = diagnose(eng, quasi_identifiers=qi)
    t3 = time.perf_counter()
    q9 = diagnose(eng, quasi_identifiers=qi, k=K, find_delta=True)
    t4 = time.perf_counter()
    out.update(
        {
            "open_s": t2 - t1,
            "q2_s": t3 - t2b,
            "q9_s": t4 - t3,
            "total_s": (t2 - t1) + (t4 - t2b),
            "n_rows": eng.n_rows,
            "answers": {
                "Q2_k": q2.k,
                "Q9_delta": q9.delta,
                "Q9_suppressed_rows": q9.suppressed_rows,
                "Q9_achieved_k": q9.achieved_k,
            },
            "peak_rss_mib": common.peak_rss_mib("self"),  # VmHWM: this process only
            "ru_maxrss_mib": common.ru_maxrss_mib("self"),  # may include the parent's peak
        }
    )
    print(json.dumps(out))


def run_child(parquet: Path, engine: str, opts: dict) -> dict:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        engine,
        "--parquet",
        str(parquet),
    ]
    if opts.get("memory_limit"):
        cmd += ["--memory-limit", opts["memory_limit"]]
    if opts.get("threads"):
        cmd += ["--threads", str(opts["threads"])]
    return common.run_json_child(cmd)


def measure(parquet: Path, engine: str, opts: dict, repeat: int, label: str) -> dict:
    print(f"measuring {label} ({repeat} child processes) ...", flush=True)
    runs = [run_child(parquet, engine, opts) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["total_s"])
    answers = {json.dumps(r["answers"], sort_keys=True) for r in runs}
    assert len(answers) == 1, f"answers differ between runs: {answers}"
    return {
        "label": label,
        "engine": engine,
        "options": opts,
        "repeat": repeat,
        "best": best,
        "total_all_s": [r["total_s"] for r in runs],
        "peak_rss_max_mib": max(r["peak_rss_mib"] for r in runs),
        "answers": best["answers"],
        "pass_time": best["total_s"] < GOAL_TOTAL_S,
        "pass_rss": max(r["peak_rss_mib"] for r in runs) < GOAL_RSS_MIB,
    }


# --------------------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=3, help="child processes per configuration")
    ap.add_argument(
        "--parquet",
        type=Path,
        default=None,
        help=f"Parquet file (default {DEFAULT_PATH.relative_to(common.PROJECT)})",
    )
    ap.add_argument("--regenerate", action="store_true", help="rebuild the Parquet file")
    ap.add_argument(
        "--all-configs",
        action="store_true",
        help="also run the tuned DuckDB settings when the defaults pass",
    )
    ap.add_argument("--no-numpy", action="store_true", help="skip the numpy-engine comparison")
    ap.add_argument("--child", choices=["duckdb", "numpy"], help=argparse.SUPPRESS)
    ap.add_argument("--memory-limit", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return

    parquet = args.parquet or DEFAULT_PATH
    data = (
        ensure_parquet(parquet, args.regenerate)
        if args.parquet is None
        else {"path": str(parquet), "generated": False, "bytes": parquet.stat().st_size}
    )
    print(f"data: {parquet} ({data['bytes'] / 2**20:.1f} MiB, {N_ROWS:,} rows)")

    results = [measure(parquet, "duckdb", {}, args.repeat, "duckdb (defaults)")]
    if args.all_configs or not (results[0]["pass_time"] and results[0]["pass_rss"]):
        results.append(
            measure(
                parquet, "duckdb", dict(TUNED), args.repeat, "duckdb (memory_limit=1GB, threads=2)"
            )
        )
    if not args.no_numpy:
        results.append(measure(parquet, "numpy", {}, args.repeat, "numpy (read_table + engine)"))
    answers = {json.dumps(r["answers"], sort_keys=True) for r in results}
    assert len(answers) == 1, f"engines/configurations disagree: {answers}"

    rows = []
    for r in results:
        b = r["best"]
        setting = b.get("duckdb_settings")
        rows.append(
            [
                r["label"],
                b["import_s"],
                b["open_s"],
                b["q2_s"],
                b["q9_s"],
                b["total_s"],
                b["process_wall_s"],
                f"{r['peak_rss_max_mib']:.0f}",
                f"{setting['memory_limit']}, {setting['threads']} thr" if setting else "-",
            ]
        )
    print_table(
        [
            "engine",
            "import s",
            "open s",
            "Q2 s",
            "Q9 s",
            "total s",
            "process s",
            "peak MiB",
            "duckdb settings",
        ],
        rows,
        title=f"{N_ROWS:,} rows x 8 attributes, best of {args.repeat} child processes "
        "(open includes read_table for numpy)",
    )
    a = results[0]["answers"]
    print(
        f"answers (all runs agree): Q2 k = {a['Q2_k']}; Q9 k={K}: delta = {a['Q9_delta']}, "
        f"{a['Q9_suppressed_rows']} rows suppressed, achieved k = {a['Q9_achieved_k']}"
    )

    duck = [r for r in results if r["engine"] == "duckdb"]
    chosen = next((r for r in duck if r["pass_time"] and r["pass_rss"]), duck[0])
    goals = {
        "duckdb_total_under_10s": {
            "value": chosen["best"]["total_s"],
            "goal": GOAL_TOTAL_S,
            "pass": chosen["pass_time"],
            "config": chosen["label"],
        },
        "duckdb_peak_rss_under_2GiB": {
            "value": chosen["peak_rss_max_mib"],
            "goal": GOAL_RSS_MIB,
            "pass": chosen["pass_rss"],
            "config": chosen["label"],
        },
    }
    print("\nGoals")
    for name, g in goals.items():
        print(
            f"  {verdict(g['pass'])}  {name}: {g['value']:.4g} (goal {g['goal']}) "
            f"with {g['config']}"
        )
    path = common.write_results(
        "scale_duckdb",
        {
            "n_rows": N_ROWS,
            "attributes": list(ADULT_QI),
            "k": K,
            "data": data,
            "runs": results,
            "goals": goals,
        },
    )
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
