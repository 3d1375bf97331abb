"""CSV files that readers have misread, shared by the engines' tests."""

from __future__ import annotations

import gzip
from pathlib import Path


def never_closed(tmp_path: Path) -> tuple[list[Path], Path]:
    """Files ending inside a quoted field (plain and gzipped: 4 rows that a lenient reader
    reads as 2), and a valid file whose last value holds a line break and is closed (2 rows,
    notes ``two\\nlines`` and ``and\\nthese``, blank lines after it)."""
    text = 'q,note\na,x\na,"never closed\nb,y\nb,z\n'
    plain, packed = tmp_path / "u.csv", tmp_path / "u.csv.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    closed = tmp_path / "closed.csv"
    closed.write_text('q,note\na,"two\nlines"\nb,"and\nthese"\n\n\n')
    return [plain, packed], closed
