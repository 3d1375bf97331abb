"""Local suppression (issue 55 item 2) beside a full-domain release, on ARX's Adult.

For each k in 2, 5, 10, on ARX's Adult (30,162 rows) with 8 quasi-identifiers (sex, age,
race, marital-status, education, native-country, workclass, occupation) and their ARX
hierarchies, GCP, suppression limit 5 %:

* ``optimal``: the full-domain optimum; its cost in cells is the rows it suppresses times
  the 8 attributes;
* ``local_suppression`` with ``generalize: optimal``: the same job, the same levels, the
  rows below k blanked cell by cell instead of suppressed (goal: never more cells blanked
  than ``optimal`` suppresses);
* ``local_suppression`` with no generalization (sdcMicro's plain local suppression) and
  with ``generalize: optimal, search_k: 2`` (a looser k in the search), for information.

Then 1,000,000 rows drawn from Adult with replacement (seed 55), each cell then replaced with
probability 0.2 by the same attribute of another drawn row (so that rare combinations remain,
as in a real million-row table, instead of every tuple repeated ~33 times), k = 5, ``optimal`` and
both ``local_suppression`` variants end to end (``anonymize``: search, blanking and the
independent wildcard recount; goal < 60 s).

Every figure is the loss measured on the release by the verification; the cells blanked
are counted from the released labels (``*``). Writes ``benchmarks/results/local_suppression.json``.

Run: ``/work/main/.venv/bin/python benchmarks/bench_local_suppression.py [--repeat N]
[--no-million]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from anonlab import CsvOptions, anonymize, read_table  # noqa: E402

QI = [
    "sex", "age", "race", "marital-status", "education", "native-country", "workclass",
    "occupation",
]  # fmt: skip
KS = (2, 5, 10)
SUPPRESSION = 0.05
MILLION = 1_000_000
SEED = 55


def adult() -> Any:
    path = common.shared_file("datasets", "arx", "adult.csv")
    return read_table(path, csv_options=CsvOptions(separator=";")).select([*QI, "salary-class"])


def job(k: int, algorithm: Any) -> dict[str, Any]:
    d = common.shared_dir() / "datasets" / "arx"
    return {
        "quasi_identifiers": {q: {"hierarchy": str(d / f"adult_hierarchy_{q}.csv")} for q in QI},
        "insensitive": ["salary-class"],
        "models": [{"k_anonymity": {"k": k}}],
        "suppression": SUPPRESSION,
        "metric": "gcp",
        "algorithm": algorithm,
    }


def mixed(table: Any, rng: Any, share: float = 0.2) -> Any:
    """``table`` with each quasi-identifier cell replaced, with probability ``share``, by
    the same attribute of a random row (codes only: the labels stay those of the column)."""
    from anonlab.data.table import EncodedColumn

    n = table.n_rows
    out = {}
    for q in QI:
        col = table[q]
        swap = rng.random(n) < share
        codes = np.where(swap, col.codes[rng.integers(0, n, size=n)], col.codes)
        out[q] = EncodedColumn(q, codes.astype(col.codes.dtype), col.categories)
    return table.with_columns(out)


def blanked(result: Any) -> int:
    """Cells released as ``*`` that were not ``*`` at the release's levels (from labels)."""
    return sum(
        int(np.count_nonzero(np.asarray(result.columns[q], dtype=object) == "*")) for q in QI
    )


def run(table: Any, spec: dict[str, Any], repeat: int) -> dict[str, Any]:
    best, times, res = common.best_of(lambda: anonymize(table, spec), repeat=repeat)
    row: dict[str, Any] = {
        "anonymize_s": best,
        "times_s": times,
        "gcp": res.loss,
        "suppressed_rows": res.suppressed_rows,
        "k_after": res.release.verification.k_after,
        "checks": res.checks,
    }
    if res.transformation:
        row["levels"] = res.transformation
        row["suppressed_cells"] = res.suppressed_rows * len(QI)
    else:
        s = res.search
        row["levels"] = s.levels
        row["blanked_cells"] = s.blanked_cells
        row["blanked_cells_from_labels"] = blanked(res)
        row["records_with_blanks"] = s.records_with_blanks
        row["unsafe_before"] = s.unsafe_before
        row["blanked_per_attribute"] = s.blanked_per_attribute
        row["rounds"] = s.evaluated
        row["generalization_s"] = s.generalization_s
        row["blanking_s"] = s.suppression_s
    return row


VARIANTS: dict[str, Any] = {
    "optimal": "optimal",
    "local_suppression (generalize: optimal)": {
        "name": "local_suppression",
        "generalize": "optimal",
    },
    "local_suppression (generalize: optimal, search_k: 2)": {
        "name": "local_suppression",
        "generalize": "optimal",
        "search_k": 2,
    },
    "local_suppression (no generalization)": {"name": "local_suppression", "generalize": "none"},
}


def spec_for(k: int, variant: str) -> dict[str, Any]:
    spec = job(k, VARIANTS[variant])
    if variant.endswith("(no generalization)"):
        spec["suppression"] = 0.0  # (it removes no row: a limit would do nothing)
    return spec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-million", action="store_true")
    args = ap.parse_args()
    table = adult()
    print(f"ARX Adult: {table.n_rows:,} rows, {len(QI)} quasi-identifiers", flush=True)
    results: list[dict[str, Any]] = []
    for k in KS:
        for variant in VARIANTS:
            if variant.endswith("search_k: 2)") and k == 2:
                continue  # (the same as the job's own k)
            row = {"k": k, "variant": variant, **run(table, spec_for(k, variant), args.repeat)}
            results.append(row)
            print(
                f"k={k:2d} {variant:55s} gcp {row['gcp']:.4f} "
                f"cells {row.get('suppressed_cells', row.get('blanked_cells'))} "
                f"({row['anonymize_s']:.2f} s)",
                flush=True,
            )
    rows, goals = [], {}
    for k in KS:
        opt = next(r for r in results if r["k"] == k and r["variant"] == "optimal")
        for r in (r for r in results if r["k"] == k):
            cells = r.get("suppressed_cells", r.get("blanked_cells"))
            rows.append(
                [k, r["variant"], f"{r['gcp']:.4f}", cells, r["suppressed_rows"], r["k_after"],
                 f"{r['anonymize_s']:.2f}"]
            )  # fmt: skip
        ls = next(
            r
            for r in results
            if r["k"] == k and r["variant"] == "local_suppression (generalize: optimal)"
        )
        goals[f"k={k}: cells blanked <= optimal's suppressed rows x {len(QI)}"] = common.goal(
            ls["blanked_cells"], opt["suppressed_cells"], inclusive=True
        )
    common.print_table(
        ["k", "algorithm", "GCP", "cells lost", "rows suppressed", "k after", "time (s)"],
        rows,
        "ARX Adult, 8 quasi-identifiers, suppression limit 5 %, GCP",
    )
    million: dict[str, Any] = {}
    if not args.no_million:
        rng = np.random.default_rng(SEED)
        big = mixed(table.take(rng.integers(0, table.n_rows, size=MILLION)), rng)
        for variant in (
            "optimal",
            "local_suppression (generalize: optimal)",
            "local_suppression (no generalization)",
        ):
            t0, c0 = time.perf_counter(), time.process_time()
            res = anonymize(big, spec_for(5, variant))
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            entry: dict[str, Any] = {
                "rows": MILLION,
                "k": 5,
                "anonymize_s": wall,
                "cpu_s": cpu,
                "gcp": res.loss,
                "k_after": res.release.verification.k_after,
                "verification": res.release.verification.method,
            }
            if variant == "optimal":
                entry["levels"] = res.transformation
                entry["suppressed_rows"] = res.suppressed_rows
                entry["cells_lost"] = res.suppressed_rows * len(QI)
            else:
                s = res.search
                entry.update(levels=s.levels, unsafe_before=s.unsafe_before, rounds=s.evaluated,
                             blanking_s=s.suppression_s, cells_lost=s.blanked_cells)  # fmt: skip
                goals[f"1 M rows, k=5, {variant}: seconds"] = common.goal(wall, 60.0)
            million[variant] = entry
            print(
                f"{MILLION:,} rows, k=5, {variant}: {wall:.1f} s ({cpu:.1f} s CPU), gcp "
                f"{res.loss:.4f}, {entry['cells_lost']:,} cells lost",
                flush=True,
            )
        goals[f"1 M rows, k=5: cells blanked <= optimal's suppressed rows x {len(QI)}"] = (
            common.goal(
                million["local_suppression (generalize: optimal)"]["cells_lost"],
                million["optimal"]["cells_lost"],
                inclusive=True,
            )
        )
    common.print_goals(goals)
    path = common.write_results(
        "local_suppression",
        {
            "data": "ARX adult.csv (30,162 rows)",
            "quasi_identifiers": QI,
            "suppression": SUPPRESSION,
            "metric": "gcp",
            "repeat": args.repeat,
            "results": results,
            "million": million,
            "goals": goals,
        },
    )
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
