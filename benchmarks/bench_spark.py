#!/usr/bin/env python3
"""The Spark engine beside DuckDB and numpy: diagnosis questions, and anonymize at scale.

Two benchmarks of issue 33.

**Diagnosis** (item 2, the default). The data: ``bench_scale.ensure_data`` (rows of the
bundled Adult sampled with replacement, numpy ``default_rng(0)``, Parquet in
``benchmarks/data/``), 1,000,000 rows by default. Each engine runs in a fresh child process
that times

* ``open``: opening the engine on the Parquet file (numpy: reading it whole; Spark: the
  session's start is timed apart, as ``session``, then the file and its row count);
* ``class_stats``: the classes of 8 quasi-identifiers with the histogram of ``salary-class``
  (keys included, as a search asks);
* ``q9``: the Diagnosis Centre's Q9 (the smallest delta for k = 5) on the same 8 attributes;
* ``q4``: Q4 (k of every subset) of 4 of them, 15 subsets (Spark: one batched job per size
  through ``class_sizes_many``, if the diagnosis batches; else 15 jobs).

and reports its peak RSS (``VmHWM``); for Spark also that of its JVM (local mode: the driver
and the executors are one JVM), which is where the data live.

    .venv/bin/python benchmarks/bench_spark.py [--rows 1M] [--engines numpy,duckdb,spark]

writes ``benchmarks/results/spark.json``.

**Anonymize at scale** (item 4, ``--anonymize``): ``bench_scale.py``'s job (ARX's 9 adult
quasi-identifiers and hierarchies, k = 5, 5 % suppression, the loss metric, the optimal
search) on its Parquet files, ``anonlab.anonymize(data, job, output=..., engine=E)`` with
Spark (local[2], the session the engine starts) and DuckDB, one size after the other, each
run in a fresh child process. Reported per run: the wall time of the call (Spark: the
session's start included, as a command-line run pays it; the import of anonlab excluded,
as in ``bench_scale.py``), the time of each engine step (open, frequency set, the check for
identifying columns, writing the release, re-checking the written file), the peak memory of
the whole process tree (the child and its JVM: proportional resident memory, ``Pss``, summed
over the tree, so that pages a forked child shares count once; sampled every
0.2 s) and, per size, Spark's time over DuckDB's. Goal: Spark within 3x of DuckDB from 10 M
rows on, under 4 GiB at every size; the slope (seconds per million rows) of each engine.
With ``--repeat N`` each size runs N times, the engines in turn; the ratio and the slope
are taken from the medians. The CPU time of the run's process tree and the cores the
machine's other processes used meanwhile (``others``) are recorded beside the load average:
the machine is shared. The engine ``spark-dataset`` is Spark writing the release as a
Parquet dataset folder (``output="release.parquet/"``: the part files as Spark wrote them,
nothing joined by the driver) instead of one file. The engine ``spark-cluster`` is the Spark
engine on a standalone cluster that the run starts on this machine (``spark_cluster.py``: a
master and two workers, one core and 2 GiB each, each its own process; the child is the
driver, its executors run on the workers): the same job as on local[2], its peak memory and
CPU time those of the child's tree and of the master's and workers' trees (their JVMs and the
executors) together. The engine ``spark-floor`` is no anonlab
code: Spark's own least work for such a release, the floor under any Spark implementation of
the issue's design (start the session; read the file; group it by the 9 quasi-identifiers and
bring the classes to the driver as Arrow, the frequency set; write its rows unchanged as a
Parquet dataset, no level table joined and no row suppressed; group the written rows by the 9
again and bring them over, the re-check).

    .venv/bin/python benchmarks/bench_spark.py --anonymize [--sizes 1M,10M,100M]
        [--engines duckdb,spark,spark-dataset,spark-cluster] [--repeat 1] [--name spark_scale]

writes ``benchmarks/results/<name>.json`` (default ``spark_scale.json``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from bench_scale import ensure_data, job, label, parse_size, slope  # noqa: E402

QIS = ["age", "sex", "race", "marital-status", "education", "native-country", "workclass",
       "occupation"]  # fmt: skip
SENSITIVE = "salary-class"
K = 5
#: Spark's time over DuckDB's that issue 33 allows, from 10 M rows on.
GOAL_RATIO = 3.0
GOAL_RATIO_FROM = 10_000_000
GOAL_TREE_MIB = 4096.0
#: How often the process tree's memory is sampled (seconds).
SAMPLE_S = 0.2
#: The environment variable that gives an ``--anonymize`` child the cluster's master URL.
CLUSTER_VARIABLE = "ANONLAB_BENCH_SPARK_MASTER"
#: The workers of ``spark-cluster``: two, one core and 2 GiB each (the machine's 2 cores).
CLUSTER = {"workers": 2, "cores": 1, "memory": "2g"}
#: The engine steps timed in an ``--anonymize`` run (methods of the engine class).
STEPS = ("__init__", "frequency_set", "distinct_counts", "write_release", "release_stats")


def _vmhwm_mib(pid: int | str = "self") -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def child(data: str, engine: str) -> dict[str, Any]:
    """Time one engine on ``data`` (run in its own process)."""
    from anonlab import diagnose, open_engine

    out: dict[str, Any] = {"engine": engine}
    options: dict[str, Any] = {}
    if engine == "spark":
        from anonlab.engines.spark_engine import spark_session

        t = time.perf_counter()
        options["spark"] = spark_session()
        out["session_s"] = time.perf_counter() - t
    t = time.perf_counter()
    eng = open_engine(data, engine=engine, **options)
    out["open_s"] = time.perf_counter() - t
    out["n_rows"] = eng.n_rows
    t = time.perf_counter()
    stats = eng.class_stats(QIS, sensitive=[SENSITIVE])
    out["class_stats_s"] = time.perf_counter() - t
    out["classes"] = stats.n_classes
    t = time.perf_counter()
    q9 = diagnose(eng, quasi_identifiers=QIS, k=K, find_delta=True)
    out["q9_s"] = time.perf_counter() - t
    out["q9"] = q9.to_dict()
    t = time.perf_counter()
    q4 = diagnose(eng, attributes=QIS[:4])
    out["q4_s"] = time.perf_counter() - t
    out["q4_evaluations"] = q4.to_dict()["evaluations"]
    out["peak_rss_mib"] = _vmhwm_mib()
    if engine == "spark":
        jvm = options["spark"]._jvm.java.lang.ProcessHandle.current().pid()
        out["jvm_peak_rss_mib"] = _vmhwm_mib(int(jvm))
    return out


# ----------------------------------------------------------------------------- anonymize
def _resident(pid: int) -> int:
    """A process's resident bytes with the pages it shares split among the processes that
    share them (``Pss``): a child the JVM forks shares the JVM's pages until it runs its
    command, and counting its ``VmRSS`` beside the JVM's counted them twice (a 5.2 GiB
    "peak" of a 3.0 GiB run). ``VmRSS`` where ``smaps_rollup`` is not readable."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def tree_usage(root: int) -> tuple[int, float, dict[str, int]]:
    """The resident memory (bytes, :func:`_resident` summed: shared pages counted once) and
    the CPU time so far (seconds) of ``root`` and all its descendants, from /proc, each
    process counted once; and the resident bytes per process (``pid command``). (0, 0.0,
    {}) once the process is gone."""
    pids, seen, rss, ticks, i = [root], {root}, 0, 0, 0
    each: dict[str, int] = {}
    while i < len(pids):
        pid = pids[i]
        i += 1
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                children = Path(f"/proc/{pid}/task/{task}/children").read_text().split()
                for c in map(int, children):
                    if c not in seen:
                        seen.add(c)
                        pids.append(c)
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(stat[11]) + int(stat[12])  # utime, stime
            mine = _resident(pid)
            rss += mine
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
            each[f"{pid} {command.decode(errors='replace')}"] = mine
        except (OSError, ValueError, IndexError):  # a process that ended meanwhile
            continue
    return rss, ticks / os.sysconf("SC_CLK_TCK"), each


def machine_busy_s() -> float:
    """CPU time the whole machine has spent busy since boot (all cores, seconds)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle, iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _timed(cls: Any, name: str, into: dict[str, float]) -> None:
    """Wrap ``cls.name`` so that its calls add their wall time to ``into[name]``."""
    real = getattr(cls, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            key = "open" if name == "__init__" else name
            into[key] = into.get(key, 0.0) + time.perf_counter() - t

    setattr(cls, name, timed)


def anonymize_child(data: str, engine: str, output: str) -> dict[str, Any]:
    """One ``anonymize`` run on ``engine`` in this fresh process (as ``bench_scale.child``,
    with the engine's steps timed)."""
    import importlib

    t0 = time.perf_counter()
    import anonlab
    from anonlab.engines import ENGINES

    steps: dict[str, float] = {}
    cls = importlib.import_module(ENGINES[engine]).ENGINE
    for name in STEPS:
        _timed(cls, name, steps)
    t1 = time.perf_counter()
    out: dict[str, Any] = {"engine": engine, "import_s": t1 - t0}
    session = None
    if engine == "spark":  # the session anonymize would start, timed apart (on the cluster
        # of ``spark-cluster`` if the parent started one)
        from anonlab.engines.spark_engine import spark_session

        session = spark_session(master=os.environ.get(CLUSTER_VARIABLE))
        steps["session"] = time.perf_counter() - t1
    result = anonlab.anonymize(data, job(), output=output, engine=engine)
    total = time.perf_counter() - t1
    steps["search"] = result.search.elapsed_s
    steps["other"] = total - sum(steps.values())
    out.update(
        total_s=total,
        steps_s=steps,
        transformation=result.transformation,
        loss=result.loss,
        suppressed_rows=result.suppressed_rows,
        classes=result.release.verification.classes,
        output_bytes=_size(Path(output)),
        peak_rss_mib=_vmhwm_mib(),
    )
    if session is not None:
        jvm = session._jvm.java.lang.ProcessHandle.current().pid()
        out["jvm_peak_rss_mib"] = _vmhwm_mib(int(jvm))
    return out


def floor_child(data: str, output: str) -> dict[str, Any]:
    """Spark's least work for a release of ``data`` (the ``spark-floor`` engine, see the
    module's docstring), in this fresh process, each step timed."""
    t0 = time.perf_counter()
    from anonlab.engines.spark_engine import spark_session

    t1 = time.perf_counter()
    steps: dict[str, float] = {}

    def step(name: str, action: Any) -> Any:
        t = time.perf_counter()
        value = action()
        steps[name] = time.perf_counter() - t
        return value

    spark = step("session", spark_session)
    qis = list(job()["quasi_identifiers"])
    rows = step("open", lambda: spark.read.parquet(data))
    classes = step("frequency_set", lambda: rows.groupBy(*qis).count().toArrow())
    step("write_release", lambda: rows.write.parquet(Path(output).resolve().as_uri()))
    again = step(
        "release_stats",
        lambda: spark.read.parquet(Path(output).resolve().as_uri()).groupBy(*qis).count().toArrow(),
    )
    jvm = spark._jvm.java.lang.ProcessHandle.current().pid()
    return {
        "engine": "spark-floor",
        "import_s": t1 - t0,
        "total_s": time.perf_counter() - t1,
        "steps_s": steps,
        "classes": classes.num_rows,
        "classes_written": again.num_rows,
        "output_bytes": _size(Path(output)),
        "peak_rss_mib": _vmhwm_mib(),
        "jvm_peak_rss_mib": _vmhwm_mib(int(jvm)),
    }


def _size(path: Path) -> int:
    """The bytes of a file, or of the files in a folder (a Parquet dataset)."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def measure_anonymize(n: int, engine: str, cluster: Any = None) -> dict[str, Any]:
    """Run :func:`anonymize_child` for ``n`` rows in a child process, sampling the memory
    of its process tree. ``spark-dataset`` is the Spark engine writing a Parquet dataset
    folder (an output ending with ``/``) instead of one file; ``spark-cluster`` the Spark
    engine on ``cluster`` (:func:`spark_cluster.standalone`), its master's and workers'
    process trees (the executors) sampled with the child's."""
    data = ensure_data(n)
    output = data.parent / f"release_{label(n)}_{engine}.parquet"
    target = f"{output}/" if engine in ("spark-dataset", "spark-floor") else str(output)
    load = list(os.getloadavg())
    print(f"  {label(n)} rows, {engine} (load {load[0]:.2f}) ...", flush=True)
    real = {"spark-dataset": "spark", "spark-cluster": "spark"}.get(engine, engine)
    cmd = [sys.executable, __file__, "--child-anonymize", str(data), real, target]
    env = None
    roots: list[int] = []
    if engine == "spark-cluster":
        env = {**cluster.env, CLUSTER_VARIABLE: cluster.url}
        roots = [p.pid for p in cluster.processes]
    before = sum(tree_usage(r)[1] for r in roots)  # the cluster's CPU time so far
    t, busy = time.perf_counter(), machine_busy_s()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peak, cpu = [0], [0.0]
    at_peak: dict[str, int] = {}

    def usage() -> tuple[int, float, dict[str, int]]:
        rss, used, each = tree_usage(proc.pid)
        for root in roots:
            more = tree_usage(root)
            rss, used = rss + more[0], used + more[1]
            each.update(more[2])
        return rss, used - before, each

    def sample() -> None:
        while proc.poll() is None:
            rss, used, each = usage()
            if rss > peak[0]:
                peak[0] = rss
                at_peak.clear()
                at_peak.update(each)
            cpu[0] = max(cpu[0], used)
            time.sleep(SAMPLE_S)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = proc.communicate()
    sampler.join()
    wall = time.perf_counter() - t
    busy = machine_busy_s() - busy
    if output.is_dir():
        shutil.rmtree(output)
    output.unlink(missing_ok=True)
    if proc.returncode != 0:
        return {"rows": n, "engine": engine, "error": stderr.strip().splitlines()[-3:]}
    doc: dict[str, Any] = json.loads(stdout.strip().splitlines()[-1])
    doc.update(
        engine=engine,
        rows=n,
        process_wall_s=wall,
        peak_tree_rss_mib=peak[0] / 2**20,
        # the processes of the tree at its peak (MiB each)
        peak_tree_processes={k: round(v / 2**20) for k, v in at_peak.items()},
        load_avg_1_5_15_before=load,
        # the run's own CPU time (sampled: up to SAMPLE_S short) and the machine's busy time
        # beyond it (other processes on the shared machine, in cores on average)
        tree_cpu_s=cpu[0],
        others_cores=max(busy - cpu[0], 0.0) / wall,
    )
    return doc


def main_anonymize(sizes: list[int], engines: list[str], repeat: int, name: str) -> None:
    """Anonymize each size on each engine ``repeat`` times (the engines in turn, so that
    both meet the same conditions); print every run, the medians, Spark's time over
    DuckDB's and the slopes; write ``benchmarks/results/<name>.json``."""
    runs = []
    masters = {"spark": "local[2]", "spark-dataset": "local[2]", "spark-floor": "local[2]"}
    with contextlib.ExitStack() as stack:
        cluster = None
        if "spark-cluster" in engines:
            import tempfile

            from spark_cluster import standalone

            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-spark-")))
            print(f"  starting a standalone cluster ({CLUSTER}) ...", flush=True)
            cluster = stack.enter_context(standalone(folder, **CLUSTER))  # type: ignore[arg-type]
            masters["spark-cluster"] = f"{cluster.url}: {CLUSTER}"
        for n in sizes:
            for i in range(repeat):
                runs.extend(_measure_in_turn(n, engines, cluster, i))
    _report(sizes, engines, repeat, name, runs, masters)


def _measure_in_turn(n: int, engines: list[str], cluster: Any, i: int) -> list[dict[str, Any]]:
    """One run of each engine on ``n`` rows, each Spark run's time over DuckDB's beside."""
    pair = [measure_anonymize(n, e, cluster) | {"repeat": i} for e in engines]
    base = next((r for r in pair if r["engine"] == "duckdb" and "total_s" in r), None)
    for r in pair:  # Spark over the DuckDB run just before it
        if base is not None and r is not base and "total_s" in r:
            r["ratio_to_duckdb"] = r["total_s"] / base["total_s"]
    return pair


def _report(
    sizes: list[int],
    engines: list[str],
    repeat: int,
    name: str,
    runs: list[dict[str, Any]],
    masters: dict[str, str],
) -> None:
    """Print every run, the medians, Spark's time over DuckDB's and the slopes; write the
    JSON."""
    table = []
    for r in runs:
        if "total_s" not in r:
            table.append([label(r["rows"]), r["engine"], "error", *[""] * 6, str(r["error"])])
            continue
        ratio = r.get("ratio_to_duckdb")
        table.append(
            [
                label(r["rows"]),
                r["engine"],
                f"{r['total_s']:.1f}",
                f"{r['total_s'] / (r['rows'] / 1e6):.2f}",
                "" if ratio is None else f"{ratio:.2f}",
                f"{r['peak_tree_rss_mib']:,.0f}",
                f"{r['tree_cpu_s']:.1f}",
                f"{r['load_avg_1_5_15_before'][0]:.2f}",
                f"{r['others_cores']:.2f}",
                "",
            ]
        )
    common.print_table(
        ["rows", "engine", "anonymize s", "s per M rows", "x DuckDB", "peak tree MiB", "CPU s",
         "load before", "others (cores)", "note"],
        table,
        title="anonymize (read, search, verify, write, re-check): 9 QIs, k = 5, 5 % suppression",
    )  # fmt: skip
    done = [r for r in runs if "total_s" in r]
    steps = sorted({k for r in done for k in r["steps_s"]})
    common.print_table(
        ["rows", "engine", *steps],
        [[label(r["rows"]), r["engine"], *[f"{r['steps_s'].get(k, 0.0):.1f}" for k in steps]]
         for r in done],
        title="steps (s): open the engine, frequency set, identifying-column check "
        "(distinct_counts), write, re-check (release_stats)",
    )  # fmt: skip
    summary: dict[str, dict[str, Any]] = {}
    for n in sizes:
        for engine in engines:
            mine = [r for r in done if r["rows"] == n and r["engine"] == engine]
            if mine:
                summary.setdefault(label(n), {})[engine] = {
                    "median_s": statistics.median(r["total_s"] for r in mine),
                    "min_s": min(r["total_s"] for r in mine),
                    "peak_tree_rss_mib": max(r["peak_tree_rss_mib"] for r in mine),
                    "runs": len(mine),
                }
        both = summary.get(label(n), {})
        for spark in ("spark", "spark-dataset", "spark-floor", "spark-cluster"):
            if spark in both and "duckdb" in both:
                both[spark]["ratio_of_medians"] = (
                    both[spark]["median_s"] / both["duckdb"]["median_s"]
                )
    slopes = {}
    for engine in engines:
        points = [(parse_size(k), v[engine]["median_s"]) for k, v in summary.items() if engine in v]
        fit = slope(points)
        if fit is not None:
            slopes[engine] = fit
            print(
                f"{engine}: {fit['seconds_per_million_rows']:.2f} s per million rows "
                f"(intercept {fit['intercept_s']:.1f} s, r^2 = {fit['r2']:.4f}; medians)"
            )
    goals = {}
    for size, both in summary.items():
        for which in ("spark", "spark-dataset"):
            spark = both.get(which)
            if spark is None:
                continue
            if "ratio_of_medians" in spark and parse_size(size) >= GOAL_RATIO_FROM:
                goals[f"{which}_{size}_ratio"] = common.goal(
                    spark["ratio_of_medians"], GOAL_RATIO, inclusive=True
                )
            goals[f"{which}_{size}_tree_rss"] = common.goal(
                spark["peak_tree_rss_mib"], GOAL_TREE_MIB
            )
    common.print_goals(goals, digits=2)
    answers = {
        label(n): len(
            {
                json.dumps([r[k] for k in ("transformation", "suppressed_rows", "classes")])
                for r in done
                if r["rows"] == n and r["engine"] != "spark-floor"
            }
        )
        <= 1
        for n in sizes
    }
    if not all(answers.values()):
        print(f"engines disagree: {answers}")
    path = common.write_results(
        name,
        {
            "job": {**job(), "quasi_identifiers": list(job()["quasi_identifiers"])},
            "spark_master": {e: masters[e] for e in engines if e in masters},
            "repeat": repeat,
            "runs": runs,
            "summary": summary,
            "slopes": slopes,
            "goals": goals,
            "engines_agree": answers,
        },
    )
    print(f"\nwrote {path}")


def main() -> None:
    """Run every engine in a child process, print a table and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1M", help="diagnosis: rows of the data")
    parser.add_argument("--engines", help="default numpy,duckdb,spark (--anonymize: duckdb,spark)")
    parser.add_argument("--anonymize", action="store_true", help="anonymize at scale instead")
    parser.add_argument("--sizes", default="1M,10M,100M", help="--anonymize: rows per run")
    parser.add_argument("--repeat", type=int, default=1, help="--anonymize: runs per size")
    parser.add_argument("--name", default="spark_scale", help="--anonymize: results file name")
    parser.add_argument("--child", nargs=2, metavar=("DATA", "ENGINE"), help=argparse.SUPPRESS)
    parser.add_argument("--child-anonymize", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        sys.stdout.write(json.dumps(child(*args.child)) + "\n")
        return
    if args.child_anonymize:
        data, engine, output = args.child_anonymize
        if engine == "spark-floor":
            sys.stdout.write(json.dumps(floor_child(data, output.rstrip("/"))) + "\n")
        else:
            sys.stdout.write(json.dumps(anonymize_child(data, engine, output)) + "\n")
        return
    if args.anonymize:
        main_anonymize(
            [parse_size(x) for x in args.sizes.split(",") if x.strip()],
            [e.strip() for e in (args.engines or "duckdb,spark").split(",") if e.strip()],
            max(1, args.repeat),
            args.name,
        )
        return
    n = parse_size(args.rows)
    data = ensure_data(n)
    results = []
    for engine in [e.strip() for e in (args.engines or "numpy,duckdb,spark").split(",") if e]:
        t = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, __file__, "--child", str(data), engine],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            results.append({"engine": engine, "error": proc.stderr.strip().splitlines()[-1:]})
            continue
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        res["process_s"] = time.perf_counter() - t
        results.append(res)
    rows = [
        [
            r["engine"],
            r.get("session_s", 0.0),
            r.get("open_s"),
            r.get("class_stats_s"),
            r.get("q9_s"),
            r.get("q4_s"),
            r.get("peak_rss_mib"),
            r.get("jvm_peak_rss_mib", ""),
        ]
        for r in results
        if "error" not in r
    ]
    common.print_table(
        ["engine", "session s", "open s", "class_stats s", "Q9 s", "Q4 s", "RSS MiB", "JVM MiB"],
        rows,
        title=f"{label(n)} rows, 8 quasi-identifiers",
    )
    answers = {json.dumps(r["q9"], sort_keys=True) for r in results if "q9" in r}
    payload = {
        "rows": n,
        "data": str(data),
        "quasi_identifiers": QIS,
        "sensitive": SENSITIVE,
        "same_q9_answer": len(answers) == 1,
        "results": results,
        "machine": common.machine_info(),
    }
    path = common.write_results("spark", payload)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
