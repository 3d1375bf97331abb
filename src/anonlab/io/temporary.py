"""anonlab's temporary files and folders: one registry, private modes, no leftovers.

Every temporary path anonlab makes (an engine's folder of the source's Parquet copy, sorted
blocks, staged labels and spill files; a release being written beside its target; the folder
of Spark's parts) is made here, under a name that says whose it is::

    STEM.anonlab-tmp.HOST.PID.RANDOM

(``HOST`` the machine, ``PID`` the process that made it). A folder is made ``0700`` and a
file ``0600``, so no other user can read the raw rows they may hold, and each path is
registered until it is removed:

* by its owner, in a ``finally`` block or a context manager (:func:`temporary_folder`),
  on success and on every error;
* when Python exits (``atexit``), for a path whose owner was not closed;
* when a stop signal ends a command (:func:`stop_on_signals`, installed by the command
  line only; a library never installs signal handlers behind its caller's back);
* by the next run, when the process was killed outright (``SIGKILL``, a power cut): before
  anonlab makes a temporary path in a folder it removes the *stale* ones there
  (:func:`clean_stale`), those of a process of this host that is gone. A path of a running
  process is never removed, nor one of another host (whose processes cannot be asked).

The module uses the standard library only.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import shutil
import signal
import socket
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType

__all__ = [
    "TAG",
    "Stopped",
    "at_exit",
    "clean_stale",
    "discard",
    "make_file",
    "make_folder",
    "owner",
    "private_file",
    "remove_all",
    "stop_on_signals",
    "temporary_folder",
    "temporary_name",
]

#: The part of every temporary path's name that marks it as anonlab's.
TAG = ".anonlab-tmp."
#: The signals :func:`stop_on_signals` turns into an orderly exit.
STOP_SIGNALS = tuple(
    s for s in (getattr(signal, n, None) for n in ("SIGINT", "SIGTERM", "SIGHUP")) if s is not None
)
#: Seconds a stopped command has to unwind before its temporary paths are removed and the
#: process exits regardless (a second signal does this at once).
STOP_GRACE = 20.0
#: A running process whose id a path carries took that id over from the path's (gone) maker
#: when it started this many seconds after the path last changed: a margin for the clock of
#: a file server that runs behind this host's.
REUSE_MARGIN = 300.0

_lock = threading.RLock()
#: path -> the id of the process that made it (a forked child leaves its parent's alone)
_registry: dict[Path, int] = {}
#: paths removed already, looked at again at exit: a writer that was still running (Spark's
#: executors finishing a job the driver gave up) may have made them again
_removed: dict[Path, int] = {}
#: How many removed paths are remembered (the latest).
_REMEMBER = 4096
#: callbacks run before the paths are removed at exit (e.g. stopping a Spark session that
#: may still write into them)
_before_exit: list[Callable[[], object]] = []


def temporary_name(stem: str) -> str:
    """The name of a new temporary path: ``STEM.anonlab-tmp.HOST.PID.RANDOM``.

    Examples
    --------
    >>> name = temporary_name("anonlab-duckdb")
    >>> name.startswith("anonlab-duckdb.anonlab-tmp.") and owner(name)[1] == os.getpid()
    True
    """
    return f"{stem}{TAG}{socket.gethostname()}.{os.getpid()}.{secrets.token_hex(4)}"


def owner(name: str) -> tuple[str, int] | None:
    """The host and process id a temporary path's name carries, or None if ``name`` is not
    one of anonlab's (also a name a writer derived from one, such as DuckDB's
    ``tmp_.NAME.anonlab-tmp.HOST.PID.RANDOM``).

    Examples
    --------
    >>> owner(".out.csv.anonlab-tmp.vm.4242.deadbeef")
    ('vm', 4242)
    >>> owner("out.csv") is None
    True
    """
    at = name.rfind(TAG)
    if at < 0:
        return None
    parts = name[at + len(TAG) :].rsplit(".", 2)
    if len(parts) != 3 or not parts[0] or not parts[1].isdigit():
        return None
    if len(parts[2]) != 8 or any(c not in "0123456789abcdef" for c in parts[2]):
        return None
    return parts[0], int(parts[1])


def _folder(parent: str | os.PathLike[str] | None) -> Path:
    return Path(tempfile.gettempdir() if parent is None else parent)


def _make(
    stem: str, parent: str | os.PathLike[str] | None, create: Callable[[Path], object]
) -> Path:
    """A new registered path in ``parent`` (stale ones there removed first), made by
    ``create``; registered before it exists, so no signal can leave it unregistered."""
    where = _folder(parent)
    clean_stale(where)
    path = Path(os.path.abspath(where / temporary_name(stem)))
    with _lock:
        _registry[path] = os.getpid()
    try:
        create(path)
    except BaseException:
        discard(path)
        raise
    return path


def _mkdir(path: Path) -> None:
    os.mkdir(path, 0o700)
    os.chmod(path, 0o700)  # (whatever the umask)


def make_folder(stem: str, parent: str | os.PathLike[str] | None = None) -> Path:
    """Make a new folder ``0700`` named :func:`temporary_name` in ``parent`` (default: the
    system's temporary folder, ``TMPDIR``) and register it; stale paths there are removed
    first (:func:`clean_stale`).

    Parameters
    ----------
    stem : str
        What the folder is for, the start of its name (e.g. ``"anonlab-duckdb"``).
    parent : str or path, optional
        Where to make it.

    Returns
    -------
    Path
        The folder; remove it with :func:`discard`.

    Examples
    --------
    >>> folder = make_folder("anonlab-example")
    >>> oct(folder.stat().st_mode & 0o777)
    '0o700'
    >>> discard(folder); folder.exists()
    False
    """
    return _make(stem, parent, _mkdir)


def make_file(stem: str, parent: str | os.PathLike[str] | None = None) -> Path:
    """Make a new empty file ``0600`` named :func:`temporary_name` in ``parent`` (default:
    the system's temporary folder) and register it; stale paths there are removed first.

    Parameters
    ----------
    stem : str
        The start of its name (e.g. ``".release.csv"`` for a file written beside
        ``release.csv``: a leading dot hides it from readers of the folder).
    parent : str or path, optional
        Where to make it.

    Returns
    -------
    Path
        The file; remove it with :func:`discard`.

    Raises
    ------
    OSError
        The folder cannot be written.

    Examples
    --------
    >>> path = make_file(".example")
    >>> oct(path.stat().st_mode & 0o777)
    '0o600'
    >>> discard(path); path.exists()
    False
    """
    return _make(stem, parent, private_file)


def private_file(path: str | os.PathLike[str]) -> Path:
    """Create the empty file ``path`` with mode ``0600`` (it must not exist), for a writer
    that then writes into it and keeps its mode (DuckDB's ``COPY ... TO`` with
    ``USE_TMP_FILE false``, pyarrow). Not registered: it lives in a registered folder.

    Examples
    --------
    >>> with temporary_folder("anonlab-example") as folder:
    ...     oct(private_file(folder / "rows.parquet").stat().st_mode & 0o777)
    '0o600'
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    return Path(path)


def _remove(path: Path) -> bool:
    """Remove a file or a folder tree; True when nothing is left at ``path``."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink()
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return not os.path.lexists(path)


def discard(path: str | os.PathLike[str]) -> None:
    """Remove the temporary file or folder ``path`` (with all it holds) and forget it.

    Removing a path that is gone does nothing. A path that cannot be removed now stays
    registered, and one that was is looked at again at exit (a writer still running may
    make it again), so the exit of the process removes what is there then.

    Examples
    --------
    >>> folder = make_folder("anonlab-example")
    >>> (folder / "rows.csv").write_text("a,b")
    3
    >>> discard(folder); folder.exists()
    False
    """
    p = Path(os.path.abspath(path))
    if _remove(p):
        with _lock:
            who = _registry.pop(p, None)
            if who is not None:
                _removed[p] = who
                if len(_removed) > _REMEMBER:
                    del _removed[next(iter(_removed))]


@contextlib.contextmanager
def temporary_folder(stem: str, parent: str | os.PathLike[str] | None = None) -> Iterator[Path]:
    """A folder of :func:`make_folder`, removed when the block ends, however it ends.

    Examples
    --------
    >>> with temporary_folder("anonlab-example") as folder:
    ...     _ = (folder / "rows.csv").write_text("a,b")
    >>> folder.exists()
    False
    """
    folder = make_folder(stem, parent)
    try:
        yield folder
    finally:
        discard(folder)


def _alive(pid: int, since: float) -> bool:
    """Whether the process ``pid`` of this host runs and is the one that made a path last
    changed at ``since`` (a process that started after that is another that got the id)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        pass
    except OSError:
        return True
    started = _start_time(pid)
    return started is None or started <= since + REUSE_MARGIN


def _start_time(pid: int) -> float | None:
    """When the process ``pid`` started (seconds since the epoch), where ``/proc`` tells."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        with open("/proc/stat") as fh:
            boot = next(int(line.split()[1]) for line in fh if line.startswith("btime "))
        return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def clean_stale(folder: str | os.PathLike[str] | None = None) -> list[Path]:
    """Remove the temporary paths that anonlab processes of this host which are gone left
    in ``folder`` (default: the system's temporary folder); return the paths removed.

    Only names that carry :data:`TAG` with a host and a process id are looked at
    (:func:`owner`); a path is stale when its host is this one and its process no longer
    runs, or runs but started :data:`REUSE_MARGIN` seconds or more after the path last
    changed (another process got the id, e.g. after a reboot). A path of a running process
    or of another host is left alone.

    Examples
    --------
    >>> with temporary_folder("anonlab-example") as folder:
    ...     dead = folder / ".out.csv.anonlab-tmp.{}.{}.deadbeef".format(socket.gethostname(), 2**22 + 1)
    ...     _ = dead.write_text("half a release")
    ...     [p.name == dead.name for p in clean_stale(folder)]
    [True]
    """
    host = socket.gethostname()
    removed: list[Path] = []
    try:
        entries = list(os.scandir(_folder(folder)))
    except OSError:
        return removed
    for entry in entries:
        who = owner(entry.name)
        if who is None or who[0] != host:
            continue
        try:
            changed = entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        if who[1] == os.getpid() or _alive(who[1], changed):
            continue
        path = Path(entry.path)
        if _remove(path):  # (a symbolic link: only the link)
            removed.append(path)
    return removed


def at_exit(callback: Callable[[], object]) -> None:
    """Run ``callback`` when the process ends, before its temporary paths are removed (the
    last registered first); for what may still write into them, such as a Spark session.

    Examples
    --------
    >>> at_exit(lambda: None)
    """
    with _lock:
        _before_exit.append(callback)


def remove_all() -> list[Path]:
    """Run the :func:`at_exit` callbacks, then remove every temporary path this process
    made that is there (not removed yet, or made again by a writer that had not stopped);
    return those removed. Run when Python exits.

    Examples
    --------
    It removes every temporary path of the process (a Spark session's folder too), so the
    example runs in a process of its own:

    >>> import subprocess, sys
    >>> code = ("from anonlab.io.temporary import make_folder, remove_all; "
    ...         "f = make_folder('anonlab-example'); print(f in remove_all(), f.exists())")
    >>> subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    'True False\\n'
    """
    pid = os.getpid()
    with _lock:
        callbacks = _before_exit[::-1]
        _before_exit.clear()
    for callback in callbacks:
        with contextlib.suppress(Exception):
            callback()
    with _lock:
        mine = [p for p, who in _registry.items() if who == pid]
        mine += [p for p, who in _removed.items() if who == pid and p not in _registry]
    removed = []
    for path in mine:
        existed = os.path.lexists(path)
        if _remove(path):
            with _lock:
                _registry.pop(path, None)
                _removed.pop(path, None)
            if existed:
                removed.append(path)
    return removed


atexit.register(remove_all)


class Stopped(BaseException):
    """Raised by :func:`stop_on_signals` when a stop signal arrives: unwinds the command
    (``finally`` blocks and context managers remove their temporary paths), as
    ``KeyboardInterrupt`` does; ``signum`` names the signal.

    Examples
    --------
    >>> Stopped(signal.SIGTERM).signum == signal.SIGTERM
    True
    """

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


class _Stop:
    """What :func:`stop_on_signals` yields: the signal that stopped the block, if one did."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.timer: threading.Timer | None = None


@contextlib.contextmanager
def stop_on_signals(
    signals: Sequence[int] = STOP_SIGNALS, grace: float = STOP_GRACE
) -> Iterator[_Stop]:
    """Within the block, a stop signal (Ctrl-C, ``SIGTERM``, ``SIGHUP``) raises
    :class:`Stopped` so the work unwinds and its temporary paths are removed; the previous
    handlers are restored when the block ends.

    The yielded object's ``signum`` says which signal stopped the block (None: none did);
    a library call may turn the exception into its own error (DuckDB reports an
    interrupted query), so the caller asks ``signum``, not the exception's type. If the
    block has not ended ``grace`` seconds after the signal (a call that does not return,
    code that swallowed the exception), or a second signal arrives, the temporary paths are
    removed and the process exits at once with status ``128 + signum``, after one line on
    standard error. Installed only from the main thread (the only one that may); elsewhere
    the block runs without it. The ``anonlab`` command runs in this block; a program that
    embeds anonlab decides for itself.

    Examples
    --------
    >>> with stop_on_signals() as stop:
    ...     pass
    >>> stop.signum is None
    True
    """
    state = _Stop()
    if threading.current_thread() is not threading.main_thread():
        yield state
        return
    home = os.getpid()

    def handle(signum: int, frame: FrameType | None) -> None:
        if os.getpid() != home:  # a forked worker: die as the signal says
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        if state.signum is not None:  # asked again: stop now
            _exit_now(signum, "asked twice")
        state.signum = signum
        state.timer = threading.Timer(grace, _exit_now, (signum, f"forced after {grace:g} s"))
        state.timer.daemon = True
        state.timer.start()
        raise Stopped(signum)

    previous = {s: signal.getsignal(s) for s in signals}
    for s in signals:
        signal.signal(s, handle)
    try:
        yield state
    finally:
        if state.timer is not None:  # the block ended: the stop was handled
            state.timer.cancel()
        for s, h in previous.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)


def _exit_now(signum: int, why: str) -> None:
    """Remove this process's temporary paths, say so and end the process with status
    ``128 + signum``."""
    try:
        remove_all()
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        name = signal.Signals(signum).name
        line = f"stopped by {name} ({why}): its temporary files were removed.\n"
        with contextlib.suppress(OSError):
            os.write(2, line.encode())
    finally:
        os._exit(128 + signum)
