"""The undeclared columns of a job's data that identify people: refused or warned of.

A column the job does not declare is released as it is; :func:`refuse_identifiers` refuses a
job that would release one that identifies people
(:func:`~anonlab.diagnosis.risk.identifying_columns`), :func:`warn_identifiers` warns of it
(``check``).
"""

from __future__ import annotations

import warnings

from anonlab.diagnosis.risk import IDENTIFYING_THRESHOLD, identifying_columns
from anonlab.engines import Engine, get_engine
from anonlab.exceptions import InputError, PrivacyRiskWarning
from anonlab.io.job import JobSpec
from anonlab.release import Problem

__all__ = ["declared_columns", "identifying", "refuse_identifiers", "warn_identifiers"]


#: The ways to declare a column, as the refusals and warnings of identifying columns say.
_DECLARE = (
    "under 'identifiers:' (dropped from the release), as a quasi-identifier (generalized) or "
    "under 'insensitive:' (released as it is, knowingly)"
)


def declared_columns(problem: Problem, job: JobSpec) -> list[str]:
    """The columns the job declares (quasi-identifiers, sensitive attributes, identifiers,
    the models' attributes, the limit column), sorted: the others are released as they are.

    Parameters
    ----------
    problem : Problem
    job : JobSpec

    Returns
    -------
    list of str

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.jobs.problem import build_problem, load_job
    >>> t = EncodedTable.from_columns({"sex": ["F", "M"], "zip": ["1", "2"]})
    >>> job = load_job({"quasi_identifiers": {"sex": {}}, "identifiers": ["zip"],
    ...                 "models": [{"k_anonymity": {"k": 1}}]})
    >>> declared_columns(build_problem(t, job), job)
    ['sex', 'zip']
    """
    declared = {
        *problem.quasi_identifiers,
        *job.sensitive,
        *job.identifiers,
        *problem.sensitive,
        *problem.table.schema.limits,
    }
    return sorted(declared)


def identifying(
    problem: Problem, job: JobSpec, engine: Engine | None = None
) -> list[tuple[str, str]]:
    """The undeclared columns of the job's data that identify people, with their reasons
    (:func:`~anonlab.diagnosis.risk.identifying_columns` of the engine's data when the
    problem is a frequency set; each quasi-identifier's coarsest level is its highest
    allowed one).

    Parameters
    ----------
    problem : Problem
        The job's problem (its table: the rows, or the engine's frequency set).
    job : JobSpec
    engine : Engine, optional
        The out-of-core engine whose frequency set the problem's table is.

    Returns
    -------
    list of (str, str)
        Each identifying column and why (its figures).

    Examples
    --------
    >>> import warnings
    >>> from anonlab import EncodedTable
    >>> from anonlab.jobs.problem import build_problem, load_job
    >>> t = EncodedTable.from_columns({"sex": ["F", "M"] * 10,
    ...                                "email": [f"p{i}@example.org" for i in range(20)]})
    >>> job = load_job({"quasi_identifiers": {"sex": {}}, "models": [{"k_anonymity": {"k": 2}}]})
    >>> problem = build_problem(t, job)
    >>> [column for column, _ in identifying(problem, job)]
    ['email']
    """
    threshold = IDENTIFYING_THRESHOLD
    if job.identifying_threshold is not None:
        threshold = job.identifying_threshold
    return identifying_columns(
        get_engine("numpy", problem.table) if engine is None else engine,
        declared_columns(problem, job),
        threshold=threshold,
        quasi_identifiers=problem.quasi_identifiers,
        hierarchies=problem.hierarchies,
        levels={q: hi for q, (_, hi) in problem.level_bounds.items()},
        insensitive=job.insensitive,
    )


def refuse_identifiers(problem: Problem, job: JobSpec, engine: Engine | None = None) -> None:
    """Refuse (:class:`~anonlab.exceptions.InputError`) a job that would release, as it
    is, an undeclared column that identifies people; the message lists each with its
    reason.

    Parameters
    ----------
    problem, job, engine
        As :func:`identifying` takes them.

    Raises
    ------
    InputError
        An undeclared column identifies people.

    Examples
    --------
    >>> import warnings
    >>> from anonlab import EncodedTable
    >>> from anonlab.jobs.problem import build_problem, load_job
    >>> t = EncodedTable.from_columns({"sex": ["F", "M"] * 10,
    ...                                "email": [f"p{i}@example.org" for i in range(20)]})
    >>> job = load_job({"quasi_identifiers": {"sex": {}}, "models": [{"k_anonymity": {"k": 2}}]})
    >>> problem = build_problem(t, job)
    >>> refuse_identifiers(problem, job)
    Traceback (most recent call last):
    ...
    anonlab.exceptions.InputError: An undeclared column would be released as it is and may ...
    """
    found = identifying(problem, job, engine)
    if found:
        lines = "".join(f"\n  {column!r}: {reason}" for column, reason in found)
        what = "An undeclared column" if len(found) == 1 else f"{len(found)} undeclared columns"
        raise InputError(
            f"{what} would be released as {'it is' if len(found) == 1 else 'they are'} and "
            f"may identify people:{lines}\nDeclare each {_DECLARE}. Nothing was written."
        )


def warn_identifiers(
    problem: Problem, job: JobSpec, action: str, engine: Engine | None = None
) -> None:
    """A :class:`~anonlab.exceptions.PrivacyRiskWarning` per undeclared identifying column
    (of the engine's data when the problem is a frequency set).

    Parameters
    ----------
    problem, job, engine
        As :func:`identifying` takes them.
    action : str
        What keeping the column does, as the warning says it.

    Examples
    --------
    >>> import warnings
    >>> from anonlab import EncodedTable
    >>> from anonlab.jobs.problem import build_problem, load_job
    >>> t = EncodedTable.from_columns({"sex": ["F", "M"] * 10,
    ...                                "email": [f"p{i}@example.org" for i in range(20)]})
    >>> job = load_job({"quasi_identifiers": {"sex": {}}, "models": [{"k_anonymity": {"k": 2}}]})
    >>> problem = build_problem(t, job)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_identifiers(problem, job, "a release that keeps it re-identifies people.")
    >>> len(caught)
    1
    """
    for column, reason in identifying(problem, job, engine):
        warnings.warn(
            PrivacyRiskWarning(
                f"Column {column!r} may identify people ({reason}) and is not declared: "
                f"{action} Declare it {_DECLARE}."
            ),
            stacklevel=3,
        )
