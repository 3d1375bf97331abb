"""Class statistics computed by DuckDB over files, without loading them whole.

Every question is one ``GROUP BY`` over a view of the data: columns read as text (so labels
match the numpy engine and hierarchy files), missing-value markers turned into NULL (a group
of its own), and generalized columns joined to their hierarchy level tables.

A CSV file (plain or gzip) is parsed and cleaned once, when the engine opens, into a temporary
Parquet file that every question then reads: re-parsing (and re-decompressing) the text for
each ``GROUP BY`` made subset searches 20-60 times slower than the numpy engine (issue 27).
The Parquet file is written in streaming fashion and lives on disk, so memory stays bounded for
files larger than memory; it and DuckDB's spill files are deleted by :meth:`DuckDBEngine.close`
(or when the engine is garbage collected).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._optional import import_optional
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.labels import factorize
from anonlab.data.source import CsvOptions, FileSource, header_names
from anonlab.data.stats import ClassStats, SensitiveHistogram
from anonlab.engines.base import Engine, Levels
from anonlab.exceptions import DataFormatError, HierarchyError, InputError

__all__ = ["DuckDBEngine"]

_NEVER = "\x1e\x1f"  # a null marker that never occurs: NULLs are decided by na_values
#: Rows per row group of the Parquet copy of a CSV. The writer buffers a row group per thread;
#: a quarter of DuckDB's default (122,880) lowered the peak RSS on Census-Income (42 columns)
#: from ~470 to ~350 MiB for ~10% slower questions (benchmarks/bench_duckdb_gz.py).
_ROW_GROUP_ROWS = 32_768


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


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
        Where the engine makes its temporary folder (the CSV read once into Parquet, DuckDB's
        spill files); default: the system's temporary directory (``TMPDIR``). The folder is
        deleted by :meth:`close`.

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
        self._tmp = Path(tempfile.mkdtemp(prefix="anonlab-duckdb-", dir=temp_directory))
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
        casts = ", ".join(f"{self._clean(n, source)} AS {_q(n)}" for n in names)
        where = ""
        if drop_nulls:
            drop_nulls = list(names) if drop_nulls is True else list(drop_nulls)
            self.validate(drop_nulls, None)
            where = " WHERE " + " AND ".join(f"{_q(c)} IS NOT NULL" for c in drop_nulls)
        select = f"SELECT * FROM (SELECT {casts} FROM {scan}){where}"
        #: The Parquet copy of a CSV source that every question reads (None: the source itself).
        self._materialized: Path | None = None
        try:
            if isinstance(source, FileSource) and source.format == "csv":
                # Parse, clean and filter the text once; every question reads the Parquet copy.
                self._materialized = self._tmp / "source.parquet"
                self.con.execute(
                    f"COPY ({select}) TO {_lit(str(self._materialized))} "
                    f"(FORMAT parquet, ROW_GROUP_SIZE {_ROW_GROUP_ROWS})"
                )
                select = f"SELECT * FROM read_parquet({_lit(str(self._materialized))})"
            self.con.execute(f"CREATE TEMP VIEW src AS {select}")
            self._n_rows = int(self.con.execute("SELECT count(*) FROM src").fetchall()[0][0])
        except duckdb.Error as exc:
            raise DataFormatError(f"Cannot read {self._label()}: {_summary(exc)}") from None
        self._levels_registered: set[tuple[str, int]] = set()
        self._sizes: dict[tuple[tuple[str, int], ...], npt.NDArray[np.int64]] = {}
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

    def _label(self) -> str:
        src = self.source
        return repr(str(src.path)) if isinstance(src, FileSource) else "the data frame"

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
                return list(rel.columns), scan
            opts = source.csv
            names = header_names(path, opts)
            cols = "{" + ", ".join(f"{_lit(n)}: 'VARCHAR'" for n in names) + "}"
            scan = (
                f"read_csv({_lit(str(path))}, columns = {cols}, header = false, "
                f"skip = {1 if opts.header else 0}, delim = {_lit(opts.separator)}, "
                f"quote = {_lit(opts.quote)}, escape = {_lit(opts.quote)}, "
                f"nullstr = {_lit(_NEVER)}, auto_detect = false, strict_mode = true, "
                f"null_padding = false{_encoding(opts.encoding)})"
            )
            return names, scan
        # in-memory frames: pyarrow Table, pandas or polars DataFrame
        self.con.register("frame_src", source)
        rel = self.con.sql("SELECT * FROM frame_src LIMIT 0")
        return list(rel.columns), "frame_src"

    def _clean(self, name: str, source: Any) -> str:
        expr = f"CAST({_q(name)} AS VARCHAR)"
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
        table = self._level_table(col, 0, h)
        rows = self._run(
            f"SELECT s.{_q(col)} FROM (SELECT DISTINCT {_q(col)} FROM src) s "
            f"ANTI JOIN {table} h ON s.{_q(col)} = h.leaf "
            f"WHERE s.{_q(col)} IS NOT NULL LIMIT 1"
        ).fetchall()
        if rows:
            row = rows[0]
            raise HierarchyError(
                f"Value {row[0]!r} of attribute {col!r} is not in its hierarchy"
                f"{' file ' + repr(h.source) if h.source else ''}."
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
        self, columns: Sequence[str], levels: tuple[int, ...], extra: Sequence[str] = ()
    ) -> str:
        """SELECT of generalized columns g0..gm (and extra raw columns) from src."""
        sel, joins = [], []
        for j, (col, lv) in enumerate(zip(columns, levels)):
            if lv == 0:
                sel.append(f"src.{_q(col)} AS g{j}")
            else:
                t = self._level_table(col, lv)
                joins.append(f"LEFT JOIN {t} AS t{j} ON src.{_q(col)} = t{j}.leaf")
                sel.append(f"t{j}.label AS g{j}")
        sel.extend(f"src.{_q(c)} AS x{i}" for i, c in enumerate(extra))
        if not sel:
            sel = ["1 AS one"]
        return f"SELECT {', '.join(sel)} FROM src {' '.join(joins)}"

    @property
    def n_rows(self) -> int:
        """Number of rows (after dropping nulls, if asked)."""
        return self._n_rows

    @property
    def columns(self) -> list[str]:
        """Column names of the data."""
        return list(self._names)

    def _run(self, sql: str) -> Any:
        try:
            return self.con.execute(sql)
        except self._duckdb.Error as exc:
            raise DataFormatError(f"Cannot read {self._label()}: {_summary(exc)}") from None

    def class_sizes(
        self, columns: Sequence[str], levels: Levels | None = None
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
        levels: Levels | None = None,
        *,
        sensitive: Sequence[str] = (),
        with_rows: bool = False,
        with_keys: bool = True,
    ) -> ClassStats:
        """Return class statistics (see :class:`Engine`); classes are sorted by key."""
        cols = list(columns)
        lv = self.validate(cols, levels)
        self.validate(list(sensitive), None)
        m = len(cols)
        groups = ", ".join(f"g{j}" for j in range(m)) or "1"
        base = self._base(cols, lv, list(sensitive))
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
            res = self._run(
                f"SELECT c.cid FROM (SELECT *, row_number() OVER () AS rn FROM ({base})) b "
                f"JOIN cls c ON {on} ORDER BY b.rn"
            ).fetchnumpy()
            row_class = np.asarray(res["cid"], dtype=np.int64)
        return ClassStats(
            columns=tuple(cols),
            levels=lv,
            sizes=sizes,
            n_rows=self._n_rows,
            keys=keys,
            domains=domains,
            row_class=row_class,
            sensitive=hists,
        )

    def rows_in_small_classes(
        self, columns: Sequence[str], levels: Levels | None, k: int
    ) -> npt.NDArray[np.int64]:
        """Return row positions in classes smaller than ``k`` with a window count."""
        cols = list(columns)
        lv = self.validate(cols, levels)
        part = ", ".join(f"g{j}" for j in range(len(cols))) or "1"
        res = self._run(
            f"SELECT rn FROM (SELECT rn, count(*) OVER (PARTITION BY {part}) AS c FROM "
            f"(SELECT *, row_number() OVER () - 1 AS rn FROM ({self._base(cols, lv)}))) "
            f"WHERE c < {int(k)} ORDER BY rn"
        ).fetchnumpy()
        return np.asarray(res["rn"], dtype=np.int64)


def _release(con: Any, folder: Path) -> None:
    """Close a DuckDB connection, then delete the temporary folder it wrote into."""
    try:
        con.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _summary(exc: BaseException) -> str:
    """One line from a DuckDB error: its first line and the line that says what is wrong."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    if not lines:
        return type(exc).__name__
    detail = [
        ln for ln in lines[1:] if not ln.startswith(("Original Line", "Possible", "*", "LINE", "^"))
    ]
    return "; ".join(lines[:1] + detail[:1])


def _encoding(enc: str) -> str:
    norm = enc.lower().replace("_", "-")
    if norm in ("utf-8", "utf8"):
        return ""
    return f", encoding = {_lit(enc)}"


def _factorize(values: Any) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.object_]]:
    """Codes and naturally ordered labels of a fetched column (masked arrays hold NULLs)."""
    if isinstance(values, np.ma.MaskedArray):
        arr = np.asarray(values.data, dtype=object)
        arr[np.ma.getmaskarray(values)] = None
    else:
        arr = np.asarray(values, dtype=object)
    return factorize(arr)
