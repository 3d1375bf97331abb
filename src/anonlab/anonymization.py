"""Anonymization jobs: a job file and a table become a Problem, an algorithm, a release.

The public entry points are :func:`anonlab.anonymize` and :func:`anonlab.check`. A job names
its algorithm (``algorithm: optimal`` or ``{name: privacyfrost2, score: log}``); the
algorithm, looked up in :data:`anonlab.algorithms.ALGORITHMS`, returns a recoding of the
:class:`~anonlab.release.problem.Problem`; :func:`anonlab.release.verify` re-checks the
released table independently, suppresses within the limit or raises
:class:`~anonlab.exceptions.PrivacyCheckError`, and measures the loss on the release; only
then is anything returned or written.
"""

from __future__ import annotations

import dataclasses
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._progress import Progress, stage
from anonlab._resources import format_bytes, memory_budget
from anonlab._threads import single_threaded_blas
from anonlab._validation import check_columns, did_you_mean
from anonlab.algorithms import build_anonymizer
from anonlab.algorithms.base import FREQUENCY_SET_ALGORITHMS, Anonymizer
from anonlab.data.builders import (
    date_hierarchy,
    flat_hierarchy,
    interval_hierarchy,
    masking_hierarchy,
)
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.schema import Schema
from anonlab.data.source import FileSource
from anonlab.data.stats import ClassStats
from anonlab.data.table import EncodedTable
from anonlab.diagnosis.risk import warn_identifying_columns
from anonlab.engines import ENGINES, Engine, get_engine
from anonlab.engines.base import ReleasePlan
from anonlab.exceptions import DataFormatError, InputError, ParameterError
from anonlab.io import memory_estimate, read_hierarchy, read_table
from anonlab.io.atomic import atomic_write, check_input_file, check_output, output_format
from anonlab.io.job import JobSpec, PersonalizedSpec, parse_job, read_job
from anonlab.io.writers import write_table
from anonlab.metrics import build_metric
from anonlab.models import build_model
from anonlab.models.base import PrivacyModel
from anonlab.models.per_record import RecordModel
from anonlab.release import (
    AnonymizationResult,
    Problem,
    check_release,
    metric_context,
    model_keys,
    recheck_written,
    verify,
)
from anonlab.release.recoding import FullDomain
from anonlab.release.verify import Release

__all__ = [
    "AnonymizationResult",
    "CheckReport",
    "JOB_ENGINES",
    "anonymize",
    "build_problem",
    "check",
    "choose_engine",
    "input_files",
    "load_job",
]

#: The engines ``anonymize`` and ``check`` take: ``auto`` chooses by the data's size.
JOB_ENGINES = ("auto", *ENGINES)
#: ``auto`` runs a job out of core (DuckDB) when reading the data whole would need more than
#: this share of the available memory (:func:`anonlab._resources.memory_budget`).
AUTO_OUT_OF_CORE_SHARE = 0.25
#: DuckDB's memory limit for a job: this share of the available memory, at most
#: :data:`DUCKDB_MEMORY_CAP` (its peak RSS stays within about twice the limit).
DUCKDB_MEMORY_SHARE = 0.25
DUCKDB_MEMORY_CAP = 2 << 30

JobLike = JobSpec | dict[str, Any] | str | os.PathLike[str]


def load_job(job: JobLike) -> JobSpec:
    """Return a :class:`~anonlab.io.job.JobSpec` from a spec, a mapping or a YAML file."""
    if isinstance(job, JobSpec):
        return job
    if isinstance(job, dict):
        return parse_job(job)
    return read_job(job)


def _hierarchy_for(spec: Any, table: EncodedTable) -> Hierarchy:
    if isinstance(spec.hierarchy, Hierarchy):
        return spec.hierarchy.named(spec.name)  # errors name the column it generalizes
    if spec.hierarchy is not None:
        return read_hierarchy(spec.hierarchy, attribute=spec.name)
    values = [v for v in table.column(spec.name).categories if v is not None]
    if spec.builder is None:
        return flat_hierarchy(values, attribute=spec.name)
    kind, params = spec.builder
    builders: dict[str, Callable[..., Hierarchy]] = {
        "mask": masking_hierarchy,
        "intervals": interval_hierarchy,
        "dates": date_hierarchy,
    }
    try:
        return builders[kind](values, attribute=spec.name, **params)
    except TypeError as exc:
        raise ParameterError(
            f"Bad '{kind}' options of quasi-identifier {spec.name!r}: {exc}."
        ) from None


def _models(job: JobSpec) -> list[PrivacyModel]:
    out = []
    for name, params in job.models:
        params = dict(params)
        if isinstance(params.get("hierarchy"), (str, Path)):  # a tree file, next to the job
            params["hierarchy"] = read_hierarchy(
                job.base_dir / str(params["hierarchy"]), attribute=str(params.get("attribute"))
            )
        out.append(build_model(name, params))
    return out


def build_problem(data: Any, job: JobSpec, *, engine: Engine | None = None) -> Problem:
    """Read the data and build the :class:`~anonlab.release.problem.Problem` a job asks for.

    Parameters
    ----------
    data : path, DataFrame, pyarrow Table or EncodedTable
        The table (unused when ``engine`` is given).
    job : JobSpec
        The parsed job.
    engine : Engine, optional
        An out-of-core engine over the data: the problem's table is then its frequency set
        (the distinct combinations of the quasi-identifiers and the attributes the models
        read, with their counts; :meth:`~anonlab.engines.base.Engine.frequency_set`), and
        the job's identifiers are checked against the engine's columns (they are dropped
        when the engine writes the release).

    Raises
    ------
    InputError
        Unknown columns, a hierarchy that does not cover its column, bad levels, a model
        that needs more rows than the table has, ... (the message names the culprit).
    """
    limit_column = _limit_column(job)
    identifiers = list(job.identifiers)
    if engine is None:
        table = read_table(data, csv_options=job.csv)
        table.require([q.name for q in job.quasi_identifiers], what="quasi-identifier")
        table.require(job.sensitive, what="sensitive attribute")
        if limit_column:
            table.require([limit_column], what="limit column")
        models = None
    else:
        models = _models(job)
        table = _frequency_set(engine, job, models)
        identifiers = []  # not in the frequency set; the engine drops them from the release
    schema = Schema.from_lists(
        identifiers=identifiers,
        quasi_identifiers=[q.name for q in job.quasi_identifiers],
        sensitive=job.sensitive,
        limits=[limit_column] if limit_column else [],
    )
    table = table.with_schema(schema)
    models, record_parameters = _personalize(_models(job) if models is None else models, job, table)
    hidden = [] if job.personalized is None or job.personalized.release_limits else [limit_column]
    hierarchies = {q.name: _hierarchy_for(q, table) for q in job.quasi_identifiers}
    bounds = {}
    for q in job.quasi_identifiers:
        h = hierarchies[q.name].height
        lo = 0 if q.min_level is None else q.min_level
        hi = h if q.max_level is None else q.max_level
        bounds[q.name] = (lo, hi)
    metric_name, metric_params = job.metric
    return Problem(
        table=table,
        quasi_identifiers=tuple(q.name for q in job.quasi_identifiers),
        hierarchies=hierarchies,
        models=tuple(models),
        metric=build_metric(metric_name, **metric_params),
        max_suppressed=int(math.floor(job.suppression * table.n_records + 1e-9)),
        level_bounds=bounds,
        weights={q.name: q.weight for q in job.quasi_identifiers},
        priorities={
            q.name: (1 if q.priority is None else q.priority) for q in job.quasi_identifiers
        },
        record_parameters=record_parameters,
        identifiers=tuple(identifiers) + tuple(c for c in hidden if c),
    )


def _frequency_set(engine: Engine, job: JobSpec, models: list[PrivacyModel]) -> EncodedTable:
    """The frequency set of a job's columns (quasi-identifiers, sensitive attributes, the
    models' attributes), after checking every column the job names exists."""
    if job.personalized is not None or any(isinstance(m, RecordModel) for m in models):
        raise ParameterError(
            "Personalized privacy judges each record against its own limit, which needs the "
            f"table's rows; the {engine.name} engine anonymizes from the counts of the "
            "distinct combinations. Run this job with --engine numpy (engine='numpy'). "
            "Nothing was written."
        )
    columns = engine.columns
    qis = [q.name for q in job.quasi_identifiers]
    check_columns(qis, columns, what="quasi-identifier")
    check_columns(list(job.sensitive), columns, what="sensitive attribute")
    check_columns(list(job.identifiers), columns, what="identifier")
    overlap = sorted(set(job.identifiers) & set(qis))
    if overlap:
        raise ParameterError(f"Column {overlap[0]!r} is both an identifier and a quasi-identifier.")
    read = list(qis) + list(job.sensitive)
    for m in models:
        check_columns(list(m.sensitive_attributes), columns, what=f"attribute of model {m.name!r}")
        read.extend(m.sensitive_attributes)
    wanted = set(read)
    table = engine.frequency_set([c for c in columns if c in wanted])  # in the data's order
    if table.n_rows == 0:
        where = f" {table.source!r}" if table.source else ""
        raise DataFormatError(f"The table{where} is empty: it has no rows. Nothing was written.")
    return table


def _limit_column(job: JobSpec) -> str | None:
    """The job's limit column, refused if the job gives it another role."""
    column = None if job.personalized is None else job.personalized.limit_column
    roles = (
        ("a quasi-identifier", [q.name for q in job.quasi_identifiers]),
        ("a sensitive attribute", job.sensitive),
        ("an identifier", job.identifiers),
    )
    for role, names in roles:
        if column is not None and column in names:
            raise ParameterError(
                f"Column {column!r} is the limit column of 'personalized' and also {role}; a "
                "column has one role. Nothing was written."
            )
    return column


def _personalize(
    models: list[PrivacyModel], job: JobSpec, table: EncodedTable
) -> tuple[list[PrivacyModel], dict[str, npt.NDArray[np.float64]]]:
    """Bind the job's per-record limits to its per-record models; the limits per row."""
    record = [m for m in models if isinstance(m, RecordModel)]
    spec = job.personalized
    if spec is None:
        if record:
            raise ParameterError(
                f"Model {record[0].name!r} judges each record against its own leakage limit: "
                "give the job 'personalized: {limit_column: <column>}' or "
                "'personalized: {default_limit: 0.25}'."
            )
        return models, {}
    if not record:
        raise ParameterError(
            "The job gives leakage limits ('personalized') but no model judges them: add "
            "'- personalized_leakage: {attribute: <sensitive column>, hierarchy: <its tree>}' "
            "to 'models'."
        )
    for m in record:
        if m.attribute == spec.limit_column:
            raise ParameterError(
                f"Column {m.attribute!r} is the limit column of 'personalized' and the sensitive "
                f"attribute of model {m.name!r}; a column has one role."
            )
        table.require([m.attribute], what=f"attribute of model {m.name!r}")
        m.validate(table[m.attribute])
    limits = _read_limits(table, spec)
    bound = [
        m.bind(column=spec.limit_column, default=spec.default_limit)
        if isinstance(m, RecordModel)
        else m
        for m in models
    ]
    return bound, {m.record_parameter: limits for m in record}


def _read_limits(table: EncodedTable, spec: PersonalizedSpec) -> npt.NDArray[np.float64]:
    """Each row's leakage limit, from the limit column (a missing cell takes the default)
    or the default; an error names the first row whose limit is missing, not a number or
    outside (0, 1]."""
    if spec.limit_column is None:
        return np.full(table.n_rows, spec.default_limit, dtype=np.float64)
    col = table[spec.limit_column]
    values = np.full(col.cardinality, np.nan)
    text = np.zeros(col.cardinality, dtype=bool)  # not a number
    for i, v in enumerate(col.categories.tolist()):  # the distinct values, not the rows
        try:
            values[i] = np.nan if v is None else float(v)
        except ValueError:
            text[i] = True
    limits = values[col.codes]
    missing = np.isnan(limits) & (col.codes == (-1 if col.null_code is None else col.null_code))
    if spec.default_limit is not None:
        limits[missing] = spec.default_limit
        missing[:] = False
    where = f"of limit column {spec.limit_column!r}"
    problems = (
        (missing, "has no limit (a missing value); give every row a limit or set 'default_limit'"),
        (text[col.codes], "holds {value!r}, which is not a number"),
        (~((limits > 0) & (limits <= 1)), "holds {value}"),
    )
    for bad, what in problems:
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            value = col.categories[col.codes[row]]
            raise ParameterError(
                f"Row {row} {where} {what.format(value=value)}: a leakage limit is a "
                "probability in (0, 1]. Nothing was written."
            )
    return limits


def _warn_identifiers(
    problem: Problem, job: JobSpec, action: str, engine: Engine | None = None
) -> None:
    """A :class:`~anonlab.exceptions.PrivacyRiskWarning` per undeclared identifying column
    (of the engine's data when the problem is a frequency set)."""
    declared = {
        *problem.quasi_identifiers,
        *job.sensitive,
        *job.identifiers,
        *problem.sensitive,
        *problem.table.schema.limits,
    }
    warn_identifying_columns(
        get_engine("numpy", problem.table) if engine is None else engine,
        sorted(declared),
        action=f"{action} Declare it under 'identifiers:' (never released) or as a "
        "quasi-identifier.",
        stacklevel=3,
    )


def input_files(data: Any, job: JobSpec) -> tuple[Path, ...]:
    """The files a job reads: the data, the job file and every hierarchy file it names.

    An output must never be one of them (see :func:`anonlab.io.atomic.check_output`).
    """
    files: list[Path] = []
    if isinstance(data, (str, os.PathLike)):
        files.append(Path(data))
    if job.source is not None:
        files.append(Path(job.source))
    for q in job.quasi_identifiers:
        if isinstance(q.hierarchy, Path):
            files.append(q.hierarchy)
    for _, params in job.models:
        h = params.get("hierarchy")
        if isinstance(h, (str, os.PathLike)):
            files.append(job.base_dir / str(h))
    return tuple(files)


def choose_engine(data: Any, engine: str = "auto") -> str:
    """The engine that runs a job on ``data``: the one asked for, checked, or by size.

    ``auto`` runs out of core (``duckdb``) a file that would need more than
    :data:`AUTO_OUT_OF_CORE_SHARE` of the available memory read whole
    (:func:`anonlab.io.memory_estimate`; ``ANONLAB_MEMORY_BUDGET`` sets the memory), and
    everything else in memory (``numpy``). ``numpy`` is refused for a file that would need
    more than the available memory.

    Parameters
    ----------
    data : path, DataFrame, pyarrow Table or EncodedTable
        The table.
    engine : str
        ``"auto"``, ``"numpy"``, ``"duckdb"`` (or another registered engine).

    Returns
    -------
    str
        The engine's name.

    Raises
    ------
    ParameterError
        An unknown engine, or an out-of-core engine for a table already in memory.
    InputError
        ``numpy`` for a file larger than the memory (the message gives the sizes and the
        engine to use instead).
    """
    if not isinstance(engine, str) or engine not in JOB_ENGINES:
        raise ParameterError(
            f"Unknown engine {engine!r}.{did_you_mean(str(engine), JOB_ENGINES)} "
            f"Valid engines: {', '.join(JOB_ENGINES)}."
        )
    if isinstance(data, EncodedTable):
        if engine not in ("auto", "numpy"):
            raise ParameterError(
                f"The {engine} engine reads files or data frames; this table is encoded in "
                "memory already: use engine='numpy', or give the file."
            )
        return "numpy"
    if not isinstance(data, (str, os.PathLike)):
        return "numpy" if engine == "auto" else engine
    if engine not in ("auto", "numpy"):
        return engine
    on_disk, need = memory_estimate(data)
    if engine == "numpy" and need > memory_budget(1.0):
        raise InputError(
            f"The data file {str(data)!r} ({format_bytes(on_disk)} on disk) needs about "
            f"{format_bytes(need)} in memory, more than this machine has available "
            f"({format_bytes(memory_budget(1.0))}); use --engine duckdb (engine='duckdb'), "
            "which anonymizes it out of core. Nothing was written."
        )
    if engine == "auto" and need > memory_budget(AUTO_OUT_OF_CORE_SHARE):
        return "duckdb"
    return "numpy"


def _open_engine(
    data: Any, spec: JobSpec, name: str, engine_options: Mapping[str, Any] | None = None
) -> Engine:
    """An out-of-core engine over the job's data (``engine_options`` passed to it)."""
    source = data
    if isinstance(data, (str, os.PathLike)):
        source = FileSource(check_input_file(data, "data file"), csv=spec.csv)
    options = dict(engine_options or {})
    if name == "duckdb":  # beyond it DuckDB spills to disk: the peak stays within a few GB
        limit = min(memory_budget(DUCKDB_MEMORY_SHARE), DUCKDB_MEMORY_CAP)
        options["memory_limit"] = f"{max(limit >> 20, 256)}MB"
    engine = get_engine(name, source, **options)
    if not engine.writes_releases:
        engine.close()
        raise ParameterError(
            f"The {name} engine cannot compute frequency sets and write releases yet, so it "
            "cannot anonymize or check a job; use --engine duckdb (out of core) or --engine "
            "numpy (in memory)."
        )
    return engine


def _check_frequency_algorithm(algorithm: Anonymizer, engine: str) -> None:
    """Refuse, before any work, an algorithm that needs the individual rows."""
    if not algorithm.accepts_frequency_set():
        raise ParameterError(
            f"Algorithm {algorithm.name!r} needs the individual rows of the table; the "
            f"{engine} engine anonymizes from the counts of its distinct combinations. "
            f"{FREQUENCY_SET_ALGORITHMS} run on any engine; run {algorithm.name!r} with "
            "--engine numpy (engine='numpy') on a table that fits in memory. Nothing was "
            "written."
        )


def anonymize(
    data: Any,
    job: JobLike,
    *,
    output: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
    engine: str = "auto",
    engine_options: Mapping[str, Any] | None = None,
) -> AnonymizationResult:
    """Anonymize ``data`` as the job says, re-check the release, and write it if asked.

    Parameters
    ----------
    data : path, DataFrame, pyarrow Table or EncodedTable
        The table.
    job : JobSpec, mapping or path
        The job (see :mod:`anonlab.io.job` and the README): quasi-identifiers and their
        hierarchies, models, suppression, metric, algorithm and its parameters.
    output : path, optional
        Write the released table here (``.csv``, ``.csv.gz`` or ``.parquet``), atomically,
        after the re-check. The job's inputs are never overwritten.
    progress : callable, optional
        ``progress(advance, total)`` as the search advances; ``progress.stage(message)``
        (if it has one) as each step starts.
    engine : str
        ``"numpy"`` (the table in memory), ``"duckdb"`` (out of core: the search runs on
        the frequency set, DuckDB streams the release to ``output`` and groups the written
        file again to re-check it before it is renamed into place) or ``"auto"`` (by the
        data's size, see :func:`choose_engine`). Out of core, ``result.columns`` holds the
        released distinct combinations of the quasi-identifiers and the models'
        attributes, not the rows: the rows are in ``output``. ``"spark"`` runs the same
        way on a Spark session.
    engine_options : mapping, optional
        Options of an out-of-core engine, e.g. ``{"master": "spark://host:7077"}`` or
        ``{"spark": session}`` for Spark.

    Returns
    -------
    AnonymizationResult

    Raises
    ------
    InputError
        Bad job or data (before any work), or no release satisfies the models within the
        suppression limit.
    PrivacyCheckError
        The released table failed the independent re-check (never expected): nothing is
        returned or written.
    """
    spec = load_job(job)
    algorithm = build_anonymizer(spec.algorithm, spec.algorithm_params)
    name = choose_engine(data, engine)
    if name != "numpy":
        _check_frequency_algorithm(algorithm, name)
    protect = input_files(data, spec)
    if output is not None:  # before any work: a bad output path costs nothing
        output_format(output)
        check_output(output, protect=protect)
    stage(
        progress,
        f"reading {Path(data).name}" if isinstance(data, (str, os.PathLike)) else "reading",
    )
    if name != "numpy":
        eng = _open_engine(data, spec, name, engine_options)
        try:
            return _anonymize_out_of_core(eng, spec, algorithm, output, protect, progress)
        finally:
            eng.close()
    problem = build_problem(data, spec)
    _warn_identifiers(problem, spec, "it is released as it is.")
    stage(progress, "searching")
    mask = spec.output.get("suppressed", "remove") == "mask"
    with single_threaded_blas():
        algorithm.fit(problem, progress=progress)
        stage(progress, "verifying")
        release = verify(
            problem, algorithm.recoding_, mask_suppressed=mask, context=algorithm.context_
        )
    out_path = None
    if output is not None:
        write_table(
            release.columns,
            output,
            separator=spec.csv.separator,
            protect=protect,
            status=lambda m: stage(progress, m),
        )
        out_path = str(output)
    return AnonymizationResult(
        algorithm=algorithm.name,
        parameters=algorithm.get_params(),
        recoding=algorithm.recoding_,
        release=release,
        search=algorithm.search_,
        summary=algorithm.recoding_.summary(problem),
        output=out_path,
    )


def _anonymize_out_of_core(
    engine: Engine,
    spec: JobSpec,
    algorithm: Anonymizer,
    output: str | os.PathLike[str] | None,
    protect: tuple[Path, ...],
    progress: Progress | None,
) -> AnonymizationResult:
    """:func:`anonymize` through an out-of-core engine: search and verify on the frequency
    set, then the engine streams the release and it is re-checked from the written file."""
    problem = build_problem(None, spec, engine=engine)
    _warn_identifiers(problem, spec, "it is released as it is.", engine)
    stage(progress, "searching")
    mask = spec.output.get("suppressed", "remove") == "mask"
    with single_threaded_blas():
        algorithm.fit(problem, progress=progress)
        stage(progress, "verifying")
        release = verify(
            problem, algorithm.recoding_, mask_suppressed=mask, context=algorithm.context_
        )
    recoding = algorithm.recoding_
    if not isinstance(recoding, FullDomain) or recoding.rows is not None:  # pragma: no cover
        raise ParameterError(  # accepts_frequency_set() promises a full-domain recoding
            f"Algorithm {algorithm.name!r} returned a {type(recoding).__name__} release, "
            f"which the {engine.name} engine cannot write. Nothing was written."
        )
    out_path = None
    if output is not None:
        stage(progress, f"writing {Path(output).name}")
        _write_out_of_core(engine, problem, spec, recoding, release, output, protect, mask)
        out_path = str(output)
    return AnonymizationResult(
        algorithm=algorithm.name,
        parameters=algorithm.get_params(),
        recoding=recoding,
        release=release,
        search=algorithm.search_,
        summary=recoding.summary(problem),
        output=out_path,
    )


def _write_out_of_core(
    engine: Engine,
    problem: Problem,
    spec: JobSpec,
    recoding: FullDomain,
    release: Release,
    output: str | os.PathLike[str],
    protect: tuple[Path, ...],
    mask: bool,
) -> None:
    """Stream the release into a temporary file beside ``output``, group the written file
    again and let the models judge it (:func:`~anonlab.release.recheck_written`); only a
    file that passes is renamed over ``output``. A character device (``/dev/stdout``) gets
    the file's bytes after the check."""
    hidden = set(spec.identifiers) | set(problem.identifiers)
    suppressed = release.classes.key_labels() if release.suppressed.any() else []
    plan = ReleasePlan(
        columns=tuple(c for c in engine.columns if c not in hidden),
        quasi_identifiers=problem.quasi_identifiers,
        levels=recoding.vector(problem),
        hierarchies=problem.hierarchies,
        suppressed=tuple(
            tuple(None if x is None else str(x) for x in key)
            for key, s in zip(suppressed, release.suppressed)
            if s
        ),
        mask_suppressed=mask,
    )
    fmt = output_format(output)
    separator = spec.csv.separator
    with atomic_write(output, protect=protect) as tmp:
        device = check_output(output, protect=protect)
        target = Path(tempfile.mkdtemp(prefix="anonlab-release-")) / "release" if device else tmp
        try:
            engine.write_release(plan, target, fmt=fmt, separator=separator)
            written = engine.release_stats(
                target,
                fmt=fmt,
                quasi_identifiers=list(problem.quasi_identifiers),
                sensitive=list(problem.sensitive),
                separator=separator,
            )
            recheck_written(problem, written, release.verification, mask_suppressed=mask)
            if device:
                with open(target, "rb") as src, open(tmp, "wb") as dst:
                    shutil.copyfileobj(src, dst)
        finally:
            if device:
                shutil.rmtree(target.parent, ignore_errors=True)


def _plain(value: Any) -> Any:
    """A parameter as JSON can hold it: a hierarchy as its file (or a summary)."""
    if isinstance(value, Hierarchy):
        if value.source is not None:
            return value.source
        return f"<hierarchy of {value.attribute or 'an attribute'}, height {value.height}>"
    return value


@dataclass
class CheckReport:
    """Privacy models and the metric of a table as it is (``anonlab check``)."""

    n_rows: int
    n_classes: int
    models: list[dict[str, Any]]
    metric: str
    loss: float
    release: dict[str, Any] | None = None  # a non-homogeneous release checked beside ``data``

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        out = {
            "n_rows": self.n_rows,
            "n_classes": self.n_classes,
            "models": self.models,
            "loss": {"metric": self.metric, "value": self.loss},
        }
        if self.release is not None:
            out["release"] = self.release
        return out


def check(
    data: Any,
    job: JobLike,
    *,
    release: Any | None = None,
    engine: str = "auto",
    engine_options: Mapping[str, Any] | None = None,
) -> CheckReport:
    """Report which models a table satisfies as it is, and the classes and rows violating each.

    The table is taken at level 0 of every quasi-identifier (its values as they are). With
    ``release`` (a released non-homogeneous table, one row per record of ``data`` in its
    order), the release is judged on its anonymity graph instead: the largest k of
    Definition 1 by max-flow (:func:`anonlab.release.check_release`).

    Parameters
    ----------
    data : path, DataFrame, pyarrow Table or EncodedTable
        The table.
    job : JobSpec, mapping or path
        The job: quasi-identifiers, hierarchies, models, metric.
    release : path or table, optional
        A non-homogeneous release of ``data`` (in memory only).
    engine : str
        ``"numpy"``, ``"duckdb"`` (the classes from one ``GROUP BY`` over the file) or
        ``"auto"`` (by size, see :func:`choose_engine`), or ``"spark"``.
    engine_options : mapping, optional
        Options of an out-of-core engine (as in :func:`anonymize`).

    Returns
    -------
    CheckReport
    """
    spec = load_job(job)
    name = choose_engine(data, engine)
    if name != "numpy":
        if release is not None:
            raise ParameterError(
                "A non-homogeneous release is checked on its anonymity graph, in memory: "
                "use --engine numpy (engine='numpy') with --release."
            )
        eng = _open_engine(data, spec, name, engine_options)
        try:
            problem = build_problem(None, spec, engine=eng)
            _warn_identifiers(problem, spec, "a release that keeps it re-identifies people.", eng)
        finally:
            eng.close()
        return _check_classes(problem)
    problem = build_problem(data, spec)
    _warn_identifiers(problem, spec, "a release that keeps it re-identifies people.")
    if release is not None:
        # anonlab writes a release with a header row and a null as an empty field
        options = dataclasses.replace(
            spec.csv, header=True, names=None, na_values=(*spec.csv.na_values, "")
        )
        return _check_cover(problem, read_table(release, csv_options=options))
    return _check_classes(problem)


def _check_classes(problem: Problem) -> CheckReport:
    """``check`` of the classes of the problem's table (a frequency set, or the rows)."""
    engine = get_engine("numpy", problem.table)
    per_record = any(isinstance(m, RecordModel) for m in problem.models)
    stats: ClassStats = engine.class_stats(
        list(problem.quasi_identifiers), sensitive=list(problem.sensitive), with_rows=per_record
    )
    models = []
    for key, m in zip(model_keys(problem.models), problem.models):
        records: dict[str, Any] = {}
        if isinstance(m, RecordModel):  # each record against its own limit
            assert stats.row_class is not None
            column = problem.table[m.attribute]
            limits = problem.record_parameters[m.record_parameter]
            verdict = m.judge_records(stats.row_class, column, column, limits)
            passed = verdict.class_ok & (stats.sizes >= m.min_class_size)
            records = verdict.report(m.measure)
        else:
            passed = m.class_ok(stats) & (stats.sizes >= m.min_class_size)
        bad = ~passed
        models.append(
            {
                "model": key,
                "params": {k: _plain(v) for k, v in m.params().items()},
                "holds": bool(passed.all()),
                "violating_classes": int(bad.sum()),
                "violating_rows": int(stats.sizes[bad].sum()),
                **records,
            }
        )
    violating = np.zeros(stats.n_classes, dtype=bool)
    loss = float(problem.metric.loss(stats, violating, metric_context(problem)))
    return CheckReport(problem.n_records, stats.n_classes, models, problem.metric.name, loss)


def _check_cover(problem: Problem, released: EncodedTable) -> CheckReport:
    """``check`` of a non-homogeneous release: k-anonymity on its anonymity graph."""
    found = check_release(problem, released)
    models = []
    for key, m in zip(model_keys(problem.models), problem.models):
        if m.name != "k_anonymity":
            raise ParameterError(
                f"A non-homogeneous release forms no equivalence classes; it is judged for "
                f"k_anonymity only, not {m.name!r}."
            )
        models.append(
            {
                "model": key,
                "params": m.params(),
                "holds": found.largest_k >= m.min_class_size,
                "violating_classes": 0,
                "violating_rows": 0,
            }
        )
    metric = problem.metric.name if problem.metric.name in ("gcp", "ncp") else "gcp"
    loss = found.ncp if metric == "ncp" else found.gcp
    return CheckReport(
        problem.n_rows, found.distinct_released, models, metric, loss, found.to_dict()
    )
