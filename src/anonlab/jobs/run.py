"""A job's path: one skeleton for every run.

:func:`anonymize` reads the job and its algorithm, chooses the engine
(:func:`~anonlab.jobs.engines.engine_choice`) and the run from the algorithm's and the
engine's declared capabilities (:data:`RUNS`, the first whose :meth:`~anonlab.jobs.base.Run.fits`
holds: in memory, on a frequency set, block by block), refuses before any work what the job
or the run would refuse later, then asks the run for the problem, the verified release and
the written, re-checked output -- and only then returns the result. A new execution mode is
a class that follows :class:`~anonlab.jobs.base.Run`, added to :data:`RUNS`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from anonlab._progress import Progress, listening, note, stage
from anonlab.algorithms import build_anonymizer
from anonlab.algorithms.base import Anonymizer, frequency_set_algorithms, partition_algorithms
from anonlab.engines import ENGINES, engine_class
from anonlab.exceptions import InputError, ParameterError
from anonlab.io.atomic import PARQUET_DATASET, check_output, output_format
from anonlab.io.job import JobSpec
from anonlab.jobs.base import Run, Task
from anonlab.jobs.blocks import Blocks
from anonlab.jobs.engines import EngineChoice, engine_choice
from anonlab.jobs.frequency_set import FrequencySet
from anonlab.jobs.in_memory import InMemory
from anonlab.jobs.problem import JobLike, input_files, load_job
from anonlab.release import AnonymizationResult

__all__ = ["RUNS", "anonymize", "choose_run", "validate_job"]

#: The runs, in the order they are tried: the first that fits the algorithm and the engine.
RUNS: tuple[type[Run], ...] = (InMemory, FrequencySet, Blocks)

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _listened(run: Callable[_P, _R]) -> Callable[_P, _R]:
    """``run`` with its ``progress`` keyword told the notes of what it calls (numba
    announcing a compilation, say: :func:`anonlab._progress.listening`)."""

    @functools.wraps(run)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        progress = kwargs.get("progress")
        with listening(progress if callable(progress) else None):
            return run(*args, **kwargs)

    return wrapper


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
        The job (see :mod:`anonlab.io.job` and docs/guide/jobs.md): quasi-identifiers and their
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
        block by block on the table sorted on its quasi-identifiers (default: the
        algorithm's own :attr:`~anonlab.algorithms.base.Anonymizer.block_rows`, else
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

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> t = EncodedTable.from_columns({"sex": ["F", "M"] * 5, "visits": list("12231") * 2})
    >>> job = {"quasi_identifiers": {"sex": {}}, "models": [{"k_anonymity": {"k": 5}}]}
    >>> result = anonymize(t, job)
    >>> result.transformation, result.release.verification.k_after
    ({'sex': 0}, 5)
    """
    spec = load_job(job)
    algorithm = build_anonymizer(spec.algorithm, spec.algorithm_params)
    choice = engine_choice(data, engine)
    rows = _check_block_rows(block_rows, algorithm, choice)
    _check_suppression(algorithm, spec)
    run_class = choose_run(algorithm, choice)
    protect = input_files(data, spec)
    task = Task(data, spec, algorithm, output, protect, progress, rows, choice.name)
    run_class.refuse(task)
    if output is not None:  # before any work: a bad output path costs nothing
        _check_output(output, task)
    if choice.note:
        note(choice.note, progress)
    stage(
        progress,
        f"reading {Path(data).name}" if isinstance(data, (str, os.PathLike)) else "reading",
    )
    run = run_class.open(task, engine_options)
    try:
        problem = run.problem()
        released = run.write(problem, run.release(problem))
    finally:
        run.close()
    return AnonymizationResult(
        algorithm=algorithm.name,
        parameters=algorithm.get_params(),
        recoding=released.recoding,
        release=released.verified(),
        search=released.search,
        problem=problem,
        output=None if output is None else str(output),
        blocks=released.blocks,
    )


def choose_run(algorithm: Anonymizer, choice: EngineChoice) -> type[Run]:
    """The first of :data:`RUNS` that fits the algorithm and the engine.

    Parameters
    ----------
    algorithm : Anonymizer
        Its :meth:`~anonlab.algorithms.base.Anonymizer.accepts_frequency_set` and
        :meth:`~anonlab.algorithms.base.Anonymizer.accepts_partitions` declare where it runs.
    choice : EngineChoice
        The engine (its class declares :attr:`~anonlab.engines.base.Engine.in_memory`).

    Returns
    -------
    type of Run

    Raises
    ------
    ParameterError
        No run fits: an algorithm that needs the table's rows, on an out-of-core engine.

    Examples
    --------
    >>> from anonlab.algorithms import build_anonymizer
    >>> choice = engine_choice("adult.csv", "duckdb")
    >>> choose_run(build_anonymizer("optimal"), choice).label
    'frequency set'
    >>> choose_run(build_anonymizer("wong_nh"), choice).label
    'blocks'
    """
    for run in RUNS:
        if run.fits(algorithm, choice.engine):
            return run
    raise ParameterError(
        f"Algorithm {algorithm.name!r} needs the individual rows of the table; the "
        f"{choice.name} engine anonymizes from the counts of its distinct combinations. "
        f"{frequency_set_algorithms()} run on any engine; {partition_algorithms()} run out "
        f"of core block by block; run {algorithm.name!r} with --engine numpy "
        "(engine='numpy') on a table that fits in memory. Nothing was written."
    )


def validate_job(data: Any, job: JobLike) -> None:
    """Refuse a job on ``data`` for what :func:`anonymize` would refuse before its search,
    without searching: the job's keys, the columns and their roles, the hierarchies against
    the data, the models' parameters, the metric and the algorithm's parameters, and an
    undeclared column that identifies people
    (:func:`~anonlab.jobs.identifying.refuse_identifiers`). What only the data's classes
    tell (a model no generalization can satisfy, such as ``l`` above the distinct sensitive
    values) is found by the search, as ever.

    Parameters
    ----------
    data : DataFrame, pyarrow Table or EncodedTable
        The table in memory (a file is read whole).
    job : JobSpec, mapping or path

    Raises
    ------
    AnonlabError
        The one-line error :func:`anonymize` would raise.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> t = EncodedTable.from_columns({"sex": ["F", "M"] * 5})
    >>> validate_job(t, {"quasi_identifiers": {"sex": {}}, "models": [{"k_anonymity": {"k": 5}}]})
    >>> validate_job(t, {"quasi_identifiers": {"age": {}}, "models": [{"k_anonymity": {"k": 5}}]})
    Traceback (most recent call last):
    ...
    anonlab.exceptions.ColumnNotFoundError: Unknown quasi-identifier 'age'. Available: 'sex'.
    """
    spec = load_job(job)
    algorithm = build_anonymizer(spec.algorithm, spec.algorithm_params)
    _check_suppression(algorithm, spec)
    InMemory(Task(data, spec, algorithm, None, ())).problem()


def _check_output(output: str | os.PathLike[str], task: Task) -> None:
    """Refuse, before any work, an output the run cannot write, or one of the job's inputs."""
    folders = [name for name in ENGINES if engine_class(name).writes_dataset_folders]
    if output_format(output) == PARQUET_DATASET and task.engine not in folders:
        raise InputError(
            f"The output {str(output)!r} ends with '/': a Parquet dataset folder, which "
            f"the {' and '.join(folders)} engine writes (--engine {' or '.join(folders)}); "
            f"with the {task.engine} engine give a "
            "file name ending with .csv, .csv.gz or .parquet. Nothing was written."
        )
    if output_format(output) == PARQUET_DATASET and not task.algorithm.accepts_frequency_set():
        raise InputError(
            f"The output {str(output)!r} ends with '/': a Parquet dataset folder, but "
            f"{task.algorithm.name!r} releases its blocks' rows in the source's order as one "
            "file; give a file name ending with .csv, .csv.gz or .parquet. Nothing was "
            "written."
        )
    check_output(output, protect=task.protect)


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


def _check_block_rows(block_rows: Any, algorithm: Anonymizer, choice: EngineChoice) -> int | None:
    """The ``block_rows`` option, checked before any work (None: the default): refused
    unless ``algorithm`` runs block by block on the chosen engine (an option that does
    nothing is an error)."""
    if block_rows is None:
        return None
    if isinstance(block_rows, bool) or not isinstance(block_rows, int) or block_rows < 1:
        raise ParameterError(
            f"The 'block_rows' option (--block-rows) must be an int >= 1. Got {block_rows!r} "
            "instead. Nothing was written."
        )
    if algorithm.accepts_frequency_set() or not algorithm.accepts_partitions():
        listed = partition_algorithms()
        raise ParameterError(
            f"The 'block_rows' option (--block-rows) would do nothing: {algorithm.name!r} "
            f"never cuts the table into blocks: {listed[:1].lower()}{listed[1:]} do, out of core. "
            "Drop it. Nothing was written."
        )
    if not Blocks.fits(algorithm, choice.engine):
        chosen = " (chosen by engine auto: the table fits in memory)" if choice.auto else ""
        raise ParameterError(
            f"The 'block_rows' option (--block-rows) would do nothing: the {choice.name} engine"
            f"{chosen} anonymizes the table whole, in memory; blocks are cut out of core "
            "(--engine duckdb or spark). Drop it, or choose one of those engines. Nothing "
            "was written."
        )
    return int(block_rows)
