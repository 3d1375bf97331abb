"""A Spark standalone cluster on this machine: a master and workers, each its own process on
127.0.0.1, started with the ``spark-class`` script that pyspark ships (no download).

Used by ``bench_spark.py --anonymize --engines ...,spark-cluster`` and by the cluster test
(``tests/e2e/test_spark_cluster.py``)::

    with standalone(folder) as cluster:
        spark_session(master=cluster.url)  # a driver whose executors run on the workers

Drivers must run with ``cluster.env`` (``SPARK_LOCAL_IP=127.0.0.1``, the same
``SPARK_HOME``).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path


class ClusterUnavailable(RuntimeError):
    """pyspark or Java 17+ is missing: no cluster can start here."""


@dataclass
class Cluster:
    """A standalone master's URL, its log, the environment its drivers run in, and the
    processes of the master and the workers (their executors are the workers' children)."""

    url: str
    master_log: Path
    env: dict[str, str]
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    workers: int = 0
    cores: int = 0
    memory: str = ""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def java() -> str | None:
    """The java command (``JAVA_HOME`` first, then PATH), None if there is none."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


def wait_for(log: Path, pattern: str, proc: subprocess.Popen[bytes], seconds: float = 120) -> str:
    """Wait until ``pattern`` appears in ``log``; raise if ``proc`` exits or time runs out."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = re.search(pattern, log.read_text(errors="replace"))
        if found:
            return found.group(0)
        if proc.poll() is not None:
            raise RuntimeError(f"{log.name}: the process exited:\n{log.read_text()[-3000:]}")
        time.sleep(0.25)
    raise RuntimeError(f"{log.name}: no {pattern!r} within {seconds} s:\n{log.read_text()[-3000:]}")


@contextmanager
def standalone(
    folder: Path, *, workers: int = 2, cores: int = 1, memory: str = "2g"
) -> Iterator[Cluster]:
    """Start a master and ``workers`` workers (``cores`` cores and ``memory`` each) and stop
    them on leaving; logs and work folders in ``folder``.

    Raises
    ------
    ClusterUnavailable
        Without pyspark or Java.
    """
    try:
        import pyspark
    except ImportError as exc:
        raise ClusterUnavailable("pyspark is not installed (extra 'spark')") from exc
    if java() is None:
        raise ClusterUnavailable("the Spark engine needs Java 17+: no JAVA_HOME, no java on PATH")
    home = Path(pyspark.__file__).resolve().parent
    folder.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",  # master, workers and drivers on the loopback only
        # (no PYSPARK_PYTHON: anonlab runs no Python on the executors, only Spark SQL)
        "PYSPARK_PYTHON": "/nonexistent/python",
        "SPARK_WORKER_DIR": str(folder / "work"),
    }
    spark_class = str(home / "bin" / "spark-class")
    port = free_port()
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
            "--port", str(port), "--webui-port", str(free_port()),
        )  # fmt: skip
        wait_for(master_log, r"I have been elected leader", master)
        url = f"spark://127.0.0.1:{port}"
        started = [
            start(
                f"worker{i}",
                "org.apache.spark.deploy.worker.Worker",
                "--host",
                "127.0.0.1",
                "--cores",
                str(cores),
                "--memory",
                memory,
                "--webui-port",
                str(free_port()),
                "--work-dir",
                str(folder / f"worker{i}"),
                url,
            )  # fmt: skip
            for i in range(1, workers + 1)
        ]
        for proc, log in started:
            wait_for(log, r"Successfully registered with master", proc)
        wait_for(master_log, "(?s)" + ".*".join(["Registering worker"] * workers), master)
        yield Cluster(url, master_log, env, procs, workers, cores, memory)
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:  # a JVM that will not stop
                os.killpg(proc.pid, signal.SIGKILL)
