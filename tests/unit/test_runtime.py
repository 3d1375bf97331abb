"""Trust what it says (issue 51): errors name the file's row on every engine, a Spark master
that cannot work is refused in seconds, compiled kernels are cached and their first
compilation announced, and options that would do nothing are refused before any work."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from anonlab.cli import app
from anonlab.exceptions import DataFormatError, HierarchyError, InputError, ParameterError
from anonlab.jobs import anonymize, validate_job
from anonlab.jobs import engines as job_engines

ROOT = Path(__file__).resolve().parents[2]
ADULT = ROOT / "src" / "anonlab" / "datasets" / "adult.csv.gz"
EXAMPLES = ROOT / "examples"


@pytest.fixture(params=["numpy", "duckdb", "spark"])
def engine(request) -> str:
    """Each engine's name (Spark's shared session started, or the test skipped)."""
    if request.param == "spark":
        request.getfixturevalue("spark")
    return str(request.param)


# ------------------------------------------------------------- rows named alike
def _files(tmp_path: Path, *, age23: str = "22", limit31: str = "0.5", ragged18: bool = False):
    """A CSV of 40 rows (age, sex, dis, limit), its hierarchies and three jobs. Row 23
    holds ``age23``, row 31 the limit ``limit31``; row 18 has a fifth field if ``ragged18``.
    The rows are not in the order of their quasi-identifiers, so that a position in the
    sorted table, or among the distinct combinations, is not the row of the file."""
    lines = ["age,sex,dis,limit"]
    for i in range(1, 41):
        age = age23 if i == 23 else str(20 + (i * 7) % 5)
        row = [age, "MF"[i % 2], "abc"[i % 3], limit31 if i == 31 else "0.5"]
        lines.append(",".join(row) + (",extra" if ragged18 and i == 18 else ""))
    data = tmp_path / "data.csv"
    data.write_text("\n".join(lines) + "\n")
    (tmp_path / "age.csv").write_text("".join(f"{a};20-24;*\n" for a in range(20, 25)))
    (tmp_path / "sex.csv").write_text("M;*\nF;*\n")
    (tmp_path / "dis.csv").write_text("a;ab;*\nb;ab;*\nc;c;*\n")
    qis = {"age": {"hierarchy": "age.csv"}, "sex": {"hierarchy": "sex.csv"}}
    jobs = {
        "optimal": {"quasi_identifiers": qis, "models": [{"k_anonymity": {"k": 2}}]},
        "progressive": {
            "quasi_identifiers": qis,
            "models": [{"k_anonymity": {"k": 2}}],
            "algorithm": "progressive",
        },
        "personalized": {
            "quasi_identifiers": qis,
            "sensitive": ["dis"],
            "models": [{"personalized_leakage": {"attribute": "dis", "hierarchy": "dis.csv"}}],
            "personalized": {"limit_column": "limit"},
            "algorithm": "personalized",
        },
    }
    paths = {}
    for name, spec in jobs.items():
        paths[name] = tmp_path / f"{name}.yaml"
        paths[name].write_text(yaml.safe_dump(spec))
    return data, paths


@pytest.mark.parametrize("algorithm", ["optimal", "progressive"])
def test_a_value_missing_from_its_hierarchy_names_its_row_on_every_engine(
    tmp_path, engine, algorithm
):
    data, jobs = _files(tmp_path, age23="99")
    out = tmp_path / "out.csv"
    words = r"Value '99' of attribute 'age' is not in its hierarchy file '.*age.csv' \(row 23\)\."
    with pytest.raises(HierarchyError, match=words):
        anonymize(data, jobs[algorithm], output=out, engine=engine)
    assert not out.exists()


def test_a_bad_leakage_limit_names_its_row_on_every_engine(tmp_path, engine):
    """Out of core the limits were judged among the distinct combinations (DuckDB said row
    11, Spark row 21) and in memory the row was counted from 0 (row 30)."""
    data, jobs = _files(tmp_path, limit31="1.5")
    out = tmp_path / "out.csv"
    words = r"Row 31 of limit column 'limit' holds 1.5: a leakage limit is a probability"
    with pytest.raises(ParameterError, match=words):
        anonymize(data, jobs["personalized"], output=out, engine=engine)
    assert not out.exists()


def test_a_ragged_row_names_its_row_and_line_on_every_engine(tmp_path, engine):
    data, jobs = _files(tmp_path, ragged18=True)
    out = tmp_path / "out.csv"
    words = r"Cannot parse CSV file .*data.csv': row 18 \(line 19\) has 5 fields instead of 4\."
    with pytest.raises(DataFormatError, match=words):
        anonymize(data, jobs["optimal"], output=out, engine=engine)
    assert not out.exists()


def test_a_ragged_row_spanning_lines_names_the_line_it_ends_on(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text('a,b\n"x\ny",1\n2,3,4\n')
    res = CliRunner().invoke(app, ["diagnose", str(data), "--qi", "a", "--engine", "duckdb"])
    assert res.exit_code == 2
    assert "row 2 (line 4) has 3 fields instead of 2." in res.stderr


# ------------------------------------------------------------------ Spark master
def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_malformed_spark_master_is_named_as_such():
    pytest.importorskip("pyspark")
    from anonlab.engines.spark_engine.engine import check_master

    for bad in ("bogus://x", "spark://127.0.0.1", "spark:/h:7077", "local[0]", "k8s://", ""):
        with pytest.raises(ParameterError, match="is not a master URL: give spark://HOST:PORT"):
            check_master(bad)
    for good in ("local", "local[4]", "local[*]", "local[2,3]", "yarn"):
        check_master(good)


def test_an_unreachable_spark_master_is_reported_without_starting_spark():
    pytest.importorskip("pyspark")
    from anonlab.engines.spark_engine.engine import check_master

    port = _closed_port()
    with pytest.raises(InputError, match=f"127.0.0.1 port {port}: nothing listens there"):
        check_master(f"spark://127.0.0.1:{port}")
    with pytest.raises(InputError, match="'no-such-host.invalid' is not a host"):
        check_master("spark://no-such-host.invalid:7077")


@pytest.mark.parametrize(
    ("master", "words"),
    [
        ("spark://127.0.0.1:{port}", "Cannot reach the Spark master 'spark://127.0.0.1:{port}'"),
        ("bogus://x", "The Spark master 'bogus://x' is not a master URL"),
    ],
)
def test_the_cli_says_one_line_of_a_bad_spark_master(master, words):
    """It printed Java's stack and "needs Java 17" for a malformed master, and a Python
    traceback after 90 s for one that does not answer."""
    pytest.importorskip("pyspark")
    port = _closed_port()
    master, words = master.format(port=port), words.format(port=port)
    args = ["diagnose", str(ADULT), "--qi", "age,sex", "--engine", "spark"]
    res = CliRunner().invoke(app, [*args, "--spark-master", master])
    assert res.exit_code == 2
    assert words in res.stderr and "Java" not in res.stderr
    assert "Traceback" not in res.output and len(res.stderr.strip().splitlines()) == 1


# ------------------------------------------------------- options that do nothing
def _job(algorithm: str, **more) -> dict:
    return {
        "quasi_identifiers": {
            "age": {"hierarchy": str(EXAMPLES / "hierarchies" / "adult_age.csv")},
            "sex": {"hierarchy": str(EXAMPLES / "hierarchies" / "adult_sex.csv")},
        },
        # the columns that would identify people on Adult (anonymize refuses them undeclared)
        "identifiers": ["fnlwgt", "capital-gain", "hours-per-week"],
        "models": [{"k_anonymity": {"k": 5}}],
        "algorithm": algorithm,
        **more,
    }


@pytest.mark.parametrize("engine", ["numpy", "duckdb", "auto"])
def test_block_rows_with_a_full_domain_algorithm_is_refused(tmp_path, engine):
    out = tmp_path / "out.csv"
    for algorithm in ("optimal", "privacyfrost2"):
        with pytest.raises(ParameterError, match=f"would do nothing: '{algorithm}' never cuts"):
            anonymize(ADULT, _job(algorithm), output=out, engine=engine, block_rows=1000)
    assert not out.exists()


def test_block_rows_in_memory_is_refused_and_says_who_chose_it(tmp_path):
    out = tmp_path / "out.csv"
    with pytest.raises(ParameterError, match=r"the numpy engine anonymizes the table whole"):
        anonymize(ADULT, _job("progressive"), output=out, engine="numpy", block_rows=1000)
    with pytest.raises(ParameterError, match=r"numpy engine \(chosen by engine auto: the table"):
        anonymize(ADULT, _job("progressive"), output=out, block_rows=1000)
    assert not out.exists()


@pytest.mark.parametrize("algorithm", ["murakami_uno", "wong_nh"])
@pytest.mark.parametrize(
    ("more", "words"),
    [
        ({"suppression": 0.02}, r"'suppression: 0.02' would do nothing"),
        ({"output": {"suppressed": "mask"}}, r"'output: \{suppressed: mask\}' would do nothing"),
    ],
)
def test_suppression_with_a_cell_cover_is_refused(tmp_path, algorithm, more, words):
    more = {"metric": "gcp", **more}
    out = tmp_path / "out.csv"
    with pytest.raises(ParameterError, match=f"{words}: '{algorithm}' suppresses no row"):
        anonymize(ADULT, _job(algorithm, **more), output=out)
    with pytest.raises(ParameterError, match=words):
        validate_job(ADULT, _job(algorithm, **more))
    assert not out.exists()
    fine = {"suppression": 0.0, "output": {"suppressed": "remove"}, "metric": "gcp"}
    assert anonymize(ADULT, _job(algorithm, **fine)).suppressed_rows == 0


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
@pytest.mark.parametrize(
    ("job", "words"),
    [
        (EXAMPLES / "adult_local_recoding.yaml", "cannot be met partition by partition"),
        (EXAMPLES / "adult_personalized.yaml", None),
        (
            _job("privacyfrost2", personalized={"default_limit": 0.5}),
            "Personalized privacy judges each record against its own limit",
        ),
    ],
)
def test_out_of_core_refuses_what_it_cannot_run_before_the_engine_opens(
    monkeypatch, tmp_path, engine, job, words
):
    """The bundled (alpha,k) example was refused by Spark after 70 s of work."""

    def opened(*args, **kwargs):
        raise AssertionError("the engine was opened")

    monkeypatch.setattr(job_engines, "open_engine", opened)
    out = tmp_path / "out.csv"
    if words is None:  # personalized runs out of core, block by block: the engine opens
        with pytest.raises(AssertionError, match="the engine was opened"):
            anonymize(ADULT, job, output=out, engine=engine)
        return
    with pytest.raises(ParameterError, match=words):
        anonymize(ADULT, job, output=out, engine=engine)
    assert not out.exists()


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
def test_blocks_smaller_than_k_are_refused_before_the_engine_opens(monkeypatch, engine):
    def opened(*args, **kwargs):
        raise AssertionError("the engine was opened")

    monkeypatch.setattr(job_engines, "open_engine", opened)
    with pytest.raises(ParameterError, match="must be at least the models' k = 5"):
        anonymize(ADULT, _job("wong_nh", metric="gcp"), engine=engine, block_rows=3)


def test_engine_auto_says_which_engine_it_chose(tmp_path, monkeypatch):
    job = tmp_path / "job.yaml"
    job.write_text(yaml.safe_dump(_job("optimal")))
    out = tmp_path / "out.csv"
    res = CliRunner().invoke(
        app, ["anonymize", str(ADULT), "--job", str(job), "-o", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    assert "note: engine auto chose numpy (in memory): adult.csv.gz needs about" in res.stderr
    assert "a quarter of the memory available" in res.stderr
    res = CliRunner().invoke(app, ["check", str(ADULT), "--job", str(job)])
    assert res.exit_code == 0 and "engine auto chose numpy" in res.stderr
    res = CliRunner().invoke(app, ["check", str(ADULT), "--job", str(job), "--engine", "numpy"])
    assert res.exit_code == 0 and "engine auto" not in res.stderr

    heard = []

    class Listener:
        def __call__(self, advance, total):
            del advance, total

        def note(self, message):
            heard.append(message)

    anonymize(ADULT, _job("optimal"), progress=Listener(), engine="auto")
    assert heard and heard[0].startswith("engine auto chose numpy (in memory)")
    monkeypatch.setenv("ANONLAB_MEMORY_BUDGET", "5M")
    heard.clear()
    anonymize(ADULT, _job("optimal"), progress=Listener(), engine="auto")
    assert heard[0].startswith("engine auto chose duckdb (out of core): adult.csv.gz")
    assert "more than the 5.2 MB a table in memory may take" in heard[0]


# ------------------------------------------------------------ compiled kernels
_KERNEL = """
from pathlib import Path
import numpy as np
import anonlab._compiled
from anonlab._progress import listening
from anonlab.algorithms._lattice._kernels import compiled

class Printer:
    def __call__(self, advance, total): pass
    def note(self, message): print("NOTE", message)

{setup}
out = np.zeros(3, dtype=np.int64)
with listening(Printer()):
    compiled().domain_sizes(
        np.array([[0], [2]], dtype=np.int64), np.array([5, 7], dtype=np.int64),
        np.zeros(1, dtype=np.int64), out,
    )
print(out.tolist())
"""


def _run(code: str, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    environ.update(env, PYTHONPATH=str(ROOT / "src"))
    res = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=environ,
        check=True,
    )
    return res.stdout


@pytest.mark.slow
def test_a_compilation_is_announced_then_the_next_process_loads_it_quietly(tmp_path):
    cache = tmp_path / "numba"
    first = _run(_KERNEL.format(setup=""), NUMBA_CACHE_DIR=str(cache))
    said = first.splitlines()
    assert said[0] == "NOTE compiling anonlab's search kernels (first run only, about 3 s)"
    # when the block that listens ends: how long it took
    assert re.fullmatch(r"NOTE compiled anonlab's search kernels in \d+\.\d s", said[1])
    assert said[2:] == ["[5, 0, 7]"]
    assert list(cache.rglob("*.nbi"))  # the machine code is on disk
    second = _run(_KERNEL.format(setup=""), NUMBA_CACHE_DIR=str(cache))
    assert second.splitlines() == ["[5, 0, 7]"]


@pytest.mark.slow
def test_a_read_only_installation_caches_in_the_users_folder(tmp_path):
    """Under a file nothing can be made, whoever runs it: a read-only site-packages."""
    from anonlab._compiled import cache_folder

    blocked = Path(os.devnull) / "anonlab"
    user = tmp_path / "cache"
    env = {"XDG_CACHE_HOME": str(user), "TMPDIR": str(tmp_path / "tmp")}
    assert cache_folder(blocked, env) == user / "anonlab" / "numba"
    env = {"HOME": str(blocked), "TMPDIR": str(tmp_path / "tmp")}
    assert cache_folder(blocked, env) == tmp_path / "tmp" / f"anonlab-numba-{os.getuid()}"
    assert cache_folder(blocked, {"TMPDIR": str(blocked)}) is None
    assert cache_folder(blocked, {"NUMBA_CACHE_DIR": "/srv/numba"}) == Path("/srv/numba")
    assert cache_folder(tmp_path, {}) == tmp_path / "__pycache__"  # numba's own default

    code = f"""
    from pathlib import Path
    import anonlab._compiled as c
    c._PACKAGE = Path({str(blocked)!r})
    import os
    nb = c.numba()
    print(nb.config.CACHE_DIR, os.environ["NUMBA_CACHE_DIR"])
    """
    folder = user / "anonlab" / "numba"
    out = _run(code, XDG_CACHE_HOME=str(user))
    assert out.split() == [str(folder), str(folder)]
    # nothing writable: the kernels compile all the same, and the note says what to do
    setup = f"anonlab._compiled._PACKAGE = Path({str(blocked)!r})"
    out = _run(_KERNEL.format(setup=setup), HOME=str(blocked), TMPDIR=str(blocked))
    assert "no writable folder keeps them for the next run: set NUMBA_CACHE_DIR" in out
    assert out.splitlines()[-1] == "[5, 0, 7]"


@pytest.mark.slow
def test_another_process_compiles_settle_into_the_cache_and_can_be_stopped(tmp_path):
    """PrivacyFrost2's first run: a second process compiles settle while the first compiles
    find; the machine code it leaves is found, and no second one starts."""
    code = """
    from anonlab.algorithms.privacyfrost2 import _kernels as k
    stopped = k.settle_elsewhere("int16")
    stopped.stop()
    print(stopped.process.returncode != 0)
    job = k.settle_elsewhere("int8")
    job.wait()
    print(job.process.returncode, k.compiled(k.kernels().settle, k._settle_arguments("int8")))
    print(k.settle_elsewhere("int8"))
    """
    out = _run(code, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    assert out.split() == ["True", "0", "True", "None"]


def test_nothing_is_compiled_elsewhere_when_numba_compiles_nothing():
    """With numba's compilation turned off (NUMBA_DISABLE_JIT, for debugging a kernel in
    Python) the kernels are plain functions: no second process, no error."""
    code = """
    from anonlab.algorithms.privacyfrost2 import _kernels as k
    print(k.settle_elsewhere("int8"))
    """
    assert _run(code, NUMBA_DISABLE_JIT="1").split() == ["None"]


def test_a_kernel_of_no_module_compiles_beside_the_announcer():
    """numba kernels a user makes with ``exec`` have no module (``__module__`` None): while
    a command listens for anonlab's compile notes they compile and say nothing."""
    code = """
    import numpy as np
    from anonlab._compiled import numba
    from anonlab._progress import listening

    class Printer:
        def __call__(self, advance, total): pass
        def note(self, message): print("NOTE", message)

    space = {}
    exec("def twice(x):\\n    return 2 * x", space)
    with listening(Printer()):
        print(numba().njit(space["twice"])(21))
    """
    assert _run(code).split() == ["42"]
