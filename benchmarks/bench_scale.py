#!/usr/bin/env python3
"""anonymize at scale: 1, 10 and 100 million rows, in memory (numpy) and out of core (DuckDB).

Issue 33, item 4. The data follow UCI Adult's joint distribution: rows of the bundled Adult
(``src/anonlab/datasets/adult.csv.gz``, its 30,162 rows without a missing value, all 15
columns, ``income`` renamed ``salary-class`` as in ARX's copy) sampled with replacement
(numpy ``default_rng(0)``), each quasi-identifier value replaced with probability
:data:`SWAP` by another row's (rare combinations at every size), written as Parquet in chunks of 1,000,000 rows (never the whole
table in Python) to ``benchmarks/data/`` (git-ignored; reused by later runs). The job: the 9
quasi-identifiers of ARX's adult data with ARX's hierarchy files
(``../shared/datasets/arx/adult_hierarchy_*.csv``), k = 5, at most 5 % suppressed, the loss
metric, the optimal search, the release written as Parquet beside the data.

Each measurement is one child process running ``anonlab.anonymize(data, job, output=...,
engine=E)`` -- reading, the search, the verification, writing and the re-check of the
written file -- and reports its wall time and its peak RSS (``VmHWM``: the child's own
high-water mark, DuckDB's memory included). The numpy engine runs where the table fits
(anonlab refuses it beyond the available memory: that refusal is recorded). Goals (issue
33): DuckDB under 60 s at 10 M rows and 10 min at 100 M on 2 cores, peak memory under
4 GiB at every size, cost linear in rows (the slope of a least-squares line through the
sizes is reported, with each size's seconds per million rows).

    .venv/bin/python benchmarks/bench_scale.py [--sizes 1M,10M,100M] [--engines numpy,duckdb]

``--engines`` takes any registered engine (e.g. ``spark`` once its engine writes releases);
engines that are not registered are skipped with a note, engines that cannot anonymize are
recorded as such. :func:`measure` runs one (size, engine) pair and can be called from other
scripts. Writes ``benchmarks/results/scale.json``.
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
import common  # noqa: E402

SEED = 0
CHUNK = 1_000_000
K = 5
SUPPRESSION = 0.05
DATA = common.HERE / "data"
#: ARX's adult quasi-identifiers (its hierarchy files are named after them).
QUASI_IDENTIFIERS = (
    "sex", "age", "race", "marital-status", "education", "native-country", "workclass",
    "occupation", "salary-class",
)  # fmt: skip
NUMERIC = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")
GOALS_S = {10_000_000: 60.0, 100_000_000: 600.0}
GOAL_RSS_MIB = 4096.0
#: Each quasi-identifier value is replaced, with this probability, by the value of another
#: random row (its marginal), so that rare combinations keep appearing as the table grows
#: (plain resampling repeats Adult's 30,162 rows: beyond 1 M rows every combination is
#: frequent and k = 5 holds without any generalization).
SWAP = 0.006
TAG = f"adult-15col resample seed=0 chunk=1M swap={SWAP} v2"


def parse_size(text: str) -> int:
    """``1M`` -> 1,000,000; ``250k`` -> 250,000; ``12345`` as it is."""
    t = text.strip().lower()
    scale = {"k": 1_000, "m": 1_000_000, "g": 1_000_000_000}.get(t[-1:], 1)
    return int(float(t[:-1] if scale > 1 else t) * scale)


def label(n: int) -> str:
    """1000000 -> ``1M``."""
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n:,}"


# ----------------------------------------------------------------------------- data
def adult_source() -> Any:
    """The bundled Adult's complete rows as an Arrow table (numbers as int64)."""
    import pyarrow as pa

    from anonlab import load_adult

    table = load_adult(drop_missing=True)
    cols = {}
    for name in table.order:
        labels = table.column(name).labels()
        out = "salary-class" if name == "income" else name
        if name in NUMERIC:
            cols[out] = pa.array(labels.astype("int64"))
        else:
            cols[out] = pa.array(labels.tolist(), pa.string())
    return pa.table(cols)


def ensure_data(n: int, regenerate: bool = False) -> Path:
    """The Parquet file of ``n`` sampled rows (made once, chunk by chunk)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = DATA / f"adult_{label(n)}_seed{SEED}.parquet"
    if path.exists() and not regenerate:
        md = pq.ParquetFile(path).metadata
        if md.num_rows == n and (md.metadata or {}).get(b"anonlab-bench", b"").decode() == TAG:
            return path
    import pyarrow.compute as pc

    DATA.mkdir(parents=True, exist_ok=True)
    src = adult_source()
    src = src.replace_schema_metadata({"anonlab-bench": TAG})
    rng = np.random.default_rng(SEED)
    tmp = path.with_suffix(".parquet.tmp")
    t0 = time.perf_counter()
    with pq.ParquetWriter(tmp, src.schema) as writer:
        for start in range(0, n, CHUNK):
            size = min(CHUNK, n - start)
            chunk = src.take(pa.array(rng.integers(0, src.num_rows, size=size)))
            for q in QUASI_IDENTIFIERS:  # a few values from the marginal: new combinations
                swap = pa.array(rng.random(size) < SWAP)
                other = src.column(q).take(pa.array(rng.integers(0, src.num_rows, size=size)))
                at = chunk.schema.get_field_index(q)
                chunk = chunk.set_column(at, q, pc.if_else(swap, other, chunk.column(q)))
            writer.write_table(chunk, row_group_size=CHUNK)
    os.replace(tmp, path)
    print(
        f"generated {path.name}: {n:,} rows, {path.stat().st_size / 2**20:,.0f} MiB in "
        f"{time.perf_counter() - t0:.0f} s",
        flush=True,
    )
    return path


def job() -> dict[str, Any]:
    """The job: ARX's 9 adult quasi-identifiers and hierarchies, k = 5, 5 % suppression."""
    arx = common.shared_dir() / "datasets" / "arx"
    return {
        "quasi_identifiers": {
            q: {"hierarchy": str(arx / f"adult_hierarchy_{q}.csv")} for q in QUASI_IDENTIFIERS
        },
        "models": [{"k_anonymity": {"k": K}}],
        "suppression": SUPPRESSION,
        "metric": "loss",
        "algorithm": "optimal",
    }


# ----------------------------------------------------------------------------- child
def child(data: str, engine: str, output: str) -> None:
    """One measurement in this fresh process; prints one JSON line."""
    t0 = time.perf_counter()
    import anonlab

    t1 = time.perf_counter()
    out: dict[str, Any] = {"engine": engine, "import_s": t1 - t0}
    try:
        result = anonlab.anonymize(data, job(), output=output, engine=engine)
    except anonlab.AnonlabError as exc:
        out.update(refused=str(exc), peak_rss_mib=common.peak_rss_mib("self"))
        print(json.dumps(out))
        return
    t2 = time.perf_counter()
    out.update(
        total_s=t2 - t1,
        search_s=result.search.elapsed_s,
        transformation=result.transformation,
        loss=result.loss,
        suppressed_rows=result.suppressed_rows,
        classes=result.release.verification.classes,
        output_bytes=Path(output).stat().st_size,
        peak_rss_mib=common.peak_rss_mib("self"),
    )
    print(json.dumps(out))


def measure(n: int, engine: str, *, regenerate: bool = False) -> dict[str, Any]:
    """Time ``anonymize`` of ``n`` rows on ``engine`` in a child process.

    Returns
    -------
    dict
        ``rows``, ``engine``, ``total_s`` (the ``anonymize`` call), ``process_wall_s``,
        ``peak_rss_mib``, the result (levels, loss, suppressed rows, classes); or
        ``refused`` (the one-line error) when anonlab refuses the engine for this size, or
        ``skipped`` when the engine is not registered.
    """
    from anonlab.engines import ENGINES

    if engine not in ENGINES:
        return {"rows": n, "engine": engine, "skipped": "engine not registered"}
    data = ensure_data(n, regenerate)
    output = DATA / f"release_{label(n)}_{engine}.parquet"
    print(f"  {label(n)} rows, {engine} ...", flush=True)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", engine, str(data)]
    doc = common.run_json_child([*cmd, str(output)])
    output.unlink(missing_ok=True)
    doc["rows"] = n
    return doc


def slope(points: list[tuple[int, float]]) -> dict[str, float] | None:
    """Least-squares line of seconds against millions of rows, and its fit."""
    if len(points) < 2:
        return None
    import numpy as np

    x = np.array([p[0] / 1e6 for p in points])
    y = np.array([p[1] for p in points])
    b, a = np.polyfit(x, y, 1)
    pred = a + b * x
    ss = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float(((y - pred) ** 2).sum()) / ss if ss else 1.0
    return {"seconds_per_million_rows": float(b), "intercept_s": float(a), "r2": r2}


# ----------------------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", default="1M,10M,100M", help="rows per run (1M, 10M, ...)")
    ap.add_argument("--engines", default="numpy,duckdb", help="engines, comma separated")
    ap.add_argument("--regenerate", action="store_true", help="rebuild the data files")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.rest[0], args.child, args.rest[1])
        return
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    runs = []
    for n in sizes:  # sequential: the machine's 2 cores are shared
        for engine in engines:
            runs.append(measure(n, engine, regenerate=args.regenerate))
    rows = []
    for r in runs:
        status = r.get("skipped") or r.get("refused")
        rows.append(
            [
                f"{r['rows']:,}",
                r["engine"],
                "-" if status else f"{r['total_s']:.1f}",
                "-" if status else f"{r['total_s'] / (r['rows'] / 1e6):.2f}",
                f"{r['peak_rss_mib']:,.0f}" if "peak_rss_mib" in r else "-",
                (status[:70] + "...") if status and len(status) > 70 else (status or ""),
            ]
        )
    common.print_table(
        ["rows", "engine", "anonymize s", "s per M rows", "peak RSS MiB", "note"],
        rows,
        title="anonymize (read, search, verify, write, re-check): 9 QIs, k = 5, 5 % suppression",
    )
    slopes = {}
    for engine in engines:
        done = [(r["rows"], r["total_s"]) for r in runs if r["engine"] == engine and "total_s" in r]
        fit = slope(done)
        if fit is not None:
            slopes[engine] = fit
            print(
                f"{engine}: {fit['seconds_per_million_rows']:.2f} s per million rows "
                f"(intercept {fit['intercept_s']:.1f} s, r^2 = {fit['r2']:.4f})"
            )
    answers = {
        json.dumps([r["transformation"], r["suppressed_rows"], r["classes"]], sort_keys=True)
        for r in runs
        if "total_s" in r and r["rows"] == sizes[0]
    }
    goals = {}
    for r in runs:
        if r["engine"] != "duckdb" or "total_s" not in r:
            continue
        if r["rows"] in GOALS_S:
            goals[f"duckdb_{label(r['rows'])}_time"] = common.goal(r["total_s"], GOALS_S[r["rows"]])
        goals[f"duckdb_{label(r['rows'])}_rss"] = common.goal(r["peak_rss_mib"], GOAL_RSS_MIB)
    common.print_goals(goals)
    if len(answers) > 1:
        print(f"engines disagree at {label(sizes[0])} rows: {answers}")
    path = common.write_results(
        "scale",
        {
            "job": {**job(), "quasi_identifiers": list(QUASI_IDENTIFIERS)},
            "data": f"bundled Adult (30,162 complete rows, 15 columns) resampled, seed {SEED}",
            "runs": runs,
            "slopes": slopes,
            "goals": goals,
            "engines_agree_at_smallest_size": len(answers) <= 1,
        },
    )
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
