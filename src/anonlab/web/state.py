"""What the web app holds between requests: the served folder, open tables and jobs.

Nothing here knows HTTP. Every file the app reads or writes goes through :class:`Workspace`,
which refuses a path outside the folder given at start (``..``, an absolute path, a symbolic
link that leads out), never overwrites an input, and writes outputs with anonlab's atomic
writer.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import re
import secrets
import sys
import threading
import time
import traceback
import warnings
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anonlab import api
from anonlab.api import AnonlabError, PrivacyRiskWarning
from anonlab.io import CsvOptions, read_table, write_hierarchy
from anonlab.io.atomic import atomic_write
from anonlab.io.writers import write_table
from anonlab.report.html import render

__all__ = ["DATA_SUFFIXES", "Dataset", "Job", "Workspace", "guarded", "one_line"]

#: The files the app opens.
DATA_SUFFIXES = (".csv", ".csv.gz", ".parquet")
#: Folders (under the served folder) where uploads and outputs go.
UPLOADS = "anonlab-uploads"
OUTPUTS = "anonlab-output"
#: Open tables kept in memory (the oldest is closed first).
MAX_DATASETS = 8
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def one_line(exc: BaseException) -> str:
    """The one-line message the command line prints for an error (``error: ...``)."""
    if isinstance(exc, AnonlabError):
        text = str(exc)
    elif isinstance(exc, MemoryError):
        text = "this machine ran out of memory; ask a smaller question (fewer attributes or levels)"
    elif isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        text = f"{exc.strerror or exc}{where}."
    else:
        text = f"unexpected {type(exc).__name__}: {exc}"
    return " ".join(text.split())


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
        The data as the command line names it.
    options : list of str
        Command-line options that shaped it (``--drop-missing``).
    hierarchies : dict
        Hierarchies a job uses by default (the bundled data's).
    path : Path or None
        The file, never written.
    """

    id: str
    name: str
    table: Any
    engine: Any
    data_argument: str
    options: list[str]
    hierarchies: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None


@dataclass
class Job:
    """An anonymization job running (or run) in a worker thread.

    Attributes
    ----------
    id : str
    dataset : Dataset
    status : str
        ``running``, ``done`` or ``failed``.
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
    started: float = field(default_factory=time.monotonic)
    elapsed: float = 0.0

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
        The largest upload in bytes.
    """

    def __init__(self, root: str | os.PathLike[str], max_upload: int) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise api.InputError(f"The folder to serve {str(root)!r} is not a directory.")
        self.max_upload = int(max_upload)
        self.datasets: OrderedDict[str, Dataset] = OrderedDict()
        self.jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)

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
        return self._add(
            Dataset(
                self._id(),
                "UCI Adult (bundled)",
                table,
                api.open_engine(table),
                str(api.adult_path()),
                ["--drop-missing"],
                api.adult_hierarchies(table),
            )
        )

    def open_file(self, relative: str, *, separator: str, drop_missing: bool) -> Dataset:
        """Open a CSV or Parquet file under the served folder."""
        path = self.inside(relative)
        if not path.name.lower().endswith(DATA_SUFFIXES):
            raise api.InputError(
                f"{relative!r} is not a data file; open a {', '.join(DATA_SUFFIXES)} file."
            )
        table = read_table(path, csv_options=CsvOptions(separator=separator))
        return self._opened(table, str(path.relative_to(self.root)), path, separator, drop_missing)

    def _opened(
        self, table: Any, name: str, path: Path, separator: str, drop_missing: bool
    ) -> Dataset:
        options = [] if separator == "," else ["--separator", separator]
        if drop_missing:
            table = table.drop_nulls()
            options.append("--drop-missing")
        return self._add(
            Dataset(self._id(), name, table, api.open_engine(table), str(path), options, {}, path)
        )

    def upload(
        self, filename: str, content: bytes, *, separator: str, drop_missing: bool
    ) -> Dataset:
        """Keep an uploaded file under ``anonlab-uploads/`` if it reads as a table.

        The bytes go to a hidden file first; it becomes ``NAME`` (``NAME-2``, ... if taken)
        only once it parses, else it is removed: a bad upload leaves nothing behind.
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
        folder = self.root / UPLOADS
        suffix = ".csv.gz" if base.lower().endswith(".csv.gz") else Path(base).suffix
        stem = base[: -len(suffix)]
        tmp = self.root / f".anonlab-upload-{secrets.token_hex(6)}{suffix}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(content)
            try:
                table = read_table(tmp, csv_options=CsvOptions(separator=separator))
            except AnonlabError as exc:
                raise type(exc)(str(exc).replace(str(tmp), base)) from None
            folder.mkdir(exist_ok=True)
            for i in itertools.count(1):
                final = folder / (base if i == 1 else f"{stem}-{i}{suffix}")
                try:
                    os.link(tmp, final)  # never replaces a file that exists
                    break
                except FileExistsError:
                    continue
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        name = str(final.relative_to(self.root))
        return self._opened(table, name, final, separator, drop_missing)

    # ------------------------------------------------------------------ jobs
    def start_job(self, dataset: Dataset, job: Any, job_text: str, sensitive: list[str]) -> Job:
        """Run ``job`` on the dataset in a worker thread; its page follows it."""
        run = Job(self._id(), dataset)
        with self._lock:
            self.jobs[run.id] = run
        thread = threading.Thread(
            target=self._run, args=(run, job, job_text, sensitive), daemon=True
        )
        thread.start()
        return run

    def _run(self, run: Job, job: Any, job_text: str, sensitive: list[str]) -> None:
        try:
            with guarded(run.notes):
                data = api.report_data(
                    run.dataset.table,
                    job=job,
                    sensitive=sensitive,
                    title=f"Privacy diagnosis of {run.dataset.name}",
                    progress=run,
                )
                data.data_argument = run.dataset.data_argument
                data.options = list(run.dataset.options)
                if data.job is not None:  # the job as written beside the release
                    data.job = dataclasses.replace(data.job, job_text=job_text)
                run.stage("drawing the figures")
                text = render(data)
                run.stage("writing the files")
                run.files = self._write(run, data, job, job_text, text)
                run.data = data
                run.status = "done"
        except BaseException as exc:  # the page shows one line, never a traceback
            run.error = one_line(exc)
            run.status = "failed"
            if not isinstance(exc, (AnonlabError, OSError, MemoryError)):
                traceback.print_exc(file=sys.stderr)
        finally:
            run.elapsed = time.monotonic() - run.started

    def _write(self, run: Job, data: Any, job: Any, job_text: str, text: str) -> dict[str, Path]:
        """The release, the job file (and its hierarchies) and the report, atomically."""
        name = _SAFE_NAME.sub("_", Path(run.dataset.name).name).strip("._") or "data"
        folder = self.root / OUTPUTS / f"{name}-job-{run.id}"
        folder.mkdir(parents=True, exist_ok=True)
        protect = [run.dataset.path] if run.dataset.path is not None else []
        files = {
            "release": write_table(
                data.job.result.columns, folder / "released.csv", protect=protect
            ),
            "job": folder / "job.yaml",
            "report": folder / "report.html",
        }
        for attr, hierarchy in _hierarchies(job).items():
            (folder / "hierarchies").mkdir(exist_ok=True)
            write_hierarchy(hierarchy, folder / "hierarchies" / f"{attr}.csv")
        with atomic_write(files["job"], protect=protect) as tmp:
            tmp.write_text(job_text, encoding="utf-8")
        with atomic_write(files["report"], protect=protect) as tmp:
            tmp.write_text(text, encoding="utf-8")
        return files


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
