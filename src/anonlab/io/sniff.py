"""Guess a CSV file's field separator from its first lines (for a user who does not say it)."""

from __future__ import annotations

import csv
import gzip
import os
from pathlib import Path

__all__ = ["SEPARATORS", "sniff_header", "sniff_separator"]

#: The separators a guess chooses among.
SEPARATORS = ",;\t|"
#: How much of the file (decompressed) the guess reads.
SNIFF_BYTES = 64 * 1024


def sniff_separator(path: str | os.PathLike[str], *, default: str = ",") -> str:
    """The field separator of a CSV file (``.csv`` or ``.csv.gz``), guessed from its first
    lines by :class:`csv.Sniffer` among :data:`SEPARATORS`; ``default`` when the guess fails
    or the file is not a CSV.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "people.csv"
    ...     _ = path.write_text("age;sex;city\\n30;F;Paris\\n41;M;Lyon\\n")
    ...     sniff_separator(path)
    ';'
    """
    text = _head(path)
    if text is None:
        return default
    try:
        return csv.Sniffer().sniff(text, delimiters=SEPARATORS).delimiter
    except csv.Error:
        return default


def sniff_header(path: str | os.PathLike[str], separator: str = ",") -> bool:
    """Whether a CSV file's first row holds column names, guessed by :class:`csv.Sniffer`
    (a column whose first cell differs in kind or length from the others'); True when the
    guess fails or the file is not a CSV.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "people.csv"
    ...     _ = path.write_text("30,F,Paris\\n41,M,Lyon\\n52,F,Nice\\n")
    ...     sniff_header(path)
    False
    """
    text = _head(path)
    if text is None:
        return True
    try:
        return bool(
            csv.Sniffer().has_header(text.replace(separator, ",") if separator != "," else text)
        )
    except csv.Error:
        return True


def _head(path: str | os.PathLike[str]) -> str | None:
    """The file's first whole lines (decompressed), or None for a file that is not a CSV."""
    name = str(path).lower()
    if not name.endswith((".csv", ".csv.gz", ".txt", ".tsv")):
        return None
    opener = gzip.open if name.endswith(".gz") else open
    try:
        with opener(Path(path), "rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except OSError:
        return None
    text = head.decode("utf-8", errors="replace")
    if len(head) == SNIFF_BYTES:  # a cut last line would mislead the sniffer
        text = text[: text.rfind("\n") + 1] or text
    return text
