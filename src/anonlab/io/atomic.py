"""Safe file output: atomic writes onto regular files or new paths, and input-file checks.

Every file anonlab writes goes through :func:`atomic_write`: the content is written to a
temporary file beside the target, flushed to disk, then renamed over the target, so a reader
never sees a partial file and a killed run leaves the target as it was. The temporary file's
name says what it is (``.NAME.anonlab-tmp.HOST.PID.RANDOM``, made by
:mod:`anonlab.io.temporary`): it never ends with an output suffix, it is private (``0600``)
while it is written, it is removed on every error, and the next write into the same directory
removes those (and every other anonlab temporary path there) whose process is gone.

What is refused before anything is written, with one clear line:

* a directory, a block device, a FIFO, a socket or another special file as the target (a
  character device such as ``/dev/null`` is written to directly, never replaced);
* a target that is one of the job's inputs (the data, the job file, a hierarchy file): the
  same file by device and inode, whatever path names it;
* a target whose folder does not exist or cannot be written;
* a target that is a dangling symbolic link (it points to nothing), or a read-only file;
* a remote address (``hdfs://``, ``s3://``, ``http://``, ...), as output or input: anonlab
  reads and writes local paths (:func:`check_local`).

An output path that ends with ``/`` names a *Parquet dataset*: a new folder of Parquet part
files, as Spark writes a table in parallel (:func:`atomic_folder`). It is written into a
temporary folder beside it (``.NAME.anonlab-tmp.HOST.PID.RANDOM/``) and renamed into place
when complete; an existing path of any kind is refused, so nothing is ever overwritten.

New files get the permissions the process's umask gives (``0666 & ~umask``), set just before
the rename; a file that is replaced keeps its permissions. A symbolic link is followed: the
file it points to is replaced and the link stays.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from anonlab.exceptions import InputError
from anonlab.io.temporary import (
    clean_stale,
    discard,
    make_file,
    make_folder,
    temporary_folder,
)

__all__ = [
    "OUTPUT_FORMATS",
    "PARQUET_DATASET",
    "atomic_folder",
    "atomic_write",
    "check_input_file",
    "check_local",
    "check_output",
    "clean_stale_temporaries",
    "is_dataset_path",
    "output_format",
    "readable_atomic_write",
]

#: Output suffixes and the format each writes.
OUTPUT_FORMATS: dict[str, str] = {".csv": "csv", ".csv.gz": "csv.gz", ".parquet": "parquet"}

#: The format of an output path that ends with ``/``: a new folder of Parquet part files.
PARQUET_DATASET = "parquet dataset"


def is_dataset_path(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a Parquet dataset folder: a string that ends with ``/`` (a
    ``Path`` drops the slash, so it always names a file)."""
    return isinstance(path, str) and path.endswith(("/", os.sep))


def output_format(path: str | os.PathLike[str]) -> str:
    """Return the format an output path asks for by its suffix: ``csv``, ``csv.gz``, ``parquet``.

    A character device (``/dev/null``, ``/dev/stdout``) is written as CSV; a path that ends
    with ``/`` is a Parquet dataset folder (:data:`PARQUET_DATASET`).

    Raises
    ------
    InputError
        For any other suffix; the message lists the valid ones.
    """
    if is_dataset_path(path):
        return PARQUET_DATASET
    name = Path(path).name.lower()
    try:
        if stat.S_ISCHR(os.stat(path).st_mode):
            return "csv"  # /dev/null, /dev/stdout, a terminal: text
    except OSError:
        pass
    for suffix in sorted(OUTPUT_FORMATS, key=len, reverse=True):
        if name.endswith(suffix) and len(name) > len(suffix):
            return OUTPUT_FORMATS[suffix]
    return _bad_suffix(path)


def _bad_suffix(path: str | os.PathLike[str]) -> str:
    raise InputError(
        f"Cannot tell the output format of {str(path)!r} from its name; end it with "
        f"{', '.join(OUTPUT_FORMATS)}."
    )


#: An address with a scheme (``hdfs://``, ``s3://``, ``http://``), also as a ``Path`` spells
#: it (``hdfs:/nn/x``); a one-letter scheme is a Windows drive (``C:/``).
_REMOTE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):/")


def check_local(path: str | os.PathLike[str], what: str) -> None:
    """Raise one clear :class:`InputError` if ``path`` is a remote address, not a local path.

    Parameters
    ----------
    path : path-like
        The path as the user gave it.
    what : str
        What it is (``"data file"``, ``"output"``), named in the message.

    Examples
    --------
    >>> check_local("data/adult.csv", "data file")
    >>> check_local("s3://bucket/adult.csv", "data file")
    Traceback (most recent call last):
    ...
    anonlab.exceptions.InputError: The data file 's3://bucket/adult.csv' is a remote address (s3://): anonlab reads and writes local paths only; give one (copy the file here, or mount the storage).
    """
    text = os.fspath(path)
    found = _REMOTE.match(text) if isinstance(text, str) else None
    if found:
        raise InputError(
            f"The {what} {text!r} is a remote address ({found.group(1)}://): anonlab reads and "
            "writes local paths only; give one (copy the file here, or mount the storage)."
        )


def check_input_file(path: str | os.PathLike[str], what: str) -> Path:
    """Return ``path`` if it names a readable file, else raise one clear :class:`InputError`.

    Parameters
    ----------
    path : path-like
        The file.
    what : str
        What it is (``"data file"``, ``"job file"``, ``"hierarchy file"``), named in the message.

    Returns
    -------
    Path

    Examples
    --------
    >>> check_input_file("no-such-file.csv", "data file")
    Traceback (most recent call last):
    ...
    anonlab.exceptions.InputError: The data file 'no-such-file.csv' does not exist.
    """
    check_local(path, what)
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputError(f"The {what} {str(p)!r} does not exist.") from None
    except PermissionError:
        raise InputError(f"The {what} {str(p)!r} cannot be read: permission denied.") from None
    except OSError as exc:
        raise InputError(f"The {what} {str(p)!r} cannot be read: {exc.strerror}.") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"The {what} {str(p)!r} is a directory; give a file.")
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode):  # reading would wait forever
        raise InputError(f"The {what} {str(p)!r} is {_kind(st.st_mode)}; give a regular file.")
    try:
        with p.open("rb") as fh:
            fh.read(1)
    except PermissionError:
        raise InputError(f"The {what} {str(p)!r} cannot be read: permission denied.") from None
    except OSError as exc:
        raise InputError(f"The {what} {str(p)!r} cannot be read: {exc.strerror}.") from None
    return p


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "a special file"


def clean_stale_temporaries(folder: Path) -> list[Path]:
    """Remove the temporary files and folders that killed anonlab runs on this host left in
    ``folder`` (see :func:`anonlab.io.temporary.clean_stale`); return the paths removed.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     clean_stale_temporaries(Path(folder))
    []
    """
    return clean_stale(folder)


def _umask() -> int:
    """The process's umask, read without changing it where Linux tells it (``/proc``)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # (elsewhere: read by setting it, at once set back)
    os.umask(mask)
    return mask


def check_output(
    path: str | os.PathLike[str], *, protect: Iterable[str | os.PathLike[str]] = ()
) -> bool:
    """Check before any work that ``path`` can be written safely; see :func:`atomic_write`.

    Parameters
    ----------
    path : path-like
        The output.
    protect : iterable of path-like
        Input files that must never be overwritten.

    Returns
    -------
    bool
        True if the output is a character device (written to directly), else False.

    Raises
    ------
    InputError
        A directory or special file, an input file, a missing or unwritable folder, a
        dangling symbolic link, a read-only file, a remote address.
    """
    check_local(path, "output")
    if is_dataset_path(path):
        _new_folder(path)
        return False
    given = Path(path)
    target = Path(os.path.realpath(given))  # a symbolic link: replace the file it points to
    try:
        st: os.stat_result | None = target.stat()
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise InputError(f"Cannot write the output {str(given)!r}: {exc.strerror}.") from None
    if st is None and os.path.islink(given):
        raise InputError(
            f"The output {str(given)!r} is a symbolic link to {os.readlink(given)!r}, which "
            "does not exist (a dangling link); remove the link or give another output."
        )
    if st is not None:
        for p in protect:
            try:
                same = _same_file(st, Path(p).stat())
            except OSError:
                continue
            if same:
                raise InputError(
                    f"Refusing to overwrite the input file {str(p)!r} with the output "
                    f"{str(given)!r}; choose another output."
                )
        if stat.S_ISCHR(st.st_mode):
            return True
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"The output {str(given)!r} is {_kind(st.st_mode)}; give a file name.")
        if not st.st_mode & 0o222 or not os.access(target, os.W_OK):  # (root: by its mode)
            raise InputError(
                f"The output {str(given)!r} is read-only ({stat.filemode(st.st_mode)}): it is "
                "not replaced. Make it writable (chmod u+w) or give another output."
            )
    _check_folder(target.parent, given.parent)
    return False


def _check_folder(folder: Path, given: Path) -> None:
    """Raise unless the output folder ``folder`` (named ``given`` to the user) exists and
    can be written."""
    if not folder.is_dir():
        raise InputError(f"The output folder {str(given)!r} does not exist.")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"Cannot write into the output folder {str(given)!r}: permission denied.")


def _new_folder(path: str | os.PathLike[str]) -> Path:
    """The absolute path of the Parquet dataset folder ``path`` (ending with ``/``), which
    must not exist yet, in a folder that exists and can be written."""
    given = Path(path)  # (the trailing slash dropped)
    target = Path(os.path.abspath(given))
    if os.path.lexists(target):
        raise InputError(
            f"The output {str(path)!r} exists; a Parquet dataset (an output path ending with "
            "'/') is written to a new folder only, so nothing is ever overwritten: give a new "
            "path."
        )
    _check_folder(target.parent, given.parent)
    return target


@contextlib.contextmanager
def atomic_write(
    path: str | os.PathLike[str], *, protect: Iterable[str | os.PathLike[str]] = ()
) -> Iterator[Path]:
    """Yield a path to write; on success it replaces ``path``, on error it is removed.

    Parameters
    ----------
    path : path-like
        The final file: a new path, a regular file (replaced) or a character device such as
        ``/dev/null`` (written to directly).
    protect : iterable of path-like
        Input files that must never be overwritten (compared by device and inode).

    Yields
    ------
    Path
        The file to write: a temporary file beside the target, or the device itself.

    Raises
    ------
    InputError
        If the target is a directory or another special file, one of ``protect``, or its
        folder does not exist or cannot be written; nothing is written then.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     target = Path(folder) / "out.txt"
    ...     with atomic_write(target) as tmp:
    ...         _ = tmp.write_text("released")
    ...     target.read_text(), sorted(p.name for p in Path(folder).iterdir())
    ('released', ['out.txt'])
    """
    given = Path(path)
    target = Path(os.path.realpath(given))
    if check_output(given, protect=protect):
        yield target  # /dev/null, a terminal: write straight to it, never rename over it
        return
    try:
        mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = None
    folder = target.parent
    where = str(given.parent)
    try:
        tmp = make_file(f".{target.name}", folder)  # 0600 while it is written
    except PermissionError:
        raise InputError(
            f"Cannot write into the output folder {where!r}: permission denied."
        ) from None
    except OSError as exc:
        if exc.errno == errno.EROFS:
            raise InputError(
                f"Cannot write into the output folder {where!r}: {exc.strerror}."
            ) from None
        raise InputError(f"Cannot write the output {str(given)!r}: {exc.strerror}.") from None
    try:
        yield tmp
        # a replaced file keeps its permissions; a new one gets the umask's, as any new file
        os.chmod(tmp, mode if mode is not None else 0o666 & ~_umask())
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    finally:
        discard(tmp)


@contextlib.contextmanager
def atomic_folder(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a path for a new folder (a Parquet dataset); on success the folder written
    there is renamed to ``path``, on error it is removed.

    Parameters
    ----------
    path : str
        The new folder, ending with ``/``; it must not exist (see :func:`check_output`).

    Yields
    ------
    Path
        Where to create the folder: inside a temporary folder beside ``path``.

    Raises
    ------
    InputError
        If ``path`` exists (also if it appeared while the folder was written), or its
        parent folder does not exist or cannot be written; nothing is written then.
    """
    target = _new_folder(path)
    parent = target.parent
    try:
        tmp = make_folder(f".{target.name}", parent)  # 0700 while it is written
    except OSError as exc:
        raise InputError(
            f"Cannot write into the output folder {str(parent)!r}: {exc.strerror}."
        ) from None
    try:
        staged = tmp / "release"  # (a plain name: readers skip hidden ones)
        yield staged
        for root, _, files in os.walk(staged):
            for name in files:
                fd = os.open(os.path.join(root, name), os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        if os.path.lexists(target):
            raise InputError(
                f"The output {str(path)!r} appeared while the release was written; it was "
                "left as it is and nothing was written."
            )
        os.rename(staged, target)
    finally:
        discard(tmp)


@contextlib.contextmanager
def readable_atomic_write(
    path: str | os.PathLike[str], *, protect: Iterable[str | os.PathLike[str]] = ()
) -> Iterator[Path]:
    """:func:`atomic_write` for a writer that reads its file back before it is released.

    Yields the temporary file of :func:`atomic_write`; for a character device (which cannot
    be read back) a file in a temporary folder, whose bytes go to the device only when the
    block ends without an error.

    Parameters
    ----------
    path : path-like
        The final file, as for :func:`atomic_write`.
    protect : iterable of path-like
        Input files that must never be overwritten.

    Yields
    ------
    Path
        The file to write and read back.
    """
    with atomic_write(path, protect=protect) as tmp:
        if not check_output(path, protect=protect):
            yield tmp
            return
        with temporary_folder("anonlab-release") as folder:
            yield folder / "release"
            with open(folder / "release", "rb") as src, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst)
