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

import contextlib
import dataclasses
import gzip
import os
import re
import shutil
import socket
import tempfile
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from anonlab._optional import import_optional
from anonlab._validation import check_columns, column_name
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.labels import UTC_SUFFIX, factorize
from anonlab.data.source import (
    NEVER_CLOSED,
    CsvOptions,
    FileSource,
    ends_inside_quotes,
    header_names,
    infer_format,
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
from anonlab.exceptions import (
    DataFormatError,
    HierarchyError,
    InputError,
    OptionalDependencyError,
    ParameterError,
)
from anonlab.io.atomic import PARQUET_DATASET
from anonlab.io.temporary import at_exit, discard, make_folder
from anonlab.io.writers import csv_header

__all__ = ["SparkEngine", "check_master", "spark_session", "LOCAL_MASTER"]

#: The master of the session the engine makes when given none: Spark on this machine, 2 cores.
LOCAL_MASTER = "local[2]"
#: The JVM heap of a session the engine starts in local mode (``spark.driver.memory``).
LOCAL_MEMORY = "2g"
#: Subsets per Spark job in :meth:`SparkEngine.class_sizes_many` (each is a grouping set).
BATCH_SUBSETS = 32
#: Bits of ``monotonically_increasing_id()`` that number a row within its partition.
_ROW_BITS = 33
_NEVER = "\x1e\x1f"  # a null marker that never occurs: nulls are decided by na_values
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
        if not _is_spark_error(exc):
            raise
        raise InputError(  # the master refused the application, say, or Spark gave up
            f"Spark could not start a session at {master or LOCAL_MASTER!r}: {_summary(exc)}"
        ) from None
    # stopped when Python exits, before the temporary folders it may still write into go
    at_exit(session.stop)
    return session


class SparkEngine(Engine):
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
        if scratch is not None and not Path(scratch).is_dir():
            raise InputError(f"The scratch folder {str(scratch)!r} is not a directory.")
        self._scratch_in = None if scratch is None else Path(scratch)
        self._tmp: Path | None = None  # the engine's scratch folder, made when first needed
        self._staged: list[Path] = []  # per-partition labels, one Parquet file per block
        self._staged_rows = 0
        self._staged_kept = 0
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
        raw, names, csv, persist, typed = self._read(source, csv_options)
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

    def _read(
        self, source: Any, csv_options: CsvOptions | None
    ) -> tuple[Any, list[str], CsvOptions | None, bool, Callable[[], Any] | None]:
        """The source as a DataFrame with columns ``c0..``, its names, the CSV options whose
        markers apply, whether to keep it (parsed once) and, when the DataFrame holds text
        made from typed columns, how to make the typed one (for releases)."""
        sql = import_optional("pyspark.sql", feature="the Spark engine")
        types = import_optional("pyspark.sql.types", feature="the Spark engine")
        reader = self.spark.read
        #: a CSV file Spark reads whole (one task): its end is checked (see _open)
        self._whole_csv: FileSource | None = None
        #: a CSV file on this machine (a malformed row is looked for in it, see _guard)
        self._csv_file: FileSource | None = None
        if isinstance(source, FileSource):
            path = source.path
            self._label = repr(str(path))
            self._source_path = str(path)
            if path.is_dir():
                raise InputError(f"The data file {str(path)!r} is a directory; give a file.")
            if not path.exists():
                raise InputError(f"Data file {str(path)!r} does not exist.")
            if source.format == "parquet":
                raw = self._guard(lambda: reader.parquet(str(path.resolve())))
                names = list(raw.columns)
                renamed = raw.toDF(*_internal(names))
                return renamed, names, None, False, lambda: renamed
            opts = source.csv
            self._csv_file = source
            names = header_names(path, opts)
            schema = types.StructType(
                [types.StructField(c, types.StringType()) for c in _internal(names)]
            )
            # one task reads a gzipped file, or one under Spark's split size, anyway: let
            # its quoted fields hold line breaks
            whole = path.suffix.lower() == ".gz" or path.stat().st_size <= _SPLIT_BYTES
            self._whole_csv = source if whole else None
            raw = reader.csv(
                str(path.resolve()), schema=schema, **_csv_reader_options(opts, multi_line=whole)
            )
            return raw, names, opts, True, None
        if isinstance(source, str):  # a URI the cluster reads
            self._label = repr(source)
            self._source_path = source
            if infer_format(Path(source)) == "parquet":
                raw = self._guard(lambda: reader.parquet(source))
                names = list(raw.columns)
                renamed = raw.toDF(*_internal(names))
                return renamed, names, None, False, lambda: renamed
            opts = csv_options or CsvOptions()
            raw = self._guard(
                lambda: reader.csv(
                    source, **_csv_reader_options(opts, multi_line=source.endswith(".gz"))
                )
            )
            names = list(opts.names) if opts.names else list(raw.columns)
            if not opts.header and not opts.names:
                names = [f"c{i}" for i in range(len(raw.columns))]
            return raw.toDF(*_internal(names)), names, opts, True, None
        if isinstance(source, sql.DataFrame):
            names = list(source.columns)
            renamed = source.toDF(*_internal(names))
            return renamed, names, None, False, lambda: renamed
        original = self._arrow(source)
        names = list(original.column_names)
        text = _as_text(self._pa, original)
        frame = self._frame(text.rename_columns(_internal(names)))
        typed = None
        if text is not original:  # keep numbers numbers in a release

            def typed() -> Any:
                return self._frame(original.rename_columns(_internal(names)))

        return frame, names, None, True, typed

    def _frame(self, arrow: Any) -> Any:
        """A Spark DataFrame of an Arrow table."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # pyspark on a newer pandas
            try:
                return self.spark.createDataFrame(arrow)
            except TypeError:  # pragma: no cover - pyspark < 4 takes pandas, not Arrow
                return self.spark.createDataFrame(arrow.to_pandas())

    def _arrow(self, source: Any) -> Any:
        """An in-memory table as an Arrow table (an EncodedTable's columns as text)."""
        pa = self._pa
        if isinstance(source, EncodedTable):
            arrays = [  # a null category is None: taking it gives a null
                pa.array(source.column(n).categories.tolist(), type=pa.string()).take(
                    pa.array(source.column(n).codes)
                )
                for n in source.names
            ]
            return pa.table(arrays, names=source.names)
        if isinstance(source, pa.Table):
            return source
        if hasattr(source, "to_arrow"):  # polars
            return source.to_arrow()
        if hasattr(source, "iloc"):  # pandas
            return pa.Table.from_pandas(source, preserve_index=False)
        raise InputError(
            "The Spark engine takes a path, a FileSource, a Spark DataFrame, an EncodedTable, "
            f"an Arrow table or a pandas/polars frame; got {type(source).__name__}."
        )

    def _clean(self, name: str, kind: str, csv: CsvOptions | None) -> Any:
        """The text of column ``name`` (of Spark type ``kind``) as anonlab's readers make it
        (:func:`~anonlab.data.labels.float_labels`): a whole number in a float column without
        ``.0``, NaN null, infinities ``inf``, other numbers laid out as Python writes them
        (:meth:`_float_text`); a timestamp with a time zone as its instant in UTC
        (:meth:`_instant_text`); a CSV file's markers made null."""
        F = self._F
        col = F.col(name)
        if kind in ("double", "float"):
            expr = self._float_text(col)
        elif kind == "timestamp":
            expr = self._instant_text(_quoted(name))
        else:
            expr = col.cast("string")
        if csv is None:
            return expr
        if "" not in csv.na_values:
            # Spark reads an empty unquoted field as null whatever the marker: make it text
            expr = F.coalesce(expr, F.lit(""))
        if csv.strip:
            expr = F.regexp_replace(expr, r"^[ \t\r\n]+|[ \t\r\n]+$", "")
        if csv.na_values:
            expr = F.when(expr.isin(list(csv.na_values)), F.lit(None)).otherwise(expr)
        return expr

    def _instant_text(self, column: str) -> Any:
        """The text of a timestamp column (Spark's ``timestamp``: an instant; ``column`` its
        SQL name, quoted) as :func:`~anonlab.data.labels.clock_labels` writes it: the
        instant's wall clock in UTC (counted from the epoch, so neither the session's nor the
        machine's time zone enters) and ``+00:00``."""
        utc = self._F.expr(
            f"CAST(timestampadd(MICROSECOND, unix_micros({column}), "
            "TIMESTAMP_NTZ'1970-01-01 00:00:00') AS STRING)"
        )
        return self._F.concat(utc, self._F.lit(UTC_SUFFIX))

    def _float_text(self, col: Any) -> Any:
        """The text of a float column ``col`` as :meth:`_clean` writes it
        (:func:`~anonlab.data.labels.float_labels`).

        Java writes a number in scientific notation below 0.001 and from 10**7 on
        (``1.0E-5``, ``1.23456785E7``), Python below 0.0001 and from 10**16 on (``1e-05``,
        ``1e+16``): the digits Java gives are laid out as Python lays them out
        (``12345678.5``, ``0.00012``, ``1.5e+16``). Both write the shortest digits that
        read back as the number; Java 17 gives a few numbers more digits than that
        (``4.9E-324`` for ``5e-324``), which stay as Java gives them.
        """
        F = self._F
        whole = (F.abs(col) < 2.0**53) & (col == F.floor(col))
        text = col.cast("string")
        sci = r"^(-?)(\d)\.(\d+)E(-?\d+)$"
        sign, first, rest, exp = (F.regexp_extract(text, sci, i) for i in (1, 2, 3, 4))
        rest = F.when(rest == "0", F.lit("")).otherwise(rest)  # "1.0E-5": the digit 1 only
        digits = F.concat(first, rest)
        e = exp.cast("int")
        n = F.length(digits)
        python = (
            F.when(
                (e >= -4) & (e < 0),
                F.concat(sign, F.lit("0."), F.repeat(F.lit("0"), -e - 1), digits),
            )
            .when(  # 10**7 <= |x| < 10**16 (e >= 7): the point inside the digits, or ".0"
                (e >= 0) & (e < 16) & (n > e + 1),
                F.concat(sign, digits.substr(F.lit(1), e + 1), F.lit("."), digits.substr(e + 2, n)),
            )
            .when(
                (e >= 0) & (e < 16),
                F.concat(sign, digits, F.repeat(F.lit("0"), e + 1 - n), F.lit(".0")),
            )
            .otherwise(
                F.concat(
                    sign,
                    first,
                    F.when(rest == "", F.lit("")).otherwise(F.concat(F.lit("."), rest)),
                    F.lit("e"),
                    F.when(e < 0, F.lit("-")).otherwise(F.lit("+")),
                    F.when(F.abs(e) < 10, F.lit("0")).otherwise(F.lit("")),  # e-05, e+100
                    F.abs(e).cast("string"),
                )
            )
        )
        return (
            F.when(F.isnan(col), F.lit(None))
            .when(whole, col.cast("long").cast("string"))
            .when(col == float("inf"), F.lit("inf"))
            .when(col == float("-inf"), F.lit("-inf"))
            .when(text.contains("E"), python)
            .otherwise(text)
        )

    def _guard(self, action: Callable[[], Any], what: str = "read") -> Any:
        """Run a Spark call; its failure becomes a one-line DataFormatError ("Cannot
        ``what`` <the data>: <Spark's reason>")."""
        try:
            return action()
        except Exception as exc:
            if not _is_spark_error(exc):
                raise
            reason = _summary(exc)
            csv = getattr(self, "_csv_file", None)
            if reason.startswith(_MALFORMED) and csv is not None:
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

    def __enter__(self) -> SparkEngine:
        """Return the engine itself (``with SparkEngine(...) as engine:``)."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Close the engine (see :meth:`close`)."""
        self.close()

    # ------------------------------------------------------------------ hierarchies
    def _level_table(self, col: str, level: int) -> Any:
        """The DataFrame (``leaf``, ``label``) of ``col``'s hierarchy at ``level``."""
        key = (col, level)
        table = self._levels.get(key)
        if table is None:
            h = self.hierarchies[col]
            codes, labels = h.leaf_generalization(level)
            pa = self._pa
            arrow = pa.table(
                {
                    "leaf": pa.array(h.leaves.tolist(), type=pa.string()),
                    "label": pa.array(labels[codes].tolist(), type=pa.string()),
                }
            )
            table = self._frame(arrow)
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
        for j, (col, lv) in enumerate(zip(columns, levels)):
            c = self._internal[col]
            if lv == 0:
                sel.append(F.col(c).alias(f"g{j}"))
                continue
            table = self._level_table(col, lv).toDF(f"l{j}", f"t{j}")
            frame = frame.join(F.broadcast(table), F.col(c) == F.col(f"l{j}"), "left")
            label = F.col(f"t{j}")
            root = root_label(self.hierarchies[col], lv)
            if root is not None:  # at the root a null is generalized too
                label = F.coalesce(label, F.lit(root))
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
            self._offsets, self._n_rows = self._partition_starts(self._data, "mid")
        return self._offsets

    def _partition_starts(self, frame: Any, mid: str) -> tuple[npt.NDArray[np.int64], int]:
        """The rows of ``frame`` before each of its partitions (one job: its rows counted
        per partition of their ``monotonically_increasing_id()`` ``mid``), and its rows."""
        F = self._F
        per_part = self._collect(
            frame.groupBy(F.shiftright(F.col(mid), _ROW_BITS).alias("p")).count()
        )
        parts = np.asarray(per_part.column("p").to_numpy(), dtype=np.int64)
        counts = np.asarray(per_part.column("count").to_numpy(), dtype=np.int64)
        rows = np.zeros(int(parts.max()) + 1 if parts.size else 0, dtype=np.int64)
        rows[parts] = counts
        starts = np.concatenate([[0], np.cumsum(rows)[:-1]]).astype(np.int64)
        return starts, int(counts.sum())

    def _position(self, mid: Any, starts: npt.NDArray[np.int64]) -> Any:
        """The row position of each row, as a Spark column, from its id ``mid`` and the
        rows before each partition (:meth:`_partition_starts`)."""
        F = self._F
        first = F.array(*[F.lit(int(x)) for x in starts]) if starts.size else F.array(F.lit(0))
        part = (F.shiftright(mid, _ROW_BITS) + 1).cast("int")
        return F.element_at(first, part) + mid.bitwiseAND(F.lit((1 << _ROW_BITS) - 1))

    def _with_positions(self, frame: Any, name: str) -> tuple[Any, int]:
        """``frame`` with each row's position in it (the order Spark reads it in) as column
        ``name``, and its rows: one job counts them per partition. ``frame`` must read its
        rows in the same partitions each time (a file, or a persisted frame)."""
        F = self._F
        numbered = frame.withColumn("_anonlab_mid", F.monotonically_increasing_id())
        starts, n = self._partition_starts(numbered, "_anonlab_mid")
        positioned = numbered.withColumn(name, self._position(F.col("_anonlab_mid"), starts))
        return positioned.drop("_anonlab_mid"), n

    @property
    def columns(self) -> list[str]:
        """Column names of the data."""
        return list(self._names)

    @property
    def nested_columns(self) -> list[str]:
        """The list, map and struct columns of the data."""
        return [n for n in self._names if n in getattr(self, "_nested", {})]

    def _nested_kind(self, column: str) -> str:
        return str(self._nested[column])

    def class_sizes(
        self, columns: Sequence[str], levels: AttributeLevels | None = None
    ) -> npt.NDArray[np.int64]:
        """Return class sizes with one ``groupBy`` (see :class:`Engine`)."""
        cols = list(columns)
        lv = self.validate(cols, levels)
        if not cols:
            return np.array([self.n_rows], np.int64) if self.n_rows else np.zeros(0, np.int64)
        key = tuple(sorted(zip(cols, lv)))
        hit = self._sizes.get(key)
        if hit is None:
            groups = [f"g{j}" for j in range(len(cols))]
            res = self._collect(self._base(cols, lv).groupBy(*groups).count().select("count"))
            hit = np.asarray(res.column("count").to_numpy(), dtype=np.int64)
            self._sizes[key] = hit
        return hit

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
            self._grouping_sets(todo[start : start + self.batch_size])
        out = []
        for s, key in zip(subsets, keys):
            out.append(self.class_sizes(s, dict(key)))
            if progress is not None:
                progress(1)
        return out

    def _grouping_sets(self, keys: Sequence[tuple[tuple[str, int], ...]]) -> None:
        """Compute and remember the class sizes of several (column, level) keys in one job."""
        union = sorted({cl for key in keys for cl in key}, key=lambda cl: (cl[0], cl[1]))
        if len(keys) == 1 or len(union) > 60:
            for key in keys:
                self.class_sizes([c for c, _ in key], dict(key))
            return
        # the same column at two levels is two columns of the union (g_j per (column, level))
        index = {cl: j for j, cl in enumerate(union)}
        base = self._base_pairs(union)
        view = f"anonlab_sets_{id(self)}"
        base.createOrReplaceTempView(view)
        sets = ", ".join("(" + ", ".join(f"g{index[cl]}" for cl in key) + ")" for key in keys)
        bits = ", ".join(f"grouping(g{j}) AS b{j}" for j in range(len(union)))
        try:
            res = self._collect(
                self.spark.sql(
                    f"SELECT {bits}, count(*) AS n FROM {view} GROUP BY GROUPING SETS ({sets})"
                )
            )
        finally:
            self.spark.catalog.dropTempView(view)
        n = np.asarray(res.column("n").to_numpy(), dtype=np.int64)
        code = np.zeros(n.size, dtype=np.int64)
        for j in range(len(union)):  # which columns were grouped on (grouping() = 0)
            code |= (1 - np.asarray(res.column(f"b{j}").to_numpy(), dtype=np.int64)) << j
        for key in keys:
            want = sum(1 << index[cl] for cl in key)
            self._sizes[key] = n[code == want]

    def _base_pairs(self, pairs: Sequence[tuple[str, int]]) -> Any:
        """:meth:`_base` of (column, level) pairs, where a column may come at two levels."""
        return self._base([c for c, _ in pairs], [lv for _, lv in pairs])

    def class_stats(
        self,
        columns: Sequence[str],
        levels: AttributeLevels | None = None,
        *,
        sensitive: Sequence[str] = (),
        with_rows: bool = False,
        with_keys: bool = True,
    ) -> ClassStats:
        """Return class statistics (see :class:`Engine`), numbered as the numpy engine does.

        One ``groupBy`` of the classes with the first sensitive attribute (its histogram and
        the class sizes), one per further sensitive attribute; ``with_rows`` joins the
        classes back to the rows and brings each row's class to the driver.
        """
        cols = list(columns)
        lv = self.validate(cols, levels)
        self.validate(list(sensitive), None)
        base = self._base(cols, lv, list(sensitive))
        stats, class_keys, domains, by_table = self._grouped(
            base,
            cols,
            lv,
            list(sensitive),
            with_keys=with_keys,
            table_order=self._names,
        )
        if self._n_rows is None:  # every row is in a class
            self._n_rows = stats.n_rows
        if with_rows:
            stats = dataclasses.replace(
                stats, row_class=self._row_classes(cols, lv, class_keys, domains, by_table)
            )
        return stats

    def _grouped(
        self,
        base: Any,
        cols: Sequence[str],
        lv: tuple[int, ...],
        sensitive: Sequence[str],
        *,
        with_keys: bool,
        table_order: Sequence[str],
        n_rows: int | None = None,
    ) -> tuple[ClassStats, npt.NDArray[np.int64], list[npt.NDArray[np.object_]], list[int]]:
        """Class statistics of ``base`` (columns ``g0..``, ``x0..``) without rows, with the
        sorted class keys (columns in table order), their domains and that column order."""
        m = len(cols)
        groups = [f"g{j}" for j in range(m)]
        first = self._collect(base.groupBy(*groups, *(["x0"] if sensitive else [])).count())
        # codes of each column's labels: natural order at level 0, the hierarchy's above
        domains = [_domain(first.column(g), natural=lv[j] == 0) for j, g in enumerate(groups)]
        order = {c: i for i, c in enumerate(table_order)}
        by_table = sorted(range(m), key=lambda j: order[cols[j]])  # class numbering order
        radix = [domains[j].size for j in by_table]

        def codes_of(table: Any) -> npt.NDArray[np.int64]:
            out = np.empty((table.num_rows, m), dtype=np.int64)
            for j in range(m):
                out[:, j] = _encode(self._pa, table.column(f"g{j}"), domains[j])
            return out

        class_keys, first_cid = _classes(codes_of(first)[:, by_table], radix)
        n_cls = class_keys.shape[0]
        counts = np.asarray(first.column("count").to_numpy(), dtype=np.int64)
        sizes = np.bincount(first_cid, weights=counts, minlength=n_cls).astype(np.int64)
        total = int(sizes.sum()) if n_rows is None else n_rows
        if not m and total == 0:
            sizes = np.zeros(0, dtype=np.int64)
        keys: npt.NDArray[np.int32] | None = None
        doms: tuple[npt.NDArray[np.object_], ...] | None = None
        if with_keys:  # column-major (n_cls, m), as the numpy engine's
            back = np.empty(m, dtype=np.int64)
            back[by_table] = np.arange(m)
            keys = np.ascontiguousarray(class_keys[:, back].T, dtype=np.int32).T
            doms = tuple(domains)
        hists = {}
        for i, s in enumerate(sensitive):
            if i == 0:
                table, cid = first, first_cid
            else:
                table = self._collect(
                    base.groupBy(*groups, f"x{i}").count().withColumnRenamed(f"x{i}", "x0")
                )
                cid = _lookup(class_keys, codes_of(table)[:, by_table], radix)
            values = _domain(table.column("x0"), natural=True)
            hists[s] = SensitiveHistogram.from_triplets(
                values,
                cid,
                _encode(self._pa, table.column("x0"), values),
                np.asarray(table.column("count").to_numpy(), dtype=np.int64),
                n_classes=n_cls,
            )
        stats = ClassStats(
            columns=tuple(cols),
            levels=lv,
            sizes=sizes,
            n_rows=total,
            keys=keys,
            domains=doms,
            row_class=None,
            sensitive=hists,
        )
        return stats, class_keys, [domains[j] for j in by_table], by_table

    def _row_classes(
        self,
        cols: Sequence[str],
        lv: tuple[int, ...],
        class_keys: npt.NDArray[np.int64],
        domains: Sequence[npt.NDArray[np.object_]],
        by_table: Sequence[int],
    ) -> npt.NDArray[np.int64]:
        """The class of every row, by position: the classes joined back to the rows."""
        F = self._F
        pa = self._pa
        n_cls = class_keys.shape[0]
        base = self._base(cols, lv, mid=True)
        if not cols:
            joined = base.select("mid", F.lit(0).cast("long").alias("cid"))
        else:
            arrays = {
                f"k{j}": pa.array(domains[t][class_keys[:, t]].tolist(), type=pa.string())
                for t, j in enumerate(by_table)
            }
            arrays["cid"] = pa.array(np.arange(n_cls, dtype=np.int64))
            classes = self._frame(pa.table(arrays))
            on = None
            for j in range(len(cols)):
                cond = F.col(f"g{j}").eqNullSafe(F.col(f"k{j}"))
                on = cond if on is None else on & cond
            joined = base.join(classes, on, "inner").select("mid", "cid")
        res = self._collect(joined)
        at = self._positions(res.column("mid"))
        out = np.empty(self.n_rows, dtype=np.int64)
        out[at] = np.asarray(res.column("cid").to_numpy(), dtype=np.int64)
        return out

    def _positions(self, mids: Any) -> npt.NDArray[np.int64]:
        """Row positions of the ids ``monotonically_increasing_id()`` gave the rows."""
        mid = np.asarray(mids.to_numpy(), dtype=np.int64)
        out: npt.NDArray[np.int64] = self._row_offsets()[mid >> _ROW_BITS] + (
            mid & ((1 << _ROW_BITS) - 1)
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
        """Return row positions in classes smaller than ``k``: the small classes (one
        ``groupBy``) joined back to the rows."""
        F = self._F
        cols = list(columns)
        lv = self.validate(cols, levels)
        if not cols:
            n = self.n_rows
            return np.arange(n if n < int(k) else 0, dtype=np.int64)
        groups = [f"g{j}" for j in range(len(cols))]
        base = self._base(cols, lv, mid=True)
        small = (
            base.groupBy(*groups)
            .count()
            .where(F.col("count") < int(k))
            .select(*[F.col(g).alias(f"s{j}") for j, g in enumerate(groups)])
        )
        on = None
        for j in range(len(cols)):
            cond = F.col(f"g{j}").eqNullSafe(F.col(f"s{j}"))
            on = cond if on is None else on & cond
        res = self._collect(base.join(small, on, "left_semi").select("mid"))
        return np.sort(self._positions(res.column("mid")))

    # ------------------------------------------------------------------ out of core
    def distinct_counts(self, columns: Sequence[str], *, rows: int | None = None) -> dict[str, int]:
        """Return the distinct values of each column (a null counts as one), in one job.

        Each column's distinct values are found apart (a ``DISTINCT`` of that column alone,
        on its own type: a Parquet file reads just that column), made text as the
        questions see them, and counted: no row is copied once per column. A list, map or
        struct column (never an attribute, but a column the identifying-column check looks
        at, as DuckDB's engine does) is counted by its JSON text. With ``rows``, among
        ``rows`` records (Spark's ``limit``: the same records for every column).
        """
        F = self._F
        cols = list(columns)
        check_columns(cols, self.columns)
        if not cols:
            return {}
        rows_of, text = self._source()
        if rows is not None:  # (the columns' few records, read once and kept for the job)
            rows_of = rows_of.select(*[self._internal[c] for c in cols]).limit(int(rows))
            rows_of = rows_of.localCheckpoint()
        each = []
        for j, name in enumerate(cols):
            c = self._internal[name]
            if name in self._nested:
                part = rows_of.select(_json(F, F.col(c)).alias("v")).distinct()
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

    def head(self, columns: Sequence[str], rows: int) -> EncodedTable:
        """Return ``rows`` records of ``columns`` (Spark's ``limit``, as
        :meth:`distinct_counts` with ``rows`` counts among); see :meth:`Engine.head`."""
        F = self._F
        cols = list(dict.fromkeys(columns))
        self.validate(cols, None)
        res = self._collect(
            self._data.select(
                *[F.col(self._internal[c]).alias(f"f{j}") for j, c in enumerate(cols)]
            ).limit(int(rows))
        )
        encoded = [encode_text(c, res.column(f"f{j}")) for j, c in enumerate(cols)]
        return EncodedTable(tuple(encoded), source=self._source_path)

    def frequency_set(self, columns: Sequence[str]) -> EncodedTable:
        """Return the distinct combinations of ``columns`` with their counts (one
        ``groupBy``); see :meth:`Engine.frequency_set`."""
        F = self._F
        cols = list(dict.fromkeys(columns))
        self.validate(cols, None)
        if not cols:
            raise InputError("A frequency set needs at least one column.")
        res = self._collect(
            self._data.groupBy(
                *[F.col(self._internal[c]).alias(f"f{j}") for j, c in enumerate(cols)]
            ).count()
        )
        encoded = []
        for j, c in enumerate(cols):
            labels = _domain(res.column(f"f{j}"), natural=True)
            codes = _encode(self._pa, res.column(f"f{j}"), labels).astype(np.int32)
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

    def release_frame(self, plan: ReleasePlan) -> Any:
        """The release ``plan`` describes, as a Spark DataFrame (nothing is computed yet).

        Each quasi-identifier is joined to its hierarchy's level table (broadcast), the
        suppressed classes are found by a broadcast join with their released keys (by a
        hash of the labels, then the labels themselves) and removed (or their
        quasi-identifiers masked with ``*``), identifiers are left out and every other
        column keeps its type. The rows keep the source's order.

        Parameters
        ----------
        plan : ReleasePlan
            What to release.

        Returns
        -------
        pyspark.sql.DataFrame
            With the columns ``plan.columns``, under their own names.
        """
        F = self._F
        pa = self._pa
        check_columns(list(plan.columns), self.columns)
        qis = list(plan.quasi_identifiers)
        self.validate(qis, None)
        rows, text = self._source()
        labels = {}
        for j, q in enumerate(qis):
            c = self._internal[q]
            lv = plan.levels[j]
            if lv == 0:
                label = text(c)
            else:
                table = self._level_frame(plan.hierarchies[q], lv).toDF(f"rl{j}", f"rt{j}")
                rows = rows.join(F.broadcast(table), text(c) == F.col(f"rl{j}"), "left")
                label = F.col(f"rt{j}")
            root = plan.root_label(j)
            if root is not None:
                label = F.coalesce(label, F.lit(root))
            labels[q] = label
        if plan.suppressed:
            # a row is suppressed when its released key is one of the suppressed classes':
            # the keys are grouped by a 64-bit hash of their labels (a broadcast table keyed
            # by a number, cheap to probe), and a row whose hash is found compares its
            # labels with the keys of that hash (nulls equal), so a collision does not count
            arrays = {
                f"s{j}": pa.array([key[j] for key in plan.suppressed], type=pa.string())
                for j in range(len(qis))
            }
            keys = self._frame(pa.table(arrays))
            by_hash = keys.groupBy(
                F.xxhash64(*[F.col(f"s{j}") for j in range(len(qis))]).alias("sh")
            ).agg(F.collect_list(_record([F.col(f"s{j}") for j in range(len(qis))])).alias("sk"))
            released = [labels[q] for q in qis]
            rows = rows.join(F.broadcast(by_hash), F.xxhash64(*released) == F.col("sh"), "left")
            # (the labels' record is built only for the rows whose hash is found)
            flag = F.when(F.col("sk").isNull(), F.lit(False)).otherwise(
                F.array_contains("sk", _record(released))
            )
            if plan.mask_suppressed:
                labels = {
                    q: F.when(flag, F.lit("*")).otherwise(label) for q, label in labels.items()
                }
            else:
                rows = rows.where(~flag)
        return rows.select(
            *[
                (labels[c] if c in labels else F.col(self._internal[c])).alias(c)
                for c in plan.columns
            ]
        )

    def _level_frame(self, h: Hierarchy, level: int) -> Any:
        """The level table of a hierarchy (perhaps not one the engine was given)."""
        for (col, lv), table in self._levels.items():
            if lv == level and self.hierarchies.get(col) is h:
                return table
        codes, labels = h.leaf_generalization(level)
        pa = self._pa
        return self._frame(
            pa.table(
                {
                    "leaf": pa.array(h.leaves.tolist(), type=pa.string()),
                    "label": pa.array(labels[codes].tolist(), type=pa.string()),
                }
            )
        )

    def write_release(
        self,
        plan: ReleasePlan,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        separator: str = ",",
    ) -> int | None:
        """Write the release ``plan`` describes to the file ``path`` (see
        :meth:`Engine.write_release`).

        Spark writes the release in parallel as a partitioned dataset (Parquet, or CSV parts)
        into a temporary folder beside ``path``, which the driver then concatenates, part by
        part in partition order, into the one file: the rows keep the source's order and
        memory holds one batch of rows at a time. Parquet parts are written uncompressed and
        their text columns read as the dictionaries Spark encoded them with, so the driver
        decodes no string (the file is compressed as it is written). The folder must be one
        the executors can write and the driver read (always so in local mode).

        With ``fmt`` :data:`~anonlab.io.atomic.PARQUET_DATASET` the parts are the release:
        Spark writes them (Snappy-compressed) into the new folder ``path``, nothing is
        joined, and the rows keep the source's order part after part (by file name). This is
        the format for a cluster (``path`` on storage every executor and the driver see).
        """
        if fmt not in _FORMATS:
            raise ParameterError(f"Unknown release format {fmt!r}; use {', '.join(_FORMATS)}.")
        rows = self._write_frame(self.release_frame(plan), Path(path), fmt, separator)
        if rows is None and not (plan.suppressed and not plan.mask_suppressed):
            rows = self.n_rows  # CSV parts, every row kept (with rows removed, counting
            # them would run the release again: the re-check counts the written file)
        return rows

    def _write_frame(self, frame: Any, target: Path, fmt: str, separator: str) -> int | None:
        """Write the rows of ``frame`` in their order to ``target`` (see
        :meth:`write_release`); return the rows written, or None for CSV parts."""
        if fmt in ("csv", "csv.gz"):  # floats, timestamps and nested columns as text
            kinds = dict(frame.dtypes)
            texts = {
                "double": lambda c: self._float_text(frame[_quoted(c)]),
                "float": lambda c: self._float_text(frame[_quoted(c)]),
                "timestamp": lambda c: self._instant_text(_quoted(c)),
                "timestamp_ntz": lambda c: frame[_quoted(c)].cast("string"),
                "nested": lambda c: _json(self._F, frame[_quoted(c)]),  # as numpy writes it
            }
            nested = ("array<", "map<", "struct<")
            kinds = {c: "nested" if k.startswith(nested) else k for c, k in kinds.items()}
            frame = frame.select(
                *[
                    texts[kinds[c]](c).alias(c) if kinds[c] in texts else frame[_quoted(c)]
                    for c in frame.columns
                ]
            )
        if fmt == PARQUET_DATASET:
            self._write_parquet(
                lambda: frame.write.mode("errorifexists").parquet(target.resolve().as_uri())
            )
            pq = import_optional("pyarrow.parquet")
            return int(sum(pq.read_metadata(part).num_rows for part in target.glob("part-*")))
        folder = make_folder(".anonlab-spark-parts", target.parent)  # 0700, hidden
        parts = folder / "parts"
        try:
            writer = frame.write.mode("overwrite")
            if fmt == "parquet":  # uncompressed: the parts are read once, right away
                self._write_parquet(
                    lambda: writer.parquet(parts.resolve().as_uri(), compression=_PART_COMPRESSION)
                )
            else:
                self._guard(
                    lambda: writer.csv(
                        parts.resolve().as_uri(),
                        sep=separator,
                        quote='"',
                        escape='"',
                        header=False,
                        nullValue="",
                        emptyValue='""',
                        ignoreLeadingWhiteSpace=False,
                        ignoreTrailingWhiteSpace=False,
                        lineSep="\n",
                        compression="gzip" if fmt == "csv.gz" else "none",
                    ),
                    "write the release of",
                )
            return _concatenate(
                self._pa, sorted(parts.glob("part-*")), target, fmt, list(frame.columns), separator
            )
        finally:
            discard(folder)

    def _write_parquet(self, write: Callable[[], Any]) -> None:
        """Run a Parquet write of Spark's with its timestamps written as microseconds from
        the epoch (``TIMESTAMP_MICROS``, as the other engines write them) instead of Spark's
        default ``INT96``, which Arrow reads back as nanoseconds and Spark then cannot read
        (the re-check, a user's next job). The session's setting is restored afterwards."""
        conf = self.spark.conf
        before = conf.get(_TIMESTAMP_TYPE, None)
        conf.set(_TIMESTAMP_TYPE, "TIMESTAMP_MICROS")
        try:
            self._guard(write, "write the release of")
        finally:
            if before is None:
                conf.unset(_TIMESTAMP_TYPE)
            else:
                conf.set(_TIMESTAMP_TYPE, before)

    # ------------------------------------------------------------- per partition
    def _scratch(self) -> Path:
        """The engine's scratch folder (sorted blocks, staged labels), a new private folder
        ``anonlab-spark.anonlab-tmp.HOST.PID.*`` in ``scratch`` (default: the system's
        temporary folder), removed by :meth:`close`, when the engine is collected or Python
        exits, or by the next run there if this one is killed."""
        if self._tmp is None:
            self._tmp = make_folder("anonlab-spark", self._scratch_in)
            weakref.finalize(self, discard, self._tmp)
        return self._tmp

    def partitions(
        self,
        columns: Sequence[str],
        *,
        categories: Mapping[str, npt.NDArray[np.object_]],
        order_by: Mapping[str, Hierarchy],
        block_rows: int,
    ) -> Iterator[tuple[npt.NDArray[np.int64], EncodedTable]]:
        """Stream the rows sorted by ``order_by`` in blocks (see :meth:`Engine.partitions`).

        Each sort key is a value's place among its hierarchy's values (a broadcast join; a
        value not in the hierarchy and a null sort last), then the row's position. Spark
        sorts the rows (range partitions, spilling to its local disks) and writes the
        columns asked for into the engine's scratch folder as Parquet parts, which the
        driver reads part after part, ``block_rows`` rows at a time.
        """
        F = self._F
        pa = self._pa
        pq = import_optional("pyarrow.parquet")
        cols = list(dict.fromkeys(columns))
        self.validate(list(dict.fromkeys([*cols, *order_by])), None)
        missing = [c for c in cols if c not in categories]
        if missing:
            raise ParameterError(f"No labels given for column {missing[0]!r} of the partitions.")
        rows = int(block_rows)
        if rows < 1:
            raise ParameterError(f"The 'block_rows' of partitions must be >= 1. Got {rows}.")
        frame = self._data
        keys = []
        for i, (c, h) in enumerate(order_by.items()):
            leaves = list(dict.fromkeys(r[0] for r in h.rows()))
            places = pa.table(
                {
                    f"o{i}": pa.array(leaves, type=pa.string()),
                    f"k{i}": pa.array(np.arange(len(leaves), dtype=np.int64)),
                }
            )
            frame = frame.join(
                F.broadcast(self._frame(places)), F.col(self._internal[c]) == F.col(f"o{i}"), "left"
            )
            keys.append(F.col(f"k{i}").asc_nulls_last())
        ordered = frame.orderBy(*keys, F.col("mid")).select(
            "mid", *[F.col(self._internal[c]).alias(f"b{j}") for j, c in enumerate(cols)]
        )
        folder = Path(tempfile.mkdtemp(prefix="sorted-", dir=self._scratch()))
        try:
            self._guard(lambda: ordered.write.mode("overwrite").parquet(folder.resolve().as_uri()))
            lookup = label_lookup(categories, cols)

            def batches() -> Iterator[Any]:
                for part in sorted(folder.glob("part-*")):
                    yield from pq.ParquetFile(part).iter_batches(batch_size=min(rows, 1 << 16))

            for table in blocks_of(batches(), rows, pa):
                block = table.select([f"b{j}" for j in range(len(cols))]).rename_columns(cols)
                yield (
                    self._positions(table.column("mid")),
                    encode_block(block, cols, categories, lookup, self._source_path),
                )
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def stage_labels(
        self,
        rows: npt.NDArray[np.int64],
        labels: Mapping[str, EncodedColumn],
        keep: npt.NDArray[np.bool_],
    ) -> None:
        """Write one block's labels to a Parquet file of the engine's scratch folder (see
        :meth:`Engine.stage_labels`); each column under its internal name."""
        path = self._scratch() / "staged" / f"block_{len(self._staged):06d}.parquet"
        names = {c: self._internal[c] for c in labels}
        pq = import_optional("pyarrow.parquet")
        stage_block(path, len(self._staged), rows, labels, keep, self._pa, pq, names)
        self._staged.append(path)
        self._staged_rows += len(rows)
        self._staged_kept += int(np.count_nonzero(keep))

    def clear_staged(self) -> None:
        """Delete the staged labels."""
        for path in self._staged:
            path.unlink(missing_ok=True)
        self._staged = []
        self._staged_rows = self._staged_kept = 0

    def _staged_frame(self) -> Any:
        """The staged labels as a Spark DataFrame (columns :data:`ROW`, :data:`KEEP`,
        :data:`BLOCK` and the replaced columns under their internal names)."""
        if not self._staged:
            raise ParameterError("No labels are staged: nothing to release.")
        uris = [p.resolve().as_uri() for p in self._staged]
        return self._guard(lambda: self.spark.read.parquet(*uris))

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

        The source's rows, each with its position (the order Spark reads them in), are
        joined with the staged labels by position and sorted by it; a row without a label
        stops the job with an error, and the staged rows must be the source's in number, so
        every row has exactly one label. Written as :meth:`write_release` writes, to one
        file (CSV, gzipped CSV or Parquet).
        """
        F = self._F
        if fmt not in ("csv", "csv.gz", "parquet"):
            raise ParameterError(f"Unknown release format {fmt!r}; use csv, csv.gz, parquet.")
        check_columns(list(plan.columns), self.columns)
        staged = self._staged_frame()
        if self._staged_rows != self.n_rows:
            raise DataFormatError(
                f"Cannot write the release of {self._label}: {self._staged_rows} rows are "
                f"staged for its {self.n_rows} rows."
            )
        source, n = self._with_positions(self._source()[0], "_anonlab_pos")
        if n != self.n_rows:  # (the typed rows read again: the rows the blocks saw)
            raise DataFormatError(
                f"Cannot write the release of {self._label}: it now has {n} rows, the blocks "
                f"had {self.n_rows}."
            )
        replaced = list(plan.replaced)
        labels = staged.select(
            F.col(ROW).alias("_anonlab_at"),
            F.col(KEEP).alias("_anonlab_keep"),
            *[F.col(self._internal[c]).alias(f"_anonlab_l{i}") for i, c in enumerate(replaced)],
        )
        joined = source.join(labels, F.col("_anonlab_pos") == F.col("_anonlab_at"), "left")
        keep = F.col("_anonlab_keep")
        if not plan.mask_suppressed:  # (a row without a label stays, to stop the job)
            joined = joined.where(keep.isNull() | keep)
        select = []
        for i, c in enumerate(plan.columns):
            if c in plan.replaced:
                expr = F.col(f"_anonlab_l{replaced.index(c)}")
                if plan.mask_suppressed and c in plan.masked:
                    expr = F.when(keep, expr).otherwise(F.lit("*"))
            else:
                expr = F.col(self._internal[c])
            if i == 0:  # every row checks that it has a label
                expr = F.when(
                    F.col("_anonlab_at").isNull(),
                    F.raise_error(F.lit("a row of the source has no staged label")),
                ).otherwise(expr)
            select.append(expr.alias(c))
        frame = joined.orderBy("_anonlab_pos").select(*select)
        written = self._write_frame(frame, Path(path), fmt, separator)
        if written is None:
            return self._staged_rows if plan.mask_suppressed else self._staged_kept
        return written

    def staged_mismatches(
        self,
        plan: RowsPlan,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        separator: str = ",",
    ) -> int:
        """Count the written rows that differ from the staged labels (see
        :meth:`Engine.staged_mismatches`): the file's rows numbered in its order beside the
        kept labels numbered in the source's order (their positions when no row was
        removed; else sorted by position and kept by Spark while they are numbered), joined
        on their numbers (a row too many or too few meets no partner)."""
        F = self._F
        cols = list(plan.replaced)
        staged = self._staged_frame()
        masked = [
            F.when(F.col(KEEP), F.col(self._internal[c])).otherwise(F.lit("*")).alias(f"s{i}")
            if plan.mask_suppressed and c in plan.masked
            else F.col(self._internal[c]).alias(f"s{i}")
            for i, c in enumerate(cols)
        ]
        ordered = None
        if plan.mask_suppressed or self._staged_kept == self._staged_rows:
            kept = staged.select(F.col(ROW).alias("sn"), *masked)  # a row's number: its position
        else:  # rows removed: the kept ones numbered in order (sorted, kept by Spark meanwhile)
            ordered = staged.where(F.col(KEEP)).orderBy(ROW).select(*masked).persist()
            kept = self._with_positions(ordered, "sn")[0]
        try:
            with self._written(path, fmt, separator) as (frame, names):
                check_columns(cols, names)
                at = {n: f"c{i}" for i, n in enumerate(names)}
                written = self._with_positions(
                    frame.select(
                        *[F.col(at[c]).cast("string").alias(f"w{i}") for i, c in enumerate(cols)]
                    ),
                    "wn",
                )[0].withColumn("one", F.lit(1))
                both = written.join(kept, F.col("wn") == F.col("sn"), "full_outer")
                differ = F.col("one").isNull() | F.col("sn").isNull()
                for i in range(len(cols)):
                    differ = differ | ~F.col(f"w{i}").eqNullSafe(F.col(f"s{i}"))
                return int(self._guard(lambda: both.where(differ).count()))
        finally:
            if ordered is not None:
                ordered.unpersist()

    def staged_spanning(
        self,
        plan: RowsPlan,
        columns: Sequence[str],
        categories: Mapping[str, npt.NDArray[np.object_]],
    ) -> tuple[int, npt.NDArray[np.int64], EncodedTable, EncodedTable]:
        """The released classes whose labels occur in more than one staged block (see
        :meth:`Engine.staged_spanning`): one ``groupBy`` of the kept staged labels, then the
        rows of those classes joined (broadcast) and joined to the source by position."""
        F = self._F
        pa = self._pa
        staged = self._staged_frame().where(F.col(KEEP))
        keys = [F.col(self._internal[c]).alias(f"k{j}") for j, c in enumerate(plan.masked)]
        span = self._collect(
            staged.groupBy(*keys)
            .agg(F.countDistinct(BLOCK).alias("_anonlab_blocks"))
            .where(F.col("_anonlab_blocks") > 1)
            .drop("_anonlab_blocks")
        )
        n = span.num_rows
        cols = list(dict.fromkeys(columns))
        empty = EncodedTable(())
        if not n or not cols:
            return n, np.zeros(0, dtype=np.int64), empty, empty
        classes = self._frame(span.append_column("cls", pa.array(np.arange(n, dtype=np.int64))))
        on = None
        for j, c in enumerate(plan.masked):
            cond = F.col(self._internal[c]).eqNullSafe(F.col(f"k{j}"))
            on = cond if on is None else on & cond
        replaced = list(plan.replaced)
        rows = staged.join(F.broadcast(classes), on, "inner").select(
            F.col(ROW).alias("_anonlab_at"),
            "cls",
            *[F.col(self._internal[c]).alias(f"l{i}") for i, c in enumerate(replaced)],
        )
        source = self._data.select(
            self._position(F.col("mid"), self._row_offsets()).alias("_anonlab_pos"),
            *[F.col(self._internal[c]).alias(f"s{i}") for i, c in enumerate(cols)],
        )
        table = self._collect(
            rows.join(source, F.col("_anonlab_at") == F.col("_anonlab_pos"), "inner")
            .orderBy("_anonlab_at")
            .select(
                "cls",
                *[f"l{i}" for i in range(len(replaced))],
                *[f"s{i}" for i in range(len(cols))],
            )
        )
        row_class = np.asarray(table.column("cls").to_numpy(), dtype=np.int64)
        lookup = label_lookup(categories, cols)
        original = encode_block(
            table.select([f"s{i}" for i in range(len(cols))]).rename_columns(cols),
            cols,
            categories,
            lookup,
        )
        released = EncodedTable(
            tuple(encode_text(c, table.column(f"l{i}")) for i, c in enumerate(replaced))
        )
        return n, row_class, original, released

    def release_stats(
        self,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        quasi_identifiers: Sequence[str],
        sensitive: Sequence[str] = (),
        separator: str = ",",
    ) -> ClassStats:
        """Group a written release again, read back from its file by Spark (see
        :meth:`Engine.release_stats`)."""
        F = self._F
        with self._written(path, fmt, separator) as (frame, names):
            check_columns(list(quasi_identifiers) + list(sensitive), names)
            at = {n: f"c{i}" for i, n in enumerate(names)}
            cols = list(quasi_identifiers)
            base = frame.select(
                *[F.col(at[c]).cast("string").alias(f"g{j}") for j, c in enumerate(cols)],
                *[F.col(at[s]).cast("string").alias(f"x{i}") for i, s in enumerate(sensitive)],
            )
            return self._grouped(
                base,
                cols,
                tuple(0 for _ in cols),
                list(sensitive),
                with_keys=True,
                table_order=names,
            )[0]

    @contextlib.contextmanager
    def _written(
        self, path: str | os.PathLike[str], fmt: str, separator: str
    ) -> Iterator[tuple[Any, list[str]]]:
        """A written release read back by Spark: its rows (columns ``c0..``, a CSV's as
        text, a file read by one task: in its order) and its column names."""
        if fmt not in _FORMATS:
            raise ParameterError(f"Unknown release format {fmt!r}.")
        source = Path(path).resolve()
        folder = None
        label, self._label = self._label, "the written release"
        try:
            if fmt != PARQUET_DATASET:
                # Spark skips files named ".*" (the caller's temporary file) and decompresses
                # by suffix: read the file under a plain name
                folder = make_folder(".anonlab-spark-read", source.parent)
                (folder / f"release.{fmt}").symlink_to(source)
                source = folder / f"release.{fmt}"
            reader = self.spark.read
            if fmt in ("parquet", PARQUET_DATASET):
                frame = self._guard(lambda: reader.parquet(source.as_uri()))
            else:
                frame = self._guard(
                    lambda: reader.csv(
                        source.as_uri(),
                        header=True,
                        sep=separator,
                        quote='"',
                        escape='"',
                        inferSchema=False,
                        mode="FAILFAST",
                        multiLine=True,
                    )
                )
            names = list(frame.columns)
            yield frame.toDF(*_internal(names)), names
        finally:
            self._label = label
            if folder is not None:
                discard(folder)


# ---------------------------------------------------------------------- helpers
_FORMATS = ("csv", "csv.gz", "parquet", PARQUET_DATASET)
#: Compression of the Parquet parts Spark writes before they are joined into one file.
_PART_COMPRESSION = "none"
#: Rows per row group of a written Parquet release (pyarrow's default).
_ROW_GROUP = 1 << 20


def _concatenate(
    pa: Any, parts: Sequence[Path], target: Path, fmt: str, names: Sequence[str], separator: str
) -> int | None:
    """Concatenate the part files Spark wrote into ``target``, in order; return the rows
    (Parquet) or None (CSV, whose rows the parts do not tell without parsing them)."""
    if fmt == "parquet":
        pq = import_optional("pyarrow.parquet")
        rows = 0
        writer = None
        try:
            for part in parts:
                # text read as dictionaries (as Spark encoded it), so that no string is
                # decoded and hashed again; the file stores no Arrow schema, so its text is
                # read back as plain strings
                text = [f.name for f in pq.read_schema(part) if pa.types.is_string(f.type)]
                file = pq.ParquetFile(part, read_dictionary=text)
                if writer is None:  # every column nullable, without Spark's metadata
                    schema = pa.schema([f.with_nullable(True) for f in file.schema_arrow])
                    writer = pq.ParquetWriter(target, schema, store_schema=False)
                for batch in file.iter_batches(batch_size=_ROW_GROUP):
                    table = pa.Table.from_batches([batch]).cast(schema)
                    writer.write_table(table)
                    rows += table.num_rows
            if writer is None:  # no part at all: an empty table of text columns
                empty = pa.table({n: pa.array([], type=pa.string()) for n in names})
                writer = pq.ParquetWriter(target, empty.schema)
                writer.write_table(empty)
        finally:
            if writer is not None:
                writer.close()
        return rows
    header = csv_header(names, separator)
    with open(target, "wb") as out:
        out.write(gzip.compress(header) if fmt == "csv.gz" else header)
        for part in parts:  # gzip members one after the other are one gzip file
            with open(part, "rb") as fh:
                shutil.copyfileobj(fh, out, 1 << 20)
    return None


#: The Spark setting of how Parquet files store timestamps.
_TIMESTAMP_TYPE = "spark.sql.parquet.outputTimestampType"


def _json(F: Any, col: Any) -> Any:
    """A list, map or struct column as compact JSON, a null field written as ``null`` (as
    the numpy and DuckDB engines write it; Spark leaves such fields out by default)."""
    return F.to_json(col, {"ignoreNullFields": "false"})


def _quoted(name: str) -> str:
    """A column name as Spark SQL reads it, whatever characters it holds."""
    return "`" + name.replace("`", "``") + "`"


def _record(columns: Sequence[Any]) -> Any:
    """A struct of ``columns`` with fields ``k0..``, compared field by field (two nulls
    are equal)."""
    F = import_optional("pyspark.sql.functions", feature="the Spark engine")
    return F.struct(*[c.alias(f"k{j}") for j, c in enumerate(columns)])


def _as_text(pa: Any, table: Any) -> Any:
    """An Arrow table's columns as text, as :func:`anonlab.io.read_arrow` casts them (a
    float NaN null); list, map and struct columns as they are."""
    pc = import_optional("pyarrow.compute")
    if all(pa.types.is_string(t) or pa.types.is_nested(t) for t in table.schema.types):
        return table
    columns = []
    for col in table.columns:
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
        if pa.types.is_nested(col.type) or pa.types.is_string(col.type):
            columns.append(col)
            continue
        text = pc.cast(col, pa.string())
        if pa.types.is_floating(col.type):
            text = pc.if_else(pc.is_nan(col), pa.scalar(None, pa.string()), text)
        columns.append(text)
    return pa.table(columns, names=table.column_names)


def _internal(names: Sequence[str]) -> list[str]:
    """Spark-safe column names ``c0, c1, ...`` (names may hold dots, spaces, backticks)."""
    return [f"c{i}" for i in range(len(names))]


#: Spark's default split size (``spark.sql.files.maxPartitionBytes``): a CSV file up to it
#: is read by one task, so reading it whole (quoted fields may hold line breaks) costs nothing.
_SPLIT_BYTES = 128 * 2**20


#: Python's name of each encoding Spark's CSV reader takes -> Spark's name of it.
_ENCODINGS = {
    "utf-8": "utf-8",
    "utf-8-sig": "utf-8",
    "iso8859-1": "iso-8859-1",
    "ascii": "us-ascii",
    "utf-16": "utf-16",
    "utf-16-be": "utf-16be",
    "utf-16-le": "utf-16le",
    "utf-32": "utf-32",
}


def _csv_reader_options(opts: CsvOptions, *, multi_line: bool) -> dict[str, Any]:
    """Options of Spark's CSV reader that parse as anonlab's reader does; with
    ``multi_line`` a quoted field may hold line breaks (the file is then read by one task)."""
    return {
        "sep": opts.separator,
        "header": opts.header,
        "quote": opts.quote,
        "escape": opts.quote,  # a quote inside a quoted field is doubled (RFC 4180)
        "encoding": reader_encoding(opts.encoding, _ENCODINGS, "spark"),
        "nullValue": _NEVER,
        "mode": "FAILFAST",
        "multiLine": multi_line,
        "inferSchema": False,
        "enforceSchema": True,
    }


def _domain(column: Any, *, natural: bool) -> npt.NDArray[np.object_]:
    """The distinct labels of a fetched Arrow column in code order, a null last: the natural
    order of :func:`~anonlab.data.labels.factorize` (level 0), else code-point order (the
    labels of a hierarchy level)."""
    values = np.asarray(column.unique().to_pylist(), dtype=object)
    if natural:
        return factorize(values)[1]
    null = np.asarray(values == None, dtype=bool)  # noqa: E711 - elementwise
    present = np.array(sorted(values[~null].tolist()), dtype=object)
    return np.append(present, np.array([None], dtype=object)) if null.any() else present


def _encode(pa: Any, column: Any, domain: npt.NDArray[np.object_]) -> npt.NDArray[np.int64]:
    """The index in ``domain`` (distinct labels, a null last if any) of each value of a
    fetched Arrow column."""
    pc = import_optional("pyarrow.compute")
    has_null = domain.size > 0 and domain[-1] is None
    present = domain[:-1] if has_null else domain
    idx = pc.index_in(column, value_set=pa.array(present.tolist(), type=pa.string()))
    filled = pc.fill_null(idx, domain.size - 1) if has_null else idx
    return np.asarray(filled.to_numpy(), dtype=np.int64)


def _classes(
    codes: npt.NDArray[np.int64], radix: Sequence[int]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The distinct rows of ``codes`` in lexicographic order, and each row's index there."""
    if codes.shape[1] == 0:
        return np.zeros((1 if codes.shape[0] else 0, 0), dtype=np.int64), np.zeros(
            codes.shape[0], dtype=np.int64
        )
    packed = _pack(codes, radix)
    if packed is not None:
        uniq, first, inv = np.unique(packed, return_index=True, return_inverse=True)
        return codes[first], inv.reshape(-1).astype(np.int64)
    uniq_rows, inv = np.unique(codes, axis=0, return_inverse=True)
    return uniq_rows, inv.reshape(-1).astype(np.int64)


def _lookup(
    class_keys: npt.NDArray[np.int64], codes: npt.NDArray[np.int64], radix: Sequence[int]
) -> npt.NDArray[np.int64]:
    """The index in ``class_keys`` (sorted distinct rows) of each row of ``codes``."""
    if class_keys.shape[1] == 0:
        return np.zeros(codes.shape[0], dtype=np.int64)
    keys, packed = _pack(class_keys, radix), _pack(codes, radix)
    if keys is not None and packed is not None:
        return np.searchsorted(keys, packed).astype(np.int64)
    both = np.concatenate([class_keys, codes])
    _, inv = np.unique(both, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    where = np.empty(int(inv.max()) + 1, dtype=np.int64)
    where[inv[: class_keys.shape[0]]] = np.arange(class_keys.shape[0])
    return where[inv[class_keys.shape[0] :]]


def _pack(codes: npt.NDArray[np.int64], radix: Sequence[int]) -> npt.NDArray[np.int64] | None:
    """Rows of codes as one mixed-radix int64 each (lexicographic order kept), if it fits."""
    if float(np.prod([max(r, 1) for r in radix], dtype=np.float64)) >= 2.0**62:
        return None
    out = np.zeros(codes.shape[0], dtype=np.int64)
    for j, r in enumerate(radix):
        out = out * max(r, 1) + codes[:, j]
    return out


def _is_spark_error(exc: BaseException) -> bool:
    """Whether ``exc`` comes from Spark or its Java gateway (not from anonlab)."""
    module = type(exc).__module__ or ""
    return module.startswith(("pyspark", "py4j"))


_MALFORMED = "a malformed row"


def _summary(exc: BaseException) -> str:
    """One line from a Spark error: its first meaningful line, without the Java stack."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    for ln in lines:  # the reason of a failed read, if Spark gives one
        if "Malformed" in ln or "MALFORMED" in ln:
            return (
                f"{_MALFORMED} (a different number of fields, a quote not closed, or, in a "
                "file over 128 MiB that is not gzipped, a line break inside a quoted field, "
                "which Spark reads only from a gzipped file or --engine duckdb): " + ln[:160]
            )
        if "TIMESTAMP(NANOS" in ln:  # pandas writes datetimes so by default
            return (
                "it holds timestamps in nanoseconds, which Spark cannot read. Write them in "
                "microseconds (pandas: to_parquet(..., coerce_timestamps='us', "
                "allow_truncated_timestamps=True)) or use --engine duckdb or numpy."
            )
        if "(FLOAT16)" in ln:  # half floats (numpy float16) written by Arrow
            return (
                "it holds 16-bit floats (float16), which Spark cannot read. Write them as "
                "32-bit floats (pandas: df.astype({'col': 'float32'})) or use --engine duckdb "
                "or numpy."
            )
    for ln in lines:
        if ln.startswith(("at ", "Traceback", "JVM stacktrace", "py4j", "An error occurred")):
            continue
        return ln[:300]
    return type(exc).__name__
