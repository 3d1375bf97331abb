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
import functools
import math
import os
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import numpy as np
import numpy.typing as npt

from anonlab._optional import import_optional
from anonlab._progress import Progress, listening, note, stage
from anonlab._resources import format_bytes, memory_budget
from anonlab._threads import single_threaded_blas
from anonlab._validation import check_columns, did_you_mean
from anonlab.algorithms import build_anonymizer
from anonlab.algorithms.base import (
    FREQUENCY_SET_ALGORITHMS,
    PARTITION_ALGORITHMS,
    Anonymizer,
)
from anonlab.data.builders import build_hierarchy, flat_hierarchy
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.schema import Schema
from anonlab.data.source import FileSource
from anonlab.data.stats import ClassStats
from anonlab.data.table import EncodedTable, LabelColumns
from anonlab.diagnosis.risk import IDENTIFYING_THRESHOLD, identifying_columns
from anonlab.engines import ENGINES, Engine, get_engine
from anonlab.engines.base import ReleasePlan, RowsPlan
from anonlab.exceptions import (
    DataFormatError,
    InputError,
    ParameterError,
    PrivacyCheckError,
    PrivacyRiskWarning,
)
from anonlab.io import memory_estimate, read_hierarchy, read_table
from anonlab.io.atomic import (
    PARQUET_DATASET,
    atomic_folder,
    check_input_file,
    check_output,
    output_format,
    readable_atomic_write,
)
from anonlab.io.job import JobSpec, PersonalizedSpec, parse_job, read_job
from anonlab.io.readers import read_arrow
from anonlab.io.temporary import temporary_folder
from anonlab.io.writers import json_text, write_table
from anonlab.metrics import build_metric
from anonlab.models import build_model
from anonlab.models.base import PrivacyModel
from anonlab.models.per_record import RecordModel
from anonlab.release import (
    AnonymizationResult,
    Problem,
    metric_context,
    model_keys,
    recheck_written,
    verify,
)
from anonlab.release.anonymity_graph import cover_problem
from anonlab.release.audit import audit_release
from anonlab.release.audit import check_columns as check_release_columns
from anonlab.release.partitioned import (
    DEFAULT_BLOCK_ROWS,
    BlockRelease,
    HeldBlocks,
    Partitioned,
    PartitionStats,
    block_ready,
    check_union,
    combine_verifications,
    merge_summaries,
    release_block,
    spanning_verdict,
    union_loss,
    union_release,
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
    "validate_job",
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
_P = ParamSpec("_P")
_R = TypeVar("_R")


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
    return build_hierarchy(kind, values, params, attribute=spec.name)


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


def build_problem(
    data: Any, job: JobSpec, *, engine: Engine | None = None, per_partition: bool = False
) -> Problem:
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
    per_partition : bool
        With ``engine``: the problem of a per-partition run (the frequency set also holds
        the limit column, and per-record models are accepted: the blocks hold the rows).

    Raises
    ------
    InputError
        Unknown columns, a hierarchy that does not cover its column, bad levels, a model
        that needs more rows than the table has, ... (the message names the culprit).
    """
    limit_column = _limit_column(job)
    identifiers = list(job.identifiers)
    if engine is None:
        table = _with_rows(read_table(data, csv_options=job.csv, allow_empty=True))
        table.require([q.name for q in job.quasi_identifiers], what="quasi-identifier")
        table.require(job.sensitive, what="sensitive attribute")
        check_columns(job.insensitive, table.names + table.nested, what="insensitive column")
        if limit_column:
            table.require([limit_column], what="limit column")
        models = None
    else:
        models = _models(job)
        table = _frequency_set(engine, job, models, per_partition=per_partition)
        identifiers = []  # not in the frequency set; the engine drops them from the release
    schema = Schema.from_lists(
        identifiers=identifiers,
        quasi_identifiers=[q.name for q in job.quasi_identifiers],
        sensitive=job.sensitive,
        limits=[limit_column] if limit_column else [],
    )
    table = table.with_schema(schema)
    models, record_parameters = _personalize(
        _models(job) if models is None else models, job, table, engine
    )
    hidden = [] if job.personalized is None or job.personalized.release_limits else [limit_column]
    hierarchies = {q.name: _hierarchy_for(q, table) for q in job.quasi_identifiers}
    if engine is not None:  # a value a hierarchy lacks: its first row is the engine's to find
        for name, tree in hierarchies.items():
            locate = functools.partial(engine.first_row, name)
            tree.check_covers(table.column(name).categories, locate=locate)
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


def _frequency_set(
    engine: Engine, job: JobSpec, models: list[PrivacyModel], *, per_partition: bool = False
) -> EncodedTable:
    """The frequency set of a job's columns (quasi-identifiers, sensitive attributes, the
    models' attributes, and per partition the limit column), after checking every column
    the job names exists."""
    if not per_partition:
        _frequency_set_models(job, models, engine.name)
    columns = engine.columns
    qis = [q.name for q in job.quasi_identifiers]
    check_columns(qis, columns, what="quasi-identifier")
    check_columns(list(job.sensitive), columns, what="sensitive attribute")
    check_columns(list(job.identifiers), columns, what="identifier")
    every = list(dict.fromkeys([*columns, *engine.nested_columns]))
    check_columns(list(job.insensitive), every, what="insensitive column")
    overlap = sorted(set(job.identifiers) & set(qis))
    if overlap:
        raise ParameterError(f"Column {overlap[0]!r} is both an identifier and a quasi-identifier.")
    read = list(qis) + list(job.sensitive)
    for m in models:
        check_columns(list(m.sensitive_attributes), columns, what=f"attribute of model {m.name!r}")
        read.extend(m.sensitive_attributes)
    limit = _limit_column(job)
    if per_partition and limit is not None:
        check_columns([limit], columns, what="limit column")
        read.append(limit)
    wanted = set(read)
    return _with_rows(engine.frequency_set([c for c in columns if c in wanted]))  # data's order


def _frequency_set_models(job: JobSpec, models: list[PrivacyModel], engine: str) -> None:
    """Refuse per-record limits (personalized privacy) on a frequency set."""
    if job.personalized is not None or any(isinstance(m, RecordModel) for m in models):
        raise ParameterError(
            "Personalized privacy judges each record against its own limit, which needs the "
            f"table's rows; the {engine} engine anonymizes from the counts of the "
            "distinct combinations. Run this job with --engine numpy (engine='numpy'). "
            "Nothing was written."
        )


def _with_rows(table: EncodedTable) -> EncodedTable:
    """``table``, refused with one line if it has no rows."""
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
    models: list[PrivacyModel], job: JobSpec, table: EncodedTable, engine: Engine | None = None
) -> tuple[list[PrivacyModel], dict[str, npt.NDArray[np.float64]]]:
    """Bind the job's per-record limits to its per-record models; the limits per row (per
    distinct combination when ``table`` is the frequency set of ``engine``'s data)."""
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
    limits = _read_limits(table, spec, engine)
    bound = [
        m.bind(column=spec.limit_column, default=spec.default_limit)
        if isinstance(m, RecordModel)
        else m
        for m in models
    ]
    return bound, {m.record_parameter: limits for m in record}


def _read_limits(
    table: EncodedTable, spec: PersonalizedSpec, engine: Engine | None = None
) -> npt.NDArray[np.float64]:
    """Each row's leakage limit, from the limit column (a missing cell takes the default)
    or the default; an error names the first row (1-based, in the file's order: the
    engine's, when ``table`` is its frequency set) whose limit is missing, not a number or
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
            row: int | None = int(np.flatnonzero(bad)[0])
            value: Any = col.categories[col.codes[row]]
            if table.weights is not None:  # a frequency set: the row of the file, if known
                labels = col.categories[np.unique(col.codes[bad])].tolist()
                found = None if engine is None else engine.first_row(spec.limit_column, labels)
                row, value = (None, value) if found is None else found
            at = "A row" if row is None else f"Row {row + 1}"
            raise ParameterError(
                f"{at} {where} {what.format(value=value)}: a leakage limit is a "
                "probability in (0, 1]. Nothing was written."
            )
    return limits


#: The ways to declare a column, as the refusals and warnings of identifying columns say.
_DECLARE = (
    "under 'identifiers:' (dropped from the release), as a quasi-identifier (generalized) or "
    "under 'insensitive:' (released as it is, knowingly)"
)


def _identifying(
    problem: Problem, job: JobSpec, engine: Engine | None = None
) -> list[tuple[str, str]]:
    """The undeclared columns of the job's data that identify people, with their reasons
    (:func:`~anonlab.diagnosis.risk.identifying_columns` of the engine's data when the
    problem is a frequency set; each quasi-identifier's coarsest level is its highest
    allowed one)."""
    declared = {
        *problem.quasi_identifiers,
        *job.sensitive,
        *job.identifiers,
        *problem.sensitive,
        *problem.table.schema.limits,
    }
    threshold = IDENTIFYING_THRESHOLD
    if job.identifying_threshold is not None:
        threshold = job.identifying_threshold
    return identifying_columns(
        get_engine("numpy", problem.table) if engine is None else engine,
        sorted(declared),
        threshold=threshold,
        quasi_identifiers=problem.quasi_identifiers,
        hierarchies=problem.hierarchies,
        levels={q: hi for q, (_, hi) in problem.level_bounds.items()},
        insensitive=job.insensitive,
    )


def _refuse_identifiers(problem: Problem, job: JobSpec, engine: Engine | None = None) -> None:
    """Refuse (:class:`~anonlab.exceptions.InputError`) a job that would release, as it
    is, an undeclared column that identifies people; the message lists each with its
    reason."""
    found = _identifying(problem, job, engine)
    if found:
        lines = "".join(f"\n  {column!r}: {reason}" for column, reason in found)
        what = "An undeclared column" if len(found) == 1 else f"{len(found)} undeclared columns"
        raise InputError(
            f"{what} would be released as {'it is' if len(found) == 1 else 'they are'} and "
            f"may identify people:{lines}\nDeclare each {_DECLARE}. Nothing was written."
        )


def _warn_identifiers(
    problem: Problem, job: JobSpec, action: str, engine: Engine | None = None
) -> None:
    """A :class:`~anonlab.exceptions.PrivacyRiskWarning` per undeclared identifying column
    (of the engine's data when the problem is a frequency set)."""
    for column, reason in _identifying(problem, job, engine):
        warnings.warn(
            PrivacyRiskWarning(
                f"Column {column!r} may identify people ({reason}) and is not declared: "
                f"{action} Declare it {_DECLARE}."
            ),
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


def validate_job(data: Any, job: JobLike) -> None:
    """Refuse a job on ``data`` for what :func:`anonymize` would refuse before its search,
    without searching: the job's keys, the columns and their roles, the hierarchies against
    the data, the models' parameters, the metric and the algorithm's parameters, and an
    undeclared column that identifies people (:func:`_refuse_identifiers`). What only
    the data's classes tell (a model no generalization can satisfy, such as ``l`` above the
    distinct sensitive values) is found by the search, as ever.

    Parameters
    ----------
    data : DataFrame, pyarrow Table or EncodedTable
        The table in memory (a file is read whole).
    job : JobSpec, mapping or path

    Raises
    ------
    AnonlabError
        The one-line error :func:`anonymize` would raise.
    """
    spec = load_job(job)
    algorithm = build_anonymizer(spec.algorithm, spec.algorithm_params)
    _check_suppression(algorithm, spec)
    problem = build_problem(data, spec)
    algorithm.check(problem)
    _refuse_identifiers(problem, spec)


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

    Examples
    --------
    >>> import pandas as pd
    >>> choose_engine(pd.DataFrame({"age": [30, 41]}))
    'numpy'
    """
    return _choice(data, engine)[0]


def _choice(data: Any, engine: str) -> tuple[str, str]:
    """:func:`choose_engine`'s engine and, for ``auto``, why (a sentence for the user)."""
    if not isinstance(engine, str) or engine not in JOB_ENGINES:
        raise ParameterError(
            f"Unknown engine {engine!r}.{did_you_mean(str(engine), JOB_ENGINES)} "
            f"Valid engines: {', '.join(JOB_ENGINES)}."
        )
    in_memory = "engine auto chose numpy (in memory): the table is in memory already."
    if isinstance(data, EncodedTable) and engine not in ("auto", "numpy"):
        raise ParameterError(
            f"The {engine} engine reads files or data frames; this table is encoded in "
            "memory already: use engine='numpy', or give the file."
        )
    if engine == "auto" and not isinstance(data, (str, os.PathLike)):
        return "numpy", in_memory
    if not isinstance(data, (str, os.PathLike)) or engine not in ("auto", "numpy"):
        return engine, ""
    on_disk, need = memory_estimate(data)
    if engine == "numpy" and need > memory_budget(1.0):
        raise InputError(
            f"The data file {str(data)!r} ({format_bytes(on_disk)} on disk) needs about "
            f"{format_bytes(need)} in memory, more than this machine has available "
            f"({format_bytes(memory_budget(1.0))}); use --engine duckdb (engine='duckdb'), "
            "which anonymizes it out of core. Nothing was written."
        )
    budget = memory_budget(AUTO_OUT_OF_CORE_SHARE)
    out_of_core = engine == "auto" and need > budget
    why = (
        f"{Path(data).name} needs about {format_bytes(need)} read whole, "
        f"{'more than' if out_of_core else 'within'} the {format_bytes(budget)} a table in "
        "memory may take (a quarter of the memory available)."
    )
    if out_of_core:
        return "duckdb", f"engine auto chose duckdb (out of core): {why}"
    return "numpy", f"engine auto chose numpy (in memory): {why}" if engine == "auto" else ""


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


def _listened(run: Callable[_P, _R]) -> Callable[_P, _R]:
    """``run`` with its ``progress`` keyword told the notes of what it calls (numba
    announcing a compilation, say: :func:`anonlab._progress.listening`)."""

    @functools.wraps(run)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        progress = kwargs.get("progress")
        with listening(progress if callable(progress) else None):
            return run(*args, **kwargs)

    return wrapper


def _check_frequency_algorithm(algorithm: Anonymizer, engine: str) -> None:
    """Refuse, before any work, an algorithm that neither runs on the frequency set nor
    partition by partition."""
    if not algorithm.accepts_frequency_set() and not algorithm.accepts_partitions():
        raise ParameterError(
            f"Algorithm {algorithm.name!r} needs the individual rows of the table; the "
            f"{engine} engine anonymizes from the counts of its distinct combinations. "
            f"{FREQUENCY_SET_ALGORITHMS} run on any engine; {PARTITION_ALGORITHMS} run out "
            f"of core block by block; run {algorithm.name!r} with --engine numpy "
            "(engine='numpy') on a table that fits in memory. Nothing was written."
        )


def _check_out_of_core(
    algorithm: Anonymizer, spec: JobSpec, engine: str, block_rows: int | None
) -> None:
    """Refuse, before the engine opens, a job its out-of-core run would refuse after
    reading the data: per-record limits on a frequency set, a model that the union of
    blocks may violate (:func:`~anonlab.release.partitioned.check_union`), blocks of fewer
    rows than the models' k."""
    models = _models(spec)
    if algorithm.accepts_frequency_set():
        _frequency_set_models(spec, models, engine)
        return
    check_union(models, algorithm.name)
    k = max([m.min_class_size for m in models] + [2])
    if block_rows is not None and block_rows < k:
        raise ParameterError(
            f"The 'block_rows' option (--block-rows) must be at least the models' k = {k}: "
            f"each block is anonymized on its own. Got {block_rows} instead. Nothing was "
            "written."
        )


def _check_suppression(algorithm: Anonymizer, spec: JobSpec) -> None:
    """Refuse a suppression limit or masked suppressed rows with an algorithm whose
    release never suppresses (they would do nothing)."""
    if algorithm.suppresses_rows():
        return
    given = []
    if spec.suppression > 0:
        given.append(f"'suppression: {spec.suppression:g}'")
    if spec.output.get("suppressed", "remove") == "mask":
        given.append("'output: {suppressed: mask}'")
    if given:
        raise ParameterError(
            f"{' and '.join(given)} would do nothing: {algorithm.name!r} suppresses no "
            "row (every record is released, generalized until the models hold). Drop "
            f"{'them' if len(given) > 1 else 'it'} from the job. Nothing was written."
        )


def _check_block_rows(
    block_rows: Any, algorithm: Anonymizer, engine: str, auto: bool = False
) -> int | None:
    """The ``block_rows`` option, checked before any work (None: the default): refused
    unless ``algorithm`` runs block by block on ``engine`` (an option that does nothing is
    an error)."""
    if block_rows is None:
        return None
    if isinstance(block_rows, bool) or not isinstance(block_rows, int) or block_rows < 1:
        raise ParameterError(
            f"The 'block_rows' option (--block-rows) must be an int >= 1. Got {block_rows!r} "
            "instead. Nothing was written."
        )
    if algorithm.accepts_frequency_set() or not algorithm.accepts_partitions():
        raise ParameterError(
            f"The 'block_rows' option (--block-rows) would do nothing: {algorithm.name!r} "
            f"never cuts the table into blocks: {PARTITION_ALGORITHMS[:1].lower()}"
            f"{PARTITION_ALGORITHMS[1:]} do, out of core. "
            "Drop it. Nothing was written."
        )
    if engine == "numpy":
        chosen = " (chosen by engine auto: the table fits in memory)" if auto else ""
        raise ParameterError(
            f"The 'block_rows' option (--block-rows) would do nothing: the numpy engine"
            f"{chosen} anonymizes the table whole, in memory; blocks are cut out of core "
            "(--engine duckdb or spark). Drop it, or choose one of those engines. Nothing "
            "was written."
        )
    return int(block_rows)


@_listened
def anonymize(
    data: Any,
    job: JobLike,
    *,
    output: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
    engine: str = "auto",
    engine_options: Mapping[str, Any] | None = None,
    block_rows: int | None = None,
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
        after the re-check. The job's inputs are never overwritten. With the Spark engine, a
        string ending with ``/`` names a new folder that receives the release as a Parquet
        dataset (part files written in parallel, in the source's row order by file name),
        re-checked before it is renamed into place.
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
    block_rows : int, optional
        Out of core, the rows per block of the algorithms that place individual rows
        (local recoding, non-homogeneous generalization, personalized privacy), which run
        block by block on the table sorted on its quasi-identifiers (default
        :data:`~anonlab.release.partitioned.DEFAULT_BLOCK_ROWS`, 100,000; at least the
        models' k). Unused by the other algorithms and in memory.

    Returns
    -------
    AnonymizationResult

    Raises
    ------
    InputError
        Bad job or data (before any work), an undeclared column that identifies people
        (:func:`~anonlab.diagnosis.risk.identifying_columns`: the message lists each with
        its figures; declare it under ``identifiers:``, as a quasi-identifier or under
        ``insensitive:``), or no release satisfies the models within the suppression limit.
    PrivacyCheckError
        The released table failed the independent re-check (never expected): nothing is
        returned or written.
    """
    spec = load_job(job)
    algorithm = build_anonymizer(spec.algorithm, spec.algorithm_params)
    name, why = _choice(data, engine)
    rows_per_block = _check_block_rows(block_rows, algorithm, name, auto=engine == "auto")
    _check_suppression(algorithm, spec)
    if name != "numpy":
        _check_frequency_algorithm(algorithm, name)
        _check_out_of_core(algorithm, spec, name, rows_per_block)
    protect = input_files(data, spec)
    if output is not None:  # before any work: a bad output path costs nothing
        if output_format(output) == PARQUET_DATASET and name != "spark":
            raise InputError(
                f"The output {str(output)!r} ends with '/': a Parquet dataset folder, which "
                f"the spark engine writes (--engine spark); with the {name} engine give a "
                "file name ending with .csv, .csv.gz or .parquet. Nothing was written."
            )
        if output_format(output) == PARQUET_DATASET and not algorithm.accepts_frequency_set():
            raise InputError(
                f"The output {str(output)!r} ends with '/': a Parquet dataset folder, but "
                f"{algorithm.name!r} releases its blocks' rows in the source's order as one "
                "file; give a file name ending with .csv, .csv.gz or .parquet. Nothing was "
                "written."
            )
        check_output(output, protect=protect)
    if why:
        note(why, progress)
    stage(
        progress,
        f"reading {Path(data).name}" if isinstance(data, (str, os.PathLike)) else "reading",
    )
    if name != "numpy":
        eng = _open_engine(data, spec, name, engine_options)
        try:
            if not algorithm.accepts_frequency_set():
                return _anonymize_partitioned(
                    eng, spec, algorithm, output, protect, progress, rows_per_block
                )
            return _anonymize_out_of_core(eng, spec, algorithm, output, protect, progress)
        finally:
            eng.close()
    problem = build_problem(data, spec)
    algorithm.check(problem)  # (a bad parameter is said first, as validate_job says it)
    _refuse_identifiers(problem, spec)
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
        problem=problem,
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
    algorithm.check(problem)
    _refuse_identifiers(problem, spec, engine)
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
        problem=problem,
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
    the file's bytes after the check; a Parquet dataset folder (``output`` ending with
    ``/``) is written into a temporary folder and renamed into place likewise."""
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
    staging = (
        atomic_folder(output)
        if fmt == PARQUET_DATASET
        else readable_atomic_write(output, protect=protect)
    )
    with staging as target:
        engine.write_release(plan, target, fmt=fmt, separator=separator)
        written = engine.release_stats(
            target,
            fmt=fmt,
            quasi_identifiers=list(problem.quasi_identifiers),
            sensitive=list(problem.sensitive),
            separator=separator,
        )
        recheck_written(problem, written, release.verification, mask_suppressed=mask)


# ------------------------------------------------------------------ per partition
def _anonymize_partitioned(
    engine: Engine,
    spec: JobSpec,
    algorithm: Anonymizer,
    output: str | os.PathLike[str] | None,
    protect: tuple[Path, ...],
    progress: Progress | None,
    block_rows: int | None,
) -> AnonymizationResult:
    """:func:`anonymize` of a row-placing algorithm out of core, block by block.

    The engine streams the table sorted on its quasi-identifiers (ascending cardinality,
    then each value's place in its hierarchy: Murakami & Uno, section 3.2.3) in blocks of
    ``block_rows`` rows; each block, encoded with the whole table's labels, is anonymized
    in memory by the algorithm and verified by :func:`~anonlab.release.verify.verify`
    before its labels are staged; a block that cannot be anonymized on its own (fewer rows
    than k, a sensitive share above alpha: paper 002's Lemma 1) is anonymized with the next.
    Each block may suppress its share of the job's limit (``floor(suppression * rows)``),
    so the total stays within it. With a per-record model the verified blocks are held in
    files until every block is done (:class:`~anonlab.release.partitioned.HeldBlocks`): the
    classes whose labels occur in several blocks are judged merged, and the algorithm
    releases again the values of those that fail, as in memory, before any block is staged.
    The union is then written in the source's order and re-checked
    (:func:`_write_partitioned`); :mod:`anonlab.release.partitioned` gives the union argument
    and refuses the models it does not cover.
    """
    whole = build_problem(None, spec, engine=engine, per_partition=True)
    check_union(whole.models, algorithm.name)
    k = max([m.min_class_size for m in whole.models] + [2])
    rows = DEFAULT_BLOCK_ROWS if block_rows is None else block_rows
    if rows < k:
        raise ParameterError(
            f"The 'block_rows' option (--block-rows) must be at least the models' k = {k}: "
            f"each block is anonymized on its own. Got {rows} instead. Nothing was written."
        )
    _refuse_identifiers(whole, spec, engine)
    table = whole.table
    order = sorted(whole.quasi_identifiers, key=lambda q: table.column(q).cardinality)
    columns = [c for c in table.names]
    mask = spec.output.get("suppressed", "remove") == "mask"
    n = whole.n_records
    total = max(math.ceil(n / rows), 1)
    stage(progress, f"sorting {n:,} rows into blocks of {rows:,}")
    engine.clear_staged()
    start = time.perf_counter()
    blocks: list[BlockRelease] = []
    merged = 0
    stream = engine.partitions(
        columns,
        categories={c: table.column(c).categories for c in columns},
        order_by={q: whole.hierarchies[q] for q in order},
        block_rows=rows,
    )
    per_record = any(isinstance(m, RecordModel) for m in whole.models)
    with temporary_folder("anonlab-blocks") as folder:  # (0700, removed by a next run if killed)
        held = HeldBlocks(whole, Path(folder)) if per_record else None
        with single_threaded_blas():
            for out, joined, problem in _solved_blocks(
                algorithm, _ready_blocks(stream, whole, spec)
            ):
                merged += joined
                stage(
                    progress, f"block {len(blocks) + 1} of about {total} done ({out.n_rows:,} rows)"
                )
                if held is None:
                    engine.stage_labels(out.rows, out.labels, out.keep)
                else:  # staged once the classes spanning blocks are known
                    held.hold(out, problem)
                out.forget_rows()  # only the block's figures stay in memory
                blocks.append(out)
                if progress is not None:
                    progress(1, total)
        if held is not None:
            stage(progress, "judging the classes that span blocks, merged")
            held.stage(engine, algorithm)
    if not blocks:  # pragma: no cover - build_problem refuses an empty table
        raise DataFormatError("The table is empty: it has no rows. Nothing was written.")
    release, spanning = _write_partitioned(
        engine, whole, spec, blocks, output, protect, mask, progress
    )
    sizes = [b.n_rows for b in blocks]
    summaries: dict[str, Any] = {}
    for b in blocks:
        merge_summaries(summaries, b.summary)
    search = PartitionStats(
        elapsed_s=time.perf_counter() - start,
        evaluated=sum(b.search.evaluated for b in blocks),
        blocks=len(blocks),
        block_rows=rows,
        smallest_block=min(sizes),
        largest_block=max(sizes),
        merged_blocks=merged,
        spanning_classes=spanning,
        rejoined_classes=0 if held is None else held.rejoined_classes,
        rejoined_records=0 if held is None else held.rejoined_records,
        per_block=[
            {
                "rows": b.n_rows,
                "seconds": round(b.seconds, 4),
                "suppressed_rows": b.verification.suppressed_rows,
                "loss": b.loss,
                "search": b.search.to_dict(),
            }
            for b in blocks
        ],
    )
    recoding = Partitioned(algorithm.name, blocks[0].kind, len(blocks), rows, summaries)
    return AnonymizationResult(
        algorithm=algorithm.name,
        parameters=algorithm.get_params(),
        recoding=recoding,
        release=release,
        search=search,
        problem=whole,
        output=None if output is None else str(output),
    )


def _solve_block(
    algorithm: Anonymizer, problem: Problem, rows: npt.NDArray[np.int64]
) -> BlockRelease:
    """Anonymize one block in memory and verify it (the release layer's check)."""
    t0 = time.perf_counter()
    algorithm.fit(problem)
    out = release_block(
        problem, algorithm.recoding_, rows, search=algorithm.search_, context=algorithm.context_
    )
    out.seconds = time.perf_counter() - t0
    return out


_Block = tuple[npt.NDArray[np.int64], EncodedTable, int]
_Ready = tuple[npt.NDArray[np.int64], Problem, int]


def _solved_blocks(
    algorithm: Anonymizer, ready: Iterator[_Ready]
) -> Iterator[tuple[BlockRelease, int, Problem]]:
    """Each ready block anonymized and verified, in order, with the blocks it joined and its
    problem.

    One block at a time: in processes (2 cores, Adult resampled to 1 M rows, blocks of
    100,000) the blocks' work overlapped little with the sort and the write, and the gain
    was within the machine's noise (3.5 -> 3.1 s progressive, 8.1 -> 7.8 s top_down, 4.2
    -> 5.3 s personalized); ``murakami_uno`` already runs its chunks in processes.
    """
    for rows, problem, joined in ready:
        yield _solve_block(algorithm, problem, rows), joined, problem


def _ready_blocks(
    stream: Iterable[tuple[npt.NDArray[np.int64], EncodedTable]], whole: Problem, spec: JobSpec
) -> Iterator[_Ready]:
    """The blocks to anonymize: ``(rows, problem, blocks joined)``, rows in source order.

    A block that is not ready on its own (:func:`~anonlab.release.partitioned.block_ready`)
    is joined to the next; the last block, if not ready, to the one before it (one block is
    held back for that).
    """
    held: _Ready | None = None
    pending: _Block | None = None
    need = max([m.min_class_size for m in whole.models] + [1])
    for rows, table in stream:
        joined = 0
        if pending is not None:
            rows, table = _concat(pending[0], pending[1], rows, table)
            joined = pending[2] + 1
            pending = None
        small = table.n_rows < need  # too few rows for a Problem of its own
        problem = None if small else _block_problem(whole, spec, rows, table)
        if problem is None or not block_ready(problem):
            pending = (rows, table, joined)
            continue
        if held is not None:
            yield held
        held = (_source_order(rows), problem, joined)
    if pending is not None:
        if held is not None:
            rows, table = _concat(held[0], held[1].table, pending[0], pending[1])
            held = (
                _source_order(rows),
                _block_problem(whole, spec, rows, table),
                held[2] + pending[2] + 1,
            )
        else:
            held = (
                _source_order(pending[0]),
                _block_problem(whole, spec, pending[0], pending[1]),
                pending[2],
            )
    if held is not None:
        yield held


def _source_order(rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """A block's rows in source order (its table is put in the same order)."""
    return np.sort(rows)


def _concat(
    rows_a: npt.NDArray[np.int64], a: EncodedTable, rows_b: npt.NDArray[np.int64], b: EncodedTable
) -> tuple[npt.NDArray[np.int64], EncodedTable]:
    """Two blocks as one (their columns share the whole table's labels)."""
    cols = tuple(
        dataclasses.replace(ca, codes=np.concatenate([ca.codes, b[ca.name].codes]))
        for ca in a.columns
    )
    return np.concatenate([rows_a, rows_b]), EncodedTable(cols, source=a.source)


def _block_problem(
    whole: Problem, spec: JobSpec, rows: npt.NDArray[np.int64], table: EncodedTable
) -> Problem:
    """The problem of one block: its rows in source order, the whole problem's hierarchies,
    models and metric, its share of the suppression limit and its rows' limits."""
    order = np.argsort(rows, kind="stable")
    cols = tuple(dataclasses.replace(c, codes=c.codes[order]) for c in table.columns)
    block = EncodedTable(cols, source=table.source).with_schema(whole.table.schema)
    record: dict[str, npt.NDArray[np.float64]] = {}
    if whole.record_parameters:
        assert spec.personalized is not None
        limits = _read_limits(block, spec.personalized)
        record = {name: limits for name in whole.record_parameters}
    return dataclasses.replace(
        whole,
        table=block,
        max_suppressed=int(math.floor(spec.suppression * block.n_records + 1e-9)),
        record_parameters=record,
    )


def _write_partitioned(
    engine: Engine,
    whole: Problem,
    spec: JobSpec,
    blocks: list[BlockRelease],
    output: str | os.PathLike[str] | None,
    protect: tuple[Path, ...],
    mask: bool,
    progress: Progress | None = None,
) -> tuple[Release, int]:
    """Write the union of the verified blocks in the source's order and re-check it.

    The written file (or, without ``output``, the released quasi-identifiers and sensitive
    attributes in a temporary Parquet file) must hold exactly the staged labels
    (:meth:`~anonlab.engines.base.Engine.staged_mismatches`); a class-forming release is
    grouped again and every class model judges the union's classes
    (:func:`~anonlab.release.recheck_written`), a per-record model judges again the records
    of classes that span blocks; a cell cover was verified block by block on its anonymity
    graph. A failure raises :class:`~anonlab.exceptions.PrivacyCheckError` and nothing is
    written. Returns the union's release and the classes spanning blocks.
    """
    qis = whole.quasi_identifiers
    replaced = blocks[0].replaced
    hidden = set(spec.identifiers) | set(whole.identifiers)
    class_models = [m for m in whole.models if not isinstance(m, RecordModel)]
    sensitive = sorted({a for m in class_models for a in m.sensitive_attributes})
    if output is None:
        columns = tuple(dict.fromkeys([*qis, *replaced, *sensitive]))
    else:
        columns = tuple(c for c in engine.columns if c not in hidden)
    plan = RowsPlan(columns, replaced, qis, mask)
    forms_classes = blocks[0].cells is not None
    fmt = "parquet" if output is None else output_format(output)
    separator = spec.csv.separator
    stage(progress, "writing" if output is None else f"writing {Path(output).name}")

    def write_and_check(target: Path) -> tuple[Release, int]:
        return _check_partitioned(
            engine, whole, spec, blocks, plan, target, fmt, separator, mask, forms_classes,
            sensitive, progress,
        )  # fmt: skip

    if output is not None:
        with readable_atomic_write(output, protect=protect) as target:
            return write_and_check(target)
    with temporary_folder("anonlab-release") as folder:  # (0700, removed by a next run if killed)
        return write_and_check(folder / "release.parquet")


def _check_partitioned(
    engine: Engine,
    whole: Problem,
    spec: JobSpec,
    blocks: list[BlockRelease],
    plan: RowsPlan,
    target: Path,
    fmt: str,
    separator: str,
    mask: bool,
    forms_classes: bool,
    sensitive: list[str],
    progress: Progress | None = None,
) -> tuple[Release, int]:
    """Write the staged release to ``target`` and re-check it (see
    :func:`_write_partitioned`)."""
    engine.write_staged_release(plan, target, fmt=fmt, separator=separator)
    stage(progress, "re-checking the written release")
    wrong = engine.staged_mismatches(plan, target, fmt=fmt, separator=separator)
    if wrong:
        raise PrivacyCheckError(
            f"Re-check of the written release failed: {wrong} rows do not hold the verified "
            "labels of their block. Nothing was released."
        )
    qis = list(whole.quasi_identifiers)
    written = engine.release_stats(
        target, fmt=fmt, quasi_identifiers=qis, sensitive=sensitive, separator=separator
    )
    suppressed = sum(b.verification.suppressed_rows for b in blocks)
    if suppressed > whole.max_suppressed:  # pragma: no cover - each block takes its share
        raise PrivacyCheckError(
            f"Re-check failed: the blocks suppressed {suppressed} rows, more than the limit "
            f"of {whole.max_suppressed}. Nothing was released."
        )
    n = whole.n_records
    spanning = 0
    if forms_classes:
        classes = _released_classes(written, suppressed, mask)
        method = (
            f"each of {len(blocks)} blocks: {blocks[0].verification.method}; the union: the "
            "written release grouped again, every model judged its classes"
        )
        verification = combine_verifications(whole, blocks, written.n_classes, method)
        recheck_written(
            whole.with_models(class_models_of(whole)), written, verification, mask_suppressed=mask
        )
        verification.classes = int(classes.size)
        verification.k_after = int(classes.min()) if classes.size else 0
        stage(progress, "judging the classes that span blocks")
        spanning = _check_spanning(engine, whole, spec, plan)
        supp = np.concatenate([b.suppressed_sizes for b in blocks])
        loss = union_loss(whole, [b.cells for b in blocks if b.cells is not None], classes, supp)
    else:
        method = (
            f"each of {len(blocks)} blocks: {blocks[0].verification.method}; the union of "
            "k-regular covers is k-regular, and the written file holds every block's labels"
        )
        verification = combine_verifications(whole, blocks, written.n_classes, method)
        if whole.metric.name == "ncp":
            loss = sum(b.loss for b in blocks)
        else:  # gcp: each block's is a mean over its rows
            loss = sum(b.loss * b.n_rows for b in blocks) / n if n else 0.0
    columns = LabelColumns([], None)
    return union_release(columns, verification, loss, whole.metric.name, written), spanning


def class_models_of(problem: Problem) -> list[PrivacyModel]:
    """The models that judge classes (a per-record model is judged record by record)."""
    return [m for m in problem.models if not isinstance(m, RecordModel)]


def _released_classes(written: ClassStats, suppressed: int, mask: bool) -> npt.NDArray[np.int64]:
    """The sizes of the union's released classes: the written classes, without the rows
    masked as suppressed (they are counted as the blocks' suppressed classes)."""
    sizes = np.asarray(written.sizes, dtype=np.int64).copy()
    if mask and suppressed and written.n_classes:
        stars = np.array([all(x == "*" for x in key) for key in written.key_labels()], dtype=bool)
        sizes[stars] -= suppressed
    out: npt.NDArray[np.int64] = sizes[sizes > 0]
    return out


def _check_spanning(engine: Engine, whole: Problem, spec: JobSpec, plan: RowsPlan) -> int:
    """Judge again, record by record, the classes that span blocks (per-record models:
    merging classes may raise a record's leakage); return how many classes span blocks."""
    record = [m for m in whole.models if isinstance(m, RecordModel)]
    columns = list(whole.table.names) if record else []
    categories = {c: whole.table.column(c).categories for c in columns}
    n, row_class, original, released = engine.staged_spanning(plan, columns, categories)
    if not record or not n:
        return n
    assert spec.personalized is not None
    limits = _read_limits(original.with_schema(whole.table.schema), spec.personalized)
    for m in record:
        verdict = spanning_verdict(
            m, row_class, original[m.attribute], released[m.attribute], limits
        )
        if not bool(verdict.ok.all()):
            bad = int(np.unique(row_class[~verdict.ok]).size)
            raise PrivacyCheckError(
                f"Re-check failed: {bad} of the {n} classes whose labels occur in several "
                f"blocks hold records over their leakage limit once merged "
                f"({verdict.violating.size} records). Nothing was released."
            )
    return n


def _plain(value: Any) -> Any:
    """A parameter as JSON can hold it: a hierarchy as its file (or a summary)."""
    if isinstance(value, Hierarchy):
        if value.source is not None:
            return value.source
        return f"<hierarchy of {value.attribute or 'an attribute'}, height {value.height}>"
    return value


@dataclass
class CheckReport:
    """Privacy models and the metric of a table as it is, or what a release of it holds
    (``anonlab check``, ``anonlab check --release``).

    Attributes
    ----------
    n_rows : int
        Rows of the table checked (of the release, with ``--release``).
    n_classes : int
        Its classes (a cell cover: its distinct released rows).
    models : list of dict
        Per model: ``model``, ``params``, ``holds``, ``violating_classes`` and
        ``violating_rows`` (a per-record model: the records over their own limit, and
        ``violating_records``, their row positions from 0); where the model does not hold,
        ``violation`` says what violates it.
    metric : str
    loss : float or None
        The metric on the table as it is; on a cell cover, read from its labels; None for a
        release that forms classes (``anonymize`` measures it).
    release : dict, optional
        What was verified of the release (:meth:`anonlab.release.audit.ReleaseAudit.to_dict`).
    """

    n_rows: int
    n_classes: int
    models: list[dict[str, Any]]
    metric: str
    loss: float | None
    release: dict[str, Any] | None = None

    @property
    def holds(self) -> bool:
        """Whether every model holds (and, with a release, everything verified of it)."""
        if self.release is not None:
            return bool(self.release["holds"])
        return all(m["holds"] for m in self.models)

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
    """Report which models a table satisfies as it is, and the classes and rows violating each;
    or verify a release of it.

    The table is taken at level 0 of every quasi-identifier (its values as they are). With
    ``release`` (a table the job released from ``data``, by any algorithm), the release is
    verified against ``data`` and the job (:func:`anonlab.release.audit.audit_release`):
    its columns, its rows and their order, every cell, the identifying columns it keeps, and
    the models on the release itself (classes of its labels, or a cell cover's anonymity
    graph). The release is read as anonlab writes it: a header row, UTF-8, ``"`` quotes, the
    job's separator, and an empty field (as the job's missing-value markers) a missing value.

    Parameters
    ----------
    data : path, DataFrame, pyarrow Table or EncodedTable
        The table.
    job : JobSpec, mapping or path
        The job: quasi-identifiers, hierarchies, models, metric (and, for a release, the
        algorithm and the output options it was released with).
    release : path or table, optional
        A release of ``data`` by ``job`` (in memory only).
    engine : str
        ``"numpy"``, ``"duckdb"`` (the classes from one ``GROUP BY`` over the file) or
        ``"auto"`` (by size, see :func:`choose_engine`), or ``"spark"``.
    engine_options : mapping, optional
        Options of an out-of-core engine (as in :func:`anonymize`).

    Returns
    -------
    CheckReport

    Raises
    ------
    InputError
        With ``release``: a release whose columns are not those the job releases, or whose
        rows cannot be the data's (naming them).

    Examples
    --------
    >>> from anonlab import EncodedTable, anonymize, check
    >>> t = EncodedTable.from_columns({"sex": ["F", "M"] * 5, "visits": list("12231") * 2})
    >>> job = {"quasi_identifiers": {"sex": {}}, "models": [{"k_anonymity": {"k": 5}}]}
    >>> check(t, job).models[0]["holds"]
    True
    >>> report = check(t, job, release=dict(anonymize(t, job).columns))
    >>> report.holds, report.release["k_after"]
    (True, 5)
    """
    spec = load_job(job)
    name, why = _choice(data, engine)
    if why:
        note(why)
    if name != "numpy":
        if release is not None:
            raise ParameterError(
                "A release is checked beside its original in memory: use --engine numpy "
                "(engine='numpy') with --release."
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
        return _check_release(problem, spec, release)
    return _check_classes(problem)


def _check_classes(problem: Problem) -> CheckReport:
    """``check`` of the classes of the problem's table (a frequency set, or the rows)."""
    engine = get_engine("numpy", problem.table)
    per_record = any(isinstance(m, RecordModel) for m in problem.models)
    stats: ClassStats = engine.class_stats(
        list(problem.quasi_identifiers), sensitive=list(problem.sensitive), with_rows=per_record
    )
    sizes = np.asarray(stats.sizes, dtype=np.int64)
    models = []
    for key, m in zip(model_keys(problem.models), problem.models):
        records: dict[str, Any] = {}
        if isinstance(m, RecordModel):  # each record against its own limit
            assert stats.row_class is not None
            row_class = np.asarray(stats.row_class, dtype=np.int64)
            column = problem.table[m.attribute]
            limits = problem.record_parameters[m.record_parameter]
            verdict = m.judge_records(row_class, column, column, limits)
            passed = verdict.class_ok & (sizes >= m.min_class_size)
            records = verdict.report(m.measure)
            bad_rows = int(np.count_nonzero(~verdict.ok | (sizes[row_class] < m.min_class_size)))
            what = f"{bad_rows:,} records are over their own limit"
        else:
            passed = m.class_ok(stats) & (sizes >= m.min_class_size)
            bad_rows = int(sizes[~passed].sum())
            what = f"{bad_rows:,} rows are in classes that do not satisfy it"
        bad = int(np.count_nonzero(~passed))
        entry: dict[str, Any] = {
            "model": key,
            "params": {k: _plain(v) for k, v in m.params().items()},
            "holds": bool(passed.all()),
            "violating_classes": bad,
            "violating_rows": bad_rows,
            **records,
        }
        if not entry["holds"]:
            entry["violation"] = f"{what} ({bad:,} of the {stats.n_classes:,} classes)"
        models.append(entry)
    violating = np.zeros(stats.n_classes, dtype=bool)
    loss = float(problem.metric.loss(stats, violating, metric_context(problem)))
    return CheckReport(problem.n_records, stats.n_classes, models, problem.metric.name, loss)


def _check_release(problem: Problem, spec: JobSpec, release: Any) -> CheckReport:
    """``check`` of a release beside its original (:func:`~anonlab.release.audit.audit_release`)."""
    algorithm = build_anonymizer(spec.algorithm, spec.algorithm_params)
    graph = type(algorithm).verifier == "graph"
    if graph:  # judged on its anonymity graph: k-anonymity only
        cover_problem(problem, f"The job's algorithm {algorithm.name!r}")
    # anonlab writes a release with a header row, UTF-8, '"' quotes and a missing value
    # as an empty field (on every engine: the same bytes)
    options = dataclasses.replace(
        spec.csv,
        header=True,
        names=None,
        quote='"',
        encoding="utf-8",
        na_values=tuple(dict.fromkeys((*spec.csv.na_values, ""))),
    )
    released = _nested_as_text(read_table(release, csv_options=options))
    table = _nested_as_text(problem.table)
    if table is not problem.table:
        problem = dataclasses.replace(problem, table=table)
    check_release_columns(problem, released)
    # the release itself, by the rule anonymize applies (its values may not be the data's:
    # the audit blames such cells), and its columns' dependencies on the quasi-identifiers'
    # original values, which only the data shows
    declared = {
        *problem.quasi_identifiers,
        *spec.sensitive,
        *spec.identifiers,
        *problem.sensitive,
        *problem.table.schema.limits,
    }
    threshold = spec.identifying_threshold
    found = dict(
        identifying_columns(
            get_engine("numpy", released),
            sorted(declared),
            threshold=IDENTIFYING_THRESHOLD if threshold is None else threshold,
            insensitive=spec.insensitive,
        )
    )
    for column, reason in _identifying(problem, spec):
        if column in released.names:
            found.setdefault(column, reason)
    params = spec.algorithm_params
    audit = audit_release(
        problem,
        released,
        graph=graph,
        mask_suppressed=spec.output.get("suppressed", "remove") == "mask",
        removed=algorithm.removed_rows(problem),
        identifying=list(found.items()),
        pseudo=tuple(params.get("pseudo_qids") or ()),
        plain=_plain,
    )
    metric, loss = problem.metric.name, None
    if audit.cells is not None:  # a cell cover: its loss read from its labels
        metric = metric if metric in ("gcp", "ncp") else "gcp"
        loss = audit.cells.ncp if metric == "ncp" else audit.cells.gcp
    return CheckReport(audit.rows, audit.classes, audit.models, metric, loss, audit.to_dict())


def _nested_as_text(table: EncodedTable) -> EncodedTable:
    """``table`` with its list, map and struct columns as the JSON text a CSV release holds
    (:func:`~anonlab.io.writers.json_text`), encoded like any column."""
    nested = table.nested
    if not nested:
        return table
    pa = import_optional("pyarrow")
    text = read_arrow(pa.table({c: json_text(pa, table.typed[c]) for c in nested}))
    columns = (*table.columns, *(text[c] for c in nested))
    typed = {n: a for n, a in table.typed.items() if n not in nested}
    return EncodedTable(
        columns, table.schema, table.source, typed, table.order, weights=table.weights
    )
