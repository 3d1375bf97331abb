"""No raw data left behind (issue 51, item 3): ``anonlab anonymize`` killed with SIGKILL and
SIGTERM at several points, on DuckDB (the whole table, and block by block) and on Spark.

DuckDB runs four times, killed (SIGTERM then SIGKILL at each of two points), Spark twice
(SIGKILL at one point, SIGTERM at another), then each once to the end, all with ``TMPDIR`` set to a folder of the test's own, so every temporary path
shows:

* SIGKILL leaves the killed process's temporary paths (named after it, ``0700`` folders and
  ``0600`` files) and nothing else;
* SIGTERM leaves nothing at all (not even the stale paths of the run before, which it
  removes when it starts) and exits with 143 and one line;
* the last run completes and leaves nothing but its output (its mode the umask's).
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from anonlab.api import adult_path

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
HIERARCHIES = ROOT / "examples" / "hierarchies"
QIS = ("age", "workclass", "education", "marital-status", "race", "sex")
COPIES = 8  # Adult's rows 8 times (260,488 rows): each step of a run lasts long enough
#: A temporary path's name as the README gives it: STEM.anonlab-tmp.HOST.PID.RANDOM
BOTH = (signal.SIGTERM, signal.SIGKILL)
NAME = re.compile(r"\.anonlab-tmp\.(?P<host>.+)\.(?P<pid>\d+)\.[0-9a-f]{8}$")


def owner(name: str) -> tuple[str, int] | None:
    """The host and process a temporary path's name carries (None: not anonlab's)."""
    m = NAME.search(name)
    return None if m is None else (m["host"], int(m["pid"]))


def _job(folder: Path, name: str, algorithm: str) -> Path:
    lines = ['separator: ","', 'na_values: ["?"]', "quasi_identifiers:"]
    lines += [f"  {q}: {{hierarchy: {HIERARCHIES / f'adult_{q}.csv'}}}" for q in QIS]
    lines.append("sensitive: [income]")
    # the columns that would identify people (anonymize refuses to release them undeclared)
    lines.append("identifiers: [fnlwgt, education-num, capital-gain, capital-loss, hours-per-week]")
    if algorithm == "progressive":  # (alpha,k) local recoding, block by block
        lines += [
            "models:",
            '  - alpha_k_anonymity: {attribute: income, alpha: 0.6, k: 5, values: ">50K",'
            " refined: false}",
            "metric: distortion",
            "algorithm: progressive",
        ]
    else:
        lines += ["models:", "  - k_anonymity: {k: 5}", "suppression: 0.05", "metric: loss"]
        lines.append("algorithm: optimal")
    path = folder / name
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("inputs")
    with gzip.open(adult_path(), "rt", newline="") as fh:
        header, *rows = fh.read().splitlines(keepends=True)
    (folder / "adult.csv").write_text(header + "".join(rows))
    (folder / "big.csv").write_text(header + "".join(rows) * COPIES)
    return {
        "adult": folder / "adult.csv",
        "big": folder / "big.csv",
        "optimal": _job(folder, "optimal.yaml", "optimal"),
        "progressive": _job(folder, "progressive.yaml", "progressive"),
    }


class Run:
    """One ``anonlab anonymize`` in a session of its own, TMPDIR the test's folder."""

    def __init__(self, args: list[str], tmp: Path, out: Path) -> None:
        self.tmp, self.out = tmp, out
        self.before = set(self._all())
        env = dict(os.environ, TMPDIR=str(tmp))
        self.log = tmp.parent / "stderr.txt"  # (a file: a full pipe would stop the run)
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "anonlab", "anonymize", *args],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,  # (its Java child, if any, in its group)
            )

    def _all(self) -> Iterator[Path]:
        for folder in (self.tmp, self.out):
            yield from folder.rglob("*")

    def mine(self, folder: Path) -> Iterator[Path]:
        """The paths in ``folder`` (at any depth) that were not there when the run started."""
        return (p for p in folder.rglob("*") if p not in self.before)

    def kill_when(self, ready: Callable[[Run], bool], sig: int, what: str) -> str:
        """Send ``sig`` once ``ready(self)`` holds; wait for the run (and its Java child)
        to end; return its error output."""
        deadline = time.monotonic() + 600
        while not ready(self):
            assert self.proc.poll() is None, f"the run ended before {what}: {self.stderr()}"
            assert time.monotonic() < deadline, f"never {what}"
            time.sleep(0.01)
        os.kill(self.proc.pid, sig)
        self.proc.wait(timeout=120)
        self.wait_group()
        return self.stderr()

    def wait_group(self) -> None:
        """Wait until no process of the run's session is left (Spark's JVM ends when the
        driver's pipe closes); kill what remains after a minute."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                os.killpg(self.proc.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
        os.killpg(self.proc.pid, signal.SIGKILL)

    def stderr(self) -> str:
        return self.log.read_text()


def _listing(*folders: Path) -> list[str]:
    return sorted(str(p.relative_to(f.parent)) for f in folders for p in f.rglob("*"))


def _check_killed(run: Run, tmp: Path, out: Path) -> None:
    """After SIGKILL: the run's own temporary paths are left, private, and nothing else of
    anonlab's (the stale paths of the run before were removed when it started)."""
    left = [p for f in (tmp, out) for p in f.iterdir()]
    assert left, "SIGKILL left nothing: the test killed no run at work"
    for path in left:  # every one the killed run's, private; what engines wrote: inside
        who = owner(path.name)
        assert who is not None and who[1] == run.proc.pid, (
            f"{path.name} is not a temporary path of the killed run {run.proc.pid}: "
            f"{_listing(tmp, out)}"
        )
        assert path.lstat().st_mode & 0o777 == (0o700 if path.is_dir() else 0o600), path


def _check_terminated(err: str, run: Run, tmp: Path, out: Path) -> None:
    left = _listing(tmp, out)
    assert left == [], f"SIGTERM (exit status {run.proc.returncode}) left {left}"
    assert run.proc.returncode == 128 + signal.SIGTERM, err
    assert "stopped by SIGTERM" in err and "its temporary files were removed." in err, err


def _writing(out: Path) -> Callable[[Run], bool]:
    """The release is being written: the run's temporary file beside the output has bytes."""

    def ready(run: Run) -> bool:
        try:
            return any(p.is_file() and p.stat().st_size > 0 for p in run.mine(out))
        except FileNotFoundError:  # (a file removed while it was looked at)
            return False

    return ready


def _holding(tmp: Path, name: str) -> Callable[[Run], bool]:
    """The run's temporary folder holds a file named ``name`` (a glob pattern)."""

    def ready(run: Run) -> bool:
        try:
            return any(p.match(name) for p in run.mine(tmp))
        except FileNotFoundError:  # (a file removed while it was looked at)
            return False

    return ready


Point = tuple[str, Callable[["Run"], bool]]


def _kill_again_and_again(
    args: list[str], tmp: Path, out: Path, kills: list[tuple[Point, int]]
) -> None:
    """Run and kill at each point with its signal, then run to the end: each run after a
    SIGKILL removes what that left, a SIGTERM run leaves nothing at all (the stale paths
    before it included)."""
    for (what, ready), sig in kills:
        run = Run(args, tmp, out)
        err = run.kill_when(ready, sig, what)
        if sig == signal.SIGTERM:
            _check_terminated(err, run, tmp, out)
        else:
            _check_killed(run, tmp, out)
    done = Run(args, tmp, out)
    assert done.proc.wait(timeout=900) == 0, done.stderr()
    done.wait_group()
    assert _listing(tmp, out) == [f"out/{Path(args[args.index('--output') + 1]).name}"]
    mask = os.umask(0o022)
    os.umask(mask)
    assert next(out.iterdir()).stat().st_mode & 0o777 == 0o666 & ~mask  # the umask's


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    tmp, out = tmp_path / "tmp", tmp_path / "out"
    tmp.mkdir()
    out.mkdir()
    return tmp, out


def test_duckdb_whole_table(inputs, folders):
    tmp, out = folders
    args = [str(inputs["big"]), "--job", str(inputs["optimal"]), "--output", str(out / "r.csv")]
    args += ["--engine", "duckdb"]
    read = ("the CSV was read into the temporary folder", _holding(tmp, "source.parquet"))
    write = ("the release was written", _writing(out))
    _kill_again_and_again(args, tmp, out, [(p, s) for p in (read, write) for s in BOTH])


def test_duckdb_block_by_block(inputs, folders):
    tmp, out = folders
    args = [str(inputs["big"]), "--job", str(inputs["progressive"])]
    args += ["--output", str(out / "r.parquet"), "--engine", "duckdb", "--block-rows", "20000"]
    staged = ("a block's labels were staged", _holding(tmp, "block_000001.parquet"))
    write = ("the release was written", _writing(out))
    _kill_again_and_again(args, tmp, out, [(p, s) for p in (staged, write) for s in BOTH])


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


def test_spark_block_by_block(inputs, folders):
    pytest.importorskip("pyspark", reason="the Spark engine needs pyspark (extra 'spark')")
    if _java() is None:
        pytest.skip("the Spark engine needs Java 17+: no JAVA_HOME, no java on PATH")
    tmp, out = folders
    args = [str(inputs["adult"]), "--job", str(inputs["progressive"])]
    args += ["--output", str(out / "r.csv"), "--engine", "spark", "--block-rows", "10000"]

    def parts(run: Run) -> bool:  # Spark writes the release's parts beside the output
        try:
            return any(p.is_dir() for p in run.mine(out))
        except FileNotFoundError:
            return False

    # (a Spark run lasts about a minute here: one signal per point; SIGTERM while Spark's
    # executors write into the folder that the stopping driver removes)
    sorted_rows = ("Spark sorted the rows into blocks", _holding(tmp, "sorted-*/part-*"))
    written = ("Spark writes the release's parts", parts)
    _kill_again_and_again(
        args, tmp, out, [(sorted_rows, signal.SIGKILL), (written, signal.SIGTERM)]
    )
