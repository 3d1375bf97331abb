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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._progress import Progress, stage
from anonlab._threads import single_threaded_blas
from anonlab.algorithms import build_anonymizer
from anonlab.data.builders import (
    date_hierarchy,
    flat_hierarchy,
    interval_hierarchy,
    masking_hierarchy,
)
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.schema import Schema
from anonlab.data.stats import ClassStats
from anonlab.data.table import EncodedTable
from anonlab.diagnosis.risk import warn_identifying_columns
from anonlab.engines import get_engine
from anonlab.exceptions import ParameterError
from anonlab.io import read_hierarchy, read_table
from anonlab.io.atomic import check_output, output_format
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
    verify,
)

__all__ = [
    "AnonymizationResult",
    "CheckReport",
    "anonymize",
    "build_problem",
    "check",
    "input_files",
    "load_job",
]

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


def build_problem(data: Any, job: JobSpec) -> Problem:
    """Read the data and build the :class:`~anonlab.release.problem.Problem` a job asks for.

    Parameters
    ----------
    data : path, DataFrame, pyarrow Table or EncodedTable
        The table.
    job : JobSpec
        The parsed job.

    Raises
    ------
    InputError
        Unknown columns, a hierarchy that does not cover its column, bad levels, a model
        that needs more rows than the table has, ... (the message names the culprit).
    """
    limit_column = _limit_column(job)
    schema = Schema.from_lists(
        identifiers=job.identifiers,
        quasi_identifiers=[q.name for q in job.quasi_identifiers],
        sensitive=job.sensitive,
        limits=[limit_column] if limit_column else [],
    )
    table = read_table(data, csv_options=job.csv)
    table.require([q.name for q in job.quasi_identifiers], what="quasi-identifier")
    table.require(job.sensitive, what="sensitive attribute")
    if limit_column:
        table.require([limit_column], what="limit column")
    table = table.with_schema(schema)
    models, record_parameters = _personalize(_models(job), job, table)
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
        max_suppressed=int(math.floor(job.suppression * table.n_rows + 1e-9)),
        level_bounds=bounds,
        weights={q.name: q.weight for q in job.quasi_identifiers},
        priorities={
            q.name: (1 if q.priority is None else q.priority) for q in job.quasi_identifiers
        },
        record_parameters=record_parameters,
        identifiers=tuple(job.identifiers) + tuple(c for c in hidden if c),
    )


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


def _warn_identifiers(problem: Problem, job: JobSpec, action: str) -> None:
    """A :class:`~anonlab.exceptions.PrivacyRiskWarning` per undeclared identifying column."""
    declared = {
        *problem.quasi_identifiers,
        *job.sensitive,
        *job.identifiers,
        *problem.sensitive,
        *problem.table.schema.limits,
    }
    warn_identifying_columns(
        get_engine("numpy", problem.table),
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


def anonymize(
    data: Any,
    job: JobLike,
    *,
    output: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
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
    protect = input_files(data, spec)
    if output is not None:  # before any work: a bad output path costs nothing
        output_format(output)
        check_output(output, protect=protect)
    stage(
        progress,
        f"reading {Path(data).name}" if isinstance(data, (str, os.PathLike)) else "reading",
    )
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


def check(data: Any, job: JobLike, *, release: Any | None = None) -> CheckReport:
    """Report which models a table satisfies as it is, and the classes and rows violating each.

    The table is taken at level 0 of every quasi-identifier (its values as they are). With
    ``release`` (a released non-homogeneous table, one row per record of ``data`` in its
    order), the release is judged on its anonymity graph instead: the largest k of
    Definition 1 by max-flow (:func:`anonlab.release.check_release`).
    """
    spec = load_job(job)
    problem = build_problem(data, spec)
    _warn_identifiers(problem, spec, "a release that keeps it re-identifies people.")
    if release is not None:
        # anonlab writes a release with a header row and a null as an empty field
        options = dataclasses.replace(
            spec.csv, header=True, names=None, na_values=(*spec.csv.na_values, "")
        )
        return _check_cover(problem, read_table(release, csv_options=options))
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
    return CheckReport(problem.n_rows, stats.n_classes, models, problem.metric.name, loss)


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
