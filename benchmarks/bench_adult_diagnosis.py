#!/usr/bin/env python3
"""Diagnosis questions on UCI Adult (30,162 complete rows, 8 quasi-identifiers), with peers.

Measures, in process (best of --repeat):
  * Q4  k of all 255 subsets,
  * Q3  largest k-anonymous subsets for k = 2, 10, 50 (time and evaluations),
  * Q12 smallest delta of all 255 subsets for k = 1..50,
each with a *fresh* engine (open_engine + question: includes the partition computation,
excludes CSV reading; the headline) and a *warm* engine (the same engine asked again, so its
partition cache is hot). Also the whole ``anonlab diagnose ... --json`` command for Q4
(process start, imports, CSV read, answer, JSON), and the peers pycanon (peer venv) and a plain
pandas groupby loop on the same 255 subsets; every anonlab k is checked against pycanon's.

    /work/main/.venv/bin/python benchmarks/bench_adult_diagnosis.py [--repeat 5] [--no-peers]

Writes benchmarks/results/adult_diagnosis.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from itertools import combinations
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import ADULT_QI, best_of, print_table, verdict  # noqa: E402

from anonlab import diagnose, open_engine  # noqa: E402

GOAL_Q4_S = 0.2
GOAL_CLI_S = 0.5
GOAL_PYCANON_RATIO = 20.0
Q3_KS = (2, 10, 50)
Q12_MAX_K = 50


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=5, help="runs per in-process/CLI measurement")
    ap.add_argument(
        "--pycanon-repeat",
        type=int,
        default=3,
        help="runs of the pycanon loop (about 18 s each on 2 cores)",
    )
    ap.add_argument("--pandas-repeat", type=int, default=5, help="runs of the pandas loop")
    ap.add_argument("--no-peers", action="store_true", help="skip pycanon and pandas")
    args = ap.parse_args()
    attrs = list(ADULT_QI)
    subsets = [list(c) for r in range(1, len(attrs) + 1) for c in combinations(attrs, r)]
    assert len(subsets) == 255

    t0 = time.perf_counter()
    table = common.load_adult_complete()
    read_s = time.perf_counter() - t0
    print(
        f"Adult: {table.n_rows:,} complete rows (read + drop nulls: {read_s:.3f} s, not timed "
        f"below); attributes: {', '.join(attrs)}"
    )

    res: dict = {
        "n_rows": table.n_rows,
        "attributes": attrs,
        "repeat": args.repeat,
        "read_and_drop_nulls_s": read_s,
    }

    # ----------------------------------------------------------------- Q4 in process
    def q4_fresh():
        return diagnose(open_engine(table), attributes=attrs)

    q4_best, q4_all, q4 = best_of(q4_fresh, args.repeat)
    warm = open_engine(table)
    diagnose(warm, attributes=attrs)
    q4w_best, q4w_all, _ = best_of(lambda: diagnose(warm, attributes=attrs), args.repeat)
    q4_k = {tuple(r.attributes): r.k for r in q4.rows}
    assert len(q4_k) == 255

    # Q4 including the CSV read (read_table + drop_nulls + open + Q4), for a fair end-to-end view
    def q4_with_read():
        return diagnose(open_engine(common.load_adult_complete()), attributes=attrs)

    q4r_best, q4r_all, _ = best_of(q4_with_read, args.repeat)
    res["Q4"] = {
        "fresh_s": q4_best,
        "fresh_all_s": q4_all,
        "warm_s": q4w_best,
        "warm_all_s": q4w_all,
        "with_csv_read_s": q4r_best,
        "with_csv_read_all_s": q4r_all,
        "evaluations": q4.evaluations,
        "rows": len(q4.rows),
        "pruned_rows": sum(not r.evaluated for r in q4.rows),
    }

    # ----------------------------------------------------------------- Q3
    res["Q3"] = {}
    for k in Q3_KS:
        b, allt, ans = best_of(
            lambda k=k: diagnose(open_engine(table), attributes=attrs, k=k), args.repeat
        )
        eng = open_engine(table)
        diagnose(eng, attributes=attrs, k=k)
        bw, allw, _ = best_of(
            lambda k=k, eng=eng: diagnose(eng, attributes=attrs, k=k), args.repeat
        )
        res["Q3"][str(k)] = {
            "fresh_s": b,
            "fresh_all_s": allt,
            "warm_s": bw,
            "warm_all_s": allw,
            "evaluations": ans.evaluations,
            "subsets": ans.subsets,
        }

    # ----------------------------------------------------------------- Q12
    def q12_fresh():
        return diagnose(open_engine(table), attributes=attrs, find_delta=True, max_k=Q12_MAX_K)

    q12_best, q12_all, q12 = best_of(q12_fresh, args.repeat)
    eng = open_engine(table)
    diagnose(eng, attributes=attrs, find_delta=True, max_k=Q12_MAX_K)
    q12w_best, q12w_all, _ = best_of(
        lambda: diagnose(eng, attributes=attrs, find_delta=True, max_k=Q12_MAX_K), args.repeat
    )
    assert len(q12.rows) == 255 * Q12_MAX_K
    res["Q12"] = {
        "max_k": Q12_MAX_K,
        "fresh_s": q12_best,
        "fresh_all_s": q12_all,
        "warm_s": q12w_best,
        "warm_all_s": q12w_all,
        "evaluations": q12.evaluations,
        "rows": len(q12.rows),
    }

    with tempfile.TemporaryDirectory(prefix="anonlab-bench-") as tmp:
        tmpdir = Path(tmp)
        clean_csv = common.write_table_csv(table, tmpdir / "adult_clean.csv")
        # ------------------------------------------------------------- CLI Q4
        res["CLI_Q4"] = run_cli(clean_csv, attrs, args.repeat, q4_k)
        # ------------------------------------------------------------- peers
        if not args.no_peers:
            subsets_json = tmpdir / "subsets.json"
            subsets_json.write_text(json.dumps(subsets))
            res["peers"] = run_peers(clean_csv, subsets_json, subsets, q4_k, args)

    report(res)
    path = common.write_results("adult_diagnosis", res)
    print(f"\nwrote {path}")
    if not all(g["pass"] for g in res["goals"].values()):
        print("some goals FAILED (see above)")


def run_cli(clean_csv: Path, attrs: list[str], repeat: int, q4_k: dict) -> dict:
    exe = Path(sys.executable).with_name("anonlab")
    base = [str(exe)] if exe.exists() else [sys.executable, "-m", "anonlab"]
    cmd = base + ["diagnose", str(clean_csv), "--attributes", ",".join(attrs), "--json"]
    env = dict(os.environ)
    holder: dict = {}

    def once():
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if p.returncode != 0:
            common.die(f"CLI failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
        holder["out"] = p.stdout

    once()  # untimed warm-up (page cache, .pyc files)
    best, allt, _ = best_of(once, repeat)
    doc = json.loads(holder["out"])
    cli_k = {tuple(r["attributes"]): r["k"] for r in doc["rows"]}
    assert cli_k == q4_k, "CLI Q4 answer differs from the in-process answer"
    # interpreter start + imports only, to show what the fixed cost of the command is
    imp_cmd = [sys.executable, "-c", "import anonlab.cli.app"]
    imp_best, imp_all, _ = best_of(lambda: subprocess.run(imp_cmd, check=True), repeat)
    nop_best, _, _ = best_of(
        lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), repeat
    )
    shown = ["anonlab"] + [("<clean.csv>" if c == str(clean_csv) else c) for c in cmd[len(base) :]]
    return {
        "command": " ".join(shown),
        "seconds": best,
        "all_s": allt,
        "import_cli_s": imp_best,
        "import_cli_all_s": imp_all,
        "python_startup_s": nop_best,
    }


def ensure_peer_venv() -> Path:
    if not common.PEER_PYTHON.exists():
        print("peer venv missing: running benchmarks/peers/setup_peers.sh ...", flush=True)
        subprocess.run(["bash", str(common.PEERS / "setup_peers.sh")], check=True)
    if not common.PEER_PYTHON.exists():
        common.die(f"peer venv still missing after setup: {common.PEER_PYTHON}")
    return common.PEER_PYTHON


def run_peer(python: Path, script: str, clean_csv: Path, subsets_json: Path, repeat: int) -> dict:
    cmd = [
        str(python),
        str(common.PEERS / script),
        "--csv",
        str(clean_csv),
        "--subsets-json",
        str(subsets_json),
        "--repeat",
        str(repeat),
    ]
    print(f"running {script} (repeat {repeat}) ...", flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        common.die(f"{script} failed ({p.returncode}):\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def run_peers(clean_csv: Path, subsets_json: Path, subsets: list, q4_k: dict, args) -> dict:
    out = {}
    pyc = run_peer(ensure_peer_venv(), "pycanon_k.py", clean_csv, subsets_json, args.pycanon_repeat)
    pdg = run_peer(
        Path(sys.executable), "pandas_groupby_k.py", clean_csv, subsets_json, args.pandas_repeat
    )
    for name, doc in (("pycanon", pyc), ("pandas-groupby", pdg)):
        assert doc["n_rows"] == common.ADULT_COMPLETE_ROWS, (name, doc["n_rows"])
        theirs = {tuple(s): k for s, k in zip(subsets, doc["k"])}
        diff = [(s, q4_k[s], k) for s, k in theirs.items() if q4_k[s] != k]
        assert not diff, f"anonlab k differs from {name} on {len(diff)} subsets, e.g. {diff[:3]}"
        out[name] = {
            "version": doc["version"],
            "seconds": doc["seconds"],
            "all_s": doc["all_seconds"],
            "repeat": doc["repeat"],
            "k_equal_on_all_255_subsets": True,
        }
    return out


def report(res: dict) -> None:
    q4, cli = res["Q4"], res["CLI_Q4"]
    rows = [
        [
            "Q4  k of all 255 subsets",
            q4["fresh_s"],
            q4["warm_s"],
            q4["evaluations"],
            f"{q4['pruned_rows']} rows pruned (k=1 by Lemma 1)",
        ],
    ]
    for k, d in res["Q3"].items():
        rows.append(
            [
                f"Q3  k={k}",
                d["fresh_s"],
                d["warm_s"],
                d["evaluations"],
                f"{len(d['subsets'])} maximal subsets",
            ]
        )
    q12 = res["Q12"]
    rows.append(
        [
            f"Q12 k=1..{q12['max_k']}",
            q12["fresh_s"],
            q12["warm_s"],
            q12["evaluations"],
            f"{q12['rows']} table rows",
        ]
    )
    print_table(
        ["question (in process)", "fresh s", "warm s", "evaluations", "note"],
        rows,
        title=f"anonlab on Adult ({res['n_rows']:,} rows), best of {res['repeat']}",
    )
    print(f"Q4 including CSV read + drop nulls: {q4['with_csv_read_s']:.4f} s")
    print(
        f"CLI Q4 (whole command): {cli['seconds']:.4f} s  "
        f"[python start {cli['python_startup_s']:.3f} s, "
        f"start + import anonlab.cli.app {cli['import_cli_s']:.3f} s]"
    )

    goals = {
        "Q4_in_process_under_0.2s": {
            "value": q4["fresh_s"],
            "goal": GOAL_Q4_S,
            "pass": q4["fresh_s"] < GOAL_Q4_S,
        },
        "Q4_CLI_under_0.5s": {
            "value": cli["seconds"],
            "goal": GOAL_CLI_S,
            "pass": cli["seconds"] < GOAL_CLI_S,
        },
    }
    peers = res.get("peers")
    if peers:
        prow = [["anonlab (fresh engine)", "", q4["fresh_s"], 1.0]]
        ratios = {}
        for name, d in peers.items():
            ratio = d["seconds"] / q4["fresh_s"]
            ratios[name] = ratio
            prow.append([name, d["version"], d["seconds"], ratio])
        print_table(
            ["Q4 on 255 subsets", "version", "seconds", "x anonlab"],
            prow,
            title="Peers (subset loop only, CSV read excluded; k equal on all 255 subsets)",
        )
        res["ratios"] = {f"{n}/anonlab": r for n, r in ratios.items()}
        goals["pycanon_at_least_20x_slower"] = {
            "value": ratios["pycanon"],
            "goal": GOAL_PYCANON_RATIO,
            "pass": ratios["pycanon"] >= GOAL_PYCANON_RATIO,
        }
    res["goals"] = goals
    print("\nGoals")
    for name, g in goals.items():
        print(f"  {verdict(g['pass'])}  {name}: {g['value']:.4g} (goal {g['goal']})")


if __name__ == "__main__":
    main()
