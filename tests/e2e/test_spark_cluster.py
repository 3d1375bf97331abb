"""The Spark engine on a real standalone cluster: a master and two workers, each its own
process on 127.0.0.1, started with the ``spark-class`` script that pyspark ships (issue 56,
item 3). ``diagnose``, ``anonymize`` (a full-domain job and a job anonymized block by block)
and ``check`` (the job's models on the table) run with ``--spark-master spark://127.0.0.1:PORT``, each command a driver of its
own whose executors run on the workers, and their answers and releases equal numpy's (the
block-by-block release: DuckDB's, the other engine that cuts blocks, byte for byte).

Skipped, with the reason, without pyspark or Java 17+. Every test here is ``slow`` (the
cluster starts in about 20 s and each command starts a Spark application).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
ADULT = str(ROOT / "src/anonlab/datasets/adult.csv.gz")
FULL_DOMAIN = str(ROOT / "examples/adult_k5.yaml")


def _blocks_job(folder: Path) -> str:
    """adult_k5.yaml's quasi-identifiers and roles, anonymized by top_down (local recoding),
    which runs block by block out of core."""
    import yaml

    job = yaml.safe_load(Path(FULL_DOMAIN).read_text())
    for spec in job["quasi_identifiers"].values():
        spec["hierarchy"] = str(ROOT / "examples" / spec["hierarchy"])
    job.update(algorithm="top_down", metric="gcp")
    path = folder / "blocks.yaml"
    path.write_text(yaml.safe_dump(job))
    return str(path)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


def _wait(log: Path, pattern: str, proc: subprocess.Popen[bytes], seconds: float = 120) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = re.search(pattern, log.read_text(errors="replace"))
        if found:
            return found.group(0)
        if proc.poll() is not None:
            raise AssertionError(f"{log.name}: the process exited:\n{log.read_text()[-3000:]}")
        time.sleep(0.25)
    raise AssertionError(
        f"{log.name}: no {pattern!r} within {seconds} s:\n{log.read_text()[-3000:]}"
    )


@dataclass
class Cluster:
    """A standalone master's URL, its log, and the environment its drivers run in."""

    url: str
    master_log: Path
    env: dict[str, str]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (extra 'spark')")
    if _java() is None:
        pytest.skip("the Spark engine needs Java 17+: no JAVA_HOME, no java on PATH")
    home = Path(pyspark.__file__).resolve().parent
    folder = tmp_path_factory.mktemp("spark-cluster")
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",  # master, workers and drivers on the loopback only
        # (no PYSPARK_PYTHON: anonlab runs no Python on the executors, only Spark SQL)
        "PYSPARK_PYTHON": "/nonexistent/python",
        "SPARK_WORKER_DIR": str(folder / "work"),
    }
    spark_class = str(home / "bin" / "spark-class")
    port = _free_port()
    procs: list[subprocess.Popen[bytes]] = []

    def start(name: str, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
        log = folder / f"{name}.log"
        with log.open("wb") as fh:  # a file, not a pipe: Spark never waits for a reader
            proc = subprocess.Popen(
                [spark_class, *args], stdout=fh, stderr=subprocess.STDOUT, env=env,
                start_new_session=True,
            )  # fmt: skip
        procs.append(proc)
        return proc, log

    try:
        master, master_log = start(
            "master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
            "--port", str(port), "--webui-port", str(_free_port()),
        )  # fmt: skip
        _wait(master_log, r"I have been elected leader", master)
        url = f"spark://127.0.0.1:{port}"
        worker = ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "1",
                  "--memory", "2g"]  # fmt: skip
        workers = [
            start(
                f"worker{i}",
                *worker,
                "--webui-port",
                str(_free_port()),
                "--work-dir",
                str(folder / f"worker{i}"),
                url,
            )  # fmt: skip
            for i in (1, 2)
        ]
        for proc, log in workers:
            _wait(log, r"Successfully registered with master", proc)
        _wait(master_log, r"(?s)Registering worker.*Registering worker", master)
        yield Cluster(url, master_log, env)
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:  # pragma: no cover - a JVM that will not stop
                os.killpg(proc.pid, signal.SIGKILL)


def _anonlab(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "anonlab", *args], capture_output=True, text=True, env=env,
        timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_diagnose_anonymize_and_check_on_a_two_worker_cluster_equal_numpy(
    cluster: Cluster, tmp_path: Path
) -> None:
    on = ["--engine", "spark", "--spark-master", cluster.url]
    apps_before = cluster.master_log.read_text().count("Registering app")

    ask = ["diagnose", ADULT, "--qi", "age,sex,race,education", "--k", "5", "--json"]
    numpy = json.loads(_anonlab(cluster.env, *ask).stdout)
    spark = json.loads(_anonlab(cluster.env, *ask, *on).stdout)
    assert spark == numpy

    for name, job in (("full-domain", FULL_DOMAIN), ("blocks", _blocks_job(tmp_path))):
        blocks = ["--block-rows", "10000"] if name == "blocks" else []
        mine, theirs = tmp_path / f"{name}-spark.csv", tmp_path / f"{name}-numpy.csv"
        _anonlab(cluster.env, "anonymize", ADULT, "--job", job, "-o", str(theirs), *blocks,
                 *(["--engine", "duckdb"] if blocks else []))  # fmt: skip
        _anonlab(cluster.env, "anonymize", ADULT, "--job", job, "-o", str(mine), *blocks, *on)
        assert mine.read_bytes() == theirs.read_bytes(), name

    # the job's models judged on the table (a release is checked beside its original in
    # memory: numpy's own --release check)
    checked = _anonlab(cluster.env, "check", ADULT, "--job", FULL_DOMAIN, "--json", *on)
    reference = _anonlab(cluster.env, "check", ADULT, "--job", FULL_DOMAIN, "--json")
    assert json.loads(checked.stdout) == json.loads(reference.stdout)

    # every Spark command was an application of the cluster, its executors on both workers
    log = cluster.master_log.read_text()
    assert log.count("Registering app") - apps_before == 4  # diagnose, anonymize x2, check
    assert len(set(re.findall(r"Launching executor \S+ on worker (\S+)", log))) == 2
