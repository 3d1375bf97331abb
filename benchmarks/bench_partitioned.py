#!/usr/bin/env python3
"""The row-placing algorithms out of core, partition by partition (issue 33, item 3).

``progressive`` ((alpha,k) local recoding, paper 002) and ``wong_nh`` (non-homogeneous
generalization, paper 003) on the scale benchmark's data (``benchmarks/bench_scale.py``:
Adult resampled to 1,000,000 rows, ARX's 9 adult quasi-identifiers and hierarchies, k = 5;
``progressive`` with 5 % suppression and the loss metric, ``wong_nh`` with none and GCP),
anonymized with ``--engine duckdb``: DuckDB sorts the table on its quasi-identifiers and
streams it in blocks, each block is anonymized in memory and verified, the union is written
in the source's order and re-checked. Beside it, the in-memory algorithm (``--engine numpy``)
on the same table, and on its first 100,000 rows with one block (the same release) and with
blocks of 25,000 rows: the loss of the release, measured on the release by the job's metric.
With ``--engines numpy,duckdb,spark`` the Spark engine (local[2]) runs the same blocks too:
Spark sorts the rows, the driver anonymizes the blocks, Spark writes the release in the
source's order and reads it back; its session start is part of its time.

Each measurement is one child process running ``anonlab.anonymize(...)`` (reading, the
blocks, verification, writing the Parquet release and its re-check) and reports its wall
time and its peak RSS (``VmHWM``, DuckDB's memory included; for Spark the peak of its JVM
is added, an upper bound of the two processes' peak together). The machine has 2 cores shared
with other jobs: its load is recorded before and after.

    .venv/bin/python benchmarks/bench_partitioned.py [--algorithms progressive,wong_nh]
        [--engines numpy,duckdb,spark] [--name partitioned]

With ``--rows 10M`` (issue 56, item 2) each algorithm runs on 1,000,000 rows in memory and
in DuckDB's blocks (the cost of partitioning: the blocks' loss against the in-memory loss)
and on 10,000,000 rows in DuckDB's blocks (goals: under 300 s and 4 GiB). ``personalized``
takes occupation as its sensitive attribute (benchmarks/hierarchies/adult_occupation_taxonomy
.csv), every record's limit 0.25 and k = 2, the other 8 columns as quasi-identifiers:

    .venv/bin/python benchmarks/bench_partitioned.py --rows 10M
        --algorithms progressive,top_down,wong_nh,murakami_uno,personalized

The statistics-office families (issue 56, item 2) run the same way, with the jobs of their
own benchmarks: ``mondrian`` on the 9 quasi-identifiers with GCP (age as intervals, the
others as hierarchy labels), ``local_suppression`` with ``generalize: optimal`` (each block's
levels searched on it under its 5 % share, then blanks) and GCP, ``microaggregation`` (MDAV in
blocks of 5,000 rows, the mean) on the numbers age, education-num, hours-per-week,
capital-gain and capital-loss with GCP and no suppression; all at k = 5:

    .venv/bin/python benchmarks/bench_partitioned.py --rows 10M
        --algorithms mondrian,local_suppression,microaggregation
        --name partitioned_10M_statoffice

Writes ``benchmarks/results/<name>.json`` (``partitioned.json`` by default,
``partitioned_10M.json`` with ``--rows 10M``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_scale  # noqa: E402
import common  # noqa: E402

MILLION = 1_000_000
HEAD = 100_000
#: microaggregation's quasi-identifiers: Adult's numbers (bench_microaggregation.py).
MICRO_QUASI_IDENTIFIERS = (
    "age", "education-num", "hours-per-week", "capital-gain", "capital-loss",
)  # fmt: skip


def job(algorithm: str) -> dict[str, Any]:
    """The scale benchmark's job with ``algorithm``: GCP and no suppression for a cover; for
    ``personalized`` (paper 004) occupation becomes the sensitive attribute (its taxonomy,
    every record's limit 0.25, k = 2) and the other 8 stay quasi-identifiers."""
    out = bench_scale.job()
    out["algorithm"] = algorithm
    if algorithm in ("wong_nh", "murakami_uno"):
        out["metric"] = "gcp"
        out["suppression"] = 0.0
    if algorithm == "personalized":
        sensitive = "occupation"
        out["quasi_identifiers"].pop(sensitive)
        out["sensitive"] = [sensitive]
        tree = common.HERE / "hierarchies" / "adult_occupation_taxonomy.csv"
        out["models"] = [
            {"k_anonymity": {"k": 2}},
            {"personalized_leakage": {"attribute": sensitive, "hierarchy": str(tree)}},
        ]
        out["personalized"] = {"default_limit": 0.25}
        out["metric"] = "info_left"
        out["suppression"] = 0.0
    if algorithm == "mondrian":  # (bench_families.py): age as intervals, the rest labels
        out["metric"] = "gcp"
    if algorithm == "local_suppression":  # (bench_local_suppression.py)
        out["algorithm"] = {"name": "local_suppression", "generalize": "optimal"}
        out["metric"] = "gcp"
    if algorithm == "microaggregation":  # (bench_microaggregation.py): the numbers, MDAV
        out["quasi_identifiers"] = {q: {} for q in MICRO_QUASI_IDENTIFIERS}
        out["algorithm"] = {"name": "microaggregation", "block_size": 5000}
        out["metric"] = "gcp"
        out["suppression"] = 0.0
    return out


def head(path: Path, rows: int) -> Path:
    """The first ``rows`` rows of ``path`` as their own Parquet file (made once)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = path.with_name(f"{path.stem}_head{rows // 1000}k.parquet")
    if out.exists() and pq.ParquetFile(out).metadata.num_rows == rows:
        return out
    batches = []
    count = 0
    for batch in pq.ParquetFile(path).iter_batches(batch_size=min(rows, 65_536)):
        batches.append(batch.slice(0, rows - count))
        count += batches[-1].num_rows
        if count >= rows:
            break
    pq.write_table(pa.Table.from_batches(batches), out)
    return out


def child(algorithm: str, engine: str, block_rows: str, data: str, output: str) -> None:
    """One measurement in this fresh process; prints one JSON line."""
    import anonlab

    t0 = time.perf_counter()
    rows = None if block_rows == "-" else int(block_rows)
    options: dict[str, Any] = {} if engine == "numpy" else {"block_rows": rows}
    if engine == "spark":
        from anonlab.engines.spark_engine import spark_session

        session = spark_session()
        options["engine_options"] = {"spark": session}
    result = anonlab.anonymize(data, job(algorithm), output=output, engine=engine, **options)
    total = time.perf_counter() - t0
    search = result.search
    peak = common.peak_rss_mib("self")
    if engine == "spark":  # the JVM's own peak added (local mode: the driver and executors)
        jvm = int(session._jvm.java.lang.ProcessHandle.current().pid())
        status = Path(f"/proc/{jvm}/status").read_text().splitlines()
        peak += next(int(x.split()[1]) / 1024 for x in status if x.startswith("VmHWM:"))
    print(
        json.dumps(
            {
                "total_s": total,
                "loss": result.loss,
                "metric": result.metric,
                "suppressed_rows": result.suppressed_rows,
                "blocks": getattr(search, "blocks", 1),
                "rows_per_block": getattr(search, "block_rows", None),
                "blocks_s": sum(b["seconds"] for b in getattr(search, "per_block", [])) or None,
                "spanning_classes": getattr(search, "spanning_classes", None),
                "peak_rss_mib": peak,
            }
        )
    )


def measure(algorithm: str, engine: str, block_rows: int | None, data: Path) -> dict[str, Any]:
    """Run one (algorithm, engine, block size) on ``data`` in a child process."""
    output = bench_scale.DATA / f"release_partitioned_{algorithm}_{engine}.parquet"
    size = "-" if block_rows is None else str(block_rows)
    print(f"  {algorithm} {engine} block_rows={size} {data.name} ...", flush=True)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", algorithm, engine, size]
    doc = common.run_json_child([*cmd, str(data), str(output)])
    output.unlink(missing_ok=True)
    doc.update(algorithm=algorithm, engine=engine, block_rows=block_rows, data=data.name)
    return doc


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--algorithms", default="progressive,wong_nh", help="comma separated")
    ap.add_argument("--engines", default="numpy,duckdb", help="comma separated (also: spark)")
    ap.add_argument("--name", default=None, help="the results file's name")
    ap.add_argument(
        "--rows",
        default="1M",
        choices=("1M", "10M"),
        help="1M: 100,000 and 1,000,000 rows; 10M: 1,000,000 in memory and in blocks, and "
        "10,000,000 in blocks (issue 56)",
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, *args.rest)
        return
    if args.rows == "10M":
        ten_million(args)
        return
    big = bench_scale.ensure_data(MILLION)
    small = head(big, HEAD)
    plan = [
        (small, "numpy", None),
        (small, "duckdb", HEAD),  # one block: the in-memory release
        (small, "duckdb", 25_000),
        (big, "numpy", None),
        (big, "duckdb", None),  # the default: 100,000 rows per block
        (small, "spark", HEAD),
        (small, "spark", 25_000),
        (big, "spark", None),
    ]
    engines = {e.strip() for e in args.engines.split(",") if e.strip()}
    plan = [p for p in plan if p[1] in engines]
    runs = []
    for algorithm in [a.strip() for a in args.algorithms.split(",") if a.strip()]:
        for data, engine, block_rows in plan:  # sequential: the 2 cores are shared
            runs.append(measure(algorithm, engine, block_rows, data))
    rows = []
    for r in runs:
        n = HEAD if r["data"] == small.name else MILLION
        rows.append(
            [
                r["algorithm"],
                f"{n:,}",
                r["engine"],
                "-" if r["engine"] == "numpy" else f"{r['block_rows'] or 100_000:,}",
                r["blocks"],
                f"{r['total_s']:.1f}",
                f"{r['peak_rss_mib']:,.0f}",
                f"{r['metric']} {r['loss']:.5f}",
                r["suppressed_rows"],
            ]
        )
    common.print_table(
        ["algorithm", "rows", "engine", "block rows", "blocks", "anonymize s", "peak RSS MiB",
         "loss (on the release)", "suppressed"],
        rows,
        title="anonymize per partition (duckdb, spark) beside in memory (numpy): 9 QIs, k = 5",
    )  # fmt: skip
    same = {}
    for algorithm in {r["algorithm"] for r in runs}:
        mine = [r for r in runs if r["algorithm"] == algorithm and r["data"] == small.name]
        one = [r for r in mine if r["engine"] == "duckdb" and r["block_rows"] == HEAD]
        mem = [r for r in mine if r["engine"] == "numpy"]
        if one and mem:
            same[algorithm] = abs(one[0]["loss"] - mem[0]["loss"]) <= 1e-9 * max(mem[0]["loss"], 1)
    print("\none block of 100,000 rows gives the in-memory loss: " + json.dumps(same))
    path = common.write_results(
        args.name or "partitioned",
        {
            "job": {**job("progressive"), "quasi_identifiers": list(bench_scale.QUASI_IDENTIFIERS)},
            "data": f"{big.name} (bench_scale.py) and its first {HEAD:,} rows",
            "runs": runs,
            "one_block_equals_in_memory": same,
        },
    )
    print(f"wrote {path}")


def ten_million(args: argparse.Namespace) -> None:
    """Issue 56, item 2: each algorithm on 10,000,000 rows in DuckDB's blocks, and the cost
    of partitioning on 1,000,000 rows (in blocks against in memory). Goals: 10 M under 300 s
    and 4 GiB; the loss in blocks within 5 % of the in-memory loss."""
    small = bench_scale.ensure_data(MILLION)
    big = bench_scale.ensure_data(10 * MILLION)
    runs = []
    for algorithm in [a.strip() for a in args.algorithms.split(",") if a.strip()]:
        for data, engine in ((small, "numpy"), (small, "duckdb"), (big, "duckdb")):
            runs.append(measure(algorithm, engine, None, data))
            r = runs[-1]
            print(f"    {r['total_s']:.1f} s, {r['peak_rss_mib']:,.0f} MiB, loss {r['loss']:.6f}",
                  flush=True)  # fmt: skip
    rows, goals = [], {}
    for algorithm in dict.fromkeys(r["algorithm"] for r in runs):
        mine = [r for r in runs if r["algorithm"] == algorithm]
        mem = next(r for r in mine if r["engine"] == "numpy")
        part = next(r for r in mine if r["engine"] == "duckdb" and r["data"] == small.name)
        ten = next(r for r in mine if r["data"] == big.name)
        # every metric is reported as a loss (info_left as 1 - the information left)
        cost = (part["loss"] - mem["loss"]) / mem["loss"] if mem["loss"] else 0.0
        for r in mine:
            rows.append([
                algorithm, "10,000,000" if r is ten else "1,000,000", r["engine"], r["blocks"],
                f"{r['total_s']:.1f}", f"{r['peak_rss_mib']:,.0f}",
                f"{r['metric']} {r['loss']:.6f}", "" if r is not part else f"{100 * cost:+.2f} %",
            ])  # fmt: skip
        goals[f"{algorithm}: 10 M rows under 300 s"] = ten["total_s"] < 300
        goals[f"{algorithm}: 10 M rows under 4 GiB"] = ten["peak_rss_mib"] < 4096
        goals[f"{algorithm}: blocks' loss within 5 % of in memory (1 M)"] = cost <= 0.05
        for r in (part, ten):
            r["partitioning_cost"] = cost
    common.print_table(
        ["algorithm", "rows", "engine", "blocks", "anonymize s", "peak RSS MiB",
         "loss (on the release)", "blocks vs in memory"],
        rows,
        title="10 M rows out of core (duckdb blocks of 100,000, mondrian's of 250,000) and "
        "1 M in memory",
    )  # fmt: skip
    print("\ngoals: " + json.dumps(goals, indent=1))
    path = common.write_results(
        args.name or "partitioned_10M",
        {
            "jobs": {a: job(a) for a in dict.fromkeys(r["algorithm"] for r in runs)},
            "data": f"{big.name} and {small.name} (bench_scale.py)",
            "runs": runs,
            "goals": goals,
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
