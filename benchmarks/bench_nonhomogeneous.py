#!/usr/bin/env python3
"""Non-homogeneous k-anonymity beside Murakami & Uno's Tables 8-18 (issue 30, paper 003).

Runs ``wong_nh`` (Wong et al.'s randomized baseline) and ``murakami_uno`` (anonlab's default
first phase, pattern rings, then negative-cycle canceling; and with ``--matchings`` also the
paper's own first phase, k - 1 minimum-weight perfect matchings) in the same process on:

* ``census``: CENSUS Occ 100k (``census-ipums/census100k``), all 8 columns as
  quasi-identifiers, k = 3..10, beside Table 8. The data is read from the shared directory
  and never copied into the repository.
* ``sal``: the same 8 columns of ``census-ipums/sal500k.txt`` (salary in place of
  occupation), its first 200k, 300k, 400k and 500k rows: a labelled substitute for the
  paper's Occ 200k-500k (Tables 9-12, not obtainable).
* ``random``: 10 quasi-identifiers drawn from a normal distribution (sd 1.0 and 1.5, rounded
  to integers, numpy seed 2017), 100k rows (Tables 13-14) and 1 million rows (Tables 15-16).
  Tables 17-18 (10 million rows) are printed for reference only.
* ``scaling`` (issue 56): ``murakami_uno`` alone on Random sd=1.0 at 250,000, 500,000 and
  1,000,000 rows, k = 3 and 10 (``--scaling-ks``), each run in a child process: its time,
  GCP, phases, and the peak RSS of the main process and of the largest worker process
  (goal: 1 M rows under 30 s, memory linear in rows for a fixed k).
* ``cup``: the paper's own first phase (``initial: matchings``) with hierarchy generalization
  on the first 2,000, 4,000 and 8,000 rows of ARX's cup (``arx/cup.csv``, its 8 columns and
  hierarchies, k = 5, one process), each run in a child process stopped after ``--timeout``
  seconds (issue 51: scipy's LAPJVsp did not finish on fractional weights, and reading the
  labels of cup's 100,000-leaf ZIP hierarchy took a minute). ``--baseline-src DIR`` times
  another version's ``src`` folder in the same run (``git archive <commit> src | tar -x -C
  DIR``).

The GCP is the paper's Definition 2 (the share of hidden cells; ``generalization:
concealing``), measured by the verification on the released labels. Times are the whole
``anonymize()`` call on a table in memory (2 worker processes), verification included. For
each census run the independent check of the release (``anonlab check --release``: the whole
anonymity graph, identical records contracted, the largest k by max-flow) is timed too.

    /work/main/.venv/bin/python benchmarks/bench_nonhomogeneous.py [--only census,sal,random]
        [--ks 3,4,5,6,7,8,9,10] [--matchings]
    /work/main/.venv/bin/python benchmarks/bench_nonhomogeneous.py --only scaling
        [--scaling-ks 3,10]
    /work/main/.venv/bin/python benchmarks/bench_nonhomogeneous.py --only cup
        [--cup-rows 2000,4000,8000] [--timeout 300] [--baseline-src DIR]

Writes benchmarks/results/nonhomogeneous_<parts>.json (``nonhomogeneous_census.json``, ...).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import print_table  # noqa: E402

from anonlab import CsvOptions, anonymize, read_table  # noqa: E402
from anonlab.data.table import EncodedTable  # noqa: E402
from anonlab.jobs import build_problem, load_job  # noqa: E402
from anonlab.release import check_release  # noqa: E402

CENSUS = ("age", "gender", "education", "marital", "race", "workclass", "country", "occupation")
SAL = CENSUS[:-1] + ("salary",)
SEED = 2017
KS = tuple(range(3, 11))

# The paper's tables: k -> (GCPw, Wong's time s, GCPt, two-phase time min, Gap %).
# Table 13's row k = 5 is unreadable in the extracted text (None).
PAPER: dict[str, dict[int, tuple[float, float, float, float, float] | None]] = {
    "Table 8 Occ_100k": {
        3: (0.14, 0.24, 0.12, 4, 15.1),
        4: (0.16, 0.25, 0.14, 5, 12.9),
        5: (0.18, 0.23, 0.16, 6, 11.9),
        6: (0.19, 0.25, 0.17, 8, 11.6),
        7: (0.21, 0.28, 0.18, 10, 11.0),
        8: (0.22, 0.27, 0.19, 10, 11.1),
        9: (0.22, 0.27, 0.20, 12, 10.6),
        10: (0.23, 0.28, 0.21, 13, 10.5),
    },
    "Table 9 Occ_200k": {
        3: (0.12, 0.45, 0.10, 8, 15.0),
        4: (0.14, 0.49, 0.12, 12, 13.6),
        5: (0.15, 0.48, 0.14, 13, 13.7),
        6: (0.17, 0.48, 0.15, 17, 12.3),
        7: (0.18, 0.51, 0.16, 19, 12.3),
        8: (0.19, 0.49, 0.17, 22, 12.0),
        9: (0.20, 0.52, 0.18, 26, 11.9),
        10: (0.21, 0.51, 0.19, 27, 11.7),
    },
    "Table 10 Occ_300k": {
        3: (0.10, 0.65, 0.09, 13, 18.8),
        4: (0.12, 0.67, 0.11, 17, 16.9),
        5: (0.14, 0.67, 0.12, 22, 15.6),
        6: (0.15, 0.70, 0.13, 26, 15.3),
        7: (0.16, 0.73, 0.14, 29, 14.7),
        8: (0.17, 0.76, 0.15, 34, 14.4),
        9: (0.18, 0.73, 0.16, 37, 14.0),
        10: (0.19, 0.76, 0.17, 42, 13.2),
    },
    "Table 11 Occ_400k": {
        3: (0.10, 0.93, 0.08, 15, 17.2),
        4: (0.11, 0.88, 0.10, 20, 16.1),
        5: (0.13, 0.93, 0.11, 27, 14.3),
        6: (0.14, 0.90, 0.12, 31, 13.9),
        7: (0.15, 0.93, 0.13, 38, 14.0),
        8: (0.16, 0.96, 0.14, 42, 14.3),
        9: (0.17, 1.01, 0.15, 49, 14.5),
        10: (0.18, 1.07, 0.16, 54, 13.3),
    },
    "Table 12 Occ_500k": {
        3: (0.09, 1.12, 0.08, 18, 18.9),
        4: (0.11, 1.15, 0.09, 24, 17.8),
        5: (0.12, 1.13, 0.10, 31, 17.2),
        6: (0.13, 1.16, 0.11, 38, 17.5),
        7: (0.14, 1.18, 0.12, 43, 17.4),
        8: (0.15, 1.21, 0.13, 49, 17.3),
        9: (0.16, 1.26, 0.14, 54, 16.7),
        10: (0.17, 1.27, 0.14, 61, 17.0),
    },
    "Table 13 Random_100k sd=1.0": {
        3: (0.31, 0.20, 0.21, 5, 47.5),
        4: (0.35, 0.18, 0.26, 5, 36.4),
        5: None,
        6: (0.40, 0.24, 0.31, 7, 26.6),
        7: (0.41, 0.23, 0.34, 11, 22.2),
        8: (0.42, 0.28, 0.36, 12, 18.7),
        9: (0.43, 0.28, 0.38, 14, 14.7),
        10: (0.44, 0.34, 0.39, 15, 13.2),
    },
    "Table 14 Random_100k sd=1.5": {
        3: (0.40, 0.20, 0.27, 3, 45.9),
        4: (0.44, 0.20, 0.33, 5, 35.7),
        5: (0.47, 0.20, 0.36, 8, 31.6),
        6: (0.49, 0.26, 0.39, 8, 25.0),
        7: (0.50, 0.24, 0.41, 9, 22.8),
        8: (0.51, 0.28, 0.42, 12, 19.6),
        9: (0.52, 0.29, 0.44, 14, 16.8),
        10: (0.52, 0.35, 0.46, 15, 14.5),
    },
    "Table 15 Random_1m sd=1.0": {
        3: (0.08, 1.74, 0.05, 28, 53.1),
        4: (0.11, 1.82, 0.07, 40, 49.7),
        5: (0.13, 1.99, 0.09, 50, 42.9),
        6: (0.14, 1.99, 0.10, 61, 41.2),
        7: (0.16, 2.21, 0.11, 72, 37.9),
        8: (0.17, 2.27, 0.12, 86, 36.1),
        9: (0.18, 2.43, 0.13, 95, 34.1),
        10: (0.19, 2.49, 0.14, 110, 32.1),
    },
    "Table 16 Random_1m sd=1.5": {
        3: (0.28, 1.90, 0.20, 41, 37.3),
        4: (0.31, 1.90, 0.24, 55, 29.9),
        5: (0.33, 2.05, 0.27, 70, 23.0),
        6: (0.35, 2.33, 0.29, 82, 18.1),
        7: (0.36, 2.38, 0.31, 95, 14.6),
        8: (0.37, 2.55, 0.33, 108, 11.7),
        9: (0.38, 2.74, 0.34, 122, 9.5),
        10: (0.38, 2.83, 0.36, 133, 7.5),
    },
    "Table 17 Random_10m sd=1.0": {
        3: (0.04, 20.43, 0.03, 273, 47.3),
        4: (0.06, 20.85, 0.04, 373, 44.2),
        5: (0.07, 21.47, 0.05, 477, 37.7),
        6: (0.08, 22.14, 0.06, 581, 35.6),
        7: (0.09, 22.97, 0.07, 693, 32.8),
        8: (0.10, 23.86, 0.07, 799, 30.9),
        9: (0.11, 24.81, 0.08, 910, 28.8),
        10: (0.11, 25.91, 0.09, 1024, 27.0),
    },
    "Table 18 Random_10m sd=1.5": {
        3: (0.15, 21.35, 0.11, 353, 38.2),
        4: (0.18, 22.21, 0.14, 458, 30.3),
        5: (0.20, 23.13, 0.16, 563, 23.9),
        6: (0.21, 24.35, 0.18, 673, 20.1),
        7: (0.22, 25.70, 0.19, 790, 17.0),
        8: (0.23, 27.21, 0.20, 901, 14.6),
        9: (0.24, 28.74, 0.22, 1009, 12.5),
        10: (0.25, 30.06, 0.23, 1119, 10.6),
    },
}


def job(columns: tuple[str, ...], k: int, algorithm: dict[str, Any]) -> dict[str, Any]:
    """All columns quasi-identifiers, concealing (Definition 2), GCP."""
    return {
        "quasi_identifiers": list(columns),
        "models": [{"k_anonymity": {"k": k}}],
        "metric": "gcp",
        "algorithm": {"n_jobs": 2, **algorithm} if algorithm["name"] != "wong_nh" else algorithm,
    }


def census_table(name: str, columns: tuple[str, ...], rows: int | None = None) -> EncodedTable:
    """A CENSUS file of the shared directory (never copied into the repository)."""
    path = common.shared_file("datasets", "census-ipums", name)
    options = CsvOptions(separator=",", header=False, names=columns, strip=True)
    if name.endswith(".txt"):  # sal500k: single spaces and a trailing space
        text = path.read_text().split("\n")
        values = np.array(
            [line.split() for line in text[: rows if rows else None] if line.strip()], dtype=object
        )
        return EncodedTable.from_columns({c: values[:, j] for j, c in enumerate(columns)})
    table = read_table(path, csv_options=options)
    return table if rows is None else table.take(np.arange(rows))


def random_table(rows: int, sd: float) -> EncodedTable:
    """10 quasi-identifiers, each ``round(N(0, sd))``, numpy seed 2017."""
    rng = np.random.default_rng(SEED)
    data = np.rint(rng.normal(0.0, sd, size=(rows, 10))).astype(np.int64)
    return EncodedTable.from_columns({f"q{j}": data[:, j].astype(str) for j in range(10)})


def run(
    table: EncodedTable, columns: tuple[str, ...], k: int, algorithm: dict[str, Any]
) -> dict[str, Any]:
    """One anonymization, timed, with the verification's figures."""
    spec = job(columns, k, algorithm)
    start = time.perf_counter()
    result = anonymize(table, spec)
    elapsed = time.perf_counter() - start
    out = {
        "algorithm": algorithm,
        "k": k,
        "gcp": result.loss,
        "seconds": elapsed,
        "search": result.search.to_dict(),
        "verification": result.release.verification.to_dict(),
    }
    out["_result"] = result
    return out


def independent_check(
    table: EncodedTable, columns: tuple[str, ...], k: int, result: Any
) -> dict[str, Any]:
    """``anonlab check --release`` on the release: the whole graph, largest k by max-flow."""
    released = EncodedTable.from_columns({c: result.columns[c] for c in columns})
    problem = build_problem(table, load_job(job(columns, k, {"name": "wong_nh"})))
    start = time.perf_counter()
    found = check_release(problem, released)
    return {"seconds": time.perf_counter() - start, **found.to_dict()}


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b == 0:
        return "-"
    return f"{a / b:.2f}"


def suite(
    label: str,
    table: EncodedTable,
    columns: tuple[str, ...],
    ks: tuple[int, ...],
    paper: str,
    matchings: bool,
    check: bool,
) -> list[dict[str, Any]]:
    """Every k of one data set; prints the comparison table."""
    rows: list[dict[str, Any]] = []
    print(f"\n{label}: {table.n_rows:,} rows, {len(columns)} quasi-identifiers", flush=True)
    for k in ks:
        wong = run(table, columns, k, {"name": "wong_nh", "seed": 0})
        mu = run(table, columns, k, {"name": "murakami_uno"})
        entry: dict[str, Any] = {"k": k, "wong_nh": wong, "murakami_uno": mu}
        if matchings:
            entry["murakami_uno_matchings"] = run(
                table, columns, k, {"name": "murakami_uno", "initial": "matchings"}
            )
        if check:
            entry["check_release"] = independent_check(table, columns, k, mu["_result"])
        for key in ("wong_nh", "murakami_uno", "murakami_uno_matchings"):
            if key in entry:
                entry[key].pop("_result")
        search = mu["search"]
        print(
            f"  k={k}: wong {wong['gcp']:.4f} ({wong['seconds']:.2f} s), murakami_uno "
            f"{mu['gcp']:.4f} ({mu['seconds']:.1f} s, LB {search['lower_bound']:.4f})"
            + (
                f", matchings {entry['murakami_uno_matchings']['gcp']:.4f} "
                f"({entry['murakami_uno_matchings']['seconds']:.1f} s)"
                if matchings
                else ""
            )
            + (
                f", check --release k={entry['check_release']['largest_k']} in "
                f"{entry['check_release']['seconds']:.2f} s"
                if check
                else ""
            ),
            flush=True,
        )
        rows.append(entry)
    ref = PAPER.get(paper, {})
    header = [
        "k",
        "GCPw",
        "paper",
        "ratio",
        "Wong s",
        "paper s",
        "GCPt",
        "paper",
        "ratio",
        "LB",
        "LB_Gap",
        "s",
        "paper s",
        "ratio",
        "Gap %",
        "paper",
    ]
    table_rows = []
    for entry in rows:
        k = entry["k"]
        p = ref.get(k)
        wong, mu = entry["wong_nh"], entry["murakami_uno"]
        gap = 100 * (wong["gcp"] - mu["gcp"]) / mu["gcp"] if mu["gcp"] else 0.0
        table_rows.append(
            [
                k,
                f"{wong['gcp']:.4f}",
                f"{p[0]:.2f}" if p else "-",
                ratio(wong["gcp"], p[0] if p else None),
                f"{wong['seconds']:.2f}",
                f"{p[1]:.2f}" if p else "-",
                f"{mu['gcp']:.4f}",
                f"{p[2]:.2f}" if p else "-",
                ratio(mu["gcp"], p[2] if p else None),
                f"{mu['search']['lower_bound']:.4f}",
                f"{mu['search']['lb_gap']:.3f}",
                f"{mu['seconds']:.1f}",
                f"{60 * p[3]:.0f}" if p else "-",
                ratio(mu["seconds"], 60 * p[3] if p else None),
                f"{gap:.1f}",
                f"{p[4]:.1f}" if p else "-",
            ]
        )
    print_table(header, table_rows, title=f"{label} beside {paper}")
    return rows


CUP_COLUMNS = ("ZIP", "AGE", "GENDER", "INCOME", "STATE", "RAMNTALL", "NGIFTALL", "MINRAMNT")


def cup_child(rows: int, k: int) -> None:
    """One timed ``murakami_uno`` run (matchings, hierarchy cells) on cup's first ``rows``
    rows; prints its figures as JSON (the anonlab imported is the one on PYTHONPATH)."""
    import anonlab

    folder = common.shared_file("datasets", "arx", "cup.csv").parent
    table = read_table(folder / "cup.csv", csv_options=CsvOptions(separator=";"))
    table = EncodedTable.from_columns({c: table.column(c).labels()[:rows] for c in CUP_COLUMNS})
    spec = {
        "quasi_identifiers": {
            c: {"hierarchy": str(folder / f"cup_hierarchy_{c}.csv")} for c in CUP_COLUMNS
        },
        "models": [{"k_anonymity": {"k": k}}],
        "metric": "gcp",
        "algorithm": {
            "name": "murakami_uno",
            "initial": "matchings",
            "generalization": "hierarchy",
            "n_jobs": 1,
        },
    }
    start = time.perf_counter()
    result = anonymize(table, spec)
    seconds = time.perf_counter() - start
    search = result.search.to_dict()
    doc = {
        "anonlab": str(Path(anonlab.__file__).parent),
        "rows": rows,
        "k": k,
        "seconds": seconds,
        "search_s": search["elapsed_s"],
        "phase1_s": search["phase1_s"],
        "phase2_s": search["phase2_s"],
        "verify_and_measure_s": seconds - search["elapsed_s"],
        "gcp": result.loss,
        "fallback_chunks": search["fallback_chunks"],
        "candidate_edges": search["candidate_edges"],
        "peak_rss_mib": common.peak_rss_mib(),
    }
    print(json.dumps(doc))


def cup_run(src: Path, rows: int, k: int, timeout: float) -> dict[str, Any]:
    """:func:`cup_child` in a child process importing anonlab from ``src``, stopped after
    ``timeout`` seconds."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    cmd = [sys.executable, __file__, "--cup-child", str(rows), "--cup-k", str(k)]
    start = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"rows": rows, "k": k, "timed_out": True, "seconds": None, "timeout_s": timeout}
    if p.returncode != 0:
        common.die(f"child failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    doc: dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
    doc["timed_out"] = False
    doc["process_wall_s"] = time.perf_counter() - start
    return doc


def cup_suite(
    sizes: tuple[int, ...], k: int, timeout: float, baseline: Path | None
) -> dict[str, Any]:
    """The ``cup`` part: this version (and the baseline's ``src``) at each size."""
    versions = {"this": common.PROJECT / "src"}
    if baseline is not None:
        versions = {"baseline": baseline, **versions}
    out: dict[str, Any] = {
        "data": "first rows of arx/cup.csv, its 8 columns and hierarchies",
        "algorithm": "murakami_uno, initial: matchings, generalization: hierarchy, n_jobs 1",
        "timeout_s": timeout,
        "sources": {name: str(path) for name, path in versions.items()},
    }
    table_rows = []
    for name, src in versions.items():
        runs = []
        for rows in sizes:
            doc = cup_run(src, rows, k, timeout)
            runs.append(doc)
            shown = f"> {timeout:.0f}" if doc["timed_out"] else f"{doc['seconds']:.2f}"
            print(f"  cup {name} {rows:,} rows: {shown} s", flush=True)
            table_rows.append(
                [
                    name,
                    rows,
                    shown,
                    "-" if doc["timed_out"] else f"{doc['phase1_s']:.2f}",
                    "-" if doc["timed_out"] else f"{doc['verify_and_measure_s']:.2f}",
                    "-" if doc["timed_out"] else f"{doc['gcp']:.4f}",
                    "-" if doc["timed_out"] else doc["fallback_chunks"],
                ]
            )
        out[name] = runs
    print_table(
        ["version", "rows", "s", "phase 1 s", "verify s", "GCP", "fallback chunks"],
        table_rows,
        title=f"cup, murakami_uno with matchings and hierarchy cells, k = {k}",
    )
    return out


def scaling_child(rows: int, k: int) -> None:
    """One ``murakami_uno`` run on Random sd=1.0 in this process; prints one JSON line."""
    table = random_table(rows, 1.0)
    columns = tuple(table.names)
    start = time.perf_counter()
    result = anonymize(table, job(columns, k, {"name": "murakami_uno"}))
    seconds = time.perf_counter() - start
    search = result.search
    print(
        json.dumps(
            {
                "rows": rows,
                "k": k,
                "seconds": seconds,
                "gcp": result.loss,
                **{x: getattr(search, x) for x in ("lower_bound_s", "phase1_s", "phase2_s")},
                "cycles": search.cycles,
                "main_peak_mib": common.peak_rss_mib("self"),
                "worker_peak_mib": common.ru_maxrss_mib("children"),
            }
        )
    )


def scaling_suite(ks: tuple[int, ...]) -> list[dict[str, Any]]:
    """``murakami_uno`` at 250 k, 500 k and 1 M random rows, a child process per run."""
    out = []
    for k in ks:
        for rows in (250_000, 500_000, 1_000_000):
            cmd = [sys.executable, __file__, "--scaling-child", str(rows), "--cup-k", str(k)]
            doc = common.run_json_child(cmd)
            out.append(doc)
            print(
                f"  murakami_uno k={k} {rows:>9,} rows: {doc['seconds']:6.1f} s (lower bound "
                f"{doc['lower_bound_s']:.1f}, phase 2 {doc['phase2_s']:.1f}), GCP "
                f"{doc['gcp']:.4f}, peak main {doc['main_peak_mib']:,.0f} MiB, worker "
                f"{doc['worker_peak_mib']:,.0f} MiB",
                flush=True,
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--only", default="census,sal,random", help="parts to run")
    ap.add_argument("--ks", default=",".join(map(str, KS)), help="values of k")
    ap.add_argument("--sal-ks", default=None, help="values of k of the sal part (default --ks)")
    ap.add_argument("--million-ks", default=None, help="values of k at 1 million random rows")
    ap.add_argument("--matchings", action="store_true", help="also the paper's first phase")
    ap.add_argument("--cup-rows", default="2000,4000,8000", help="rows of the cup part")
    ap.add_argument("--cup-k", type=int, default=5, help="k of the cup part")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per cup run")
    ap.add_argument("--baseline-src", type=Path, default=None, help="another version's src")
    ap.add_argument("--scaling-ks", default="3,10", help="values of k of the scaling part")
    ap.add_argument("--cup-child", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--scaling-child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.cup_child is not None:
        cup_child(args.cup_child, args.cup_k)
        return
    if args.scaling_child is not None:
        scaling_child(args.scaling_child, args.cup_k)
        return
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    ks = tuple(int(k) for k in args.ks.split(","))
    sal_ks = tuple(int(k) for k in args.sal_ks.split(",")) if args.sal_ks else ks
    million_ks = tuple(int(k) for k in args.million_ks.split(",")) if args.million_ks else ks
    results: dict[str, Any] = {
        "ks": list(ks),
        "sal_ks": list(sal_ks),
        "million_ks": list(million_ks),
        "random_data": f"10 columns, each round(N(0, sd)), numpy default_rng({SEED})",
        "paper": {n: t for n, t in PAPER.items()},
    }
    if "census" in parts:
        table = census_table("census100k", CENSUS)
        results["census100k"] = suite(
            "CENSUS Occ 100k", table, CENSUS, ks, "Table 8 Occ_100k", args.matchings, True
        )
    if "sal" in parts:
        full = census_table("sal500k.txt", SAL)
        for size, paper in zip(
            (200_000, 300_000, 400_000, 500_000),
            ("Table 9 Occ_200k", "Table 10 Occ_300k", "Table 11 Occ_400k", "Table 12 Occ_500k"),
        ):
            table = full.take(np.arange(size))
            results[f"sal{size // 1000}k"] = suite(
                f"SAL {size // 1000}k (substitute for Occ {size // 1000}k)",
                table,
                SAL,
                sal_ks,
                paper,
                False,
                False,
            )
    if "random" in parts:
        columns = tuple(f"q{j}" for j in range(10))
        for rows_, sd, paper in (
            (100_000, 1.0, "Table 13 Random_100k sd=1.0"),
            (100_000, 1.5, "Table 14 Random_100k sd=1.5"),
            (1_000_000, 1.0, "Table 15 Random_1m sd=1.0"),
            (1_000_000, 1.5, "Table 16 Random_1m sd=1.5"),
        ):
            table = random_table(rows_, sd)
            results[f"random_{rows_ // 1000}k_sd{sd}"] = suite(
                f"Random {rows_:,} sd={sd}",
                table,
                columns,
                million_ks if rows_ >= 1_000_000 else ks,
                paper,
                False,
                False,
            )
    if "scaling" in parts:
        results["scaling"] = scaling_suite(tuple(int(k) for k in args.scaling_ks.split(",")))
    if "cup" in parts:
        sizes = tuple(int(r) for r in args.cup_rows.split(","))
        results["cup"] = cup_suite(sizes, args.cup_k, args.timeout, args.baseline_src)
    name = "nonhomogeneous_" + "_".join(parts)
    path = common.write_results(name, results)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
