"""Reading and writing hierarchies in ARX's CSV format (``;``-separated, one row per value)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

from anonlab.data.hierarchy import Hierarchy
from anonlab.exceptions import HierarchyError
from anonlab.io.atomic import atomic_write

__all__ = ["read_hierarchy", "write_hierarchy"]


def read_hierarchy(
    path: str | os.PathLike[str],
    *,
    attribute: str | None = None,
    separator: str = ";",
    encoding: str = "utf-8",
) -> Hierarchy:
    """Read a hierarchy file in ARX's format.

    Each row holds one original value followed by its label at level 1, 2, ..., h.

    Parameters
    ----------
    path : path-like
        The file.
    attribute : str, optional
        The attribute it belongs to (named in error messages).
    separator : str
        Field separator (ARX uses ``;``).
    encoding : str
        Text encoding.

    Returns
    -------
    Hierarchy

    Raises
    ------
    HierarchyError
        If the file is missing, not valid text in ``encoding``, empty, ragged or inconsistent.
    """
    p = Path(path)
    name = f" of attribute {attribute!r}" if attribute else ""
    try:
        with p.open(newline="", encoding=encoding) as fh:
            rows = [row for row in csv.reader(fh, delimiter=separator) if row]
    except FileNotFoundError:
        raise HierarchyError(f"Hierarchy file {str(p)!r}{name} does not exist.") from None
    except UnicodeDecodeError as exc:
        raise HierarchyError(
            f"Hierarchy file {str(p)!r}{name} is not valid {encoding} text "
            f"(byte {exc.start}: {exc.object[exc.start : exc.start + 1]!r})."
        ) from None
    except csv.Error as exc:
        raise HierarchyError(f"Malformed hierarchy file {str(p)!r}{name}: {exc}.") from None
    return Hierarchy(rows, attribute=attribute, source=str(p))


def write_hierarchy(
    hierarchy: Hierarchy, path: str | os.PathLike[str], *, separator: str = ";"
) -> None:
    """Write ``hierarchy`` in ARX's format, atomically."""
    with atomic_write(path) as tmp:
        with tmp.open("w", newline="", encoding="utf-8") as fh:
            csv.writer(fh, delimiter=separator, lineterminator="\n").writerows(hierarchy.rows())
