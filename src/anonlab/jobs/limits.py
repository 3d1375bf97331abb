"""Per-record leakage limits (personalized privacy): the limit column and each row's limit.

:func:`limit_column` checks the job's limit column has no other role; :func:`personalize`
binds the limits to the job's per-record models; :func:`read_limits` reads each row's limit
(a missing cell takes the default), refusing one that is missing, not a number or outside
(0, 1] with the row that holds it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab.data.table import EncodedTable
from anonlab.engines import Engine
from anonlab.exceptions import ParameterError
from anonlab.io.job import JobSpec, PersonalizedSpec
from anonlab.models.base import PrivacyModel
from anonlab.models.per_record import RecordModel

__all__ = ["limit_column", "personalize", "read_limits"]


def limit_column(job: JobSpec) -> str | None:
    """The job's limit column, refused if the job gives it another role.

    Parameters
    ----------
    job : JobSpec

    Returns
    -------
    str or None
        The column of ``personalized: {limit_column: ...}``; None without one.

    Raises
    ------
    ParameterError
        The column is also a quasi-identifier, a sensitive attribute or an identifier.

    Examples
    --------
    >>> from anonlab.jobs.problem import load_job
    >>> job = load_job({"quasi_identifiers": {"age": {}}, "sensitive": ["disease"],
    ...                 "models": [{"k_anonymity": {"k": 2}}],
    ...                 "personalized": {"limit_column": "limit"}})
    >>> limit_column(job)
    'limit'
    """
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


def personalize(
    models: list[PrivacyModel], job: JobSpec, table: EncodedTable, engine: Engine | None = None
) -> tuple[list[PrivacyModel], dict[str, npt.NDArray[np.float64]]]:
    """Bind the job's per-record limits to its per-record models; the limits per row (per
    distinct combination when ``table`` is the frequency set of ``engine``'s data).

    Parameters
    ----------
    models : list of PrivacyModel
        The job's models.
    job : JobSpec
    table : EncodedTable
        The rows (or the engine's frequency set), with the limit column.
    engine : Engine, optional
        The engine whose frequency set ``table`` is.

    Returns
    -------
    list of PrivacyModel
        The models, each per-record one bound to the limit column and default.
    dict
        Each per-record model's parameter name -> the limit of each row.

    Raises
    ------
    ParameterError
        Per-record models without limits, limits without a per-record model, the limit
        column also the model's attribute, or a bad limit (:func:`read_limits`).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.jobs.problem import job_models, load_job
    >>> job = load_job({"quasi_identifiers": {"age": {}}, "models": [{"k_anonymity": {"k": 2}}]})
    >>> t = EncodedTable.from_columns({"age": [30, 41]})
    >>> models, limits = personalize(job_models(job), job, t)
    >>> [m.name for m in models], limits
    (['k_anonymity'], {})
    """
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
    limits = read_limits(table, spec, engine)
    bound = [
        m.bind(column=spec.limit_column, default=spec.default_limit)
        if isinstance(m, RecordModel)
        else m
        for m in models
    ]
    return bound, {m.record_parameter: limits for m in record}


def read_limits(
    table: EncodedTable, spec: PersonalizedSpec, engine: Engine | None = None
) -> npt.NDArray[np.float64]:
    """Each row's leakage limit, from the limit column (a missing cell takes the default)
    or the default.

    Parameters
    ----------
    table : EncodedTable
        The rows (or an engine's frequency set).
    spec : PersonalizedSpec
        The job's ``personalized`` key.
    engine : Engine, optional
        The engine whose frequency set ``table`` is: it finds the file's row of a bad limit.

    Returns
    -------
    ndarray of float64
        The limit of each row of ``table``.

    Raises
    ------
    ParameterError
        Naming the first row (1-based, in the file's order: the engine's, when ``table`` is
        its frequency set) whose limit is missing, not a number or outside (0, 1].

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.io.job import PersonalizedSpec
    >>> t = EncodedTable.from_columns({"limit": ["0.5", None, "1"]})
    >>> read_limits(t, PersonalizedSpec(limit_column="limit", default_limit=0.25)).tolist()
    [0.5, 0.25, 1.0]
    """
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
