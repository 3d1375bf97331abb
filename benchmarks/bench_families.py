#!/usr/bin/env python3
"""Every anonymization family on one scale, with two Python Mondrians beside (issue 55, item 4).

Runs the families by registry name (optimal, top_down, murakami_uno, mondrian,
local_suppression, microaggregation; a family not registered in this build is skipped with
a note) on

* ``adult``: ARX's Adult (``arx/adult.csv``, 30,162 rows), its 8 quasi-identifiers and ARX
  hierarchies (age also as numbers: Mondrian cuts it on its order);
* ``kdd``: UCI Census-Income (KDD) (``census-income.data.gz``, 199,523 rows), 8
  quasi-identifiers (age and 7 categories), ``hierarchy: auto``;
* ``ipums``: CENSUS SAL 500k (``census-ipums/sal500k.txt``, 500,000 rows), its 7
  integer-coded quasi-identifiers (``hierarchy: auto``; Mondrian cuts all on their order);

at k = 2, 5, 10, and once on 1,000,000 rows (SAL 500k twice) at k = 5 for the 60 s goal.
Each anonlab job runs in a child process (stopped after ``--timeout`` seconds) that reports
the common loss, the records suppressed, the cells suppressed or blanked, the time of the
``anonymize()`` call (verification included, reading excluded) and the child's peak RSS
(murakami_uno runs its chunks in a worker process per core, its default: their peaks added).

The common loss is the GCP over the released quasi-identifier cells, a suppressed or
blank cell counting 1: for a release of hierarchy labels anonlab's ``gcp`` metric (a label
counts ``(leaves under it - 1) / (leaves - 1)``); for Mondrian's the ``gcp`` the regions
verifier reads from the labels (an interval ``[lo,hi]`` counts ``(hi - lo) / (max - min)``,
a hierarchy label as above) -- anonlab's measure of the release, not the algorithm's own.

The peers, anonypy 0.2.1 and project-lighthouse-anonymize 1.0.0 (``peers/mondrian_peers.py``
in the peer venv, ``peers/setup_peers.sh``), are slow: they run on the first
``--peer-rows`` rows of each data set (default 10,000; the output says so) with the same
quasi-identifiers (numbers as numbers, categories with the same ARX hierarchies where the
tool takes one), stopped after ``--peer-timeout`` seconds, and anonlab's Mondrian runs on the
same sample in the same run; their GCP is measured the same way from their releases.

    /work/main/.venv/bin/python benchmarks/bench_families.py [--only adult,kdd,ipums,million]
        [--ks 2,5,10] [--peer-rows 10000] [--timeout 300] [--peer-timeout 300]

Writes benchmarks/results/families.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import print_table  # noqa: E402

FAMILIES = (
    "optimal",
    "top_down",
    "murakami_uno",
    "mondrian",
    "local_suppression",
    "microaggregation",
)
ADULT_QI = (
    "sex", "age", "race", "marital-status", "education", "native-country", "workclass",
    "occupation",
)  # fmt: skip
KDD_QI = (
    "age", "class of worker", "education", "marital stat", "race", "sex", "citizenship",
    "country of birth self",
)  # fmt: skip
IPUMS_COLUMNS = (
    "age", "gender", "education", "marital", "race", "workclass", "country", "salary",
)  # fmt: skip
IPUMS_QI = IPUMS_COLUMNS[:7]
#: Mondrian as the job file sets it: strict (the default), relaxed, and relaxed with the
#: categories released as sets of values (like anonypy's) instead of hierarchy labels.
MONDRIAN_VARIANTS = ("", "relaxed", "relaxed,set")


# ----------------------------------------------------------------------------- data
def load(name: str) -> Any:
    """The data set as an EncodedTable (read from the shared directory, never copied)."""
    from anonlab import CsvOptions, read_table
    from anonlab.data.table import EncodedTable

    if name == "adult":
        path = common.shared_file("datasets", "arx", "adult.csv")
        return read_table(path, csv_options=CsvOptions(separator=";"))
    if name == "kdd":
        from bench_census_kdd import CENSUS_NAMES

        path = common.shared_file("datasets", "census-income-kdd", "census-income.data.gz")
        opts = CsvOptions(separator=",", header=False, names=CENSUS_NAMES, strip=True)
        return read_table(path, csv_options=opts).select(list(KDD_QI))
    path = common.shared_file("datasets", "census-ipums", "sal500k.txt")
    values = np.array([line.split() for line in path.read_text().splitlines() if line.strip()])
    if name == "million":
        values = np.concatenate([values, values])
    return EncodedTable.from_columns(
        {c: values[:, j].astype(object) for j, c in enumerate(IPUMS_COLUMNS)}
    )


def qis_of(data: str) -> tuple[str, ...]:
    return {"adult": ADULT_QI, "kdd": KDD_QI}.get(data, IPUMS_QI)


def hierarchy_files(data: str) -> dict[str, str]:
    if data != "adult":
        return {}
    folder = common.shared_dir() / "datasets" / "arx"
    return {q: str(folder / f"adult_hierarchy_{q}.csv") for q in ADULT_QI}


def numeric(data: str) -> list[str]:
    return ["age"] if data in ("adult", "kdd") else list(IPUMS_QI)


def job(data: str, family: str, k: int, variant: str = "") -> dict[str, Any]:
    """The job of one family on one data set."""
    from anonlab.io.hierarchies import read_hierarchy

    files = hierarchy_files(data)
    qis: dict[str, Any] = {}
    for q in qis_of(data):
        qis[q] = {"hierarchy": read_hierarchy(files[q])} if q in files else {"hierarchy": "auto"}
    algorithm: dict[str, Any] = {"name": family}
    suppression = 0.0
    if family in ("optimal", "top_down", "local_suppression"):
        suppression = 0.01  # (local_suppression: the limit of the optimal search it starts from)
    elif family == "microaggregation":
        algorithm["categorical"] = "mode"  # the categorical key variables by their mode
    elif family == "murakami_uno":
        # (its default n_jobs: its chunks in one worker process per core)
        algorithm["generalization"] = "hierarchy"
    elif family == "mondrian":
        for token in filter(None, variant.split(",")):
            if token == "set":
                algorithm["categorical"] = "set"
            else:
                algorithm["partitioning"] = token
        if data not in ("adult", "kdd"):
            algorithm["intervals"] = list(IPUMS_QI)
    return {
        "quasi_identifiers": qis,
        "models": [{"k_anonymity": {"k": k}}],
        "metric": "gcp",
        "suppression": suppression,
        "algorithm": algorithm,
    }


# ----------------------------------------------------------------------------- child
def child(spec: dict[str, Any]) -> dict[str, Any]:
    """One anonymization, timed, in this (child) process."""
    import anonlab

    table = load(spec["data"])
    if spec.get("rows"):
        table = table.take(np.arange(min(int(spec["rows"]), table.n_rows)))
    j = job(spec["data"], spec["family"], spec["k"], spec.get("variant", ""))
    start = time.perf_counter()
    result = anonlab.anonymize(table, j)
    seconds = time.perf_counter() - start
    v = result.release.verification
    n_q = len(qis_of(spec["data"]))
    search = result.search.to_dict()
    blanked = next(
        (
            int(val)
            for key, val in search.items()
            if "blank" in key and isinstance(val, (int, float))
        ),
        0,
    )
    return {
        "rows": table.n_rows,
        "gcp": float(result.loss),
        "metric": result.release.metric,
        "suppressed_rows": int(v.suppressed_rows),
        "cells_suppressed": int(v.suppressed_rows) * n_q + blanked,
        "k_after": v.k_after,
        "classes": v.classes,
        "seconds": seconds,
        "peak_rss_mib": peak_mib(spec["family"], table.n_rows),
    }


def peak_mib(family: str, rows: int) -> float:
    """The child's peak RSS; for murakami_uno's worker processes (forked, one per core) each
    worker's peak is added: an upper bound, the pages a worker shares with the child counted
    twice."""
    own = common.peak_rss_mib()
    if family != "murakami_uno":
        return own
    from anonlab.algorithms.nonhomogeneous._common import workers_of
    from anonlab.algorithms.nonhomogeneous.anonymizers import CHUNK

    workers = workers_of(None, -(-rows // CHUNK))
    return own + (workers * common.peak_rss_mib("children") if workers > 1 else 0.0)


def run_child(spec: dict[str, Any], timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", json.dumps(spec)]
    start = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"stopped after {timeout:.0f} s (timeout)", "seconds": None}
    wall = time.perf_counter() - start
    lines = p.stdout.strip().splitlines()
    if p.returncode != 0 or not lines:
        last = (p.stderr.strip().splitlines() or ["?"])[-1]
        return {"error": last[:300], "seconds": None}
    out: dict[str, Any] = json.loads(lines[-1])
    out["process_wall_s"] = wall
    return out


# ----------------------------------------------------------------------------- peers
def peer_csv(data: str, rows: int, folder: Path) -> tuple[Path, int]:
    table = load(data)
    table = table.take(np.arange(min(rows, table.n_rows)))
    path = folder / f"{data}_{table.n_rows}.csv"
    common.write_table_csv(table, path, qis_of(data))
    return path, table.n_rows


def run_peer(tool: str, csv_path: Path, data: str, k: int, timeout: float) -> dict[str, Any]:
    spec = {
        "tool": tool,
        "csv": str(csv_path),
        "quasi_identifiers": list(qis_of(data)),
        "numeric": numeric(data),
        "hierarchies": hierarchy_files(data),
        "k": k,
    }
    script = common.PEERS / "mondrian_peers.py"
    start = time.perf_counter()
    try:
        p = subprocess.run(
            [str(common.PEER_PYTHON), str(script)],
            input=json.dumps(spec),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"tool": tool, "error": f"stopped after {timeout:.0f} s (timeout)", "seconds": None}
    lines = p.stdout.strip().splitlines()
    if not lines:
        return {
            "tool": tool,
            "error": (p.stderr.strip().splitlines() or ["?"])[-1],
            "seconds": None,
        }
    out: dict[str, Any] = json.loads(lines[-1])
    out["process_wall_s"] = time.perf_counter() - start
    return out


# ----------------------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--only", default="adult,kdd,ipums,million")
    ap.add_argument("--ks", default="2,5,10")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--peer-rows", type=int, default=10_000)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--peer-timeout", type=float, default=300.0)
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--out", default="families")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    from anonlab.algorithms import ALGORITHMS

    ks = [int(k) for k in args.ks.split(",")]
    parts = args.only.split(",")
    families = [f for f in args.families.split(",") if f]
    skipped = [f for f in families if f not in ALGORITHMS]
    for f in skipped:
        print(f"note: family {f!r} is not registered in this build: skipped")
    runs = [(f, "") for f in families if f in ALGORITHMS]
    if ("mondrian", "") in runs:
        at = runs.index(("mondrian", "")) + 1
        runs[at:at] = [("mondrian", v) for v in MONDRIAN_VARIANTS[1:]]
    peers_ok = common.PEER_PYTHON.is_file() and not args.no_peers
    if not peers_ok and not args.no_peers:
        print(f"note: no peer venv at {common.PEER_VENV} (run peers/setup_peers.sh): peers skipped")
    jobs: list[dict[str, Any]] = []
    comparison: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for data in parts:
            for k in ks if data != "million" else [5]:
                for family, variant in runs:
                    name = family + (f" ({variant})" if variant else "")
                    spec = {"data": data, "family": family, "k": k, "variant": variant}
                    out = run_child(spec, args.timeout)
                    jobs.append({"data": data, "k": k, "family": name, **out})
                    print(
                        f"{data:8s} k={k:<2d} {name:20s} "
                        + (
                            f"gcp {out['gcp']:.4f}  {out['seconds']:.2f} s  supp {out['suppressed_rows']}"
                            f"  {out['peak_rss_mib']:.0f} MiB"
                            if "error" not in out
                            else out["error"]
                        ),
                        flush=True,
                    )
                if data == "million" or not peers_ok:
                    continue
                csv_path, rows = peer_csv(data, args.peer_rows, Path(tmp))
                for variant in MONDRIAN_VARIANTS:
                    mine = run_child(
                        {
                            "data": data,
                            "family": "mondrian",
                            "k": k,
                            "variant": variant,
                            "rows": rows,
                        },
                        args.timeout,
                    )
                    entry = {
                        "data": data,
                        "k": k,
                        "rows": rows,
                        "tool": "anonlab mondrian" + (f" ({variant})" if variant else ""),
                        **mine,
                    }
                    comparison.append(entry)
                for tool in ("anonypy", "lighthouse"):
                    out = run_peer(tool, csv_path, data, k, args.peer_timeout)
                    comparison.append({"data": data, "k": k, "rows": rows, **out, "tool": tool})
                for entry in comparison[-2 - len(MONDRIAN_VARIANTS) :]:
                    print(
                        f"  peers, first {rows:,} rows, k={k}: {entry['tool']:28s} "
                        + (
                            f"gcp {entry['gcp']:.4f}  {entry['seconds']:.2f} s"
                            if not entry.get("error")
                            else str(entry["error"])
                        ),
                        flush=True,
                    )
    # goals
    goals: dict[str, Any] = {}
    for data in parts:
        for k in ks:
            rows = [c for c in comparison if c["data"] == data and c["k"] == k]
            for variant in MONDRIAN_VARIANTS:
                name = "anonlab mondrian" + (f" ({variant})" if variant else "")
                mine = next((c for c in rows if c["tool"] == name and not c.get("error")), None)
                if mine is None:
                    continue
                for peer in ("anonypy", "lighthouse"):
                    other = next((c for c in rows if c["tool"] == peer), None)
                    key = f"{data} k={k} {name}"
                    if other is None or other.get("error"):
                        goals[f"{key}: lower GCP than {peer}"] = {
                            "pass": None,
                            "note": (other or {}).get("error", "not run"),
                        }
                        continue
                    goals[f"{key}: lower GCP than {peer}"] = {
                        "value": mine["gcp"],
                        "goal": other["gcp"],
                        "pass": mine["gcp"] < other["gcp"],
                    }
                    speed = other["seconds"] / mine["seconds"] if mine["seconds"] else None
                    goals[f"{key}: >= 10x faster than {peer}"] = {
                        "value": speed,
                        "goal": 10,
                        "pass": speed is not None and speed >= 10,
                    }
    for entry in jobs:
        if entry["data"] == "million":
            goals[f"1,000,000 rows, {entry['family']}: under 60 s"] = {
                "value": entry.get("seconds"),
                "goal": 60,
                "pass": entry.get("seconds") is not None and entry["seconds"] < 60,
                **({"note": entry["error"]} if entry.get("error") else {}),
            }
    print_table(
        ["data", "k", "family", "gcp", "suppressed rows", "cells suppressed", "s", "peak MiB"],
        [
            [j["data"], j["k"], j["family"], j.get("gcp", "-"), j.get("suppressed_rows", "-"),
             j.get("cells_suppressed", "-"), j.get("seconds") or "-", j.get("peak_rss_mib", "-")]
            if not j.get("error") else [j["data"], j["k"], j["family"], j["error"][:60], "", "", "", ""]
            for j in jobs
        ],
        title="Families (anonlab, whole data sets)",
    )  # fmt: skip
    print_table(
        ["data", "k", "rows", "tool", "gcp", "suppressed rows", "s"],
        [
            [c["data"], c["k"], c["rows"], c["tool"], c.get("gcp", "-"), c.get("suppressed_rows", "-"), c.get("seconds") or "-"]
            if not c.get("error") else [c["data"], c["k"], c["rows"], c["tool"], str(c["error"])[:60], "", ""]
            for c in comparison
        ],
        title=f"Mondrian beside anonypy and project-lighthouse-anonymize (first {args.peer_rows:,} rows of each data set: the peers are slow)",
    )  # fmt: skip
    print("\nGoals")
    for name, g in goals.items():
        verdict = "SKIP" if g["pass"] is None else common.verdict(g["pass"])
        value = g.get("value")
        shown = f"{value:,.4g}" if isinstance(value, (int, float)) else g.get("note", "-")
        print(f"  {verdict}  {name}: {shown} (goal {g.get('goal', '-')})")
    path = common.write_results(
        args.out,
        {
            "families_skipped": skipped,
            "ks": ks,
            "peer_rows": args.peer_rows,
            "peer_note": f"the peers run on the first {args.peer_rows:,} rows of each data set, "
            f"stopped after {args.peer_timeout:.0f} s; anonlab's Mondrian runs on the same rows",
            "timeout_s": args.timeout,
            "jobs": jobs,
            "comparison": comparison,
            "goals": goals,
            "peer_python": str(common.PEER_PYTHON) if peers_ok else None,
            "cpu_threads_env": os.environ.get("NUMBA_NUM_THREADS"),
        },
    )
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
