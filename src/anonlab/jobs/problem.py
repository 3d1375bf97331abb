"""A job bound to its data: the :class:`~anonlab.release.problem.Problem` it asks for.

:func:`build_problem` reads the table (or an out-of-core engine's frequency set), checks
every column the job names and its role, builds the hierarchies, models and metric, binds
the per-record leakage limits of personalized privacy and sets the suppression limit; :mod:`anonlab.jobs.limits` binds the per-record leakage limits.
:mod:`anonlab.jobs.identifying` refuses or warns of the undeclared
columns that identify people.
"""

from __future__ import annotations

import functools
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from anonlab._validation import check_columns
from anonlab.data.builders import build_hierarchy, flat_hierarchy
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.population import Population
from anonlab.data.schema import Schema
from anonlab.data.table import EncodedTable
from anonlab.engines import Engine
from anonlab.exceptions import DataFormatError, ParameterError
from anonlab.io import read_hierarchy, read_table
from anonlab.io.job import JobSpec, parse_job, read_job
from anonlab.jobs.limits import limit_column, personalize
from anonlab.metrics import build_metric
from anonlab.models import MODELS, build_model
from anonlab.models.base import PrivacyModel
from anonlab.models.per_record import RecordModel
from anonlab.release import Problem

__all__ = [
    "JobLike",
    "build_problem",
    "input_files",
    "job_models",
    "load_job",
    "refuse_record_models",
]

JobLike = JobSpec | dict[str, Any] | str | os.PathLike[str]


def load_job(job: JobLike) -> JobSpec:
    """Return a :class:`~anonlab.io.job.JobSpec` from a spec, a mapping or a YAML file.

    Parameters
    ----------
    job : JobSpec, mapping or path
        A parsed job (returned as it is), the job's keys, or a YAML job file.

    Returns
    -------
    JobSpec

    Examples
    --------
    >>> spec = load_job({"quasi_identifiers": {"age": {}}, "models": [{"k_anonymity": {"k": 2}}]})
    >>> [q.name for q in spec.quasi_identifiers], spec.algorithm
    (['age'], 'optimal')
    """
    if isinstance(job, JobSpec):
        return job
    if isinstance(job, dict):
        return parse_job(job)
    return read_job(job)


def _hierarchy_for(
    spec: Any, table: EncodedTable, population: Population | None = None
) -> Hierarchy:
    """The hierarchy of a quasi-identifier: given, read, or built from the column's values
    (with a population table, from its values and counts, and the table's values it lacks:
    the hierarchy then covers both, as ARX builds hierarchies over the population)."""
    if isinstance(spec.hierarchy, Hierarchy):
        return spec.hierarchy.named(spec.name)  # errors name the column it generalizes
    if spec.hierarchy is not None:
        return read_hierarchy(spec.hierarchy, attribute=spec.name)
    held: dict[Any, float] = {}
    sources = [table] if population is None else [population.table, table]
    for source in sources:
        column = source.column(spec.name)
        weights = source.weights
        counts = np.bincount(column.codes, weights=weights, minlength=len(column.categories))
        for v, c in zip(column.categories, counts.tolist()):
            if v is not None and v not in held:
                held[v] = c
    values = list(held)
    if spec.builder is None:
        return flat_hierarchy(values, attribute=spec.name)
    kind, params = spec.builder
    return build_hierarchy(kind, values, params, attribute=spec.name, counts=list(held.values()))


def job_models(job: JobSpec) -> list[PrivacyModel]:
    """The job's privacy models, built (a model's hierarchy file read next to the job; the
    job's population table, read once, given to the models that read one:
    :meth:`~anonlab.models.base.PrivacyModel.wants_population`).

    Parameters
    ----------
    job : JobSpec

    Returns
    -------
    list of PrivacyModel

    Examples
    --------
    >>> job = load_job({"quasi_identifiers": {"age": {}}, "models": [{"k_anonymity": {"k": 2}}]})
    >>> [m.name for m in job_models(job)]
    ['k_anonymity']

    Raises
    ------
    ParameterError
        Besides a model's own errors: a population table no model reads, or a model's own
        ``population`` parameter in the job (the job names one population table).
    """
    out = []
    readers = []
    for name, params in job.models:
        params = dict(params)
        if isinstance(params.get("hierarchy"), (str, Path)):  # a tree file, next to the job
            params["hierarchy"] = read_hierarchy(
                job.base_dir / str(params["hierarchy"]), attribute=str(params.get("attribute"))
            )
        if "population" in params:
            raise ParameterError(
                f"Model {name!r} takes the job's population table: give it as the job's "
                "'population: FILE', not as a parameter of the model."
            )
        if name in MODELS and MODELS.lookup(name).wants_population(params):
            readers.append(name)
            if job.population is not None:
                params["population"] = _population(job)
        out.append(build_model(name, params))
    if job.population is not None and not readers:
        raise ParameterError(
            "The job names a population table, which none of its models reads (k_map without "
            "'sampling_fraction' and delta_presence do). Drop 'population' or add such a model."
        )
    return out


def _population(job: JobSpec) -> Population:
    """The job's population table, read once (with the job's CSV options)."""
    if job.population_table is None:
        source = job.population
        table = read_table(source, csv_options=job.csv)
        names = [q.name for q in job.quasi_identifiers]
        population = (
            Population(table, repr(str(source))) if isinstance(source, Path) else Population(table)
        )
        population.require(names)
        job.population_table = population
    assert isinstance(job.population_table, Population)
    return job.population_table


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

    Returns
    -------
    Problem

    Raises
    ------
    InputError
        Unknown columns, a hierarchy that does not cover its column, bad levels, a model
        that needs more rows than the table has, ... (the message names the culprit).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> t = EncodedTable.from_columns({"sex": ["F", "M"] * 5, "visits": list("12231") * 2})
    >>> job = load_job({"quasi_identifiers": {"sex": {}}, "models": [{"k_anonymity": {"k": 5}}],
    ...                 "suppression": 0.2})
    >>> problem = build_problem(t, job)
    >>> problem.quasi_identifiers, problem.max_suppressed
    (('sex',), 2)
    """
    limits_column = limit_column(job)
    identifiers = list(job.identifiers)  # (with the weight column, unless it is released)
    weight = [job.weight] if job.weight is not None else []
    if engine is None:
        table = _with_rows(read_table(data, csv_options=job.csv, allow_empty=True))
        table.require([q.name for q in job.quasi_identifiers], what="quasi-identifier")
        table.require(job.sensitive, what="sensitive attribute")
        check_columns(weight, table.names, what="weight column")
        check_columns(job.insensitive, table.names + table.nested, what="insensitive column")
        if limits_column:
            table.require([limits_column], what="limit column")
        models = None
    else:
        models = job_models(job)
        check_columns(weight, engine.columns, what="weight column")
        table = _frequency_set(engine, job, models, per_partition=per_partition)
        identifiers = []  # not in the frequency set; the engine drops them from the release
    schema = Schema.from_lists(
        identifiers=identifiers,
        quasi_identifiers=[q.name for q in job.quasi_identifiers],
        sensitive=job.sensitive,
        limits=[limits_column] if limits_column else [],
    )
    table = table.with_schema(schema)
    models, record_parameters = personalize(
        job_models(job) if models is None else models, job, table, engine
    )
    hidden = [] if job.personalized is None or job.personalized.release_limits else [limits_column]
    population = next((m.population_table for m in models if m.population_table), None)
    hierarchies = {q.name: _hierarchy_for(q, table, population) for q in job.quasi_identifiers}
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
        refuse_record_models(job, models, engine.name)
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
    limit = limit_column(job)
    if per_partition and limit is not None:
        check_columns([limit], columns, what="limit column")
        read.append(limit)
    wanted = set(read)
    return _with_rows(engine.frequency_set([c for c in columns if c in wanted]))  # data's order


def refuse_record_models(job: JobSpec, models: list[PrivacyModel], engine: str) -> None:
    """Refuse per-record limits (personalized privacy) on a frequency set.

    Parameters
    ----------
    job : JobSpec
    models : list of PrivacyModel
        The job's models.
    engine : str
        The out-of-core engine's name, as the message says it.

    Raises
    ------
    ParameterError
        The job gives per-record limits, or a model judges each record against its own.

    Examples
    --------
    >>> job = load_job({"quasi_identifiers": {"age": {}}, "models": [{"k_anonymity": {"k": 2}}]})
    >>> refuse_record_models(job, job_models(job), "duckdb") is None
    True
    """
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


def input_files(data: Any, job: JobSpec) -> tuple[Path, ...]:
    """The files a job reads: the data, the job file and every hierarchy file it names.

    An output must never be one of them (see :func:`anonlab.io.atomic.check_output`).

    Parameters
    ----------
    data : path or table
        The data (a path is one of the files).
    job : JobSpec

    Returns
    -------
    tuple of Path

    Examples
    --------
    >>> job = load_job({"quasi_identifiers": {"age": {}}, "models": [{"k_anonymity": {"k": 2}}]})
    >>> input_files("adult.csv", job)
    (PosixPath('adult.csv'),)
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
    if isinstance(job.population, Path):
        files.append(job.population)
    return tuple(files)
