"""Reading and writing hierarchies in ARX's CSV format (``;``-separated, one row per value)."""

from __future__ import annotations

import codecs
import csv
import io
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._optional import import_optional
from anonlab.data.hierarchy import Hierarchy
from anonlab.exceptions import HierarchyError
from anonlab.io.atomic import atomic_write, check_local

__all__ = ["read_hierarchy", "write_hierarchy"]

#: Files with fewer lines are read with the csv module: pyarrow's fixed cost is higher.
_ARROW_MIN_ROWS = 400
#: The first line that is not empty (pyarrow skips empty lines as the csv module does).
_FIRST_LINE = re.compile(rb"[\r\n]*([^\r\n]*)")


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

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "sex.csv"
    ...     _ = path.write_text("F;*\\nM;*\\n")
    ...     read_hierarchy(path, attribute="sex")
    Hierarchy(attribute='sex', values=2, height=1, e.g. 'F' -> '*')
    """
    check_local(path, "hierarchy file")
    p = Path(path)
    name = f" of attribute {attribute!r}" if attribute else ""
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise HierarchyError(f"Hierarchy file {str(p)!r}{name} does not exist.") from None
    except IsADirectoryError:
        raise HierarchyError(
            f"Hierarchy file {str(p)!r}{name} is a directory; give a file."
        ) from None
    except PermissionError:
        raise HierarchyError(
            f"Hierarchy file {str(p)!r}{name} cannot be read: permission denied."
        ) from None
    except OSError as exc:
        raise HierarchyError(
            f"Hierarchy file {str(p)!r}{name} cannot be read: {exc.strerror}."
        ) from None
    if raw.startswith(codecs.BOM_UTF8) and encoding.lower().replace("_", "-") in ("utf-8", "utf8"):
        raw = raw[len(codecs.BOM_UTF8) :]
    try:
        text: str | None = raw.decode(encoding)
    except UnicodeError:
        text = None  # read again as a text file below, to name the bad byte as ever
    if text is not None and _lines_at_least(raw, _ARROW_MIN_ROWS):
        levels = _parse_columns(raw, text, separator, encoding)
        if levels is not None:
            codes, labels = levels
            hierarchy = Hierarchy.from_codes(
                codes, labels, attribute=attribute, source=str(p), sorted_labels=True
            )
            return _not_another_separator(hierarchy, p, name, separator)
    rows = _read_rows(p, text, name, separator, encoding)
    return _not_another_separator(
        Hierarchy(rows, attribute=attribute, source=str(p)), p, name, separator
    )


def _not_another_separator(h: Hierarchy, p: Path, name: str, separator: str) -> Hierarchy:
    """``h``, unless it has one column whose every value holds another common separator as
    many times: a file written with ``,`` (say) instead of ``separator``. Read with
    ``separator`` it keeps whole rows as values, and the data's values would be reported
    missing from it."""
    if h.height > 0:
        return h
    leaves = h.leaves
    values: npt.NDArray[np.str_] = np.asarray(leaves[leaves != None], dtype=str)  # noqa: E711
    for other in (",", "\t", "|", ";"):
        counts: npt.NDArray[np.int64] = np.unique(np.char.count(values, other))
        if other != separator and counts.size == 1 and counts[0] > 0:
            raise HierarchyError(
                f"Hierarchy file {str(p)!r}{name} has one column, and each of its rows holds "
                f"{other!r} ({counts[0]} per row): hierarchy files separate the levels with "
                f"{separator!r} (ARX's format). Write it with {separator!r} between the levels."
            )
    return h


def _lines_at_least(raw: bytes, n: int) -> bool:
    """Whether ``raw`` has at least ``n`` line feeds (a short prefix usually tells)."""
    cut = 256 * n
    head = raw.count(b"\n", 0, cut)
    return head >= n or (len(raw) > cut and head + raw.count(b"\n", cut) >= n)


def _read_rows(
    p: Path, text: str | None, name: str, separator: str, encoding: str
) -> list[list[str]]:
    """Read the rows with the csv module: any file (the reference for :func:`_parse_columns`).

    ``text`` is the decoded file, or None to open the file as text (and fail on a bad byte).
    """
    try:
        if text is not None:
            lines = io.StringIO(text, newline="")
            return [row for row in csv.reader(lines, delimiter=separator) if row]
        with p.open(newline="", encoding=encoding) as fh:
            return [row for row in csv.reader(fh, delimiter=separator) if row]
    except FileNotFoundError:
        raise HierarchyError(f"Hierarchy file {str(p)!r}{name} does not exist.") from None
    except UnicodeDecodeError as exc:
        raise HierarchyError(
            f"Hierarchy file {str(p)!r}{name} is not valid {encoding} text "
            f"(byte {exc.start}: {exc.object[exc.start : exc.start + 1]!r})."
        ) from None
    except csv.Error as exc:
        raise HierarchyError(f"Malformed hierarchy file {str(p)!r}{name}: {exc}.") from None


def _parse_columns(
    raw: bytes, text: str, separator: str, encoding: str
) -> tuple[list[npt.NDArray[np.int32]], list[npt.NDArray[np.object_]]] | None:
    """Parse a hierarchy file with pyarrow into codes and sorted labels per level.

    ``raw`` is the file, ``text`` the same decoded from ``encoding``. Only files that the csv
    module splits on separators and line breaks alone are parsed here: no quote character, no
    NUL byte, no byte-order mark and a one-byte separator. For any other file, or one pyarrow
    cannot parse (ragged rows, say), the result is None: the caller reads the rows with the
    csv module, which gives the same rows and the error messages.
    """
    if len(separator) != 1 or not separator.isascii() or separator in '"\r\n':
        return None
    if codecs.lookup(encoding).name != "utf-8":
        try:
            raw = text.encode("utf-8")
        except UnicodeError:  # a lone surrogate
            return None
    if b'"' in raw or b"\0" in raw or raw.startswith(codecs.BOM_UTF8):
        return None
    pa = import_optional("pyarrow")
    pc = import_optional("pyarrow.compute")
    pcsv = import_optional("pyarrow.csv")
    # every column as text: name as many as the first line has fields (pyarrow rejects a row
    # with another number of fields)
    first = _FIRST_LINE.match(raw)
    width = 1 if first is None else first.group(1).count(separator.encode("ascii")) + 1
    names = [f"f{i}" for i in range(width)]
    try:
        table = pcsv.read_csv(
            pa.BufferReader(raw),
            read_options=pcsv.ReadOptions(column_names=names),
            parse_options=pcsv.ParseOptions(
                delimiter=separator, quote_char=False, double_quote=False, escape_char=False
            ),
            convert_options=pcsv.ConvertOptions(
                column_types=dict.fromkeys(names, pa.string()),
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
                check_utf8=False,
            ),
        )
        if table.num_rows == 0:
            return None
        if len(raw) > csv.field_size_limit():
            longest = max(pc.max(pc.binary_length(c)).as_py() for c in table.columns)
            if longest > csv.field_size_limit():
                return None  # the csv module refuses a field this long
        return _encode_levels(table)
    except pa.ArrowException:
        return None


def _encode_levels(table: Any) -> tuple[list[npt.NDArray[np.int32]], list[npt.NDArray[np.object_]]]:
    """Codes into sorted distinct labels for each column of a pyarrow Table of strings."""
    pa = import_optional("pyarrow")
    pc = import_optional("pyarrow.compute")
    codes: list[npt.NDArray[np.int32]] = []
    labels: list[npt.NDArray[np.object_]] = []
    for j, column in enumerate(table.columns):
        col = column.combine_chunks()
        if j == 0:
            # the values must be distinct: sort them, no hash table needed
            order = pc.array_sort_indices(col)
            ordered = col.take(order)
            if len(col) < 2 or not pc.any(pc.equal(ordered[:-1], ordered[1:])).as_py():
                codes.append(_inverse(order.to_numpy()))
                labels.append(ordered.to_numpy(zero_copy_only=False))
                continue
        # a coarser level comes in runs of equal labels: encode one label per run
        changes = pc.indices_nonzero(pc.not_equal(col[1:], col[:-1])).to_numpy()
        starts = np.zeros(changes.size + 1, dtype=np.int64)
        starts[1:] = changes + 1
        runs = starts.size <= len(col) // 4
        if runs:
            col = col.take(pa.array(starts))
        enc = pc.dictionary_encode(col)
        order = pc.array_sort_indices(enc.dictionary)
        level = _inverse(order.to_numpy())[enc.indices.to_numpy()]
        if runs:
            level = np.repeat(level, np.diff(starts, append=len(table)))
        codes.append(level)
        labels.append(enc.dictionary.take(order).to_numpy(zero_copy_only=False))
    return codes, labels


def _inverse(order: npt.NDArray[np.integer]) -> npt.NDArray[np.int32]:
    """The inverse permutation of ``order``, as int32: the rank of each element."""
    rank = np.empty(order.size, dtype=np.int32)
    rank[order] = np.arange(order.size, dtype=np.int32)
    return rank


def write_hierarchy(
    hierarchy: Hierarchy, path: str | os.PathLike[str], *, separator: str = ";"
) -> None:
    """Write ``hierarchy`` in ARX's format, atomically.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from anonlab import Hierarchy
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "zip.csv"
    ...     write_hierarchy(Hierarchy([["4350", "435*", "*"], ["4360", "436*", "*"]]), path)
    ...     print(path.read_text(), end="")
    4350;435*;*
    4360;436*;*
    """
    with atomic_write(path) as tmp:
        with tmp.open("w", newline="", encoding="utf-8") as fh:
            csv.writer(fh, delimiter=separator, lineterminator="\n").writerows(hierarchy.rows())
