"""Descriptions of data sources that engines read themselves (files, not frames)."""

from __future__ import annotations

import codecs
import csv
import gzip
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from anonlab._validation import column_name
from anonlab.exceptions import DataFormatError, InputError

__all__ = [
    "CsvOptions",
    "FileSource",
    "DEFAULT_NA_VALUES",
    "header_names",
    "infer_format",
    "ragged_error",
    "ragged_row",
    "read_header",
    "reader_encoding",
]

#: Markers read as a null unless the user says otherwise.
DEFAULT_NA_VALUES: tuple[str, ...] = ("", "?")


#: Separators given by name: the tab, which a shell cannot pass as one character easily.
_SEPARATOR_NAMES = {"\\t": "\t", "tab": "\t"}


@dataclass(frozen=True)
class CsvOptions:
    """How to parse a delimited text file.

    Parameters
    ----------
    separator : str
        One-character field separator; ``"tab"`` and ``"\\t"`` (a backslash and a t, as a
        shell passes ``-s '\\t'``) name the tab.
    header : bool
        Whether the first row holds column names (otherwise columns are ``c0, c1, ...``
        unless ``names`` is given).
    quote : str
        Quote character.
    encoding : str
        Text encoding; bytes that are not valid in it are an error.
    na_values : tuple of str
        Markers of a missing value, read as a null.
    strip : bool
        Strip white space around fields (e.g. UCI files separated by ``", "``).
    names : tuple of str, optional
        Column names to use (required to name columns of a file without a header).

    Examples
    --------
    >>> opts = CsvOptions(separator=";", na_values=("", "NA"))
    >>> opts.separator, opts.header
    (';', True)
    """

    separator: str = ","
    header: bool = True
    quote: str = '"'
    encoding: str = "utf-8"
    na_values: tuple[str, ...] = DEFAULT_NA_VALUES
    strip: bool = False
    names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        named = _SEPARATOR_NAMES.get(self.separator.lower())
        if named is not None:
            object.__setattr__(self, "separator", named)
        if len(self.separator) != 1:
            raise DataFormatError(
                f"The separator must be one character, or tab ('\\t'). Got {self.separator!r}."
            )
        if len(self.quote) != 1:
            raise DataFormatError(f"The quote must be one character. Got {self.quote!r}.")


def reader_encoding(encoding: str, spellings: Mapping[str, str], engine: str) -> str:
    """The name an engine's CSV reader gives a text encoding that Python names ``encoding``
    (any of its aliases: ``latin-1``, ``latin1`` and ``iso-8859-1`` are one encoding).

    Parameters
    ----------
    encoding : str
        The encoding of :class:`CsvOptions`.
    spellings : Mapping[str, str]
        Python's name of each encoding the reader takes (:func:`codecs.lookup`) -> the
        reader's name of it.
    engine : str
        The engine's name, for the error message.

    Returns
    -------
    str

    Raises
    ------
    DataFormatError
        Python does not know the encoding, or the reader does not read it.
    """
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        raise DataFormatError(f"Unknown text encoding {encoding!r}.") from None
    if name not in spellings:
        takes = ", ".join(dict.fromkeys(spellings.values()))
        raise DataFormatError(
            f"The {engine} engine reads CSV text in {takes} only, not {encoding!r}: convert "
            "the file to UTF-8, or use --engine numpy (any encoding Python knows)."
        )
    return spellings[name]


@dataclass(frozen=True)
class FileSource:
    """A CSV or Parquet file, read by an engine.

    Parameters
    ----------
    path : Path
        The file.
    format : str
        ``"csv"`` or ``"parquet"`` (inferred from the suffix when not given).
    csv : CsvOptions
        Parsing options for CSV.

    Examples
    --------
    >>> from pathlib import Path
    >>> src = FileSource(Path("people.csv"), csv=CsvOptions(separator=";"))
    >>> src.format, src.csv.separator
    ('csv', ';')
    """

    path: Path
    format: str = ""
    csv: CsvOptions = field(default_factory=CsvOptions)

    def __post_init__(self) -> None:
        path = Path(self.path)
        object.__setattr__(self, "path", path)
        fmt = self.format or infer_format(path)
        if fmt not in ("csv", "parquet"):
            raise DataFormatError(
                f"Unknown data format {fmt!r} for {str(path)!r}; use csv or parquet."
            )
        object.__setattr__(self, "format", fmt)


def infer_format(path: Path) -> str:
    """Return ``"parquet"`` for ``.parquet``/``.pq`` files, else ``"csv"``."""
    suffixes = [s.lower() for s in path.suffixes]
    return "parquet" if suffixes and suffixes[-1] in (".parquet", ".pq") else "csv"


def header_names(path: Path, options: CsvOptions, *, gzipped: bool | None = None) -> list[str]:
    """Return the column names of a CSV file (from its header, or ``c0, c1, ...``).

    A UTF-8 byte-order mark before the first name is stripped. ``gzipped`` says whether
    the file is gzip-compressed (default: whether its name ends with ``.gz``).
    """
    return read_header(path, options, gzipped=gzipped)[0]


def read_header(
    path: Path, options: CsvOptions, *, gzipped: bool | None = None
) -> tuple[list[str], bool]:
    """Return the column names of a CSV file and whether it starts with a byte-order mark.

    ``gzipped`` says whether the file is gzip-compressed (default: whether its name ends
    with ``.gz``).

    Returns
    -------
    names : list of str
        From the header, or ``options.names``, or ``c0, c1, ...``; a byte-order mark is
        stripped from the first, and each is in Unicode NFC
        (:func:`~anonlab._validation.column_name`).
    bom : bool
        Whether the file starts with a UTF-8 byte-order mark (U+FEFF).
    """
    try:
        with _open_text(path, options.encoding, gzipped) as fh:
            first = next(csv.reader(fh, delimiter=options.separator, quotechar=options.quote), None)
    except FileNotFoundError:
        raise InputError(f"Data file {str(path)!r} does not exist.") from None
    except IsADirectoryError:
        raise InputError(f"The data file {str(path)!r} is a directory; give a file.") from None
    except PermissionError:
        raise InputError(
            f"The data file {str(path)!r} cannot be read: permission denied."
        ) from None
    except UnicodeDecodeError as exc:
        raise DataFormatError(
            f"Data file {str(path)!r} is not valid {options.encoding} text "
            f"(byte {exc.start} of the first line); pass the right encoding."
        ) from None
    except LookupError:
        raise DataFormatError(f"Unknown text encoding {options.encoding!r}.") from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise DataFormatError(
            f"Cannot read CSV file {str(path)!r}: the gzip stream is corrupt or truncated ({exc})."
        ) from None
    except csv.Error as exc:
        raise DataFormatError(f"Cannot parse CSV file {str(path)!r}: {exc}.") from None
    if first is None:
        raise DataFormatError(f"Data file {str(path)!r} is empty.")
    bom = bool(first) and first[0].startswith("\ufeff")
    if bom:
        first[0] = first[0][1:]
    if options.names is not None:
        if len(options.names) != len(first):
            raise DataFormatError(
                f"{len(options.names)} column names given but {str(path)!r} has {len(first)} fields."
            )
        return [column_name(n) for n in options.names], bom
    if options.header:
        names = [column_name(f.strip() if options.strip else f) for f in first]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise DataFormatError(
                f"Duplicate column names in {str(path)!r}: {', '.join(map(repr, dup))}."
            )
        return names, bom
    return [f"c{i}" for i in range(len(first))], bom


def ends_inside_quotes(path: Path, options: CsvOptions, last_value: object) -> bool:
    """Whether the CSV file ``path`` ends inside a quoted field, given the last value of its
    last row as a reader read it (Arrow and Spark take the rest of such a file as that value
    without a word).

    That value then holds a line break, and the file's text without its final line breaks
    does not end with the quote: a quoted value that holds a line break is closed by one,
    and an unquoted value holds none. The file is read again only in that rare case.

    Parameters
    ----------
    path : Path
        The CSV file (plain or gzipped).
    options : CsvOptions
        Its encoding and quote character.
    last_value : object
        The last row's last value as read (None, or not text: nothing to check).

    Returns
    -------
    bool
    """
    if not isinstance(last_value, str) or ("\n" not in last_value and "\r" not in last_value):
        return False
    tail = ""
    with _open_text(path, options.encoding) as fh:
        while chunk := fh.read(1 << 20):
            tail = (tail + chunk)[-64:]
    return not tail.rstrip("\r\n").endswith(options.quote)


def ragged_row(path: Path, options: CsvOptions) -> str | None:
    """Where the CSV file ``path`` first has a row whose number of fields differs from the
    others', as every engine's error says it: ``row 18 (line 19) has 5 fields instead of
    4`` (the row counted from 1 without the header, as rows are counted everywhere; the line
    of the file it ends on). None if every row has as many fields as the first (or as
    ``options.names``, without a header).

    The file is read again with Python's CSV reader: for an error message only, after a
    reader failed on the file.

    Parameters
    ----------
    path : Path
        The CSV file (plain or gzipped).
    options : CsvOptions
        Its separator, quote, encoding, header and names.

    Returns
    -------
    str or None

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = p.write_text('a,b\\n1,2\\n"x\\ny",3,4\\n')
    >>> ragged_row(p, CsvOptions())
    'row 2 (line 4) has 3 fields instead of 2'
    """
    expected = None if options.header or options.names is None else len(options.names)
    rows = -1 if options.header else 0
    try:
        with _open_text(path, options.encoding) as fh:
            reader = csv.reader(fh, delimiter=options.separator, quotechar=options.quote)
            for fields in reader:
                if not fields:  # a blank line: no row (as the readers skip it)
                    continue
                rows += 1
                if expected is None:
                    expected = len(fields)
                elif len(fields) != expected:
                    return (
                        f"row {rows} (line {reader.line_num}) has {len(fields)} field"
                        f"{'s' if len(fields) != 1 else ''} instead of {expected}"
                    )
    except (OSError, UnicodeDecodeError, csv.Error, EOFError, zlib.error):
        return None
    return None


def ragged_error(path: Path, options: CsvOptions) -> DataFormatError | None:
    """The one error every engine raises for the CSV file ``path`` if a row's number of
    fields differs from the others' (:func:`ragged_row`), None if none does.

    Returns
    -------
    DataFormatError or None
        ``Cannot parse CSV file 'data.csv': row 18 (line 19) has 5 fields instead of 4.``
    """
    where = ragged_row(path, options)
    return (
        None if where is None else DataFormatError(f"Cannot parse CSV file {str(path)!r}: {where}.")
    )


#: What a reader says of a file that :func:`ends_inside_quotes`.
NEVER_CLOSED = (
    "a quoted field is never closed (the last row's last value runs to the end of the file)"
)


def _open_text(path: Path, encoding: str, gzipped: bool | None = None) -> IO[str]:
    if path.suffix.lower() == ".gz" if gzipped is None else gzipped:
        return gzip.open(path, "rt", newline="", encoding=encoding)
    return path.open(newline="", encoding=encoding)
