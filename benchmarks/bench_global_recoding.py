#!/usr/bin/env python3
"""Optimal full-domain generalization on ARX's adult, cup and fars data (issue 3).

For each data set (all columns quasi-identifiers, ARX's hierarchies from
``../shared/datasets/arx/``), k in {2, 5, 10}, suppression limit in {0, 0.05} and metric in
{entropy (ARX non-uniform entropy), loss (ARX Loss)} the optimal search (Flash-class) and the
extended Incognito of paper 002 section 3 run in process. Reported per job: the search time
(best of ``--repeat``), the whole ``anonymize()`` call on a table already in memory (hierarchies
read, base classes, search, release and independent re-check), evaluated nodes, lattice size,
the optimum and its loss. Both algorithms must find the same loss (exactness check).

Then the l-diversity and t-closeness jobs on adult (sensitive: occupation, the other 8
columns quasi-identifiers, as in ARX's benchmarks): recursive (4,3)-diversity and hierarchical
0.2-closeness (with occupation's hierarchy), each model on its own.

In the same run, anjana (greedy Datafly-style generalization, in ``benchmarks/.peer-venv``) runs
the same adult jobs; its output's levels are read back and anonlab computes the loss of that
transformation with the same metric and suppression, so the two losses are comparable.
anonlab must be at least 10x faster with equal or lower loss.

    /work/main/.venv/bin/python benchmarks/bench_global_recoding.py [--repeat 3] [--quick]

Writes benchmarks/results/global_recoding.json.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import best_of, print_table  # noqa: E402

from anonlab import CsvOptions, anonymize, read_table  # noqa: E402
from anonlab.algorithms._lattice import build_evaluator, lattice_of  # noqa: E402
from anonlab.algorithms.full_domain import incognito_search, optimal_search  # noqa: E402
from anonlab.jobs import build_problem, load_job  # noqa: E402

DATASETS = {
    "adult": [
        "sex", "age", "race", "marital-status", "education", "native-country", "workclass",
        "occupation", "salary-class",
    ],
    "cup": ["ZIP", "AGE", "GENDER", "INCOME", "STATE", "RAMNTALL", "NGIFTALL", "MINRAMNT"],
    "fars": [
        "iage", "irace", "ideathmon", "ideathday", "isex", "ihispanic", "istatenum", "iinjury",
    ],
}  # fmt: skip
KS = (2, 5, 10)
SUPPRESSIONS = (0.0, 0.05)
METRICS = ("entropy", "loss")
ANJANA_SCRIPT = common.PEERS / "anjana_anonymize.py"


def arx_dir() -> Path:
    return common.shared_dir() / "datasets" / "arx"


def job_for(
    dataset: str,
    qis: list[str],
    models: list[dict[str, Any]],
    suppression: float,
    metric: str,
    sensitive: list[str] | None = None,
    algorithm: str = "optimal",
) -> dict[str, Any]:
    d = arx_dir()
    return {
        "separator": ";",
        "quasi_identifiers": {
            q: {"hierarchy": str(d / f"{dataset}_hierarchy_{q}.csv")} for q in qis
        },
        "sensitive": sensitive or [],
        "models": models,
        "suppression": suppression,
        "metric": metric,
        "algorithm": algorithm,
    }


def run_search(table: Any, job: dict[str, Any], algorithm: str, repeat: int) -> dict[str, Any]:
    """Time the search alone (evaluator built fresh each time: base classes included)."""
    spec = load_job(job)
    p = build_problem(table, spec)
    mono = p.monotonic
    search = incognito_search if algorithm == "incognito" else optimal_search

    def go() -> Any:
        ev = build_evaluator(p)
        return search(ev, lattice_of(p), monotonic_models=mono)

    best_s, _, res = best_of(go, repeat=repeat)
    return {
        "search_s": best_s,
        "evaluated_nodes": res.evaluated_nodes,
        "lattice_size": res.lattice_size,
        "levels": None if res.best is None else dict(zip(p.quasi_identifiers, res.best.levels)),
        "loss": None if res.best is None else float(res.best.loss),
        "suppressed_rows": None if res.best is None else res.best.suppressed_rows,
    }


def run_anonymize(table: Any, job: dict[str, Any], repeat: int) -> dict[str, Any]:
    best_s, _, res = best_of(lambda: anonymize(table, job), repeat=repeat)
    return {
        "anonymize_s": best_s,
        "levels": res.transformation,
        "loss": res.loss,
        "suppressed_rows": res.suppressed_rows,
        "evaluated_nodes": res.evaluated_nodes,
        "checks": res.checks,
    }


def loss_at(table: Any, job: dict[str, Any], levels: dict[str, int]) -> dict[str, Any]:
    """anonlab's loss and suppression of a given transformation (for the peer's output)."""
    spec = load_job(job)
    p = build_problem(table, spec)
    ev = build_evaluator(p)
    res = ev.evaluate(tuple(int(levels[q]) for q in p.quasi_identifiers), with_loss=True)
    return {
        "loss": None if res.loss is None else float(res.loss),
        "anonymous": res.anonymous,
        "suppressed_rows": res.suppressed_rows,
    }


def run_anjana(peer_job: dict[str, Any]) -> dict[str, Any]:
    if not common.PEER_PYTHON.exists() or not ANJANA_SCRIPT.exists():
        return {"error": "peer venv or anjana script absent (benchmarks/peers/setup_peers.sh)"}
    res = subprocess.run(
        [str(common.PEER_PYTHON), str(ANJANA_SCRIPT)],
        input=json.dumps(peer_job),
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if res.returncode != 0:
        return {"error": res.stderr.strip()[-500:]}
    out: dict[str, Any] = json.loads(res.stdout)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="adult only, no Incognito, no peer")
    ap.add_argument("--no-peer", action="store_true", help="skip anjana")
    ap.add_argument(
        "--datasets", default="adult,cup,fars", help="comma-separated data sets (default: all)"
    )
    ap.add_argument(
        "--incognito",
        default="adult",
        help="comma-separated data sets on which Incognito runs too (default: adult)",
    )
    args = ap.parse_args()
    args.incognito = [x for x in args.incognito.split(",") if x]

    tables: dict[str, Any] = {}
    wanted = ["adult"] if args.quick else [d for d in args.datasets.split(",") if d]
    if "adult" not in wanted:
        wanted.insert(0, "adult")  # the l-diversity, t-closeness and peer jobs use adult
    for name in wanted:
        t0 = time.perf_counter()
        tables[name] = read_table(arx_dir() / f"{name}.csv", csv_options=CsvOptions(separator=";"))
        print(f"read {name}: {tables[name].n_rows:,} rows in {time.perf_counter() - t0:.2f} s")

    rows: list[dict[str, Any]] = []
    table_rows = []
    for name, table in tables.items():
        qis = DATASETS[name]
        for k in KS:
            for supp in SUPPRESSIONS:
                for metric in METRICS:
                    job = job_for(name, qis, [{"k_anonymity": {"k": k}}], supp, metric)
                    opt = run_search(table, job, "optimal", args.repeat)
                    full = run_anonymize(table, job, args.repeat)
                    row: dict[str, Any] = {
                        "dataset": name,
                        "model": f"k={k}",
                        "suppression": supp,
                        "metric": metric,
                        "optimal": opt,
                        "anonymize": full,
                    }
                    if not args.quick and name in args.incognito:
                        inc = run_search(table, job, "incognito", 1)
                        row["incognito"] = inc
                        assert opt["loss"] is not None and inc["loss"] is not None
                        assert math.isclose(opt["loss"], inc["loss"], rel_tol=1e-9, abs_tol=1e-9), (
                            name,
                            k,
                            supp,
                            metric,
                            opt,
                            inc,
                        )
                    rows.append(row)
                    table_rows.append(_row(row))
                    print(" ".join(str(c) for c in table_rows[-1]), flush=True)

    # l-diversity and t-closeness on adult (occupation sensitive)
    adult = tables["adult"]
    qis8 = [q for q in DATASETS["adult"] if q != "occupation"]
    occ_h = str(arx_dir() / "adult_hierarchy_occupation.csv")
    special = [
        ("rec (4,3)-div", [{"recursive_cl_diversity": {"attribute": "occupation", "c": 4, "l": 3}}]),
        ("hier 0.2-close", [{"hierarchical_t_closeness": {"attribute": "occupation", "t": 0.2,
                                                            "hierarchy": occ_h}}]),
    ]  # fmt: skip
    for label, models in special:
        for supp in SUPPRESSIONS:
            for metric in METRICS:
                job = job_for("adult", qis8, models, supp, metric, sensitive=["occupation"])
                opt = run_search(adult, job, "optimal", args.repeat)
                full = run_anonymize(adult, job, args.repeat)
                row = {
                    "dataset": "adult",
                    "model": label,
                    "suppression": supp,
                    "metric": metric,
                    "optimal": opt,
                    "anonymize": full,
                }
                if not args.quick:
                    inc = run_search(adult, job, "incognito", 1)
                    row["incognito"] = inc
                    assert math.isclose(opt["loss"], inc["loss"], rel_tol=1e-9, abs_tol=1e-9)
                rows.append(row)
                table_rows.append(_row(row))
                print(" ".join(str(c) for c in table_rows[-1]), flush=True)

    print_table(
        [
            "data", "model", "supp", "metric", "search ms", "anonymize ms", "evaluated",
            "lattice", "loss", "incognito ms", "incognito evals",
        ],
        table_rows,
        title="anonlab optimal full-domain generalization (ARX data, in process, best of "
        f"{args.repeat})",
    )  # fmt: skip

    peer_rows: list[dict[str, Any]] = []
    if not (args.quick or args.no_peer):
        peer_rows = compare_anjana(adult, rows, args.repeat)

    path = common.write_results(  # a --quick run does not replace the full results
        "global_recoding_quick" if args.quick else "global_recoding",
        {"repeat": args.repeat, "jobs": rows, "anjana": peer_rows},
    )
    print(f"\nwrote {path}")


def _row(r: dict[str, Any]) -> list[Any]:
    inc = r.get("incognito") or {}
    return [
        r["dataset"],
        r["model"],
        r["suppression"],
        r["metric"],
        round(r["optimal"]["search_s"] * 1000, 1),
        round(r["anonymize"]["anonymize_s"] * 1000, 1),
        r["optimal"]["evaluated_nodes"],
        r["optimal"]["lattice_size"],
        _fmt_loss(r["optimal"]["loss"]),
        round(inc["search_s"] * 1000, 1) if inc else "-",
        inc.get("evaluated_nodes", "-"),
    ]


def _fmt_loss(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.4f}" if abs(x) < 10 else f"{x:,.0f}"


def compare_anjana(adult: Any, rows: list[dict[str, Any]], repeat: int) -> list[dict[str, Any]]:
    """anjana on the adult k-anonymity jobs; anonlab's loss of anjana's transformation."""
    d = arx_dir()
    qis = DATASETS["adult"]
    out = []
    table = []
    qis8 = [q for q in qis if q != "occupation"]
    for r in rows:
        if r["dataset"] != "adult" or r["model"].startswith("hier"):
            continue  # anjana has no hierarchical-distance t-closeness
        recursive = r["model"].startswith("rec")
        k = 1 if recursive else int(r["model"][2:])
        job_qis = qis8 if recursive else qis
        peer_job = {
            "data": str(d / "adult.csv"),
            "separator": ";",
            "quasi_identifiers": job_qis,
            "hierarchies": {q: str(d / f"adult_hierarchy_{q}.csv") for q in job_qis},
            "identifiers": [],
            "sensitive": "occupation" if recursive else None,
            "model": "recursive_c_l_diversity" if recursive else "k_anonymity",
            "k": k,
            "c": 4,
            "l": 3,
            "suppression": r["suppression"],
            "repeat": repeat,
        }
        peer = run_anjana(peer_job)
        entry: dict[str, Any] = {
            "model": r["model"],
            "k": k,
            "suppression": r["suppression"],
            "metric": r["metric"],
            "anjana": peer,
        }
        ours_s = r["anonymize"]["anonymize_s"]
        ours_loss = r["optimal"]["loss"]
        if peer.get("error") is None and peer.get("levels_consistent", False):
            models = (
                [{"recursive_cl_diversity": {"attribute": "occupation", "c": 4, "l": 3}}]
                if recursive
                else [{"k_anonymity": {"k": k}}]
            )
            job = job_for(
                "adult", job_qis, models, r["suppression"], r["metric"],
                sensitive=["occupation"] if recursive else None,
            )  # fmt: skip
            at = loss_at(adult, job, peer["levels"])
            entry["anjana_loss_by_anonlab"] = at
            entry["speedup"] = peer["elapsed_s"] / ours_s
            entry["loss_ratio"] = (at["loss"] / ours_loss) if ours_loss else None
            entry["anonlab_loss_le_anjana"] = ours_loss <= at["loss"] + 1e-9
            entry["pass"] = entry["speedup"] >= 10 and entry["anonlab_loss_le_anjana"]
            table.append(
                [
                    r["model"], r["suppression"], r["metric"],
                    round(ours_s * 1000, 1), round(peer["elapsed_s"] * 1000, 1),
                    f"{entry['speedup']:.0f}x", _fmt_loss(ours_loss), _fmt_loss(at["loss"]),
                    peer["suppressed_rows"], common.verdict(entry["pass"]),
                ]
            )  # fmt: skip
        else:
            failed = peer.get("error") or "levels not readable"
            entry["pass"] = r["optimal"]["loss"] is not None  # anonlab solved what anjana did not
            table.append([r["model"], r["suppression"], r["metric"], round(ours_s * 1000, 1),
                          _ms(peer.get("elapsed_s")), "-", _fmt_loss(ours_loss),
                          "failed: " + failed[:60], "-", common.verdict(entry["pass"])])  # fmt: skip
        out.append(entry)
    print_table(
        [
            "adult", "supp", "metric", "anonlab ms", "anjana ms", "speedup", "anonlab loss",
            "anjana loss", "anjana suppressed", "10x & <= loss",
        ],
        table,
        title="anonlab vs anjana " + _anjana_version(out) + " (same jobs, loss by anonlab's metric)",
    )  # fmt: skip
    return out


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x * 1000:.1f}"


def _anjana_version(entries: list[dict[str, Any]]) -> str:
    for e in entries:
        v = e["anjana"].get("version")
        if v:
            return str(v)
    return "?"


if __name__ == "__main__":
    main()
