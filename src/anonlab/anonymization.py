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

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from anonlab._progress import Progress, stage
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
from anonlab.io.job import JobSpec, parse_job, read_job
from anonlab.io.writers import write_table
from anonlab.metrics import build_metric
from anonlab.models import build_model
from anonlab.models.base import PrivacyModel
from anonlab.release import AnonymizationResult, Problem, metric_context, model_keys, verify

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
        if name == "hierarchical_t_closeness" and isinstance(params.get("hierarchy"), (str, Path)):
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
    schema = Schema.from_lists(
        identifiers=job.identifiers,
        quasi_identifiers=[q.name for q in job.quasi_identifiers],
        sensitive=job.sensitive,
    )
    table = read_table(data, csv_options=job.csv)
    table.require([q.name for q in job.quasi_identifiers], what="quasi-identifier")
    table.require(job.sensitive, what="sensitive attribute")
    table = table.with_schema(schema)
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
        models=tuple(_models(job)),
        metric=build_metric(metric_name, **metric_params),
        max_suppressed=int(math.floor(job.suppression * table.n_rows + 1e-9)),
        level_bounds=bounds,
        weights={q.name: q.weight for q in job.quasi_identifiers},
        priorities={
            q.name: (1 if q.priority is None else q.priority) for q in job.quasi_identifiers
        },
        identifiers=tuple(job.identifiers),
    )


def _warn_identifiers(problem: Problem, job: JobSpec, action: str) -> None:
    """A :class:`~anonlab.exceptions.PrivacyRiskWarning` per undeclared identifying column."""
    declared = {*problem.quasi_identifiers, *job.sensitive, *job.identifiers, *problem.sensitive}
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
    algorithm.fit(problem, progress=progress)
    stage(progress, "verifying")
    mask = spec.output.get("suppressed", "remove") == "mask"
    release = verify(problem, algorithm.recoding_, mask_suppressed=mask, context=algorithm.context_)
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

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "n_rows": self.n_rows,
            "n_classes": self.n_classes,
            "models": self.models,
            "loss": {"metric": self.metric, "value": self.loss},
        }


def check(data: Any, job: JobLike) -> CheckReport:
    """Report which models a table satisfies as it is, and the classes and rows violating each.

    The table is taken at level 0 of every quasi-identifier (its values as they are).
    """
    spec = load_job(job)
    problem = build_problem(data, spec)
    _warn_identifiers(problem, spec, "a release that keeps it re-identifies people.")
    engine = get_engine("numpy", problem.table)
    stats: ClassStats = engine.class_stats(
        list(problem.quasi_identifiers), sensitive=list(problem.sensitive)
    )
    models = []
    for key, m in zip(model_keys(problem.models), problem.models):
        passed = m.class_ok(stats) & (stats.sizes >= m.min_class_size)
        bad = ~passed
        models.append(
            {
                "model": key,
                "params": {k: _plain(v) for k, v in m.params().items()},
                "holds": bool(passed.all()),
                "violating_classes": int(bad.sum()),
                "violating_rows": int(stats.sizes[bad].sum()),
            }
        )
    violating = np.zeros(stats.n_classes, dtype=bool)
    loss = float(problem.metric.loss(stats, violating, metric_context(problem)))
    return CheckReport(problem.n_rows, stats.n_classes, models, problem.metric.name, loss)
