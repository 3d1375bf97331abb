"""Guess a CSV file's field separator from its first lines (for a user who does not say it)."""

from __future__ import annotations

import csv
import gzip
import os
from pathlib import Path

__all__ = ["SEPARATORS", "sniff_separator"]

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
    name = str(path).lower()
    if not name.endswith((".csv", ".csv.gz", ".txt", ".tsv")):
        return default
    opener = gzip.open if name.endswith(".gz") else open
    try:
        with opener(Path(path), "rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except OSError:
        return default
    text = head.decode("utf-8", errors="replace")
    if len(head) == SNIFF_BYTES:  # a cut last line would mislead the sniffer
        text = text[: text.rfind("\n") + 1] or text
    try:
        return csv.Sniffer().sniff(text, delimiters=SEPARATORS).delimiter
    except csv.Error:
        return default
