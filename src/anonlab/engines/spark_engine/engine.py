"""Class statistics computed by Apache Spark, in local mode or on a cluster.

Every question is a ``groupBy`` over a DataFrame of the data's columns as text (so labels
match the numpy engine and hierarchy files; missing-value markers of a CSV file become null, a
group of its own); a generalized column is joined to its hierarchy's level table (original
value -> label at the level), a table of one row per hierarchy value that is broadcast to
every executor, so the rows are never shuffled for it. Only the aggregates come back to the
driver, as Arrow: one row per class (and per class and sensitive value), never a row of the
data, except for the two questions whose answer is per row (``with_rows`` and
:meth:`SparkEngine.rows_in_small_classes`).

Many subsets at once (:meth:`SparkEngine.class_sizes_many`, the subset searches of the
diagnosis) are one Spark job per batch, a ``GROUP BY GROUPING SETS``.

Row positions follow the order of the DataFrame's partitions, as Spark reads them: for a CSV
or Parquet file, the file's order; for a frame, its order. Each row gets its position from
``monotonically_increasing_id()`` (its partition and its place there) and the number of rows
of the partitions before it, counted by one job the first time a question gives row positions
(anonymizing on the frequency set never does).

The algorithms that place individual rows run block by block (:meth:`SparkEngine.partitions`
and the staging methods after it, as DuckDB's engine runs them): the rows sorted by Spark into
Parquet parts the driver reads in blocks, each block's verified labels staged in a Parquet file,
the release written by joining them to the source by row position.

Classes are numbered as the numpy engine numbers them (the lexicographic order of their
codes, the columns taken in table order; a column's codes follow the natural order of its
values at level 0, the hierarchy's label order above), so both give the same arrays.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import warnings
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from anonlab._optional import import_optional
from anonlab._validation import check_columns, column_name
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.source import (
    NEVER_CLOSED,
    CsvOptions,
    FileSource,
    ends_inside_quotes,
    ragged_error,
)
from anonlab.data.stats import ClassStats
from anonlab.data.table import EncodedColumn, EncodedTable
from anonlab.engines.base import AttributeLevels, ReleasePlan
from anonlab.engines.spark_engine.blocks import SparkBlocks
from anonlab.engines.spark_engine.classes import SparkClasses, encode_labels, label_domain
from anonlab.engines.spark_engine.reading import (
    ROW_BITS,
    partition_starts,
    position_column,
    read_source,
)
from anonlab.engines.spark_engine.release import SparkRelease
from anonlab.engines.spark_engine.text import (
    MALFORMED,
    clean,
    is_spark_error,
    json_text,
    summary,
)
from anonlab.engines.sql import SqlEngine, group_names, group_terms, level_table
from anonlab.engines.staging import (
    encode_text,
)
from anonlab.exceptions import (
    DataFormatError,
    HierarchyError,
    InputError,
    OptionalDependencyError,
    ParameterError,
)
from anonlab.io.temporary import at_exit, discard, make_folder

__all__ = ["SparkEngine", "check_master", "spark_session", "LOCAL_MASTER"]

#: The master of the session the engine makes when given none: Spark on this machine, 2 cores.
LOCAL_MASTER = "local[2]"
#: The JVM heap of a session the engine starts in local mode (``spark.driver.memory``).
LOCAL_MEMORY = "2g"
#: Subsets per Spark job in :meth:`SparkEngine.class_sizes_many` (each is a grouping set).
BATCH_SUBSETS = 32
NEVER = "\x1e\x1f"  # a null marker that never occurs: nulls are decided by na_values
_LOG_CONFIG = Path(__file__).with_name("log4j2.properties")


def _local_config() -> dict[str, str]:
    """Settings of a session in local mode: a bounded heap, small shuffles, no web UI, no
    progress bars."""
    return {
        # the driver is the executor: its heap holds the data Spark keeps; the JVM's own
        # default (a quarter of the machine's memory) lets it grow far beyond what it needs
        "spark.driver.memory": LOCAL_MEMORY,
        "spark.sql.shuffle.partitions": "4",
        "spark.default.parallelism": "2",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # the parallel collector: less CPU than the default G1 for Spark's short-lived rows
        # (about 15-25 % less for a groupBy on 2 cores), and pauses do not matter in a batch
        "spark.driver.extraJavaOptions": f"-XX:+UseParallelGC {_quiet_logs()}",
    }


def _quiet_logs() -> str:
    """The JVM option that makes Spark log errors only (see ``log4j2.properties``)."""
    return f"-Dlog4j2.configurationFile={_LOG_CONFIG.as_uri()}"


def _java_error(detail: str = "") -> OptionalDependencyError:
    return OptionalDependencyError(
        "The Spark engine needs Java 17 or later"
        f"{detail}: install a JDK (e.g. openjdk-17-jre-headless) and set JAVA_HOME to it, "
        "or put its java on PATH."
    )


def _check_java() -> None:
    """Raise :class:`OptionalDependencyError` if no ``java`` is to be found."""
    home = os.environ.get("JAVA_HOME")
    if home:
        if not (Path(home) / "bin" / "java").exists():
            raise _java_error(f"; JAVA_HOME={home!r} holds no bin/java")
        return
    if shutil.which("java") is None:
        raise _java_error(", and none was found (no JAVA_HOME, no java on PATH)")


#: Seconds :func:`check_master` waits for a standalone master or Kubernetes to answer.
PROBE_TIMEOUT = 3.0
_LOCAL_MASTER = re.compile(r"local(\[(\*|[1-9][0-9]*)(, *[1-9][0-9]*)?\])?")
_LOCAL_CLUSTER = re.compile(r"local-cluster\[[1-9][0-9]*, *[1-9][0-9]*, *[1-9][0-9]*\]")
_MASTER_FORMS = (
    "spark://HOST:PORT (a standalone cluster, e.g. spark://host:7077), local, local[N] or "
    "local[*] (this machine), yarn, or k8s://https://HOST:PORT (Kubernetes)"
)


def check_master(master: str, timeout: float = PROBE_TIMEOUT) -> None:
    """Refuse, before Java starts, a master URL Spark does not take, and a standalone
    master or Kubernetes API server that does not answer.

    A standalone master (``spark://host:port``, several ``host:port`` separated by commas
    for a master with standbys) or a Kubernetes API server (``k8s://https://host:port``) is
    reached with a TCP connection of at most ``timeout`` seconds per address; ``local``,
    ``local[N]``, ``local[*]``, ``local-cluster[...]`` and ``yarn`` (whose address is in
    Hadoop's configuration) are taken as they are.

    Parameters
    ----------
    master : str
        The master URL.
    timeout : float
        Seconds to wait for each address to answer.

    Raises
    ------
    ParameterError
        Not a master URL (the message lists the forms Spark takes).
    InputError
        No address of the master answers (the message says why: nothing listens there, no
        answer in time, an unknown host).

    Examples
    --------
    >>> check_master("local[4]")
    >>> check_master("spark:/host:7077")
    Traceback (most recent call last):
    ...
    anonlab.exceptions.ParameterError: The Spark master 'spark:/host:7077' is not a master URL: give spark://HOST:PORT (a standalone cluster, e.g. spark://host:7077), local, local[N] or local[*] (this machine), yarn, or k8s://https://HOST:PORT (Kubernetes).
    """
    text = master.strip() if isinstance(master, str) else ""
    bad = ParameterError(f"The Spark master {master!r} is not a master URL: give {_MASTER_FORMS}.")
    if text == "yarn" or _LOCAL_MASTER.fullmatch(text) or _LOCAL_CLUSTER.fullmatch(text):
        return
    if text.startswith("spark://"):
        addresses = [_host_port(a, None) for a in text[len("spark://") :].split(",")]
    elif text.startswith("k8s://") and len(text) > len("k8s://"):
        api = text[len("k8s://") :]
        addresses = [_host_port(api if "://" in api else "https://" + api, 443)]
    else:
        raise bad
    if any(a is None for a in addresses):
        raise bad
    reasons = []
    for host, port in (a for a in addresses if a is not None):
        try:
            socket.create_connection((host, port), timeout=timeout).close()
            return
        except socket.gaierror:
            reasons.append(f"{host!r} is not a host this machine knows")
        except TimeoutError:
            reasons.append(f"{host} port {port} gave no answer within {timeout:g} s")
        except OSError as exc:
            why = "nothing listens there" if isinstance(exc, ConnectionRefusedError) else exc
            reasons.append(f"{host} port {port}: {why}")
    raise InputError(
        f"Cannot reach the Spark master {master!r}: {'; '.join(reasons)}. Start the master, "
        "or give the address it prints (spark://HOST:PORT), or run Spark on this machine "
        "(local[*]). Nothing was started."
    )


def _host_port(address: str, default_port: int | None) -> tuple[str, int] | None:
    """``(host, port)`` of ``host:port`` or of a URL (``https://host:port``), None if it
    names no host or no valid port (and there is no default)."""
    parsed = urlsplit(address if "://" in address else "//" + address)
    try:
        port = parsed.port if parsed.port is not None else default_port
    except ValueError:  # not a number, or out of range
        return None
    if not parsed.hostname or port is None or parsed.path not in ("", "/"):
        return None
    return parsed.hostname, port


def spark_session(master: str | None = None, config: Mapping[str, str] | None = None) -> Any:
    """Return a SparkSession for the engine: the active one, or a new one at ``master``.

    Parameters
    ----------
    master : str, optional
        Where Spark runs, e.g. ``"spark://host:7077"``, ``"yarn"`` or ``"local[4]"``.
        Default: the session already active in this process if there is one, else
        :data:`LOCAL_MASTER` (local mode, 2 cores, quiet logging, 4 shuffle partitions).
    config : Mapping[str, str], optional
        Further Spark settings for a new session, e.g. ``{"spark.driver.memory": "4g"}``.

    Returns
    -------
    pyspark.sql.SparkSession

    Notes
    -----
    A new session in local mode keeps Spark's own scratch files (shuffle and spill files,
    cached blocks of the data) in a private folder ``anonlab-spark-local.anonlab-tmp.*`` of
    the system's temporary folder (``TMPDIR``), unless ``spark.local.dir`` or
    ``SPARK_LOCAL_DIRS`` names another. A new session is stopped when Python exits, before
    anonlab's temporary folders are removed (see :mod:`anonlab.io.temporary`).

    Raises
    ------
    OptionalDependencyError
        pyspark is not installed (the extra ``spark``), or Java 17+ is not found or cannot
        start.
    ParameterError
        A session is already active at another master, or ``master`` is not a master URL.
    InputError
        The master does not answer (:func:`check_master`), or Spark could not start a
        session at it.
    """
    if master is not None:
        check_master(master)
    sql = import_optional("pyspark.sql", feature="the Spark engine")
    active = sql.SparkSession.getActiveSession()
    if active is not None:
        running = active.sparkContext.master
        if master is not None and master != running:
            raise ParameterError(
                f"A Spark session is already running at {running!r}; cannot start one at "
                f"{master!r} in the same process. Stop it first, or pass it as spark=."
            )
        return active
    _check_java()
    builder = sql.SparkSession.builder.master(master or LOCAL_MASTER).appName("anonlab")
    local = (master or LOCAL_MASTER).startswith("local")
    settings = dict(_local_config()) if local else {}
    if not settings:  # on a cluster: its own defaults, quiet driver and Arrow transfers
        settings = {
            k: v
            for k, v in _local_config().items()
            if k.startswith(("spark.ui.showConsole", "spark.sql.execution"))
        }
        settings["spark.driver.extraJavaOptions"] = _quiet_logs()
    settings.update(config or {})
    made: Path | None = None
    if local and "spark.local.dir" not in settings and not os.environ.get("SPARK_LOCAL_DIRS"):
        # Spark's own scratch (shuffle and spill files, cached blocks, pyspark's copies of a
        # frame): a private folder of anonlab's, removed at exit, or by the next run if killed
        made = make_folder("anonlab-spark-local")
        settings["spark.local.dir"] = str(made)
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # pyspark on a newer pandas
            session = builder.getOrCreate()
    except Exception as exc:  # the JVM did not start: PySparkRuntimeError JAVA_GATEWAY_EXITED
        if made is not None:
            discard(made)
        text = str(exc)
        if "JAVA_GATEWAY_EXITED" in text or "Java gateway" in text:
            raise _java_error(" (java did not start: too old, or not a JDK?)") from None
        if not is_spark_error(exc):
            raise
        raise InputError(  # the master refused the application, say, or Spark gave up
            f"Spark could not start a session at {master or LOCAL_MASTER!r}: {summary(exc)}"
        ) from None
    # stopped when Python exits, before the temporary folders it may still write into go
    at_exit(session.stop)
    return session


class SparkEngine(SqlEngine):
    """Class statistics of a CSV or Parquet file, a frame or a Spark DataFrame, by Spark.

    Parameters
    ----------
    source : FileSource, str, path, Spark DataFrame, EncodedTable, pyarrow Table or DataFrame
        The data. A path (local, or a URI such as ``hdfs://...`` or ``s3a://...`` that the
        cluster reads) is read by Spark's CSV or Parquet reader after its suffix; a pandas or
        polars frame, an Arrow table or an :class:`~anonlab.data.EncodedTable` is handed to
        Spark; a Spark DataFrame is used as it is (``persist()`` it first if computing it is
        costly: every question reads it again).
    hierarchies : Mapping[str, Hierarchy], optional
        Hierarchies per column; checked to cover the column's values.
    spark : pyspark.sql.SparkSession, optional
        The session to use (default: :func:`spark_session` with ``master`` and ``config``).
    master : str, optional
        Where a new session runs (the command line's ``--spark-master``); default local
        mode, 2 cores.
    config : Mapping[str, str], optional
        Spark settings of a new session.
    csv_options : CsvOptions, optional
        Parsing options when ``source`` is a CSV path: the separator, header, quote (doubled
        inside a quoted field), encoding, missing-value markers and stripping of anonlab's
        reader. Spark replaces bytes that are not valid in the encoding instead of refusing
        them; a ``.gz`` file is read whole by one task (gzip cannot be split).
    drop_nulls : sequence of str or bool, optional
        Drop the rows with a null in any of these columns (True: in any column).
    batch_size : int
        Subsets per Spark job in :meth:`class_sizes_many`.
    scratch : str or path, optional
        The folder of the engine's scratch files (the rows sorted into blocks, the blocks'
        staged labels) when it runs the algorithms that place individual rows; default the
        system's temporary folder. On a cluster give a folder that the executors write and
        the driver reads (a shared file system mounted at the same path).

    Notes
    -----
    A CSV file and a frame are parsed and cleaned once and kept by Spark (memory, then its
    local disks) for every question; :meth:`close` releases them. A session the engine made
    is left running for the next engine of the process (starting one costs seconds): stop it
    with ``spark_session().stop()``.

    Examples
    --------
    >>> with SparkEngine("people.parquet") as engine:  # doctest: +SKIP
    ...     sizes = engine.class_sizes(["age", "sex"])
    """

    name = "spark"
    _writer: SparkRelease
    _blocks: SparkBlocks

    def __init__(
        self,
        source: Any,
        hierarchies: Mapping[str, Hierarchy] | None = None,
        *,
        spark: Any = None,
        master: str | None = None,
        config: Mapping[str, str] | None = None,
        csv_options: CsvOptions | None = None,
        drop_nulls: Sequence[str] | bool | None = None,
        batch_size: int = BATCH_SUBSETS,
        scratch: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(hierarchies)
        self._F = import_optional("pyspark.sql.functions", feature="the Spark engine")
        self._pa = import_optional("pyarrow")
        self.spark = spark if spark is not None else spark_session(master, config)
        self.batch_size = max(1, int(batch_size))
        self._persisted: list[Any] = []
        self._levels: dict[tuple[str, int], Any] = {}
        self._sizes: dict[tuple[tuple[str, int], ...], npt.NDArray[np.int64]] = {}
        self._label = "the data frame"
        self._source_path: str | None = None
        #: a CSV file Spark reads whole (one task): its end is checked (see _open)
        self._whole_csv: FileSource | None = None
        #: a CSV file on this machine (a malformed row is looked for in it, see _guard)
        self._csv_file: FileSource | None = None
        if scratch is not None and not Path(scratch).is_dir():
            raise InputError(f"The scratch folder {str(scratch)!r} is not a directory.")
        self._scratch_in = None if scratch is None else Path(scratch)
        self._tmp: Path | None = None  # the engine's scratch folder, made when first needed
        self._writer = SparkRelease(self)
        self._blocks = SparkBlocks(self)
        self._classes = SparkClasses(self)
        try:
            self._open(source, csv_options, drop_nulls)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ reading
    def _open(
        self, source: Any, csv_options: CsvOptions | None, drop_nulls: Sequence[str] | bool | None
    ) -> None:
        F = self._F
        if isinstance(source, (str, os.PathLike)) and "://" not in str(source):
            source = FileSource(Path(source), csv=csv_options or CsvOptions())
        raw, names, csv, persist, typed = read_source(
            self,
            source,
            csv_options,
            import_optional("pyspark.sql", feature="the Spark engine"),
            import_optional("pyspark.sql.types", feature="the Spark engine"),
        )
        names = [column_name(n) for n in names]  # as every name is compared (Unicode NFC)
        self._names: list[str] = names
        #: the source with its columns' own types, for releases (None: the cleaned text)
        self._typed: Callable[[], Any] | None = typed
        self._internal = {n: f"c{i}" for i, n in enumerate(names)}
        types = {f.name: f.dataType.typeName() for f in raw.schema.fields}
        #: columns of list, map or struct type: carried, never grouped on
        self._nested = {
            n: types[f"c{i}"]
            for i, n in enumerate(names)
            if types[f"c{i}"] in ("array", "map", "struct")
        }
        cols = [
            raw[f"c{i}"]
            if n in self._nested
            else self._clean(f"c{i}", types[f"c{i}"], csv).alias(f"c{i}")
            for i, n in enumerate(names)
        ]
        data = raw.select(*cols)
        self._drop: list[str] = []
        if drop_nulls:
            self._drop = list(names) if drop_nulls is True else list(drop_nulls)
            self.validate(self._drop, None)
            for c in self._drop:
                data = data.where(F.col(self._internal[c]).isNotNull())
        data = data.withColumn("mid", F.monotonically_increasing_id())
        if persist:
            data = data.persist()
            self._persisted.append(data)
        self._data = data
        if self._whole_csv is not None:
            # Spark reads a file that ends inside a quoted field without a word, the rest
            # of the file as the last value: its last row is looked at (which fills the
            # cache; before any row is dropped, the raw one)
            frame = raw if self._drop else data
            rows = self._guard(lambda: frame.select(f"c{len(names) - 1}").tail(1))
            path, opts = self._whole_csv.path, self._whole_csv.csv
            if rows and ends_inside_quotes(path, opts, rows[0][0]):
                raise DataFormatError(f"Cannot parse CSV file {str(path)!r}: {NEVER_CLOSED}.")
        #: the number of rows, once a question has counted them (see :attr:`n_rows`)
        self._n_rows: int | None = None
        #: rows of the partitions before each partition, once a row position is asked
        self._offsets: npt.NDArray[np.int64] | None = None
        for col, h in self.hierarchies.items():
            if col in self._internal:
                self._check_cover(col, h)

    def _frame(self, arrow: Any) -> Any:
        """A Spark DataFrame of an Arrow table."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # pyspark on a newer pandas
            try:
                return self.spark.createDataFrame(arrow)
            except TypeError:  # pragma: no cover - pyspark < 4 takes pandas, not Arrow
                return self.spark.createDataFrame(arrow.to_pandas())

    def _clean(self, name: str, kind: str, csv: CsvOptions | None) -> Any:
        """The text of column ``name`` (of Spark type ``kind``) as anonlab's readers make it
        (see :func:`~anonlab.engines.spark_engine.text.clean`)."""
        return clean(self._F, name, kind, csv)

    def _guard(self, action: Callable[[], Any], what: str = "read") -> Any:
        """Run a Spark call; its failure becomes a one-line DataFormatError ("Cannot
        ``what`` <the data>: <Spark's reason>")."""
        try:
            return action()
        except Exception as exc:
            if not is_spark_error(exc):
                raise
            reason = summary(exc)
            csv = getattr(self, "_csv_file", None)
            if reason.startswith(MALFORMED) and csv is not None:
                ragged = ragged_error(csv.path, csv.csv)  # as every engine says it
                if ragged is not None:
                    raise ragged from None
            raise DataFormatError(f"Cannot {what} {self._label}: {reason}") from None

    def _collect(self, frame: Any) -> Any:
        """The rows of ``frame`` on the driver, as an Arrow table."""

        def run() -> Any:
            if hasattr(frame, "toArrow"):
                return frame.toArrow()
            return self._pa.Table.from_batches(frame._collect_as_arrow())  # pyspark 3.5

        return self._guard(run)

    def close(self) -> None:
        """Release the data the engine keeps in Spark; the session stays for reuse.

        Closing twice does nothing; the engine cannot answer questions afterwards.
        """
        for frame in self._persisted:
            try:
                frame.unpersist()
            except Exception:  # pragma: no cover - a session stopped meanwhile
                pass
        self._persisted = []
        self.clear_staged()
        if self._tmp is not None:
            discard(self._tmp)
            self._tmp = None

    # ------------------------------------------------------------------ hierarchies
    def _level_table(self, col: str, level: int) -> Any:
        """The DataFrame (``leaf``, ``label``) of ``col``'s hierarchy at ``level``."""
        key = (col, level)
        table = self._levels.get(key)
        if table is None:
            table = self._frame(level_table(self.hierarchies[col], level, self._pa))
            self._levels[key] = table
        return table

    def _check_cover(self, col: str, h: Hierarchy) -> None:
        """Refuse a value of ``col`` that ``h`` lacks, naming the first row holding one."""
        F = self._F
        c = self._internal[col]
        table = self._level_table(col, 0)
        values = self._data.select(c).where(F.col(c).isNotNull()).distinct()
        lacking = values.join(F.broadcast(table), F.col(c) == table["leaf"], "left_anti")
        if not self._collect(lacking.limit(1)).num_rows:
            return
        others = int(self._guard(lacking.count)) - 1
        first = self._collect(
            self._data.where(F.col(c).isNotNull())
            .join(F.broadcast(table), F.col(c) == table["leaf"], "left_anti")
            .orderBy("mid")
            .limit(1)
            .select("mid", c)
        )
        row = int(self._positions(first.column("mid"))[0]) + 1
        raise HierarchyError(
            f"Value {first.column(c)[0].as_py()!r}{f' and {others} more' if others else ''} "
            f"of attribute {col!r} is not in its hierarchy"
            f"{' file ' + repr(h.source) if h.source else ''} (row {row})."
        )

    def _base(
        self,
        columns: Sequence[str],
        levels: Sequence[int],
        extra: Sequence[str] = (),
        *,
        mid: bool = False,
    ) -> Any:
        """The data with generalized columns ``g0..`` (each at its level), the raw
        ``extra`` columns ``x0..`` and, if asked, the row id ``mid``."""
        F = self._F
        frame = self._data
        sel = []
        for term in group_terms(self.hierarchies, columns, levels):
            c, j = self._internal[term.column], term.index
            if term.level == 0:
                sel.append(F.col(c).alias(f"g{j}"))
                continue
            table = self._level_table(term.column, term.level).toDF(f"l{j}", f"t{j}")
            frame = frame.join(F.broadcast(table), F.col(c) == F.col(f"l{j}"), "left")
            label = F.col(f"t{j}")
            if term.root is not None:  # at the root a null is generalized too
                label = F.coalesce(label, F.lit(term.root))
            sel.append(label.alias(f"g{j}"))
        sel.extend(F.col(self._internal[x]).alias(f"x{i}") for i, x in enumerate(extra))
        if mid:
            sel.append(F.col("mid"))
        return frame.select(*sel) if sel else frame.select(F.lit(1).alias("one"))

    # ------------------------------------------------------------------ interface
    @property
    def source_name(self) -> str | None:
        """The file or URI Spark reads (None for a frame)."""
        return self._source_path

    @property
    def n_rows(self) -> int:
        """Number of rows (after dropping nulls, if asked).

        Counted by the first question that reads every row (a frequency set, class
        statistics), else by a count of its own (a Parquet file's footers suffice).
        """
        if self._n_rows is None:
            self._n_rows = int(self._guard(self._data.count))
        return self._n_rows

    def _row_offsets(self) -> npt.NDArray[np.int64]:
        """The position of the first row of each partition (one job, the first time a
        question gives row positions)."""
        if self._offsets is None:
            self._offsets, self._n_rows = partition_starts(
                self._F, self._collect, self._data, "mid"
            )
        return self._offsets

    def _with_positions(self, frame: Any, name: str) -> tuple[Any, int]:
        """``frame`` with each row's position in it (the order Spark reads it in) as column
        ``name``, and its rows: one job counts them per partition. ``frame`` must read its
        rows in the same partitions each time (a file, or a persisted frame)."""
        F = self._F
        numbered = frame.withColumn("_anonlab_mid", F.monotonically_increasing_id())
        starts, n = partition_starts(F, self._collect, numbered, "_anonlab_mid")
        positioned = numbered.withColumn(name, position_column(F, F.col("_anonlab_mid"), starts))
        return positioned.drop("_anonlab_mid"), n

    @property
    def nested_columns(self) -> list[str]:
        """The list, map and struct columns of the data."""
        return [n for n in self._names if n in getattr(self, "_nested", {})]

    def _nested_kind(self, column: str) -> str:
        return str(self._nested[column])

    def _count_classes(self, cols: list[str], lv: tuple[int, ...]) -> npt.NDArray[np.int64]:
        """Class sizes with one ``groupBy`` (see :meth:`SqlEngine.class_sizes`)."""
        groups = group_names(len(cols))
        res = self._collect(self._base(cols, lv).groupBy(*groups).count().select("count"))
        return np.asarray(res.column("count").to_numpy(), dtype=np.int64)

    def _weight_classes(self, cols: list[str], lv: tuple[int, ...], weight: str) -> dict[str, Any]:
        """The weights per class with one ``groupBy`` (see :meth:`SqlEngine.weighted_class_sizes`;
        a weight that is no number adds nothing: ``try_cast``)."""
        F = self._F
        frame = self._base(cols, lv, [weight])
        raw = F.col("x0")
        value = F.expr("try_cast(x0 AS DOUBLE)")
        aggregates = [
            F.count(F.lit(1)).alias("n"),
            F.sum(value).alias("w"),
            F.sum(F.when(raw.isNull(), 1).otherwise(0)).alias("missing"),
            F.min(value).alias("lowest"),
            F.min(F.when(raw.isNotNull() & value.isNull(), raw.cast("string"))).alias("bad"),
        ]
        grouped = (
            frame.groupBy(*group_names(len(cols))).agg(*aggregates)
            if cols
            else frame.agg(*aggregates)
        )
        res = self._collect(grouped.select("n", "w", "missing", "lowest", "bad"))
        return {
            name: res.column(name).to_pylist()
            if name == "bad"
            else res.column(name).to_numpy(zero_copy_only=False)
            for name in ("n", "w", "missing", "lowest", "bad")
        }

    def class_sizes_many(
        self,
        subsets: Iterable[Sequence[str]],
        levels: AttributeLevels | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> list[npt.NDArray[np.int64]]:
        """Return :meth:`class_sizes` of each subset, a batch of subsets per Spark job.

        A batch is one ``GROUP BY GROUPING SETS`` over the union of its subsets' columns:
        one scan of the data instead of one per subset.

        Parameters
        ----------
        subsets : iterable of sequence of str
            The column subsets.
        levels : Mapping[str, int], optional
            Hierarchy level per column (one level per column for every subset).
        progress : callable, optional
            Called as ``progress(1)`` after each subset.

        Returns
        -------
        list of ndarray of int64
            The class sizes of each subset, in the order given.
        """
        subsets = [list(s) for s in subsets]
        levels = dict(levels or {})
        keys = []
        for s in subsets:
            lv = self.validate(s, {c: v for c, v in levels.items() if c in s})
            keys.append(tuple(sorted(zip(s, lv))))
        todo = list(dict.fromkeys(k for k in keys if k and k not in self._sizes))
        for start in range(0, len(todo), self.batch_size):
            self._classes.grouping_sets(todo[start : start + self.batch_size])
        out = []
        for s, key in zip(subsets, keys):
            out.append(self.class_sizes(s, dict(key)))
            if progress is not None:
                progress(1)
        return out

    def _base_pairs(self, pairs: Sequence[tuple[str, int]]) -> Any:
        """:meth:`_base` of (column, level) pairs, where a column may come at two levels."""
        return self._base([c for c, _ in pairs], [lv for _, lv in pairs])

    def _class_stats(
        self,
        cols: list[str],
        lv: tuple[int, ...],
        sensitive: list[str],
        with_rows: bool,
        with_keys: bool,
    ) -> ClassStats:
        """Class statistics (see :meth:`SparkClasses.class_stats`)."""
        return self._classes.class_stats(cols, lv, sensitive, with_rows, with_keys)

    def _positions(self, mids: Any) -> npt.NDArray[np.int64]:
        """Row positions of the ids ``monotonically_increasing_id()`` gave the rows."""
        mid = np.asarray(mids.to_numpy(), dtype=np.int64)
        out: npt.NDArray[np.int64] = self._row_offsets()[mid >> ROW_BITS] + (
            mid & ((1 << ROW_BITS) - 1)
        )
        return out

    def first_row(self, column: str, values: Sequence[str | None]) -> tuple[int, str | None] | None:
        """The first row whose ``column`` holds one of ``values`` and its value (see
        :meth:`Engine.first_row`): the one with the least row id."""
        F = self._F
        check_columns([column], self.columns)
        col = F.col(self._internal[column])
        given = [str(v) for v in values if v is not None]
        where = [col.isin(given)] if given else []
        if len(given) < len(values):
            where.append(col.isNull())
        if not where:
            return None
        cond = where[0] if len(where) == 1 else where[0] | where[1]
        found = self._collect(
            self._data.where(cond).orderBy("mid").limit(1).select("mid", col.alias("v"))
        )
        if not found.num_rows:
            return None
        return int(self._positions(found.column("mid"))[0]), found.column("v")[0].as_py()

    def rows_in_small_classes(
        self, columns: Sequence[str], levels: AttributeLevels | None, k: int
    ) -> npt.NDArray[np.int64]:
        """Return row positions in classes smaller than ``k`` (see
        :meth:`SparkClasses.rows_in_small_classes`)."""
        cols = list(columns)
        return self._classes.rows_in_small_classes(cols, self.validate(cols, levels), k)

    # ------------------------------------------------------------------ out of core
    def _distinct_counts(self, cols: list[str], rows: int | None) -> dict[str, int]:
        """The distinct values of each column (a null counts as one), in one job.

        Each column's distinct values are found apart (a ``DISTINCT`` of that column alone,
        on its own type: a Parquet file reads just that column), made text as the
        questions see them, and counted: no row is copied once per column. A list, map or
        struct column (never an attribute, but a column the identifying-column check looks
        at, as DuckDB's engine does) is counted by its JSON text. With ``rows``, among
        ``rows`` records (Spark's ``limit``: the same records for every column).
        """
        F = self._F
        rows_of, text = self._source()
        if rows is not None:  # (the columns' few records, read once and kept for the job)
            rows_of = rows_of.select(*[self._internal[c] for c in cols]).limit(int(rows))
            rows_of = rows_of.localCheckpoint()
        each = []
        for j, name in enumerate(cols):
            c = self._internal[name]
            if name in self._nested:
                part = rows_of.select(json_text(F, F.col(c)).alias("v")).distinct()
            else:
                part = rows_of.select(c).distinct().select(text(c).alias("v"))
            each.append(part.select(F.lit(j).alias("j"), "v"))
        values = each[0]
        for part in each[1:]:
            values = values.unionByName(part)
        counts = self._collect(
            values.groupBy("j").agg(
                (F.countDistinct("v") + F.max(F.col("v").isNull().cast("long"))).alias("n")
            )
        )
        found = dict(zip(counts.column("j").to_pylist(), counts.column("n").to_pylist()))
        return {c: int(found[j]) for j, c in enumerate(cols)}

    def _head(self, cols: list[str], rows: int) -> EncodedTable:
        """``rows`` records (Spark's ``limit``, the records :meth:`distinct_counts` with
        ``rows`` counts among)."""
        F = self._F
        res = self._collect(
            self._data.select(
                *[F.col(self._internal[c]).alias(f"f{j}") for j, c in enumerate(cols)]
            ).limit(int(rows))
        )
        encoded = [encode_text(c, res.column(f"f{j}")) for j, c in enumerate(cols)]
        return EncodedTable(tuple(encoded), source=self._source_path)

    def _frequency_set(self, cols: list[str]) -> EncodedTable:
        """The distinct combinations of ``cols`` with their counts, one ``groupBy``."""
        F = self._F
        res = self._collect(
            self._data.groupBy(
                *[F.col(self._internal[c]).alias(f"f{j}") for j, c in enumerate(cols)]
            ).count()
        )
        encoded = []
        for j, c in enumerate(cols):
            labels = label_domain(res.column(f"f{j}"), natural=True)
            codes = encode_labels(self._pa, res.column(f"f{j}"), labels).astype(np.int32)
            encoded.append(EncodedColumn(c, codes, labels))
        weights = np.asarray(res.column("count").to_numpy(), dtype=np.int64)
        if self._n_rows is None:  # every row is in one combination
            self._n_rows = int(weights.sum())
        return EncodedTable(tuple(encoded), source=self._source_path, weights=weights)

    def _source(self) -> tuple[Any, Callable[[str], Any]]:
        """The rows with their columns' own types (``c0..``; the rows the questions see,
        nulls dropped as asked) and the expression that makes a column the text the
        questions group on."""
        F = self._F
        if self._typed is None:  # text already cleaned (a CSV, a frame of text)
            return self._data.drop("mid"), F.col
        rows = self._typed()
        kinds = {f.name: f.dataType.typeName() for f in rows.schema.fields}

        def text(c: str) -> Any:
            return self._clean(c, kinds[c], None)

        for d in self._drop:
            rows = rows.where(text(self._internal[d]).isNotNull())
        return rows, text

    def _scratch(self) -> Path:
        """The engine's scratch folder (sorted blocks, staged labels), a new private folder
        ``anonlab-spark.anonlab-tmp.HOST.PID.*`` in ``scratch`` (default: the system's
        temporary folder), removed by :meth:`close`, when the engine is collected or Python
        exits, or by the next run there if this one is killed."""
        if self._tmp is None:
            self._tmp = make_folder("anonlab-spark", self._scratch_in)
            weakref.finalize(self, discard, self._tmp)
        return self._tmp

    # ------------------------------------------------- releases and partitions
    def release_frame(self, plan: ReleasePlan) -> Any:
        """The release ``plan`` describes, as a Spark DataFrame (nothing is computed yet;
        see :meth:`SparkRelease.release_frame`)."""
        return self._writer.release_frame(plan)
