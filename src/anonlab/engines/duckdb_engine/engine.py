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
import os
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._optional import import_optional
from anonlab._validation import check_columns
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.source import CsvOptions, FileSource, ragged_error
from anonlab.data.stats import ClassStats, SensitiveHistogram
from anonlab.data.table import EncodedTable
from anonlab.engines.base import AttributeLevels
from anonlab.engines.duckdb_engine.blocks import DuckDBBlocks
from anonlab.engines.duckdb_engine.dialect import (
    FLOATS,
    NUMBER_KINDS,
    RN,
    ROW_GROUP_ROWS,
    factorize_fetched,
    is_clock,
    nested_kind,
    release_connection,
    scan_source,
    summary,
    text_of,
)
from anonlab.engines.duckdb_engine.release import DuckDBRelease
from anonlab.engines.sql import (
    SqlEngine,
    group_names,
    group_terms,
    level_table,
    literal,
    quoted,
)
from anonlab.engines.staging import ROW, encode_text
from anonlab.exceptions import DataFormatError, HierarchyError
from anonlab.io.temporary import make_folder, private_file

__all__ = ["DuckDBEngine"]


class DuckDBEngine(SqlEngine):
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
        self._finalizer = weakref.finalize(self, release_connection, self.con, self._tmp)
        self._writer = DuckDBRelease(self)
        self._blocks = DuckDBBlocks(self)
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
        self.con.execute(f"SET temp_directory = {literal(str(self._tmp / 'spill'))}")
        if memory_limit:
            self.con.execute(f"SET memory_limit = {literal(memory_limit)}")
        if threads:
            self.con.execute(f"SET threads = {int(threads)}")
        self.con.execute("SET preserve_insertion_order = true")
        if isinstance(source, (str, os.PathLike)):
            source = FileSource(Path(source), csv=csv_options or CsvOptions())
        self.source = source
        names, scan = scan_source(self.con, self._duckdb.Error, source)
        self._names = names
        csv_text = isinstance(source, FileSource) and source.format == "csv"
        self._kinds = dict.fromkeys(names, "VARCHAR") if csv_text else self._kinds_of(scan)
        casts = ", ".join(f"{self._clean(n, source)} AS {quoted(n)}" for n in names)
        where = ""
        self._drop_nulls: list[str] = []
        if drop_nulls:
            drop_nulls = list(names) if drop_nulls is True else list(drop_nulls)
            self.validate(drop_nulls, None)
            self._drop_nulls = list(drop_nulls)
            where = " WHERE " + " AND ".join(f"{quoted(c)} IS NOT NULL" for c in drop_nulls)
        select = f"SELECT * FROM (SELECT {casts} FROM {scan}){where}"
        #: The numeric columns of a typed source under their own type, for sums of them
        #: (:meth:`_weight_classes`): the ``src_numbers`` view holds each as ``alias``.
        self._numbers = {
            n: f"__anonlab_number_{i}"
            for i, n in enumerate(names)
            if self._kinds[n] in NUMBER_KINDS or self._kinds[n].startswith("DECIMAL")
        }
        typed = "".join(f", {quoted(n)} AS {quoted(a)}" for n, a in self._numbers.items())
        numbers = f"SELECT * FROM (SELECT {casts}{typed} FROM {scan}){where}"
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
                    f"COPY ({select}) TO {literal(str(self._materialized))} "
                    f"(FORMAT parquet, ROW_GROUP_SIZE {ROW_GROUP_ROWS}, USE_TMP_FILE false)"
                )
                select = f"SELECT * FROM read_parquet({literal(str(self._materialized))})"
                self._raw = f"read_parquet({literal(str(self._materialized))})"
                self._drop_nulls = []  # the copy holds only the rows kept
            self.con.execute(f"CREATE TEMP VIEW src AS {select}")
            if self._materialized is None:
                self.con.execute(f"CREATE TEMP VIEW src_numbers AS {numbers}")
            else:  # a CSV's copy holds text only
                self._numbers = {}
            self._n_rows = int(self.con.execute("SELECT count(*) FROM src").fetchall()[0][0])
        except duckdb.Error as exc:
            if isinstance(source, FileSource) and "Expected Number of Columns" in str(exc):
                ragged = ragged_error(source.path, source.csv)  # as every engine says it
                if ragged is not None:
                    raise ragged from None
            raise DataFormatError(f"Cannot read {self._label()}: {summary(exc)}") from None
        self._levels_registered: set[tuple[str, int]] = set()
        #: ENUM types made for releases: (column, id of its hierarchy) -> (type, hierarchy).
        self._enums: dict[tuple[str, int], tuple[str, Hierarchy]] = {}
        self._serial = itertools.count()  # names of the types and tables releases make
        self._sizes: dict[tuple[tuple[str, int], ...], npt.NDArray[np.int64]] = {}
        self._numbered_sql: str | None = None  # the source with each row's position
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

    @property
    def source_name(self) -> str | None:
        """The file DuckDB scans (None for a frame or a table of the connection)."""
        return str(self.source.path) if isinstance(self.source, FileSource) else None

    def _label(self) -> str:
        name = self.source_name
        return "the data frame" if name is None else repr(name)

    def _kinds_of(self, scan: str) -> dict[str, str]:
        """The DuckDB type of each column of ``scan`` (``"VARCHAR"``, ``"DOUBLE"``, ...)."""
        rel = self.con.sql(f"SELECT * FROM {scan} LIMIT 0")
        return {n: str(t) for n, t in zip(rel.columns, rel.types)}

    def _text(self, name: str, alias: str = "") -> str:
        """SQL: the text of the source's column ``name`` (read through ``alias``, e.g.
        ``"s."``) as the readers write it (:func:`text_of`)."""
        return text_of(f"{alias}{quoted(name)}", self._kinds.get(name, "VARCHAR"))

    def _copied(self, name: str, fmt: str) -> str:
        """SQL of a column a release copies from the source (``s``): as it is, but a float,
        time or timestamp column in a CSV release as its labels are written (``1`` for
        ``1.0``, a timestamp with a time zone in UTC) and a list, map or struct column as
        compact JSON, as the numpy engine writes them; Parquet keeps the type."""
        kind = self._kinds.get(name, "VARCHAR")
        if fmt != "parquet" and (kind in FLOATS or is_clock(kind)):
            return self._text(name, "s.")
        if fmt != "parquet" and nested_kind(kind):  # as the numpy engine writes it
            return f"CAST(to_json(s.{quoted(name)}) AS VARCHAR)"
        return f"s.{quoted(name)}"

    def _clean(self, name: str, source: Any) -> str:
        expr = text_of(quoted(name), self._kinds.get(name, "VARCHAR"))
        if isinstance(source, FileSource) and source.format == "csv":
            opts = source.csv
            if opts.strip:
                # trim(x, chars) costs twice trim(x) (spaces only): use it only when needed
                expr = (
                    f"CASE WHEN contains({expr}, '\t') OR contains({expr}, '\r') "
                    f"OR contains({expr}, '\n') THEN trim({expr}, ' \t\r\n') ELSE trim({expr}) END"
                )
            if opts.na_values:
                markers = ", ".join(literal(v) for v in opts.na_values)
                expr = f"CASE WHEN {expr} IN ({markers}) THEN NULL ELSE {expr} END"
        return expr

    def _check_cover(self, col: str, h: Hierarchy) -> None:
        """Refuse a value of ``col`` that ``h`` lacks, naming the first row holding one."""
        table = self._level_table(col, 0, h)
        lacking = (
            f"(SELECT DISTINCT {quoted(col)} AS v FROM src) s ANTI JOIN {table} h ON s.v = h.leaf "
            "WHERE s.v IS NOT NULL"
        )
        if not self._run(f"SELECT 1 FROM {lacking} LIMIT 1").fetchall():
            return
        others = int(self._run(f"SELECT count(*) FROM {lacking}").fetchall()[0][0]) - 1
        text = self._text(col)
        row, value = self._run(
            f"SELECT n.{quoted(ROW)}, {text} FROM {self._kept_rows()} n ANTI JOIN {table} h "
            f"ON {text} = h.leaf WHERE {text} IS NOT NULL ORDER BY n.{quoted(ROW)} LIMIT 1"
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
            self.con.register(name, level_table(h, level, import_optional("pyarrow")))
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
        for term in group_terms(self.hierarchies, columns, levels):
            col, j = quoted(term.column), term.index
            if term.level == 0:
                sel.append(f"{view}.{col} AS g{j}")
                continue
            t = self._level_table(term.column, term.level)
            joins.append(f"LEFT JOIN {t} AS t{j} ON {view}.{col} = t{j}.leaf")
            if term.root is not None:  # at the root a null is generalized too
                sel.append(f"coalesce(t{j}.label, {literal(term.root)}) AS g{j}")
            else:
                sel.append(f"t{j}.label AS g{j}")
        sel.extend(f"{view}.{quoted(c)} AS x{i}" for i, c in enumerate(extra))
        if not sel:
            sel = ["1 AS one"]
        source = view
        if numbered:
            sel.append(f"{view}.{quoted(RN)} AS rn")
            source = f"(SELECT *, row_number() OVER () AS {quoted(RN)} FROM {view}) AS {view}"
        return f"SELECT {', '.join(sel)} FROM {source} {' '.join(joins)}"

    @property
    def n_rows(self) -> int:
        """Number of rows (after dropping nulls, if asked)."""
        return self._n_rows

    @property
    def nested_columns(self) -> list[str]:
        """The list, array, map, struct and union columns of the data."""
        return [n for n in self._names if nested_kind(self._kinds.get(n, "VARCHAR"))]

    def _nested_kind(self, column: str) -> str:
        return self._kinds[column]

    def _copy_release(self, query: str, path: str | os.PathLike[str], options: str) -> int:
        """Run ``COPY (query) TO path`` (a release); return the rows written."""
        try:
            res = self.con.execute(f"COPY ({query}) TO {literal(str(path))} ({options})")
            written = res.fetchall()
        except self._duckdb.Error as exc:
            raise DataFormatError(
                f"Cannot write the release of {self._label()}: {summary(exc)}"
            ) from None
        return int(written[0][0]) if written and written[0] else 0

    def _run(self, sql: str) -> Any:
        try:
            return self.con.execute(sql)
        except self._duckdb.Error as exc:
            raise DataFormatError(f"Cannot read {self._label()}: {summary(exc)}") from None

    # ------------------------------------------------------------------ classes
    def _count_classes(self, cols: list[str], lv: tuple[int, ...]) -> npt.NDArray[np.int64]:
        """Class sizes with one ``GROUP BY`` (see :meth:`SqlEngine.class_sizes`)."""
        groups = ", ".join(group_names(len(cols)))
        res = self._run(f"SELECT count(*) AS n FROM ({self._base(cols, lv)}) GROUP BY {groups}")
        return np.asarray(res.fetchnumpy()["n"], dtype=np.int64)

    def _weight_classes(self, cols: list[str], lv: tuple[int, ...], weight: str) -> dict[str, Any]:
        """The weights per class with one ``GROUP BY`` (see :meth:`SqlEngine.weighted_class_sizes`).

        A numeric column of a typed source is read as it is (``src_numbers``; NaN is a
        missing weight, as its label is a null); a text column through ``TRY_CAST``, where a
        value that is no number adds nothing and is reported."""
        if weight in self._numbers:
            base = self._base(cols, lv, [self._numbers[weight]], view="src_numbers")
            value = "CASE WHEN isnan(CAST(x0 AS DOUBLE)) THEN NULL ELSE CAST(x0 AS DOUBLE) END"
            missing, bad = "v IS NULL", "NULL"
        else:
            base = self._base(cols, lv, [weight])
            value, missing = "TRY_CAST(x0 AS DOUBLE)", "x0 IS NULL"
            bad = "min(CAST(x0 AS VARCHAR)) FILTER (WHERE x0 IS NOT NULL AND v IS NULL)"
        group = f"GROUP BY {', '.join(group_names(len(cols)))}" if cols else ""
        res = self.con.sql(
            f"SELECT count(*) AS n, sum(v) AS w, count(*) FILTER (WHERE {missing}) AS missing, "
            f"min(v) AS lowest, {bad} AS bad "
            f"FROM (SELECT *, {value} AS v FROM ({base})) {group}"
        ).to_arrow_table()
        return {
            name: res.column(name).to_pylist()
            if name == "bad"
            else res.column(name).to_numpy(zero_copy_only=False)
            for name in ("n", "w", "missing", "lowest", "bad")
        }

    def _class_stats(
        self,
        cols: list[str],
        lv: tuple[int, ...],
        sensitive: list[str],
        with_rows: bool,
        with_keys: bool,
    ) -> ClassStats:
        """Class statistics of the source; classes are sorted by key."""
        return self._view_stats(
            cols, lv, sensitive, with_rows=with_rows, with_keys=with_keys, view="src"
        )

    def _view_stats(
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
        groups = ", ".join(group_names(m)) or "1"
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
                codes, labels = factorize_fetched(cls[f"g{j}"])
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
            vcodes, values = factorize_fetched(res["v"])
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
    def _distinct_counts(self, cols: list[str], rows: int | None) -> dict[str, int]:
        """The distinct values of each column in one scan (with ``rows``, among the first
        ``rows`` records DuckDB reads)."""
        parts = ", ".join(
            f"count(DISTINCT {quoted(c)}) + (count(*) > count({quoted(c)}))::BIGINT" for c in cols
        )
        source = "src" if rows is None else f"(SELECT * FROM src LIMIT {int(rows)})"
        row = self._run(f"SELECT {parts} FROM {source}").fetchall()[0]
        return {c: int(v) for c, v in zip(cols, row)}

    def _head(self, cols: list[str], rows: int) -> EncodedTable:
        """The first ``rows`` records DuckDB reads."""
        names = ", ".join(f"{quoted(c)} AS f{j}" for j, c in enumerate(cols)) or "1 AS one"
        try:
            res = self.con.sql(f"SELECT {names} FROM src LIMIT {int(rows)}").to_arrow_table()
        except self._duckdb.Error as exc:
            raise DataFormatError(f"Cannot read {self._label()}: {summary(exc)}") from None
        encoded = [encode_text(c, res.column(f"f{j}")) for j, c in enumerate(cols)]
        return EncodedTable(tuple(encoded), source=self.source_name)

    def _frequency_set(self, cols: list[str]) -> EncodedTable:
        """The distinct combinations of ``cols`` with their counts, one ``GROUP BY``."""
        names = ", ".join(f"{quoted(c)} AS f{j}" for j, c in enumerate(cols))
        groups = ", ".join(f"f{j}" for j in range(len(cols)))
        try:
            res = self.con.sql(
                f"SELECT {groups}, count(*) AS n FROM (SELECT {names} FROM src) GROUP BY {groups}"
            ).to_arrow_table()
        except self._duckdb.Error as exc:
            raise DataFormatError(f"Cannot read {self._label()}: {summary(exc)}") from None
        # each column dictionary-encoded by Arrow: the distinct labels become Python
        # objects, the combinations stay integer codes
        encoded = [encode_text(c, res.column(f"f{j}")) for j, c in enumerate(cols)]
        weights = np.asarray(res.column("n").to_numpy(), dtype=np.int64)
        return EncodedTable(tuple(encoded), source=self.source_name, weights=weights)

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
                f"COPY (SELECT *, row_number() OVER () - 1 AS {quoted(ROW)} FROM {self._raw}) "
                f"TO {literal(str(copy))} "
                f"(FORMAT parquet, ROW_GROUP_SIZE {ROW_GROUP_ROWS}, USE_TMP_FILE false)"
            )
            self._numbered_sql = f"read_parquet({literal(str(copy))})"
            return self._numbered_sql
        self._numbered_sql = (
            f"(SELECT * EXCLUDE (file_row_number), file_row_number AS {quoted(ROW)} "
            f"FROM read_parquet({literal(path)}, file_row_number = true))"
        )
        return self._numbered_sql

    def first_row(self, column: str, values: Sequence[str | None]) -> tuple[int, str | None] | None:
        """The first row whose ``column`` holds one of ``values`` and its value (see
        :meth:`Engine.first_row`), by the rows' positions in the source."""
        check_columns([column], self.columns)
        text = self._text(column)
        given = [v for v in values if v is not None]
        where = [f"{text} IN ({', '.join(literal(str(v)) for v in given)})"] if given else []
        if len(given) < len(values):
            where.append(f"{text} IS NULL")
        if not where:
            return None
        found = self._run(
            f"SELECT {quoted(ROW)}, {text} FROM {self._kept_rows()} WHERE {' OR '.join(where)} "
            f"ORDER BY {quoted(ROW)} LIMIT 1"
        ).fetchall()
        return (int(found[0][0]), found[0][1]) if found else None

    def _kept_rows(self) -> str:
        """SQL of the numbered rows the engine keeps (after ``drop_nulls``)."""
        # (a float's NaN is a null, as in the rows the questions see)
        where = " AND ".join(f"{self._text(c)} IS NOT NULL" for c in self._drop_nulls)
        return f"(SELECT * FROM {self._numbered()}{' WHERE ' + where if where else ''})"

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
