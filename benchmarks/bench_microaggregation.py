"""Microaggregation (MDAV) on Adult's numeric attributes, and at 1 million rows.

For each k (default 2, 5, 10), anonlab's ``microaggregation`` runs on the 30,162 complete
rows of UCI Adult with the numeric quasi-identifiers age, education-num, hours-per-week,
capital-gain and capital-loss (every other column released as it is, ``insensitive``), as a
user runs it (``anonlab.anonymize``: the problem, MDAV, the release, the independent
re-check, the loss), twice: with the default blocks (MDAV in blocks of at most 5,000 rows,
median cuts) and as plain MDAV on the whole table (``block_size: null``). Each row reports
SSE/SST and IL1s (sdcMicro's measures), GCP (anonlab's common loss: a centroid cell's NCP
is its class's range over the attribute's range), the groups, the released classes, the
whole time (wall and CPU: the process's threads together) and MDAV's time, and the load
average after the run (the machine may be shared).

At 1 million rows (``--rows``), at ``--million-ks`` (default 5; the goal is under 60 s):
Adult's numeric rows drawn with replacement (numpy ``default_rng(55)``; about 33 copies of
each row, so groups of identical records lose nothing), and five columns drawn from N(0, 1)
rounded to one decimal (``default_rng(55)``; hardly two records alike).

The peer, in the same run where the peer venv has it (``benchmarks/peers/setup_peers.sh``),
is the PyPI package ``microaggregation`` 0.1.9 (C++). It does not implement MDAV: it
returns the least SSE of consecutive groups of k..2k-1 records in the order it is given
(dynamic programming), no groups. It is run (a) on the standardized records sorted by their
first principal component (projection microaggregation), and (b) on age alone sorted (the
optimal univariate microaggregation, Hansen & Mukherjee 2003), beside anonlab's MDAV on age
alone. Its SSE/SST is on the same standardized values as anonlab's.

    /work/main/.venv/bin/python benchmarks/bench_microaggregation.py [--ks 2,5,10]
        [--million-ks 5] [--rows 1000000] [--quick]

Results: ``benchmarks/results/microaggregation.json`` (``_quick`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import (
    PEER_PYTHON,
    PEERS,
    goal,
    load_adult_complete,
    peak_rss_mib,
    print_goals,
    print_table,
    run_json_child,
    write_results,
)

NUMERIC = ("age", "education-num", "hours-per-week", "capital-gain", "capital-loss")
KS = (2, 5, 10)
SEED = 55


def job(k: int, qis: tuple[str, ...], block_size: int | None, columns: list[str]) -> dict[str, Any]:
    return {
        "quasi_identifiers": {q: {} for q in qis},
        "insensitive": [c for c in columns if c not in qis],
        "models": [{"k_anonymity": {"k": k}}],
        "algorithm": {"name": "microaggregation", "block_size": block_size},
    }


def run(table: Any, k: int, qis: tuple[str, ...], block_size: int | None) -> dict[str, Any]:
    from anonlab import anonymize

    t0, c0 = time.perf_counter(), time.process_time()
    result = anonymize(table, job(k, qis, block_size, table.names))
    total, cpu = time.perf_counter() - t0, time.process_time() - c0
    s = result.search
    return {
        "k": k,
        "block_size": block_size,
        "rows": table.n_rows,
        "sse_sst": s.sse_sst,
        "il1s": s.il1s,
        "gcp": result.loss,
        "groups": s.groups,
        "blocks": s.blocks,
        "smallest_group": s.smallest_group,
        "largest_group": s.largest_group,
        "classes": result.release.verification.classes,
        "k_after": result.release.verification.k_after,
        "suppressed_rows": result.release.verification.suppressed_rows,
        "time_s": total,
        "cpu_s": cpu,
        "load_after": list(os.getloadavg()),
        "mdav_s": s.elapsed_s,
        "peak_rss_mib": peak_rss_mib(),
    }


def normal_table(rows: int) -> Any:
    """``rows`` records of five columns ``round(N(0, 1), 1)``, encoded directly."""
    from anonlab import EncodedTable
    from anonlab.data.table import EncodedColumn

    rng = np.random.default_rng(SEED)
    columns = []
    for j in range(len(NUMERIC)):
        x = np.round(rng.standard_normal(rows), 1) + 0.0  # (no -0.0)
        values, codes = np.unique(x, return_inverse=True)
        labels = np.array([f"{v:.1f}" for v in values], dtype=object)
        columns.append(EncodedColumn(NUMERIC[j], codes.astype(np.int32), labels))
    return EncodedTable(tuple(columns))


def standardized(table: Any, qis: tuple[str, ...]) -> np.ndarray:
    cols = []
    for q in qis:
        col = table[q]
        x = np.array([float(v) for v in col.categories.tolist()])[col.codes]
        sd = x.std()
        cols.append((x - x.mean()) / (sd if sd > 0 else 1.0))
    return np.stack(cols, axis=1)


def peer(points: np.ndarray, k: int, python: Path) -> dict[str, Any] | None:
    """The package's SSE/SST on ``points`` in their order, in the peer venv (None: absent)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "points.npy"
        np.save(path, points)
        doc = run_json_child(
            [str(python), str(PEERS / "microaggregation_sse.py"), str(path), str(k)]
        )
    doc["sse_sst"] = doc["sse"] / doc["sst"] if doc["sst"] else 0.0
    return doc


def peer_available(python: Path) -> str | None:
    if not python.is_file():
        return f"no peer venv at {python} (run benchmarks/peers/setup_peers.sh)"
    p = subprocess.run([str(python), "-c", "import microaggregation"], capture_output=True)
    if p.returncode:
        return f"the peer venv {python} has no 'microaggregation' package"
    return None


def g(value: float) -> str:
    """Four significant digits."""
    return f"{value:.4g}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ks", default=",".join(map(str, KS)))
    ap.add_argument("--million-ks", default="5")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--peer-python", type=Path, default=PEER_PYTHON)
    ap.add_argument("--only", default="adult,million,normal", help="parts to run")
    ap.add_argument("--quick", action="store_true", help="k = 5 only, 100,000 rows")
    ap.add_argument("--name", default="microaggregation", help="the results file's name")
    args = ap.parse_args()
    ks = (5,) if args.quick else tuple(int(k) for k in args.ks.split(","))
    million_ks = (5,) if args.quick else tuple(int(k) for k in args.million_ks.split(","))
    rows = 100_000 if args.quick else args.rows
    parts = {p.strip() for p in args.only.split(",") if p.strip()}
    missing = peer_available(args.peer_python)
    if missing:
        print(f"note: peer skipped: {missing}")

    adult = load_adult_complete()
    run(adult.take(np.arange(100)), 2, NUMERIC, 5000)  # (compiles the kernels, untimed)
    z = standardized(adult, NUMERIC)
    first_pc = np.linalg.svd(z - z.mean(axis=0), full_matrices=False)[2][0]
    by_projection = np.ascontiguousarray(z[np.argsort(z @ first_pc, kind="stable")])
    ages = np.sort(standardized(adult, ("age",))[:, 0])[:, None]

    results: dict[str, Any] = {
        "data": f"UCI Adult, {adult.n_rows:,} complete rows",
        "numeric": list(NUMERIC),
        "adult": [],
        "adult_age_only": [],
        "million": [],
        "normal": [],
        "peer": "microaggregation 0.1.9 (PyPI, C++): least SSE of consecutive groups in the order given",
        "peer_skipped": missing,
    }
    for k in ks if "adult" in parts else ():
        for block in (5000, None):
            row = run(adult, k, NUMERIC, block)
            if block is None and not missing:
                row["peer_projection"] = peer(by_projection, k, args.peer_python)
            results["adult"].append(row)
        row = run(adult, k, ("age",), 5000)
        if not missing:
            row["peer_univariate_optimal"] = peer(ages, k, args.peer_python)
        results["adult_age_only"].append(row)

    def million(table: Any, key: str) -> None:
        z = standardized(table, NUMERIC)
        pc = np.linalg.svd(z[:100_000] - z[:100_000].mean(axis=0), full_matrices=False)[2][0]
        projection = np.ascontiguousarray(z[np.argsort(z @ pc, kind="stable")])
        del z
        for k in million_ks:
            row = run(table, k, NUMERIC, 5000)
            if not missing:
                row["peer_projection"] = peer(projection, k, args.peer_python)
            results[key].append(row)

    if "million" in parts:
        rng = np.random.default_rng(SEED)
        million(adult.take(rng.integers(0, adult.n_rows, size=rows)), "million")
    if "normal" in parts:
        million(normal_table(rows), "normal")

    def peer_cells(row: dict[str, Any], key: str) -> list[Any]:
        p = row.get(key)
        return ["-", "-"] if not p else [g(p["sse_sst"]), g(p["sse_s"])]

    print_table(
        ["k", "blocks", "SSE/SST", "IL1s", "GCP", "groups", "classes", "time s", "MDAV s",
         "peer proj SSE/SST", "peer s"],
        [
            [r["k"], r["blocks"] if r["block_size"] else "plain", g(r["sse_sst"]),
             g(r["il1s"]), g(r["gcp"]), r["groups"], r["classes"], g(r["time_s"]),
             g(r["mdav_s"]),
             *peer_cells(r, "peer_projection")]
            for r in results["adult"]
        ],
        f"Adult ({adult.n_rows:,} rows), {', '.join(NUMERIC)}",
    )  # fmt: skip
    print_table(
        ["k", "SSE/SST", "IL1s", "GCP", "time s", "peer optimal SSE/SST", "peer s"],
        [
            [r["k"], g(r["sse_sst"]), g(r["il1s"]), g(r["gcp"]), g(r["time_s"]),
             *peer_cells(r, "peer_univariate_optimal")]
            for r in results["adult_age_only"]
        ],
        "Adult, age alone (the peer: the optimal univariate SSE)",
    )  # fmt: skip
    for key, title in (
        ("million", f"{rows:,} rows drawn from Adult's numeric rows (default_rng({SEED}))"),
        ("normal", f"{rows:,} rows, 5 columns round(N(0, 1), 1) (default_rng({SEED}))"),
    ):
        print_table(
            ["k", "rows", "blocks", "SSE/SST", "IL1s", "GCP", "time s", "CPU s", "MDAV s",
             "peak MiB", "load", "peer proj SSE/SST", "peer s"],
            [
                [r["k"], r["rows"], r["blocks"], g(r["sse_sst"]), g(r["il1s"]), g(r["gcp"]),
                 g(r["time_s"]), g(r["cpu_s"]), g(r["mdav_s"]), g(r["peak_rss_mib"]),
                 g(r["load_after"][0]),
                 *peer_cells(r, "peer_projection")]
                for r in results[key]
            ],
            title,
        )  # fmt: skip
    goals = {
        f"{key} {r['rows']:,} rows, k = {r['k']}: seconds": goal(r["time_s"], 60.0)
        for key in ("million", "normal")
        for r in results[key]
    }
    print_goals(goals)
    results["goals"] = goals
    path = write_results(args.name + ("_quick" if args.quick else ""), results)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    sys.exit(main())
