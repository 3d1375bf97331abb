"""Atomic file output: write to a temporary file beside the target, then rename."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from anonlab.exceptions import InputError

__all__ = ["atomic_write"]


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], *, protect: tuple[Path, ...] = ()) -> Iterator[Path]:
    """Yield a temporary path; on success it is renamed to ``path``, on error removed.

    Parameters
    ----------
    path : path-like
        The final file.
    protect : tuple of Path
        Input files that must never be overwritten; naming one as ``path`` is an error.

    Yields
    ------
    Path
        The temporary file to write.
    """
    target = Path(path)
    for p in protect:
        if p.exists() and target.exists() and os.path.samefile(p, target):
            raise InputError(
                f"Refusing to overwrite the input file {str(p)!r}; choose another output."
            )
    if target.parent and not target.parent.exists():
        raise InputError(f"The output folder {str(target.parent)!r} does not exist.")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent or ".")
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()
