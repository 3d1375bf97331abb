#!/usr/bin/env python3
"""PrivacyFrost2: do restarts help when the partial-domain step follows? (issue 4)

Every job of the paper's Tables 2-3 (UCI Adult 13 QIs, Census-Income 39 QIs; see
``bench_privacyfrost2.py`` for the data, hierarchies and jobs) runs with the partial-domain
step and ``restarts`` 0 (the paper's search) and 8. Reported per job: the full-domain score of
``T^G``, the final (partial-domain) score and the time of each. This is the measurement behind
the default ``restarts: 0`` when ``partial_domain`` is on.

    /work/main/.venv/bin/python benchmarks/bench_privacyfrost2_restarts.py [--adult-only]

Writes benchmarks/results/privacyfrost2_restarts.json.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_privacyfrost2 as pf2  # noqa: E402
import common  # noqa: E402
from common import print_table  # noqa: E402

from anonlab import anonymize  # noqa: E402


def compare(name: str, table: Any, qis: list[str], sensitive: str) -> list[dict[str, Any]]:
    paths = pf2.build_hierarchies(
        table, qis, common.CACHE / f"pf2_hierarchies_{name}", adult=name == "adult"
    )
    base = pf2.base_job(paths, qis, sensitive)
    out = []
    for k, l_, t, score in pf2.PAPER_TABLE2:
        row: dict[str, Any] = {"dataset": name, "k": k, "l": l_, "t": t, "score": score}
        for restarts in (0, 8):
            job = pf2.paper_job(base, sensitive, k, l_, t, score, restarts=restarts)
            t0 = time.perf_counter()
            res = anonymize(table, job)
            row[f"r{restarts}"] = {
                "full_domain_score": res.details["full_domain_score"],
                "final_score": res.details["score"]["value"],
                "ms": (time.perf_counter() - t0) * 1000,
            }
        out.append(row)
        a, b = row["r0"], row["r8"]
        print(f"{name} k={k} l={l_} t={t} {score}: T^G {a['full_domain_score']:.4g} -> "
              f"{b['full_domain_score']:.4g}, final {a['final_score']:.4g} -> "
              f"{b['final_score']:.4g}, {a['ms']:.0f} -> {b['ms']:.0f} ms", flush=True)  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--adult-only", action="store_true")
    args = ap.parse_args()
    rows = compare("adult", *pf2.adult_table())
    if not args.adult_only:
        rows += compare("census", *pf2.census_table())
    summary = []
    for name in sorted({r["dataset"] for r in rows}):
        sub = [r for r in rows if r["dataset"] == name]
        diff = [r["r8"]["final_score"] - r["r0"]["final_score"] for r in sub]
        summary.append(
            {
                "dataset": name,
                "jobs": len(sub),
                "restarts_better": sum(d > 1e-9 for d in diff),
                "restarts_worse": sum(d < -1e-9 for d in diff),
                "equal": sum(abs(d) <= 1e-9 for d in diff),
            }
        )
    print_table(
        ["data", "jobs", "final score higher with restarts", "lower", "equal"],
        [
            [s["dataset"], s["jobs"], s["restarts_better"], s["restarts_worse"], s["equal"]]
            for s in summary
        ],  # fmt: skip
    )
    path = common.write_results("privacyfrost2_restarts", {"summary": summary, "jobs": rows})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
