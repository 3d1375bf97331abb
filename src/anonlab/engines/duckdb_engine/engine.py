"""Class statistics computed by DuckDB over files, without loading them whole.

Every question is one ``GROUP BY`` over a view of the data: columns read as text (so labels
match the numpy engine and hierarchy files), missing-value markers turned into NULL (a group
of its own), and generalized columns joined to their hierarchy level tables.

A CSV file (plain or gzip) is parsed and cleaned once, when the engine opens, into a temporary
Parquet file that every question then reads: re-parsing (and re-decompressing) the text for
each ``GROUP BY`` made subset searches 20-60 times slower than the numpy engine (issue 27).
The Parquet file is written in streaming fashion and lives on disk, so memory stays bounded for
files larger than memory. It, DuckDB's spill files and the per-partition files live in the
engine's temporary folder (:mod:`anonlab.io.temporary`: private, named after the process, so
the next run removes it if this one is killed), deleted by :meth:`DuckDBEngine.close` (or when
the engine is garbage collected, or Python exits). Every ``COPY ... TO`` writes into a file
made beforehand with mode ``0600`` (``USE_TMP_FILE false``: no ``tmp_`` file of DuckDB's own).

Anonymization out of core uses three more questions (the release protocol of
:class:`~anonlab.engines.base.Engine`): the *frequency set* (one ``GROUP BY`` on the
quasi-identifiers and sensitive attributes, the search's whole input), the *release* (one
``COPY (SELECT ...)`` that streams every row from the source to the output file, each
quasi-identifier mapped to its label through its hierarchy: the value cast to an ``ENUM`` of
the hierarchy's values gives its position, which indexes a list of labels; suppressed classes
are found the same way, by their class number in a list of flags; a pure projection, so the
rows keep their order), and the *re-check* (the written file grouped again).
"""

from __future__ import annotations

import itertools
import math
import os
import weakref
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._optional import import_optional
from anonlab._validation import check_columns, column_name
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.labels import UTC_SUFFIX, factorize
from anonlab.data.source import (
    CsvOptions,
    FileSource,
    header_names,
    ragged_error,
    reader_encoding,
)
from anonlab.data.stats import ClassStats, SensitiveHistogram
from anonlab.data.table import EncodedColumn, EncodedTable
from anonlab.engines.base import AttributeLevels, Engine, ReleasePlan, RowsPlan, root_label
from anonlab.engines.staging import (
    BLOCK,
    KEEP,
    ROW,
    blocks_of,
    encode_block,
    encode_text,
    label_lookup,
    stage_block,
)
from anonlab.exceptions import DataFormatError, HierarchyError, InputError, ParameterError
from anonlab.io.temporary import discard, make_folder, private_file

__all__ = ["DuckDBEngine"]

_NEVER = "\x1e\x1f"  # a null marker that never occurs: NULLs are decided by na_values
#: The most suppressed classes a release looks up in a hash table held in a list (DuckDB
#: copies a constant list for every chunk of 2,048 rows, so its size costs per row); with
#: more, a hash join finds them, and the rows' order is not kept.
_BUCKETED = 1 << 16
#: Rows per row group of the Parquet copy of a CSV. The writer buffers a row group per thread;
#: a quarter of DuckDB's default (122,880) lowered the peak RSS on Census-Income (42 columns)
#: from ~470 to ~350 MiB for ~10% slower questions (benchmarks/bench_duckdb_gz.py).
_ROW_GROUP_ROWS = 32_768
_RN = "__anonlab_rn"
_FLOATS = ("DOUBLE", "FLOAT")


def _zoned(kind: str) -> bool:
    """Whether the DuckDB type ``kind`` is a timestamp with a time zone."""
    return kind.startswith("TIMESTAMPTZ") or kind.startswith("TIMESTAMP WITH TIME ZONE")


def _clock(kind: str) -> bool:
    """Whether the DuckDB type ``kind`` is a time or a timestamp."""
    return kind.startswith("TIME")


def _nested(kind: str) -> bool:
    """Whether the DuckDB type ``kind`` is a list, array, map, struct or union."""
    return kind.endswith("]") or kind.startswith(("STRUCT", "MAP", "UNION"))


def _nfc_scan(names: list[str], scan: str) -> tuple[list[str], str]:
    """The column names of ``scan`` in Unicode NFC, as every name is compared
    (:func:`~anonlab._validation.column_name`), and the scan renaming those that differ."""
    nfc = [column_name(n) for n in names]
    if nfc == names:
        return names, scan
    renamed = ", ".join(f"{_q(a)} AS {_q(b)}" for a, b in zip(names, nfc))
    return nfc, f"(SELECT {renamed} FROM {scan})"


def _check_named(names: Sequence[str], label: str) -> None:
    """Refuse a column without a name (DuckDB would name it ``C0`` or fail on it)."""
    if "" in names:
        raise DataFormatError(
            f"Column {list(names).index('') + 1} of {label} has no name, and the DuckDB engine "
            "names every column in SQL: give it a name (a pandas index written to CSV: "
            "to_csv(index=False) or index_label='id'), or use --engine numpy or spark."
        )


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _text(column: str, kind: str) -> str:
    """SQL: the text of ``column`` (an SQL expression of DuckDB type ``kind``) as anonlab's
    readers write it: a float as :func:`~anonlab.data.labels.float_labels` does (a whole
    number below 2**53 without ``.0``, NaN a null; DuckDB writes any other double as
    Python's ``repr``), a timestamp with a time zone as
    :func:`~anonlab.data.labels.clock_labels` does (its instant in UTC and ``+00:00``, not
    in the session's time zone), anything else cast to text (DuckDB writes the fraction of
    a second of times and timestamps with the digits it needs)."""
    if _zoned(kind):
        return f"(CAST(timezone('UTC', {column}) AS VARCHAR) || {_lit(UTC_SUFFIX)})"
    if kind in _FLOATS:
        return (
            f"CASE WHEN isnan({column}) THEN NULL "
            f"WHEN abs({column}) < 9007199254740992 AND {column} = floor({column}) "
            # (TRY_CAST: DuckDB may evaluate a branch on rows the CASE does not give it)
            f"THEN CAST(TRY_CAST({column} AS BIGINT) AS VARCHAR) ELSE CAST({column} AS VARCHAR) END"
        )
    return f"CAST({column} AS VARCHAR)"


def _lit(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


class DuckDBEngine(Engine):
    """Class statistics of a CSV or Parquet file (or an Arrow/pandas frame) through DuckDB.

    Parameters
    ----------
    source : FileSource, str, path, pyarrow Table or DataFrame
        The data. Files are scanned by DuckDB, never loaded whole into Python.
    hierarchies : Mapping[str, Hierarchy], optional
        Hierarchies per column; checked to cover the column's values.
    csv_options : CsvOptions, optional
        Parsing options when ``source`` is a CSV path.
    drop_nulls : sequence of str or bool, optional
        Drop the rows with a null in any of these columns (True: in any column).
    memory_limit : str, optional
        DuckDB memory limit, e.g. ``"2GB"``; beyond it DuckDB spills to ``temp_directory``.
    threads : int, optional
        DuckDB threads.
    temp_directory : str or path, optional
        Where the engine makes its temporary folder ``anonlab-duckdb.anonlab-tmp.HOST.PID.*``
        (mode ``0700``: the CSV read once into Parquet, DuckDB's spill files, sorted blocks
        and staged labels); default: the system's temporary directory (``TMPDIR``). The folder
        is deleted by :meth:`close`; folders there of killed runs are deleted first.

    Examples
    --------
    >>> with DuckDBEngine("people.csv.gz") as engine:  # doctest: +SKIP
    ...     sizes = engine.class_sizes(["age", "sex"])
    """

    name = "duckdb"

    def __init__(
        self,
        source: Any,
        hierarchies: Mapping[str, Hierarchy] | None = None,
        *,
        csv_options: CsvOptions | None = None,
        drop_nulls: Sequence[str] | bool | None = None,
        memory_limit: str | None = None,
        threads: int | None = None,
        temp_directory: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(hierarchies)
        duckdb = import_optional("duckdb", feature="the DuckDB engine")
        self._duckdb = duckdb
        self.con = duckdb.connect()
        self._tmp = make_folder("anonlab-duckdb", temp_directory)
        self._finalizer = weakref.finalize(self, _release, self.con, self._tmp)
        try:
            self._open(source, csv_options, drop_nulls, memory_limit, threads)
        except BaseException:
            self.close()
            raise

    def _open(
        self,
        source: Any,
        csv_options: CsvOptions | None,
        drop_nulls: Sequence[str] | bool | None,
        memory_limit: str | None,
        threads: int | None,
    ) -> None:
        duckdb = self._duckdb
        self.con.execute(f"SET temp_directory = {_lit(str(self._tmp / 'spill'))}")
        if memory_limit:
            self.con.execute(f"SET memory_limit = {_lit(memory_limit)}")
        if threads:
            self.con.execute(f"SET threads = {int(threads)}")
        self.con.execute("SET preserve_insertion_order = true")
        if isinstance(source, (str, os.PathLike)):
            source = FileSource(Path(source), csv=csv_options or CsvOptions())
        self.source = source
        names, scan = self._scan(source)
        self._names = names
        csv_text = isinstance(source, FileSource) and source.format == "csv"
        self._kinds = dict.fromkeys(names, "VARCHAR") if csv_text else self._kinds_of(scan)
        casts = ", ".join(f"{self._clean(n, source)} AS {_q(n)}" for n in names)
        where = ""
        self._drop_nulls: list[str] = []
        if drop_nulls:
            drop_nulls = list(names) if drop_nulls is True else list(drop_nulls)
            self.validate(drop_nulls, None)
            self._drop_nulls = list(drop_nulls)
            where = " WHERE " + " AND ".join(f"{_q(c)} IS NOT NULL" for c in drop_nulls)
        select = f"SELECT * FROM (SELECT {casts} FROM {scan}){where}"
        #: What a release reads: the source with its columns' own types (a CSV's cleaned
        #: text), so columns a release does not generalize keep their type.
        self._raw = scan
        #: The Parquet copy of a CSV source that every question reads (None: the source itself).
        self._materialized: Path | None = None
        try:
            if isinstance(source, FileSource) and source.format == "csv":
                # Parse, clean and filter the text once; every question reads the Parquet copy.
                self._materialized = private_file(self._tmp / "source.parquet")
                self.con.execute(
                    f"COPY ({select}) TO {_lit(str(self._materialized))} "
                    f"(FORMAT parquet, ROW_GROUP_SIZE {_ROW_GROUP_ROWS}, USE_TMP_FILE false)"
                )
                select = f"SELECT * FROM read_parquet({_lit(str(self._materialized))})"
                self._raw = f"read_parquet({_lit(str(self._materialized))})"
                self._drop_nulls = []  # the copy holds only the rows kept
            self.con.execute(f"CREATE TEMP VIEW src AS {select}")
            self._n_rows = int(self.con.execute("SELECT count(*) FROM src").fetchall()[0][0])
        except duckdb.Error as exc:
            if isinstance(source, FileSource) and "Expected Number of Columns" in str(exc):
                ragged = ragged_error(source.path, source.csv)  # as every engine says it
                if ragged is not None:
                    raise ragged from None
            raise DataFormatError(f"Cannot read {self._label()}: {_summary(exc)}") from None
        self._levels_registered: set[tuple[str, int]] = set()
        #: ENUM types made for releases: (column, id of its hierarchy) -> (type, hierarchy).
        self._enums: dict[tuple[str, int], tuple[str, Hierarchy]] = {}
        self._serial = itertools.count()  # names of the types and tables releases make
        self._sizes: dict[tuple[tuple[str, int], ...], npt.NDArray[np.int64]] = {}
        self._numbered_sql: str | None = None  # the source with each row's position
        self._staged: list[Path] = []  # per-partition labels, one Parquet file per block
        self._staged_sorted = False  # whether the table staged_labels holds them, sorted
        for col, h in self.hierarchies.items():
            if col in self._names:
                self._check_cover(col, h)

    # ------------------------------------------------------------------ source
    def close(self) -> None:
        """Close the DuckDB connection and delete the engine's temporary folder.

        Closing twice does nothing; the engine cannot answer questions afterwards. An engine
        that is not closed is cleaned up when it is garbage collected or Python exits.
        """
        self._finalizer()

    def __enter__(self) -> DuckDBEngine:
        """Return the engine itself (``with DuckDBEngine(...) as engine:``)."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Close the engine (see :meth:`close`)."""
        self.close()

    @property
    def source_name(self) -> str | None:
        """The file DuckDB scans (None for a frame or a table of the connection)."""
        return str(self.source.path) if isinstance(self.source, FileSource) else None

    def _label(self) -> str:
        name = self.source_name
        return "the data frame" if name is None else repr(name)

    def _scan(self, source: Any) -> tuple[list[str], str]:
        if isinstance(source, FileSource):
            path = source.path
            if not path.exists():
                raise InputError(f"Data file {str(path)!r} does not exist.")
            if source.format == "parquet":
                scan = f"read_parquet({_lit(str(path))})"
                try:
                    rel = self.con.sql(f"SELECT * FROM {scan} LIMIT 0")
                except self._duckdb.Error as exc:
                    raise DataFormatError(
                        f"Cannot read Parquet file {str(path)!r}: {_summary(exc)}"
                    ) from None
                pq = import_optional("pyarrow.parquet")
                _check_named(pq.read_schema(path).names, repr(str(path)))
                return _nfc_scan(list(rel.columns), scan)
            opts = source.csv
            names = header_names(path, opts)
            _check_named(names, repr(str(path)))
            scan = (
                f"read_csv({_lit(str(path))}, columns = {_text_columns(names)}, header = false, "
                f"skip = {1 if opts.header else 0}, delim = {_lit(opts.separator)}, "
                f"quote = {_lit(opts.quote)}, escape = {_lit(opts.quote)}, "
                f"nullstr = {_lit(_NEVER)}, auto_detect = false, strict_mode = true, "
                f"null_padding = false{_encoding(opts.encoding)})"
            )
            return names, scan
        # in-memory frames: pyarrow Table, pandas or polars DataFrame (an EncodedTable as text)
        source = self._frame(source)
        names = source.column_names if hasattr(source, "column_names") else source.columns
        _check_named([str(n) for n in names], "the data frame")
        self.con.register("frame_src", source)
        rel = self.con.sql("SELECT * FROM frame_src LIMIT 0")
        return _nfc_scan(list(rel.columns), "frame_src")

    def _frame(self, source: Any) -> Any:
        """An in-memory table DuckDB can scan: an EncodedTable's columns as text; an Arrow
        table or a pandas or polars frame as it is."""
        if isinstance(source, EncodedTable):
            if source.weights is not None:
                raise InputError(
                    "The DuckDB engine reads rows; a frequency set (an EncodedTable with "
                    "weights) is read by the numpy engine."
                )
            pa = import_optional("pyarrow")
            arrays = [  # a null category is None: taking it gives a null
                pa.array(source.column(n).categories.tolist(), type=pa.string()).take(
                    pa.array(source.column(n).codes)
                )
                for n in source.names
            ]
            return pa.table(arrays, names=list(source.names))
        if hasattr(source, "to_arrow") or hasattr(source, "iloc") or hasattr(source, "schema"):
            return source  # polars, pandas, Arrow
        raise InputError(
            "The DuckDB engine takes a path, a FileSource, an EncodedTable, an Arrow table or "
            f"a pandas/polars frame; got {type(source).__name__}."
        )

    def _kinds_of(self, scan: str) -> dict[str, str]:
        """The DuckDB type of each column of ``scan`` (``"VARCHAR"``, ``"DOUBLE"``, ...)."""
        rel = self.con.sql(f"SELECT * FROM {scan} LIMIT 0")
        return {n: str(t) for n, t in zip(rel.columns, rel.types)}

    def _text(self, name: str, alias: str = "") -> str:
        """SQL: the text of the source's column ``name`` (read through ``alias``, e.g.
        ``"s."``) as the readers write it (:func:`_text`)."""
        return _text(f"{alias}{_q(name)}", self._kinds.get(name, "VARCHAR"))

    def _copied(self, name: str, fmt: str) -> str:
        """SQL of a column a release copies from the source (``s``): as it is, but a float,
        time or timestamp column in a CSV release as its labels are written (``1`` for
        ``1.0``, a timestamp with a time zone in UTC) and a list, map or struct column as
        compact JSON, as the numpy engine writes them; Parquet keeps the type."""
        kind = self._kinds.get(name, "VARCHAR")
        if fmt != "parquet" and (kind in _FLOATS or _clock(kind)):
            return self._text(name, "s.")
        if fmt != "parquet" and _nested(kind):  # as the numpy engine writes it
            return f"CAST(to_json(s.{_q(name)}) AS VARCHAR)"
        return f"s.{_q(name)}"

    def _clean(self, name: str, source: Any) -> str:
        expr = _text(_q(name), self._kinds.get(name, "VARCHAR"))
        if isinstance(source, FileSource) and source.format == "csv":
            opts = source.csv
            if opts.strip:
                # trim(x, chars) costs twice trim(x) (spaces only): use it only when needed
                expr = (
                    f"CASE WHEN contains({expr}, '\t') OR contains({expr}, '\r') "
                    f"OR contains({expr}, '\n') THEN trim({expr}, ' \t\r\n') ELSE trim({expr}) END"
                )
            if opts.na_values:
                markers = ", ".join(_lit(v) for v in opts.na_values)
                expr = f"CASE WHEN {expr} IN ({markers}) THEN NULL ELSE {expr} END"
        return expr

    def _check_cover(self, col: str, h: Hierarchy) -> None:
        """Refuse a value of ``col`` that ``h`` lacks, naming the first row holding one."""
        table = self._level_table(col, 0, h)
        lacking = (
            f"(SELECT DISTINCT {_q(col)} AS v FROM src) s ANTI JOIN {table} h ON s.v = h.leaf "
            "WHERE s.v IS NOT NULL"
        )
        if not self._run(f"SELECT 1 FROM {lacking} LIMIT 1").fetchall():
            return
        others = int(self._run(f"SELECT count(*) FROM {lacking}").fetchall()[0][0]) - 1
        text = self._text(col)
        row, value = self._run(
            f"SELECT n.{_q(ROW)}, {text} FROM {self._kept_rows()} n ANTI JOIN {table} h "
            f"ON {text} = h.leaf WHERE {text} IS NOT NULL ORDER BY n.{_q(ROW)} LIMIT 1"
        ).fetchall()[0]
        raise HierarchyError(
            f"Value {value!r}{f' and {others} more' if others else ''} of attribute {col!r} "
            f"is not in its hierarchy{' file ' + repr(h.source) if h.source else ''} "
            f"(row {int(row) + 1})."
        )

    def _level_table(self, col: str, level: int, h: Hierarchy | None = None) -> str:
        name = f"h_{abs(hash(col)) % 10**8}_{level}"
        if (col, level) not in self._levels_registered:
            h = h or self.hierarchies[col]
            pa = import_optional("pyarrow")
            rows = h.rows()
            tbl = pa.table({"leaf": [r[0] for r in rows], "label": [r[level] for r in rows]})
            self.con.register(name, tbl)
            self._levels_registered.add((col, level))
        return name

    # ------------------------------------------------------------------ sql
    def _base(
        self,
        columns: Sequence[str],
        levels: tuple[int, ...],
        extra: Sequence[str] = (),
        view: str = "src",
        *,
        numbered: bool = False,
    ) -> str:
        """SELECT of generalized columns g0..gm (and extra raw columns) from ``view``; with
        ``numbered``, also each row's position in ``view`` (``rn``), taken before the joins
        with the level tables (which do not keep the rows' order)."""
        sel, joins = [], []
        for j, (col, lv) in enumerate(zip(columns, levels)):
            if lv == 0:
                sel.append(f"{view}.{_q(col)} AS g{j}")
            else:
                t = self._level_table(col, lv)
                joins.append(f"LEFT JOIN {t} AS t{j} ON {view}.{_q(col)} = t{j}.leaf")
                root = root_label(self.hierarchies[col], lv)
                if root is not None:  # at the root a null is generalized too
                    sel.append(f"coalesce(t{j}.label, {_lit(root)}) AS g{j}")
                else:
                    sel.append(f"t{j}.label AS g{j}")
        sel.extend(f"{view}.{_q(c)} AS x{i}" for i, c in enumerate(extra))
        if not sel:
            sel = ["1 AS one"]
        source = view
        if numbered:
            sel.append(f"{view}.{_q(_RN)} AS rn")
            source = f"(SELECT *, row_number() OVER () AS {_q(_RN)} FROM {view}) AS {view}"
        return f"SELECT {', '.join(sel)} FROM {source} {' '.join(joins)}"

    @property
    def n_rows(self) -> int:
        """Number of rows (after dropping nulls, if asked)."""
        return self._n_rows

    @property
    def columns(self) -> list[str]:
        """Column names of the data."""
        return list(self._names)

    @property
    def nested_columns(self) -> list[str]:
        """The list, array, map, struct and union columns of the data."""
        return [n for n in self._names if _nested(self._kinds.get(n, "VARCHAR"))]

    def _nested_kind(self, column: str) -> str:
        return self._kinds[column]

    def _run(self, sql: str) -> Any:
        try:
            return self.con.execute(sql)
        except self._duckdb.Error as exc:
            raise DataFormatError(f"Cannot read {self._label()}: {_summary(exc)}") from None

    def class_sizes(
        self, columns: Sequence[str], levels: AttributeLevels | None = None
    ) -> npt.NDArray[np.int64]:
        """Return class sizes with one ``GROUP BY`` (see :class:`Engine`)."""
        cols = list(columns)
        lv = self.validate(cols, levels)
        if not cols:
            return (
                np.array([self._n_rows], dtype=np.int64) if self._n_rows else np.zeros(0, np.int64)
            )
        key = tuple(sorted(zip(cols, lv)))
        hit = self._sizes.get(key)
        if hit is not None:  # results are small: every question reuses them
            return hit
        groups = ", ".join(f"g{j}" for j in range(len(cols)))
        res = self._run(f"SELECT count(*) AS n FROM ({self._base(cols, lv)}) GROUP BY {groups}")
        sizes = np.asarray(res.fetchnumpy()["n"], dtype=np.int64)
        self._sizes[key] = sizes
        return sizes

    def class_stats(
        self,
        columns: Sequence[str],
        levels: AttributeLevels | None = None,
        *,
        sensitive: Sequence[str] = (),
        with_rows: bool = False,
        with_keys: bool = True,
    ) -> ClassStats:
        """Return class statistics (see :class:`Engine`); classes are sorted by key."""
        cols = list(columns)
        lv = self.validate(cols, levels)
        self.validate(list(sensitive), None)
        return self._class_stats(
            cols, lv, sensitive, with_rows=with_rows, with_keys=with_keys, view="src"
        )

    def _class_stats(
        self,
        cols: list[str],
        lv: tuple[int, ...],
        sensitive: Sequence[str],
        *,
        with_rows: bool,
        with_keys: bool,
        view: str,
    ) -> ClassStats:
        """:meth:`class_stats` of the (validated) columns of ``view``."""
        m = len(cols)
        groups = ", ".join(f"g{j}" for j in range(m)) or "1"
        base = self._base(cols, lv, list(sensitive), view)
        order = ", ".join(f"g{j} NULLS LAST" for j in range(m)) or "1"
        self._run(
            f"CREATE OR REPLACE TEMP TABLE cls AS SELECT {groups if m else '1 AS one'}, count(*) AS n, "
            f"row_number() OVER (ORDER BY {order}) - 1 AS cid FROM ({base}) GROUP BY {groups}"
        )
        cls = self._run("SELECT * FROM cls ORDER BY cid").fetchnumpy()
        sizes = np.asarray(cls["n"], dtype=np.int64)
        n_cls = sizes.size
        keys: npt.NDArray[np.int32] | None = None
        domains: tuple[npt.NDArray[np.object_], ...] | None = None
        if with_keys:
            by_column = np.empty((m, n_cls), dtype=np.int32)  # column-major, as numpy's
            decoded = []
            for j in range(m):
                codes, labels = _factorize(cls[f"g{j}"])
                by_column[j] = codes
                decoded.append(labels)
            keys = by_column.T
            domains = tuple(decoded)
        on = " AND ".join(f"b.g{j} IS NOT DISTINCT FROM c.g{j}" for j in range(m)) or "true"
        hists = {}
        for i, s in enumerate(sensitive):
            res = self._run(
                f"SELECT c.cid, b.x{i} AS v, count(*) AS n FROM ({base}) b JOIN cls c ON {on} "
                "GROUP BY ALL"
            ).fetchnumpy()
            vcodes, values = _factorize(res["v"])
            hists[s] = SensitiveHistogram.from_triplets(
                values,
                np.asarray(res["cid"], dtype=np.int64),
                vcodes,
                np.asarray(res["n"], dtype=np.int64),
                n_classes=n_cls,
            )
        row_class = None
        if with_rows:
            numbered = self._base(cols, lv, [], view, numbered=True)
            res = self._run(
                f"SELECT c.cid FROM ({numbered}) b JOIN cls c ON {on} ORDER BY b.rn"
            ).fetchnumpy()
            row_class = np.asarray(res["cid"], dtype=np.int64)
        n_rows = self._n_rows if view == "src" else int(sizes.sum())
        return ClassStats(
            columns=tuple(cols),
            levels=lv,
            sizes=sizes,
            n_rows=n_rows,
            keys=keys,
            domains=domains,
            row_class=row_class,
            sensitive=hists,
        )

    def rows_in_small_classes(
        self, columns: Sequence[str], levels: AttributeLevels | None, k: int
    ) -> npt.NDArray[np.int64]:
        """Return row positions in classes smaller than ``k`` with a window count (each
        row numbered before the joins with the level tables, which do not keep the order)."""
        cols = list(columns)
        lv = self.validate(cols, levels)
        part = ", ".join(f"g{j}" for j in range(len(cols))) or "1"
        res = self._run(
            f"SELECT rn - 1 AS rn FROM (SELECT rn, count(*) OVER (PARTITION BY {part}) AS c "
            f"FROM ({self._base(cols, lv, numbered=True)})) WHERE c < {int(k)} ORDER BY rn"
        ).fetchnumpy()
        return np.asarray(res["rn"], dtype=np.int64)

    # ------------------------------------------------------------------ out of core
    def distinct_counts(self, columns: Sequence[str], *, rows: int | None = None) -> dict[str, int]:
        """Return the distinct values of each column (a null counts as one), in one scan;
        a list, map or struct column by its values. With ``rows``, among ``rows`` records
        of the file (the first ones DuckDB reads)."""
        cols = list(columns)
        check_columns(cols, self.columns)
        if not cols:
            return {}
        parts = ", ".join(
            f"count(DISTINCT {_q(c)}) + (count(*) > count({_q(c)}))::BIGINT" for c in cols
        )
        source = "src" if rows is None else f"(SELECT * FROM src LIMIT {int(rows)})"
        row = self._run(f"SELECT {parts} FROM {source}").fetchall()[0]
        return {c: int(v) for c, v in zip(cols, row)}

    def head(self, columns: Sequence[str], rows: int) -> EncodedTable:
        """Return ``rows`` records of ``columns`` (the first ones DuckDB reads, as
        :meth:`distinct_counts` with ``rows`` counts among); see :meth:`Engine.head`."""
        cols = list(dict.fromkeys(columns))
        self.validate(cols, None)
        names = ", ".join(f"{_q(c)} AS f{j}" for j, c in enumerate(cols)) or "1 AS one"
        try:
            res = self.con.sql(f"SELECT {names} FROM src LIMIT {int(rows)}").to_arrow_table()
        except self._duckdb.Error as exc:
            raise DataFormatError(f"Cannot read {self._label()}: {_summary(exc)}") from None
        encoded = [encode_text(c, res.column(f"f{j}")) for j, c in enumerate(cols)]
        return EncodedTable(tuple(encoded), source=self.source_name)

    def frequency_set(self, columns: Sequence[str]) -> EncodedTable:
        """Return the distinct combinations of ``columns`` with their counts (one
        ``GROUP BY``); see :meth:`Engine.frequency_set`."""
        cols = list(dict.fromkeys(columns))
        self.validate(cols, None)
        if not cols:
            raise InputError("A frequency set needs at least one column.")
        names = ", ".join(f"{_q(c)} AS f{j}" for j, c in enumerate(cols))
        groups = ", ".join(f"f{j}" for j in range(len(cols)))
        try:
            res = self.con.sql(
                f"SELECT {groups}, count(*) AS n FROM (SELECT {names} FROM src) GROUP BY {groups}"
            ).to_arrow_table()
        except self._duckdb.Error as exc:
            raise DataFormatError(f"Cannot read {self._label()}: {_summary(exc)}") from None
        # each column dictionary-encoded by Arrow: the distinct labels become Python
        # objects, the combinations stay integer codes
        encoded = [encode_text(c, res.column(f"f{j}")) for j, c in enumerate(cols)]
        weights = np.asarray(res.column("n").to_numpy(), dtype=np.int64)
        return EncodedTable(tuple(encoded), source=self.source_name, weights=weights)

    def write_release(
        self,
        plan: ReleasePlan,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        separator: str = ",",
    ) -> int:
        """Stream the release ``plan`` describes from the source into ``path`` with one
        ``COPY (SELECT ...)``; rows keep the source's order (see :meth:`Engine.write_release`).

        Each quasi-identifier's value is cast to an ENUM of its hierarchy's values; the
        position indexes the list of its labels at the plan's level and the list of its
        codes. The lists sit in a one-row table joined to every row (DuckDB copies a
        constant list of the query for every chunk of rows). A row is suppressed when its
        class number (the codes in mixed radix; each attribute's codes count only the
        labels that occur in a suppressed class, the others are one code) is in a hash
        table held in a list, or, when more than :data:`_BUCKETED` classes are suppressed,
        found by a hash join (the rows' order is then not kept).
        """
        check_columns(list(plan.columns), self.columns)
        self.validate(list(plan.quasi_identifiers), None)
        options = _copy_options(fmt, separator)
        pa = import_optional("pyarrow")
        lists: dict[str, Any] = {}  # the one-row table's columns
        labels: dict[str, str] = {}  # quasi-identifier -> SQL of its released label
        codes: list[str] = []  # per quasi-identifier: SQL of its class code
        cards: list[int] = []
        # per quasi-identifier, the code of each label that occurs in a suppressed class
        compact = [
            {
                lab: i + 1
                for i, lab in enumerate(sorted({k[j] for k in plan.suppressed}, key=_nulls_last))
            }
            for j in range(len(plan.quasi_identifiers))
        ]
        for j, q in enumerate(plan.quasi_identifiers):
            label, code = self._mapping(plan, j, compact[j], lists)
            labels[q] = label
            codes.append(code)
            cards.append(len(compact[j]) + 1)
        flag = self._suppressed_flag(plan, compact, codes, cards, lists)
        select = []
        for c in plan.columns:
            if c in labels:
                expr = labels[c]
                if flag is not None and plan.mask_suppressed:
                    expr = f"CASE WHEN {flag} THEN '*' ELSE {expr} END"
                select.append(f"{expr} AS {_q(c)}")
            else:
                select.append(f"{self._copied(c, fmt)} AS {_q(c)}")
        where = [f"{self._text(c, 's.')} IS NOT NULL" for c in self._drop_nulls]
        if flag is not None and not plan.mask_suppressed:
            where.append(f"NOT {flag}")
        view = f"release_lists_{next(self._serial)}"
        if lists:  # a DuckDB table: joined from an Arrow view, each chunk copied the lists
            arrow = pa.table(
                {
                    k: pa.ListArray.from_arrays(pa.array([0, len(v)], pa.int32()), pa.array(v))
                    for k, v in lists.items()
                }
            )
            self.con.register(f"{view}_arrow", arrow)
            self._run(f"CREATE OR REPLACE TEMP TABLE {view} AS SELECT * FROM {view}_arrow")
            self.con.unregister(f"{view}_arrow")
        query = (
            f"SELECT {', '.join(select) or '1 AS one'} FROM {self._raw} AS s"
            + (f", {view} AS L" if lists else "")
            + (f" WHERE {' AND '.join(where)}" if where else "")
        )
        try:
            res = self.con.execute(f"COPY ({query}) TO {_lit(str(path))} ({options})")
            written = res.fetchall()
        except self._duckdb.Error as exc:
            raise DataFormatError(
                f"Cannot write the release of {self._label()}: {_summary(exc)}"
            ) from None
        finally:
            if lists:
                self.con.execute(f"DROP TABLE IF EXISTS {view}")
        return int(written[0][0]) if written and written[0] else 0

    def _mapping(
        self,
        plan: ReleasePlan,
        j: int,
        compact: dict[str | None, int],
        lists: dict[str, Any],
    ) -> tuple[str, str]:
        """The SQL of quasi-identifier ``j``'s released label and code.

        Adds to ``lists`` the labels at the plan's level and the codes (``compact``: the
        code of each label that occurs in a suppressed class; every other label is 0), both
        by the position of a value in the ENUM of the hierarchy's values.
        """
        q = plan.quasi_identifiers[j]
        lv = plan.levels[j]
        h = plan.hierarchies[q]
        value = _text(f"s.{_q(q)}", self._kinds.get(q, "VARCHAR"))
        kind = self._enum_type(q, h)
        by_leaf = {r[0]: r[lv] for r in h.rows()}
        released = [by_leaf[v] for v in self._enum_values(kind)]
        known = set(released)
        root = plan.root_label(j)
        for lab in compact:
            if lab is not None and lab not in known:
                raise ParameterError(
                    f"A suppressed class has the label {lab!r} in quasi-identifier {q!r}, "
                    f"which is not one of its labels at level {lv}."
                )
        position = f"enum_code(CAST({value} AS {kind})) + 1"
        null_code = compact.get(root, 0) if root is not None else compact.get(None, 0)
        lists[f"c{j}"] = [compact.get(lab, 0) for lab in released]
        code = f"coalesce(L.c{j}[{position}], {null_code})"
        if lv == 0:
            label = value
        else:
            lists[f"l{j}"] = released
            label = f"L.l{j}[{position}]"
            if root is not None:
                label = f"coalesce({label}, {_lit(root)})"
        return label, code

    def _suppressed_flag(
        self,
        plan: ReleasePlan,
        compact: list[dict[str | None, int]],
        codes: list[str],
        cards: list[int],
        lists: dict[str, Any],
    ) -> str | None:
        """SQL that is true on the rows of a suppressed class (None: nothing suppressed)."""
        if not plan.suppressed:
            return None
        pa = import_optional("pyarrow")
        m = len(codes)
        name = f"suppressed_{next(self._serial)}"
        keys = np.array(
            [[compact[j][lab] for j, lab in enumerate(key)] for key in plan.suppressed],
            dtype=np.int64,
        ).reshape(len(plan.suppressed), m)
        space = math.prod(cards)
        if space >= 2**62:  # pragma: no cover - billions of distinct suppressed labels
            raise ParameterError(
                f"The {len(plan.suppressed):,} suppressed classes have too many distinct "
                "labels to be looked up; allow less suppression or higher levels."
            )
        number = _number(codes, cards)
        numbers = np.unique(keys @ _strides(cards))
        if numbers.size > _BUCKETED:  # many: a hash join (the rows' order is not kept)
            self._run(f"CREATE OR REPLACE TEMP TABLE {name} (n BIGINT)")
            self.con.register(f"{name}_arrow", pa.table({"n": numbers}))
            self._run(f"INSERT INTO {name} SELECT n FROM {name}_arrow")
            self.con.unregister(f"{name}_arrow")
            return f"({number} IN (SELECT n FROM {name}))"
        # a hash table in a list: bucket b holds the suppressed numbers equal to b modulo B
        buckets = 1 << max(int(numbers.size).bit_length() - 2, 0)
        at = numbers % buckets
        order = np.argsort(at, kind="stable")
        offsets = np.zeros(buckets + 1, dtype=np.int64)
        np.cumsum(np.bincount(at, minlength=buckets), out=offsets[1:])
        lists["buckets"] = pa.ListArray.from_arrays(pa.array(offsets), pa.array(numbers[order]))
        return f"list_contains(L.buckets[({number}) % {buckets} + 1], {number})"

    def _enum_type(self, column: str, h: Hierarchy) -> str:
        """The name of an ENUM type of the hierarchy's values (made once per column)."""
        hit = self._enums.get((column, id(h)))
        if hit is not None and hit[1] is h:
            return hit[0]
        name = f"leaves_{next(self._serial)}"
        pa = import_optional("pyarrow")
        view = f"{name}_values"
        self.con.register(view, pa.table({"leaf": [r[0] for r in h.rows()]}))
        self._run(f"CREATE TYPE {name} AS ENUM (SELECT leaf FROM {view})")
        self.con.unregister(view)
        self._enums[(column, id(h))] = (name, h)  # the hierarchy kept: its id stays its own
        return name

    def _enum_values(self, name: str) -> list[str]:
        """The values of an ENUM type, in the order of their positions."""
        return list(self._run(f"SELECT enum_range(NULL::{name})").fetchall()[0][0])

    def release_stats(
        self,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        quasi_identifiers: Sequence[str],
        sensitive: Sequence[str] = (),
        separator: str = ",",
    ) -> ClassStats:
        """Group a written release again, read back from its file (see
        :meth:`Engine.release_stats`)."""
        if fmt == "parquet":
            scan = f"read_parquet({_lit(str(path))})"
        elif fmt in ("csv", "csv.gz"):
            scan = _csv_scan(path, fmt, separator)
        else:
            raise ParameterError(f"Unknown release format {fmt!r}.")
        cols = list(quasi_identifiers)
        wanted = cols + [c for c in sensitive if c not in cols]
        try:
            kinds = self._kinds_of(scan)
        except self._duckdb.Error as exc:
            raise DataFormatError(
                f"Cannot read the written release back: {_summary(exc)}"
            ) from None
        casts = ", ".join(f"{_text(_q(c), kinds.get(c, 'VARCHAR'))} AS {_q(c)}" for c in wanted)
        try:
            self.con.execute(f"CREATE OR REPLACE TEMP VIEW released AS SELECT {casts} FROM {scan}")
        except self._duckdb.Error as exc:
            raise DataFormatError(
                f"Cannot read the written release back: {_summary(exc)}"
            ) from None
        return self._class_stats(
            cols,
            tuple(0 for _ in cols),
            list(sensitive),
            with_rows=False,
            with_keys=True,
            view="released",
        )

    # ------------------------------------------------------------- per partition
    def _numbered(self) -> str:
        """SQL of the source's rows with their positions (column :data:`ROW`), the rows a
        per-partition release reads and writes; its columns have their own types.

        A Parquet file (the source, or a CSV's cleaned copy) numbers its rows itself
        (``file_row_number``); a data frame is copied once with ``row_number()``, so reading
        and writing see one numbering."""
        if self._numbered_sql is not None:
            return self._numbered_sql
        if isinstance(self.source, FileSource) and self.source.format == "parquet":
            path = str(self.source.path)
        elif self._materialized is not None:
            path = str(self._materialized)
        else:
            copy = private_file(self._tmp / "numbered.parquet")
            self._run(
                f"COPY (SELECT *, row_number() OVER () - 1 AS {_q(ROW)} FROM {self._raw}) "
                f"TO {_lit(str(copy))} "
                f"(FORMAT parquet, ROW_GROUP_SIZE {_ROW_GROUP_ROWS}, USE_TMP_FILE false)"
            )
            self._numbered_sql = f"read_parquet({_lit(str(copy))})"
            return self._numbered_sql
        self._numbered_sql = (
            f"(SELECT * EXCLUDE (file_row_number), file_row_number AS {_q(ROW)} "
            f"FROM read_parquet({_lit(path)}, file_row_number = true))"
        )
        return self._numbered_sql

    def first_row(self, column: str, values: Sequence[str | None]) -> tuple[int, str | None] | None:
        """The first row whose ``column`` holds one of ``values`` and its value (see
        :meth:`Engine.first_row`), by the rows' positions in the source."""
        check_columns([column], self.columns)
        text = self._text(column)
        given = [v for v in values if v is not None]
        where = [f"{text} IN ({', '.join(_lit(str(v)) for v in given)})"] if given else []
        if len(given) < len(values):
            where.append(f"{text} IS NULL")
        if not where:
            return None
        found = self._run(
            f"SELECT {_q(ROW)}, {text} FROM {self._kept_rows()} WHERE {' OR '.join(where)} "
            f"ORDER BY {_q(ROW)} LIMIT 1"
        ).fetchall()
        return (int(found[0][0]), found[0][1]) if found else None

    def _kept_rows(self) -> str:
        """SQL of the numbered rows the engine keeps (after ``drop_nulls``)."""
        # (a float's NaN is a null, as in the rows the questions see)
        where = " AND ".join(f"{self._text(c)} IS NOT NULL" for c in self._drop_nulls)
        return f"(SELECT * FROM {self._numbered()}{' WHERE ' + where if where else ''})"

    def partitions(
        self,
        columns: Sequence[str],
        *,
        categories: Mapping[str, npt.NDArray[np.object_]],
        order_by: Mapping[str, Hierarchy],
        block_rows: int,
    ) -> Iterator[tuple[npt.NDArray[np.int64], EncodedTable]]:
        """Stream the rows sorted by ``order_by`` in blocks (see :meth:`Engine.partitions`).

        One ``COPY (SELECT ... ORDER BY ...)`` writes the columns asked for, sorted, to a
        Parquet file in the engine's folder (DuckDB sorts beyond its memory limit by
        spilling); the blocks are then read from it ``block_rows`` rows at a time. Each
        sort key is a value's position in the ENUM of its hierarchy's values (a value not
        in the hierarchy and a null sort last).
        """
        cols = list(dict.fromkeys(columns))
        self.validate(list(dict.fromkeys([*cols, *order_by])), None)
        missing = [c for c in cols if c not in categories]
        if missing:
            raise ParameterError(f"No labels given for column {missing[0]!r} of the partitions.")
        rows = int(block_rows)
        if rows < 1:
            raise ParameterError(f"The 'block_rows' of partitions must be >= 1. Got {rows}.")
        pa = import_optional("pyarrow")
        pq = import_optional("pyarrow.parquet")
        keys = [
            f"enum_code(TRY_CAST({self._text(c)} AS {self._enum_type(c, h)})) NULLS LAST"
            for c, h in order_by.items()
        ]
        select = ", ".join(f"{self._text(c)} AS {_q(c)}" for c in cols)
        sorted_path = private_file(self._tmp / f"sorted_{next(self._serial)}.parquet")
        self._run(
            f"COPY (SELECT {_q(ROW)}, {select} FROM {self._kept_rows()} "
            f"ORDER BY {', '.join([*keys, _q(ROW)])}) TO {_lit(str(sorted_path))} "
            f"(FORMAT parquet, ROW_GROUP_SIZE {_ROW_GROUP_ROWS}, USE_TMP_FILE false)"
        )
        lookup = label_lookup(categories, cols)
        try:
            batches = pq.ParquetFile(sorted_path).iter_batches(batch_size=min(rows, 1 << 16))
            for table in blocks_of(batches, rows, pa):
                yield self._block(table, cols, categories, lookup)
        finally:
            sorted_path.unlink(missing_ok=True)

    def _block(
        self,
        table: Any,
        cols: list[str],
        categories: Mapping[str, npt.NDArray[np.object_]],
        lookup: Mapping[str, Mapping[Any, int]],
    ) -> tuple[npt.NDArray[np.int64], EncodedTable]:
        """One block: its rows' positions and its columns, encoded with ``categories``."""
        row = np.asarray(table.column(ROW).to_numpy(), dtype=np.int64)
        return row, encode_block(table, cols, categories, lookup, self.source_name)

    def stage_labels(
        self,
        rows: npt.NDArray[np.int64],
        labels: Mapping[str, EncodedColumn],
        keep: npt.NDArray[np.bool_],
    ) -> None:
        """Write one block's labels to a Parquet file of the engine's folder (pyarrow; the
        DuckDB connection is not used, so a partition stream stays open)."""
        if self._staged_sorted:  # labels staged after a release was written: sort again
            self._run("DROP TABLE IF EXISTS staged_labels")
            self._staged_sorted = False
        path = self._tmp / "staged" / f"block_{len(self._staged):06d}.parquet"
        pa = import_optional("pyarrow")
        stage_block(
            path, len(self._staged), rows, labels, keep, pa, import_optional("pyarrow.parquet")
        )
        self._staged.append(path)

    def clear_staged(self) -> None:
        """Delete the staged labels."""
        for path in self._staged:
            path.unlink(missing_ok=True)
        self._staged = []
        self._staged_sorted = False
        self._run("DROP TABLE IF EXISTS staged_labels")

    def _staged_table(self, plan: RowsPlan) -> str:
        """A temporary table of the staged labels sorted by row position (made once)."""
        if not self._staged:
            raise ParameterError("No labels are staged: nothing to release.")
        if not self._staged_sorted:
            files = "[" + ", ".join(_lit(str(p)) for p in self._staged) + "]"
            cols = ", ".join(_q(c) for c in (ROW, KEEP, BLOCK, *plan.replaced))
            self._run(
                f"CREATE TEMP TABLE staged_labels AS SELECT {cols} FROM read_parquet({files}) "
                f"ORDER BY {_q(ROW)}"
            )
            self._staged_sorted = True
        return "staged_labels"

    def write_staged_release(
        self,
        plan: RowsPlan,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        separator: str = ",",
    ) -> int:
        """Write the staged release in the source's order (see
        :meth:`Engine.write_staged_release`).

        The staged labels, sorted by row position, are joined to the source row by row
        (``POSITIONAL JOIN``: no hash table, no sort of the wide rows, the source's order
        kept); a row whose position differs from its label's stops the query with an error.
        """
        check_columns(list(plan.columns), self.columns)
        options = _copy_options(fmt, separator)
        labels = self._staged_table(plan)
        select = []
        for i, c in enumerate(plan.columns):
            if c in plan.replaced:
                expr = f"L.{_q(c)}"
                if plan.mask_suppressed and c in plan.masked:
                    expr = f"CASE WHEN L.{_q(KEEP)} THEN {expr} ELSE '*' END"
            else:
                expr = self._copied(c, fmt)
            if i == 0:  # every row checks that its label is its own
                expr = (
                    f"CASE WHEN s.{_q(ROW)} IS DISTINCT FROM L.{_q(ROW)} THEN "
                    f"error('a staged label is not aligned with its row') ELSE {expr} END"
                )
            select.append(f"{expr} AS {_q(c)}")
        where = "" if plan.mask_suppressed else f" WHERE L.{_q(KEEP)}"
        query = (
            f"SELECT {', '.join(select)} FROM {self._kept_rows()} AS s "
            f"POSITIONAL JOIN {labels} AS L{where}"
        )
        try:
            res = self.con.execute(f"COPY ({query}) TO {_lit(str(path))} ({options})")
            written = res.fetchall()
        except self._duckdb.Error as exc:
            raise DataFormatError(
                f"Cannot write the release of {self._label()}: {_summary(exc)}"
            ) from None
        return int(written[0][0]) if written and written[0] else 0

    def staged_mismatches(
        self,
        plan: RowsPlan,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        separator: str = ",",
    ) -> int:
        """Count the written rows that differ from the staged labels (see
        :meth:`Engine.staged_mismatches`): the file's rows in its order beside the kept
        labels in the source's order (``POSITIONAL JOIN``)."""
        labels = self._staged_table(plan)
        cols = list(plan.replaced)
        casts = ", ".join(f"CAST({_q(c)} AS VARCHAR) AS {_q(c)}" for c in cols)
        scan = (
            f"read_parquet({_lit(str(path))})"
            if fmt == "parquet"
            else _csv_scan(path, fmt, separator)
        )
        masked = [
            f"CASE WHEN {_q(KEEP)} THEN {_q(c)} ELSE '*' END AS {_q(c)}"
            if plan.mask_suppressed and c in plan.masked
            else _q(c)
            for c in cols
        ]
        where = "" if plan.mask_suppressed else f" WHERE {_q(KEEP)}"
        staged = f"SELECT {_q(ROW)}, {', '.join(masked)} FROM {labels}{where}"
        written = f"SELECT 1 AS one, {casts} FROM {scan}"
        differ = " OR ".join(
            ["w.one IS NULL", f"l.{_q(ROW)} IS NULL"]
            + [f"w.{_q(c)} IS DISTINCT FROM l.{_q(c)}" for c in cols]
        )
        try:  # both in order, side by side (a row too many or too few meets a NULL)
            res = self.con.execute(
                f"SELECT count(*) FROM ({written}) w POSITIONAL JOIN ({staged}) l WHERE {differ}"
            ).fetchall()
        except self._duckdb.Error as exc:
            raise DataFormatError(
                f"Cannot read the written release back: {_summary(exc)}"
            ) from None
        return int(res[0][0])

    def staged_spanning(
        self,
        plan: RowsPlan,
        columns: Sequence[str],
        categories: Mapping[str, npt.NDArray[np.object_]],
    ) -> tuple[int, npt.NDArray[np.int64], EncodedTable, EncodedTable]:
        """The released classes whose labels occur in more than one staged block (see
        :meth:`Engine.staged_spanning`): one ``GROUP BY`` of the staged labels, then their
        kept rows joined to the source."""
        labels = self._staged_table(plan)
        keys = [_q(c) for c in plan.masked]
        span = (
            f"SELECT {', '.join(keys)}, row_number() OVER () - 1 AS cls FROM {labels} "
            f"WHERE {_q(KEEP)} GROUP BY {', '.join(keys)} "
            f"HAVING count(DISTINCT {_q(BLOCK)}) > 1"
        )
        self._run(f"CREATE OR REPLACE TEMP TABLE spanning AS {span}")
        n = int(self._run("SELECT count(*) FROM spanning").fetchall()[0][0])
        cols = list(dict.fromkeys(columns))
        empty = EncodedTable(())
        if not n or not cols:
            return n, np.zeros(0, dtype=np.int64), empty, empty
        on = " AND ".join(f"L.{k} IS NOT DISTINCT FROM sp.{k}" for k in keys)
        staged = ", ".join(f"L.{_q(c)} AS {_q('l_' + c)}" for c in plan.replaced)
        source = ", ".join(f"{self._text(c, 'r.')} AS {_q('s_' + c)}" for c in cols)
        try:
            table = self.con.sql(
                f"SELECT sp.cls, {staged}, {source} FROM {labels} L JOIN spanning sp ON {on} "
                f"JOIN {self._kept_rows()} r ON r.{_q(ROW)} = L.{_q(ROW)} "
                f"WHERE L.{_q(KEEP)} ORDER BY L.{_q(ROW)}"
            ).to_arrow_table()
        except self._duckdb.Error as exc:
            raise DataFormatError(f"Cannot read {self._label()}: {_summary(exc)}") from None
        row_class = np.asarray(table.column("cls").to_numpy(), dtype=np.int64)
        lookup = label_lookup(categories, cols)
        renamed = table.select([f"s_{c}" for c in cols]).rename_columns(cols)
        renamed = renamed.append_column(ROW, table.column("cls"))
        _, original = self._block(renamed, cols, categories, lookup)
        released = EncodedTable(
            tuple(encode_text(c, table.column(f"l_{c}")) for c in plan.replaced)
        )
        return n, row_class, original, released


def _copy_options(fmt: str, separator: str) -> str:
    """The options of a ``COPY ... TO`` in a release format. The file is written where it
    is named (``USE_TMP_FILE false``): it is the release's own temporary file (or a device),
    whose mode is kept, and no ``tmp_`` file of DuckDB's is left beside it by a killed run."""
    options = {
        "parquet": "FORMAT parquet",
        "csv": f"FORMAT csv, HEADER true, DELIMITER {_lit(separator)}",
        "csv.gz": f"FORMAT csv, HEADER true, DELIMITER {_lit(separator)}, COMPRESSION gzip",
    }
    if fmt not in options:
        raise ParameterError(f"Unknown release format {fmt!r}; use {', '.join(options)}.")
    return f"{options[fmt]}, USE_TMP_FILE false"


def _text_columns(names: Sequence[str]) -> str:
    """``read_csv``'s ``columns`` of a CSV file read as text: every name, as it is, VARCHAR."""
    return "{" + ", ".join(f"{_lit(n)}: 'VARCHAR'" for n in names) + "}"


def _csv_scan(path: str | os.PathLike[str], fmt: str, separator: str) -> str:
    """A written CSV release read back as text (a null as an empty field), its columns
    named from its header as anonlab's reader reads it (DuckDB's own header reading strips
    the spaces around a name: a column ``" age "`` would not be found)."""
    names = header_names(Path(path), CsvOptions(separator=separator), gzipped=fmt == "csv.gz")
    return (
        f"read_csv({_lit(str(path))}, columns = {_text_columns(names)}, header = false, skip = 1, "
        f"delim = {_lit(separator)}, quote = '\"', escape = '\"', auto_detect = false, "
        "allow_quoted_nulls = false, "
        f"compression = {_lit('gzip' if fmt == 'csv.gz' else 'none')})"
    )


def _number(codes: Sequence[str], cards: Sequence[int]) -> str:
    """SQL of the codes as one number in mixed radix (the first the most significant)."""
    if not codes:
        return "0"
    expr = codes[0]
    for code, card in zip(codes[1:], cards[1:]):
        expr = f"({expr}) * {card} + {code}"
    return expr


def _strides(cards: Sequence[int]) -> npt.NDArray[np.int64]:
    """The place value of each digit of a mixed-radix number (the first the most significant)."""
    strides = np.ones(len(cards), dtype=np.int64)
    for j in range(len(cards) - 2, -1, -1):
        strides[j] = strides[j + 1] * cards[j + 1]
    return strides


def _nulls_last(label: str | None) -> tuple[bool, str]:
    """Sort key of labels, a null last."""
    return (label is None, "" if label is None else label)


def _release(con: Any, folder: Path) -> None:
    """Close a DuckDB connection, then delete the temporary folder it wrote into."""
    try:
        con.close()
    finally:
        discard(folder)


def _summary(exc: BaseException) -> str:
    """One line from a DuckDB error: its first line and the line that says what is wrong."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    if not lines:
        return type(exc).__name__
    detail = [
        ln for ln in lines[1:] if not ln.startswith(("Original Line", "Possible", "*", "LINE", "^"))
    ]
    # a row quoted after "Original Line:" can span lines (a quote never closed runs on)
    detail = [ln for ln in detail if "unterminated quote" in ln] or detail
    return "; ".join(lines[:1] + detail[:1])


#: Python's name of each encoding DuckDB's CSV reader takes -> DuckDB's name of it.
_ENCODINGS = {"utf-8": "utf-8", "utf-8-sig": "utf-8", "iso8859-1": "latin-1", "utf-16": "utf-16"}


def _encoding(enc: str) -> str:
    """The ``encoding`` option of ``read_csv`` (none for UTF-8, its default)."""
    name = reader_encoding(enc, _ENCODINGS, "duckdb")
    return "" if name == "utf-8" else f", encoding = {_lit(name)}"


def _factorize(values: Any) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.object_]]:
    """Codes and naturally ordered labels of a fetched column (masked arrays hold NULLs)."""
    if isinstance(values, np.ma.MaskedArray):
        arr = np.asarray(values.data, dtype=object)
        arr[np.ma.getmaskarray(values)] = None
    else:
        arr = np.asarray(values, dtype=object)
    return factorize(arr)
