#!/usr/bin/env python3
"""The exact search at ARX's speed with every metric (issue 34): the 108 reference jobs.

``../shared/reference/arx-3.9.2-times.json`` holds ARX 3.9.2 and anonlab (commit a864f67) timed
in one run on a 2-core machine of this project's kind: adult, cup and fars (every attribute
with an ARX hierarchy file a quasi-identifier), k in {2, 5, 10}, suppression 0 and 5 %, six
metrics (loss, non-monotonic entropy, non-monotonic discernibility, AECS, non-monotonic
precision, height), k-anonymity, ``algorithm: optimal``. This script runs the same 108 jobs
now: the median wall time of ``anonymize()`` in process (table read once, ``--repeat`` runs),
its CPU time, and the nodes evaluated (the hierarchies read once, as ARX's data definition is
loaded untimed), beside the file's ARX figures (time, nodes checked) and
the file's anonlab figures at a864f67. The two anonlab columns show how fast this machine is
against the reference one; the ratio to ARX is given both raw and scaled by that factor.

    .venv/bin/python benchmarks/bench_arx_grid.py [--repeat 5] [--metrics Discernability,AECS]
        [--datasets cup] [--quick]

Writes benchmarks/results/arx_grid.json (``arx_grid_quick.json`` with ``--quick``: one run).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import print_table  # noqa: E402

from anonlab import CsvOptions, anonymize, read_hierarchy, read_table  # noqa: E402

REFERENCE = common.shared_dir() / "reference" / "arx-3.9.2-times.json"
QIS = {
    "adult": [
        "sex", "age", "race", "marital-status", "education", "native-country", "workclass",
        "occupation",
    ],
    "cup": ["ZIP", "AGE", "GENDER", "INCOME", "STATE", "RAMNTALL", "NGIFTALL", "MINRAMNT"],
    "fars": [
        "iage", "irace", "ideathmon", "ideathday", "isex", "ihispanic", "istatenum", "iinjury",
    ],
}  # fmt: skip
METRICS: dict[str, Any] = {
    "Loss": "loss",
    "Entropy": {"name": "entropy", "monotonic": False},
    "Discernability": {"name": "discernibility", "monotonic": False},
    "AECS": "aecs",
    "Precision": {"name": "precision", "monotonic": False},
    "Height": "height",
}


_HIERARCHIES: dict[str, Any] = {}


def hierarchy(dataset: str, attribute: str) -> Any:
    """ARX's hierarchy file of an attribute, read once: ARX's figures exclude loading the data
    definition too (the data is reloaded untimed), and anonlab keeps it in memory likewise."""
    key = f"{dataset}/{attribute}"
    if key not in _HIERARCHIES:
        path = common.shared_dir() / "datasets" / "arx" / f"{dataset}_hierarchy_{attribute}.csv"
        _HIERARCHIES[key] = read_hierarchy(path, attribute=attribute)
    return _HIERARCHIES[key]


def job_for(dataset: str, k: int, suppression: float, metric: str) -> dict[str, Any]:
    """The reference job: every attribute with a hierarchy, k-anonymity, the metric."""
    return {
        "separator": ";",
        "quasi_identifiers": {q: {"hierarchy": hierarchy(dataset, q)} for q in QIS[dataset]},
        "models": [{"k_anonymity": {"k": k}}],
        "suppression": suppression,
        "metric": METRICS[metric],
        "algorithm": "optimal",
    }


def run(table: Any, job: dict[str, Any], repeat: int) -> dict[str, Any]:
    """Median wall and CPU time of ``anonymize()`` over ``repeat`` runs (after one warm-up)."""
    res = anonymize(table, job)  # warm-up: hierarchies read, caches filled, code loaded
    walls, cpus = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        res = anonymize(table, job)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return {
        "wall_ms": statistics.median(walls) * 1000,
        "cpu_ms": statistics.median(cpus) * 1000,
        "nodes": res.evaluated_nodes,
        "levels": res.transformation,
        "loss": res.loss,
        "suppressed_rows": res.suppressed_rows,
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--metrics", default=",".join(METRICS))
    ap.add_argument("--datasets", default=",".join(QIS))
    ap.add_argument("--quick", action="store_true", help="one run per job")
    args = ap.parse_args()
    repeat = 1 if args.quick else args.repeat
    wanted_m = args.metrics.split(",")
    wanted_d = args.datasets.split(",")
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    tables: dict[str, Any] = {}
    rows, out = [], []
    for ref in reference["rows"]:
        ds, metric = ref["dataset"], ref["metric"]
        if metric not in wanted_m or ds not in wanted_d:
            continue
        if ds not in tables:
            path = common.shared_dir() / "datasets" / "arx" / f"{ds}.csv"
            tables[ds] = read_table(path, csv_options=CsvOptions(separator=";"))
        got = run(tables[ds], job_for(ds, ref["k"], ref["suppression"], metric), repeat)
        rec = {**ref, "now": got}
        out.append(rec)
        rows.append(
            [
                ds, ref["k"], f"{ref['suppression']:g}", metric,
                f"{got['wall_ms']:.1f}", f"{got['cpu_ms']:.1f}", f"{ref['arx_ms']:.1f}",
                f"{ref['anonlab_ms']:.1f}", f"{got['wall_ms'] / ref['arx_ms']:.2f}",
                got["nodes"], ref["arx_nodes_checked"], ref["anonlab_nodes"],
            ]
        )  # fmt: skip
        print(" | ".join(map(str, rows[-1])), flush=True)
    print_table(
        ["data", "k", "supp", "metric", "ms", "cpu ms", "ARX ms", "a864f67 ms", "ratio",
         "nodes", "ARX nodes", "a864f67 nodes"],
        rows,
        title="anonlab now vs ARX 3.9.2 and anonlab a864f67 (reference file)",
    )  # fmt: skip
    summary = {}
    for metric in wanted_m:
        recs = [r for r in out if r["metric"] == metric]
        if not recs:
            continue
        ratios = [r["now"]["wall_ms"] / r["arx_ms"] for r in recs]
        before = [r["anonlab_ms"] / r["arx_ms"] for r in recs]
        summary[metric] = {
            "median_ratio": statistics.median(ratios),
            "worst_ratio": max(ratios),
            "median_ratio_a864f67": statistics.median(before),
            "worst_ratio_a864f67": max(before),
            "nodes_over_arx": sum(r["now"]["nodes"] > r["arx_nodes_checked"] for r in recs),
            "cpu_over_wall": statistics.median(
                r["now"]["cpu_ms"] / r["now"]["wall_ms"] for r in recs
            ),
        }
    print_table(
        ["metric", "median ratio", "worst", "a864f67 median", "a864f67 worst",
         "jobs with more nodes than ARX", "cpu/wall"],
        [
            [m, f"{v['median_ratio']:.2f}", f"{v['worst_ratio']:.2f}",
             f"{v['median_ratio_a864f67']:.2f}", f"{v['worst_ratio_a864f67']:.2f}",
             v["nodes_over_arx"], f"{v['cpu_over_wall']:.2f}"]
            for m, v in summary.items()
        ],
        title="per metric: anonlab / ARX wall time",
    )  # fmt: skip
    name = "arx_grid_quick" if args.quick else "arx_grid"
    path = common.write_results(name, {"repeat": repeat, "jobs": out, "summary": summary})
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
