"""Class statistics computed by DuckDB over files, without loading them whole.

Every question is one ``GROUP BY`` over a view of the file: columns read as text (so labels
match the numpy engine and hierarchy files), missing-value markers turned into NULL (a group
of its own), and generalized columns joined to their hierarchy level tables.
"""

from __future__ import annotations

import os
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
        DuckDB memory limit, e.g. ``"2GB"``.
    threads : int, optional
        DuckDB threads.
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
    ) -> None:
        super().__init__(hierarchies)
        duckdb = import_optional("duckdb", feature="the DuckDB engine")
        self._duckdb = duckdb
        self.con = duckdb.connect()
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
        self.con.execute(f"CREATE TEMP VIEW src_all AS SELECT {casts} FROM {scan}")
        where = ""
        if drop_nulls:
            drop_nulls = list(names) if drop_nulls is True else list(drop_nulls)
            self.validate(drop_nulls, None)
            where = " WHERE " + " AND ".join(f"{_q(c)} IS NOT NULL" for c in drop_nulls)
        self.con.execute(f"CREATE TEMP VIEW src AS SELECT * FROM src_all{where}")
        try:
            self._n_rows = int(self.con.execute("SELECT count(*) FROM src").fetchall()[0][0])
        except duckdb.Error as exc:
            raise DataFormatError(f"Cannot read {self._label()}: {_summary(exc)}") from None
        self._levels_registered: set[tuple[str, int]] = set()
        self._sizes: dict[tuple[tuple[str, int], ...], npt.NDArray[np.int64]] = {}
        for col, h in self.hierarchies.items():
            if col in self._names:
                self._check_cover(col, h)

    # ------------------------------------------------------------------ source
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
                expr = f"trim({expr}, ' \t\r\n')"
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
            counts = np.zeros((n_cls, values.size), dtype=np.int64)
            np.add.at(
                counts,
                (np.asarray(res["cid"], dtype=np.int64), vcodes),
                np.asarray(res["n"], dtype=np.int64),
            )
            hists[s] = SensitiveHistogram(values, counts)
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
