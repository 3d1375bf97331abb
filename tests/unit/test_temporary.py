"""anonlab's temporary paths (issue 51, item 3): one registry, private modes, removed by
their owner, at exit, on a stop signal, and by the next run when their process was killed.

The engines' runs killed with SIGKILL and SIGTERM: tests/cli/test_no_leftovers.py.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from anonlab.io import temporary
from anonlab.io.atomic import atomic_folder, atomic_write

HOST = socket.gethostname()


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def _mode(path: Path) -> int:
    return path.lstat().st_mode & 0o777


@pytest.fixture
def open_umask():
    """Run with umask 000, so a mode that is private is so by anonlab's choice."""
    before = os.umask(0)
    yield
    os.umask(before)


def test_paths_are_named_after_their_process_and_private(tmp_path, open_umask):
    folder = temporary.make_folder("anonlab-duckdb", tmp_path)
    file = temporary.make_file(".out.csv", tmp_path)
    for path, mode in ((folder, 0o700), (file, 0o600)):
        assert temporary.owner(path.name) == (HOST, os.getpid())
        assert ".anonlab-tmp." in path.name
        assert _mode(path) == mode
    assert _mode(temporary.private_file(folder / "rows.parquet")) == 0o600
    with temporary.temporary_folder("anonlab-release", tmp_path) as inner:
        assert _mode(inner) == 0o700
    assert not inner.exists()
    temporary.discard(folder)
    temporary.discard(file)
    assert list(tmp_path.iterdir()) == []


def test_owner_reads_only_anonlab_names():
    assert temporary.owner(".r.csv.anonlab-tmp.vm.42.0123abcd") == ("vm", 42)
    # DuckDB's own temporary file beside one of anonlab's, a host name with dots
    assert temporary.owner("tmp_.r.csv.anonlab-tmp.a.b.c.42.0123abcd") == ("a.b.c", 42)
    for name in ("r.csv", "anonlab-duckdb-x1y2", ".r.anonlab-tmp.vm.x.0123abcd",
                 ".r.anonlab-tmp.vm.42.nothex!!", ".r.anonlab-tmp.42.0123abcd"):  # fmt: skip
        assert temporary.owner(name) is None, name


def test_clean_stale_removes_dead_processes_paths_only(tmp_path):
    dead = _dead_pid()
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        stale = {
            tmp_path / f"anonlab-duckdb.anonlab-tmp.{HOST}.{dead}.0123abcd",  # a folder
            tmp_path / f".r.csv.anonlab-tmp.{HOST}.{dead}.0123abcd",  # a partial release
            tmp_path / f"tmp_.r.csv.anonlab-tmp.{HOST}.{dead}.0123abcd",  # DuckDB's, beside it
            tmp_path / f"anonlab-spark.anonlab-tmp.{HOST}.{sleeper.pid}.0123abcd",  # id reused
        }
        kept = {
            tmp_path / f"anonlab-spark.anonlab-tmp.{HOST}.{sleeper.pid}.4567abcd",  # running
            tmp_path / f".r.csv.anonlab-tmp.{HOST}.{os.getpid()}.0123abcd",  # this process
            tmp_path / f".r.csv.anonlab-tmp.otherhost.{dead}.0123abcd",  # another host
            tmp_path / f"anonlab-duckdb-{dead}",  # not an anonlab temporary name
            tmp_path / "data.csv",
        }
        for path in stale | kept:
            if "anonlab-duckdb" in path.name or "spark" in path.name:
                (path / "staged").mkdir(parents=True)
                (path / "staged" / "block_000000.parquet").write_text("rows")
            else:
                path.write_text("rows")
        reused = tmp_path / f"anonlab-spark.anonlab-tmp.{HOST}.{sleeper.pid}.0123abcd"
        os.utime(reused, (1e9, 1e9))  # changed in 2001, long before the sleeper started
        removed = temporary.clean_stale(tmp_path)
        assert set(removed) == stale
        assert set(tmp_path.iterdir()) == kept
    finally:
        sleeper.kill()
        sleeper.wait()


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TMPDIR=str(tmp_path))
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_remove_all_removes_what_this_process_made(tmp_path):
    # (in a process of its own: here it would also remove the paths of open engines and
    # stop a Spark session of other tests)
    res = _python(
        """
        from anonlab.io import temporary
        folder = temporary.make_folder("anonlab-spark")
        file = temporary.make_file(".r.csv")
        parts = temporary.make_folder(".anonlab-spark-parts")
        temporary.discard(parts)
        (parts / "parts").mkdir(parents=True)  # made again by a writer still at work
        calls = []
        temporary.at_exit(lambda: calls.append(folder.exists()))  # before the paths go
        removed = temporary.remove_all()
        print(folder in removed, file in removed, parts in removed, calls)
        """,
        tmp_path,
    )
    assert res.stdout.split() == ["True", "True", "True", "[True]"], res.stderr
    assert list(tmp_path.iterdir()) == []


def test_paths_left_open_are_removed_when_python_exits(tmp_path):
    res = _python(
        """
        from anonlab.io import temporary
        folder = temporary.make_folder("anonlab-duckdb")
        (folder / "source.parquet").write_text("raw rows")
        temporary.make_file(".r.csv")
        raise SystemExit(3)
        """,
        tmp_path,
    )
    assert res.returncode == 3, res.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_stop_signal_unwinds_and_the_handlers_are_restored(tmp_path):
    res = _python(
        """
        import os, signal, time
        from anonlab.io import temporary
        before = signal.getsignal(signal.SIGTERM)
        with temporary.stop_on_signals() as stop:
            try:
                with temporary.temporary_folder("anonlab-duckdb") as folder:
                    os.kill(os.getpid(), signal.SIGTERM)
                    time.sleep(10)
            except temporary.Stopped as exc:
                print("stopped", exc.signum == signal.SIGTERM, folder.exists())
        print(stop.signum == signal.SIGTERM, signal.getsignal(signal.SIGTERM) is before)
        """,
        tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["stopped", "True", "False", "True", "True"]
    assert list(tmp_path.iterdir()) == []


def test_a_handled_stop_lets_the_process_live_on(tmp_path):
    res = _python(
        """
        import os, signal, time
        from anonlab.io import temporary
        with temporary.stop_on_signals(grace=0.2) as stop:
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
            except temporary.Stopped:
                pass
        time.sleep(1)  # after the block: the stop was handled, no forced exit
        print("alive", stop.signum == signal.SIGTERM)
        """,
        tmp_path,
    )
    assert (res.returncode, res.stdout.split()) == (0, ["alive", "True"]), res.stderr


def test_a_stop_that_does_not_unwind_exits_after_the_grace(tmp_path):
    """Code that swallows the stop (as a library may turn it into its own error) is ended
    after the grace period, its temporary paths removed, with status 128 + signal."""
    res = _python(
        """
        import os, signal, time
        from anonlab.io import temporary
        with temporary.stop_on_signals(grace=0.5):
            folder = temporary.make_folder("anonlab-duckdb")
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)
            except BaseException:
                pass
            time.sleep(30)  # the process does not stop by itself
        print("not reached")
        """,
        tmp_path,
    )
    assert res.returncode == 128 + signal.SIGTERM, res.stderr
    assert "not reached" not in res.stdout
    assert res.stderr == (
        "stopped by SIGTERM (forced after 0.5 s): its temporary files were removed.\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_atomic_writes_are_private_until_renamed(tmp_path, open_umask):
    target = tmp_path / "r.csv"
    with atomic_write(target) as tmp:
        assert tmp.parent == tmp_path and temporary.owner(tmp.name) == (HOST, os.getpid())
        assert _mode(tmp) == 0o600
        tmp.write_text("a\n")
    assert _mode(target) == 0o666  # the umask's (000 here), set before the rename
    with atomic_folder(f"{tmp_path / 'ds'}/") as staged:
        assert _mode(staged.parent) == 0o700
        assert temporary.owner(staged.parent.name) == (HOST, os.getpid())
        staged.mkdir()
        (staged / "part-0.parquet").write_text("x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds", "r.csv"]
