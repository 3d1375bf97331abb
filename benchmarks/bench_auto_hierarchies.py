#!/usr/bin/env python3
"""Automatic hierarchies against ``value -> *`` (issue 54, item 1), on Adult and MEPS.

For each data set and k in {5, 10} (suppression limit 5 %, the optimal search, metric
``loss``), one job gives every quasi-identifier the one-step hierarchy ``value -> *`` (what a
quasi-identifier without a hierarchy file gets) and one ``hierarchy: auto``. Printed per job:
the loss, the attributes fully generalized (at their top level: released as ``*``), the
attributes kept (below the top), the records suppressed and the time. Goal on every job: with
automatic hierarchies fewer attributes fully generalized and less loss. Three kinds are run:
``value -> *``, ``auto: {grouping: none}`` (categorical columns keep ``value -> *``) and
``hierarchy: auto`` (their rare values grouped first, the default).

Adult: the 8 usual quasi-identifiers (the bundled file; a missing value is a value of its own).
MEPS (``../shared/datasets/informs-meps2005-test/demographics05test.csv``): birth month and
year, sex, race, education years, marital status; income and poverty released as they are.

    /work/main/.venv/bin/python benchmarks/bench_auto_hierarchies.py

Writes benchmarks/results/auto_hierarchies.json.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import ADULT_QI, print_table  # noqa: E402

import anonlab  # noqa: E402

MEPS_QI = ["DOBMM", "DOBYY", "SEX", "RACEX", "EDUCYEAR", "marry"]


def datasets() -> list[dict[str, Any]]:
    adult = str(anonlab.api.adult_path())
    meps = str(common.shared_file("datasets", "informs-meps2005-test", "demographics05test.csv"))
    return [
        {
            "name": "Adult",
            "path": adult,
            "qi": list(ADULT_QI),
            "job": {
                "insensitive": [
                    "fnlwgt",
                    "education-num",
                    "relationship",
                    "capital-gain",
                    "capital-loss",
                    "hours-per-week",
                    "income",
                ],
            },  # fmt: skip
        },
        {
            "name": "MEPS",
            "path": meps,
            "qi": MEPS_QI,
            "job": {
                "identifiers": ["DUID", "PID", "DUPERSID"],
                "insensitive": [
                    "RACEAX",
                    "RACEBX",
                    "RACEWX",
                    "RACETHNX",
                    "HISPANX",
                    "HISPCAT",
                    "Year",
                    "income",
                    "poverty",
                ],
            },  # fmt: skip
        },
    ]


#: The hierarchies compared: what a quasi-identifier without a file gets, ``auto: {grouping:
#: none}`` (categorical columns keep value -> *), and ``hierarchy: auto`` (rare categories
#: grouped first, the default).
KINDS = {
    "value -> *": {},
    "auto, no grouping": {"auto": {"grouping": "none"}},
    "auto": {"hierarchy": "auto"},
}


def run(spec: dict[str, Any], k: int, kind: str) -> dict[str, Any]:
    job = {
        **spec["job"],
        "quasi_identifiers": {q: dict(KINDS[kind]) for q in spec["qi"]},
        "models": [{"k_anonymity": {"k": k}}],
        "suppression": 0.05,
        "metric": "loss",
    }
    t0 = time.perf_counter()
    result = anonlab.anonymize(spec["path"], job)
    seconds = time.perf_counter() - t0
    heights = {q: h.height for q, h in result.problem.hierarchies.items()}
    full = [q for q in spec["qi"] if result.transformation[q] >= heights[q]]
    return {
        "data": spec["name"],
        "k": k,
        "hierarchies": kind,
        "loss": round(float(result.loss), 4),
        "fully_generalized": full,
        "kept": [q for q in spec["qi"] if q not in full],
        "levels": {q: f"{result.transformation[q]}/{heights[q]}" for q in spec["qi"]},
        "suppressed": int(result.suppressed_rows),
        "seconds": round(seconds, 2),
    }


def main() -> None:
    rows, table = [], []
    goals = {}
    for spec in datasets():
        for k in (5, 10):
            flat, plain, auto = (run(spec, k, kind) for kind in KINDS)
            rows += [flat, plain, auto]
            for r in (flat, plain, auto):
                table.append(
                    [
                        r["data"], r["k"], r["hierarchies"], r["loss"],
                        f"{len(r['fully_generalized'])}/{len(spec['qi'])}",
                        ", ".join(r["fully_generalized"]) or "-", r["suppressed"], r["seconds"],
                    ]
                )  # fmt: skip
            for r in (plain, auto):
                ok = r["loss"] < flat["loss"] and len(r["fully_generalized"]) < len(
                    flat["fully_generalized"]
                )
                goals[f"{spec['name']} k={k}, {r['hierarchies']}"] = {"ok": ok}
    print_table(
        ["data", "k", "hierarchies", "loss", "fully gen.", "which", "suppressed", "s"],
        table,
        "Automatic hierarchies against value -> * (optimal, loss, suppression <= 5 %)",
    )
    for name, g in goals.items():
        print(
            f"goal {name}: less loss and fewer attributes fully generalized: {common.verdict(g['ok'])}"
        )
    path = common.write_results("auto_hierarchies", {"jobs": rows, "goals": goals})
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
