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

The reference file's ARX times come from another machine. To compare on this one, run this
script once at the reference commit (``git worktree add /tmp/a864 a864f67``, copy this script
into its ``benchmarks/``, ``PYTHONPATH=/tmp/a864/src python /tmp/a864/benchmarks/bench_arx_grid.py
--repeat 5``) and pass its JSON as ``--baseline``. This machine's speed factor of a
configuration (data set, k, suppression) is the median over the baseline's six metrics of
``a864f67 here / a864f67 in the file``, and the scaled ratio is ``now / (ARX * factor)`` (the
file's same-run ARX-to-anonlab ratio, carried over by anonlab's own speed-up measured here).
The factor is taken per configuration, not per job: a machine's speed does not depend on the
metric, and a864f67's discernibility and AECS jobs spent their time in a Python loop over
every lattice node on two threads, work whose speed here against the reference machine
(factor 0.22-0.43 without suppression on adult and fars) is not that of its other metrics on
the same data (0.32-0.73), nor that of ARX, which does the same work whatever the metric. Each job's own
factor and the ratio scaled by it are reported too (``job_factor``, ``job_scaled_ratio``).
The baseline also shows whether the optimum (levels, loss, suppressed rows) is unchanged.
``--from-results FILE`` prints the tables of an earlier run without running the jobs.

**ARX in the same run.** ``--arx auto`` (``$ARX_CP``, else the build of
``../shared/tools/arx/build.sh`` in /tmp/arx), or ``--arx DIR`` (a build directory) or a class
path, times ARX 3.9.2 itself on this machine: for every job, anonlab as above and then ARX's
harness ``ArxBench`` (one JVM per job: ``--arx-warmups`` unmeasured runs, then ``--repeat``
measured ones, the data re-loaded untimed before each; the median wall time of
``ARXAnonymizer.anonymize()`` as ArxBench measures it in process, JVM start excluded), the two
tools taking turns at going first from one job to the next. Reported per job: both median
times, their ratio, the nodes anonlab evaluated and the transformations ARX checked, and
whether the optimum is the same: the same levels, or a tie (other levels with the same loss,
where ARX's score reads as the same number; ARX prints some metrics' scores in other units). Writes
``benchmarks/results/arx_grid_same_run.json``; where ARX is not built the script says so and
exits without running anything.

    .venv/bin/python benchmarks/bench_arx_grid.py --arx auto [--repeat 3] [--goal 0.5]

``--over FILE`` runs only the jobs whose ratio was above ``--goal`` in an earlier same-run
file (to measure those again on an idle machine), ``--name`` names the results file:

    .venv/bin/python benchmarks/bench_arx_grid.py --arx auto --repeat 5
        --over benchmarks/results/arx_grid_same_run.json --name arx_grid_over_goal
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
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
        "runs_ms": [w * 1000 for w in walls],
        "cpu_ms": statistics.median(cpus) * 1000,
        "nodes": res.evaluated_nodes,
        "levels": res.transformation,
        "loss": res.loss,
        "suppressed_rows": res.suppressed_rows,
    }


ARX_METRICS = {
    "Loss": "loss",
    "Entropy": "entropy",
    "Discernability": "discernability",
    "AECS": "aecs",
    "Precision": "precision",
    "Height": "height",
}


def run_arx(
    classpath: str, dataset: str, k: int, suppression: float, metric: str, warmups: int, runs: int
) -> dict[str, Any]:
    """ArxBench's JSON for one job (ARX 3.9.2 in a fresh JVM), with ``process_wall_s``."""
    arx_dir = common.shared_dir() / "datasets" / "arx"
    cmd = [
        "java", "-Xmx8g", "-cp", classpath, "ArxBench",
        "--data", str(arx_dir / f"{dataset}.csv"), "--hierdir", str(arx_dir), "--name", dataset,
        "--qis", ",".join(QIS[dataset]), "--k", str(k), "--supp", repr(suppression),
        "--metric", ARX_METRICS[metric], "--warmups", str(warmups), "--runs", str(runs),
        "--label", f"{dataset} k={k} supp={suppression:g} {metric}",
    ]  # fmt: skip
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        common.die(f"ArxBench failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr[-2000:]}")
    doc: dict[str, Any] = json.loads([x for x in p.stdout.splitlines() if x.startswith("{")][-1])
    doc["process_wall_s"] = time.perf_counter() - t0
    return doc


def _as_float(x: Any) -> float | None:
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def _same_loss(loss: float | None, arx: dict[str, Any]) -> bool:
    """Whether ARX's optimum has the same loss (a tie: another node as good), its score
    read as a number (ARX prints some metrics' scores in other units: then False)."""
    theirs = _as_float(arx.get("loss_highest"))
    if loss is None or theirs is None:
        return False
    return abs(loss - theirs) <= 1e-9 * max(1.0, abs(theirs))


def same_run_row(ref: dict[str, Any], ours: dict[str, Any], arx: dict[str, Any]) -> dict[str, Any]:
    """One job measured beside ARX: times, ratio, nodes, whether the optimum is the same."""
    arx_levels = arx.get("transformation")
    return {
        "dataset": ref["dataset"], "k": ref["k"], "suppression": ref["suppression"],
        "metric": ref["metric"],
        "anonlab_ms": ours["wall_ms"], "anonlab_cpu_ms": ours["cpu_ms"],
        "arx_ms": arx["median_ms"], "arx_process_cpu_ms": arx["process_cpu_ms_median"],
        "ratio": ours["wall_ms"] / arx["median_ms"],
        "anonlab_nodes": ours["nodes"], "arx_nodes_checked": arx["transformations_checked"],
        "anonlab_levels": ours["levels"], "arx_levels": arx_levels,
        "anonlab_suppressed": ours["suppressed_rows"],
        "arx_suppressed": arx.get("suppressed_records"),
        "anonlab_loss": ours["loss"], "arx_loss": _as_float(arx.get("loss_highest")),
        "same_levels": arx_levels == ours["levels"],
        "same_optimum": arx_levels == ours["levels"] or _same_loss(ours["loss"], arx),
        "anonlab_runs_ms": ours["runs_ms"], "arx_runs_ms": arx["runs_ms"],
        "arx_process_wall_s": arx["process_wall_s"],
    }  # fmt: skip


def wanted_jobs(args: argparse.Namespace, tables: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The reference file's jobs of ``--metrics`` and ``--datasets``, in its order; each
    job's data set read into ``tables`` (once) before it is yielded."""
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    wanted_m, wanted_d = args.metrics.split(","), args.datasets.split(",")
    over = None  # with --over: the jobs above the goal in that same-run file
    if getattr(args, "over", None) is not None:
        earlier = json.loads(args.over.read_text(encoding="utf-8"))["jobs"]
        over = {_key(r) for r in earlier if r["ratio"] > args.goal}
    for ref in reference["rows"]:
        ds = ref["dataset"]
        if ref["metric"] not in wanted_m or ds not in wanted_d:
            continue
        if over is not None and _key(ref) not in over:
            continue
        if ds not in tables:
            path = common.shared_dir() / "datasets" / "arx" / f"{ds}.csv"
            tables[ds] = read_table(path, csv_options=CsvOptions(separator=";"))
        yield ref


def same_run(args: argparse.Namespace, classpath: str) -> None:
    """Every job of the grid, anonlab and ARX taking turns; print and write the results."""
    repeat = 1 if args.quick else args.repeat
    tables: dict[str, Any] = {}
    out: list[dict[str, Any]] = []
    t_start = time.perf_counter()
    for ref in wanted_jobs(args, tables):
        ds, metric = ref["dataset"], ref["metric"]
        job = job_for(ds, ref["k"], ref["suppression"], metric)

        def arx_now(ref: dict[str, Any] = ref) -> dict[str, Any]:
            return run_arx(classpath, ref["dataset"], ref["k"], ref["suppression"],
                           ref["metric"], args.arx_warmups, repeat)  # fmt: skip

        if len(out) % 2 == 0:
            ours = run(tables[ds], job, repeat)
            arx = arx_now()
        else:
            arx = arx_now()
            ours = run(tables[ds], job, repeat)
        row = same_run_row(ref, ours, arx)
        out.append(row)
        print(f"{ds} k={ref['k']} supp={ref['suppression']:g} {metric}: "
              f"{row['anonlab_ms']:.1f} ms vs ARX {row['arx_ms']:.1f} ms, ratio "
              f"{row['ratio']:.2f}, nodes {row['anonlab_nodes']} vs {row['arx_nodes_checked']}"
              f"{'' if row['same_levels'] else ', a tie' if row['same_optimum'] else ', OPTIMUM DIFFERS'}", flush=True)  # fmt: skip
    elapsed = time.perf_counter() - t_start
    summary = summarize_same_run(out, args.goal)
    report_same_run(out, summary, args.goal)
    print(f"\ngrid run in {elapsed / 60:.1f} min")
    name = args.name or ("arx_grid_same_run_quick" if args.quick else "arx_grid_same_run")
    path = common.write_results(
        name,
        {"repeat": repeat, "arx_warmups": args.arx_warmups, "goal_ratio": args.goal,
         "arx_classpath": classpath, "elapsed_s": elapsed, "jobs": out, "summary": summary},
    )  # fmt: skip
    print(f"wrote {path}")


def summarize_same_run(out: list[dict[str, Any]], goal: float) -> dict[str, Any]:
    """Per metric and over all jobs: median and worst ratio, jobs above ``goal``, nodes over
    ARX's, optima that differ; the worst five jobs."""
    summary: dict[str, Any] = {"per_metric": {}}
    groups = {
        m: [r for r in out if r["metric"] == m] for m in dict.fromkeys(r["metric"] for r in out)
    }
    for name, recs in {**groups, "all": out}.items():
        ratios = [r["ratio"] for r in recs]
        summary["per_metric"][name] = {
            "jobs": len(recs),
            "median_ratio": statistics.median(ratios),
            "worst_ratio": max(ratios),
            "over_goal": sum(x > goal for x in ratios),
            "nodes_over_arx": sum(r["anonlab_nodes"] > r["arx_nodes_checked"] for r in recs),
            "optimum_differs": sum(not r["same_optimum"] for r in recs),
        }
    worst = sorted(out, key=lambda r: r["ratio"], reverse=True)
    summary["worst"] = [
        {key: r[key] for key in ("dataset", "k", "suppression", "metric", "ratio", "anonlab_ms",
                                 "arx_ms", "anonlab_nodes", "arx_nodes_checked")}
        for r in worst[:5]
    ]  # fmt: skip
    summary["over_goal"] = [
        {key: r[key] for key in ("dataset", "k", "suppression", "metric", "ratio",
                                 "anonlab_nodes", "arx_nodes_checked")}
        for r in worst if r["ratio"] > goal
    ]  # fmt: skip
    return summary


def report_same_run(out: list[dict[str, Any]], summary: dict[str, Any], goal: float) -> None:
    """Print the job table and the per-metric table of a same-run grid."""
    rows = [
        [
            r["dataset"], r["k"], f"{r['suppression']:g}", r["metric"],
            f"{r['anonlab_ms']:.1f}", f"{r['arx_ms']:.1f}", f"{r['ratio']:.2f}",
            r["anonlab_nodes"], r["arx_nodes_checked"],
            "yes" if r["same_levels"] else "tie" if r["same_optimum"] else "NO",
            r["anonlab_loss"], r["arx_loss"],
        ]
        for r in out
    ]  # fmt: skip
    print_table(
        ["data", "k", "supp", "metric", "anonlab ms", "ARX ms", "ratio", "nodes", "ARX nodes",
         "same optimum", "loss", "ARX loss"],
        rows,
        title="anonlab vs ARX 3.9.2, the same run (median wall ms of the search call)",
    )  # fmt: skip
    table = [
        [m, v["jobs"], f"{v['median_ratio']:.2f}", f"{v['worst_ratio']:.2f}", v["over_goal"],
         v["nodes_over_arx"], v["optimum_differs"]]
        for m, v in summary["per_metric"].items()
    ]  # fmt: skip
    print_table(
        ["metric", "jobs", "median ratio", "worst", f"> {goal:g}", "more nodes than ARX",
         "optimum differs"],
        table,
        title="per metric: anonlab / ARX wall time, the same run",
    )  # fmt: skip


def summarize(out: list[dict[str, Any]], baseline: dict[Any, Any] | None) -> dict[str, Any]:
    """Per metric: median and worst ratio to ARX (raw, at a864f67 in the file, and scaled by
    this machine's speed when a baseline run is given), nodes over ARX's, CPU over wall."""
    summary: dict[str, Any] = {}
    for metric in dict.fromkeys(r["metric"] for r in out):
        recs = [r for r in out if r["metric"] == metric]
        ratios = [r["now"]["wall_ms"] / r["arx_ms"] for r in recs]
        before = [r["anonlab_ms"] / r["arx_ms"] for r in recs]
        entry = {
            "median_ratio": statistics.median(ratios),
            "worst_ratio": max(ratios),
            "median_ratio_a864f67": statistics.median(before),
            "worst_ratio_a864f67": max(before),
            "nodes_over_arx": sum(r["now"]["nodes"] > r["arx_nodes_checked"] for r in recs),
            "cpu_over_wall": statistics.median(
                r["now"]["cpu_ms"] / r["now"]["wall_ms"] for r in recs
            ),
        }
        if baseline is not None:
            scaled = [r["scaled_ratio"] for r in recs]
            by_job = [r["job_scaled_ratio"] for r in recs]
            entry |= {
                "machine_factor_median": statistics.median(r["machine_factor"] for r in recs),
                "median_scaled_ratio": statistics.median(scaled),
                "worst_scaled_ratio": max(scaled),
                "scaled_over_arx": sum(x > 1 for x in scaled),
                "job_factor_median": statistics.median(r["job_factor"] for r in recs),
                "median_job_scaled_ratio": statistics.median(by_job),
                "worst_job_scaled_ratio": max(by_job),
                "optimum_changed": sum(not r["same_optimum"] for r in recs),
            }
        summary[metric] = entry
    return summary


def _key(r: dict[str, Any]) -> tuple[Any, ...]:
    return (r["dataset"], r["k"], r["suppression"], r["metric"])


def with_baseline(out: list[dict[str, Any]], baseline: dict[Any, Any]) -> None:
    """Add each job's machine factor (its configuration's), its own factor, the ratios
    scaled by both and whether its optimum is unchanged."""
    by_config: dict[tuple[Any, ...], list[float]] = {}
    for b in baseline.values():
        by_config.setdefault(_key(b)[:3], []).append(b["now"]["wall_ms"] / b["anonlab_ms"])
    for r in out:
        b = baseline[_key(r)]["now"]
        now = r["now"]
        r["job_factor"] = b["wall_ms"] / r["anonlab_ms"]
        r["machine_factor"] = statistics.median(by_config[_key(r)[:3]])
        r["scaled_ratio"] = now["wall_ms"] / (r["arx_ms"] * r["machine_factor"])
        r["job_scaled_ratio"] = now["wall_ms"] / (r["arx_ms"] * r["job_factor"])
        r["same_optimum"] = (
            now["levels"] == b["levels"]
            and now["suppressed_rows"] == b["suppressed_rows"]
            and abs(now["loss"] - b["loss"]) <= 1e-9 * max(1.0, abs(b["loss"]))
        )


def report(out: list[dict[str, Any]], summary: dict[str, Any]) -> None:
    """Print the job table and the per-metric table."""
    scaled = "machine_factor_median" in next(iter(summary.values()))  # (a baseline given)
    rows = [
        [
            r["dataset"], r["k"], f"{r['suppression']:g}", r["metric"],
            f"{r['now']['wall_ms']:.1f}", f"{r['now']['cpu_ms']:.1f}", f"{r['arx_ms']:.1f}",
            f"{r['anonlab_ms']:.1f}", f"{r['now']['wall_ms'] / r['arx_ms']:.2f}",
            *([f"{r['scaled_ratio']:.2f}", f"{r['job_scaled_ratio']:.2f}"] if scaled else []),
            r["now"]["nodes"], r["arx_nodes_checked"], r["anonlab_nodes"],
        ]
        for r in out
    ]  # fmt: skip
    print_table(
        ["data", "k", "supp", "metric", "ms", "cpu ms", "ARX ms", "a864f67 ms", "ratio",
         *(["scaled", "by job"] if scaled else []), "nodes", "ARX nodes", "a864f67 nodes"],
        rows,
        title="anonlab now vs ARX 3.9.2 and anonlab a864f67 (reference file)",
    )  # fmt: skip
    head = ["metric", "median ratio", "worst", "a864f67 median", "a864f67 worst"]
    if scaled:
        head += ["machine factor", "scaled median", "scaled worst", "scaled > 1",
                 "job factor", "by job: median", "by job: worst", "optimum changed"]  # fmt: skip
    head += ["jobs with more nodes than ARX", "cpu/wall"]
    table = []
    for m, v in summary.items():
        row = [m, f"{v['median_ratio']:.2f}", f"{v['worst_ratio']:.2f}",
               f"{v['median_ratio_a864f67']:.2f}", f"{v['worst_ratio_a864f67']:.2f}"]  # fmt: skip
        if scaled:
            row += [f"{v['machine_factor_median']:.2f}", f"{v['median_scaled_ratio']:.2f}",
                    f"{v['worst_scaled_ratio']:.2f}", v["scaled_over_arx"],
                    f"{v['job_factor_median']:.2f}", f"{v['median_job_scaled_ratio']:.2f}",
                    f"{v['worst_job_scaled_ratio']:.2f}", v["optimum_changed"]]  # fmt: skip
        row += [v["nodes_over_arx"], f"{v['cpu_over_wall']:.2f}"]
        table.append(row)
    print_table(head, table, title="per metric: anonlab / ARX wall time")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--metrics", default=",".join(METRICS))
    ap.add_argument("--datasets", default=",".join(QIS))
    ap.add_argument("--quick", action="store_true", help="one run per job")
    ap.add_argument("--baseline", type=Path, help="this script's JSON, run at a864f67 here")
    ap.add_argument("--from-results", type=Path, help="report an earlier run's JSON")
    ap.add_argument(
        "--arx",
        metavar="PATH_OR_AUTO",
        help="run ARX 3.9.2's ArxBench beside every job in this run ('auto', a build "
        "directory or a class path)",
    )
    ap.add_argument("--arx-warmups", type=int, default=2, help="ARX's unmeasured runs per job")
    ap.add_argument("--goal", type=float, default=0.5, help="ratio to ARX to report jobs above")
    ap.add_argument(
        "--over",
        type=Path,
        help="with --arx: only the jobs whose ratio was above --goal in this earlier same-run JSON",
    )
    ap.add_argument(
        "--name", help="with --arx: the results file's name (default arx_grid_same_run)"
    )
    args = ap.parse_args()
    if args.arx is not None:
        classpath = common.arx_classpath(args.arx)
        if classpath is None:
            print(
                f"ARX is not built where --arx {args.arx} looks (or java is missing): build it "
                f"with {common.shared_dir() / 'tools' / 'arx' / 'build.sh'} (see its README); "
                "nothing was run."
            )
            return
        same_run(args, classpath)
        return
    repeat = 1 if args.quick else args.repeat
    wanted_m = args.metrics.split(",")
    wanted_d = args.datasets.split(",")
    baseline = None
    if args.baseline is not None:
        jobs = json.loads(args.baseline.read_text(encoding="utf-8"))["jobs"]
        baseline = {_key(r): r for r in jobs}
    if args.from_results is not None:
        earlier = json.loads(args.from_results.read_text(encoding="utf-8"))
        out = [r for r in earlier["jobs"] if r["metric"] in wanted_m and r["dataset"] in wanted_d]
        repeat = earlier["repeat"]
    else:
        out = []
        tables: dict[str, Any] = {}
        for ref in wanted_jobs(args, tables):
            ds, metric = ref["dataset"], ref["metric"]
            got = run(tables[ds], job_for(ds, ref["k"], ref["suppression"], metric), repeat)
            out.append({**ref, "now": got})
            print(ds, ref["k"], ref["suppression"], metric, f"{got['wall_ms']:.1f} ms", flush=True)
    if baseline is not None:
        with_baseline(out, baseline)
    summary = summarize(out, baseline)
    report(out, summary)
    if args.from_results is not None:  # the earlier run's file, its machine block kept
        if baseline is not None:
            earlier |= {"baseline": str(args.baseline), "jobs": out, "summary": summary}
            args.from_results.write_text(json.dumps(earlier, indent=2) + "\n", encoding="utf-8")
            print(f"\nupdated {args.from_results}")
        return
    name = "arx_grid_quick" if args.quick else "arx_grid"
    path = common.write_results(
        name,
        {"repeat": repeat, "baseline": str(args.baseline) if args.baseline else None,
         "jobs": out, "summary": summary},
    )  # fmt: skip
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
