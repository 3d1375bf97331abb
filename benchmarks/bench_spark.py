#!/usr/bin/env python3
"""The Spark engine beside numpy and DuckDB: class statistics and a diagnosis question.

Issue 33, item 2. The data: ``bench_scale.ensure_data`` (rows of the bundled Adult sampled
with replacement, numpy ``default_rng(0)``, Parquet in ``benchmarks/data/``), 1,000,000 rows
by default. Each engine runs in a fresh child process that times

* ``open``: opening the engine on the Parquet file (numpy: reading it whole; Spark: the
  session's start is timed apart, as ``session``, then the file and its row count);
* ``class_stats``: the classes of 8 quasi-identifiers with the histogram of ``salary-class``
  (keys included, as a search asks);
* ``q9``: the Diagnosis Centre's Q9 (the smallest delta for k = 5) on the same 8 attributes;
* ``q4``: Q4 (k of every subset) of 4 of them, 15 subsets (Spark: one batched job per size
  through ``class_sizes_many``, if the diagnosis batches; else 15 jobs).

and reports its peak RSS (``VmHWM``); for Spark also that of its JVM (local mode: the driver
and the executors are one JVM), which is where the data live.

    .venv/bin/python benchmarks/bench_spark.py [--rows 1M] [--engines numpy,duckdb,spark]

Writes ``benchmarks/results/spark.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from bench_scale import ensure_data, label, parse_size  # noqa: E402

QIS = ["age", "sex", "race", "marital-status", "education", "native-country", "workclass",
       "occupation"]  # fmt: skip
SENSITIVE = "salary-class"
K = 5


def _vmhwm_mib(pid: int | str = "self") -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def child(data: str, engine: str) -> dict[str, Any]:
    """Time one engine on ``data`` (run in its own process)."""
    from anonlab import diagnose, open_engine

    out: dict[str, Any] = {"engine": engine}
    options: dict[str, Any] = {}
    if engine == "spark":
        from anonlab.engines.spark_engine import spark_session

        t = time.perf_counter()
        options["spark"] = spark_session()
        out["session_s"] = time.perf_counter() - t
    t = time.perf_counter()
    eng = open_engine(data, engine=engine, **options)
    out["open_s"] = time.perf_counter() - t
    out["n_rows"] = eng.n_rows
    t = time.perf_counter()
    stats = eng.class_stats(QIS, sensitive=[SENSITIVE])
    out["class_stats_s"] = time.perf_counter() - t
    out["classes"] = stats.n_classes
    t = time.perf_counter()
    q9 = diagnose(eng, quasi_identifiers=QIS, k=K, find_delta=True)
    out["q9_s"] = time.perf_counter() - t
    out["q9"] = q9.to_dict()
    t = time.perf_counter()
    q4 = diagnose(eng, attributes=QIS[:4])
    out["q4_s"] = time.perf_counter() - t
    out["q4_evaluations"] = q4.to_dict()["evaluations"]
    out["peak_rss_mib"] = _vmhwm_mib()
    if engine == "spark":
        jvm = options["spark"]._jvm.java.lang.ProcessHandle.current().pid()
        out["jvm_peak_rss_mib"] = _vmhwm_mib(int(jvm))
    return out


def main() -> None:
    """Run every engine in a child process, print a table and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1M")
    parser.add_argument("--engines", default="numpy,duckdb,spark")
    parser.add_argument("--child", nargs=2, metavar=("DATA", "ENGINE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sys.stdout.write(json.dumps(child(*args.child)) + "\n")
        return
    n = parse_size(args.rows)
    data = ensure_data(n)
    results = []
    for engine in [e.strip() for e in args.engines.split(",") if e.strip()]:
        t = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, __file__, "--child", str(data), engine],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            results.append({"engine": engine, "error": proc.stderr.strip().splitlines()[-1:]})
            continue
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        res["process_s"] = time.perf_counter() - t
        results.append(res)
    rows = [
        [
            r["engine"],
            r.get("session_s", 0.0),
            r.get("open_s"),
            r.get("class_stats_s"),
            r.get("q9_s"),
            r.get("q4_s"),
            r.get("peak_rss_mib"),
            r.get("jvm_peak_rss_mib", ""),
        ]
        for r in results
        if "error" not in r
    ]
    common.print_table(
        ["engine", "session s", "open s", "class_stats s", "Q9 s", "Q4 s", "RSS MiB", "JVM MiB"],
        rows,
        title=f"{label(n)} rows, 8 quasi-identifiers",
    )
    answers = {json.dumps(r["q9"], sort_keys=True) for r in results if "q9" in r}
    payload = {
        "rows": n,
        "data": str(data),
        "quasi_identifiers": QIS,
        "sensitive": SENSITIVE,
        "same_q9_answer": len(answers) == 1,
        "results": results,
        "machine": common.machine_info(),
    }
    path = common.write_results("spark", payload)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
