"""What the web app holds between requests: the served folder, open tables and jobs.

Nothing here knows HTTP. Every file the app reads or writes goes through :class:`Workspace`,
which refuses a path outside the folder given at start (``..``, an absolute path, a symbolic
link that leads out, its own folders ``anonlab-uploads/`` and ``anonlab-output/`` among
them), never overwrites an input, and writes outputs with anonlab's atomic writer. What it
writes is its owner's only (files 0600 in folders 0700) and is removed when the app stops,
unless it is told to keep it. An upload is bounded after decompression too. A release that
keeps a column that identifies people, or has k = 1, waits for the user's confirmation before
it is written. Error lines name no path of the server outside the served folder and no
Python internals.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import itertools
import os
import re
import secrets
import shutil
import sys
import threading
import time
import traceback
import warnings
import zlib
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import Any

import anonlab
from anonlab import api
from anonlab.api import AnonlabError, PrivacyRiskWarning
from anonlab.io import CsvOptions, read_table, sniff_header, sniff_separator, write_hierarchy
from anonlab.io.atomic import atomic_write
from anonlab.io.writers import write_table
from anonlab.report.html import render

__all__ = [
    "DATA_SUFFIXES",
    "Dataset",
    "Job",
    "Workspace",
    "guarded",
    "hierarchy_text",
    "one_line",
    "parse_hierarchy_text",
]

#: The separator choice that guesses it from the file's first lines.
AUTO_SEPARATOR = "auto"

#: The files the app opens.
DATA_SUFFIXES = (".csv", ".csv.gz", ".parquet")
#: Folders (under the served folder) where uploads and outputs go.
UPLOADS = "anonlab-uploads"
OUTPUTS = "anonlab-output"
#: Open tables kept in memory (the oldest is closed first).
MAX_DATASETS = 8
#: A value of the table is shown only if at least this many rows hold it.
MIN_ROWS_SHOWN = 5
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
#: An absolute path of two or more parts (its last part is kept).
_ABSOLUTE = re.compile(r"(?<![\w./~-])/(?:[^\s/'\"(),;:]+/)+([^\s/'\"(),;:]*)")


def one_line(exc: BaseException, root: Path | None = None) -> str:
    """The one-line message the page shows for an error (``error: ...``).

    A path under ``root`` is shown relative to it, any other absolute path by its last part
    (``…/name``); an error anonlab does not foresee is shown without its Python details
    (the server's log has them).
    """
    if isinstance(exc, AnonlabError):
        text = str(exc)
    elif isinstance(exc, MemoryError):
        text = "this machine ran out of memory; ask a smaller question (fewer attributes or levels)"
    elif isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        text = f"{exc.strerror or 'the operating system refused it'}{where}."
    else:
        text = "an unexpected error stopped this; the server's log has the details."
    return without_paths(" ".join(text.split()), root)


def without_paths(text: str, root: Path | None = None) -> str:
    """``text`` with paths under ``root`` made relative and other absolute paths cut to
    their last part."""
    if root is not None and root.parent != root:  # the folder "/" has nothing to cut
        text = text.replace(f"{root}{os.sep}", "").replace(str(root), "the served folder")
    return _ABSOLUTE.sub(lambda m: "…/" + m.group(1), text)


@contextlib.contextmanager
def guarded(notes: list[str]) -> Iterator[list[str]]:
    """Collect privacy warnings into ``notes``; errors go up to the caller's handler."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyRiskWarning)
        try:
            yield notes
        finally:
            notes.extend(dict.fromkeys(str(w.message) for w in caught))


@dataclass
class Dataset:
    """A table the app has open.

    Attributes
    ----------
    id : str
    name : str
        What the page calls it (the file's path under the served folder).
    table : EncodedTable
    engine : Engine
        Opened once: questions on the same table reuse its partitions.
    data_argument : str
        The data as the command line names it (relative to the served folder).
    options : list of str
        Command-line options that shaped it (``--drop-missing``).
    hierarchies : dict
        Hierarchies a job uses by default (the bundled data's).
    path : Path or None
        The file, never written.
    identifying : list of str
        Columns whose values are never shown: declared identifiers and the columns that
        identify a row on their own (:func:`anonlab.api.identifying_columns`).
    """

    id: str
    name: str
    table: Any
    engine: Any
    data_argument: str
    options: list[str]
    hierarchies: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    identifying: list[str] = field(default_factory=list)
    #: Hierarchies inferred from the columns (shown in the job form), made when first asked.
    inferred: dict[str, Any] = field(default_factory=dict)

    def hierarchy_of(self, column: str) -> tuple[int, str]:
        """The height of a column's hierarchy and its levels in words: its own, or the one
        inferred from its values (``auto: {grouping: frequency}``)."""
        if column in self.hierarchies:
            h = self.hierarchies[column]
            return h.height, f"its hierarchy of {h.height} level{'' if h.height == 1 else 's'}"
        if column not in self.inferred:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                found = api.infer_hierarchies(self.engine, [column], grouping="frequency")
            self.inferred[column] = found[column]
        auto = self.inferred[column]
        return auto.hierarchy.height, auto.description

    def hierarchy_text(self, column: str) -> str | None:
        """A column's hierarchy as the job form edits it (ARX's rows, ``;`` between the
        levels), or None when it has more than :data:`EDITABLE_VALUES` values."""
        self.hierarchy_of(column)
        h = (
            self.hierarchies[column]
            if column in self.hierarchies
            else self.inferred[column].hierarchy
        )
        if len(h.leaves) > EDITABLE_VALUES:
            return None
        return hierarchy_text(h)


#: The most values a hierarchy may have to be edited in the job form.
EDITABLE_VALUES = 200


def hierarchy_text(hierarchy: Any) -> str:
    """A hierarchy as lines of ``value;level 1;...;top`` (ARX's format).

    Examples
    --------
    >>> from anonlab import Hierarchy
    >>> print(hierarchy_text(Hierarchy([["F", "*"], ["M", "*"]])))
    F;*
    M;*
    """
    return "\n".join(";".join(row) for row in hierarchy.rows())


def parse_hierarchy_text(text: str, column: str) -> Any:
    """The hierarchy a user wrote in the job form (ARX's rows), or one line naming the
    column and what is wrong.

    Examples
    --------
    >>> parse_hierarchy_text("F;*\\nM;*", "sex").height
    1
    """
    rows = [line.strip().split(";") for line in text.splitlines() if line.strip()]
    if not rows:
        raise api.InputError(f"The hierarchy of {column!r} in the form is empty.")
    return anonlab.Hierarchy([[cell.strip() for cell in row] for row in rows], attribute=column)


@dataclass
class Job:
    """An anonymization job running (or run) in a worker thread.

    Attributes
    ----------
    id : str
    dataset : Dataset
    status : str
        ``running``, ``held`` (computed; waits for the user's confirmation before it is
        written), ``writing``, ``done`` or ``failed``.
    step : str
        What it is doing.
    done, total : int
        Search progress (``total`` 0 if unknown).
    error : str
        The one-line error of a failed job.
    data : ReportData or None
        Everything a done job shows.
    files : dict of str to Path
        ``release``, ``job`` and ``report``, written when the job is done.
    notes : list of str
        Privacy warnings.
    held : list of str
        Why a computed release waits for confirmation (an identifying column kept, k = 1).
    folder : str
        Where the files are, relative to the served folder.
    kept : bool
        Whether they stay when the app stops.
    """

    id: str
    dataset: Dataset
    status: str = "running"
    step: str = "starting"
    done: int = 0
    total: int = 0
    error: str = ""
    data: Any = None
    files: dict[str, Path] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    held: list[str] = field(default_factory=list)
    job: Any = None
    folder: str = ""
    kept: bool = False
    started: float = field(default_factory=time.monotonic)
    elapsed: float = 0.0
    pending: tuple[Any, str, str] | None = field(default=None, repr=False)

    def __call__(self, advance: int, total: int | None) -> None:
        """The API's progress callback: the search advanced."""
        self.done += int(advance)
        self.total = int(total or 0)

    def stage(self, message: str) -> None:
        """The API's progress callback: a new step starts."""
        self.step = message


class Workspace:
    """The served folder, the open tables and the jobs of one app.

    Parameters
    ----------
    root : path
        The folder given at start: nothing outside it is read or written.
    max_upload : int
        The largest upload in bytes, as sent and once decompressed.
    keep_outputs : bool
        Keep the uploads and the jobs' files when the app stops (by default
        :meth:`close` removes them).
    """

    def __init__(
        self, root: str | os.PathLike[str], max_upload: int, *, keep_outputs: bool = False
    ) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise api.InputError(f"The folder to serve {str(root)!r} is not a directory.")
        self.max_upload = int(max_upload)
        if self.max_upload <= 0:
            raise api.ParameterError(f"The upload limit must be above 0 bytes; got {max_upload}.")
        self.keep_outputs = bool(keep_outputs)
        self.datasets: OrderedDict[str, Dataset] = OrderedDict()
        self.jobs: dict[str, Job] = {}
        self.closed = False
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._written: list[Path] = []  # files and folders this app wrote
        self._made: list[Path] = []  # its own folders it created
        for name in (UPLOADS, OUTPUTS):  # refused now rather than at the first write
            if os.path.lexists(self.root / name):
                self._own_folder(name, create=False)

    # ------------------------------------------------------------------ paths
    def inside(self, relative: str) -> Path:
        """The file ``relative`` names under the served folder.

        Raises
        ------
        InputError
            An empty, absolute or escaping path (``..``, a link that leads out).
        """
        text = relative.strip()
        if not text or "\x00" in text:
            raise api.InputError("Give the path of a file under the served folder.")
        if Path(text).is_absolute():
            raise api.InputError(
                f"{text!r} is an absolute path; give a path under the served folder."
            )
        target = (self.root / text).resolve()
        if not target.is_relative_to(self.root):
            raise api.InputError(f"{text!r} is outside the served folder; it cannot be opened.")
        return target

    def _own_folder(self, name: str, *, create: bool = True) -> Path:
        """The app's folder ``name`` under the served folder, resolved (made 0700 if new).

        Raises
        ------
        InputError
            If it leads outside the served folder (a link) or is not a folder.
        """
        path = self.root / name
        if create:
            try:
                path.mkdir(mode=0o700)
            except FileExistsError:
                pass
            else:
                with self._lock:
                    self._made.append(path)
        try:
            real = path.resolve()
        except (OSError, RuntimeError):  # a loop of links
            real = Path("/")
        if not real.is_relative_to(self.root):
            raise api.InputError(
                f"{name}/ in the served folder leads outside it (a link to elsewhere); "
                "nothing is written there. Remove the link or serve another folder."
            )
        if not real.is_dir():
            raise api.InputError(
                f"{name} in the served folder is not a folder; remove it or serve another folder."
            )
        return real

    def _remember(self, path: Path) -> None:
        """Note a file or folder the app wrote (:meth:`close` removes it)."""
        with self._lock:
            closed = self.closed
            if not closed:
                self._written.append(path)
        if closed:  # written while the app stopped: not kept
            _remove(path)
            raise api.InputError("The app is stopping; nothing was kept.")

    def close(self) -> None:
        """Stop: refuse further writes and remove the uploads and outputs this app wrote
        (unless ``keep_outputs``), then its own folders if they are left empty."""
        with self._lock:
            self.closed = True
            written, self._written = self._written, []
            made, self._made = self._made, []
        if self.keep_outputs:
            return
        for path in reversed(written):
            _remove(path)
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only if empty: what others put there stays

    def files(self, limit: int = 300) -> list[str]:
        """Data files under the served folder (relative paths), outputs left out."""
        found: list[str] = []
        for top, dirs, names in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != OUTPUTS)
            if len(Path(top).relative_to(self.root).parts) > 3:
                dirs[:] = []
            for n in sorted(names):
                if n.lower().endswith(DATA_SUFFIXES) and not n.startswith("."):
                    found.append(str((Path(top) / n).relative_to(self.root)))
                    if len(found) >= limit:
                        return found
        return found

    # ------------------------------------------------------------------ tables
    def _add(self, dataset: Dataset) -> Dataset:
        with self._lock:
            self.datasets[dataset.id] = dataset
            while len(self.datasets) > MAX_DATASETS:
                self.datasets.popitem(last=False)
        return dataset

    def _id(self) -> str:
        return f"{next(self._ids)}{secrets.token_hex(3)}"

    def open_adult(self) -> Dataset:
        """The bundled UCI Adult data without its rows with a missing value (30,162 rows)."""
        table = api.load_adult()
        engine = api.open_engine(table)
        return self._add(
            Dataset(
                self._id(),
                "UCI Adult (bundled)",
                table,
                engine,
                api.adult_path().name,  # where anonlab is installed is the server's business
                ["--drop-missing"],
                api.adult_hierarchies(table),
                identifying=_identifying(table, engine),
            )
        )

    def open_file(self, relative: str, *, separator: str, drop_missing: bool) -> Dataset:
        """Open a CSV or Parquet file under the served folder (``separator``
        :data:`AUTO_SEPARATOR`: guessed from its first lines)."""
        path = self.inside(relative)
        if not path.name.lower().endswith(DATA_SUFFIXES):
            raise api.InputError(
                f"{relative!r} is not a data file; open a {', '.join(DATA_SUFFIXES)} file."
            )
        header = True
        if separator == AUTO_SEPARATOR:  # the separator and the header guessed
            separator = sniff_separator(path)
            header = sniff_header(path, separator)
        table = read_table(path, csv_options=CsvOptions(separator=separator, header=header))
        name = str(path.relative_to(self.root))
        return self._opened(table, name, path, separator, drop_missing, header=header)

    def _opened(
        self,
        table: Any,
        name: str,
        path: Path,
        separator: str,
        drop_missing: bool,
        *,
        header: bool = True,
    ) -> Dataset:
        options = [] if separator == "," else ["--separator", separator]
        if not header:
            options.append("--no-header")
        if drop_missing:
            table = table.drop_nulls()
            options.append("--drop-missing")
        engine = api.open_engine(table)
        return self._add(
            Dataset(
                self._id(),
                name,
                table,
                engine,
                name,  # relative to the served folder, where the commands run
                options,
                {},
                path,
                _identifying(table, engine),
            )
        )

    def upload(
        self, filename: str, content: bytes, *, separator: str, drop_missing: bool
    ) -> Dataset:
        """Keep an uploaded file under ``anonlab-uploads/`` if it reads as a table.

        The bytes go to a hidden file first; it becomes ``NAME`` (``NAME-2``, ... if taken)
        only once it parses, else it is removed: a bad upload leaves nothing behind. A
        compressed upload (gzip, Parquet) is refused when it holds more than the limit
        once decompressed, before it is read.
        """
        if len(content) > self.max_upload:
            raise api.InputError(
                f"The upload has {len(content):,} bytes, more than the limit of "
                f"{self.max_upload:,}."
            )
        base = _SAFE_NAME.sub("_", Path(filename or "").name).strip("._")
        if not base.lower().endswith(DATA_SUFFIXES):
            raise api.InputError(
                f"Upload a {', '.join(DATA_SUFFIXES)} file; {filename!r} is not one."
            )
        if not content:
            raise api.InputError(f"The upload {base!r} is empty.")
        _check_expanded(base, content, self.max_upload)
        new = not os.path.lexists(self.root / UPLOADS)
        folder = self._own_folder(UPLOADS)
        suffix = ".csv.gz" if base.lower().endswith(".csv.gz") else Path(base).suffix
        stem = base[: -len(suffix)]
        tmp = folder / f".anonlab-upload-{secrets.token_hex(6)}{suffix}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        kept = False
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(content)
            header = True
            if separator == AUTO_SEPARATOR:  # the separator and the header guessed
                separator = sniff_separator(tmp)
                header = sniff_header(tmp, separator)
            try:
                csv_options = CsvOptions(separator=separator, header=header)
                table = read_table(tmp, csv_options=csv_options)
            except AnonlabError as exc:
                raise type(exc)(str(exc).replace(str(tmp), base)) from None
            for i in itertools.count(1):
                final = folder / (base if i == 1 else f"{stem}-{i}{suffix}")
                try:
                    os.link(tmp, final)  # never replaces a file that exists
                    kept = True
                    break
                except FileExistsError:
                    continue
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            if not kept and new:  # a bad upload leaves no folder behind either
                with contextlib.suppress(OSError):
                    folder.rmdir()
        self._remember(final)
        name = str(final.relative_to(self.root))
        return self._opened(table, name, final, separator, drop_missing, header=header)

    # ------------------------------------------------------------------ jobs
    def start_job(
        self,
        dataset: Dataset,
        job: Any,
        job_text: str,
        sensitive: list[str],
        *,
        population: Mapping[str, Any] | None = None,
    ) -> Job:
        """Run ``job`` on the dataset in a worker thread; its page follows it.

        ``population`` (``sampling_fraction`` or ``weight``) tells the report's risk the
        population the table was sampled from."""
        run = Job(self._id(), dataset, job=job)
        with self._lock:
            self.jobs[run.id] = run
        thread = threading.Thread(
            target=self._run,
            args=(run, job, job_text, sensitive, dict(population or {})),
            daemon=True,
        )
        thread.start()
        return run

    def _run(
        self,
        run: Job,
        job: Any,
        job_text: str,
        sensitive: list[str],
        population: dict[str, Any],
    ) -> None:
        try:
            with guarded(run.notes):
                data = api.report_data(
                    run.dataset.table,
                    job=job,
                    sensitive=sensitive,
                    title=f"Privacy diagnosis of {run.dataset.name}",
                    progress=run,
                    **population,
                )
                data.data_argument = run.dataset.data_argument
                data.options = list(run.dataset.options)
                data.profile = dataclasses.replace(data.profile, source=run.dataset.name)
                if data.job is not None:  # the job as written beside the release
                    data.job = dataclasses.replace(data.job, job_text=job_text)
                run.stage("drawing the figures")
                text = render(data)
                run.data = data
                run.pending = (job, job_text, text)
                run.held = _held(data, sensitive)
                if run.held:  # written only once the user confirms it (release)
                    run.status = "held"
                else:
                    self._finish(run)
        except BaseException as exc:  # the page shows one line, never a traceback
            self._failed(run, exc)
        finally:
            run.elapsed = time.monotonic() - run.started

    def release(self, run: Job) -> None:
        """Write a held release: the user confirmed it (nothing happens to any other job)."""
        with self._lock:
            if run.status != "held":
                return
            run.status = "writing"
        try:
            self._finish(run)
        except BaseException as exc:
            self._failed(run, exc)

    def _finish(self, run: Job) -> None:
        assert run.pending is not None
        job, job_text, text = run.pending
        run.stage("writing the files")
        run.files = self._write(run, run.data, job, job_text, text)
        run.pending = None
        run.status = "done"

    def _failed(self, run: Job, exc: BaseException) -> None:
        run.error = one_line(exc, self.root)
        run.status = "failed"
        if not isinstance(exc, (AnonlabError, OSError, MemoryError)):
            traceback.print_exc(file=sys.stderr)

    def _write(self, run: Job, data: Any, job: Any, job_text: str, text: str) -> dict[str, Path]:
        """The release, the job file (and its hierarchies) and the report, atomically, in a
        new folder of their own (0700; the files 0600)."""
        name = _SAFE_NAME.sub("_", Path(run.dataset.name).name).strip("._") or "data"
        folder = self._own_folder(OUTPUTS) / f"{name}-job-{run.id}"
        folder.mkdir(mode=0o700)
        self._remember(folder)
        protect = [run.dataset.path] if run.dataset.path is not None else []
        files = {
            "release": write_table(
                data.job.result.columns, folder / "released.csv", protect=protect
            ),
            "job": folder / "job.yaml",
            "report": folder / "report.html",
        }
        written = [files["release"]]
        for attr, hierarchy in _hierarchies(job).items():
            (folder / "hierarchies").mkdir(mode=0o700, exist_ok=True)
            written.append(folder / "hierarchies" / f"{attr}.csv")
            write_hierarchy(hierarchy, written[-1])
        with atomic_write(files["job"], protect=protect) as tmp:
            tmp.write_text(job_text, encoding="utf-8")
        with atomic_write(files["report"], protect=protect) as tmp:
            tmp.write_text(text, encoding="utf-8")
        for path in [*written, files["job"], files["report"]]:
            os.chmod(path, 0o600)
        run.folder = str(folder.relative_to(self.root))
        run.kept = self.keep_outputs
        return files


def _remove(path: Path) -> None:
    """Remove a file or a folder the app wrote (never what a link points to)."""
    with contextlib.suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def _identifying(table: Any, engine: Any) -> list[str]:
    """Declared identifiers and the columns that identify a row on their own."""
    declared = [n for n in table.names if table.schema.role(n).value == "identifier"]
    found = [c for c, _ in api.identifying_columns(engine)]
    return list(dict.fromkeys(declared + found))


def _held(data: Any, sensitive: list[str]) -> list[str]:
    """Why a computed release must be confirmed before it is written (none: write it)."""
    figures = data.job
    if figures is None:
        return []
    released = set(figures.result.columns)
    reasons = [
        f"The release keeps the column {c['column']!r}, which may identify people on its own "
        f"({c['reason']}): the job releases it as it is (insensitive). Confirm to release it, "
        "or declare it under 'identifiers:' (never released) or make it a quasi-identifier."
        for c in data.risk.identifying_columns
        if c["column"] in released and c["column"] not in sensitive
    ]
    if figures.release.k == 1:
        reasons.append(
            "The release has k = 1: a released record is alone in its class, so anyone who "
            "knows its quasi-identifiers finds it. Add k-anonymity with k of 2 or more."
        )
    return reasons


def _check_expanded(name: str, content: bytes, limit: int) -> None:
    """Refuse a compressed upload that holds more than ``limit`` bytes once decompressed.

    A gzip stream is decompressed a megabyte at a time and counted, never held whole; a
    Parquet file is judged by its footer: its data uncompressed, and its cells (a CSV file
    of ``limit`` bytes holds at most ``limit / 2`` cells: a character and a separator each).
    """
    too_big = f"The upload {name!r} holds more than the limit of {limit:,} bytes once decompressed"
    if content[:2] == b"\x1f\x8b":
        total = 0
        try:
            with gzip.GzipFile(fileobj=BytesIO(content)) as stream:
                while total <= limit and (chunk := stream.read(1 << 20)):
                    total += len(chunk)
        except (OSError, EOFError, zlib.error) as exc:
            raise api.InputError(
                f"The upload {name!r} is not a complete gzip file ({exc})."
            ) from None
        if total > limit:
            raise api.InputError(f"{too_big}; upload a smaller file.")
    elif name.lower().endswith(".parquet"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            meta = pq.ParquetFile(pa.BufferReader(content)).metadata
        except (pa.ArrowException, OSError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else "unreadable"
            raise api.InputError(f"The upload {name!r} is not a Parquet file ({first}).") from None
        data = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        cells = meta.num_rows * max(meta.num_columns, 1)
        if data > limit:
            raise api.InputError(f"{too_big} ({data:,} bytes of data); upload a smaller file.")
        if cells > limit // 2:
            raise api.InputError(
                f"{too_big} ({cells:,} cells, more than a CSV file of the limit holds); "
                "upload a smaller file."
            )


def _hierarchies(job: Any) -> dict[str, Any]:
    """The in-memory hierarchies of a job given as a mapping (written beside its file)."""
    if not isinstance(job, dict):
        return {}
    qis = job.get("quasi_identifiers", {})
    return {
        a: opts["hierarchy"]
        for a, opts in qis.items()
        if isinstance(opts, dict) and not isinstance(opts.get("hierarchy", ""), (str, Path))
    }
