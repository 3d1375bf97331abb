"""The Spark engine on a real standalone cluster: a master and two workers, each its own
process on 127.0.0.1, started with the ``spark-class`` script that pyspark ships (issue 56,
item 3). ``diagnose``, ``anonymize`` (a full-domain job and a job anonymized block by block)
and ``check`` (the job's models on the table) run with ``--spark-master spark://127.0.0.1:PORT``, each command a driver of its
own whose executors run on the workers, and their answers and releases equal numpy's (the
block-by-block release: DuckDB's, the other engine that cuts blocks, byte for byte).

The cluster is ``benchmarks/spark_cluster.py``'s, the one ``bench_spark.py`` measures on.
Skipped, with the reason, without pyspark or Java 17+. Every test here is ``slow`` (the
cluster starts in about 20 s and each command starts a Spark application).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from spark_cluster import Cluster, ClusterUnavailable, standalone  # noqa: E402

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


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    try:
        with standalone(tmp_path_factory.mktemp("spark-cluster")) as running:
            yield running
    except ClusterUnavailable as why:
        pytest.skip(str(why))


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
